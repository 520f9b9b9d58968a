#include "measurepanel.h"

#include "calibratedialog.h"
#include "computeplot.h"
#include "measurementrunner.h"
#include "plots.h"
#include "units.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace paraplan::ui {

namespace {

// What a GPU's name says of its model: "H100" in "NVIDIA H100 80GB HBM3" (CUDA's name) and in
// "NVIDIA H100 SXM5 80GB" (the catalogue's), PCIe or not, and the memory size when given.
struct GpuModel
{
    QString family;
    bool pcie = false;
    int memoryGB = 0;
};

GpuModel gpuModel(const QString& name)
{
    GpuModel model;
    const QString upper = name.toUpper();
    static const QRegularExpression family("\\b([A-Z]{1,2}\\d{2,3}[A-Z]?)\\b");
    if (const auto match = family.match(upper); match.hasMatch())
        model.family = match.captured(1);
    model.pcie = upper.contains("PCIE");
    static const QRegularExpression memory("\\b(\\d+)\\s*GB\\b");
    if (const auto match = memory.match(upper); match.hasMatch())
        model.memoryGB = match.captured(1).toInt();
    return model;
}

} // namespace

QString gpuMismatchWarning(const MeasurementRun& run, const Plan& plan)
{
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id);
    if (run.devices.empty() || !gpu)
        return {};
    const QString measured = QString::fromStdString(run.devices.front());
    const QString planned = QString::fromStdString(gpu->name);
    const GpuModel a = gpuModel(measured);
    const GpuModel b = gpuModel(planned);
    const bool differ = a.family.isEmpty() || b.family.isEmpty() || a.family != b.family ||
                        a.pcie != b.pcie ||
                        (a.memoryGB > 0 && b.memoryGB > 0 && a.memoryGB != b.memoryGB);
    if (!differ)
        return {};
    const bool sameFamily = !a.family.isEmpty() && a.family == b.family;
    const QString planShort = sameFamily || b.family.isEmpty() ? planned : b.family;
    const QString runShort = sameFamily || a.family.isEmpty() ? measured : a.family;
    return QObject::tr("Measured on %1, the plan uses %2: applying replaces %3 figures with %4 "
                       "measurements.")
        .arg(measured, planned, planShort, runShort);
}

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
    layout->addWidget(buildNoGpuPanel());
    m_mismatch = new QLabel(this);
    m_mismatch->setObjectName("gpuMismatch");
    m_mismatch->setWordWrap(true);
    m_mismatch->setStyleSheet("color: #b35900;");
    m_mismatch->hide();

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
    sideLayout->addWidget(m_mismatch);
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
        hideNoGpu();
        m_plot->clear();
        m_progress->setRange(0, 0);
        m_status->setText(tr("Measuring with %1 ...").arg(MeasurementRunner::probePath()));
        m_runner->start();
    });
    connect(m_cancel, &QPushButton::clicked, m_runner, &MeasurementRunner::stop);
    connect(import, &QPushButton::clicked, this, &MeasurePanel::chooseImport);
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
                const auto failure = m_runner->failure();
                if (failure == MeasurementRunner::Failure::ProbeMissing ||
                    failure == MeasurementRunner::Failure::NoDevice)
                    showNoGpu(failure == MeasurementRunner::Failure::ProbeMissing, message);
                else
                    showRun(run, false, message);
            });
    m_confirmer = [this](const QString& warning) {
        return QMessageBox::warning(this, tr("Apply measurements from another GPU?"),
                                    warning + "\n\n" + tr("Apply them anyway?"),
                                    QMessageBox::Apply | QMessageBox::Cancel,
                                    QMessageBox::Cancel) == QMessageBox::Apply;
    };
    if (!MeasurementRunner::probeFound())
        showNoGpu(true, QString());
}

// The no-GPU state: what was looked for, how to measure elsewhere, and the way back in.
QFrame* MeasurePanel::buildNoGpuPanel()
{
    m_noGpu = new QFrame(this);
    m_noGpu->setObjectName("noGpuPanel");
    m_noGpu->setFrameShape(QFrame::StyledPanel);
    auto* noGpuLayout = new QVBoxLayout(m_noGpu);
    m_noGpuText = new QLabel(m_noGpu);
    m_noGpuText->setObjectName("noGpuText");
    m_noGpuText->setWordWrap(true);
    m_noGpuText->setTextFormat(Qt::RichText);
    m_noGpuText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    noGpuLayout->addWidget(m_noGpuText);
    auto* noGpuButtons = new QHBoxLayout;
    auto* noGpuImport = new QPushButton(tr("Import a probe run..."), m_noGpu);
    noGpuImport->setObjectName("noGpuImport");
    auto* lookAgain = new QPushButton(tr("Look again"), m_noGpu);
    lookAgain->setObjectName("lookAgain");
    noGpuButtons->addWidget(noGpuImport);
    noGpuButtons->addWidget(lookAgain);
    noGpuButtons->addStretch(1);
    noGpuLayout->addLayout(noGpuButtons);
    m_noGpu->hide();
    connect(noGpuImport, &QPushButton::clicked, this, &MeasurePanel::chooseImport);
    connect(lookAgain, &QPushButton::clicked, this, [this] {
        m_measure->setEnabled(true);
        m_measure->click();
    });
    return m_noGpu;
}

