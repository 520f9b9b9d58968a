// The undo history of drawing edits: each step keeps what its edit changed, never a copy of
// the drawing, so its size does not grow with the cluster; undo and redo after many edits of
// a large plan restore every drawing and cluster exactly.
#include "clusterio.h"
#include "plandocument.h"
#include "testplans.h"
#include "topologydelta.h"
#include "topologyeditor.h"

#include <QTest>

#include <memory>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

// One state of the plan: its cluster and drawing (a copy of the drawing, or none).
struct State
{
    ClusterSpec cluster;
    std::shared_ptr<const TopologyGraph> drawing;
};

State stateOf(const PlanDocument& document)
{
    const Plan& plan = document.plan();
    return {plan.cluster,
            plan.drawing ? std::make_shared<const TopologyGraph>(*plan.drawing) : nullptr};
}

bool same(const State& state, const PlanDocument& document)
{
    const Plan& plan = document.plan();
    if (!(plan.cluster == state.cluster) || !plan.drawing != !state.drawing)
        return false;
    return !plan.drawing || *plan.drawing == *state.drawing;
}

// A series of edits through the editor's document and the plan: moves, renames, what-ifs,
// node-type properties, added and deleted nodes, a drag (merged steps), and a plan edit of the
// cluster that leaves the drawing behind. Records the state after each step.
std::vector<State> editAll(PlanDocument* plan, TopologyDocument* topology)
{
    std::vector<State> states{stateOf(*plan)};
    auto node = [topology](size_t index) { return topology->graph().nodes[index].id; };
    const int first = node(0);
    const int middle = node(topology->graph().nodes.size() / 2);
    const int last = node(topology->graph().nodes.size() - 1);
    topology->edit("move", 0, [=](TopologyGraph& g) {
        g.node(first)->x += 30;
        g.node(last)->y += 10;
    });
    states.push_back(stateOf(*plan));
    for (int step = 1; step <= 4; ++step) // a drag: one step
        topology->edit("drag", 77, [=](TopologyGraph& g) { g.node(middle)->x += 5; });
    states.push_back(stateOf(*plan));
    topology->edit("rename", 0, [=](TopologyGraph& g) { g.node(middle)->name = "spare"; });
    states.push_back(stateOf(*plan));
    topology->edit("NICs at 50%", 0, [=](TopologyGraph& g) { g.node(last)->nic_factor = 0.5; });
    states.push_back(stateOf(*plan));
    topology->edit("uplink", 0, [](TopologyGraph& g) { g.racks.back().uplink_factor = 0.5; });
    states.push_back(stateOf(*plan));
    topology->edit("NIC rate", 0, [](TopologyGraph& g) {
        g.editNodeSpecs([](NodeSpec& spec) { spec.nic_GBps = userEntry(25, "test entry"); });
    });
    states.push_back(stateOf(*plan));
    topology->edit("delete", 0, [=](TopologyGraph& g) {
        g.nodes.erase(g.nodes.begin() + static_cast<long>(g.nodes.size() / 3));
        g.nodes.erase(g.nodes.begin() + 1);
    });
    states.push_back(stateOf(*plan));
    topology->edit("add", 0, [](TopologyGraph& g) {
        TopoNode added = g.nodes.back();
        added.id = g.takeId();
        added.name = "added";
        g.nodes.push_back(added);
    });
    states.push_back(stateOf(*plan));
    // A cluster edit elsewhere: the drawing no longer describes the cluster and is dropped.
    plan->edit("racks", Field::ClusterRack,
               [](Plan& p) { p.cluster.network.nodes_per_rack = p.cluster.nodes / 2; });
    states.push_back(stateOf(*plan));
    topology->edit("move again", 0, [](TopologyGraph& g) { g.nodes.front().x += 1; });
    states.push_back(stateOf(*plan));
    return states;
}

} // namespace

