#include "topologyeditor.h"

#include "clusterio.h"
#include "hardware.h"
#include "units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsView>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStyleOptionGraphicsItem>
#include <QToolBar>
#include <QUndoCommand>

#include "clusterio.h"
#include "plandocument.h"
#include <QVBoxLayout>
#include <QWheelEvent>

#include <cmath>

namespace paraplan::ui {
namespace {

constexpr double kNodeWidth = 120;
constexpr double kNodeHeight = 70;
// Below this zoom, racks collapse to one box and nodes are not drawn.
constexpr double kCollapsedLod = 0.12;
// Below this zoom, nodes are drawn as plain boxes with coloured stripes.
constexpr double kSimpleLod = 0.45;

QColor groupColour(long long group)
{
    const int hue = static_cast<int>(std::fmod(group * 137.508, 360.0));
    return QColor::fromHsv(hue, 150 + static_cast<int>(group % 3) * 35,
                           225 - static_cast<int>(group % 2) * 40);
}

// Green (idle) to red (saturated) for a link's share of the step.
QColor loadColour(double utilisation)
{
    const double u = std::clamp(utilisation, 0.0, 1.0);
    return QColor::fromHsvF((1.0 - u) * 0.33, 0.85, 0.8);
}

class GraphCommand : public QUndoCommand
{
public:
    GraphCommand(TopologyDocument* document, const QString& text, int mergeId, TopologyGraph before,
                 TopologyGraph after)
        : QUndoCommand(text), m_document(document), m_mergeId(mergeId), m_before(std::move(before)),
          m_after(std::move(after)), m_time(QDateTime::currentMSecsSinceEpoch())
    {
    }
    int id() const override { return m_mergeId == 0 ? -1 : m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* next = static_cast<const GraphCommand*>(other);
        if (next->m_time - m_time > 1500)
            return false;
        m_after = next->m_after;
        m_time = next->m_time;
        return true;
    }
    void undo() override { m_document->setGraphFromHistory(m_before); }
    void redo() override { m_document->setGraphFromHistory(m_after); }

private:
    TopologyDocument* m_document;
    int m_mergeId;
    TopologyGraph m_before;
    TopologyGraph m_after;
    qint64 m_time;
};

double tierUtilisation(const std::vector<TierLoad>& loads, std::initializer_list<Tier> tiers)
{
    double u = 0;
    for (const TierLoad& load : loads) {
        for (Tier tier : tiers) {
            if (load.tier == tier)
                u = std::max(u, load.utilisation);
        }
    }
    return u;
}

} // namespace

TopologyDocument::TopologyDocument(QObject* parent) : QObject(parent) {}

void TopologyDocument::edit(const QString& description, int mergeId,
                            const std::function<void(TopologyGraph&)>& change)
{
    TopologyGraph after = m_graph;
    change(after);
    if (!m_plan) {
        m_undo.push(new GraphCommand(this, description, mergeId, m_graph, std::move(after)));
        return;
    }
    // One plan edit: the drawing, and the cluster it describes when the model can read it
    // (an unfinished drawing keeps the plan's last valid cluster).
    auto drawing = std::make_shared<const TopologyGraph>(std::move(after));
    m_committing = true;
    m_plan->edit(
        description, Field::Topology,
        [drawing](Plan& plan) {
            ClusterSpec cluster;
            std::string error;
            if (clusterFromGraph(*drawing, &cluster, &error))
                plan.cluster = cluster;
            plan.drawing = drawing;
        },
        mergeId);
    m_committing = false;
}

QUndoStack* TopologyDocument::undoStack()
{
    return m_plan ? m_plan->undoStack() : &m_undo;
}

void TopologyDocument::attach(PlanDocument* plan)
{
    m_plan = plan;
    m_undo.clear();
    connect(plan, &PlanDocument::planChanged, this, &TopologyDocument::syncFromPlan);
    syncFromPlan();
}

void TopologyDocument::syncFromPlan()
{
    const Plan& plan = m_plan->plan();
    std::string cluster = clusterToJsonText(plan.cluster);
    if (plan.drawing.get() == m_syncedDrawing && cluster == m_syncedCluster && m_syncedDrawing)
        return;
    if (!plan.drawing && !m_syncedDrawing && cluster == m_syncedCluster)
        return;
    m_graph = graphForPlan(plan);
    m_syncedDrawing = plan.drawing.get();
    m_syncedCluster = std::move(cluster);
    emit graphChanged();
    // A cluster laid out afresh (a preset, an import, undo past the drawing) is fitted to
    // the window; the user's own edits keep the view where it is.
    if (!m_committing && !plan.drawing)
        emit graphReset();
}

void TopologyDocument::reset(const TopologyGraph& graph)
{
    m_graph = graph;
    m_undo.clear();
    emit graphChanged();
    emit graphReset();
}

void TopologyDocument::setGraphFromHistory(const TopologyGraph& graph)
{
    m_graph = graph;
    emit graphChanged();
}

bool TopologyDocument::cluster(ClusterSpec* cluster, QString* error) const
{
    std::string message;
    if (!clusterFromGraph(m_graph, cluster, &message)) {
        *error = QString::fromStdString(message);
        return false;
    }
    return true;
}

// One server: its GPUs (coloured by the plan's groups), NVSwitch chips and NIC bundle.
class NodeItem : public QGraphicsItem
{
public:
    NodeItem(TopologyEditor* editor, const TopoNode& node)
        : m_editor(editor), m_id(node.id), m_node(node)
    {
        setFlags(ItemIsSelectable | ItemIsMovable);
        setPos(node.x, node.y);
        setToolTip(QString::fromStdString(node.name));
    }
    int id() const { return m_id; }
    QRectF boundingRect() const override { return {0, 0, kNodeWidth, kNodeHeight}; }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override
    {
        const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
        if (lod < kCollapsedLod)
            return; // the rack draws itself as one box
        const NodeSpec& spec = m_node.spec;
        const bool selected = isSelected();
        painter->setPen(
            QPen(selected ? QColor(0, 114, 178) : QColor(140, 140, 140), selected ? 2.5 : 1));
        painter->setBrush(QColor(248, 248, 248));
        painter->drawRoundedRect(boundingRect().adjusted(1, 1, -1, -1), 4, 4);
        const int gpus = std::max(1, spec.gpus);
        const double gw = (kNodeWidth - 12) / gpus;
        const auto& overlay = m_editor->overlay();
        for (int g = 0; g < spec.gpus; ++g) {
            const long long group = m_editor->overlayGroup(m_id, g);
            const QColor colour = group >= 0 ? groupColour(group) : QColor(110, 150, 190);
            const QRectF square(6 + g * gw, lod < kSimpleLod ? 8 : 20, gw - 2,
                                lod < kSimpleLod ? kNodeHeight - 16 : 24);
            painter->setPen(lod < kSimpleLod ? Qt::NoPen : QPen(QColor(60, 60, 60), 0.6));
            painter->setBrush(colour);
            painter->drawRect(square);
        }
        if (lod < kSimpleLod)
            return;
        painter->setPen(Qt::black);
        QFont font = painter->font();
        font.setPointSizeF(7);
        painter->setFont(font);
        painter->drawText(QRectF(6, 2, kNodeWidth - 12, 16), Qt::AlignLeft | Qt::AlignVCenter,
                          QString::fromStdString(m_node.name));
        // NVSwitch chips (or the PCIe/mesh fabric) under the GPUs.
        const std::vector<TierLoad> loads =
            overlay ? tierLoads(overlay->cost) : std::vector<TierLoad>{};
        const double intra =
            tierUtilisation(loads, {Tier::NVSwitch, Tier::NVLink, Tier::PCIe, Tier::HostLink});
        const int chips = static_cast<int>(spec.switch_links_per_gpu.size());
        if (chips > 0) {
            const double cw = (kNodeWidth - 12) / chips;
            for (int c = 0; c < chips; ++c) {
                const bool up = c >= static_cast<int>(m_node.switch_in_service.size()) ||
                                m_node.switch_in_service[static_cast<size_t>(c)];
                const QRectF chip(6 + c * cw, 47, cw - 3, 7);
                painter->setPen(Qt::NoPen);
                painter->setBrush(!up ? QColor(200, 60, 60)
                                      : (overlay ? loadColour(intra) : QColor(150, 150, 150)));
                painter->drawRect(chip);
                if (!up) {
                    painter->setPen(QPen(Qt::white, 1.2));
                    painter->drawLine(chip.topLeft(), chip.bottomRight());
                    painter->drawLine(chip.bottomLeft(), chip.topRight());
                }
            }
        } else {
            painter->setPen(QPen(overlay ? loadColour(intra) : QColor(150, 150, 150), 2,
                                 spec.fabric == NodeFabric::PCIe ? Qt::DashLine : Qt::SolidLine));
            painter->drawLine(QPointF(6, 50), QPointF(kNodeWidth - 6, 50));
        }
        // The NIC bundle, the node's link into its rack switch.
        const double nic = tierUtilisation(loads, {Tier::Network, Tier::Spine});
        painter->setPen(Qt::NoPen);
        painter->setBrush(overlay ? loadColour(nic) : QColor(90, 90, 90));
        painter->drawRect(QRectF(6, 58, kNodeWidth - 12, 6));
        if (m_node.nic_factor < 1 || m_node.nvlink_factor < 1) {
            painter->setPen(QColor(200, 60, 60));
            painter->drawText(QRectF(6, 2, kNodeWidth - 12, 16), Qt::AlignRight | Qt::AlignVCenter,
                              "degraded");
        }
    }

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override
    {
        m_pressPos = pos();
        if (event->pos().y() > 56)
            m_editor->showLinkReport(Tier::Network);
        else if (event->pos().y() > 45)
            m_editor->showLinkReport(Tier::NVSwitch);
        QGraphicsItem::mousePressEvent(event);
    }
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override
    {
        QGraphicsItem::mouseReleaseEvent(event);
        if (pos() == m_pressPos)
            return;
        // The whole drag, of every selected node, is one undo step.
        QList<std::pair<int, QPointF>> moved;
        for (QGraphicsItem* item : scene()->selectedItems()) {
            if (auto* node = dynamic_cast<NodeItem*>(item))
                moved.append({node->id(), node->pos()});
        }
        if (moved.isEmpty())
            moved.append({m_id, pos()});
        // A node dropped inside another rack's frame joins that rack.
        QList<std::pair<int, int>> joins;
        for (const auto& [id, at] : moved) {
            const int rack = m_editor->rackAt(at + QPointF(kNodeWidth / 2, kNodeHeight / 2));
            if (rack >= 0)
                joins.append(std::make_pair(id, rack));
        }
        m_editor->m_document->edit(QObject::tr("Move %n node(s)", nullptr, moved.size()), 0,
                                   [moved, joins](TopologyGraph& g) {
                                       for (const auto& [id, at] : moved) {
                                           if (TopoNode* n = g.node(id)) {
                                               n->x = at.x();
                                               n->y = at.y();
                                           }
                                       }
                                       for (const auto& [id, rack] : joins) {
                                           if (TopoNode* n = g.node(id))
                                               n->rack = rack;
                                       }
                                   });
    }

private:
    TopologyEditor* m_editor;
    int m_id;
    TopoNode m_node;
    QPointF m_pressPos;
};

// A rack: frame, top-of-rack switch, its NIC links; one summary box when zoomed out.
class RackItem : public QGraphicsItem
{
public:
    RackItem(TopologyEditor* editor, const TopoRack& rack, const QRectF& area, int nodes,
             long long gpus)
        : m_editor(editor), m_rack(rack), m_area(area), m_nodes(nodes), m_gpus(gpus)
    {
        setFlags(ItemIsSelectable);
        setZValue(-1);
    }
    int id() const { return m_rack.id; }
    QPointF switchPoint() const { return {m_area.center().x(), m_area.top() + 10}; }
    QRectF boundingRect() const override { return m_area.adjusted(-4, -4, 4, 4); }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override
    {
        const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
        const auto& overlay = m_editor->overlay();
        const std::vector<TierLoad> loads =
            overlay ? tierLoads(overlay->cost) : std::vector<TierLoad>{};
        painter->setPen(QPen(isSelected() ? QColor(0, 114, 178) : QColor(150, 110, 30),
                             isSelected() ? 3 : 1.5));
        if (lod < kCollapsedLod) {
            painter->setBrush(QColor(236, 226, 205));
            painter->drawRect(m_area);
            QFont font = painter->font();
            font.setPointSizeF(std::max(6.0, 9 / std::max(lod, 0.01)));
            painter->setFont(font);
            painter->setPen(Qt::black);
            painter->drawText(m_area, Qt::AlignCenter | Qt::TextWordWrap,
                              QObject::tr("%1\n%2 nodes\n%3 GPUs")
                                  .arg(QString::fromStdString(m_rack.name))
                                  .arg(m_nodes)
                                  .arg(m_gpus));
            return;
        }
        painter->setBrush(QColor(250, 246, 238));
        painter->drawRoundedRect(m_area, 6, 6);
        // The rack switch and the NIC links down to every node.
        const QRectF tor(m_area.center().x() - 40, m_area.top() + 4, 80, 14);
        painter->setBrush(QColor(90, 90, 90));
        painter->drawRoundedRect(tor, 3, 3);
        painter->setPen(Qt::white);
        QFont font = painter->font();
        font.setPointSizeF(7);
        painter->setFont(font);
        painter->drawText(tor, Qt::AlignCenter, QObject::tr("rack switch"));
        painter->setPen(Qt::black);
        painter->drawText(QRectF(m_area.left() + 6, m_area.top() + 4, 120, 14),
                          Qt::AlignLeft | Qt::AlignVCenter, QString::fromStdString(m_rack.name));
        const double nic = tierUtilisation(loads, {Tier::Network, Tier::Spine});
        painter->setPen(QPen(overlay ? loadColour(nic) : QColor(170, 170, 170), 1));
        for (const TopoNode* n : m_editor->m_document->graph().nodesInRack(m_rack.id))
            painter->drawLine(QPointF(tor.center().x(), tor.bottom()),
                              QPointF(n->x + kNodeWidth / 2, n->y));
    }

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override
    {
        if (event->pos().y() < m_area.top() + 20)
            m_editor->showLinkReport(Tier::Network);
        QGraphicsItem::mousePressEvent(event);
    }

private:
    TopologyEditor* m_editor;
    TopoRack m_rack;
    QRectF m_area;
    int m_nodes;
    long long m_gpus;
};

int TopologyEditor::rackAt(const QPointF& scenePos) const
{
    for (QGraphicsItem* item : m_scene->items(scenePos)) {
        if (auto* rack = dynamic_cast<RackItem*>(item))
            return rack->id();
    }
    return -1;
}

// Spine switches and the rack uplinks to them.
class SpineItem : public QGraphicsItem
{
public:
    SpineItem(TopologyEditor* editor, const QRectF& area, QVector<QPointF> racks,
              QVector<double> uplinkFactors, double ratio)
        : m_editor(editor), m_area(area), m_racks(std::move(racks)),
          m_factors(std::move(uplinkFactors)), m_ratio(ratio)
    {
        setZValue(-2);
    }
    QRectF boundingRect() const override
    {
        QRectF box = m_area;
        for (const QPointF& p : m_racks)
            box = box.united(QRectF(p, QSizeF(1, 1)));
        return box.adjusted(-4, -4, 4, 4);
    }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        const auto& overlay = m_editor->overlay();
        const std::vector<TierLoad> loads =
            overlay ? tierLoads(overlay->cost) : std::vector<TierLoad>{};
        const double spine = tierUtilisation(loads, {Tier::Spine});
        const bool bottleneck = !loads.empty() && loads.front().tier == Tier::Spine;
        for (int i = 0; i < m_racks.size(); ++i) {
            const bool degraded = m_factors[i] < 1;
            painter->setPen(QPen(degraded ? QColor(200, 60, 60)
                                          : (overlay ? loadColour(spine) : QColor(120, 120, 120)),
                                 bottleneck ? 4 : 2, degraded ? Qt::DashLine : Qt::SolidLine));
            painter->drawLine(QPointF(m_racks[i].x(), m_area.bottom()), m_racks[i]);
        }
        painter->setPen(QPen(QColor(60, 60, 60), 1));
        painter->setBrush(QColor(60, 60, 60));
        painter->drawRoundedRect(m_area, 4, 4);
        painter->setPen(Qt::white);
        painter->drawText(m_area, Qt::AlignCenter,
                          QObject::tr("spine (%1:1 oversubscribed)").arg(m_ratio));
    }

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override
    {
        m_editor->showLinkReport(Tier::Spine);
        event->accept();
    }

private:
    TopologyEditor* m_editor;
    QRectF m_area;
    QVector<QPointF> m_racks;
    QVector<double> m_factors;
    double m_ratio;
};

