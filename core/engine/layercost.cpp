#include "layercost.h"

#include "gemmshapes.h"
#include "kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace paraplan::layercost {
namespace {

// kernels::gemmEfficiencyGivenReference through this thread's table of its answers: a pure
// function of the SM count, the reference's share and quantization and the shape, which a
// search asks for again at every layout with the same GEMM shapes. Bit for bit the same.
double gemmEfficiency(const Context& c, double M, double N, double K, bool fp8, bool backward)
{
    struct Entry
    {
        int sms = -1;
        bool shaped = false;
        double share = 0;
        double reference = 0;
        double kStep = 0;
        double M = 0;
        double N = 0;
        double K = 0;
        double efficiency = 0;
    };
    static thread_local std::array<Entry, 128> table;
    const KernelFigures& k = c.gpu->kernels;
    const bool shaped = k.gemm_shape[0] > 0;
    // FP8 GEMMs: their own share and reference shape (the backward's with promoted
    // accumulation), and 128-deep main-loop steps.
    const double share = !fp8 ? c.gemmShare : backward ? c.fp8BwdShare : c.fp8Share;
    const double reference = !fp8 ? c.gemmReference : backward ? c.fp8BwdReference : c.fp8Reference;
    const double kStep = fp8 ? 128 : 64;
    uint64_t bits[3];
    std::memcpy(&bits[0], &M, sizeof M);
    std::memcpy(&bits[1], &N, sizeof N);
    std::memcpy(&bits[2], &K, sizeof K);
    uint64_t h = bits[0] * 0x9E3779B97F4A7C15ULL ^ bits[1] * 0xBF58476D1CE4E5B9ULL ^ bits[2];
    h ^= h >> 31;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 29;
    Entry& e = table[static_cast<size_t>(h % table.size())];
    if (e.sms == k.sm_count && e.shaped == shaped && e.share == share && e.reference == reference &&
        e.kStep == kStep && e.M == M && e.N == N && e.K == K)
        return e.efficiency;
    e.efficiency = kernels::gemmEfficiencyGivenReference(k, share, reference, M, N, K, kStep);
    e.sms = k.sm_count;
    e.shaped = shaped;
    e.share = share;
    e.reference = reference;
    e.kStep = kStep;
    e.M = M;
    e.N = N;
    e.K = K;
    return e.efficiency;
}

// A GEMM of M x K by K x N (batch of them): the math at this shape's efficiency or its
// operand traffic, whichever is slower (a roofline), with the output's traffic half inside
// that and half after it: a tile writes its output once its main loop is done; persistent
// ping-pong kernels hide that behind the next tile, non-persistent ones do not (docs/engine.md,
// an assumption between the two). `cBytes` is the output element size (8 for a weight
// gradient accumulated into fp32: read and write). `fp8`: FP8 operands (1 byte) on the FP8
// figures, the output still 16-bit; `backward`: a dgrad or wgrad GEMM (its FP8 figure).
GemmTiming gemmTiming(const Context& c, double M, double K, double N, double batch = 1,
                      double cBytes = -1, bool fp8 = false, bool backward = false, double cap = 0)
{
    GemmTiming g;
    if (M <= 0 || K <= 0 || N <= 0)
        return g;
    const double a = fp8 ? 1 : c.actBytes;
    const double peak = fp8 ? c.fp8Peak : c.peak;
    g.M = M;
    g.K = K;
    g.N = N;
    g.batch = batch;
    g.flops = 2 * M * K * N * batch;
    const double operands = (a * M * K + a * K * N) * batch;
    const double output = (cBytes < 0 ? c.actBytes : cBytes) * M * N * batch;
    // A batch of GEMMs fills the SMs like one GEMM with the batch stacked along M.
    g.efficiency = gemmEfficiency(c, M * batch, N, K, fp8, backward);
    // A grouped expert GEMM at its measured share of peak, where the shape's is above it.
    if (cap > 0)
        g.efficiency = std::min(g.efficiency, cap);
    g.compute_s = g.flops / (peak * g.efficiency);
    g.operands_s = operands / c.hbm;
    g.output_s = output / c.hbm;
    const double epilogue = 0.5 * g.output_s;
    g.time_s = std::max(g.compute_s, g.operands_s + epilogue) + epilogue;
    return g;
}

double gemmSeconds(const Context& c, double M, double K, double N, double batch = 1,
                   double cBytes = -1, bool fp8 = false, bool backward = false, double cap = 0)
{
    return gemmTiming(c, M, K, N, batch, cBytes, fp8, backward, cap).time_s;
}

} // namespace