class TestTopologyHistory : public QObject
{
    Q_OBJECT

private slots:
    void undoAndRedoRestoreALargePlanExactly()
    {
        PlanDocument plan;
        Plan start = examplePlan();
        start.cluster = test::clusterPreset("dgx-h100", 20000, 32); // 160,000 GPUs
        plan.reset(start, QString());
        TopologyDocument topology;
        topology.attach(&plan);
        const std::vector<State> states = editAll(&plan, &topology);
        QUndoStack* undo = plan.undoStack();
        QCOMPARE(undo->count(), static_cast<int>(states.size()) - 1);
        QVERIFY(!states[states.size() - 2].drawing); // the cluster edit dropped the drawing
        for (int k = undo->count(); k-- > 0;) {
            undo->undo();
            QVERIFY2(same(states[static_cast<size_t>(k)], plan), qPrintable(QString::number(k)));
            // The editor shows the plan's drawing (or the cluster laid out when there is none).
            QVERIFY(topology.graph() == graphForPlan(plan.plan(), HardwareCatalog::bundled()));
        }
        for (int k = 1; k <= undo->count(); ++k) {
            undo->redo();
            QVERIFY2(same(states[static_cast<size_t>(k)], plan), qPrintable(QString::number(k)));
        }
        // Half way back and forth again: the steps rebuild from whatever the plan shows.
        for (int k = 0; k < 5; ++k)
            undo->undo();
        QVERIFY(same(states[states.size() - 6], plan));
        undo->redo();
        QVERIFY(same(states[states.size() - 5], plan));
    }

    void theHistoryDoesNotGrowWithTheCluster()
    {
        // The same edits on 125 and on 125,000 nodes (1,000 and 1,000,000 GPUs): the history
        // holds about the same bytes, and far less than one drawing.
        std::vector<size_t> bytes;
        for (int nodes : {125, 125000}) {
            PlanDocument plan;
            Plan start = examplePlan();
            start.cluster = test::clusterPreset("dgx-h100", nodes, 32);
            plan.reset(start, QString());
            TopologyDocument topology;
            topology.attach(&plan);
            editAll(&plan, &topology);
            bytes.push_back(plan.historyBytes());
            qInfo("%d nodes: %d undo steps hold %zu bytes", nodes, plan.undoStack()->count(),
                  plan.historyBytes());
        }
        // Ten steps on a million GPUs: the same bytes as on a thousand, and under a fiftieth
        // of the node records of one drawing (a copy per step would be ten drawings).
        QCOMPARE(bytes[1], bytes[0]);
        QVERIFY2(bytes[1] * 50 < 125000 * sizeof(TopoNode), qPrintable(QString::number(bytes[1])));
    }

    void aLongMergedDragUndoesInOneStep()
    {
        // On a fresh plan (no drawing yet: the drag's step keeps the drawing against the
        // cluster's layout), a 300-tick drag of two nodes, one joining another rack half way;
        // a node-type edit; a second drag whose ticks also add, delete and re-spec nodes
        // (merged steps of any content); a rename. Each drag is one step, and undo and redo
        // restore every state exactly.
        PlanDocument plan;
        Plan start = examplePlan();
        start.cluster = test::clusterPreset("dgx-h100", 4000, 32); // 32,000 GPUs
        plan.reset(start, QString());
        TopologyDocument topology;
        topology.attach(&plan);
        std::vector<State> states{stateOf(plan)};
        const int a = topology.graph().nodes[5].id;
        const int b = topology.graph().nodes[3000].id;
        const int otherRack = topology.graph().racks[7].id;
        const double startX = topology.graph().node(a)->x;
        for (int tick = 0; tick < 300; ++tick)
            topology.edit("drag", 31, [=](TopologyGraph& g) {
                g.node(a)->x += 1;
                g.node(b)->y -= 2;
                if (tick == 150)
                    g.node(b)->rack = otherRack;
            });
        states.push_back(stateOf(plan));
        QCOMPARE(plan.undoStack()->count(), 1);
        QCOMPARE(plan.plan().drawing->node(a)->x, startX + 300);
        topology.edit("NIC rate", 0, [](TopologyGraph& g) {
            g.editNodeSpecs([](NodeSpec& spec) { spec.nic_GBps = userEntry(30, "test entry"); });
        });
        states.push_back(stateOf(plan));
        for (int tick = 0; tick < 60; ++tick)
            topology.edit("drag", 32, [=](TopologyGraph& g) {
                g.node(a)->y += 1;
                if (tick % 20 == 3) { // a copy of a node added in the middle
                    TopoNode added = g.nodes[100];
                    added.id = g.takeId();
                    g.nodes.insert(g.nodes.begin() + 200, added);
                }
                if (tick % 20 == 9) // one deleted
                    g.nodes.erase(g.nodes.begin() + 1000 + tick);
                if (tick % 20 == 15) // one node given a spec of its own
                    g.nodes[2000 + static_cast<size_t>(tick)].spec.edit().nics += 1;
            });
        states.push_back(stateOf(plan));
        topology.edit("rename", 0, [=](TopologyGraph& g) { g.node(a)->name = "dragged"; });
        states.push_back(stateOf(plan));
        QUndoStack* undo = plan.undoStack();
        QCOMPARE(undo->count(), static_cast<int>(states.size()) - 1);
        for (int round = 0; round < 2; ++round) {
            for (int k = undo->count(); k-- > 0;) {
                undo->undo();
                QVERIFY2(same(states[static_cast<size_t>(k)], plan),
                         qPrintable(QString::number(k)));
                QVERIFY(topology.graph() == graphForPlan(plan.plan(), HardwareCatalog::bundled()));
            }
            QVERIFY(!plan.plan().drawing); // before the first drag: no drawing
            for (int k = 1; k <= undo->count(); ++k) {
                undo->redo();
                QVERIFY2(same(states[static_cast<size_t>(k)], plan),
                         qPrintable(QString::number(k)));
            }
        }
    }

