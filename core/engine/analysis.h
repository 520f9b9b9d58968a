#pragma once

#include "memoryfix.h"
#include "stepmodel.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace paraplan {

/// One curve of a plot, in the plot's units.
struct SweepSeries
{
    std::string name;
    std::vector<double> x;
    std::vector<double> y;
};

/// The bounds of every sweep, defined once: the window, the report and `paraplan-cli cliffs`
/// all use these.
struct SweepBounds
{
    static constexpr int kMaxTp = 64;           ///< TP degrees 1, 2, 4, ... up to this
    static constexpr int kTpPastNodeFactor = 4; ///< TP past the node shown up to 4x its GPUs,
                                                ///< on more GPUs where the plan's cannot hold it
    static constexpr double kMinBytes = 1e3;    ///< message sweep from 1 KB ...
    static constexpr double kMaxBytes = 1e3 * 16777216; ///< ... doubling to 16.8 GB
    static constexpr int kMaxScalingPoints = 12;        ///< GPU-count sweep, doubling nodes
    static constexpr int kScalingNodesFactor = 4;       ///< up to 4x the plan's nodes (or 8x
                                                        ///< the fewest that hold one replica)
};

/// Tokens/s and step time of the plan at one TP degree: the GPU count kept, DP absorbing it,
/// or (TP past the node where the plan's GPUs cannot hold one replica) on `gpus` GPUs, DP 1.
struct TpSweepPoint
{
    int tp = 1;
    long long gpus = 0; ///< the GPUs evaluated: the plan's, or more (see above)
    bool ok = false;
    double tokens_per_s = 0; ///< 0 when !ok
    double step_s = 0;
    bool fits = false;
    std::string note; ///< why the degree is invalid ("" when ok)
};

/// The bandwidth cliffs of a plan, as plain data: where its step time falls off as TP leaves
/// the node, as messages shrink on each tier, as DP grows, and under what-ifs.
struct PlanAnalysis
{
    std::vector<TpSweepPoint> tp;
    int gpus_per_node = 1;
    /// Where TP leaves NVLink: the node, or a rack-scale domain of several (72 on NVL72).
    int nvlink_domain_gpus = 1;
    long long plan_gpus = 0;                 ///< the plan's GPU count (TP points past it say so)
    std::vector<SweepSeries> bandwidth;      ///< all_reduce busbw (GB/s) against bytes, per tier
    std::vector<SweepSeries> bandwidth_used; ///< the plan's own collectives on those curves
    SweepSeries scaling_step;                ///< step time against GPUs (DP scaled)
    SweepSeries scaling_dp_total;            ///< DP sync per step, total
    SweepSeries scaling_dp_exposed;          ///< ... and exposed
    double rack_boundary_gpus = 0;           ///< 0: one rack at every size shown
    std::vector<std::string> what_if_labels; ///< "as planned" first
    std::vector<double> what_if_step_s;
    /// Where the plan does not fit: the cheapest layout changes that make it fit
    /// (memoryFixes()).
    std::vector<MemoryFix> memory_fixes;
};

/// An engine for a cluster (cached by the caller; sweeps over GPU counts and what-ifs need
/// engines for other clusters).
using EngineForCluster = std::function<std::shared_ptr<const StepEngine>(const ClusterSpec&)>;

/// The four cliff series of an evaluated plan. `engine` is the plan's own; `engineFor` builds
/// or finds the engines of the variants; `catalog` validates the what-if clusters.
PlanAnalysis analyzePlan(const Plan& plan, const StepCost& cost, const StepEngine& engine,
                         const EngineForCluster& engineFor, const HardwareCatalog& catalog);

} // namespace paraplan
