#include "mainwindow.h"

#include "summary.h"

#include "clusterio.h"
#include "clusterview.h"
#include "collectivewalkthrough.h"
#include "datapaths.h"
#include "derivationhtml.h"
#include "dialogfolders.h"
#include "inputpanel.h"
#include "launchexportdialog.h"
#include "measurepanel.h"
#include "plots.h"
#include "practicepanel.h"
#include "recoverystore.h"
#include "searchpanel.h"
#include "stepwalkthrough.h"
#include "tablemodels.h"
#include "topologyeditor.h"
#include "topologygraph.h"
#include "undokeys.h"
#include "units.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

namespace paraplan::ui {

namespace {

// The Derivation tab's long document is laid out when the tab is shown or read, not on every
// edit (the edit -> redrawn time of issue 17).
void showPendingDerivation(QTextBrowser* browser, std::shared_ptr<const PlanResults>* pending)
{
    if (!*pending)
        return;
    const std::shared_ptr<const PlanResults> r = std::move(*pending);
    pending->reset();
    browser->setHtml(derivationHtml(derivePlan(r->plan, r->cost)));
}

} // namespace

namespace {

// Ends a form dialog with OK and Cancel and runs it; true when the user chose OK.
bool confirmed(QDialog& dialog, QFormLayout* form)
{
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    return dialog.exec() == QDialog::Accepted;
}

QTableView* makeTable(QAbstractItemModel* model, QWidget* parent)
{
    auto* table = new QTableView(parent);
    table->setModel(model);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->verticalHeader()->setVisible(false);
    table->horizontalHeader()->setStretchLastSection(true);
    table->setAlternatingRowColors(true);
    table->setWordWrap(false);
    return table;
}

} // namespace

MainWindow::MainWindow(bool interactive, QWidget* parent)
    : QMainWindow(parent), m_interactive(interactive), m_session(new PlanSession(this)),
      m_document(m_session->document()), m_evaluator(m_session->evaluator()),
      m_recovery(std::make_unique<RecoveryStore>())
{
    setAcceptDrops(true);
    setWindowIcon(QIcon(":/paraplan/icons/paraplan.svg"));

    // Inputs, scrollable, on the left; results on the right.
    QWidget* inputs = buildInputs();
    QWidget* results = buildResults();
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(inputs);
    splitter->addWidget(results);
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);
    setCentralWidget(splitter);

    m_status = new QLabel(this);
    m_status->setObjectName("status");
    m_status->setWordWrap(true);
    statusBar()->addWidget(m_status, 1);

    // One history: the topology drawing is a view of the plan, and its edits are plan edits.
    m_topology->document()->attach(m_document);
    buildMenus();

    m_recoveryTimer = new QTimer(this);
    m_recoveryTimer->setSingleShot(true);
    m_recoveryTimer->setInterval(2000);
    connect(m_recoveryTimer, &QTimer::timeout, this, [this] { writeRecovery(); });
    connectDocument();
    connectPanels();

    m_document->reset(examplePlan(), QString());
    updateTitle();
    fitToScreen();
}

MainWindow::~MainWindow()
{
    // The session and the panels are children, destroyed after this destructor has run;
    // the session's undo stack clears itself as it goes, a search or a measurement may still
    // be running. Cut every connection from them (and from the stack, which is nobody's
    // child) to this window first: nothing may reach a half-destroyed window.
    m_recoveryTimer->stop();
    disconnect(m_document->undoStack(), nullptr, this, nullptr);
    for (QObject* child : findChildren<QObject*>())
        disconnect(child, nullptr, this, nullptr);
}

QWidget* MainWindow::buildInputs()
{
    m_inputs = new InputPanel(m_document, this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_inputs);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // A combo box is as wide as its longest choice unless told otherwise: here the chosen
    // text decides, so that one long preset name does not widen the whole panel.
    for (QComboBox* combo : m_inputs->findChildren<QComboBox*>()) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(14);
        // QComboBox keeps the smallest size it computed from its longest choice; say it.
        combo->setMinimumWidth(combo->sizeHint().width());
    }
    // Never narrower than the inputs (no horizontal scroll bar, so nothing may be cut on the
    // right), with room for the vertical scroll bar at 800 px high.
    scroll->setMinimumWidth(m_inputs->minimumSizeHint().width() +
                            scroll->verticalScrollBar()->sizeHint().width() +
                            2 * scroll->frameWidth());
    return scroll;
}