// Forward, backward (dgrad + wgrad into fp32) of one GEMM. `slowdown` stretches the forward
// and dgrad GEMMs that run beside TP-overlap kernels.
void addGemm(const Context& c, double M, double K, double N, double batch, double* forward,
             double* backward, double* flops, double slowdown, GemmTiming* timing, bool fp8,
             double cap)
{
    GemmTiming f = gemmTiming(c, M, K, N, batch, -1, fp8, false, cap);
    *forward += slowdown * f.time_s;
    // Megatron-LM accumulates weight gradients into fp32 main_grad (gradient-accumulation
    // fusion: read and write 8 bytes); PyTorch autograd writes them in the parameter dtype.
    const double wgradBytes = c.pytorch ? c.actBytes : 8;
    *backward += slowdown * gemmSeconds(c, M, N, K, batch, -1, fp8, true, cap) +
                 gemmSeconds(c, K, M, N, batch, wgradBytes, fp8, true, cap);
    *flops += 2 * M * K * N * batch;
    if (timing) {
        f.slowdown = slowdown;
        f.time_s *= slowdown;
        *timing = f;
    }
}

namespace {

// Element-wise bytes per token of one layer, forward and backward.
struct ElementwiseBytes
{
    double forward = 0;
    double backward = 0;
    double moe_forward = 0; // of which the MoE block's: the experts' activation, the routing
    double moe_backward = 0;
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
    // Permute and unpermute copies, or the GPU's measured per-pair work (grouped_gemm), whose
    // backward is twice its forward.
    const double pair = c.groupedPairBytes > 0 ? c.groupedPairBytes : 4;
    const double routing = moe ? pair * h * mlpShare / t : 0;
    const double routingBwd = c.groupedPairBytes > 0 ? 2 * routing : routing;
    const double scoresFwd = c.flash ? 0 : (4 + 5 * drop) * c.headsLocal * s;
    const double scoresBwd = c.flash ? 0 : (6 + 5 * drop) * c.headsLocal * s;
    const double residualFwd = (6 + drop) * h * r;
    const double residualBwd = (4 + drop) * h * r;
    const double normFwd = 4 * h * r;
    const double normBwd = 8 * h * r;
    return {2 * normFwd + 2 * residualFwd + actFwd + scoresFwd + routing,
            2 * normBwd + 2 * residualBwd + actBwd + scoresBwd + routingBwd,
            moe ? actFwd + routing : 0, moe ? actBwd + routingBwd : 0};
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
    const double routing =
        moe ? (c.groupedPairBytes > 0 ? c.groupedPairBytes : 4) * h * mlpShare / t : 0;
    const double scores = c.flash ? 0 : (4 + 5 * (m.dropout ? 1 : 0)) * c.headsLocal * s;
    const double forward =
        2 * norm + rope + repeat + transpose + act + residual + dropout + routing + scores;
    // Sequence-parallel collectives along the sequence dimension (PyTorch DTensor): the
    // gathered activation is re-laid out after each all-gather and the input laid out before
    // each reduce-scatter, a read and a write of the full activation, 4 per layer and pass.
    const double tpCopies = c.sp ? 4 * 2 * 2 * h : 0;
    // Each operator's backward reads the incoming gradient and its saved inputs and writes
    // the input gradients: about twice its forward traffic.
    return {forward + tpCopies, 2 * forward + tpCopies, moe ? act + routing : 0,
            moe ? 2 * (act + routing) : 0};
}

// The MoE router block on Megatron-Core (docs/engine.md, "The MoE router block"): the
// router's and the dispatcher's preprocessing kernels are far shorter than their launches, and
// the dropless dispatcher's device-to-host copy of the tokens per expert stops the host from
// running ahead of them, so each costs the host's launch time, in the forward and again in the
// backward; a CUDA graph replays the captured ones at the graph's gap, after one launch of its
// own when the capture is partial (a whole-layer graph is launched with the layer).
void addRouterBlock(const Context& c, LayerCompute* l)
{
    const double graphed = c.routerGraphKernels;
    const double launch = graphed > 0 && c.cudaGraphs == 0 ? c.launchHost : 0;
    const double pass = c.routerHostKernels * c.launchHost + launch + graphed * c.graphGap;
    l->router_kernels = c.routerHostKernels + graphed;
    l->router_host_kernels = c.routerHostKernels;
    l->router_forward_s = pass;
    l->router_backward_s = pass;
    l->forward_s += pass;
    l->backward_s += pass;
}

// Kernel launches (docs/engine.md, "Kernel launches"). Kernels of one layer's forward: the
// fused Megatron-LM / Transformer Engine layer (LayerNormLinear: norm + GEMM, rotary, the
// attention kernel, out-projection, bias-dropout-add, LayerNormLinear fc1, activation, fc2,
// bias-dropout-add: 12) or torch.compile's fused graph (about as many), against PyTorch eager
// operators (torchtitan's Llama block: two RMSNorms as 8 operators each, three projections,
// rotary as 8 operators, K/V repeats, 3 transposes, SDPA, the output copy, wo, two residual
// adds, w1, w3, silu, the gate product, w2: 42). TP adds its 2 collectives per region (an
// all-gather and a reduce-scatter, or an all-reduce, per attention and MLP block); an MoE
// layer its router, top-k, permute, grouped GEMM launches and unpermute (6). Autograd runs
// about two kernels (dgrad, wgrad, or the element-wise backward) per forward kernel.
void addLaunches(const Context& c, bool moe, LayerCompute* l)
{
    double forward = c.eager ? 42 : 12;
    if (c.p.tp > 1)
        forward += c.sp ? 4 : 2;
    if (moe)
        forward += 6;
    const double backward = 2 * forward;
    l->kernels_forward = forward;
    l->kernels_backward = backward;
    l->launch_gap_forward_s = forward * c.launchGap;
    l->launch_gap_backward_s = backward * c.launchGap;
    l->forward_s += l->launch_gap_forward_s;
    l->backward_s += l->launch_gap_backward_s;
    // The host runs ahead of the GPU while the GPU's kernels are longer than their launches;
    // a pass of shorter kernels waits on the host. A CUDA graph of the layer is one launch; a
    // graph of the whole step leaves the layer nothing to wait for.
    const double perPass = c.cudaGraphs == 0 ? 1 : 0;
    const double graphLaunch = c.cudaGraphs == 1 ? c.launchHost : 0;
    l->host_forward_s = perPass * forward * c.launchHost + graphLaunch;
    l->host_backward_s = perPass * backward * c.launchHost + graphLaunch;
    l->launch_bound = l->host_forward_s > l->forward_s || l->host_backward_s > l->backward_s;
    l->forward_s = std::max(l->forward_s, l->host_forward_s);
    l->backward_s = std::max(l->backward_s, l->host_backward_s);
    if (moe)
        addRouterBlock(c, l);
}

} // namespace

