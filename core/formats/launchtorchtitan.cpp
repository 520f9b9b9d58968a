// torchtitan train_config TOML export. Key names and types: torchtitan v0.2.2,
// torchtitan/config/job_config.py (pinned in tests/data/launch/torchtitan-0.2.2.keys).

#include "launchconfigdetail.h"
#include "launchtitan.h"
#include "launchtitandetail.h"
#include "modelio.h"
#include "tomlsubset.h"
#include "units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace paraplan {

const char* const kTorchtitanRelease =
    "torchtitan v0.2.2 (pytorch/torchtitan, torchtitan/config/job_config.py)";

namespace titan {

const std::vector<Flavor>& llama3Flavors()
{
    // torchtitan/models/llama3/__init__.py (llama3_configs): dim, n_layers, n_heads,
    // n_kv_heads; hf_assets_path as in torchtitan/models/llama3/train_configs/*.toml.
    static const std::vector<Flavor> flavors = {
        {"8B", "llama3-8b", "./assets/hf/Llama-3.1-8B", 32, 4096, 32, 8},
        {"70B", "llama3-70b", "./assets/hf/Llama-3.1-70B", 80, 8192, 64, 8},
        {"405B", "llama3-405b", "./assets/hf/Llama-3.1-405B", 126, 16384, 128, 8},
    };
    return flavors;
}

const Flavor* matchingFlavor(const ModelSpec& m)
{
    for (const Flavor& f : llama3Flavors())
        if (m.layers == f.layers && m.hidden == f.hidden && m.heads == f.heads &&
            m.kv_heads == f.kv_heads && m.mlp == MlpKind::SwiGLU && !m.isMoe() && !m.isMla() &&
            m.vocab == 128256 && !m.biases && !m.learned_positions)
            return &f;
    return nullptr;
}

const std::vector<MoeFlavor>& moeFlavors()
{
    // torchtitan v0.2.2: torchtitan/models/{deepseek_v3,qwen3,gpt_oss,llama4}/__init__.py;
    // hf_assets_path as their train_configs/*.toml name it (deepseek_v3_671b.toml,
    // llama4_17bx16e.toml, llama4_17bx128e.toml), else their ./assets/hf/<repository> rule.
    static const std::vector<MoeFlavor> flavors = {
        {"deepseek_v3", "671B", "deepseek-v3", "./assets/hf/DeepSeek-V3.1-Base"},
        {"qwen3", "30B-A3B", "qwen3-30b-a3b", "./assets/hf/Qwen3-30B-A3B"},
        {"qwen3", "235B-A22B", "qwen3-235b-a22b", "./assets/hf/Qwen3-235B-A22B"},
        {"gpt_oss", "120b", "gpt-oss-120b", "./assets/hf/gpt-oss-120b"},
        {"llama4", "17bx16e", "llama4-scout", "./assets/hf/Llama-4-Scout-17B-16E"},
        {"llama4", "17bx128e", "llama4-maverick", "./assets/hf/Llama-4-Maverick-17B-128E"},
    };
    return flavors;
}

const MoeFlavor* matchingMoeFlavor(const ModelSpec& m)
{
    if (!m.isMoe())
        return nullptr;
    for (const MoeFlavor& f : moeFlavors()) {
        ModelSpec p;
        std::string error;
        if (!modelFromPreset(f.preset, &p, &error))
            continue;
        if (m.layers == p.layers && m.hidden == p.hidden && m.heads == p.heads &&
            m.kv_heads == p.kv_heads && m.headDim() == p.headDim() && m.vocab == p.vocab &&
            m.experts == p.experts && m.experts_per_token == p.experts_per_token &&
            m.expert_ffn_hidden == p.expert_ffn_hidden &&
            m.shared_expert_ffn_hidden == p.shared_expert_ffn_hidden &&
            m.dense_layers == p.dense_layers && m.moe_layer_pattern == p.moe_layer_pattern &&
            m.isMla() == p.isMla())
            return &f;
    }
    return nullptr;
}

std::vector<int> virtualStageLayers(const ModelSpec& model, const ParallelLayout& p)
{
    const std::vector<int> perRank = stageLayerCounts(model, p);
    const int v = std::max(1, p.interleave);
    std::vector<int> out(perRank.size() * static_cast<size_t>(v), 0);
    for (size_t rank = 0; rank < perRank.size(); ++rank)
        for (int chunk = 0; chunk < v; ++chunk)
            out[static_cast<size_t>(chunk) * perRank.size() + rank] =
                perRank[rank] / v + (chunk < perRank[rank] % v ? 1 : 0);
    return out;
}

std::vector<std::vector<std::string>> moduleFqns(const std::vector<int>& virtualLayers)
{
    std::vector<std::vector<std::string>> parts;
    int next = 0;
    for (size_t k = 0; k < virtualLayers.size(); ++k) {
        std::vector<std::string> part;
        if (k == 0)
            part.push_back("tok_embeddings");
        for (int i = 0; i < virtualLayers[k]; ++i)
            part.push_back("layers." + std::to_string(next++));
        if (k + 1 == virtualLayers.size()) {
            part.push_back("norm");
            part.push_back("output");
        }
        parts.push_back(std::move(part));
    }
    return parts;
}

} // namespace titan

