#include "search.h"

#include "searchspace.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>
#include <tuple>

namespace paraplan {

const char* searchObjectiveName(SearchObjective objective)
{
    return enumName(kSearchObjectiveNames, objective);
}

bool searchObjectiveFromName(const std::string& name, SearchObjective* objective)
{
    return enumFromName(kSearchObjectiveNames, name, objective);
}

namespace {

// The layout's fields as a tuple: the tie-break that makes rankings deterministic.
auto key(const ParallelLayout& p)
{
    return std::make_tuple(p.tp, p.pp, p.dp, p.cp, p.ep, p.zero, p.sequence_parallel,
                           static_cast<int>(p.recompute), p.interleave, p.micro_batch);
}

// What the ranking keeps of a scored layout.
struct Record
{
    double score;
    double step_time_s;
    double memory_bytes;
    double tokens_per_s;
    ParallelLayout layout;
};

// Rank: score, then the layout's fields, so equal scores order the same on every run.
bool better(const Record& a, const Record& b)
{
    if (a.score != b.score)
        return a.score < b.score;
    return key(a.layout) < key(b.layout);
}

// Inside a tie group: more free memory first, in whole kSearchMemoryStep steps (the GPU's
// HBM is the same for every layout), then the simpler layout, then the fields.
bool tieOrder(const Record& a, const Record& b)
{
    const double stepA = std::floor(a.memory_bytes / kSearchMemoryStep);
    const double stepB = std::floor(b.memory_bytes / kSearchMemoryStep);
    if (stepA != stepB)
        return stepA < stepB;
    const std::vector<int> simpleA = simplicityKey(a.layout);
    const std::vector<int> simpleB = simplicityKey(b.layout);
    if (simpleA != simpleB)
        return simpleA < simpleB;
    return key(a.layout) < key(b.layout);
}

// Layouts with the same degrees, interleave and micro-batch whose step time and memory are
// equal to the last bit: one plan as far as the engine can tell (ranking.h, rule 3).
using Outcome = std::tuple<int, int, int, int, int, int, int, double, double>;
Outcome outcomeOf(const Record& r)
{
    const ParallelLayout& p = r.layout;
    return {p.tp,         p.pp,          p.cp,          p.dp,          p.ep,
            p.interleave, p.micro_batch, r.step_time_s, r.memory_bytes};
}

// A record kept for the ranking and how many same-plan twins it stands for.
struct Kept
{
    Record record;
    int twins = 0;
    size_t group = 0; ///< its tie group, set by rankingOrder()
};

// The records that can reach the top `k` under the ranking rule, shared by the search's
// threads, one per outcome (the simplest; twins are counted): every record whose score is
// within the tie group of the k-th best score seen so far (tieGroupLimit), which holds every
// member of the tie group the k-th best falls in. The k-th best only improves as records
// arrive, so pruning at it never drops a record the full ranking needs, and what is kept
// does not depend on the order records arrive in (twins share a score: both stay or go).
class TopRecords
{
public:
    explicit TopRecords(size_t k) : m_k(k) {}
    void offer(const Record& r)
    {
        if (m_k == 0 || r.score > m_limit.load(std::memory_order_relaxed))
            return;
        const std::lock_guard<std::mutex> lock(m_mutex);
        const auto [at, added] = m_kept.try_emplace(outcomeOf(r), Kept{r, 0});
        if (!added) {
            ++at->second.twins;
            if (tieOrder(r, at->second.record))
                at->second.record = r;
        }
        if (m_kept.size() >= m_nextPrune)
            prune();
    }
    /// Records scoring above this cannot reach the top N (infinity until N are kept).
    double limit() const { return m_limit.load(std::memory_order_relaxed); }
    /// By score, then the layout's fields.
    std::vector<Kept> sorted()
    {
        prune();
        std::vector<Kept> kept;
        kept.reserve(m_kept.size());
        for (auto& entry : m_kept)
            kept.push_back(entry.second);
        std::sort(kept.begin(), kept.end(),
                  [](const Kept& a, const Kept& b) { return better(a.record, b.record); });
        return kept;
    }

private:
    void prune()
    {
        if (m_kept.size() > m_k) {
            std::vector<double> scores;
            scores.reserve(m_kept.size());
            for (const auto& entry : m_kept)
                scores.push_back(entry.second.record.score);
            std::nth_element(scores.begin(), scores.begin() + static_cast<long>(m_k - 1),
                             scores.end());
            const double limit = tieGroupLimit(scores[m_k - 1]);
            for (auto it = m_kept.begin(); it != m_kept.end();)
                it = it->second.record.score > limit ? m_kept.erase(it) : std::next(it);
            m_limit.store(limit, std::memory_order_relaxed);
        }
        m_nextPrune = std::max<size_t>(2 * m_kept.size(), 2 * m_k + 64);
    }
    size_t m_k;
    size_t m_nextPrune = 0;
    std::mutex m_mutex;
    std::map<Outcome, Kept> m_kept;
    std::atomic<double> m_limit{std::numeric_limits<double>::infinity()};
};

// The Pareto front of memory per GPU against step time, kept as records arrive. In the
// order memory, step time, layout fields, a record belongs when it is faster than every
// record before it; the members are that order's running minima of step time, so the front
// holds the few records no other dominates and is the same for any arrival order.
class ParetoFront
{
public:
    void insert(const Record& r)
    {
        const auto at = std::lower_bound(m_members.begin(), m_members.end(), r, before);
        if (at != m_members.begin() && std::prev(at)->step_time_s <= r.step_time_s)
            return;
        auto next = m_members.insert(at, r) + 1;
        auto stop = next;
        while (stop != m_members.end() && stop->step_time_s >= r.step_time_s)
            ++stop;
        m_members.erase(next, stop);
    }
    const std::vector<Record>& members() const { return m_members; } ///< least memory first

private:
    static bool before(const Record& a, const Record& b)
    {
        if (a.memory_bytes != b.memory_bytes)
            return a.memory_bytes < b.memory_bytes;
        if (a.step_time_s != b.step_time_s)
            return a.step_time_s < b.step_time_s;
        return key(a.layout) < key(b.layout);
    }
    std::vector<Record> m_members;
};

// What one thread saw: counts by outcome, its share of the Pareto front, and how many of
// its scored layouts beat the plan the search started from.
struct Tally
{
    std::map<std::string, long long> rejected;
    std::map<std::string, long long> constrained;
    long long did_not_fit = 0;
    long long headroom = 0;
    long long duplicates = 0;
    long long scored = 0;
    long long evaluated = 0;
    long long better_than_given = 0;
    ParetoFront pareto{};
    // The block being scored: each (interleave, micro-batch) cell's verdict (kUnjudged,
    // kCosted or the index of the rule its layouts break), those rules and their counts.
    std::vector<int> cellRule;
    std::vector<std::string> blockRules;
    std::vector<long long> blockRuleCounts;
    long long bounded = 0;
    // The step-time lower bound of each (cell, sequence parallelism) group: NaN until one of
    // its layouts is costed.
    std::vector<double> groupBound;
};
constexpr int kUnjudged = -2;
constexpr int kCosted = -1;

// A lower bound on the step time of every layout that differs from the costed `cost` only in
// its ZeRO stage and recompute: m x max_i fb_i + (sum_i fb_i - max_i fb_i) / interleave, with
// fb_i the forward + backward seconds of one micro-batch on stage i and m the micro-batches.
//
// Proof, against the engine (core/engine/stepmodel.cpp, stepcomm.cpp): the step time is the
// sum of the breakdown's components, each >= 0: compute + recompute + TP/CP/EP/PP exposed =
// m x mb_c, with mb_i = fb_i + recompute_i + tp_i + cp_i + ep_i + pp_i >= fb_i the stage's
// micro-batch time and c the stage of largest mb_i, so m x mb_c >= m x max_i fb_i; the
// bubble is (sum_i mb_i - mb_c) / interleave >= (sum_{i != c} fb_i) / interleave >=
// (sum_i fb_i - max_i fb_i) / interleave; DP sync and the optimizer add >= 0. m = global
// batch / (dp x micro-batch) and each fb_i depend only on the model, the degrees, the
// interleave, the micro-batch and sequence parallelism (the layer costs read ZeRO nowhere,
// recompute only for recompute_i), so the bound holds for every such sibling. Checked by
// tst_search boundChangesNoRanking against the search without the bound.
double stepTimeLowerBound(const StepCost& cost, int interleave)
{
    double largest = 0;
    double sum = 0;
    for (const StageCost& stage : cost.stages) {
        const double fb = stage.forward_s + stage.backward_s;
        largest = std::max(largest, fb);
        sum += fb;
    }
    return cost.microbatches * largest + (sum - largest) / std::max(1, interleave);
}

// How many of the indices [from, to) fall in `column` of rows `columns` wide.
long long inColumn(long long from, long long to, int columns, int column)
{
    auto below = [&](long long x) { return x > column ? (x - column - 1) / columns + 1 : 0; };
    return below(to) - below(from);
}

} // namespace

long long SearchResult::invalidCount() const
{
    long long total = 0;
    for (const auto& entry : rejected)
        total += entry.second;
    return total;
}

long long SearchResult::excludedCount() const
{
    long long total = 0;
    for (const auto& entry : constrained)
        total += entry.second;
    return total;
}

double searchScore(const StepCost& cost, int gpus, SearchObjective objective)
{
    switch (objective) {
    case SearchObjective::StepTime:
        return cost.step_time_s;
    case SearchObjective::TimeToTrain:
        return cost.metrics.time_to_train_s;
    case SearchObjective::Cost:
        return cost.metrics.cost_usd;
    case SearchObjective::TokensPerGpu:
        return -cost.metrics.tokens_per_s / gpus;
    }
    return cost.step_time_s;
}

std::vector<ParallelLayout> enumerateLayouts(const Plan& base, const SearchOptions& options)
{
    std::vector<ParallelLayout> layouts;
    const LayoutSpace space(base, options);
    space.forEachBlock([&](const LayoutSpace::Block& block) {
        for (long long i = 0; i < block.size(); ++i)
            layouts.push_back(space.layout(block, i));
        return true;
    });
    return layouts;
}

std::string searchProblem(const Plan& base, const SearchOptions& options, bool* overBudget)
{
    if (overBudget)
        *overBudget = false;
    const long long gpus = base.cluster.totalGpus();
    if (gpus < 1) {
        return "the cluster has no GPUs";
    }
    if (options.objective == SearchObjective::TimeToTrain && !(base.training.train_tokens > 0)) {
        return "time-to-train needs the plan's token budget (training.train_tokens)";
    }
    if (options.objective == SearchObjective::Cost &&
        !(base.training.train_tokens > 0 && base.training.gpu_hour_usd > 0)) {
        return "cost needs the plan's token budget and GPU-hour price "
               "(training.train_tokens, training.gpu_hour_usd)";
    }
    if (!(options.constraints.min_headroom >= 0 && options.constraints.min_headroom < 1)) {
        return "the memory headroom constraint must lie in [0, 1)";
    }
    if (!(options.constraints.reserve_bytes >= 0 && options.constraints.reserve_bytes <= 1e15)) {
        return "the memory reserve must lie in [0, 1e15] bytes";
    }
    const LayoutSpace space(base, options);
    if (space.toEvaluate() > kMaxSearchLayouts || space.stagesToEvaluate() > kMaxSearchStages) {
        if (overBudget)
            *overBudget = true;
        if (space.toEvaluate() > kMaxSearchLayouts)
            return "the search would evaluate " + std::to_string(space.toEvaluate()) +
                   " layouts (more than " + std::to_string(kMaxSearchLayouts) + ")";
        return "the search would cost " + std::to_string(space.stagesToEvaluate()) +
               " pipeline stages over its " + std::to_string(space.toEvaluate()) +
               " layouts (more than " + std::to_string(kMaxSearchStages) + ")";
    }
    // Each of the top N keeps its step cost: the collectives, the links and every stage.
    const double perCandidate = sizeof(SearchCandidate) + 12.0 * sizeof(CollectiveCost) +
                                8.0 * sizeof(LinkUse) + 1024 +
                                double(space.deepestCosted()) * sizeof(StageCost);
    const double topBytes = std::max(0, options.top) * perCandidate;
    if (topBytes > kMaxSearchTopBytes) {
        return "the top " + std::to_string(options.top) + " layouts of up to " +
               std::to_string(space.deepestCosted()) + " pipeline stages would hold about " +
               std::to_string(static_cast<long long>(topBytes / 1e6)) + " MB (more than " +
               std::to_string(static_cast<long long>(kMaxSearchTopBytes / 1e6)) +
               "); ask for fewer";
    }
    return {};
}

namespace {

// Records sorted by better() put in ranking order: a tie group runs from the best score not
// yet ranked up to tieGroupLimit() of it, and is ordered by tieOrder().
void rankingOrder(std::vector<Kept>* kept)
{
    std::vector<Kept>& k = *kept;
    size_t start = 0;
    for (size_t group = 0; start < k.size(); ++group) {
        const double limit = tieGroupLimit(k[start].record.score);
        size_t end = start;
        while (end < k.size() && (end == start || k[end].record.score <= limit))
            k[end++].group = group;
        std::sort(k.begin() + static_cast<long>(start), k.begin() + static_cast<long>(end),
                  [](const Kept& a, const Kept& b) { return tieOrder(a.record, b.record); });
        start = end;
    }
}

// One search: the space, the scores, and the ranking kept from them.
struct SearchRun
{
    const Plan& base;
    const HardwareCatalog& catalog;
    const SearchOptions& options;
    const std::atomic<bool>* cancel;
    const std::function<void(double)>& progress;
    SearchResult& result;
    const LayoutSpace space{base, options};
    const StepEngine engine{base.cluster, catalog};
    const long long gpus = base.cluster.totalGpus();
    TopRecords top{static_cast<size_t>(std::max(0, options.top))};
    StepCost givenCost{};
    std::atomic<bool> stopped{false};
    std::atomic<long long> nextBlock{0};
    std::atomic<long long> layoutsDone{0};
    std::vector<LayoutSpace::Block> blocks{}; ///< in the order threads claim them

