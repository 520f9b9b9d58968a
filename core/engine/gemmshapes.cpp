#include "gemmshapes.h"

#include <algorithm>

namespace paraplan {

double moeShardTokens(const ParallelLayout& p, double tokens)
{
    return p.tp > 1 ? tokens / p.tp : tokens;
}

double moeLoad(const ModelSpec& m, double imbalance)
{
    return m.capacity_factor > 0 ? std::min(imbalance, m.capacity_factor) : imbalance;
}

LayerGemms layerGemmShapes(const ModelSpec& m, const ParallelLayout& p, double tokens,
                           double headsLocal, double kvLocal, double headDim, bool moe, double load)
{
    const double t = p.tp;
    const double T = tokens;
    const double h = m.hidden;
    const double d = headDim;
    LayerGemms g;
    auto push = [&g](const GemmShape& shape) { g.items[g.count++] = shape; };
    if (m.isMla()) {
        // Latent attention as Megatron-Core's MLASelfAttention runs it (DeepSeek-V2, arXiv
        // 2405.04434, section 2.1): the down-projections of Q and of the joint KV (with the
        // decoupled RoPE key) on every TP rank, their up-projections split over TP by heads,
        // and the output projection from the heads' values.
        const double nope = d - m.rope_head_dim;
        const double dv = m.valueHeadDim();
        if (m.q_lora_rank > 0) {
            push({"q_down", T, h, double(m.q_lora_rank), 1, true});
            push({"q_up", T, double(m.q_lora_rank), headsLocal * d, 1, true});
        } else {
            push({"q_proj", T, h, headsLocal * d, 1, true});
        }
        push({"kv_down", T, h, double(m.kv_lora_rank + m.rope_head_dim), 1, true});
        push({"kv_up", T, double(m.kv_lora_rank), headsLocal * (nope + dv), 1, true});
        push({"attn_proj", T, headsLocal * dv, h, 1, true});
    } else {
        push({"qkv", T, h, (headsLocal + 2 * kvLocal) * d, 1, true});
        push({"attn_proj", T, headsLocal * d, h, 1, true});
    }
    // MLP: dense, or the local experts with the tokens routed to them.
    const double up = m.mlp == MlpKind::SwiGLU ? 2 : 1;
    if (moe) {
        const double k = m.experts_per_token;
        const double etp = p.expertTp();
        const double localExperts = std::max(1.0, double(m.experts) / p.ep);
        const double shard = moeShardTokens(p, T);
        // The EP group's tokens for this rank's experts, gathered over expert TP.
        const double perExpert = shard * k * etp * load / localExperts;
        push({"router", shard, h, double(m.experts), 1, false});
        push({"mlp_up", perExpert, h, up * m.expert_ffn_hidden / etp, localExperts, false});
        push({"mlp_down", perExpert, m.expert_ffn_hidden / etp, h, localExperts, false});
        if (m.shared_expert_ffn_hidden > 0) {
            push({"shared_up", T, h, up * m.shared_expert_ffn_hidden / t, 1, true});
            push({"shared_down", T, m.shared_expert_ffn_hidden / t, h, 1, true});
        }
    } else {
        push({"mlp_up", T, h, up * m.ffn_hidden / t, 1, true});
        push({"mlp_down", T, m.ffn_hidden / t, h, 1, true});
    }
    return g;
}

PlanShapes planShapes(const Plan& plan)
{
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    const double cp = std::max(1, p.cp);
    const double tp = std::max(1, p.tp);
    const double seqLocal = double(plan.training.seq_len) / cp;
    const double tokens = p.micro_batch * seqLocal;
    const double headsLocal = double(m.heads) / tp;
    const double kvLocal = std::max(1.0, double(m.kv_heads) / tp);
    const double d = m.headDim();
    PlanShapes s;
    for (const GemmShape& g : layerGemmShapes(m, p, tokens, headsLocal, kvLocal, d, m.isMoe()))
        s.gemms.push_back(g);
    s.gemms.push_back({"lm_head", tokens, double(m.hidden), double(m.vocab) / tp, 1, false});
    s.attention = {p.micro_batch * headsLocal, seqLocal, seqLocal * cp, d};
    return s;
}

} // namespace paraplan
