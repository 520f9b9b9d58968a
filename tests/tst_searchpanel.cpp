// The search panel in the window (offscreen): runs off the GUI thread, fills a sortable table
// and the Pareto plot, loads a candidate undoably, cancels, pins plans for comparison, and
// the comparison goes into the PDF report.
#include "inputpanel.h"
#include "mainwindow.h"
#include "measurepanel.h"
#include "modelio.h"
#include "planio.h"
#include "plots.h"
#include "reportwriter.h"
#include "searchpanel.h"
#include "testdata.h"
#include "topologyeditor.h"
#include "units.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLocale>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

const char* kExample = PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
const char* kTwoRacks =
    PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-two-racks.paraplan.json";

bool waitForResults(MainWindow& window)
{
    QSignalSpy shown(&window, &MainWindow::resultsShown);
    return window.evaluator()->latest() || shown.wait(5000);
}

// Opens the example, runs the search to the end, and returns the panel.
SearchPanel* searchExample(MainWindow& window, const char* path = kExample)
{
    if (!window.openFile(path) || !waitForResults(window))
        return nullptr;
    QTest::qWait(50);
    SearchPanel* panel = window.searchPanel();
    QSignalSpy finished(panel, &SearchPanel::finished);
    panel->start();
    if (!panel->isRunning() || !finished.wait(20000) || panel->isRunning())
        return nullptr;
    return panel;
}

} // namespace