namespace {

// The layer GEMMs an FP8 recipe runs in FP8: every projection and MLP GEMM but the MoE router
// (Megatron-Core computes its logits outside Transformer Engine's FP8 linears).
bool fp8Linear(const Context& c, const GemmShape& g)
{
    return c.fp8 && std::strcmp(g.name, "router") != 0;
}

// The routed experts' grouped GEMMs (gemmshapes.cpp names them as the dense MLP's).
bool expertGemm(const GemmShape& g)
{
    return !g.tp_region &&
           (std::strcmp(g.name, "mlp_up") == 0 || std::strcmp(g.name, "mlp_down") == 0);
}

} // namespace

Fp8CastBytes fp8CastBytes(const Context& c, bool moe)
{
    Fp8CastBytes out;
    if (!c.fp8)
        return out;
    const bool block = c.fp8Recipe == Fp8Recipe::Mxfp8 || c.fp8Recipe == Fp8Recipe::Blockwise;
    // FP8 copies of each quantized tensor: one for the GEMM that reads it as it is laid out,
    // and one laid out (or scaled) along the other dimension for the GEMM that reads it
    // transposed: on GPUs whose FP8 GEMMs take K-major operands only (Hopper: X and dY for the
    // weight gradient, W for dgrad), and for block scaling anywhere (MXFP8's 1x32 and the
    // blockwise recipe's 1x128 scales run along K, so the transposed use needs its own scales).
    const double copies = c.fp8TnOnly || block ? 2 : 1;
    // Current scaling reads the 16-bit tensor once more for its amax before it can scale it;
    // delayed scaling takes the previous steps' amax and fuses this one's into the cast; block
    // recipes compute each block's scale inside the cast kernel.
    const double amax = c.fp8Recipe == Fp8Recipe::Current ? 2 : 0;
    // Transformer Engine casts and transposes in one kernel (one read, `copies` writes);
    // torchao casts each layout as its own pass (a read, and an amax, per copy).
    const double perElement = c.pytorch ? copies * (2 + amax + 1) : 2 + amax + copies;
    // Scales: MXFP8 one E8M0 byte per 32 elements; blockwise one fp32 per 1x128 activation
    // block and per 128x128 weight block; tensor-wise recipes one scalar (nothing per element).
    const double actScales = c.fp8Recipe == Fp8Recipe::Mxfp8       ? copies / 32.0
                             : c.fp8Recipe == Fp8Recipe::Blockwise ? copies * 4 / 128.0
                                                                   : 0;
    const double weightScales = c.fp8Recipe == Fp8Recipe::Mxfp8       ? copies / 32.0
                                : c.fp8Recipe == Fp8Recipe::Blockwise ? copies * 4 / 16384.0
                                                                      : 0;
    for (const GemmShape& g :
         layerGemmShapes(c.m, c.p, c.tokens, c.headsLocal, c.kvLocal, c.d, moe, c.moeLoad)) {
        if (!fp8Linear(c, g))
            continue;
        out.forward += g.M * g.K * g.batch * (perElement + actScales);    // the input X
        out.backward += g.M * g.N * g.batch * (perElement + actScales);   // the gradient dY
        out.weights += g.K * g.N * g.batch * (perElement + weightScales); // the weight W
    }
    // Megatron-LM hands Transformer Engine is_first_microbatch, so the FP8 weights (and their
    // transposes) are cast on a step's first micro-batch and reused; torchao casts them at
    // every call.
    out.weight_casts_per_microbatch = c.pytorch ? 1 : 1 / std::max(1.0, c.microbatches);
    return out;
}

