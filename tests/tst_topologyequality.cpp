// Member-wise equality of the cluster types (every field compared, and a field added to a
// struct without a comparison fails here), and drawing deltas: what an undo step keeps of a
// drawing edit turns the drawing before into the one after and back, exactly.
#include "clusterio.h"
#include "fieldcount.h"
#include "testplans.h"
#include "topologydelta.h"

#include <QTest>

#include <functional>
#include <random>
#include <set>
#include <utility>

using namespace paraplan;

namespace {

// A change of each part of a Sourced figure.
std::vector<std::function<void(Sourced&)>> sourcedChanges()
{
    return {[](Sourced& s) { s.value += 1; },
            [](Sourced& s) {
                s.origin = s.origin == Origin::UserEntry ? Origin::Preset : Origin::UserEntry;
            },
            [](Sourced& s) { s.source += " (changed)"; }};
}

using ClusterChange = std::pair<const char*, std::function<void(ClusterSpec&)>>;

std::vector<ClusterChange> nodeChanges()
{
    return {
        {"gpus", [](ClusterSpec& c) { c.node.gpus += 1; }},
        {"fabric", [](ClusterSpec& c) { c.node.fabric = NodeFabric::PCIe; }},
        {"nvlink_id", [](ClusterSpec& c) { c.node.nvlink_id += "x"; }},
        {"nvlink_link_GBps", [](ClusterSpec& c) { c.node.nvlink_link_GBps.value += 1; }},
        {"nvswitch_id", [](ClusterSpec& c) { c.node.nvswitch_id += "x"; }},
        {"switch_links_per_gpu", [](ClusterSpec& c) { c.node.switch_links_per_gpu.push_back(1); }},
        {"in_switch_reduction",
         [](ClusterSpec& c) { c.node.in_switch_reduction = !c.node.in_switch_reduction; }},
        {"nvlink_pairs",
         [](ClusterSpec& c) {
             c.node.nvlink_pairs.push_back({0, 1, 2});
         }},
        {"pcie_id", [](ClusterSpec& c) { c.node.pcie_id += "x"; }},
        {"pcie_GBps", [](ClusterSpec& c) { c.node.pcie_GBps.value += 1; }},
        {"host_link_id", [](ClusterSpec& c) { c.node.host_link_id += "x"; }},
        {"host_link_GBps", [](ClusterSpec& c) { c.node.host_link_GBps.value += 1; }},
        {"gpus_per_host_link", [](ClusterSpec& c) { c.node.gpus_per_host_link += 1; }},
        {"pcie_p2p", [](ClusterSpec& c) { c.node.pcie_p2p = !c.node.pcie_p2p; }},
        {"nic_id", [](ClusterSpec& c) { c.node.nic_id += "x"; }},
        {"nics", [](ClusterSpec& c) { c.node.nics += 1; }},
        {"nics_count_source", [](ClusterSpec& c) { c.node.nics_count_source.source += "x"; }},
        {"nic_GBps", [](ClusterSpec& c) { c.node.nic_GBps.value += 1; }},
        {"nvlink_ring_efficiency",
         [](ClusterSpec& c) { c.node.nvlink_ring_efficiency.value += 0.01; }},
        {"nvls_efficiency", [](ClusterSpec& c) { c.node.nvls_efficiency.value += 0.01; }},
        {"pcie_efficiency", [](ClusterSpec& c) { c.node.pcie_efficiency.value += 0.01; }},
        {"nic_efficiency", [](ClusterSpec& c) { c.node.nic_efficiency.value += 0.01; }},
    };
}

std::vector<ClusterChange> networkChanges()
{
    return {
        {"nodes_per_rack", [](ClusterSpec& c) { c.network.nodes_per_rack += 1; }},
        {"source_nodes_per_rack", [](ClusterSpec& c) { c.network.source_nodes_per_rack += 1; }},
        {"spine_oversubscription",
         [](ClusterSpec& c) { c.network.spine_oversubscription.value += 1; }},
        {"sharp", [](ClusterSpec& c) { c.network.sharp = !c.network.sharp; }},
    };
}

std::vector<ClusterChange> torusChanges()
{
    return {
        {"dims", [](ClusterSpec& c) { c.torus.dims[2] += 1; }},
        {"wrap", [](ClusterSpec& c) { c.torus.wrap[1] = !c.torus.wrap[1]; }},
        {"dims_auto", [](ClusterSpec& c) { c.torus.dims_auto = !c.torus.dims_auto; }},
        {"wrap_auto", [](ClusterSpec& c) { c.torus.wrap_auto = !c.torus.wrap_auto; }},
        {"ici_id", [](ClusterSpec& c) { c.torus.ici_id += "x"; }},
        {"link_GBps", [](ClusterSpec& c) { c.torus.link_GBps.value += 1; }},
        {"efficiency", [](ClusterSpec& c) { c.torus.efficiency.value += 0.01; }},
        {"hop_latency_us", [](ClusterSpec& c) { c.torus.hop_latency_us.value += 1; }},
    };
}

std::vector<ClusterChange> whatIfChanges()
{
    return {
        {"nvswitch_chips_out", [](ClusterSpec& c) { c.what_if.nvswitch_chips_out.push_back(0); }},
        {"nvlink_factor", [](ClusterSpec& c) { c.what_if.nvlink_factor = 0.5; }},
        {"pcie_factor", [](ClusterSpec& c) { c.what_if.pcie_factor = 0.5; }},
        {"nic_factor", [](ClusterSpec& c) { c.what_if.nic_factor = 0.5; }},
        {"spine_factor", [](ClusterSpec& c) { c.what_if.spine_factor = 0.5; }},
        {"ici_factor", [](ClusterSpec& c) { c.what_if.ici_factor = 0.5; }},
    };
}

std::vector<ClusterChange> clusterChanges()
{
    return {
        {"preset", [](ClusterSpec& c) { c.preset += "x"; }},
        {"name", [](ClusterSpec& c) { c.name += "x"; }},
        {"gpu_id", [](ClusterSpec& c) { c.gpu_id += "x"; }},
        {"nvlink_domain_gpus", [](ClusterSpec& c) { c.nvlink_domain_gpus += 72; }},
        {"nodes", [](ClusterSpec& c) { c.nodes += 1; }},
        {"node", [](ClusterSpec& c) { c.node.gpus += 1; }},
        {"network", [](ClusterSpec& c) { c.network.sharp = !c.network.sharp; }},
        {"is_torus", [](ClusterSpec& c) { c.is_torus = !c.is_torus; }},
        {"torus", [](ClusterSpec& c) { c.torus.dims[0] += 1; }},
        {"what_if", [](ClusterSpec& c) { c.what_if.nic_factor = 0.5; }},
        {"source", [](ClusterSpec& c) { c.source += "x"; }},
    };
}

// Nodes of `graph` changed at random: moved, renamed, what-ifs, one given a spec of its own.
void scatterEdits(TopologyGraph* graph, std::mt19937* random, int edits)
{
    std::uniform_int_distribution<size_t> pick(0, graph->nodes.size() - 1);
    for (int e = 0; e < edits; ++e) {
        TopoNode& node = graph->nodes[pick(*random)];
        switch (e % 4) {
        case 0:
            node.x += 17;
            break;
        case 1:
            node.name += "'";
            break;
        case 2:
            node.nic_factor = 0.5;
            break;
        default:
            node.spec.edit().nics += 1;
            break;
        }
    }
}

size_t distinctSpecs(const TopologyGraph& graph)
{
    std::set<const NodeSpec*> specs;
    for (const TopoNode& node : graph.nodes)
        specs.insert(&*node.spec);
    return specs.size();
}

// `delta` turns `before` into `after` and back, exactly, with the same sharing of specs.
void checkDelta(const TopologyGraph& before, const TopologyGraph& after)
{
    const GraphDelta delta = GraphDelta::between(before, after);
    TopologyGraph graph = before;
    delta.apply(&graph);
    QVERIFY(graph == after);
    QCOMPARE(distinctSpecs(graph), distinctSpecs(after));
    delta.revert(&graph);
    QVERIFY(graph == before);
    QCOMPARE(distinctSpecs(graph), distinctSpecs(before));
}

// One random edit of a small drawing: moves, renames, what-ifs, deletes, inserts, a rack added
// or deleted, one node's spec or every node's, the graph's own fields, a reordering, or none.
void randomEdit(TopologyGraph* g, std::mt19937* random)
{
    auto pick = [random](size_t size) {
        return std::uniform_int_distribution<size_t>(0, size - 1)(*random);
    };
    const size_t kind = pick(11);
    if (g->nodes.size() < 4 && kind >= 3 && kind <= 4)
        return;
    switch (kind) {
    case 0:
        g->nodes[pick(g->nodes.size())].x += 5;
        g->nodes[pick(g->nodes.size())].y -= 3;
        break;
    case 1:
        g->nodes[pick(g->nodes.size())].name += "'";
        g->nodes[pick(g->nodes.size())].nic_factor *= 0.5;
        break;
    case 2: { // inserted at random places, copies of other nodes with new IDs
        for (int k = 0; k < 3; ++k) {
            TopoNode node = g->nodes[pick(g->nodes.size())];
            node.id = g->takeId();
            g->nodes.insert(g->nodes.begin() + static_cast<long>(pick(g->nodes.size() + 1)), node);
        }
        break;
    }
    case 3:
    case 4: // deleted at random places
        for (int k = 0; k < 2; ++k)
            g->nodes.erase(g->nodes.begin() + static_cast<long>(pick(g->nodes.size())));
        break;
    case 5: { // a rack added, or one deleted
        if (g->racks.size() > 2 && pick(2) == 0) {
            g->racks.erase(g->racks.begin() + static_cast<long>(pick(g->racks.size())));
        } else {
            TopoRack rack;
            rack.id = g->takeId();
            rack.name = "rack " + std::to_string(rack.id);
            g->racks.insert(g->racks.begin() + static_cast<long>(pick(g->racks.size() + 1)), rack);
            g->nodes[pick(g->nodes.size())].rack = rack.id;
        }
        break;
    }
    case 6: // one node's spec of its own
        g->nodes[pick(g->nodes.size())].spec.edit().nics += 1;
        break;
    case 7: // every node's spec (a node-type property)
        g->editNodeSpecs([](NodeSpec& spec) { spec.nic_GBps.value += 1; });
        break;
    case 8:
        g->spine_switches += 1;
        g->base.what_if.nic_factor *= 0.5;
        g->racks[pick(g->racks.size())].uplink_factor *= 0.5;
        break;
    case 9: // a reordering
        std::swap(g->nodes[pick(g->nodes.size())], g->nodes[pick(g->nodes.size())]);
        break;
    default: // no change
        break;
    }
}

} // namespace