QWidget* MainWindow::buildResults()
{
    auto* results = new QWidget(this);
    auto* resultsLayout = new QVBoxLayout(results);
    resultsLayout->setContentsMargins(4, 4, 4, 4);
    m_headline = new QLabel(results);
    m_headline->setObjectName("headline");
    m_headline->setTextFormat(Qt::RichText);
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextBrowserInteraction);
    connect(m_headline, &QLabel::linkActivated, this,
            [this](const QString& link) { showDerivation(link); });
    resultsLayout->addWidget(m_headline);
    auto* staleNote = new QLabel(results); // why the figures are greyed (showHeadline)
    staleNote->setObjectName("staleNote");
    staleNote->setWordWrap(true);
    staleNote->setStyleSheet("color: #8b1a10;");
    staleNote->hide();
    resultsLayout->addWidget(staleNote);

    m_tabs = new QTabWidget(results);
    m_tabs->addTab(buildStepTab(), tr("Step time"));
    m_tabs->addTab(buildMemoryTab(), tr("Memory"));
    m_tabs->addTab(buildCliffsTab(), tr("Bandwidth cliffs"));
    m_tabs->addTab(buildClusterTab(), tr("Cluster"));
    // The topology editor: the cluster drawn, with the plan overlaid.
    m_topology = new TopologyEditor(m_tabs);
    m_tabs->addTab(m_topology, tr("Topology"));
    // Measurements: the probe, imported logs, fits and measured figures.
    m_measure = new MeasurePanel(m_tabs);
    m_tabs->addTab(m_measure, tr("Measure"));
    // Derivations.
    m_derivation = new QTextBrowser(m_tabs);
    m_derivation->setObjectName("derivation");
    m_derivation->setOpenLinks(false);
    m_tabs->addTab(m_derivation, tr("Derivation"));
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (m_tabs->currentWidget() == m_derivation)
            showPendingDerivation(m_derivation, &m_derivationPending);
    });
    // The layout search and the comparison of pinned plans.
    m_search = new SearchPanel(m_tabs);
    m_tabs->addTab(m_search, tr("Search"));
    // Interview practice on the plan.
    m_practice = new PracticePanel(m_tabs);
    m_tabs->addTab(m_practice, tr("Practice"));
    resultsLayout->addWidget(m_tabs, 1);
    return results;
}

// Step: breakdown and collectives.
QWidget* MainWindow::buildStepTab()
{
    auto* stepTab = new QSplitter(Qt::Vertical, m_tabs);
    m_plots.breakdown = new BreakdownPlot(stepTab);
    m_collectivesModel = new CollectivesModel(this);
    m_collectivesTable = makeTable(m_collectivesModel, stepTab);
    m_collectivesTable->setObjectName("collectivesTable");
    connect(m_collectivesTable, &QTableView::doubleClicked, this,
            [this](const QModelIndex& index) { showCollectiveDerivation(index.row()); });
    stepTab->addWidget(m_plots.breakdown);
    stepTab->addWidget(m_collectivesTable);
    stepTab->setStretchFactor(0, 3);
    stepTab->setStretchFactor(1, 2);
    return stepTab;
}

// Memory: per stage, plotted and tabled.
QWidget* MainWindow::buildMemoryTab()
{
    auto* memoryTab = new QSplitter(Qt::Vertical, m_tabs);
    m_plots.memory = new MemoryPlot(memoryTab);
    m_memoryModel = new MemoryModel(this);
    // The verdict in words above the table: what is spare or over, and what would fit.
    auto* below = new QWidget(memoryTab);
    auto* belowLayout = new QVBoxLayout(below);
    belowLayout->setContentsMargins(0, 0, 0, 0);
    m_memoryVerdict = new QLabel(below);
    m_memoryVerdict->setObjectName("memoryVerdict");
    m_memoryVerdict->setWordWrap(true);
    m_memoryVerdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_memoryTable = makeTable(m_memoryModel, below);
    belowLayout->addWidget(m_memoryVerdict);
    belowLayout->addWidget(m_memoryTable);
    m_memoryTable->setObjectName("memoryTable");
    // The total and whether it fits next to the stage, where they are seen at 1280x800; the
    // parts follow.
    QHeaderView* memoryHeader = m_memoryTable->horizontalHeader();
    memoryHeader->moveSection(MemoryModel::Total, MemoryModel::Weights);
    memoryHeader->moveSection(MemoryModel::Fits, MemoryModel::Weights + 1);
    memoryTab->addWidget(m_plots.memory);
    memoryTab->addWidget(below);
    memoryTab->setStretchFactor(0, 3);
    memoryTab->setStretchFactor(1, 2);
    return memoryTab;
}

