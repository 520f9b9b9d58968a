#include "stepmodel.h"

#include "hardware.h"
#include "kernels.h"
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
    const GpuSpec* gpu = nullptr;
    double peak = 0;      // FLOP/s of the dtype
    double hbm = 0;       // B/s achievable
    double gemmShare = 0; // the GPU's best GEMM share of peak (at its reference shape)
    double attnFwd = 0;   // the attention kernel's share of peak at this s and d, forward
    double attnBwd = 0;   // ... backward
    double actBytes = 2;  // bytes per activation element
    double seqLocal = 0;  // s / cp
    double tokens = 0;    // b s / cp per micro-batch
    double headsLocal = 0;
    double kvLocal = 0;
    double d = 0;
    bool flash = true;
    bool sp = false;
    bool eager = false;         // element-wise work as PyTorch eager operators
    bool pytorch = false;       // a PyTorch FSDP-style stack (autograd, op-level checkpoints)
    double overlapSlowdown = 1; // TP-region GEMMs sharing their SMs with overlap kernels
};

// A GEMM of M x K by K x N (batch of them): the math at this shape's efficiency or its
// operand traffic, whichever is slower (a roofline), with the output's traffic half inside
// that and half after it: a tile writes its output once its main loop is done; persistent
// ping-pong kernels hide that behind the next tile, non-persistent ones do not (docs/engine.md,
// an assumption between the two). `cBytes` is the output element size (8 for a weight
// gradient accumulated into fp32: read and write).
double gemmSeconds(const Context& c, double M, double K, double N, double batch = 1,
                   double cBytes = -1)
{
    if (M <= 0 || K <= 0 || N <= 0)
        return 0;
    const double a = c.actBytes;
    const double flops = 2 * M * K * N * batch;
    const double operands = (a * M * K + a * K * N) * batch;
    const double output = (cBytes < 0 ? a : cBytes) * M * N * batch;
    // A batch of GEMMs fills the SMs like one GEMM with the batch stacked along M.
    const double efficiency = kernels::gemmEfficiency(c.gpu->kernels, c.gemmShare, M * batch, N, K);
    const double epilogue = 0.5 * output / c.hbm;
    return std::max(flops / (c.peak * efficiency), operands / c.hbm + epilogue) + epilogue;
}

// Forward, backward (dgrad + wgrad into fp32) of one GEMM. `slowdown` stretches the forward
// and dgrad GEMMs that run beside TP-overlap kernels.
void addGemm(const Context& c, double M, double K, double N, double batch, double* forward,
             double* backward, double* flops, double slowdown = 1)
{
    *forward += slowdown * gemmSeconds(c, M, K, N, batch);
    // Megatron-LM accumulates weight gradients into fp32 main_grad (gradient-accumulation
    // fusion: read and write 8 bytes); PyTorch autograd writes them in the parameter dtype.
    const double wgradBytes = c.pytorch ? c.actBytes : 8;
    *backward +=
        slowdown * gemmSeconds(c, M, N, K, batch) + gemmSeconds(c, K, M, N, batch, wgradBytes);
    *flops += 2 * M * K * N * batch;
}

// Element-wise bytes per token of one layer, forward and backward.
struct ElementwiseBytes
{
    double forward = 0;
    double backward = 0;
};

// Megatron-LM / Transformer Engine kernels: fused norms, bias-activation, bias-dropout-add
// (docs/engine.md, "Element-wise work").
ElementwiseBytes fusedBytes(const Context& c, bool moe, double mlpShare, double s)
{
    const ModelSpec& m = c.m;
    const double t = c.p.tp;
    const double h = m.hidden;
    const double r = c.sp ? 1.0 / t : 1.0;
    const double drop = m.dropout ? 1 : 0;
    const double f = moe ? m.expert_ffn_hidden : m.ffn_hidden;
    const double actFwd = (m.mlp == MlpKind::SwiGLU ? 6 : 4) * f / t * mlpShare;
    const double actBwd = (m.mlp == MlpKind::SwiGLU ? 10 : 6) * f / t * mlpShare;
    const double routing = moe ? 2 * 2 * h * mlpShare / t : 0; // permute + unpermute copies
    const double scoresFwd = c.flash ? 0 : (4 + 5 * drop) * c.headsLocal * s;
    const double scoresBwd = c.flash ? 0 : (6 + 5 * drop) * c.headsLocal * s;
    const double residualFwd = (6 + drop) * h * r;
    const double residualBwd = (4 + drop) * h * r;
    const double normFwd = 4 * h * r;
    const double normBwd = 8 * h * r;
    return {2 * normFwd + 2 * residualFwd + actFwd + scoresFwd + routing,
            2 * normBwd + 2 * residualBwd + actBwd + scoresBwd + routing};
}

