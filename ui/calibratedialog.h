#pragma once

#include "logfit.h"

#include <QDialog>

class QCheckBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace paraplan::ui {

/// Calibration from the user's own training runs: pairs of (plan file, training log), the
/// figures to fit, the fit with each run's error before and after, and the fitted figures
/// offered for the current plan (through the same apply path as probe measurements).
class CalibrateDialog : public QDialog
{
    Q_OBJECT

public:
    explicit CalibrateDialog(const Plan& current, QWidget* parent = nullptr);

    /// Adds a run; false with `error` set when the plan or the log cannot be read.
    bool addRun(const QString& planPath, const QString& logPath, QString* error);
    int runCount() const { return static_cast<int>(m_runs.size()); }
    void setFigures(const std::vector<FreeFigure>& figures);
    /// Fits over the runs; false with the reason shown (and returned) when it cannot.
    bool fit(QString* error = nullptr);
    const LogFit& result() const { return m_fit; }
    /// The fitted figures as measurements of the current plan (empty before a fit).
    std::vector<MeasuredFigure> figuresForPlan() const;
    QString resultText() const;

signals:
    void applyRequested(const std::vector<paraplan::MeasuredFigure>& figures);

private:
    void addRunInteractively();
    void refreshTable();

    Plan m_current;
    std::vector<TrainingRun> m_runs;
    LogFit m_fit;
    bool m_fitted = false;
    QTableWidget* m_table;
    QCheckBox* m_gemm;
    QCheckBox* m_attention;
    QCheckBox* m_overlap;
    QSpinBox* m_warmup;
    QLabel* m_result;
    QPushButton* m_apply;
};

} // namespace paraplan::ui
