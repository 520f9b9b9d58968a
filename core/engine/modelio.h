#pragma once

#include "model.h"

#include <string>
#include <vector>

namespace paraplan {

struct ModelPresetInfo
{
    std::string id;
    std::string name;
    std::string source;
};
std::vector<ModelPresetInfo> modelPresets();

bool modelFromPreset(const std::string& id, ModelSpec* model, std::string* error);

/// Reads a Hugging Face config.json of a family we model (hfconfig.cpp lists them: Llama,
/// Mistral, Mixtral, Qwen2/3 dense and MoE, DeepSeek-V2/V3, Gemma/Gemma-2, Phi-3, GPT-NeoX,
/// Falcon, GPT-2). Any other model_type is an error listing the families; a dimension outside
/// its range is an error naming the field. `warnings` (optional) gets what the import
/// approximates. max_position_embeddings is kept as the context window (max_positions), never
/// taken as the training sequence length.
bool modelFromHuggingFaceConfig(const std::string& text, const std::string& label, ModelSpec* model,
                                std::vector<std::string>* errors,
                                std::vector<std::string>* warnings = nullptr);
bool loadHuggingFaceConfig(const std::string& path, ModelSpec* model, std::string* error,
                           std::vector<std::string>* warnings = nullptr);

} // namespace paraplan
