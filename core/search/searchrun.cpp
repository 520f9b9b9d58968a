#include "searchrun.h"

#include <algorithm>
#include <thread>

namespace paraplan::searchdetail {

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
        // The dispatcher it runs, named where the search varies it.
        if (base.model.isMoe() &&
            static_cast<long long>(base.parallel.ep) * base.parallel.expertTp() > 1)
            g.moe_dispatcher = resolvedMoeDispatcher(base);
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
    const StepCost& cost = tally.cost;
    engine.evaluate(plan, tally.cost);
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
    const Record r{searchScore(cost, static_cast<int>(gpus), options.objective),
                   cost.step_time_s,
                   cost.max_stage_total_bytes,
                   cost.metrics.tokens_per_s,
                   plan.parallel,
                   plan.training.moe_dispatcher};
    ++tally.scored;
    if (result.given_ok && r.score < result.given.score)
        ++tally.better_than_given;
    top.offer(r);
    tally.pareto.insert(r);
    return {};
}

double SearchRun::scoreOfStepTime(double stepTime) const
{
    const TrainingSettings& tr = base.training;
    const double gpuCount = static_cast<double>(gpus); // every layout fills the cluster
    const double tokensPerSecond =
        double(base.parallel.global_batch) * tr.seq_len / stepTime; // StepMetrics::tokens_per_s
    switch (options.objective) {
    case SearchObjective::StepTime:
        return stepTime;
    case SearchObjective::TimeToTrain:
        return tr.train_tokens / tokensPerSecond;
    case SearchObjective::Cost:
        return tr.train_tokens / tokensPerSecond * gpuCount / 3600.0 * tr.gpu_hour_usd;
    case SearchObjective::TokensPerGpu:
        return -tokensPerSecond / static_cast<int>(gpus);
    }
    return stepTime;
}

// A layout the step-time bound outranks (its step time is at least `atLeast`): its memory
// verdict without its timing, so that it is counted as scored, over memory or short of
// headroom exactly as the full evaluation would count it (LayoutMemory equals the engine's
// figure). It cannot reach the top N nor beat the given plan (outranked()), so only the
// Pareto front could still want it: it is left to be costed (returns false) when it fits and
// no member of this thread's front has at most its memory and a step time below `atLeast`.
// A member that does is before it in the front's order and faster, so it is on no front
// (the front of all layouts is the merge of the threads' fronts: a member of one is a layout).
bool SearchRun::judgedByMemory(const Plan& plan, Tally& tally, double atLeast)
{
    const SearchConstraints& limits = options.constraints;
    const double bytes = memory->fullestStageBytes(plan);
    const double hbm = memory->hbmBytes();
    if (!(bytes <= memory->usableBytes())) // StepCost::fits
        ++tally.did_not_fit;
    else if (hbm - bytes < limits.min_headroom * hbm + limits.reserve_bytes)
        ++tally.headroom;
    else if (tally.pareto.dominated(bytes, atLeast))
        ++tally.scored;
    else if (tally.deferred.size() < kMaxDeferred) {
        tally.deferred.push_back({plan.parallel, bytes, atLeast, plan.training.moe_dispatcher});
        ++tally.scored;
    } else
        return false;
    ++tally.bounded;
    return true;
}

// The deferred layouts against the front of every thread's costed layouts: one a member
// rules off (at most its memory, faster than its bound) is on no front; the others are
// costed and offered to the front, and move from `bounded` to `evaluated`. They are already
// counted as scored and cannot reach the top N nor beat the given plan (outranked()).
void SearchRun::settleDeferred(std::vector<Tally>& tallies, ParetoFront& pareto)
{
    Plan plan = base;
    long long costed = 0;
    for (Tally& tally : tallies) {
        for (const Tally::Deferred& d : tally.deferred) {
            if (result.cancelled)
                break; // a cancelled search is not shown: stop costing at once
            if (pareto.dominated(d.memory_bytes, d.at_least_s))
                continue;
            if (++costed % 256 == 0 && cancel && cancel->load(std::memory_order_relaxed))
                result.cancelled = true;
            plan.parallel = d.layout;
            plan.training.moe_dispatcher = d.dispatcher;
            engine.evaluate(plan, tally.cost);
            const StepCost& cost = tally.cost;
            --result.bounded;
            ++result.evaluated;
            pareto.insert({searchScore(cost, static_cast<int>(gpus), options.objective),
                           cost.step_time_s, cost.max_stage_total_bytes, cost.metrics.tokens_per_s,
                           plan.parallel, plan.training.moe_dispatcher});
        }
        tally.deferred = {};
    }
}

// Layouts [from, to) of a block. Constraints on the layout alone come first and need no
// evaluation: a whole block out of them, or the columns off the fixed micro-batch, are
// counted without being visited.
void SearchRun::scoreBlock(const LayoutSpace::Block& block, long long from, long long to,
                           Plan& plan, Tally& tally)
{
    plan.training.moe_dispatcher = block.dispatcher;
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
    // The framework's rules (frameworkCapabilityIssue) read the ZeRO stage: they are judged
    // for each layout before this shortcut, so the layouts that reach it pass them all.
    // Checked against the engine on every layout by tst_search shortcutsChangeNothing.
    const int interleaves = space.interleaves(block);
    const size_t cells = static_cast<size_t>(interleaves) * block.columns;
    tally.cellRule.assign(cells, kUnjudged);
    tally.groupBound.assign(kBoundClasses * cells, std::numeric_limits<double>::quiet_NaN());
    const bool bounding = memory.has_value();
    tally.blockRules.clear();
    tally.blockRuleCounts.clear();
    PlanIssue unsupported;
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
        // A layout the plan's framework cannot run (it reads the ZeRO stage, so it is judged
        // per layout, before the siblings' verdicts): skipped, counted by its rule.
        if (frameworkCapabilityIssue(plan.training.framework, plan.parallel, &unsupported)) {
            ++tally.rejected[unsupported.rule];
            continue;
        }
        if (known >= 0) { // a sibling broke this rule: so does this layout
            ++tally.blockRuleCounts[static_cast<size_t>(known)];
            continue;
        }
        double& bound = tally.groupBound[kBoundClasses * cell + boundClass(plan.parallel)];
        // The bound is summed in another order than the engine's step time: a relative
        // margin of 1e-9 covers the rounding.
        if (bounding && tally.cellRule[cell] == kCosted && bound > 0 &&
            outranked(bound * (1 - 1e-9)) && judgedByMemory(plan, tally, bound * (1 - 1e-9)))
            continue;
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
    // The bound needs the memory-only verdict; without the GPU the engine costs nothing.
    const GpuSpec* gpu = catalog.gpu(base.cluster.gpu_id);
    if (options.bound && gpu)
        memory.emplace(base, *gpu);
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
    settleDeferred(tallies, pareto);
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

} // namespace paraplan::searchdetail
