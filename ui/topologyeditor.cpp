#include "topologyeditor.h"

#include "clusterio.h"
#include "summary.h"
#include "topologyitems.h"
#include "units.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <cmath>

namespace paraplan::ui {

namespace {
// Nodes drawn at most: a scene of a few thousand items stays responsive.
constexpr long long kMaxDrawnNodes = 2048;
// Racks drawn at most (each one item: a box with its counts until zoomed in): 4,096 racks of
// 32 nodes hold a million GPUs.
constexpr size_t kMaxDrawnRacks = 4096;
} // namespace

int TopologyEditor::rackAt(const QPointF& scenePos) const
{
    for (QGraphicsItem* item : m_scene->items(scenePos)) {
        if (auto* rack = dynamic_cast<RackItem*>(item))
            return rack->id();
    }
    return -1;
}

TopologyEditor::TopologyEditor(QWidget* parent)
    : QWidget(parent), m_document(new TopologyDocument(this)), m_scene(new QGraphicsScene(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* toolbar = new QToolBar(this);
    toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    auto addTool = [&](const QString& text, const QKeySequence& key, auto slot) {
        QAction* action = toolbar->addAction(text, this, slot);
        if (!key.isEmpty()) {
            action->setShortcut(key);
            action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
            addAction(action);
        }
        return action;
    };
    addTool(tr("Add node"), QKeySequence(Qt::Key_Insert), [this] { addNode(); });
    addTool(tr("Add rack"), QKeySequence(Qt::SHIFT | Qt::Key_Insert), [this] { addRack(); });
    addTool(tr("Delete"), QKeySequence::Delete, [this] { deleteSelection(); });
    addTool(tr("Copy"), QKeySequence::Copy, [this] { copySelection(); });
    addTool(tr("Paste"), QKeySequence::Paste, [this] { paste(); });
    toolbar->addSeparator();
    addTool(tr("Fit"), QKeySequence(Qt::Key_F), [this] { fitToWindow(); });
    QAction* pan = toolbar->addAction(tr("Pan"));
    pan->setCheckable(true);
    pan->setToolTip(tr("Drag to pan instead of selecting (the wheel zooms)"));
    connect(pan, &QAction::toggled, this, [this](bool on) {
        m_view->setDragMode(on ? QGraphicsView::ScrollHandDrag : QGraphicsView::RubberBandDrag);
        m_view->setInteractive(!on);
    });
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Overlay: "), toolbar));
    m_overlayCombo = new QComboBox(toolbar);
    m_overlayCombo->addItems({tr("TP groups"), tr("pipeline stages"), tr("DP replicas")});
    connect(m_overlayCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        static const ParallelDim dims[] = {ParallelDim::TP, ParallelDim::PP, ParallelDim::DP};
        setOverlayDim(dims[index]);
    });
    toolbar->addWidget(m_overlayCombo);
    layout->addWidget(toolbar);

    auto* body = new QHBoxLayout;
    m_view = new ZoomView(m_scene, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setDragMode(QGraphicsView::RubberBandDrag);
    m_view->setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    body->addWidget(m_view, 1);
    auto* side = new QVBoxLayout;
    m_properties = new QGroupBox(tr("Properties"), this);
    // As wide as its fields need (a NIC rate reads "50.00 GB/s per direction"), no wider.
    m_properties->setMaximumWidth(380);
    m_propertyForm = new QFormLayout(m_properties);
    side->addWidget(m_properties);
    m_linkInfo = new QLabel(this);
    m_linkInfo->setObjectName("linkInfo");
    m_linkInfo->setWordWrap(true);
    m_linkInfo->setTextFormat(Qt::RichText);
    m_linkInfo->setMinimumWidth(240);
    m_linkInfo->setMaximumWidth(380);
    m_linkInfo->setText(tr("<p>GPUs take the colour of their plan group (see Overlay). Links "
                           "go from green (idle) to red (busy all step); the bottleneck link "
                           "is drawn thicker.</p><p>Click a node's NVSwitch bar or NIC bar, a "
                           "rack switch or the spine to see which collectives cross it.</p>"
                           "<p>Drag nodes to move them, Insert adds a node, Delete removes "
                           "the selection; every edit can be undone.</p>"));
    side->addWidget(m_linkInfo);
    side->addStretch(1);
    body->addLayout(side);
    layout->addLayout(body, 1);
    m_status = new QLabel(this);
    m_status->setObjectName("topologyStatus");
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(m_document, &TopologyDocument::graphChanged, this, &TopologyEditor::rebuildScene);
    connect(m_document, &TopologyDocument::graphReset, this, [this] {
        m_fitPending = !isVisible();
        if (isVisible())
            fitToWindow();
    });
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &TopologyEditor::updateProperties);
    // Zooming and scrolling move the scroll bars: the level of detail follows, once per burst.
    auto* detailTimer = new QTimer(this);
    detailTimer->setSingleShot(true);
    detailTimer->setInterval(0);
    connect(detailTimer, &QTimer::timeout, this, &TopologyEditor::updateDetail);
    for (QScrollBar* bar : {m_view->horizontalScrollBar(), m_view->verticalScrollBar()}) {
        connect(bar, &QScrollBar::valueChanged, detailTimer, qOverload<>(&QTimer::start));
        connect(bar, &QScrollBar::rangeChanged, detailTimer, qOverload<>(&QTimer::start));
    }
    updateProperties();
}

TopologyEditor::~TopologyEditor()
{
    disconnect(m_scene, nullptr, this, nullptr);
}

long long TopologyEditor::overlayGroup(int nodeId, int gpu) const
{
    if (!m_overlay)
        return -1;
    const auto it = m_firstGpu.find(nodeId);
    if (it == m_firstGpu.end())
        return -1;
    const long long global = it.value() + gpu;
    if (global >= m_overlay->plan.parallel.gpus())
        return -1;
    return gpuGroupIndex(m_overlay->plan.parallel, global, m_overlayDim);
}

void TopologyEditor::setOverlay(std::shared_ptr<const PlanResults> results)
{
    m_overlay = std::move(results);
    m_scene->update();
    updateStatus();
}

void TopologyEditor::setOverlayDim(ParallelDim dim)
{
    m_overlayDim = dim;
    m_scene->update();
}

void TopologyEditor::rebuildScene()
{
    m_rebuilding = true;
    bool panelStale = true;
    if (updateSceneInPlace(&panelStale)) { // a small edit: its racks redrawn (topologyscene.cpp)
        m_rebuilding = false;
        finishScene(panelStale);
        return;
    }
    m_drawn = m_document->sharedGraph();
    m_spine = nullptr;
    const QList<int> selected = selectedNodeIds();
    m_rackItems.clear();
    m_expanded.clear();
    m_byRack.clear();
    m_lazy = false;
    m_drawnNodes = m_drawnRacks = 0;
    m_scene->clear();
    m_firstGpu.clear();
    const TopologyGraph& g = m_document->graph();
    if (g.is_torus) {
        // A torus is drawn as its x-y faces, one per z, each chip a cell.
        const auto& d = g.torus.dims;
        const double cell = 14;
        for (int z = 0; z < std::min(d[2], 64); ++z) {
            const double ox = (z % 8) * (d[0] * cell + 30);
            const double oy = (z / 8) * (d[1] * cell + 40);
            m_scene->addText(tr("z = %1").arg(z))->setPos(ox, oy - 22);
            for (int y = 0; y < d[1]; ++y) {
                for (int x = 0; x < d[0]; ++x) {
                    const long long chip = x + static_cast<long long>(d[0]) * (y + d[1] * z);
                    QColor colour(110, 150, 190);
                    if (m_overlay && chip < m_overlay->plan.parallel.gpus())
                        colour = groupColour(
                            gpuGroupIndex(m_overlay->plan.parallel, chip, m_overlayDim));
                    m_scene->addRect(ox + x * cell, oy + y * cell, cell - 2, cell - 2,
                                     QPen(Qt::NoPen), colour);
                }
            }
        }
    } else {
        buildFatTree(selected);
    }
    m_rebuilding = false;
    finishScene(true);
}

void TopologyEditor::finishScene(bool properties)
{
    m_scene->setSceneRect(m_scene->itemsBoundingRect().adjusted(-40, -40, 40, 40));
    updateDetail();
    if (properties)
        updateProperties();
    updateStatus();
    ClusterSpec cluster;
    QString error;
    if (m_document->cluster(&cluster, &error))
        emit clusterEdited(cluster);
}

void TopologyEditor::buildFatTree(const QList<int>& selected)
{
    const TopologyGraph& g = m_document->graph();
    long long gpu = 0;
    m_firstGpu.reserve(static_cast<qsizetype>(g.nodes.size()));
    for (const TopoNode& n : g.nodes) {
        m_firstGpu.insert(n.id, gpu);
        gpu += n.spec->gpus;
    }
    // Every rack is an item (up to kMaxDrawnRacks); a cluster of more than kMaxDrawnNodes
    // nodes gets node items only for the racks in view when zoomed in (updateDetail).
    m_byRack = g.nodesByRack();
    m_lazy = static_cast<long long>(g.nodes.size()) > kMaxDrawnNodes;
    m_keepSelected = selected;
    const size_t drawnRacks = std::min(g.racks.size(), kMaxDrawnRacks);
    for (size_t r = 0; r < drawnRacks; ++r)
        m_rackItems.append(makeRackItem(r));
    m_drawnRacks = static_cast<long long>(drawnRacks);
    if (!m_lazy) {
        for (int r = 0; r < m_rackItems.size(); ++r)
            m_drawnNodes += expandRack(r);
    }
    addSpine();
}

int TopologyEditor::expandRack(int index)
{
    QVector<NodeItem*>& items = m_expanded[index];
    QVector<QPointF> anchors;
    for (const TopoNode* n : m_byRack[static_cast<size_t>(index)]) {
        anchors.append(QPointF(n->x + kNodeWidth / 2, n->y));
        auto* node = new NodeItem(this, *n);
        m_scene->addItem(node);
        node->setSelected(m_keepSelected.contains(n->id));
        items.append(node);
    }
    m_rackItems[index]->setExpanded(true, std::move(anchors));
    return static_cast<int>(items.size());
}

void TopologyEditor::collapseRack(int index)
{
    const auto it = m_expanded.find(index);
    if (it == m_expanded.end())
        return;
    for (NodeItem* node : it.value()) {
        if (node->isSelected())
            m_keepSelected.append(node->id());
        delete node; // leaves the scene
    }
    m_expanded.erase(it);
    m_rackItems[index]->setExpanded(false);
}

void TopologyEditor::updateDetail()
{
    if (!m_lazy || m_rebuilding)
        return;
    // The racks in view, while zoomed in past the collapsed level, up to kMaxDrawnNodes nodes.
    QList<int> wanted;
    if (m_view->transform().m11() >= kCollapsedLod) {
        const QRectF visible = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
        long long budget = kMaxDrawnNodes;
        for (int r = 0; r < m_rackItems.size(); ++r) {
            if (!m_rackItems[r]->area().intersects(visible))
                continue;
            const auto count = static_cast<long long>(m_byRack[static_cast<size_t>(r)].size());
            if (count > budget)
                break;
            budget -= count;
            wanted.append(r);
        }
    }
    const QList<int> expanded = m_expanded.keys();
    for (int r : expanded) {
        if (!wanted.contains(r))
            collapseRack(r);
    }
    long long drawn = 0;
    for (int r : wanted)
        drawn += m_expanded.contains(r) ? m_expanded[r].size() : expandRack(r);
    if (drawn != m_drawnNodes) {
        m_drawnNodes = drawn;
        updateStatus();
    }
}

QList<int> TopologyEditor::selectedNodeIds() const
{
    QList<int> ids;
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (auto* node = dynamic_cast<NodeItem*>(item))
            ids.append(node->id());
    }
    return ids;
}

