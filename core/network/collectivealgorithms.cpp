// The algorithms of CollectiveModel: one method per algorithm builds the phases (wire bytes
// over the bandwidth of the tier each crosses) and counts the hops; the shared tail adds the
// bandwidth term, the latency term and picks the protocol.
#include "collectivemodel.h"

#include "units.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace paraplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// NCCL's latency model (src/graph/tuning.cc, v2.30), in microseconds, indexed LL, LL128,
// Simple (NVIDIA/nccl on GitHub).
constexpr double kBaseRingUs[3] = {6.6, 14.0, 8.4};
constexpr double kBaseTreeUs[3] = {6.8, 14.0, 8.4};
constexpr double kHopNVLinkRingUs[3] = {0.6, 1.9, 3.4};
constexpr double kHopNVLinkTreeUs[3] = {0.6, 1.25, 4.0};
constexpr double kHopPCIeUs[3] = {1.0, 2.5, 5.7};
constexpr double kHopNetRingUs[3] = {2.7, 4.0, 14.0};
constexpr double kHopNetTreeUs[3] = {5.0, 8.5, 14.0};
constexpr double kNvlsLatencyUs = 25.0;
// Share of the link each protocol reaches: LL ~50%, LL128 ~92%, Simple ~100% (same source).
constexpr double kProtocolFraction[3] = {0.5, 0.92, 1.0};

int ceilLog2(int value)
{
    int bits = 0;
    while ((1 << bits) < value)
        ++bits;
    return bits;
}

} // namespace

struct CollectiveModel::AlgorithmEvaluation
{
    AlgorithmEvaluation(const CollectiveModel& model, const CollectiveRequest& request,
                        const Placement& placement, Algorithm algorithm);

    void addPhase(const char* what, const char* formula, Tier tier, int ranks, double wire,
                  double bw);
    void ring();
    void ringOnTorus(const char* formula, double wire, int steps);
    void tree();
    void hierarchical();
    void torus();
    void inSwitch();
    void direct();
    void sendRecv();
    void allToAllOnTorus();
    void pairwiseExchange();
    /// Bytes, the bandwidth term, the latency term and the protocol.
    void finish();
    void bandwidthTerm();
    void latencyTerm();

    const CollectiveModel& m;
    const Figures& figures;
    const ClusterSpec& cluster;
    const Placement& p;
    CollectiveResult r;

    const double S;
    const int n;
    const CollectiveOp op;
    const bool allReduce;

    // Bandwidths of the tiers the group crosses (per rank, per direction).
    Tier intraTier = Tier::Link;
    double intra = kInf;
    double pipe = kInf; // the node's network share for this group
    Tier netTier = Tier::Network;

    // Per-protocol latency tables for the tiers crossed.
    const double* hopIntraRing = kHopNVLinkRingUs;
    const double* hopIntraTree = kHopNVLinkTreeUs;
    bool protocols = false;

    int intraHops = 0;
    int interHops = 0;
    const double* baseTable = kBaseRingUs;
    const double* interTable = kHopNetRingUs;
    const double* intraTable = kHopNVLinkRingUs;
    bool simpleOnly = false;
    double fixedLatency_s = 0; // NVLS
    double bandwidthTime = 0;
};

