#include "searchpanel.h"

#include "summary.h"

#include "plots.h"
#include "searchwording.h"
#include "units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <atomic>

namespace paraplan::ui {

// --- the panel -----------------------------------------------------------------------------

struct SearchPanel::Job
{
    Plan base;
    SearchOptions options;
    std::atomic<bool> cancel{false};
    std::atomic<int> permille{0};
    SearchResult result;
};

SearchPanel::SearchPanel(QWidget* parent) : QWidget(parent)
{
    QWidget* left = buildSearchSide();
    QWidget* right = buildComparisonSide();
    // The search and its ranked table above, across the whole tab (its columns, "behind the
    // best by" included, need the width at 1280x800); the Pareto plot and the pinned plans
    // side by side below.
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    // A little more to the plots than their smallest (the pinned plans' legend takes three
    // rows, tst_plotstyle); the ranked table still shows three rows at 1280x800.
    split->setSizes({455, 245});
    split->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connectControls();
    refreshComparison();
}

// The search's settings: objective, limits, headroom, micro-batch, top count and threads.
QGroupBox* SearchPanel::buildSettings()
{
    auto* settings = new QGroupBox(tr("Search every valid layout of this plan's model, cluster "
                                      "and global batch"),
                                   this);
    auto* form = new QFormLayout;
    m_objective = new QComboBox;
    m_objective->setObjectName("searchObjective");
    for (const EnumName<SearchObjective>& entry : kSearchObjectiveNames)
        m_objective->addItem(QString::fromUtf8(entry.description), int(entry.value));
    form->addRow(tr("Objective"), m_objective);
    m_maxTp = new QSpinBox;
    m_maxTp->setObjectName("searchMaxTp");
    m_maxTp->setRange(0, 1024);
    m_maxTp->setSpecialValueText(tr("no limit"));
    form->addRow(tr("Largest TP"), m_maxTp);
    m_ppAcrossNodes = new QCheckBox(tr("pipeline stages on different nodes"));
    m_ppAcrossNodes->setObjectName("searchPpAcrossNodes");
    form->addRow(tr("PP"), m_ppAcrossNodes);
    m_headroom = new QDoubleSpinBox;
    m_headroom->setObjectName("searchHeadroom");
    m_headroom->setRange(0, 90);
    m_headroom->setSuffix(" %");
    m_headroom->setDecimals(1);
    m_headroom->setValue(100 * kDefaultSearchHeadroomShare);
    m_headroom->setToolTip(tr("Share of HBM left free on the fullest pipeline stage, on top of "
                              "the reserve below (default 5%: a margin for the allocator's "
                              "fragmentation and the engine's memory error). Set both to 0 to "
                              "keep every layout that fits."));
    form->addRow(tr("Memory headroom"), m_headroom);
    // The rest in a second column: the settings stay four rows high.
    auto* more = new QFormLayout;
    // In GiB to two places, as the CLI and the tooltip give it; the default's 1.43 searches as
    // the default itself, 1469 MiB (reserveBytesFromGiB()).
    m_reserve = new QDoubleSpinBox;
    m_reserve->setObjectName("searchReserve");
    m_reserve->setRange(0, 1024);
    m_reserve->setSuffix(" GiB");
    m_reserve->setDecimals(2);
    m_reserve->setSingleStep(0.25);
    m_reserve->setValue(units::toGiB(kDefaultSearchReserveBytes));
    m_reserve->setToolTip(tr("Memory kept free on every GPU besides the headroom, from the "
                             "whole HBM (the engine's verdict counts the same by default): a CUDA "
                             "context, 781 MiB after PyTorch's first CUDA tensor (nvidia-smi, "
                             "PyTorch issue #34323), and one NCCL communicator's buffers, "
                             "688 MiB for a group of more than two A100s on NVLink "
                             "(NVIDIA/nccl issue #964): 1.43 GiB by default."));
    more->addRow(tr("Reserve"), m_reserve);
    m_microBatch = new QSpinBox;
    m_microBatch->setObjectName("searchMicroBatch");
    m_microBatch->setRange(0, 1024);
    m_microBatch->setSpecialValueText(tr("searched"));
    more->addRow(tr("Micro-batch"), m_microBatch);
    m_maxInterleave = new QSpinBox;
    m_maxInterleave->setObjectName("searchMaxInterleave");
    m_maxInterleave->setRange(1, 64);
    m_maxInterleave->setValue(SearchOptions{}.max_interleave);
    m_maxInterleave->setToolTip(tr("Interleave (virtual pipeline stages) searched: 1 to this. "
                                   "Default 4, or the plan's own interleave when larger."));
    more->addRow(tr("Max interleave"), m_maxInterleave);
    m_top = new QSpinBox;
    m_top->setRange(1, 1000);
    m_top->setValue(50);
    // The top count and the threads share a row: each column stays four rows high.
    auto* topAndThreads = new QHBoxLayout;
    topAndThreads->addWidget(m_top, 1);
    topAndThreads->addSpacing(12);
    topAndThreads->addWidget(new QLabel(tr("Threads")));
    m_threads = new QSpinBox;
    m_threads->setObjectName("searchThreads");
    m_threads->setRange(1, 256);
    m_threads->setValue(std::max(1, QThread::idealThreadCount()));
    m_threads->setToolTip(tr("Worker threads; the ranking is the same for any number"));
    topAndThreads->addWidget(m_threads, 1);
    more->addRow(tr("Show the top"), topAndThreads);
    auto* columns = new QHBoxLayout;
    columns->addLayout(form, 1);
    columns->addSpacing(12);
    columns->addLayout(more, 1);
    settings->setLayout(columns);
    return settings;
}

// Left: the settings, the run controls, the ranked candidates and what to do with one.
QWidget* SearchPanel::buildSearchSide()
{
    QGroupBox* settings = buildSettings();

    m_run = new QPushButton(tr("Search"));
    m_run->setObjectName("searchRun");
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setEnabled(false);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_status = new QLabel(tr("Not searched yet."));
    m_status->setObjectName("searchStatus");
    m_status->setWordWrap(true);
    m_why = new QLabel(tr("Select a candidate to see what puts it behind the best."));
    m_why->setObjectName("searchWhy");
    m_why->setWordWrap(true);
    m_why->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(m_run);
    runRow->addWidget(m_cancel);
    runRow->addWidget(m_progress, 1);

    m_model = new SearchResultsModel(this);
    m_sorted = new QSortFilterProxyModel(this);
    m_sorted->setSourceModel(m_model);
    m_sorted->setSortRole(Qt::UserRole);
    m_table = new QTableView;
    m_table->setObjectName("searchResults");
    m_table->setModel(m_sorted);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->setVisible(false);
    // Columns as wide as their contents, the ones a reader compares first (layout, step
    // time, memory, MFU, how far behind the best) ahead of tokens/s/GPU, which goes last.
    QHeaderView* header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->moveSection(SearchResultsModel::TokensPerGpu, SearchResultsModel::Behind);
    header->setStretchLastSection(true);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setToolTip(tr("Double-click a candidate to load it into the plan (undoable)"));

    m_use = new QPushButton(tr("Use this layout"));
    m_pin = new QPushButton(tr("Pin for comparison"));
    m_pinCurrent = new QPushButton(tr("Pin the current plan"));
    m_clearPins = new QPushButton(tr("Clear pins"));
    auto* tableButtons = new QHBoxLayout;
    tableButtons->addWidget(m_use);
    tableButtons->addWidget(m_pin);
    tableButtons->addWidget(m_pinCurrent);
    tableButtons->addWidget(m_clearPins);
    tableButtons->addStretch(1);

    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(settings);
    leftLayout->addLayout(runRow);
    leftLayout->addWidget(m_status);
    leftLayout->addWidget(m_table, 1);
    leftLayout->addWidget(m_why);
    leftLayout->addLayout(tableButtons);
    return left;
}

// Right: the Pareto plot and the pinned plans compared.
QWidget* SearchPanel::buildComparisonSide()
{
    m_pareto = new ParetoPlot;
    m_compareTable = new QTableWidget;
    m_compareTable->setObjectName("compareTable");
    m_compareTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_comparePlot = new CompareBreakdownPlot;
    // Two pages, each across the tab's width: the plots need it for their legends at
    // 1280x800 (three plots side by side left each a third, the legends piled up).
    // A little lower than other plots: the Search tab fits a 1280x720 screen (1.5x scale).
    m_pareto->setMinimumPlotHeight(185);
    m_comparePlot->setMinimumPlotHeight(185);
    auto* pinned = new QSplitter(Qt::Horizontal);
    pinned->setChildrenCollapsible(false);
    pinned->addWidget(m_compareTable);
    pinned->addWidget(m_comparePlot);
    // The plot takes three quarters: at 1280x800 its legend (up to nine components, in
    // rows of three) then fits the plot's low height; at two fifths it fell to rows of two
    // and the last row was cut off. The table scrolls sideways.
    pinned->setStretchFactor(0, 1);
    pinned->setStretchFactor(1, 3);
    pinned->setSizes({250, 750});
    m_lower = new QTabWidget;
    m_lower->setObjectName("searchLowerTabs");
    m_lower->addTab(m_pareto, tr("Memory against step time"));
    m_lower->addTab(pinned, tr("Pinned plans"));
    return m_lower;
}

void SearchPanel::connectControls()
{
    connect(m_run, &QPushButton::clicked, this, &SearchPanel::start);
    connect(m_cancel, &QPushButton::clicked, this, &SearchPanel::cancel);
    auto chosen = [this](const QModelIndex& index) {
        const SearchCandidate* c = m_model->candidate(m_sorted->mapToSource(index).row());
        if (c)
            emit layoutChosen(c->layout, c->moe_dispatcher, candidateText(*c));
    };
    connect(m_table, &QTableView::doubleClicked, this, chosen);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                const int row = m_sorted->mapToSource(current).row();
                const SearchCandidate* c = row >= 0 ? m_model->candidate(row) : nullptr;
                m_why->setText(c ? tr("#%1 %2: %3")
                                       .arg(row + 1)
                                       .arg(candidateText(*c),
                                            QString::fromStdString(searchRowBehind(*c, row + 1)))
                                 : tr("Select a candidate to see what puts it behind the best."));
            });
    // "Use this layout" and "Pin for comparison" act on the selected row: without one (no
    // search yet, a new search, nothing picked) they are greyed out rather than silent.
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &SearchPanel::updateRowButtons);
    connect(m_sorted, &QAbstractItemModel::modelReset, this, &SearchPanel::updateRowButtons);
    connect(m_sorted, &QAbstractItemModel::rowsRemoved, this, &SearchPanel::updateRowButtons);
    connect(m_sorted, &QAbstractItemModel::layoutChanged, this, &SearchPanel::updateRowButtons);
    updateRowButtons();
    connect(m_use, &QPushButton::clicked, this, [this, chosen] {
        const QModelIndexList rows = m_table->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            chosen(rows.first());
    });
    connect(m_pin, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_table->selectionModel()->selectedRows();
        QString error;
        if (rows.isEmpty())
            say(tr("Select a candidate to pin."));
        else if (!pin(rows.first().row(), &error))
            say(error);
    });
    connect(m_pinCurrent, &QPushButton::clicked, this, [this] {
        QString error;
        if (!pin(-1, &error))
            say(error);
    });
    connect(m_clearPins, &QPushButton::clicked, this, &SearchPanel::clearPins);
    // Edited by hand, the setting stays; else it follows the plan (setResults()).
    connect(m_maxInterleave, &QSpinBox::editingFinished, this,
            [this] { m_maxInterleaveSetByUser = true; });
}

