// paraplan-cli model: a model preset or Hugging Face config: architecture, parameters, FLOPs.
#include "common.h"

#include "modelio.h"
#include "units.h"

#include <QJsonArray>
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
                    "Sequence length for the FLOPs per token (default 2048; a model's context "
                    "window is never taken as the training sequence)."),
        jsonOption(),
    };
}

int runModel(const Args& args, std::ostream& out)
{
    ModelSpec model;
    std::string error;
    if (args.has("--preset") == args.has("--hf-config"))
        throw UsageError("give --preset ID or --hf-config FILE");
    if (args.has("--hf-config"))
        requireReadable(args.text("--hf-config"));
    std::vector<std::string> warnings;
    if (args.has("--preset")
            ? !modelFromPreset(args.text("--preset"), &model, &error)
            : !loadHuggingFaceConfig(args.text("--hf-config"), &model, &error, &warnings))
        throw UsageError(error);
    const std::vector<std::string> problems = validateModel(model);
    if (!problems.empty())
        throw UsageError(problems.front());
    const int seq =
        args.has("--seq-len") ? static_cast<int>(args.within("--seq-len", limits::kSeqLen)) : 2048;
    if (model.max_positions > 0 && seq > model.max_positions)
        warnings.push_back("s = " + std::to_string(seq) +
                           " is beyond the model's context window of " +
                           std::to_string(model.max_positions) + " positions");
    const ParameterCount count = countParameters(model);
    const double flopsPerToken = modelFlopsPerStep(model, 1, seq) / seq;
    if (args.flag("--json")) {
        printJson("paraplan-model/1",
                  QJsonObject{{"name", QString::fromStdString(model.name)},
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
                              {"context_window", model.max_positions},
                              {"warnings",
                               [&] {
                                   QJsonArray list;
                                   for (const std::string& w : warnings)
                                       list.append(QString::fromStdString(w));
                                   return list;
                               }()},
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
    if (model.max_positions > 0)
        out << "  context window " << model.max_positions << " positions (information only)\n";
    if (model.shared_expert_ffn_hidden > 0)
        out << "  shared expert FFN " << model.shared_expert_ffn_hidden << "\n";
    if (model.isMla())
        out << "  latent attention: q_lora " << model.q_lora_rank << ", kv_lora "
            << model.kv_lora_rank << ", heads of " << model.headDim() << " (Q/K) and "
            << model.valueHeadDim() << " (V)\n";
    for (const std::string& warning : warnings)
        out << "  warning: " << warning << "\n";
    return kExitOk;
}

} // namespace paraplan::cli
