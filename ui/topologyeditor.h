#pragma once

#include "planevaluator.h"
#include "topologydelta.h"
#include "topologygraph.h"
#include "topologyimport.h"

#include <QMap>
#include <QObject>
#include <QUndoStack>
#include <QVector>
#include <QWidget>

#include <functional>
#include <memory>

class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QComboBox;
class QFormLayout;
class QGroupBox;

namespace paraplan::ui {

class NodeItem;
class ZoomView;
class RackItem;
class SpineItem;

class PlanDocument;

/// The topology being drawn (model first: items only read it and ask for edits). Attached to
/// a plan, it is a view of the plan's cluster and drawing: every edit is a plan edit on the
/// plan's one undo history. On its own (tests, a cluster file) it keeps a history of its own.
class TopologyDocument : public QObject
{
    Q_OBJECT

public:
    explicit TopologyDocument(QObject* parent = nullptr);

    const TopologyGraph& graph() const { return *m_graph; }
    /// The graph shown, shared: it never changes in place (an edit shows a new one).
    std::shared_ptr<const TopologyGraph> sharedGraph() const { return m_graph; }
    QUndoStack* undoStack();
    /// From now on the drawing follows `plan` and edits it; the plan's undo stack is the one.
    void attach(PlanDocument* plan);

    /// One undoable edit. Edits with the same non-zero `mergeId` in a row merge (a drag).
    void edit(const QString& description, int mergeId,
              const std::function<void(TopologyGraph&)>& change);
    /// Replaces the graph without history (a new cluster from the plan or a file).
    void reset(const TopologyGraph& graph);
    void setGraphFromHistory(TopologyGraph graph);

    /// While an edit is shown: the change it makes from `from` to `to` when the document
    /// knows it (it found it once for the plan's step), else null.
    const GraphDelta* changeBetween(const TopologyGraph* from, const TopologyGraph* to) const
    {
        return m_change.from.get() == from && m_change.to == to && from ? &m_change.delta : nullptr;
    }

    /// The cluster the drawing describes, or why it cannot be modelled.
    bool cluster(ClusterSpec* cluster, QString* error) const;

signals:
    void graphChanged();
    /// A new graph without history (from the plan or a file): views fit it to the window.
    void graphReset();

private:
    void syncFromPlan();

    /// Shown as it is, never changed in place: attached, it is the plan's own drawing whenever
    /// that is what the plan shows (no copy per edit).
    std::shared_ptr<const TopologyGraph> m_graph = std::make_shared<const TopologyGraph>();
    QUndoStack m_undo;
    PlanDocument* m_plan = nullptr;
    const void* m_syncedDrawing = nullptr; ///< the plan drawing and cluster last shown
    ClusterSpec m_syncedCluster;
    bool m_synced = false;
    bool m_committing = false;
    struct Change // what the edit in progress changes, from the plan's drawing
    {
        std::shared_ptr<const TopologyGraph> from;
        const TopologyGraph* to = nullptr;
        GraphDelta delta;
    } m_change;
    struct Committed // the cluster read from the drawing an edit is committing
    {
        const void* drawing = nullptr;
        bool ok = false;
        ClusterSpec cluster;
        std::string error;
    } m_committed;
    // The cluster the graph describes, read once per graph.
    mutable bool m_clusterRead = false;
    mutable bool m_clusterOk = false;
    mutable ClusterSpec m_cluster;
    mutable QString m_clusterError;
};

/// The topology editor: canvas, tools, property panel, and the plan overlaid.
class TopologyEditor : public QWidget
{
    Q_OBJECT

public:
    explicit TopologyEditor(QWidget* parent = nullptr);
    ~TopologyEditor() override;

    TopologyDocument* document() { return m_document; }
    QGraphicsView* view() const;
    QGraphicsScene* scene() const { return m_scene; }

