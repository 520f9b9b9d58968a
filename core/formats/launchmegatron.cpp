// A plan as Megatron-LM pretrain_gpt.py flags in a torchrun script. The option names are those
// of megatron/training/arguments.py at the commit launch::kMegatronRelease names; the test
// tst_launch checks every flag written against that list (tests/data/launch/).
#include "launchconfigdetail.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace paraplan {
namespace {

using launch::integerText;

/// Flags in the order written; an empty value: a store_true switch.
struct Flags
{
    std::vector<std::pair<std::string, std::string>> list;
    void add(const std::string& flag, const std::string& value = {})
    {
        list.emplace_back(flag, value);
    }
    void add(const std::string& flag, long long value) { add(flag, std::to_string(value)); }
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
    if (m.mlp == MlpKind::SwiGLU)
        f->add("--swiglu");
    if (!m.tied_embeddings)
        f->add("--untie-embeddings-and-output-weights");
    if (!m.biases)
        f->add("--disable-bias-linear");
    if (!m.dropout) {
        f->add("--attention-dropout", "0");
        f->add("--hidden-dropout", "0");
    }
    // The vocabulary: Megatron takes its size from the tokenizer; NullTokenizer takes it here.
    f->add("--tokenizer-type", "NullTokenizer");
    f->add("--vocab-size", m.vocab);
    if (m.isMoe()) {
        f->add("--num-experts", m.experts);
        f->add("--moe-router-topk", m.experts_per_token);
        if (m.expert_ffn_hidden > 0)
            f->add("--moe-ffn-hidden-size", m.expert_ffn_hidden);
        if (m.shared_expert_ffn_hidden > 0)
            f->add("--moe-shared-expert-intermediate-size", m.shared_expert_ffn_hidden);
        if (m.dense_layers > 0)
            f->add("--moe-layer-freq", "([0]*" + std::to_string(m.dense_layers) + "+[1]*" +
                                           std::to_string(m.moeLayers()) + ")");
    }
    if (m.isMla())
        warnings->push_back("multi-head latent attention (kv_lora_rank " +
                            std::to_string(m.kv_lora_rank) +
                            ") is not written: the flags describe ordinary attention with the "
                            "same heads; add Megatron's MLA flags by hand");
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
    if (p.interleave > 1)
        f->add("--num-virtual-stages-per-pipeline-rank", p.interleave);
    if (p.sequence_parallel)
        f->add("--sequence-parallel");
    // Stages: an even split, or first/last counts with the rest even; anything else warns.
    int first = p.first_stage_layers;
    int last = p.last_stage_layers;
    if (!p.stage_layers.empty() && p.pp > 1) {
        const std::vector<int>& s = p.stage_layers;
        bool middleEven = true;
        for (size_t i = 2; i + 1 < s.size(); ++i)
            middleEven = middleEven && s[i] == s[1];
        if (middleEven && p.pp > 2) {
            first = s.front();
            last = s.back();
        } else if (p.pp == 2) {
            first = s.front();
        } else {
            std::string list;
            for (int n : s)
                list += (list.empty() ? "" : ", ") + std::to_string(n);
            warnings->push_back("stage_layers [" + list +
                                "] differ in the middle stages; Megatron-LM splits the middle "
                                "stages evenly: written as an even split");
            first = last = 0;
        }
        const int middle = p.pp - (first > 0) - (last > 0);
        const int rest = plan.model.layers - first - last;
        if ((first || last) && middle > 0 && rest % middle != 0) {
            warnings->push_back("stage_layers cannot be written as first/last-stage counts "
                                "with an even middle: written as an even split");
            first = last = 0;
        }
    }
    if (first > 0)
        f->add("--decoder-first-pipeline-num-layers", first);
    if (last > 0)
        f->add("--decoder-last-pipeline-num-layers", last);
    if (p.recompute == Recompute::Selective) {
        f->add("--recompute-granularity", "selective");
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
        f->add("--use-megatron-fsdp");
        f->add("--data-parallel-sharding-strategy", "optim_grads_params");
        f->add("--ckpt-format", "fsdp_dtensor"); // validate_args: Megatron FSDP's only format
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
    if (p.dp_shard > 0 && p.dp_shard != p.dp * p.cp)
        warnings->push_back("dp_shard " + std::to_string(p.dp_shard) +
                            " (HSDP: shard groups smaller than DP x CP) is not written; the "
                            "distributed optimizer shards over all " +
                            std::to_string(p.dp * p.cp) + " DP x CP ranks");
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
    }
    if (t.attention == AttentionKernel::Flash3)
        warnings->push_back("attention flash3: Megatron's 'flash' backend runs the "
                            "FlashAttention version installed; install FlashAttention-3");
    if (t.train_tokens > 0)
        f->add("--train-samples", integerText(std::ceil(t.train_tokens / std::max(1, t.seq_len))));
    else
        warnings->push_back("train_tokens is not given: --train-samples is not written; give "
                            "--train-samples or --train-iters before launching");
    if (resolvedKernelStyle(plan) == KernelStyle::Eager)
        warnings->push_back("kernels eager (PyTorch eager element-wise work) has no Megatron-LM "
                            "flag: Megatron runs its fused kernels, so the plan's eager step time "
                            "overstates it");
    if (t.stack == TrainingStack::PyTorch)
        warnings->push_back("the plan's stack is pytorch (FSDP-style); these are Megatron-LM "
                            "flags, whose step time the plan did not model");
}

} // namespace

LaunchConfig exportMegatron(const Plan& plan, const HardwareCatalog& catalog)
{
    LaunchConfig config;
    config.target = LaunchTarget::Megatron;
    config.suffix = ".sh";
    config.release = launch::kMegatronRelease;
    config.error = launch::planError(plan, catalog);
    if (!config.error.empty())
        return config;
    Flags flags;
    std::vector<std::string> warnings = launch::commonWarnings(plan);
    modelFlags(plan, &flags, &warnings);
    parallelFlags(plan, &flags, &warnings);
    trainingFlags(plan, &flags, &warnings);
    flags.add("--mock-data");
    config.launcher = launch::torchrunLine(plan, "pretrain_gpt.py");
    config.warnings = warnings;

    std::string text = "#!/bin/bash\n";
    text += launch::headerComment(plan, config.release, "# ");
    text += "# Run from a Megatron-LM checkout on every node";
    text +=
        launch::launchShape(plan).nodes > 1 ? " (NODE_RANK, MASTER_ADDR set per node).\n" : ".\n";
    text += "# --mock-data trains on generated tokens: replace it with --data-path and your "
            "tokenizer.\n";
    for (const std::string& w : warnings)
        text += "# warning: " + w + "\n";
    text += "set -euo pipefail\n";
    // validate_args, before Blackwell: TP or CP needs CUDA_DEVICE_MAX_CONNECTIONS=1, and
    // Megatron FSDP refuses it.
    const ParallelLayout& p = plan.parallel;
    if (p.zero != 3 && (p.tp > 1 || p.cp > 1))
        text += "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
    text += config.launcher;
    for (const auto& [flag, value] : flags.list)
        text += " \\\n    " + flag + (value.empty() ? "" : " " + shellWord(value));
    text += "\n";
    config.text = text;
    return config;
}

} // namespace paraplan
