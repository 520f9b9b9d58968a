// The Megatron-LM flags read by launchmegatronimport.cpp, applied to a plan. Megatron's own
// defaults (arguments.py at launch::kMegatronRelease) stand for flags a complete script leaves
// out: learned positions, biases, tied embeddings, GeLU, dropout 0.1.
#include "launchconfigdetail.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace paraplan::launch {
namespace {

class FlagReader
{
public:
    FlagReader(const MegatronFlags& flags, LaunchImport* result) : m_flags(flags), m_result(result)
    {
    }
    bool has(const std::string& name) const { return m_flags.count(name) > 0; }
    std::string text(const std::string& name) const
    {
        const auto it = m_flags.find(name);
        return it == m_flags.end() || it->second.empty() ? std::string() : it->second.front();
    }
    /// A whole number >= `min`, or nothing (and an error when it is given but bad).
    std::optional<long long> integer(const std::string& name, long long min) const
    {
        if (!has(name))
            return std::nullopt;
        const std::string value = text(name);
        char* end = nullptr;
        const long long n = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || n < min || n > 2000000000000LL) {
            m_result->errors.push_back(name + ": '" + value +
                                       "' is not a whole number >= " + std::to_string(min));
            return std::nullopt;
        }
        return n;
    }
    /// Sets *target when the flag is given and valid.
    void set(const std::string& name, long long min, int* target) const
    {
        if (const std::optional<long long> n = integer(name, min))
            *target = static_cast<int>(*n);
    }
    void error(const std::string& message) const { m_result->errors.push_back(message); }
    void warn(const std::string& message) const { m_result->warnings.push_back(message); }

private:
    const MegatronFlags& m_flags;
    LaunchImport* m_result;
};

/// "([0]*D+[1]*M)": D leading dense layers. False when the pattern has another form.
bool denseLeadingLayers(const std::string& pattern, int layers, int* dense)
{
    int d = 0;
    int m = 0;
    if (std::sscanf(pattern.c_str(), "([0]*%d+[1]*%d)", &d, &m) == 2 && d + m == layers) {
        *dense = d;
        return true;
    }
    if (pattern == "1") {
        *dense = 0;
        return true;
    }
    return false;
}

void applyModel(const FlagReader& f, Plan* plan)
{
    if (!f.has("--num-layers"))
        return; // no model shape: the base plan's model stands
    ModelSpec m = plan->model;
    f.set("--num-layers", 1, &m.layers);
    f.set("--hidden-size", 1, &m.hidden);
    f.set("--num-attention-heads", 1, &m.heads);
    m.ffn_hidden = 4 * m.hidden; // Megatron's default
    f.set("--ffn-hidden-size", 1, &m.ffn_hidden);
    m.kv_heads = m.heads;
    if (f.has("--group-query-attention")) {
        m.kv_heads = 1; // Megatron's default for --num-query-groups
        f.set("--num-query-groups", 1, &m.kv_heads);
    }
    m.head_dim = 0;
    f.set("--kv-channels", 1, &m.head_dim);
    if (m.head_dim * m.heads == m.hidden)
        m.head_dim = 0;
    f.set("--max-position-embeddings", 1, &m.max_positions);
    const std::string position = f.has("--position-embedding-type")
                                     ? f.text("--position-embedding-type")
                                     : "learned_absolute";
    if (position != "learned_absolute" && position != "rope")
        f.warn("--position-embedding-type " + position +
               " is not modelled: counted as rope (no position parameters)");
    m.learned_positions = position == "learned_absolute";
    m.mlp = f.has("--swiglu") ? MlpKind::SwiGLU : MlpKind::GeLU;
    m.tied_embeddings = !f.has("--untie-embeddings-and-output-weights");
    m.biases = !f.has("--disable-bias-linear");
    const auto zero = [&](const char* flag) {
        return f.has(flag) && std::atof(f.text(flag).c_str()) == 0;
    };
    m.dropout = !(zero("--attention-dropout") && zero("--hidden-dropout"));
    f.set("--vocab-size", 1, &m.vocab);
    if (f.has("--padded-vocab-size"))
        f.set("--padded-vocab-size", 1, &m.vocab);
    m.experts = 0;
    m.experts_per_token = 0;
    m.expert_ffn_hidden = 0;
    m.shared_expert_ffn_hidden = 0;
    m.dense_layers = 0;
    if (f.has("--num-experts")) {
        f.set("--num-experts", 1, &m.experts);
        m.experts_per_token = 2; // Megatron's default --moe-router-topk
        f.set("--moe-router-topk", 1, &m.experts_per_token);
        m.expert_ffn_hidden = m.ffn_hidden;
        f.set("--moe-ffn-hidden-size", 1, &m.expert_ffn_hidden);
        f.set("--moe-shared-expert-intermediate-size", 1, &m.shared_expert_ffn_hidden);
        if (f.has("--moe-layer-freq") &&
            !denseLeadingLayers(f.text("--moe-layer-freq"), m.layers, &m.dense_layers))
            f.warn("--moe-layer-freq '" + f.text("--moe-layer-freq") +
                   "' is not leading dense layers ([0]*D+[1]*M): every layer counted as MoE");
    }
    const ModelSpec& old = plan->model;
    const bool same = m.layers == old.layers && m.hidden == old.hidden && m.heads == old.heads &&
                      m.kv_heads == old.kv_heads && m.headDim() == old.headDim() &&
                      m.ffn_hidden == old.ffn_hidden && m.vocab == old.vocab && m.mlp == old.mlp &&
                      m.tied_embeddings == old.tied_embeddings &&
                      m.learned_positions == old.learned_positions && m.biases == old.biases &&
                      m.experts == old.experts && m.experts_per_token == old.experts_per_token &&
                      m.expert_ffn_hidden == old.expert_ffn_hidden &&
                      m.dense_layers == old.dense_layers &&
                      m.shared_expert_ffn_hidden == old.shared_expert_ffn_hidden;
    if (!same) {
        m.preset.clear();
        m.name = "model of the Megatron-LM launch file";
        m.source = "Megatron-LM launch file (import-launch)";
        m.q_lora_rank = m.kv_lora_rank = m.rope_head_dim = m.v_head_dim = 0;
    }
    plan->model = m;
}

