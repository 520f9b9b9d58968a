#include "searchmemory.h"

#include "layercost.h"
#include "units.h"

#include <algorithm>

namespace paraplan {

LayoutMemory::LayoutMemory(const Plan& base, const GpuSpec& gpu)
    : m_count(countParameters(base.model)), m_hbmBytes(units::bytesFromGiB(gpu.hbm_GiB))
{
}

// The memory half of the engine's Evaluation::setup(), stageSetup() and stages()
// (core/engine/stepmodel.cpp), term for term and in the same order.
double LayoutMemory::fullestStageBytes(const Plan& plan) const
{
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    const TrainingSettings& tr = plan.training;
    layercost::Context c{plan, m, p};
    c.actBytes = tr.dtype == Dtype::FP32 || tr.dtype == Dtype::TF32 ? 4 : 2;
    c.seqLocal = double(tr.seq_len) / p.cp;
    c.tokens = p.micro_batch * c.seqLocal;
    c.sp = p.sequence_parallel && p.tp > 1;
    c.flash = resolvedAttention(plan) != AttentionKernel::Unfused;
    const double activation = c.tokens * m.hidden * c.actBytes;

    const std::vector<int> layersPerStage = stageLayerCounts(m, p);
    const int microbatches = p.microBatches();
    const double inFlightScale =
        p.interleave > 1 ? 1.0 + double(p.pp - 1) / (double(p.pp) * p.interleave) : 1.0;
    const double wBytes = c.actBytes;
    const double gradBytes = plan.figures.grad_bytes.value;
    const bool mixed = c.actBytes == 2;
    const double optBytes = tr.optimizer == Optimizer::Adam ? (mixed ? 12 : 8) : (mixed ? 8 : 4);
    const double shard = p.shardRanks();
    const double denseAct = layercost::activationBytesPerLayer(c, false, p.recompute);
    const double moeAct = m.isMoe() ? layercost::activationBytesPerLayer(c, true, p.recompute) : 0;
    const double recomputeWorkingSet =
        p.recompute == Recompute::Full
            ? std::max(layercost::activationBytesPerLayer(c, false, Recompute::None),
                       m.isMoe() ? layercost::activationBytesPerLayer(c, true, Recompute::None)
                                 : 0.0)
            : 0.0;
    const double denseParams = layercost::paramsPerLayerPerGpu(m, m_count, p, false);
    const double moeParams = m.isMoe() ? layercost::paramsPerLayerPerGpu(m, m_count, p, true) : 0;
    const double paramShard = p.zero >= 3 && p.pp == 1 ? shard : 1;
    const double gradShard = p.zero >= 2 ? shard : 1;
    const double optShard = p.zero >= 1 ? shard : 1;

    double fullest = 0;
    int layerIndex = 0;
    int lastLayers = -1;
    int lastDense = -1;
    for (int i = 0; i < p.pp; ++i) {
        const int layers = layersPerStage[static_cast<size_t>(i)];
        const int denseEnd = m.isMoe() ? m.dense_layers : m.layers;
        const int denseHere = std::max(0, std::min(layerIndex + layers, denseEnd) - layerIndex);
        const int moeLayers = layers - denseHere;
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
        double params = denseHere * denseParams + moeLayers * moeParams;
        if (i == 0)
            params += m_count.embedding / p.tp;
        if (i == p.pp - 1) {
            params += m_count.final_norm;
            if (!m.tied_embeddings || p.pp > 1)
                params += double(m.vocab) * m.hidden / p.tp;
        }
        const double weights = params * wBytes / paramShard;
        const double grads = params * gradBytes / gradShard;
        const double optimizer = params * optBytes / optShard;
        const double inFlight = std::min<double>(microbatches, p.pp - i) * inFlightScale;
        const double activations = (denseHere * denseAct + moeLayers * moeAct) * inFlight;
        double buffers = recomputeWorkingSet;
        if (i == p.pp - 1)
            buffers += c.tokens * m.vocab / p.tp * (c.actBytes + 4);
        if (c.sp)
            buffers += activation;
        if (p.zero >= 3 && p.pp == 1)
            buffers += (1 + p.zero3_prefetch) * std::max(denseParams, moeParams) * wBytes;
        const double total = weights + grads + optimizer + activations + buffers;
        fullest = std::max(fullest, total);
    }
    return fullest;
}

} // namespace paraplan
