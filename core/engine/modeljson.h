#pragma once

// Internal to core: model descriptions as JSON objects (presets and plan files).

#include "jsonutil.h"
#include "model.h"

namespace paraplan {

/// Applies the fields present in `object` to `model` ({"layers": 80, "hidden": 8192, ...}).
void applyModelFields(const QJsonObject& object, const std::string& path, json::Reader& reader,
                      ModelSpec* model);
QJsonObject modelToJson(const ModelSpec& model);

} // namespace paraplan
