// The topology scene's parts built one at a time (a rack's item, the spine) and the in-place
// update that redraws only what a small edit changed (a drag's tick at 1,000,000 GPUs redraws
// a rack, not 3,907 of them).
#include "topologydelta.h"
#include "topologyeditor.h"
#include "topologyitems.h"

#include <QGraphicsScene>

#include <algorithm>
#include <set>

namespace paraplan::ui {

namespace {
constexpr size_t kMaxChangedNodes = 64; ///< more than these: the scene is built afresh
} // namespace

RackItem* TopologyEditor::makeRackItem(size_t index)
{
    const TopoRack& rack = m_document->graph().racks[index];
    QRectF area(rack.x, rack.y, 4 * (kNodeWidth + 12) + 12, 60);
    long long gpus = 0;
    for (const TopoNode* n : m_byRack[index]) {
        gpus += n->spec->gpus;
        area = area.united(QRectF(n->x - 8, n->y - 8, kNodeWidth + 16, kNodeHeight + 16));
    }
    auto* item = new RackItem(this, rack, area, static_cast<int>(m_byRack[index].size()), gpus, {});
    item->setExpanded(false);
    m_scene->addItem(item);
    return item;
}

void TopologyEditor::addSpine()
{
    const TopologyGraph& g = m_document->graph();
    m_spine = nullptr;
    if (g.racks.size() <= 1 && g.nodes.empty())
        return;
    QVector<QPointF> switchPoints;
    QVector<double> factors;
    double left = 1e300, right = -1e300, top = 1e300;
    for (int r = 0; r < m_rackItems.size(); ++r) {
        const QRectF area = m_rackItems[r]->area();
        switchPoints.append(m_rackItems[r]->switchPoint());
        factors.append(g.racks[static_cast<size_t>(r)].uplink_factor);
        left = std::min(left, area.left());
        right = std::max(right, area.right());
        top = std::min(top, area.top());
    }
    const double width = std::min(600.0, std::max(200.0, (right - left) * 0.5));
    const QRectF spine((left + right) / 2 - width / 2, top - 80, width, 30);
    m_spine = new SpineItem(this, spine, switchPoints, factors, g.spine_oversubscription.value);
    m_scene->addItem(m_spine);
}

bool TopologyEditor::updateSceneInPlace(bool* panelStale)
{
    const std::shared_ptr<const TopologyGraph> now = m_document->sharedGraph();
    const std::shared_ptr<const TopologyGraph> drawn = m_drawn;
    const TopologyGraph& g = *now;
    // Only a drawing of the same racks and nodes (same IDs, racks and specs at each index, so
    // the same rack members and GPU numbering) whose nodes' own fields changed.
    if (!drawn || g.is_torus || drawn->is_torus || g.racks != drawn->racks ||
        g.nodes.size() != drawn->nodes.size() ||
        !(g.spine_oversubscription == drawn->spine_oversubscription) ||
        m_byRack.size() != g.racks.size())
        return false;
    std::set<int> changedRacks;
    std::set<int> changedNodes;
    // The edit's own change when the document knows it, else a pass over the nodes.
    std::vector<int> changedIds;
    const GraphDelta* change = m_document->changeBetween(drawn.get(), now.get());
    if (change && !change->changedNodesOnly(&changedIds))
        return false;
    for (int id : changedIds) {
        changedNodes.insert(id);
        changedRacks.insert(g.node(id)->rack);
    }
    if (changedNodes.size() > kMaxChangedNodes)
        return false;
    for (size_t n = 0; !change && n < g.nodes.size(); ++n) {
        const TopoNode& a = drawn->nodes[n];
        const TopoNode& b = g.nodes[n];
        if (a.id != b.id || a.rack != b.rack || !a.spec.sharedWith(b.spec))
            return false;
        if (a == b)
            continue;
        changedNodes.insert(b.id);
        if (changedNodes.size() > kMaxChangedNodes)
            return false;
        changedRacks.insert(b.rack);
    }
    // The property panel shows the graph's own fields, a rack's (unchanged here, and its
    // members), or the selected node's: it is rebuilt when one of those changed.
    const bool headSame = g.name == drawn->name && g.gpu_id == drawn->gpu_id &&
                          g.source == drawn->source && g.spine_switches == drawn->spine_switches &&
                          g.sharp == drawn->sharp && g.torus == drawn->torus &&
                          g.next_id == drawn->next_id && g.base == drawn->base;
    *panelStale = !headSame;
    // The racks' node lists now point into the new drawing (the same index in each).
    for (auto& members : m_byRack)
        for (const TopoNode*& n : members)
            n = g.nodes.data() + (n - drawn->nodes.data());
    m_drawn = now;
    m_keepSelected = selectedNodeIds();
    for (int id : m_keepSelected)
        *panelStale = *panelStale || changedNodes.count(id) > 0;
    bool switchMoved = false;
    for (int r = 0; r < m_rackItems.size(); ++r) {
        if (!changedRacks.count(g.racks[static_cast<size_t>(r)].id))
            continue;
        const bool expanded = m_expanded.contains(r);
        if (expanded)
            collapseRack(r);
        const bool selected = m_rackItems[r]->isSelected();
        const QPointF switchPoint = m_rackItems[r]->switchPoint();
        delete m_rackItems[r]; // leaves the scene
        m_rackItems[r] = makeRackItem(static_cast<size_t>(r));
        m_rackItems[r]->setSelected(selected);
        if (expanded)
            expandRack(r);
        switchMoved = switchMoved || m_rackItems[r]->switchPoint() != switchPoint;
    }
    if (switchMoved) { // the spine's links reach the racks' switches
        delete m_spine;
        addSpine();
    }
    return true;
}

} // namespace paraplan::ui
