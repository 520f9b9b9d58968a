// A plan as Megatron-LM pretrain_gpt.py flags in a torchrun script. The option names are those
// of megatron/training/arguments.py at the commit launch::kMegatronRelease names; the test
// tst_launch checks every flag written against that list (tests/data/launch/).
#include "launchconfigdetail.h"
#include "units.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace paraplan {
namespace {

/// A 0/1 pattern as the Python list Megatron's moe_freq_type evaluates: "[0,1,0,1]".
std::string patternList(const std::vector<unsigned char>& pattern)
{
    std::string text = "[";
    for (size_t i = 0; i < pattern.size(); ++i)
        text += (i ? "," : "") + std::string(pattern[i] ? "1" : "0");
    return text + "]";
}

using launch::integerText;

/// Flags in the order written; no value: a store_true switch; several: a list (nargs='+').
struct Flags
{
    std::vector<std::pair<std::string, std::vector<std::string>>> list;
    void add(const std::string& flag, const std::string& value = {})
    {
        list.emplace_back(flag, value.empty() ? std::vector<std::string>()
                                              : std::vector<std::string>{value});
    }
    void add(const std::string& flag, long long value) { add(flag, std::to_string(value)); }
    void addList(const std::string& flag, std::vector<std::string> values)
    {
        list.emplace_back(flag, std::move(values));
    }
};

/// A shell word: bare when it is plain, else in single quotes.
std::string shellWord(const std::string& value)
{
    for (char c : value) {
        const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                           c == '.' || c == '/' || c == ',' || c == ':' || c == '=';
        if (!plain)
            return "'" + value + "'";
    }
    return value;
}

void modelFlags(const Plan& plan, Flags* f, std::vector<std::string>* warnings)
{
    const ModelSpec& m = plan.model;
    f->add("--num-layers", m.layers);
    f->add("--hidden-size", m.hidden);
    f->add("--ffn-hidden-size", m.ffn_hidden);
    f->add("--num-attention-heads", m.heads);
    if (m.kv_heads > 0 && m.kv_heads != m.heads) {
        f->add("--group-query-attention");
        f->add("--num-query-groups", m.kv_heads);
    }
    if (m.head_dim > 0 && m.head_dim * m.heads != m.hidden)
        f->add("--kv-channels", m.head_dim);
    f->add("--seq-length", plan.training.seq_len);
    // validate_args asserts max_position_embeddings >= seq_length.
    f->add("--max-position-embeddings", std::max(m.max_positions, plan.training.seq_len));
    if (m.max_positions > 0 && m.max_positions < plan.training.seq_len)
        warnings->push_back("seq_len " + std::to_string(plan.training.seq_len) +
                            " is longer than the model's " + std::to_string(m.max_positions) +
                            " positions: --max-position-embeddings is written as seq_len");
    f->add("--position-embedding-type", m.learned_positions ? "learned_absolute" : "rope");
    if (!m.learned_positions)
        warnings->push_back("the RoPE base is not part of a plan (it costs nothing): "
                            "Megatron-LM's --rotary-base default of 10000 applies unless you add "
                            "the model's own (Llama 3: 500000)");
    if (m.mlp == MlpKind::SwiGLU)
        f->add("--swiglu");
    if (!m.tied_embeddings)
        f->add("--untie-embeddings-and-output-weights");
    if (!m.biases)
        f->add("--disable-bias-linear");
    // The plan counts a norm with a bias (LayerNorm, 4h per layer) for models with biases and
    // one without (RMSNorm, 2h) for bias-free ones; Megatron's default is LayerNorm.
    f->add("--normalization", m.biases ? "LayerNorm" : "RMSNorm");
    if (!m.dropout) {
        f->add("--attention-dropout", "0");
        f->add("--hidden-dropout", "0");
    }
    // The vocabulary: NullTokenizer's is --vocab-size plus its end-of-document token, which
    // Megatron pads to a multiple of 128 x TP unless --padded-vocab-size is given; the
    // embedding's rows split evenly over TP, so that is rounded up to a multiple of TP.
    const int tp = std::max(1, plan.parallel.tp);
    const int padded = (m.vocab + tp - 1) / tp * tp;
    f->add("--tokenizer-type", "NullTokenizer");
    f->add("--vocab-size", std::max(1, m.vocab - 1));
    f->add("--padded-vocab-size", padded);
    if (padded != m.vocab)
        warnings->push_back("the vocabulary (" + std::to_string(m.vocab) +
                            " tokens) is written as --padded-vocab-size " + std::to_string(padded) +
                            ", the next multiple of tp: Megatron splits the embedding's rows "
                            "evenly over TP ranks");
    if (m.isMoe()) {
        f->add("--num-experts", m.experts);
        f->add("--moe-router-topk", m.experts_per_token);
        // The plan's dispatcher, always written: Megatron's default is allgather, the plan's
        // auto alltoall (arguments.py: "We recommend using 'alltoall' when applying expert
        // parallelism").
        switch (plan.training.moe_dispatcher) {
        case MoeDispatcher::Auto:
        case MoeDispatcher::AllToAll:
            f->add("--moe-token-dispatcher-type", "alltoall");
            break;
        case MoeDispatcher::AllGather:
            f->add("--moe-token-dispatcher-type", "allgather");
            break;
        case MoeDispatcher::DeepEP:
            f->add("--moe-token-dispatcher-type", "flex");
            f->add("--moe-enable-deepep");
            break;
        }
        // The engine costs the routed experts as grouped GEMMs (Megatron-Core's default,
        // moe_grouped_gemm False, runs them one by one in a SequentialMLP).
        f->add("--moe-grouped-gemm");
        if (plan.training.moe_router_fusion)
            f->add("--moe-router-fusion");
        if (m.capacity_factor > 0)
            f->add("--moe-expert-capacity-factor", units::formatNumber(m.capacity_factor));
        if (m.expert_ffn_hidden > 0)
            f->add("--moe-ffn-hidden-size", m.expert_ffn_hidden);
        if (m.shared_expert_ffn_hidden > 0)
            f->add("--moe-shared-expert-intermediate-size", m.shared_expert_ffn_hidden);
        if (!m.moe_layer_pattern.empty())
            f->add("--moe-layer-freq", patternList(m.moe_layer_pattern));
        else if (m.dense_layers > 0)
            f->add("--moe-layer-freq", "([0]*" + std::to_string(m.dense_layers) + "+[1]*" +
                                           std::to_string(m.moeLayers()) + ")");
    }
    if (m.sliding_window > 0) {
        // Megatron Core's window (left, right) and the layers that keep it (1: the window).
        f->add("--window-size", "(" + std::to_string(m.sliding_window) + ",0)");
        if (!m.sliding_pattern.empty())
            f->add("--window-attn-skip-freq", patternList(m.sliding_pattern));
    }
    if (m.attention_sinks)
        warnings->push_back("attention sinks are not written: add Megatron's "
                            "--softmax-type learnable by hand");
    if (m.mtp_layers > 0)
        f->add("--mtp-num-layers", m.mtp_layers);
    if (m.isMla())
        warnings->push_back("multi-head latent attention (kv_lora_rank " +
                            std::to_string(m.kv_lora_rank) +
                            ") is not written: the flags describe ordinary attention with the "
                            "same heads; add Megatron's MLA flags by hand");
}

/// "t*N" for N decoder layers ("t" for one, "" for none).
std::string layerRun(int n)
{
    return n <= 0 ? std::string() : n == 1 ? std::string("t") : "t*" + std::to_string(n);
}

/// The pipeline split as Megatron-LM takes it. Megatron Core (TransformerConfig and
/// validate_args at the pinned commit) accepts --num-virtual-stages-per-pipeline-rank and
/// --decoder-first/last-pipeline-num-layers only when every rank's layer count (first, last
/// and the even middle) divides by the virtual stages and the layers divide over the ranks;
/// any other split is written as --pipeline-model-parallel-layout, which names the layers of
/// every virtual stage (stage v * pp + r is rank r's v-th; E the embedding, L the loss).
void pipelineFlags(const Plan& plan, Flags* f)
{
    const ParallelLayout& p = plan.parallel;
    if (p.pp <= 1)
        return;
    const std::vector<int> counts = stageLayerCounts(plan.model, p);
    if (counts.size() != static_cast<size_t>(p.pp))
        return; // validatePlan refuses such a plan before export
    const int vp = std::max(1, p.interleave);
    const size_t last = counts.size() - 1;
    // The middle ranks (all but first and last; for pp 2, the last stands in for them).
    const int middle = p.pp > 2 ? counts[1] : counts[last];
    bool middleEven = true;
    for (size_t i = 1; i < last; ++i)
        middleEven = middleEven && counts[i] == middle;
    const bool writeFirst = counts.front() != middle || p.first_stage_layers > 0;
    const bool writeLast = p.pp > 2 && (counts[last] != middle || p.last_stage_layers > 0);
    const bool divides = counts.front() % vp == 0 && counts[last] % vp == 0 && middle % vp == 0;
    if (middleEven && divides) {
        if (vp > 1)
            f->add("--num-virtual-stages-per-pipeline-rank", vp);
        if (writeFirst)
            f->add("--decoder-first-pipeline-num-layers", counts.front());
        if (writeLast)
            f->add("--decoder-last-pipeline-num-layers", counts[last]);
        return;
    }
    std::string layout;
    for (int v = 0; v < vp; ++v) {
        for (int r = 0; r < p.pp; ++r) {
            const int n = counts[static_cast<size_t>(r)];
            const int chunk = n / vp + (v < n % vp ? 1 : 0); // the larger chunks first
            if (!layout.empty())
                layout += "|";
            if (v == 0 && r == 0)
                layout += "E";
            layout += layerRun(chunk);
            if (v == vp - 1 && r == p.pp - 1)
                layout += "L";
        }
    }
    f->add("--pipeline-model-parallel-layout", layout);
}

void parallelFlags(const Plan& plan, Flags* f, std::vector<std::string>* warnings)
{
    const ParallelLayout& p = plan.parallel;
    if (p.cp > 1 && plan.training.seq_len % (2 * p.cp) != 0)
        warnings->push_back("seq_len " + std::to_string(plan.training.seq_len) +
                            " is not a multiple of 2 x cp = " + std::to_string(2 * p.cp) +
                            ", which Megatron-LM's context parallelism requires");
    f->add("--tensor-model-parallel-size", p.tp);
    f->add("--pipeline-model-parallel-size", p.pp);
    f->add("--context-parallel-size", p.cp);
    if (p.ep > 1)
        f->add("--expert-model-parallel-size", p.ep);
    if (plan.model.isMoe() && p.expert_tp > 0)
        f->add("--expert-tensor-parallel-size", p.expert_tp);
    if (p.ep_overlap == EpOverlap::A2a)
        f->add("--overlap-moe-expert-parallel-comm");
    if (p.sequence_parallel)
        f->add("--sequence-parallel");
    pipelineFlags(plan, f);
    if (p.recompute == Recompute::Selective) {
        f->add("--recompute-granularity", "selective");
        if (p.recompute_modules != 0) // none: Megatron-Core's default, core_attn
            f->addList("--recompute-modules",
                       flagNames(kRecomputeModuleNames, p.recompute_modules));
    } else if (p.recompute == Recompute::Full) {
        f->add("--recompute-granularity", "full");
        f->add("--recompute-method", "uniform");
        f->add("--recompute-num-layers", 1);
    }
    f->add("--micro-batch-size", p.micro_batch);
    f->add("--global-batch-size", p.global_batch);
    if (p.zero == 1 || p.zero == 2) {
        f->add("--use-distributed-optimizer");
        if (p.zero == 2)
            warnings->push_back("ZeRO-2 is written as --use-distributed-optimizer, Megatron's "
                                "ZeRO-1: optimizer state sharded, gradients reduce-scattered "
                                "but their buffer kept whole on every rank");
    } else if (p.zero == 3) {
        // The required flags of Megatron-LM's docs/discussions/megatron-fsdp-user-guide/
        // megatron-fsdp-user-guide.md (at commit f6f94c7); validate_args refuses any
        // checkpoint format but fsdp_dtensor.
        f->add("--use-megatron-fsdp");
        f->add("--data-parallel-sharding-strategy", "optim_grads_params");
        f->add("--no-gradient-accumulation-fusion");
        f->add("--use-distributed-optimizer");
        f->add("--ckpt-format", "fsdp_dtensor");
        warnings->push_back("ZeRO-3 is written as Megatron FSDP (--use-megatron-fsdp "
                            "--data-parallel-sharding-strategy optim_grads_params); check that "
                            "your Megatron-LM runs it with this TP/PP layout");
        if (p.zero3_prefetch != 1)
            warnings->push_back("zero3_prefetch " + std::to_string(p.zero3_prefetch) +
                                " has no Megatron-LM flag: Megatron FSDP prefetches on its own");
    }
    if (p.dp_overlap) {
        f->add("--overlap-grad-reduce");
        if (p.zero >= 1)
            f->add("--overlap-param-gather");
    }
    if (tpOverlapActive(plan) && p.sequence_parallel)
        f->add("--tp-comm-overlap");
    else if (tpOverlapActive(plan))
        warnings->push_back("TP communication overlap is not written: Megatron-LM's "
                            "--tp-comm-overlap needs --sequence-parallel, which the plan has off");
    // HSDP: the distributed optimizer as dp x cp / dp_shard instances, each sharding over
    // dp_shard ranks (--num-distributed-optimizer-instances).
    if (p.dp_shard > 0 && p.dp_shard != p.dp * p.cp) {
        if (p.zero == 1 || p.zero == 2)
            f->add("--num-distributed-optimizer-instances", p.dp * p.cp / p.dp_shard);
        else
            warnings->push_back("dp_shard " + std::to_string(p.dp_shard) +
                                " (HSDP: shard groups smaller than DP x CP) is not written "
                                "for ZeRO-" +
                                std::to_string(p.zero) + ": " +
                                (p.zero == 3 ? "Megatron FSDP shards parameters, gradients and "
                                               "optimizer state over all "
                                             : "gradients are all-reduced over all ") +
                                std::to_string(p.dp * p.cp) + " DP x CP ranks");
    }
    using D = ParallelDim;
    const std::array<D, 4> megatron{D::TP, D::CP, D::DP, D::PP};
    const std::array<D, 4> tpPpDp{D::TP, D::CP, D::PP, D::DP};
    if (p.rank_order == tpPpDp)
        f->add("--use-tp-pp-dp-mapping");
    else if (p.rank_order != megatron)
        warnings->push_back("the rank order (innermost first) is neither Megatron's tp-cp-dp-pp "
                            "nor tp-cp-pp-dp (--use-tp-pp-dp-mapping): written as tp-cp-dp-pp");
}

void trainingFlags(const Plan& plan, Flags* f, std::vector<std::string>* warnings)
{
    const TrainingSettings& t = plan.training;
    switch (t.dtype) {
    case Dtype::BF16:
        f->add("--bf16");
        break;
    case Dtype::FP16:
        f->add("--fp16");
        break;
    case Dtype::FP8:
        f->add("--bf16");
        f->add("--fp8-format", "hybrid");
        // Megatron-LM's --fp8-recipe (megatron/training/arguments.py at 000c4ac: delayed, the
        // default, tensorwise, mxfp8, blockwise); auto is Megatron's default, so no flag.
        if (t.fp8_recipe != Fp8Recipe::Auto)
            f->add("--fp8-recipe",
                   t.fp8_recipe == Fp8Recipe::Current ? "tensorwise" : fp8RecipeName(t.fp8_recipe));
        if (t.fp8_param_gather)
            f->add("--fp8-param-gather");
        break;
    case Dtype::TF32:
        warnings->push_back("dtype tf32 has no Megatron-LM flag: written as fp32 (no precision "
                            "flag); TF32 matmuls follow PyTorch's settings");
        break;
    case Dtype::FP32:
        break;
    }
    if (t.dtype == Dtype::BF16 && gradReduceBytes(plan) == 2)
        f->add("--grad-reduce-in-bf16");
    if (t.dtype != Dtype::BF16 && t.grad_reduce_bytes != 0)
        warnings->push_back("grad_reduce_bytes " + std::to_string(t.grad_reduce_bytes) +
                            " is not written: Megatron-LM reduces in the training dtype here");
    f->add("--optimizer", t.optimizer == Optimizer::Adam ? "adam" : "sgd");
    // bf16 moments: Megatron-Core's precision-aware optimizer (arguments.py at d98e8a64:
    // --exp-avg-dtype and --exp-avg-sq-dtype, fp32 by default, read only with it).
    if (t.optimizer_state_bytes == 2) {
        f->add("--use-precision-aware-optimizer");
        f->add("--exp-avg-dtype", "bf16");
        f->add("--exp-avg-sq-dtype", "bf16");
    }
    // arguments.py has no default --lr (None), which the learning-rate scheduler cannot take.
    f->add("--lr", "3e-4");
    f->add("--min-lr", "3e-5");
    f->add("--lr-decay-style", "cosine");
    warnings->push_back("the learning rate is not a plan setting: --lr 3e-4 --min-lr 3e-5 "
                        "--lr-decay-style cosine are placeholders (Megatron-LM has no default "
                        "--lr); set your own");
    switch (resolvedAttention(plan)) {
    case AttentionKernel::Flash2:
    case AttentionKernel::Flash3:
        f->add("--attention-backend", "flash");
        break;
    case AttentionKernel::Cudnn:
        f->add("--attention-backend", "fused");
        break;
    case AttentionKernel::Unfused:
        f->add("--attention-backend", "unfused");
        break;
    case AttentionKernel::Sdpa:
    case AttentionKernel::Auto:
        warnings->push_back("attention sdpa (PyTorch SDPA) is not a Megatron-LM backend: "
                            "written as --attention-backend auto");
        f->add("--attention-backend", "auto");
        break;
    case AttentionKernel::Triton:
        warnings->push_back("attention triton (Triton fused attention) is not a Megatron-LM "
                            "backend: written as --attention-backend auto");
        f->add("--attention-backend", "auto");
        break;
    }
    if (t.attention == AttentionKernel::Flash3)
        warnings->push_back("attention flash3: Megatron's 'flash' backend runs the "
                            "FlashAttention version installed; install FlashAttention-3");
    // CUDA graphs as Megatron-Core captures them: a per-layer capture through Transformer
    // Engine (with the plan's scopes), or the whole step.
    // Transformer Engine's RNG tracker is required for CUDA graphs (Megatron-Core
    // model_parallel_config.py: use_te_rng_tracker, --te-rng-tracker).
    if (t.cuda_graphs != CudaGraphs::None)
        f->add("--te-rng-tracker");
    if (t.cuda_graphs == CudaGraphs::Full) {
        f->add("--cuda-graph-impl", "local");
        f->addList("--cuda-graph-scope", {"full_iteration"});
    } else if (t.cuda_graphs == CudaGraphs::Layers) {
        f->add("--cuda-graph-impl", "transformer_engine");
        const std::vector<std::string> scopes = cudaGraphScopeNames(t.cuda_graph_scope);
        // The pinned release's --cuda-graph-scope takes one of full, attn, full_iteration;
        // the MoE scopes came with Megatron-LM's list of them, --cuda-graph-modules (main at
        // d98e8a64, 2026; --cuda-graph-scope there is its hidden older spelling).
        if (t.cuda_graph_scope == kGraphAttn) {
            f->addList("--cuda-graph-scope", scopes);
        } else if (!scopes.empty()) {
            f->addList("--cuda-graph-modules", scopes);
            warnings->push_back("cuda_graph_scope is written as --cuda-graph-modules, which "
                                "Megatron-LM has since 2026 (main at d98e8a64); the pinned "
                                "release takes --cuda-graph-scope full, attn or full_iteration");
        }
    }
    if (t.train_tokens > 0)
        f->add("--train-samples", integerText(std::ceil(t.train_tokens / std::max(1, t.seq_len))));
    else
        warnings->push_back("train_tokens is not given: --train-samples is not written; give "
                            "--train-samples or --train-iters before launching");
    if (resolvedKernelStyle(plan) == KernelStyle::Eager)
        warnings->push_back("kernels eager (PyTorch eager element-wise work) has no Megatron-LM "
                            "flag: Megatron runs its fused kernels, so the plan's eager step time "
                            "overstates it");
}

} // namespace