CollectiveModel::AlgorithmEvaluation::AlgorithmEvaluation(const CollectiveModel& model,
                                                          const CollectiveRequest& request,
                                                          const Placement& placement,
                                                          Algorithm algorithm)
    : m(model), figures(model.m_figures), cluster(model.m_cluster), p(placement), S(request.bytes),
      n(request.ranks), op(request.op), allReduce(request.op == CollectiveOp::AllReduce)
{
    r.ok = true;
    r.op = request.op;
    r.algorithm = algorithm;
    r.bytes = request.bytes;
    r.ranks = request.ranks;
    r.gpus_per_node_in_group = p.g;
    r.nodes_spanned = p.k;
    r.racks_spanned = p.racks;
    r.torus_group_dims = p.torus_dims;

    intra = p.g > 1 ? m.intraRingBps(p.mask, &intraTier) : kInf;
    if (!m.m_flat && !cluster.is_torus && p.k > 1) {
        pipe = p.g_min * figures.nic_share_per_gpu_Bps;
        if (p.racks > 1 && figures.spine_ratio > 1.0) {
            pipe /= figures.spine_ratio;
            netTier = Tier::Spine;
        }
    }

    const bool pcieIntra =
        !m.m_flat && !cluster.is_torus && (intraTier == Tier::PCIe || intraTier == Tier::HostLink);
    hopIntraRing = pcieIntra ? kHopPCIeUs : kHopNVLinkRingUs;
    hopIntraTree = pcieIntra ? kHopPCIeUs : kHopNVLinkTreeUs;
    protocols = !m.m_flat && !cluster.is_torus;
    intraTable = hopIntraRing;
}

void CollectiveModel::AlgorithmEvaluation::addPhase(const char* what, const char* formula,
                                                    Tier tier, int ranks, double wire, double bw)
{
    CollectivePhase& phase = r.phases[static_cast<size_t>(r.phase_count++)];
    phase.what = what;
    phase.formula = formula;
    phase.tier = tier;
    phase.ranks = ranks;
    phase.wire_bytes_per_rank = wire;
    phase.bandwidth_Bps = bw;
    phase.time_s = wire / bw;
}

void CollectiveModel::AlgorithmEvaluation::ring()
{
    const double wire = ringWireBytesPerRank(op, S, n);
    const char* ringFormula = allReduce ? "2(n-1)/n × S"
                              : (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce)
                                  ? "S (pipelined along the ring)"
                                  : "(n-1)/n × S";
    const int steps = allReduce ? 2 * (n - 1) : n - 1;
    if (cluster.is_torus) {
        ringOnTorus(ringFormula, wire, steps);
    } else {
        const bool networkSlower = pipe < intra;
        addPhase("ring", ringFormula, m.m_flat ? Tier::Link : (networkSlower ? netTier : intraTier),
                 n, wire, m.m_flat ? figures.flat_Bps : std::min(intra, pipe));
        interHops = p.k > 1 ? static_cast<int>(std::lround(double(steps) * p.k / n)) : 0;
        intraHops = steps - interHops;
    }
}

void CollectiveModel::AlgorithmEvaluation::ringOnTorus(const char* formula, double wire, int steps)
{
    // Two rings, one each way, when the block has a Hamiltonian cycle over neighbour
    // links: one axis with wrap-around (3+ chips), or a 2D/3D block with an even side.
    // Otherwise the ring folds back over a line and each link carries both directions.
    int axesUsed = 0;
    int lastAxis = 0;
    for (int axis = 0; axis < 3; ++axis) {
        if (p.torus_dims[axis] > 1) {
            ++axesUsed;
            lastAxis = axis;
        }
    }
    const bool cycle =
        axesUsed == 1 ? (p.torus_wrap[lastAxis] && n >= 3) : (axesUsed > 1 && n % 2 == 0);
    const double bw = figures.torus_link_Bps * (cycle ? 2.0 : 1.0);
    addPhase("ring", formula, Tier::ICI, n, wire, bw);
    intraHops = steps;
}

void CollectiveModel::AlgorithmEvaluation::tree()
{
    const double bw = std::min(intra, pipe);
    addPhase("double binary tree: reduce up, broadcast down", "2 × S",
             pipe < intra ? netTier : intraTier, n, 2 * S, m.m_flat ? figures.flat_Bps : bw);
    baseTable = kBaseTreeUs;
    interTable = kHopNetTreeUs;
    intraTable = hopIntraTree;
    if (m.m_flat) {
        intraHops = 2 * ceilLog2(n);
    } else {
        intraHops = 2 * (p.g - 1);
        interHops = 2 * ceilLog2(p.k);
    }
}