void SearchPanel::updateRowButtons()
{
    const bool selected = m_table->selectionModel()->hasSelection();
    m_use->setEnabled(selected);
    m_pin->setEnabled(selected);
}

SearchPanel::~SearchPanel()
{
    if (m_job)
        m_job->cancel = true;
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

void SearchPanel::setResults(std::shared_ptr<const PlanResults> results)
{
    m_latest = std::move(results);
    // The searched interleaves hold the plan's own (up to the control's 64).
    if (m_latest && !m_maxInterleaveSetByUser)
        m_maxInterleave->setValue(
            std::max(SearchOptions{}.max_interleave, m_latest->plan.parallel.interleave));
}

SearchOptions SearchPanel::options() const
{
    SearchOptions o;
    o.objective = SearchObjective(m_objective->currentData().toInt());
    o.constraints.max_tp = m_maxTp->value();
    o.constraints.pp_across_nodes = m_ppAcrossNodes->isChecked();
    o.constraints.min_headroom = m_headroom->value() / 100.0;
    o.constraints.reserve_bytes = reserveBytesFromGiB(m_reserve->value());
    o.constraints.fixed_micro_batch = m_microBatch->value();
    o.max_interleave = m_maxInterleave->value();
    o.top = m_top->value();
    o.threads = m_threads->value();
    // The step-time bound (the default): the same rows, ranks, front and counts as costing
    // every layout, in a fraction of the time.
    o.bound = true;
    return o;
}

bool SearchPanel::isRunning() const
{
    return m_thread != nullptr;
}

void SearchPanel::start()
{
    if (m_thread)
        return;
    if (!m_latest) {
        say(tr("There is no valid plan to search from yet: fix the issues shown "
               "in the inputs first."));
        return;
    }
    auto job = std::make_shared<Job>();
    job->base = m_latest->plan;
    job->options = options();
    // A search too large to run is refused here, before a thread starts: counting the space
    // evaluates nothing.
    bool overBudget = false;
    const std::string problem = searchProblem(job->base, job->options, &overBudget);
    if (!problem.empty()) {
        say(tr("Search not run: %1%2")
                .arg(QString::fromStdString(problem),
                     overBudget ? tr("; narrow it with Largest TP, Micro-batch or Max interleave")
                                : QString()));
        return;
    }
    m_job = job;
    m_thread = QThread::create([job] {
        job->result =
            searchPlans(job->base, HardwareCatalog::bundled(), job->options, &job->cancel,
                        [job](double share) { job->permille = static_cast<int>(1000 * share); });
    });
    m_run->setEnabled(false);
    m_cancel->setEnabled(true);
    m_progress->setValue(0);
    say(tr("Searching..."));
    auto* timer = new QTimer(this);
    timer->setInterval(50);
    connect(timer, &QTimer::timeout, this,
            [this, job] { m_progress->setValue(job->permille.load()); });
    connect(m_thread, &QThread::finished, this, [this, timer] {
        timer->stop();
        timer->deleteLater();
        finish();
    });
    timer->start();
    m_thread->start();
}

void SearchPanel::cancel()
{
    if (m_job)
        m_job->cancel = true;
}

void SearchPanel::finish()
{
    std::shared_ptr<Job> job = m_job;
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    m_run->setEnabled(true);
    m_cancel->setEnabled(false);
    m_progress->setValue(1000);
    if (!job->result.ok) {
        say(tr("Search not run: %1").arg(QString::fromStdString(job->result.error)));
        emit finished();
        return;
    }
    if (job->result.cancelled) {
        say(tr("Search cancelled; the previous results stay."));
        m_progress->setValue(0);
        emit finished();
        return;
    }
    m_result = std::move(job->result);
    const int gpus = static_cast<int>(job->base.cluster.totalGpus());
    m_model->setResult(m_result, gpus);
    m_table->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
    m_table->resizeColumnsToContents();
    m_pareto->setSearch(m_result);
    showBriefStatus(job->base, job->options);
    emit finished();
}

void SearchPanel::say(const QString& text)
{
    m_status->setToolTip(QString());
    m_status->setText(text);
}

QString SearchPanel::statusText() const
{
    return m_status->toolTip().isEmpty() ? m_status->text() : m_status->toolTip();
}

bool SearchPanel::pin(int sortedRow, QString* error)
{
    if (static_cast<int>(m_pinned.size()) >= kMaxPinned) {
        if (error)
            *error = tr("At most %1 plans can be compared; clear the pins first.").arg(kMaxPinned);
        return false;
    }
    ComparedPlan plan;
    if (sortedRow < 0) {
        // The plan as the window shows it: its cost is already evaluated.
        if (!m_latest) {
            if (error)
                *error = tr("There is no valid plan to pin yet.");
            return false;
        }
        plan.cost = m_latest->cost;
        plan.layout = m_latest->plan.parallel;
        plan.label = tr("current plan");
    } else {
        // The model keeps the ranking's order: a source row is a rank.
        const int row = m_sorted->mapToSource(m_sorted->index(sortedRow, 0)).row();
        const SearchCandidate* c = m_model->candidate(row);
        if (!c) {
            if (error)
                *error = tr("No candidate in row %1.").arg(sortedRow + 1);
            return false;
        }
        plan.layout = c->layout;
        plan.moe_dispatcher = c->moe_dispatcher;
        plan.cost = c->cost;
        plan.label = tr("search #%1").arg(row + 1);
    }
    m_pinned.push_back(plan);
    refreshComparison();
    m_lower->setCurrentIndex(1); // show what was pinned
    return true;
}

void SearchPanel::clearPins()
{
    m_pinned.clear();
    refreshComparison();
}

void SearchPanel::refreshComparison()
{
    // One row per pinned plan, one column per figure: the layouts read across, the figures
    // compare down.
    const QStringList figures = {tr("Layout"), tr("Step time"),    tr("Tokens/s"),
                                 tr("MFU"),    tr("GiB/GPU"),      tr("GiB per stage"),
                                 tr("Bubble"), tr("Exposed comm"), tr("Recompute")};
    m_compareTable->clear();
    m_compareTable->setColumnCount(figures.size());
    m_compareTable->setRowCount(static_cast<int>(m_pinned.size()));
    m_compareTable->setHorizontalHeaderLabels(figures);
    QStringList labels;
    QStringList rowLabels;
    std::vector<StepBreakdown> breakdowns;
    for (size_t i = 0; i < m_pinned.size(); ++i) {
        const ComparedPlan& p = m_pinned[i];
        labels << p.label; // the layout reads in the table beside it
        rowLabels << p.label;
        breakdowns.push_back(p.cost.breakdown);
        const StepBreakdown& b = p.cost.breakdown;
        const double exposed = b.exposedCommunication();
        const QStringList values = {
            comparedText(p),
            QString::fromStdString(units::formatSeconds(p.cost.step_time_s)),
            QString::number(p.cost.metrics.tokens_per_s, 'f', 0),
            QString("%1%").arg(100 * p.cost.metrics.mfu, 0, 'f', 1),
            QString::number(units::toGiB(p.cost.max_stage_total_bytes), 'f', 1),
            stageMemory(p.cost),
            QString::fromStdString(units::formatSeconds(b.bubble_s)),
            QString::fromStdString(units::formatSeconds(exposed)),
            QString::fromStdString(units::formatSeconds(b.recompute_s))};
        Q_ASSERT(values.size() == figures.size()); // a value under every heading
        for (int column = 0; column < values.size(); ++column) {
            auto* item = new QTableWidgetItem(values[column]);
            item->setTextAlignment(column == 0 ? Qt::AlignLeft | Qt::AlignVCenter
                                               : Qt::AlignRight | Qt::AlignVCenter);
            m_compareTable->setItem(static_cast<int>(i), column, item);
        }
    }
    m_compareTable->setVerticalHeaderLabels(rowLabels);
    m_compareTable->resizeColumnsToContents();
    m_comparePlot->setPlans(labels, breakdowns);
    m_clearPins->setEnabled(!m_pinned.empty());
}

} // namespace paraplan::ui
