#include "cluster.h"

#include "hardware.h"
#include "inputlimits.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace paraplan {

const char* nodeFabricName(NodeFabric fabric)
{
    switch (fabric) {
    case NodeFabric::NVSwitch:
        return "nvswitch";
    case NodeFabric::NVLinkMesh:
        return "nvlink-mesh";
    case NodeFabric::PCIe:
        return "pcie";
    }
    return "?";
}

int NodeSpec::nvlinkLinksPerGpu() const
{
    // Summed wide and clamped: an unvalidated file may list any number of any counts.
    long long links = 0;
    for (int chip : switch_links_per_gpu)
        links = std::clamp(links + chip, 0LL, static_cast<long long>(INT_MAX));
    return static_cast<int>(links);
}

bool FailureWhatIf::any() const
{
    return !nvswitch_chips_out.empty() || nvlink_factor != 1.0 || pcie_factor != 1.0 ||
           nic_factor != 1.0 || spine_factor != 1.0 || ici_factor != 1.0;
}

namespace {

bool positiveFinite(double value)
{
    return value > 0 && std::isfinite(value);
}

} // namespace

namespace {

// The checks of validateCluster; each adds the problems it finds.
struct ClusterChecks
{
    const ClusterSpec& cluster;
    std::vector<std::string>& problems;

    void problem(std::string text) { problems.push_back(std::move(text)); }
    bool within(const limits::Range& range, double value, const char* field = nullptr)
    {
        if (auto text = limits::check(range, value, field)) {
            problem(std::move(*text));
            return false;
        }
        return true;
    }
    void torus();
    bool nodeCounts();
    void nvlink();
};

void ClusterChecks::torus()
{
    long long chips = 1;
    bool dimsOk = true;
    for (int axis = 0; axis < 3; ++axis) {
        dimsOk = within(limits::kTorusDim, cluster.torus.dims[axis]) && dimsOk;
        chips *= dimsOk ? cluster.torus.dims[axis] : 1;
    }
    if (dimsOk && chips != cluster.nodes)
        problem("torus.dims: " + std::to_string(cluster.torus.dims[0]) + "x" +
                std::to_string(cluster.torus.dims[1]) + "x" +
                std::to_string(cluster.torus.dims[2]) + " holds " + std::to_string(chips) +
                " chips, not " + std::to_string(cluster.nodes));
    within(limits::kLinkGBps, cluster.torus.link_GBps.value, "torus.link_GBps");
    within(kTorusEfficiency, cluster.torus.efficiency.value);
    within(limits::kLatencyUs, cluster.torus.hop_latency_us.value, "torus.hop_latency_us");
}

// The counts every later check multiplies or sums; false when one is out of range.
bool ClusterChecks::nodeCounts()
{
    const NodeSpec& node = cluster.node;
    if (!within(limits::kGpusPerNode, node.gpus) || !within(limits::kNics, node.nics) ||
        !within(limits::kNvSwitchChips, static_cast<double>(node.switch_links_per_gpu.size())))
        return false;
    for (int links : node.switch_links_per_gpu) {
        if (!within(limits::kLinksPerChip, links))
            return false;
    }
    if (!within({"cluster GPUs (nodes x node.gpus)", 1, limits::kMaxGpus, "GPUs"},
                static_cast<double>(cluster.totalGpus())))
        return false;
    for (const auto& [link, name] : {std::pair{&node.nvlink_link_GBps, "node.nvlink_link_GBps"},
                                     {&node.pcie_GBps, "node.pcie_GBps"},
                                     {&node.host_link_GBps, "node.host_link_GBps"},
                                     {&node.nic_GBps, "node.nic_GBps"}}) {
        if (link->value != 0)
            within(limits::kLinkGBps, link->value, name);
    }
    return true;
}

void ClusterChecks::nvlink()
{
    const NodeSpec& node = cluster.node;
    const FailureWhatIf& w = cluster.what_if;
    if (node.fabric != NodeFabric::PCIe && !positiveFinite(node.nvlink_link_GBps.value))
        problem("node.nvlink: an NVLink fabric needs a per-link bandwidth");
    if (node.fabric == NodeFabric::NVSwitch) {
        if (node.switch_links_per_gpu.empty() || node.nvlinkLinksPerGpu() < 1)
            problem("node.switch_links_per_gpu: an NVSwitch node needs its links per chip");
        for (int chip : w.nvswitch_chips_out) {
            if (chip < 0 || chip >= static_cast<int>(node.switch_links_per_gpu.size())) {
                problem("what_if.nvswitch_chips_out: no NVSwitch chip " + std::to_string(chip) +
                        " (the node has " + std::to_string(node.switch_links_per_gpu.size()) + ")");
                break;
            }
        }
        if (!w.nvswitch_chips_out.empty() &&
            w.nvswitch_chips_out.size() >= node.switch_links_per_gpu.size())
            problem("what_if.nvswitch_chips_out: every NVSwitch chip is out; the node has no "
                    "NVLink fabric left");
    }
    if (node.fabric == NodeFabric::NVLinkMesh) {
        for (const NVLinkPair& pair : node.nvlink_pairs) {
            if (pair.gpu_a < 0 || pair.gpu_b < 0 || pair.gpu_a >= node.gpus ||
                pair.gpu_b >= node.gpus || pair.gpu_a == pair.gpu_b || pair.links < 1 ||
                pair.links > limits::kLinksPerPair.max) {
                problem("node.nvlink_pairs: pair " + std::to_string(pair.gpu_a) + "-" +
                        std::to_string(pair.gpu_b) +
                        " must join two different GPUs of the node with 1 to 64 links");
                break;
            }
        }
        if (node.gpus > 16)
            problem("node.gpus: an NVLink mesh without a switch is modelled up to 16 GPUs");
    }
}

} // namespace

