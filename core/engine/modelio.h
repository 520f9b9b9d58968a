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

/// Reads a Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2 and GPT-2 style keys).
/// An architecture we cannot read gets a message listing the keys it lacks.
bool modelFromHuggingFaceConfig(const std::string& text, const std::string& label, ModelSpec* model,
                                std::vector<std::string>* errors);
bool loadHuggingFaceConfig(const std::string& path, ModelSpec* model, std::string* error);

} // namespace paraplan
