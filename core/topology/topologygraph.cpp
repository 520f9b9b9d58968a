#include "topologygraph.h"
#include "cnumeric.h"

#include "clusterio.h"
#include "stepmodel.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace paraplan {
namespace {

constexpr double kNodeWidth = 120;
constexpr double kNodeHeight = 70;
constexpr double kGap = 12;
constexpr int kNodesPerRow = 4;
constexpr size_t kRacksPerRow = 64;

} // namespace

namespace {

// IDs are handed out in increasing order and items are only appended or removed, so `items`
// is sorted by id: a binary search finds one in O(log n). A drawing whose order was changed
// by hand (none is today) still finds its item by the linear scan behind it.
template <typename T> const T* findById(const std::vector<T>& items, int id)
{
    const auto it = std::lower_bound(items.begin(), items.end(), id,
                                     [](const T& item, int key) { return item.id < key; });
    if (it != items.end() && it->id == id)
        return &*it;
    if (std::is_sorted(items.begin(), items.end(),
                       [](const T& a, const T& b) { return a.id < b.id; }))
        return nullptr;
    for (const T& item : items) {
        if (item.id == id)
            return &item;
    }
    return nullptr;
}

} // namespace

SharedNodeSpec::SharedNodeSpec()
{
    static const std::shared_ptr<NodeSpec> none = std::make_shared<NodeSpec>();
    m_spec = none;
}

SharedNodeSpec::SharedNodeSpec(const NodeSpec& spec) : m_spec(std::make_shared<NodeSpec>(spec)) {}

SharedNodeSpec& SharedNodeSpec::operator=(const NodeSpec& spec)
{
    m_spec = std::make_shared<NodeSpec>(spec);
    return *this;
}

NodeSpec& SharedNodeSpec::edit()
{
    if (m_spec.use_count() > 1)
        m_spec = std::make_shared<NodeSpec>(*m_spec);
    return *m_spec;
}

void TopologyGraph::editNodeSpecs(const std::function<void(NodeSpec&)>& change)
{
    // Keyed by the spec shared; the value keeps the original alive so its address is not
    // reused while the loop runs.
    std::unordered_map<const NodeSpec*, std::pair<SharedNodeSpec, SharedNodeSpec>> changed;
    for (TopoNode& n : nodes) {
        auto it = changed.find(&*n.spec);
        if (it == changed.end()) {
            SharedNodeSpec copy(*n.spec);
            change(copy.edit());
            it = changed.emplace(&*n.spec, std::make_pair(n.spec, copy)).first;
        }
        n.spec = it->second.second;
    }
}

const TopoNode* TopologyGraph::node(int id) const
{
    return findById(nodes, id);
}

TopoNode* TopologyGraph::node(int id)
{
    return const_cast<TopoNode*>(static_cast<const TopologyGraph*>(this)->node(id));
}

const TopoRack* TopologyGraph::rack(int id) const
{
    return findById(racks, id);
}

TopoRack* TopologyGraph::rack(int id)
{
    return const_cast<TopoRack*>(static_cast<const TopologyGraph*>(this)->rack(id));
}

std::vector<const TopoNode*> TopologyGraph::nodesInRack(int rackId) const
{
    std::vector<const TopoNode*> out;
    for (const TopoNode& n : nodes) {
        if (n.rack == rackId)
            out.push_back(&n);
    }
    return out;
}

std::vector<std::vector<const TopoNode*>> TopologyGraph::nodesByRack() const
{
    std::unordered_map<int, size_t> index;
    for (size_t r = 0; r < racks.size(); ++r)
        index.emplace(racks[r].id, r);
    std::vector<std::vector<const TopoNode*>> out(racks.size());
    for (const TopoNode& n : nodes) {
        if (const auto it = index.find(n.rack); it != index.end())
            out[it->second].push_back(&n);
    }
    return out;
}