void TopologyEditor::selectNodes(const QList<int>& ids)
{
    {
        const QSignalBlocker blocker(m_scene);
        for (QGraphicsItem* item : m_scene->items()) {
            if (auto* node = dynamic_cast<NodeItem*>(item))
                node->setSelected(ids.contains(node->id()));
            else
                item->setSelected(false);
        }
    }
    updateProperties();
}

void TopologyEditor::addNode()
{
    const TopologyGraph& g = m_document->graph();
    if (g.is_torus || g.nodes.empty() || g.racks.empty()) {
        emit errorReported(tr("Add a node to a fat-tree: generate one first"));
        return;
    }
    int rack = g.racks.back().id;
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (auto* r = dynamic_cast<RackItem*>(item))
            rack = r->id();
        else if (auto* n = dynamic_cast<NodeItem*>(item))
            rack = g.node(n->id())->rack;
    }
    m_document->edit(tr("Add node"), 0, [rack](TopologyGraph& graph) {
        TopoNode node = graph.nodes.front();
        node.id = graph.takeId();
        node.name = "node " + std::to_string(graph.nodes.size());
        node.rack = rack;
        node.switch_in_service.assign(node.spec->switch_links_per_gpu.size(), true);
        node.nvlink_factor = node.nic_factor = 1;
        graph.nodes.push_back(node);
        layoutGraph(&graph);
    });
}

