#include "costjson.h"

#include "csv.h"
#include "units.h"

#include <QJsonArray>
#include <QString>

namespace paraplan {

QJsonObject collectiveResultJson(const CollectiveResult& r)
{
    QJsonObject json;
    json["op"] = collectiveOpName(r.op);
    json["bytes"] = r.bytes;
    json["ranks"] = r.ranks;
    json["algorithm"] = algorithmName(r.algorithm);
    json["protocol"] = protocolName(r.protocol);
    json["time_s"] = r.time_s;
    json["latency_s"] = r.latency_s;
    json["bandwidth_time_s"] = r.bandwidth_time_s;
    json["algbw_GBps"] = units::toGBps(r.algbw_Bps);
    json["busbw_GBps"] = units::toGBps(r.busbw_Bps);
    json["bytes_per_rank"] = r.wire_bytes_per_rank;
    json["bottleneck"] = tierName(r.bottleneck);
    json["bottleneck_GBps"] = units::toGBps(r.bottleneck_Bps);
    json["regime"] = regimeName(r.regime);
    json["placement"] = QJsonObject{{"gpus_per_node", r.gpus_per_node_in_group},
                                    {"nodes", r.nodes_spanned},
                                    {"racks", r.racks_spanned}};
    QJsonArray phases;
    for (int i = 0; i < r.phase_count; ++i) {
        const CollectivePhase& p = r.phases[static_cast<size_t>(i)];
        phases.append(QJsonObject{{"what", p.what},
                                  {"formula", QString::fromUtf8(p.formula)},
                                  {"tier", tierName(p.tier)},
                                  {"ranks", p.ranks},
                                  {"bytes_per_rank", p.wire_bytes_per_rank},
                                  {"bandwidth_GBps", units::toGBps(p.bandwidth_Bps)},
                                  {"time_s", p.time_s}});
    }
    json["phases"] = phases;
    return json;
}

QJsonObject stepCostToJson(const Plan& plan, const StepCost& cost)
{
    const StepBreakdown& b = cost.breakdown;
    QJsonObject breakdown;
    for (const BreakdownComponent& component : kBreakdownComponents)
        breakdown[component.key] = b.*component.field;
    QJsonArray stages;
    for (const StageCost& st : cost.stages)
        stages.append(QJsonObject{{"stage", st.stage},
                                  {"layers", st.layers},
                                  {"weights", st.weights_bytes},
                                  {"grads", st.grads_bytes},
                                  {"optimizer", st.optimizer_bytes},
                                  {"activations", st.activations_bytes},
                                  {"buffers", st.buffers_bytes},
                                  {"total", st.total_bytes},
                                  {"in_flight_microbatches", st.in_flight_microbatches},
                                  {"fits", st.fits}});
    QJsonArray collectives;
    for (const CollectiveCost& c : cost.collectives) {
        QJsonObject entry = collectiveResultJson(c.call);
        entry["group"] = c.group;
        entry["purpose"] = c.purpose;
        entry["stride"] = c.stride;
        entry["calls_per_step"] = c.calls_per_step;
        entry["total_s"] = c.total_s;
        entry["exposed_s"] = c.exposed_s;
        collectives.append(entry);
    }
    QJsonArray warnings;
    for (const std::string& warning : cost.warnings)
        warnings.append(QString::fromStdString(warning));
    const StepMetrics& mt = cost.metrics;
    QJsonObject json{
        {"plan", QString::fromStdString(plan.name)},
        {"step_time_s", cost.step_time_s},
        {"tokens_per_s", mt.tokens_per_s},
        {"tokens_per_step", mt.tokens_per_step},
        {"mfu", mt.mfu},
        {"hfu", mt.hfu},
        {"model_flops_per_step", mt.model_flops_per_step},
        {"fits", cost.fits},
        {"breakdown_s", breakdown},
        {"memory_bytes", QJsonObject{{"stages", stages},
                                     {"max_stage_total", cost.max_stage_total_bytes},
                                     {"fullest_stage", cost.fullest_stage},
                                     {"max_stage_reserved", cost.max_stage_reserved_bytes},
                                     {"runtime_reserve", cost.runtime_reserve_bytes},
                                     {"spare", cost.spareBytes()},
                                     {"tight", cost.tight},
                                     {"hbm", cost.hbm_bytes}}},
        {"collectives", collectives},
        {"microbatches", cost.microbatches},
        {"warnings", warnings}};
    QJsonArray links;
    for (const LinkUse& link : cost.links)
        links.append(QJsonObject{{"tier", tierName(link.tier)},
                                 {"busy_s", link.busy_s},
                                 {"share", link.share},
                                 {"busiest_group", link.busiest_group}});
    json["links"] = links;
    const StepAssumptions& as = cost.assumptions;
    json["kernels"] = QJsonObject{{"attention", attentionKernelName(as.attention)},
                                  {"attention_fwd_share", as.attention_fwd_share},
                                  {"attention_bwd_share", as.attention_bwd_share},
                                  {"gemm_share", cost.dense_layer.gemm_efficiency},
                                  {"elementwise", kernelStyleName(as.kernels)},
                                  {"tp_overlap", as.tp_overlap},
                                  {"grad_reduce_bytes", as.grad_reduce_bytes},
                                  {"slowest_gpu_factor", as.slowest_gpu_factor}};
    if (mt.time_to_train_s > 0) {
        json["time_to_train_s"] = mt.time_to_train_s;
        json["gpu_hours"] = mt.gpu_hours;
        if (mt.cost_usd > 0)
            json["cost_usd"] = mt.cost_usd;
    }
    return json;
}

namespace {

QJsonObject seriesJson(const SweepSeries& series)
{
    QJsonArray x;
    QJsonArray y;
    for (double v : series.x)
        x.append(v);
    for (double v : series.y)
        y.append(v);
    return QJsonObject{{"name", QString::fromStdString(series.name)}, {"x", x}, {"y", y}};
}

} // namespace

QJsonObject planAnalysisToJson(const PlanAnalysis& a)
{
    QJsonArray tp;
    for (const TpSweepPoint& point : a.tp) {
        QJsonObject entry{{"tp", point.tp}, {"ok", point.ok}, {"gpus", double(point.gpus)}};
        if (point.ok) {
            entry["tokens_per_s"] = point.tokens_per_s;
            entry["step_time_s"] = point.step_s;
            entry["fits"] = point.fits;
        } else {
            entry["note"] = QString::fromStdString(point.note);
        }
        tp.append(entry);
    }
    QJsonArray bandwidth;
    for (const SweepSeries& series : a.bandwidth)
        bandwidth.append(seriesJson(series));
    QJsonArray used;
    for (const SweepSeries& series : a.bandwidth_used)
        used.append(seriesJson(series));
    QJsonArray whatIf;
    for (size_t i = 0; i < a.what_if_labels.size(); ++i)
        whatIf.append(QJsonObject{{"label", QString::fromStdString(a.what_if_labels[i])},
                                  {"step_time_s", a.what_if_step_s[i]}});
    return QJsonObject{
        {"tp_sweep", QJsonObject{{"points", tp},
                                 {"gpus_per_node", a.gpus_per_node},
                                 {"nvlink_domain_gpus", a.nvlink_domain_gpus}}},
        {"bandwidth_busbw_GBps", QJsonObject{{"tiers", bandwidth}, {"plan_collectives", used}}},
        {"scaling", QJsonObject{{"step_time_s", seriesJson(a.scaling_step)},
                                {"dp_total_s", seriesJson(a.scaling_dp_total)},
                                {"dp_exposed_s", seriesJson(a.scaling_dp_exposed)},
                                {"rack_boundary_gpus", a.rack_boundary_gpus}}},
        {"what_if", whatIf}};
}

std::string planAnalysisToCsv(const PlanAnalysis& a)
{
    std::string out = csv::record({"series", "x", "y", "note"});
    auto row = [&](const std::string& series, double x, double y, const std::string& note) {
        out += csv::record({series, csv::number(x, 10), csv::number(y, 10), note});
    };
    for (const TpSweepPoint& point : a.tp) {
        // A point past the plan's GPUs says on how many it was evaluated.
        const std::string where =
            point.gpus != a.plan_gpus ? "on " + std::to_string(point.gpus) + " GPUs" : "";
        const std::string fit = point.fits ? "" : "does not fit";
        const std::string note = fit + (!fit.empty() && !where.empty() ? "; " : "") + where;
        row("tp: tokens/s", point.tp, point.ok ? point.tokens_per_s : 0,
            point.ok ? note : point.note);
        if (point.ok)
            row("tp: step time (s)", point.tp, point.step_s, note);
    }
    for (const SweepSeries& series : a.bandwidth)
        for (size_t i = 0; i < series.x.size(); ++i)
            row("busbw (GB/s) by bytes: " + series.name, series.x[i], series.y[i], "");
    for (const SweepSeries& series : a.bandwidth_used)
        for (size_t i = 0; i < series.x.size(); ++i)
            row("this plan's collective (GB/s): " + series.name, series.x[i], series.y[i], "");
    for (const SweepSeries* series : {&a.scaling_step, &a.scaling_dp_total, &a.scaling_dp_exposed})
        for (size_t i = 0; i < series->x.size(); ++i)
            row("scaling (s) by GPUs: " + series->name, series->x[i], series->y[i], "");
    for (size_t i = 0; i < a.what_if_labels.size(); ++i)
        row("what-if step time (s)", double(i), a.what_if_step_s[i], a.what_if_labels[i]);
    return out;
}

std::string stepCollectivesCsv(const StepCost& cost)
{
    std::string out =
        csv::record({"group", "op", "bytes", "ranks", "tier", "time_each_s", "calls_per_step",
                     "total_s", "exposed_s", "algbw_GBps", "busbw_GBps"});
    for (const CollectiveCost& c : cost.collectives)
        out += csv::record({c.group, collectiveOpName(c.call.op), csv::number(c.call.bytes, 12),
                            std::to_string(c.call.ranks), tierName(c.call.bottleneck),
                            csv::number(c.call.time_s, 8), csv::number(c.calls_per_step, 8),
                            csv::number(c.total_s, 8), csv::number(c.exposed_s, 8),
                            csv::number(units::toGBps(c.call.algbw_Bps), 8),
                            csv::number(units::toGBps(c.call.busbw_Bps), 8)});
    return out;
}

std::string stepMemoryCsv(const StepCost& cost)
{
    std::string out =
        csv::record({"stage", "layers", "weights_bytes", "grads_bytes", "optimizer_bytes",
                     "activations_bytes", "buffers_bytes", "total_bytes", "fits"});
    auto bytes = [](double value) { return QString::number(value, 'f', 0).toStdString(); };
    for (const StageCost& st : cost.stages)
        out += csv::record(
            {std::to_string(st.stage), std::to_string(st.layers), bytes(st.weights_bytes),
             bytes(st.grads_bytes), bytes(st.optimizer_bytes), bytes(st.activations_bytes),
             bytes(st.buffers_bytes), bytes(st.total_bytes), st.fits ? "yes" : "no"});
    return out;
}

} // namespace paraplan
