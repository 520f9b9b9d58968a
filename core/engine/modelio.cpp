#include "modelio.h"

#include "modeljson.h"

#include <QFile>
#include <QJsonArray>

#include <stdexcept>

namespace paraplan {
namespace {

QJsonObject bundledModels()
{
    QFile file(QStringLiteral(":/paraplan/models/models.json"));
    if (!file.open(QIODevice::ReadOnly))
        throw std::runtime_error("bundled resource missing: models.json");
    QJsonObject root;
    std::string error;
    if (!json::parseDocument(file.readAll().toStdString(), &root, &error))
        throw std::runtime_error("models.json: " + error);
    return root;
}

const QJsonArray& presetArray()
{
    static const QJsonArray array = bundledModels().value("models").toArray();
    return array;
}

// model.moe_layer_freq (Megatron --moe-layer-freq: N, every N-th layer from the first has
// experts, or a 0/1 list, one per layer) and model.layer_types (Hugging Face: one
// "full_attention" or "sliding_attention" per layer). A list sets dense_layers to its zeros.
void readLayerPatterns(const QJsonObject& object, const std::string& path, json::Reader& reader,
                       ModelSpec* m)
{
    const std::string freqPath = path.empty() ? "moe_layer_freq" : path + ".moe_layer_freq";
    const QJsonValue freq = object.value("moe_layer_freq");
    if (freq.isDouble()) {
        const double n = freq.toDouble();
        if (!(n >= 1 && n <= 1024 && n == double(int(n)))) {
            reader.error(freqPath, "must be a whole number from 1 or a list of 0 and 1");
        } else if (m->layers > 0) {
            m->moe_layer_pattern.assign(size_t(m->layers), 0);
            for (int i = 0; i < m->layers; i += int(n))
                m->moe_layer_pattern[size_t(i)] = 1;
        }
    } else if (freq.isArray()) {
        m->moe_layer_pattern.clear();
        for (const QJsonValue& v : freq.toArray()) {
            if (!(v.isDouble() && (v.toDouble() == 0 || v.toDouble() == 1))) {
                reader.error(freqPath, "a list of 0 (dense) and 1 (experts), one per layer");
                m->moe_layer_pattern.clear();
                break;
            }
            m->moe_layer_pattern.push_back(v.toDouble() == 1 ? 1 : 0);
        }
    } else if (!freq.isUndefined()) {
        reader.error(freqPath, "must be a whole number from 1 or a list of 0 and 1");
    }
    if (!m->moe_layer_pattern.empty() && !object.contains("dense_layers"))
        m->dense_layers = patternZeros(m->moe_layer_pattern);
    const QJsonValue types = object.value("layer_types");
    const std::string typesPath = path.empty() ? "layer_types" : path + ".layer_types";
    if (types.isArray()) {
        m->sliding_pattern.clear();
        for (const QJsonValue& v : types.toArray()) {
            const QString t = v.toString();
            if (t != "full_attention" && t != "sliding_attention") {
                reader.error(typesPath, "each entry 'full_attention' or 'sliding_attention'");
                m->sliding_pattern.clear();
                break;
            }
            m->sliding_pattern.push_back(t == "sliding_attention" ? 1 : 0);
        }
    } else if (!types.isUndefined()) {
        reader.error(typesPath,
                     "a list of 'full_attention' and 'sliding_attention', one per layer");
    }
}

} // namespace

void applyModelFields(const QJsonObject& object, const std::string& path, json::Reader& reader,
                      ModelSpec* m)
{
    reader.checkKeys(object, path,
                     {"id",
                      "preset",
                      "name",
                      "layers",
                      "hidden",
                      "heads",
                      "kv_heads",
                      "head_dim",
                      "ffn_hidden",
                      "vocab",
                      "mlp",
                      "tied_embeddings",
                      "learned_positions",
                      "max_positions",
                      "biases",
                      "dropout",
                      "experts",
                      "experts_per_token",
                      "expert_ffn_hidden",
                      "dense_layers",
                      "shared_expert_ffn_hidden",
                      "capacity_factor",
                      "q_lora_rank",
                      "kv_lora_rank",
                      "rope_head_dim",
                      "v_head_dim",
                      "moe_layer_freq",
                      "sliding_window",
                      "layer_types",
                      "attention_sinks",
                      "mtp_layers",
                      "source",
                      "hf_config"});
    reader.string(object, "name", path, &m->name);
    reader.string(object, "source", path, &m->source);
    reader.integer(object, "layers", path, &m->layers);
    reader.integer(object, "hidden", path, &m->hidden);
    const bool hadKv = object.contains("kv_heads");
    if (reader.integer(object, "heads", path, &m->heads) && !hadKv && m->kv_heads == 0)
        m->kv_heads = m->heads;
    reader.integer(object, "kv_heads", path, &m->kv_heads);
    reader.integer(object, "head_dim", path, &m->head_dim);
    reader.integer(object, "ffn_hidden", path, &m->ffn_hidden);
    reader.integer(object, "vocab", path, &m->vocab);
    reader.choice(object, "mlp", path, "MLP",
                  {{"gelu", MlpKind::GeLU}, {"swiglu", MlpKind::SwiGLU}}, &m->mlp);
    reader.boolean(object, "tied_embeddings", path, &m->tied_embeddings);
    reader.boolean(object, "learned_positions", path, &m->learned_positions);
    reader.integer(object, "max_positions", path, &m->max_positions);
    reader.boolean(object, "biases", path, &m->biases);
    reader.boolean(object, "dropout", path, &m->dropout);
    reader.integer(object, "experts", path, &m->experts);
    reader.integer(object, "experts_per_token", path, &m->experts_per_token);
    reader.integer(object, "expert_ffn_hidden", path, &m->expert_ffn_hidden);
    reader.integer(object, "dense_layers", path, &m->dense_layers);
    reader.integer(object, "shared_expert_ffn_hidden", path, &m->shared_expert_ffn_hidden);
    reader.number(object, "capacity_factor", path, &m->capacity_factor);
    reader.integer(object, "q_lora_rank", path, &m->q_lora_rank);
    reader.integer(object, "kv_lora_rank", path, &m->kv_lora_rank);
    reader.integer(object, "rope_head_dim", path, &m->rope_head_dim);
    reader.integer(object, "v_head_dim", path, &m->v_head_dim);
    readLayerPatterns(object, path, reader, m);
    reader.integer(object, "sliding_window", path, &m->sliding_window);
    reader.boolean(object, "attention_sinks", path, &m->attention_sinks);
    reader.integer(object, "mtp_layers", path, &m->mtp_layers);
}

QJsonObject modelToJson(const ModelSpec& m)
{
    QJsonObject object{{"name", QString::fromStdString(m.name)},
                       {"layers", m.layers},
                       {"hidden", m.hidden},
                       {"heads", m.heads},
                       {"kv_heads", m.kv_heads},
                       {"ffn_hidden", m.ffn_hidden},
                       {"vocab", m.vocab},
                       {"mlp", m.mlp == MlpKind::SwiGLU ? "swiglu" : "gelu"},
                       {"tied_embeddings", m.tied_embeddings},
                       {"learned_positions", m.learned_positions},
                       {"max_positions", m.max_positions},
                       {"biases", m.biases},
                       {"dropout", m.dropout}};
    if (m.head_dim > 0)
        object["head_dim"] = m.head_dim;
    if (m.isMoe()) {
        object["experts"] = m.experts;
        object["experts_per_token"] = m.experts_per_token;
        object["expert_ffn_hidden"] = m.expert_ffn_hidden;
        object["dense_layers"] = m.dense_layers;
        if (m.shared_expert_ffn_hidden > 0)
            object["shared_expert_ffn_hidden"] = m.shared_expert_ffn_hidden;
        if (m.capacity_factor > 0)
            object["capacity_factor"] = m.capacity_factor;
        if (!m.moe_layer_pattern.empty()) {
            QJsonArray pattern;
            for (unsigned char b : m.moe_layer_pattern)
                pattern.append(b ? 1 : 0);
            object["moe_layer_freq"] = pattern;
        }
    }
    if (m.sliding_window > 0) {
        object["sliding_window"] = m.sliding_window;
        if (!m.sliding_pattern.empty()) {
            QJsonArray types;
            for (unsigned char b : m.sliding_pattern)
                types.append(b ? "sliding_attention" : "full_attention");
            object["layer_types"] = types;
        }
    }
    if (m.attention_sinks)
        object["attention_sinks"] = true;
    if (m.mtp_layers > 0)
        object["mtp_layers"] = m.mtp_layers;
    if (m.isMla()) {
        object["q_lora_rank"] = m.q_lora_rank;
        object["kv_lora_rank"] = m.kv_lora_rank;
        object["rope_head_dim"] = m.rope_head_dim;
        object["v_head_dim"] = m.v_head_dim;
    }
    if (!m.source.empty())
        object["source"] = QString::fromStdString(m.source);
    return object;
}

std::vector<ModelPresetInfo> modelPresets()
{
    std::vector<ModelPresetInfo> presets;
    for (const QJsonValue& value : presetArray()) {
        const QJsonObject entry = value.toObject();
        presets.push_back({entry.value("id").toString().toStdString(),
                           entry.value("name").toString().toStdString(),
                           entry.value("source").toString().toStdString()});
    }
    return presets;
}

bool modelFromPreset(const std::string& id, ModelSpec* model, std::string* error)
{
    for (const QJsonValue& value : presetArray()) {
        const QJsonObject entry = value.toObject();
        if (entry.value("id").toString().toStdString() != id)
            continue;
        ModelSpec spec;
        spec.preset = id;
        std::vector<std::string> errors;
        json::Reader reader(&errors);
        applyModelFields(entry, "models." + id, reader, &spec);
        if (!errors.empty())
            throw std::runtime_error("bundled models.json: " + errors.front());
        *model = spec;
        return true;
    }
    std::string known;
    for (const ModelPresetInfo& info : modelPresets())
        known += (known.empty() ? "" : ", ") + info.id;
    *error = "unknown model preset '" + id + "' (known: " + known + ")";
    return false;
}

} // namespace paraplan