namespace {

std::string quotedList(const std::vector<std::string>& items)
{
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? ", " : "") + tomlQuote(items[i]);
    return out + "]";
}

/// The model section: a llama3 flavor of the plan's shape, or the nearest one with a warning.
void writeModel(const Plan& plan, bool fp8, std::ostringstream& out,
                std::vector<std::string>* warnings)
{
    if (const titan::MoeFlavor* moe = titan::matchingMoeFlavor(plan.model)) {
        out << "[model]\n"
            << "name = " << tomlQuote(moe->name) << "\n"
            << "flavor = " << tomlQuote(moe->flavor) << "\n"
            << "hf_assets_path = " << tomlQuote(moe->hf_assets) << "  # tokenizer (and weights)\n";
        if (fp8)
            out << "converters = [\"quantize.linear.float8\"]\n";
        out << "\n";
        if (plan.model.mtp_layers > 0)
            warnings->push_back("mtp_layers = " + std::to_string(plan.model.mtp_layers) +
                                ": torchtitan's " + moe->name +
                                " has no multi-token-prediction module; the file trains without "
                                "it");
        return;
    }
    const titan::Flavor* flavor = titan::matchingFlavor(plan.model);
    if (!flavor) {
        const double params = countParameters(plan.model).total;
        double best = 0;
        for (const titan::Flavor& f : titan::llama3Flavors()) {
            ModelSpec m;
            std::string error;
            if (!modelFromPreset(f.preset, &m, &error) || params <= 0)
                continue;
            const double gap = std::fabs(std::log(countParameters(m).total / params));
            if (!flavor || gap < best) {
                flavor = &f;
                best = gap;
            }
        }
        if (!flavor)
            flavor = &titan::llama3Flavors()[1];
        warnings->push_back(
            "model: " +
            (plan.model.name.empty() ? std::string("the plan's model") : plan.model.name) + " (" +
            std::to_string(plan.model.layers) + " layers, hidden " +
            std::to_string(plan.model.hidden) + ", " + std::to_string(plan.model.heads) +
            " heads) is none of torchtitan's llama3 flavors (8B, 70B, 405B); the file names " +
            flavor->flavor +
            (plan.model.isMoe()
                 ? ", the nearest by parameter count, a dense model: llama3 has no expert "
                   "layers, so this file trains no mixture of experts and its "
                   "expert_parallel_degree has nothing to shard; torchtitan's MoE model "
                   "families take their shapes from their own flavors (deepseek_v3 671B, qwen3 "
                   "30B-A3B and 235B-A22B, gpt_oss 120b, llama4 17bx16e and 17bx128e are "
                   "written for models of their shapes): write [model] for one by hand"
                 : ", the nearest by parameter count: add a flavor of this shape to "
                   "torchtitan/models/llama3/__init__.py and name it in [model] flavor"));
    }
    out << "[model]\n"
        << "name = \"llama3\"\n"
        << "flavor = " << tomlQuote(flavor->flavor) << "\n"
        << "hf_assets_path = " << tomlQuote(flavor->hf_assets) << "  # tokenizer (and weights)\n";
    if (fp8)
        out << "converters = [\"quantize.linear.float8\"]\n";
    out << "\n";
}