// The four cliff plots.
QWidget* MainWindow::buildCliffsTab()
{
    auto* cliffs = new QWidget(m_tabs);
    auto* grid = new QGridLayout(cliffs);
    grid->setContentsMargins(0, 0, 0, 0);
    m_plots.tp = new TpSweepPlot(cliffs);
    m_plots.bandwidth = new BandwidthPlot(cliffs);
    m_plots.scaling = new ScalingPlot(cliffs);
    m_plots.whatIf = new WhatIfPlot(cliffs);
    grid->addWidget(m_plots.tp, 0, 0);
    grid->addWidget(m_plots.bandwidth, 0, 1);
    grid->addWidget(m_plots.scaling, 1, 0);
    grid->addWidget(m_plots.whatIf, 1, 1);
    return cliffs;
}

// Cluster picture.
QWidget* MainWindow::buildClusterTab()
{
    auto* clusterTab = new QWidget(m_tabs);
    auto* clusterLayout = new QVBoxLayout(clusterTab);
    m_colourBy = new QComboBox(clusterTab);
    m_colourBy->addItems(
        {tr("Colour by TP group"), tr("Colour by pipeline stage"), tr("Colour by DP replica")});
    m_clusterView = new ClusterView(clusterTab);
    connect(m_colourBy, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_clusterView->setColourBy(static_cast<ClusterView::ColourBy>(index));
    });
    clusterLayout->addWidget(m_colourBy, 0, Qt::AlignLeft);
    clusterLayout->addWidget(m_clusterView, 1);
    return clusterTab;
}

void MainWindow::connectDocument()
{
    // Unsaved work is copied to the recovery file a moment after each edit.
    connect(m_document->undoStack(), &QUndoStack::indexChanged, this, [this] {
        if (m_document->isModified())
            m_recoveryTimer->start();
    });
    connect(m_document, &PlanDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::pathChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::fileChangedOnDisk, this, &MainWindow::fileChangedOnDisk);
    connect(m_session, &PlanSession::resultsAvailable, this, &MainWindow::showResults);
    connect(m_session, &PlanSession::planRejected, this, &MainWindow::showRejection);
}

void MainWindow::connectPanels()
{
    connect(m_search, &SearchPanel::layoutChosen, this,
            [this](const ParallelLayout& layout, MoeDispatcher dispatcher, const QString& label) {
                m_document->edit(tr("use searched layout %1").arg(label), Field::Whole,
                                 [layout, dispatcher](Plan& plan) {
                                     // The search costed every layout on the plan's framework,
                                     // which the layout leaves as it is; an MoE row also
                                     // says which token dispatcher it ran.
                                     plan.parallel = layout;
                                     if (dispatcher != MoeDispatcher::Auto)
                                         plan.training.moe_dispatcher = dispatcher;
                                 });
                m_document->setNote(tr("Loaded %1 from the search (Edit > Undo restores the "
                                       "previous layout)")
                                        .arg(label));
            });
    connect(m_topology, &TopologyEditor::errorReported, this,
            [this](const QString& message) { reportError(tr("Topology"), message); });
    connect(m_measure, &MeasurePanel::applyRequested, this,
            [this](const std::vector<MeasuredFigure>& figures) {
                m_document->edit(tr("Apply %1 measured figure(s)").arg(figures.size()),
                                 Field::Whole, [figures](Plan& plan) {
                                     for (const MeasuredFigure& f : figures)
                                         applyMeasurementToPlan(f, &plan);
                                 });
            });
    if (!m_interactive) // no dialogs: a run from another GPU model is never applied unasked
        m_measure->setConfirmer([](const QString&) { return false; });
    connect(m_measure, &MeasurePanel::revertRequested, this,
            [this](const std::vector<MeasuredFigure>& figures) {
                m_document->edit(tr("Revert %1 measured figure(s)").arg(figures.size()),
                                 Field::Whole, [figures](Plan& plan) {
                                     for (const MeasuredFigure& f : figures)
                                         revertMeasurementOfPlan(f.figure, &plan,
                                                                 HardwareCatalog::bundled());
                                 });
            });
    connect(m_measure, &MeasurePanel::runAvailable, this,
            [this](const MeasurementRun&, const std::vector<AlphaBetaFit>& fits) {
                m_plots.bandwidth->setMeasured(fits);
                if (const auto latest = m_evaluator->latest())
                    m_plots.bandwidth->setResults(*latest);
            });
    connect(m_inputs, &InputPanel::importModelRequested, this, &MainWindow::importModel);
    connect(m_inputs, &InputPanel::openClusterRequested, this, &MainWindow::openCluster);
}