std::vector<size_t> TopologyGraph::nodeCountsByRack() const
{
    std::vector<size_t> counts(racks.size(), 0);
    size_t last = 0; // nodes come rack by rack: most find the rack of the node before them
    for (const TopoNode& n : nodes) {
        if (last < racks.size() && racks[last].id == n.rack) {
            ++counts[last];
        } else if (const TopoRack* rack = findById(racks, n.rack)) {
            last = static_cast<size_t>(rack - racks.data());
            ++counts[last];
        }
    }
    return counts;
}

long long TopologyGraph::gpuCount() const
{
    if (is_torus)
        return static_cast<long long>(torus.dims[0]) * torus.dims[1] * torus.dims[2];
    long long count = 0;
    for (const TopoNode& n : nodes)
        count += n.spec->gpus;
    return count;
}

void layoutGraph(TopologyGraph* g)
{
    // One pass over the nodes (a million-node cluster lays out in milliseconds): each rack's
    // column, then each node in the next free slot of its rack. Up to kRacksPerRow racks stand
    // side by side; more wrap to further rows, so a large cluster fits a window as a grid.
    std::unordered_map<int, size_t> rackIndex;
    rackIndex.reserve(g->racks.size());
    for (size_t r = 0; r < g->racks.size(); ++r)
        rackIndex.emplace(g->racks[r].id, r);
    std::vector<long long> count(g->racks.size(), 0);
    std::vector<long long> rackOf(g->nodes.size(), -1);
    for (size_t i = 0; i < g->nodes.size(); ++i) {
        if (const auto it = rackIndex.find(g->nodes[i].rack); it != rackIndex.end()) {
            rackOf[i] = static_cast<long long>(it->second);
            ++count[it->second];
        }
    }
    const double rackWidth = kGap + kNodesPerRow * (kNodeWidth + kGap) + 40;
    double y = 0;
    for (size_t row = 0; row * kRacksPerRow < g->racks.size(); ++row) {
        long long tallest = 0;
        for (size_t r = row * kRacksPerRow; r < std::min(g->racks.size(), (row + 1) * kRacksPerRow);
             ++r) {
            g->racks[r].x = static_cast<double>(r - row * kRacksPerRow) * rackWidth;
            g->racks[r].y = y;
            tallest = std::max(tallest, count[r]);
        }
        const long long rows = (tallest + kNodesPerRow - 1) / kNodesPerRow;
        y += 40 + static_cast<double>(rows) * (kNodeHeight + kGap) + 140;
    }
    std::vector<long long> placed(g->racks.size(), 0);
    for (size_t i = 0; i < g->nodes.size(); ++i) {
        if (rackOf[i] < 0)
            continue;
        TopoNode& n = g->nodes[i];
        const TopoRack& rack = g->racks[static_cast<size_t>(rackOf[i])];
        const long long slot = placed[static_cast<size_t>(rackOf[i])]++;
        n.x = rack.x + kGap + static_cast<double>(slot % kNodesPerRow) * (kNodeWidth + kGap);
        n.y = rack.y + 40 + static_cast<double>(slot / kNodesPerRow) * (kNodeHeight + kGap);
    }
}

// The drawing's cluster-wide fields as `c` has them (its base, names and spine): what a
// drawing made from a cluster, or carried over to an edited one, takes from it.
static void takeClusterFields(TopologyGraph* g, const ClusterSpec& c)
{
    g->base = c;
    g->name = c.name;
    g->gpu_id = c.gpu_id;
    g->source = c.source;
    g->spine_oversubscription = c.network.spine_oversubscription;
    g->sharp = c.network.sharp;
}

