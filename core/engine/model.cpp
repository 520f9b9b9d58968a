#include "model.h"

#include "inputlimits.h"

namespace paraplan {

double attentionMatrices(const ModelSpec& m)
{
    const double h = m.hidden;
    const double a = m.heads;
    const double d = m.headDim();
    if (m.isMla()) {
        const double qk = a * d;
        const double q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * qk : h * qk;
        const double kv = h * (m.kv_lora_rank + m.rope_head_dim) +
                          double(m.kv_lora_rank) * a * (d - m.rope_head_dim + m.valueHeadDim());
        return q + kv + a * m.valueHeadDim() * h;
    }
    const double q = a * d;
    const double kv = static_cast<double>(m.kv_heads) * d;
    return h * q + 2 * h * kv + q * h;
}

ParameterCount countParameters(const ModelSpec& m)
{
    ParameterCount c;
    const double h = m.hidden;
    const double q = static_cast<double>(m.heads) * m.headDim();
    const double kv = static_cast<double>(m.kv_heads) * m.headDim();
    c.attention_per_layer = attentionMatrices(m);
    if (m.isMla()) // the RMSNorms of the compressed Q and KV
        c.attention_per_layer += m.q_lora_rank + m.kv_lora_rank;
    if (m.biases)
        c.attention_per_layer += q + 2 * kv + h;
    const double mats = m.mlp == MlpKind::SwiGLU ? 3 : 2;
    c.dense_mlp_per_layer = mats * h * m.ffn_hidden;
    if (m.biases)
        c.dense_mlp_per_layer += m.ffn_hidden * (mats - 1) + h;
    const double shared = mats * h * m.shared_expert_ffn_hidden;
    if (m.isMoe()) {
        const double expert = mats * h * m.expert_ffn_hidden;
        c.mlp_per_layer = m.experts * expert + shared;
        c.router_per_layer = h * m.experts;
    } else {
        c.mlp_per_layer = c.dense_mlp_per_layer;
    }
    c.norms_per_layer = (m.biases ? 4 : 2) * h;
    c.embedding = static_cast<double>(m.vocab) * h;
    if (m.learned_positions)
        c.embedding += static_cast<double>(m.max_positions) * h;
    c.lm_head = m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * h;
    c.final_norm = (m.biases ? 2 : 1) * h;
    const int moe = m.moeLayers();
    const int dense = m.layers - moe;
    c.total = dense * c.layer(false) + moe * c.layer(true) + c.embedding + c.lm_head + c.final_norm;
    double activeMoe = c.layer(false);
    if (m.isMoe())
        activeMoe = c.attention_per_layer + c.norms_per_layer + c.router_per_layer +
                    m.experts_per_token * mats * h * m.expert_ffn_hidden + shared;
    c.active_per_token =
        dense * c.layer(false) + moe * activeMoe + c.embedding + c.lm_head + c.final_norm;
    if (m.attention_sinks) {
        c.attention_per_layer += m.heads;
        c.total += double(m.layers) * m.heads;
        c.active_per_token += double(m.layers) * m.heads;
    }
    // DeepSeek-V3's module (arXiv 2412.19437, section 2.2): the projection M (2h x h), the
    // RMSNorms of the hidden state and of the embedding and a layer like the last one.
    if (m.mtp_layers > 0)
        c.mtp_per_module = 2 * h * h + 2 * h + c.layer(m.isMoeLayer(m.layers - 1));
    return c;
}

double modelFlopsPerStep(const ModelSpec& m, double global_batch, int seq_len)
{
    const double B = global_batch;
    const double s = seq_len;
    const double h = m.hidden;
    const double mats = m.mlp == MlpKind::SwiGLU ? 3 : 2;
    const int moe = m.moeLayers();
    const int dense = m.layers - moe;
    // Forward + backward: 6 FLOPs per weight per token, and the score and context products
    // (2 s d per head each way, three times over).
    const double perLayerAttention = 6 * B * s * attentionMatrices(m) +
                                     6 * B * s * s * m.heads * (m.headDim() + m.valueHeadDim());
    double flops = m.layers * perLayerAttention;
    flops += dense * 6 * B * s * mats * h * m.ffn_hidden;
    if (moe > 0)
        flops += moe * 6 * B * s * mats * h *
                 (double(m.experts_per_token) * m.expert_ffn_hidden + m.shared_expert_ffn_hidden);
    flops += 6 * B * s * h * m.vocab; // the LM head: 12 B s L h^2 x V/(2 L h)
    return flops;
}

namespace {

// A 0/1 list as one number: its length and a 48-bit hash of its bits (exact in a double).
double patternKey(const std::vector<unsigned char>& pattern)
{
    if (pattern.empty())
        return 0;
    unsigned long long h = 1469598103934665603ULL;
    for (unsigned char b : pattern)
        h = (h ^ (b ? 1u : 2u)) * 1099511628211ULL;
    return double(pattern.size()) * 281474976710656.0 + double(h >> 16);
}

} // namespace

int patternZeros(const std::vector<unsigned char>& pattern)
{
    int zeros = 0;
    for (unsigned char b : pattern)
        zeros += b ? 0 : 1;
    return zeros;
}

double slidingWindowShare(double seq, double window)
{
    if (!(seq > 0) || !(window > 0) || window >= seq)
        return 1;
    const double causal = seq * (seq + 1) / 2;
    const double kept = window * (window + 1) / 2 + (seq - window) * window;
    return kept / causal;
}

ModelNumbers modelNumbers(const ModelSpec& m)
{
    return {double(m.layers),
            double(m.hidden),
            double(m.heads),
            double(m.kv_heads),
            double(m.head_dim),
            double(m.ffn_hidden),
            double(m.vocab),
            double(static_cast<int>(m.mlp)),
            double(m.tied_embeddings),
            double(m.learned_positions),
            double(m.max_positions),
            double(m.biases),
            double(m.dropout),
            double(m.experts),
            double(m.experts_per_token),
            double(m.expert_ffn_hidden),
            double(m.dense_layers),
            double(m.shared_expert_ffn_hidden),
            double(m.q_lora_rank),
            double(m.kv_lora_rank),
            double(m.rope_head_dim),
            double(m.v_head_dim),
            m.capacity_factor,
            double(m.sliding_window),
            double(m.attention_sinks),
            double(m.mtp_layers),
            patternKey(m.moe_layer_pattern),
            patternKey(m.sliding_pattern)};
}

std::vector<std::string> validateModel(const ModelSpec& m)
{
    std::vector<std::string> problems;
    auto within = [&](const limits::Range& range, int value) {
        if (auto problem = limits::check(range, value))
            problems.push_back(std::move(*problem));
    };
    within(limits::kLayers, m.layers);
    within(limits::kHidden, m.hidden);
    within(limits::kHeads, m.heads);
    within({"model.kv_heads", 1, limits::kHeads.max, "heads"}, m.kv_heads);
    within(limits::kHeadDim, m.head_dim);
    within(limits::kFfnHidden, m.ffn_hidden);
    within(limits::kVocab, m.vocab);
    within(limits::kMaxPositions, m.max_positions);
    within(limits::kExperts, m.experts);
    within({"model.shared_expert_ffn_hidden", 0, limits::kFfnHidden.max, ""},
           m.shared_expert_ffn_hidden);
    within({"model.q_lora_rank", 0, limits::kHidden.max, ""}, m.q_lora_rank);
    within({"model.kv_lora_rank", 0, limits::kHidden.max, ""}, m.kv_lora_rank);
    within({"model.rope_head_dim", 0, limits::kHeadDim.max, ""}, m.rope_head_dim);
    within({"model.v_head_dim", 0, limits::kHeadDim.max, ""}, m.v_head_dim);
    if (!problems.empty())
        return problems;
    if (m.heads % m.kv_heads != 0)
        problems.push_back("model.kv_heads: " + std::to_string(m.kv_heads) + " must divide the " +
                           std::to_string(m.heads) + " attention heads (grouped-query attention)");
    if (m.head_dim == 0 && m.hidden % m.heads != 0)
        problems.push_back("model.heads: " + std::to_string(m.heads) + " do not divide hidden " +
                           std::to_string(m.hidden) + "; give head_dim");
    if (m.isMoe()) {
        if (m.experts_per_token < 1 || m.experts_per_token > m.experts)
            problems.push_back("model.experts_per_token: must be between 1 and experts (" +
                               std::to_string(m.experts) + ")");
        within({"model.expert_ffn_hidden", 1, limits::kFfnHidden.max, ""}, m.expert_ffn_hidden);
    } else if (m.experts_per_token != 0 || m.expert_ffn_hidden != 0 ||
               m.shared_expert_ffn_hidden != 0) {
        problems.push_back("model: experts_per_token, expert_ffn_hidden and "
                           "shared_expert_ffn_hidden describe experts; a dense model (experts 0) "
                           "takes none");
    }
    if (!(m.capacity_factor == 0 || (m.capacity_factor >= 1 && m.capacity_factor <= 64)) ||
        (m.capacity_factor != 0 && !m.isMoe()))
        problems.push_back("model.capacity_factor: 0 (dropless) or between 1 and 64, and only "
                           "for a mixture-of-experts model");
    if (m.dense_layers < 0 || m.dense_layers > m.layers)
        problems.push_back("model.dense_layers: must be between 0 and layers (" +
                           std::to_string(m.layers) + ")");
    if (!m.moe_layer_pattern.empty()) {
        const int dense = patternZeros(m.moe_layer_pattern);
        if (int(m.moe_layer_pattern.size()) != m.layers || !m.isMoe())
            problems.push_back("model.moe_layer_freq: a list needs one 0 or 1 per layer (" +
                               std::to_string(m.layers) + ") and experts");
        else if (dense != m.dense_layers)
            problems.push_back("model.dense_layers: " + std::to_string(m.dense_layers) +
                               " disagrees with moe_layer_freq, which has " +
                               std::to_string(dense) + " dense layers");
    }
    within({"model.sliding_window", 0, 1 << 24, ""}, m.sliding_window);
    if (!m.sliding_pattern.empty() &&
        (int(m.sliding_pattern.size()) != m.layers || m.sliding_window <= 0))
        problems.push_back("model.layer_types: needs one entry per layer (" +
                           std::to_string(m.layers) + ") and a sliding_window above 0");
    within({"model.mtp_layers", 0, 16, ""}, m.mtp_layers);
    if (m.shared_expert_ffn_hidden < 0 || (m.shared_expert_ffn_hidden > 0 && !m.isMoe()))
        problems.push_back("model.shared_expert_ffn_hidden: needs experts and must be at least 0");
    if (m.q_lora_rank < 0 || m.kv_lora_rank < 0 || m.rope_head_dim < 0 || m.v_head_dim < 0)
        problems.push_back("model: latent-attention sizes must be at least 0");
    if (m.isMla() && (m.head_dim < 1 || m.rope_head_dim >= m.head_dim))
        problems.push_back("model.rope_head_dim: latent attention needs head_dim (qk_nope + "
                           "qk_rope) above rope_head_dim");
    return problems;
}

} // namespace paraplan