    void aMergedDragOnItsOwnRestoresExactly()
    {
        // A document without a plan: a drag merged of moves, an added and a deleted node and
        // a rack, between two plain edits; undone in one step, redone in one.
        TopologyDocument topology;
        const TopologyGraph start = graphFromCluster(test::clusterPreset("dgx-h100", 512, 16));
        topology.reset(start);
        topology.edit("move", 0, [](TopologyGraph& g) { g.nodes[7].x += 3; });
        const TopologyGraph beforeDrag = topology.graph();
        for (int tick = 0; tick < 100; ++tick)
            topology.edit("drag", 6, [tick](TopologyGraph& g) {
                g.nodes[40].x += 1;
                if (tick == 10)
                    g.nodes.erase(g.nodes.begin() + 300);
                if (tick == 50) {
                    TopoRack rack;
                    rack.id = g.takeId();
                    g.racks.insert(g.racks.begin() + 2, rack);
                    TopoNode node = g.nodes[0];
                    node.id = g.takeId();
                    node.rack = rack.id;
                    g.nodes.push_back(node);
                }
            });
        const TopologyGraph afterDrag = topology.graph();
        topology.edit("rename", 0, [](TopologyGraph& g) { g.nodes[40].name = "n"; });
        const TopologyGraph end = topology.graph();
        QUndoStack* undo = topology.undoStack();
        QCOMPARE(undo->count(), 3);
        undo->undo();
        QVERIFY(topology.graph() == afterDrag);
        undo->undo();
        QVERIFY(topology.graph() == beforeDrag);
        undo->undo();
        QVERIFY(topology.graph() == start);
        undo->redo();
        undo->redo();
        QVERIFY(topology.graph() == afterDrag);
        undo->redo();
        QVERIFY(topology.graph() == end);
    }

    void aDocumentOnItsOwnKeepsDeltasToo()
    {
        TopologyDocument topology;
        const TopologyGraph start = graphFromCluster(test::clusterPreset("dgx-h100", 64, 8));
        topology.reset(start);
        const int id = start.nodes[10].id;
        topology.edit("move", 0, [id](TopologyGraph& g) { g.node(id)->x += 3; });
        const TopologyGraph moved = topology.graph();
        for (int step = 0; step < 3; ++step) // merged
            topology.edit("drag", 5, [id](TopologyGraph& g) { g.node(id)->y += 2; });
        topology.edit("spec", 0, [](TopologyGraph& g) {
            g.editNodeSpecs([](NodeSpec& spec) { spec.nics = 2; });
        });
        const TopologyGraph end = topology.graph();
        QCOMPARE(topology.undoStack()->count(), 3);
        topology.undoStack()->undo();
        topology.undoStack()->undo();
        QVERIFY(topology.graph() == moved);
        topology.undoStack()->undo();
        QVERIFY(topology.graph() == start);
        topology.undoStack()->redo();
        topology.undoStack()->redo();
        topology.undoStack()->redo();
        QVERIFY(topology.graph() == end);
    }
};

QTEST_MAIN(TestTopologyHistory)
#include "tst_topologyhistory.moc"
