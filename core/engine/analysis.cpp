#include "analysis.h"

#include "summary.h"
#include "units.h"

#include <algorithm>
#include <cmath>

namespace paraplan {

namespace {

struct Sweep
{
    const Plan& plan;
    const StepCost& planCost;
    const StepEngine& engine;
    const EngineForCluster& engineFor;
    const HardwareCatalog& catalog;
    PlanAnalysis* r;
};

// The plan at one TP degree with `dp` replicas on `nodes` nodes, the global batch kept (rounded
// to a multiple of micro-batch x DP where it must be).
Plan tpVariant(const Plan& plan, int tp, int dp, int nodes)
{
    Plan variant = plan;
    variant.cluster.nodes = nodes;
    variant.parallel.tp = tp;
    variant.parallel.dp = dp;
    variant.parallel.sequence_parallel = plan.parallel.sequence_parallel && tp > 1;
    const int perStep = variant.parallel.micro_batch * dp;
    if (variant.parallel.global_batch % perStep)
        variant.parallel.global_batch =
            std::max(1, variant.parallel.global_batch / perStep) * perStep;
    return variant;
}

TpSweepPoint tpPoint(int tp, long long gpus, const StepCost& cost)
{
    TpSweepPoint point;
    point.tp = tp;
    point.gpus = gpus;
    point.ok = cost.ok;
    if (cost.ok) {
        point.tokens_per_s = cost.metrics.tokens_per_s;
        point.step_s = cost.step_time_s;
        point.fits = cost.fits;
    } else {
        point.note = cost.issues.front().message;
    }
    return point;
}

void tpSweep(const Sweep& sweep)
{
    const Plan& plan = sweep.plan;
    const ParallelLayout& p = plan.parallel;
    const ClusterSpec& cluster = plan.cluster;
    PlanAnalysis* r = sweep.r;
    // 1. TP at a fixed GPU count: DP absorbs the difference, the global batch stays.
    const long long gpus = cluster.totalGpus();
    const int gpn = cluster.gpusPerNode();
    const int domain = cluster.nvlinkDomainGpus();
    for (int tp = 1; tp <= SweepBounds::kMaxTp; tp *= 2) {
        const long long modelGpus = static_cast<long long>(tp) * p.pp * p.cp;
        if (gpus % modelGpus == 0) {
            const Plan variant =
                tpVariant(plan, tp, static_cast<int>(gpus / modelGpus), cluster.nodes);
            r->tp.push_back(tpPoint(tp, gpus, sweep.engine.evaluate(variant)));
            continue;
        }
        // Past the node, where the plan's GPUs cannot hold one replica at this degree: the
        // fewest whole nodes that do (DP 1), so the axis always shows TP leaving the node.
        // The point says how many GPUs it needs; degrees the engine refuses (heads, layers)
        // are left out.
        if (cluster.is_torus || tp <= domain || tp > domain * SweepBounds::kTpPastNodeFactor ||
            modelGpus % gpn != 0 || modelGpus <= gpus)
            continue;
        const Plan variant = tpVariant(plan, tp, 1, static_cast<int>(modelGpus / gpn));
        TpSweepPoint point =
            tpPoint(tp, modelGpus, sweep.engineFor(variant.cluster)->evaluate(variant));
        if (point.ok)
            r->tp.push_back(std::move(point));
    }
}

void bandwidthSweep(const Sweep& sweep)
{
    const Plan& plan = sweep.plan;
    const ClusterSpec& cluster = plan.cluster;
    PlanAnalysis* r = sweep.r;
    // 2. Bus bandwidth against message size on each tier the cluster has.
    const CollectiveModel& model = sweep.engine.collectives();
    struct Tier
    {
        std::string name;
        int ranks;
        int stride;
    };
    std::vector<Tier> tiers;
    if (cluster.is_torus) {
        tiers.push_back({"one torus axis (" + std::to_string(cluster.torus.dims[0]) + " chips)",
                         cluster.torus.dims[0], 1});
        tiers.push_back({"whole torus (" + groupedNumber(double(cluster.totalGpus())) + " chips)",
                         static_cast<int>(cluster.totalGpus()), 1});
    } else {
        const int gpn = cluster.node.gpus;
        if (gpn > 1)
            tiers.push_back({"in a node (" + std::to_string(gpn) + " GPUs)", gpn, 1});
        const int domain = cluster.nvlinkDomainGpus();
        if (domain > gpn)
            tiers.push_back({"in an NVLink domain (" + std::to_string(domain) + " GPUs, " +
                                 std::to_string(domain / gpn) + " nodes)",
                             domain, 1});
        const int perRack = cluster.network.nodes_per_rack > 0
                                ? std::min(cluster.network.nodes_per_rack, cluster.nodes)
                                : cluster.nodes;
        // A rack inside one NVLink domain (NVL72) is the domain's tier already.
        if (perRack > 1 && static_cast<long long>(perRack) * gpn > domain)
            tiers.push_back({"in a rack (" + groupedNumber(perRack) + " nodes)", perRack, gpn});
        if (cluster.nodes > perRack)
            tiers.push_back(
                {"assumed, across racks (" + groupedNumber(cluster.nodes) + " nodes x 1 GPU)",
                 cluster.nodes, gpn});
    }
    for (const Tier& tier : tiers) {
        SweepSeries series;
        series.name = tier.name;
        CollectiveRequest request;
        request.ranks = tier.ranks;
        request.stride = tier.stride;
        for (double bytes = SweepBounds::kMinBytes; bytes <= SweepBounds::kMaxBytes * 1.0001;
             bytes *= 2) {
            request.bytes = bytes;
            const CollectiveResult result = model.evaluate(request);
            if (!result.ok)
                continue;
            series.x.push_back(bytes);
            series.y.push_back(units::toGBps(result.busbw_Bps));
        }
        if (!series.x.empty())
            r->bandwidth.push_back(std::move(series));
    }
    for (const CollectiveCost& c : sweep.planCost.collectives) {
        SweepSeries used;
        used.name = std::string(c.group) + " " + collectiveOpName(c.call.op);
        used.x.push_back(c.call.bytes);
        used.y.push_back(units::toGBps(c.call.busbw_Bps));
        r->bandwidth_used.push_back(std::move(used));
    }
}

void scalingSweep(const Sweep& sweep)
{
    const Plan& plan = sweep.plan;
    const ParallelLayout& p = plan.parallel;
    const ClusterSpec& cluster = plan.cluster;
    PlanAnalysis* r = sweep.r;
    // 3. Data-parallel scaling: more nodes, DP grows, each pipeline keeps its micro-batches.
    if (!cluster.is_torus) {
        const int modelGpus = p.tp * p.pp * p.cp;
        const int gpn = cluster.node.gpus;
        const int minNodes = std::max(1, (modelGpus + gpn - 1) / gpn);
        const int maxNodes =
            std::max(cluster.nodes * SweepBounds::kScalingNodesFactor, minNodes * 8);
        const int perRack = cluster.network.nodes_per_rack;
        for (int nodes = minNodes;
             nodes <= maxNodes &&
             r->scaling_step.x.size() < static_cast<size_t>(SweepBounds::kMaxScalingPoints);
             nodes *= 2) {
            if ((static_cast<long long>(nodes) * gpn) % modelGpus != 0)
                continue;
            Plan variant = plan;
            variant.cluster.nodes = nodes;
            variant.parallel.dp = nodes * gpn / modelGpus;
            variant.parallel.global_batch =
                p.global_batch / std::max(1, p.dp) * variant.parallel.dp;
            if (variant.parallel.global_batch < variant.parallel.micro_batch * variant.parallel.dp)
                variant.parallel.global_batch = variant.parallel.micro_batch * variant.parallel.dp;
            const StepCost cost = sweep.engineFor(variant.cluster)->evaluate(variant);
            if (!cost.ok)
                continue;
            double dpTotal = 0;
            for (const CollectiveCost& c : cost.collectives) {
                if (std::string(c.group) == "dp")
                    dpTotal += c.total_s;
            }
            const double x = double(nodes) * gpn;
            r->scaling_step.x.push_back(x);
            r->scaling_step.y.push_back(cost.step_time_s);
            r->scaling_dp_total.x.push_back(x);
            r->scaling_dp_total.y.push_back(dpTotal);
            r->scaling_dp_exposed.x.push_back(x);
            r->scaling_dp_exposed.y.push_back(cost.breakdown.dp_comm_exposed_s);
            if (perRack > 0 && nodes > perRack && r->rack_boundary_gpus == 0)
                r->rack_boundary_gpus = double(perRack) * gpn;
        }
        r->scaling_step.name = "step time";
        r->scaling_dp_total.name = "DP sync, total";
        r->scaling_dp_exposed.name = "DP sync, exposed";
    }
}

void whatIfs(const Sweep& sweep)
{
    const Plan& plan = sweep.plan;
    const ClusterSpec& cluster = plan.cluster;
    PlanAnalysis* r = sweep.r;
    // 4. What-ifs: the same plan with a switch chip out, or another spine.
    auto whatIf = [&](const std::string& label, const std::function<void(Plan&)>& change) {
        Plan variant = plan;
        change(variant);
        if (!validateCluster(variant.cluster, sweep.catalog).empty())
            return;
        const StepCost cost = sweep.engineFor(variant.cluster)->evaluate(variant);
        if (!cost.ok)
            return;
        r->what_if_labels.push_back(label);
        r->what_if_step_s.push_back(cost.step_time_s);
    };
    r->what_if_labels.push_back("as planned");
    r->what_if_step_s.push_back(sweep.planCost.step_time_s);
    if (!cluster.is_torus && cluster.node.fabric == NodeFabric::NVSwitch &&
        cluster.node.switch_links_per_gpu.size() > 1 && cluster.what_if.nvswitch_chips_out.empty())
        whatIf("1 NVSwitch chip out", [](Plan& v) { v.cluster.what_if.nvswitch_chips_out = {0}; });
    if (!cluster.is_torus && cluster.nodes > 1) {
        const bool oneRack =
            cluster.network.nodes_per_rack == 0 || cluster.network.nodes_per_rack >= cluster.nodes;
        for (double ratio : {1.0, 2.0, 4.0}) {
            if (ratio == cluster.network.spine_oversubscription.value && !oneRack)
                continue;
            if (ratio == 1.0 && oneRack)
                continue;
            whatIf("spine " + units::formatNumber(ratio) + ":1" + (oneRack ? ", 2 racks" : ""),
                   [ratio](Plan& v) {
                       v.cluster.network.spine_oversubscription.value = ratio;
                       if (v.cluster.network.nodes_per_rack == 0 ||
                           v.cluster.network.nodes_per_rack >= v.cluster.nodes)
                           v.cluster.network.nodes_per_rack = std::max(1, v.cluster.nodes / 2);
                   });
        }
        whatIf("NICs at half rate", [](Plan& v) { v.cluster.what_if.nic_factor = 0.5; });
    }
}

} // namespace

PlanAnalysis analyzePlan(const Plan& plan, const StepCost& planCost, const StepEngine& engine,
                         const EngineForCluster& engineFor, const HardwareCatalog& catalog)
{
    PlanAnalysis analysis;
    analysis.gpus_per_node = plan.cluster.gpusPerNode();
    analysis.nvlink_domain_gpus = plan.cluster.nvlinkDomainGpus();
    analysis.plan_gpus = plan.cluster.totalGpus();
    const Sweep sweep{plan, planCost, engine, engineFor, catalog, &analysis};
    tpSweep(sweep);
    bandwidthSweep(sweep);
    scalingSweep(sweep);
    whatIfs(sweep);
    analysis.memory_fixes = memoryFixes(plan, planCost, engine);
    return analysis;
}

} // namespace paraplan
