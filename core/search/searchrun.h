#pragma once

// One search's run (not an API): the space, the engine, the scoring loop over the blocks on
// the search's threads and the ranking of what it kept (searchrun.cpp).

#include "searchmemory.h"
#include "searchrecords.h"
#include "searchspace.h"

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

namespace paraplan::searchdetail {

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
    /// The memory-only verdict of the layouts the bound does not cost (set when bounding).
    std::optional<LayoutMemory> memory{};

    void evaluateGiven();
    // A layout whose step time is at least `atLeast` cannot reach the top N nor beat the plan
    // the search started from when the score of that step time is above the top N's limit
    // and at least the given plan's score.
    bool outranked(double atLeast) const
    {
        const double score = scoreOfStepTime(atLeast);
        return score > top.limit() && (!result.given_ok || score >= result.given.score);
    }
    // The objective's score of a layout of this search with this step time, by the engine's
    // operations in the engine's order (StepEngine's metrics, searchScore()). Every objective
    // is a chain of divisions and multiplications by positive figures fixed for the search
    // (tokens per step, the token budget, the GPU count, the price), each monotone in its
    // operand in floating point too, so a lower bound on the step time gives a lower bound on
    // the score.
    double scoreOfStepTime(double stepTime) const;
    bool judgedByMemory(const Plan& plan, Tally& tally, double atLeast);
    void settleDeferred(std::vector<Tally>& tallies, ParetoFront& pareto);
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
        c.moe_dispatcher = r.dispatcher;
        c.score = r.score;
        c.step_time_s = r.step_time_s;
        c.memory_bytes = r.memory_bytes;
        c.tokens_per_s = r.tokens_per_s;
        Plan plan = base;
        plan.parallel = c.layout;
        plan.training.moe_dispatcher = r.dispatcher;
        c.cost = engine.evaluate(plan);
        return c;
    }
};

// The plan the search started from, scored the same way, so that the scoring can count the

} // namespace paraplan::searchdetail