void TopologyEditor::addRack()
{
    if (m_document->graph().is_torus) {
        emit errorReported(tr("A torus has no racks"));
        return;
    }
    m_document->edit(tr("Add rack"), 0, [](TopologyGraph& graph) {
        TopoRack rack;
        rack.id = graph.takeId();
        rack.name = "rack " + std::to_string(graph.racks.size());
        graph.racks.push_back(rack);
        layoutGraph(&graph);
    });
}

void TopologyEditor::deleteSelection()
{
    QList<int> nodes = selectedNodeIds();
    QList<int> racks;
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (auto* r = dynamic_cast<RackItem*>(item))
            racks.append(r->id());
    }
    if (nodes.isEmpty() && racks.isEmpty())
        return;
    // Deleting keeps the whole graph in the undo step: undo restores nodes, racks and IDs.
    m_document->edit(tr("Delete %1 node(s), %2 rack(s)").arg(nodes.size()).arg(racks.size()), 0,
                     [nodes, racks](TopologyGraph& graph) {
                         graph.nodes.erase(std::remove_if(graph.nodes.begin(), graph.nodes.end(),
                                                          [&](const TopoNode& n) {
                                                              return nodes.contains(n.id) ||
                                                                     racks.contains(n.rack);
                                                          }),
                                           graph.nodes.end());
                         graph.racks.erase(std::remove_if(graph.racks.begin(), graph.racks.end(),
                                                          [&](const TopoRack& r) {
                                                              return racks.contains(r.id);
                                                          }),
                                           graph.racks.end());
                     });
}

