#include "collectivemodel.h"

#include "units.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace paraplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

const char* collectiveOpName(CollectiveOp op)
{
    switch (op) {
    case CollectiveOp::AllReduce:
        return "all_reduce";
    case CollectiveOp::ReduceScatter:
        return "reduce_scatter";
    case CollectiveOp::AllGather:
        return "all_gather";
    case CollectiveOp::Broadcast:
        return "broadcast";
    case CollectiveOp::Reduce:
        return "reduce";
    case CollectiveOp::AllToAll:
        return "all_to_all";
    case CollectiveOp::SendRecv:
        return "send_recv";
    }
    return "?";
}

bool parseCollectiveOp(const std::string& text, CollectiveOp* op)
{
    std::string name = text;
    std::replace(name.begin(), name.end(), '-', '_');
    if (name == "alltoall")
        name = "all_to_all";
    if (name == "sendrecv" || name == "p2p")
        name = "send_recv";
    if (name == "allreduce")
        name = "all_reduce";
    if (name == "allgather")
        name = "all_gather";
    if (name == "reducescatter")
        name = "reduce_scatter";
    for (int i = 0; i < kCollectiveOpCount; ++i) {
        if (name == collectiveOpName(static_cast<CollectiveOp>(i))) {
            *op = static_cast<CollectiveOp>(i);
            return true;
        }
    }
    return false;
}

const char* algorithmName(Algorithm algorithm)
{
    switch (algorithm) {
    case Algorithm::Auto:
        return "auto";
    case Algorithm::Ring:
        return "ring";
    case Algorithm::Tree:
        return "tree";
    case Algorithm::Hierarchical:
        return "hierarchical";
    case Algorithm::Torus:
        return "torus";
    case Algorithm::InSwitch:
        return "in-switch";
    case Algorithm::Direct:
        return "direct";
    }
    return "?";
}

bool parseAlgorithm(const std::string& text, Algorithm* algorithm)
{
    std::string name = text;
    if (name == "nvls" || name == "sharp" || name == "in_switch")
        name = "in-switch";
    for (int i = 0; i < kAlgorithmCount; ++i) {
        if (name == algorithmName(static_cast<Algorithm>(i))) {
            *algorithm = static_cast<Algorithm>(i);
            return true;
        }
    }
    return false;
}

const char* protocolName(Protocol protocol)
{
    switch (protocol) {
    case Protocol::LL:
        return "LL";
    case Protocol::LL128:
        return "LL128";
    case Protocol::Simple:
        return "Simple";
    }
    return "?";
}

const char* tierName(Tier tier)
{
    switch (tier) {
    case Tier::Link:
        return "link";
    case Tier::NVSwitch:
        return "nvswitch";
    case Tier::NVLink:
        return "nvlink";
    case Tier::PCIe:
        return "pcie";
    case Tier::HostLink:
        return "pcie-host-link";
    case Tier::Network:
        return "network";
    case Tier::Spine:
        return "spine";
    case Tier::ICI:
        return "ici";
    }
    return "?";
}

const char* regimeName(Regime regime)
{
    return regime == Regime::LatencyBound ? "latency-bound" : "bandwidth-bound";
}

