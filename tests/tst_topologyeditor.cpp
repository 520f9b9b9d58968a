// The topology editor: the graph model and its conversions, generators, every edit undoable,
// files, the plan overlay on the right GPUs, link reports, and what-ifs reaching the plan.
#include "clusterio.h"
#include "inputpanel.h"
#include "mainwindow.h"
#include "plandocument.h"
#include "planevaluator.h"
#include "planio.h"
#include "plots.h"
#include "practicepanel.h"
#include "summary.h"
#include "tablemodels.h"
#include "testdata.h"
#include "testplans.h"
#include "topologyeditor.h"
#include "topologyitems.h"

#include <QCheckBox>
#include <QDir>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QLabel>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

template <typename Item> int itemsOf(const TopologyEditor& editor)
{
    int count = 0;
    for (QGraphicsItem* item : editor.scene()->items())
        count += dynamic_cast<Item*>(item) != nullptr;
    return count;
}

// What the scene shows, item by item (racks with their frames and selection, nodes with their
// positions and selection, the spine's reach), sorted: two editors showing the same drawing
// have the same signature however their scenes were built.
QStringList sceneSignature(const TopologyEditor& editor)
{
    QStringList lines;
    auto rect = [](const QRectF& r) {
        return QString("%1,%2,%3,%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
    };
    for (QGraphicsItem* item : editor.scene()->items()) {
        if (auto* rack = dynamic_cast<RackItem*>(item))
            lines << QString("rack %1 %2 %3")
                         .arg(rack->id())
                         .arg(rect(rack->area()))
                         .arg(rack->isSelected());
        else if (auto* node = dynamic_cast<NodeItem*>(item))
            lines << QString("node %1 %2,%3 %4")
                         .arg(node->id())
                         .arg(node->pos().x())
                         .arg(node->pos().y())
                         .arg(node->isSelected());
        else if (dynamic_cast<SpineItem*>(item))
            lines << QString("spine %1").arg(rect(item->boundingRect()));
        else
            lines << QString("item %1").arg(rect(item->sceneBoundingRect()));
    }
    lines << QString("scene %1").arg(rect(editor.scene()->sceneRect()));
    lines.sort();
    return lines;
}

// Marks the rack items the scene holds now; `marked` counts those still there.
void markRacks(const TopologyEditor& editor)
{
    for (QGraphicsItem* item : editor.scene()->items())
        if (dynamic_cast<RackItem*>(item))
            item->setData(0, true);
}

int marked(const TopologyEditor& editor)
{
    int count = 0;
    for (QGraphicsItem* item : editor.scene()->items())
        count += dynamic_cast<RackItem*>(item) && item->data(0).toBool();
    return count;
}

// The view's Fit scale: the scene rect in the room the view has without scroll bars.
double fitScale(const QGraphicsView& view)
{
    const QRectF rect = view.sceneRect();
    const QSize room = view.maximumViewportSize() - QSize(4, 4);
    return std::min(room.width() / rect.width(), room.height() / rect.height());
}

// Shows `window` at a desktop size on a tab other than Topology, then the Topology tab.
void showTopologyTab(MainWindow* window)
{
    auto* tabs = window->findChild<QTabWidget*>();
    TopologyEditor* editor = window->topologyEditor();
    int topology = -1;
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->widget(i) == editor || tabs->widget(i)->isAncestorOf(editor))
            topology = i;
    QVERIFY(topology > 0);
    tabs->setCurrentIndex(0);
    window->resize(1280, 800);
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window));
    QCoreApplication::processEvents();
    tabs->setCurrentIndex(topology);
    QCoreApplication::processEvents();
}

// Dark (text) pixels of the view's picture inside `sceneBox`, its frame left out.
int darkPixelsIn(QGraphicsView* view, const QRectF& sceneBox)
{
    const QImage image = view->viewport()->grab().toImage();
    const QRect box = view->mapFromScene(sceneBox).boundingRect().adjusted(5, 5, -5, -5);
    int dark = 0;
    for (int y = std::max(0, box.top()); y <= std::min(image.height() - 1, box.bottom()); ++y)
        for (int x = std::max(0, box.left()); x <= std::min(image.width() - 1, box.right()); ++x)
            dark += qGray(image.pixel(x, y)) < 80;
    return dark;
}
} // namespace