// The forward time of the modules Megatron-Core's --recompute-modules may re-run, as the
// layer's GEMM loop finds them.
struct RerunForward
{
    double mlp = 0;    // a dense layer's mlp_up and mlp_down
    double shared = 0; // the shared experts' GEMMs
    double mlaUp = 0;  // latent attention's q_up and kv_up

    void add(const char* gemm, bool moe, double seconds)
    {
        auto is = [gemm](const char* name) { return std::strcmp(gemm, name) == 0; };
        if (!moe && (is("mlp_up") || is("mlp_down")))
            mlp += seconds;
        else if (is("shared_up") || is("shared_down"))
            shared += seconds;
        else if (is("q_up") || is("kv_up"))
            mlaUp += seconds;
    }
};

// The recomputed modules' forward beyond the attention core (Megatron-Core selective
// recompute, --recompute-modules): their GEMMs again, and for the element-wise modules (the
// norms, the experts' activation) one read and one write of their tensors at the HBM rate.
// The TP and EP collectives inside a recomputed module are not repeated here (an omission).
double moduleRecomputeSeconds(const Context& c, bool moe, const RerunForward& rerun,
                              const LayerCompute& l)
{
    const unsigned modules = c.p.recomputeModules();
    const ModelSpec& m = c.m;
    const double T = c.tokens;
    double seconds = 0;
    if (!moe && (modules & kRecomputeMlp))
        seconds += rerun.mlp;
    if (moe && (modules & kRecomputeMoe))
        seconds += l.moe_block_forward_s;
    if (moe && (modules & kRecomputeMoeAct) && !(modules & kRecomputeMoe)) {
        // The activation reads the fc1 output (2 f, gated) and writes f, per routed token.
        const double gate = m.mlp == MlpKind::SwiGLU ? 2 : 1;
        seconds += (gate + 1) * m.expert_ffn_hidden / double(c.p.expertTp()) * m.experts_per_token *
                   c.moeLoad * T * c.actBytes / c.hbm;
    }
    if (moe && (modules & kRecomputeSharedExperts) && !(modules & kRecomputeMoe))
        seconds += rerun.shared;
    if (modules & kRecomputeMlaUpProj)
        seconds += rerun.mlaUp;
    if (moe && (modules & kRecomputeLayernorm)) // two norms: read and write h each
        seconds += 2 * 2 * m.hidden / (c.sp ? c.p.tp : 1.0) * T * c.actBytes / c.hbm;
    return seconds;
}

