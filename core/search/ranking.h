#pragma once

#include "plan.h"
#include "stepmodel.h"

#include <string>
#include <utility>
#include <vector>

namespace paraplan {

/// The search's ranking rule, in one place for the search, its tests, the CLI and the window.
///
/// 1. Scores within kSearchTieTolerance of the best score still unranked form a tie group:
///    the engine's figures are not exact to that share, so a layout that close is not
///    reliably faster (see docs/engine.md, "Search").
/// 2. Inside a tie group: more free memory on the fullest stage first, the memory compared
///    in whole kSearchMemoryStep steps; then the simpler layout (simplicityKey); then the
///    layout's fields, so the order is the same on every run and for any thread count.
/// 3. Layouts that are the same plan fold into one row: every ZeRO stage at a shard group of
///    one rank (nothing to shard) is the ZeRO-0 layout and is not scored again, and layouts
///    with the same degrees, interleave and micro-batch whose step time and memory are equal
///    to the last bit (a setting the engine finds changes nothing, such as selective
///    recompute next to none when FlashAttention already recomputes attention) keep the
///    simplest; each row says how many it folded.
inline constexpr double kSearchTieTolerance = 0.005;
inline constexpr double kSearchMemoryStep = 0.5 * 1024 * 1024 * 1024; ///< 0.5 GiB

/// The default memory headroom of a search: a share of HBM kept free for the caching
/// allocator's fragmentation and the engine's memory error (our margin, a choice), plus a
/// fixed reserve, both from the whole HBM; the reserve's default is the runtime reserve the
/// engine's verdict counts too (EngineFigures::runtime_reserve_bytes): the CUDA context, 781 MiB on
/// a GPU after `import torch; torch.zeros(1).cuda()` (nvidia-smi, PyTorch issue #34323), and one
/// NCCL communicator's buffers, 688 MiB for a group of more than two A100s on NVLink
/// (NVIDIA/nccl issue #964).
inline constexpr double kDefaultSearchHeadroomShare = 0.05;
inline constexpr double kDefaultSearchReserveBytes = (781.0 + 688.0) * 1024 * 1024;

/// The upper end of a tie group that starts at `score` (lower scores are better; a negated
/// tokens/s score works the same way).
double tieGroupLimit(double score);

/// Simplicity, simplest first: fewer parallel dimensions above one, then smaller TP, PP, CP
/// and EP, no interleave, a lower ZeRO stage, sequence parallelism off, less recompute.
std::vector<int> simplicityKey(const ParallelLayout& layout);

/// ZeRO stages searched (0-3), and how many of them one layout stands for when its shard
/// group is a single rank (they are one plan).
inline constexpr int kSearchZeroStages = 4;
bool zeroIsMoot(const ParallelLayout& layout); ///< shard group of one rank, ZeRO above 0

/// One step component's share of a difference between two plans.
struct BehindPart
{
    std::string label;
    double seconds = 0; ///< this plan's component minus the best's (signed)
};

/// Every component of `plan` minus the same component of `best`, largest in size first;
/// zero differences are left out. They add up to plan.total() - best.total(), which is the
/// step-time difference (the step time is the sum of its components).
std::vector<BehindPart> behindParts(const StepBreakdown& plan, const StepBreakdown& best);

/// "+36.8 ms = DP comm (exposed) +87.7 ms, pipeline bubble +66.8 ms, TP comm (exposed) -54.9 ms,
/// other -62.9 ms": the net step-time difference first (then `note`, as is), then the `shown`
/// largest parts, then the rest as "other" so that the figures add up to the net. "same step
/// time" when nothing differs.
std::string behindText(double net, const std::vector<BehindPart>& parts,
                       const std::string& note = {}, size_t shown = 3);

} // namespace paraplan
