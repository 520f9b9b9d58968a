// Editing the plan in the window: TP, PP and CP keep the cluster's GPU count by re-deriving DP
// in one undo step; a value that cannot keep it is named with the nearest that can; while the
// plan is invalid the headline, plots and tables keep the last valid numbers, greyed, with the
// reason; invalid fields are tinted without a style sheet (the spin boxes keep their arrows).
#include "inputpanel.h"
#include "mainwindow.h"
#include "plandocument.h"
#include "plots.h"

#include <QLabel>
#include <QMenu>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

QSpinBox* spin(MainWindow& window, const char* name)
{
    auto* box = window.inputPanel()->findChild<QSpinBox*>(name);
    if (!box)
        qFatal("no input named %s", name);
    return box;
}

} // namespace

class TestEditing : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("ParaplanTests");
        QCoreApplication::setApplicationName("tst_editing");
    }

    // The GPT-3 example: TP 8 x PP 8 x DP 1 on 64 A100s.
    void tpKeepsTheGpuCountAndOneUndoRestoresBoth()
    {
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QSignalSpy rejected(window.evaluator(), &PlanEvaluator::planRejected);
        QTRY_VERIFY(results.count() >= 1);
        const Plan& plan = window.document()->plan();
        QCOMPARE(plan.cluster.totalGpus(), 64LL);
        QCOMPARE(plan.parallel.dp, 1);
        const int stepsBefore = window.document()->undoStack()->count();
        results.clear();
        spin(window, "TP")->setValue(4);
        QCOMPARE(plan.parallel.tp, 4);
        QCOMPARE(plan.parallel.dp, 2); // doubled
        QCOMPARE(plan.cluster.totalGpus(), 64LL);
        QCOMPARE(spin(window, "DP")->value(), 2);
        QTRY_VERIFY(results.count() >= 1);
        QCOMPARE(rejected.count(), 0); // valid
        QVERIFY2(window.statusText().contains("TP 8 -> 4: DP 1 -> 2 to keep 64 GPUs"),
                 qPrintable(window.statusText()));
        QVERIFY(window.staleText().isEmpty());
        QCOMPARE(window.document()->undoStack()->count(), stepsBefore + 1);
        QVERIFY(window.document()->undoStack()->undoText().contains("DP 1 -> 2"));
        window.document()->undoStack()->undo();
        QCOMPARE(plan.parallel.tp, 8);
        QCOMPARE(plan.parallel.dp, 1);
        QCOMPARE(spin(window, "TP")->value(), 8);
        QCOMPARE(spin(window, "DP")->value(), 1);
        QVERIFY(window.document()->note().isEmpty()); // the note went with the step
        window.document()->undoStack()->redo();
        QCOMPARE(plan.parallel.dp, 2);
    }

    void recomputeModulesAreCheckedInAMenu()
    {
        // The GPT-3 example recomputes selectively on Megatron: the modules button is live,
        // shows the default, and a checked module is one undoable edit of the plan.
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QTRY_VERIFY(results.count() >= 1);
        const Plan& plan = window.document()->plan();
        auto* button = window.inputPanel()->findChild<QToolButton*>("recomputeModules");
        QVERIFY(button);
        QCOMPARE(plan.parallel.recompute, Recompute::Selective);
        QVERIFY(button->isEnabled());
        QCOMPARE(button->text(), QString("default (core_attn)"));
        QAction* mlp = nullptr;
        for (QAction* action : button->menu()->actions())
            if (action->text() == "mlp")
                mlp = action;
        QVERIFY(mlp);
        mlp->trigger();
        QCOMPARE(unsigned(plan.parallel.recompute_modules), unsigned(kRecomputeMlp));
        QCOMPARE(button->text(), QString("mlp"));
        QTRY_VERIFY(results.count() >= 2);
        window.document()->undoStack()->undo();
        QCOMPARE(unsigned(plan.parallel.recompute_modules), 0u);
        QVERIFY(!mlp->isChecked());
    }

    void ppAndCpKeepTheGpuCountToo()
    {
        MainWindow window(false);
        const Plan& plan = window.document()->plan();
        spin(window, "PP")->setValue(2);
        QCOMPARE(plan.parallel.pp, 2);
        QCOMPARE(plan.parallel.dp, 4);
        spin(window, "PP")->setValue(8);
        QCOMPARE(plan.parallel.dp, 1);
        spin(window, "TP")->setValue(2);
        QCOMPARE(plan.parallel.dp, 4);
        spin(window, "CP")->setValue(2);
        QCOMPARE(plan.parallel.cp, 2);
        QCOMPARE(plan.parallel.dp, 2);
        QCOMPARE(static_cast<long long>(plan.parallel.gpus()), plan.cluster.totalGpus());
    }

    void aValueThatCannotKeepTheCountIsNamedWithTheNearest()
    {
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QSignalSpy rejected(window.evaluator(), &PlanEvaluator::planRejected);
        QTRY_VERIFY(results.count() >= 1);
        const Plan& plan = window.document()->plan();
        spin(window, "TP")->setValue(3);
        QCOMPARE(plan.parallel.tp, 3);
        QCOMPARE(plan.parallel.dp, 1); // left as it was
        QTRY_VERIFY(rejected.count() >= 1);
        const QString status = window.statusText();
        QVERIFY2(status.contains("TP 2 or 4 keep 64 GPUs"), qPrintable(status));
        QVERIFY(status.contains("Invalid plan"));
        // CP 2 with TP 8 x PP 8 on 64 GPUs: only CP 1 keeps the count.
        const GpuCountKeeping cp = keepGpuCount(examplePlan(), Field::Cp, 2);
        QVERIFY(!cp.divides);
        QVERIFY2(cp.note.contains("CP 1 keeps 64 GPUs"), qPrintable(cp.note));
        // Other degrees that do not divide the cluster: no value of this one helps.
        Plan odd = plan;
        odd.parallel.tp = 3;
        const GpuCountKeeping pp = keepGpuCount(odd, Field::Pp, 8);
        QVERIFY(!pp.divides);
        QVERIFY2(pp.note.contains("no PP keeps 64 GPUs"), qPrintable(pp.note));
    }

    void aNewDpThatBreaksTheGlobalBatchIsSaid()
    {
        Plan plan = examplePlan();
        plan.parallel.global_batch = 6;
        const GpuCountKeeping keep = keepGpuCount(plan, Field::Tp, 2);
        QVERIFY(keep.divides);
        QCOMPARE(keep.dp, 4);
        QVERIFY2(keep.note.contains("global batch 6 is not a multiple of micro-batch 1 x DP 4"),
                 qPrintable(keep.note));
    }

    void dpAndNodesKeepTodaysBehaviour()
    {
        MainWindow window(false);
        const Plan& plan = window.document()->plan();
        spin(window, "DP")->setValue(2);
        QCOMPARE(plan.parallel.tp, 8);
        QCOMPARE(plan.parallel.pp, 8);
        QCOMPARE(plan.parallel.dp, 2); // 128 GPUs asked of a 64-GPU cluster: invalid
        QCOMPARE(plan.cluster.totalGpus(), 64LL);
        spin(window, "nodes")->setValue(16);
        QCOMPARE(plan.cluster.totalGpus(), 128LL);
        QCOMPARE(plan.parallel.dp, 2);
        QCOMPARE(plan.parallel.tp, 8);
    }

    void staleFiguresAreGreyedWithTheReasonAndUpdateWhenValid()
    {
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QSignalSpy rejected(window.evaluator(), &PlanEvaluator::planRejected);
        QTRY_VERIFY(results.count() >= 1);
        auto* headline = window.findChild<QLabel*>("headline");
        auto* memoryTable = window.findChild<QTableView*>("memoryTable");
        QVERIFY(headline && memoryTable);
        const QString fresh = window.headlineText();
        QVERIFY(!fresh.contains("#9a9a9a"));
        // DP 2 on 64 GPUs: TP x PP x DP x CP = 128.
        spin(window, "DP")->setValue(2);
        QTRY_VERIFY(rejected.count() >= 1);
        QVERIFY2(window.staleText().contains("Not updated"), qPrintable(window.staleText()));
        QVERIFY(window.staleText().contains("128 GPUs, but the cluster has 64"));
        QVERIFY(headline->property("stale").toBool());
        QCOMPARE(headline->toolTip(), window.staleText());
        QVERIFY(window.headlineText().contains("#9a9a9a"));   // greyed
        QVERIFY(window.headlineText().contains("step time")); // the last numbers stay
        QVERIFY(!memoryTable->isEnabled());
        for (PlotView* plot : window.plots()) {
            QVERIFY(plot->graphicsEffect() != nullptr);
            QVERIFY(plot->toolTip().contains("Not updated"));
        }
        results.clear();
        spin(window, "DP")->setValue(1);
        QTRY_VERIFY(results.count() >= 1);
        QVERIFY(window.staleText().isEmpty());
        QVERIFY(!headline->property("stale").toBool());
        QCOMPARE(window.headlineText(), fresh);
        QVERIFY(memoryTable->isEnabled());
        for (PlotView* plot : window.plots())
            QVERIFY(plot->graphicsEffect() == nullptr);
    }

    void invalidFieldsAreTintedWithoutAStyleSheet()
    {
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QSignalSpy rejected(window.evaluator(), &PlanEvaluator::planRejected);
        QTRY_VERIFY(results.count() >= 1);
        QSpinBox* tp = spin(window, "TP");
        const QColor normal = tp->palette().color(QPalette::Base);
        const QString baseTip = tp->toolTip();
        QVERIFY(baseTip.contains("re-derives DP"));
        tp->setValue(3);
        QTRY_VERIFY(rejected.count() >= 1);
        QVERIFY(tp->property("invalid").toBool());
        QVERIFY(tp->styleSheet().isEmpty()); // the native arrows stay
        QVERIFY(tp->palette().color(QPalette::Base) != normal);
        QVERIFY2(tp->toolTip().contains("[rule gpu-count]"), qPrintable(tp->toolTip()));
        QVERIFY(tp->toolTip().contains(baseTip));
        results.clear();
        tp->setValue(8);
        QTRY_VERIFY(results.count() >= 1);
        QVERIFY(!tp->property("invalid").toBool());
        QCOMPARE(tp->palette().color(QPalette::Base), normal);
        QCOMPARE(tp->toolTip(), baseTip);
    }
};

QTEST_MAIN(TestEditing)
#include "tst_editing.moc"