// PyTorch eager operators, one HBM round trip each, as torchtitan's and Hugging Face's Llama
// code runs them without torch.compile (docs/engine.md, "Element-wise work").
ElementwiseBytes eagerBytes(const Context& c, bool moe, double mlpShare, double s)
{
    const ModelSpec& m = c.m;
    const double t = c.p.tp;
    const double h = m.hidden;
    const double r = c.sp ? 1.0 / t : 1.0;
    const double q = c.headsLocal * c.d;
    const double kv = c.kvLocal * c.d;
    const double f = (moe ? m.expert_ffn_hidden : m.ffn_hidden) / t * mlpShare;
    // RMSNorm in fp32 as composite operators (cast, pow, mean, rsqrt-mul, cast back, weight):
    // 36 bytes per element; a LayerNorm is one ATen kernel (read and write 16 bits).
    const double norm = (m.biases ? 4 : 36) * h * r;
    // Rotary embedding on Q and K in fp32 complex arithmetic: cast, multiply, cast back.
    const double rope = m.learned_positions ? 0 : 24 * (q + kv);
    // GQA K and V repeated to the query heads before the attention kernel; the attention
    // output made contiguous again.
    const double repeat = m.kv_heads < m.heads ? 4 * (q + kv) : 0;
    const double transpose = 4 * q;
    // SwiGLU: silu (read, write) and the gate product (read two, write one); GeLU: one pass.
    const double act = (m.mlp == MlpKind::SwiGLU ? 10 : 4) * f;
    const double residual = 2 * 6 * h * r;
    const double dropout = m.dropout ? 2 * 5 * h * r : 0;
    const double routing = moe ? 2 * 2 * h * mlpShare / t : 0;
    const double scores = c.flash ? 0 : (4 + 5 * (m.dropout ? 1 : 0)) * c.headsLocal * s;
    const double forward =
        2 * norm + rope + repeat + transpose + act + residual + dropout + routing + scores;
    // Sequence-parallel collectives along the sequence dimension (PyTorch DTensor): the
    // gathered activation is re-laid out after each all-gather and the input laid out before
    // each reduce-scatter, a read and a write of the full activation, 4 per layer and pass.
    const double tpCopies = c.sp ? 4 * 2 * 2 * h : 0;
    // Each operator's backward reads the incoming gradient and its saved inputs and writes
    // the input gradients: about twice its forward traffic.
    return {forward + tpCopies, 2 * forward + tpCopies};
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
    // With TP overlap, Transformer Engine runs the GEMM chunks on several streams (their waves
    // overlap, so chunking costs little), but the reduce-scatter side of each region keeps
    // NCCL/userbuffers kernels on some SMs for the GEMM's whole length (NeMo's userbuffers
    // settings for H100: 16-24 SMs): half of the region GEMMs run on fewer SMs.
    const double chunks = c.overlapSlowdown;
    addGemm(c, T, h, (c.headsLocal + 2 * c.kvLocal) * d, 1, &fwd, &bwd, &flops, chunks);
    addGemm(c, T, c.headsLocal * d, h, 1, &fwd, &bwd, &flops, chunks);
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
        addGemm(c, T, h, up * m.ffn_hidden / t, 1, &fwd, &bwd, &flops, chunks);
        addGemm(c, T, m.ffn_hidden / t, h, 1, &fwd, &bwd, &flops, chunks);
    }
    l.gemm_forward_s = fwd;
    l.gemm_backward_s = bwd;
    l.gemm_forward_flops = flops;
    l.gemm_efficiency = fwd > 0 ? flops / (fwd * c.peak) : 0;

    // Attention core: queries of this rank against all keys (context parallel splits queries).
    const double s = c.p.cp > 0 ? c.seqLocal * c.p.cp : c.seqLocal;
    const double batchHeads = c.p.micro_batch * c.headsLocal;
    const double coreFlops = 2 * 2 * c.seqLocal * s * d * batchHeads;
    double coreFwd = 0;
    double coreBwd = 0;
    if (c.flash) {
        // A fused kernel skips the masked half of a causal score matrix; its backward does
        // 2.5x the forward's math (it recomputes the scores): Dao 2023, section 4.1.
        coreFwd = 0.5 * coreFlops / (c.peak * c.attnFwd);
        coreBwd = 2.5 * 0.5 * coreFlops / (c.peak * c.attnBwd);
    } else {
        double scratch = 0;
        addGemm(c, c.seqLocal, d, s, batchHeads, &coreFwd, &coreBwd, &scratch);
        addGemm(c, c.seqLocal, s, d, batchHeads, &coreFwd, &coreBwd, &scratch);
    }
    l.attention_forward_s = coreFwd;
    l.attention_backward_s = coreBwd;
    l.attention_forward_flops = coreFlops;

    const double mlpShare = mlpTokens / T;
    const ElementwiseBytes ew =
        c.eager ? eagerBytes(c, moe, mlpShare, s) : fusedBytes(c, moe, mlpShare, s);
    l.elementwise_forward_bytes = ew.forward * T;
    l.elementwise_backward_bytes = ew.backward * T;
    l.elementwise_forward_s = l.elementwise_forward_bytes / c.hbm;
    l.elementwise_backward_s = l.elementwise_backward_bytes / c.hbm;

    l.forward_s = fwd + coreFwd + l.elementwise_forward_s;
    l.backward_s = bwd + coreBwd + l.elementwise_backward_s;
    switch (p.recompute) {
    case Recompute::None:
        break;
    case Recompute::Selective:
        if (c.pytorch) {
            // PyTorch stacks' selective checkpointing (torchtitan's op-level policy): the
            // attention kernel's and every other matmul's outputs are saved; the rest of the
            // forward, element-wise work included, runs again.
            l.recompute_s = 0.5 * fwd + l.elementwise_forward_s;
            break;
        }
        // The attention core again: a fused kernel already recomputes it, so nothing extra.
        if (!c.flash) {
            const double drop = m.dropout ? 1 : 0;
            l.recompute_s = coreFwd + (4 + 5 * drop) * c.headsLocal * s * T / c.hbm;
        }
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

namespace {

// Per-tier busy seconds of one GPU's links.
using TierBusy = std::array<double, 8>;

void addBusy(TierBusy* busy, std::array<const char*, 8>* groups, std::array<double, 8>* groupBusy,
             const CollectiveResult& r, double calls, const char* group)
{
    if (!(calls > 0) || !r.ok)
        return;
    auto add = [&](Tier tier, double seconds) {
        const size_t i = static_cast<size_t>(tier);
        (*busy)[i] += seconds;
        if (seconds > (*groupBusy)[i]) {
            (*groupBusy)[i] = seconds;
            (*groups)[i] = group;
        }
    };
    bool network = false;
    if (r.phase_count == 0) {
        add(r.bottleneck, calls * r.bandwidth_time_s);
        network = r.bottleneck == Tier::Network || r.bottleneck == Tier::Spine;
    }
    for (int i = 0; i < r.phase_count; ++i) {
        const CollectivePhase& ph = r.phases[static_cast<size_t>(i)];
        add(ph.tier, calls * ph.time_s);
        network = network || ph.tier == Tier::Network || ph.tier == Tier::Spine;
    }
    // A ring across nodes keeps the NICs busy as long as it runs, even when NVLink is the
    // slower of its links.
    if (!network && r.nodes_spanned > 1)
        add(Tier::Network, calls * r.bandwidth_time_s);
}

// Whether a collective keeps a tier busy (the tiers addBusy charges it to).
bool touches(const CollectiveResult& r, Tier tier)
{
    if (r.bottleneck == tier)
        return true;
    for (int i = 0; i < r.phase_count; ++i) {
        if (r.phases[static_cast<size_t>(i)].tier == tier)
            return true;
    }
    return tier == Tier::Network && r.nodes_spanned > 1;
}

} // namespace

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
    const EngineFigures& fig = plan.figures;
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(m_cluster.gpu_id);
    const ParameterCount count = countParameters(m);
    const GroupStrides strides = groupStrides(p);

    Context c{plan, m, p};
    c.gpu = gpu;
    StepAssumptions& as = cost.assumptions;
    // A synchronous step goes at the pace of its slowest GPU.
    const double slowest = kernels::slowestGpuFactor(fig.gpu_spread.value, p.gpus());
    as.slowest_gpu_factor = slowest;
    c.peak = gpu->peakTflops(tr.dtype) * 1e12 / slowest;
    c.hbm = units::bytesPerSecondFromGBps(gpu->hbm_GBps) * fig.hbm_fraction.value / slowest;
    c.gemmShare = fig.gemm_peak_fraction.value;
    c.actBytes = tr.dtype == Dtype::FP32 || tr.dtype == Dtype::TF32 ? 4 : 2;
    c.seqLocal = double(tr.seq_len) / p.cp;
    c.tokens = p.micro_batch * c.seqLocal;
    c.d = m.headDim();
    c.headsLocal = double(m.heads) / p.tp;
    c.kvLocal = std::max(1.0, double(m.kv_heads) / p.tp);
    c.sp = p.sequence_parallel && p.tp > 1;
    as.attention = resolvedAttention(plan);
    c.flash = as.attention != AttentionKernel::Unfused;
    as.kernels = resolvedKernelStyle(plan);
    as.tp_overlap = tpOverlapActive(plan);
    as.grad_reduce_bytes = gradReduceBytes(plan);
    as.fsdp_style = fsdpStyleStack(plan);
    c.eager = as.kernels == KernelStyle::Eager;
    c.pytorch = as.fsdp_style;
    if (as.tp_overlap) {
        const double share = fig.comm_sm_share.value;
        c.overlapSlowdown = 1 + 0.5 * share / (1 - share);
    }
    if (c.flash) {
        // The resolved kernel's published figures, unless the plan overrides them.
        const AttentionFigures* af = kernels::attentionFigures(*gpu, as.attention);
        AttentionFigures none;
        const AttentionFigures& a = af ? *af : none;
        c.attnFwd = kernels::attentionShare(attentionFigure(plan, false).value, a, c.seqLocal, c.d);
        c.attnBwd = kernels::attentionShare(attentionFigure(plan, true).value, a, c.seqLocal, c.d);
        as.attention_fwd_share = c.attnFwd;
        as.attention_bwd_share = c.attnBwd;
    }

    cost.dense_layer = layerCompute(c, false);
    if (m.isMoe())
        cost.moe_layer = layerCompute(c, true);

    // Link use of the critical GPU, by tier, and the group that loads each tier most.
    TierBusy busy{};
    std::array<const char*, 8> busiest{};
    std::array<double, 8> busiestSeconds{};
    busiest.fill("");

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
    const double passes = p.recompute == Recompute::Full ? 3 : 2; // forward, backward, again
    CollectiveCost tpCost;
    double tpPerLayer = 0;        // communication time, one layer, one micro-batch
    double tpExposedPerLayer = 0; // the part left on the critical path
    double tpCallsPerLayer = 0;
    CollectiveResult tpRs;
    if (p.tp > 1) {
        // Megatron: two all-reduces forward and two backward per layer (reduce-scatter +
        // all-gather pairs with sequence parallelism), two more when the forward is recomputed.
        const CollectiveOp op = c.sp ? CollectiveOp::AllGather : CollectiveOp::AllReduce;
        tpCost.group = "tp";
        tpCost.purpose = c.sp ? "sequence-parallel all-gathers and reduce-scatters (half the "
                                "calls each) around attention and MLP, forward and backward"
                              : "all-reduce after attention and MLP, forward and backward";
        tpCost.call = collective(op, activation, p.tp, strides.tp);
        tpCost.stride = strides.tp;
        double each = tpCost.call.time_s;
        if (c.sp) {
            tpRs = collective(CollectiveOp::ReduceScatter, activation, p.tp, strides.tp);
            each = tpCost.call.time_s + tpRs.time_s; // one AG + one RS per all-reduce replaced
        }
        tpPerLayer = 2 * passes * each;
        tpCallsPerLayer = 2 * passes * (c.sp ? 2 : 1);
        tpExposedPerLayer = tpPerLayer;
        if (as.tp_overlap) {
            // Each collective is split into tp chunks pipelined with its GEMM (Wang et al.
            // 2022, "Overlap communication with dependent computation via decomposition";
            // Megatron-Core --tp-comm-overlap): one chunk stays exposed, and the rest hides
            // behind the GEMMs as far as they last.
            const LayerCompute& l = cost.dense_layer;
            const double gemm = l.gemm_forward_s * (passes - 1) + l.gemm_backward_s;
            tpExposedPerLayer = std::max(tpPerLayer / p.tp, tpPerLayer - gemm);
        }
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
        // forward); the backward passes K, V and their gradients: 3 (c - 1) sends in all. A
        // ring step lasts as long as its slowest hop: a group that spans nodes has a hop
        // across the network.
        const double kvChunk = 2 * c.tokens * c.kvLocal * c.d * c.actBytes;
        cpCost.group = "cp";
        cpCost.purpose = "ring attention: K and V chunks (and their gradients) around the group";
        int hopStride = strides.cp;
        const int perNode = m_cluster.gpusPerNode();
        if (!m_cluster.is_torus && static_cast<long long>(p.cp) * strides.cp > perNode)
            hopStride = std::max(strides.cp, perNode);
        cpCost.call = collective(CollectiveOp::SendRecv, kvChunk, 2, hopStride);
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
        epPerLayer = 2 * passes * epCost.call.time_s;
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

    // Stages: layers, compute and memory.
    const std::vector<int> layersPerStage = stageLayerCounts(m, p);
    const int m_ = p.microBatches();
    cost.microbatches = m_;
    const double inFlightScale =
        p.interleave > 1 ? 1.0 + double(p.pp - 1) / (double(p.pp) * p.interleave) : 1.0;
    const double wBytes = c.actBytes;
    const double gradBytes = fig.grad_bytes.value;
    const bool mixed = c.actBytes == 2;
    const double optBytes = tr.optimizer == Optimizer::Adam ? (mixed ? 12 : 8) : (mixed ? 8 : 4);
    const int shardRanks = p.shardRanks();
    const double shard = shardRanks;
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
        // Softmax cross-entropy: fused, 12 bytes per logit; eager PyTorch casts the logits to
        // fp32 and runs log-softmax, its reductions and backward as separate kernels.
        const double lossBytes = c.eager ? 40 : 2 + 4 + 4 + 2;
        cost.lm_head_s = fwd + bwd + logits * lossBytes / c.hbm;
        cost.embedding_s = c.tokens * m.hidden * (2 + 4 + 4) / c.hbm;
    }

    bool uneven = false;
    for (int n : layersPerStage)
        uneven = uneven || n != layersPerStage.front();
    const bool explicitSplit =
        !p.stage_layers.empty() || p.first_stage_layers > 0 || p.last_stage_layers > 0;
    if (uneven && !explicitSplit) {
        std::string split;
        for (size_t i = 0; i < layersPerStage.size(); ++i)
            split += (i ? " " : "") + std::to_string(layersPerStage[i]);
        cost.warnings.push_back(std::to_string(m.layers) + " layers over pp = " +
                                std::to_string(p.pp) + " stages are split unevenly: " + split);
    }
    cost.stages.resize(static_cast<size_t>(p.pp));
    int layerIndex = 0;
    double sumMicrobatch = 0;
    double maxMicrobatch = 0;
    std::vector<int> denseOf(static_cast<size_t>(p.pp), 0);
    for (int i = 0; i < p.pp; ++i) {
        StageCost& st = cost.stages[static_cast<size_t>(i)];
        st.stage = i;
        st.layers = layersPerStage[static_cast<size_t>(i)];
        // MoE layers follow the leading dense layers.
        const int denseEnd = m.isMoe() ? m.dense_layers : m.layers;
        const int denseHere = std::max(0, std::min(layerIndex + st.layers, denseEnd) - layerIndex);
        denseOf[static_cast<size_t>(i)] = denseHere;
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
        st.tp_comm_s = st.layers * tpExposedPerLayer;
        // CP sends overlap the attention compute they feed.
        const double attention =
            denseHere * (dl.attention_forward_s * (passes - 1) + dl.attention_backward_s) +
            st.moe_layers * (ml.attention_forward_s * (passes - 1) + ml.attention_backward_s);
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
        // ZeRO-3 with pipeline parallelism keeps a stage's gathered parameters across its
        // micro-batches (torchtitan: no reshard after forward under PP), as ZeRO-2 does.
        const double paramShard = p.zero >= 3 && p.pp == 1 ? shard : 1;
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
        if (p.zero >= 3 && p.pp == 1) // gathered parameters: the computing and prefetched layers
            st.buffers_bytes += (1 + p.zero3_prefetch) * std::max(denseParams, moeParams) * wBytes;
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

    // Data-parallel sync over the DP x CP ranks, which hold the same parameters: within a
    // shard group (all of them unless HSDP), then across the replicas.
    const int dpRanks = p.dp * p.cp;
    const int dpStride = p.cp > 1 ? std::min(strides.cp, strides.dp) : strides.dp;
    const int replicas = dpRanks / std::max(1, shardRanks);
    const double commShare = fig.comm_sm_share.value;
    const double reduceBytes = as.grad_reduce_bytes;
    if (dpRanks > 1) {
        double worst = 0;
        CollectiveCost reduce;
        CollectiveCost gather;
        CollectiveCost replicate;
        const bool perLayer = p.zero >= 3;
        for (int i = 0; i < p.pp; ++i) {
            const StageCost& st = cost.stages[static_cast<size_t>(i)];
            const bool report = i == cost.critical_stage;
            double exposed = 0;
            double overlapped = 0;
            if (perLayer) {
                // ZeRO-3 / FSDP: every layer's parameters are all-gathered before its forward
                // and again before its backward (and recompute), and its gradients
                // reduce-scattered after its backward, each of the per-layer size; the next
                // `zero3_prefetch` layers' gathers run during this layer's compute (Zhao et al.
                // 2023, PyTorch FSDP; Rajbhandari et al. 2020, ZeRO-3 prefetch).
                const int layers = std::max(1, st.layers);
                const double layerParams = st.params / layers;
                const CollectiveResult g =
                    collective(CollectiveOp::AllGather, layerParams * wBytes, shardRanks, dpStride);
                const CollectiveResult r = collective(
                    CollectiveOp::ReduceScatter, layerParams * reduceBytes, shardRanks, dpStride);
                // Under PP the gathered stage stays resident across micro-batches: one gather
                // and one reduce-scatter per layer per step; else per micro-batch.
                const double rounds = p.pp > 1 ? 1.0 : m_;
                const double layerFwd = st.forward_s / layers;
                const double layerBwd = (st.backward_s + st.recompute_s) / layers;
                // Forward: the first gather is exposed; afterwards each layer's gather runs
                // during the layers ahead of it, and whatever the link cannot keep up with
                // shows (prefetching deeper smooths uneven layers but adds no bandwidth).
                const double fwdExposed =
                    g.time_s + (layers - 1) * std::max(0.0, g.time_s - layerFwd);
                // Backward: a gather and a reduce-scatter share the link per layer; the last
                // reduce-scatter is exposed.
                const double bwdExposed =
                    r.time_s + (layers - 1) * std::max(0.0, g.time_s + r.time_s - layerBwd);
                const double gathers = rounds * 2 * layers;
                const double scatters = rounds * layers;
                // Gathered shards are copied out into the parameters (read and write 16 bits)
                // and gradients copied into the reduce-scatter buffer in the reduce dtype, on
                // the compute stream (FSDP2's copy-out/copy-in; DeepSpeed's flat buffers).
                const double copyBytes =
                    layerParams * (gathers * 2 * wBytes + scatters * (wBytes + reduceBytes));
                exposed =
                    (p.pp > 1 ? 1.0 : double(m_)) * (fwdExposed + bwdExposed) + copyBytes / c.hbm;
                if (p.zero3_prefetch == 0)
                    exposed = gathers * g.time_s + scatters * r.time_s;
                overlapped = std::max(0.0, gathers * g.time_s + scatters * r.time_s - exposed);
                if (report) {
                    gather = CollectiveCost{"dp",
                                            "ZeRO-3 / FSDP per-layer parameter all-gather, "
                                            "forward and backward",
                                            g,
                                            dpStride,
                                            gathers,
                                            gathers * g.time_s,
                                            0};
                    reduce = CollectiveCost{
                        "dp",     "per-layer gradient reduce-scatter (ZeRO-3 / FSDP)",
                        r,        dpStride,
                        scatters, scatters * r.time_s,
                        0};
                    addBusy(&busy, &busiest, &busiestSeconds, g, gathers, "dp");
                    addBusy(&busy, &busiest, &busiestSeconds, r, scatters, "dp");
                }
            } else {
                const double bytes = st.params * reduceBytes;
                const CollectiveOp op =
                    p.zero == 0 ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
                const CollectiveResult r = collective(op, bytes, shardRanks, dpStride);
                double rsExposed = r.time_s;
                if (p.dp_overlap) {
                    const CollectiveResult bucket = collective(
                        op, std::min(bytes, fig.dp_bucket_bytes.value), shardRanks, dpStride);
                    // Overlap with this stage's last micro-batch backward; stages after the
                    // first finish earlier by the backward passes still running upstream.
                    const double window = st.backward_s + st.recompute_s;
                    const double slack = i * (st.backward_s + st.recompute_s) / p.interleave;
                    rsExposed = std::max(bucket.time_s, r.time_s - window - slack);
                }
                double gatherExposed = 0;
                CollectiveResult g;
                if (p.zero >= 1) {
                    g = collective(CollectiveOp::AllGather, st.params * wBytes, shardRanks,
                                   dpStride);
                    // The updated parameters, gathered during the next step's first forward.
                    gatherExposed =
                        p.dp_overlap ? std::max(0.0, g.time_s - st.forward_s) : g.time_s;
                }
                exposed = rsExposed + gatherExposed;
                overlapped = std::max(0.0, r.time_s - rsExposed) +
                             (p.zero >= 1 ? std::max(0.0, g.time_s - gatherExposed) : 0.0);
                if (report) {
                    reduce = CollectiveCost{
                        "dp",
                        p.zero == 0 ? "gradient all-reduce" : "gradient reduce-scatter (ZeRO)",
                        r,
                        dpStride,
                        1,
                        r.time_s,
                        rsExposed};
                    addBusy(&busy, &busiest, &busiestSeconds, r, 1, "dp");
                    if (p.zero >= 1) {
                        gather = CollectiveCost{"dp",
                                                "updated parameter shards all-gathered",
                                                g,
                                                dpStride,
                                                1,
                                                g.time_s,
                                                gatherExposed};
                        addBusy(&busy, &busiest, &busiestSeconds, g, 1, "dp");
                    }
                }
            }
            double replicaExposed = 0;
            if (replicas > 1) {
                // HSDP: each shard's gradients all-reduced across the replicas, after the
                // backward (hidden behind the remaining backward as far as it lasts).
                const double shardBytes = st.params * reduceBytes / shardRanks;
                const CollectiveResult a = collective(CollectiveOp::AllReduce, shardBytes, replicas,
                                                      dpStride * shardRanks);
                replicaExposed =
                    p.dp_overlap ? std::max(0.0, a.time_s - st.backward_s / 2) : a.time_s;
                overlapped += a.time_s - replicaExposed;
                if (report) {
                    replicate = CollectiveCost{"dp",
                                               "HSDP: gradient shards all-reduced across "
                                               "replica groups",
                                               a,
                                               dpStride * shardRanks,
                                               1,
                                               a.time_s,
                                               replicaExposed};
                    addBusy(&busy, &busiest, &busiestSeconds, a, 1, "dp");
                }
            }
            // Overlapped collectives take SMs from the compute they hide behind.
            exposed += replicaExposed + commShare * overlapped;
            if (report) {
                const double sm = commShare * overlapped;
                if (perLayer) {
                    // Split the exposed time between the gathers and the scatters by their
                    // link time.
                    const double total = gather.total_s + reduce.total_s;
                    const double base = exposed - replicaExposed;
                    gather.exposed_s = total > 0 ? base * gather.total_s / total : 0;
                    reduce.exposed_s = base - gather.exposed_s;
                } else {
                    reduce.exposed_s += sm;
                }
            }
            worst = std::max(worst, exposed);
            if (report)
                b.dp_comm_exposed_s = exposed;
        }
        // The step waits for the slowest stage's sync.
        b.dp_comm_exposed_s = std::max(b.dp_comm_exposed_s, worst);
        cost.collectives.push_back(reduce);
        if (p.zero >= 1)
            cost.collectives.push_back(gather);
        if (replicas > 1)
            cost.collectives.push_back(replicate);
    }

    // The optimizer step: memory-bound over each GPU's (ZeRO-sharded) parameters.
    double maxParams = 0;
    for (const StageCost& st : cost.stages)
        maxParams = std::max(maxParams, st.params);
    const double optimizerShard = p.zero >= 1 ? shard : 1;
    b.optimizer_s = maxParams / optimizerShard * fig.optimizer_step_bytes.value / c.hbm;

    // The collectives of the critical stage, with their totals.
    const double layersCritical = critical.layers;
    if (p.tp > 1) {
        tpCost.calls_per_step = m_ * layersCritical * tpCallsPerLayer;
        tpCost.total_s = m_ * layersCritical * tpPerLayer;
        tpCost.exposed_s = m_ * critical.tp_comm_s;
        if (c.sp) {
            addBusy(&busy, &busiest, &busiestSeconds, tpCost.call, tpCost.calls_per_step / 2, "tp");
            addBusy(&busy, &busiest, &busiestSeconds, tpRs, tpCost.calls_per_step / 2, "tp");
        } else {
            addBusy(&busy, &busiest, &busiestSeconds, tpCost.call, tpCost.calls_per_step, "tp");
        }
        cost.collectives.insert(cost.collectives.begin(), tpCost);
    }
    if (p.cp > 1) {
        cpCost.calls_per_step = m_ * layersCritical * 3.0 * (p.cp - 1);
        cpCost.total_s = cpCost.calls_per_step * cpCost.call.time_s;
        cpCost.exposed_s = m_ * critical.cp_comm_exposed_s;
        addBusy(&busy, &busiest, &busiestSeconds, cpCost.call, cpCost.calls_per_step, "cp");
        cost.collectives.push_back(cpCost);
    }
    if (epPerLayer > 0) {
        epCost.calls_per_step = m_ * critical.moe_layers * 2 * passes;
        epCost.total_s = m_ * critical.ep_comm_s;
        epCost.exposed_s = epCost.total_s;
        addBusy(&busy, &busiest, &busiestSeconds, epCost.call, epCost.calls_per_step, "ep");
        cost.collectives.push_back(epCost);
    }
    if (p.pp > 1) {
        ppCost.calls_per_step = 2.0 * m_ * p.interleave;
        ppCost.total_s = m_ * critical.pp_comm_s;
        ppCost.exposed_s = ppCost.total_s;
        addBusy(&busy, &busiest, &busiestSeconds, ppCost.call, ppCost.calls_per_step, "pp");
        cost.collectives.push_back(ppCost);
    }

    // Shared links: collectives of different groups that cross the same tier in the same
    // step compete for it. Whatever of a tier's busy time the step's compute cannot cover is
    // exposed, charged to the group that loads the tier most.
    {
        const double hideable = b.compute_s + b.recompute_s + b.bubble_s;
        for (size_t t = 0; t < busy.size(); ++t) {
            if (!(busy[t] > 0))
                continue;
            double exposedHere = 0;
            for (const CollectiveCost& cc : cost.collectives) {
                if (touches(cc.call, static_cast<Tier>(t)))
                    exposedHere += cc.exposed_s;
            }
            const double deficit = busy[t] - hideable - exposedHere;
            if (deficit <= 0)
                continue;
            const std::string group = busiest[t];
            double* field = group == "tp"   ? &b.tp_comm_exposed_s
                            : group == "cp" ? &b.cp_comm_exposed_s
                            : group == "ep" ? &b.ep_comm_exposed_s
                            : group == "pp" ? &b.pp_comm_exposed_s
                                            : &b.dp_comm_exposed_s;
            *field += deficit;
            for (CollectiveCost& cc : cost.collectives) {
                if (group == cc.group && touches(cc.call, static_cast<Tier>(t))) {
                    cc.exposed_s += deficit;
                    break;
                }
            }
            cost.warnings.push_back(std::string(tierName(static_cast<Tier>(t))) +
                                    " links are busy " + units::formatSeconds(busy[t]) +
                                    " per step, more than the compute can hide: " +
                                    units::formatSeconds(deficit) + " more exposed");
        }
    }

    cost.step_time_s = b.total();
    for (size_t t = 0; t < busy.size(); ++t) {
        if (busy[t] > 0)
            cost.links.push_back(
                {static_cast<Tier>(t), busy[t], busy[t] / cost.step_time_s, busiest[t]});
    }
    std::sort(cost.links.begin(), cost.links.end(),
              [](const LinkUse& a, const LinkUse& b) { return a.busy_s > b.busy_s; });

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
    const double peak = gpu->peakTflops(tr.dtype) * 1e12;
    mt.peak_flops_per_gpu = peak;
    mt.mfu = mt.model_flops_per_step / (cost.step_time_s * gpus * peak);
    mt.hfu = mt.hardware_flops_per_step / (cost.step_time_s * gpus * peak);
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
