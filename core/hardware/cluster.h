#pragma once

#include "inputlimits.h"
#include "provenance.h"

#include <array>
#include <string>
#include <vector>

namespace paraplan {

class HardwareCatalog;
struct GpuSpec;

/// An achievable share of a link's line rate (node.nvlink_ring_efficiency, nvls_efficiency,
/// pcie_efficiency, nic_efficiency): at least 1% (a smaller one is a mistake, and 0 is not
/// "unset"), up to 1.5 (NVLS all_reduce's algbw can exceed the line rate with in-switch
/// reduction). torus.efficiency lies in the same range up to 1.
inline constexpr limits::Range kEfficiency{"efficiency", 0.01, 1.5, "", false, false};
inline constexpr limits::Range kTorusEfficiency{"torus.efficiency", 0.01, 1, "", false, false};

enum class NodeFabric
{
    NVSwitch,   ///< non-blocking crossbar: every GPU reaches every other at its full NVLink rate
    NVLinkMesh, ///< point-to-point NVLinks between some GPU pairs; the rest over PCIe
    PCIe,       ///< no NVLink; GPUs share host links
};
const char* nodeFabricName(NodeFabric fabric);

struct NVLinkPair
{
    int gpu_a = 0;
    int gpu_b = 0;
    int links = 0;
};

/// One server: its GPUs, the fabric between them, and its network ports.
struct NodeSpec
{
    int gpus = 8;
    NodeFabric fabric = NodeFabric::NVSwitch;

    std::string nvlink_id;
    Sourced nvlink_link_GBps; ///< per link, per direction
    std::string nvswitch_id;
    std::vector<int> switch_links_per_gpu; ///< NVLinks from each GPU to each NVSwitch chip
    bool in_switch_reduction = false;
    std::vector<NVLinkPair> nvlink_pairs; ///< NVLinkMesh only

    std::string pcie_id;
    Sourced pcie_GBps; ///< each GPU's own PCIe link, per direction
    std::string host_link_id;
    Sourced host_link_GBps; ///< the CPU-side link that `gpus_per_host_link` GPUs share
    int gpus_per_host_link = 1;
    bool pcie_p2p = true; ///< GPUs under one switch talk without crossing the host link

    std::string nic_id;
    int nics = 0;
    Sourced nics_count_source;
    Sourced nic_GBps; ///< per port, per direction

    Sourced nvlink_ring_efficiency;
    Sourced nvls_efficiency;
    Sourced pcie_efficiency;
    Sourced nic_efficiency;

    int nvlinkLinksPerGpu() const;
};

/// Racks and the spine above them.
struct NetworkSpec
{
    int nodes_per_rack = 0; ///< 0: every node in one rack
    /// The rack size the cluster's source (preset or file) gives; -1 when it gives none. When
    /// the plan sets another, clusterSource() says so.
    int source_nodes_per_rack = -1;
    Sourced spine_oversubscription{1.0, Origin::Preset,
                                   "Paraplan's default: a non-blocking fat tree (1:1) "
                                   "(docs/engine.md, 'Assumed figures')"};
    bool sharp = false; ///< in-network reduction (InfiniBand SHARP) on the switches
};

/// A TPU-style torus of chips with direct links to their neighbours.
struct TorusSpec
{
    std::array<int, 3> dims{1, 1, 1};
    std::array<bool, 3> wrap{false, false, false};
    bool dims_auto = false; ///< derive dims from the chip count (torusDimsForChips)
    bool wrap_auto = false; ///< wrap-around on axes that are multiples of 4 (Cloud TPU v4 rule)
    std::string ici_id;
    Sourced link_GBps; ///< per link, per direction
    Sourced efficiency;
    Sourced hop_latency_us;
};

/// What-ifs that leave the described hardware but take part of it out of service.
struct FailureWhatIf
{
    std::vector<int> nvswitch_chips_out; ///< indices into switch_links_per_gpu
    double nvlink_factor = 1.0;          ///< a degraded NVLink fabric (0..1]
    double pcie_factor = 1.0;
    double nic_factor = 1.0;
    double spine_factor = 1.0;
    double ici_factor = 1.0;

