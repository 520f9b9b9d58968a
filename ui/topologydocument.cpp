#include "topologyeditor.h"

#include "clusterio.h"
#include "plandocument.h"
#include "topologydelta.h"

#include <QDateTime>
#include <QUndoCommand>

#include <optional>

namespace paraplan::ui {
namespace {

// A drawing edit of a document on its own (no plan): what the edit changed, not the graphs.
class GraphCommand : public QUndoCommand
{
public:
    GraphCommand(TopologyDocument* document, const QString& text, int mergeId,
                 const TopologyGraph& before, TopologyGraph after)
        : QUndoCommand(text), m_document(document), m_mergeId(mergeId),
          m_delta(GraphDelta::between(before, after)), m_pending(std::move(after)),
          m_time(QDateTime::currentMSecsSinceEpoch())
    {
    }
    int id() const override { return m_mergeId == 0 ? -1 : m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* next = static_cast<const GraphCommand*>(other);
        if (next->m_time - m_time > 1500)
            return false;
        m_delta = m_delta.then(next->m_delta); // what both touched, not the drawing
        m_time = next->m_time;
        return true;
    }
    void undo() override
    {
        TopologyGraph graph = m_document->graph();
        m_delta.revert(&graph);
        m_document->setGraphFromHistory(graph);
    }
    void redo() override
    {
        if (m_pending) {
            m_document->setGraphFromHistory(*m_pending);
            m_pending.reset();
            return;
        }
        TopologyGraph graph = m_document->graph();
        m_delta.apply(&graph);
        m_document->setGraphFromHistory(graph);
    }

private:
    TopologyDocument* m_document;
    int m_mergeId;
    GraphDelta m_delta;
    std::optional<TopologyGraph> m_pending; ///< shown by the first redo (the push), then let go
    qint64 m_time;
};

// Whether two drawings have the same racks and nodes to lay out (so the same layout afresh).
bool sameShape(const TopologyGraph& a, const TopologyGraph& b)
{
    if (a.is_torus || b.is_torus)
        return a.is_torus == b.is_torus && a.torus.dims == b.torus.dims;
    return a.racks.size() == b.racks.size() && a.nodes.size() == b.nodes.size() &&
           a.nodeCountsByRack() == b.nodeCountsByRack();
}

} // namespace

TopologyDocument::TopologyDocument(QObject* parent) : QObject(parent) {}

void TopologyDocument::edit(const QString& description, int mergeId,
                            const std::function<void(TopologyGraph&)>& change)
{
    TopologyGraph after = *m_graph;
    change(after);
    if (!m_plan) {
        m_undo.push(new GraphCommand(this, description, mergeId, *m_graph, std::move(after)));
        return;
    }
    // One plan edit: the drawing, and the cluster it describes when the model can read it
    // (an unfinished drawing keeps the plan's last valid cluster).
    // From the plan's own drawing, the change is found once: the plan's step keeps it, the
    // editor redraws what it names.
    const bool fromPlan = m_plan->plan().drawing == m_graph;
    if (fromPlan)
        m_change.delta = GraphDelta::between(*m_graph, after);
    auto drawing = std::make_shared<const TopologyGraph>(std::move(after));
    if (fromPlan)
        m_change = {m_graph, drawing.get(), std::move(m_change.delta)};
    m_committing = true;
    m_plan->edit(
        description, Field::Topology,
        [this, drawing](Plan& plan) {
            ClusterSpec cluster;
            std::string error;
            const bool ok =
                clusterFromGraph(*drawing, &cluster, &error, HardwareCatalog::bundled());
            if (ok)
                plan.cluster = cluster;
            plan.drawing = drawing;
            m_committed = {drawing.get(), ok, cluster, error}; // syncFromPlan reads it again
        },
        mergeId, fromPlan ? &m_change.delta : nullptr);
    m_committing = false;
    m_committed.drawing = nullptr; // read nothing of it again (its cluster is left as it was)
    m_committed.ok = false;
    m_change = {};
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
    const bool sameCluster = m_synced && plan.cluster == m_syncedCluster;
    if (plan.drawing.get() == m_syncedDrawing && sameCluster && m_syncedDrawing)
        return;
    if (!plan.drawing && !m_syncedDrawing && sameCluster)
        return;
    // graphForPlan, without its copy where the plan's drawing is shown as it is (its base
    // is the plan's cluster already, as after the editor's own edits); the cluster read on
    // the way is the one cluster() gives.
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    const std::shared_ptr<const TopologyGraph> shown = m_graph;
    m_clusterRead = false;
    if (plan.drawing && plan.drawing->base == plan.cluster) {
        std::string message;
        if (plan.drawing.get() == m_committed.drawing) { // read when this edit committed it
            m_clusterOk = m_committed.ok;
            m_cluster = m_committed.cluster;
            message = m_committed.error;
        } else {
            m_clusterOk = clusterFromGraph(*plan.drawing, &m_cluster, &message, catalog);
        }
        if (!m_clusterOk || m_cluster == plan.cluster) {
            m_graph = plan.drawing;
            m_clusterError = QString::fromStdString(message);
            m_clusterRead = true;
        }
    }
    if (!m_clusterRead)
        m_graph = std::make_shared<const TopologyGraph>(graphForPlan(plan, catalog));
    m_syncedDrawing = plan.drawing.get();
    m_syncedCluster = plan.cluster;
    m_synced = true;
    emit graphChanged();
    // A cluster of a new shape laid out afresh (a preset, an import, another node count) is
    // fitted to the window; the user's own edits, and edits of the cluster's fields that keep
    // its racks and nodes (the spine, the node type), keep the view where it is.
    if (!m_committing && !plan.drawing && !sameShape(*shown, *m_graph))
        emit graphReset();
}

void TopologyDocument::reset(const TopologyGraph& graph)
{
    m_graph = std::make_shared<const TopologyGraph>(graph);
    m_clusterRead = false;
    m_undo.clear();
    emit graphChanged();
    emit graphReset();
}

void TopologyDocument::setGraphFromHistory(TopologyGraph graph)
{
    m_graph = std::make_shared<const TopologyGraph>(std::move(graph));
    m_clusterRead = false;
    emit graphChanged();
}

bool TopologyDocument::cluster(ClusterSpec* cluster, QString* error) const
{
    // Read once per graph (the status line and the overlay ask on every plan result).
    if (!m_clusterRead) {
        std::string message;
        m_clusterOk = clusterFromGraph(*m_graph, &m_cluster, &message, HardwareCatalog::bundled());
        m_clusterError = QString::fromStdString(message);
        m_clusterRead = true;
    }
    if (!m_clusterOk) {
        *error = m_clusterError;
        return false;
    }
    *cluster = m_cluster;
    return true;
}

} // namespace paraplan::ui
