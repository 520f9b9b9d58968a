#pragma once
// What the two topology readers share (topologyimport.cpp, topologyncclxml.cpp); not a public API.
#include "inputlimits.h"
#include "topologyimport.h"

#include <string>
#include <vector>

namespace paraplan::detail {

/// A node's largest counts (inputlimits.h), checked before anything is allocated per item.
inline constexpr size_t kMaxNodeGpus = static_cast<size_t>(limits::kGpusPerNode.max);
inline constexpr size_t kMaxNodeNics = static_cast<size_t>(limits::kNics.max);

/// Fills in what every import shares: GPU, PCIe, NICs, nodes, defaults; then validates.
bool finishImport(const TopologyImportOptions& options, const std::string& gpuGuess,
                  const std::string& gpuWhy, int pcieGeneration, double nicGBps, int nics,
                  TopologyImport* r, std::string* error, const HardwareCatalog& catalog);

/// GPUs joined by NVLink everywhere with one count: an NVSwitch node; some pairs: a mesh;
/// none: PCIe. `nv` holds each pair's link count.
void nvswitchOrMesh(const std::vector<std::vector<int>>& nv, const std::string& how,
                    TopologyImport* r);

} // namespace paraplan::detail
