// The planner window on the offscreen platform: every kind of input recomputes, invalid input
// is marked at its field while the last valid result stays, undo/redo, files, plots, recovery.
#include "clicommands.h"
#include "clusterview.h"
#include "inputpanel.h"
#include "mainwindow.h"
#include "plots.h"
#include "tablemodels.h"
#include "undokeys.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMimeData>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QUrl>

#include <sstream>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

double stepTime(MainWindow& window)
{
    const auto latest = window.evaluator()->latest();
    return latest ? latest->cost.step_time_s : 0;
}

template <typename T> T* field(MainWindow& window, const char* name)
{
    T* widget = window.inputPanel()->findChild<T*>(name);
    if (!widget)
        qFatal("no input named %s", name);
    return widget;
}

void choose(QComboBox* combo, int index)
{
    combo->setCurrentIndex(index);
    emit combo->activated(index); // what a user's pick does
}

} // namespace

class TestPlanWindow : public QObject
{
    Q_OBJECT

private slots:
    void plotsEditedOutOfSightShowWhatAFreshWindowShows()
    {
        // Plots on another tab are not redrawn on each edit, only as they are shown: shown
        // after edits, each is pixel for pixel the plot of a window opened on the edited plan.
        const QString path = QStringLiteral(
            PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
        auto showTab = [](MainWindow& window, const QString& name) {
            auto* tabs = window.findChild<QTabWidget*>();
            for (int i = 0; i < tabs->count(); ++i)
                if (tabs->tabText(i).remove('&') == name)
                    tabs->setCurrentIndex(i);
            QTest::qWait(200);
        };
        auto grabCliffs = [&showTab](MainWindow& window) {
            showTab(window, "Bandwidth cliffs");
            QList<QImage> images;
            for (PlotView* plot : window.plots())
                if (plot->isVisible())
                    images.append(plot->grab().toImage());
            return images;
        };
        MainWindow edited(false);
        edited.resize(1280, 800);
        edited.show();
        QVERIFY(QTest::qWaitForWindowExposed(&edited));
        QSignalSpy shown(&edited, &MainWindow::resultsShown);
        QVERIFY(edited.openFile(path));
        QTRY_VERIFY(shown.count() >= 1);
        const QList<QImage> before = grabCliffs(edited);
        showTab(edited, "Step time");
        shown.clear();
        edited.document()->edit("micro-batch", Field::MicroBatch,
                                [](Plan& plan) { plan.parallel.micro_batch = 2; });
        edited.document()->edit("interleave", Field::Interleave,
                                [](Plan& plan) { plan.parallel.interleave = 1; });
        QTRY_VERIFY(shown.count() >= 1);
        QTest::qWait(100);
        const Plan plan = edited.document()->plan();
        const QList<QImage> afterEdits = grabCliffs(edited);
        QVERIFY(afterEdits.size() >= 3);
        QCOMPARE(afterEdits.size(), before.size());
        QVERIFY(afterEdits != before); // the edits changed what the plots show

        MainWindow fresh(false);
        fresh.resize(1280, 800);
        fresh.show();
        QVERIFY(QTest::qWaitForWindowExposed(&fresh));
        QSignalSpy freshShown(&fresh, &MainWindow::resultsShown);
        fresh.document()->reset(plan, QString());
        QTRY_VERIFY(freshShown.count() >= 1);
        QTest::qWait(100);
        const QList<QImage> reference = grabCliffs(fresh);
        QCOMPARE(afterEdits.size(), reference.size());
        for (int i = 0; i < reference.size(); ++i)
            QVERIFY2(afterEdits[i] == reference[i], qPrintable(QString::number(i)));
    }

    void cliffsFromTheCliAreTheSeriesTheWindowPlots()
    {
        const QString path = QStringLiteral(
            PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QVERIFY(window.openFile(path));
        QTRY_VERIFY(results.count() >= 1 && window.evaluator()->latest() &&
                    window.evaluator()->latest()->plan.model.name == "Llama 3 70B");
        const PlanAnalysis& shown = window.evaluator()->latest()->analysis;
        std::ostringstream out;
        std::ostringstream err;
        QCOMPARE(cli::run({"cliffs", path.toStdString(), "--json"}, out, err), 0);
        const QJsonObject printed =
            QJsonDocument::fromJson(QByteArray::fromStdString(out.str())).object();
        const QJsonArray tp = printed["tp_sweep"].toObject()["points"].toArray();
        QCOMPARE(size_t(tp.size()), shown.tp.size());
        for (size_t i = 0; i < shown.tp.size(); ++i) {
            QCOMPARE(tp[int(i)].toObject()["tp"].toInt(), shown.tp[i].tp);
            if (shown.tp[i].ok)
                QCOMPARE(tp[int(i)].toObject()["tokens_per_s"].toDouble(),
                         shown.tp[i].tokens_per_s);
        }
        const QJsonArray tiers = printed["bandwidth_busbw_GBps"].toObject()["tiers"].toArray();
        QCOMPARE(size_t(tiers.size()), shown.bandwidth.size());
        for (size_t t = 0; t < shown.bandwidth.size(); ++t) {
            const QJsonArray y = tiers[int(t)].toObject()["y"].toArray();
            QCOMPARE(size_t(y.size()), shown.bandwidth[t].y.size());
            for (size_t i = 0; i < shown.bandwidth[t].y.size(); ++i)
                QCOMPARE(y[int(i)].toDouble(), shown.bandwidth[t].y[i]);
        }
        const QJsonArray steps =
            printed["scaling"].toObject()["step_time_s"].toObject()["y"].toArray();
        QCOMPARE(size_t(steps.size()), shown.scaling_step.y.size());
        for (size_t i = 0; i < shown.scaling_step.y.size(); ++i)
            QCOMPARE(steps[int(i)].toDouble(), shown.scaling_step.y[i]);
        const QJsonArray whatIf = printed["what_if"].toArray();
        QCOMPARE(size_t(whatIf.size()), shown.what_if_labels.size());
        for (size_t i = 0; i < shown.what_if_labels.size(); ++i) {
            QCOMPARE(whatIf[int(i)].toObject()["label"].toString().toStdString(),
                     shown.what_if_labels[i]);
            QCOMPARE(whatIf[int(i)].toObject()["step_time_s"].toDouble(), shown.what_if_step_s[i]);
        }
    }

    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("ParaplanTests");
        QCoreApplication::setApplicationName("tst_planwindow");
        clearRecoveryCopies();
    }

    static void clearRecoveryCopies()
    {
        QDir dir(MainWindow::recoveryDirectory());
        for (const QString& name : dir.entryList({"recovery-*"}, QDir::Files))
            dir.remove(name);
    }

    void opensWithResultsAndPlots()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 5000);
        QVERIFY(window.headlineText().contains("step time"));
        QVERIFY(window.headlineText().contains("MFU"));
        // GPT-3 175B on 64 A100s: Korthikanti et al. measured 13.75 s.
        QVERIFY(qAbs(stepTime(window) / 13.75 - 1) < 0.1);
        const QList<PlotView*> plots = window.plots();
        QCOMPARE(plots.size(), 6);
        QVERIFY(plots[0]->seriesNames().contains("compute"));
        QVERIFY(plots[0]->seriesNames().contains("TP comm (exposed)"));
        QVERIFY(plots[1]->seriesNames().contains("activations"));
        QCOMPARE(plots[1]->pointCount("weights"), 8); // one bar per pipeline stage
        QVERIFY(plots[2]->pointCount("tokens/s") >= 3);
        QCOMPARE(plots[2]->pointCount("this plan"), 1);
        QVERIFY(plots[3]->seriesNames().size() >= 3); // two tiers and the plan's collectives
        QCOMPARE(plots[3]->pointCount(plots[3]->seriesNames().first()), 25); // 1 KB .. 16.8 GB
        QVERIFY(plots[4]->pointCount("step time") >= 3);
        QVERIFY(plots[5]->pointCount("step time") >= 3);
        QAbstractItemModelTester collectivesTester(window.collectivesModel());
        QAbstractItemModelTester memoryTester(window.memoryModel());
        QCOMPARE(window.collectivesModel()->rowCount(), 2);
        QCOMPARE(window.memoryModel()->rowCount(), 8);
        QVERIFY(window.derivationText().contains("Model FLOPs per step"));
        // TP innermost: the eight GPUs of node 0 form one TP group.
        for (int gpu = 1; gpu < 8; ++gpu)
            QCOMPARE(window.clusterView()->groupOf(gpu), window.clusterView()->groupOf(0));
        QVERIFY(window.clusterView()->groupOf(8) != window.clusterView()->groupOf(0));
    }

    void clusterNodeLabelsFitTheirBoxes()
    {
        // 128 nodes, 32 a rack, at 1280x800: "node 32 (rack 1)" ran past its node's box.
        MainWindow window(false);
        window.resize(1280, 800);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 5000);
        window.document()->edit("nodes", Field::ClusterNodes, [](Plan& plan) {
            plan.parallel.global_batch = plan.parallel.global_batch * 128 / plan.cluster.nodes;
            plan.parallel.dp = plan.parallel.dp * 128 / plan.cluster.nodes;
            plan.cluster.nodes = 128;
            plan.cluster.network.nodes_per_rack = 32;
        });
        QTRY_VERIFY2_WITH_TIMEOUT(shown.count() >= 2, qPrintable(window.statusText()), 5000);
        auto* tabs = window.findChild<QTabWidget*>();
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabText(i).remove('&') == "Cluster")
                tabs->setCurrentIndex(i);
        QVERIFY(window.clusterView()->isVisible());
        window.clusterView()->repaint();
        const auto& labels = window.clusterView()->nodeLabels();
        QCOMPARE(labels.size(), size_t(64));
        int racks = 0;
        for (const ClusterView::NodeLabel& label : labels) {
            QVERIFY2(label.width <= label.room, qPrintable(QString("\"%1\" %2 wide in %3")
                                                               .arg(label.text)
                                                               .arg(label.width)
                                                               .arg(label.room)));
            racks += label.text.startsWith("node 32 (r") ? 1 : 0;
        }
        QCOMPARE(racks, 1); // the rack still named, shorter
        // With room, the full label.
        window.clusterView()->resize(2400, 1600);
        window.clusterView()->repaint();
        QCOMPARE(window.clusterView()->nodeLabels()[32].text, QString("node 32 (rack 1)"));
    }

    void eachKindOfInputRecomputes_data()
    {
        QTest::addColumn<QString>("input");
        QTest::newRow("model: layers") << "layers";
        QTest::newRow("cluster: NVSwitch out") << "switchOut";
        QTest::newRow("cluster: NIC rate") << "nicRate";
        QTest::newRow("cluster: preset") << "clusterPreset";
        QTest::newRow("model: preset") << "modelPreset";
        QTest::newRow("parallel: recompute") << "recompute";
        QTest::newRow("parallel: micro-batch + global batch") << "batch";
        QTest::newRow("training: sequence length") << "seq";
        QTest::newRow("training: dtype") << "dtype";
        QTest::newRow("training: attention kernel") << "attention";
        QTest::newRow("training: element-wise kernels") << "kernels";
        QTest::newRow("training: framework") << "framework";
    }
    void eachKindOfInputRecomputes()
    {
        QFETCH(QString, input);
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QTRY_VERIFY(results.count() >= 1);
        const double before = stepTime(window);
        results.clear();
        if (input == "layers")
            field<QSpinBox>(window, "layers")->setValue(48);
        else if (input == "switchOut")
            field<QSpinBox>(window, "NVSwitch chips out")->setValue(1);
        else if (input == "nicRate")
            field<QSpinBox>(window, "NIC rate")->setValue(50);
        else if (input == "clusterPreset")
            choose(field<QComboBox>(window, "clusterPreset"),
                   field<QComboBox>(window, "clusterPreset")->findData("dgx-h100"));
        else if (input == "modelPreset")
            choose(field<QComboBox>(window, "modelPreset"),
                   field<QComboBox>(window, "modelPreset")->findData("megatron-22b"));
        else if (input == "recompute")
            choose(field<QComboBox>(window, "recompute"), 2);
        else if (input == "batch")
            field<QSpinBox>(window, "global batch")->setValue(128);
        else if (input == "seq")
            field<QSpinBox>(window, "sequence length")->setValue(1024);
        else if (input == "dtype")
            choose(field<QComboBox>(window, "dtype"), int(Dtype::FP32));
        else if (input == "attention")
            choose(field<QComboBox>(window, "attention"),
                   field<QComboBox>(window, "attention")->findData(int(AttentionKernel::Flash2)));
        else if (input == "kernels")
            choose(field<QComboBox>(window, "kernels"),
                   field<QComboBox>(window, "kernels")->findData(int(KernelStyle::Eager)));
        else if (input == "framework")
            choose(field<QComboBox>(window, "framework"),
                   field<QComboBox>(window, "framework")
                       ->findData(int(TrainingFramework::Torchtitan)));
        QTRY_VERIFY_WITH_TIMEOUT(results.count() >= 1, 5000);
        QVERIFY2(stepTime(window) != before, qPrintable(window.statusText()));
        if (input == "framework") {
            QCOMPARE(field<QComboBox>(window, "framework")->count(), 4);
            QCOMPARE(window.document()->plan().training.framework, TrainingFramework::Torchtitan);
        }
        QVERIFY(window.document()->isModified());
    }

    void invalidInputIsMarkedAndTheLastResultStays()
    {
        MainWindow window(false);
        QSignalSpy results(window.evaluator(), &PlanEvaluator::resultsAvailable);
        QSignalSpy rejected(window.evaluator(), &PlanEvaluator::planRejected);
        QTRY_VERIFY(results.count() >= 1);
        const double before = stepTime(window);
        QSpinBox* tp = field<QSpinBox>(window, "TP");
        tp->setValue(3);
        QTRY_VERIFY(rejected.count() >= 1);
        QVERIFY(tp->property("invalid").toBool());
        QVERIFY(tp->toolTip().contains("rule"));
        QVERIFY(window.statusText().contains("Invalid plan"));
        QCOMPARE(stepTime(window), before); // last valid result kept
        tp->setValue(8);
        QTRY_VERIFY(results.count() >= 2);
        QVERIFY(!tp->property("invalid").toBool());
    }

    void undoRedoRestoresValues()
    {
        MainWindow window(false);
        QUndoStack* undo = window.document()->undoStack();
        QSpinBox* micro = field<QSpinBox>(window, "micro-batch");
        QSpinBox* global = field<QSpinBox>(window, "global batch");
        global->setValue(128);
        QCOMPARE(window.document()->plan().parallel.global_batch, 128);
        micro->setValue(2);
        QCOMPARE(undo->count(), 2);
        undo->undo();
        QCOMPARE(window.document()->plan().parallel.micro_batch, 1);
        QCOMPARE(micro->value(), 1);
        undo->undo();
        QCOMPARE(global->value(), 64);
        QVERIFY(!window.document()->isModified());
        undo->redo();
        QCOMPARE(global->value(), 128);
        QCOMPARE(window.document()->plan().parallel.global_batch, 128);
    }

    void aDragIsOneUndoStep()
    {
        MainWindow window(false);
        QSpinBox* seq = field<QSpinBox>(window, "sequence length");
        for (int value : {1024, 1100, 1300, 1500, 1700})
            seq->setValue(value);
        QCOMPARE(window.document()->undoStack()->count(), 1);
        window.document()->undoStack()->undo();
        QCOMPARE(seq->value(), 2048);
    }

    void ctrlZInATopologyPropertyUndoesThePlanEdit()
    {
        // The Topology tab's cluster properties: a committed spine ratio is undone by Ctrl+Z
        // (the panel is rebuilt after the edit, so no spin box keeps the key for its text).
        MainWindow window(false);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        auto* tabs = window.findChild<QTabWidget*>();
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabText(i) == "Topology")
                tabs->setCurrentIndex(i);
        const double before =
            window.document()->plan().cluster.network.spine_oversubscription.value;
        QDoubleSpinBox* spine = nullptr;
        QTRY_VERIFY((spine = window.findChild<QDoubleSpinBox*>("spineRatio")) != nullptr);
        spine->setFocus();
        QTRY_VERIFY(spine->hasFocus());
        spine->selectAll();
        QTest::keyClicks(spine, "3");
        QTest::keyClick(spine, Qt::Key_Return);
        QCOMPARE(window.document()->plan().cluster.network.spine_oversubscription.value, 3.0);
        // The panel is rebuilt after the edit: press the key where the focus now is.
        QTRY_VERIFY(QApplication::focusWidget() != nullptr);
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(window.document()->plan().cluster.network.spine_oversubscription.value, before);
    }

    void ctrlZInAFocusedFieldUndoesThePlanEdit()
    {
        // Micro-batch 2 + Enter, then Ctrl+Z with the field still focused: the plan's history
        // takes the key (the spin box's own text undo used to, and the plan stayed edited).
        MainWindow window(false);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QUndoStack* undo = window.document()->undoStack();
        QSpinBox* micro = field<QSpinBox>(window, "micro-batch");
        micro->setFocus();
        QTRY_VERIFY(micro->hasFocus());
        micro->selectAll();
        QTest::keyClicks(micro, "2");
        QTest::keyClick(micro, Qt::Key_Return);
        QCOMPARE(window.document()->plan().parallel.micro_batch, 2);
        QCOMPARE(undo->index(), 1);
        QTest::keyClick(micro, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(undo->index(), 0);
        QCOMPARE(window.document()->plan().parallel.micro_batch, 1);
        QCOMPARE(micro->value(), 1);
        QCOMPARE(micro->text(), QString("1"));
        QTRY_VERIFY(window.staleText().isEmpty());

        // Both redo keys, whatever the platform binds.
        QTest::keyClick(micro, Qt::Key_Y, Qt::ControlModifier);
        QCOMPARE(window.document()->plan().parallel.micro_batch, 2);
        QCOMPARE(micro->text(), QString("2"));
        QTest::keyClick(micro, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(window.document()->plan().parallel.micro_batch, 1);
        QTest::keyClick(micro, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(window.document()->plan().parallel.micro_batch, 2);

        // A value being typed, not yet committed: Ctrl+Z takes back the typing only.
        micro->selectAll();
        QTest::keyClicks(micro, "4");
        QCOMPARE(micro->text(), QString("4"));
        QTest::keyClick(micro, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(micro->text(), QString("2"));
        QCOMPARE(undo->index(), 1);
        QCOMPARE(window.document()->plan().parallel.micro_batch, 2);
    }

    void redoHasCtrlYAndCtrlShiftZOnEveryPlatform()
    {
        // X11 binds Redo to Ctrl+Shift+Z only; the guide and the shortcut table promise both.
        const QList<QKeySequence> x11{QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)};
        const QList<QKeySequence> keys = redoKeys(x11);
        QVERIFY(keys.contains(QKeySequence(Qt::CTRL | Qt::Key_Y)));
        QVERIFY(keys.contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)));
        QCOMPARE(keys.count(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)), 1);
        MainWindow window(false);
        QAction* redo = nullptr;
        for (QAction* action : window.findChildren<QAction*>())
            if (action->text().startsWith("&Redo") || action->text().startsWith("Redo"))
                redo = action;
        QVERIFY(redo);
        QVERIFY(redo->shortcuts().contains(QKeySequence(Qt::CTRL | Qt::Key_Y)));
        QVERIFY(redo->shortcuts().contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)));
        QCOMPARE(redo->shortcuts(), redoKeys());
    }

    void saveAndOpenRoundTrip()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("plan.json");
        MainWindow window(false);
        field<QSpinBox>(window, "global batch")->setValue(256);
        QVERIFY(window.saveTo(path));
        QVERIFY(!window.document()->isModified());
        field<QSpinBox>(window, "global batch")->setValue(512);
        QVERIFY(window.document()->isModified());
        QVERIFY(window.openFile(path));
        QCOMPARE(window.document()->plan().parallel.global_batch, 256);
        QCOMPARE(field<QSpinBox>(window, "global batch")->value(), 256);
        QVERIFY(!window.document()->isModified());
        QCOMPARE(window.document()->path(), path);
        QVERIFY(window.windowTitle().startsWith("plan.json"));
    }

    void aValueBeyondItsRangeIsShownAsTheFileHoldsIt()
    {
        // A hand-edited file with seq_len beyond the stated range (2^22): the box shows the
        // file's value, not a clamped one, the rules name the range, and a value back in
        // range narrows the box again.
        QTemporaryDir dir;
        const QString path = dir.filePath("long.json");
        MainWindow window(false);
        QVERIFY(window.saveTo(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QByteArray text = file.readAll();
        file.close();
        const QByteArray original = "\"seq_len\": 2048";
        QVERIFY(text.contains(original));
        text.replace(original, "\"seq_len\": 5000000");
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(text);
        file.close();
        QSignalSpy rejected(window.evaluator(), &PlanEvaluator::planRejected);
        QVERIFY(window.openFile(path));
        QSpinBox* seq = field<QSpinBox>(window, "sequence length");
        QCOMPARE(seq->value(), 5000000);
        QTRY_VERIFY(rejected.count() >= 1);
        QTRY_VERIFY(window.statusText().contains("from 1 to 4,194,304 tokens (got 5,000,000)"));
        QVERIFY(seq->property("invalid").toBool());
        seq->setValue(8192);
        QCOMPARE(seq->maximum(), 1 << 22);
        QCOMPARE(window.document()->plan().training.seq_len, 8192);
    }

    void malformedFileLeavesThePlanUntouched()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"model\": {\"preset\": \"gpt3-175b\"}, \"parallel\": ");
        file.close();
        MainWindow window(false);
        field<QSpinBox>(window, "global batch")->setValue(96);
        QSignalSpy errors(&window, &MainWindow::errorReported);
        QVERIFY(!window.openFile(path));
        QCOMPARE(errors.count(), 1);
        QVERIFY(errors.front().front().toString().contains("invalid JSON"));
        QCOMPARE(window.document()->plan().parallel.global_batch, 96);
        QVERIFY(window.document()->isModified());
        QVERIFY(window.document()->path().isEmpty());
    }

    void plotsExportToPngPdfSvg()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QTRY_VERIFY(shown.count() >= 1);
        QTemporaryDir dir;
        for (PlotView* plot : window.plots()) {
            for (const char* suffix : {"png", "pdf", "svg"}) {
                const QString path = dir.filePath(QString("%1.%2")
                                                      .arg(plot->title())
                                                      .arg(suffix)
                                                      .replace(' ', '_')
                                                      .replace(':', '_'));
                QString error;
                QVERIFY2(plot->exportTo(path, &error, QSize(800, 500)), qPrintable(error));
                QFile out(path);
                QVERIFY(out.open(QIODevice::ReadOnly));
                const QByteArray head = out.read(64);
                if (QString(suffix) == "png")
                    QVERIFY(!QImage(path).isNull());
                else if (QString(suffix) == "pdf")
                    QVERIFY(head.startsWith("%PDF"));
                else
                    QVERIFY(head.contains("<?xml") || head.contains("<svg"));
            }
        }
        QString error;
        QVERIFY(!window.plots().front()->exportTo(dir.filePath("x.bmp2"), &error));
        QVERIFY(error.contains("unknown image format"));
        // Only whole images replace a file, and nothing is left beside it.
        QVERIFY(!window.plots().front()->exportTo(dir.path(), &error));
        QVERIFY(error.contains("not a regular file"));
        QVERIFY(!window.plots().front()->exportTo(dir.filePath("no/such/dir/x.png"), &error));
        const QStringList left =
            QDir(dir.path()).entryList(QStringList{"*.part-*"}, QDir::Files | QDir::Hidden);
        QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
    }

    void unsavedWorkIsRecovered()
    {
        clearRecoveryCopies();
        QString kept;
        {
            MainWindow crashed(false);
            field<QSpinBox>(crashed, "global batch")->setValue(192);
            kept = crashed.recoveryPath();
            QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(kept), 6000);
            // No clean close: the recovery file stays, as after a crash.
        }
        MainWindow next(false);
        next.setRecoveryChooser([](const RecoveryOffer&) { return RecoveryChoice::Recover; });
        next.start();
        QCOMPARE(next.document()->plan().parallel.global_batch, 192);
        QVERIFY(next.document()->isModified());
        // Accepting keeps the copy until the plan is saved, and the window writes its own.
        QVERIFY(QFile::exists(kept));
        QVERIFY(QFile::exists(next.recoveryPath()));
        clearRecoveryCopies();
    }

    void droppingAPlanFileOpensIt()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("dropped.json");
        {
            MainWindow source(false);
            field<QSpinBox>(source, "global batch")->setValue(320);
            QVERIFY(source.saveTo(path));
        }
        MainWindow window(false);
        auto* mime = new QMimeData;
        mime->setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(&window, &drop);
        QCOMPARE(window.document()->plan().parallel.global_batch, 320);
        delete mime;
    }

    void collectiveDerivationOnDoubleClick()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QTRY_VERIFY(shown.count() >= 1);
        auto* table = window.findChild<QTableView*>("collectivesTable");
        QVERIFY(table);
        emit table->doubleClicked(window.collectivesModel()->index(0, 0));
        QVERIFY(window.derivationText().contains("all_gather"));
        QVERIFY2(window.derivationText().contains("Bus bandwidth"),
                 qPrintable(window.derivationText().left(600)));
    }

    // Every headline figure links to a step of the Derivation tab, time to train and cost
    // included: clicking one shows the tab, whose document holds that anchor.
    void headlineFiguresLinkToTheirDerivation()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QTRY_VERIFY(shown.count() >= 1);
        auto* headline = window.findChild<QLabel*>("headline");
        auto* derivation = window.findChild<QTextBrowser*>("derivation");
        auto* tabs = window.findChild<QTabWidget*>();
        QVERIFY(headline && derivation && tabs);
        QStringList anchors;
        const QRegularExpression href("href='([^']+)'");
        for (auto it = href.globalMatch(headline->text()); it.hasNext();)
            anchors << it.next().captured(1);
        QVERIFY2(anchors.contains("time-to-train") && anchors.contains("cost"),
                 qPrintable(anchors.join(", ")));
        for (const QString& anchor : anchors) {
            tabs->setCurrentIndex(0);
            emit headline->linkActivated(anchor);
            QCOMPARE(tabs->currentWidget(), derivation);
            QVERIFY2(derivation->document()->toHtml().contains("name=\"" + anchor + "\""),
                     qPrintable(anchor));
        }
        QVERIFY(window.derivationText().contains("Time to train"));
        QVERIFY(window.derivationText().contains("GPU-hours"));
    }
};

QTEST_MAIN(TestPlanWindow)
#include "tst_planwindow.moc"