LayerCompute layerCompute(const Context& c, bool moe)
{
    const ModelSpec& m = c.m;
    const ParallelLayout& p = c.p;
    const double T = c.tokens;
    const double d = c.d;
    LayerCompute l;
    double fwd = 0;
    double bwd = 0;
    double flops = 0;
    RerunForward rerun;
    const bool rerunGemms = (c.p.recomputeModules() &
                             (kRecomputeMlp | kRecomputeSharedExperts | kRecomputeMlaUpProj)) != 0;

    // Attention projections.
    // With TP overlap, Transformer Engine runs the GEMM chunks on several streams (their waves
    // overlap, so chunking costs little), but the reduce-scatter side of each region keeps
    // NCCL/userbuffers kernels on some SMs for the GEMM's whole length (NeMo's userbuffers
    // settings for H100: 16-24 SMs): half of the region GEMMs run on fewer SMs.
    const double chunks = c.overlapSlowdown;
    for (const GemmShape& g :
         layerGemmShapes(m, p, T, c.headsLocal, c.kvLocal, d, moe, c.moeLoad)) {
        GemmTiming* timing = l.gemm_count < l.gemms.size() ? &l.gemms[l.gemm_count++] : nullptr;
        const bool fp8 = fp8Linear(c, g);
        const bool expert = moe && expertGemm(g);
        const double fwdBefore = fwd;
        const double bwdBefore = bwd;
        addGemm(c, g.M, g.K, g.N, g.batch, &fwd, &bwd, &flops, g.tp_region ? chunks : 1, timing,
                fp8, expert ? (fp8 ? c.groupedFp8Share : c.groupedShare) : 0);
        if (expert || (moe && std::strcmp(g.name, "router") == 0)) {
            l.moe_block_forward_s += fwd - fwdBefore;
            l.moe_block_backward_s += bwd - bwdBefore;
        }
        if (rerunGemms)
            rerun.add(g.name, moe, fwd - fwdBefore);
        if (timing)
            timing->name = g.name;
    }
    // MLP tokens: each token visits k experts.
    const double mlpTokens = moe ? T * m.experts_per_token : T;
    l.gemm_forward_s = fwd;
    l.gemm_backward_s = bwd;
    l.gemm_forward_flops = flops;
    l.gemm_efficiency = fwd > 0 ? flops / (fwd * (c.fp8 ? c.fp8Peak : c.peak)) : 0;

    // Attention core: queries of this rank against all keys (context parallel splits queries).
    const double s = c.p.cp > 0 ? c.seqLocal * c.p.cp : c.seqLocal;
    const double batchHeads = c.p.micro_batch * c.headsLocal;
    // QK^T and AV: d each, or latent attention's head_dim (with RoPE) and v_head_dim.
    const double coreFlops = m.isMla() ? 2 * c.seqLocal * s * (d + m.valueHeadDim()) * batchHeads
                                       : 2 * 2 * c.seqLocal * s * d * batchHeads;
    double coreFwd = 0;
    double coreBwd = 0;
    // FP8 recipes keep the attention core in 16 bits unless the plan asks for FP8 attention
    // (Transformer Engine with cuDNN's FP8 fused attention): then the kernel's share applies to
    // the FP8 peak (an assumption, docs/engine.md, "FP8").
    const bool fp8Core = c.fp8 && c.fp8Attention;
    const double corePeak = fp8Core ? c.fp8Peak : c.peak;
    if (c.flash) {
        // A fused kernel skips the masked half of a causal score matrix; its backward does
        // 2.5x the forward's math (it recomputes the scores): Dao 2023, section 4.1.
        coreFwd = 0.5 * coreFlops / (corePeak * c.attnFwd);
        coreBwd = 2.5 * 0.5 * coreFlops / (corePeak * c.attnBwd);
    } else {
        double scratch = 0;
        addGemm(c, c.seqLocal, d, s, batchHeads, &coreFwd, &coreBwd, &scratch, 1, nullptr, fp8Core);
        addGemm(c, c.seqLocal, s, m.valueHeadDim(), batchHeads, &coreFwd, &coreBwd, &scratch, 1,
                nullptr, fp8Core);
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
    l.moe_block_forward_s += ew.moe_forward * T / c.hbm;
    l.moe_block_backward_s += ew.moe_backward * T / c.hbm;

    if (c.fp8) {
        const Fp8CastBytes cast = fp8CastBytes(c, moe);
        l.fp8_cast_forward_bytes = cast.forward;
        l.fp8_cast_backward_bytes = cast.backward;
        l.fp8_weight_cast_bytes = cast.weights * cast.weight_casts_per_microbatch;
        l.fp8_cast_forward_s = (cast.forward + l.fp8_weight_cast_bytes) / c.hbm;
        l.fp8_cast_backward_s = cast.backward / c.hbm;
    }
    l.forward_s = fwd + coreFwd + l.elementwise_forward_s + l.fp8_cast_forward_s;
    l.backward_s = bwd + coreBwd + l.elementwise_backward_s + l.fp8_cast_backward_s;
    addLaunches(c, moe, &l);
    l.moe_block_forward_s += l.router_forward_s;
    l.moe_block_backward_s += l.router_backward_s;
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
        if (!c.flash && (p.recomputeModules() & kRecomputeCoreAttn)) {
            const double drop = m.dropout ? 1 : 0;
            l.recompute_s = coreFwd + (4 + 5 * drop) * c.headsLocal * s * T / c.hbm;
        }
        l.recompute_s += moduleRecomputeSeconds(c, moe, rerun, l);
        break;
    case Recompute::Full:
        l.recompute_s = l.forward_s;
        break;
    }
    return l;
}