    void evaluateGiven();
    // A layout whose step time is at least `bound` cannot reach the top N nor beat the plan
    // the search started from (score = step time). The bound is summed in another order
    // than the engine's step time: a relative margin of 1e-9 covers the rounding.
    bool outranked(double bound) const
    {
        const double atLeast = bound * (1 - 1e-9);
        return atLeast > top.limit() && (!result.given_ok || atLeast >= result.given.score);
    }
    void score();
    void scoreBlocks(bool reports, Tally& tally);
    void scoreBlock(const LayoutSpace::Block& block, long long from, long long to, Plan& plan,
                    Tally& tally);
    std::string scoreLayout(Plan& plan, Tally& tally, double* bound);
    void rank();
    void rankGiven();
    SearchCandidate candidate(const Record& r) const
    {
        SearchCandidate c;
        c.layout = r.layout;
        c.score = r.score;
        c.step_time_s = r.step_time_s;
        c.memory_bytes = r.memory_bytes;
        c.tokens_per_s = r.tokens_per_s;
        Plan plan = base;
        plan.parallel = c.layout;
        c.cost = engine.evaluate(plan);
        return c;
    }
};

// The plan the search started from, scored the same way, so that the scoring can count the
// layouts that beat it.
void SearchRun::evaluateGiven()
{
    givenCost = engine.evaluate(base);
    if (!givenCost.ok) {
        result.given_problem =
            "[" + givenCost.issues.front().rule + "] " + givenCost.issues.front().message;
    } else if (!givenCost.fits) {
        result.given_problem = "does not fit in memory";
    } else {
        result.given_ok = true;
        SearchCandidate& g = result.given;
        g.layout = base.parallel;
        g.score = searchScore(givenCost, static_cast<int>(gpus), options.objective);
        g.step_time_s = givenCost.step_time_s;
        g.memory_bytes = givenCost.max_stage_total_bytes;
        g.tokens_per_s = givenCost.metrics.tokens_per_s;
        g.cost = givenCost;
        const SearchConstraints& limits = options.constraints;
        result.given_within_headroom =
            givenCost.hbm_bytes - givenCost.max_stage_total_bytes >=
            limits.min_headroom * givenCost.hbm_bytes + limits.reserve_bytes;
    }
}

// Scores the layout in `plan.parallel`, tallying what is rejected and why. Returns the rule
// the engine rejected it by, "" when it was costed.
std::string SearchRun::scoreLayout(Plan& plan, Tally& tally, double* bound)
{
    const SearchConstraints& limits = options.constraints;
    const StepCost cost = engine.evaluate(plan);
    if (!cost.ok) {
        std::string rule = cost.issues.empty() ? "invalid" : cost.issues.front().rule;
        ++tally.rejected[rule];
        return rule;
    }
    ++tally.evaluated;
    *bound = stepTimeLowerBound(cost, plan.parallel.interleave);
    if (!cost.fits) {
        ++tally.did_not_fit;
        return {};
    }
    if (cost.hbm_bytes - cost.max_stage_total_bytes <
        limits.min_headroom * cost.hbm_bytes + limits.reserve_bytes) {
        ++tally.headroom;
        return {};
    }
    const Record r{searchScore(cost, static_cast<int>(gpus), options.objective), cost.step_time_s,
                   cost.max_stage_total_bytes, cost.metrics.tokens_per_s, plan.parallel};
    ++tally.scored;
    if (result.given_ok && r.score < result.given.score)
        ++tally.better_than_given;
    top.offer(r);
    tally.pareto.insert(r);
    return {};
}

// Layouts [from, to) of a block. Constraints on the layout alone come first and need no
// evaluation: a whole block out of them, or the columns off the fixed micro-batch, are
// counted without being visited.
void SearchRun::scoreBlock(const LayoutSpace::Block& block, long long from, long long to,
                           Plan& plan, Tally& tally)
{
    const std::string exclusion = space.blockExclusion(block);
    if (exclusion == "max-tp" || space.fixedColumn() == -2) {
        tally.constrained[exclusion == "max-tp" ? "max-tp" : "micro-batch"] += to - from;
        return;
    }
    const int fixed = space.fixedColumn();
    const long long kept = fixed >= 0 ? inColumn(from, to, block.columns, fixed) : to - from;
    if (kept < to - from)
        tally.constrained["micro-batch"] += to - from - kept;
    if (kept == 0)
        return;
    if (!exclusion.empty()) {
        tally.constrained[exclusion] += kept;
        return;
    }
    const long long step = fixed >= 0 ? block.columns : 1;
    long long index = from;
    if (fixed >= 0)
        index += ((fixed - from % block.columns) + block.columns) % block.columns;
    // The engine's verdict on the rules is a function of the block, the interleave and the
    // micro-batch alone for every layout of the space, so the first layout of each
    // (interleave, micro-batch) cell is judged by the engine and its siblings by its verdict.
    // Proof, against validatePlan() (core/engine/plan.cpp) and StepEngine::evaluate(): the
    // rules read the model, the cluster, the training settings and the template's fields
    // (the same for every layout), the degrees, the interleave and the micro-batch; the only
    // rules that read the ZeRO stage, sequence parallelism or recompute are "zero-range"
    // (ZeRO outside 0-3: the space holds 0-3), "dp-shard" (read only when dp_shard > 0: the
    // template sets 0) and "sp-tp" (sequence parallelism at TP 1: the space turns it on only
    // at TP > 1). None of these can fire, so siblings break the same rules in the same order.
    // Checked against the engine on every layout by tst_search shortcutsChangeNothing.
    const int interleaves = space.interleaves(block);
    const size_t cells = static_cast<size_t>(interleaves) * block.columns;
    tally.cellRule.assign(cells, kUnjudged);
    tally.groupBound.assign(2 * cells, std::numeric_limits<double>::quiet_NaN());
    const bool bounding = options.bound && options.objective == SearchObjective::StepTime;
    tally.blockRules.clear();
    tally.blockRuleCounts.clear();
    for (; index < to; index += step) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            stopped = true;
            break;
        }
        const size_t cell = static_cast<size_t>(
            (index / block.columns) % interleaves * block.columns + index % block.columns);
        const int known = options.shortcuts ? tally.cellRule[cell] : kUnjudged;
        plan.parallel = space.layout(block, index);
        // Every ZeRO stage at a shard group of one rank is the ZeRO-0 plan, scored once.
        if (zeroIsMoot(plan.parallel)) {
            ++tally.duplicates;
            continue;
        }
        if (known >= 0) { // a sibling broke this rule: so does this layout
            ++tally.blockRuleCounts[static_cast<size_t>(known)];
            continue;
        }
        double& bound = tally.groupBound[2 * cell + (plan.parallel.sequence_parallel ? 1 : 0)];
        if (bounding && tally.cellRule[cell] == kCosted && bound > 0 && outranked(bound)) {
            ++tally.bounded;
            continue;
        }
        double costedBound = 0;
        std::string rule = scoreLayout(plan, tally, &costedBound);
        if (rule.empty() && !(bound > 0))
            bound = costedBound;
        if (known == kUnjudged) {
            if (rule.empty()) {
                tally.cellRule[cell] = kCosted;
            } else {
                tally.cellRule[cell] = static_cast<int>(tally.blockRules.size());
                tally.blockRules.push_back(std::move(rule));
                tally.blockRuleCounts.push_back(0);
            }
        }
    }
    for (size_t i = 0; i < tally.blockRules.size(); ++i) {
        if (tally.blockRuleCounts[i] > 0)
            tally.rejected[tally.blockRules[i]] += tally.blockRuleCounts[i];
    }
}

