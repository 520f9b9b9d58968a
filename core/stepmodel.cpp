#include "stepmodel.h"

#include "hardware.h"
#include "units.h"

#include <algorithm>
#include <cmath>

namespace paraplan {

GroupStrides groupStrides(const ParallelLayout& layout)
{
    GroupStrides strides;
    int stride = 1;
    for (ParallelDim dim : layout.rank_order) {
        switch (dim) {
        case ParallelDim::TP:
            strides.tp = stride;
            stride *= layout.tp;
            break;
        case ParallelDim::CP:
            strides.cp = stride;
            stride *= layout.cp;
            break;
        case ParallelDim::DP:
            strides.dp = stride;
            stride *= layout.dp;
            break;
        case ParallelDim::PP:
            strides.pp = stride;
            stride *= layout.pp;
            break;
        }
    }
    return strides;
}

namespace {

// Everything the per-layer cost needs, resolved once per evaluation.
struct Context
{
    const Plan& plan;
    const ModelSpec& m;
    const ParallelLayout& p;
    double peak = 0; // FLOP/s of the dtype
    double hbm = 0;  // B/s achievable
    double gemmCeiling = 0;
    double actBytes = 2; // bytes per activation element
    double seqLocal = 0; // s / cp
    double tokens = 0;   // b s / cp per micro-batch
    double headsLocal = 0;
    double kvLocal = 0;
    double d = 0;
    bool flash = true;
    bool sp = false;
};

// A GEMM of M x K by K x N (batch of them): math at the ceiling plus its memory traffic, with
// no overlap between the two (an additive roofline). `cBytes` is the output element size
// (8 for a weight gradient accumulated in fp32: read and write).
double gemmSeconds(const Context& c, double M, double K, double N, double batch = 1,
                   double cBytes = -1)
{
    if (M <= 0 || K <= 0 || N <= 0)
        return 0;
    const double a = c.actBytes;
    const double flops = 2 * M * K * N * batch;
    const double bytes = (a * M * K + a * K * N + (cBytes < 0 ? a : cBytes) * M * N) * batch;
    return flops / (c.peak * c.gemmCeiling) + bytes / c.hbm;
}

// Forward, backward (dgrad + wgrad into fp32) of one GEMM.
void addGemm(const Context& c, double M, double K, double N, double batch, double* forward,
             double* backward, double* flops)
{
    *forward += gemmSeconds(c, M, K, N, batch);
    *backward += gemmSeconds(c, M, N, K, batch) + gemmSeconds(c, K, M, N, batch, 8);
    *flops += 2 * M * K * N * batch;
}

LayerCompute layerCompute(const Context& c, bool moe)
{
    const ModelSpec& m = c.m;
    const ParallelLayout& p = c.p;
    const double t = p.tp;
    const double T = c.tokens;
    const double h = m.hidden;
    const double d = c.d;
    LayerCompute l;
    double fwd = 0;
    double bwd = 0;
    double flops = 0;

    // Attention projections.
    addGemm(c, T, h, (c.headsLocal + 2 * c.kvLocal) * d, 1, &fwd, &bwd, &flops);
    addGemm(c, T, c.headsLocal * d, h, 1, &fwd, &bwd, &flops);
    // MLP: dense, or the local experts with the tokens routed to them.
    const double up = m.mlp == MlpKind::SwiGLU ? 2 : 1;
    double mlpTokens = T;
    if (moe) {
        const double k = m.experts_per_token;
        const double localExperts = std::max(1.0, double(m.experts) / p.ep);
        const double perExpert = T * k / localExperts;      // balanced routing
        addGemm(c, T, h, m.experts, 1, &fwd, &bwd, &flops); // router
        addGemm(c, perExpert, h, up * m.expert_ffn_hidden / t, localExperts, &fwd, &bwd, &flops);
        addGemm(c, perExpert, m.expert_ffn_hidden / t, h, localExperts, &fwd, &bwd, &flops);
        mlpTokens = T * k;
    } else {
        addGemm(c, T, h, up * m.ffn_hidden / t, 1, &fwd, &bwd, &flops);
        addGemm(c, T, m.ffn_hidden / t, h, 1, &fwd, &bwd, &flops);
    }
    l.gemm_forward_s = fwd;
    l.gemm_forward_flops = flops;

    // Attention core: queries of this rank against all keys (context parallel splits queries).
    const double s = c.p.cp > 0 ? c.seqLocal * c.p.cp : c.seqLocal;
    const double batchHeads = c.p.micro_batch * c.headsLocal;
    const double coreFlops = 2 * 2 * c.seqLocal * s * d * batchHeads;
    double coreFwd = 0;
    double coreBwd = 0;
    if (c.flash) {
        // FlashAttention skips the masked half of a causal score matrix; its backward does
        // 2.5x the forward's math (it recomputes the scores).
        const double attentionPeak = c.peak * c.plan.figures.attention_fraction.value;
        coreFwd = 0.5 * coreFlops / attentionPeak;
        coreBwd = 2.5 * coreFwd;
    } else {
        double scratch = 0;
        addGemm(c, c.seqLocal, d, s, batchHeads, &coreFwd, &coreBwd, &scratch);
        addGemm(c, c.seqLocal, s, d, batchHeads, &coreFwd, &coreBwd, &scratch);
    }
    l.attention_forward_s = coreFwd;
    l.attention_forward_flops = coreFlops;

    // Memory-bound element-wise work, bytes per token (Megatron's kernels; see
    // docs/engine.md). R terms are replicated across TP ranks unless sequence parallel.
    const double r = c.sp ? 1.0 / t : 1.0;
    const double drop = m.dropout ? 1 : 0;
    const double f = moe ? m.expert_ffn_hidden : m.ffn_hidden;
    const double mlpShare = mlpTokens / T;
    const double actFwd = (m.mlp == MlpKind::SwiGLU ? 6 : 4) * f / t * mlpShare;
    const double actBwd = (m.mlp == MlpKind::SwiGLU ? 10 : 6) * f / t * mlpShare;
    const double routing = moe ? 2 * 2 * h * mlpShare / t : 0; // permute + unpermute copies
    const double scoresFwd = c.flash ? 0 : (4 + 5 * drop) * c.headsLocal * s;
    const double scoresBwd = c.flash ? 0 : (6 + 5 * drop) * c.headsLocal * s;
    const double residualFwd = (6 + drop) * h * r;
    const double residualBwd = (4 + drop) * h * r;
    const double normFwd = 4 * h * r;
    const double normBwd = 8 * h * r;
    const double ewFwd = 2 * normFwd + 2 * residualFwd + actFwd + scoresFwd + routing;
    const double ewBwd = 2 * normBwd + 2 * residualBwd + actBwd + scoresBwd + routing;
    l.elementwise_forward_bytes = ewFwd * T;
    l.elementwise_backward_bytes = ewBwd * T;
    l.elementwise_forward_s = ewFwd * T / c.hbm;

    l.forward_s = fwd + coreFwd + l.elementwise_forward_s;
    l.backward_s = bwd + coreBwd + ewBwd * T / c.hbm;
    switch (p.recompute) {
    case Recompute::None:
        break;
    case Recompute::Selective:
        // The attention core again: FlashAttention already recomputes it, so nothing extra.
        if (!c.flash)
            l.recompute_s = coreFwd + scoresFwd * T / c.hbm;
        break;
    case Recompute::Full:
        l.recompute_s = l.forward_s;
        break;
    }
    return l;
}

// Activation bytes of one layer for one micro-batch (Korthikanti et al. 2022, Table 2,
// generalised to GQA, SwiGLU, MoE, dropout-free models and FlashAttention).
double activationBytesPerLayer(const Context& c, bool moe, Recompute recompute)
{
    const ModelSpec& m = c.m;
    const double t = c.p.tp;
    const double sbh = c.tokens * m.hidden;
    const double scale = c.actBytes / 2; // the formulas count 16-bit activations
    if (recompute == Recompute::Full)
        return 2 * sbh / (c.sp ? t : 1) * scale;
    const double drop = m.dropout ? 1 : 0;
    const double g = double(m.kv_heads) / m.heads;
    const double replicated = 8 + 2 * drop;
    const double f = moe ? m.expert_ffn_hidden : m.ffn_hidden;
    const double k = moe ? m.experts_per_token : 1;
    const double act = (m.mlp == MlpKind::SwiGLU ? 6 : 4) * f / m.hidden * k;
    const double sharded = 2 + 4 * g + 2 + act;
    double perToken = replicated * (c.sp ? 1 / t : 1) + sharded / t;
    if (!c.flash && recompute == Recompute::None)
        perToken += (2 + 3 * drop) * m.heads * c.seqLocal * c.p.cp / double(m.hidden) / t;
    return perToken * sbh * scale;
}

double paramsPerLayerPerGpu(const ModelSpec& m, const ParameterCount& count,
                            const ParallelLayout& p, bool moe)
{
    const double t = p.tp;
    double params = count.attention_per_layer / t + count.norms_per_layer;
    if (moe)
        params += count.router_per_layer + count.mlp_per_layer / (t * std::min(p.ep, m.experts));
    else
        params += count.dense_mlp_per_layer / t;
    return params;
}

} // namespace

StepEngine::StepEngine(const ClusterSpec& cluster) : m_cluster(cluster), m_collectives(cluster) {}

StepCost StepEngine::evaluate(const Plan& plan) const
{
    StepCost cost;
    cost.issues = validatePlan(plan);
    if (plan.cluster.totalGpus() != m_cluster.totalGpus() ||
        plan.cluster.gpu_id != m_cluster.gpu_id)
        cost.issues.push_back({"engine-cluster", "cluster",
                               "the plan's cluster differs from the one this engine was built "
                               "for"});
    if (!cost.issues.empty())
        return cost;

    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    const TrainingSettings& tr = plan.training;
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(m_cluster.gpu_id);
    const ParameterCount count = countParameters(m);
    const GroupStrides strides = groupStrides(p);

    Context c{plan, m, p};
    c.peak = gpu->peakTflops(tr.dtype) * 1e12;
    c.hbm = units::bytesPerSecondFromGBps(gpu->hbm_GBps) * plan.figures.hbm_fraction.value;
    c.gemmCeiling = plan.figures.gemm_peak_fraction.value;
    c.actBytes = tr.dtype == Dtype::FP32 || tr.dtype == Dtype::TF32 ? 4 : 2;
    c.seqLocal = double(tr.seq_len) / p.cp;
    c.tokens = p.micro_batch * c.seqLocal;
    c.d = m.headDim();
    c.headsLocal = double(m.heads) / p.tp;
    c.kvLocal = std::max(1.0, double(m.kv_heads) / p.tp);
    c.flash = tr.flash_attention;
    c.sp = p.sequence_parallel && p.tp > 1;

    cost.dense_layer = layerCompute(c, false);
    if (m.isMoe())
        cost.moe_layer = layerCompute(c, true);

    // Collectives of one layer and one micro-batch.
    auto collective = [&](CollectiveOp op, double bytes, int ranks, int stride) {
        CollectiveRequest request;
        request.op = op;
        request.bytes = bytes;
        request.ranks = ranks;
        request.stride = stride;
        return m_collectives.evaluate(request);
    };
    const double activation = c.tokens * m.hidden * c.actBytes;
    CollectiveCost tpCost;
    double tpPerLayer = 0;
    if (p.tp > 1) {
        // Megatron: two all-reduces forward and two backward per layer (reduce-scatter +
        // all-gather pairs with sequence parallelism), two more when the forward is recomputed.
        const CollectiveOp op = c.sp ? CollectiveOp::AllGather : CollectiveOp::AllReduce;
        tpCost.group = "tp";
        tpCost.purpose = c.sp ? "sequence-parallel all-gather and reduce-scatter around "
                                "attention and MLP, forward and backward"
                              : "all-reduce after attention and MLP, forward and backward";
        tpCost.call = collective(op, activation, p.tp, strides.tp);
        tpCost.stride = strides.tp;
        const double perLayer = p.recompute == Recompute::Full ? 6 : 4;
        double each = tpCost.call.time_s;
        if (c.sp) {
            const CollectiveResult rs =
                collective(CollectiveOp::ReduceScatter, activation, p.tp, strides.tp);
            each = tpCost.call.time_s + rs.time_s; // one AG + one RS per all-reduce it replaces
        }
        tpPerLayer = perLayer * each;
        cost.tp_within_node = !m_cluster.is_torus && tpCost.call.nodes_spanned == 1;
        if (!cost.tp_within_node)
            cost.warnings.push_back("TP = " + std::to_string(p.tp) + " spans " +
                                    std::to_string(tpCost.call.nodes_spanned) +
                                    " nodes: its collectives cross the network");
    }
    CollectiveCost cpCost;
    double cpPerLayer = 0;
    if (p.cp > 1) {
        // Ring attention passes each rank's K and V chunk around the CP group (c - 1 times
        // forward); the backward passes K, V and their gradients: 3 (c - 1) sends in all.
        const double kvChunk = 2 * c.tokens * c.kvLocal * c.d * c.actBytes;
        cpCost.group = "cp";
        cpCost.purpose = "ring attention: K and V chunks (and their gradients) around the group";
        cpCost.call = collective(CollectiveOp::SendRecv, kvChunk, 2, strides.cp);
        cpCost.stride = strides.cp;
        cpPerLayer = 3.0 * (p.cp - 1) * cpCost.call.time_s;
    }
    CollectiveCost epCost;
    double epPerLayer = 0;
    if (m.isMoe() && p.ep > 1) {
        const double sendBuffer = c.tokens * m.experts_per_token * m.hidden * c.actBytes;
        epCost.group = "ep";
        epCost.purpose = "token dispatch and combine all-to-all, forward and backward";
        epCost.call = collective(CollectiveOp::AllToAll, sendBuffer, p.ep, strides.dp);
        epCost.stride = strides.dp;
        epPerLayer = (p.recompute == Recompute::Full ? 6 : 4) * epCost.call.time_s;
    }
    CollectiveCost ppCost;
    double ppPerMicrobatch = 0;
    if (p.pp > 1) {
        // One activation forward and one gradient backward per micro-batch and stage
        // boundary (scatter-gathered across the TP ranks, as Megatron does); v times with
        // interleaving.
        ppCost.group = "pp";
        ppCost.purpose = "activations forward and gradients backward between stages";
        ppCost.call = collective(CollectiveOp::SendRecv, activation / p.tp, 2, strides.pp);
        ppCost.stride = strides.pp;
        ppPerMicrobatch = 2.0 * p.interleave * ppCost.call.time_s;
    }

    // Stages: layers (uneven splits give the first stages one more), compute and memory.
    const int base = m.layers / p.pp;
    const int extra = m.layers % p.pp;
    const int m_ = p.microBatches();
    cost.microbatches = m_;
    const double inFlightScale =
        p.interleave > 1 ? 1.0 + double(p.pp - 1) / (double(p.pp) * p.interleave) : 1.0;
    const double wBytes = c.actBytes;
    const double gradBytes = plan.figures.grad_bytes.value;
    const bool mixed = c.actBytes == 2;
    const double optBytes = tr.optimizer == Optimizer::Adam ? (mixed ? 12 : 8) : (mixed ? 8 : 4);
    const double shard = double(p.dp) * p.cp;
    const double denseAct = activationBytesPerLayer(c, false, p.recompute);
    const double moeAct = m.isMoe() ? activationBytesPerLayer(c, true, p.recompute) : 0;
    // Full recompute keeps one layer's full activations while that layer is recomputed.
    const double recomputeWorkingSet =
        p.recompute == Recompute::Full
            ? std::max(activationBytesPerLayer(c, false, Recompute::None),
                       m.isMoe() ? activationBytesPerLayer(c, true, Recompute::None) : 0.0)
            : 0.0;
    const double denseParams = paramsPerLayerPerGpu(m, count, p, false);
    const double moeParams = m.isMoe() ? paramsPerLayerPerGpu(m, count, p, true) : 0;
    const double hbmBytes = units::bytesFromGiB(gpu->hbm_GiB);
    cost.hbm_bytes = hbmBytes;

    // LM head and embedding: the last and first stage carry them.
    {
        double fwd = 0;
        double bwd = 0;
        double flops = 0;
        addGemm(c, c.tokens, m.hidden, double(m.vocab) / p.tp, 1, &fwd, &bwd, &flops);
        const double logits = c.tokens * m.vocab / p.tp;
        cost.lm_head_s = fwd + bwd + logits * (2 + 4 + 4 + 2) / c.hbm; // softmax cross-entropy
        cost.embedding_s = c.tokens * m.hidden * (2 + 4 + 4) / c.hbm;
    }

    if (extra > 0)
        cost.warnings.push_back(
            std::to_string(m.layers) + " layers over pp = " + std::to_string(p.pp) +
            " do not split evenly: stages 0-" + std::to_string(extra - 1) + " get " +
            std::to_string(base + 1) + " layers, stages " + std::to_string(extra) + "-" +
            std::to_string(p.pp - 1) + " get " + std::to_string(base));
    cost.stages.resize(static_cast<size_t>(p.pp));
    int layerIndex = 0;
    double sumMicrobatch = 0;
    double maxMicrobatch = 0;
    for (int i = 0; i < p.pp; ++i) {
        StageCost& st = cost.stages[static_cast<size_t>(i)];
        st.stage = i;
        st.layers = base + (i < extra ? 1 : 0);
        // MoE layers follow the leading dense layers.
        const int denseEnd = m.isMoe() ? m.dense_layers : m.layers;
        const int denseHere = std::max(0, std::min(layerIndex + st.layers, denseEnd) - layerIndex);
        st.moe_layers = st.layers - denseHere;
        layerIndex += st.layers;
        const LayerCompute& dl = cost.dense_layer;
        const LayerCompute& ml = cost.moe_layer;
        st.forward_s = denseHere * dl.forward_s + st.moe_layers * ml.forward_s;
        st.backward_s = denseHere * dl.backward_s + st.moe_layers * ml.backward_s;
        st.recompute_s = denseHere * dl.recompute_s + st.moe_layers * ml.recompute_s;
        if (i == p.pp - 1) {
            st.forward_s += cost.lm_head_s / 3;
            st.backward_s += cost.lm_head_s * 2 / 3;
        }
        if (i == 0) {
            st.forward_s += cost.embedding_s / 3;
            st.backward_s += cost.embedding_s * 2 / 3;
        }
        st.tp_comm_s = st.layers * tpPerLayer;
        // CP sends overlap the attention compute they feed.
        const double attention = denseHere * (dl.attention_forward_s * 3.5) +
                                 st.moe_layers * (ml.attention_forward_s * 3.5);
        st.cp_comm_exposed_s = std::max(0.0, st.layers * cpPerLayer - attention);
        st.ep_comm_s = st.moe_layers * epPerLayer;
        st.pp_comm_s = ppPerMicrobatch;
        st.microbatch_s = st.forward_s + st.backward_s + st.recompute_s + st.tp_comm_s +
                          st.cp_comm_exposed_s + st.ep_comm_s + st.pp_comm_s;
        sumMicrobatch += st.microbatch_s;
        if (st.microbatch_s > maxMicrobatch) {
            maxMicrobatch = st.microbatch_s;
            cost.critical_stage = i;
        }

        // Memory.
        st.params = denseHere * denseParams + st.moe_layers * moeParams;
        if (i == 0)
            st.params += count.embedding / p.tp;
        if (i == p.pp - 1) {
            st.params += count.final_norm;
            // The LM head: its own matrix, or (pipelined and tied) a copy of the embedding.
            if (!m.tied_embeddings || p.pp > 1)
                st.params += double(m.vocab) * m.hidden / p.tp;
        }
        const double paramShard = p.zero >= 3 ? shard : 1;
        const double gradShard = p.zero >= 2 ? shard : 1;
        const double optShard = p.zero >= 1 ? shard : 1;
        st.weights_bytes = st.params * wBytes / paramShard;
        st.grads_bytes = st.params * gradBytes / gradShard;
        st.optimizer_bytes = st.params * optBytes / optShard;
        st.in_flight_microbatches = std::min<double>(m_, p.pp - i) * inFlightScale;
        st.activation_bytes_per_layer =
            st.layers ? (denseHere * denseAct + st.moe_layers * moeAct) / st.layers : 0;
        st.activations_bytes =
            (denseHere * denseAct + st.moe_layers * moeAct) * st.in_flight_microbatches;
        st.buffers_bytes = recomputeWorkingSet;
        if (i == p.pp - 1) // logits in 16 bits and their fp32 softmax, one micro-batch
            st.buffers_bytes += c.tokens * m.vocab / p.tp * (c.actBytes + 4);
        if (c.sp)
            st.buffers_bytes += activation; // the all-gathered input of a TP region
        if (p.zero >= 3) // gathered parameters of the current and the prefetched layer
            st.buffers_bytes += 2 * std::max(denseParams, moeParams) * wBytes;
        st.total_bytes = st.weights_bytes + st.grads_bytes + st.optimizer_bytes +
                         st.activations_bytes + st.buffers_bytes;
        st.fits = st.total_bytes <= hbmBytes;
        cost.max_stage_total_bytes = std::max(cost.max_stage_total_bytes, st.total_bytes);
    }
    cost.fits = cost.max_stage_total_bytes <= hbmBytes;

    // The pipeline: m micro-batches at the slowest stage's pace, plus fill and drain.
    const StageCost& critical = cost.stages[static_cast<size_t>(cost.critical_stage)];
    StepBreakdown& b = cost.breakdown;
    b.compute_s = m_ * (critical.forward_s + critical.backward_s);
    b.recompute_s = m_ * critical.recompute_s;
    b.tp_comm_exposed_s = m_ * critical.tp_comm_s;
    b.cp_comm_exposed_s = m_ * critical.cp_comm_exposed_s;
    b.ep_comm_exposed_s = m_ * critical.ep_comm_s;
    b.pp_comm_exposed_s = m_ * critical.pp_comm_s;
    b.bubble_s = (sumMicrobatch - maxMicrobatch) / p.interleave;

    // Data-parallel gradient sync (over DP x CP ranks, which hold the same parameters).
    const int dpRanks = p.dp * p.cp;
    const int dpStride = p.cp > 1 ? std::min(strides.cp, strides.dp) : strides.dp;
    if (dpRanks > 1) {
        const double gradCommBytes = c.actBytes; // gradients travel in the training dtype
        double worst = 0;
        CollectiveCost reduce;
        CollectiveCost gather;
        for (int i = 0; i < p.pp; ++i) {
            const StageCost& st = cost.stages[static_cast<size_t>(i)];
            const double bytes = st.params * gradCommBytes;
            const CollectiveOp op =
                p.zero == 0 ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
            const CollectiveResult r = collective(op, bytes, dpRanks, dpStride);
            double exposed = r.time_s;
            if (p.dp_overlap) {
                const CollectiveResult bucket = collective(
                    op, std::min(bytes, plan.figures.dp_bucket_bytes.value), dpRanks, dpStride);
                // Overlap with this stage's last micro-batch backward; stages after the first
                // finish earlier by the backward passes still running upstream of them.
                const double window = st.backward_s + st.recompute_s;
                const double slack = i * (st.backward_s + st.recompute_s) / p.interleave;
                exposed = std::max(bucket.time_s, r.time_s - window - slack);
            }
            double gatherExposed = 0;
            CollectiveResult g;
            if (p.zero >= 1) {
                g = collective(CollectiveOp::AllGather, st.params * wBytes, dpRanks, dpStride);
                const double calls = p.zero >= 3 ? 2.0 * m_ : 1.0;
                if (p.zero >= 3) {
                    // Per layer, prefetched during the previous layer's compute.
                    const double perLayer = g.time_s / std::max(1, st.layers);
                    const double layerFwd = st.forward_s / std::max(1, st.layers);
                    const double layerBwd = st.backward_s / std::max(1, st.layers);
                    gatherExposed =
                        m_ * (perLayer + st.layers * (std::max(0.0, perLayer - layerFwd) +
                                                      std::max(0.0, perLayer - layerBwd)));
                } else {
                    gatherExposed =
                        p.dp_overlap ? std::max(0.0, g.time_s - st.forward_s) : g.time_s;
                }
                if (i == cost.critical_stage || i == 0) {
                    gather.group = "dp";
                    gather.purpose = p.zero >= 3 ? "ZeRO-3 parameter all-gather, forward and "
                                                   "backward of every micro-batch"
                                                 : "updated parameter shards all-gathered";
                    gather.call = g;
                    gather.stride = dpStride;
                    gather.calls_per_step = calls;
                    gather.total_s = calls * g.time_s;
                    gather.exposed_s = gatherExposed;
                }
            }
            if (exposed + gatherExposed > worst || i == 0) {
                worst = std::max(worst, exposed + gatherExposed);
                reduce.group = "dp";
                reduce.purpose =
                    p.zero == 0 ? "gradient all-reduce" : "gradient reduce-scatter (ZeRO)";
                reduce.call = r;
                reduce.stride = dpStride;
                reduce.calls_per_step = 1;
                reduce.total_s = r.time_s;
                reduce.exposed_s = exposed;
            }
        }
        b.dp_comm_exposed_s = worst;
        cost.collectives.push_back(reduce);
        if (p.zero >= 1)
            cost.collectives.push_back(gather);
    }

    // The optimizer step: memory-bound over each GPU's (ZeRO-sharded) parameters.
    double maxParams = 0;
    for (const StageCost& st : cost.stages)
        maxParams = std::max(maxParams, st.params);
    const double optimizerShard = p.zero >= 1 ? shard : 1;
    b.optimizer_s = maxParams / optimizerShard * plan.figures.optimizer_step_bytes.value / c.hbm;

    // The collectives of the critical stage, with their totals.
    const double layersCritical = critical.layers;
    if (p.tp > 1) {
        tpCost.calls_per_step =
            m_ * layersCritical * (p.recompute == Recompute::Full ? 6 : 4) * (c.sp ? 2 : 1);
        tpCost.total_s = m_ * critical.tp_comm_s;
        tpCost.exposed_s = tpCost.total_s;
        cost.collectives.insert(cost.collectives.begin(), tpCost);
    }
    if (p.cp > 1) {
        cpCost.calls_per_step = m_ * layersCritical * 3.0 * (p.cp - 1);
        cpCost.total_s = cpCost.calls_per_step * cpCost.call.time_s;
        cpCost.exposed_s = m_ * critical.cp_comm_exposed_s;
        cost.collectives.push_back(cpCost);
    }
    if (epPerLayer > 0) {
        epCost.calls_per_step = m_ * critical.moe_layers * (p.recompute == Recompute::Full ? 6 : 4);
        epCost.total_s = m_ * critical.ep_comm_s;
        epCost.exposed_s = epCost.total_s;
        cost.collectives.push_back(epCost);
    }
    if (p.pp > 1) {
        ppCost.calls_per_step = 2.0 * m_ * p.interleave;
        ppCost.total_s = m_ * critical.pp_comm_s;
        ppCost.exposed_s = ppCost.total_s;
        cost.collectives.push_back(ppCost);
    }

    cost.step_time_s = b.total();

    // Metrics.
    StepMetrics& mt = cost.metrics;
    const double gpus = p.gpus();
    mt.tokens_per_step = double(p.global_batch) * tr.seq_len;
    mt.tokens_per_s = mt.tokens_per_step / cost.step_time_s;
    mt.model_flops_per_step = modelFlopsPerStep(m, p.global_batch, tr.seq_len);
    double recomputeFlops = 0;
    const double forwardFlops = mt.model_flops_per_step / 3;
    if (p.recompute == Recompute::Full) {
        recomputeFlops = forwardFlops;
    } else if (p.recompute == Recompute::Selective && !c.flash) {
        // The attention core's forward: 4 B s^2 q per layer.
        recomputeFlops = 4.0 * p.global_batch * double(tr.seq_len) * tr.seq_len * m.heads *
                         m.headDim() * m.layers;
    }
    mt.hardware_flops_per_step = mt.model_flops_per_step + recomputeFlops;
    mt.peak_flops_per_gpu = c.peak;
    mt.mfu = mt.model_flops_per_step / (cost.step_time_s * gpus * c.peak);
    mt.hfu = mt.hardware_flops_per_step / (cost.step_time_s * gpus * c.peak);
    if (tr.train_tokens > 0) {
        mt.time_to_train_s = tr.train_tokens / mt.tokens_per_s;
        mt.gpu_hours = mt.time_to_train_s * gpus / 3600.0;
        if (tr.gpu_hour_usd > 0)
            mt.cost_usd = mt.gpu_hours * tr.gpu_hour_usd;
    }
    if (!cost.fits)
        cost.warnings.push_back("does not fit: the fullest stage needs " +
                                units::formatNumber(units::toGiB(cost.max_stage_total_bytes)) +
                                " GiB of " + units::formatNumber(gpu->hbm_GiB) + " GiB HBM");
    cost.ok = true;
    return cost;
}

} // namespace paraplan