TopologyGraph graphFromCluster(const ClusterSpec& c)
{
    TopologyGraph g;
    takeClusterFields(&g, c);
    g.is_torus = c.is_torus;
    g.torus = c.torus;
    if (c.is_torus)
        return g;
    const int perRack = c.network.nodes_per_rack > 0 ? c.network.nodes_per_rack : c.nodes;
    const int racks = (c.nodes + perRack - 1) / perRack;
    g.racks.reserve(static_cast<size_t>(std::max(0, racks)));
    // A rack that is one NVLink domain spanning its nodes (NVL72) says so in the drawing: its
    // NVLink boundary is the rack, not the node.
    const bool rackIsDomain = c.nvlinkDomainGpus() > c.node.gpus &&
                              static_cast<long long>(perRack) * c.node.gpus == c.nvlinkDomainGpus();
    for (int r = 0; r < racks; ++r) {
        TopoRack rack;
        rack.id = g.takeId();
        rack.name = "rack " + std::to_string(r);
        if (rackIsDomain)
            rack.name += " (one NVLink domain)";
        g.racks.push_back(rack);
    }
    g.nodes.reserve(static_cast<size_t>(std::max(0, c.nodes)));
    const SharedNodeSpec spec(c.node); // one spec, shared by every node
    for (int i = 0; i < c.nodes; ++i) {
        TopoNode n;
        n.id = g.takeId();
        n.name = "node " + std::to_string(i);
        n.rack = g.racks[static_cast<size_t>(i / perRack)].id;
        n.spec = spec;
        n.switch_in_service.assign(c.node.switch_links_per_gpu.size(), true);
        // Failure what-ifs of the cluster land on its first node.
        if (i == 0) {
            for (int chip : c.what_if.nvswitch_chips_out) {
                if (chip >= 0 && chip < static_cast<int>(n.switch_in_service.size()))
                    n.switch_in_service[static_cast<size_t>(chip)] = false;
            }
            n.nvlink_factor = c.what_if.nvlink_factor;
            n.nic_factor = c.what_if.nic_factor;
        }
        g.nodes.push_back(std::move(n));
    }
    if (!g.racks.empty())
        g.racks.front().uplink_factor = c.what_if.spine_factor;
    g.spine_switches = std::max(1, racks / 2);
    layoutGraph(&g);
    return g;
}

bool clusterFromGraph(const TopologyGraph& g, ClusterSpec* cluster, std::string* error,
                      const HardwareCatalog& catalog)
{
    ClusterSpec c = g.base;
    c.what_if = FailureWhatIf{};
    c.name = g.name;
    c.gpu_id = g.gpu_id;
    c.source = g.source.empty() ? "drawn in the topology editor" : g.source;
    if (g.is_torus) {
        c.is_torus = true;
        c.torus = g.torus;
        c.torus.dims_auto = false;
        c.nodes = static_cast<int>(g.gpuCount());
        *cluster = c;
        return true;
    }
    if (g.nodes.empty()) {
        *error = "the topology has no node";
        return false;
    }
    const TopoNode& first = g.nodes.front();
    for (const TopoNode& n : g.nodes) {
        if (n.spec.sharedWith(first.spec))
            continue;
        const NodeSpec& a = *first.spec;
        const NodeSpec& b = *n.spec;
        if (a.gpus != b.gpus || a.fabric != b.fabric || a.nics != b.nics ||
            a.nic_GBps.value != b.nic_GBps.value ||
            a.switch_links_per_gpu != b.switch_links_per_gpu) {
            *error = n.name + " differs from " + first.name +
                     " (GPUs, fabric or NICs): Paraplan models clusters of identical nodes";
            return false;
        }
    }
    // Racks: as many nodes in each, but the last may hold fewer.
    std::vector<int> perRack;
    size_t inRacks = 0;
    for (const size_t count : g.nodeCountsByRack()) {
        inRacks += count;
        if (count > 0)
            perRack.push_back(static_cast<int>(count));
    }
    if (inRacks != g.nodes.size()) {
        for (const TopoNode& n : g.nodes) {
            if (!g.rack(n.rack)) {
                *error = n.name + " is in no rack";
                return false;
            }
        }
    }
    for (size_t i = 0; i < perRack.size(); ++i) {
        const bool last = i + 1 == perRack.size();
        if (last ? perRack[i] > perRack.front() : perRack[i] != perRack.front()) {
            *error = "racks hold different numbers of nodes (" + std::to_string(perRack.front()) +
                     " and " + std::to_string(perRack[i]) +
                     "): only the last rack may be partly filled";
            return false;
        }
    }
    c.nodes = static_cast<int>(g.nodes.size());
    c.node = *first.spec;
    if (perRack.size() > 1)
        c.network.nodes_per_rack = perRack.front();
    else if (c.network.nodes_per_rack != 0 && c.network.nodes_per_rack < c.nodes)
        c.network.nodes_per_rack = 0; // one rack holds them all
    c.network.spine_oversubscription = g.spine_oversubscription;
    c.network.sharp = g.sharp;
    // The worst what-if anywhere limits every collective that crosses it.
    size_t worstChips = 0;
    for (const TopoNode& n : g.nodes) {
        std::vector<int> out;
        for (size_t chip = 0; chip < n.switch_in_service.size(); ++chip) {
            if (!n.switch_in_service[chip])
                out.push_back(static_cast<int>(chip));
        }
        if (out.size() > worstChips) {
            worstChips = out.size();
            c.what_if.nvswitch_chips_out = out;
        }
        c.what_if.nvlink_factor = std::min(c.what_if.nvlink_factor, n.nvlink_factor);
        c.what_if.nic_factor = std::min(c.what_if.nic_factor, n.nic_factor);
    }
    for (const TopoRack& rack : g.racks)
        c.what_if.spine_factor = std::min(c.what_if.spine_factor, rack.uplink_factor);
    const std::vector<std::string> problems = validateCluster(c, catalog);
    if (!problems.empty()) {
        *error = problems.front();
        return false;
    }
    *cluster = c;
    return true;
}