std::string clusterSource(const ClusterSpec& cluster)
{
    const int given = cluster.network.source_nodes_per_rack;
    const int here = cluster.network.nodes_per_rack;
    if (cluster.is_torus || given < 0 || given == here)
        return cluster.source;
    auto racks = [](int n) {
        return n == 0 ? std::string("one rack for every node")
                      : std::to_string(n) + " nodes per rack";
    };
    return cluster.source + "; here " + racks(here) + ", a plan entry, in place of the source's " +
           (given == 0 ? std::string("one rack") : std::to_string(given));
}

int ClusterSpec::nvlinkDomainGpus() const
{
    if (is_torus)
        return 1;
    const long long domain = nvlink_domain_gpus > node.gpus ? nvlink_domain_gpus : node.gpus;
    return static_cast<int>(std::max<long long>(1, std::min(domain, totalGpus())));
}

std::vector<long long> ClusterSpec::nvlinkDomainSizes() const
{
    std::vector<long long> sizes;
    const long long domain = nvlinkDomainGpus();
    const long long total = totalGpus();
    if (domain <= 0 || total <= 0 || total / domain > limits::kMaxGpus)
        return sizes;
    for (long long first = 0; first < total; first += domain)
        sizes.push_back(std::min(domain, total - first));
    return sizes;
}

std::vector<std::string> validateCluster(const ClusterSpec& cluster, const HardwareCatalog& catalog)
{
    return validateCluster(cluster, catalog.gpu(cluster.gpu_id));
}