void CollectiveModel::AlgorithmEvaluation::hierarchical()
{
    const int g = p.g;
    const int k = p.k;
    const double perGpuNet = pipe / g;
    if (allReduce) {
        addPhase("intra-node reduce-scatter", "(g-1)/g × S", intraTier, g, (g - 1.0) / g * S,
                 intra);
        addPhase("inter-node all-reduce of each GPU's shard", "2(k-1)/k × S/g", netTier, k,
                 2.0 * (k - 1) / k * (S / g), perGpuNet);
        addPhase("intra-node all-gather", "(g-1)/g × S", intraTier, g, (g - 1.0) / g * S, intra);
        intraHops = 2 * (g - 1);
        interHops = 2 * (k - 1);
    } else {
        const bool scatter = op == CollectiveOp::ReduceScatter;
        addPhase(scatter ? "intra-node reduce-scatter" : "inter-node all-gather of shards",
                 scatter ? "(g-1)/g × S" : "(k-1)/k × S/g", scatter ? intraTier : netTier,
                 scatter ? g : k, scatter ? (g - 1.0) / g * S : (k - 1.0) / k * (S / g),
                 scatter ? intra : perGpuNet);
        addPhase(scatter ? "inter-node reduce-scatter of each GPU's shard"
                         : "intra-node all-gather",
                 scatter ? "(k-1)/k × S/g" : "(g-1)/g × S", scatter ? netTier : intraTier,
                 scatter ? k : g, scatter ? (k - 1.0) / k * (S / g) : (g - 1.0) / g * S,
                 scatter ? perGpuNet : intra);
        intraHops = g - 1;
        interHops = k - 1;
    }
}

void CollectiveModel::AlgorithmEvaluation::torus()
{
    // The buffer is split into one part per axis in use; each part runs rings along the
    // axes in a rotated order (x,y,z / y,z,x / z,x,y), so every axis's links carry traffic
    // at once. Each axis's time is the bytes it carries over its links' rate; the slowest
    // axis sets the bandwidth term.
    const auto& dims = p.torus_dims;
    const double factor = allReduce ? 2.0 : 1.0;
    int axes[3];
    int used = 0;
    for (int axis = 0; axis < 3; ++axis) {
        if (dims[axis] > 1)
            axes[used++] = axis;
    }
    static const char* kAxisNames[3] = {"x-axis links", "y-axis links", "z-axis links"};
    static const char* kAxisFormula[3] = {
        "sum over the parts of (dx-1)/dx × the shard each part moves along axis 1",
        "sum over the parts of (dy-1)/dy × the shard each part moves along axis 2",
        "sum over the parts of (dz-1)/dz × the shard each part moves along axis 3"};
    for (int u = 0; u < used; ++u) {
        const int axis = axes[u];
        double bytesOnAxis = 0;
        for (int part = 0; part < used; ++part) {
            double shard = S / used;
            for (int step = 0; step < used; ++step) {
                const int a = axes[(part + step) % used];
                if (a == axis) {
                    bytesOnAxis += factor * (dims[a] - 1.0) / dims[a] * shard;
                    break;
                }
                shard /= dims[a];
            }
        }
        const double bw = figures.torus_link_Bps * (p.torus_wrap[axis] ? 2.0 : 1.0);
        addPhase(kAxisNames[axis], kAxisFormula[axis], Tier::ICI, dims[axis], bytesOnAxis, bw);
        intraHops += static_cast<int>(factor) * (dims[axis] - 1);
    }
    r.phases_concurrent = true;
    if (r.phase_count == 0)
        addPhase("single chip", "0", Tier::ICI, 1, 0, figures.torus_link_Bps);
}