// Blocks of the space, on one thread: each takes the next block no thread has claimed, so
// the threads share the work however unevenly it falls across the space. The deepest
// pipelines come first: an evaluation costs every stage, so they are the longest blocks, and
// the shallow ones left for the end keep every thread busy until the last (longest
// processing time first). The order changes nothing kept (see score()).
void SearchRun::scoreBlocks(bool reports, Tally& tally)
{
    Plan plan = base;
    for (;;) {
        const size_t claimed = static_cast<size_t>(nextBlock.fetch_add(1));
        if (claimed >= blocks.size() || stopped)
            return;
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            stopped = true;
            return;
        }
        const LayoutSpace::Block& block = blocks[claimed];
        scoreBlock(block, 0, block.size(), plan, tally);
        const long long done = layoutsDone.fetch_add(block.size()) + block.size();
        if (reports && progress)
            progress(double(done) / double(std::max(1LL, space.size())));
    }
}

// Scores every layout, on `options.threads` threads. What is kept (counts, the top N, the
// Pareto front) does not depend on which thread scored what.
void SearchRun::score()
{
    const int threads = std::max(1, std::min(options.threads, 256));
    // The blocks, a few per divisor of the GPU count (never the layouts), deepest first.
    space.forEachBlock([&](const LayoutSpace::Block& block) {
        blocks.push_back(block);
        return true;
    });
    std::stable_sort(
        blocks.begin(), blocks.end(),
        [](const LayoutSpace::Block& a, const LayoutSpace::Block& b) { return a.pp > b.pp; });
    std::vector<Tally> tallies(static_cast<size_t>(threads));
    auto work = [&](int t) { scoreBlocks(t == 0, tallies[static_cast<size_t>(t)]); };
    if (threads == 1) {
        work(0);
    } else {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back(work, t);
        for (std::thread& thread : pool)
            thread.join();
    }
    result.cancelled = stopped.load();

    ParetoFront pareto;
    for (Tally& tally : tallies) {
        for (const auto& [rule, count] : tally.rejected)
            result.rejected[rule] += count;
        for (const auto& [rule, count] : tally.constrained)
            result.constrained[rule] += count;
        result.did_not_fit += tally.did_not_fit;
        if (tally.headroom > 0)
            result.constrained["headroom"] += tally.headroom;
        result.duplicates += tally.duplicates;
        result.scored += tally.scored;
        result.evaluated += tally.evaluated;
        result.bounded += tally.bounded;
        result.given_rank += tally.better_than_given;
        for (const Record& r : tally.pareto.members())
            pareto.insert(r);
    }
    for (const Record& r : pareto.members())
        result.pareto.push_back(candidate(r));
}