void TopologyEditor::copySelection()
{
    m_clipboard.clear();
    for (int id : selectedNodeIds())
        m_clipboard.push_back(*m_document->graph().node(id));
}

void TopologyEditor::paste()
{
    if (m_clipboard.empty() || m_document->graph().racks.empty())
        return;
    const std::vector<TopoNode> copies = m_clipboard;
    m_document->edit(tr("Paste %1 node(s)").arg(copies.size()), 0, [copies](TopologyGraph& g) {
        const int rack = g.racks.back().id;
        for (TopoNode node : copies) {
            node.id = g.takeId();
            node.name += " (copy)";
            node.rack = rack;
            g.nodes.push_back(node);
        }
        layoutGraph(&g);
    });
}

void TopologyEditor::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (m_fitPending && isVisible()) {
        fitToWindow();
        m_fitPending = false;
    }
}

void TopologyEditor::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // A tab shown for the first time was laid out while hidden (its resize came before it was
    // visible): it is fitted now, however the window was opened.
    if (m_fitPending) {
        fitToWindow();
        m_fitPending = false;
    }
}

QGraphicsView* TopologyEditor::view() const
{
    return m_view;
}

void TopologyEditor::fitToWindow()
{
    m_view->fitScene();
}

bool TopologyEditor::generateFatTree(const std::string& preset, int nodes, int perRack,
                                     double ratio, QString* error)
{
    TopologyGraph graph;
    std::string message;
    if (!paraplan::generateFatTree(preset, nodes, perRack, ratio, &graph, &message,
                                   HardwareCatalog::bundled())) {
        *error = QString::fromStdString(message);
        return false;
    }
    m_document->edit(tr("Generate %1").arg(QString::fromStdString(graph.name)), 0,
                     [graph](TopologyGraph& g) { g = graph; });
    fitToWindow();
    return true;
}

bool TopologyEditor::generateTorus(int x, int y, int z, QString* error)
{
    TopologyGraph graph;
    std::string message;
    if (!paraplan::generateTorus(x, y, z, &graph, &message, HardwareCatalog::bundled())) {
        *error = QString::fromStdString(message);
        return false;
    }
    m_document->edit(tr("Generate %1").arg(QString::fromStdString(graph.name)), 0,
                     [graph](TopologyGraph& g) { g = graph; });
    fitToWindow();
    return true;
}

bool TopologyEditor::openCluster(const QString& path, QString* error)
{
    ClusterSpec cluster;
    std::string message;
    if (!loadCluster(path.toStdString(), {}, &cluster, &message, HardwareCatalog::bundled())) {
        *error = QString::fromStdString(message);
        return false;
    }
    m_document->edit(tr("Open %1").arg(path), 0,
                     [cluster](TopologyGraph& g) { g = graphFromCluster(cluster); });
    return true;
}

bool TopologyEditor::saveCluster(const QString& path, QString* error)
{
    ClusterSpec cluster;
    if (!m_document->cluster(&cluster, error))
        return false;
    std::string message;
    if (!saveClusterFile(path.toStdString(), cluster, &message)) {
        *error = QString::fromStdString(message);
        return false;
    }
    return true;
}