double busBandwidthFactor(CollectiveOp op, int ranks)
{
    const double n = ranks;
    switch (op) {
    case CollectiveOp::AllReduce:
        return 2.0 * (n - 1) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
        return (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
    case CollectiveOp::SendRecv:
        return 1.0;
    }
    return 1.0;
}

double ringWireBytesPerRank(CollectiveOp op, double bytes, int ranks)
{
    return busBandwidthFactor(op, ranks) * bytes;
}

const char* wireApproximationName(WireApproximation approximation)
{
    switch (approximation) {
    case WireApproximation::Exact:
        return "exact";
    case WireApproximation::LargeN:
        return "large-n";
    case WireApproximation::OnePass:
        return "one-pass";
    }
    return "?";
}

double approximateWireBytesPerRank(CollectiveOp op, double bytes, int ranks,
                                   WireApproximation approximation)
{
    switch (approximation) {
    case WireApproximation::Exact:
        return ringWireBytesPerRank(op, bytes, ranks);
    case WireApproximation::LargeN:
        return op == CollectiveOp::AllReduce ? 2 * bytes : bytes;
    case WireApproximation::OnePass:
        return (ranks - 1.0) / ranks * bytes;
    }
    return 0;
}

MeasuredBandwidth bandwidthFromMeasuredTime(CollectiveOp op, double bytes, int ranks, double time_s)
{
    MeasuredBandwidth result;
    result.algbw_Bps = bytes / time_s;
    result.busbw_Bps = result.algbw_Bps * busBandwidthFactor(op, ranks);
    return result;
}

CollectiveModel CollectiveModel::flatLink(double bandwidth_GBps, double hop_latency_us)
{
    CollectiveModel model;
    model.m_flat = true;
    model.m_figures.flat_Bps = units::bytesPerSecondFromGBps(bandwidth_GBps);
    model.m_figures.flat_hop_s = units::secondsFromUs(hop_latency_us);
    model.m_gpus_per_node = 1 << 30;
    model.m_total_gpus = 1LL << 40;
    model.m_cluster.name = "flat link";
    return model;
}

CollectiveModel::CollectiveModel(const ClusterSpec& cluster) : m_cluster(cluster)
{
    const FailureWhatIf& whatIf = cluster.what_if;
    m_total_gpus = cluster.totalGpus();
    if (cluster.is_torus) {
        m_gpus_per_node = 1;
        m_figures.torus_link_Bps = units::bytesPerSecondFromGBps(cluster.torus.link_GBps.value) *
                                   cluster.torus.efficiency.value * whatIf.ici_factor;
        return;
    }
    const NodeSpec& node = cluster.node;
    // An NVLink domain that joins several nodes (NVLink Switch trays) is one NVSwitch fabric:
    // groups are placed on domains, and only what leaves a domain crosses the network.
    m_gpus_per_node = node.fabric == NodeFabric::NVSwitch ? cluster.nvlinkDomainGpus() : node.gpus;
    m_domain_spans_nodes = m_gpus_per_node > node.gpus;
    const double link_Bps = units::bytesPerSecondFromGBps(node.nvlink_link_GBps.value);
    if (node.fabric == NodeFabric::NVSwitch) {
        int inService = 0;
        for (size_t chip = 0; chip < node.switch_links_per_gpu.size(); ++chip) {
            const bool out =
                std::find(whatIf.nvswitch_chips_out.begin(), whatIf.nvswitch_chips_out.end(),
                          static_cast<int>(chip)) != whatIf.nvswitch_chips_out.end();
            if (!out)
                inService += node.switch_links_per_gpu[chip];
        }
        m_figures.nvlinks_total = node.nvlinkLinksPerGpu();
        m_figures.nvlinks_in_service = inService;
        m_figures.nvswitch_line_Bps = inService * link_Bps;
        m_figures.nvswitch_ring_Bps =
            m_figures.nvswitch_line_Bps * node.nvlink_ring_efficiency.value * whatIf.nvlink_factor;
        m_has_nvls = node.in_switch_reduction;
        if (m_has_nvls)
            m_figures.nvls_Bps =
                m_figures.nvswitch_line_Bps * node.nvls_efficiency.value * whatIf.nvlink_factor;
    } else {
        computeIntraTable();
    }
    if (node.gpus > 0)
        m_figures.nic_share_per_gpu_Bps = node.nics *
                                          units::bytesPerSecondFromGBps(node.nic_GBps.value) *
                                          node.nic_efficiency.value * whatIf.nic_factor / node.gpus;
    m_figures.spine_ratio = cluster.network.spine_oversubscription.value / whatIf.spine_factor;
}

// Rings inside a node without a switch: NCCL searches for rings over the links it finds and
// runs several at once. We do the same on a resource model: every directed NVLink pair, every
// GPU's PCIe link and every shared host link has a capacity; a ring edge uses the resources on
// its path; a ring runs at the smallest capacity/uses on it. Rings are added greedily on what
// capacity is left.
namespace {

struct IntraResources
{
    IntraResources(const NodeSpec& node, const FailureWhatIf& whatIf);
    /// The resources one ring edge u->v uses, into `out` (4 at most); returns how many.
    int edgeResources(int u, int v, int* out) const;
    /// Bandwidth of one ring order under `residual`, and its limiting resource; leaves the
    /// order's uses of each resource in `uses`.
    double ringRate(const std::vector<int>& order, const std::vector<double>& residual,
                    int* limiting);
    /// Up to four rings over `members`, added greedily; their total and the first one's
    /// limiting tier.
    double bestRings(const std::vector<int>& members, Tier* firstTier);

    int gpus = 0;
    int perHost = 1;
    int hosts = 0;
    bool pcieP2P = false;
    // Resource layout: [nvlink u->v] gpus*gpus, [pcie up] gpus, [pcie down] gpus,
    // [host up] hosts, [host down] hosts.
    int nvlBase = 0;
    int upBase = 0;
    int downBase = 0;
    int hostUpBase = 0;
    int hostDownBase = 0;
    int resources = 0;
    std::vector<double> capacity;
    std::vector<Tier> kind;
    std::vector<int> uses;
};

IntraResources::IntraResources(const NodeSpec& node, const FailureWhatIf& whatIf)
{
    gpus = node.gpus;
    pcieP2P = node.pcie_p2p;
    const double nvlink_Bps = units::bytesPerSecondFromGBps(node.nvlink_link_GBps.value) *
                              node.nvlink_ring_efficiency.value * whatIf.nvlink_factor;
    const double pcie_Bps = units::bytesPerSecondFromGBps(node.pcie_GBps.value) *
                            node.pcie_efficiency.value * whatIf.pcie_factor;
    const double host_Bps = units::bytesPerSecondFromGBps(node.host_link_GBps.value) *
                            node.pcie_efficiency.value * whatIf.pcie_factor;
    perHost = std::max(1, node.gpus_per_host_link);
    hosts = (gpus + perHost - 1) / perHost;

    nvlBase = 0;
    upBase = gpus * gpus;
    downBase = upBase + gpus;
    hostUpBase = downBase + gpus;
    hostDownBase = hostUpBase + hosts;
    resources = hostDownBase + hosts;
    capacity.assign(static_cast<size_t>(resources), 0.0);
    kind.assign(static_cast<size_t>(resources), Tier::PCIe);
    uses.assign(static_cast<size_t>(resources), 0);
    for (const NVLinkPair& pair : node.nvlink_pairs) {
        capacity[static_cast<size_t>(nvlBase + pair.gpu_a * gpus + pair.gpu_b)] +=
            pair.links * nvlink_Bps;
        capacity[static_cast<size_t>(nvlBase + pair.gpu_b * gpus + pair.gpu_a)] +=
            pair.links * nvlink_Bps;
    }
    for (int r = 0; r < gpus * gpus; ++r)
        kind[static_cast<size_t>(r)] = Tier::NVLink;
    for (int g = 0; g < gpus; ++g) {
        capacity[static_cast<size_t>(upBase + g)] = pcie_Bps;
        capacity[static_cast<size_t>(downBase + g)] = pcie_Bps;
    }
    for (int h = 0; h < hosts; ++h) {
        capacity[static_cast<size_t>(hostUpBase + h)] = host_Bps;
        capacity[static_cast<size_t>(hostDownBase + h)] = host_Bps;
        kind[static_cast<size_t>(hostUpBase + h)] = Tier::HostLink;
        kind[static_cast<size_t>(hostDownBase + h)] = Tier::HostLink;
    }
}

int IntraResources::edgeResources(int u, int v, int* out) const
{
    int count = 0;
    if (capacity[static_cast<size_t>(nvlBase + u * gpus + v)] > 0) {
        out[count++] = nvlBase + u * gpus + v;
        return count;
    }
    out[count++] = upBase + u;
    out[count++] = downBase + v;
    const int hu = u / perHost;
    const int hv = v / perHost;
    if (hu != hv || !pcieP2P) {
        out[count++] = hostUpBase + hu;
        out[count++] = hostDownBase + hv;
    }
    return count;
}

double IntraResources::ringRate(const std::vector<int>& order, const std::vector<double>& residual,
                                int* limiting)
{
    std::fill(uses.begin(), uses.end(), 0);
    int path[4];
    const int size = static_cast<int>(order.size());
    for (int i = 0; i < size; ++i) {
        const int count = edgeResources(order[static_cast<size_t>(i)],
                                        order[static_cast<size_t>((i + 1) % size)], path);
        for (int p = 0; p < count; ++p)
            ++uses[static_cast<size_t>(path[p])];
    }
    double rate = kInf;
    for (int r = 0; r < resources; ++r) {
        if (uses[static_cast<size_t>(r)] == 0)
            continue;
        const double share = residual[static_cast<size_t>(r)] / uses[static_cast<size_t>(r)];
        if (share < rate) {
            rate = share;
            *limiting = r;
        }
    }
    return rate;
}

double IntraResources::bestRings(const std::vector<int>& members, Tier* firstTier)
{
    std::vector<double> residual = capacity;
    double total = 0;
    for (int ring = 0; ring < 4; ++ring) {
        double best = 0;
        int bestLimit = 0;
        std::vector<int> bestOrder;
        std::vector<int> order = members;
        // Exhaustive over orders that start at the first member, up to 8 GPUs; larger
        // meshes use the index order only.
        const bool exhaustive = members.size() <= 8;
        do {
            int limit = 0;
            const double rate = ringRate(order, residual, &limit);
            if (rate > best) {
                best = rate;
                bestLimit = limit;
                bestOrder = order;
            }
        } while (exhaustive && std::next_permutation(order.begin() + 1, order.end()));
        if (best <= 0 || (total > 0 && best < 1e-6 * total))
            break;
        if (ring == 0)
            *firstTier = kind[static_cast<size_t>(bestLimit)];
        total += best;
        ringRate(bestOrder, residual, &bestLimit);
        for (int r = 0; r < resources; ++r)
            residual[static_cast<size_t>(r)] -= best * uses[static_cast<size_t>(r)];
    }
    return total;
}

} // namespace

void CollectiveModel::computeIntraTable()
{
    IntraResources resources(m_cluster.node, m_cluster.what_if);
    const int gpus = m_cluster.node.gpus;
    const size_t maskCount = size_t(1) << gpus;
    m_intra_Bps.assign(maskCount, 0.0f);
    m_intra_tier.assign(maskCount, static_cast<unsigned char>(Tier::PCIe));
    for (size_t mask = 1; mask < maskCount; ++mask) {
        std::vector<int> members;
        for (int g = 0; g < gpus; ++g) {
            if (mask & (size_t(1) << g))
                members.push_back(g);
        }
        if (members.size() < 2)
            continue;
        Tier firstTier = Tier::PCIe;
        const double total = resources.bestRings(members, &firstTier);
        m_intra_Bps[mask] = static_cast<float>(total);
        m_intra_tier[mask] = static_cast<unsigned char>(firstTier);
    }
}

double CollectiveModel::intraRingBps(unsigned mask, Tier* tier) const
{
    if (m_flat) {
        if (tier)
            *tier = Tier::Link;
        return m_figures.flat_Bps;
    }
    if (m_cluster.node.fabric == NodeFabric::NVSwitch) {
        if (tier)
            *tier = Tier::NVSwitch;
        return m_figures.nvswitch_ring_Bps;
    }
    if (mask >= m_intra_Bps.size())
        return 0;
    if (tier)
        *tier = static_cast<Tier>(m_intra_tier[mask]);
    return m_intra_Bps[mask];
}

bool CollectiveModel::place(const CollectiveRequest& request, Placement* p,
                            std::string* error) const
{
    const int n = request.ranks;
    const int s = request.stride;
    if (m_flat) {
        p->g = p->g_min = n;
        return true;
    }
    const long long needed = static_cast<long long>(n - 1) * s + 1;
    if (needed > m_total_gpus) {
        *error = "a group of " + std::to_string(n) + " ranks at stride " + std::to_string(s) +
                 " needs " + std::to_string(needed) + " GPUs; the cluster has " +
                 std::to_string(m_total_gpus);
        return false;
    }
    if (m_cluster.is_torus) {
        const auto& dims = m_cluster.torus.dims;
        std::array<int, 3> g{1, 1, 1};
        int first = 0;
        if (s == 1)
            first = 0;
        else if (s == dims[0])
            first = 1;
        else if (s == dims[0] * dims[1])
            first = 2;
        else {
            *error = "on a torus the stride must be 1, " + std::to_string(dims[0]) + " or " +
                     std::to_string(dims[0] * dims[1]) + " (one axis at a time)";
            return false;
        }
        long long rest = n;
        for (int axis = first; axis < 3 && rest > 1; ++axis) {
            const int take = static_cast<int>(std::min<long long>(rest, dims[axis]));
            if (rest % take != 0) {
                *error = std::to_string(n) + " chips do not fill whole rows of the " +
                         std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
                         std::to_string(dims[2]) + " torus";
                return false;
            }
            g[axis] = take;
            rest /= take;
        }
        if (rest > 1) {
            *error = "the group does not fit the torus along the chosen axes";
            return false;
        }
        p->torus_dims = g;
        for (int axis = 0; axis < 3; ++axis)
            p->torus_wrap[axis] = m_cluster.torus.wrap[axis] && g[axis] == dims[axis];
        return true;
    }
    const int gpn = m_gpus_per_node;
    if (m_domain_spans_nodes) {
        // Domains of `gpn` GPUs need not be a multiple of the stride (72 GPUs, stride 16): the
        // group starting at GPU 0 has (gpn - 1) / s + 1 ranks in the first domain. Racks follow
        // from the GPUs the group spans (nodes_per_rack counts nodes).
        p->g = static_cast<int>(std::min<long long>(n, s < gpn ? (gpn - 1) / s + 1 : 1));
        p->mask = 1;
        p->k = (n + p->g - 1) / p->g;
        p->g_min = n - (p->k - 1) * p->g;
        const long long rackGpus =
            static_cast<long long>(m_cluster.network.nodes_per_rack) * m_cluster.node.gpus;
        p->racks = rackGpus > 0 ? static_cast<int>((needed - 1) / rackGpus + 1) : 1;
        return true;
    }
    if (s < gpn) {
        if (gpn % s != 0) {
            *error = "stride " + std::to_string(s) + " does not divide the " + std::to_string(gpn) +
                     " GPUs of a node";
            return false;
        }
        p->g = std::min(n, gpn / s);
        p->mask = 0;
        for (int i = 0; i < p->g; ++i)
            p->mask |= 1u << (i * s);
        p->k = (n + p->g - 1) / p->g;
        p->g_min = n - (p->k - 1) * p->g;
        const int perRack = m_cluster.network.nodes_per_rack;
        p->racks = perRack > 0 ? (p->k - 1) / perRack + 1 : 1;
    } else {
        if (s % gpn != 0) {
            *error = "stride " + std::to_string(s) + " is not a multiple of the " +
                     std::to_string(gpn) + " GPUs of a node";
            return false;
        }
        p->g = p->g_min = 1;
        p->mask = 1;
        p->k = n;
        const long long nodeStride = s / gpn;
        const int perRack = m_cluster.network.nodes_per_rack;
        p->racks = perRack > 0 ? static_cast<int>((p->k - 1) * nodeStride / perRack + 1) : 1;
    }
    return true;
}

bool CollectiveModel::applies(const CollectiveRequest& request, const Placement& p,
                              Algorithm algorithm, const char** why) const
{
    const CollectiveOp op = request.op;
    const bool pairwise = op == CollectiveOp::AllToAll || op == CollectiveOp::SendRecv;
    switch (algorithm) {
    case Algorithm::Auto:
        return true;
    case Algorithm::Direct:
        if (!pairwise)
            *why = "direct exchange is for all_to_all and send_recv";
        return pairwise;
    case Algorithm::Ring:
        if (pairwise)
            *why = "all_to_all and send_recv are direct pairwise exchanges (--algo direct)";
        return !pairwise;
    case Algorithm::Tree:
        if (op != CollectiveOp::AllReduce)
            *why = "NCCL implements tree for all_reduce only";
        return op == CollectiveOp::AllReduce && !m_cluster.is_torus;
    case Algorithm::Hierarchical:
        if (m_cluster.is_torus || m_flat) {
            *why = m_flat ? "one flat link has no tiers to be hierarchical over"
                          : "a torus has no node tier; use torus";
            return false;
        }
        if (op != CollectiveOp::AllReduce && op != CollectiveOp::ReduceScatter &&
            op != CollectiveOp::AllGather) {
            *why = "hierarchical applies to all_reduce, reduce_scatter and all_gather";
            return false;
        }
        if (p.k < 2 || p.g < 2 || p.g_min != p.g) {
            *why = "hierarchical needs the group on several nodes with the same number of GPUs "
                   "(and more than one) on each";
            return false;
        }
        return true;
    case Algorithm::Torus:
        if (!m_cluster.is_torus) {
            *why = "per-axis rings need a torus cluster";
            return false;
        }
        if (pairwise || op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) {
            *why = "per-axis rings apply to all_reduce, reduce_scatter and all_gather";
            return false;
        }
        return true;
    case Algorithm::InSwitch:
        if (op != CollectiveOp::AllReduce) {
            *why = "in-switch reduction is modelled for all_reduce";
            return false;
        }
        if (m_flat || m_cluster.is_torus ||
            !((m_has_nvls && p.g > 1) || (m_cluster.network.sharp && p.k > 1))) {
            *why = "this cluster has no in-switch reduction on the tiers the group crosses "
                   "(NVLS needs NVSwitch gen 3+, SHARP needs network.sharp)";
            return false;
        }
        return true;
    }
    return false;
}

std::vector<CollectiveResult> CollectiveModel::candidates(const CollectiveRequest& request) const
{
    std::vector<CollectiveResult> results;
    CollectiveResult chosen = evaluate(request);
    if (!chosen.ok) {
        results.push_back(chosen);
        return results;
    }
    Placement placement;
    std::string error;
    place(request, &placement, &error);
    for (int a = 1; a < kAlgorithmCount; ++a) {
        const char* why = "";
        if (applies(request, placement, static_cast<Algorithm>(a), &why))
            results.push_back(evaluateAlgorithm(request, placement, static_cast<Algorithm>(a)));
    }
    std::stable_sort(
        results.begin(), results.end(),
        [](const CollectiveResult& a, const CollectiveResult& b) { return a.time_s < b.time_s; });
    return results;
}

CollectiveResult CollectiveModel::evaluate(const CollectiveRequest& request) const
{
    CollectiveResult failed;
    failed.op = request.op;
    failed.bytes = request.bytes;
    failed.ranks = request.ranks;
    if (!(request.bytes > 0) || !std::isfinite(request.bytes)) {
        failed.error = "bytes must be a positive number";
        return failed;
    }
    if (request.ranks < 2) {
        failed.error =
            "a collective needs at least 2 ranks (got " + std::to_string(request.ranks) + ")";
        return failed;
    }
    if (request.op == CollectiveOp::SendRecv && request.ranks != 2) {
        failed.error = "send_recv is between 2 ranks (got " + std::to_string(request.ranks) + ")";
        return failed;
    }
    if (request.stride < 1) {
        failed.error = "stride must be at least 1";
        return failed;
    }
    if (m_flat && !(m_figures.flat_Bps > 0)) {
        failed.error = "the link bandwidth must be positive";
        return failed;
    }
    Placement placement;
    if (!place(request, &placement, &failed.error))
        return failed;

    if (request.algorithm != Algorithm::Auto) {
        const char* why = "";
        if (!applies(request, placement, request.algorithm, &why)) {
            failed.error =
                std::string(algorithmName(request.algorithm)) + " does not apply: " + why;
            return failed;
        }
        return evaluateAlgorithm(request, placement, request.algorithm);
    }
    // On a tie the more specific algorithm wins (a ring along one torus axis is "torus").
    static constexpr Algorithm kPreference[] = {Algorithm::Torus,        Algorithm::InSwitch,
                                                Algorithm::Hierarchical, Algorithm::Ring,
                                                Algorithm::Tree,         Algorithm::Direct};
    CollectiveResult best;
    for (const Algorithm algorithm : kPreference) {
        const char* why = "";
        if (!applies(request, placement, algorithm, &why))
            continue;
        CollectiveResult result = evaluateAlgorithm(request, placement, algorithm);
        if (!best.ok || result.time_s < best.time_s)
            best = result;
    }
    return best;
}

} // namespace paraplan
