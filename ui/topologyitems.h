#pragma once

// The topology editor's canvas items: nodes, racks, the spine, and the zooming view. Private
// to the editor (topologyeditor.cpp draws the scene with them).

#include "topologygraph.h"

#include <QGraphicsItem>
#include <QGraphicsView>

#include <QVector>
#include <optional>

class QGraphicsSceneMouseEvent;
class QPainter;
class QStyleOptionGraphicsItem;
class QWheelEvent;

namespace paraplan::ui {

class TopologyEditor;

constexpr double kNodeWidth = 120;
constexpr double kNodeHeight = 70;
// Below this zoom, racks collapse to one box and nodes are not drawn.
constexpr double kCollapsedLod = 0.12;
// Below this zoom, nodes are drawn as plain boxes with coloured stripes.
constexpr double kSimpleLod = 0.45;

/// The colour of a plan group (TP group, stage, replica) on the canvas.
QColor groupColour(long long group);

// One server: its GPUs (coloured by the plan's groups), NVSwitch chips and NIC bundle.
class NodeItem : public QGraphicsItem
{
public:
    NodeItem(TopologyEditor* editor, const TopoNode& node);
    int id() const { return m_id; }
    QRectF boundingRect() const override { return {0, 0, kNodeWidth, kNodeHeight}; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override;

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;

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
    /// `anchors`: the top centres of the rack's drawn nodes (its switch's downlinks).
    RackItem(TopologyEditor* editor, const TopoRack& rack, const QRectF& area, int nodes,
             long long gpus, QVector<QPointF> anchors);
    int id() const { return m_rack.id; }
    QPointF switchPoint() const { return {m_area.center().x(), m_area.top() + 10}; }
    /// Drawn with its switch and downlinks to `anchors` (its node items are in the scene), or
    /// as one box with its counts (collapsed: a large cluster's rack out of view).
    void setExpanded(bool expanded, QVector<QPointF> anchors = {});
    bool expanded() const { return m_expanded; }
    const QRectF& area() const { return m_area; }
    QRectF boundingRect() const override { return m_area.adjusted(-4, -4, 4, 4); }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override;

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;

private:
    /// The rack's counts, in screen pixels, where its box on screen is large enough to read.
    void drawCounts(QPainter* painter) const;
    TopologyEditor* m_editor;
    TopoRack m_rack;
    QRectF m_area;
    int m_nodes;
    long long m_gpus;
    QVector<QPointF> m_anchors;
    bool m_expanded = true;
};

// Spine switches and the rack uplinks to them.
class SpineItem : public QGraphicsItem
{
public:
    SpineItem(TopologyEditor* editor, const QRectF& area, QVector<QPointF> racks,
              QVector<double> uplinkFactors, double ratio);
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override;

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;

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

    /// Shows the whole scene rect (what the scroll bars range over) in the room the view has
    /// without scroll bars, so that no bar shows at any size; it stays fitted as the view is
    /// resized (the status line below it wraps, the window settles) until the user zooms.
    void fitScene();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    std::optional<QTransform> m_fitted; ///< the transform Fit set, while the view is fitted
};

} // namespace paraplan::ui
