#pragma once

#include "cluster.h"

#include <array>
#include <string>
#include <vector>

namespace paraplan {

enum class CollectiveOp
{
    AllReduce,
    ReduceScatter,
    AllGather,
    Broadcast,
    Reduce,
    AllToAll,
    SendRecv,
};
inline constexpr int kCollectiveOpCount = 7;
const char* collectiveOpName(CollectiveOp op);
bool parseCollectiveOp(const std::string& text, CollectiveOp* op);

enum class Algorithm
{
    Auto,
    Ring,
    Tree,         ///< NCCL's double binary tree (all_reduce only)
    Hierarchical, ///< intra-node reduce-scatter, inter-node all-reduce, intra-node all-gather
    Torus,        ///< one ring per torus axis in turn
    InSwitch,     ///< NVLS inside the node, SHARP in the network
    Direct,       ///< pairwise exchange: all_to_all and send/recv
};
inline constexpr int kAlgorithmCount = 7;
const char* algorithmName(Algorithm algorithm);
bool parseAlgorithm(const std::string& text, Algorithm* algorithm);

/// NCCL's protocols; the flat-link model has none (reported as Simple).
enum class Protocol
{
    LL,
    LL128,
    Simple,
};
const char* protocolName(Protocol protocol);

/// The part of the machine a transfer crosses.
enum class Tier
{
    Link,     ///< the single flat link of `CollectiveModel::flatLink`
    NVSwitch, ///< a GPU's NVLinks into the node's switch chips
    NVLink,   ///< a point-to-point NVLink between two GPUs
    PCIe,     ///< a GPU's own PCIe link
    HostLink, ///< a PCIe link shared by several GPUs toward the CPU
    Network,  ///< the node's NICs into its rack switch
    Spine,    ///< rack uplinks through an oversubscribed spine
    ICI,      ///< TPU inter-chip links
};
const char* tierName(Tier tier);

enum class Regime
{
    LatencyBound,
    BandwidthBound,
};
const char* regimeName(Regime regime);

/// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all_reduce, (n-1)/n for reduce_scatter,
/// all_gather and all_to_all, 1 for broadcast, reduce and send/recv.
double busBandwidthFactor(CollectiveOp op, int ranks);

/// Bytes each rank puts on the wire with a bandwidth-optimal ring (or a direct exchange):
/// 2(n-1)/n S for all_reduce, (n-1)/n S for reduce_scatter/all_gather/all_to_all, S otherwise.
/// S is the buffer as nccl-tests counts it (the whole input of reduce_scatter, the whole output
/// of all_gather, one rank's send buffer of all_to_all).
double ringWireBytesPerRank(CollectiveOp op, double bytes, int ranks);

/// How a worked example counts the bytes: exactly, with the large-n limit textbook examples
/// often use (2S for 2(n-1)/n S), or as one pass of (n-1)/n S per rank (examples that count
/// each byte once against a bidirectional figure).
enum class WireApproximation
{
    Exact,
    LargeN,
    OnePass,
};
const char* wireApproximationName(WireApproximation approximation);
double approximateWireBytesPerRank(CollectiveOp op, double bytes, int ranks,
                                   WireApproximation approximation);

struct MeasuredBandwidth
{
    double algbw_Bps = 0;
    double busbw_Bps = 0;
};
/// algbw = S / t and busbw = algbw x factor, as nccl-tests reports a measured time.
MeasuredBandwidth bandwidthFromMeasuredTime(CollectiveOp op, double bytes, int ranks,
                                            double time_s);

struct CollectiveRequest
{
    CollectiveOp op = CollectiveOp::AllReduce;
    double bytes = 0; ///< S, as nccl-tests counts it
    int ranks = 2;
    int stride = 1; ///< rank i sits on GPU i*stride (TP innermost = stride 1)
    Algorithm algorithm = Algorithm::Auto;
};

/// One stage of an algorithm (hierarchical has three, a ring one).
struct CollectivePhase
{
    const char* what = "";
    const char* formula = ""; ///< wire bytes per rank, in the symbols n, g, k, S, dx, dy, dz
    Tier tier = Tier::Link;
    int ranks = 0;
    double wire_bytes_per_rank = 0;
    double bandwidth_Bps = 0;
    double time_s = 0;
};

struct CollectiveResult
{
    bool ok = false;
    std::string error; ///< set when !ok: which rule the request broke

    CollectiveOp op = CollectiveOp::AllReduce;
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
    double bytes = 0;
    int ranks = 0;