class TestTopologyEquality : public QObject
{
    Q_OBJECT

private slots:
    void everyFieldIsCounted()
    {
        // A new field makes one of these fail: compare it in clusterequality.cpp (or
        // topologydelta.cpp for the drawing) and change it in the lists here.
        QCOMPARE(test::fieldCount<Sourced>(), size_t(3));
        QCOMPARE(test::fieldCount<NVLinkPair>(), size_t(3));
        QCOMPARE(test::fieldCount<NodeSpec>(), nodeChanges().size());
        QCOMPARE(test::fieldCount<NetworkSpec>(), networkChanges().size());
        QCOMPARE(test::fieldCount<TorusSpec>(), torusChanges().size());
        QCOMPARE(test::fieldCount<FailureWhatIf>(), whatIfChanges().size());
        QCOMPARE(test::fieldCount<ClusterSpec>(), clusterChanges().size());
        QCOMPARE(test::fieldCount<TopoRack>(), size_t(5));
        QCOMPARE(test::fieldCount<TopoNode>(), size_t(9));
        QCOMPARE(test::fieldCount<TopologyGraph>(), size_t(12));
    }

    void everyFieldChangesEquality()
    {
        for (const char* id : {"dgx-h100", "a100-nvlink-mesh", "tpu-v4-pod"}) {
            const ClusterSpec cluster =
                test::clusterPreset(id, id == std::string("tpu-v4-pod") ? 64 : 16);
            ClusterSpec copy = cluster;
            QVERIFY(copy == cluster);
            QVERIFY(!(copy != cluster));
            for (const auto& list : {nodeChanges(), networkChanges(), torusChanges(),
                                     whatIfChanges(), clusterChanges()}) {
                for (const auto& [field, change] : list) {
                    ClusterSpec changed = cluster;
                    change(changed);
                    QVERIFY2(changed != cluster, field);
                    QVERIFY2(!(changed == cluster), field);
                }
            }
            // Each part of every Sourced figure counts (value, origin, source).
            for (const auto& change : sourcedChanges()) {
                for (Sourced* figure :
                     {&copy.node.nvlink_link_GBps, &copy.node.pcie_GBps, &copy.node.host_link_GBps,
                      &copy.node.nics_count_source, &copy.node.nic_GBps,
                      &copy.node.nvlink_ring_efficiency, &copy.node.nvls_efficiency,
                      &copy.node.pcie_efficiency, &copy.node.nic_efficiency,
                      &copy.network.spine_oversubscription, &copy.torus.link_GBps,
                      &copy.torus.efficiency, &copy.torus.hop_latency_us}) {
                    const Sourced kept = *figure;
                    change(*figure);
                    QVERIFY(copy != cluster);
                    *figure = kept;
                    QVERIFY(copy == cluster);
                }
            }
        }
    }

