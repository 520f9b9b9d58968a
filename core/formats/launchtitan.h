#pragma once

// torchtitan and DeepSpeed launch configurations (the functions launchconfig.cpp dispatches to
// for LaunchTarget::Torchtitan and LaunchTarget::DeepSpeed).

#include "launchconfig.h"

#include <string>
#include <vector>

namespace paraplan {

/// torchtitan's train_config TOML (release kTorchtitanRelease), the launcher line as a comment.
void exportTorchtitan(const Plan& plan, LaunchConfig* config);
/// A DeepSpeed config JSON (release kDeepSpeedRelease) and its `deepspeed` launcher line.
void exportDeepSpeed(const Plan& plan, LaunchConfig* config);
/// A torchtitan TOML read back over `base` (see importLaunchConfig).
LaunchImport importTorchtitan(const std::string& text, const Plan& base,
                              const HardwareCatalog& catalog);

/// The releases whose option names the files use.
extern const char* const kTorchtitanRelease;
extern const char* const kDeepSpeedRelease;

/// A key of torchtitan's JobConfig the importer knows, with its pinned type ("int", "str",
/// "bool", "float", "list[str]", "list[list[str]]"); `read` when the import takes it into the
/// plan, otherwise it is a real torchtitan key Paraplan does not model (a warning names it).
struct TorchtitanKey
{
    const char* key;
    const char* type;
    bool read;
};
const std::vector<TorchtitanKey>& torchtitanKeys();

} // namespace paraplan