struct DpDegrees
{
    int replicate = 1;
    int shard = 1;
    std::string reshard; ///< fsdp_reshard_after_forward, empty: not written
    /// torchtitan applies fully_shard (ParallelDims.fsdp_enabled: dp_shard > 1 or cp > 1).
    bool fsdp(const ParallelLayout& p) const { return shard > 1 || p.cp > 1; }
};

/// torchtitan's maybe_enable_amp (torchtitan/distributed/utils.py, v0.2 series) turns mixed
/// precision off when TP or PP runs without fully_shard: the file then trains in float32.
bool mixedPrecisionOff(const ParallelLayout& p, const DpDegrees& d)
{
    return !d.fsdp(p) && (p.tp > 1 || p.pp > 1);
}

/// FSDP/HSDP/DDP degrees from the plan's ZeRO stage and shard group.
DpDegrees dataParallel(const ParallelLayout& p, std::vector<std::string>* warnings)
{
    DpDegrees d;
    if (p.zero == 0) {
        d.replicate = p.dp;
        if (p.cp > 1)
            warnings->push_back("ZeRO 0 with cp = " + std::to_string(p.cp) +
                                ": torchtitan applies FSDP over the context-parallel ranks "
                                "(its dp_shard x cp mesh), so parameters are sharded there");
        if (p.dp > 1 && (p.tp > 1 || p.pp > 1 || p.cp > 1))
            warnings->push_back(
                "ZeRO 0 (plain data parallel) with tensor, pipeline or context parallelism: "
                "the file writes DDP (data_parallel_replicate_degree); torchtitan releases whose "
                "parallelize.py checks the whole device mesh refuse DDP beyond a 1-D mesh (\"DDP "
                "has not supported > 1D parallelism\"); data_parallel_shard_degree (FSDP) "
                "always works");
        return d;
    }
    // torchtitan shards over dp_shard x cp; the plan's shard group counts dp x cp ranks.
    const int group = p.shardRanks();
    int shard = p.dp;
    if (p.dp_shard > 0 && group < p.dp * p.cp) {
        if (group % p.cp != 0) {
            warnings->push_back("dp_shard = " + std::to_string(p.dp_shard) +
                                " is not a multiple of cp = " + std::to_string(p.cp) +
                                ": torchtitan's FSDP mesh is data_parallel_shard_degree x "
                                "context_parallel_degree, so the file shards over all " +
                                std::to_string(p.dp * p.cp) + " ranks (plain FSDP)");
        } else {
            shard = group / p.cp;
        }
    }
    d.shard = shard;
    d.replicate = p.dp / shard;
    // ZeRO-3: no fsdp_reshard_after_forward, torchtitan's "default": resharded after forward
    // without pipelining, kept gathered across a stage's micro-batches with it (apply_fsdp:
    // reshard_after_forward = not pp_enabled), which is how Paraplan models ZeRO-3 under PP.
    if (p.zero < 3) {
        d.reshard = "never";
        warnings->push_back(
            "ZeRO-" + std::to_string(p.zero) +
            ": torchtitan has no ZeRO-1/2 without FSDP; the file uses FSDP with "
            "fsdp_reshard_after_forward = \"never\" (parameters stay gathered from forward to "
            "backward, gradients and optimizer states sharded), which is ZeRO-2's memory plus a "
            "sharded copy of the parameters at rest");
    }
    return d;
}

/// The [compile] setting: the plan's fused kernels are torch.compile.
bool compiled(const Plan& plan)
{
    return resolvedKernelStyle(plan) == KernelStyle::Fused;
}

// What torchtitan's MoE (v0.2.2: job_config.py, torchtitan/models/moe) cannot run as planned.
void moeWarnings(const Plan& plan, std::vector<std::string>* warnings)
{
    const ParallelLayout& p = plan.parallel;
    if (p.ep > 1 && p.expertTp() != 1 && p.expertTp() != p.tp)
        warnings->push_back("expert_tensor_parallel_degree = " + std::to_string(p.expertTp()) +
                            ": torchtitan takes expert TP 1 or the TP degree only "
                            "(job_config.py, expert_tensor_parallel_degree)");
    if (plan.training.moe_dispatcher == MoeDispatcher::AllGather)
        warnings->push_back("moe_dispatcher allgather: torchtitan has no all-gather dispatcher; "
                            "the file runs its standard all-to-all");
    if (plan.training.moe_router_fusion)
        warnings->push_back("moe_router_fusion is Megatron-Core's (Transformer Engine's fused "
                            "router kernels): torchtitan runs its own router, not written");
    if (p.ep_overlap == EpOverlap::A2a)
        warnings->push_back("ep_overlap a2a: torchtitan overlaps expert-parallel communication "
                            "only under its DualPipeV schedule "
                            "(pipeline_parallel_expert_parallel_overlap); the file does not");
    if (plan.model.capacity_factor > 0)
        warnings->push_back("capacity_factor: torchtitan's MoE routes every token (no capacity "
                            "factor in its job config); the file trains dropless");
}

