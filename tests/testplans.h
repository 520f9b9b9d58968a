#pragma once

// Small helpers the engine suites share: a layout from its degrees, one evaluation of a
// plan with the bundled catalog, and a cluster from a bundled preset.

#include "clusterio.h"
#include "hardware.h"
#include "stepmodel.h"

#include <QtGlobal>

#include <algorithm>

namespace paraplan::test {

inline ParallelLayout layout(int tp, int pp, int dp, int micro, int global, int zero = 0)
{
    ParallelLayout p;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.micro_batch = micro;
    p.global_batch = global;
    p.zero = zero;
    return p;
}

/// Whether one of `issues` names `rule`.
inline bool hasRule(const std::vector<PlanIssue>& issues, const std::string& rule)
{
    return std::any_of(issues.begin(), issues.end(),
                       [&](const PlanIssue& issue) { return issue.rule == rule; });
}

inline StepCost evaluate(const Plan& plan)
{
    return StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
}

/// `base` with tp x pp filling its cluster (dp from the GPUs left, its cp kept, one model
/// chunk per stage, stages split evenly) and the given ZeRO stage, recompute and sequence
/// parallelism: one point of the engine suites' layout sweeps.
inline Plan sweptLayout(const Plan& base, int tp, int pp, int zero, Recompute recompute, bool sp)
{
    Plan p = base;
    p.parallel.tp = tp;
    p.parallel.pp = pp;
    p.parallel.interleave = 1;
    p.parallel.stage_layers.clear();
    p.parallel.first_stage_layers = 0;
    p.parallel.last_stage_layers = 0;
    const int cp = std::max(1, p.parallel.cp);
    p.parallel.dp = std::max(1, static_cast<int>(base.cluster.totalGpus()) / (tp * pp * cp));
    p.parallel.zero = zero;
    p.parallel.recompute = recompute;
    p.parallel.sequence_parallel = sp;
    return p;
}

/// The bundled preset `id` with `nodes` nodes (and `perRack` per rack, a spine
/// oversubscription of `spineRatio`:1 where given); a preset that cannot be built stops the test.
inline ClusterSpec clusterPreset(const char* id, int nodes, int perRack = -1, double spineRatio = 0)
{
    ClusterOptions options;
    options.nodes = nodes;
    if (perRack >= 0)
        options.nodes_per_rack = perRack;
    if (spineRatio > 0)
        options.spine_oversubscription = spineRatio;
    ClusterSpec cluster;
    std::string error;
    if (!clusterFromPreset(id, options, &cluster, &error, HardwareCatalog::bundled()))
        qFatal("%s", error.c_str());
    return cluster;
}

} // namespace paraplan::test
