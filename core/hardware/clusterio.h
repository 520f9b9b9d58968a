#pragma once

#include "cluster.h"
#include "hardware.h"

#include <optional>
#include <string>
#include <vector>

namespace paraplan {

/// The knobs every preset takes.
struct ClusterOptions
{
    std::optional<int> nodes;
    std::optional<int> nodes_per_rack;
    std::optional<double> spine_oversubscription;
};

struct ClusterPresetInfo
{
    std::string id;
    std::string name;
    std::string source;
    int default_nodes = 1;
};

/// The cluster presets bundled in resources/hardware/clusters.json.
std::vector<ClusterPresetInfo> clusterPresets();

/// Builds a preset with options applied. On failure returns false and names the problem.
bool clusterFromPreset(const std::string& id, const ClusterOptions& options, ClusterSpec* cluster,
                       std::string* error, const HardwareCatalog& catalog);

/// Reads a cluster from JSON text: either a full description (the shape of a preset entry) or
/// {"preset": ID, ...overrides}. Unknown keys and bad values are each reported.
bool clusterFromJsonText(const std::string& text, const std::string& label,
                         const ClusterOptions& options, ClusterSpec* cluster,
                         std::vector<std::string>* errors, const HardwareCatalog& catalog);

/// Loads a cluster file, or a preset when `preset_or_file` names one.
bool loadCluster(const std::string& preset_or_file, const ClusterOptions& options,
                 ClusterSpec* cluster, std::string* error, const HardwareCatalog& catalog);

/// The cluster as a self-contained JSON description (all numbers resolved, with sources).
std::string clusterToJsonText(const ClusterSpec& cluster);
bool saveClusterFile(const std::string& path, const ClusterSpec& cluster, std::string* error);

} // namespace paraplan
