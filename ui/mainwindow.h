#pragma once

#include "plandocument.h"
#include "planevaluator.h"
#include "plansession.h"

#include <QDateTime>
#include <QMainWindow>

#include <functional>
#include <memory>

class QLabel;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTimer;
class QMenu;
class QComboBox;

namespace paraplan::ui {

class InputPanel;
class CollectivesModel;
class MemoryModel;
class BreakdownPlot;
class MemoryPlot;
class TpSweepPlot;
class BandwidthPlot;
class ScalingPlot;
class WhatIfPlot;
class ClusterView;
class PlotView;
class TopologyEditor;
class TopologyDocument;
class MeasurePanel;
class SearchPanel;
class PracticePanel;
class RecoveryStore;

/// What to do with a recovery copy left by a window that did not close cleanly.
enum class RecoveryChoice
{
    Recover,  ///< open the unsaved plan (a file named on the command line stays on disk)
    OpenFile, ///< open the named file; the copy is kept for a later start
    Keep,     ///< neither: the copy is kept for a later start
    Discard   ///< delete the copy (and open the named file, if any)
};

/// Someone else changed (or removed) the plan's file since this window read or wrote it: seen
/// at a save (`saving`) or by the file watcher.
struct DiskConflict
{
    QString path;
    bool saving = false;   ///< asked by a save that would replace the other version
    bool modified = false; ///< the window has unsaved changes
    bool removed = false;  ///< the file is gone
};

/// What to do about it. Without a chooser a non-interactive window keeps both (Keep).
enum class DiskChoice
{
    Overwrite, ///< write this window's plan over the other version
    SaveAs,    ///< save this window's plan under another name (a dialog)
    Reload,    ///< open the file's version, discarding this window's unsaved changes
    Keep       ///< neither: nothing written, nothing discarded (a save says it did not save)
};

/// The offer: the copy, when it was last written, and the file the user asked to open.
struct RecoveryOffer
{
    QString recoveryPath;
    QDateTime saved;
    QString fileToOpen; ///< empty when none was named
    QString planName;   ///< the kept plan's name; empty when it has none or cannot be read
    QString planFile;   ///< the file the kept plan was edited from; empty for a new plan
};

/// The kept plan as the offer names it: "“Llama 3 70B on 16 nodes” (edited from
/// plan.paraplan.json, saved 1 Dec 2026 15:33)".
QString describeRecoveryOffer(const RecoveryOffer& offer);

/// The plots of one plan's results (Step time, Memory and Bandwidth cliffs tabs).
struct ResultPlots
{
    BreakdownPlot* breakdown = nullptr;
    MemoryPlot* memory = nullptr;
    TpSweepPlot* tp = nullptr;
    BandwidthPlot* bandwidth = nullptr;
    ScalingPlot* scaling = nullptr;
    WhatIfPlot* whatIf = nullptr;
};

/// The planner window: inputs on the left, the step cost, plots, cluster picture and
/// derivations on the right; every edit recomputes once per event-loop turn.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    /// `interactive` false: no modal dialogs (tests); errors go to errorReported only.
    explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    PlanSession* session() { return m_session; }
    PlanDocument* document() { return m_document; }
    PlanEvaluator* evaluator() { return m_evaluator; }
    InputPanel* inputPanel() { return m_inputs; }
    QList<PlotView*> plots() const;
    ClusterView* clusterView() const { return m_clusterView; }
    TopologyEditor* topologyEditor() const { return m_topology; }
    MeasurePanel* measurePanel() const { return m_measure; }
    SearchPanel* searchPanel() const { return m_search; }
    PracticePanel* practicePanel() const { return m_practice; }
    CollectivesModel* collectivesModel() const { return m_collectivesModel; }
    MemoryModel* memoryModel() const { return m_memoryModel; }
    QString headlineText() const;
    QString staleText() const; ///< why the figures are greyed (invalid plan); empty if fresh
    QString derivationText() const;
    QString statusText() const;

