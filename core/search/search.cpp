#include "search.h"

#include "searchrun.h"
#include "searchspace.h"
#include "searchwording.h"
#include "summary.h"

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

std::vector<ParallelLayout> enumerateLayouts(const Plan& base, const SearchOptions& options,
                                             std::vector<MoeDispatcher>* dispatchers)
{
    std::vector<ParallelLayout> layouts;
    if (dispatchers)
        dispatchers->clear();
    const LayoutSpace space(base, options);
    space.forEachBlock([&](const LayoutSpace::Block& block) {
        if (block.repeat && !dispatchers)
            return true;
        for (long long i = 0; i < block.size(); ++i) {
            layouts.push_back(space.layout(block, i));
            if (dispatchers)
                dispatchers->push_back(block.dispatcher);
        }
        return true;
    });
    return layouts;
}

std::vector<MoeDispatcher> searchDispatchers(TrainingFramework framework)
{
    switch (framework) {
    case TrainingFramework::Megatron:
        return {MoeDispatcher::DeepEP, MoeDispatcher::AllToAll, MoeDispatcher::AllGather};
    case TrainingFramework::Torchtitan:
        return {MoeDispatcher::DeepEP, MoeDispatcher::AllToAll};
    case TrainingFramework::PytorchFsdp:
    case TrainingFramework::DeepSpeed:
        break;
    }
    return {MoeDispatcher::AllToAll};
}

std::string candidateLabel(const ParallelLayout& layout, MoeDispatcher dispatcher)
{
    std::string text = layoutLabel(layout);
    if (dispatcher != MoeDispatcher::Auto)
        text += std::string(" ") + moeDispatcherName(dispatcher);
    return text;
}

std::string candidateLabel(const SearchCandidate& candidate)
{
    return candidateLabel(candidate.layout, candidate.moe_dispatcher);
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

SearchResult searchPlans(const Plan& plan_, const HardwareCatalog& catalog,
                         const SearchOptions& options, const std::atomic<bool>* cancel,
                         const std::function<void(double)>& progress)
{
    const auto started = std::chrono::steady_clock::now();
    // Every candidate runs on the plan's own framework (training.framework); layouts it
    // cannot run are skipped and counted by rule (frameworkCapabilityIssue).
    const Plan& base = plan_;
    SearchResult result;
    result.error = searchProblem(base, options, &result.over_budget);
    if (!result.error.empty())
        return result;
    searchdetail::SearchRun run{base, catalog, options, cancel, progress, result};
    result.space = run.space.size();
    result.given_outside = searchSpaceMisses(base, options);
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