void MeasurePanel::chooseImport()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import measurements"), QString(),
        tr("nccl-tests logs, JSON, probe runs (*.log *.txt *.json *.jsonl);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !importFile(path, &error))
        m_status->setText(tr("<span style='color:#c0392b'>%1</span>").arg(error.toHtmlEscaped()));
}

void MeasurePanel::showNoGpu(bool probeMissing, const QString& detail)
{
    m_measure->setEnabled(false);
    m_measure->setToolTip(tr("Nothing to measure with here: see the panel below"));
    m_cancel->setEnabled(false);
    m_progress->setRange(0, 1);
    m_progress->setValue(1);
    m_progress->setFormat(tr("no GPU"));
    const QString probe = MeasurementRunner::probePath().toHtmlEscaped();
    QString looked;
    if (probeMissing) {
        using ProbeFile = MeasurementRunner::ProbeFile;
        const ProbeFile file = MeasurementRunner::probeFile();
        const QString found = MeasurementRunner::probePath();
        m_status->setText(
            file == ProbeFile::NotExecutable || file == ProbeFile::Runnable
                ? tr("No GPU measurement: paraplan-probe at %1 is not executable.").arg(found)
                : tr("No GPU measurement on this machine: paraplan-probe was not "
                     "found."));
        QStringList places;
        for (const QString& place : MeasurementRunner::probeLocations())
            places << place.toHtmlEscaped();
        looked =
            file != ProbeFile::Missing
                ? tr("Found %1, but %2.")
                      .arg(found.toHtmlEscaped(), file == ProbeFile::Folder
                                                      ? tr("it is a folder, not the program")
                                                      : tr("it is not executable (chmod +x it)"))
                : tr("Looked for paraplan-probe at %1: not found. (It is built only where "
                     "the CUDA toolkit and NCCL are installed.)")
                      .arg(places.join(tr(", then ")));
        if (file == ProbeFile::Missing && !detail.isEmpty() &&
            !detail.startsWith(tr("the probe was not found")))
            looked += " " + tr("The system said: %1.").arg(detail.toHtmlEscaped());
    } else {
        m_status->setText(
            tr("No GPU measurement on this machine: the probe found no usable CUDA device."));
        looked = tr("Ran %1, which looked for a CUDA device through the NVIDIA driver and found "
                    "none it can use.")
                     .arg(probe);
        if (detail.contains("insufficient", Qt::CaseInsensitive))
            looked += " " + tr("The driver is older than the CUDA runtime the probe was built "
                               "with (or there is no NVIDIA driver at all).");
        if (!detail.isEmpty())
            looked += " " + tr("The probe said: <i>%1</i>.").arg(detail.toHtmlEscaped());
    }
    m_noGpuText->setText(
        tr("<b>No GPU to measure on this machine.</b><p>%1</p><p>To measure a GPU machine, "
           "build Paraplan there (or copy paraplan-probe over) and run<br>"
           "<code>&nbsp;&nbsp;paraplan-probe --plan PLAN.json &gt; probe-run.jsonl</code><br>"
           "(across nodes, one process per GPU: <code>mpirun -np 16 --npernode 8 "
           "paraplan-probe &gt; probe-run.jsonl</code>), then import probe-run.jsonl here. "
           "The file's format is in docs/probe-protocol.md; nccl-tests logs import too.</p>")
            .arg(looked));
    m_noGpu->show();
}

void MeasurePanel::hideNoGpu()
{
    m_noGpu->hide();
    m_noGpuText->clear();
    m_measure->setToolTip(QString());
    m_progress->setFormat("%p%");
}

QString MeasurePanel::noGpuText() const
{
    return m_noGpu->isVisibleTo(this) ? m_noGpuText->text() : QString();
}

QString MeasurePanel::mismatchText() const
{
    return m_mismatch->isVisibleTo(this) ? m_mismatch->text() : QString();
}

void MeasurePanel::setConfirmer(std::function<bool(const QString&)> confirmer)
{
    m_confirmer = std::move(confirmer);
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
    hideNoGpu();
    // An imported run does not make this machine measurable: Measure needs the probe.
    m_measure->setEnabled(MeasurementRunner::probeFound());
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
        complete ? QString("%1: %2.").arg(message, QString::fromStdString(run.describe()))
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
    const QString mismatch = m_proposals.empty() ? QString() : gpuMismatchWarning(m_run, m_plan);
    m_mismatch->setText(mismatch);
    m_mismatch->setVisible(!mismatch.isEmpty());
    for (const MeasuredFigure& f : m_proposals) {
        auto* item = new QListWidgetItem(tr("%1: assumed %2, measured %3 (%4)")
                                             .arg(QString::fromStdString(f.figure))
                                             .arg(f.assumed, 0, 'f', 3)
                                             .arg(f.value, 0, 'f', 3)
                                             .arg(QString::fromStdString(f.why)),
                                         m_proposalList);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        // Measured on another GPU model: nothing is ticked, the user ticks what to take.
        item->setCheckState(mismatch.isEmpty() ? Qt::Checked : Qt::Unchecked);
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
    const QString mismatch = gpuMismatchWarning(m_run, m_plan);
    if (!mismatch.isEmpty() && !(m_confirmer && m_confirmer(mismatch)))
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