    void nvlinkPairsCompareEachField()
    {
        const NVLinkPair pair{1, 2, 3};
        QVERIFY(pair == (NVLinkPair{1, 2, 3}));
        QVERIFY(pair != (NVLinkPair{0, 2, 3}));
        QVERIFY(pair != (NVLinkPair{1, 0, 3}));
        QVERIFY(pair != (NVLinkPair{1, 2, 0}));
    }

    void drawingsCompareEveryField()
    {
        const TopologyGraph graph = graphFromCluster(test::clusterPreset("dgx-h100", 8, 4));
        QVERIFY(graph == graphFromCluster(test::clusterPreset("dgx-h100", 8, 4)));
        const std::vector<std::function<void(TopologyGraph&)>> changes = {
            [](TopologyGraph& g) { g.name += "x"; },
            [](TopologyGraph& g) { g.gpu_id += "x"; },
            [](TopologyGraph& g) { g.source += "x"; },
            [](TopologyGraph& g) { g.racks[1].name += "x"; },
            [](TopologyGraph& g) { g.racks[1].x += 1; },
            [](TopologyGraph& g) { g.racks[1].uplink_factor = 0.5; },
            [](TopologyGraph& g) { g.nodes[3].name += "x"; },
            [](TopologyGraph& g) { g.nodes[3].rack = g.racks[1].id; },
            [](TopologyGraph& g) { g.nodes[3].y += 1; },
            [](TopologyGraph& g) { g.nodes[3].spec.edit().nics += 1; },
            [](TopologyGraph& g) { g.nodes[3].switch_in_service[0] = false; },
            [](TopologyGraph& g) { g.nodes[3].nvlink_factor = 0.5; },
            [](TopologyGraph& g) { g.nodes[3].nic_factor = 0.5; },
            [](TopologyGraph& g) { g.spine_switches += 1; },
            [](TopologyGraph& g) { g.spine_oversubscription.source += "x"; },
            [](TopologyGraph& g) { g.sharp = !g.sharp; },
            [](TopologyGraph& g) { g.is_torus = !g.is_torus; },
            [](TopologyGraph& g) { g.torus.dims[0] += 1; },
            [](TopologyGraph& g) { g.takeId(); },
            [](TopologyGraph& g) { g.base.name += "x"; },
        };
        for (size_t i = 0; i < changes.size(); ++i) {
            TopologyGraph changed = graph;
            changes[i](changed);
            QVERIFY2(changed != graph, qPrintable(QString::number(i)));
            checkDelta(graph, changed);
        }
    }

