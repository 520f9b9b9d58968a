#pragma once

// The GEMM and attention shapes of a plan on one GPU for one micro-batch: what the engine
// times (core/engine/layercost.cpp) and what the probe measures for `--plan`.

#include "plan.h"

#include <array>
#include <string>
#include <vector>

namespace paraplan {

/// One GEMM: (M x K) x (K x N), `batch` of them (the local experts of an MoE layer).
struct GemmShape
{
    const char* name = ""; ///< "qkv", "attn_proj", "mlp_up", "mlp_down", "router", "lm_head"
    double M = 0;
    double K = 0;
    double N = 0;
    double batch = 1;
    bool tp_region = false; ///< inside a TP region (TP-overlap kernels share its SMs)
};

/// The projection and MLP GEMMs of one layer: at most ten (latent attention's five and an MoE
/// layer with shared experts), kept in place (the engine asks for them on every evaluation, the
/// search's inner loop).
struct LayerGemms
{
    std::array<GemmShape, 10> items;
    size_t count = 0;

    const GemmShape* begin() const { return items.data(); }
    const GemmShape* end() const { return items.data() + count; }
};

/// The projection and MLP GEMMs of one layer (dense or MoE). `tokens` = micro-batch x
/// sequence / CP; heads and KV heads are those on one TP rank. An MoE layer's experts take
/// the tokens Megatron-Core's dispatcher brings them: the sequence-parallel shard (tokens / tp)
/// of each rank of the expert-TP group, k copies of each, `load` times the balanced share on the
/// busiest rank; shared experts run as a TP-split dense MLP.
LayerGemms layerGemmShapes(const ModelSpec& m, const ParallelLayout& p, double tokens,
                           double headsLocal, double kvLocal, double headDim, bool moe,
                           double load = 1);
/// Tokens of one micro-batch that enter an MoE layer's dispatch on one GPU: the sequence-
/// parallel shard (Megatron-Core's MoE layer refuses TP without SP, moe_layer.py).
double moeShardTokens(const ParallelLayout& p, double tokens);
/// The busiest expert rank's tokens over the balanced share: the imbalance figure, capped by
/// the capacity factor (tokens over capacity are dropped).
double moeLoad(const ModelSpec& m, double imbalance);

/// One attention core: `batch_heads` = micro-batch x heads on one TP rank, queries `seq_q`
/// (sequence / CP) against `seq_kv` keys, head dimension `head_dim`.
struct AttentionShape
{
    double batch_heads = 0;
    double seq_q = 0;
    double seq_kv = 0;
    double head_dim = 0;
};

/// A plan's shapes: one layer's GEMMs (its MoE layer when it has experts), the LM head and
/// the attention core.
struct PlanShapes
{
    std::vector<GemmShape> gemms;
    AttentionShape attention;
};
PlanShapes planShapes(const Plan& plan);

} // namespace paraplan
