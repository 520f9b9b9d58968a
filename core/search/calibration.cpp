#include "calibration.h"

#include "enginecache.h"

#include "jsonutil.h"
#include "planio.h"
#include "units.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>

namespace paraplan {
namespace {

bool readText(const std::string& path, std::string* text, std::string* error)
{
    if (path.rfind(":/", 0) == 0) {
        QFile file(QString::fromStdString(path));
        if (!file.open(QIODevice::ReadOnly)) {
            *error = "bundled calibration file missing: " + path;
            return false;
        }
        *text = file.readAll().toStdString();
        return true;
    }
    return json::readFile(path, text, error);
}

std::string describeAssumptions(const Plan& plan, const StepCost& cost)
{
    const StepAssumptions& a = cost.assumptions;
    std::string text = std::string("attention ") + attentionKernelName(a.attention) +
                       ", element-wise kernels " + kernelStyleName(a.kernels) + ", TP overlap " +
                       (plan.parallel.tp < 2 ? "n/a" : (a.tp_overlap ? "ag-gemm" : "none")) +
                       ", DP overlap " + (plan.parallel.dp_overlap ? "on" : "off") +
                       ", gradients reduced in " + (a.grad_reduce_bytes == 4 ? "fp32" : "16 bits");
    text += plan.model.biases ? ", biases" : ", no biases";
    text += plan.model.dropout ? ", dropout" : ", no dropout";
    return text;
}

// Korthikanti et al. 2022's layouts as plan files: the published architecture (GPT: GeLU,
// biases, dropout, learned positions, tied embeddings), DGX A100 nodes, and the 2022
// Megatron-LM stack: unfused attention, fused element-wise kernels, no TP overlap, fp16.
bool korthikantiPlans(const QJsonObject& root, const HardwareCatalog& catalog,
                      std::vector<CalibrationRow>* rows, std::string* error)
{
    const QJsonObject common = root.value("common").toObject();
    const QJsonObject models = root.value("models").toObject();
    for (const QJsonValue& value : root.value("iteration_time_s").toArray()) {
        const QJsonObject row = value.toObject();
        const QString modelId = row.value("model").toString();
        QJsonObject model = models.value(modelId).toObject();
        model["preset"] = modelId;
        model["kv_heads"] = model.value("heads");
        model["vocab"] = common.value("vocab").toInt(51200);
        model["mlp"] = "gelu";
        model["biases"] = true;
        model["dropout"] = true;
        model["learned_positions"] = true;
        model["tied_embeddings"] = true;
        const int gpus = row.value("gpus").toInt();
        const int tp = common.value("tp").toInt(8);
        const int pp = row.value("pp").toInt(1);
        const QString recompute = row.value("recompute").toString();
        const QJsonObject parallel{{"tp", tp},
                                   {"pp", pp},
                                   {"dp", std::max(1, gpus / (tp * pp))},
                                   {"interleave", row.value("interleave").toInt(1)},
                                   {"micro_batch", row.value("micro_batch").toInt()},
                                   {"global_batch", row.value("global_batch").toInt()},
                                   {"recompute", recompute},
                                   {"sequence_parallel", row.value("sequence_parallel").toBool()},
                                   {"zero", 0},
                                   {"tp_overlap", "none"}};
        const QJsonObject training{{"seq_len", common.value("seq_len").toInt(2048)},
                                   {"dtype", common.value("dtype").toString("fp16")},
                                   {"optimizer", "adam"},
                                   {"attention", "unfused"},
                                   {"kernels", "fused"}};
        const QJsonObject plan{
            {"name", modelId + ", " + recompute},
            {"model", model},
            {"cluster", QJsonObject{{"preset", "dgx-a100"}, {"nodes", std::max(1, gpus / 8)}}},
            {"parallel", parallel},
            {"training", training}};
        CalibrationRow out;
        out.name = (modelId + "-" + recompute).toStdString();
        out.model = modelId.toStdString();
        out.gpus = gpus;
        out.source = root.value("source").toString().toStdString();
        out.measured_s = row.value("measured_s").toDouble();
        std::vector<std::string> errors;
        const std::string text = QJsonDocument(plan).toJson().toStdString();
        if (!planFromJsonText(text, {}, &out.plan, &errors, catalog)) {
            *error = out.name + ": " + errors.front();
            return false;
        }
        rows->push_back(std::move(out));
    }
    return true;
}

// A 2026-style row states its plan's parts as fields of its own: the model, the cluster as a
// preset with a node count (and, where the source's hardware had no preset, its GPU or the node's
// fields that differ), the layout and the training settings.
QJsonObject planOfRow(const QJsonObject& row)
{
    QJsonObject cluster{{"preset", row.value("cluster_preset")}, {"nodes", row.value("nodes")}};
    if (row.contains("cluster_gpu")) // the preset's nodes with another GPU of the catalog
        cluster["gpu"] = row.value("cluster_gpu");
    if (row.contains("cluster_node_override"))
        cluster["node"] = row.value("cluster_node_override");
    QJsonObject plan{{"model", row.value("model")},
                     {"cluster", cluster},
                     {"parallel", row.value("parallel")},
                     {"training", row.value("training")}};
    return plan;
}

// A modern row's plan ("plan", or its parts as the row's own fields) through the plan-file
// reader, named after the row where the plan has no name.
bool readRowPlan(const QJsonObject& row, const std::string& name, const HardwareCatalog& catalog,
                 Plan* out, std::string* error)
{
    QJsonObject plan = row.contains("plan") ? row.value("plan").toObject() : planOfRow(row);
    if (!plan.contains("name"))
        plan["name"] = QString::fromStdString(name);
    std::vector<std::string> errors;
    const std::string text = QJsonDocument(plan).toJson().toStdString();
    if (!planFromJsonText(text, {}, out, &errors, catalog)) {
        *error = name + ": " + errors.front();
        return false;
    }
    return true;
}

// A measured-memory row (memory-2026.json): its plan as a 2026-style row writes it, the bytes
// measured ("measured_gib", null for a verdict-only row), the stage ("measured_stage": a
// number, "last" or "max") and the published verdict ("fits" or "oom").
bool memoryRow(const QJsonObject& row, const HardwareCatalog& catalog,
               std::vector<MemoryCalibrationRow>* rows, std::string* error)
{
    MemoryCalibrationRow out;
    out.name = row.value("name").toString().toStdString();
    out.model = row.value("family").toString().toStdString();
    out.measures = row.value("measures").toString().toStdString();
    out.what = "peak per GPU";
    out.measured_GiB = row.value("measured_gib").toDouble();
    out.expected_verdict = row.value("verdict").toString().toStdString();
    const QJsonValue stage = row.value("measured_stage");
    out.stage = stage.isDouble() ? stage.toInt() : stage.toString() == "last" ? -2 : -1;
    if (stage.isDouble() && out.stage < 0) {
        *error = out.name + ": measured_stage must be a stage number (0 or more), \"last\" or "
                            "\"max\"";
        return false;
    }
    // "measured_memory": "reserved" or "allocated" (the default); older rows say it in words.
    const QString kind = row.value("measured_memory").toString();
    out.reserved = kind == "reserved" ||
                   (kind.isEmpty() && out.measures.find("reserved") != std::string::npos);
    if (!readRowPlan(row, out.name, catalog, &out.plan, error))
        return false;
    if (!(out.measured_GiB > 0) && out.expected_verdict.empty()) {
        *error = out.name + ": a memory row needs measured_gib or a verdict";
        return false;
    }
    rows->push_back(std::move(out));
    return true;
}

bool modernPlans(const QJsonObject& root, const HardwareCatalog& catalog,
                 std::vector<CalibrationRow>* rows, std::vector<MemoryCalibrationRow>* memory,
                 std::string* error)
{
    for (const QJsonValue& value : root.value("rows").toArray()) {
        const QJsonObject row = value.toObject();
        if (!row.contains("measured_step_time_s") &&
            (row.contains("measured_gib") || row.contains("verdict"))) {
            if (!memoryRow(row, catalog, memory, error))
                return false;
            continue;
        }
        CalibrationRow out;
        out.name = row.value("name").toString().toStdString();
        out.source = row.value("source").toString().toStdString();
        out.measured_s = row.value("measured_step_time_s").toDouble();
        out.measured_mfu = row.value("measured_mfu").toDouble();
        out.family = row.value("family").toString().toStdString();
        for (const QJsonValue& what : row.value("not_expressible").toArray())
            out.not_expressible.push_back(what.toString().toStdString());
        if (!readRowPlan(row, out.name, catalog, &out.plan, error))
            return false;
        out.model = out.name.substr(0, out.name.find('-'));
        if (!row.contains("plan")) {
            // 2026-style names lead with the source ("mb2604-", "tt-", "dgxc2505-"), then the
            // model and its size: "mb2604-llama3-70b-fp8cs-..." is llama3-70b.
            const size_t first = out.name.find('-');
            const size_t second = out.name.find('-', first + 1);
            const size_t third = out.name.find('-', second + 1);
            const bool sized = second != std::string::npos && second + 1 < out.name.size() &&
                               std::isdigit(static_cast<unsigned char>(out.name[second + 1]));
            out.model = out.name.substr(first + 1, (sized ? third : second) - first - 1);
        }
        out.gpus = out.plan.parallel.gpus();
        if (!(out.measured_s > 0)) {
            *error = out.name + ": measured_step_time_s must be positive";
            return false;
        }
        rows->push_back(std::move(out));
    }
    return true;
}

// Measured memory rows: the measured stage's bytes (the fullest where the source gives the
// maximum over GPUs) and the verdict.
bool scoreMeasuredMemory(CalibrationReport* report, EngineCache& engines, std::string* error)
{
    CalibrationReport& result = *report;
    auto engineFor = [&](const Plan& plan) { return engines.engineFor(plan.cluster); };
    double memorySum = 0;
    int memoryScored = 0;
    for (MemoryCalibrationRow& row : result.memory) {
        const StepCost cost = engineFor(row.plan)->evaluate(row.plan);
        if (!cost.ok) {
            *error = row.name + ": " + cost.issues.front().message;
            return false;
        }
        const int last = static_cast<int>(cost.stages.size()) - 1;
        const double bytes =
            row.stage == -1 ? cost.max_stage_total_bytes
                            : cost.stages[static_cast<size_t>(
                                              row.stage == -2 ? last : std::min(row.stage, last))]
                                  .total_bytes;
        // Peak reserved: the caching allocator's reserve on top (the fullest stage's ratio).
        const double reserve = row.reserved ? 1 + row.plan.figures.allocator_reserve.value : 1.0;
        row.predicted_GiB = units::toGiB(bytes * reserve);
        row.predicted_fits = cost.fits;
        if (!row.expected_verdict.empty()) {
            ++result.verdicts;
            if (row.predicted_fits == (row.expected_verdict == "fits"))
                ++result.verdicts_matched;
        }
        if (row.measured_GiB > 0) {
            row.error = (row.predicted_GiB - row.measured_GiB) / row.measured_GiB;
            memorySum += std::fabs(row.error);
            ++memoryScored;
            result.memory_max_abs_error =
                std::max(result.memory_max_abs_error, std::fabs(row.error));
        }
    }
    if (memoryScored > 0)
        result.memory_mean_abs_error = memorySum / memoryScored;
    return true;
}

} // namespace

std::vector<std::string> bundledCalibrationSets()
{
    return {":/paraplan/calibration/calibration-korthikanti2022.json",
            ":/paraplan/calibration/calibration-modern-torchtitan2024.json",
            ":/paraplan/calibration/calibration-modern-nemo2024.json",
            ":/paraplan/calibration/calibration-2026.json",
            ":/paraplan/calibration/calibration-moe-megatron-bridge-2604.json",
            ":/paraplan/calibration/memory-2026.json"};
}

bool runCalibration(const std::string& path, CalibrationReport* report, std::string* error,
                    const HardwareCatalog& catalog)
{
    std::string text;
    const std::string file = path.empty() ? bundledCalibrationSets().front() : path;
    if (!readText(file, &text, error))
        return false;
    QJsonObject root;
    if (!json::parseDocument(text, &root, error))
        return false;
    CalibrationReport result;
    const std::string base =
        QFileInfo(QString::fromStdString(file)).completeBaseName().toStdString();
    result.id = base.rfind("calibration-", 0) == 0 ? base.substr(12) : base;
    if (result.id.rfind("modern-", 0) == 0)
        result.id = result.id.substr(7);
    result.source = root.value("source").toString().toStdString();
    result.hardware = root.value("hardware").toString().toStdString();
    for (const QJsonValue& note : root.value("notes").toArray())
        result.notes.push_back(note.toString().toStdString());
    const QJsonObject reference = root.value("reference_error_of_calculon").toObject();
    result.reference_mean_pct = reference.value("iteration_time_avg_pct").toDouble();
    result.reference_max_pct = reference.value("iteration_time_max_pct").toDouble();

    const bool korthikanti = root.contains("iteration_time_s");
    if (korthikanti ? !korthikantiPlans(root, catalog, &result.rows, error)
                    : !modernPlans(root, catalog, &result.rows, &result.memory, error))
        return false;
    if (result.rows.empty() && result.memory.empty()) {
        *error = "the calibration file has no rows (iteration_time_s or rows)";
        return false;
    }

    // One engine per distinct cluster (member by member: rows on the same GPU and node count
    // may still differ in their network).
    EngineCache engines(result.rows.size(), catalog);
    auto engineFor = [&](const Plan& plan) { return engines.engineFor(plan.cluster); };
    std::vector<double> errors;
    double sum = 0;
    for (CalibrationRow& row : result.rows) {
        const StepCost cost = engineFor(row.plan)->evaluate(row.plan);
        if (!cost.ok) {
            *error = row.name + ": " + cost.issues.front().message;
            return false;
        }
        row.predicted_s = cost.step_time_s;
        row.mfu = cost.metrics.mfu;
        row.error = (row.predicted_s - row.measured_s) / row.measured_s;
        row.assumptions = describeAssumptions(row.plan, cost);
        sum += std::fabs(row.error);
        errors.push_back(std::fabs(row.error));
        result.max_abs_error = std::max(result.max_abs_error, std::fabs(row.error));
    }
    if (!errors.empty()) {
        result.mean_abs_error = sum / result.rows.size();
        std::sort(errors.begin(), errors.end());
        const size_t n = errors.size();
        result.median_abs_error = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
    }

    if (!scoreMeasuredMemory(&result, engines, error))
        return false;

    // Memory of the first stage, against the file's figures for each model's 2022 layout.
    for (const QJsonValue& value : root.value("memory_first_stage_GiB").toArray()) {
        const QJsonObject row = value.toObject();
        const std::string model = row.value("model").toString().toStdString();
        const CalibrationRow* timing = nullptr;
        for (const CalibrationRow& candidate : result.rows) {
            if (candidate.model == model)
                timing = &candidate;
        }
        if (!timing)
            continue;
        auto firstStage = [&](Recompute recompute, bool sp) {
            Plan plan = timing->plan;
            plan.parallel.recompute = recompute;
            plan.parallel.sequence_parallel = sp;
            const StepCost cost = engineFor(plan)->evaluate(plan);
            return cost.ok ? cost.stages.front() : StageCost{};
        };
        const StageCost none = firstStage(Recompute::None, false);
        const StageCost selective = firstStage(Recompute::Selective, true);
        auto add = [&](const char* what, double predictedBytes) {
            MemoryCalibrationRow out;
            out.model = model;
            out.what = what;
            out.measured_GiB = row.value(what).toDouble();
            out.predicted_GiB = units::toGiB(predictedBytes);
            out.error = (out.predicted_GiB - out.measured_GiB) / out.measured_GiB;
            result.memory_max_abs_error =
                std::max(result.memory_max_abs_error, std::fabs(out.error));
            result.memory.push_back(out);
        };
        add("params_and_optimizer", none.weights_bytes + none.grads_bytes + none.optimizer_bytes);
        add("activations_none", none.activations_bytes);
        add("activations_sp_selective", selective.activations_bytes);
    }
    *report = std::move(result);
    return true;
}

} // namespace paraplan
