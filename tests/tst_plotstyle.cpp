// The plots a capacity planner reads at first sight: one colour per component in every plot,
// plan and edit; the TP cliff past the node on the bundled example, with the node boundary a
// labelled line unlike the grid; empty plots at full size with a sentence; every what-if bar
// labelled at 1280x800 and in the report's size.
#include "computeplot.h"
#include "inputpanel.h"
#include "mainwindow.h"
#include "measurepanel.h"
#include "plots.h"
#include "searchpanel.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

const char* const kGpt3 =
    PARAPLAN_SOURCE_DIR "/resources/examples/gpt3-175b-dgx-a100.paraplan.json";
const char* const kLlama =
    PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-dgx-h100.paraplan.json";

using Colours = std::map<QString, QColor>;

// Every bar series of a plot and its fill, read back from the QCPBars.
Colours barColours(PlotView* view)
{
    Colours colours;
    QCustomPlot* plot = view->plot();
    for (int i = 0; i < plot->plottableCount(); ++i) {
        if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(i)))
            colours[bars->name()] = bars->brush().color();
    }
    return colours;
}

// Each name keeps the colour it had anywhere before; `seen` grows with what is new.
void expectSameColours(const Colours& now, Colours* seen, const char* where)
{
    for (const auto& [name, colour] : now) {
        const auto before = seen->find(name);
        if (before != seen->end())
            QVERIFY2(before->second == colour,
                     qPrintable(QString("%1: '%2' was %3, now %4")
                                    .arg(where, name, before->second.name(), colour.name())));
        else
            (*seen)[name] = colour;
    }
}

void expectDistinct(const Colours& colours, const char* where)
{
    for (auto a = colours.begin(); a != colours.end(); ++a)
        for (auto b = std::next(a); b != colours.end(); ++b)
            QVERIFY2(a->second != b->second,
                     qPrintable(QString("%1: '%2' and '%3' share %4")
                                    .arg(where, a->first, b->first, a->second.name())));
}

void waitForResults(QSignalSpy& shown, int count)
{
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= count, 10000);
}

// The plot laid out at its current size, as the user sees it.
void layOut(PlotView* view)
{
    view->plot()->replot(QCustomPlot::rpImmediateRefresh);
}

} // namespace