void writeParallelism(const Plan& plan, const DpDegrees& d, std::ostringstream& out,
                      std::vector<std::string>* warnings)
{
    const ParallelLayout& p = plan.parallel;
    out << "[parallelism]\n"
        << "data_parallel_replicate_degree = " << d.replicate << "\n"
        << "data_parallel_shard_degree = " << d.shard << "\n";
    if (!d.reshard.empty())
        out << "fsdp_reshard_after_forward = " << tomlQuote(d.reshard) << "\n";
    out << "tensor_parallel_degree = " << p.tp << "\n";
    // maybe_enable_async_tp (torchtitan/distributed/tensor_parallel.py) raises "Async TP
    // requires 'model' in --compile.components and --compile.enable" without torch.compile.
    if (p.tp > 1)
        out << "enable_async_tensor_parallel = "
            << (tpOverlapActive(plan) && compiled(plan) ? "true" : "false") << "\n";
    if (p.tp > 1 && !p.sequence_parallel)
        warnings->push_back("sequence_parallel = false: torchtitan always shards the norms and "
                            "dropout of a tensor-parallel layer over the sequence (its TP plan "
                            "uses SequenceParallel), so the file runs with sequence parallelism");
    out << "pipeline_parallel_degree = " << p.pp << "\n";
    if (p.pp > 1) {
        out << "pipeline_parallel_schedule = "
            << (p.interleave > 1 ? "\"Interleaved1F1B\"" : "\"1F1B\"") << "\n"
            << "pipeline_parallel_microbatch_size = " << p.micro_batch << "\n";
        const auto parts = titan::moduleFqns(titan::virtualStageLayers(plan.model, p));
        out << "module_fqns_per_model_part = [\n";
        for (const auto& part : parts)
            out << "    " << quotedList(part) << ",\n";
        out << "]\n";
    }
    out << "context_parallel_degree = " << p.cp << "\n";
    if (plan.model.isMoe()) {
        out << "expert_parallel_degree = " << p.ep << "\n";
        // Written always: torchtitan's own default is 1 (job_config.py at v0.2.2), the plan's
        // the TP degree (Megatron's).
        out << "expert_tensor_parallel_degree = " << p.expertTp() << "\n";
        if (plan.training.moe_dispatcher == MoeDispatcher::DeepEP)
            out << "expert_parallel_comm_backend = \"deepep\"\n";
        moeWarnings(plan, warnings);
    }
    out << "\n";
}

