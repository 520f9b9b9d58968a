#include "measurepanel.h"

#include "calibratedialog.h"
#include "computeplot.h"
#include "measurementrunner.h"
#include "plots.h"
#include "units.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace paraplan::ui {

MeasurePanel::MeasurePanel(QWidget* parent) : QWidget(parent), m_runner(new MeasurementRunner(this))
{
    auto* layout = new QVBoxLayout(this);
    auto* buttons = new QHBoxLayout;
    m_measure = new QPushButton(tr("Measure this machine"), this);
    m_measure->setObjectName("measure");
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setEnabled(false);
    auto* import = new QPushButton(tr("Import nccl-tests log or probe run..."), this);
    buttons->addWidget(m_measure);
    buttons->addWidget(m_cancel);
    buttons->addWidget(import);
    auto* calibrate = new QPushButton(tr("Calibrate from training logs..."), this);
    buttons->addWidget(calibrate);
    connect(calibrate, &QPushButton::clicked, this, [this] {
        auto* dialog = new CalibrateDialog(m_plan, this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &CalibrateDialog::applyRequested, this, &MeasurePanel::applyRequested);
        dialog->show();
    });
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    buttons->addWidget(m_progress, 1);
    layout->addLayout(buttons);
    m_status = new QLabel(tr("Run paraplan-probe on this machine, or import what nccl-tests "
                             "printed, to replace assumed link figures with measured ones."),
                          this);
    m_status->setObjectName("measureStatus");
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    auto* split = new QSplitter(Qt::Horizontal, this);
    m_plots = new QTabWidget(split);
    m_plot = new MeasuredPlot(m_plots);
    m_gemmPlot = new GemmPlot(m_plots);
    m_plots->addTab(m_plot, tr("Links"));
    m_plots->addTab(m_gemmPlot, tr("Compute"));
    auto* side = new QWidget(split);
    auto* sideLayout = new QVBoxLayout(side);
    sideLayout->setContentsMargins(0, 0, 0, 0);
    sideLayout->addWidget(new QLabel(tr("Fits: t = alpha + S x factor / busbw"), side));
    m_fitModel = new QStandardItemModel(0, 6, this);
    m_fitModel->setHorizontalHeaderLabels(
        {tr("Op"), tr("Ranks"), tr("Hosts"), tr("Alpha"), tr("busbw (GB/s)"), tr("Residual")});
    m_fitTable = new QTableView(side);
    m_fitTable->setModel(m_fitModel);
    m_fitTable->verticalHeader()->setVisible(false);
    m_fitTable->horizontalHeader()->setStretchLastSection(true);
    sideLayout->addWidget(m_fitTable, 1);
    sideLayout->addWidget(new QLabel(tr("Assumed figures this run can replace:"), side));
    m_proposalList = new QListWidget(side);
    m_proposalList->setWordWrap(true);
    sideLayout->addWidget(m_proposalList, 1);
    auto* applyRow = new QHBoxLayout;
    auto* apply = new QPushButton(tr("Apply ticked"), side);
    auto* revert = new QPushButton(tr("Revert to assumed"), side);
    applyRow->addWidget(apply);
    applyRow->addWidget(revert);
    sideLayout->addLayout(applyRow);
    split->addWidget(m_plots);
    split->addWidget(side);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    connect(m_measure, &QPushButton::clicked, this, [this] {
        m_plot->clear();
        m_progress->setRange(0, 0);
        m_status->setText(tr("Measuring with %1 ...").arg(MeasurementRunner::probePath()));
        m_runner->start();
    });
    connect(m_cancel, &QPushButton::clicked, m_runner, &MeasurementRunner::stop);
    connect(import, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Import measurements"), QString(),
            tr("nccl-tests logs, JSON, probe runs (*.log *.txt *.json *.jsonl);;All files (*)"));
        QString error;
        if (!path.isEmpty() && !importFile(path, &error))
            m_status->setText(
                tr("<span style='color:#c0392b'>%1</span>").arg(error.toHtmlEscaped()));
    });
    connect(apply, &QPushButton::clicked, this, &MeasurePanel::applySelected);
    connect(revert, &QPushButton::clicked, this, &MeasurePanel::revertApplied);
    connect(m_runner, &MeasurementRunner::started, this, [this] {
        m_measure->setEnabled(false);
        m_cancel->setEnabled(true);
    });
    connect(m_runner, &MeasurementRunner::progressChanged, this, [this](int done, int total) {
        m_progress->setRange(0, std::max(1, total));
        m_progress->setValue(done);
    });
    connect(m_runner, &MeasurementRunner::resultAvailable, m_plot, &MeasuredPlot::addPoint);
    connect(m_runner, &MeasurementRunner::finished, this,
            [this](const MeasurementRun& run) { showRun(run, true, tr("Measured")); });
    connect(m_runner, &MeasurementRunner::failed, this,
            [this](const QString& message, const MeasurementRun& run) {
                showRun(run, false, message);
            });
}