// Wheel zoom around the cursor.
class ZoomView : public QGraphicsView
{
public:
    using QGraphicsView::QGraphicsView;

protected:
    void wheelEvent(QWheelEvent* event) override
    {
        const double factor = std::pow(1.0015, event->angleDelta().y());
        setTransformationAnchor(AnchorUnderMouse);
        scale(factor, factor);
    }
};

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
    m_properties->setMaximumWidth(280);
    m_propertyForm = new QFormLayout(m_properties);
    side->addWidget(m_properties);
    m_linkInfo = new QLabel(this);
    m_linkInfo->setObjectName("linkInfo");
    m_linkInfo->setWordWrap(true);
    m_linkInfo->setTextFormat(Qt::RichText);
    m_linkInfo->setMinimumWidth(240);
    m_linkInfo->setMaximumWidth(280);
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
        m_fitPending = true;
        if (isVisible())
            fitToWindow();
    });
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &TopologyEditor::updateProperties);
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
    const QList<int> selected = selectedNodeIds();
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
        long long gpu = 0;
        for (const TopoNode& n : g.nodes) {
            m_firstGpu[n.id] = gpu;
            gpu += n.spec.gpus;
        }
        QVector<QPointF> switchPoints;
        QVector<double> factors;
        double left = 1e300, right = -1e300, top = 1e300;
        for (const TopoRack& rack : g.racks) {
            const std::vector<const TopoNode*> nodes = g.nodesInRack(rack.id);
            QRectF area(rack.x, rack.y, 4 * (kNodeWidth + 12) + 12, 60);
            long long gpus = 0;
            for (const TopoNode* n : nodes) {
                area = area.united(QRectF(n->x - 8, n->y - 8, kNodeWidth + 16, kNodeHeight + 16));
                gpus += n->spec.gpus;
            }
            auto* item = new RackItem(this, rack, area, static_cast<int>(nodes.size()), gpus);
            m_scene->addItem(item);
            switchPoints.append(item->switchPoint());
            factors.append(rack.uplink_factor);
            left = std::min(left, area.left());
            right = std::max(right, area.right());
            top = std::min(top, area.top());
            for (const TopoNode* n : nodes) {
                auto* node = new NodeItem(this, *n);
                m_scene->addItem(node);
                node->setSelected(selected.contains(n->id));
            }
        }
        if (g.racks.size() > 1 || !g.nodes.empty()) {
            const double width = std::min(600.0, std::max(200.0, (right - left) * 0.5));
            const QRectF spine((left + right) / 2 - width / 2, top - 80, width, 30);
            m_scene->addItem(
                new SpineItem(this, spine, switchPoints, factors, g.spine_oversubscription.value));
        }
    }
    m_scene->setSceneRect(m_scene->itemsBoundingRect().adjusted(-40, -40, 40, 40));
    m_rebuilding = false;
    updateProperties();
    updateStatus();
    ClusterSpec cluster;
    QString error;
    if (m_document->cluster(&cluster, &error))
        emit clusterEdited(cluster);
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
        node.switch_in_service.assign(node.spec.switch_links_per_gpu.size(), true);
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