    double time_s = 0;
    double latency_s = 0;        ///< the latency term
    double bandwidth_time_s = 0; ///< the bytes-over-bandwidth term, after the protocol's share
    double protocol_bandwidth_fraction = 1;
    double algbw_Bps = 0;
    double busbw_Bps = 0;
    double wire_bytes_per_rank = 0;
    Tier bottleneck = Tier::Link;
    double bottleneck_Bps = 0;
    Regime regime = Regime::BandwidthBound;

    // Where the group landed.
    int gpus_per_node_in_group = 0;
    int nodes_spanned = 0;
    int racks_spanned = 0;
    std::array<int, 3> torus_group_dims{1, 1, 1};

    // How the latency term was built (NCCL's model: base + hops x per-hop latency).
    double latency_base_s = 0;
    int intra_hops = 0;
    int inter_hops = 0;
    double intra_hop_s = 0;
    double inter_hop_s = 0;

    std::array<CollectivePhase, 3> phases{};
    int phase_count = 0;
    bool phases_concurrent = false; ///< phases run at once (torus axes): the slowest counts
    const char* note = nullptr;     ///< a remark on how the algorithm applies here, if any
};

/// The cost model of collectives on one cluster. Construction does the topology work
/// (ring searches inside a node, per-GPU shares of shared links); evaluate() is then a few
/// hundred arithmetic operations, safe to call from several threads at once.
class CollectiveModel
{
public:
    /// One flat link of `bandwidth_GBps` per direction per rank; `hop_latency_us` per ring
    /// step (0: pure bandwidth, as textbook worked examples compute).
    static CollectiveModel flatLink(double bandwidth_GBps, double hop_latency_us = 0);

    explicit CollectiveModel(const ClusterSpec& cluster);

    CollectiveResult evaluate(const CollectiveRequest& request) const;

    /// Every algorithm that applies to the request, each with its best protocol; the one
    /// evaluate() picks with Algorithm::Auto is the fastest of these.
    std::vector<CollectiveResult> candidates(const CollectiveRequest& request) const;

    // The per-GPU figures the model derived from the cluster (bytes per second, per direction),
    // so that derivations can show how each came about.
    struct Figures
    {
        double nvswitch_line_Bps = 0; ///< links in service x per-link rate
        double nvswitch_ring_Bps = 0; ///< ... x ring efficiency x degradation
        double nvls_Bps = 0;          ///< ... x NVLS efficiency, 0 without NVLS
        int nvlinks_in_service = 0;
        int nvlinks_total = 0;
        double nic_share_per_gpu_Bps = 0; ///< nics x rate x efficiency / GPUs per node
        double spine_ratio = 1;           ///< oversubscription / spine degradation
        double torus_link_Bps = 0;        ///< per link per direction x efficiency
        double flat_Bps = 0;
        double flat_hop_s = 0;
    };
    const Figures& figures() const { return m_figures; }
    const ClusterSpec& cluster() const { return m_cluster; }
    bool isFlatLink() const { return m_flat; }

    /// Per-GPU ring bandwidth among the GPUs of `mask` inside one node, and its bottleneck.
    double intraRingBps(unsigned mask, Tier* tier = nullptr) const;

private:
    CollectiveModel() = default;

    struct Placement
    {
        int g = 1;     ///< group GPUs per (full) node
        int g_min = 1; ///< GPUs on the least-populated node of the group
        int k = 1;     ///< nodes spanned
        int racks = 1;
        unsigned mask = 1;
        std::array<int, 3> torus_dims{1, 1, 1};
        std::array<bool, 3> torus_wrap{false, false, false};
    };
    bool place(const CollectiveRequest& request, Placement* placement, std::string* error) const;
    /// One evaluation of one algorithm: the tiers the group crosses and the result being
    /// built, with a method per algorithm (collectivealgorithms.cpp).
    struct AlgorithmEvaluation;
    CollectiveResult evaluateAlgorithm(const CollectiveRequest& request, const Placement& placement,
                                       Algorithm algorithm) const;
    bool applies(const CollectiveRequest& request, const Placement& placement, Algorithm algorithm,
                 const char** why) const;
    void computeIntraTable();

    ClusterSpec m_cluster;
    bool m_flat = false;
    Figures m_figures;
    int m_gpus_per_node = 1;
    long long m_total_gpus = 1;
    bool m_has_nvls = false;
    bool m_domain_spans_nodes = false; ///< m_gpus_per_node is an NVLink domain of several nodes
    std::vector<float> m_intra_Bps;    ///< by GPU mask, for NVLink meshes and PCIe trees
    std::vector<unsigned char> m_intra_tier;
};

} // namespace paraplan