QList<PlotView*> MainWindow::plots() const
{
    return {m_plots.breakdown, m_plots.memory,  m_plots.tp,
            m_plots.bandwidth, m_plots.scaling, m_plots.whatIf};
}

QString MainWindow::headlineText() const
{
    return m_headline->text();
}
QString MainWindow::derivationText() const
{
    showPendingDerivation(m_derivation, &m_derivationPending);
    return m_derivation->toPlainText();
}
QString MainWindow::statusText() const
{
    return m_status->text();
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), QKeySequence::New, this, &MainWindow::newPlan);
    file->addAction(tr("&Open..."), QKeySequence::Open, this, &MainWindow::openDialog);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    addExamplesMenu(file, this);
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
    // QKeySequence::SaveAs is empty on Linux and Windows.
    file->addAction(tr("Save &As..."),
                    QKeySequence::keyBindings(QKeySequence::SaveAs)
                        .value(0, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)),
                    this, &MainWindow::saveAs);
    file->addSeparator();
    file->addAction(tr("Import model config.json..."), this, &MainWindow::importModel);
    file->addAction(tr("Open cluster file..."), this, &MainWindow::openCluster);
    file->addSeparator();
    file->addAction(tr("&Export report (PDF)..."), QKeySequence(tr("Ctrl+E")), this, [this] {
        const QString base = datapaths::planFileStem(m_document->path());
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export report"),
            dialogStart("report", (base.isEmpty() ? QString("plan") : base) + ".pdf"),
            tr("PDF, A4 (*.pdf);;PDF, US Letter (*.pdf)"), &m_reportFilter);
        rememberDialog("report", path);
        if (!path.isEmpty())
            exportReport(path, m_reportFilter.contains("Letter"));
    });
    file->addAction(tr("Export &launch configuration..."), this, [this] {
        LaunchExportDialog dialog(m_document->plan(), m_document->path(), this);
        dialog.exec();
    });
    // One table a file (RFC 4180), as `paraplan-cli report --csv --table NAME` writes them.
    QMenu* tables = file->addMenu(tr("Export table (&CSV)"));
    for (const auto& [table, title] :
         {std::pair<QString, QString>{"collectives", tr("Collectives...")},
          {"memory", tr("Memory per stage...")}}) {
        tables->addAction(title, this, [this, table = table] {
            const QString path = QFileDialog::getSaveFileName(
                this, tr("Export table"), dialogStart("tables", table + ".csv"), tr("CSV (*.csv)"));
            rememberDialog("tables", path);
            if (!path.isEmpty())
                exportTableCsv(table, path);
        });
    }
    file->addSeparator();
    // Some platforms bind no Quit key (QKeySequence::Quit is empty there): Ctrl+Q then.
    file->addAction(
        tr("&Quit"),
        QKeySequence::keyBindings(QKeySequence::Quit).value(0, QKeySequence(Qt::CTRL | Qt::Key_Q)),
        this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    // The platform's bindings; Redo also Ctrl+Y and Ctrl+Shift+Z everywhere (undokeys.h).
    undo->setShortcuts(undoKeys());
    QAction* redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts(redoKeys());
    edit->addAction(undo);
    edit->addAction(redo);

    QMenu* topology = menuBar()->addMenu(tr("&Topology"));
    topology->addAction(tr("Generate fat-tree..."), this, &MainWindow::generateFatTreeDialog);
    topology->addAction(tr("Generate torus..."), this, &MainWindow::generateTorusDialog);
    topology->addAction(tr("Import nvidia-smi or NCCL topology..."), this,
                        &MainWindow::importTopologyDialog);
    topology->addAction(tr("Save cluster as..."), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save cluster"),
                                                          dialogStart("cluster", "cluster.json"),
                                                          tr("Cluster files (*.json)"));
        rememberDialog("cluster", path);
        QString error;
        if (!path.isEmpty() && !m_topology->saveCluster(path, &error))
            reportError(tr("Cannot save cluster"), error);
    });
    topology->addAction(tr("Measure this machine..."), this,
                        [this] { m_tabs->setCurrentWidget(m_measure); });
    topology->addAction(tr("Show the editor"), this,
                        [this] { m_tabs->setCurrentWidget(m_topology); });

    buildHelpMenu();
}

