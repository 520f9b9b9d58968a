// Member-wise equality of the cluster types: what edits compare instead of serialising both
// clusters to JSON text (which also drops fields the file does not write, such as sources).
#include "cluster.h"

namespace paraplan {
bool operator==(const NVLinkPair& a, const NVLinkPair& b)
{
    return a.gpu_a == b.gpu_a && a.gpu_b == b.gpu_b && a.links == b.links;
}

bool operator==(const NodeSpec& a, const NodeSpec& b)
{
    return a.gpus == b.gpus && a.fabric == b.fabric && a.nvlink_id == b.nvlink_id &&
           a.nvlink_link_GBps == b.nvlink_link_GBps && a.nvswitch_id == b.nvswitch_id &&
           a.switch_links_per_gpu == b.switch_links_per_gpu &&
           a.in_switch_reduction == b.in_switch_reduction && a.nvlink_pairs == b.nvlink_pairs &&
           a.pcie_id == b.pcie_id && a.pcie_GBps == b.pcie_GBps &&
           a.host_link_id == b.host_link_id && a.host_link_GBps == b.host_link_GBps &&
           a.gpus_per_host_link == b.gpus_per_host_link && a.pcie_p2p == b.pcie_p2p &&
           a.nic_id == b.nic_id && a.nics == b.nics && a.nics_count_source == b.nics_count_source &&
           a.nic_GBps == b.nic_GBps && a.nvlink_ring_efficiency == b.nvlink_ring_efficiency &&
           a.nvls_efficiency == b.nvls_efficiency && a.pcie_efficiency == b.pcie_efficiency &&
           a.nic_efficiency == b.nic_efficiency;
}

bool operator==(const NetworkSpec& a, const NetworkSpec& b)
{
    return a.nodes_per_rack == b.nodes_per_rack &&
           a.source_nodes_per_rack == b.source_nodes_per_rack &&
           a.spine_oversubscription == b.spine_oversubscription && a.sharp == b.sharp;
}

bool operator==(const TorusSpec& a, const TorusSpec& b)
{
    return a.dims == b.dims && a.wrap == b.wrap && a.dims_auto == b.dims_auto &&
           a.wrap_auto == b.wrap_auto && a.ici_id == b.ici_id && a.link_GBps == b.link_GBps &&
           a.efficiency == b.efficiency && a.hop_latency_us == b.hop_latency_us;
}

bool operator==(const FailureWhatIf& a, const FailureWhatIf& b)
{
    return a.nvswitch_chips_out == b.nvswitch_chips_out && a.nvlink_factor == b.nvlink_factor &&
           a.pcie_factor == b.pcie_factor && a.nic_factor == b.nic_factor &&
           a.spine_factor == b.spine_factor && a.ici_factor == b.ici_factor;
}

bool operator==(const ClusterSpec& a, const ClusterSpec& b)
{
    // What tells clusters apart most often first (an engine cache compares what-ifs).
    return a.nodes == b.nodes && a.is_torus == b.is_torus && a.what_if == b.what_if &&
           a.network == b.network && a.torus == b.torus && a.node == b.node &&
           a.preset == b.preset && a.name == b.name && a.gpu_id == b.gpu_id &&
           a.source == b.source && a.nvlink_domain_gpus == b.nvlink_domain_gpus;
}

} // namespace paraplan
