#include "collectivewalkthrough.h"

#include "units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

namespace paraplan {
namespace {

using units::formatBytes;
using units::formatGBps;
using units::formatNumber;
using units::formatSeconds;

const char* kRingSource =
    "formula: bandwidth-optimal ring = reduce-scatter then all-gather (Patarasuk and Yuan 2009)";
const char* kNcclTestsSource =
    "formula: nccl-tests doc/PERFORMANCE.md definitions (NVIDIA/nccl-tests)";
const char* kNcclLatencySource =
    "formula: NCCL's latency model, src/graph/tuning.cc v2.30 (NVIDIA/nccl)";

std::string busFactorText(CollectiveOp op, int n)
{
    switch (op) {
    case CollectiveOp::AllReduce:
        return "2 × " + fractionText(n - 1, n);
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
        return fractionText(n - 1, n);
    default:
        return "1";
    }
}

std::string busFactorFormula(CollectiveOp op)
{
    switch (op) {
    case CollectiveOp::AllReduce:
        return "2(n-1)/n";
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
        return "(n-1)/n";
    default:
        return "1";
    }
}

std::string whatSIs(CollectiveOp op)
{
    switch (op) {
    case CollectiveOp::AllReduce:
        return "the buffer every rank holds";
    case CollectiveOp::ReduceScatter:
        return "the whole input buffer (n shards), as nccl-tests counts it";
    case CollectiveOp::AllGather:
        return "the whole output buffer (n shards), as nccl-tests counts it";
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
        return "the buffer sent from (or to) the root";
    case CollectiveOp::AllToAll:
        return "one rank's send buffer (n chunks)";
    case CollectiveOp::SendRecv:
        return "the buffer sent";
    }
    return "";
}

void describePlacement(const CollectiveModel& model, const CollectiveRequest& request,
                       const CollectiveResult& result, Derivation* d)
{
    const ClusterSpec& cluster = model.cluster();
    if (cluster.is_torus) {
        const auto& g = result.torus_group_dims;
        const auto& t = cluster.torus;
        d->inputs.push_back("Cluster: " + cluster.name + ", " + std::to_string(t.dims[0]) + "x" +
                            std::to_string(t.dims[1]) + "x" + std::to_string(t.dims[2]) +
                            " chips (" + describeSource({0, Origin::Preset, cluster.source}) + ")");
        d->inputs.push_back("Group: " + std::to_string(request.ranks) + " chips as a " +
                            std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" +
                            std::to_string(g[2]) + " block");
        return;
    }
    d->inputs.push_back("Cluster: " + cluster.name + ", " + std::to_string(cluster.nodes) +
                        " node(s) of " + std::to_string(cluster.node.gpus) + " GPUs" +
                        (cluster.what_if.any() ? " (with failure what-ifs)" : ""));
    std::string group = "Group: " + std::to_string(request.ranks) + " ranks";
    if (request.stride > 1)
        group += " at stride " + std::to_string(request.stride);
    group += ", " + std::to_string(result.gpus_per_node_in_group) + " GPU(s) per node on " +
             std::to_string(result.nodes_spanned) + " node(s)";
    if (result.nodes_spanned > 1)
        group += " in " + std::to_string(result.racks_spanned) + " rack(s)";
    d->inputs.push_back(group);
}

// How the per-GPU bandwidth of each tier the result used was derived.
void deriveLinkFigures(const CollectiveModel& model, const CollectiveResult& result, Derivation* d)
{
    const ClusterSpec& cluster = model.cluster();
    const CollectiveModel::Figures& f = model.figures();
    bool usesIntra = false;
    bool usesNet = false;
    bool usesNvls = false;
    for (int i = 0; i < result.phase_count; ++i) {
        const CollectivePhase& phase = result.phases[static_cast<size_t>(i)];
        usesNvls |= phase.tier == Tier::NVSwitch && result.algorithm == Algorithm::InSwitch;
        usesIntra |= phase.tier == Tier::NVSwitch || phase.tier == Tier::NVLink ||
                     phase.tier == Tier::PCIe || phase.tier == Tier::HostLink;
        usesNet |= phase.tier == Tier::Network || phase.tier == Tier::Spine;
    }
    if (result.nodes_spanned > 1)
        usesNet = true;
    if (result.gpus_per_node_in_group > 1)
        usesIntra = true;

    if (cluster.is_torus) {
        const TorusSpec& t = cluster.torus;
        d->add("ICI bandwidth per link, per direction, as used",
               "rate × efficiency" +
                   std::string(cluster.what_if.ici_factor != 1 ? " × degradation" : ""),
               formatNumber(t.link_GBps.value) + " GB/s × " + formatNumber(t.efficiency.value) +
                   (cluster.what_if.ici_factor != 1
                        ? " × " + formatNumber(cluster.what_if.ici_factor)
                        : ""),
               formatGBps(f.torus_link_Bps), f.torus_link_Bps, "B/s",
               describeSource(t.link_GBps) + "; efficiency " + describeSource(t.efficiency));
        d->notes.push_back("A ring along a torus axis with wrap-around runs in both directions "
                           "(2 links per chip); without wrap-around it is a line and gets one.");
        return;
    }
    const NodeSpec& node = cluster.node;
    if (usesIntra && node.fabric == NodeFabric::NVSwitch) {
        std::string links = std::to_string(f.nvlinks_in_service);
        if (f.nvlinks_in_service != f.nvlinks_total)
            links += " of " + std::to_string(f.nvlinks_total) + " (NVSwitch chip(s) out)";
        d->add("NVLink line rate per GPU, per direction", "links in service × per-link rate",
               links + " × " + formatNumber(node.nvlink_link_GBps.value) + " GB/s",
               formatGBps(f.nvswitch_line_Bps), f.nvswitch_line_Bps, "B/s",
               describeSource(node.nvlink_link_GBps));
        if (usesNvls) {
            d->add("NVLS bandwidth per GPU", "line rate × NVLS efficiency",
                   formatGBps(f.nvswitch_line_Bps) + " × " +
                       formatNumber(node.nvls_efficiency.value),
                   formatGBps(f.nvls_Bps), f.nvls_Bps, "B/s", describeSource(node.nvls_efficiency));
        } else {
            std::string degradation;
            if (cluster.what_if.nvlink_factor != 1)
                degradation = " × " + formatNumber(cluster.what_if.nvlink_factor);
            d->add("Achievable ring bandwidth per GPU", "line rate × ring efficiency",
                   formatGBps(f.nvswitch_line_Bps) + " × " +
                       formatNumber(node.nvlink_ring_efficiency.value) + degradation,
                   formatGBps(f.nvswitch_ring_Bps), f.nvswitch_ring_Bps, "B/s",
                   describeSource(node.nvlink_ring_efficiency));
        }
    } else if (usesIntra) {
        d->notes.push_back(
            std::string("Inside the node the GPUs have no switch: rings were searched over the "
                        "node's links (NVLink pairs at ") +
            formatNumber(node.nvlink_link_GBps.value) + " GB/s per link, PCIe at " +
            formatNumber(node.pcie_GBps.value) + " GB/s, host links at " +
            formatNumber(node.host_link_GBps.value) + " GB/s shared by " +
            std::to_string(node.gpus_per_host_link) + " GPUs, efficiency " +
            formatNumber(node.pcie_efficiency.value) + " on PCIe [" +
            describeSource(node.pcie_efficiency) +
            "]); a ring runs at its narrowest link's "
            "capacity divided by the ring edges sharing it.");
    }
    if (usesNet) {
        d->add(
            "Network share per GPU, per direction", "NICs × rate × efficiency / GPUs per node",
            std::to_string(node.nics) + " × " + formatNumber(node.nic_GBps.value) + " GB/s × " +
                formatNumber(node.nic_efficiency.value) +
                (cluster.what_if.nic_factor != 1 ? " × " + formatNumber(cluster.what_if.nic_factor)
                                                 : "") +
                " / " + std::to_string(node.gpus),
            formatGBps(f.nic_share_per_gpu_Bps), f.nic_share_per_gpu_Bps, "B/s",
            describeSource(node.nic_GBps) + "; efficiency " + describeSource(node.nic_efficiency));
        d->notes.push_back("Every GPU of a node is assumed to communicate at once (the training "
                           "case: all groups of a layout sync together), so a GPU gets its share "
                           "of the node's NICs.");
        if (result.racks_spanned > 1 && f.spine_ratio > 1) {
            const double spineShare = f.nic_share_per_gpu_Bps / f.spine_ratio;
            d->add("Network share per GPU across the spine", "network share / oversubscription",
                   formatGBps(f.nic_share_per_gpu_Bps) + " / " + formatNumber(f.spine_ratio),
                   formatGBps(spineShare), spineShare, "B/s",
                   describeSource(cluster.network.spine_oversubscription));
            d->notes.push_back("The group spans " + std::to_string(result.racks_spanned) +
                               " racks: with every rack sending across the spine at once, a "
                               "spine at " +
                               formatNumber(f.spine_ratio) + ":1 leaves each node 1/" +
                               formatNumber(f.spine_ratio) + " of its NIC bandwidth.");
        }
    }
}

} // namespace

std::string fractionText(long long numerator, long long denominator)
{
    const long long divisor = std::gcd(numerator, denominator);
    if (divisor > 1) {
        numerator /= divisor;
        denominator /= divisor;
    }
    if (denominator == 1)
        return std::to_string(numerator);
    return std::to_string(numerator) + "/" + std::to_string(denominator);
}

std::string substituteSymbols(const std::string& formula, const CollectiveResult& result,
                              const CollectiveRequest& request)
{
    std::string out;
    size_t i = 0;
    while (i < formula.size()) {
        if (std::isalpha(static_cast<unsigned char>(formula[i]))) {
            size_t j = i;
            while (j < formula.size() && std::isalpha(static_cast<unsigned char>(formula[j])))
                ++j;
            const std::string word = formula.substr(i, j - i);
            if (word == "n")
                out += std::to_string(request.ranks);
            else if (word == "g")
                out += std::to_string(result.gpus_per_node_in_group);
            else if (word == "k")
                out += std::to_string(result.nodes_spanned);
            else if (word == "S")
                out += formatBytes(request.bytes);
            else if (word == "dx")
                out += std::to_string(result.torus_group_dims[0]);
            else if (word == "dy")
                out += std::to_string(result.torus_group_dims[1]);
            else if (word == "dz")
                out += std::to_string(result.torus_group_dims[2]);
            else
                out += word;
            i = j;
        } else {
            out += formula[i++];
        }
    }
    return out;
}

namespace {

void bandwidthSteps(const CollectiveRequest& request, const CollectiveResult& result, Derivation& d)
{
    // Bytes and bandwidth term, phase by phase.
    double bandwidthTime = 0;
    if (result.algorithm == Algorithm::Torus && result.phase_count > 1)
        d.notes.push_back("Torus all-reduce: the buffer is split into one part per axis; each "
                          "part runs rings along the axes in a rotated order, so all axes' "
                          "links carry traffic at once.");
    for (int i = 0; i < result.phase_count; ++i) {
        const CollectivePhase& phase = result.phases[static_cast<size_t>(i)];
        const std::string prefix =
            result.phase_count > 1 ? "Phase " + std::to_string(i + 1) + ", " + phase.what : "";
        d.add(prefix.empty() ? "Bytes each rank sends (" + std::string(phase.what) + ")"
                             : prefix + ": bytes each rank sends",
              phase.formula, substituteSymbols(phase.formula, result, request),
              formatBytes(phase.wire_bytes_per_rank), phase.wire_bytes_per_rank, "B",
              result.algorithm == Algorithm::Ring ? kRingSource
                                                  : "formula: " + std::string(phase.what));
        d.add(prefix.empty() ? "Bandwidth term" : prefix + ": time",
              "bytes per rank / bandwidth of the tier crossed (" +
                  std::string(tierName(phase.tier)) + ")",
              formatBytes(phase.wire_bytes_per_rank) + " / " + formatGBps(phase.bandwidth_Bps),
              formatSeconds(phase.time_s), phase.time_s, "s");
        bandwidthTime = result.phases_concurrent ? std::max(bandwidthTime, phase.time_s)
                                                 : bandwidthTime + phase.time_s;
    }
    if (result.protocol_bandwidth_fraction != 1.0) {
        d.add("Protocol share of the bandwidth", "bandwidth term / protocol fraction",
              formatSeconds(bandwidthTime) + " / " +
                  formatNumber(result.protocol_bandwidth_fraction),
              formatSeconds(result.bandwidth_time_s), result.bandwidth_time_s, "s",
              std::string("NCCL protocol ") + protocolName(result.protocol) + " (" +
                  kNcclLatencySource + ")");
    } else if (result.phase_count > 1) {
        d.add("Bandwidth term",
              result.phases_concurrent ? "the slowest of the phases, which run at once"
                                       : "sum of the phases",
              "", formatSeconds(result.bandwidth_time_s), result.bandwidth_time_s, "s");
    }
}

void latencySteps(const CollectiveModel& model, const CollectiveRequest& request,
                  const CollectiveResult& result, const CollectiveInputSources& sources,
                  Derivation& d)
{
    const int n = request.ranks;
    // Latency term.
    if (model.isFlatLink() || model.cluster().is_torus) {
        const int hops = result.intra_hops + result.inter_hops;
        d.add("Latency term", "steps × alpha",
              std::to_string(hops) + " × " + formatSeconds(result.intra_hop_s),
              formatSeconds(result.latency_s), result.latency_s, "s",
              model.isFlatLink() ? "alpha: " + sources.latency
                                 : describeSource(model.cluster().torus.hop_latency_us));
    } else {
        std::string substitution = formatSeconds(result.latency_base_s);
        if (result.intra_hops)
            substitution += " + " + std::to_string(result.intra_hops) + " × " +
                            formatSeconds(result.intra_hop_s);
        if (result.inter_hops)
            substitution += " + " + std::to_string(result.inter_hops) + " × " +
                            formatSeconds(result.inter_hop_s);
        d.add("Latency term",
              "base + intra-node hops × hop latency + inter-node hops × hop latency", substitution,
              formatSeconds(result.latency_s), result.latency_s, "s", kNcclLatencySource);
    }

    d.add("Time", "latency term + bandwidth term",
          formatSeconds(result.latency_s) + " + " + formatSeconds(result.bandwidth_time_s),
          formatSeconds(result.time_s), result.time_s, "s");
    d.add("Algorithm bandwidth", "algbw = S / t",
          formatBytes(request.bytes) + " / " + formatSeconds(result.time_s),
          formatGBps(result.algbw_Bps), result.algbw_Bps, "B/s", kNcclTestsSource);
    d.add("Bus bandwidth", "busbw = algbw × " + busFactorFormula(request.op),
          formatGBps(result.algbw_Bps) + " × " + busFactorText(request.op, n),
          formatGBps(result.busbw_Bps), result.busbw_Bps, "B/s", kNcclTestsSource);

    d.notes.push_back(std::string("Regime: ") + regimeName(result.regime) + " (latency " +
                      formatSeconds(result.latency_s) + " against bandwidth " +
                      formatSeconds(result.bandwidth_time_s) +
                      "); bottleneck: " + tierName(result.bottleneck) + " at " +
                      formatGBps(result.bottleneck_Bps) + ".");
}

void resultNotes(const CollectiveModel& model, const CollectiveRequest& request,
                 const CollectiveResult& result, Derivation& d)
{
    const int n = request.ranks;
    // The large-n shortcut worked examples often use, named and quantified.
    const double exact = ringWireBytesPerRank(request.op, request.bytes, n);
    if ((request.op == CollectiveOp::AllReduce || request.op == CollectiveOp::ReduceScatter ||
         request.op == CollectiveOp::AllGather) &&
        result.algorithm == Algorithm::Ring && result.phase_count == 1) {
        const double factor = request.op == CollectiveOp::AllReduce ? 2.0 : 1.0;
        const double approx =
            approximateWireBytesPerRank(request.op, request.bytes, n, WireApproximation::LargeN) /
            result.phases[0].bandwidth_Bps;
        const std::string shortcut = request.op == CollectiveOp::AllReduce ? "2S" : "S";
        d.notes.push_back("Approximation: a common shortcut writes " + shortcut + " for " +
                          busFactorFormula(request.op) + " × S (the large-n limit). Here " +
                          shortcut + " / B = " + formatBytes(factor * request.bytes) + " / " +
                          formatGBps(result.phases[0].bandwidth_Bps) + " = " +
                          formatSeconds(approx) + ", " +
                          formatNumber(100.0 * (factor * request.bytes / exact - 1.0), 2) +
                          "% above the exact bandwidth term.");
    }
    if (!model.isFlatLink()) {
        for (const CollectiveResult& other : model.candidates(request)) {
            if (other.algorithm != result.algorithm)
                d.notes.push_back(std::string("Alternative: ") + algorithmName(other.algorithm) +
                                  " would take " + formatSeconds(other.time_s) + " (busbw " +
                                  formatGBps(other.busbw_Bps) + ").");
        }
    }
}

// Defines every symbol the derivation's formulas use, with this request's values.
void defineSymbols(const CollectiveRequest& request, const CollectiveResult* result, Derivation& d)
{
    const auto meaning = [&](const std::string& symbol) -> std::string {
        if (symbol == "S")
            return "bytes of the collective, as nccl-tests counts them (" +
                   formatBytes(request.bytes) + ": " + whatSIs(request.op) + ")";
        if (symbol == "n")
            return "ranks in the group (" + std::to_string(request.ranks) + ")";
        if (symbol == "t")
            return "time of one call";
        if (symbol == "B")
            return "bandwidth per rank, per direction";
        if (symbol == "alpha")
            return "latency of one algorithm step";
        if (!result)
            return "";
        if (symbol == "g")
            return "GPUs of the group in one node (" +
                   std::to_string(result->gpus_per_node_in_group) + ")";
        if (symbol == "k")
            return "nodes the group spans (" + std::to_string(result->nodes_spanned) + ")";
        if (symbol == "dx" || symbol == "dy" || symbol == "dz")
            return "chips of the group along the torus axis " + symbol.substr(1);
        return "";
    };
    for (const DerivationStep& step : d.steps) {
        for (const std::string& symbol : formulaSymbols(step.formula)) {
            const std::string text = meaning(symbol);
            if (!text.empty())
                d.define(symbol, text);
        }
    }
}

} // namespace

Derivation deriveCollective(const CollectiveModel& model, const CollectiveRequest& request,
                            const CollectiveResult& result, const CollectiveInputSources& sources)
{
    Derivation d;
    const int n = request.ranks;
    const std::string opName = collectiveOpName(request.op);
    if (model.isFlatLink()) {
        d.title = opName + " of " + formatBytes(request.bytes) + " over " + std::to_string(n) +
                  " ranks on one link of " + formatGBps(model.figures().flat_Bps) +
                  " per direction";
        d.inputs.push_back("B = " + formatGBps(model.figures().flat_Bps) +
                           " per rank, per direction (" + sources.link + ")");
        d.inputs.push_back("alpha = " + formatSeconds(model.figures().flat_hop_s) +
                           " latency per step (" + sources.latency + ")");
    } else {
        d.title = opName + " of " + formatBytes(request.bytes) + " over " + std::to_string(n) +
                  " ranks on " + model.cluster().name;
    }
    d.inputs.insert(d.inputs.begin(),
                    {"S = " + formatBytes(request.bytes) + ", " + whatSIs(request.op) + " (" +
                         sources.bytes + ")",
                     "n = " + std::to_string(n) + " ranks (" + sources.ranks + ")"});
    if (!result.ok) {
        d.notes.push_back("error: " + result.error);
        return d;
    }
    if (!model.isFlatLink()) {
        describePlacement(model, request, result, &d);
        deriveLinkFigures(model, result, &d);
    }

    d.notes.push_back(
        std::string("Algorithm: ") + algorithmName(result.algorithm) +
        (request.algorithm == Algorithm::Auto ? " (auto: the fastest that applies)"
                                              : " (requested)") +
        (model.isFlatLink() ? "" : std::string(", protocol ") + protocolName(result.protocol)));

    bandwidthSteps(request, result, d);
    latencySteps(model, request, result, sources, d);
    resultNotes(model, request, result, d);
    defineSymbols(request, &result, d);
    return d;
}

Derivation deriveMeasuredBandwidth(CollectiveOp op, double bytes, int ranks, double time_s)
{
    Derivation d;
    const MeasuredBandwidth bw = bandwidthFromMeasuredTime(op, bytes, ranks, time_s);
    d.title = std::string("Bandwidth of a measured ") + collectiveOpName(op) + ": " +
              formatBytes(bytes) + " over " + std::to_string(ranks) + " ranks in " +
              formatSeconds(time_s);
    d.inputs.push_back("S = " + formatBytes(bytes) + ", " + whatSIs(op) + " (user entry)");
    d.inputs.push_back("n = " + std::to_string(ranks) + " ranks (user entry)");
    d.inputs.push_back("t = " + formatSeconds(time_s) + " (measurement, user entry)");
    d.add("Algorithm bandwidth", "algbw = S / t",
          formatBytes(bytes) + " / " + formatSeconds(time_s), formatGBps(bw.algbw_Bps),
          bw.algbw_Bps, "B/s", kNcclTestsSource);
    d.add("Bus bandwidth", "busbw = algbw × " + busFactorFormula(op),
          formatGBps(bw.algbw_Bps) + " × " + busFactorText(op, ranks), formatGBps(bw.busbw_Bps),
          bw.busbw_Bps, "B/s", kNcclTestsSource);
    d.notes.push_back("busbw is comparable across collectives and with the slowest link's "
                      "rate; with in-switch reduction (NVLS/SHARP) it can exceed the line rate.");
    defineSymbols({op, bytes, ranks}, nullptr, d);
    if (op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllGather) {
        const MeasuredBandwidth whole = bandwidthFromMeasuredTime(op, bytes * ranks, ranks, time_s);
        d.notes.push_back("Check what S is: nccl-tests takes the whole " +
                          std::string(op == CollectiveOp::ReduceScatter ? "input" : "output") +
                          " (all n shards). If " + formatBytes(bytes) +
                          " is one rank's shard, S = " + formatBytes(bytes * ranks) +
                          " and busbw = " + formatGBps(whole.busbw_Bps) + ".");
    }
    return d;
}

} // namespace paraplan