void MainWindow::showResults(std::shared_ptr<const PlanResults> r)
{
    m_search->setResults(r);
    m_practice->setResults(r);
    const StepCost& cost = r->cost;
    // A drawing the model cannot read leaves the plan on its last valid cluster: greyed.
    showHeadline(*r, drawingStaleReason(*m_topology->document()));

    m_collectivesModel->setResults(r);
    m_memoryModel->setResults(r);
    m_collectivesTable->resizeColumnsToContents();
    m_memoryTable->resizeColumnsToContents();
    m_memoryVerdict->setText(
        QString::fromStdString(memoryVerdictText(r->cost, r->analysis.memory_fixes)));
    m_plots.breakdown->setResults(*r);
    m_plots.memory->setResults(*r);
    m_plots.tp->setResults(*r);
    m_plots.bandwidth->setResults(*r);
    m_plots.scaling->setResults(*r);
    m_plots.whatIf->setResults(*r);
    m_clusterView->setResults(r);
    m_topology->setOverlay(r);
    m_measure->setPlan(r->plan);
    m_derivationPending = r;
    if (m_tabs->currentWidget() == m_derivation)
        showPendingDerivation(m_derivation, &m_derivationPending);
    m_inputs->markIssues({});
    QString status = tr("%1 micro-batches per pipeline on %2 GPUs.")
                         .arg(cost.microbatches)
                         .arg(QString::fromStdString(groupedNumber(r->plan.parallel.gpus())));
    for (const std::string& warning : cost.warnings)
        status += " " + tr("Note: %1.").arg(QString::fromStdString(warning));
    m_status->setStyleSheet(QString());
    const QString note = m_document->note();
    m_status->setText(note.isEmpty() ? status : note + ". " + status);
    emit resultsShown();
}

void MainWindow::generateFatTreeDialog()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Generate a fat-tree"));
    auto* form = new QFormLayout(&dialog);
    auto* preset = new QComboBox(&dialog);
    for (const ClusterPresetInfo& info : clusterPresets()) {
        if (info.id != "tpu-v4-pod")
            preset->addItem(QString::fromStdString(info.id));
    }
    auto* nodes = new QSpinBox(&dialog);
    nodes->setRange(1, 100000);
    nodes->setValue(64);
    auto* perRack = new QSpinBox(&dialog);
    perRack->setRange(1, 100000);
    perRack->setValue(32);
    auto* ratio = new QDoubleSpinBox(&dialog);
    ratio->setRange(1, 64);
    ratio->setValue(2);
    ratio->setSuffix(" : 1");
    form->addRow(tr("Node"), preset);
    form->addRow(tr("Nodes"), nodes);
    form->addRow(tr("Nodes per rack"), perRack);
    form->addRow(tr("Spine"), ratio);
    if (!confirmed(dialog, form))
        return;
    QString error;
    if (!m_topology->generateFatTree(preset->currentText().toStdString(), nodes->value(),
                                     perRack->value(), ratio->value(), &error))
        reportError(tr("Cannot generate"), error);
    m_tabs->setCurrentWidget(m_topology);
}