// The top N by the ranking rule (ranking.h), same-plan layouts folded, each set against the
// best with the step-time difference and the components that make it up.
void SearchRun::rank()
{
    std::vector<Kept> kept = top.sorted();
    if (kept.empty())
        return;
    rankingOrder(&kept);
    kept.resize(std::min(kept.size(), static_cast<size_t>(options.top)));
    int groupFirst = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
        const Kept& k = kept[i];
        SearchCandidate c = candidate(k.record);
        // A ZeRO-0 layout at a shard group of one stands for ZeRO 1-3 too (never scored).
        c.folded = k.twins + (c.layout.shardRanks() == 1 ? kSearchZeroStages - 1 : 0);
        if (i == 0 || k.group != kept[i - 1].group)
            groupFirst = static_cast<int>(i) + 1;
        c.tie_with = groupFirst;
        c.tied = k.group == 0;
        result.folded += k.twins;
        result.top.push_back(std::move(c));
    }
    const SearchCandidate& best = result.top.front();
    for (size_t i = 1; i < result.top.size(); ++i) {
        SearchCandidate& c = result.top[i];
        c.behind_s = c.step_time_s - best.step_time_s;
        c.behind = behindParts(c.cost.breakdown, best.cost.breakdown);
    }
}

// The plan the search started from against the best: its rank (1 = best) and the
// components it loses most on.
void SearchRun::rankGiven()
{
    if (!result.given_ok)
        return;
    result.given_rank += 1;
    if (result.top.empty())
        return;
    const StepBreakdown& best = result.top.front().cost.breakdown;
    for (const BreakdownComponent& component : kBreakdownComponents) {
        const double delta = givenCost.breakdown.*component.field - best.*component.field;
        if (delta > 1e-3 * result.top.front().step_time_s)
            result.given_behind.emplace_back(component.label, delta);
    }
    std::sort(result.given_behind.begin(), result.given_behind.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    result.given_parts = behindParts(givenCost.breakdown, best);
}

} // namespace

SearchResult searchPlans(const Plan& plan_, const HardwareCatalog& catalog,
                         const SearchOptions& options, const std::atomic<bool>* cancel,
                         const std::function<void(double)>& progress)
{
    const auto started = std::chrono::steady_clock::now();
    // Every candidate runs on the plan's own stack: an `auto` stack is resolved once, from
    // the plan the search starts from, so that a ZeRO-3 candidate is costed on the same
    // framework as its neighbours.
    Plan base = plan_;
    if (base.training.stack == TrainingStack::Auto)
        base.training.stack =
            fsdpStyleStack(plan_) ? TrainingStack::PyTorch : TrainingStack::Megatron;
    SearchResult result;
    result.error = searchProblem(base, options, &result.over_budget);
    if (!result.error.empty())
        return result;
    SearchRun run{base, catalog, options, cancel, progress, result};
    result.space = run.space.size();
    run.evaluateGiven();
    run.score();
    run.rank();
    run.rankGiven();
    result.ok = true;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

} // namespace paraplan
