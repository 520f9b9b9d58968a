#include "calibration.h"

#include "clusterio.h"
#include "jsonutil.h"
#include "modelio.h"
#include "units.h"

#include <QFile>
#include <QJsonArray>

#include <cmath>
#include <map>
#include <memory>

namespace paraplan {

bool runCalibration(const std::string& path, CalibrationReport* report, std::string* error)
{
    std::string text;
    if (path.empty()) {
        QFile file(QStringLiteral(":/paraplan/calibration/calibration-korthikanti2022.json"));
        if (!file.open(QIODevice::ReadOnly)) {
            *error = "bundled calibration file missing";
            return false;
        }
        text = file.readAll().toStdString();
    } else if (!json::readFile(path, &text, error)) {
        return false;
    }
    QJsonObject root;
    if (!json::parseDocument(text, &root, error))
        return false;
    CalibrationReport result;
    result.source = root.value("source").toString().toStdString();
    result.hardware = root.value("hardware").toString().toStdString();
    const QJsonObject common = root.value("common").toObject();
    const QJsonObject models = root.value("models").toObject();
    const QJsonObject reference = root.value("reference_error_of_calculon").toObject();
    result.reference_mean_pct = reference.value("iteration_time_avg_pct").toDouble();
    result.reference_max_pct = reference.value("iteration_time_max_pct").toDouble();

    auto modelFor = [&](const std::string& id, ModelSpec* model) {
        // The file's architecture wins over the preset where both exist.
        if (!modelFromPreset(id, model, error))
            return false;
        const QJsonObject fields = models.value(QString::fromStdString(id)).toObject();
        model->layers = fields.value("layers").toInt(model->layers);
        model->hidden = fields.value("hidden").toInt(model->hidden);
        model->heads = fields.value("heads").toInt(model->heads);
        model->kv_heads = model->heads;
        model->ffn_hidden = fields.value("ffn_hidden").toInt(model->ffn_hidden);
        model->vocab = common.value("vocab").toInt(model->vocab);
        return true;
    };

    std::map<int, std::unique_ptr<StepEngine>> engines;
    auto planFor = [&](const QJsonObject& row, Plan* plan) {
        const int gpus = row.value("gpus").toInt();
        ClusterOptions options;
        options.nodes = std::max(1, gpus / 8);
        if (!clusterFromPreset("dgx-a100", options, &plan->cluster, error))
            return false;
        if (!modelFor(row.value("model").toString().toStdString(), &plan->model))
            return false;
        ParallelLayout& p = plan->parallel;
        p.tp = common.value("tp").toInt(8);
        p.dp = common.value("dp").toInt(1);
        p.pp = row.value("pp").toInt(1);
        p.interleave = row.value("interleave").toInt(1);
        p.global_batch = row.value("global_batch").toInt();
        p.micro_batch = row.value("micro_batch").toInt();
        const QString recompute = row.value("recompute").toString();
        p.recompute = recompute == "full"        ? Recompute::Full
                      : recompute == "selective" ? Recompute::Selective
                                                 : Recompute::None;
        p.sequence_parallel = row.value("sequence_parallel").toBool();
        TrainingSettings& t = plan->training;
        t.seq_len = common.value("seq_len").toInt(2048);
        parseDtype(common.value("dtype").toString("fp16").toStdString(), &t.dtype);
        t.optimizer = Optimizer::Adam;
        t.flash_attention = false; // the 2022 runs predate FlashAttention in Megatron
        plan->name = row.value("model").toString().toStdString() + ", " + recompute.toStdString();
        plan->figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan->cluster.gpu_id),
                                             t.optimizer, t.dtype);
        return true;
    };

    double sum = 0;
    for (const QJsonValue& value : root.value("iteration_time_s").toArray()) {
        const QJsonObject row = value.toObject();
        CalibrationRow out;
        if (!planFor(row, &out.plan))
            return false;
        out.model = row.value("model").toString().toStdString();
        out.gpus = row.value("gpus").toInt();
        out.measured_s = row.value("measured_s").toDouble();
        std::unique_ptr<StepEngine>& engine = engines[out.gpus];
        if (!engine)
            engine = std::make_unique<StepEngine>(out.plan.cluster);
        const StepCost cost = engine->evaluate(out.plan);
        if (!cost.ok) {
            *error = out.plan.name + ": " + cost.issues.front().message;
            return false;
        }
        out.predicted_s = cost.step_time_s;
        out.mfu = cost.metrics.mfu;
        out.error = (out.predicted_s - out.measured_s) / out.measured_s;
        sum += std::fabs(out.error);
        result.max_abs_error = std::max(result.max_abs_error, std::fabs(out.error));
        result.rows.push_back(std::move(out));
    }
    if (result.rows.empty()) {
        *error = "the calibration file has no iteration_time_s rows";
        return false;
    }
    result.mean_abs_error = sum / result.rows.size();

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
            const StepCost cost = engines[timing->gpus]->evaluate(plan);
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
