#include "stagememory.h"

#include "units.h"

#include <algorithm>
#include <string>
#include <vector>

namespace paraplan {

using layercost::activationBytesPerLayer;
using layercost::paramsPerLayerPerGpu;

double activationBytes(Dtype dtype)
{
    return dtype == Dtype::FP32 || dtype == Dtype::TF32 ? 4 : 2;
}

ModelStateBytes modelStateBytes(const Plan& plan)
{
    const TrainingSettings& t = plan.training;
    const ParallelLayout& p = plan.parallel;
    const bool mixed = activationBytes(t.dtype) == 2;
    const double compute = mixed ? 2 : 4;
    // Adam keeps exp_avg and exp_avg_sq, SGD one momentum, in optimizer_dtype (auto: fp32, the
    // default of Megatron-Core's OptimizerConfig exp_avg_dtype and of torch.optim's states in
    // the fp32 parameter's dtype).
    const double moment = t.optimizer_state_bytes > 0 ? t.optimizer_state_bytes : 4;
    const double moments = (t.optimizer == Optimizer::Adam ? 2 : 1) * moment;
    ModelStateBytes b;
    b.moments = moments;
    b.gatheredCopy = compute;
    const double userGrads =
        plan.figures.grad_bytes.origin == Origin::UserEntry ? plan.figures.grad_bytes.value : 0;
    switch (t.framework) {
    case TrainingFramework::Megatron:
    case TrainingFramework::DeepSpeed: {
        // 16-bit model weights with an fp32 master copy in the optimizer (fp32 training: the
        // weights are the master). Megatron-Core's gradient buffer holds main_grad in the
        // reduction dtype (param_and_grad_buffer.py: torch.float if grad_reduce_in_fp32, else
        // the param dtype; Megatron-LM forces fp32 for bf16 unless --grad-reduce-in-bf16);
        // DeepSpeed keeps 16-bit gradients (Rajbhandari et al. 2020, section 3: 2 + 2 + 12
        // bytes per parameter).
        b.weights = compute;
        b.master = mixed ? 4 : 0;
        const bool deepspeed = t.framework == TrainingFramework::DeepSpeed;
        const double autoGrads = !mixed ? 4 : deepspeed ? 2 : 4;
        b.grads = t.grad_reduce_bytes > 0 ? t.grad_reduce_bytes : autoGrads;
        break;
    }
    case TrainingFramework::Torchtitan:
    case TrainingFramework::PytorchFsdp: {
        // The parameter is kept in fp32 and is the optimizer's own (FSDP2's
        // MixedPrecisionPolicy and FSDP1's MixedPrecision cast a 16-bit copy to compute;
        // torch.autocast under DDP); gradients land in the parameter's dtype.
        b.weights = 4;
        b.master = 0;
        b.grads = 4;
        const int zero = p.shardingZero();
        // The unsharded copy held for the backward: FSDP's gathered parameters when it does
        // not reshard after the forward (ZeRO-2; ZeRO-3 under a pipeline, as torchtitan
        // does), or, without FSDP, autocast's 16-bit casts the GEMMs save for the backward.
        const bool held = zero == 2 || (zero >= 3 && p.pp > 1) || (zero < 2 && mixed);
        b.heldCopy = held ? compute : 0;
        // DDP's buckets: a second copy of the gradients unless gradient_as_bucket_view
        // (default False; torch.nn.parallel.DistributedDataParallel documentation).
        b.buckets = zero == 0 && p.dp * p.cp > 1 ? 4 : 0;
        break;
    }
    }
    if (userGrads > 0)
        b.grads = userGrads;
    return b;
}

double lossBytesPerLogit(const Plan& plan)
{
    // Megatron-Core's vocab-parallel cross entropy casts the 16-bit logits to fp32 once and
    // works in place, saving the softmax for the backward (tensor_parallel/cross_entropy.py):
    // the logits and one fp32 copy. PyTorch's cross_entropy on logits cast with .float()
    // (torchtitan train.py at 9dec370; Hugging Face models under autocast) saves the fp32
    // log-softmax, and its backward holds it with the gradient that reaches it and the one it
    // returns, three fp32 tensors, after the 16-bit logits are freed (torchtitan: `del pred`
    // before loss.backward()); the forward's 2 + 4 + 4 is less.
    if (!pytorchFramework(plan))
        return activationBytes(plan.training.dtype) + 4;
    return 3 * 4;
}

void setMemoryContext(layercost::Context& c, AttentionKernel attention)
{
    c.actBytes = activationBytes(c.plan.training.dtype);
    c.seqLocal = double(c.plan.training.seq_len) / c.p.cp;
    c.tokens = c.p.micro_batch * c.seqLocal;
    c.sp = c.p.sequence_parallel && c.p.tp > 1;
    c.flash = attention != AttentionKernel::Unfused;
}

void setLayoutMemoryTerms(const layercost::Context& c, const ParameterCount& count,
                          LayoutMemoryTerms& t)
{
    const ModelSpec& m = c.m;
    const ParallelLayout& p = c.p;
    t.pp = p.pp;
    t.microbatches = p.microBatches();
    t.interleave = p.interleave;
    const ModelStateBytes bytes = modelStateBytes(c.plan);
    t.weightBytes = bytes.weights;
    t.gradBytes = bytes.grads;
    t.optimizerBytes = bytes.master + bytes.moments;
    t.heldCopyBytes = bytes.heldCopy;
    t.bucketBytes = bytes.buckets;
    t.gatherBytes = bytes.gatheredCopy;
    t.shardRanks = p.shardRanks();
    const double shard = t.shardRanks;
    // Megatron's and DeepSpeed's ZeRO-3 shard the 16-bit weights (without a pipeline); FSDP
    // shards the kept fp32 parameter from ZeRO-2 (SHARD_GRAD_OP, reshard_after_forward off) on.
    const bool pytorch =
        pytorchFramework(c.plan) && c.plan.training.framework != TrainingFramework::DeepSpeed;
    t.paramShard = pytorch ? (p.zero >= 2 ? shard : 1) : (p.zero >= 3 && p.pp == 1 ? shard : 1);
    t.gradShard = p.zero >= 2 ? shard : 1;
    t.optimizerShard = p.zero >= 1 ? shard : 1;
    t.denseAct = activationBytesPerLayer(c, false, p.recompute);
    t.moeAct = m.isMoe() ? activationBytesPerLayer(c, true, p.recompute) : 0;
    // Full recompute keeps one layer's full activations while that layer is recomputed.
    t.recomputeWorkingSet =
        p.recompute == Recompute::Full
            ? std::max(activationBytesPerLayer(c, false, Recompute::None),
                       m.isMoe() ? activationBytesPerLayer(c, true, Recompute::None) : 0.0)
            : 0.0;
    t.denseParams = paramsPerLayerPerGpu(m, count, p, false);
    t.moeParams = m.isMoe() ? paramsPerLayerPerGpu(m, count, p, true) : 0;
    t.moeExpertParams = m.isMoe() ? layercost::routedExpertParamsPerLayerPerGpu(m, count, p) : 0;
    // The expert data-parallel group: the ranks that hold the same experts.
    t.expertShardRanks = std::max(1, t.shardRanks * p.tp / (p.expertTp() * std::max(1, p.ep)));
    const double expertShard = t.expertShardRanks;
    t.expertParamShard = t.paramShard > 1 ? expertShard : 1;
    t.expertGradShard = t.gradShard > 1 ? expertShard : 1;
    t.expertOptimizerShard = t.optimizerShard > 1 ? expertShard : 1;
    t.embeddingParams = count.embedding / p.tp;
    // Multi-token prediction on the last stage: each module's layer (as the last layer),
    // projection and norms, and with a pipeline a copy of the embedding it looks tokens up in.
    const bool mtpMoe = m.isMoeLayer(m.layers - 1);
    t.mtpParams = 0;
    t.mtpExpertParams = 0;
    t.mtpAct = 0;
    if (m.mtp_layers > 0) {
        const double layer = mtpMoe ? t.moeParams : t.denseParams;
        t.mtpParams = m.mtp_layers * (layer + 2.0 * m.hidden * m.hidden / p.tp + 2.0 * m.hidden) +
                      (p.pp > 1 ? t.embeddingParams : 0.0);
        t.mtpExpertParams = mtpMoe ? m.mtp_layers * t.moeExpertParams : 0.0;
        t.mtpAct = m.mtp_layers * (mtpMoe ? t.moeAct : t.denseAct);
    }
    t.finalNormParams = count.final_norm;
    t.lmHeadParams = !m.tied_embeddings || p.pp > 1 ? double(m.vocab) * m.hidden / p.tp : 0.0;
    t.logitsBytes = c.tokens * m.vocab / p.tp * lossBytesPerLogit(c.plan);
    t.sequenceParallelBytes = c.sp ? c.tokens * m.hidden * c.actBytes : 0.0;
    // Transformer Engine keeps each FP8 weight in both usages, row-wise for the forward and
    // transposed (or column-wise scaled) for dgrad, from a step's first micro-batch on (an
    // assumption for Blackwell's tensor-wise recipes, whose GEMMs would not need the second);
    // torchao casts at every call and keeps no copy past the layer.
    const Fp8Recipe recipe = resolvedFp8Recipe(c.plan);
    const double scales = recipe == Fp8Recipe::Mxfp8       ? 2 / 32.0
                          : recipe == Fp8Recipe::Blockwise ? 2 * 4 / 16384.0
                                                           : 0.0;
    const bool fp8 = transformerEngineFp8(c.plan);
    t.fp8CopyBytes = fp8 ? 2 + scales : 0.0;
    t.fp8GatherSaving = 0;
    if (fp8 && c.plan.training.fp8_param_gather) {
        // FP8 weights (--fp8-param-gather): the layer's parameter is the FP8 tensor itself, the
        // transposed (or column-wise) copy beside it, no 16-bit weight; the fp32 main copy
        // stays in the optimizer (Megatron-Core distributed/param_and_grad_buffer.py: the
        // param buffer in uint8) and the all-gather moves one byte per parameter.
        t.fp8CopyBytes = 2 + scales - t.weightBytes;
        t.fp8GatherSaving = t.gatherBytes - (1 + scales / 2);
    }
    // ZeRO-3 at a shard group of one rank shards nothing: no gathered copies to hold.
    t.zero3GatherBytes =
        p.shardingZero() >= 3 && p.pp == 1
            ? (1 + p.zero3_prefetch) * std::max(t.denseParams, t.moeParams) * bytes.gatheredCopy
            : 0.0;
}

double fullestStageBytes(const Plan& plan, const ParameterCount& count)
{
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    layercost::Context c{plan, m, p};
    setMemoryContext(c, resolvedAttention(plan));
    LayoutMemoryTerms t;
    setLayoutMemoryTerms(c, count, t);
    static thread_local std::vector<int> layersPerStage;
    stageLayerCounts(m, p, &layersPerStage);

    double fullest = 0;
    StageCost st;
    int layerIndex = 0;
    int lastLayers = -1;
    int lastDense = -1;
    for (int i = 0; i < p.pp; ++i) {
        const int layers = layersPerStage[static_cast<size_t>(i)];
        const int denseHere = layerMix(m, layerIndex, layers).dense;
        layerIndex += layers;
        // A middle stage with the layers of the middle stage before it holds no more: every
        // term is that stage's but the activations, whose in-flight micro-batches do not grow
        // with the stage's index (sums and products of non-negative doubles are monotone), so
        // the fullest stage is the same without it.
        const bool middle = i > 0 && i < p.pp - 1;
        if (middle && i > 1 && layers == lastLayers && denseHere == lastDense)
            continue;
        lastLayers = middle ? layers : -1;
        lastDense = middle ? denseHere : -1;
        st.layers = layers;
        st.moe_layers = layers - denseHere;
        setStageMemory(t, st, i, denseHere);
        setStageInFlight(t, st, i, denseHere);
        fullest = std::max(fullest, st.total_bytes);
    }
    return fullest;
}

void appendMemoryWarning(const StepCost& cost, const ParallelLayout& p, const EngineFigures& f,
                         const std::string& hbmText, std::string& text)
{
    // Appended piece by piece: the numbers are short strings and `text` a reused one, so
    // that a plan that does not fit evaluates without allocating (tst_stepalloc).
    using units::formatNumber;
    using units::toGiB;
    auto atStage = [&] {
        if (p.pp > 1) {
            text += " at stage ";
            text += std::to_string(cost.fullest_stage);
        }
    };
    if (!cost.fits) {
        text += "does not fit: over by ";
        text += formatNumber(toGiB(-cost.spareBytes()));
        text += " GiB";
        atStage();
        text += " (";
        text += formatNumber(toGiB(cost.max_stage_total_bytes));
        text += " GiB at its peak + ";
        text += formatNumber(toGiB(cost.runtime_reserve_bytes));
        text += " GiB for the CUDA context and NCCL, of ";
        text += hbmText;
        text += " GiB HBM)";
        return;
    }
    text += "tight: ";
    text += formatNumber(toGiB(cost.spareBytes()));
    text += " GiB to spare";
    atStage();
    text += ", less than the caching allocator's reserve (";
    text += formatNumber(100 * f.allocator_reserve.value);
    text += "% of the peak): set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";
}

} // namespace paraplan
