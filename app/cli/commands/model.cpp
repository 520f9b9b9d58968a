// paraplan-cli model: a model preset or Hugging Face config: architecture, parameters, FLOPs.
#include "common.h"

#include "modelio.h"
#include "units.h"

#include <QStringList>

namespace paraplan::cli {

using units::formatNumber;

Options modelOptions()
{
    QStringList presets;
    for (const ModelPresetInfo& preset : modelPresets())
        presets.append(QString::fromStdString(preset.id));
    return {
        valueOption("--preset", "ID", "A model preset: " + presets.join(", ") + "."),
        valueOption("--hf-config", "FILE", "A Hugging Face config.json instead of a preset."),
        valueOption("--seq-len", "S",
                    "Sequence length for the FLOPs per token (default: the model's context, or "
                    "2048)."),
        jsonOption(),
    };
}

int runModel(const Args& args, std::ostream& out)
{
    ModelSpec model;
    std::string error;
    if (args.has("--preset") == args.has("--hf-config"))
        throw UsageError("give --preset ID or --hf-config FILE");
    if (args.has("--preset") ? !modelFromPreset(args.text("--preset"), &model, &error)
                             : !loadHuggingFaceConfig(args.text("--hf-config"), &model, &error))
        throw UsageError(error);
    const std::vector<std::string> problems = validateModel(model);
    if (!problems.empty())
        throw UsageError(problems.front());
    const int seq = args.has("--seq-len") ? args.integer("--seq-len", 1, 10000000)
                                          : (model.max_positions > 0 ? model.max_positions : 2048);
    const ParameterCount count = countParameters(model);
    const double flopsPerToken = modelFlopsPerStep(model, 1, seq) / seq;
    if (args.flag("--json")) {
        printJson(QJsonObject{{"name", QString::fromStdString(model.name)},
                              {"layers", model.layers},
                              {"hidden", model.hidden},
                              {"heads", model.heads},
                              {"kv_heads", model.kv_heads},
                              {"ffn_hidden", model.ffn_hidden},
                              {"vocab", model.vocab},
                              {"experts", model.experts},
                              {"parameters", count.total},
                              {"active_parameters", count.active_per_token},
                              {"seq_len", seq},
                              {"training_flops_per_token", flopsPerToken},
                              {"source", QString::fromStdString(model.source)}},
                  out);
        return kExitOk;
    }
    out << model.name << "\n  source: " << model.source << "\n"
        << "  layers " << model.layers << ", hidden " << model.hidden << ", heads " << model.heads
        << " (KV " << model.kv_heads << "), FFN " << model.ffn_hidden
        << (model.mlp == MlpKind::SwiGLU ? " SwiGLU" : " GeLU") << ", vocab " << model.vocab
        << (model.tied_embeddings ? " (tied)" : "") << "\n";
    if (model.isMoe())
        out << "  experts " << model.experts << ", " << model.experts_per_token
            << " per token, expert FFN " << model.expert_ffn_hidden << "\n";
    out << "  parameters " << formatNumber(count.total / 1e9, 4) << "B";
    if (model.isMoe())
        out << " (" << formatNumber(count.active_per_token / 1e9, 4) << "B active per token)";
    out << "\n  training FLOPs per token at s = " << seq << ": "
        << formatNumber(flopsPerToken / 1e9, 4)
        << " GFLOP (6 x parameters = " << formatNumber(6 * count.active_per_token / 1e9, 4)
        << " GFLOP, plus attention)\n";
    return kExitOk;
}

} // namespace paraplan::cli
