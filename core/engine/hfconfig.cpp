// Hugging Face config.json -> ModelSpec, for the families whose layer shapes we know (the
// modeling_*.py files of huggingface/transformers): every figure is range-checked before any
// arithmetic, an unknown model_type is refused, and what the import approximates is said.
#include "cnumeric.h"
#include "modelio.h"

#include "inputlimits.h"
#include "jsonutil.h"

#include <QJsonArray>

#include <cmath>
#include <cstdio>
#include <set>

namespace paraplan {
namespace {

enum class Family
{
    Llama,    ///< gated MLP (gate, up, down), RMSNorm, RoPE: Llama, Mistral, Mixtral, Qwen2/3
    QwenMoe,  ///< Qwen2-MoE / Qwen3-MoE: routed experts (+ one shared expert in Qwen2-MoE)
    DeepSeek, ///< DeepSeek-V2/V3: latent attention, shared + routed experts, dense first layers
    Gemma,    ///< gated GeLU, head_dim apart from hidden / heads, tied embeddings
    Phi3,     ///< fused qkv and gate_up projections: the same matrices as Llama
    NeoX,     ///< GPT-NeoX: 4h GeLU MLP, biases, parallel residual
    Falcon,   ///< multi-query (or grouped with the new decoder) attention, 4h GeLU MLP
    Gpt2,
    GptOss, ///< GPT-OSS: routed experts only, biases, attention sinks, alternating windows
    Llama4, ///< Llama 4 (text): a shared expert, MoE every interleave_moe_layer_step-th layer
};

struct FamilyName
{
    const char* type;
    Family family;
};

constexpr FamilyName kFamilies[] = {
    {"llama", Family::Llama},
    {"mistral", Family::Llama},
    {"mixtral", Family::Llama},
    {"qwen2", Family::Llama},
    {"qwen3", Family::Llama},
    {"qwen2_moe", Family::QwenMoe},
    {"qwen3_moe", Family::QwenMoe},
    {"deepseek_v2", Family::DeepSeek},
    {"deepseek_v3", Family::DeepSeek},
    {"gemma", Family::Gemma},
    {"gemma2", Family::Gemma},
    {"phi3", Family::Phi3},
    {"gpt_neox", Family::NeoX},
    {"falcon", Family::Falcon},
    {"RefinedWeb", Family::Falcon},
    {"RefinedWebModel", Family::Falcon},
    {"gpt2", Family::Gpt2},
    {"gpt_oss", Family::GptOss},
    {"llama4", Family::Llama4},
    {"llama4_text", Family::Llama4},
};

std::string familyList()
{
    std::string list;
    for (const FamilyName& f : kFamilies)
        list += (list.empty() ? "" : ", ") + std::string(f.type);
    return list;
}

// Reads whole numbers from the config, each checked against its range before it is used.
class Fields
{
public:
    Fields(const QJsonObject& config, std::vector<std::string>* errors)
        : m_c(config), m_errors(errors)
    {
    }

    bool has(const char* key) const
    {
        return m_c.contains(QLatin1String(key)) && !m_c.value(QLatin1String(key)).isNull();
    }

    /// The first present key of `keys` into *out; absent: `fallback`, or an error when
    /// fallback < 0.
    void integer(std::initializer_list<const char*> keys, long long lo, long long hi, int* out,
                 long long fallback = -1)
    {
        for (const char* key : keys) {
            if (!has(key))
                continue;
            const QJsonValue value = m_c.value(QLatin1String(key));
            const double number = value.toDouble(std::nan(""));
            if (!value.isDouble() || !std::isfinite(number) || number != std::floor(number)) {
                m_errors->push_back("config." + std::string(key) + ": not a whole number");
            } else if (number < lo || number > hi) {
                // Printed whole while it fits 64 bits (3.2e69 would overflow the cast).
                char text[32];
                if (std::fabs(number) < 9e18)
                    cSnprintf(text, sizeof text, "%lld", static_cast<long long>(number));
                else
                    cSnprintf(text, sizeof text, "%.6g", number);
                m_errors->push_back("config." + std::string(key) + ": " + text + " is outside " +
                                    std::to_string(lo) + ".." + std::to_string(hi));
            } else {
                *out = static_cast<int>(number);
            }
            return;
        }
        if (fallback >= 0) {
            *out = static_cast<int>(fallback);
            return;
        }
        std::string names;
        for (const char* key : keys)
            names += (names.empty() ? "" : " or ") + std::string(key);
        m_errors->push_back("the config lacks " + names);
    }