    void deltasRestoreExactly()
    {
        std::mt19937 random(17);
        const TopologyGraph start = graphFromCluster(test::clusterPreset("dgx-h100", 200, 16));
        TopologyGraph graph = start;
        std::vector<TopologyGraph> states{graph};
        std::vector<GraphDelta> deltas;
        for (int step = 0; step < 12; ++step) {
            TopologyGraph next = graph;
            switch (step % 6) {
            case 0:
                scatterEdits(&next, &random, 5);
                break;
            case 1: { // delete scattered nodes
                std::vector<TopoNode> kept;
                for (size_t n = 0; n < next.nodes.size(); ++n)
                    if (n % 37 != 5)
                        kept.push_back(next.nodes[n]);
                next.nodes = kept;
                break;
            }
            case 2: { // add a rack and nodes in it, in the middle and at the end
                TopoRack rack;
                rack.id = next.takeId();
                rack.name = "new rack";
                next.racks.insert(next.racks.begin() + 3, rack);
                TopoNode node = next.nodes.front();
                node.id = next.takeId();
                node.rack = rack.id;
                next.nodes.insert(next.nodes.begin() + 40, node);
                node.id = next.takeId();
                next.nodes.push_back(node);
                break;
            }
            case 3: // every node's spec at once (a node-type property)
                next.editNodeSpecs([](NodeSpec& spec) { spec.nic_GBps.value *= 2; });
                break;
            case 4: // the graph's own fields and a rack's what-if
                next.spine_oversubscription = userEntry(4, "test");
                next.racks.back().uplink_factor = 0.25;
                next.base.what_if.nic_factor = 0.5;
                break;
            default: // a reordering: still exact
                std::swap(next.nodes[10], next.nodes[90]);
                break;
            }
            checkDelta(graph, next);
            deltas.push_back(GraphDelta::between(graph, next));
            graph = next;
            states.push_back(graph);
        }
        // Undo every step from the end, then redo them all.
        for (size_t k = deltas.size(); k-- > 0;) {
            deltas[k].revert(&graph);
            QVERIFY2(graph == states[k], qPrintable(QString::number(k)));
        }
        QVERIFY(graph == start);
        for (size_t k = 0; k < deltas.size(); ++k) {
            deltas[k].apply(&graph);
            QVERIFY(graph == states[k + 1]);
        }
    }

