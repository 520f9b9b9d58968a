#pragma once

#include "plan.h"

#include <QJsonObject>

#include <string>
#include <vector>

namespace paraplan {

/// Reads a plan file's text. `base_dir` resolves relative "file" and "hf_config" paths.
/// Every unknown key, wrong type and bad value is reported, one message each.
bool planFromJsonText(const std::string& text, const std::string& base_dir, Plan* plan,
                      std::vector<std::string>* errors, const HardwareCatalog& catalog);
bool loadPlan(const std::string& path, Plan* plan, std::vector<std::string>* errors,
              const HardwareCatalog& catalog);

/// The files the plan file at `path` names (cluster.file, model.hf_config), resolved as
/// loadPlan resolves them; none when it cannot be read or parsed.
std::vector<std::string> planReferencedFiles(const std::string& path);

/// A parallel layout in the plan file's "parallel" schema.
QJsonObject parallelLayoutToJson(const ParallelLayout& layout);
/// The plan as JSON: the model and the cluster written out in full, with sources, or, while
/// they are what the files the plan named gave (model.hf_config, cluster.file), those names
/// again; `saveDir` (the folder the text is saved in) keeps relative names pointing at the same
/// files, empty: as they were written.
std::string planToJsonText(const Plan& plan, const HardwareCatalog& catalog);
std::string planToJsonText(const Plan& plan, const HardwareCatalog& catalog,
                           const std::string& saveDir);
/// Atomic: the previous file stays intact until the new one is complete.
bool savePlan(const std::string& path, const Plan& plan, std::string* error,
              const HardwareCatalog& catalog);

} // namespace paraplan
