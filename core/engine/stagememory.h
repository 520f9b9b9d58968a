#pragma once

#include "layercost.h"
#include "model.h"
#include "plan.h"
#include "stepmodel.h"

#include <algorithm>

namespace paraplan {

// Per-stage memory: the one place its formulas live. The engine's evaluation
// (core/engine/stepmodel.cpp, Evaluation::stageSetup() and stages()) fills its StageCost
// memory fields with these functions, and the search's memory-only verdict
// (fullestStageBytes(), through core/search/searchmemory.h) walks the stages with the same
// ones, so that the two agree to the last bit by construction.

/// The memory terms of a layout that every pipeline stage shares, per GPU.
struct LayoutMemoryTerms
{
    int pp = 1;
    int microbatches = 1; // per step, per pipeline (ParallelLayout::microBatches())
    int interleave = 1;   // model chunks per rank (the interleaved schedule's v)
    // Bytes per parameter of the kept weights, the gradient buffer and the optimizer state
    // (master copy and moments), as the plan's framework keeps them (modelStateBytes()).
    double weightBytes = 2;
    double gradBytes = 4;
    double optimizerBytes = 12;
    // The 16-bit copy the GEMMs read where the kept weights are fp32 (the PyTorch frameworks'
    // mixed precision), held unsharded for all the stage's layers: FSDP's gathered parameters
    // kept from the forward to the backward (ZeRO-2, or ZeRO-3 under a pipeline), or
    // autocast's casts saved for the backward (DDP). Bytes per parameter.
    double heldCopyBytes = 0;
    double gatherBytes = 2; // a parameter as the ZeRO all-gathers move it (the compute dtype)
    double bucketBytes = 0; // PyTorch DDP's gradient buckets, per parameter (not bucket views)
    int shardRanks = 1;     // the ZeRO shard group (ParallelLayout::shardRanks())
    // The divisors of the weights, gradients and optimizer states (the shard group where the
    // ZeRO stage shards them, else 1).
    double paramShard = 1;
    double gradShard = 1;
    double optimizerShard = 1;
    double denseParams = 0;     // parameters of one dense layer per GPU before ZeRO sharding
    double moeParams = 0;       // ... of one MoE layer (0 for a dense model)
    double moeExpertParams = 0; // ... its routed experts' share of moeParams
    // The routed experts' shard divisors: their ZeRO / distributed-optimizer shard group is
    // the expert data-parallel group, tp x cp x dp / (ep x expert_tp) ranks (Megatron-Core
    // parallel_state's expert grid; torchtitan's efsdp mesh), not the DP x CP group.
    int expertShardRanks = 1;
    double expertParamShard = 1;
    double expertGradShard = 1;
    double expertOptimizerShard = 1;
    double denseAct = 0;            // activation bytes of one dense layer, one micro-batch
    double moeAct = 0;              // ... of one MoE layer
    double recomputeWorkingSet = 0; // full recompute: one layer's full activations
    double embeddingParams = 0;     // the first stage's
    double mtpParams = 0;           // the last stage's multi-token-prediction modules (all of them)
    double mtpExpertParams = 0;     // ... their routed experts' share
    double mtpAct = 0;              // ... their activation bytes, one micro-batch
    double finalNormParams = 0;     // the last stage's
    double lmHeadParams = 0;        // the last stage's (0: tied to the embedding, no pipeline)
    double logitsBytes = 0;         // the last stage's loss peak (lossBytesPerLogit())
    double sequenceParallelBytes = 0; // the all-gathered input of a TP region (SP only)
    double zero3GatherBytes = 0;      // ZeRO-3 without PP: the computing and prefetched layers
    // dtype fp8 on Transformer Engine: cached FP8 weights, per layer parameter, beyond
    // weightBytes (negative with FP8 weights: the FP8 tensors replace the 16-bit weight).
    double fp8CopyBytes = 0;
    double fp8GatherSaving = 0; // FP8 weights: bytes per layer parameter the gathers do not move
};

/// Of the layers [first, first + count): how many have a dense MLP, and how many of the dense
/// and of the MoE ones attend over a sliding window.
struct LayerMix
{
    int dense = 0;
    int slidingDense = 0;
    int slidingMoe = 0;
};
inline LayerMix layerMix(const ModelSpec& m, int first, int count)
{
    LayerMix x;
    if (m.moe_layer_pattern.empty()) {
        const int denseEnd = m.isMoe() ? m.dense_layers : m.layers; // MoE follow the dense
        x.dense = std::max(0, std::min(first + count, denseEnd) - first);
    } else {
        for (int i = first; i < first + count; ++i)
            x.dense += m.isMoeLayer(i) ? 0 : 1;
    }
    if (m.sliding_window > 0) {
        for (int i = first; i < first + count; ++i) {
            if (m.isSlidingLayer(i))
                ++(m.isMoeLayer(i) ? x.slidingMoe : x.slidingDense);
        }
    }
    return x;
}

/// The memory fields of `c` (actBytes, seqLocal, tokens, sp, flash) from its plan, with the
/// plan's resolved attention kernel (resolvedAttention()).
void setMemoryContext(layercost::Context& c, AttentionKernel attention);
/// Bytes per parameter of what a framework keeps for training (LayoutMemoryTerms' fields of the
/// same names), from its source (docs/engine.md, "Memory per framework").
struct ModelStateBytes
{
    double weights = 2;      // the kept parameter
    double grads = 4;        // the gradient buffer (Megatron's main_grad, FSDP's sharded grad)
    double master = 4;       // an fp32 master copy (0 where the kept parameter is the fp32 one)
    double moments = 8;      // Adam's exp_avg and exp_avg_sq (SGD: the momentum)
    double heldCopy = 0;     // heldCopyBytes
    double buckets = 0;      // bucketBytes
    double gatheredCopy = 2; // bytes of a gathered parameter (ZeRO-3's working copies)
};
ModelStateBytes modelStateBytes(const Plan& plan);

/// Bytes per stored activation element: 4 for fp32 and tf32 training, 2 otherwise (fp8
/// recipes keep activations in 16 bits).
double activationBytes(Dtype dtype);

/// Bytes per logit (per vocabulary entry of each token on the last stage) the loss holds at
/// its peak, as the plan's framework computes it (lossBytesPerLogit(): 6 for Megatron-Core's
/// bf16 cross entropy, 12 for PyTorch's).
double lossBytesPerLogit(const Plan& plan);

/// The layout's memory terms into `t` (every field; filled in place, as the evaluation's hot
/// path wants: a returned copy costs it more than the terms); `c` has its memory fields set
/// (setMemoryContext()), `count` is countParameters(c.m).
void setLayoutMemoryTerms(const layercost::Context& c, const ParameterCount& count,
                          LayoutMemoryTerms& t);

/// The parameters per GPU of `dense` dense and `moe` MoE layers (before ZeRO sharding).
inline double layerParams(const LayoutMemoryTerms& t, int dense, int moe)
{
    return dense * t.denseParams + moe * t.moeParams;
}

/// Stage `i`'s memory that does not depend on its place in the pipeline: params,
/// weights_bytes, grads_bytes, optimizer_bytes, activation_bytes_per_layer and buffers_bytes,
/// from its layers (st.layers, st.moe_layers set) of which `denseHere` are dense.
inline void setStageMemory(const LayoutMemoryTerms& t, StageCost& st, int i, int denseHere)
{
    st.params = layerParams(t, denseHere, st.moe_layers);
    st.expert_params = st.moe_layers * t.moeExpertParams;
    if (i == 0)
        st.params += t.embeddingParams;
    if (i == t.pp - 1) {
        st.params += t.finalNormParams;
        // The LM head: its own matrix, or (pipelined and tied) a copy of the embedding.
        st.params += t.lmHeadParams;
        st.params += t.mtpParams;
        st.expert_params += t.mtpExpertParams;
    }
    // ZeRO-3 with pipeline parallelism keeps a stage's gathered parameters across its
    // micro-batches (torchtitan: no reshard after forward under PP), as ZeRO-2 does.
    // Routed experts on their own shard group (a dense model has none: the sums are the
    // dense ones, bit for bit).
    const double expert = st.expert_params;
    const double other = st.params - expert;
    st.weights_bytes = other * t.weightBytes / t.paramShard;
    st.weights_bytes += expert * t.weightBytes / t.expertParamShard;
    // FP8 on Transformer Engine: each layer's FP8 weights (and their transposed or column-wise
    // copies) cached from the step's first micro-batch on.
    st.weights_bytes +=
        (layerParams(t, denseHere, st.moe_layers) - expert) * t.fp8CopyBytes / t.paramShard;
    st.weights_bytes += expert * t.fp8CopyBytes / t.expertParamShard;
    st.weights_bytes += st.params * t.heldCopyBytes;
    st.grads_bytes = other * t.gradBytes / t.gradShard + expert * t.gradBytes / t.expertGradShard;
    st.optimizer_bytes = other * t.optimizerBytes / t.optimizerShard +
                         expert * t.optimizerBytes / t.expertOptimizerShard;
    st.activation_bytes_per_layer =
        st.layers ? (denseHere * t.denseAct + st.moe_layers * t.moeAct) / st.layers : 0;
    st.buffers_bytes = t.recomputeWorkingSet + st.params * t.bucketBytes;
    if (i == t.pp - 1) // the loss's peak over the logits, one micro-batch
        st.buffers_bytes += t.logitsBytes;
    st.buffers_bytes += t.sequenceParallelBytes;
    st.buffers_bytes += t.zero3GatherBytes;
}

/// The bytes stage `st`'s parameter all-gathers move: its routed experts' (`experts`), else
/// the rest (all of its parameters with `withExperts`): gatherBytes per parameter, less the
/// FP8 weights' saving on the layers' own.
inline double stageGatherBytes(const LayoutMemoryTerms& t, const StageCost& st, bool experts,
                               bool withExperts = false)
{
    const double expert = st.expert_params;
    const double expertBytes = expert * (t.gatherBytes - t.fp8GatherSaving);
    if (experts)
        return expertBytes;
    const double layers = layerParams(t, st.layers - st.moe_layers, st.moe_layers) - expert;
    const double rest = (st.params - expert) * t.gatherBytes - layers * t.fp8GatherSaving;
    return withExperts ? rest + expertBytes : rest;
}

/// The micro-batches whose activations pipeline rank `i` holds at its peak, in whole-stage
/// units: under 1F1B min(m, p - i); under the interleaved schedule the model chunks of its
/// warm-up and the first steady forward, min((p - i - 1) 2 + (v - 1) p + 1, m v), each 1/v of
/// the stage (Megatron-Core's get_pp_rank_microbatches, schedules.py; PyTorch's
/// ScheduleInterleaved1F1B counts its warm-up alike).
inline double inFlightMicrobatches(int microbatches, int pp, int interleave, int i)
{
    if (interleave <= 1)
        return std::min(microbatches, pp - i);
    const long long chunks =
        std::min<long long>(2LL * (pp - i - 1) + static_cast<long long>(interleave - 1) * pp + 1,
                            static_cast<long long>(microbatches) * interleave);
    return double(chunks) / interleave;
}

/// What depends on stage `i`'s place: the micro-batches whose activations it holds
/// (in_flight_microbatches), activations_bytes and total_bytes; after setStageMemory().
inline void setStageInFlight(const LayoutMemoryTerms& t, StageCost& st, int i, int denseHere)
{
    st.in_flight_microbatches = inFlightMicrobatches(t.microbatches, t.pp, t.interleave, i);
    st.activations_bytes =
        (denseHere * t.denseAct + st.moe_layers * t.moeAct + (i == t.pp - 1 ? t.mtpAct : 0.0)) *
        st.in_flight_microbatches;
    st.total_bytes = st.weights_bytes + st.grads_bytes + st.optimizer_bytes + st.activations_bytes +
                     st.buffers_bytes;
}

/// The bytes per GPU of `plan`'s fullest pipeline stage without its timing: the figure
/// StepEngine::evaluate() reports as StepCost::max_stage_total_bytes, bit for bit.
/// `count` is countParameters(plan.model); meaningful only for a plan the engine accepts
/// (validatePlan() finds no issue). Makes no heap allocation once this thread has walked a
/// pipeline as deep.
double fullestStageBytes(const Plan& plan, const ParameterCount& count);

/// The memory verdict's warning, appended to `text` where the plan does not fit ("does not
/// fit: over by 3.2 GiB at stage 0 (...)") or fits without the allocator's reserve ("tight:
/// ..."); `hbmText` is the GPU's HBM in GiB as written.
void appendMemoryWarning(const StepCost& cost, const ParallelLayout& p, const EngineFigures& f,
                         const std::string& hbmText, std::string& text);

} // namespace paraplan