void applyLayout(const FlagReader& f, long long world, Plan* plan)
{
    ParallelLayout p = plan->parallel;
    p.tp = p.pp = p.cp = p.ep = 1; // Megatron's defaults
    f.set("--tensor-model-parallel-size", 1, &p.tp);
    f.set("--pipeline-model-parallel-size", 1, &p.pp);
    f.set("--context-parallel-size", 1, &p.cp);
    f.set("--expert-model-parallel-size", 1, &p.ep);
    const long long gpus = plan->cluster.totalGpus();
    const long long model = static_cast<long long>(p.tp) * p.pp * p.cp;
    if (world > 0 && world != gpus)
        f.warn("the launcher starts " + std::to_string(world) +
               " processes; the base plan's "
               "cluster has " +
               std::to_string(gpus) + " GPUs, which the plan keeps");
    if (model <= 0 || gpus % model != 0) {
        f.error("TP x PP x CP = " + std::to_string(model) + " does not divide the cluster's " +
                std::to_string(gpus) + " GPUs");
        return;
    }
    p.dp = static_cast<int>(gpus / model);
    p.stage_layers.clear();
    p.first_stage_layers = p.last_stage_layers = 0;
    f.set("--decoder-first-pipeline-num-layers", 1, &p.first_stage_layers);
    f.set("--decoder-last-pipeline-num-layers", 1, &p.last_stage_layers);
    p.interleave = 1;
    f.set("--num-virtual-stages-per-pipeline-rank", 1, &p.interleave);
    if (const std::optional<long long> per =
            f.integer("--num-layers-per-virtual-pipeline-stage", 1)) {
        const long long layers = plan->model.layers;
        if (layers % (static_cast<long long>(p.pp) * *per) != 0)
            f.error("--num-layers-per-virtual-pipeline-stage " + std::to_string(*per) +
                    " does not divide the " + std::to_string(layers) + " layers over " +
                    std::to_string(p.pp) + " pipeline stages");
        else
            p.interleave = static_cast<int>(layers / (p.pp * *per));
    }
    p.sequence_parallel = f.has("--sequence-parallel");
    p.recompute = Recompute::None;
    const std::string granularity = f.text("--recompute-granularity");
    if (granularity == "selective" || f.has("--recompute-activations"))
        p.recompute = Recompute::Selective;
    else if (granularity == "full")
        p.recompute = Recompute::Full;
    else if (!granularity.empty())
        f.error("--recompute-granularity: '" + granularity + "' is not full or selective");
    if (p.recompute == Recompute::Full &&
        (f.text("--recompute-method") != "uniform" || f.text("--recompute-num-layers") != "1"))
        f.warn("full recompute of only some layers (--recompute-method " +
               f.text("--recompute-method") + ", --recompute-num-layers " +
               f.text("--recompute-num-layers") + ") is counted as every layer recomputed");
    p.micro_batch = 1;
    f.set("--micro-batch-size", 1, &p.micro_batch);
    p.global_batch = p.micro_batch * p.dp; // Megatron's default: one micro-batch
    f.set("--global-batch-size", 1, &p.global_batch);
    p.zero = f.has("--use-distributed-optimizer") ? 1 : 0;
    if (f.has("--use-megatron-fsdp")) {
        const std::string s = f.text("--data-parallel-sharding-strategy");
        p.zero = s == "optim_grads_params" ? 3 : s == "optim_grads" ? 2 : s == "optim" ? 1 : 0;
    }
    p.dp_shard = 0;
    p.dp_overlap = f.has("--overlap-grad-reduce");
    p.tp_overlap = f.has("--tp-comm-overlap") ? TpOverlap::AgGemm : TpOverlap::None;
    using D = ParallelDim;
    p.rank_order = f.has("--use-tp-pp-dp-mapping") ? std::array<D, 4>{D::TP, D::CP, D::PP, D::DP}
                                                   : std::array<D, 4>{D::TP, D::CP, D::DP, D::PP};
    plan->parallel = p;
}