void MeasurePanel::setPlan(const Plan& plan)
{
    // Every edit of the plan arrives here: the GEMM plot is redrawn only when what it shows of
    // the plan (GPU, dtype, GEMM share) changed.
    const bool plotInputs =
        plan.cluster.gpu_id != m_plan.cluster.gpu_id ||
        plan.training.dtype != m_plan.training.dtype ||
        plan.figures.gemm_peak_fraction.value != m_plan.figures.gemm_peak_fraction.value;
    m_plan = plan;
    refreshProposals();
    if (plotInputs)
        m_gemmPlot->setData(m_run.compute, m_plan, HardwareCatalog::bundled());
}

bool MeasurePanel::importFile(const QString& path, QString* error)
{
    MeasurementRun run;
    std::string message;
    if (!loadMeasurements(path.toStdString(), &run, &message)) {
        *error = QString::fromStdString(message);
        return false;
    }
    m_plot->clear();
    for (const MeasuredPoint& point : run.points)
        m_plot->addPoint(point);
    showRun(run, true, tr("Imported"));
    return true;
}

QString MeasurePanel::statusText() const
{
    return m_status->text();
}

void MeasurePanel::showRun(const MeasurementRun& run, bool complete, const QString& message)
{
    m_measure->setEnabled(true);
    m_cancel->setEnabled(false);
    m_progress->setRange(0, 1);
    m_progress->setValue(complete ? 1 : 0);
    m_run = run;
    m_fits = fitRun(run);
    m_plot->setFits(m_fits);
    m_fitModel->removeRows(0, m_fitModel->rowCount());
    for (const AlphaBetaFit& fit : m_fits) {
        QList<QStandardItem*> row;
        row << new QStandardItem(collectiveOpName(fit.op))
            << new QStandardItem(QString::number(fit.ranks))
            << new QStandardItem(QString::number(fit.hosts))
            << new QStandardItem(QString::fromStdString(units::formatSeconds(fit.alpha_s)))
            << new QStandardItem(QString::number(fit.busbw_GBps, 'f', 1))
            << new QStandardItem(QString("%1%").arg(100 * fit.residual, 0, 'f', 1));
        m_fitModel->appendRow(row);
    }
    m_fitTable->resizeColumnsToContents();
    QString text =
        complete ? QString("%1: %2").arg(message, QString::fromStdString(run.describe()))
                 : QString("<span style='color:#c0392b'>%1</span>").arg(message.toHtmlEscaped());
    text += tr(" %1 collective points, %2 copies.").arg(run.points.size()).arg(run.copies.size());
    if (!run.compute.empty()) {
        text += tr(" %1 GEMMs").arg(run.compute.gemms.size());
        const GemmMeasurement* best = nullptr;
        const double tflops = measuredGemmTflops(run.compute, "bf16", 4096, &best);
        if (tflops > 0)
            text += tr(" (bf16 up to %1 TFLOP/s)").arg(tflops, 0, 'f', 0);
        for (const HbmMeasurement& h : run.compute.hbm)
            if (h.kernel == "triad" && h.device == 0)
                text += tr(", HBM triad %1 GB/s").arg(h.GBps, 0, 'f', 0);
        text += ".";
        if (run.points.empty())
            m_plots->setCurrentWidget(m_gemmPlot);
    }
    for (const CopyMeasurement& c : run.copies) {
        if (c.what == "h2d" && c.device == 0)
            text += tr(" Host to device %1 GB/s.").arg(c.GBps, 0, 'f', 1);
        if (c.what == "d2d" && c.device == 0)
            text += tr(" HBM copy %1 GB/s (read + write).").arg(c.GBps, 0, 'f', 0);
    }
    if (!run.warnings.empty())
        text += tr(" %1 warning(s): %2")
                    .arg(run.warnings.size())
                    .arg(QString::fromStdString(run.warnings.front()).toHtmlEscaped());
    m_status->setText(text);
    refreshProposals();
    m_gemmPlot->setData(m_run.compute, m_plan, HardwareCatalog::bundled());
    emit runAvailable(m_run, m_fits);
}

void MeasurePanel::refreshProposals()
{
    m_proposals = proposeMeasuredFigures(m_run, m_fits, m_plan.cluster);
    for (MeasuredFigure& f : proposeComputeFigures(m_run, m_plan, HardwareCatalog::bundled()))
        m_proposals.push_back(std::move(f));
    m_proposalList->clear();
    for (const MeasuredFigure& f : m_proposals) {
        auto* item = new QListWidgetItem(tr("%1: assumed %2, measured %3 (%4)")
                                             .arg(QString::fromStdString(f.figure))
                                             .arg(f.assumed, 0, 'f', 3)
                                             .arg(f.value, 0, 'f', 3)
                                             .arg(QString::fromStdString(f.why)),
                                         m_proposalList);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
    }
}

void MeasurePanel::applySelected()
{
    std::vector<MeasuredFigure> chosen;
    for (int i = 0; i < m_proposalList->count() && i < static_cast<int>(m_proposals.size()); ++i) {
        if (m_proposalList->item(i)->checkState() == Qt::Checked)
            chosen.push_back(m_proposals[static_cast<size_t>(i)]);
    }
    if (chosen.empty())
        return;
    m_applied.insert(m_applied.end(), chosen.begin(), chosen.end());
    emit applyRequested(chosen);
}

void MeasurePanel::revertApplied()
{
    if (m_applied.empty())
        return;
    emit revertRequested(m_applied);
    m_applied.clear();
}

} // namespace paraplan::ui
