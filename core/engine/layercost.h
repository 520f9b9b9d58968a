#pragma once

#include "plan.h"
#include "stepmodel.h"

namespace paraplan::layercost {

// The per-layer cost of a plan on one GPU: GEMMs, attention and element-wise work, forward,
// backward and recompute; activation memory and parameters per layer. The engine's inner
// part (core/engine/stepmodel.cpp), not an API of its own.

// Everything the per-layer cost needs, resolved once per evaluation.
struct Context
{
    const Plan& plan;
    const ModelSpec& m;
    const ParallelLayout& p;
    const GpuSpec* gpu = nullptr;
    double peak = 0;          // FLOP/s of the dtype (of bf16 under fp8: the 16-bit layers)
    double hbm = 0;           // B/s achievable
    double gemmShare = 0;     // the GPU's best GEMM share of peak (at its reference shape)
    double gemmReference = 0; // kernels::gemmReferenceEfficiency of the GPU's figures
    double attnFwd = 0;       // the attention kernel's share of peak at this s and d, forward
    double attnBwd = 0;       // ... backward
    double actBytes = 2;      // bytes per activation element
    double seqLocal = 0;      // s / cp
    double tokens = 0;        // b s / cp per micro-batch
    double headsLocal = 0;
    double kvLocal = 0;
    double d = 0;
    bool flash = true;
    bool sp = false;
    bool eager = false;         // element-wise work as PyTorch eager operators
    bool pytorch = false;       // a PyTorch framework (autograd, op-level checkpoints)
    double overlapSlowdown = 1; // TP-region GEMMs sharing their SMs with overlap kernels
    double launchGap = 0;       // GPU idle between back-to-back kernels (s)
    double launchHost = 0;      // host time to issue one kernel (s)
    double cudaGraphs = 0;      // CudaGraphs as a number: 0 none, 1 layers, 2 full
    // dtype fp8: the linear layers' GEMMs (QKV, output projection, MLP, experts) run on these
    // figures with 1-byte operands; the attention core (unless fp8Attention), the router and
    // the LM head keep the 16-bit ones above (docs/engine.md, "FP8").
    bool fp8 = false;
    double fp8Peak = 0;         // FLOP/s, dense FP8
    double fp8Share = 0;        // the FP8 GEMM share of that peak at its reference shape
    double fp8Reference = 0;    // kernels::fp8GemmReferenceEfficiency of the GPU's figures
    double fp8BwdShare = 0;     // the backward's (promoted-accumulation) FP8 GEMM share
    double fp8BwdReference = 0; // kernels::fp8PromotedReferenceEfficiency
    Fp8Recipe fp8Recipe = Fp8Recipe::Auto; // resolved
    bool fp8TnOnly = false;      // FP8 GEMMs take K-major operands only: transposed copies
    bool fp8Attention = false;   // the attention core in FP8 as well
    double microbatches = 1;     // per step: weights cast once per step amortize over them
    double moeLoad = 1;          // MoE: the busiest expert rank's tokens over the balanced share
    double groupedShare = 0;     // 16-bit grouped expert GEMMs' share of peak (0: dense figures)
    double groupedFp8Share = 0;  // FP8 grouped expert GEMMs' share of the FP8 peak (0: dense)
    double groupedPairBytes = 0; // bytes per token-expert pair per hidden element (0: copies)
    // MoE on Megatron-Core: the router's and the dispatcher's preprocessing kernels of one pass
    // issued one by one from the host (routerHostKernels), and those a CUDA graph replays
    // (routerGraphKernels): see routerBlockKernels in stepmodel.cpp.
    double routerHostKernels = 0;
    double routerGraphKernels = 0;
    double graphGap = 0; // GPU idle between the kernels a CUDA graph replays (s)
    // (A field added here that layerCompute reads belongs in the engine's key of its per-layer
    // answers: layerKey in stepmodel.cpp.)
};

/// Forward, backward (dgrad + wgrad) of one GEMM; `slowdown` stretches the forward and dgrad
/// GEMMs that run beside TP-overlap kernels. `timing`, when given, receives the forward's
/// terms (for the derivation). `fp8`: the three GEMMs in FP8 (c.fp8Peak, c.fp8Share).
void addGemm(const Context& c, double M, double K, double N, double batch, double* forward,
             double* backward, double* flops, double slowdown = 1, GemmTiming* timing = nullptr,
             bool fp8 = false, double cap = 0);
/// HBM bytes of the FP8 quantization passes of one layer, one micro-batch (docs/engine.md, "FP8").
struct Fp8CastBytes
{
    double forward = 0;  // the linear layers' inputs: read 16-bit, amax, write FP8 copies
    double backward = 0; // the output gradients, the same
    double weights = 0;  // the weights, per cast (once per step or per micro-batch)
    double weight_casts_per_microbatch = 0; // 1 / micro-batches on TE, 1 on torchao
};
Fp8CastBytes fp8CastBytes(const Context& c, bool moe);
/// One transformer layer (dense, or its MoE variant), one micro-batch.
LayerCompute layerCompute(const Context& c, bool moe);
/// The LM head's forward and backward with its softmax cross-entropy, one micro-batch.
double lmHeadSeconds(const Context& c);
/// A multi-token-prediction module's projection (2h -> h), forward and backward.
double mtpProjectionSeconds(const Context& c);
/// Activation bytes of one layer for one micro-batch.
double activationBytesPerLayer(const Context& c, bool moe, Recompute recompute);
/// Parameters of one layer held per GPU before ZeRO sharding.
double paramsPerLayerPerGpu(const ModelSpec& m, const ParameterCount& count,
                            const ParallelLayout& p, bool moe);
/// Of an MoE layer's, the routed experts' per GPU (split over EP and expert TP).
double routedExpertParamsPerLayerPerGpu(const ModelSpec& m, const ParameterCount& count,
                                        const ParallelLayout& p);

} // namespace paraplan::layercost