bool TopologyEditor::importTopology(const QString& path, const TopologyImportOptions& options,
                                    QString* error)
{
    TopologyImport imported;
    std::string message;
    if (!importTopologyFile(path.toStdString(), options, &imported, &message,
                            HardwareCatalog::bundled())) {
        *error = QString::fromStdString(message);
        return false;
    }
    m_document->edit(tr("Import %1").arg(path), 0,
                     [imported](TopologyGraph& g) { g = graphFromCluster(imported.cluster); });
    QString notes;
    for (const std::string& note : imported.notes)
        notes += "<li>" + QString::fromStdString(note).toHtmlEscaped() + "</li>";
    m_linkInfo->setText(
        tr("<b>Imported %1</b><ul>%2</ul>").arg(QString::fromStdString(imported.format), notes));
    return true;
}

QString TopologyEditor::linkReport(Tier tier) const
{
    if (!m_overlay)
        return tr("No plan overlaid: the links carry nothing yet.");
    const std::vector<TierLoad> loads = tierLoads(m_overlay->cost);
    const bool network = tier == Tier::Network || tier == Tier::Spine;
    QString text;
    for (const TierLoad& load : loads) {
        const bool match = load.tier == tier ||
                           (network && (load.tier == Tier::Network || load.tier == Tier::Spine)) ||
                           (!network && load.tier != Tier::Network && load.tier != Tier::Spine);
        if (!match)
            continue;
        text += tr("<b>%1 links</b>: busy %2 of a %3 step (%4%)%5<ul>")
                    .arg(tierName(load.tier))
                    .arg(QString::fromStdString(units::formatSeconds(load.busy_s)))
                    .arg(QString::fromStdString(units::formatSeconds(m_overlay->cost.step_time_s)))
                    .arg(100 * load.utilisation, 0, 'f', 1)
                    .arg(&load == &loads.front() ? tr(" &mdash; <b>the bottleneck link</b>")
                                                 : QString());
        for (const auto& [who, seconds] : load.contributions)
            text += tr("<li>%1: %2 (%3% of the link's time)</li>")
                        .arg(QString::fromStdString(who))
                        .arg(QString::fromStdString(units::formatSeconds(seconds)))
                        .arg(load.busy_s > 0 ? 100 * seconds / load.busy_s : 0, 0, 'f', 1);
        text += "</ul>";
    }
    return text.isEmpty() ? tr("No collective of this plan crosses these links.") : text;
}

void TopologyEditor::showLinkReport(Tier tier)
{
    m_linkInfo->setText(linkReport(tier));
}

QString TopologyEditor::statusText() const
{
    return m_status->text();
}

void TopologyEditor::updateStatus()
{
    const TopologyGraph& g = m_document->graph();
    ClusterSpec cluster;
    QString error;
    QString text;
    if (!m_document->cluster(&cluster, &error)) {
        // A sentence of its own: "Drawn: ..." may follow.
        text = tr("<span style='color:#c0392b'>Not a cluster Paraplan can model: %1.</span>")
                   .arg(error.toHtmlEscaped());
    } else {
        const auto count = [](qsizetype n, const QString& one, const QString& many) {
            return QString("%1 %2").arg(QString::fromStdString(groupedNumber(double(n))),
                                        n == 1 ? one : many);
        };
        text =
            tr("%1, %2, %3.")
                .arg(count(g.is_torus ? 0 : g.racks.size(), tr("rack"), tr("racks")),
                     count(g.is_torus ? 0 : g.nodes.size(), tr("node"), tr("nodes")),
                     count(g.is_torus ? g.gpuCount() : cluster.totalGpus(), tr("GPU"), tr("GPUs")));
    }
    // A large cluster is drawn in part (rebuildScene); the line says how much.
    if (!g.is_torus && m_drawnNodes < static_cast<long long>(g.nodes.size()))
        text += tr(" Drawn: %1 of the nodes and %2 of the racks; zoom in on a rack to see its "
                   "nodes (the cluster's fields edit them all).")
                    .arg(QString::fromStdString(groupedNumber(double(m_drawnNodes))),
                         QString::fromStdString(groupedNumber(double(m_drawnRacks))));
    if (m_overlay) {
        const std::vector<TierLoad> loads = tierLoads(m_overlay->cost);
        if (!loads.empty())
            text += tr(" Bottleneck link: %1, busy %2% of the step.")
                        .arg(tierName(loads.front().tier))
                        .arg(100 * loads.front().utilisation, 0, 'f', 1);
    }
    m_status->setText(text);
}

} // namespace paraplan::ui