bool generateFatTree(const std::string& node_preset, int nodes, int nodes_per_rack,
                     double oversubscription, TopologyGraph* graph, std::string* error,
                     const HardwareCatalog& catalog)
{
    if (nodes < 1 || nodes > 100000) {
        *error = "a fat-tree needs between 1 and 100000 nodes";
        return false;
    }
    if (nodes_per_rack < 1) {
        *error = "nodes per rack must be at least 1";
        return false;
    }
    if (!(oversubscription >= 1)) {
        *error = "the spine oversubscription must be at least 1 (1 = non-blocking)";
        return false;
    }
    ClusterOptions options;
    options.nodes = nodes;
    options.nodes_per_rack = nodes_per_rack;
    options.spine_oversubscription = oversubscription;
    ClusterSpec cluster;
    if (!clusterFromPreset(node_preset, options, &cluster, error, catalog))
        return false;
    if (cluster.is_torus) {
        *error = node_preset + " is a torus, not a node for a fat-tree";
        return false;
    }
    cluster.name = "fat-tree of " + std::to_string(nodes) + " x " + node_preset + ", " +
                   std::to_string(nodes_per_rack) + " per rack, spine " +
                   std::to_string(static_cast<int>(oversubscription)) + ":1";
    *graph = graphFromCluster(cluster);
    return true;
}

bool generateTorus(int x, int y, int z, TopologyGraph* graph, std::string* error,
                   const HardwareCatalog& catalog)
{
    if (x < 1 || y < 1 || z < 1 || x > 64 || y > 64 || z > 64) {
        *error = "torus dimensions must lie between 1 and 64";
        return false;
    }
    ClusterOptions options;
    options.nodes = x * y * z;
    ClusterSpec cluster;
    if (!clusterFromPreset("tpu-v4-pod", options, &cluster, error, catalog))
        return false;
    cluster.torus.dims = {x, y, z};
    cluster.torus.dims_auto = false;
    for (int axis = 0; axis < 3; ++axis)
        cluster.torus.wrap[static_cast<size_t>(axis)] =
            cluster.torus.dims[static_cast<size_t>(axis)] % 4 == 0;
    cluster.name = "torus " + std::to_string(x) + " x " + std::to_string(y) + " x " +
                   std::to_string(z) + " of TPU v4";
    *graph = graphFromCluster(cluster);
    return true;
}