void TopologyEditor::fitToWindow()
{
    m_view->fitInView(m_scene->itemsBoundingRect().adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
}

bool TopologyEditor::generateFatTree(const std::string& preset, int nodes, int perRack,
                                     double ratio, QString* error)
{
    TopologyGraph graph;
    std::string message;
    if (!paraplan::generateFatTree(preset, nodes, perRack, ratio, &graph, &message)) {
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
    if (!paraplan::generateTorus(x, y, z, &graph, &message)) {
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
    if (!loadCluster(path.toStdString(), {}, &cluster, &message)) {
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
    if (!importTopologyFile(path.toStdString(), options, &imported, &message)) {
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
        text = tr("<span style='color:#c0392b'>Not a cluster Paraplan can model: %1</span>")
                   .arg(error.toHtmlEscaped());
    } else {
        text = tr("%1 racks, %2 nodes, %3 GPUs.")
                   .arg(g.is_torus ? 0 : g.racks.size())
                   .arg(g.is_torus ? 0 : g.nodes.size())
                   .arg(g.gpuCount());
    }
    if (m_overlay) {
        const std::vector<TierLoad> loads = tierLoads(m_overlay->cost);
        if (!loads.empty())
            text += tr(" Bottleneck link: %1, busy %2% of the step.")
                        .arg(tierName(loads.front().tier))
                        .arg(100 * loads.front().utilisation, 0, 'f', 1);
    }
    m_status->setText(text);
}

void TopologyEditor::updateProperties()
{
    if (m_rebuilding)
        return;
    // The edit that triggered this may come from one of these widgets, still in its signal:
    // take the rows out now and delete their widgets later.
    while (m_propertyForm->rowCount() > 0) {
        const QFormLayout::TakeRowResult row = m_propertyForm->takeRow(0);
        for (QLayoutItem* item : {row.labelItem, row.fieldItem}) {
            if (!item)
                continue;
            if (QWidget* widget = item->widget()) {
                widget->hide();
                widget->deleteLater();
            }
            delete item;
        }
    }
    const TopologyGraph& g = m_document->graph();
    const QList<int> nodes = selectedNodeIds();
    int rackId = -1;
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (auto* rack = dynamic_cast<RackItem*>(item))
            rackId = rack->id();
    }
    auto percent = [this](double value, auto apply) {
        auto* box = new QSpinBox;
        box->setRange(1, 100);
        box->setSuffix(" %");
        box->setValue(static_cast<int>(std::lround(value * 100)));
        box->setKeyboardTracking(false);
        connect(box, &QSpinBox::valueChanged, this, apply);
        return box;
    };
    if (nodes.size() == 1) {
        const TopoNode* n = g.node(nodes.front());
        m_properties->setTitle(QString::fromStdString(n->name));
        m_propertyForm->addRow(tr("GPUs"), new QLabel(QString::number(n->spec.gpus)));
        m_propertyForm->addRow(tr("Fabric"), new QLabel(nodeFabricName(n->spec.fabric)));
        const int id = n->id;
        for (size_t chip = 0; chip < n->switch_in_service.size(); ++chip) {
            auto* box =
                new QCheckBox(tr("in service (%1 links)").arg(n->spec.switch_links_per_gpu[chip]));
            box->setObjectName(QString("chip%1").arg(chip));
            box->setChecked(n->switch_in_service[chip]);
            connect(box, &QCheckBox::toggled, this, [this, id, chip](bool on) {
                m_document->edit(on ? tr("NVSwitch chip %1 back").arg(chip)
                                    : tr("NVSwitch chip %1 out").arg(chip),
                                 0, [id, chip, on](TopologyGraph& graph) {
                                     graph.node(id)->switch_in_service[chip] = on;
                                 });
            });
            m_propertyForm->addRow(tr("NVSwitch %1").arg(chip), box);
        }
        m_propertyForm->addRow(tr("NVLink at"), percent(n->nvlink_factor, [this, id](int value) {
                                   m_document->edit(tr("NVLink at %1%").arg(value), 9001,
                                                    [id, value](TopologyGraph& graph) {
                                                        graph.node(id)->nvlink_factor =
                                                            value / 100.0;
                                                    });
                               }));
        m_propertyForm->addRow(tr("NICs at"), percent(n->nic_factor, [this, id](int value) {
                                   m_document->edit(tr("NICs at %1%").arg(value), 9002,
                                                    [id, value](TopologyGraph& graph) {
                                                        graph.node(id)->nic_factor = value / 100.0;
                                                    });
                               }));
        m_propertyForm->addRow(
            tr("NICs"),
            new QLabel(tr("%1 x %2 GB/s").arg(n->spec.nics).arg(n->spec.nic_GBps.value)));
    } else if (rackId >= 0 && g.rack(rackId)) {
        const TopoRack* rack = g.rack(rackId);
        m_properties->setTitle(QString::fromStdString(rack->name));
        m_propertyForm->addRow(tr("Nodes"),
                               new QLabel(QString::number(g.nodesInRack(rackId).size())));
        m_propertyForm->addRow(
            tr("Uplink at"), percent(rack->uplink_factor, [this, rackId](int value) {
                m_document->edit(tr("Rack uplink at %1%").arg(value), 9003,
                                 [rackId, value](TopologyGraph& graph) {
                                     graph.rack(rackId)->uplink_factor = value / 100.0;
                                 });
            }));
    } else {
        m_properties->setTitle(nodes.size() > 1 ? tr("%1 nodes selected").arg(nodes.size())
                                                : tr("Cluster"));
        m_propertyForm->addRow(new QLabel(QString::fromStdString(g.name)));
        if (!g.is_torus) {
            auto* spine = new QDoubleSpinBox;
            spine->setObjectName("spineRatio");
            spine->setRange(1, 64);
            spine->setDecimals(1);
            spine->setSuffix(" : 1");
            spine->setValue(g.spine_oversubscription.value);
            spine->setKeyboardTracking(false);
            connect(spine, &QDoubleSpinBox::valueChanged, this, [this](double ratio) {
                m_document->edit(tr("Spine %1:1").arg(ratio), 9004, [ratio](TopologyGraph& graph) {
                    graph.spine_oversubscription =
                        userEntry(ratio, "spine oversubscription (editor)");
                });
            });
            m_propertyForm->addRow(tr("Spine"), spine);
            // The node type: every node is alike, so these apply to all of them.
            if (!g.nodes.empty()) {
                const NodeSpec& type = g.nodes.front().spec;
                auto* nicKind = new QComboBox;
                nicKind->setObjectName("nicKind");
                for (const InterconnectSpec& link : HardwareCatalog::bundled().interconnects) {
                    if (link.kind == LinkKind::InfiniBand || link.kind == LinkKind::RoCE)
                        nicKind->addItem(QString::fromStdString(link.name),
                                         QString::fromStdString(link.id));
                }
                nicKind->setCurrentIndex(nicKind->findData(QString::fromStdString(type.nic_id)));
                connect(nicKind, &QComboBox::activated, this, [this, nicKind](int index) {
                    const std::string id = nicKind->itemData(index).toString().toStdString();
                    m_document->edit(tr("NICs: %1").arg(nicKind->itemText(index)), 0,
                                     [id](TopologyGraph& graph) {
                                         const InterconnectSpec* nic =
                                             HardwareCatalog::bundled().interconnect(id);
                                         for (TopoNode& n : graph.nodes) {
                                             n.spec.nic_id = id;
                                             n.spec.nic_GBps = {
                                                 nic->per_direction_GBps, Origin::Preset,
                                                 nic->name + " (" + nic->source + ")"};
                                             if (nic->achievable_fraction > 0)
                                                 n.spec.nic_efficiency = {nic->achievable_fraction,
                                                                          Origin::Preset,
                                                                          nic->achievable_source};
                                         }
                                     });
                });
                m_propertyForm->addRow(tr("NIC kind"), nicKind);
                auto* nics = new QSpinBox;
                nics->setObjectName("nicsPerNode");
                nics->setRange(0, 64);
                nics->setValue(type.nics);
                nics->setKeyboardTracking(false);
                connect(nics, &QSpinBox::valueChanged, this, [this](int count) {
                    m_document->edit(tr("%1 NICs per node").arg(count), 9005,
                                     [count](TopologyGraph& graph) {
                                         for (TopoNode& n : graph.nodes)
                                             n.spec.nics = count;
                                     });
                });
                m_propertyForm->addRow(tr("NICs per node"), nics);
                auto* rate = new QDoubleSpinBox;
                rate->setObjectName("nicRate");
                rate->setRange(0.1, 1000);
                rate->setSuffix(tr(" GB/s per direction"));
                rate->setValue(type.nic_GBps.value);
                rate->setKeyboardTracking(false);
                connect(rate, &QDoubleSpinBox::valueChanged, this, [this](double GBps) {
                    m_document->edit(tr("NIC rate %1 GB/s").arg(GBps), 9006,
                                     [GBps](TopologyGraph& graph) {
                                         for (TopoNode& n : graph.nodes)
                                             n.spec.nic_GBps = userEntry(GBps, "NIC rate (editor)");
                                     });
                });
                m_propertyForm->addRow(tr("NIC rate"), rate);
                if (type.fabric != NodeFabric::PCIe) {
                    auto* nvlink = new QDoubleSpinBox;
                    nvlink->setObjectName("nvlinkRate");
                    nvlink->setRange(0.1, 1000);
                    nvlink->setSuffix(tr(" GB/s per link"));
                    nvlink->setValue(type.nvlink_link_GBps.value);
                    nvlink->setKeyboardTracking(false);
                    connect(nvlink, &QDoubleSpinBox::valueChanged, this, [this](double GBps) {
                        m_document->edit(tr("NVLink %1 GB/s per link").arg(GBps), 9007,
                                         [GBps](TopologyGraph& graph) {
                                             for (TopoNode& n : graph.nodes)
                                                 n.spec.nvlink_link_GBps =
                                                     userEntry(GBps, "NVLink rate (editor)");
                                         });
                    });
                    m_propertyForm->addRow(tr("NVLink"), nvlink);
                    QString links;
                    for (int chip : type.switch_links_per_gpu)
                        links += (links.isEmpty() ? "" : "+") + QString::number(chip);
                    m_propertyForm->addRow(tr("Links per GPU"),
                                           new QLabel(links.isEmpty() ? tr("mesh pairs") : links));
                }
            }
        }
        m_propertyForm->addRow(tr("GPUs"), new QLabel(QString::number(g.gpuCount())));
    }
}

} // namespace paraplan::ui
