#include "modelio.h"

#include "modeljson.h"

#include <QFile>

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

bool modelFromHuggingFaceConfig(const std::string& text, const std::string& label, ModelSpec* model,
                                std::vector<std::string>* errors)
{
    QJsonObject c;
    std::string parseError;
    if (!json::parseDocument(text, &c, &parseError)) {
        errors->push_back(parseError);
        return false;
    }
    const QString type = c.value("model_type").toString();
    ModelSpec m;
    m.source = "Hugging Face config " + label;
    m.name = type.isEmpty() ? label : type.toStdString() + " (" + label + ")";
    // Which key holds each figure, for the two families of config we read.
    const bool gpt2 = type == "gpt2" || (c.contains("n_embd") && c.contains("n_layer"));
    struct Field
    {
        const char* key;
        int* target;
    };
    const std::vector<Field> required =
        gpt2 ? std::vector<Field>{{"n_embd", &m.hidden},
                                  {"n_layer", &m.layers},
                                  {"n_head", &m.heads},
                                  {"vocab_size", &m.vocab}}
             : std::vector<Field>{{"hidden_size", &m.hidden},
                                  {"num_hidden_layers", &m.layers},
                                  {"num_attention_heads", &m.heads},
                                  {"intermediate_size", &m.ffn_hidden},
                                  {"vocab_size", &m.vocab}};
    std::vector<std::string> missing;
    for (const Field& field : required) {
        const QJsonValue value = c.value(QLatin1String(field.key));
        if (!value.isDouble() || value.toDouble() < 1)
            missing.push_back(field.key);
        else
            *field.target = value.toInt();
    }
    if (!missing.empty()) {
        std::string list;
        for (const std::string& key : missing)
            list += (list.empty() ? "" : ", ") + key;
        errors->push_back("cannot read model_type '" + type.toStdString() + "': the config lacks " +
                          list +
                          " (Paraplan reads Llama, Mistral, Mixtral, Qwen2 and GPT-2 style "
                          "configs)");
        return false;
    }
    if (gpt2) {
        m.kv_heads = m.heads;
        const QJsonValue inner = c.value("n_inner");
        m.ffn_hidden = inner.isDouble() ? inner.toInt() : 4 * m.hidden;
        m.mlp = MlpKind::GeLU;
        m.max_positions = c.value("n_positions").toInt(1024);
        m.learned_positions = true;
        m.tied_embeddings = c.value("tie_word_embeddings").toBool(true);
        m.biases = true;
        m.dropout = c.value("resid_pdrop").toDouble(0.1) > 0;
    } else {
        m.kv_heads = c.value("num_key_value_heads").toInt(m.heads);
        if (c.value("head_dim").isDouble())
            m.head_dim = c.value("head_dim").toInt();
        const QString act = c.value("hidden_act").toString("silu");
        m.mlp = (act == "silu" || act == "swiglu") ? MlpKind::SwiGLU : MlpKind::GeLU;
        m.max_positions = c.value("max_position_embeddings").toInt(4096);
        m.tied_embeddings = c.value("tie_word_embeddings").toBool(false);
        m.biases = c.value("attention_bias").toBool(false) || type == "qwen2";
        m.dropout = c.value("attention_dropout").toDouble(0) > 0;
        if (c.contains("num_local_experts")) {
            m.experts = c.value("num_local_experts").toInt();
            m.experts_per_token = c.value("num_experts_per_tok").toInt(2);
            m.expert_ffn_hidden = m.ffn_hidden;
        }
    }
    for (std::string& problem : validateModel(m))
        errors->push_back(std::move(problem));
    if (!errors->empty())
        return false;
    *model = m;
    return true;
}

bool loadHuggingFaceConfig(const std::string& path, ModelSpec* model, std::string* error)
{
    std::string text;
    if (!json::readFile(path, &text, error))
        return false;
    std::vector<std::string> errors;
    if (!modelFromHuggingFaceConfig(text, path, model, &errors)) {
        *error = path + ": " + errors.front();
        return false;
    }
    return true;
}

} // namespace paraplan