std::vector<TierLoad> tierLoads(const StepCost& cost)
{
    std::vector<TierLoad> loads;
    for (const CollectiveCost& c : cost.collectives) {
        for (int i = 0; i < c.call.phase_count; ++i) {
            const CollectivePhase& phase = c.call.phases[static_cast<size_t>(i)];
            const double busy = phase.time_s * c.calls_per_step;
            auto it = std::find_if(loads.begin(), loads.end(),
                                   [&](const TierLoad& l) { return l.tier == phase.tier; });
            if (it == loads.end()) {
                loads.push_back(TierLoad{phase.tier, 0, 0, {}});
                it = loads.end() - 1;
            }
            it->busy_s += busy;
            std::string who = std::string(c.group) + " " + collectiveOpName(c.call.op);
            std::transform(who.begin(), who.begin() + 2, who.begin(), asciiUpper);
            auto entry = std::find_if(it->contributions.begin(), it->contributions.end(),
                                      [&](const auto& e) { return e.first == who; });
            if (entry == it->contributions.end())
                it->contributions.emplace_back(who, busy);
            else
                entry->second += busy;
        }
    }
    for (TierLoad& load : loads) {
        load.utilisation = cost.step_time_s > 0 ? load.busy_s / cost.step_time_s : 0;
        std::sort(load.contributions.begin(), load.contributions.end(),
                  [](const auto& a, const auto& b) { return a.second > b.second; });
    }
    std::sort(loads.begin(), loads.end(),
              [](const TierLoad& a, const TierLoad& b) { return a.utilisation > b.utilisation; });
    return loads;
}

long long gpuGroupIndex(const ParallelLayout& p, long long gpu, ParallelDim dim)
{
    const GroupStrides s = groupStrides(p);
    switch (dim) {
    case ParallelDim::TP: {
        const long long tpCoord = (gpu / s.tp) % p.tp;
        return (gpu - tpCoord * s.tp) / std::max(1, p.tp);
    }
    case ParallelDim::PP:
        return (gpu / s.pp) % p.pp;
    case ParallelDim::DP:
        return (gpu / s.dp) % p.dp;
    case ParallelDim::CP:
        return (gpu / s.cp) % p.cp;
    }
    return 0;
}

} // namespace paraplan