void applyTraining(const FlagReader& f, Plan* plan)
{
    TrainingSettings& t = plan->training;
    f.set("--seq-length", 1, &t.seq_len);
    t.dtype = f.has("--fp8-format") ? Dtype::FP8
              : f.has("--bf16")     ? Dtype::BF16
              : f.has("--fp16")     ? Dtype::FP16
                                    : Dtype::FP32;
    t.grad_reduce_bytes = f.has("--grad-reduce-in-bf16") ? 2 : 0;
    const std::string optimizer = f.has("--optimizer") ? f.text("--optimizer") : "adam";
    if (optimizer == "adam" || optimizer == "sgd")
        t.optimizer = optimizer == "adam" ? Optimizer::Adam : Optimizer::SGD;
    else
        f.warn("--optimizer " + optimizer + " is not modelled: the base plan's optimizer kept");
    const std::string backend = f.text("--attention-backend");
    if (backend == "flash") {
        if (t.attention != AttentionKernel::Flash3)
            t.attention = AttentionKernel::Flash2;
    } else if (backend == "fused") {
        t.attention = AttentionKernel::Cudnn;
    } else if (backend == "unfused") {
        t.attention = AttentionKernel::Unfused;
    } else if (backend == "auto" || backend.empty()) {
        t.attention = AttentionKernel::Auto;
    } else {
        f.warn("--attention-backend " + backend + " is not modelled: counted as auto");
        t.attention = AttentionKernel::Auto;
    }
    if (const std::optional<long long> samples = f.integer("--train-samples", 1))
        t.train_tokens = static_cast<double>(*samples) * t.seq_len;
    else if (const std::optional<long long> iters = f.integer("--train-iters", 1))
        t.train_tokens = static_cast<double>(*iters) * plan->parallel.global_batch * t.seq_len;
    if (t.stack == TrainingStack::PyTorch) {
        f.warn("the base plan's stack was pytorch; a Megatron-LM file runs on megatron");
        t.stack = TrainingStack::Megatron;
    }
}

} // namespace

void applyMegatronFlags(const MegatronFlags& flags, long long world, LaunchImport* result,
                        const HardwareCatalog& catalog)
{
    const FlagReader f(flags, result);
    const std::string tokenizer = f.text("--tokenizer-type");
    if (f.has("--tokenizer-type") && tokenizer != "NullTokenizer")
        f.warn("--tokenizer-type " + tokenizer +
               ": the vocabulary comes from --vocab-size or "
               "the base plan, not from the tokenizer's files");
    applyModel(f, &result->plan);
    applyLayout(f, world, &result->plan);
    applyTraining(f, &result->plan);
    if (!result->errors.empty())
        return;
    for (const PlanIssue& issue : validatePlan(result->plan, catalog))
        result->errors.push_back(issue.field + ": " + issue.message);
    if (result->plan.training.gpu_hour_usd > 0)
        result->warnings.push_back("gpu_hour_usd kept from the base plan (not a launch setting)");
}

} // namespace paraplan::launch
