// torchtitan train_config TOML read back into a plan. Key names, types and defaults:
// torchtitan v0.2.2, torchtitan/config/job_config.py.

#include "launchtitan.h"
#include "launchtitandetail.h"
#include "modelio.h"
#include "tomlsubset.h"

#include <algorithm>
#include <map>

namespace paraplan {

const std::vector<TorchtitanKey>& torchtitanKeys()
{
    static const std::vector<TorchtitanKey> keys = {
        {"job.config_file", "str", false},
        {"job.dump_folder", "str", false},
        {"job.description", "str", true},
        {"job.print_config", "bool", false},
        {"job.save_config_file", "str", false},
        {"job.custom_config_module", "str", false},
        {"model.name", "str", true},
        {"model.flavor", "str", true},
        {"model.hf_assets_path", "str", false},
        {"model.tokenizer_path", "str", false},
        {"model.converters", "list[str]", true},
        {"model.print_after_conversion", "bool", false},
        {"optimizer.name", "str", true},
        {"optimizer.lr", "float", false},
        {"optimizer.beta1", "float", false},
        {"optimizer.beta2", "float", false},
        {"optimizer.eps", "float", false},
        {"optimizer.weight_decay", "float", false},
        {"optimizer.implementation", "str", false},
        {"optimizer.early_step_in_backward", "bool", false},
        {"lr_scheduler.warmup_steps", "int", false},
        {"lr_scheduler.total_steps", "int", false},
        {"lr_scheduler.decay_ratio", "float", false},
        {"lr_scheduler.decay_type", "str", false},
        {"lr_scheduler.min_lr_factor", "float", false},
        {"training.dataset", "str", false},
        {"training.dataset_path", "str", false},
        {"training.local_batch_size", "int", true},
        {"training.global_batch_size", "int", true},
        {"training.seq_len", "int", true},
        {"training.max_norm", "float", false},
        {"training.steps", "int", true},
        {"training.enable_cpu_offload", "bool", false},
        {"training.dtype", "str", false},
        {"training.mixed_precision_param", "str", true},
        {"training.mixed_precision_reduce", "str", true},
        {"training.gc_freq", "int", false},
        {"training.gc_debug", "bool", false},
        {"parallelism.data_parallel_replicate_degree", "int", true},
        {"parallelism.data_parallel_shard_degree", "int", true},
        {"parallelism.fsdp_reshard_after_forward", "str", true},
        {"parallelism.tensor_parallel_degree", "int", true},
        {"parallelism.disable_loss_parallel", "bool", false},
        {"parallelism.enable_async_tensor_parallel", "bool", true},
        {"parallelism.pipeline_parallel_degree", "int", true},
        {"parallelism.module_fqns_per_model_part", "list[list[str]]", true},
        {"parallelism.pipeline_parallel_first_stage_less_layers", "int", false},
        {"parallelism.pipeline_parallel_last_stage_less_layers", "int", false},
        {"parallelism.pipeline_parallel_layers_per_stage", "int", true},
        {"parallelism.pipeline_parallel_schedule", "str", true},
        {"parallelism.pipeline_parallel_schedule_csv", "str", false},
        {"parallelism.pipeline_parallel_microbatch_size", "int", true},
        {"parallelism.pipeline_parallel_expert_parallel_overlap", "bool", false},
        {"parallelism.context_parallel_degree", "int", true},
        {"parallelism.context_parallel_load_balancer", "str", false},
        {"parallelism.context_parallel_rotate_method", "str", false},
        {"parallelism.expert_parallel_degree", "int", true},
        {"parallelism.expert_tensor_parallel_degree", "int", true},
        {"parallelism.expert_parallel_comm_backend", "str", true},
        {"activation_checkpoint.mode", "str", true},
        {"activation_checkpoint.selective_ac_option", "str", true},
        {"activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns", "list[str]", false},
        {"activation_checkpoint.early_stop", "bool", false},
        {"activation_checkpoint.memory_budget", "float", false},
        {"activation_checkpoint.visualize_memory_budget_pareto", "bool", false},
        {"activation_checkpoint.preserve_rng_state", "bool", false},
        {"activation_checkpoint.determinism_check", "str", false},
        {"activation_checkpoint.debug", "bool", false},
        {"compile.enable", "bool", true},
        {"compile.components", "list[str]", false},
        {"compile.backend", "str", false},
        {"quantize.linear.float8.enable_fsdp_float8_all_gather", "bool", false},
        {"quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp", "bool", false},
        {"quantize.linear.float8.recipe_name", "str", false},
        {"quantize.linear.float8.filter_fqns", "list[str]", false},
        {"quantize.linear.float8.emulate", "bool", false},
    };
    return keys;
}

namespace {

/// Whole sections Paraplan does not model: their keys are torchtitan's, ignored with one
/// warning per section.
bool ignoredSection(const std::string& key)
{
    static const char* const sections[] = {"profiling.",           "metrics.",
                                           "checkpoint.",          "comm.",
                                           "validation.",          "fault_tolerance.",
                                           "experimental.",        "memory_estimation.",
                                           "training.dataloader.", "quantize.linear.mx.",
                                           "quantize.grouped_mm."};
    for (const char* s : sections)
        if (key.rfind(s, 0) == 0)
            return true;
    return false;
}

class TitanReader
{
public:
    TitanReader(const TomlDocument& doc, const Plan& base, LaunchImport* out)
        : doc(doc), base(base), out(out)
    {
    }
    void checkKeys();
    const TomlValue* get(const char* key) const
    {
        const TomlEntry* e = doc.find(key);
        return e ? &e->value : nullptr;
    }
    long long integer(const char* key, long long fallback) const
    {
        const TomlValue* v = get(key);
        return v ? v->integer : fallback;
    }
    std::string text(const char* key, const std::string& fallback) const
    {
        const TomlValue* v = get(key);
        return v ? v->text : fallback;
    }
    bool flag(const char* key, bool fallback) const
    {
        const TomlValue* v = get(key);
        return v ? v->boolean : fallback;
    }
    int positive(const char* key, long long fallback)
    {
        const long long v = integer(key, fallback);
        if (v < 1 || v > 1000000000) {
            error(key, "must be a positive integer, not " + std::to_string(v));
            return 1;
        }
        return static_cast<int>(v);
    }
    void error(const char* key, const std::string& message)
    {
        const TomlEntry* e = doc.find(key);
        out->errors.push_back((e ? "line " + std::to_string(e->line) + ": " : std::string()) + key +
                              " " + message);
    }
    void warn(const std::string& message) { out->warnings.push_back(message); }

