#include "memoryfix.h"

#include "units.h"

#include <algorithm>
#include <functional>

namespace paraplan {

namespace {

struct Change
{
    std::string name;
    std::function<bool(ParallelLayout&)> apply; ///< false: does not apply to this layout
    /// A degree doubled with half the DP: the change is named by the degrees it leads to.
    int ParallelLayout::*doubled = nullptr;

    std::string nameFor(const ParallelLayout& layout) const
    {
        if (!doubled)
            return name;
        return name + " " + std::to_string(layout.*doubled) + " dp " + std::to_string(layout.dp);
    }
};

std::vector<Change> singleChanges(const Plan& plan)
{
    const ParallelLayout& base = plan.parallel;
    std::vector<Change> changes;
    if (base.recompute == Recompute::None)
        changes.push_back({"recompute selective", [](ParallelLayout& p) {
                               p.recompute = Recompute::Selective;
                               return true;
                           }});
    if (base.recompute != Recompute::Full)
        changes.push_back({"recompute full", [](ParallelLayout& p) {
                               p.recompute = Recompute::Full;
                               return true;
                           }});
    for (int zero = base.zero + 1; zero <= 3; ++zero)
        changes.push_back({"ZeRO " + std::to_string(zero), [zero](ParallelLayout& p) {
                               if (p.shardRanks() <= 1)
                                   return false;
                               p.zero = zero;
                               return true;
                           }});
    if (base.micro_batch > 1)
        changes.push_back(
            {"micro-batch " + std::to_string(base.micro_batch / 2), [](ParallelLayout& p) {
                 p.micro_batch /= 2;
                 return p.micro_batch >= 1;
             }});
    if (base.tp > 1 && !base.sequence_parallel)
        changes.push_back({"sequence parallelism", [](ParallelLayout& p) {
                               p.sequence_parallel = true;
                               return true;
                           }});
    if (base.interleave > 1)
        changes.push_back({"no interleaving", [](ParallelLayout& p) {
                               p.interleave = 1;
                               return true;
                           }});
    // Twice the PP or TP degree with half the DP (TP with sequence parallelism).
    for (int ParallelLayout::*dim : {&ParallelLayout::pp, &ParallelLayout::tp}) {
        const bool tp = dim == &ParallelLayout::tp;
        changes.push_back({tp ? "tp" : "pp",
                           [dim, tp](ParallelLayout& p) {
                               if (p.dp % 2 != 0)
                                   return false;
                               p.*dim *= 2;
                               p.dp /= 2;
                               p.sequence_parallel = p.sequence_parallel || tp;
                               return true;
                           },
                           dim});
    }
    return changes;
}

} // namespace

std::vector<MemoryFix> memoryFixes(const Plan& plan, const StepCost& cost, const StepEngine& engine,
                                   size_t limit)
{
    std::vector<MemoryFix> fixes;
    if (!cost.ok || cost.fits)
        return fixes;
    const std::vector<Change> changes = singleChanges(plan);
    Plan variant = plan;
    StepCost answer;
    auto tryLayout = [&](const std::string& name, const ParallelLayout& layout) {
        variant.parallel = layout;
        engine.evaluate(variant, answer);
        if (!answer.ok || !answer.fits)
            return;
        MemoryFix fix;
        fix.change = name;
        fix.layout = layout;
        fix.step_time_s = answer.step_time_s;
        fix.slowdown = cost.step_time_s > 0 ? answer.step_time_s / cost.step_time_s - 1 : 0;
        fix.spare_bytes = answer.spareBytes();
        fix.fullest_bytes = answer.max_stage_total_bytes;
        fix.tight = answer.tight;
        fixes.push_back(fix);
    };
    for (const Change& change : changes) {
        ParallelLayout layout = plan.parallel;
        if (change.apply(layout))
            tryLayout(change.nameFor(layout), layout);
    }
    // Two changes together where no single one fits (the second named after the first).
    if (fixes.empty()) {
        for (size_t i = 0; i < changes.size(); ++i) {
            for (size_t j = i + 1; j < changes.size(); ++j) {
                ParallelLayout layout = plan.parallel;
                if (changes[i].apply(layout) && changes[j].apply(layout))
                    tryLayout(changes[i].nameFor(layout) + " + " + changes[j].nameFor(layout),
                              layout);
            }
        }
    }
    // Fastest first; a tight fit after every full one.
    std::stable_sort(fixes.begin(), fixes.end(), [](const MemoryFix& a, const MemoryFix& b) {
        if (a.tight != b.tight)
            return !a.tight;
        return a.step_time_s < b.step_time_s;
    });
    if (fixes.size() > limit)
        fixes.resize(limit);
    return fixes;
}

std::string memoryFixText(const MemoryFix& fix)
{
    const double percent = 100 * fix.slowdown;
    std::string cost = percent >= 0.05    ? units::formatNumber(percent) + "% slower"
                       : percent <= -0.05 ? units::formatNumber(-percent) + "% faster"
                                          : "no slower";
    return fix.change + ": " + cost + ", " + units::formatNumber(units::toGiB(fix.spare_bytes)) +
           " GiB to spare" + (fix.tight ? " (tight)" : "");
}

} // namespace paraplan
