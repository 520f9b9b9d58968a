#include "calibratedialog.h"

#include "planio.h"
#include "units.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace paraplan::ui {

CalibrateDialog::CalibrateDialog(const Plan& current, QWidget* parent)
    : QDialog(parent), m_current(current)
{
    setWindowTitle(tr("Calibrate from training logs"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("Each run: the plan file it ran and its log (Megatron-LM, torchtitan or NeMo / "
           "PyTorch Lightning). The free figures are fitted by least squares on the relative "
           "step-time error over all runs; at least as many runs as figures."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_table = new QTableWidget(0, 4, this);
    m_table->setHorizontalHeaderLabels(
        {tr("Plan"), tr("Log"), tr("Format, steps"), tr("Measured / before / after")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(m_table, 1);
    auto* runRow = new QHBoxLayout;
    auto* add = new QPushButton(tr("Add run..."), this);
    auto* remove = new QPushButton(tr("Remove"), this);
    runRow->addWidget(add);
    runRow->addWidget(remove);
    runRow->addStretch(1);
    runRow->addWidget(new QLabel(tr("Warm-up steps"), this));
    m_warmup = new QSpinBox(this);
    m_warmup->setRange(0, 1000000);
    m_warmup->setValue(3);
    runRow->addWidget(m_warmup);
    layout->addLayout(runRow);
    auto* figureRow = new QHBoxLayout;
    figureRow->addWidget(new QLabel(tr("Fit:"), this));
    m_gemm = new QCheckBox(tr("GEMM efficiency scale"), this);
    m_attention = new QCheckBox(tr("attention efficiency scale"), this);
    m_overlap = new QCheckBox(tr("hidden share of DP traffic"), this);
    for (QCheckBox* box : {m_gemm, m_attention, m_overlap}) {
        box->setChecked(true);
        figureRow->addWidget(box);
    }
    figureRow->addStretch(1);
    layout->addLayout(figureRow);
    m_result = new QLabel(this);
    m_result->setObjectName("calibrationResult");
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_result);
    auto* buttons = new QHBoxLayout;
    auto* fitButton = new QPushButton(tr("Fit"), this);
    m_apply = new QPushButton(tr("Apply to this plan"), this);
    m_apply->setEnabled(false);
    auto* close = new QPushButton(tr("Close"), this);
    buttons->addStretch(1);
    buttons->addWidget(fitButton);
    buttons->addWidget(m_apply);
    buttons->addWidget(close);
    layout->addLayout(buttons);
    resize(820, 460);

    connect(add, &QPushButton::clicked, this, &CalibrateDialog::addRunInteractively);
    connect(remove, &QPushButton::clicked, this, [this] {
        const int row = m_table->currentRow();
        if (row >= 0 && row < runCount()) {
            m_runs.erase(m_runs.begin() + row);
            m_fitted = false;
            refreshTable();
        }
    });
    connect(fitButton, &QPushButton::clicked, this, [this] { fit(); });
    connect(m_apply, &QPushButton::clicked, this, [this] {
        const std::vector<MeasuredFigure> figures = figuresForPlan();
        if (!figures.empty())
            emit applyRequested(figures);
    });
    connect(close, &QPushButton::clicked, this, &QDialog::accept);
}

bool CalibrateDialog::addRun(const QString& planPath, const QString& logPath, QString* error)
{
    TrainingRun run;
    run.plan_file = planPath.toStdString();
    std::vector<std::string> errors;
    if (!loadPlan(run.plan_file, &run.plan, &errors, HardwareCatalog::bundled())) {
        *error = planPath + ": " + QString::fromStdString(errors.front());
        return false;
    }
    std::string message;
    if (!loadTrainingLog(logPath.toStdString(), &run.log, &message)) {
        *error = QString::fromStdString(message);
        return false;
    }
    m_runs.push_back(std::move(run));
    m_fitted = false;
    refreshTable();
    return true;
}

void CalibrateDialog::addRunInteractively()
{
    const QString plan = QFileDialog::getOpenFileName(this, tr("The plan the run trained with"),
                                                      QString(), tr("Plans (*.json)"));
    if (plan.isEmpty())
        return;
    const QString log =
        QFileDialog::getOpenFileName(this, tr("Its training log"), QFileInfo(plan).absolutePath(),
                                     tr("Logs (*.log *.txt *.out);;All files (*)"));
    if (log.isEmpty())
        return;
    QString error;
    if (!addRun(plan, log, &error))
        m_result->setText(
            QString("<span style='color:#c0392b'>%1</span>").arg(error.toHtmlEscaped()));
}

void CalibrateDialog::setFigures(const std::vector<FreeFigure>& figures)
{
    auto has = [&](FreeFigure f) {
        return std::find(figures.begin(), figures.end(), f) != figures.end();
    };
    m_gemm->setChecked(has(FreeFigure::GemmScale));
    m_attention->setChecked(has(FreeFigure::AttentionScale));
    m_overlap->setChecked(has(FreeFigure::Overlap));
}

bool CalibrateDialog::fit(QString* error)
{
    std::vector<FreeFigure> figures;
    if (m_gemm->isChecked())
        figures.push_back(FreeFigure::GemmScale);
    if (m_attention->isChecked())
        figures.push_back(FreeFigure::AttentionScale);
    if (m_overlap->isChecked())
        figures.push_back(FreeFigure::Overlap);
    std::string message;
    m_fitted = fitTrainingRuns(m_runs, figures, m_warmup->value(), HardwareCatalog::bundled(),
                               &m_fit, &message);
    m_apply->setEnabled(m_fitted);
    if (!m_fitted) {
        const QString text = QString::fromStdString(message);
        m_result->setText(
            QString("<span style='color:#c0392b'>%1</span>").arg(text.toHtmlEscaped()));
        if (error)
            *error = text;
        return false;
    }
    QStringList parts;
    for (size_t i = 0; i < m_fit.figures.size(); ++i)
        parts << QString("%1 = %2")
                     .arg(freeFigureName(m_fit.figures[i]))
                     .arg(m_fit.values[i], 0, 'f', 4);
    QString text = tr("Fitted: %1. RMS step-time error %2% before, %3% after. %4")
                       .arg(parts.join(", "))
                       .arg(100 * m_fit.rms_before, 0, 'f', 2)
                       .arg(100 * m_fit.rms_after, 0, 'f', 2)
                       .arg(QString::fromStdString(m_fit.provenance).toHtmlEscaped());
    for (const std::string& w : m_fit.warnings)
        text += "<br><i>" + QString::fromStdString(w).toHtmlEscaped() + "</i>";
    m_result->setText(text);
    refreshTable();
    return true;
}

std::vector<MeasuredFigure> CalibrateDialog::figuresForPlan() const
{
    return m_fitted ? fittedFigures(m_fit, m_current, HardwareCatalog::bundled())
                    : std::vector<MeasuredFigure>{};
}

QString CalibrateDialog::resultText() const
{
    return m_result->text();
}

void CalibrateDialog::refreshTable()
{
    m_table->setRowCount(runCount());
    for (int row = 0; row < runCount(); ++row) {
        const TrainingRun& run = m_runs[static_cast<size_t>(row)];
        auto set = [&](int column, const QString& text) {
            m_table->setItem(row, column, new QTableWidgetItem(text));
        };
        set(0, QFileInfo(QString::fromStdString(run.plan_file)).fileName());
        set(1, QFileInfo(QString::fromStdString(run.log.file)).fileName());
        set(2, QString("%1, %2 step lines")
                   .arg(trainingLogFormatName(run.log.format))
                   .arg(run.log.steps.size()));
        QString times;
        if (m_fitted && row < static_cast<int>(m_fit.runs.size())) {
            const FittedRun& f = m_fit.runs[static_cast<size_t>(row)];
            auto error = [&](double predicted) {
                return QString("%1%2%")
                    .arg(predicted >= f.measured_step_time_s ? "+" : "")
                    .arg(100 * (predicted / f.measured_step_time_s - 1), 0, 'f', 2);
            };
            times = QString("%1 / %2 (%3) / %4 (%5)")
                        .arg(QString::fromStdString(units::formatSeconds(f.measured_step_time_s)))
                        .arg(QString::fromStdString(units::formatSeconds(f.predicted_before_s)))
                        .arg(error(f.predicted_before_s))
                        .arg(QString::fromStdString(units::formatSeconds(f.predicted_after_s)))
                        .arg(error(f.predicted_after_s));
        }
        set(3, times);
    }
    m_table->resizeColumnsToContents();
}

} // namespace paraplan::ui
