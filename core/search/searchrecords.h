#pragma once

// The search's internal parts (not an API): what the ranking keeps of a scored layout, the
// top-N records and the Pareto front the threads build, and one thread's tallies. Shared by
// search.cpp (the entry points) and searchrun.cpp (the scoring loop and the ranking).

#include "search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace paraplan::searchdetail {

// What the ranking keeps of a scored layout.
struct Record
{
    double score;
    double step_time_s;
    double memory_bytes;
    double tokens_per_s;
    ParallelLayout layout;
    MoeDispatcher dispatcher; ///< the block's (LayoutSpace::Block::dispatcher)
};

// The layout's fields as a tuple, and with the dispatcher: the tie-break that makes rankings
// deterministic.
inline auto layoutKey(const ParallelLayout& p)
{
    return std::make_tuple(p.tp, p.pp, p.dp, p.cp, p.ep, p.zero, p.sequence_parallel,
                           static_cast<int>(p.recompute), p.interleave, p.micro_batch);
}
inline auto key(const Record& r)
{
    return std::tuple_cat(layoutKey(r.layout), std::make_tuple(static_cast<int>(r.dispatcher)));
}

// Rank: score, then the layout's fields, so equal scores order the same on every run.
inline bool better(const Record& a, const Record& b)
{
    if (a.score != b.score)
        return a.score < b.score;
    return key(a) < key(b);
}

// Inside a tie group: more free memory first, in whole kSearchMemoryStep steps (the GPU's
// HBM is the same for every layout), then the simpler layout, then the fields.
inline bool tieOrder(const Record& a, const Record& b)
{
    const double stepA = std::floor(a.memory_bytes / kSearchMemoryStep);
    const double stepB = std::floor(b.memory_bytes / kSearchMemoryStep);
    if (stepA != stepB)
        return stepA < stepB;
    const std::vector<int> simpleA = simplicityKey(a.layout);
    const std::vector<int> simpleB = simplicityKey(b.layout);
    if (simpleA != simpleB)
        return simpleA < simpleB;
    // One layout under two dispatchers: the faster first.
    if (a.dispatcher != b.dispatcher && a.score != b.score &&
        layoutKey(a.layout) == layoutKey(b.layout))
        return a.score < b.score;
    return key(a) < key(b);
}

// Layouts with the same degrees, interleave, micro-batch and dispatcher whose step time and
// memory are equal to the last bit: one plan as far as the engine can tell (ranking.h, rule 3).
using Outcome = std::tuple<int, int, int, int, int, int, int, int, double, double>;
inline Outcome outcomeOf(const Record& r)
{
    const ParallelLayout& p = r.layout;
    return {p.tp,          p.pp,          p.cp,          p.dp,
            p.ep,          p.interleave,  p.micro_batch, static_cast<int>(r.dispatcher),
            r.step_time_s, r.memory_bytes};
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
    /// Whether a member has at most `memory` bytes and a step time below `stepTime`: then a
    /// record of that memory and at least that step time is on no front.
    bool dominated(double memory, double stepTime) const
    {
        // Members run by memory up and step time down: the last with at most `memory` is
        // the fastest of them.
        const auto after =
            std::upper_bound(m_members.begin(), m_members.end(), memory,
                             [](double bytes, const Record& r) { return bytes < r.memory_bytes; });
        return after != m_members.begin() && std::prev(after)->step_time_s < stepTime;
    }

private:
    static bool before(const Record& a, const Record& b)
    {
        if (a.memory_bytes != b.memory_bytes)
            return a.memory_bytes < b.memory_bytes;
        if (a.step_time_s != b.step_time_s)
            return a.step_time_s < b.step_time_s;
        return key(a) < key(b);
    }
    std::vector<Record> m_members;
};

// What one thread saw: counts by outcome, its share of the Pareto front, and how many of
// its scored layouts beat the plan the search started from.
struct alignas(64) Tally
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
    // The step-time lower bound of each (cell, boundClass()) group: NaN until one of its
    // layouts is costed.
    std::vector<double> groupBound;
    // Layouts the bound judged by memory alone that this thread's front did not yet rule off
    // the Pareto front: its memory and step-time bound, to be set against the whole front
    // once every thread is done (SearchRun::settleDeferred).
    struct Deferred
    {
        ParallelLayout layout;
        double memory_bytes;
        double at_least_s;
        MoeDispatcher dispatcher;
    };
    std::vector<Deferred> deferred;
    static_assert(sizeof(Deferred) <= 128, "kMaxDeferred's memory figure");
    // This thread's answer buffer: the engine fills it in place for each layout it costs
    // (no allocation per layout once its buffers have grown).
    StepCost cost;
};
/// The most deferred layouts one thread holds (128 bytes each: about 8.4 MB); past it, they are
/// costed at once.
inline constexpr size_t kMaxDeferred = size_t(1) << 16;
inline constexpr int kUnjudged = -2;
inline constexpr int kCosted = -1;

// A lower bound on the step time of every layout that differs from the costed `cost` only in
// its ZeRO stage and in recompute none vs selective (full recompute is a class of its own,
// see boundClass()): m x max_i x_i + (sum_i x_i - max_i x_i) / interleave, with
// x_i = fb_i + tp_i + cp_i + ep_i + pp_i the stage's micro-batch time but its recompute (the
// forward + backward seconds of one micro-batch on stage i and its exposed TP, CP, EP and PP
// communication) and m the micro-batches.
//
// Proof, against the engine (core/engine/stepmodel.cpp, stepcomm.cpp): the step time is the
// sum of the breakdown's components, each >= 0: compute + recompute + TP/CP/EP/PP exposed =
// m x mb_c, with mb_i = x_i + recompute_i >= x_i the stage's micro-batch time and c the stage
// of largest mb_i, so m x mb_c >= m x max_i x_i; the bubble is (sum_i mb_i - mb_c) /
// interleave >= (sum_{i != c} x_i) / interleave >= (sum_i x_i - max_i x_i) / interleave; DP
// sync and the optimizer add >= 0. m = global batch / (dp x micro-batch); fb_i depends only
// on the model, the degrees, the interleave, the micro-batch and sequence parallelism (the
// layer costs read ZeRO nowhere, recompute only for recompute_i); tp_i, cp_i and ep_i on
// those and the passes over the forward (3 under full recompute, else 2: stepcomm.cpp
// layerCollectives), the TP overlap (sequence parallelism, the degrees, the stack, which the
// search fixes) and the collective model; pp_i on the activation, the degrees and the
// interleave. So x_i is the same for every layout of the class and the bound holds for each.
// Checked on every layout of the examples by tst_search stepTimeBoundHoldsForEverySibling.
double stepTimeLowerBound(const StepCost& cost, int interleave);
/// The class of layouts one stepTimeLowerBound() covers, within an (interleave, micro-batch)
/// cell of a block: sequence parallelism and whether recompute is full (0-3).
inline int boundClass(const ParallelLayout& p)
{
    return (p.sequence_parallel ? 2 : 0) + (p.recompute == Recompute::Full ? 1 : 0);
}
inline constexpr int kBoundClasses = 4;

// How many of the indices [from, to) fall in `column` of rows `columns` wide.
long long inColumn(long long from, long long to, int columns, int column);

// Records sorted by better() put in ranking order: a tie group runs from the best score not
// yet ranked up to tieGroupLimit() of it, and is ordered by tieOrder().
void rankingOrder(std::vector<Kept>* kept);

} // namespace paraplan::searchdetail
