#include "planio.h"

#include "clusterio.h"
#include "jsonutil.h"
#include "measurement.h"
#include "modelio.h"
#include "modeljson.h"
#include "topologygraph.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <filesystem>

namespace paraplan {
namespace {

// A list of flag names (Megatron-Core's --cuda-graph-scope, --recompute-modules) into `flags`
// (left as it is where the key is absent).
template <size_t N>
void readFlagList(json::Reader& reader, const QJsonObject& o, const std::string& field,
                  const char* key, const EnumName<unsigned> (&names)[N], const std::string& what,
                  const std::string& noun, unsigned* flags)
{
    const QJsonValue value = o.value(key);
    if (value.isUndefined())
        return;
    const QJsonArray array = value.toArray();
    const std::string choices = enumChoices(names);
    if (!value.isArray() || array.size() > 16) {
        reader.error(field, "must be a list of " + what + " (" + choices + ")");
        return;
    }
    *flags = 0;
    for (const QJsonValue& v : array) {
        unsigned bit = 0;
        if (!v.isString() || !enumFromName(names, v.toString().toStdString(), &bit)) {
            reader.error(field, "unknown " + noun + " " +
                                    (v.isString() ? "'" + v.toString().toStdString() + "'"
                                                  : std::string("(not a string)")) +
                                    " (" + choices + ")");
            return;
        }
        *flags |= bit;
    }
}

// Paths as bytes throughout (a folder or file name need not be UTF-8).
std::string resolve(const std::string& base, const std::string& path)
{
    if (std::filesystem::path(path).is_absolute() || base.empty())
        return path;
    return (std::filesystem::path(base) / path).string();
}

std::string folderOf(const std::string& path)
{
    // A plan piped in: its relative names are relative to where the command runs.
    if (path == "/dev/stdin" || path == "/proc/self/fd/0" || path == "/dev/fd/0")
        return std::filesystem::current_path().string();
    std::error_code code;
    const std::filesystem::path absolute = std::filesystem::absolute(path, code);
    return (code ? std::filesystem::path(path) : absolute).parent_path().string();
}

// A file a plan names is a regular file: a device, pipe or terminal (/dev/stdin,
// /proc/self/fd/0, a FIFO) would block the reader or read what was never the plan's. Empty
// when `path` may be read (a missing file is the reader's to report).
std::string notAPlanFile(const std::string& path)
{
    std::error_code code;
    const std::filesystem::file_status status = std::filesystem::status(path, code);
    if (code || status.type() == std::filesystem::file_type::regular ||
        status.type() == std::filesystem::file_type::not_found)
        return {};
    const char* what = status.type() == std::filesystem::file_type::directory ? "a directory"
                       : status.type() == std::filesystem::file_type::fifo    ? "a pipe"
                                                                              : "a device";
    return "'" + path + "' is " + what +
           ", not a file: a plan names files (a device, pipe or terminal such as /dev/stdin "
           "would be read instead of a saved file); give a file";
}

void readModel(const QJsonObject& object, const std::string& base, json::Reader& reader,
               ModelSpec* model, PlanFileRef* ref)
{
    ModelSpec spec;
    std::string preset;
    std::string hf;
    if (reader.string(object, "preset", "model", &preset)) {
        std::string error;
        if (!modelFromPreset(preset, &spec, &error)) {
            reader.error("model.preset", error);
            return;
        }
    } else if (reader.string(object, "hf_config", "model", &hf)) {
        std::string error = notAPlanFile(resolve(base, hf));
        if (!error.empty() || !loadHuggingFaceConfig(resolve(base, hf), &spec, &error)) {
            reader.error("model.hf_config", error);
            return;
        }
        *ref = PlanFileRef{hf, resolve(base, hf), base};
    } else if (object.isEmpty()) {
        reader.error("model", "missing: give {\"preset\": ID}, {\"hf_config\": FILE} or the "
                              "model's fields");
        return;
    }
    applyModelFields(object, "model", reader, &spec);
    if (spec.name.empty())
        spec.name = preset.empty() ? "custom model" : preset;
    if (preset.empty() && hf.empty() && spec.source.empty())
        spec.source = "user entry (plan file)";
    *model = spec;
}

void readCluster(const QJsonObject& object, const std::string& base, json::Reader& reader,
                 std::vector<std::string>* errors, ClusterSpec* cluster, PlanFileRef* ref,
                 const HardwareCatalog& catalog)
{
    if (object.isEmpty()) {
        reader.error("cluster", "missing: give {\"preset\": ID, \"nodes\": N}, {\"file\": FILE} "
                                "or the cluster's fields");
        return;
    }
    if (object.contains("file")) {
        reader.checkKeys(object, "cluster",
                         {"file", "nodes", "nodes_per_rack", "spine_oversubscription"});
        std::string file;
        reader.string(object, "file", "cluster", &file, true);
        ClusterOptions options;
        int nodes = 0;
        int perRack = 0;
        double ratio = 0;
        if (reader.integer(object, "nodes", "cluster", &nodes))
            options.nodes = nodes;
        if (reader.integer(object, "nodes_per_rack", "cluster", &perRack))
            options.nodes_per_rack = perRack;
        if (reader.number(object, "spine_oversubscription", "cluster", &ratio))
            options.spine_oversubscription = ratio;
        std::string error = file.empty() ? std::string() : notAPlanFile(resolve(base, file));
        if (!error.empty() ||
            (!file.empty() && !loadCluster(resolve(base, file), options, cluster, &error, catalog)))
            reader.error("cluster.file", error);
        *ref = PlanFileRef{file, resolve(base, file), base, nodes, perRack, ratio};
        return;
    }
    std::vector<std::string> clusterErrors;
    const std::string text = QJsonDocument(object).toJson().toStdString();
    if (!clusterFromJsonText(text, "plan file", {}, cluster, &clusterErrors, catalog)) {
        for (const std::string& error : clusterErrors)
            errors->push_back("cluster." + error);
    }
}

void readParallel(const QJsonObject& o, json::Reader& reader, ParallelLayout* p)
{
    const std::string path = "parallel";
    reader.checkKeys(o, path,
                     {"tp",
                      "pp",
                      "dp",
                      "cp",
                      "ep",
                      "expert_tp",
                      "ep_overlap",
                      "zero",
                      "sequence_parallel",
                      "recompute",
                      "recompute_modules",
                      "interleave",
                      "micro_batch",
                      "global_batch",
                      "dp_overlap",
                      "rank_order",
                      "tp_overlap",
                      "zero3_prefetch",
                      "dp_shard",
                      "stage_layers",
                      "first_stage_layers",
                      "last_stage_layers"});
    reader.integer(o, "tp", path, &p->tp);
    reader.integer(o, "pp", path, &p->pp);
    reader.integer(o, "dp", path, &p->dp);
    reader.integer(o, "cp", path, &p->cp);
    reader.integer(o, "ep", path, &p->ep);
    reader.integer(o, "expert_tp", path, &p->expert_tp);
    reader.choice(o, "ep_overlap", path, "ep_overlap", kEpOverlapNames, &p->ep_overlap);
    reader.integer(o, "zero", path, &p->zero);
    reader.boolean(o, "sequence_parallel", path, &p->sequence_parallel);
    reader.integer(o, "interleave", path, &p->interleave);
    reader.integer(o, "micro_batch", path, &p->micro_batch, true);
    reader.integer(o, "global_batch", path, &p->global_batch, true);
    reader.boolean(o, "dp_overlap", path, &p->dp_overlap);
    reader.choice(o, "tp_overlap", path, "tp_overlap", kTpOverlapNames, &p->tp_overlap);
    reader.integer(o, "zero3_prefetch", path, &p->zero3_prefetch);
    reader.integer(o, "dp_shard", path, &p->dp_shard);
    reader.integer(o, "first_stage_layers", path, &p->first_stage_layers);
    reader.integer(o, "last_stage_layers", path, &p->last_stage_layers);
    const QJsonValue stages = o.value("stage_layers");
    if (!stages.isUndefined()) {
        const QJsonArray array = stages.toArray();
        if (!stages.isArray() || array.isEmpty() || array.size() > 100000) {
            reader.error("parallel.stage_layers", "must be a list of layer counts, one per stage");
        } else {
            p->stage_layers.clear();
            for (const QJsonValue& v : array) {
                const double n = v.toDouble(-1);
                if (!v.isDouble() || n != std::floor(n) || n < 1 || n > 1e6) {
                    reader.error("parallel.stage_layers",
                                 "every entry must be a whole number of layers, at least 1");
                    break;
                }
                p->stage_layers.push_back(static_cast<int>(n));
            }
        }
    }
    reader.choice(o, "recompute", path, "recompute", kRecomputeNames, &p->recompute);
    unsigned modules = p->recompute_modules;
    readFlagList(reader, o, "parallel.recompute_modules", "recompute_modules",
                 kRecomputeModuleNames, "Megatron-Core recompute modules", "module", &modules);
    p->recompute_modules = static_cast<unsigned char>(modules);
    std::string order;
    if (reader.string(o, "rank_order", path, &order)) {
        // "tp-cp-dp-pp": innermost first; every dimension once.
        std::array<ParallelDim, 4> dims{};
        int count = 0;
        bool seen[4] = {false, false, false, false};
        QString text = QString::fromStdString(order);
        bool ok = true;
        for (const QString& part : text.split('-')) {
            ParallelDim dim;
            if (part == "tp")
                dim = ParallelDim::TP;
            else if (part == "cp")
                dim = ParallelDim::CP;
            else if (part == "dp")
                dim = ParallelDim::DP;
            else if (part == "pp")
                dim = ParallelDim::PP;
            else {
                ok = false;
                break;
            }
            if (count >= 4 || seen[static_cast<int>(dim)]) {
                ok = false;
                break;
            }
            seen[static_cast<int>(dim)] = true;
            dims[static_cast<size_t>(count++)] = dim;
        }
        if (!ok || count != 4)
            reader.error("parallel.rank_order", "must name tp, cp, dp and pp once each, "
                                                "innermost first (e.g. \"tp-cp-dp-pp\")");
        else
            p->rank_order = dims;
    }
}

void readTraining(const QJsonObject& o, json::Reader& reader, int zero, TrainingSettings* t)
{
    const std::string path = "training";
    reader.checkKeys(o, path,
                     {"seq_len", "dtype", "optimizer", "train_tokens", "gpu_hour_usd",
                      "flash_attention", "attention", "kernels", "grad_reduce_dtype", "stack",
                      "framework", "cuda_graphs", "cuda_graph_scope", "fp8_recipe", "fp8_attention",
                      "fp8_param_gather", "moe_dispatcher", "moe_router_fusion",
                      "optimizer_dtype"});
    reader.integer(o, "seq_len", path, &t->seq_len);
    std::string dtype;
    if (reader.string(o, "dtype", path, &dtype) && !parseDtype(dtype, &t->dtype))
        reader.error("training.dtype",
                     "unknown dtype '" + dtype + "' (fp32, tf32, bf16, fp16, fp8)");
    reader.choice(o, "optimizer", path, "optimizer",
                  {{"adam", Optimizer::Adam}, {"adamw", Optimizer::Adam}, {"sgd", Optimizer::SGD}},
                  &t->optimizer);
    reader.number(o, "train_tokens", path, &t->train_tokens);
    reader.number(o, "gpu_hour_usd", path, &t->gpu_hour_usd);
    // "attention" names the kernel; the older "flash_attention" switch still reads (true:
    // FlashAttention-2, false: unfused) when "attention" is absent.
    bool flash = true;
    if (reader.boolean(o, "flash_attention", path, &flash))
        t->attention = flash ? AttentionKernel::Auto : AttentionKernel::Unfused;
    reader.choice(o, "attention", path, "attention kernel", kAttentionKernelNames, &t->attention);
    // "framework" names the training framework (default megatron). The older "stack" still
    // reads as the framework it resolved to: megatron; pytorch as torchtitan (the FSDP2 stack
    // its defaults described); auto as it resolved for this file (torchtitan at ZeRO-3, else
    // megatron), so that old files cost as before. Saving writes "framework".
    enum class OldStack
    {
        Auto,
        Megatron,
        PyTorch
    };
    OldStack stack = OldStack::Megatron;
    if (reader.choice(o, "stack", path, "stack",
                      {{"auto", OldStack::Auto},
                       {"megatron", OldStack::Megatron},
                       {"pytorch", OldStack::PyTorch}},
                      &stack))
        t->framework = stack == OldStack::PyTorch || (stack == OldStack::Auto && zero >= 3)
                           ? TrainingFramework::Torchtitan
                           : TrainingFramework::Megatron;
    reader.choice(o, "framework", path, "framework", kTrainingFrameworkNames, &t->framework);
    reader.choice(o, "kernels", path, "kernels", kKernelStyleNames, &t->kernels);
    reader.choice(o, "cuda_graphs", path, "cuda_graphs", kCudaGraphsNames, &t->cuda_graphs);
    int reduce = 0;
    reader.choice(o, "grad_reduce_dtype", path, "grad_reduce_dtype",
                  {{"auto", 0}, {"fp32", 4}, {"bf16", 2}, {"fp16", 2}}, &reduce);
    t->grad_reduce_bytes = reduce;
    int moments = 0;
    reader.choice(o, "optimizer_dtype", path, "optimizer_dtype",
                  {{"auto", 0}, {"fp32", 4}, {"bf16", 2}, {"fp16", 2}}, &moments);
    t->optimizer_state_bytes = moments;
    reader.choice(o, "fp8_recipe", path, "fp8_recipe", kFp8RecipeNames, &t->fp8_recipe);
    reader.boolean(o, "fp8_attention", path, &t->fp8_attention);
    reader.boolean(o, "fp8_param_gather", path, &t->fp8_param_gather);
    reader.choice(o, "moe_dispatcher", path, "moe_dispatcher", kMoeDispatcherNames,
                  &t->moe_dispatcher);
    reader.boolean(o, "moe_router_fusion", path, &t->moe_router_fusion);
    // Megatron-Core's --cuda-graph-scope: a list of its scope names.
    readFlagList(reader, o, "training.cuda_graph_scope", "cuda_graph_scope", kCudaGraphScopeNames,
                 "Megatron-Core capture scopes", "scope", &t->cuda_graph_scope);
}

void readOverrides(const QJsonObject& o, json::Reader& reader, EngineFigures* f)
{
    const std::string path = "overrides";
    reader.checkKeys(o, path,
                     {"gemm_peak_fraction", "hbm_fraction", "attention_fraction",
                      "attention_bwd_fraction", "comm_sm_share", "gpu_spread", "grad_bytes",
                      "optimizer_step_bytes", "dp_bucket_bytes", "overlap_fraction",
                      "host_launch_s", "kernel_gap_s", "graph_kernel_gap_s",
                      "fp8_gemm_peak_fraction", "fp8_backward_gemm_peak_fraction", "moe_imbalance",
                      "allocator_reserve", "runtime_reserve_bytes"});
    struct Field
    {
        const char* key;
        Sourced* target;
    };
    for (const Field& field :
         {Field{"gemm_peak_fraction", &f->gemm_peak_fraction},
          Field{"hbm_fraction", &f->hbm_fraction},
          Field{"attention_fraction", &f->attention_fraction},
          Field{"attention_bwd_fraction", &f->attention_bwd_fraction},
          Field{"comm_sm_share", &f->comm_sm_share}, Field{"gpu_spread", &f->gpu_spread},
          Field{"grad_bytes", &f->grad_bytes},
          Field{"optimizer_step_bytes", &f->optimizer_step_bytes},
          Field{"dp_bucket_bytes", &f->dp_bucket_bytes},
          Field{"overlap_fraction", &f->overlap_fraction},
          Field{"host_launch_s", &f->host_launch_s}, Field{"kernel_gap_s", &f->kernel_gap_s},
          Field{"graph_kernel_gap_s", &f->graph_kernel_gap_s},
          Field{"fp8_gemm_peak_fraction", &f->fp8_gemm_peak_fraction},
          Field{"fp8_backward_gemm_peak_fraction", &f->fp8_backward_gemm_peak_fraction},
          Field{"moe_imbalance", &f->moe_imbalance},
          Field{"allocator_reserve", &f->allocator_reserve},
          Field{"runtime_reserve_bytes", &f->runtime_reserve_bytes}}) {
        double value = 0;
        if (reader.number(o, field.key, path, &value))
            *field.target = userEntry(value, std::string("plan overrides.") + field.key);
    }
}

QJsonObject sectionOf(const QJsonObject& root, const char* key, json::Reader& reader)
{
    const QJsonValue value = root.value(QLatin1String(key));
    if (value.isUndefined())
        return {};
    if (!value.isObject()) {
        reader.error(key, "must be an object");
        return {};
    }
    return value.toObject();
}

} // namespace

bool planFromJsonText(const std::string& text, const std::string& base_dir, Plan* plan,
                      std::vector<std::string>* errors, const HardwareCatalog& catalog)
{
    QJsonObject root;
    std::string error;
    if (!json::parseDocument(text, &root, &error)) {
        errors->push_back(error);
        return false;
    }
    json::Reader reader(errors);
    reader.checkKeys(root, "",
                     {"schema", "name", "model", "cluster", "parallel", "training", "overrides",
                      "measured", "drawing"});
    // A plan of a later format (or another kind of file) is refused, not half-read.
    std::string schema;
    if (reader.string(root, "schema", "", &schema) && schema != "paraplan-plan/1")
        reader.error("schema", "'" + schema +
                                   "' is not a plan format this version reads (paraplan-plan/1)" +
                                   (schema.rfind("paraplan-cluster/", 0) == 0
                                        ? "; this is a cluster file: use it as the plan's "
                                          "\"cluster\": {\"file\": ...}"
                                        : ""));
    Plan result;
    reader.string(root, "name", "", &result.name);
    readModel(sectionOf(root, "model", reader), base_dir, reader, &result.model, &result.hf_config);
    readCluster(sectionOf(root, "cluster", reader), base_dir, reader, errors, &result.cluster,
                &result.cluster_file, catalog);
    if (!root.contains("parallel"))
        reader.error("parallel", "missing: the parallel layout (tp, pp, dp, micro_batch, "
                                 "global_batch, ...)");
    readParallel(sectionOf(root, "parallel", reader), reader, &result.parallel);
    readTraining(sectionOf(root, "training", reader), reader, result.parallel.zero,
                 &result.training);
    if (!errors->empty())
        return false;
    const GpuSpec* gpu = catalog.gpu(result.cluster.gpu_id);
    if (!gpu) {
        errors->push_back("cluster: unknown GPU '" + result.cluster.gpu_id + "'");
        return false;
    }
    result.figures = defaultEngineFigures(*gpu, result.training.optimizer, result.training.dtype,
                                          result.training.attention);
    readOverrides(sectionOf(root, "overrides", reader), reader, &result.figures);
    // Measured figures: applied over the cluster's assumed ones, which they remember.
    const QJsonValue measured = root.value("measured");
    if (!measured.isUndefined() && !measured.isArray())
        reader.error("measured", "must be an array");
    for (int i = 0; i < measured.toArray().size(); ++i) {
        const QJsonObject entry = measured.toArray().at(i).toObject();
        const std::string path = "measured[" + std::to_string(i) + "]";
        reader.checkKeys(entry, path, {"figure", "value", "assumed", "run", "why"});
        MeasuredFigure figure;
        reader.string(entry, "figure", path, &figure.figure, true);
        reader.number(entry, "value", path, &figure.value, true);
        reader.number(entry, "assumed", path, &figure.assumed, true);
        reader.string(entry, "run", path, &figure.run);
        reader.string(entry, "why", path, &figure.why);
        if (errors->empty() && !applyMeasurementToPlan(figure, &result))
            reader.error(path, "unknown figure '" + figure.figure +
                                   "' or a value that is not "
                                   "positive");
    }
    // What the named files gave (measurements applied): saved as references while unchanged.
    if (!result.hf_config.written.empty())
        result.model_read = std::make_shared<const ModelSpec>(result.model);
    if (!result.cluster_file.written.empty())
        result.cluster_read = std::make_shared<const ClusterSpec>(result.cluster);
    // How the topology editor drew the cluster; a drawing of another cluster is an error.
    const QJsonValue drawing = root.value("drawing");
    if (errors->empty() && !drawing.isUndefined()) {
        TopologyGraph graph;
        std::string error;
        if (!drawing.isObject())
            reader.error("drawing", "must be an object (racks and nodes)");
        else if (!drawingFromJson(drawing.toObject(), result.cluster, &graph, &error, catalog))
            reader.error("drawing", error);
        else
            result.drawing = std::make_shared<const TopologyGraph>(std::move(graph));
    }
    if (!errors->empty())
        return false;
    *plan = std::move(result);
    return true;
}

bool loadPlan(const std::string& path, Plan* plan, std::vector<std::string>* errors,
              const HardwareCatalog& catalog)
{
    std::string text;
    std::string error;
    if (!json::readFile(path, &text, &error)) {
        errors->push_back(error);
        return false;
    }
    const std::string base = folderOf(path);
    return planFromJsonText(text, base, plan, errors, catalog);
}

std::vector<std::string> planReferencedFiles(const std::string& path)
{
    std::vector<std::string> files;
    std::string text;
    std::string error;
    // Logs and scripts are inputs too: only a JSON object can be a plan.
    if (!json::readFile(path, &text, &error) ||
        text.find_first_not_of(" \t\r\n") == std::string::npos ||
        text[text.find_first_not_of(" \t\r\n")] != '{')
        return files;
    const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
    const std::string base = folderOf(path);
    const QJsonValue cluster = root.value("cluster").toObject().value("file");
    const QJsonValue hf = root.value("model").toObject().value("hf_config");
    for (const QJsonValue& v : {cluster, hf})
        if (v.isString() && !v.toString().isEmpty())
            files.push_back(resolve(base, v.toString().toStdString()));
    return files;
}

QJsonObject parallelLayoutToJson(const ParallelLayout& p)
{
    static const char* kDims[4] = {"tp", "cp", "dp", "pp"};
    QString order;
    for (ParallelDim dim : p.rank_order)
        order += (order.isEmpty() ? "" : "-") + QString(kDims[static_cast<int>(dim)]);
    QJsonObject json{{"tp", p.tp},
                     {"pp", p.pp},
                     {"dp", p.dp},
                     {"cp", p.cp},
                     {"ep", p.ep},
                     {"zero", p.zero},
                     {"sequence_parallel", p.sequence_parallel},
                     {"recompute", recomputeName(p.recompute)},
                     {"interleave", p.interleave},
                     {"micro_batch", p.micro_batch},
                     {"global_batch", p.global_batch},
                     {"dp_overlap", p.dp_overlap},
                     {"rank_order", order}};
    if (p.recompute_modules != 0) {
        QJsonArray modules;
        for (const std::string& name : flagNames(kRecomputeModuleNames, p.recompute_modules))
            modules.append(QString::fromStdString(name));
        json["recompute_modules"] = modules;
    }
    if (p.expert_tp > 0)
        json["expert_tp"] = p.expert_tp;
    if (p.ep_overlap != EpOverlap::None)
        json["ep_overlap"] = epOverlapName(p.ep_overlap);
    if (p.tp_overlap != TpOverlap::Auto)
        json["tp_overlap"] = tpOverlapName(p.tp_overlap);
    if (p.zero3_prefetch != 1)
        json["zero3_prefetch"] = p.zero3_prefetch;
    if (p.dp_shard > 0)
        json["dp_shard"] = p.dp_shard;
    if (!p.stage_layers.empty()) {
        QJsonArray stages;
        for (int n : p.stage_layers)
            stages.append(n);
        json["stage_layers"] = stages;
    }
    if (p.first_stage_layers > 0)
        json["first_stage_layers"] = p.first_stage_layers;
    if (p.last_stage_layers > 0)
        json["last_stage_layers"] = p.last_stage_layers;
    return json;
}

namespace {

// How a plan saved in `saveDir` names the file: as it was written when saved beside the plan
// it was read from (or with no folder known), else relative to the new folder.
QString referenceSpelling(const PlanFileRef& ref, const std::string& saveDir)
{
    const std::filesystem::path written(ref.written);
    if (written.is_absolute() || saveDir.empty() || saveDir == ref.base_dir)
        return QString::fromStdString(ref.written);
    std::error_code code;
    const std::filesystem::path absolute = std::filesystem::absolute(ref.path, code);
    const std::filesystem::path relative =
        code ? std::filesystem::path() : std::filesystem::relative(absolute, saveDir, code);
    return QString::fromStdString(code || relative.empty() ? absolute.string() : relative.string());
}

QJsonObject modelSection(const Plan& plan, const std::string& saveDir)
{
    const QJsonObject fields = modelToJson(plan.model);
    if (!plan.hf_config.written.empty() && plan.model_read &&
        modelToJson(*plan.model_read) == fields)
        return {{"hf_config", referenceSpelling(plan.hf_config, saveDir)}};
    QJsonObject model = fields; // edited since it was read: embedded
    if (!plan.model.preset.empty())
        model["preset"] = QString::fromStdString(plan.model.preset);
    return model;
}

QJsonObject clusterSection(const Plan& plan, const std::string& saveDir)
{
    const PlanFileRef& ref = plan.cluster_file;
    if (!ref.written.empty() && plan.cluster_read && *plan.cluster_read == plan.cluster) {
        QJsonObject cluster{{"file", referenceSpelling(ref, saveDir)}};
        if (ref.nodes > 0)
            cluster["nodes"] = ref.nodes;
        if (ref.nodes_per_rack > 0)
            cluster["nodes_per_rack"] = ref.nodes_per_rack;
        if (ref.spine_oversubscription > 0)
            cluster["spine_oversubscription"] = ref.spine_oversubscription;
        return cluster;
    }
    return QJsonDocument::fromJson(QByteArray::fromStdString(clusterToJsonText(plan.cluster)))
        .object();
}

} // namespace

std::string planToJsonText(const Plan& plan, const HardwareCatalog& catalog)
{
    return planToJsonText(plan, catalog, {});
}

std::string planToJsonText(const Plan& plan, const HardwareCatalog& catalog,
                           const std::string& saveDir)
{
    QJsonObject root;
    root["schema"] = "paraplan-plan/1";
    if (!plan.name.empty())
        root["name"] = QString::fromStdString(plan.name);
    root["model"] = modelSection(plan, saveDir);
    root["cluster"] = clusterSection(plan, saveDir);
    root["parallel"] = parallelLayoutToJson(plan.parallel);
    const TrainingSettings& t = plan.training;
    QJsonObject training{{"seq_len", t.seq_len},
                         {"dtype", dtypeName(t.dtype)},
                         {"optimizer", t.optimizer == Optimizer::Adam ? "adam" : "sgd"},
                         {"attention", attentionKernelName(t.attention)}};
    training["framework"] = trainingFrameworkName(t.framework);
    if (t.kernels != KernelStyle::Auto)
        training["kernels"] = kernelStyleName(t.kernels);
    if (t.cuda_graphs != CudaGraphs::None)
        training["cuda_graphs"] = cudaGraphsName(t.cuda_graphs);
    if (t.grad_reduce_bytes > 0)
        training["grad_reduce_dtype"] = t.grad_reduce_bytes == 4 ? "fp32" : "bf16";
    if (t.optimizer_state_bytes > 0)
        training["optimizer_dtype"] = t.optimizer_state_bytes == 4 ? "fp32" : "bf16";
    if (t.train_tokens > 0)
        training["train_tokens"] = t.train_tokens;
    if (t.gpu_hour_usd > 0)
        training["gpu_hour_usd"] = t.gpu_hour_usd;
    if (t.fp8_recipe != Fp8Recipe::Auto)
        training["fp8_recipe"] = fp8RecipeName(t.fp8_recipe);
    if (t.fp8_attention)
        training["fp8_attention"] = true;
    if (t.fp8_param_gather)
        training["fp8_param_gather"] = true;
    if (t.moe_dispatcher != MoeDispatcher::Auto)
        training["moe_dispatcher"] = moeDispatcherName(t.moe_dispatcher);
    if (t.moe_router_fusion)
        training["moe_router_fusion"] = true;
    if (t.cuda_graph_scope != 0) {
        QJsonArray scope;
        for (const std::string& name : cudaGraphScopeNames(t.cuda_graph_scope))
            scope.append(QString::fromStdString(name));
        training["cuda_graph_scope"] = scope;
    }
    root["training"] = training;
    QJsonObject overrides;
    const EngineFigures& f = plan.figures;
    struct Field
    {
        const char* key;
        const Sourced* figure;
    };
    for (const Field& field :
         {Field{"gemm_peak_fraction", &f.gemm_peak_fraction},
          Field{"hbm_fraction", &f.hbm_fraction},
          Field{"attention_fraction", &f.attention_fraction},
          Field{"attention_bwd_fraction", &f.attention_bwd_fraction},
          Field{"comm_sm_share", &f.comm_sm_share}, Field{"gpu_spread", &f.gpu_spread},
          Field{"grad_bytes", &f.grad_bytes},
          Field{"optimizer_step_bytes", &f.optimizer_step_bytes},
          Field{"dp_bucket_bytes", &f.dp_bucket_bytes},
          Field{"overlap_fraction", &f.overlap_fraction}, Field{"host_launch_s", &f.host_launch_s},
          Field{"kernel_gap_s", &f.kernel_gap_s},
          Field{"graph_kernel_gap_s", &f.graph_kernel_gap_s},
          Field{"fp8_gemm_peak_fraction", &f.fp8_gemm_peak_fraction},
          Field{"fp8_backward_gemm_peak_fraction", &f.fp8_backward_gemm_peak_fraction},
          Field{"moe_imbalance", &f.moe_imbalance},
          Field{"allocator_reserve", &f.allocator_reserve},
          Field{"runtime_reserve_bytes", &f.runtime_reserve_bytes}}) {
        if (field.figure->origin == Origin::UserEntry)
            overrides[field.key] = field.figure->value;
    }
    if (!overrides.isEmpty())
        root["overrides"] = overrides;
    if (plan.drawing && drawingDescribes(*plan.drawing, plan.cluster, catalog))
        root["drawing"] = drawingToJson(*plan.drawing);
    if (!plan.measured.empty()) {
        QJsonArray measured;
        for (const PlanMeasurement& m : plan.measured)
            measured.append(QJsonObject{{"figure", QString::fromStdString(m.figure)},
                                        {"value", m.value},
                                        {"assumed", m.assumed},
                                        {"run", QString::fromStdString(m.run)},
                                        {"why", QString::fromStdString(m.why)}});
        root["measured"] = measured;
    }
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

bool savePlan(const std::string& path, const Plan& plan, std::string* error,
              const HardwareCatalog& catalog)
{
    return json::writeFileAtomically(path, planToJsonText(plan, catalog, folderOf(path)), error);
}

} // namespace paraplan
