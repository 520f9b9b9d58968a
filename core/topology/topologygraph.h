#pragma once

#include "cluster.h"
#include "plan.h"
#include "stepmodel.h"

#include <QJsonObject>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace paraplan {

/// A node's hardware, shared by the nodes that have the same (copy on write): a million-node
/// drawing holds one NodeSpec, not a million copies of its strings. Read through `->` or `*`;
/// `edit()` gives this node a copy of its own to change.
class SharedNodeSpec
{
public:
    SharedNodeSpec();
    SharedNodeSpec(const NodeSpec& spec); // NOLINT: a NodeSpec is a node's spec
    SharedNodeSpec& operator=(const NodeSpec& spec);
    const NodeSpec& operator*() const { return *m_spec; }
    const NodeSpec* operator->() const { return m_spec.get(); }
    NodeSpec& edit();
    bool sharedWith(const SharedNodeSpec& other) const { return m_spec == other.m_spec; }

private:
    std::shared_ptr<NodeSpec> m_spec;
};

/// The drawn cluster: racks of nodes with positions and IDs, their NVSwitch chips, NIC
/// bundles and rack uplinks, each with what-ifs of its own. It converts to the ClusterSpec
/// the cost model reads; the editor only ever changes this value.
struct TopoNode
{
    int id = 0;
    std::string name;
    int rack = 0; ///< TopoRack id
    double x = 0;
    double y = 0;
    SharedNodeSpec spec;                 ///< GPUs, fabric, NICs as the cost model sees them
    std::vector<bool> switch_in_service; ///< per NVSwitch chip
    double nvlink_factor = 1;            ///< degraded NVLink fabric
    double nic_factor = 1;               ///< degraded NIC links of this node
};

struct TopoRack
{
    int id = 0;
    std::string name;
    double x = 0;
    double y = 0;
    double uplink_factor = 1; ///< degraded uplink from this rack's switch to the spine
};

struct TopologyGraph
{
    std::string name;
    std::string gpu_id;
    std::string source;
    std::vector<TopoRack> racks;
    std::vector<TopoNode> nodes;
    int spine_switches = 1;
    Sourced spine_oversubscription{1.0, Origin::Preset,
                                   "Paraplan's default: a non-blocking fat tree (1:1) "
                                   "(docs/engine.md, 'Assumed figures')"};
    bool sharp = false;
    bool is_torus = false;
    TorusSpec torus;
    int next_id = 1;
    /// The cluster the drawing started from: what a drawing does not show (latency figures,
    /// efficiencies, the preset's name) is kept from it.
    ClusterSpec base;

    int takeId() { return next_id++; }
    const TopoNode* node(int id) const;
    TopoNode* node(int id);
    const TopoRack* rack(int id) const;
    TopoRack* rack(int id);
    std::vector<const TopoNode*> nodesInRack(int rack) const;
    /// Every rack's nodes, in the order of `racks`, in one pass (nodes in no rack are left
    /// out): what drawing and reading a large cluster use instead of nodesInRack per rack.
    std::vector<std::vector<const TopoNode*>> nodesByRack() const;
    /// How many nodes each rack holds, in the order of `racks` (nodes in no rack are left
    /// out): one allocation, for a reader that needs only the counts.
    std::vector<size_t> nodeCountsByRack() const;
    long long gpuCount() const;
    /// Applies `change` to every node's spec, once per distinct spec (nodes that shared one
    /// still share the changed one).
    void editNodeSpecs(const std::function<void(NodeSpec&)>& change);
};

/// Lays a cluster out: racks side by side, nodes in a grid inside each rack.
TopologyGraph graphFromCluster(const ClusterSpec& cluster);

/// The cluster the cost model reads. Nodes must be alike (Paraplan models clusters of
/// identical nodes); racks must hold the same number of nodes except the last. A what-if on
/// any one node or rack limits every collective that crosses it, so the worst one is taken.
bool clusterFromGraph(const TopologyGraph& graph, ClusterSpec* cluster, std::string* error,
                      const HardwareCatalog& catalog);

/// "Fat-tree of N nodes, K per rack, spine R:1" from a preset's node.
bool generateFatTree(const std::string& node_preset, int nodes, int nodes_per_rack,
                     double oversubscription, TopologyGraph* graph, std::string* error,
                     const HardwareCatalog& catalog);
/// A TPU-style X x Y x Z torus of the tpu-v4-pod preset's chips.
bool generateTorus(int x, int y, int z, TopologyGraph* graph, std::string* error,
                   const HardwareCatalog& catalog);

/// Re-lays out positions (after generators or imports); keeps IDs.
void layoutGraph(TopologyGraph* graph);

/// The plan's cluster as the editor draws it: the plan's drawing when it still describes the
/// cluster (or is an unfinished drawing the model cannot read yet), else the cluster laid out
/// afresh. What a drawing does not show (efficiencies, latencies, measured figures) always
/// comes from the plan's cluster.
TopologyGraph graphForPlan(const Plan& plan, const HardwareCatalog& catalog);
/// `drawing` carried over to `cluster`, a cluster of the same shape (nodes, racks) whose
/// cluster-wide fields changed (spine, node type, what-ifs): the drawing's racks, empty ones
/// too, and positions kept. False when the drawing cannot describe `cluster` that way.
bool carryDrawing(const TopologyGraph& drawing, const ClusterSpec& cluster, TopologyGraph* carried,
                  const HardwareCatalog& catalog);
/// Whether `graph` (with the plan's cluster as its base) describes exactly `cluster`.
bool drawingDescribes(const TopologyGraph& graph, const ClusterSpec& cluster,
                      const HardwareCatalog& catalog);
/// The drawing as layout data for the plan file: racks and nodes in order, with names,
/// positions, rack membership and per-node/per-rack what-ifs.
QJsonObject drawingToJson(const TopologyGraph& graph);
/// Rebuilds a drawing of `cluster` from that layout data; false (and why) when it does not
/// describe the cluster.
bool drawingFromJson(const QJsonObject& json, const ClusterSpec& cluster, TopologyGraph* graph,
                     std::string* error, const HardwareCatalog& catalog);

/// How busy one kind of link is in a step: the time its transfers take and who causes it.
struct TierLoad
{
    Tier tier = Tier::Link;
    double busy_s = 0;
    double utilisation = 0;                                    ///< busy time / step time
    std::vector<std::pair<std::string, double>> contributions; ///< "TP all_gather", seconds
};
/// Per kind of link (NVSwitch/NVLink/PCIe inside nodes, NICs, rack uplinks), the time the
/// step's collectives keep it busy, largest first: the first is the bottleneck link.
std::vector<TierLoad> tierLoads(const StepCost& cost);

/// Where a GPU's colour comes from in a plan overlay: its TP group, PP stage or DP replica.
long long gpuGroupIndex(const ParallelLayout& layout, long long gpu, ParallelDim dim);

} // namespace paraplan