    bool any() const;
};

/// A whole cluster: N identical nodes (or a torus of chips), racks and spine.
struct ClusterSpec
{
    std::string preset; ///< the preset it started from, if any
    std::string name;
    std::string gpu_id;
    int nodes = 1; ///< for a torus: chips
    NodeSpec node;
    NetworkSpec network;
    bool is_torus = false;
    TorusSpec torus;
    FailureWhatIf what_if;
    std::string source;
    /// GPUs that share one NVLink domain ("nvlink_domain_gpus"): NVLink Switch trays join the
    /// NVSwitch fabrics of several nodes into one (72 GPUs of 18 trays in a GB200 NVL72 rack).
    /// 0: the node. A cluster that is not a whole number of domains has a smaller last one.
    int nvlink_domain_gpus = 0;

    int gpusPerNode() const { return is_torus ? 1 : node.gpus; }
    long long totalGpus() const { return static_cast<long long>(nodes) * gpusPerNode(); }
    /// The GPUs of one (full) NVLink domain: the node unless nvlink_domain_gpus joins several,
    /// never more than the cluster has. A torus chip is its own domain.
    int nvlinkDomainGpus() const;
    /// The size of each NVLink domain in GPU order: full domains, then a smaller last one when
    /// the cluster is not a whole number of domains (32 trays of NVL72: 72 and 56).
    std::vector<long long> nvlinkDomainSizes() const;
};

/// Member-wise equality of every field (Sourced figures compare value, origin and source).
/// tst_topologyequality changes each field of each struct (and counts the fields) and expects
/// inequality, so a field added to one of them must be compared too.
bool operator==(const NVLinkPair& a, const NVLinkPair& b);
bool operator==(const NodeSpec& a, const NodeSpec& b);
bool operator==(const NetworkSpec& a, const NetworkSpec& b);
bool operator==(const TorusSpec& a, const TorusSpec& b);
bool operator==(const FailureWhatIf& a, const FailureWhatIf& b);
bool operator==(const ClusterSpec& a, const ClusterSpec& b);
inline bool operator!=(const NVLinkPair& a, const NVLinkPair& b)
{
    return !(a == b);
}
inline bool operator!=(const NodeSpec& a, const NodeSpec& b)
{
    return !(a == b);
}
inline bool operator!=(const NetworkSpec& a, const NetworkSpec& b)
{
    return !(a == b);
}
inline bool operator!=(const TorusSpec& a, const TorusSpec& b)
{
    return !(a == b);
}
inline bool operator!=(const FailureWhatIf& a, const FailureWhatIf& b)
{
    return !(a == b);
}
inline bool operator!=(const ClusterSpec& a, const ClusterSpec& b)
{
    return !(a == b);
}

/// The cluster's source as shown to users, with the rack size the plan sets when it differs
/// from the one the source gives ("...; here 8 nodes per rack, a plan entry, in place of 32").
std::string clusterSource(const ClusterSpec& cluster);

/// Checks a cluster for values the model cannot use; returns one message per problem.
std::vector<std::string> validateCluster(const ClusterSpec& cluster,
                                         const HardwareCatalog& catalog);
/// The same with the cluster's GPU already looked up (`gpu`: the catalog's entry for
/// cluster.gpu_id, or null when it has none).
std::vector<std::string> validateCluster(const ClusterSpec& cluster, const GpuSpec* gpu);

/// Resolves the automatic parts (torus dims and wrap-around) after the chip count is final.
bool finalizeCluster(ClusterSpec* cluster, std::string* error);

/// Picks torus dimensions for `chips` chips: powers of two as close to a cube as possible,
/// the smallest first (4096 -> 16x16x16, 1024 -> 8x8x16). Returns false if `chips` does not
/// factor into three dimensions of at most 64 (the largest v4 slice is 16x16x16).
bool torusDimsForChips(long long chips, std::array<int, 3>* dims);

} // namespace paraplan
