#pragma once

#include "cluster.h"
#include "hardware.h"

#include <string>
#include <vector>

namespace paraplan {

/// What the user tells an import that the file cannot: the files describe one node.
struct TopologyImportOptions
{
    std::string gpu_id; ///< empty: inferred where the file allows (NCCL XML's sm)
    std::string nic_id; ///< empty: inferred from NCCL XML's net speed; needed for nodes > 1
    int nodes = 1;
    int nodes_per_rack = 0;
    double spine_oversubscription = 1;
};

struct TopologyImport
{
    ClusterSpec cluster;
    std::string format; ///< "nvidia-smi topo -m" or "NCCL topology XML"
    int gpus = 0;
    int nics = 0;
    /// How each figure was read ("NV18 = 18 NVLink4 links per GPU pair ..."), for the user.
    std::vector<std::string> notes;
};

/// Reads `nvidia-smi topo -m` output: the tab-separated matrix with NV#, PIX, PXB, PHB, NODE
/// and SYS cells, NIC columns (NIC# or mlx5_# on older drivers), legends, ANSI escapes.
bool importNvidiaSmiTopology(const std::string& text, const TopologyImportOptions& options,
                             TopologyImport* result, std::string* error,
                             const HardwareCatalog& catalog);

/// Reads an NCCL topology dump (NCCL_TOPO_DUMP_FILE): cpu/pci/gpu/nvlink/nic/net, NVSwitch
/// targets, and partial cloud files where GPUs and NICs are bare pci leaves.
bool importNcclTopologyXml(const std::string& text, const TopologyImportOptions& options,
                           TopologyImport* result, std::string* error,
                           const HardwareCatalog& catalog);

/// Either format, told apart by its first character.
bool importTopologyFile(const std::string& path, const TopologyImportOptions& options,
                        TopologyImport* result, std::string* error, const HardwareCatalog& catalog);

} // namespace paraplan