double lmHeadSeconds(const Context& c)
{
    const ModelSpec& m = c.m;
    double fwd = 0;
    double bwd = 0;
    double flops = 0;
    addGemm(c, c.tokens, m.hidden, double(m.vocab) / c.p.tp, 1, &fwd, &bwd, &flops);
    const double logits = c.tokens * m.vocab / c.p.tp;
    // Softmax cross-entropy: fused, 12 bytes per logit; eager PyTorch casts the logits to
    // fp32 and runs log-softmax, its reductions and backward as separate kernels.
    const double lossBytes = c.eager ? 40 : 2 + 4 + 4 + 2;
    return fwd + bwd + logits * lossBytes / c.hbm;
}

double mtpProjectionSeconds(const Context& c)
{
    const double h = c.m.hidden;
    double fwd = 0;
    double bwd = 0;
    double flops = 0;
    // Megatron-Core's eh_proj: a column-parallel linear from the concatenated normalised
    // hidden state and embedding (2h) to h.
    addGemm(c, c.tokens, 2 * h, h / c.p.tp, 1, &fwd, &bwd, &flops);
    return fwd + bwd;
}

// Activation bytes of one layer for one micro-batch (Korthikanti et al. 2022, Table 2,
// generalised to GQA, SwiGLU, MoE, dropout-free models and FlashAttention).
// torchtitan's op-level selective checkpoint (activation_checkpoint.py, _save_list and the
// "op" policy, at 9dec370 and since): a layer keeps its input, the outputs of every other
// matmul (the 1st, 3rd, ...: wq, wv, w1, w2 of a Llama block), the attention kernel's output
// and log-sum-exp, and TP's reduce-scatter outputs; norms, RoPE, activations and the other
// matmuls are recomputed. An MoE layer keeps its grouped GEMMs' outputs (an assumption: they
// are the layer's compute-intensive ops) and its shared experts as a dense MLP.
static double torchtitanSelectiveBytesPerLayer(const Context& c, bool moe)
{
    const ModelSpec& m = c.m;
    const double t = c.p.tp;
    const double seqShard = c.sp ? t : 1;
    const double q = double(m.heads) * m.headDim();
    const double kv = double(m.kv_heads) * m.headDim();
    double perToken = m.hidden / seqShard + (q + kv + q) / t; // input, wq, wv, attention out
    perToken += 2.0 * m.heads / t;                            // the fp32 log-sum-exp
    if (t > 1)
        perToken += 2.0 * m.hidden / t; // the two reduce-scatter outputs (wo and w2)
    if (moe) {
        const double k = m.experts_per_token;
        perToken += k * (2.0 * m.expert_ffn_hidden + m.hidden) / c.p.expertTp();
        perToken += m.shared_expert_ffn_hidden / t +
                    (m.shared_expert_ffn_hidden > 0 ? 1 : 0) * double(m.hidden) / seqShard;
    } else {
        perToken += double(m.ffn_hidden) / t + m.hidden / seqShard; // w1 and w2 outputs
    }
    return perToken * c.tokens * c.actBytes;
}