void CollectiveModel::AlgorithmEvaluation::inSwitch()
{
    simpleOnly = true;
    if (m.m_has_nvls && p.g > 1) {
        addPhase("NVLS all-reduce inside the switch",
                 "S (each GPU sends S to the switch and receives S)", Tier::NVSwitch, p.g, S,
                 figures.nvls_Bps);
        fixedLatency_s = units::secondsFromUs(kNvlsLatencyUs);
    } else if (p.g > 1) {
        addPhase("intra-node ring all-reduce", "2(g-1)/g × S", intraTier, p.g,
                 2.0 * (p.g - 1) / p.g * S, intra);
        intraHops = 2 * (p.g - 1);
    }
    if (p.k > 1) {
        const bool sharp = cluster.network.sharp;
        addPhase(sharp ? "SHARP all-reduce in the network switches" : "inter-node all-reduce",
                 sharp ? "S" : "2(k-1)/k × S", netTier, p.k, sharp ? S : 2.0 * (p.k - 1) / p.k * S,
                 pipe);
        interHops = sharp ? 2 * ceilLog2(p.k) : 2 * (p.k - 1);
    }
}

void CollectiveModel::AlgorithmEvaluation::direct()
{
    if (op == CollectiveOp::SendRecv)
        sendRecv();
    else if (cluster.is_torus)
        allToAllOnTorus();
    else
        pairwiseExchange();
}

void CollectiveModel::AlgorithmEvaluation::sendRecv()
{
    double bw = figures.flat_Bps;
    Tier tier = Tier::Link;
    if (cluster.is_torus) {
        bw = figures.torus_link_Bps;
        tier = Tier::ICI;
        intraHops = 1;
    } else if (!m.m_flat) {
        if (p.k == 1) {
            bw = intra;
            tier = intraTier;
            intraHops = 1;
        } else {
            bw = pipe;
            tier = netTier;
            interHops = 1;
        }
    } else {
        intraHops = 1;
    }
    addPhase("point-to-point send", "S", tier, 2, S, bw);
}

void CollectiveModel::AlgorithmEvaluation::allToAllOnTorus()
{
    // All-to-all on a torus is limited by the bisection across its longest axis.
    const auto& dims = p.torus_dims;
    int longest = 0;
    for (int axis = 1; axis < 3; ++axis) {
        if (dims[axis] > dims[longest])
            longest = axis;
    }
    const double crossing = n * S / 4.0; // bytes per direction across the cut
    const double cutLinks = double(n) / dims[longest] * (p.torus_wrap[longest] ? 2 : 1);
    addPhase("all-to-all across the torus bisection",
             "(n-1)/n × S, at the bisection's share (n S/4 per direction across the cut)",
             Tier::ICI, n, (n - 1.0) / n * S,
             (n - 1.0) / n * S / (crossing / (cutLinks * figures.torus_link_Bps)));
    intraHops = dims[longest] / 2;
}

void CollectiveModel::AlgorithmEvaluation::pairwiseExchange()
{
    // Intra-node and inter-node parts run at once; the slower one sets the time.
    const int g = p.g;
    const double intraWire = (g - 1.0) / n * S;
    const double interWire = (n - g) / double(n) * S;
    if (m.m_flat || p.k == 1) {
        addPhase("pairwise exchange", "(n-1)/n × S", m.m_flat ? Tier::Link : intraTier, n,
                 (n - 1.0) / n * S, m.m_flat ? figures.flat_Bps : intra);
        intraHops = 1;
    } else {
        const double perGpuNet = pipe / p.g_min;
        const double intraTime = g > 1 ? intraWire / intra : 0;
        const double interTime = interWire / perGpuNet;
        const bool netSlower = interTime >= intraTime;
        addPhase(netSlower ? "pairwise exchange, inter-node part (intra-node part "
                             "overlaps)"
                           : "pairwise exchange, intra-node part (inter-node part "
                             "overlaps)",
                 netSlower ? "(n-g)/n × S" : "(g-1)/n × S", netSlower ? netTier : intraTier, n,
                 netSlower ? interWire : intraWire, netSlower ? perGpuNet : intra);
        intraHops = g > 1 ? 1 : 0;
        interHops = 1;
    }
}