    /// False, the plan, title and path kept, with the reason said (and in *reason).
    bool openFile(const QString& path, QString* reason = nullptr);
    bool openExample(const QString& path); ///< untitled copy (mainwindowexamples.cpp)
    bool saveTo(const QString& path);
    /// The plan report as PDF (the same one `paraplan-cli report` writes).
    bool exportReport(const QString& path, bool letter = false);
    /// One table of the report as RFC 4180 CSV: `table` "collectives" or "memory".
    bool exportTableCsv(const QString& table, const QString& path);
    /// Where this window's recovery copy of unsaved work lives (its own, one per window).
    QString recoveryPath() const;
    /// Where all recovery copies live.
    static QString recoveryDirectory();
    /// Writes the recovery copy now (normally 2 s after an edit); false with a status line
    /// when it could not be written. Nothing is written while the plan is unmodified.
    bool writeRecovery();
    /// The start: offers a recovery copy left by a window that did not close cleanly (never
    /// a live window's), then opens `file` (may be empty) unless the user chose the
    /// recovered plan; nothing is overwritten or deleted without a choice.
    void start(const QString& file = QString());
    /// Asks how to treat a recovery copy; by default a dialog (interactive) or Keep.
    void setRecoveryChooser(std::function<RecoveryChoice(const RecoveryOffer&)> chooser);
    /// Asks what to do when the plan's file changed on disk; by default a dialog
    /// (interactive) or Keep.
    void setDiskConflictChooser(std::function<DiskChoice(const DiskConflict&)> chooser);

signals:
    void errorReported(const QString& message);
    /// Results are on screen (models updated, replots queued).
    void resultsShown();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QWidget* buildInputs(); // the window's parts, built once by the constructor
    QWidget* buildResults();
    QWidget* buildStepTab();
    QWidget* buildMemoryTab();
    QWidget* buildCliffsTab();
    QWidget* buildClusterTab();
    void buildMenus();
    void buildHelpMenu(); // the user guide, the shortcuts, About (mainwindowhelp.cpp)
    void fitToScreen();   // the first size: what it needs, never more than the screen has
    void connectDocument();
    void connectPanels();

    void showResults(std::shared_ptr<const PlanResults> results);
    void showRejection(const std::vector<PlanIssue>& issues);
    void showHeadline(const PlanResults& r, const QString& staleReason); ///< greyed if stale
    void showDerivation(const QString& anchor);
    void showCollectiveDerivation(int row);
    bool maybeSave();
    void newPlan(), openDialog(), importModel(), openCluster(), updateTitle();
    bool save(), saveAs();
    void addRecent(const QString&path), rebuildRecentMenu();
    RecoveryChoice chooseRecovery(const RecoveryOffer& offer);
    DiskChoice chooseDiskConflict(const DiskConflict& conflict);
    bool writePlan(const QString& path); ///< the save itself, no question asked
    void fileChangedOnDisk();            ///< the watcher saw someone else's change
    bool recover(const QString& orphan);
    void reportError(const QString& title, const QString& message);
    void generateFatTreeDialog(), generateTorusDialog(), importTopologyDialog();

    bool m_interactive;
    PlanSession* m_session;
    PlanDocument* m_document;   ///< the session's
    PlanEvaluator* m_evaluator; ///< the session's
    InputPanel* m_inputs;
    QLabel* m_headline;
    QLabel* m_status;
    QString m_reportFilter;
    QTabWidget* m_tabs;
    ResultPlots m_plots;
    ClusterView* m_clusterView;
    QComboBox* m_colourBy;
    CollectivesModel* m_collectivesModel;
    MemoryModel* m_memoryModel;
    QTableView *m_collectivesTable, *m_memoryTable;
    QLabel* m_memoryVerdict; ///< the memory verdict and, when it does not fit, the fixes
    QTextBrowser* m_derivation;
    mutable std::shared_ptr<const PlanResults> m_derivationPending; ///< laid out when shown
    QTimer* m_recoveryTimer;
    std::unique_ptr<RecoveryStore> m_recovery;
    std::function<RecoveryChoice(const RecoveryOffer&)> m_recoveryChooser;
    std::function<DiskChoice(const DiskConflict&)> m_diskChooser;
    bool m_askingAboutDisk = false; ///< a question about the file is open
    QMenu *m_recentMenu = nullptr, *m_helpMenu = nullptr;
    TopologyEditor* m_topology;
    MeasurePanel* m_measure;
    SearchPanel* m_search;
    PracticePanel* m_practice;
};

/// File > Open Example: the examples found in the data folder (mainwindowexamples.cpp).
void addExamplesMenu(QMenu* file, MainWindow* window);

/// Why the figures are not those of the drawn cluster when the drawing cannot be modelled
/// (the plan keeps its last valid cluster); empty when it can (mainwindowheadline.cpp).
QString drawingStaleReason(const TopologyDocument& drawing);

} // namespace paraplan::ui