std::vector<std::string> validateCluster(const ClusterSpec& cluster, const GpuSpec* gpu)
{
    std::vector<std::string> problems;
    ClusterChecks checks{cluster, problems};
    auto problem = [&](std::string text) { problems.push_back(std::move(text)); };

    if (!gpu)
        problem("gpu: unknown GPU '" + cluster.gpu_id + "' (see 'paraplan-cli presets')");
    if (!checks.within(limits::kNodes, cluster.nodes))
        return problems;

    const FailureWhatIf& w = cluster.what_if;
    for (double factor :
         {w.nvlink_factor, w.pcie_factor, w.nic_factor, w.spine_factor, w.ici_factor}) {
        if (!(factor > 0 && factor <= 1.0)) {
            problem("what_if: a degradation factor must lie in (0, 1]");
            break;
        }
    }
    if (cluster.is_torus) {
        checks.torus();
        return problems;
    }
    const NodeSpec& node = cluster.node;
    if (!checks.nodeCounts())
        return problems;
    checks.nvlink();
    if (cluster.nvlink_domain_gpus != 0) {
        const int d = cluster.nvlink_domain_gpus;
        if (d < 0 || d > limits::kMaxGpus)
            problem("nvlink_domain_gpus: must be 0 (the node) or a GPU count");
        else if (d % node.gpus != 0)
            problem("nvlink_domain_gpus: " + std::to_string(d) + " is not a whole number of " +
                    std::to_string(node.gpus) + "-GPU nodes");
        else if (d > node.gpus && node.fabric != NodeFabric::NVSwitch)
            problem("nvlink_domain_gpus: only an NVSwitch fabric joins nodes into one NVLink "
                    "domain (NVLink Switch trays); this node's fabric is " +
                    std::string(nodeFabricName(node.fabric)));
    }
    if (node.fabric != NodeFabric::NVSwitch || node.gpus > 1) {
        if (!positiveFinite(node.pcie_GBps.value))
            problem("node.pcie: a per-GPU PCIe bandwidth is required");
    }
    if (node.fabric != NodeFabric::NVSwitch) {
        if (!positiveFinite(node.host_link_GBps.value))
            problem("node.host_link: a host-link bandwidth is required");
    }
    // Checked for every fabric: an NVSwitch node's GPUs still reach the host over PCIe.
    if (checks.within({"node.gpus_per_host_link", 1, static_cast<double>(node.gpus), "GPUs"},
                      node.gpus_per_host_link) &&
        node.gpus % node.gpus_per_host_link != 0)
        problem("node.gpus_per_host_link must divide node.gpus (" + std::to_string(node.gpus) +
                "; got " + std::to_string(node.gpus_per_host_link) + ")");
    if (cluster.nodes > 1) {
        if (node.nics < 1)
            problem("node.nics: a cluster of several nodes needs at least one NIC per node");
        if (!positiveFinite(node.nic_GBps.value))
            problem("node.nic: a NIC bandwidth is required for a cluster of several nodes");
    }
    for (const auto& [fraction, name] :
         {std::pair{&node.nvlink_ring_efficiency, "node.nvlink_ring_efficiency"},
          {&node.nvls_efficiency, "node.nvls_efficiency"},
          {&node.pcie_efficiency, "node.pcie_efficiency"},
          {&node.nic_efficiency, "node.nic_efficiency"}})
        checks.within(kEfficiency, fraction->value, name);
    checks.within(limits::kNodesPerRack, cluster.network.nodes_per_rack);
    if (!(cluster.network.spine_oversubscription.value >= 1.0) ||
        !std::isfinite(cluster.network.spine_oversubscription.value))
        problem("network.spine_oversubscription: must be a ratio of at least 1 (1 = non-blocking, "
                "2 = 2:1)");
    else
        checks.within(limits::kOversubscription, cluster.network.spine_oversubscription.value);
    return problems;
}

bool finalizeCluster(ClusterSpec* cluster, std::string* error)
{
    if (!cluster->is_torus)
        return true;
    TorusSpec& torus = cluster->torus;
    if (torus.dims_auto && !torusDimsForChips(cluster->nodes, &torus.dims)) {
        *error = "cannot arrange " + std::to_string(cluster->nodes) +
                 " chips as a 3D torus with dimensions of at most 64; give torus.dims";
        return false;
    }
    if (torus.wrap_auto) {
        for (int axis = 0; axis < 3; ++axis)
            torus.wrap[axis] = torus.dims[axis] >= 4 && torus.dims[axis] % 4 == 0;
    }
    return true;
}

bool torusDimsForChips(long long chips, std::array<int, 3>* dims)
{
    if (chips < 1)
        return false;
    // Prime factors, largest first, each onto the currently smallest axis: the shape stays
    // close to a cube (3072 -> 12x16x16).
    std::vector<long long> factors;
    long long rest = chips;
    for (long long p = 2; p * p <= rest; ++p) {
        while (rest % p == 0) {
            factors.push_back(p);
            rest /= p;
        }
    }
    if (rest > 1)
        factors.push_back(rest);
    std::sort(factors.rbegin(), factors.rend());
    std::array<long long, 3> d{1, 1, 1};
    for (long long factor : factors)
        *std::min_element(d.begin(), d.end()) *= factor;
    std::sort(d.begin(), d.end());
    for (int axis = 0; axis < 3; ++axis) {
        if (d[axis] > 64)
            return false;
        (*dims)[axis] = static_cast<int>(d[axis]);
    }
    return true;
}

} // namespace paraplan