    bool flag(const char* key, bool fallback) const
    {
        return has(key) ? m_c.value(QLatin1String(key)).toBool(fallback) : fallback;
    }
    QString text(const char* key) const { return m_c.value(QLatin1String(key)).toString(); }
    QJsonValue value(const char* key) const { return m_c.value(QLatin1String(key)); }

private:
    const QJsonObject& m_c;
    std::vector<std::string>* m_errors;
};

// Upper bounds: the model's stated ranges (inputlimits.h, docs/limits.md), far above any
// published model and low enough that no product overflows.
constexpr long long kMaxHidden = static_cast<long long>(limits::kHidden.max);
constexpr long long kMaxLayers = static_cast<long long>(limits::kLayers.max);
constexpr long long kMaxVocab = static_cast<long long>(limits::kVocab.max);
constexpr long long kMaxHeads = static_cast<long long>(limits::kHeads.max);
constexpr long long kMaxFfn = static_cast<long long>(limits::kFfnHidden.max);
constexpr long long kMaxExperts = static_cast<long long>(limits::kExperts.max);
constexpr long long kMaxPositions = static_cast<long long>(limits::kMaxPositions.max);

void readCommon(Fields& f, Family family, ModelSpec* m)
{
    f.integer({"hidden_size"}, 1, kMaxHidden, &m->hidden);
    f.integer({"num_hidden_layers", "n_layer"}, 1, kMaxLayers, &m->layers);
    f.integer({"num_attention_heads", "n_head"}, 1, kMaxHeads, &m->heads);
    f.integer({"vocab_size"}, 1, kMaxVocab, &m->vocab);
    if (family != Family::Falcon)
        f.integer({"intermediate_size"}, 1, kMaxFfn, &m->ffn_hidden);
    f.integer({"num_key_value_heads"}, 1, kMaxHeads, &m->kv_heads, m->heads);
    f.integer({"head_dim"}, 1, kMaxHeads, &m->head_dim, 0);
    // The context window, kept as information: a plan's sequence length is its own.
    f.integer({"max_position_embeddings"}, 1, kMaxPositions, &m->max_positions, 0);
}

void readQwenMoe(Fields& f, const std::string& type, ModelSpec* m,
                 std::vector<std::string>* warnings)
{
    f.integer({"num_experts"}, 1, kMaxExperts, &m->experts);
    f.integer({"num_experts_per_tok"}, 1, kMaxExperts, &m->experts_per_token);
    f.integer({"moe_intermediate_size"}, 1, kMaxFfn, &m->expert_ffn_hidden);
    f.integer({"shared_expert_intermediate_size"}, 0, kMaxFfn, &m->shared_expert_ffn_hidden, 0);
    int step = 1;
    f.integer({"decoder_sparse_step"}, 1, kMaxLayers, &step, 1);
    std::set<int> dense;
    for (const QJsonValue& v : f.value("mlp_only_layers").toArray())
        if (v.isDouble() && v.toInt() >= 0 && v.toInt() < m->layers)
            dense.insert(v.toInt());
    for (int i = 0; i < m->layers; ++i)
        if ((i + 1) % step != 0)
            dense.insert(i);
    m->dense_layers = static_cast<int>(dense.size());
    const bool leading = dense.empty() || *dense.rbegin() == m->dense_layers - 1;
    (void)type;
    (void)warnings;
    if (!leading) {
        m->moe_layer_pattern.assign(size_t(m->layers), 1);
        for (int i : dense)
            m->moe_layer_pattern[size_t(i)] = 0;
    }
}

// Hugging Face layer_types ("sliding_attention" / "full_attention", one per layer) with
// sliding_window; without the list, the family's rule (Mistral: every layer; Qwen2/3 with
// use_sliding_window: from max_window_layers on; Gemma 2: the even layers).
void readSlidingWindow(Fields& f, const std::string& type, ModelSpec* m)
{
    int window = 0;
    f.integer({"sliding_window"}, 0, 1 << 24, &window, 0);
    if (window <= 0 || m->layers <= 0)
        return;
    const QJsonArray types = f.value("layer_types").toArray();
    std::vector<unsigned char> pattern;
    if (types.size() == m->layers) {
        for (const QJsonValue& v : types)
            pattern.push_back(v.toString() == QLatin1String("sliding_attention") ? 1 : 0);
    } else if (type == "qwen2" || type == "qwen3" || type == "qwen2_moe" || type == "qwen3_moe") {
        if (!f.flag("use_sliding_window", false))
            return;
        int from = 0;
        f.integer({"max_window_layers"}, 0, kMaxLayers, &from, 0);
        for (int i = 0; i < m->layers; ++i)
            pattern.push_back(i >= from ? 1 : 0);
    } else if (type == "gemma2") {
        for (int i = 0; i < m->layers; ++i)
            pattern.push_back(i % 2 == 0 ? 1 : 0);
    } else if (type != "mistral" && type != "mixtral") {
        return;
    }
    bool any = pattern.empty();
    bool all = true;
    for (unsigned char b : pattern) {
        any = any || b;
        all = all && b;
    }
    if (!any)
        return;
    m->sliding_window = window;
    if (!all)
        m->sliding_pattern = std::move(pattern);
}

// GPT-OSS (openai/gpt-oss model.py): every layer MoE without a shared expert, the experts
// intermediate_size wide, biases on the projections, a learned sink per head.
void readGptOss(Fields& f, ModelSpec* m)
{
    f.integer({"num_local_experts"}, 1, kMaxExperts, &m->experts);
    f.integer({"num_experts_per_tok", "experts_per_token"}, 1, kMaxExperts, &m->experts_per_token);
    m->expert_ffn_hidden = m->ffn_hidden;
    m->attention_sinks = true;
}

// Llama 4's text model (transformers modeling_llama4.py): MoE layers every
// interleave_moe_layer_step-th from step - 1 (or the moe_layers list), each with one shared
// expert intermediate_size wide; dense layers intermediate_size_mlp wide.
void readLlama4(Fields& f, ModelSpec* m)
{
    f.integer({"num_local_experts"}, 1, kMaxExperts, &m->experts);
    f.integer({"num_experts_per_tok"}, 1, kMaxExperts, &m->experts_per_token, 1);
    m->expert_ffn_hidden = m->ffn_hidden;
    m->shared_expert_ffn_hidden = m->ffn_hidden;
    f.integer({"intermediate_size_mlp"}, 1, kMaxFfn, &m->ffn_hidden, m->ffn_hidden);
    int step = 1;
    f.integer({"interleave_moe_layer_step"}, 1, kMaxLayers, &step, 1);
    std::vector<unsigned char> pattern(size_t(m->layers), 0);
    const QJsonArray listed = f.value("moe_layers").toArray();
    if (!listed.isEmpty()) {
        for (const QJsonValue& v : listed)
            if (v.isDouble() && v.toInt() >= 0 && v.toInt() < m->layers)
                pattern[size_t(v.toInt())] = 1;
    } else {
        for (int i = step - 1; i < m->layers; i += step)
            pattern[size_t(i)] = 1;
    }
    m->dense_layers = patternZeros(pattern);
    if (m->dense_layers > 0)
        m->moe_layer_pattern = std::move(pattern);
    m->tied_embeddings = f.flag("tie_word_embeddings", false);
}

void readDeepSeek(Fields& f, const std::string& type, ModelSpec* m,
                  std::vector<std::string>* warnings)
{
    f.integer({"n_routed_experts"}, 1, kMaxExperts, &m->experts);
    f.integer({"num_experts_per_tok"}, 1, kMaxExperts, &m->experts_per_token);
    f.integer({"moe_intermediate_size"}, 1, kMaxFfn, &m->expert_ffn_hidden);
    int shared = 0;
    f.integer({"n_shared_experts"}, 0, kMaxExperts, &shared, 0);
    m->shared_expert_ffn_hidden = static_cast<int>(
        std::min<long long>(kMaxFfn, static_cast<long long>(shared) * m->expert_ffn_hidden));
    f.integer({"first_k_dense_replace"}, 0, kMaxLayers, &m->dense_layers, 0);
    int freq = 1;
    f.integer({"moe_layer_freq"}, 1, kMaxLayers, &freq, 1);
    if (freq > 1 && m->layers > m->dense_layers) {
        // modeling_deepseek.py: MoE where layer >= first_k_dense_replace and layer % freq == 0.
        m->moe_layer_pattern.assign(size_t(m->layers), 0);
        for (int i = 0; i < m->layers; ++i)
            m->moe_layer_pattern[size_t(i)] = i >= m->dense_layers && i % freq == 0 ? 1 : 0;
        m->dense_layers = patternZeros(m->moe_layer_pattern);
    }
    // Latent attention: Q/K heads of qk_nope + qk_rope, V heads of v_head_dim.
    int nope = 0;
    f.integer({"q_lora_rank"}, 1, kMaxHidden, &m->q_lora_rank, 0);
    f.integer({"kv_lora_rank"}, 1, kMaxHidden, &m->kv_lora_rank);
    f.integer({"qk_rope_head_dim"}, 1, kMaxHeads, &m->rope_head_dim);
    f.integer({"qk_nope_head_dim"}, 1, kMaxHeads, &nope);
    f.integer({"v_head_dim"}, 1, kMaxHeads, &m->v_head_dim);
    m->head_dim = nope + m->rope_head_dim;
    m->kv_heads = m->heads;
    warnings->push_back(
        type +
        ": multi-head latent attention is counted exactly in parameters, model FLOPs and the "
        "step's GEMMs (its down- and up-projections); its activation memory is costed as " +
        std::to_string(m->heads) + " ordinary heads of " + std::to_string(m->head_dim) +
        " (an approximation)");
    f.integer({"num_nextn_predict_layers"}, 0, 16, &m->mtp_layers, 0);
    if (m->mtp_layers > 0)
        warnings->push_back(type + ": its " + std::to_string(m->mtp_layers) +
                            " multi-token-prediction module(s) run on the last pipeline stage "
                            "and are held there; the parameter total excludes them, as the "
                            "published one does");
}

void readFalcon(Fields& f, ModelSpec* m)
{
    f.integer({"ffn_hidden_size"}, 1, kMaxFfn, &m->ffn_hidden, 4LL * m->hidden);
    if (f.flag("new_decoder_architecture", false))
        f.integer({"num_kv_heads", "n_head_kv"}, 1, kMaxHeads, &m->kv_heads, m->heads);
    else
        m->kv_heads = f.flag("multi_query", true) ? 1 : m->heads;
    m->mlp = MlpKind::GeLU;
    m->biases = f.flag("bias", false);
    m->tied_embeddings = f.flag("tie_word_embeddings", true);
}

bool readGpt2(Fields& f, const QJsonObject& c, ModelSpec* m)
{
    f.integer({"n_embd"}, 1, kMaxHidden, &m->hidden);
    f.integer({"n_layer"}, 1, kMaxLayers, &m->layers);
    f.integer({"n_head"}, 1, kMaxHeads, &m->heads);
    f.integer({"vocab_size"}, 1, kMaxVocab, &m->vocab);
    f.integer({"n_positions"}, 1, kMaxPositions, &m->max_positions, 1024);
    if (m->hidden <= 0) // the error is already recorded
        return false;
    f.integer({"n_inner"}, 1, kMaxFfn, &m->ffn_hidden, 4LL * m->hidden);
    m->kv_heads = m->heads;
    m->mlp = MlpKind::GeLU;
    m->learned_positions = true;
    m->tied_embeddings = f.flag("tie_word_embeddings", true);
    m->biases = true;
    m->dropout = c.value("resid_pdrop").toDouble(0.1) > 0;
    return true;
}

} // namespace

bool modelFromHuggingFaceConfig(const std::string& text, const std::string& label, ModelSpec* model,
                                std::vector<std::string>* errors,
                                std::vector<std::string>* warnings)
{
    QJsonObject c;
    std::string parseError;
    if (!json::parseDocument(text, &c, &parseError)) {
        errors->push_back(parseError);
        return false;
    }
    const QString typeName = c.value("model_type").toString();
    const std::string type = typeName.toStdString();
    const FamilyName* known = nullptr;
    for (const FamilyName& f : kFamilies)
        if (typeName == QLatin1String(f.type))
            known = &f;
    if (!known) {
        errors->push_back((type.empty() ? std::string("the config names no model_type")
                                        : "cannot read model_type '" + type + "'") +
                          ": Paraplan reads the families " + familyList());
        return false;
    }
    std::vector<std::string> notes;
    ModelSpec m;
    m.source = "Hugging Face config " + label;
    m.name = type + " (" + label + ")";
    Fields f(c, errors);
    const Family family = known->family;
    // Llama 4's checkpoint nests its text model under text_config.
    const QJsonObject textModel = family == Family::Llama4 && c.value("text_config").isObject()
                                      ? c.value("text_config").toObject()
                                      : c;
    Fields tf(textModel, errors);
    if (family == Family::Gpt2) {
        readGpt2(f, c, &m);
    } else if (family == Family::Llama4) {
        readCommon(tf, family, &m);
        m.mlp = MlpKind::SwiGLU;
        readLlama4(tf, &m);
        notes.push_back(type + ": chunked local attention (attention_chunk_size) is costed as "
                               "full causal attention, the same at sequences up to the chunk");
    } else {
        readCommon(f, family, &m);
        m.mlp = MlpKind::SwiGLU; // gate, up and down matrices, whatever the activation
        m.tied_embeddings = f.flag("tie_word_embeddings", family == Family::Gemma);
        m.biases = f.flag("attention_bias", false) || type == "qwen2" || type == "qwen2_moe";
        m.dropout = c.value("attention_dropout").toDouble(0) > 0;
        if (family == Family::Llama && f.has("num_local_experts")) { // Mixtral
            f.integer({"num_local_experts"}, 1, kMaxExperts, &m.experts);
            f.integer({"num_experts_per_tok"}, 1, kMaxExperts, &m.experts_per_token, 2);
            m.expert_ffn_hidden = m.ffn_hidden;
        } else if (family == Family::QwenMoe) {
            readQwenMoe(f, type, &m, &notes);
        } else if (family == Family::DeepSeek) {
            readDeepSeek(f, type, &m, &notes);
        } else if (family == Family::Gemma) {
            notes.push_back(type + ": gated GeLU is modelled with SwiGLU's shape (the same three "
                                   "matrices and FLOPs)");
        } else if (family == Family::NeoX) {
            m.mlp = MlpKind::GeLU;
            m.biases = true;
        } else if (family == Family::Falcon) {
            readFalcon(f, &m);
        } else if (family == Family::GptOss) {
            readGptOss(f, &m);
            notes.push_back(type + ": its clamped SwiGLU is costed as SwiGLU (the same "
                                   "matrices); the experts' and router's biases are not counted "
                                   "(under 0.1% of the parameters)");
        }
        readSlidingWindow(f, type, &m);
    }
    if (!errors->empty())
        return false;
    if (m.experts > 0 && m.experts_per_token > m.experts)
        errors->push_back("config.num_experts_per_tok: " + std::to_string(m.experts_per_token) +
                          " is more than the " + std::to_string(m.experts) + " experts");
    for (std::string& problem : validateModel(m))
        errors->push_back(std::move(problem));
    if (!errors->empty())
        return false;
    *model = m;
    if (warnings)
        warnings->insert(warnings->end(), notes.begin(), notes.end());
    return true;
}

bool loadHuggingFaceConfig(const std::string& path, ModelSpec* model, std::string* error,
                           std::vector<std::string>* warnings)
{
    std::string text;
    if (!json::readFile(path, &text, error))
        return false;
    std::vector<std::string> errors;
    if (!modelFromHuggingFaceConfig(text, path, model, &errors, warnings)) {
        *error = path + ": " + errors.front();
        return false;
    }
    return true;
}

} // namespace paraplan