void exportMegatron(const Plan& plan, LaunchConfig* out)
{
    LaunchConfig& config = *out;
    config.release = launch::kMegatronRelease;
    Flags flags;
    std::vector<std::string> warnings = config.warnings;
    modelFlags(plan, &flags, &warnings);
    parallelFlags(plan, &flags, &warnings);
    trainingFlags(plan, &flags, &warnings);
    flags.add("--mock-data");
    // The script is what starts the job (its torchrun line carries the flags).
    const int nodes = launch::launchShape(plan).nodes;
    config.launcher = nodes > 1 ? "NODE_RANK=<0.." + std::to_string(nodes - 1) +
                                      "> MASTER_ADDR=<node 0> bash " + config.file_name +
                                      ", on each of the " + std::to_string(nodes) + " nodes"
                                : "bash " + config.file_name;
    config.warnings = warnings;

    std::string text = "#!/bin/bash\n";
    text += launch::headerComment(plan, config.release, "# ");
    text += "# Run from a Megatron-LM checkout: " + config.launcher + ".\n";
    text += "# --mock-data trains on generated tokens: replace it with --data-path and your "
            "tokenizer.\n";
    for (const std::string& w : warnings)
        text += "# warning: " + launch::oneLine(w) + "\n";
    text += "set -euo pipefail\n";
    // validate_args, before Blackwell: TP or CP needs CUDA_DEVICE_MAX_CONNECTIONS=1, and
    // Megatron FSDP refuses it.
    const ParallelLayout& p = plan.parallel;
    if (p.zero != 3 && (p.tp > 1 || p.cp > 1))
        text += "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
    text += launch::torchrunLine(plan, "pretrain_gpt.py");
    for (const auto& [flag, values] : flags.list) {
        text += " \\\n    " + flag;
        for (const std::string& value : values)
            text += " " + shellWord(value);
    }
    text += "\n";
    config.text = text;
}

} // namespace paraplan