class TestSearchPanel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void searchFillsTheTableAndLoadsACandidateUndoably()
    {
        MainWindow window(false);
        // The window keeps handling events while the search runs on its thread.
        SearchPanel* panel = searchExample(window);
        QVERIFY(panel);
        const SearchResult& result = panel->result();
        QVERIFY(result.ok);
        QCOMPARE(panel->resultsModel()->rowCount(), static_cast<int>(result.top.size()));
        QVERIFY(panel->statusText().contains(QLocale().toString(qlonglong(result.space))));
        QVERIFY(panel->paretoPlot()->pointCount("Pareto front") ==
                static_cast<int>(result.pareto.size()));

        // Sorting by memory orders the rows by memory, numerically.
        panel->table()->sortByColumn(SearchResultsModel::Memory, Qt::AscendingOrder);
        QSortFilterProxyModel* sorted = panel->sortedModel();
        for (int row = 1; row < sorted->rowCount(); ++row)
            QVERIFY(
                sorted->index(row - 1, SearchResultsModel::Memory).data(Qt::UserRole).toDouble() <=
                sorted->index(row, SearchResultsModel::Memory).data(Qt::UserRole).toDouble());

        // Double-clicking the best candidate loads its layout; undo brings the old one back.
        panel->table()->sortByColumn(SearchResultsModel::Rank, Qt::AscendingOrder);
        const ParallelLayout before = window.document()->plan().parallel;
        const ParallelLayout best = result.top.front().layout;
        emit panel->table()->doubleClicked(sorted->index(0, SearchResultsModel::Layout));
        QCOMPARE(window.document()->plan().parallel.tp, best.tp);
        QCOMPARE(window.document()->plan().parallel.cp, best.cp);
        QCOMPARE(window.document()->plan().parallel.zero, best.zero);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QVERIFY(shown.wait(5000));
        QCOMPARE(window.evaluator()->latest()->cost.step_time_s, result.top.front().step_time_s);
        // The status bar still says where the layout came from once the results are shown.
        QVERIFY2(window.statusText().contains("from the search"), qPrintable(window.statusText()));
        window.document()->undoStack()->undo();
        QCOMPARE(window.document()->plan().parallel.tp, before.tp);
        QCOMPARE(window.document()->plan().parallel.pp, before.pp);
    }

    void rowButtonsNeedASelectedCandidate()
    {
        MainWindow window(false);
        QVERIFY(window.openFile(kExample) && waitForResults(window));
        SearchPanel* panel = window.searchPanel();
        auto button = [panel](const QString& text) {
            for (QPushButton* b : panel->findChildren<QPushButton*>())
                if (b->text() == text)
                    return b;
            return static_cast<QPushButton*>(nullptr);
        };
        QPushButton* use = button("Use this layout");
        QPushButton* pin = button("Pin for comparison");
        QVERIFY(use && pin);
        // No search yet: nothing to use or pin.
        QVERIFY(!use->isEnabled());
        QVERIFY(!pin->isEnabled());
        QVERIFY(button("Pin the current plan")->isEnabled());
        QVERIFY(searchExample(window));
        QVERIFY(panel->sortedModel()->rowCount() > 0);
        panel->table()->clearSelection();
        QVERIFY(!use->isEnabled());
        QVERIFY(!pin->isEnabled());
        panel->table()->selectRow(0);
        QVERIFY(use->isEnabled());
        QVERIFY(pin->isEnabled());
        // A new search replaces the rows: the selection, and the buttons, go.
        QSignalSpy finished(panel, &SearchPanel::finished);
        panel->start();
        QVERIFY(finished.wait(20000));
        QCOMPARE(use->isEnabled(), panel->table()->selectionModel()->hasSelection());
        QCOMPARE(pin->isEnabled(), panel->table()->selectionModel()->hasSelection());
    }

    void oneUndoHistoryAcrossEveryTab()
    {
        // Edits on the inputs, the topology drawing, the search and the measure tab land on
        // the session's one undo stack; undoing them all returns exactly to the start, and
        // redoing them all to the end.
        MainWindow window(false);
        SearchPanel* panel = searchExample(window);
        QVERIFY(panel);
        PlanSession* session = window.session();
        QCOMPARE(window.topologyEditor()->document()->undoStack(), session->undoStack());
        const std::string start = planToJsonText(session->plan(), HardwareCatalog::bundled());
        const int startIndex = session->undoStack()->index();

        auto* recompute = window.inputPanel()->findChild<QComboBox*>("recompute");
        QVERIFY(recompute);
        recompute->setCurrentIndex(2);
        emit recompute->activated(2);
        QCOMPARE(session->plan().parallel.recompute, Recompute::Full);

        const size_t nodes = window.topologyEditor()->document()->graph().nodes.size();
        window.topologyEditor()->addNode();
        QCOMPARE(window.topologyEditor()->document()->graph().nodes.size(), nodes + 1);
        QCOMPARE(session->plan().cluster.nodes, int(nodes + 1));
        QVERIFY(session->plan().drawing);

        emit panel->table()->doubleClicked(
            panel->sortedModel()->index(0, SearchResultsModel::Layout));
        MeasuredFigure figure;
        figure.figure = "nic_efficiency";
        figure.value = 0.9;
        figure.assumed = session->plan().cluster.node.nic_efficiency.value;
        figure.run = "test run";
        emit window.measurePanel()->applyRequested({figure});
        QCOMPARE(session->plan().measured.size(), size_t(1));
        const std::string end = planToJsonText(session->plan(), HardwareCatalog::bundled());
        const int edits = session->undoStack()->index() - startIndex;
        QCOMPARE(edits, 4);

        QAction* undo = nullptr;
        QAction* redo = nullptr;
        for (QAction* action : window.findChildren<QAction*>()) {
            if (action->text().startsWith("&Undo"))
                undo = action;
            if (action->text().startsWith("&Redo"))
                redo = action;
        }
        QVERIFY(undo && redo);
        QSignalSpy evaluated(session, &PlanSession::resultsAvailable);
        window.findChild<QTabWidget*>()->setCurrentWidget(window.topologyEditor()); // same history
        for (int i = 0; i < edits; ++i)
            undo->trigger();
        QCOMPARE(planToJsonText(session->plan(), HardwareCatalog::bundled()), start);
        QCOMPARE(window.topologyEditor()->document()->graph().nodes.size(), nodes);
        QVERIFY(evaluated.wait(5000));
        window.findChild<QTabWidget*>()->setCurrentIndex(0);
        for (int i = 0; i < edits; ++i)
            redo->trigger();
        QCOMPARE(planToJsonText(session->plan(), HardwareCatalog::bundled()), end);
        QCOMPARE(window.topologyEditor()->document()->graph().nodes.size(), nodes + 1);
    }

    void explanationsShowTheNetDifferenceFirst()
    {
        // The two-racks example: each row's "Behind the best by" starts with its step time
        // minus the best's, its parts add up to it, ties and folds say so.
        MainWindow window(false);
        SearchPanel* panel = searchExample(window, kTwoRacks);
        QVERIFY(panel);
        const SearchResult& result = panel->result();
        SearchResultsModel* model = panel->resultsModel();
        QVERIFY(model->rowCount() > 5);
        QCOMPARE(model->index(0, SearchResultsModel::Behind).data().toString().section(' ', 0, 0),
                 QString("best"));
        bool tie = false, folded = false;
        for (int row = 1; row < model->rowCount(); ++row) {
            const SearchCandidate& c = result.top[size_t(row)];
            const QString cell = model->index(row, SearchResultsModel::Behind).data().toString();
            const QString net = QString::fromStdString((c.behind_s >= 0 ? "+" : "") +
                                                       units::formatSeconds(c.behind_s));
            QVERIFY2(cell.startsWith(net), qPrintable(cell));
            QCOMPARE(c.behind_s, c.step_time_s - result.top.front().step_time_s);
            double parts = 0;
            for (const BehindPart& part : c.behind)
                parts += part.seconds;
            QVERIFY(std::fabs(parts - c.behind_s) <= 1e-9 * c.step_time_s);
            const QString tip =
                model->index(row, SearchResultsModel::Behind).data(Qt::ToolTipRole).toString();
            for (const BehindPart& part : c.behind)
                QVERIFY2(tip.contains(QString::fromStdString(part.label)), qPrintable(tip));
            // The selected row's parts are spelled out under the table.
            panel->table()->setCurrentIndex(
                panel->sortedModel()->mapFromSource(model->index(row, SearchResultsModel::Rank)));
            auto* why = panel->findChild<QLabel*>("searchWhy");
            QVERIFY(why);
            QVERIFY2(why->text().contains(net), qPrintable(why->text()));
            for (const BehindPart& part : c.behind)
                QVERIFY2(why->text().contains(QString::fromStdString(part.label)) ||
                             why->text().contains("other "),
                         qPrintable(why->text()));
            tie = tie || cell.contains("(tie with #");
            folded = folded || cell.contains(" same plan");
        }
        QVERIFY(tie);
        QVERIFY(folded);
        QVERIFY2(panel->statusText().contains(
                     "within 0.5% of the fastest layout not yet ranked are a tie"),
                 qPrintable(panel->statusText()));
    }

    void headroomDefaultApplied()
    {
        // The panel starts at the default headroom (5% + 1.43 GiB, cited), applies it, and
        // 0 and 0 score every layout that fits.
        MainWindow window(false);
        QVERIFY(window.openFile(kTwoRacks));
        QVERIFY(waitForResults(window));
        SearchPanel* panel = window.searchPanel();
        auto* headroom = panel->findChild<QDoubleSpinBox*>("searchHeadroom");
        auto* reserve = panel->findChild<QDoubleSpinBox*>("searchReserve");
        QVERIFY(headroom && reserve);
        QCOMPARE(headroom->value(), 5.0);
        // In GiB to two places, as the CLI and the tooltip say; searched as the CLI's default
        // to the byte (1469 MiB).
        QCOMPARE(reserve->suffix(), QString(" GiB"));
        QCOMPARE(reserve->text(), QLocale().toString(1.43, 'f', 2) + " GiB");
        QCOMPARE(panel->options().constraints.reserve_bytes, kDefaultSearchReserveBytes);
        QVERIFY(reserve->toolTip().contains("#34323") && reserve->toolTip().contains("#964"));
        QSignalSpy finished(panel, &SearchPanel::finished);
        panel->start();
        QVERIFY(finished.wait(20000));
        const SearchResult kept = panel->result();
        // The counts shown add up to the space, as the CLI's do.
        QCOMPARE(kept.scored + kept.did_not_fit + kept.invalidCount() + kept.excludedCount() +
                     kept.duplicates,
                 kept.space);
        QVERIFY2(panel->findChild<QLabel*>("searchStatus")
                     ->text()
                     .contains(QLocale().toString(qlonglong(kept.duplicates)) + " the same plan"),
                 qPrintable(panel->statusText()));
        QVERIFY(kept.constrained.count("headroom") && kept.constrained.at("headroom") > 0);
        QVERIFY2(panel->statusText().contains("+ 1.43 GiB") && !panel->statusText().contains("MiB"),
                 qPrintable(panel->statusText()));
        for (const SearchCandidate& c : kept.top)
            QVERIFY(c.cost.hbm_bytes - c.memory_bytes >=
                    0.05 * c.cost.hbm_bytes + 1.43 * units::kGiB - 1e7);
        headroom->setValue(0);
        reserve->setValue(0);
        panel->start();
        QVERIFY(finished.wait(20000));
        QVERIFY(!panel->result().constrained.count("headroom"));
        QCOMPARE(panel->result().scored, kept.scored + kept.constrained.at("headroom"));
    }

    void theTabsBoundedSearchShowsTheExhaustiveCounts()
    {
        // The tab searches with the step-time bound; what it shows is what costing every
        // layout shows: the counts, the rows, this plan's rank and the Pareto front.
        MainWindow window(false);
        SearchPanel* panel = searchExample(window, kTwoRacks);
        QVERIFY(panel);
        const SearchResult& shown = panel->result();
        SearchOptions options = panel->options();
        QVERIFY(options.bound);
        QVERIFY(shown.bounded > 0);
        options.bound = false;
        const SearchResult all =
            searchPlans(window.evaluator()->latest()->plan, HardwareCatalog::bundled(), options);
        QCOMPARE(all.bounded, 0LL);
        QCOMPARE(shown.scored, all.scored);
        QCOMPARE(shown.did_not_fit, all.did_not_fit);
        QCOMPARE(shown.constrained, all.constrained);
        QCOMPARE(shown.rejected, all.rejected);
        QCOMPARE(shown.duplicates, all.duplicates);
        QCOMPARE(shown.folded, all.folded);
        QCOMPARE(shown.given_rank, all.given_rank);
        QCOMPARE(shown.evaluated + shown.bounded, all.evaluated);
        QCOMPARE(shown.top.size(), all.top.size());
        for (size_t i = 0; i < all.top.size(); ++i)
            QCOMPARE(shown.top[i].step_time_s, all.top[i].step_time_s);
        QCOMPARE(shown.pareto.size(), all.pareto.size());
        for (size_t i = 0; i < all.pareto.size(); ++i) {
            QCOMPARE(shown.pareto[i].step_time_s, all.pareto[i].step_time_s);
            QCOMPARE(shown.pareto[i].memory_bytes, all.pareto[i].memory_bytes);
        }
        QCOMPARE(panel->paretoPlot()->pointCount("Pareto front"), int(all.pareto.size()));
        // The whole account says what the bound did.
        QVERIFY2(panel->statusText().contains("were checked for memory only"),
                 qPrintable(panel->statusText()));
    }

    void eachConstraintHasItsOwnCountAndThePlanOutsideIsNamed()
    {
        // With Largest TP 4 on the two-racks example (TP 8) the line said "11,967 excluded
        // (headroom)" and ranked the plan silently; now each constraint has its count and the
        // plan's TP is named as outside the search.
        MainWindow window(false);
        QVERIFY(window.openFile(kTwoRacks));
        QVERIFY(waitForResults(window));
        SearchPanel* panel = window.searchPanel();
        panel->findChild<QSpinBox*>("searchMaxTp")->setValue(4);
        QSignalSpy finished(panel, &SearchPanel::finished);
        panel->start();
        QVERIFY(finished.wait(20000));
        const SearchResult& r = panel->result();
        QVERIFY(r.constrained.count("headroom") && r.constrained.count("max-tp"));
        const QString line = panel->findChild<QLabel*>("searchStatus")->text();
        QVERIFY2(line.contains(QString("excluded by constraint: headroom %1, max-tp %2")
                                   .arg(QLocale().toString(qlonglong(r.constrained.at("headroom"))),
                                        QLocale().toString(qlonglong(r.constrained.at("max-tp"))))),
                 qPrintable(line));
        QVERIFY2(!line.contains("(headroom)"), qPrintable(line));
        QVERIFY2(line.contains("this plan uses TP 8, above the largest TP allowed, 4; raise "
                               "Largest TP to 8"),
                 qPrintable(line));
        // A short sentence on what was timed in the visible line; the whole one on hover.
        QVERIFY2(line.contains(QRegularExpression("Timed [0-9,]+ of [0-9,]+ valid layouts; the "
                                                  "other [0-9,]+ could not place")),
                 qPrintable(line));
        const QString hover = panel->findChild<QLabel*>("searchStatus")->toolTip();
        QVERIFY2(hover.contains(QRegularExpression("Timed [0-9,]+ of the [0-9,]+ valid layouts")) &&
                     hover.contains("were checked for memory only"),
                 qPrintable(hover));
        QVERIFY2(!line.contains(QRegularExpression("-[0-9.]+ [a-z]+ behind")), qPrintable(line));
    }

    void maxInterleaveFollowsThePlanAndNamesItWhenBelow()
    {
        // A plan with interleave 5: the control starts at 5 (the plan's own, above the default
        // 4) and the plan is a row of the search; set back to 4, the tab says the plan is
        // outside, never "rank 1, -27.2 ms behind the best".
        QTemporaryDir dir;
        const QString path = dir.filePath("v5.paraplan.json");
        QVERIFY(test::writeEditedPlan(kTwoRacks, path, [](QJsonObject& json) {
            QJsonObject parallel = json["parallel"].toObject();
            parallel["interleave"] = 5;
            parallel["pp"] = 4;
            parallel["dp"] = 4;
            json["parallel"] = parallel;
        }));
        MainWindow window(false);
        auto* maxInterleave = window.searchPanel()->findChild<QSpinBox*>("searchMaxInterleave");
        QVERIFY(maxInterleave);
        QCOMPARE(maxInterleave->value(), 4);
        SearchPanel* panel = searchExample(window, qPrintable(path));
        QVERIFY(panel);
        QCOMPARE(maxInterleave->value(), 5);
        QCOMPARE(panel->options().max_interleave, 5);
        QVERIFY(panel->result().given_outside.empty());
        const QString inside = panel->findChild<QLabel*>("searchStatus")->text();
        QVERIFY2(inside.contains(QRegularExpression("This plan: [^,]+, rank [0-9]+ of")),
                 qPrintable(inside));
        maxInterleave->setValue(4);
        emit maxInterleave->editingFinished(); // as the user leaves the field
        QSignalSpy finished(panel, &SearchPanel::finished);
        panel->start();
        QVERIFY(finished.wait(20000));
        QCOMPARE(panel->result().given_outside.size(), size_t(1));
        const QString line = panel->findChild<QLabel*>("searchStatus")->text();
        QVERIFY2(line.contains("this plan uses interleave 5, outside the searched 1-4; raise Max "
                               "interleave to 5"),
                 qPrintable(line));
        QVERIFY2(!line.contains(QRegularExpression("-[0-9.]+ [a-z]+ behind")), qPrintable(line));
        // The user's setting stays when the plan is evaluated again.
        window.searchPanel()->setResults(window.evaluator()->latest());
        QCOMPARE(maxInterleave->value(), 4);
    }

    void sameRankingWithOneAndTwoThreads()
    {
        MainWindow window(false);
        QVERIFY(window.openFile(kTwoRacks));
        QVERIFY(waitForResults(window));
        SearchPanel* panel = window.searchPanel();
        QSignalSpy finished(panel, &SearchPanel::finished);
        QStringList rankings[2];
        for (int threads : {1, 2}) {
            panel->findChild<QSpinBox*>("searchThreads")->setValue(threads);
            panel->start();
            QVERIFY(finished.wait(20000));
            SearchResultsModel* model = panel->resultsModel();
            for (int row = 0; row < model->rowCount(); ++row)
                rankings[threads - 1]
                    << model->index(row, SearchResultsModel::Layout).data().toString() + " | " +
                           model->index(row, SearchResultsModel::Behind).data().toString();
        }
        QVERIFY(rankings[0].size() > 10);
        QCOMPARE(rankings[0], rankings[1]);
    }

    void cancelKeepsThePreviousResults()
    {
        MainWindow window(false);
        QVERIFY(window.openFile(kExample));
        QVERIFY(waitForResults(window));
        // A big space, one thread, so that the cancel lands mid-search.
        window.document()->edit("nodes", Field::Whole, [](Plan& plan) {
            plan.cluster.nodes = 2048;
            plan.parallel.dp = 512;
            plan.parallel.global_batch = 2048;
        });
        QVERIFY(waitForResults(window));
        QTRY_COMPARE(window.evaluator()->latest()->plan.cluster.nodes, 2048);
        SearchPanel* panel = window.searchPanel();
        panel->findChild<QSpinBox*>("searchThreads")->setValue(1);
        QSignalSpy finished(panel, &SearchPanel::finished);
        panel->start();
        panel->cancel();
        QVERIFY(finished.wait(20000));
        QVERIFY(panel->statusText().contains("cancelled"));
        QCOMPARE(panel->resultsModel()->rowCount(), 0);
    }

    void aSearchTooLargeIsRefusedBeforeItStarts()
    {
        // Mixtral 8x7B on 1,048,576 GPUs: its expert-parallel degrees make tens of millions
        // of layouts, so the panel says so and starts no thread.
        MainWindow window(false);
        QVERIFY(window.openFile(kExample));
        QVERIFY(waitForResults(window));
        window.document()->edit("nodes", Field::Whole, [](Plan& plan) {
            std::string error;
            QVERIFY(modelFromPreset("mixtral-8x7b", &plan.model, &error));
            plan.cluster.nodes = 131072;
            plan.parallel.dp = 32768;
            plan.parallel.interleave = 1;
            plan.parallel.global_batch = 1 << 20;
        });
        QVERIFY(waitForResults(window));
        QTRY_COMPARE(window.evaluator()->latest()->plan.cluster.nodes, 131072);
        SearchPanel* panel = window.searchPanel();
        panel->start();
        QVERIFY(!panel->isRunning());
        QVERIFY2(panel->statusText().contains("the search would evaluate") &&
                     panel->statusText().contains("Largest TP"),
                 qPrintable(panel->statusText()));
        QCOMPARE(panel->resultsModel()->rowCount(), 0);
    }

    void pinnedPlansCompareAndGoIntoTheReport()
    {
        MainWindow window(false);
        SearchPanel* panel = searchExample(window);
        QVERIFY(panel);
        QVERIFY(panel->pin(-1));
        QVERIFY(panel->pin(0));
        QVERIFY(panel->pin(1));
        QVERIFY(panel->pin(2));
        QString error;
        QVERIFY(!panel->pin(3, &error));
        QVERIFY(error.contains("At most 4"));
        QCOMPARE(panel->pinned().size(), size_t(4));
        auto* table = panel->findChild<QTableWidget*>("compareTable");
        QCOMPARE(table->rowCount(), 4);
        QCOMPARE(table->item(1, 1)->text(),
                 QString::fromStdString(units::formatSeconds(panel->result().top[0].step_time_s)));
        // Every figure sits under its own heading, the last one included.
        QCOMPARE(table->horizontalHeaderItem(table->columnCount() - 1)->text(),
                 QStringLiteral("Recompute"));
        QVERIFY(table->item(1, table->columnCount() - 1) != nullptr);
        QCOMPARE(table->horizontalHeaderItem(6)->text(), QStringLiteral("Bubble"));
        QVERIFY(table->item(1, 6)->text().endsWith(" s") || table->item(1, 6)->text() == "0 s" ||
                table->item(1, 6)->text().contains("ms") ||
                table->item(1, 6)->text().contains("us"));
        QVERIFY(!panel->comparePlot()->seriesNames().isEmpty());

        QTemporaryDir dir;
        const QString pdf = dir.filePath("compare.pdf");
        QVERIFY(window.exportReport(pdf));
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        QProcess process;
        process.start("pdftotext", {pdf, "-"});
        QVERIFY(process.waitForFinished(30000));
        const QString text = QString::fromUtf8(process.readAllStandardOutput());
        QVERIFY(text.contains("Comparison"));
        QVERIFY(text.contains("search #1"));
        QVERIFY(text.contains("current plan"));

        panel->clearPins();
        QVERIFY(panel->pinned().empty());
        QCOMPARE(table->rowCount(), 0);
    }
};

QTEST_MAIN(TestSearchPanel)
#include "tst_searchpanel.moc"