void CollectiveModel::AlgorithmEvaluation::bandwidthTerm()
{
    double wire = 0;
    int slowest = 0;
    for (int i = 0; i < r.phase_count; ++i) {
        const double phaseTime = r.phases[static_cast<size_t>(i)].time_s;
        bandwidthTime =
            r.phases_concurrent ? std::max(bandwidthTime, phaseTime) : bandwidthTime + phaseTime;
        wire += r.phases[static_cast<size_t>(i)].wire_bytes_per_rank;
        if (r.phases[static_cast<size_t>(i)].time_s > r.phases[static_cast<size_t>(slowest)].time_s)
            slowest = i;
    }
    r.wire_bytes_per_rank = wire;
    r.bottleneck = r.phases[static_cast<size_t>(slowest)].tier;
    r.bottleneck_Bps = r.phases[static_cast<size_t>(slowest)].bandwidth_Bps;
    r.intra_hops = intraHops;
    r.inter_hops = interHops;
}

void CollectiveModel::AlgorithmEvaluation::latencyTerm()
{
    if (!protocols) {
        const double hop = m.m_flat ? figures.flat_hop_s
                                    : units::secondsFromUs(cluster.torus.hop_latency_us.value);
        r.protocol = Protocol::Simple;
        r.intra_hop_s = hop;
        r.latency_s = (intraHops + interHops) * hop;
        r.bandwidth_time_s = bandwidthTime;
        return;
    }
    double best = kInf;
    for (int proto = simpleOnly ? 2 : 0; proto < 3; ++proto) {
        const double hopIntra = units::secondsFromUs(intraTable[proto]);
        const double hopInter = units::secondsFromUs(interTable[proto]);
        const double base = fixedLatency_s > 0 ? 0 : units::secondsFromUs(baseTable[proto]);
        const double latency = fixedLatency_s + base + intraHops * hopIntra + interHops * hopInter;
        const double bwTime = bandwidthTime / kProtocolFraction[proto];
        if (latency + bwTime < best) {
            best = latency + bwTime;
            r.protocol = static_cast<Protocol>(proto);
            r.latency_base_s = fixedLatency_s > 0 ? fixedLatency_s : base;
            r.intra_hop_s = hopIntra;
            r.inter_hop_s = hopInter;
            r.latency_s = latency;
            r.bandwidth_time_s = bwTime;
            r.protocol_bandwidth_fraction = kProtocolFraction[proto];
        }
    }
}

void CollectiveModel::AlgorithmEvaluation::finish()
{
    // Bytes and the bandwidth term.
    bandwidthTerm();
    // Latency term and protocol.
    latencyTerm();
    r.time_s = r.latency_s + r.bandwidth_time_s;
    r.regime = r.latency_s > r.bandwidth_time_s ? Regime::LatencyBound : Regime::BandwidthBound;
    const MeasuredBandwidth bw = bandwidthFromMeasuredTime(op, S, n, r.time_s);
    r.algbw_Bps = bw.algbw_Bps;
    r.busbw_Bps = bw.busbw_Bps;
}

CollectiveResult CollectiveModel::evaluateAlgorithm(const CollectiveRequest& request,
                                                    const Placement& p, Algorithm algorithm) const
{
    AlgorithmEvaluation e(*this, request, p, algorithm);
    switch (algorithm) {
    case Algorithm::Ring:
        e.ring();
        break;
    case Algorithm::Tree:
        e.tree();
        break;
    case Algorithm::Hierarchical:
        e.hierarchical();
        break;
    case Algorithm::Torus:
        e.torus();
        break;
    case Algorithm::InSwitch:
        e.inSwitch();
        break;
    case Algorithm::Direct:
        e.direct();
        break;
    case Algorithm::Auto:
        break;
    }
    e.finish();
    return e.r;
}

} // namespace paraplan