double activationBytesPerLayer(const Context& c, bool moe, Recompute recompute)
{
    const ModelSpec& m = c.m;
    const double t = c.p.tp;
    const double sbh = c.tokens * m.hidden;
    const double scale = c.actBytes / 2; // the formulas count 16-bit activations
    if (recompute == Recompute::Full)
        return 2 * sbh / (c.sp ? t : 1) * scale;
    if (recompute == Recompute::Selective &&
        c.plan.training.framework == TrainingFramework::Torchtitan)
        return torchtitanSelectiveBytesPerLayer(c, moe);
    const double drop = m.dropout ? 1 : 0;
    const double g = double(m.kv_heads) / m.heads;
    const double replicated = 8 + 2 * drop;
    const double f = moe ? m.expert_ffn_hidden : m.ffn_hidden;
    // The busiest expert rank's routed tokens: k per token times the load over the mean (the
    // imbalance figure, capped by a capacity factor), as its grouped GEMMs see them.
    const double k = moe ? m.experts_per_token * moeLoad(m, c.plan.figures.moe_imbalance.value) : 1;
    const double act = (m.mlp == MlpKind::SwiGLU ? 6 : 4) * f / m.hidden * k;
    double sharded = 2 + 4 * g + 2 + act;
    double replicatedHere = replicated;
    const bool fp8 = transformerEngineFp8(c.plan);
    // An MoE layer's dispatch: the grouped fc1 saves its permuted input (k copies of each
    // token, gathered over expert TP; one byte in FP8), and the unpermute saves the experts'
    // output to weigh it by the router's probabilities (Megatron-Core moe/experts.py
    // TEGroupedMLP, moe/moe_utils.py unpermute), both sequence-sharded by TP as the tokens are.
    const double permuted = moe ? ((fp8 ? 1 : 2) * c.p.expertTp() + 2) * k : 0.0;
    sharded += permuted;
    // fc2's saved input: the activation's output, 2 f / h bytes per token and expert (one byte
    // in FP8); the rest of `act` is the fc1 output the activation's backward reads.
    const double fc2Input = (fp8 ? 1 : 2) * f / m.hidden * k;
    if (fp8) {
        // Transformer Engine saves each GEMM's input for the weight gradient in FP8, one byte
        // (transformer_engine/pytorch/module/linear.py and layernorm_linear.py: the quantized
        // input is what the forward saves): the QKV and fc1 inputs (the norms' outputs) and
        // fc2's input halve; the projection keeps an FP8 copy of the attention output beside
        // the bf16 one the attention kernel saves.
        replicatedHere -= 2;
        sharded += 1 - f / m.hidden * k;
    }
    // Megatron-Core's --recompute-modules: a recomputed module keeps only its input (the
    // checkpoint's, in 16 bits).
    const unsigned modules = recompute == Recompute::Selective ? c.p.recomputeModules() : 0u;
    const bool wholeMlp = moe ? (modules & kRecomputeMoe) != 0 : (modules & kRecomputeMlp) != 0;
    if (wholeMlp) {
        sharded -= act - (fp8 ? f / m.hidden * k : 0.0) + permuted; // all but the input
        replicatedHere += fp8 ? 1 : 0;                              // fc1's input, the checkpoint's
    } else if (moe && (modules & kRecomputeMoeAct)) {
        sharded -= fc2Input;
    }
    if (moe && (modules & kRecomputeLayernorm))
        replicatedHere -= fp8 ? 1 : 2; // the pre-MLP norm's output (a module of its own)
    double perToken = replicatedHere * (c.sp ? 1 / t : 1) + sharded / t;
    // The unfused attention's scores, unless a selective recompute re-runs the core.
    if (!c.flash && (recompute == Recompute::None ||
                     (recompute == Recompute::Selective && !(modules & kRecomputeCoreAttn))))
        perToken += (2 + 3 * drop) * m.heads * c.seqLocal * c.p.cp / double(m.hidden) / t;
    return perToken * sbh * scale;
}

double routedExpertParamsPerLayerPerGpu(const ModelSpec& m, const ParameterCount& count,
                                        const ParallelLayout& p)
{
    const double shared =
        (m.mlp == MlpKind::SwiGLU ? 3.0 : 2.0) * m.hidden * m.shared_expert_ffn_hidden;
    return (count.mlp_per_layer - shared) / (p.expertTp() * std::min(p.ep, m.experts));
}

double paramsPerLayerPerGpu(const ModelSpec& m, const ParameterCount& count,
                            const ParallelLayout& p, bool moe)
{
    const double t = p.tp;
    double params = count.attention_per_layer / t + count.norms_per_layer;
    if (moe) {
        // Routed experts split over EP and expert TP; shared experts over TP as a dense MLP.
        const double shared =
            (m.mlp == MlpKind::SwiGLU ? 3.0 : 2.0) * m.hidden * m.shared_expert_ffn_hidden;
        params +=
            count.router_per_layer + routedExpertParamsPerLayerPerGpu(m, count, p) + shared / t;
    } else
        params += count.dense_mlp_per_layer / t;
    return params;
}

} // namespace paraplan::layercost