    void composedDeltasEqualTheEndStatesDiff()
    {
        // Random edit sequences; every range of steps composed (left to right, and split in
        // two and composed again) turns its first drawing into its last and back, exactly, as
        // the diff of the two end states does, specs shared alike.
        for (unsigned seed = 1; seed <= 40; ++seed) {
            std::mt19937 random(seed);
            std::vector<TopologyGraph> states{
                graphFromCluster(test::clusterPreset("dgx-h100", 24, 4))};
            std::vector<GraphDelta> deltas;
            for (int step = 0; step < 12; ++step) {
                TopologyGraph next = states.back();
                randomEdit(&next, &random);
                deltas.push_back(GraphDelta::between(states.back(), next));
                states.push_back(next);
            }
            for (size_t from = 0; from < deltas.size(); ++from) {
                GraphDelta composed = deltas[from];
                for (size_t to = from + 1; to <= deltas.size(); ++to) {
                    if (to > from + 1)
                        composed = composed.then(deltas[to - 1]);
                    const TopologyGraph& before = states[from];
                    const TopologyGraph& after = states[to];
                    const QString where =
                        QString("seed %1, steps %2..%3").arg(seed).arg(from).arg(to);
                    TopologyGraph graph = before;
                    composed.apply(&graph);
                    QVERIFY2(graph == after, qPrintable(where));
                    QCOMPARE(distinctSpecs(graph), distinctSpecs(after));
                    composed.revert(&graph);
                    QVERIFY2(graph == before, qPrintable(where));
                    QCOMPARE(distinctSpecs(graph), distinctSpecs(before));
                    // The same as the end states' own diff does.
                    TopologyGraph diffed = before;
                    GraphDelta::between(before, after).apply(&diffed);
                    graph = before;
                    composed.apply(&graph);
                    QVERIFY2(graph == diffed, qPrintable(where));
                    // Composed in another order: (first half) then (second half).
                    const size_t middle = (from + to) / 2;
                    if (middle > from && middle < to) {
                        GraphDelta left = deltas[from];
                        for (size_t k = from + 1; k < middle; ++k)
                            left = left.then(deltas[k]);
                        GraphDelta right = deltas[middle];
                        for (size_t k = middle + 1; k < to; ++k)
                            right = right.then(deltas[k]);
                        graph = before;
                        left.then(right).apply(&graph);
                        QVERIFY2(graph == after, qPrintable(where));
                        left.then(right).revert(&graph);
                        QVERIFY2(graph == before, qPrintable(where));
                    }
                }
            }
        }
    }

