#pragma once

#include <array>
#include <string>
#include <vector>

namespace paraplan {

enum class MlpKind
{
    GeLU,   ///< two matrices, h -> f -> h
    SwiGLU, ///< three matrices (gate, up, down)
};

/// A decoder-only transformer, dense or mixture-of-experts.
struct ModelSpec
{
    std::string name;
    std::string preset;
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0; ///< grouped-query attention; = heads for multi-head attention
    int head_dim = 0; ///< 0: hidden / heads
    int ffn_hidden = 0;
    int vocab = 0;
    MlpKind mlp = MlpKind::GeLU;
    bool tied_embeddings = false;
    bool learned_positions = false; ///< GPT-style position embedding table (s x h parameters)
    int max_positions = 0;
    bool biases = false;  ///< GPT-style linear and LayerNorm biases
    bool dropout = false; ///< dropout layers (their masks are activations to store)
    // Mixture of experts (experts == 0: dense).
    int experts = 0;
    int experts_per_token = 0;
    int expert_ffn_hidden = 0;
    int dense_layers = 0; ///< layers with a dense MLP (leading ones unless moe_layer_pattern)
    /// Always-active shared expert(s) of each MoE layer (Qwen2-MoE, DeepSeek), their total
    /// FFN width; 0: none.
    int shared_expert_ffn_hidden = 0;
    /// Tokens an expert takes per micro-batch, over the balanced share (Megatron
    /// --moe-expert-capacity-factor, GShard/Switch's capacity factor); 0: dropless.
    double capacity_factor = 0;
    // Multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank 0: ordinary attention). Q and
    // K heads are head_dim wide (qk_nope + qk_rope), V heads v_head_dim.
    int q_lora_rank = 0;   ///< 0: a full-rank Q projection
    int kv_lora_rank = 0;  ///< the compressed KV width
    int rope_head_dim = 0; ///< the decoupled RoPE part of each Q/K head
    int v_head_dim = 0;
    /// Sliding-window attention (Mistral, Gemma 2, GPT-OSS): each query sees the last
    /// `sliding_window` tokens on the layers sliding_pattern marks (all layers when it is
    /// empty); 0: full causal attention everywhere.
    int sliding_window = 0;
    bool attention_sinks = false; ///< a learned sink logit per head (GPT-OSS)
    /// Multi-token-prediction modules (DeepSeek-V3, Megatron --mtp-num-layers): each an
    /// embedding-hidden projection, one transformer layer and the shared LM head again, on
    /// the last pipeline stage.
    int mtp_layers = 0;
    // (A number added above belongs in modelNumbers() too: the keys of the engine's tables of
    // answers that depend on the model.)
    /// Which layers are MoE, one 0/1 per layer (Megatron --moe-layer-freq as a list); empty:
    /// the first `dense_layers` are dense, the rest MoE.
    std::vector<unsigned char> moe_layer_pattern;
    /// Which layers use the sliding window, one 0/1 per layer (Hugging Face layer_types);
    /// empty: every layer when sliding_window > 0.
    std::vector<unsigned char> sliding_pattern;
    std::string source;

    bool isMoe() const { return experts > 0; }
    int headDim() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
    int moeLayers() const { return isMoe() ? layers - dense_layers : 0; }
    /// Layer `i` (0-based) has experts.
    bool isMoeLayer(int i) const
    {
        if (!isMoe())
            return false;
        if (!moe_layer_pattern.empty())
            return i >= 0 && i < int(moe_layer_pattern.size()) && moe_layer_pattern[size_t(i)];
        return i >= dense_layers;
    }
    /// Layer `i` attends over the sliding window only.
    bool isSlidingLayer(int i) const
    {
        if (sliding_window <= 0)
            return false;
        if (sliding_pattern.empty())
            return true;
        return i >= 0 && i < int(sliding_pattern.size()) && sliding_pattern[size_t(i)];
    }
    bool isMla() const { return kv_lora_rank > 0; }
    int valueHeadDim() const { return isMla() && v_head_dim > 0 ? v_head_dim : headDim(); }
};

/// Every number of the model (all but its names and source), in a fixed order: what the
/// engine's per-thread tables of answers that depend on the model are keyed by (validateModel,
/// countParameters and the per-layer cost read nothing else of it).
using ModelNumbers = std::array<double, 28>;
ModelNumbers modelNumbers(const ModelSpec& model);

/// Parameter counts, by part.
struct ParameterCount
{
    double attention_per_layer = 0; ///< Q, K, V, O (+ biases)
    double mlp_per_layer = 0;       ///< one dense MLP, or all experts of an MoE layer
    double dense_mlp_per_layer = 0; ///< the dense MLP of a dense layer
    double norms_per_layer = 0;
    double router_per_layer = 0;
    double embedding = 0; ///< token (and learned position) embedding
    double lm_head = 0;   ///< 0 when tied to the embedding
    double final_norm = 0;
    double total = 0;            ///< the model as published: multi-token-prediction modules apart
    double active_per_token = 0; ///< what one token touches (MoE: k of E experts)
    /// One multi-token-prediction module's own parameters (its layer, projection and norms;
    /// it shares the embedding and the LM head), 0 without
    double mtp_per_module = 0;

    double layer(bool moe) const
    {
        return attention_per_layer + norms_per_layer +
               (moe ? mlp_per_layer + router_per_layer : dense_mlp_per_layer);
    }
};
ParameterCount countParameters(const ModelSpec& model);

/// Model FLOPs of one training step (forward + backward, no recompute), Megatron-LM's
/// generalisation of Korthikanti et al. 2022:
/// 12 B s L h^2 [ (1 + g/a + s/h)(q/h) + (f/h) k c + V/(2 L h) ], q = a x head_dim,
/// k = experts per token (1 dense), c = 1.5 for SwiGLU, 1 otherwise; MoE and dense layers
/// are summed separately. Written as 6 B s x (the layer's weight-matrix parameters a token
/// touches) + 6 B s^2 L a (d_qk + d_v) + 6 B s h V, which is the same sum and also covers
/// shared experts (their width adds to k f) and latent attention (its low-rank matrices).
double modelFlopsPerStep(const ModelSpec& model, double global_batch, int seq_len);
/// The attention's weight matrices of one layer (no biases, no norms): Q, K, V, O, or for
/// latent attention (DeepSeek-V2, arXiv:2405.04434, section 2.1) the down- and up-projections
/// of Q and of the joint KV, the decoupled RoPE key and the output.
double attentionMatrices(const ModelSpec& model);

/// The zeros of a 0/1 layer pattern: its dense layers (moe_layer_pattern).
int patternZeros(const std::vector<unsigned char>& pattern);

/// Of a causal attention over `seq` tokens, the share of query-key pairs a sliding window of
/// `window` tokens keeps: each query sees min(position + 1, window) keys.
double slidingWindowShare(double seq, double window);

/// Problems with the description itself, one message each.
std::vector<std::string> validateModel(const ModelSpec& model);

} // namespace paraplan
