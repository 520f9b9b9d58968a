#include "stagememory.h"

#include <algorithm>
#include <vector>

namespace paraplan {

using layercost::activationBytesPerLayer;
using layercost::paramsPerLayerPerGpu;

double activationBytes(Dtype dtype)
{
    return dtype == Dtype::FP32 || dtype == Dtype::TF32 ? 4 : 2;
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
    t.inFlightScale =
        p.interleave > 1 ? 1.0 + double(p.pp - 1) / (double(p.pp) * p.interleave) : 1.0;
    t.weightBytes = c.actBytes;
    t.gradBytes = c.plan.figures.grad_bytes.value;
    const bool mixed = c.actBytes == 2;
    t.optimizerBytes =
        c.plan.training.optimizer == Optimizer::Adam ? (mixed ? 12 : 8) : (mixed ? 8 : 4);
    t.shardRanks = p.shardRanks();
    const double shard = t.shardRanks;
    t.paramShard = p.zero >= 3 && p.pp == 1 ? shard : 1;
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
    t.logitsBytes = c.tokens * m.vocab / p.tp * (c.actBytes + 4);
    t.sequenceParallelBytes = c.sp ? c.tokens * m.hidden * c.actBytes : 0.0;
    // Transformer Engine keeps each FP8 weight in both usages, row-wise for the forward and
    // transposed (or column-wise scaled) for dgrad, from a step's first micro-batch on (an
    // assumption for Blackwell's tensor-wise recipes, whose GEMMs would not need the second);
    // torchao casts at every call and keeps no copy past the layer.
    const Fp8Recipe recipe = resolvedFp8Recipe(c.plan);
    const double scales = recipe == Fp8Recipe::Mxfp8       ? 2 / 32.0
                          : recipe == Fp8Recipe::Blockwise ? 2 * 4 / 16384.0
                                                           : 0.0;
    t.fp8CopyBytes = recipe != Fp8Recipe::Auto && !pytorchFramework(c.plan) ? 2 + scales : 0.0;
    // ZeRO-3 at a shard group of one rank shards nothing: no gathered copies to hold.
    t.zero3GatherBytes =
        p.shardingZero() >= 3 && p.pp == 1
            ? (1 + p.zero3_prefetch) * std::max(t.denseParams, t.moeParams) * t.weightBytes
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

} // namespace paraplan
