#include "topologyitems.h"

#include "plandocument.h"
#include "topologyeditor.h"

#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include <cmath>

namespace paraplan::ui {
namespace {

// Green (idle) to red (saturated) for a link's share of the step.
QColor loadColour(double utilisation)
{
    const double u = std::clamp(utilisation, 0.0, 1.0);
    return QColor::fromHsvF((1.0 - u) * 0.33, 0.85, 0.8);
}

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

QColor groupColour(long long group)
{
    const int hue = static_cast<int>(std::fmod(group * 137.508, 360.0));
    return QColor::fromHsv(hue, 150 + static_cast<int>(group % 3) * 35,
                           225 - static_cast<int>(group % 2) * 40);
}

// --- NodeItem ------------------------------------------------------------------------------

NodeItem::NodeItem(TopologyEditor* editor, const TopoNode& node)
    : m_editor(editor), m_id(node.id), m_node(node)
{
    setFlags(ItemIsSelectable | ItemIsMovable);
    setPos(node.x, node.y);
    setToolTip(QString::fromStdString(node.name));
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    if (lod < kCollapsedLod)
        return; // the rack draws itself as one box
    const NodeSpec& spec = *m_node.spec;
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

void NodeItem::mousePressEvent(QGraphicsSceneMouseEvent* event)
{
    m_pressPos = pos();
    if (event->pos().y() > 56)
        m_editor->showLinkReport(Tier::Network);
    else if (event->pos().y() > 45)
        m_editor->showLinkReport(Tier::NVSwitch);
    QGraphicsItem::mousePressEvent(event);
}

void NodeItem::mouseReleaseEvent(QGraphicsSceneMouseEvent* event)
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

// --- RackItem ------------------------------------------------------------------------------

RackItem::RackItem(TopologyEditor* editor, const TopoRack& rack, const QRectF& area, int nodes,
                   long long gpus, QVector<QPointF> anchors)
    : m_editor(editor), m_rack(rack), m_area(area), m_nodes(nodes), m_gpus(gpus),
      m_anchors(std::move(anchors))
{
    setFlags(ItemIsSelectable);
    setZValue(-1);
}

void RackItem::setExpanded(bool expanded, QVector<QPointF> anchors)
{
    m_expanded = expanded;
    m_anchors = std::move(anchors);
    update();
}

void RackItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    painter->setPen(
        QPen(isSelected() ? QColor(0, 114, 178) : QColor(150, 110, 30), isSelected() ? 3 : 1.5));
    if (lod < kCollapsedLod || !m_expanded) {
        painter->setBrush(QColor(236, 226, 205));
        painter->drawRect(m_area);
        drawCounts(painter);
        return;
    }
    const auto& overlay = m_editor->overlay();
    const std::vector<TierLoad> loads =
        overlay ? tierLoads(overlay->cost) : std::vector<TierLoad>{};
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
    for (const QPointF& anchor : m_anchors)
        painter->drawLine(QPointF(tor.center().x(), tor.bottom()), anchor);
}

void RackItem::drawCounts(QPainter* painter) const
{
    // The counts in screen pixels, on one line or three (at 8 points, else 7), only where the
    // box on screen holds them (a million-GPU cluster fitted to the window is a grid of plain
    // boxes, and a box just too small stays plain rather than cut).
    const QRectF box = painter->worldTransform().mapRect(m_area).adjusted(3, 3, -3, -3);
    if (box.width() < 36 || box.height() < 12)
        return;
    const QString name = QString::fromStdString(m_rack.name);
    const QString nodes =
        m_nodes == 1 ? QObject::tr("1 node") : QObject::tr("%1 nodes").arg(m_nodes);
    const QString gpus = QObject::tr("%1 GPUs").arg(m_gpus);
    QFont font = painter->font();
    QString text;
    for (const double points : {8.0, 7.0}) {
        font.setPointSizeF(points);
        const QFontMetricsF metrics(font);
        const QString line = QObject::tr("%1: %2, %3").arg(name, nodes, gpus);
        if (points == 8 && metrics.horizontalAdvance(line) <= box.width() &&
            metrics.height() <= box.height()) {
            text = line;
            break;
        }
        if (std::max({metrics.horizontalAdvance(name), metrics.horizontalAdvance(nodes),
                      metrics.horizontalAdvance(gpus)}) <= box.width() &&
            3 * metrics.lineSpacing() <= box.height()) {
            text = name + "\n" + nodes + "\n" + gpus;
            break;
        }
    }
    if (text.isEmpty())
        return;
    painter->save();
    painter->resetTransform();
    painter->setFont(font);
    painter->setPen(Qt::black);
    painter->drawText(box, Qt::AlignCenter, text);
    painter->restore();
}

void RackItem::mousePressEvent(QGraphicsSceneMouseEvent* event)
{
    if (event->pos().y() < m_area.top() + 20)
        m_editor->showLinkReport(Tier::Network);
    QGraphicsItem::mousePressEvent(event);
}

// --- SpineItem -----------------------------------------------------------------------------

SpineItem::SpineItem(TopologyEditor* editor, const QRectF& area, QVector<QPointF> racks,
                     QVector<double> uplinkFactors, double ratio)
    : m_editor(editor), m_area(area), m_racks(std::move(racks)),
      m_factors(std::move(uplinkFactors)), m_ratio(ratio)
{
    setZValue(-2);
}

QRectF SpineItem::boundingRect() const
{
    QRectF box = m_area;
    for (const QPointF& p : m_racks)
        box = box.united(QRectF(p, QSizeF(1, 1)));
    return box.adjusted(-4, -4, 4, 4);
}

void SpineItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*)
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

void SpineItem::mousePressEvent(QGraphicsSceneMouseEvent* event)
{
    m_editor->showLinkReport(Tier::Spine);
    event->accept();
}

// --- ZoomView ------------------------------------------------------------------------------

void ZoomView::fitScene()
{
    // fitInView's 2-pixel margin, in the viewport a scroll bar does not narrow: fitting into
    // the current viewport (or fitting a rect smaller than the scene's) left a bar showing.
    const QRectF rect = sceneRect();
    const QSize room = maximumViewportSize() - QSize(4, 4);
    if (rect.isEmpty() || room.width() < 1 || room.height() < 1)
        return;
    const double scale = std::min(room.width() / rect.width(), room.height() / rect.height());
    m_fitted = QTransform::fromScale(scale, scale);
    setTransform(*m_fitted);
    centerOn(rect.center());
}

void ZoomView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    // Still as Fit left it (no zoom since, by the wheel or a call): fit the new size.
    if (m_fitted && transform() == *m_fitted)
        fitScene();
}

void ZoomView::wheelEvent(QWheelEvent* event)
{
    m_fitted.reset();
    const double factor = std::pow(1.0015, event->angleDelta().y());
    setTransformationAnchor(AnchorUnderMouse);
    scale(factor, factor);
}

} // namespace paraplan::ui