    void aLongDragComposesToOneSmallDelta()
    {
        // 500 moves of the same two nodes of a 125,000-node drawing composed: one delta that
        // holds the two nodes (about what the end states' diff holds, not the drawing), and
        // restores both ends exactly.
        const TopologyGraph start = graphFromCluster(test::clusterPreset("dgx-h100", 125000, 32));
        TopologyGraph graph = start;
        const size_t a = 1000;
        const size_t b = 99000;
        GraphDelta drag;
        // One copy of the drawing for the next state; each tick moves both nodes in it and then
        // brings the previous state level by copying just those two nodes back (a whole-drawing
        // copy per tick is 62 million node copies, minutes under the sanitizers).
        TopologyGraph next = graph;
        for (int tick = 0; tick < 500; ++tick) {
            next.nodes[a].x += 1;
            next.nodes[b].y += tick % 2 ? 2 : -1;
            const GraphDelta step = GraphDelta::between(graph, next);
            drag = tick == 0 ? step : drag.then(step);
            graph.nodes[a] = next.nodes[a];
            graph.nodes[b] = next.nodes[b];
        }
        QVERIFY(graph == next);
        QVERIFY(drag.bytes() < GraphDelta::between(start, graph).bytes() + 4 * sizeof(TopoNode));
        QVERIFY(drag.bytes() * 1000 < 125000 * sizeof(TopoNode));
        TopologyGraph restored = graph;
        drag.revert(&restored);
        QVERIFY(restored == start);
        drag.apply(&restored);
        QVERIFY(restored == graph);
    }

    void aShiftedNodeKeepsItsNewSpec()
    {
        // One edit removes the first node, gives the next the first one's spec and adds a node
        // with the second's: the count and the spec at every index are as before, but the
        // node at each index is not, so the delta must still carry the specs.
        TopologyGraph before = graphFromCluster(test::clusterPreset("dgx-h100", 2, 2));
        before.nodes[1].spec.edit().gpus = 4;
        QVERIFY(!before.nodes[0].spec.sharedWith(before.nodes[1].spec));
        TopologyGraph after = before;
        TopoNode added = after.nodes[1];
        added.id = after.takeId();
        after.nodes[1].spec = after.nodes[0].spec;
        after.nodes.erase(after.nodes.begin());
        after.nodes.push_back(added);
        QVERIFY(after.nodes[0].spec.sharedWith(before.nodes[0].spec));
        QVERIFY(after.nodes[1].spec.sharedWith(before.nodes[1].spec));
        checkDelta(before, after);
        TopologyGraph graph = before;
        const GraphDelta delta = GraphDelta::between(before, after);
        delta.apply(&graph);
        QCOMPARE(graph.nodes[0].spec->gpus, before.nodes[0].spec->gpus);
        QVERIFY(graph == after);
        delta.revert(&graph);
        QVERIFY(graph == before);
    }

    void aDeltaFollowsTheEditNotTheCluster()
    {
        // The same few node edits on 1,000 and on 100,000 nodes: the same bytes kept.
        std::vector<size_t> bytes;
        for (int nodes : {1000, 100000}) {
            std::mt19937 random(3);
            const TopologyGraph before =
                graphFromCluster(test::clusterPreset("dgx-h100", nodes, 32));
            TopologyGraph after = before;
            scatterEdits(&after, &random, 8);
            after.editNodeSpecs([](NodeSpec& spec) { spec.nics = 4; });
            const GraphDelta delta = GraphDelta::between(before, after);
            bytes.push_back(delta.bytes());
            QVERIFY2(delta.bytes() < 32 * 1024, qPrintable(QString::number(delta.bytes())));
        }
        QCOMPARE(bytes[0], bytes[1]);
    }
};

QTEST_MAIN(TestTopologyEquality)
#include "tst_topologyequality.moc"
