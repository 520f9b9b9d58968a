#pragma once

#include "fileidentity.h"
#include "plan.h"

#include <QFileSystemWatcher>
#include <QObject>
#include <QString>
#include <QUndoStack>

#include <functional>

namespace paraplan {
class GraphDelta;
}

namespace paraplan::ui {

/// Which input an edit touched; consecutive edits of the same field merge into one undo step
/// (a slider or spin-box drag is one step).
enum class Field
{
    Whole = 0, ///< never merges (preset changes, imports)
    ModelShape,
    ClusterNodes,
    ClusterRack,
    ClusterSpine,
    ClusterSwitchOut,
    ClusterNicRate,
    Tp,
    Pp,
    Dp,
    Cp,
    Ep,
    Zero,
    SequenceParallel,
    Recompute,
    Interleave,
    MicroBatch,
    GlobalBatch,
    SeqLen,
    Dtype,
    TrainTokens,
    GpuHourUsd,
    Attention,
    Kernels,
    TpOverlap,
    StageLayers,
    DpShard,
    Topology, ///< a drawing edit; merges by the edit's own merge key
    Framework,
    StateDtypes, ///< training.grad_reduce_dtype and training.optimizer_dtype
};

/// The plan being edited: its value, its file, and the undo history of every edit.
class PlanDocument : public QObject
{
    Q_OBJECT

public:
    explicit PlanDocument(QObject* parent = nullptr);
    /// Silences the undo stack first: it clears itself as it is destroyed, after this
    /// document's own destructor has run, and nobody may hear that.
    ~PlanDocument() override;

    const Plan& plan() const { return m_plan; }
    QString path() const { return m_path; }
    bool isModified() const { return !m_undo.isClean(); }
    QUndoStack* undoStack() { return &m_undo; }

    /// Applies `edit` to a copy of the plan and pushes it as one undoable step. Consecutive
    /// edits of one field merge (a slider drag); Field::Topology edits merge when they share a
    /// non-zero `mergeKey`.
    /// `drawingChange`, when given, is the change from the plan's drawing to the one `edit`
    /// sets, already known to the caller (the step keeps it instead of finding it again).
    void edit(const QString& description, Field field, const std::function<void(Plan&)>& edit,
              int mergeKey = 0, const GraphDelta* drawingChange = nullptr);

    /// Replaces the plan without history (New, Open): the undo stack starts afresh.
    void reset(const Plan& plan, const QString& path);

    /// Opens a plan file. On failure the current plan is untouched and `error` says why.
    bool open(const QString& path, QString* error);
    /// Saves atomically; the document is then clean and bound to `path`.
    bool save(const QString& path, QString* error);

    /// Someone else changed the document's file since this document last read or wrote it
    /// (another window's save, an outside edit, a deletion): its content is not what this
    /// document holds as saved. False without a file.
    bool changedOnDisk() const;

    /// Sets TP, PP or CP (`field`) to `value` as one undoable step that also re-derives DP =
    /// GPUs / (TP x PP x CP), so the cluster keeps its GPU count; when that is not whole, DP
    /// stays and the note names the nearest values that keep the count (the plan is invalid).
    /// The note is kept for the status bar (note()).
    void editDegreeKeepingGpus(Field field, int value);

    /// What the last edit said beyond its value ("DP 1 -> 2 to keep 64 GPUs"); empty after
    /// any other edit, an undo or a redo.
    QString note() const { return m_note; }
    /// Says something about the edit just made in the status bar (kept until the next edit,
    /// undo or redo), e.g. where a layout came from.
    void setNote(const QString& note) { m_note = note; }

    /// The bytes the undo history holds (its steps keep what each edit changed, never a copy
    /// of the drawing): what tests bound.
    size_t historyBytes() const;

    /// Sets the plan without pushing history; used by the undo commands.
    void setPlanFromHistory(const Plan& plan);

signals:
    void planChanged();
    void pathChanged(const QString& path);
    void modifiedChanged(bool modified);
    /// The file was changed by someone else (the watcher saw it; changedOnDisk() is true).
    void fileChangedOnDisk();

private:
    void bindFile(const QString& path); ///< m_path, its identity now and the watch

    Plan m_plan;
    QString m_path;
    FileIdentity m_identity; ///< the file as this document last read or wrote it
    QFileSystemWatcher m_watcher;
    QString m_note;
    QUndoStack m_undo;
};

/// What setting one of TP, PP or CP to a new value does to DP when the cluster keeps its GPU
/// count. EP is not among them: its ranks are drawn from DP x CP (rule ep-dp), it does not
/// multiply the GPU count.
struct GpuCountKeeping
{
    bool divides = false; ///< GPUs / (TP x PP x CP) is whole (and a valid degree)
    int dp = 0;           ///< the DP that keeps the count; the plan's own DP when none does
    QString change;       ///< "TP 8 -> 4", for the undo step
    QString note;         ///< "DP 1 -> 2 to keep 64 GPUs", or why no DP does; may be empty
};
GpuCountKeeping keepGpuCount(const Plan& plan, Field field, int value);

/// Re-derives the engine figures a user did not override (after the GPU, dtype or optimizer
/// changed).
void refreshDefaultFigures(Plan* plan);

/// The bundled example opened by default.
Plan examplePlan();

} // namespace paraplan::ui