    /// Colours GPUs by the plan's groups and links by the traffic they carry.
    void setOverlay(std::shared_ptr<const PlanResults> results);
    std::shared_ptr<const PlanResults> overlay() const { return m_overlay; }
    ParallelDim overlayDim() const { return m_overlayDim; }
    void setOverlayDim(ParallelDim dim);
    /// The overlay colour group of GPU `gpu` of node `node` (for tests), -1 without a plan.
    long long overlayGroup(int nodeId, int gpu) const;

    // Tools, also bound to the toolbar and shortcuts.
    void addNode();
    void addRack();
    void deleteSelection();
    void copySelection();
    void paste();
    void fitToWindow();
    bool generateFatTree(const std::string& preset, int nodes, int perRack, double ratio,
                         QString* error);
    bool generateTorus(int x, int y, int z, QString* error);
    bool openCluster(const QString& path, QString* error);
    bool saveCluster(const QString& path, QString* error);
    bool importTopology(const QString& path, const TopologyImportOptions& options, QString* error);

    /// What a link carries, for the link under the cursor or clicked ("NIC", "uplink").
    QString linkReport(Tier tier) const;
    void showLinkReport(Tier tier);
    QString statusText() const;
    /// Level of detail of a large cluster: racks in view get their node items once zoomed in
    /// past the collapsed level, racks out of view or zoomed out are one box each (so the
    /// scene holds a bounded number of items). Runs on every zoom and scroll.
    void updateDetail();
    void selectNodes(const QList<int>& ids);
    QList<int> selectedNodeIds() const;

signals:
    /// The drawing describes a cluster the cost model can use.
    void clusterEdited(const paraplan::ClusterSpec& cluster);
    void errorReported(const QString& message);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void rebuildScene();
    void buildFatTree(const QList<int>& selected);
    /// The scene's bounds, level of detail, panels (`properties`: the property panel too)
    /// and cluster after a (re)build.
    void finishScene(bool properties);
    // topologyscene.cpp
    RackItem* makeRackItem(size_t index);
    void addSpine();
    /// Redraws only the racks of the nodes an edit changed when that is all it changed
    /// (a drag's tick); false when the scene must be built afresh. `panelStale`: whether
    /// the property panel shows something that changed.
    bool updateSceneInPlace(bool* panelStale);
    int expandRack(int index);
    void collapseRack(int index);
    int rackAt(const QPointF& scenePos) const;
    void updateStatus();
    // The property panel (topologyproperties.cpp): one builder per kind of selection.
    void updateProperties();
    void clearProperties();
    void showNodeProperties(const TopoNode& node);
    void showRackProperties(const TopoRack& rack);
    void showClusterProperties(int selectedNodes);
    void addNodeTypeProperties(const NodeSpec& type);

    TopologyDocument* m_document;
    QGraphicsScene* m_scene;
    ZoomView* m_view;
    QGroupBox* m_properties;
    QFormLayout* m_propertyForm;
    QLabel* m_status;
    QLabel* m_linkInfo;
    QComboBox* m_overlayCombo;
    std::shared_ptr<const PlanResults> m_overlay;
    ParallelDim m_overlayDim = ParallelDim::TP;
    std::vector<TopoNode> m_clipboard;
    QHash<int, long long> m_firstGpu; ///< node id -> its first global GPU index
    bool m_rebuilding = false;
    bool m_fitPending = true;
    long long m_drawnNodes = 0; ///< nodes the scene draws (a large cluster is drawn in part)
    long long m_drawnRacks = 0;
    // Level of detail (a cluster of more than kMaxDrawnNodes nodes is drawn lazily).
    bool m_lazy = false;
    std::vector<std::vector<const TopoNode*>> m_byRack; ///< into the document's graph
    QVector<RackItem*> m_rackItems;                     ///< by rack index
    QMap<int, QVector<NodeItem*>> m_expanded;           ///< rack index -> its node items
    QList<int> m_keepSelected;                          ///< node ids selected before a rebuild
    std::shared_ptr<const TopologyGraph> m_drawn;       ///< the graph the scene shows
    SpineItem* m_spine = nullptr;

    friend class NodeItem;
    friend class RackItem;
};

} // namespace paraplan::ui