void MainWindow::generateTorusDialog()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Generate a torus"));
    auto* form = new QFormLayout(&dialog);
    QSpinBox* dims[3];
    for (int axis = 0; axis < 3; ++axis) {
        dims[axis] = new QSpinBox(&dialog);
        dims[axis]->setRange(1, 64);
        dims[axis]->setValue(axis == 2 ? 8 : 4);
        form->addRow(QString("xyz").mid(axis, 1), dims[axis]);
    }
    if (!confirmed(dialog, form))
        return;
    QString error;
    if (!m_topology->generateTorus(dims[0]->value(), dims[1]->value(), dims[2]->value(), &error))
        reportError(tr("Cannot generate"), error);
    m_tabs->setCurrentWidget(m_topology);
}

void MainWindow::importTopologyDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import topology"), dialogStart("topology"),
        tr("nvidia-smi topo -m or NCCL topology (*.txt *.xml *.log);;All files (*)"));
    rememberDialog("topology", path);
    if (path.isEmpty())
        return;
    // What the file cannot tell is asked for.
    QDialog dialog(this);
    dialog.setWindowTitle(tr("What the file does not say"));
    auto* form = new QFormLayout(&dialog);
    auto* gpu = new QComboBox(&dialog);
    gpu->addItem(tr("infer from the file"), QString());
    for (const GpuSpec& spec : HardwareCatalog::bundled().gpus)
        gpu->addItem(QString::fromStdString(spec.name), QString::fromStdString(spec.id));
    auto* nic = new QComboBox(&dialog);
    nic->addItem(tr("infer from the file"), QString());
    for (const InterconnectSpec& spec : HardwareCatalog::bundled().interconnects) {
        if (spec.kind == LinkKind::InfiniBand || spec.kind == LinkKind::RoCE)
            nic->addItem(QString::fromStdString(spec.name), QString::fromStdString(spec.id));
    }
    auto* nodes = new QSpinBox(&dialog);
    nodes->setRange(1, 100000);
    nodes->setValue(m_document->plan().cluster.nodes);
    form->addRow(tr("GPU"), gpu);
    form->addRow(tr("NICs"), nic);
    form->addRow(tr("Nodes like this one"), nodes);
    if (!confirmed(dialog, form))
        return;
    TopologyImportOptions options;
    options.gpu_id = gpu->currentData().toString().toStdString();
    options.nic_id = nic->currentData().toString().toStdString();
    options.nodes = nodes->value();
    QString error;
    if (!m_topology->importTopology(path, options, &error))
        reportError(tr("Cannot import topology"), error);
    m_tabs->setCurrentWidget(m_topology);
}

void MainWindow::showRejection(const std::vector<PlanIssue>& issues)
{
    m_inputs->markIssues(issues);
    QStringList messages;
    for (const PlanIssue& issue : issues)
        messages << QString::fromStdString(issue.message);
    m_status->setStyleSheet("color: #c0392b;");
    // A plan opened invalid has no valid result of its own to fall back on.
    const QString note = m_document->note();
    m_status->setText((note.isEmpty() ? QString() : note + ". ") +
                      tr("Invalid plan: %1. %2")
                          .arg(messages.join("; "), m_evaluator->latest()
                                                        ? tr("Showing the last valid result.")
                                                        : tr("No results until it is fixed.")));
    if (const auto latest = m_evaluator->latest(); latest && !issues.empty())
        showHeadline(*latest,
                     tr("Not updated, the plan is invalid: %1%2")
                         .arg(QString::fromStdString(issues.front().message),
                              issues.size() > 1
                                  ? tr(" (and %1 more in the status bar)").arg(issues.size() - 1)
                                  : QString()));
}

void MainWindow::showDerivation(const QString& anchor)
{
    m_tabs->setCurrentWidget(m_derivation);
    m_derivation->scrollToAnchor(anchor);
}

void MainWindow::showCollectiveDerivation(int row)
{
    // The plan's derivation embeds each collective's own, in the table's order.
    if (m_collectivesModel->collective(row))
        showDerivation(QString("collective-%1").arg(row));
}

void MainWindow::reportError(const QString& title, const QString& message)
{
    emit errorReported(message);
    m_status->setStyleSheet("color: #c0392b;");
    m_status->setText(message.section('\n', 0, 1).replace('\n', ' '));
    if (m_interactive)
        QMessageBox::warning(this, title, message);
}

} // namespace paraplan::ui
