#pragma once

#include "measurement.h"
#include "plan.h"

#include <QWidget>

#include <functional>

class QFrame;
class QLabel;
class QProgressBar;
class QPushButton;
class QListWidget;
class QStandardItemModel;
class QTableView;
class QTabWidget;

namespace paraplan::ui {

class MeasurementRunner;
class MeasuredPlot;
class GemmPlot;

/// The warning due before a run measured on one GPU model replaces the figures of a plan on
/// another ("measured on NVIDIA H200, the plan uses NVIDIA H100 SXM5 80GB: ..."); empty when
/// the models agree or the run does not name its GPUs. Compared: the model number (A100,
/// H100, H200, B200 ...), PCIe against SXM, and the memory size where both names give one.
QString gpuMismatchWarning(const MeasurementRun& run, const Plan& plan);

/// "Measure this machine": runs the probe (or imports a log), shows results live, fits them,
/// and offers the assumed figures the run can replace.
class MeasurePanel : public QWidget
{
    Q_OBJECT

public:
    explicit MeasurePanel(QWidget* parent = nullptr);

    MeasurementRunner* runner() const { return m_runner; }
    MeasuredPlot* plot() const { return m_plot; }
    GemmPlot* gemmPlot() const { return m_gemmPlot; }
    /// The plan whose assumed figures (its cluster's links, its GEMM and HBM shares) a run can
    /// replace.
    void setPlan(const Plan& plan);
    /// Loads a probe run, an nccl-tests log or its JSON, as a finished run.
    bool importFile(const QString& path, QString* error);
    const MeasurementRun& run() const { return m_run; }
    const std::vector<AlphaBetaFit>& fits() const { return m_fits; }
    const std::vector<MeasuredFigure>& proposals() const { return m_proposals; }
    QString statusText() const;
    /// Applies the proposals whose boxes are ticked (all by default); a run from another GPU
    /// model than the plan's asks first (gpuMismatchWarning).
    void applySelected();
    /// Asks the user to confirm `warning`; by default a dialog (tests set their own).
    void setConfirmer(std::function<bool(const QString& warning)> confirmer);
    /// The no-GPU state's text (what was looked for, how to measure elsewhere); empty when
    /// the panel is not in that state.
    QString noGpuText() const;
    /// The GPU-model warning shown above the proposals; empty when none.
    QString mismatchText() const;
    void revertApplied();

signals:
    void applyRequested(const std::vector<paraplan::MeasuredFigure>& figures);
    void revertRequested(const std::vector<paraplan::MeasuredFigure>& figures);
    void runAvailable(const paraplan::MeasurementRun& run,
                      const std::vector<paraplan::AlphaBetaFit>& fits);

private:
    void showRun(const MeasurementRun& run, bool complete, const QString& message);
    void refreshProposals();
    /// The no-GPU state: no probe, or a probe that saw no CUDA device (`detail` its words).
    void showNoGpu(bool probeMissing, const QString& detail);
    void hideNoGpu();
    QFrame* buildNoGpuPanel();
    void chooseImport();

    MeasurementRunner* m_runner;
    MeasuredPlot* m_plot;
    GemmPlot* m_gemmPlot;
    QTabWidget* m_plots;
    QPushButton* m_measure;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_status;
    QFrame* m_noGpu;
    QLabel* m_noGpuText;
    QLabel* m_mismatch;
    std::function<bool(const QString&)> m_confirmer;
    QStandardItemModel* m_fitModel;
    QTableView* m_fitTable;
    QListWidget* m_proposalList;
    Plan m_plan;
    MeasurementRun m_run;
    std::vector<AlphaBetaFit> m_fits;
    std::vector<MeasuredFigure> m_proposals;
    std::vector<MeasuredFigure> m_applied;
};

} // namespace paraplan::ui