void writeTraining(const Plan& plan, const DpDegrees& d, std::ostringstream& out,
                   std::vector<std::string>* warnings)
{
    const ParallelLayout& p = plan.parallel;
    const TrainingSettings& t = plan.training;
    // torchtitan: local_batch_size per data-parallel rank per optimizer step slice; with
    // pipelining it holds all the rank's micro-batches (pipeline_parallel_microbatch_size
    // each), without it one micro-batch and the rest is gradient accumulation.
    const int local = p.pp > 1 ? p.micro_batch * p.microBatches() : p.micro_batch;
    out << "[training]\n"
        << "local_batch_size = " << local << "\n"
        << "global_batch_size = " << p.global_batch << "\n"
        << "seq_len = " << t.seq_len << "\n";
    // parallelize_llama asserts seq_len % ParallelDims.seq_len_divisor == 0, tp x (cp x 2)
    // (torchtitan/models/llama3/infra/parallelize.py, torchtitan/distributed/parallel_dims.py).
    const long long divisor = 2LL * p.tp * p.cp;
    if (t.seq_len % divisor != 0)
        warnings->push_back("seq_len " + std::to_string(t.seq_len) +
                            " is not a multiple of tp x 2 x cp = " + std::to_string(divisor) +
                            ": the file keeps it, and torchtitan's parallelize_llama refuses it at "
                            "start-up (\"Sequence length ... must be divisible by the product of "
                            "TP degree and 2 * CP degree\"); choose a seq_len that divides");
    if (t.train_tokens > 0) {
        const double tokensPerStep = static_cast<double>(p.global_batch) * t.seq_len;
        const double steps = std::ceil(t.train_tokens / tokensPerStep);
        if (steps > 2e9)
            warnings->push_back("train_tokens: " + units::formatNumber(steps, 4) +
                                " steps do not fit torchtitan's int steps; not written");
        else
            out << "steps = " << static_cast<long long>(steps) << "  # train_tokens / ("
                << p.global_batch << " x " << t.seq_len << ")\n";
    } else {
        warnings->push_back("train_tokens is not set: no [training] steps written (torchtitan's "
                            "default applies)");
    }
    const bool fp32Only = mixedPrecisionOff(p, d);
    switch (t.dtype) {
    case Dtype::BF16:
    case Dtype::FP8:
        out << "mixed_precision_param = \"bfloat16\"\n";
        break;
    case Dtype::FP16:
        out << "mixed_precision_param = \"bfloat16\"\n";
        if (!fp32Only)
            warnings->push_back("dtype fp16: torchtitan's mixed_precision_param takes bfloat16 "
                                "or float32 only; the file trains in bfloat16");
        break;
    case Dtype::FP32:
    case Dtype::TF32:
        out << "mixed_precision_param = \"float32\"\n";
        break;
    }
    if (fp32Only && t.dtype != Dtype::FP32 && t.dtype != Dtype::TF32)
        warnings->push_back(
            std::string("dtype ") + dtypeName(t.dtype) +
            " with tensor or pipeline parallelism and no FSDP (data_parallel_shard_degree = 1, "
            "context_parallel_degree = 1): torchtitan's maybe_enable_amp turns mixed precision "
            "off there (\"Mixed precision training with TP or PP is only supported when "
            "FSDP/HSDP/CP is enabled\"), so the file trains in float32 although it writes "
            "mixed_precision_param = \"bfloat16\"" +
            (t.dtype == Dtype::FP8 ? " (the float8 linears still run in float8)" : "") +
            "; for bfloat16 use ZeRO >= 1 with dp > 1 (FSDP), or set [training] dtype = "
            "\"bfloat16\" (parameters, gradients and optimizer states all in bfloat16)");
    out << "mixed_precision_reduce = \"float32\"\n";
    if (gradReduceBytes(plan) == 2)
        warnings->push_back("grad_reduce_bytes = 2: torchtitan reduces gradients in float32 "
                            "(mixed_precision_reduce takes float32 only)");
    if (plan.training.optimizer_state_bytes == 2)
        warnings->push_back("optimizer_dtype bf16 is not written: torchtitan's AdamW keeps its "
                            "states in the parameters' dtype (float32 under FSDP's mixed "
                            "precision)");
    out << "# dataset = \"c4\"  # set your dataset (and dataset_path)\n\n";
}