class TestPlotStyle : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void componentsKeepTheirColourAcrossPlansEditsAndPlots()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QVERIFY(window.openFile(kGpt3));
        waitForResults(shown, 1);
        QTRY_VERIFY(window.evaluator()->latest() &&
                    window.evaluator()->latest()->plan.model.name.find("GPT-3") == 0);
        PlotView* step = window.plots()[0];
        PlotView* memory = window.plots()[1];
        Colours stepSeen, memorySeen;
        QTRY_VERIFY(barColours(step).count("compute") == 1);
        const Colours gpt3 = barColours(step);
        QVERIFY(gpt3.count("pipeline bubble") && gpt3.count("optimizer"));
        expectDistinct(gpt3, "GPT-3 step");
        expectDistinct(barColours(memory), "GPT-3 memory");
        expectSameColours(gpt3, &stepSeen, "GPT-3 step");
        expectSameColours(barColours(memory), &memorySeen, "GPT-3 memory");
        const StepBreakdown gpt3Breakdown = window.evaluator()->latest()->cost.breakdown;

        // An edit that takes a component away: nothing after it changes colour.
        auto* recompute = window.inputPanel()->findChild<QComboBox*>("recompute");
        QVERIFY(recompute);
        const int before = shown.count();
        const int none = recompute->findText("none", Qt::MatchContains);
        QVERIFY(none >= 0 && none != recompute->currentIndex());
        recompute->setCurrentIndex(none);
        emit recompute->activated(none);
        waitForResults(shown, before + 1);
        QTRY_VERIFY(window.evaluator()->latest()->cost.breakdown.recompute_s == 0);
        QTRY_VERIFY(barColours(step).count("recompute") == 0);
        expectDistinct(barColours(step), "edited step");
        expectSameColours(barColours(step), &stepSeen, "edited step");
        expectSameColours(barColours(memory), &memorySeen, "edited memory");

        // Another plan, with other components.
        const int beforeLlama = shown.count();
        QVERIFY(window.openFile(kLlama));
        waitForResults(shown, beforeLlama + 1);
        QTRY_VERIFY(window.evaluator()->latest()->plan.model.name == "Llama 3 70B");
        QTRY_VERIFY(barColours(step).count("compute") == 1);
        expectDistinct(barColours(step), "Llama step");
        expectSameColours(barColours(step), &stepSeen, "Llama step");
        expectSameColours(barColours(memory), &memorySeen, "Llama memory");
        const StepBreakdown llamaBreakdown = window.evaluator()->latest()->cost.breakdown;

        // The pinned plans' plot: the same component, the same colour.
        CompareBreakdownPlot compare;
        compare.setPlans({"GPT-3", "Llama"}, {gpt3Breakdown, llamaBreakdown});
        expectDistinct(barColours(&compare), "pinned");
        expectSameColours(barColours(&compare), &stepSeen, "pinned");
        QVERIFY(barColours(&compare).size() >= 4);
        // The report draws these same plot classes (reportwriter.cpp): a step plot drawn anew
        // for the same plan keeps every colour.
        BreakdownPlot again;
        again.setResults(*window.evaluator()->latest());
        expectSameColours(barColours(&again), &stepSeen, "redrawn step");
        QCOMPARE(step->seriesColour("compute"), stepSeen["compute"]);
        // An SVG export draws the compute bars in that same colour.
        QTemporaryDir dir;
        QString error;
        const QString svg = dir.filePath("step.svg");
        QVERIFY2(step->exportTo(svg, &error, QSize(800, 400)), qPrintable(error));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains(stepSeen["compute"].name().toLatin1()));
    }

    void tpCliffGoesPastTheNodeOnTheBundledExample()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QVERIFY(window.openFile(kGpt3));
        waitForResults(shown, 1);
        QTRY_VERIFY(window.evaluator()->latest() &&
                    window.evaluator()->latest()->plan.model.name.find("GPT-3") == 0);
        const PlanAnalysis& a = window.evaluator()->latest()->analysis;
        QCOMPARE(a.gpus_per_node, 8);
        QCOMPARE(a.plan_gpus, 64LL);
        // TP 16 and 32 need more than the plan's 64 GPUs (PP 8): evaluated on 128 and 256.
        const TpSweepPoint* at8 = nullptr;
        const TpSweepPoint* at16 = nullptr;
        for (const TpSweepPoint& p : a.tp) {
            if (p.tp == 8)
                at8 = &p;
            if (p.tp == 16)
                at16 = &p;
        }
        QVERIFY(at8 && at8->ok && at8->gpus == 64);
        QVERIFY(at16 && at16->ok && at16->gpus == 128);
        // The cliff: per GPU, TP over InfiniBand is slower than TP over NVLink.
        QVERIFY(at16->tokens_per_s / 128 < at8->tokens_per_s / 64 * 0.95);

        PlotView* tp = window.plots()[2];
        QTRY_VERIFY(tp->pointCount("tokens/s") >= 4);
        QCustomPlot* plot = tp->plot();
        QVERIFY2(plot->xAxis->range().upper > 16, "the TP axis stops at the node");
        QString more;
        for (const QString& name : tp->seriesNames())
            if (name.startsWith("on more GPUs"))
                more = name;
        QVERIFY(!more.isEmpty());
        QVERIFY(tp->pointCount(more) >= 1);
        // The boundary: a line between 8 and 16 drawn unlike any grid line, and its label.
        const QPen grid = plot->xAxis->grid()->pen();
        const QPen subGrid = plot->xAxis->grid()->subGridPen();
        bool line = false;
        for (int i = 0; i < plot->itemCount(); ++i) {
            auto* item = qobject_cast<QCPItemStraightLine*>(plot->item(i));
            if (!item)
                continue;
            const double x = item->point1->coords().x();
            if (x > 8 && x < 16 && item->pen() != grid && item->pen() != subGrid &&
                item->pen().color() != grid.color() && item->pen().style() == Qt::SolidLine)
                line = true;
        }
        QVERIFY2(line, "no node boundary line distinct from the grid");
        bool label = false;
        for (int i = 0; i < plot->itemCount(); ++i) {
            auto* item = qobject_cast<QCPItemText*>(plot->item(i));
            if (item && item->text().contains("node") && item->text().contains("8 GPUs"))
                label = true;
        }
        QVERIFY2(label, "the node boundary is not labelled");
    }

    void emptyPlotsKeepTheirAxesAndSaySo()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        window.show();
        waitForResults(shown, 1);
        auto* tabs = window.findChild<QTabWidget*>();
        QVERIFY(tabs);

        tabs->setCurrentWidget(window.measurePanel());
        auto* measured = window.measurePanel()->findChild<MeasuredPlot*>();
        QVERIFY(measured && measured->isVisible());
        QTest::qWait(50);
        layOut(measured);
        QVERIFY(!measured->emptyText().isEmpty());
        const QRect axes = measured->axesRect();
        QVERIFY2(
            axes.height() >= 0.6 * measured->plot()->height(),
            qPrintable(QString("axes %1 high in %2").arg(axes.height()).arg(measured->height())));
        QVERIFY2(
            axes.width() >= 0.6 * measured->plot()->width(),
            qPrintable(QString("axes %1 wide in %2").arg(axes.width()).arg(measured->width())));

        // The Compute plot before any GEMM is measured.
        auto* gemm = window.measurePanel()->findChild<GemmPlot*>();
        auto* measureTabs = window.measurePanel()->findChild<QTabWidget*>();
        QVERIFY(gemm && measureTabs);
        measureTabs->setCurrentWidget(gemm);
        QTest::qWait(50);
        layOut(gemm);
        QVERIFY(!gemm->emptyText().isEmpty());
        QVERIFY(gemm->axesRect().height() >= 0.6 * gemm->plot()->height());
        QVERIFY(gemm->axesRect().width() >= 0.6 * gemm->plot()->width());

        tabs->setCurrentWidget(window.searchPanel());
        auto* pinned = window.searchPanel()->findChild<CompareBreakdownPlot*>();
        auto* lower = window.searchPanel()->findChild<QTabWidget*>("searchLowerTabs");
        QVERIFY(pinned && lower);
        lower->setCurrentIndex(1); // "Pinned plans"
        QVERIFY(pinned->isVisible());
        QTest::qWait(50);
        layOut(pinned);
        QVERIFY(!pinned->emptyText().isEmpty());
        QVERIFY(pinned->axesRect().height() >= 0.6 * pinned->plot()->height());
        QVERIFY(pinned->axesRect().width() >= 0.6 * pinned->plot()->width());
        // A pin: the sentence goes, the bars come.
        QVERIFY(window.searchPanel()->pin(-1));
        QTRY_VERIFY(pinned->emptyText().isEmpty());
        QVERIFY(pinned->seriesNames().contains("compute"));
    }

    void everyWhatIfBarIsLabelled()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        window.show();
        QVERIFY(window.openFile(kGpt3));
        waitForResults(shown, 1);
        QTRY_VERIFY(window.evaluator()->latest() &&
                    window.evaluator()->latest()->plan.model.name.find("GPT-3") == 0);
        auto* tabs = window.findChild<QTabWidget*>();
        tabs->setCurrentIndex(2);
        auto* inWindow = qobject_cast<WhatIfPlot*>(window.plots()[5]);
        QVERIFY(inWindow);
        QTRY_VERIFY(inWindow->pointCount("step time") >= 5);
        QTest::qWait(50);
        // The window at 1280x800, and the report's size (reportwriter.cpp: 700 x 340).
        WhatIfPlot inReport;
        inReport.setResults(*window.evaluator()->latest());
        inReport.plot()->resize(700, 340);
        for (WhatIfPlot* view : {inWindow, &inReport}) {
            layOut(view);
            QCustomPlot* plot = view->plot();
            QCPAxis* labelled = plot->yAxis;
            auto* ticker = dynamic_cast<QCPAxisTickerText*>(labelled->ticker().data());
            QVERIFY(ticker);
            const int bars = view->pointCount("step time");
            QCOMPARE(ticker->ticks().size(), bars);
            QCOMPARE(labelled->tickLabelRotation(), 0.0);
            // Every bar's name fits left of the axes, level; every bar's value inside the plot.
            const QFontMetrics metrics(labelled->tickLabelFont());
            for (const QString& name : ticker->ticks()) {
                QVERIFY2(metrics.horizontalAdvance(name) < plot->axisRect()->left(),
                         qPrintable(name + " does not fit"));
                const double key = ticker->ticks().key(name);
                QVERIFY(labelled->range().contains(key));
            }
            int values = 0;
            for (int i = 0; i < plot->itemCount(); ++i) {
                auto* text = qobject_cast<QCPItemText*>(plot->item(i));
                if (!text || text->objectName() != "bar label")
                    continue;
                ++values;
                const QPointF at = text->position->pixelPosition();
                const double width = QFontMetrics(text->font()).horizontalAdvance(text->text());
                QVERIFY2(at.x() + width <= plot->width(), qPrintable(text->text() + " runs off"));
            }
            QCOMPARE(values, bars);
        }
    }

    void pinnedPlotLegendFitsWithSevenEntries()
    {
        // Seven components in the pinned-plans plot at 1280x800: every legend entry whole,
        // none cut at the plot's bottom edge.
        MainWindow window(false);
        window.resize(1280, 800);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        window.show();
        waitForResults(shown, 1);
        auto* tabs = window.findChild<QTabWidget*>();
        tabs->setCurrentWidget(window.searchPanel());
        auto* pinned = window.searchPanel()->findChild<CompareBreakdownPlot*>();
        auto* lower = window.searchPanel()->findChild<QTabWidget*>("searchLowerTabs");
        QVERIFY(pinned && lower);
        lower->setCurrentIndex(1); // "Pinned plans"
        std::vector<StepBreakdown> plans(4);
        for (size_t i = 0; i < plans.size(); ++i) {
            plans[i].compute_s = 1.0 + 0.1 * double(i);
            plans[i].recompute_s = 0.3;
            plans[i].bubble_s = 0.2;
            plans[i].tp_comm_exposed_s = 0.1;
            plans[i].pp_comm_exposed_s = 0.05;
            plans[i].dp_comm_exposed_s = 0.1;
            plans[i].optimizer_s = 0.02;
        }
        pinned->setPlans({"current plan", "search #1", "search #2", "search #3"}, plans);
        QTest::qWait(50);
        layOut(pinned);
        QCPLegend* legend = pinned->plot()->legend;
        QCOMPARE(pinned->seriesNames().size(), 7);
        QVERIFY(legend->itemCount() >= 7);
        const QRect view = pinned->plot()->viewport();
        for (int i = 0; i < legend->itemCount(); ++i) {
            if (!legend->item(i))
                continue; // an empty cell of the last row
            const QRect item = legend->item(i)->outerRect();
            const int needed = legend->item(i)->minimumOuterSizeHint().height();
            QVERIFY2(view.contains(item) && item.height() >= needed,
                     qPrintable(QString("entry %1 at y %2, %3 high (needs %4) in a plot %5 high")
                                    .arg(i)
                                    .arg(item.top())
                                    .arg(item.height())
                                    .arg(needed)
                                    .arg(view.height())));
        }
        // The bars keep most of the room.
        QVERIFY(pinned->axesRect().height() >= 0.4 * pinned->plot()->height());
    }
};

QTEST_MAIN(TestPlotStyle)
#include "tst_plotstyle.moc"
