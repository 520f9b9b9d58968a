#pragma once

#include "planevaluator.h"
#include "search.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTableWidget;
class QThread;

namespace paraplan::ui {

class ParetoPlot;
class CompareBreakdownPlot;

/// A plan pinned for comparison: its label, layout and cost.
struct ComparedPlan
{
    QString label;
    ParallelLayout layout;
    /// The dispatcher a searched row runs (Auto: the plan's own).
    MoeDispatcher moe_dispatcher = MoeDispatcher::Auto;
    StepCost cost;
};

/// The ranked candidates of a search: rank, layout fields, step time, memory, MFU, tokens/s,
/// the reason each loses to the best. Numbers sort as numbers (Qt::UserRole).
class SearchResultsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column
    {
        Rank,
        Layout,
        StepTime,
        Memory,
        Mfu,
        TokensPerGpu,
        Behind,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    void setResult(const SearchResult& result, int gpus);
    const SearchCandidate* candidate(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<SearchCandidate> m_candidates;
    int m_gpus = 1;
};

/// Memory per GPU of each pipeline stage, "43.2 / 36.1 / 30.1 / 25.9" (GiB).
QString stageMemory(const StepCost& cost);
/// The "Behind the best by" cell: "best", or the net step-time difference and the parts that
/// make it up ("+22.1 ms = pipeline bubble +68.5 ms, PP comm (exposed) -46.4 ms"), with
/// searchRowNote() (a tie, layouts folded). `rank` is 1-based.
QString behindCell(const SearchCandidate& candidate, int rank);
/// Its tooltip: every component's difference, and what a tie and a fold mean.
QString behindToolTip(const SearchCandidate& candidate, int rank);
/// Short text for a layout: "tp8 pp4 dp4 cp1 z1 sp selective v5 mb1".
QString layoutText(const ParallelLayout& layout);        ///< layoutLabel() as a QString
QString candidateText(const SearchCandidate& candidate); ///< candidateLabel() as a QString
QString comparedText(const ComparedPlan& plan);          ///< its layout and a searched dispatcher

/// "Find the best plan": objective and constraints, run and cancel (the search runs on a
/// worker thread), ranked results, the Pareto front, and 2-4 pinned plans side by side.
class SearchPanel : public QWidget
{
    Q_OBJECT

public:
    explicit SearchPanel(QWidget* parent = nullptr);
    ~SearchPanel() override;

    /// The plan as last evaluated: the next search uses its model, cluster and batch, and
    /// "Pin the current plan" its cost.
    void setResults(std::shared_ptr<const PlanResults> results);
    void start();
    void cancel();
    bool isRunning() const;
    const SearchResult& result() const { return m_result; }
    /// What a search started now would run with: the settings shown, and the step-time bound.
    SearchOptions options() const;
    SearchResultsModel* resultsModel() const { return m_model; }
    QSortFilterProxyModel* sortedModel() const { return m_sorted; }
    QTableView* table() const { return m_table; }
    ParetoPlot* paretoPlot() const { return m_pareto; }
    CompareBreakdownPlot* comparePlot() const { return m_comparePlot; }
    QString statusText() const;

    /// Pins a row of the sorted table (or, with row < 0, the base plan as it stands).
    bool pin(int sortedRow, QString* error = nullptr);
    void clearPins();
    const std::vector<ComparedPlan>& pinned() const { return m_pinned; }
    static constexpr int kMaxPinned = 4;

signals:
    /// A candidate was chosen (double-click or "Use this layout").
    /// A ranked row chosen: its layout and the dispatcher it runs (Auto: the plan's own).
    void layoutChosen(const paraplan::ParallelLayout& layout, paraplan::MoeDispatcher dispatcher,
                      const QString& label);
    void finished();

private:
    struct Job;
    // The panel's two sides, built once by the constructor.
    QGroupBox* buildSettings();
    QWidget* buildSearchSide();
    QWidget* buildComparisonSide();
    void connectControls();
    void updateRowButtons(); ///< "Use" and "Pin" only with a candidate selected
    void finish();
    /// The whole account of the search just finished (the status line's tooltip and
    /// statusText()), and the short one above the table (searchpanelstatus.cpp).
    QString fullStatus(const Plan& base, const SearchOptions& options) const;
    void showBriefStatus(const Plan& base, const SearchOptions& options);
    void say(const QString& text); ///< a status line of its own (no tooltip account)
    void refreshComparison();

    std::shared_ptr<const PlanResults> m_latest;
    SearchResult m_result;
    std::shared_ptr<Job> m_job;
    QThread* m_thread = nullptr;

    QComboBox* m_objective;
    QSpinBox* m_maxTp;
    QCheckBox* m_ppAcrossNodes;
    QDoubleSpinBox* m_headroom;
    QDoubleSpinBox* m_reserve;
    QSpinBox* m_microBatch;
    QSpinBox* m_maxInterleave;
    bool m_maxInterleaveSetByUser = false; ///< else it follows the plan (at least 4)
    QSpinBox* m_top;
    QSpinBox* m_threads;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QPushButton* m_use;
    QPushButton* m_pin;
    QPushButton* m_pinCurrent;
    QPushButton* m_clearPins;
    QProgressBar* m_progress;
    QLabel* m_status;
    QTabWidget* m_lower; ///< the Pareto plot, the pinned plans
    QLabel* m_why;       ///< the selected row's "behind the best by", every part
    SearchResultsModel* m_model;
    QSortFilterProxyModel* m_sorted;
    QTableView* m_table;
    ParetoPlot* m_pareto;
    QTableWidget* m_compareTable;
    CompareBreakdownPlot* m_comparePlot;
    std::vector<ComparedPlan> m_pinned;
};

} // namespace paraplan::ui
