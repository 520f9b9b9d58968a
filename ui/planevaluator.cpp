#include "planevaluator.h"

#include "clusterio.h"
#include "units.h"

#include <algorithm>
#include <cmath>

namespace paraplan::ui {
namespace {

// 1 KB x 2^24: the sweep ends at 16.8 GB, past the 16 GB the plots promise.
constexpr double kSweepMaxBytes = 1e3 * 16777216.0;

} // namespace

PlanEvaluator::PlanEvaluator(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const PlanResults>>();
    qRegisterMetaType<std::vector<paraplan::PlanIssue>>();
}

std::shared_ptr<const StepEngine> PlanEvaluator::engineFor(const ClusterSpec& cluster)
{
    const std::string key = clusterToJsonText(cluster);
    std::shared_ptr<const StepEngine>& engine = m_engines[key];
    if (!engine) {
        if (m_engines.size() > 64) { // bound the cache; keep the entry being made
            auto keep = std::move(engine);
            m_engines.clear();
            engine = std::move(keep);
        }
        engine = std::make_shared<const StepEngine>(cluster);
    }
    return engine;
}

void PlanEvaluator::evaluate(const Plan& plan)
{
    // An invalid model or cluster cannot even build an engine: reject before. The engine
    // checks the rest of the plan itself.
    std::vector<PlanIssue> issues = validateModelAndCluster(plan);
    if (!issues.empty()) {
        emit planRejected(issues);
        return;
    }
    auto results = std::make_shared<PlanResults>();
    results->plan = plan;
    // The plan's own engine, looked up once (the lookup serialises the cluster) for the
    // plan and the sweeps that keep its cluster.
    const std::shared_ptr<const StepEngine> engine = engineFor(plan.cluster);
    results->cost = engine->evaluate(plan);
    if (!results->cost.ok) {
        emit planRejected(results->cost.issues);
        return;
    }
    fillSweeps(*engine, results.get());
    m_latest = results;
    emit resultsAvailable(results);
}

void PlanEvaluator::fillSweeps(const StepEngine& engine, PlanResults* r)
{
    const Plan& plan = r->plan;
    const ParallelLayout& p = plan.parallel;
    const ClusterSpec& cluster = plan.cluster;
    r->gpus_per_node = cluster.gpusPerNode();

    // 1. TP at a fixed GPU count: DP absorbs the difference, the global batch stays.
    const long long gpus = cluster.totalGpus();
    for (int tp = 1; tp <= 64 && tp <= gpus; tp *= 2) {
        Plan variant = plan;
        variant.parallel.tp = tp;
        const long long rest = gpus / (static_cast<long long>(tp) * p.pp * p.cp);
        if (gpus % (static_cast<long long>(tp) * p.pp * p.cp) != 0 || rest < 1)
            continue;
        variant.parallel.dp = static_cast<int>(rest);
        variant.parallel.sequence_parallel = p.sequence_parallel && tp > 1;
        if (variant.parallel.global_batch % (variant.parallel.micro_batch * variant.parallel.dp))
            variant.parallel.global_batch =
                std::max(1, variant.parallel.global_batch /
                                (variant.parallel.micro_batch * variant.parallel.dp)) *
                variant.parallel.micro_batch * variant.parallel.dp;
        const StepCost cost = engine.evaluate(variant);
        r->tp_degrees.push_back(tp);
        if (cost.ok) {
            r->tp_tokens_per_s.push_back(cost.metrics.tokens_per_s);
            r->tp_step_s.push_back(cost.step_time_s);
            r->tp_notes.push_back(QString());
            r->tp_fits.push_back(cost.fits);
        } else {
            r->tp_fits.push_back(false);
            r->tp_tokens_per_s.push_back(std::nan(""));
            r->tp_step_s.push_back(std::nan(""));
            r->tp_notes.push_back(QString::fromStdString(cost.issues.front().message));
        }
    }

    // 2. Bus bandwidth against message size on each tier the cluster has.
    const CollectiveModel& model = engine.collectives();
    struct Tier
    {
        QString name;
        int ranks;
        int stride;
    };
    std::vector<Tier> tiers;
    if (cluster.is_torus) {
        tiers.push_back({"one torus axis (" + QString::number(cluster.torus.dims[0]) + " chips)",
                         cluster.torus.dims[0], 1});
        tiers.push_back({"whole torus (" + QString::number(cluster.totalGpus()) + " chips)",
                         static_cast<int>(cluster.totalGpus()), 1});
    } else {
        const int gpn = cluster.node.gpus;
        if (gpn > 1)
            tiers.push_back({"in a node (" + QString::number(gpn) + " GPUs)", gpn, 1});
        const int perRack = cluster.network.nodes_per_rack > 0
                                ? std::min(cluster.network.nodes_per_rack, cluster.nodes)
                                : cluster.nodes;
        if (perRack > 1)
            tiers.push_back({"in a rack (" + QString::number(perRack) + " nodes)", perRack, gpn});
        if (cluster.nodes > perRack)
            tiers.push_back(
                {"assumed, across racks (" + QString::number(cluster.nodes) + " nodes x 1 GPU)",
                 cluster.nodes, gpn});
    }
    for (const Tier& tier : tiers) {
        Series series;
        series.name = tier.name;
        CollectiveRequest request;
        request.ranks = tier.ranks;
        request.stride = tier.stride;
        for (double bytes = 1e3; bytes <= kSweepMaxBytes * 1.0001; bytes *= 2) {
            request.bytes = bytes;
            const CollectiveResult result = model.evaluate(request);
            if (!result.ok)
                continue;
            series.x.push_back(bytes);
            series.y.push_back(units::toGBps(result.busbw_Bps));
        }
        if (!series.x.isEmpty())
            r->bandwidth.push_back(std::move(series));
    }
    for (const CollectiveCost& c : r->cost.collectives) {
        Series used;
        used.name = QString("%1 %2").arg(c.group, collectiveOpName(c.call.op));
        used.x.push_back(c.call.bytes);
        used.y.push_back(units::toGBps(c.call.busbw_Bps));
        r->bandwidth_used.push_back(std::move(used));
    }

    // 3. Data-parallel scaling: more nodes, DP grows, each pipeline keeps its micro-batches.
    if (!cluster.is_torus) {
        const int modelGpus = p.tp * p.pp * p.cp;
        const int gpn = cluster.node.gpus;
        const int minNodes = std::max(1, (modelGpus + gpn - 1) / gpn);
        const int maxNodes = std::max(cluster.nodes * 4, minNodes * 8);
        const int perRack = cluster.network.nodes_per_rack;
        for (int nodes = minNodes; nodes <= maxNodes && r->scaling_step.x.size() < 12; nodes *= 2) {
            if ((static_cast<long long>(nodes) * gpn) % modelGpus != 0)
                continue;
            Plan variant = plan;
            variant.cluster.nodes = nodes;
            variant.parallel.dp = nodes * gpn / modelGpus;
            variant.parallel.global_batch =
                p.global_batch / std::max(1, p.dp) * variant.parallel.dp;
            if (variant.parallel.global_batch < variant.parallel.micro_batch * variant.parallel.dp)
                variant.parallel.global_batch = variant.parallel.micro_batch * variant.parallel.dp;
            const StepCost cost = engineFor(variant.cluster)->evaluate(variant);
            if (!cost.ok)
                continue;
            double dpTotal = 0;
            for (const CollectiveCost& c : cost.collectives) {
                if (QString(c.group) == "dp")
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

    // 4. What-ifs: the same plan with a switch chip out, or another spine.
    auto whatIf = [&](const QString& label, const std::function<void(Plan&)>& change) {
        Plan variant = plan;
        change(variant);
        if (!validateCluster(variant.cluster, HardwareCatalog::bundled()).empty())
            return;
        const StepCost cost = engineFor(variant.cluster)->evaluate(variant);
        if (!cost.ok)
            return;
        r->what_if_labels.push_back(label);
        r->what_if_step_s.push_back(cost.step_time_s);
    };
    r->what_if_labels.push_back("as planned");
    r->what_if_step_s.push_back(r->cost.step_time_s);
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
            whatIf(QString("spine %1:1%2").arg(ratio).arg(oneRack ? ", 2 racks" : ""),
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

} // namespace paraplan::ui