    void readModel();
    void readDegrees();
    void readPipeline();
    void readTraining();
    void checkRefusals();

private:
    const TomlDocument& doc;
    const Plan& base;
    LaunchImport* out;
};

void TitanReader::checkKeys()
{
    std::map<std::string, const TorchtitanKey*> known;
    for (const TorchtitanKey& k : torchtitanKeys())
        known[k.key] = &k;
    std::map<std::string, int> ignoredSections;
    for (const TomlEntry& e : doc.entries) {
        const auto it = known.find(e.key);
        const std::string at = "line " + std::to_string(e.line) + ": ";
        if (it == known.end()) {
            if (ignoredSection(e.key)) {
                const std::string section = e.key.substr(0, e.key.rfind('.'));
                if (ignoredSections[section]++ == 0)
                    warn(at + "[" + section + "] is not part of a plan; its settings are ignored");
            } else {
                warn(at + e.key + " is not an option of " + kTorchtitanRelease + "; ignored");
            }
            continue;
        }
        if (!tomlValueHasType(e.value, it->second->type)) {
            out->errors.push_back(at + e.key + " must be " + it->second->type + ", not " +
                                  tomlTypeName(e.value));
            continue;
        }
        if (!it->second->read)
            warn(at + e.key + " is a torchtitan setting Paraplan does not model; ignored");
    }
}

void TitanReader::readModel()
{
    // A file that names no model (a layout alone) keeps the base plan's.
    if (!get("model.name") && !get("model.flavor"))
        return;
    const std::string name = text("model.name", "llama3");
    const std::string flavor = text("model.flavor", "debugmodel");
    Plan& plan = out->plan;
    const char* preset = nullptr;
    for (const titan::Flavor& f : titan::llama3Flavors())
        if (name == "llama3" && flavor == f.flavor)
            preset = f.preset;
    for (const titan::MoeFlavor& f : titan::moeFlavors())
        if (name == f.name && flavor == f.flavor)
            preset = f.preset;
    if (!preset) {
        // Refused, not the base plan's model under this file's layout: the plan would cost a
        // model the file does not train.
        out->errors.push_back(
            "model " + name + " flavor " + flavor +
            " has no Paraplan preset (llama3 8B, 70B and 405B, deepseek_v3 671B, qwen3 30B-A3B "
            "and 235B-A22B, gpt_oss 120b, llama4 17bx16e and 17bx128e do): give one of those, "
            "or import the model's Hugging Face config.json into the base plan and the layout "
            "from a llama3 file");
        return;
    }
    ModelSpec model;
    std::string error;
    if (!modelFromPreset(preset, &model, &error)) {
        out->errors.push_back("model.flavor " + flavor + ": " + error);
        return;
    }
    // torchtitan's models have no multi-token-prediction module (deepseek_v3 at v0.2.2).
    model.mtp_layers = 0;
    if (model.name != base.model.name)
        warn("model " + name + " flavor " + flavor + ": the model becomes " + model.name +
             " (it was " + base.model.name + " in the base plan)");
    plan.model = model;
}

void TitanReader::readDegrees()
{
    ParallelLayout& p = out->plan.parallel;
    p.tp = positive("parallelism.tensor_parallel_degree", 1);
    p.pp = positive("parallelism.pipeline_parallel_degree", 1);
    p.cp = positive("parallelism.context_parallel_degree", 1);
    p.ep = positive("parallelism.expert_parallel_degree", 1);
    if (p.ep > 1 && !out->plan.model.isMoe()) {
        warn("expert_parallel_degree = " + std::to_string(p.ep) + " has no effect on the dense " +
             out->plan.model.name + " (torchtitan ignores it); ep = 1");
        p.ep = 1;
    }
    // torchtitan's defaults (torchtitan/config/job_config.py at v0.2.2): expert TP 1, the
    // "standard" all-to-all backend.
    p.expert_tp = 0;
    if (out->plan.model.isMoe()) {
        p.expert_tp = positive("parallelism.expert_tensor_parallel_degree", 1);
        const std::string backend = text("parallelism.expert_parallel_comm_backend", "standard");
        if (backend == "deepep")
            out->plan.training.moe_dispatcher = MoeDispatcher::DeepEP;
        else if (backend == "standard")
            out->plan.training.moe_dispatcher = MoeDispatcher::AllToAll;
        else
            error("parallelism.expert_parallel_comm_backend",
                  "must be \"standard\" or \"deepep\", not \"" + backend + "\"");
    }
    const int replicate = positive("parallelism.data_parallel_replicate_degree", 1);
    long long shard = integer("parallelism.data_parallel_shard_degree", -1);
    if (shard == -1) {
        const long long world = base.cluster.totalGpus();
        const double product = static_cast<double>(replicate) * p.tp * p.pp * p.cp;
        const long long rest = product <= 1e15 ? static_cast<long long>(product) : 0;
        shard = rest > 0 && world % rest == 0 ? world / rest : 0;
        if (shard < 1) {
            error("parallelism.data_parallel_shard_degree",
                  "= -1 (the rest of the ranks): the base plan's " + std::to_string(world) +
                      " GPUs are not a multiple of replicate x tp x pp x cp = " +
                      std::to_string(rest));
            shard = 1;
        }
        warn("data_parallel_shard_degree = -1: " + std::to_string(shard) +
             " from the base plan's cluster of " + std::to_string(world) + " GPUs");
    } else if (shard < 1 || shard > 1000000000) {
        error("parallelism.data_parallel_shard_degree",
              "must be -1 or a positive integer, not " + std::to_string(shard));
        shard = 1;
    }
    if (static_cast<long long>(replicate) * shard > 1000000) {
        error("parallelism.data_parallel_shard_degree",
              "x data_parallel_replicate_degree = " +
                  std::to_string(static_cast<long long>(replicate) * shard) +
                  " data-parallel ranks is more than a plan can hold (1,000,000)");
        shard = 1;
    }
    p.dp = replicate * static_cast<int>(shard);
    const std::string reshard = text("parallelism.fsdp_reshard_after_forward", "default");
    if (reshard != "default" && reshard != "always" && reshard != "never")
        error("parallelism.fsdp_reshard_after_forward",
              "must be \"default\", \"always\" or \"never\", not \"" + reshard + "\"");
    p.dp_shard = 0;
    if (shard > 1 || p.cp > 1) { // torchtitan shards over dp_shard x cp
        if (reshard == "never") {
            // torchtitan has no ZeRO-1 (frameworkCapabilityIssue): FSDP2 shards the
            // gradients with the optimizer state.
            p.zero = 2;
            warn("fsdp_reshard_after_forward = \"never\" keeps parameters gathered through the "
                 "step: ZeRO-2 (torchtitan has no ZeRO-1: FSDP2 shards gradients with the "
                 "optimizer state)");
        } else {
            p.zero = 3;
            if (reshard == "always" && p.pp > 1)
                warn("fsdp_reshard_after_forward = \"always\" with pipeline_parallel_degree = " +
                     std::to_string(p.pp) +
                     ": torchtitan gathers every stage's parameters again for each micro-batch; "
                     "Paraplan models ZeRO-3 under pipelining as torchtitan's \"default\" "
                     "(gathered once a step, kept across the micro-batches), so the plan counts "
                     "fewer gathers and more parameter memory than this file uses");
        }
        if (replicate > 1)
            p.dp_shard = static_cast<int>(shard) * p.cp;
    } else {
        p.zero = 0;
    }
    // torchtitan has no switch: its tensor parallelism is sequence-parallel whenever tp > 1.
    p.sequence_parallel = p.tp > 1;
    if (p.tp > 1)
        p.tp_overlap = flag("parallelism.enable_async_tensor_parallel", false) ? TpOverlap::AgGemm
                                                                               : TpOverlap::None;
    p.rank_order = ParallelLayout().rank_order;
}

/// Layers per rank from module_fqns_per_model_part, into stage_layers or first/last counts.
void setStageLayers(const std::vector<int>& perRank, const ModelSpec& model, ParallelLayout* p)
{
    p->stage_layers.clear();
    p->first_stage_layers = 0;
    p->last_stage_layers = 0;
    if (stageLayerCounts(model, *p) == perRank)
        return;
    p->first_stage_layers = perRank.front();
    p->last_stage_layers = perRank.back();
    if (stageLayerCounts(model, *p) == perRank)
        return;
    p->first_stage_layers = 0;
    p->last_stage_layers = 0;
    p->stage_layers = perRank;
}

void TitanReader::readPipeline()
{
    ParallelLayout& p = out->plan.parallel;
    ModelSpec& model = out->plan.model;
    p.interleave = 1;
    p.stage_layers.clear();
    p.first_stage_layers = p.last_stage_layers = 0;
    if (p.pp < 2)
        return;
    const std::string schedule = text("parallelism.pipeline_parallel_schedule", "1F1B");
    const bool looped = schedule != "1F1B" && schedule != "GPipe";
    if (schedule != "1F1B" && schedule != "Interleaved1F1B")
        warn("pipeline_parallel_schedule " + schedule +
             ": Paraplan models 1F1B and "
             "Interleaved1F1B; taken as " +
             (looped ? "Interleaved1F1B" : "1F1B"));
    const TomlValue* fqns = get("parallelism.module_fqns_per_model_part");
    if (fqns && !fqns->items.empty()) {
        const int parts = static_cast<int>(fqns->items.size());
        if (parts % p.pp != 0) {
            error("parallelism.module_fqns_per_model_part", "has " + std::to_string(parts) +
                                                                " parts, not a multiple of "
                                                                "pipeline_parallel_degree = " +
                                                                std::to_string(p.pp));
            return;
        }
        p.interleave = parts / p.pp;
        std::vector<int> perRank(static_cast<size_t>(p.pp), 0);
        int next = 0;
        bool inOrder = true;
        for (int k = 0; k < parts; ++k)
            for (const TomlValue& name : fqns->items[static_cast<size_t>(k)].items)
                if (name.text.rfind("layers.", 0) == 0) {
                    inOrder = inOrder && name.text == "layers." + std::to_string(next);
                    ++next;
                    ++perRank[static_cast<size_t>(k % p.pp)];
                }
        // Paraplan writes the nearest flavor for a model torchtitan has no flavor of, and names
        // the plan's own layers in the split: a base plan of such a model with that many
        // layers is the model the file describes.
        if (inOrder && next != model.layers && next == base.model.layers &&
            model.name != base.model.name && !titan::matchingFlavor(base.model)) {
            warn("the split names " + std::to_string(next) + " layers, the flavor's model " +
                 std::to_string(model.layers) + ": the base plan's model (" + base.model.name +
                 ", " + std::to_string(next) + " layers) is kept, as the file was written for it");
            model = base.model;
        }
        if (!inOrder || next != model.layers)
            warn("module_fqns_per_model_part names " + std::to_string(next) +
                 " layers (in order: " + (inOrder ? "yes" : "no") + "); the model has " +
                 std::to_string(model.layers) + ", so the plan splits its layers evenly");
        else
            setStageLayers(perRank, model, &p);
    } else if (looped) {
        const long long perStage = integer("parallelism.pipeline_parallel_layers_per_stage", 0);
        p.interleave = perStage > 0 ? std::max<long long>(1, model.layers / (perStage * p.pp)) : 2;
        warn("Interleaved1F1B without module_fqns_per_model_part: " + std::to_string(p.interleave) +
             " virtual stages per rank assumed (torchtitan derives "
             "them with its first/last-stage layer adjustments)");
    }
    if (!looped)
        p.interleave = 1;
}

/// Settings torchtitan v0.2 refuses at start-up: errors, as for the batch sizes.
void TitanReader::checkRefusals()
{
    const ParallelLayout& p = out->plan.parallel;
    const long long divisor = 2LL * p.tp * p.cp; // ParallelDims.seq_len_divisor
    if (out->plan.training.seq_len % divisor != 0)
        error("training.seq_len",
              "= " + std::to_string(out->plan.training.seq_len) +
                  " must be a multiple of tensor_parallel_degree x 2 x context_parallel_degree "
                  "= " +
                  std::to_string(divisor) + " (torchtitan's parallelize_llama asserts it)");
    bool modelCompiled = flag("compile.enable", false);
    if (const TomlValue* components = get("compile.components")) {
        bool model = false;
        for (const TomlValue& c : components->items)
            model = model || c.text == "model";
        modelCompiled = modelCompiled && model;
    }
    if (p.tp > 1 && flag("parallelism.enable_async_tensor_parallel", false) && !modelCompiled)
        error("parallelism.enable_async_tensor_parallel",
              "= true needs [compile] enable = true with \"model\" in components (torchtitan's "
              "maybe_enable_async_tp raises \"Async TP requires 'model' in --compile.components "
              "and --compile.enable\")");
    if (out->plan.training.dtype == Dtype::FP8 &&
        !text("quantize.linear.float8.recipe_name", "").empty() &&
        flag("quantize.linear.float8.enable_fsdp_float8_all_gather", false))
        error("quantize.linear.float8.enable_fsdp_float8_all_gather",
              "= true together with recipe_name: torchtitan's float8 converter asserts they are "
              "not both set (leave recipe_name out for tensorwise scaling)");
}

void TitanReader::readTraining()
{
    Plan& plan = out->plan;
    ParallelLayout& p = plan.parallel;
    TrainingSettings& t = plan.training;
    const int local = positive("training.local_batch_size", 8);
    const long long global = integer("training.global_batch_size", -1);
    p.global_batch = static_cast<int>(std::clamp<long long>(
        global == -1 ? static_cast<long long>(local) * p.dp : global, 1, 1LL << 30));
    if (global != -1 && (global < 1 || global % (static_cast<long long>(local) * p.dp) != 0))
        error("training.global_batch_size",
              "= " + std::to_string(global) +
                  " must be a positive multiple of local_batch_size x "
                  "data-parallel degree = " +
                  std::to_string(static_cast<long long>(local) * p.dp));
    p.micro_batch = local;
    if (p.pp > 1) {
        p.micro_batch = positive("parallelism.pipeline_parallel_microbatch_size", 1);
        if (local % p.micro_batch != 0)
            error("training.local_batch_size", "= " + std::to_string(local) +
                                                   " must be a multiple of "
                                                   "pipeline_parallel_microbatch_size = " +
                                                   std::to_string(p.micro_batch));
    }
    t.seq_len = positive("training.seq_len", 2048);
    if (const TomlValue* steps = get("training.steps")) {
        if (steps->integer < 1)
            error("training.steps", "must be positive");
        else
            t.train_tokens = static_cast<double>(steps->integer) * p.global_batch * t.seq_len;
    } else {
        warn("training.steps is not given: the base plan's train_tokens are kept");
    }
    const std::vector<std::string> converters = [&] {
        std::vector<std::string> names;
        if (const TomlValue* v = get("model.converters"))
            for (const TomlValue& item : v->items)
                names.push_back(item.text);
        return names;
    }();
    const std::string param = text("training.mixed_precision_param", "bfloat16");
    if (param != "bfloat16" && param != "float32")
        error("training.mixed_precision_param",
              "must be \"bfloat16\" or \"float32\", not \"" + param + "\"");
    t.dtype = param == "float32" ? Dtype::FP32 : Dtype::BF16;
    // torchtitan's maybe_enable_amp (torchtitan/distributed/utils.py): without fully_shard
    // (zero 0 here), TP or PP turn mixed precision off and the model trains in float32.
    if (t.dtype == Dtype::BF16 && p.zero == 0 && (p.tp > 1 || p.pp > 1)) {
        t.dtype = Dtype::FP32;
        warn("mixed_precision_param = \"bfloat16\" with tensor or pipeline parallelism and no "
             "FSDP: torchtitan turns mixed precision off there (\"Mixed precision training with "
             "TP or PP is only supported when FSDP/HSDP/CP is enabled\"), so the plan trains "
             "in fp32");
    }
    for (const std::string& c : converters) {
        if (c == "quantize.linear.float8" || c == "float8")
            t.dtype = Dtype::FP8;
        else
            warn("model.converters \"" + c + "\" is not modelled; ignored");
    }
    const std::string reduce = text("training.mixed_precision_reduce", "float32");
    if (reduce != "float32")
        error("training.mixed_precision_reduce", "must be \"float32\", not \"" + reduce + "\"");
    t.grad_reduce_bytes = 0;
    if (gradReduceBytes(plan) != 4)
        t.grad_reduce_bytes = 4;
    const std::string optimizer = text("optimizer.name", "AdamW");
    if (optimizer == "AdamW" || optimizer == "Adam")
        t.optimizer = Optimizer::Adam;
    else
        warn("optimizer.name \"" + optimizer +
             "\" is not modelled; the base plan's optimizer "
             "is kept");
    if (!pytorchFramework(plan))
        warn("the base plan runs on a Megatron-style stack; a torchtitan file runs on PyTorch, "
             "so the imported plan is costed as PyTorch runs it (its attention kernel, "
             "element-wise kernels and overlap)");
    t.framework = TrainingFramework::Torchtitan;
    t.kernels = flag("compile.enable", false) ? KernelStyle::Fused : KernelStyle::Eager;

    const std::string mode = text("activation_checkpoint.mode", "selective");
    const std::string option = text("activation_checkpoint.selective_ac_option", "2");
    if (mode == "none")
        p.recompute = Recompute::None;
    else if (mode == "full" || (mode == "selective" && option == "1"))
        p.recompute = Recompute::Full;
    else if (mode == "selective") {
        p.recompute = Recompute::Selective;
        if (option != "op")
            warn("selective_ac_option \"" + option +
                 "\" (every n-th layer fully recomputed) is "
                 "modelled as Paraplan's selective recompute");
    } else if (mode == "memory_budget") {
        p.recompute = Recompute::Selective;
        warn("activation_checkpoint.mode \"memory_budget\" is modelled as selective recompute");
    } else {
        error("activation_checkpoint.mode",
              "must be \"none\", \"selective\", \"full\" or \"memory_budget\", not \"" + mode +
                  "\"");
    }
}

} // namespace

LaunchImport importTorchtitan(const std::string& text, const Plan& base,
                              const HardwareCatalog& catalog)
{
    LaunchImport out;
    out.plan = base;
    TomlDocument doc;
    if (!parseToml(text, &doc, &out.errors))
        return out;
    TitanReader reader(doc, base, &out);
    reader.checkKeys();
    if (!out.errors.empty())
        return out;
    reader.readModel();
    reader.readDegrees();
    reader.readPipeline();
    reader.readTraining();
    reader.checkRefusals();
    if (const TomlValue* description = reader.get("job.description"))
        out.plan.name = description->text;
    if (!out.errors.empty())
        return out;
    for (const PlanIssue& issue : validatePlan(out.plan, catalog))
        out.errors.push_back("the file's plan on the base plan's cluster: " + issue.message);
    return out;
}

} // namespace paraplan
