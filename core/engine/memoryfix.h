#pragma once

#include "plan.h"
#include "stepmodel.h"

#include <string>
#include <vector>

namespace paraplan {

/// A change to a plan's layout that makes it fit in memory, with what it costs.
struct MemoryFix
{
    std::string change;    ///< "recompute full", "ZeRO 3", "micro-batch 1", "pp 8 dp 4", ...
    ParallelLayout layout; ///< the plan's layout with the change
    double step_time_s = 0;
    double slowdown = 0;      ///< step time over the plan's, less 1 (0.12: 12% slower)
    double spare_bytes = 0;   ///< StepCost::spareBytes() with the change
    double fullest_bytes = 0; ///< the fullest stage's peak allocated bytes with it
    bool tight = false;       ///< it fits without the allocator's reserve (StepCost::tight)
};

/// The cheapest changes that make a plan that does not fit (cost.fits false) fit, fastest
/// first: one change at a time (more recompute, a higher ZeRO stage, a smaller micro-batch,
/// sequence parallelism, no interleaving, twice the PP or TP degree with half the DP), and
/// where none fits alone, two together. The GPU count, the global batch and the training
/// settings stay the plan's; each change is evaluated by `engine` (the plan's), so its step
/// time and memory are the engine's. Empty for a plan that fits or is invalid, and where
/// nothing tried fits. At most `limit` fixes.
std::vector<MemoryFix> memoryFixes(const Plan& plan, const StepCost& cost, const StepEngine& engine,
                                   size_t limit = 4);

/// "recompute full: 8.1% slower, 3.2 GiB to spare": one fix in a line.
std::string memoryFixText(const MemoryFix& fix);

} // namespace paraplan
