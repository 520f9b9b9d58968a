#include "topologyeditor.h"

#include "clusterio.h"
#include "plandocument.h"

#include <QDateTime>
#include <QUndoCommand>

namespace paraplan::ui {
namespace {

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
            if (clusterFromGraph(*drawing, &cluster, &error, HardwareCatalog::bundled()))
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
    m_graph = graphForPlan(plan, HardwareCatalog::bundled());
    m_clusterRead = false;
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
    m_clusterRead = false;
    m_undo.clear();
    emit graphChanged();
    emit graphReset();
}

void TopologyDocument::setGraphFromHistory(const TopologyGraph& graph)
{
    m_graph = graph;
    m_clusterRead = false;
    emit graphChanged();
}

bool TopologyDocument::cluster(ClusterSpec* cluster, QString* error) const
{
    // Read once per graph (the status line and the overlay ask on every plan result).
    if (!m_clusterRead) {
        std::string message;
        m_clusterOk = clusterFromGraph(m_graph, &m_cluster, &message, HardwareCatalog::bundled());
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