namespace paraplan {

bool drawingDescribes(const TopologyGraph& graph, const ClusterSpec& cluster,
                      const HardwareCatalog& catalog)
{
    TopologyGraph g = graph;
    g.base = cluster;
    ClusterSpec drawn;
    std::string error;
    return clusterFromGraph(g, &drawn, &error, catalog) && drawn == cluster;
}

TopologyGraph graphForPlan(const Plan& plan, const HardwareCatalog& catalog)
{
    if (plan.drawing) {
        TopologyGraph g = *plan.drawing;
        g.base = plan.cluster;
        ClusterSpec drawn;
        std::string error;
        // An unfinished drawing (not yet a cluster the model can read) is shown as drawn;
        // the plan keeps its last valid cluster meanwhile.
        if (!clusterFromGraph(g, &drawn, &error, catalog) || drawn == plan.cluster)
            return g;
    }
    return graphFromCluster(plan.cluster);
}

bool carryDrawing(const TopologyGraph& drawing, const ClusterSpec& cluster, TopologyGraph* carried,
                  const HardwareCatalog& catalog)
{
    if (drawing.is_torus || cluster.is_torus || drawing.nodes.empty())
        return false;
    TopologyGraph g = drawing;
    takeClusterFields(&g, cluster);
    ClusterSpec drawn;
    std::string error;
    const bool read = clusterFromGraph(g, &drawn, &error, catalog);
    if (!read || !(drawn.node == cluster.node)) { // one node type, shared as a cluster's is
        const SharedNodeSpec spec(cluster.node);
        for (TopoNode& n : g.nodes) {
            n.spec = spec;
            n.switch_in_service.resize(cluster.node.switch_links_per_gpu.size(), true);
        }
    }
    if (!read || !(drawn.what_if == cluster.what_if)) { // the cluster's what-ifs, as laid out
        for (TopoNode& n : g.nodes) {
            n.switch_in_service.assign(n.switch_in_service.size(), true);
            n.nvlink_factor = n.nic_factor = 1;
        }
        for (TopoRack& rack : g.racks)
            rack.uplink_factor = 1;
        TopoNode& first = g.nodes.front();
        for (int chip : cluster.what_if.nvswitch_chips_out) {
            if (chip >= 0 && chip < static_cast<int>(first.switch_in_service.size()))
                first.switch_in_service[static_cast<size_t>(chip)] = false;
        }
        first.nvlink_factor = cluster.what_if.nvlink_factor;
        first.nic_factor = cluster.what_if.nic_factor;
        if (TopoRack* rack = g.rack(first.rack))
            rack->uplink_factor = cluster.what_if.spine_factor;
    }
    // drawingDescribes without its copy: the base is `cluster` already.
    if (!clusterFromGraph(g, &drawn, &error, catalog) || !(drawn == cluster))
        return false;
    *carried = std::move(g);
    return true;
}

QJsonObject drawingToJson(const TopologyGraph& g)
{
    QJsonArray racks;
    std::map<int, int> rackIndex;
    for (const TopoRack& r : g.racks) {
        rackIndex[r.id] = racks.size();
        QJsonObject rack{{"name", QString::fromStdString(r.name)}, {"x", r.x}, {"y", r.y}};
        if (r.uplink_factor != 1)
            rack["uplink_factor"] = r.uplink_factor;
        racks.append(rack);
    }
    QJsonArray nodes;
    for (const TopoNode& n : g.nodes) {
        QJsonObject node{{"name", QString::fromStdString(n.name)},
                         {"rack", rackIndex.count(n.rack) ? rackIndex[n.rack] : 0},
                         {"x", n.x},
                         {"y", n.y}};
        QJsonArray out;
        for (size_t i = 0; i < n.switch_in_service.size(); ++i) {
            if (!n.switch_in_service[i])
                out.append(static_cast<int>(i));
        }
        if (!out.isEmpty())
            node["nvswitch_chips_out"] = out;
        if (n.nvlink_factor != 1)
            node["nvlink_factor"] = n.nvlink_factor;
        if (n.nic_factor != 1)
            node["nic_factor"] = n.nic_factor;
        nodes.append(node);
    }
    return QJsonObject{{"racks", racks}, {"nodes", nodes}};
}

namespace {

// Every field of the drawing has its type or is absent: a wrong type is an error, not a default.
bool drawingTypesAreRight(const QJsonObject& json, std::string* error)
{
    const auto typed = [&](const QJsonValue& item, const std::string& where,
                           std::initializer_list<std::pair<const char*, QJsonValue::Type>> fields) {
        if (!item.isObject()) {
            *error = where + " must be an object";
            return false;
        }
        for (const auto& [key, type] : fields) {
            const QJsonValue value = item.toObject().value(QLatin1String(key));
            const bool whole = key == std::string("rack");
            if (!value.isUndefined() &&
                (value.type() != type ||
                 (whole && value.toDouble() != std::floor(value.toDouble())))) {
                *error = where + "." + key + " must be " +
                         (type == QJsonValue::String  ? "a string"
                          : type == QJsonValue::Array ? "an array of chip indices"
                          : whole                     ? "a whole number"
                                                      : "a number");
                return false;
            }
        }
        return true;
    };
    if (!json.value("racks").isArray() || !json.value("nodes").isArray()) {
        *error = "the drawing's racks and nodes must be arrays";
        return false;
    }
    const QJsonArray racks = json.value("racks").toArray();
    const QJsonArray nodes = json.value("nodes").toArray();
    for (int i = 0; i < racks.size(); ++i) {
        if (!typed(racks.at(i), "drawing rack " + std::to_string(i),
                   {{"name", QJsonValue::String},
                    {"x", QJsonValue::Double},
                    {"y", QJsonValue::Double},
                    {"uplink_factor", QJsonValue::Double}}))
            return false;
    }
    for (int i = 0; i < nodes.size(); ++i) {
        if (!typed(nodes.at(i), "drawing node " + std::to_string(i),
                   {{"name", QJsonValue::String},
                    {"rack", QJsonValue::Double},
                    {"x", QJsonValue::Double},
                    {"y", QJsonValue::Double},
                    {"nvswitch_chips_out", QJsonValue::Array},
                    {"nvlink_factor", QJsonValue::Double},
                    {"nic_factor", QJsonValue::Double}}))
            return false;
        for (const QJsonValue& chip :
             nodes.at(i).toObject().value("nvswitch_chips_out").toArray()) {
            if (!chip.isDouble() || chip.toDouble() != std::floor(chip.toDouble())) {
                *error = "drawing node " + std::to_string(i) +
                         ".nvswitch_chips_out must be an array of chip indices";
                return false;
            }
        }
    }
    return true;
}

} // namespace

bool drawingFromJson(const QJsonObject& json, const ClusterSpec& cluster, TopologyGraph* graph,
                     std::string* error, const HardwareCatalog& catalog)
{
    TopologyGraph g = graphFromCluster(cluster);
    if (g.is_torus) {
        *error = "a torus is drawn from its dimensions; it has no drawing";
        return false;
    }
    if (!drawingTypesAreRight(json, error))
        return false;
    const QJsonArray racks = json.value("racks").toArray();
    const QJsonArray nodes = json.value("nodes").toArray();

    if (nodes.size() != static_cast<int>(g.nodes.size()) || racks.isEmpty() ||
        racks.size() > nodes.size()) {
        *error = "the drawing has " + std::to_string(nodes.size()) + " nodes in " +
                 std::to_string(racks.size()) + " racks; the cluster has " +
                 std::to_string(g.nodes.size()) + " nodes";
        return false;
    }
    g.racks.clear();
    for (int i = 0; i < racks.size(); ++i) {
        const QJsonObject r = racks.at(i).toObject();
        TopoRack rack;
        rack.id = g.takeId();
        rack.name = r.value("name").toString("rack " + QString::number(i)).toStdString();
        rack.x = r.value("x").toDouble();
        rack.y = r.value("y").toDouble();
        rack.uplink_factor = r.value("uplink_factor").toDouble(1);
        g.racks.push_back(rack);
    }
    for (int i = 0; i < nodes.size(); ++i) {
        const QJsonObject n = nodes.at(i).toObject();
        TopoNode& node = g.nodes[static_cast<size_t>(i)];
        const int rack = n.value("rack").toInt(-1);
        if (rack < 0 || rack >= racks.size()) {
            *error = "drawing node " + std::to_string(i) + " names rack " + std::to_string(rack) +
                     " of " + std::to_string(racks.size());
            return false;
        }
        node.rack = g.racks[static_cast<size_t>(rack)].id;
        node.name = n.value("name").toString(QString::fromStdString(node.name)).toStdString();
        node.x = n.value("x").toDouble(node.x);
        node.y = n.value("y").toDouble(node.y);
        std::fill(node.switch_in_service.begin(), node.switch_in_service.end(), true);
        for (const QJsonValue& chip : n.value("nvswitch_chips_out").toArray()) {
            const int c = chip.toInt(-1);
            if (c >= 0 && c < static_cast<int>(node.switch_in_service.size()))
                node.switch_in_service[static_cast<size_t>(c)] = false;
        }
        node.nvlink_factor = n.value("nvlink_factor").toDouble(1);
        node.nic_factor = n.value("nic_factor").toDouble(1);
    }
    for (const TopoNode& node : g.nodes) {
        if (!(std::isfinite(node.x) && std::isfinite(node.y) && node.nvlink_factor > 0 &&
              node.nvlink_factor <= 1 && node.nic_factor > 0 && node.nic_factor <= 1)) {
            *error = "drawing node '" + node.name +
                     "': positions must be numbers and what-if "
                     "factors lie in (0, 1]";
            return false;
        }
    }
    if (!drawingDescribes(g, cluster, catalog)) {
        *error = "the drawing does not describe the plan's cluster (its racks, nodes or "
                 "what-ifs differ)";
        return false;
    }
    *graph = std::move(g);
    return true;
}

} // namespace paraplan