class TestTopologyEditor : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void clustersRoundTripThroughTheGraph_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<int>("nodes");
        for (const char* id :
             {"dgx-a100", "dgx-h100", "dgx-h200", "hgx-b200", "pcie-h100", "a100-nvlink-mesh"})
            QTest::newRow(id) << QString(id) << 40;
        QTest::newRow("tpu-v4-pod") << "tpu-v4-pod" << 256;
    }
    void clustersRoundTripThroughTheGraph()
    {
        QFETCH(QString, id);
        QFETCH(int, nodes);
        ClusterSpec cluster =
            test::clusterPreset(id.toUtf8().constData(), nodes, id == "tpu-v4-pod" ? -1 : 16, 2);
        const TopologyGraph graph = graphFromCluster(cluster);
        ClusterSpec back;
        std::string error;
        QVERIFY2(clusterFromGraph(graph, &back, &error, HardwareCatalog::bundled()), error.c_str());
        QCOMPARE(QString::fromStdString(clusterToJsonText(back)),
                 QString::fromStdString(clusterToJsonText(cluster)));
        if (!cluster.is_torus) {
            QCOMPARE(graph.racks.size(), size_t(3)); // 16 + 16 + 8
            QCOMPARE(graph.nodes.size(), size_t(40));
        }
    }

    void generators()
    {
        TopologyGraph fat;
        std::string error;
        QVERIFY(generateFatTree("dgx-h100", 64, 32, 2, &fat, &error, HardwareCatalog::bundled()));
        QCOMPARE(fat.racks.size(), size_t(2));
        QCOMPARE(fat.nodes.size(), size_t(64));
        QCOMPARE(fat.gpuCount(), 512LL);
        ClusterSpec cluster;
        QVERIFY(clusterFromGraph(fat, &cluster, &error, HardwareCatalog::bundled()));
        QCOMPARE(cluster.network.nodes_per_rack, 32);
        QCOMPARE(cluster.network.spine_oversubscription.value, 2.0);
        TopologyGraph torus;
        QVERIFY(generateTorus(4, 4, 8, &torus, &error, HardwareCatalog::bundled()));
        QVERIFY(clusterFromGraph(torus, &cluster, &error, HardwareCatalog::bundled()));
        QVERIFY(cluster.is_torus);
        QCOMPARE(cluster.totalGpus(), 128LL);
        QCOMPARE(cluster.torus.dims, (std::array<int, 3>{4, 4, 8}));
        QVERIFY(!generateFatTree("dgx-h100", 0, 32, 2, &fat, &error, HardwareCatalog::bundled()));
        QVERIFY(!generateFatTree("dgx-h100", 8, 4, 0.5, &fat, &error, HardwareCatalog::bundled()));
        QVERIFY(!generateTorus(0, 4, 4, &torus, &error, HardwareCatalog::bundled()));
    }

    void unlikeNodesAndUnevenRacksAreNamed()
    {
        TopologyGraph graph = graphFromCluster(test::clusterPreset("dgx-h100", 8, 4));
        graph.nodes[3].spec.edit().gpus = 4;
        ClusterSpec cluster;
        std::string error;
        QVERIFY(!clusterFromGraph(graph, &cluster, &error, HardwareCatalog::bundled()));
        QVERIFY(QString::fromStdString(error).contains("identical nodes"));
        graph = graphFromCluster(test::clusterPreset("dgx-h100", 12, 4));
        graph.nodes[0].rack = graph.racks[1].id; // 3 + 5 + 4
        QVERIFY(!clusterFromGraph(graph, &cluster, &error, HardwareCatalog::bundled()));
        QVERIFY(QString::fromStdString(error).contains("racks hold different numbers"));
    }

    void theWorstWhatIfLimitsTheCluster()
    {
        TopologyGraph graph = graphFromCluster(test::clusterPreset("dgx-h100", 8, 4));
        graph.nodes[5].switch_in_service[1] = false;
        graph.nodes[2].nic_factor = 0.5;
        graph.racks[1].uplink_factor = 0.25;
        ClusterSpec cluster;
        std::string error;
        QVERIFY(clusterFromGraph(graph, &cluster, &error, HardwareCatalog::bundled()));
        QCOMPARE(cluster.what_if.nvswitch_chips_out, std::vector<int>{1});
        QCOMPARE(cluster.what_if.nic_factor, 0.5);
        QCOMPARE(cluster.what_if.spine_factor, 0.25);
    }

    void nodesShareOneSpecAndReadBackTheSameCluster()
    {
        // Every bundled example's cluster (and a million-GPU one) laid out as a drawing and read
        // back is the same cluster, JSON for JSON; the drawing's nodes share one spec.
        std::vector<ClusterSpec> clusters{test::clusterPreset("dgx-h100", 125000, 32)};
        const QDir examples(test::dataPath("../../resources/examples"));
        for (const QString& name : examples.entryList({"*.paraplan.json"})) {
            Plan plan;
            std::vector<std::string> errors;
            QVERIFY2(loadPlan(examples.filePath(name).toStdString(), &plan, &errors,
                              HardwareCatalog::bundled()),
                     qPrintable(name));
            clusters.push_back(plan.cluster);
        }
        QVERIFY(clusters.size() >= 4);
        for (const ClusterSpec& cluster : clusters) {
            TopologyGraph graph = graphFromCluster(cluster);
            for (const TopoNode& n : graph.nodes)
                QVERIFY(n.spec.sharedWith(graph.nodes.front().spec));
            ClusterSpec back;
            std::string error;
            QVERIFY2(clusterFromGraph(graph, &back, &error, HardwareCatalog::bundled()),
                     error.c_str());
            QCOMPARE(clusterToJsonText(back), clusterToJsonText(cluster));
        }
        // A change to every node's spec is made once and still shared; one node's own change
        // leaves the others alone (and is a cluster of unlike nodes).
        TopologyGraph graph = graphFromCluster(test::clusterPreset("dgx-h100", 64, 32));
        graph.editNodeSpecs([](NodeSpec& spec) { spec.nics = 4; });
        for (const TopoNode& n : graph.nodes) {
            QCOMPARE(n.spec->nics, 4);
            QVERIFY(n.spec.sharedWith(graph.nodes.front().spec));
        }
        graph.nodes[5].spec.edit().nics = 2;
        QCOMPARE(graph.nodes[4].spec->nics, 4);
        QCOMPARE(graph.nodes[5].spec->nics, 2);
        ClusterSpec back;
        std::string error;
        QVERIFY(!clusterFromGraph(graph, &back, &error, HardwareCatalog::bundled()));
        QVERIFY2(QString::fromStdString(error).contains("node 5 differs"), error.c_str());
    }

    void aLargeClusterIsDrawnInPartAndSaysSo()
    {
        // 8,192 nodes in 256 racks: fitted to the window every rack is one box with its
        // counts and no node is an item; the status line says how much is drawn, and the
        // cluster read back is still the whole of it.
        TopologyEditor editor;
        editor.resize(1280, 800);
        editor.show();
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 8192, 32)));
        editor.fitToWindow();
        editor.updateDetail();
        QCOMPARE(itemsOf<NodeItem>(editor), 0);
        QCOMPARE(itemsOf<RackItem>(editor), 256);
        QVERIFY2(editor.statusText().contains("Drawn: 0 of the nodes and 256 of the racks"),
                 qPrintable(editor.statusText()));
        ClusterSpec cluster;
        std::string message;
        QVERIFY(clusterFromGraph(editor.document()->graph(), &cluster, &message,
                                 HardwareCatalog::bundled()));
        QCOMPARE(cluster.nodes, 8192);
        // A small cluster is drawn whole, without the note.
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 8, 4)));
        QCOMPARE(itemsOf<NodeItem>(editor), 8);
        QVERIFY(!editor.statusText().contains("Drawn:"));
    }

    void theAggregatedViewExpandsOnZoom()
    {
        // Zoomed in on one rack of a large cluster, the racks in view get their node items
        // (by the view's own scroll signals, no call needed); zoomed out, they fold again.
        TopologyEditor editor;
        editor.resize(1280, 800);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 8192, 32)));
        editor.fitToWindow();
        QTRY_COMPARE(itemsOf<NodeItem>(editor), 0);
        const TopoRack rack = editor.document()->graph().racks[70];
        editor.view()->resetTransform();
        editor.view()->centerOn(rack.x + 300, rack.y + 200);
        QTRY_VERIFY(itemsOf<NodeItem>(editor) > 0);
        const int drawn = itemsOf<NodeItem>(editor);
        QVERIFY2(drawn <= 2048, qPrintable(QString::number(drawn)));
        // Rack 70's own nodes are among them, at their places in the graph.
        QList<int> inRack;
        for (const TopoNode* n : editor.document()->graph().nodesInRack(rack.id))
            inRack.append(n->id);
        int found = 0;
        for (QGraphicsItem* item : editor.scene()->items()) {
            if (auto* node = dynamic_cast<NodeItem*>(item))
                found += inRack.contains(node->id());
        }
        QCOMPARE(found, 32);
        QVERIFY2(editor.statusText().contains(QString("Drawn: %1 of the nodes").arg(drawn)),
                 qPrintable(editor.statusText()));
        editor.fitToWindow();
        QTRY_COMPARE(itemsOf<NodeItem>(editor), 0);
    }

    void editsOnAnAggregateRackWork()
    {
        // A collapsed rack is selected, given a node, and deleted like a drawn one; undo
        // brings every node back.
        TopologyEditor editor;
        editor.resize(1280, 800);
        editor.show();
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 8192, 32)));
        editor.fitToWindow();
        editor.updateDetail();
        const int rackId = editor.document()->graph().racks[100].id;
        const auto selectRack = [&] {
            for (QGraphicsItem* item : editor.scene()->items()) {
                if (auto* rack = dynamic_cast<RackItem*>(item))
                    rack->setSelected(rack->id() == rackId);
            }
        };
        selectRack();
        QCOMPARE(itemsOf<NodeItem>(editor), 0);
        editor.addNode();
        const TopologyGraph& g = editor.document()->graph();
        QCOMPARE(g.nodes.size(), size_t(8193));
        QCOMPARE(g.nodes.back().rack, rackId);
        QCOMPARE(g.nodesInRack(rackId).size(), size_t(33));
        editor.document()->undoStack()->undo();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(8192));
        selectRack();
        editor.deleteSelection();
        QCOMPARE(editor.document()->graph().racks.size(), size_t(255));
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(8192 - 32));
        QVERIFY(!editor.document()->graph().rack(rackId));
        editor.document()->undoStack()->undo();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(8192));
        QVERIFY(editor.document()->graph().rack(rackId));
    }

    void aMillionGpuClusterKeepsTheSceneBounded()
    {
        // 125,000 DGX H100 nodes (1,000,000 GPUs) in 3,907 racks: one item per rack, node
        // items only for the racks in view when zoomed in, never more than 2,048 of them.
        TopologyEditor editor;
        editor.resize(1280, 800);
        editor.show();
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 125000, 32)));
        QCOMPARE(editor.document()->graph().gpuCount(), 1000000LL);
        editor.fitToWindow();
        editor.updateDetail();
        QCOMPARE(itemsOf<RackItem>(editor), 3907);
        QCOMPARE(itemsOf<NodeItem>(editor), 0);
        QVERIFY(editor.scene()->items().size() <= 3907 + 2048 + 8);
        for (const double zoom : {0.2, 0.5, 1.0}) {
            const TopoRack& rack = editor.document()->graph().racks[2000];
            editor.view()->setTransform(QTransform::fromScale(zoom, zoom));
            editor.view()->centerOn(rack.x + 300, rack.y + 200);
            editor.updateDetail();
            const int nodes = itemsOf<NodeItem>(editor);
            QVERIFY2(nodes > 0 && nodes <= 2048, qPrintable(QString::number(nodes)));
            QVERIFY(editor.scene()->items().size() <= 3907 + 2048 + 8);
        }
    }

    void fitShowsTheWholeSceneWithoutScrollBars_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<int>("nodes");
        QTest::newRow("1 GPU") << "tpu-v4-pod" << 1;
        QTest::newRow("8 GPUs") << "dgx-h100" << 1;
        QTest::newRow("1,024 GPUs") << "dgx-h100" << 128;
        QTest::newRow("131,072 GPUs") << "dgx-h100" << 16384;
        QTest::newRow("1,000,000 GPUs") << "dgx-h100" << 125000;
    }
    void fitShowsTheWholeSceneWithoutScrollBars()
    {
        QFETCH(QString, id);
        QFETCH(int, nodes);
        for (const QSize size : {QSize(1280, 800), QSize(900, 1100)}) {
            TopologyEditor editor;
            editor.resize(size);
            editor.show();
            QVERIFY(QTest::qWaitForWindowExposed(&editor));
            editor.document()->reset(graphFromCluster(
                test::clusterPreset(id.toUtf8().constData(), nodes, id == "tpu-v4-pod" ? -1 : 32)));
            QCoreApplication::processEvents(); // the status line and level of detail settle
            editor.fitToWindow();
            QCoreApplication::processEvents();
            QGraphicsView* view = editor.view();
            QVERIFY2(!view->horizontalScrollBar()->isVisible(), qPrintable(id));
            QVERIFY2(!view->verticalScrollBar()->isVisible(), qPrintable(id));
            // The whole scene is in view.
            const QRectF shown = view->mapToScene(view->viewport()->rect()).boundingRect();
            const QRectF items = editor.scene()->itemsBoundingRect();
            QVERIFY2(shown.adjusted(-1, -1, 1, 1).contains(items), qPrintable(id));
        }
    }

    void aMillionGpuPlanOpensFittedInTheWindow()
    {
        // As a plan opens on the Topology tab: the window lays out after the fit (the status
        // line wraps), and the drawing stays fitted, with no scroll bar.
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* tabs = window.findChild<QTabWidget*>();
        QVERIFY(tabs);
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->widget(i)->isAncestorOf(window.topologyEditor()) ||
                tabs->widget(i) == window.topologyEditor())
                tabs->setCurrentIndex(i);
        Plan plan = window.document()->plan();
        plan.cluster = test::clusterPreset("dgx-h100", 125000, 32);
        window.document()->reset(plan, QString());
        QTest::qWait(300);
        QGraphicsView* view = window.topologyEditor()->view();
        QVERIFY(view->isVisible());
        QVERIFY(!view->horizontalScrollBar()->isVisible());
        QVERIFY(!view->verticalScrollBar()->isVisible());
        const QRectF shown = view->mapToScene(view->viewport()->rect()).boundingRect();
        QVERIFY(shown.adjusted(-1, -1, 1, 1).contains(view->scene()->itemsBoundingRect()));
    }

    // The million-GPU plan of the bench (1,000,000 H100s: tp8 pp4 dp31250, ZeRO-1), shown.
    static void openAMillionGpuPlan(MainWindow& window)
    {
        Plan plan = window.document()->plan();
        plan.cluster = test::clusterPreset("dgx-h100", 125000, 32);
        plan.parallel = test::layout(8, 4, 31250, 1, 125000, 1);
        window.document()->reset(plan, QString());
        QTRY_VERIFY_WITH_TIMEOUT(window.evaluator()->latest() &&
                                     window.evaluator()->latest()->plan.parallel.gpus() == 1000000,
                                 20000);
        QCoreApplication::processEvents(); // the window shows what the evaluator emitted
    }

    void aMillionGpusAreWrittenWithThousandsSeparators()
    {
        MainWindow window(false);
        openAMillionGpuPlan(window);
        QVERIFY2(window.statusText().contains("on 1,000,000 GPUs."),
                 qPrintable(window.statusText()));
        QVERIFY2(window.topologyEditor()->statusText().contains(
                     "3,907 racks, 125,000 nodes, 1,000,000 GPUs."),
                 qPrintable(window.topologyEditor()->statusText()));
        QStringList labels;
        for (const QLabel* label : window.inputPanel()->findChildren<QLabel*>())
            labels << label->text();
        const QString panel = labels.join('\n');
        QVERIFY2(panel.contains("125,000 x 8 = 1,000,000 NVIDIA H100"), qPrintable(panel));
        QVERIFY2(panel.contains("TP x PP x DP x CP = 1,000,000 of 1,000,000 GPUs"),
                 qPrintable(panel));
        // The Step time table: the DP group's ranks shown grouped, sorted by the raw count.
        CollectivesModel* collectives = window.collectivesModel();
        bool dpRanks = false;
        for (int row = 0; row < collectives->rowCount(); ++row) {
            const QModelIndex ranks = collectives->index(row, CollectivesModel::Ranks);
            if (ranks.data(Qt::UserRole).toInt() == 31250) {
                QCOMPARE(ranks.data().toString(), QString("31,250"));
                dpRanks = true;
            }
        }
        QVERIFY(dpRanks);
        QVERIFY(window.derivationText().contains("on 1,000,000 x NVIDIA H100"));
        QVERIFY(window.derivationText().contains("dp 31,250)"));
        QVERIFY(window.plots()[3]->seriesNames().contains(
            "assumed, across racks (125,000 nodes x 1 GPU)"));
        bool stride = false;
        for (const PracticeQuestion& q : window.practicePanel()->questions())
            stride = stride || QString::fromStdString(q.prompt).contains("(GPU stride 250,000");
        QVERIFY(stride);
        const auto* context = window.practicePanel()->findChild<QLabel*>("practiceContext");
        QVERIFY2(context->text().contains("on 1,000,000 GPUs") &&
                     context->text().contains("dp 31,250"),
                 qPrintable(context->text()));
        QCOMPARE(formatDays(1179.44 * 86400), std::string("1,179.4 days"));
        QCOMPARE(formatDays(0.2 * 86400), std::string("4.8 hours"));
    }

    void aTinyOptimizerShareIsNotShownAsZero()
    {
        // ZeRO-1 over 31,250 ranks: a few MB of optimizer state a GPU, not "0.00" GiB.
        MainWindow window(false);
        openAMillionGpuPlan(window);
        MemoryModel* memory = window.memoryModel();
        QVERIFY(memory->rowCount() == 4);
        for (int row = 0; row < memory->rowCount(); ++row) {
            const QModelIndex optimizer = memory->index(row, MemoryModel::Optimizer);
            const double bytes = optimizer.data(Qt::UserRole).toDouble();
            QVERIFY(bytes > 0 && bytes < 0.005 * (1ull << 30));
            QCOMPARE(optimizer.data().toString(), QString("<0.01"));
            QVERIFY(optimizer.data(Qt::ToolTipRole).toString().endsWith(" GiB"));
            QVERIFY(memory->index(row, MemoryModel::Weights).data().toString() != "<0.01");
        }
    }

    void aDrawingThatCannotBeModelledGreysTheHeadline()
    {
        // One node of the million-GPU drawing deleted: racks then hold 32 and 31 nodes. The
        // figures are the last cluster's, greyed with the reason, as for a rule error.
        MainWindow window(false);
        openAMillionGpuPlan(window);
        QVERIFY(window.staleText().isEmpty());
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        TopologyDocument* drawing = window.topologyEditor()->document();
        const int rack = drawing->graph().racks[1].id;
        drawing->edit("Delete 1 node(s), 0 rack(s)", 0, [rack](TopologyGraph& graph) {
            const auto it = std::find_if(graph.nodes.begin(), graph.nodes.end(),
                                         [rack](const TopoNode& n) { return n.rack == rack; });
            graph.nodes.erase(it);
        });
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 20000);
        const QString stale = window.staleText();
        QVERIFY2(stale.contains("Not updated") &&
                     stale.contains("racks hold different numbers of nodes (32 and 31)"),
                 qPrintable(stale));
        QVERIFY(window.headlineText().contains("#9a9a9a"));
        QVERIFY(!window.headlineText().contains("#0b3c5d"));
        const QString status = window.topologyEditor()->statusText();
        QVERIFY2(status.contains("partly filled.</span> Drawn:"), qPrintable(status));
        // Undo: the drawing is a cluster again, the headline fresh.
        window.document()->undoStack()->undo();
        QTRY_VERIFY_WITH_TIMEOUT(window.staleText().isEmpty(), 20000);
        QVERIFY(window.headlineText().contains("#0b3c5d"));
    }

    void everyEditIsUndoable()
    {
        TopologyEditor editor;
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 8, 4)));
        QUndoStack* undo = editor.document()->undoStack();
        editor.addNode();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(9));
        editor.addRack();
        QCOMPARE(editor.document()->graph().racks.size(), size_t(3));
        undo->undo();
        undo->undo();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(8));
        QCOMPARE(editor.document()->graph().racks.size(), size_t(2));
        undo->redo();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(9));
        undo->undo();

        // Delete a node and a whole rack; undo restores them with their IDs.
        const std::vector<int> ids = [&] {
            std::vector<int> out;
            for (const TopoNode& n : editor.document()->graph().nodes)
                out.push_back(n.id);
            return out;
        }();
        editor.selectNodes({ids[0], ids[5]});
        QCOMPARE(editor.selectedNodeIds().size(), 2);
        editor.deleteSelection();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(6));
        undo->undo();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(8));
        QVERIFY(editor.document()->graph().node(ids[5]));

        // Copy and paste two nodes.
        editor.selectNodes({ids[1], ids[2]});
        editor.copySelection();
        editor.paste();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(10));
        undo->undo();
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(8));

        // Node-type properties apply to every node and reach the cluster.
        editor.selectNodes({});
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        auto* nics = editor.findChild<QSpinBox*>("nicsPerNode");
        QVERIFY(nics);
        nics->setValue(4);
        ClusterSpec withFour;
        QString message;
        QVERIFY(editor.document()->cluster(&withFour, &message));
        QCOMPARE(withFour.node.nics, 4);
        undo->undo();
        QCOMPARE(editor.document()->graph().nodes.back().spec->nics, 8);

        // A property change is one step.
        editor.selectNodes({ids[3]});
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        auto* chip = editor.findChild<QCheckBox*>("chip0");
        QVERIFY(chip);
        chip->setChecked(false);
        QVERIFY(!editor.document()->graph().node(ids[3])->switch_in_service[0]);
        undo->undo();
        QVERIFY(editor.document()->graph().node(ids[3])->switch_in_service[0]);
    }

    void aSmallEditRedrawsItsRacksAsAFullBuildWould()
    {
        // Small edits (a drag's ticks, a node's what-if, a node moved out of its rack's frame)
        // redraw only their racks; larger ones (a node added) rebuild the scene. Either way
        // the scene shows what an editor opened on the result shows, selection kept. On its
        // own the editor finds what changed; attached to a plan, the document tells it.
        for (int run = 0; run < 4; ++run) {
            const int nodes = run % 2 ? 4000 : 24; // drawn whole; in part (zoomed in on a rack)
            TopologyEditor editor;
            editor.resize(1000, 700);
            editor.show();
            PlanDocument plan;
            if (run >= 2) {
                Plan start = examplePlan();
                start.cluster = test::clusterPreset("dgx-h100", nodes, 8);
                plan.reset(start, QString());
                editor.document()->attach(&plan);
            } else {
                editor.document()->reset(
                    graphFromCluster(test::clusterPreset("dgx-h100", nodes, 8)));
            }
            const TopologyGraph& g = editor.document()->graph();
            if (nodes > 2048) { // zoomed in on the first racks: their nodes are drawn
                editor.view()->resetTransform();
                editor.view()->centerOn(g.nodes[0].x, g.nodes[0].y);
                QCoreApplication::processEvents();
                editor.updateDetail();
            }
            const int a = g.nodes[1].id;
            const int b = g.nodes[9].id;
            editor.selectNodes({b});
            auto check = [&editor](const char* what) {
                TopologyEditor fresh;
                fresh.resize(1000, 700);
                fresh.show();
                fresh.view()->setTransform(editor.view()->transform());
                fresh.document()->reset(editor.document()->graph());
                fresh.view()->setTransform(editor.view()->transform());
                fresh.view()->centerOn(
                    editor.view()->mapToScene(editor.view()->viewport()->rect().center()));
                QCoreApplication::processEvents();
                fresh.updateDetail();
                fresh.selectNodes(editor.selectedNodeIds());
                if (sceneSignature(editor) != sceneSignature(fresh))
                    qWarning("the scene after the edit '%s' differs", what);
                QCOMPARE(sceneSignature(editor), sceneSignature(fresh));
            };
            QVERIFY(itemsOf<NodeItem>(editor) >= 8); // at least the first rack's nodes
            const int racks = itemsOf<RackItem>(editor);
            markRacks(editor);
            for (int tick = 0; tick < 5; ++tick)
                editor.document()->edit("drag", 12, [a](TopologyGraph& d) { d.node(a)->x += 2; });
            check("drag");
            editor.document()->edit("NICs", 0,
                                    [b](TopologyGraph& d) { d.node(b)->nic_factor = 0.5; });
            check("what-if");
            editor.document()->edit("out", 0, [a](TopologyGraph& d) { d.node(a)->y -= 300; });
            check("out of the frame");
            QCOMPARE(editor.selectedNodeIds(), QList<int>{b});
            // Racks the edits did not touch are the same items: only the first two (of `a` and
            // `b`) were redrawn.
            QCOMPARE(marked(editor), racks - 2);
            editor.document()->edit("add", 0, [](TopologyGraph& d) {
                TopoNode node = d.nodes.back();
                node.id = d.takeId();
                d.nodes.push_back(node);
            });
            check("added");
            editor.document()->undoStack()->undo();
            editor.document()->undoStack()->undo();
            check("undone");
        }
    }

    void aDragIsOneStep()
    {
        TopologyEditor editor;
        editor.resize(1000, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 4)));
        editor.fitToWindow();
        const TopoNode first = editor.document()->graph().nodes.front();
        const QPoint start = editor.view()->mapFromScene(QPointF(first.x + 60, first.y + 30));
        QWidget* viewport = editor.view()->viewport();
        QTest::mousePress(viewport, Qt::LeftButton, {}, start);
        for (int step = 1; step <= 5; ++step) {
            QMouseEvent move(QEvent::MouseMove, start + QPoint(step * 8, step * 4),
                             viewport->mapToGlobal(start + QPoint(step * 8, step * 4)),
                             Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(viewport, &move);
        }
        QTest::mouseRelease(viewport, Qt::LeftButton, {}, start + QPoint(40, 20));
        QCOMPARE(editor.document()->undoStack()->count(), 1);
        const TopoNode moved = *editor.document()->graph().node(first.id);
        QCOMPARE(moved.rack, first.rack); // still inside its rack
        QVERIFY(moved.x != first.x || moved.y != first.y);
        editor.document()->undoStack()->undo();
        QCOMPARE(editor.document()->graph().node(first.id)->x, first.x);
    }

    void droppingANodeInAnotherRackMovesIt()
    {
        TopologyEditor editor;
        editor.resize(1200, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 8, 4)));
        editor.fitToWindow();
        const TopologyGraph& g = editor.document()->graph();
        const TopoNode node = g.nodes.front();
        const TopoNode target = g.nodes.back(); // in rack 1
        QWidget* viewport = editor.view()->viewport();
        const QPoint from = editor.view()->mapFromScene(QPointF(node.x + 60, node.y + 30));
        const QPoint to = editor.view()->mapFromScene(QPointF(target.x + 60, target.y + 60));
        QTest::mousePress(viewport, Qt::LeftButton, {}, from);
        for (int step = 1; step <= 10; ++step) {
            const QPoint at = from + (to - from) * step / 10;
            QMouseEvent move(QEvent::MouseMove, at, viewport->mapToGlobal(at), Qt::NoButton,
                             Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(viewport, &move);
        }
        QTest::mouseRelease(viewport, Qt::LeftButton, {}, to);
        QCOMPARE(editor.document()->graph().node(node.id)->rack, target.rack);
        // Five nodes and three: racks of unequal size are named as the reason.
        ClusterSpec cluster;
        QString error;
        QVERIFY(!editor.document()->cluster(&cluster, &error));
        QVERIFY(error.contains("racks hold different numbers"));
        QVERIFY(editor.statusText().contains("Not a cluster Paraplan can model"));
        editor.document()->undoStack()->undo();
        QVERIFY(editor.document()->cluster(&cluster, &error));
    }

    void clusterFilesRoundTrip()
    {
        TopologyEditor editor;
        QString error;
        QVERIFY(editor.generateFatTree("dgx-a100", 48, 16, 4, &error));
        QTemporaryDir dir;
        const QString path = dir.filePath("fat-tree.json");
        QVERIFY2(editor.saveCluster(path, &error), qPrintable(error));
        TopologyEditor other;
        QVERIFY2(other.openCluster(path, &error), qPrintable(error));
        ClusterSpec a, b;
        QVERIFY(editor.document()->cluster(&a, &error));
        QVERIFY(other.document()->cluster(&b, &error));
        QCOMPARE(b.nodes, 48);
        QCOMPARE(b.network.nodes_per_rack, 16);
        QCOMPARE(b.network.spine_oversubscription.value, 4.0);
        QCOMPARE(other.document()->graph().racks.size(), size_t(3));
        QVERIFY(!other.openCluster(dir.filePath("missing.json"), &error));
    }

    void importIntoTheEditor()
    {
        TopologyEditor editor;
        TopologyImportOptions options;
        options.nodes = 4;
        options.nic_id = "ib-ndr";
        QString error;
        QVERIFY2(
            editor.importTopology(test::dataPath("topology/dgx-h100.topo.txt"), options, &error),
            qPrintable(error));
        QCOMPARE(editor.document()->graph().nodes.size(), size_t(4));
        QCOMPARE(editor.document()->graph().nodes.front().spec->nvlinkLinksPerGpu(), 18);
        QVERIFY(
            !editor.importTopology(test::dataPath("topology/truncated.topo.txt"), options, &error));
        QVERIFY(error.contains("truncated"));
    }

    void overlayMarksTheRightGpus()
    {
        TopologyEditor editor;
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 8, 4)));
        Plan plan = examplePlan();
        std::string message;
        ClusterSpec cluster;
        QVERIFY(clusterFromGraph(editor.document()->graph(), &cluster, &message,
                                 HardwareCatalog::bundled()));
        plan.cluster = cluster;
        plan.parallel.tp = 8;
        plan.parallel.pp = 4;
        plan.parallel.dp = 2;
        plan.parallel.interleave = 1;
        plan.parallel.global_batch = 64;
        refreshDefaultFigures(&plan);
        PlanEvaluator evaluator;
        QSignalSpy results(&evaluator, &PlanEvaluator::resultsAvailable);
        evaluator.evaluate(plan);
        QCOMPARE(results.count(), 1);
        editor.setOverlay(evaluator.latest());
        const TopologyGraph& g = editor.document()->graph();
        for (ParallelDim dim : {ParallelDim::TP, ParallelDim::PP, ParallelDim::DP}) {
            editor.setOverlayDim(dim);
            for (size_t n = 0; n < g.nodes.size(); ++n) {
                for (int gpu = 0; gpu < 8; ++gpu)
                    QCOMPARE(
                        editor.overlayGroup(g.nodes[n].id, gpu),
                        gpuGroupIndex(plan.parallel, static_cast<long long>(n) * 8 + gpu, dim));
            }
        }
        // TP innermost: one TP group per node; PP outermost: stage = node / 2.
        editor.setOverlayDim(ParallelDim::TP);
        QCOMPARE(editor.overlayGroup(g.nodes[0].id, 7), editor.overlayGroup(g.nodes[0].id, 0));
        QVERIFY(editor.overlayGroup(g.nodes[1].id, 0) != editor.overlayGroup(g.nodes[0].id, 0));
        editor.setOverlayDim(ParallelDim::PP);
        QCOMPARE(editor.overlayGroup(g.nodes[6].id, 3), 3LL);
        // What crosses the links, with the bottleneck named.
        const QString nvswitch = editor.linkReport(Tier::NVSwitch);
        QVERIFY2(nvswitch.contains("TP"), qPrintable(nvswitch));
        QVERIFY(editor.statusText().contains("Bottleneck link"));
        const QString nic = editor.linkReport(Tier::Network);
        QVERIFY2(nic.contains("PP") || nic.contains("DP"), qPrintable(nic));
    }

    void theTopologyTabIsFittedWhenFirstShown()
    {
        // Opened on another tab (as the interactive window is), the Topology tab was laid out
        // while hidden: its first showing is fitted all the same, without scroll bars.
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QTRY_VERIFY(shown.count() >= 1);
        showTopologyTab(&window);
        QGraphicsView* view = window.topologyEditor()->view();
        QVERIFY(view->isVisible());
        const double fit = fitScale(*view);
        QVERIFY2(std::abs(fit - 1) > 0.05, qPrintable(QString::number(fit))); // fitting shows
        QVERIFY2(std::abs(view->transform().m11() - fit) < 1e-9,
                 qPrintable(QString("%1 vs %2").arg(view->transform().m11()).arg(fit)));
        QVERIFY(!view->horizontalScrollBar()->isVisible());
        QVERIFY(!view->verticalScrollBar()->isVisible());
    }

    void clusterEditsKeepTheViewAndTheDrawing()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QTRY_VERIFY(shown.count() >= 1);
        showTopologyTab(&window);
        TopologyEditor* editor = window.topologyEditor();
        QGraphicsView* view = editor->view();
        const auto zoomIn = [&] {
            view->setTransform(QTransform::fromScale(1.5, 1.5));
            view->horizontalScrollBar()->setValue(view->horizontalScrollBar()->maximum() / 2);
            view->verticalScrollBar()->setValue(view->verticalScrollBar()->maximum() / 3);
            QCoreApplication::processEvents();
        };
        const auto view_ = [&] {
            return QString("%1 %2 %3")
                .arg(view->transform().m11())
                .arg(view->horizontalScrollBar()->value())
                .arg(view->verticalScrollBar()->value());
        };
        const auto spine = [&](double ratio) {
            window.document()->edit("spine", Field::ClusterSpine, [ratio](Plan& plan) {
                plan.cluster.network.spine_oversubscription = userEntry(ratio, "spine (test)");
            });
            QCoreApplication::processEvents();
        };
        // A plan without a drawing: a Spine edit redraws the same racks and nodes in place.
        QVERIFY(!window.document()->plan().drawing);
        zoomIn();
        QVERIFY(view->horizontalScrollBar()->value() > 0);
        const QString zoomed = view_();
        spine(2);
        QCOMPARE(editor->document()->graph().spine_oversubscription.value, 2.0);
        QCOMPARE(view_(), zoomed);
        // An empty rack added in the editor stays through a Spine edit, and its undo.
        editor->addRack();
        const size_t racks = editor->document()->graph().racks.size();
        QVERIFY(window.document()->plan().drawing);
        zoomIn();
        const QString zoomedAgain = view_();
        spine(3);
        QCOMPARE(window.document()->plan().cluster.network.spine_oversubscription.value, 3.0);
        QCOMPARE(editor->document()->graph().spine_oversubscription.value, 3.0);
        QCOMPARE(editor->document()->graph().racks.size(), racks);
        QVERIFY(window.document()->plan().drawing);
        QCOMPARE(view_(), zoomedAgain);
        window.document()->undoStack()->undo();
        QCoreApplication::processEvents();
        QCOMPARE(editor->document()->graph().spine_oversubscription.value, 2.0);
        QCOMPARE(editor->document()->graph().racks.size(), racks);
        QCOMPARE(view_(), zoomedAgain);
        window.document()->undoStack()->redo();
        QCoreApplication::processEvents();
        QCOMPARE(editor->document()->graph().racks.size(), racks);
        // Another node count is a new shape: laid out afresh and fitted.
        window.document()->edit("nodes", Field::ClusterNodes,
                                [](Plan& plan) { plan.cluster.nodes = 12; });
        QCoreApplication::processEvents();
        QCOMPARE(editor->document()->graph().nodes.size(), size_t(12));
        QVERIFY(std::abs(view->transform().m11() - fitScale(*view)) < 1e-9);
    }

    void rackBoxesShowTheirCountsWhenLargeEnough()
    {
        TopologyEditor editor;
        editor.resize(1100, 800);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        // 128 racks of 32 nodes: more nodes than are ever drawn, so the racks are boxes.
        editor.document()->reset(graphFromCluster(test::clusterPreset("dgx-h100", 4096, 32)));
        QCoreApplication::processEvents();
        QGraphicsView* view = editor.view();
        RackItem* rack = nullptr;
        for (QGraphicsItem* item : editor.scene()->items())
            if (auto* r = dynamic_cast<RackItem*>(item);
                r && r->id() == editor.document()->graph().racks[5].id)
                rack = r;
        QVERIFY(rack);
        const auto look = [&](double scale) {
            view->setTransform(QTransform::fromScale(scale, scale));
            view->centerOn(rack->area().center());
            QCoreApplication::processEvents();
            return rack->expanded() ? -1 : darkPixelsIn(view, rack->area());
        };
        // Zoomed out: a box a few pixels wide, no text. Just below the zoom that draws nodes:
        // a box about 60 pixels wide with its rack, node and GPU counts.
        QCOMPARE(look(0.03), 0);
        const int near = look(kCollapsedLod * 0.9);
        QVERIFY2(near > 30, qPrintable(QString::number(near)));
    }

    void carryDrawingKeepsRacksAndPlacesOfTheSameShape()
    {
        const HardwareCatalog& catalog = HardwareCatalog::bundled();
        ClusterSpec cluster = test::clusterPreset("dgx-h100", 8, 4);
        TopologyGraph drawing = graphFromCluster(cluster);
        TopoRack empty;
        empty.id = drawing.takeId();
        empty.name = "empty";
        drawing.racks.push_back(empty);
        drawing.nodes[3].x += 500; // moved by the user
        drawing.nodes[5].nic_factor = 0.5;
        ClusterSpec read;
        std::string error;
        QVERIFY2(clusterFromGraph(drawing, &read, &error, catalog), error.c_str());
        // The cluster-wide fields change (spine, NICs per node, a chip out): carried over.
        ClusterSpec changed = read;
        changed.network.spine_oversubscription = userEntry(4, "spine (test)");
        changed.node.nics = 4;
        changed.what_if.nvswitch_chips_out = {1};
        TopologyGraph carried;
        QVERIFY(carryDrawing(drawing, changed, &carried, catalog));
        QVERIFY(drawingDescribes(carried, changed, catalog));
        QCOMPARE(carried.racks.size(), drawing.racks.size());
        QCOMPARE(carried.racks.back().name, std::string("empty"));
        QCOMPARE(carried.nodes[3].x, drawing.nodes[3].x);
        QCOMPARE(carried.nodes[6].spec->nics, 4);
        // The spine alone keeps the drawing's own what-ifs where they are.
        ClusterSpec spineOnly = read;
        spineOnly.network.spine_oversubscription = userEntry(2, "spine (test)");
        QVERIFY(carryDrawing(drawing, spineOnly, &carried, catalog));
        QCOMPARE(carried.nodes[5].nic_factor, 0.5);
        // Another shape is not carried: another node count, or nodes per rack.
        ClusterSpec more = read;
        more.nodes = 12;
        QVERIFY(!carryDrawing(drawing, more, &carried, catalog));
        ClusterSpec perRack = read;
        perRack.network.nodes_per_rack = 2;
        QVERIFY(!carryDrawing(drawing, perRack, &carried, catalog));
    }

    void whatIfsOnTheCanvasChangeThePlanLive()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QTRY_VERIFY(shown.count() >= 1);
        const double before = window.evaluator()->latest()->step_time_s();
        TopologyEditor* editor = window.topologyEditor();
        QCOMPARE(editor->document()->graph().nodes.size(), size_t(8));
        const int node = editor->document()->graph().nodes[2].id;
        editor->document()->edit("chip out", 0, [node](TopologyGraph& g) {
            g.node(node)->switch_in_service[0] = false;
        });
        QTRY_VERIFY(window.evaluator()->latest()->step_time_s() > before);
        QCOMPARE(window.document()->plan().cluster.what_if.nvswitch_chips_out, std::vector<int>{0});
        // The plan's own cluster edits redraw the editor.
        window.document()->edit("more racks", Field::ClusterRack,
                                [](Plan& plan) { plan.cluster.network.nodes_per_rack = 2; });
        QCOMPARE(editor->document()->graph().racks.size(), size_t(4));
    }
};

QTEST_MAIN(TestTopologyEditor)
#include "tst_topologyeditor.moc"
