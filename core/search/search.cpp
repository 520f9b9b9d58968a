#include "search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
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

std::vector<int> divisors(long long n)
{
    std::vector<int> out;
    for (long long d = 1; d <= n; ++d)
        if (n % d == 0)
            out.push_back(static_cast<int>(d));
    return out;
}

// The layout's fields as a tuple: the tie-break that makes rankings deterministic.
auto key(const ParallelLayout& p)
{
    return std::make_tuple(p.tp, p.pp, p.dp, p.cp, p.ep, p.zero, p.sequence_parallel,
                           static_cast<int>(p.recompute), p.interleave, p.micro_batch);
}

struct Record
{
    double score;
    double step_time_s;
    double memory_bytes;
    double tokens_per_s;
    size_t index; ///< into the enumeration
};

struct Tally
{
    std::map<std::string, long long> rejected;
    std::map<std::string, long long> constrained;
    long long did_not_fit = 0;
    std::vector<Record> records{};
};

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
    const long long gpus = base.cluster.totalGpus();
    if (gpus < 1)
        return layouts;
    const bool moe = base.model.isMoe();
    std::vector<int> microBatches;
    for (int mb = 1; mb <= std::max(1, options.max_micro_batch); mb *= 2)
        microBatches.push_back(mb);
    ParallelLayout p = base.parallel;
    // Candidates split their layers evenly and shard over all their data-parallel ranks; the
    // base plan's own split (stage_layers, first/last) and HSDP groups fit its degrees only.
    p.stage_layers.clear();
    p.first_stage_layers = 0;
    p.last_stage_layers = 0;
    p.dp_shard = 0;
    for (int tp : divisors(gpus)) {
        for (int pp : divisors(gpus / tp)) {
            for (int cp : divisors(gpus / tp / pp)) {
                const int dp = static_cast<int>(gpus / tp / pp / cp);
                const std::vector<int> eps =
                    moe ? divisors(static_cast<long long>(dp) * cp) : std::vector<int>{1};
                for (int ep : eps) {
                    for (int zero = 0; zero <= 3; ++zero) {
                        for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
                            for (Recompute rc :
                                 {Recompute::None, Recompute::Selective, Recompute::Full}) {
                                const int maxInterleave =
                                    pp > 1 ? std::max(1, options.max_interleave) : 1;
                                for (int v = 1; v <= maxInterleave; ++v) {
                                    for (int mb : microBatches) {
                                        p.tp = tp;
                                        p.pp = pp;
                                        p.cp = cp;
                                        p.dp = dp;
                                        p.ep = ep;
                                        p.zero = zero;
                                        p.sequence_parallel = sp == 1;
                                        p.recompute = rc;
                                        p.interleave = v;
                                        p.micro_batch = mb;
                                        layouts.push_back(p);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return layouts;
}

namespace {

// Why the options cannot be searched ("" when they can).
std::string searchOptionsProblem(const Plan& base, const SearchOptions& options)
{
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
    if (options.constraints.min_headroom < 0 || options.constraints.min_headroom >= 1) {
        return "the memory headroom constraint must lie in [0, 1)";
    }
    return {};
}

// One search: the enumerated layouts, their scores, and the ranking built from them.
struct SearchRun
{
    const Plan& base;
    const HardwareCatalog& catalog;
    const SearchOptions& options;
    const std::atomic<bool>* cancel;
    const std::function<void(double)>& progress;
    SearchResult& result;
    const std::vector<ParallelLayout> layouts = enumerateLayouts(base, options);
    const StepEngine engine{base.cluster, catalog};
    const long long gpus = base.cluster.totalGpus();
    std::vector<Record> records{};

    void score();
    void rank();
    void rankGiven();
    void paretoFront();
    SearchCandidate candidate(const Record& r) const
    {
        SearchCandidate c;
        c.layout = layouts[r.index];
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

// Scores every layout, on `options.threads` threads, tallying what is rejected and why.
void SearchRun::score()
{
    const int gpusPerNode = base.cluster.gpusPerNode();
    const SearchConstraints& limits = options.constraints;
    const int threads = std::max(1, std::min(options.threads, 256));
    std::vector<Tally> tallies(static_cast<size_t>(threads));
    std::atomic<bool> stopped{false};
    auto work = [&](int t) {
        Tally& tally = tallies[static_cast<size_t>(t)];
        const size_t begin = layouts.size() * static_cast<size_t>(t) / threads;
        const size_t end = layouts.size() * static_cast<size_t>(t + 1) / threads;
        Plan plan = base;
        for (size_t i = begin; i < end; ++i) {
            if (((i - begin) & 1023) == 0) {
                if (cancel && cancel->load(std::memory_order_relaxed)) {
                    stopped = true;
                    return;
                }
                if (t == 0 && progress)
                    progress(double(i - begin) / std::max<size_t>(1, end - begin));
            }
            const ParallelLayout& p = layouts[i];
            // Constraints on the layout alone come first; they need no evaluation.
            if (limits.max_tp > 0 && p.tp > limits.max_tp) {
                ++tally.constrained["max-tp"];
                continue;
            }
            if (limits.fixed_micro_batch > 0 && p.micro_batch != limits.fixed_micro_batch) {
                ++tally.constrained["micro-batch"];
                continue;
            }
            if (limits.pp_across_nodes && p.pp > 1 && groupStrides(p).pp < gpusPerNode) {
                ++tally.constrained["pp-across-nodes"];
                continue;
            }
            plan.parallel = p;
            const StepCost cost = engine.evaluate(plan);
            if (!cost.ok) {
                ++tally.rejected[cost.issues.empty() ? "invalid" : cost.issues.front().rule];
                continue;
            }
            if (!cost.fits) {
                ++tally.did_not_fit;
                continue;
            }
            if (limits.min_headroom > 0 && cost.hbm_bytes - cost.max_stage_total_bytes <
                                               limits.min_headroom * cost.hbm_bytes) {
                ++tally.constrained["headroom"];
                continue;
            }
            tally.records.push_back({searchScore(cost, static_cast<int>(gpus), options.objective),
                                     cost.step_time_s, cost.max_stage_total_bytes,
                                     cost.metrics.tokens_per_s, i});
        }
    };
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

    for (Tally& tally : tallies) {
        for (const auto& [rule, count] : tally.rejected)
            result.rejected[rule] += count;
        for (const auto& [rule, count] : tally.constrained)
            result.constrained[rule] += count;
        result.did_not_fit += tally.did_not_fit;
        records.insert(records.end(), tally.records.begin(), tally.records.end());
    }
    result.scored = static_cast<long long>(records.size());
}

// The top N by score, each with the component that costs it most against the best.
void SearchRun::rank()
{
    // Rank: score, then the layout's fields, so equal scores order the same on every run.
    auto better = [&](const Record& a, const Record& b) {
        if (a.score != b.score)
            return a.score < b.score;
        return key(layouts[a.index]) < key(layouts[b.index]);
    };
    const size_t topCount = std::min(records.size(), static_cast<size_t>(std::max(0, options.top)));
    std::partial_sort(records.begin(), records.begin() + static_cast<long>(topCount), records.end(),
                      better);
    for (size_t i = 0; i < topCount; ++i)
        result.top.push_back(candidate(records[i]));
    // Why each loses to the best: the breakdown component that grew the most.
    if (!result.top.empty()) {
        const StepBreakdown& best = result.top.front().cost.breakdown;
        for (size_t i = 1; i < result.top.size(); ++i) {
            SearchCandidate& c = result.top[i];
            double worst = -std::numeric_limits<double>::infinity();
            for (const BreakdownComponent& component : kBreakdownComponents) {
                const double delta = c.cost.breakdown.*component.field - best.*component.field;
                if (delta > worst) {
                    worst = delta;
                    c.behind = component.label;
                    c.behind_s = delta;
                }
            }
            if (!(worst > 0)) {
                c.behind = "tie";
                c.behind_s = 0;
            }
        }
    }
}

void SearchRun::rankGiven()
{
    // The plan the search started from, against the best.
    const StepCost cost = engine.evaluate(base);
    {
        if (!cost.ok) {
            result.given_problem =
                "[" + cost.issues.front().rule + "] " + cost.issues.front().message;
        } else if (!cost.fits) {
            result.given_problem = "does not fit in memory";
        } else {
            result.given_ok = true;
            SearchCandidate& g = result.given;
            g.layout = base.parallel;
            g.score = searchScore(cost, static_cast<int>(gpus), options.objective);
            g.step_time_s = cost.step_time_s;
            g.memory_bytes = cost.max_stage_total_bytes;
            g.tokens_per_s = cost.metrics.tokens_per_s;
            g.cost = cost;
            result.given_rank = 1;
            for (const Record& r : records)
                result.given_rank += r.score < g.score ? 1 : 0;
            if (!result.top.empty()) {
                const StepBreakdown& best = result.top.front().cost.breakdown;
                for (const BreakdownComponent& component : kBreakdownComponents) {
                    const double delta = cost.breakdown.*component.field - best.*component.field;
                    if (delta > 1e-3 * result.top.front().step_time_s)
                        result.given_behind.emplace_back(component.label, delta);
                }
                std::sort(result.given_behind.begin(), result.given_behind.end(),
                          [](const auto& a, const auto& b) { return a.second > b.second; });
            }
        }
    }
}

void SearchRun::paretoFront()
{
    // Pareto front of memory per GPU against step time: sorted by memory, a plan joins when
    // it is faster than every plan needing no more memory.
    std::sort(records.begin(), records.end(), [&](const Record& a, const Record& b) {
        if (a.memory_bytes != b.memory_bytes)
            return a.memory_bytes < b.memory_bytes;
        if (a.step_time_s != b.step_time_s)
            return a.step_time_s < b.step_time_s;
        return key(layouts[a.index]) < key(layouts[b.index]);
    });
    double fastest = std::numeric_limits<double>::infinity();
    for (const Record& r : records) {
        if (r.step_time_s < fastest) {
            fastest = r.step_time_s;
            result.pareto.push_back(candidate(r));
        }
    }
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
    result.error = searchOptionsProblem(base, options);
    if (!result.error.empty())
        return result;
    SearchRun run{base, catalog, options, cancel, progress, result};
    result.space = static_cast<long long>(run.layouts.size());
    run.score();
    run.rank();
    run.rankGiven();
    run.paretoFront();
    result.ok = true;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

} // namespace paraplan