void writeRest(const Plan& plan, const DpDegrees& d, bool fp8, std::ostringstream& out,
               std::vector<std::string>* warnings)
{
    const ParallelLayout& p = plan.parallel;
    out << "[optimizer]\n"
        << "name = \"AdamW\"\n\n";
    if (plan.training.optimizer == Optimizer::SGD)
        warnings->push_back("optimizer sgd: torchtitan builds Adam or AdamW only; the file names "
                            "AdamW (two fp32 states per parameter more than SGD)");
    out << "[activation_checkpoint]\n";
    switch (p.recompute) {
    case Recompute::None:
        out << "mode = \"none\"\n";
        break;
    case Recompute::Full:
        out << "mode = \"full\"\n";
        break;
    case Recompute::Selective:
        out << "mode = \"selective\"\n"
            << "selective_ac_option = \"op\"\n";
        warnings->push_back(
            "recompute selective: Paraplan's selective recompute is the attention core "
            "(Korthikanti et al. 2022); torchtitan's per-op selective checkpointing (\"op\") "
            "keeps attention and most matmul outputs and recomputes the rest, so its memory "
            "and recompute time differ somewhat");
        break;
    }
    out << "\n";
    const bool compileOn = compiled(plan);
    out << "[compile]\n"
        << "enable = " << (compileOn ? "true" : "false")
        << "  # kernels: " << kernelStyleName(resolvedKernelStyle(plan)) << "\n"
        << "components = [\"model\", \"loss\"]\n\n";
    if (tpOverlapActive(plan) && !compileOn)
        warnings->push_back(
            "tp_overlap ag-gemm with eager kernels: torchtitan's async tensor parallel needs "
            "torch.compile (maybe_enable_async_tp raises \"Async TP requires 'model' in "
            "--compile.components and --compile.enable\" without it); the file writes "
            "enable_async_tensor_parallel = false (no overlap); with kernels fused it writes "
            "both on");
    if (fp8 && !compileOn)
        warnings->push_back("dtype fp8 with eager kernels: torchtitan's float8 linears are fast "
                            "only under torch.compile; [compile] enable = false follows the "
                            "plan's kernels setting");
    if (fp8) {
        // No recipe_name: torchtitan's Float8 converter (torchtitan/components/quantization/
        // float8.py) asserts that a recipe and enable_fsdp_float8_all_gather are not both set;
        // without one it scales tensorwise and honours the FSDP float8 all-gather.
        const bool fsdp = d.shard > 1;
        out << "[quantize.linear.float8]\n"
            << "enable_fsdp_float8_all_gather = " << (fsdp ? "true" : "false") << "\n"
            << "precompute_float8_dynamic_scale_for_fsdp = " << (fsdp ? "true" : "false") << "\n"
            << "filter_fqns = [\"output\"]\n\n";
    }
    if (p.dp_overlap == false)
        warnings->push_back("dp_overlap = false: torchtitan always overlaps FSDP/DDP "
                            "communication with compute (no option turns it off)");
    if (p.rank_order != ParallelLayout().rank_order)
        warnings->push_back("rank_order: torchtitan builds its device mesh in a fixed order "
                            "(pp, dp_replicate, dp_shard, cp, tp, innermost last); a custom "
                            "rank order cannot be set");
}

std::string launcherLine(const Plan& plan, const std::string& file)
{
    if (launch::launchShape(plan).nodes <= 1)
        return "NGPU=" + std::to_string(plan.parallel.gpus()) + " CONFIG_FILE=./" + file +
               " ./run_train.sh";
    return launch::torchrunLine(plan, "-m torchtitan.train --job.config_file ./" + file);
}

} // namespace

void exportTorchtitan(const Plan& plan, LaunchConfig* config)
{
    LaunchConfig& out = *config;
    out.release = kTorchtitanRelease;
    const std::string& fileName = out.file_name;

    const bool fp8 = plan.training.dtype == Dtype::FP8;
    const DpDegrees degrees = dataParallel(plan.parallel, &out.warnings);
    std::ostringstream body;
    body << "[job]\n"
         << "description = " << tomlQuote(plan.name.empty() ? "Paraplan plan" : plan.name) << "\n"
         << "dump_folder = \"./outputs\"\n\n";
    writeModel(plan, fp8, body, &out.warnings);
    writeTraining(plan, degrees, body, &out.warnings);
    writeParallelism(plan, degrees, body, &out.warnings);
    writeRest(plan, degrees, fp8, body, &out.warnings);

    const std::string& file = fileName;
    out.launcher = launcherLine(plan, file);
    std::ostringstream head;
    head << "# torchtitan train_config.\n"
         << launch::headerComment(plan, kTorchtitanRelease, "# ")
         << "# (the last torchtitan release that reads TOML; 0.3 loads Python config recipes)\n"
         << "# Launch (on every node):\n#   " << launch::oneLine(out.launcher) << "\n";
    if (!out.warnings.empty()) {
        head << "# Not expressible here (Paraplan's warnings):\n";
        for (const std::string& w : out.warnings)
            head << "#   - " << launch::oneLine(w) << "\n";
    }
    out.text = head.str() + "\n" + body.str();
    while (out.text.size() > 1 && out.text[out.text.size() - 2] == '\n')
        out.text.pop_back();
}

} // namespace paraplan
