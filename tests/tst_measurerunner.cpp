// The probe's process from the app: a fake probe drives success, crash, hang, garbage and
// cancel through the same runner and parser the live run uses; the real probe's no-GPU path
// is asserted where it was built.
#include "calibratedialog.h"
#include "clusterio.h"
#include "computeplot.h"
#include "measurementrunner.h"
#include "measurepanel.h"
#include "planio.h"
#include "plots.h"
#include "testdata.h"

#include <QFile>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

void useProbe(const QString& script)
{
    qputenv("PARAPLAN_PROBE", test::dataPath("fakeprobe/" + script).toUtf8());
}

} // namespace

class TestMeasureRunner : public QObject
{
    Q_OBJECT

private slots:
    void success()
    {
        useProbe("success.sh");
        MeasurementRunner runner;
        QSignalSpy finished(&runner, &MeasurementRunner::finished);
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        QSignalSpy results(&runner, &MeasurementRunner::resultAvailable);
        QSignalSpy progress(&runner, &MeasurementRunner::progressChanged);
        runner.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(results.count(), 42);
        QVERIFY(progress.count() >= 40);
        QCOMPARE(runner.run().copies.size(), size_t(25));
        QVERIFY(runner.run().complete);
    }

    void crashKeepsTheValidResults()
    {
        useProbe("crash.sh");
        MeasurementRunner runner;
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        runner.start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains("crashed"), qPrintable(message));
        QVERIFY2(message.contains("valid result"), qPrintable(message));
        QVERIFY(!runner.run().copies.empty());
    }

    void crashMidGemmKeepsTheComputeRecords()
    {
        // Protocol 2: the probe dies inside a GEMM line; the eight complete GEMM records
        // before it stay, the partial line is dropped, and the run says it is incomplete.
        useProbe("compute-crash.sh");
        MeasurementRunner runner;
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        runner.start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY2(failed.front().front().toString().contains("crashed"),
                 qPrintable(failed.front().front().toString()));
        const MeasurementRun& run = runner.run();
        QCOMPARE(run.compute.gemms.size(), size_t(8));
        QCOMPARE(run.compute.gemms.back().dtype, std::string("fp16"));
        QVERIFY(!run.complete);
        for (const GemmMeasurement& g : run.compute.gemms)
            QVERIFY(g.tflops > 300 && g.tflops < 800);
    }

    void hangIsStopped()
    {
        useProbe("hang.sh");
        MeasurementRunner runner;
        runner.setSilenceTimeout(800);
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        runner.start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains("hung"), qPrintable(message));
        QCOMPARE(runner.run().points.size(), size_t(1));
        QVERIFY(!runner.isRunning());
    }

    void garbageIsReportedAndResultsSurvive()
    {
        useProbe("garbage.sh");
        MeasurementRunner runner;
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        QSignalSpy warnings(&runner, &MeasurementRunner::warningReported);
        runner.start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY(failed.front().front().toString().contains("without its closing line"));
        QCOMPARE(runner.run().points.size(), size_t(2));
        QVERIFY(warnings.count() >= 3);
    }

    void aRunWithoutAValidResultFails()
    {
        useProbe("nothing-valid.sh");
        MeasurementRunner runner;
        QSignalSpy finished(&runner, &MeasurementRunner::finished);
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        QSignalSpy warnings(&runner, &MeasurementRunner::warningReported);
        runner.start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QCOMPARE(finished.count(), 0);
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains("without a valid result") &&
                     message.contains("not a protocol line"),
                 qPrintable(message));
        // 5001 bad lines: the first 20 kept and one line counting the rest.
        QCOMPARE(runner.run().warnings.size(), ProbeStreamParser::kKeptWarnings + 1);
        QCOMPARE(runner.run().warnings_dropped, 5001LL - 20);
        QCOMPARE(warnings.count(), 21);
        QVERIFY(warnings.last().front().toString().contains("and 4981 more"));
    }

    void cancelStopsTheRun()
    {
        useProbe("slow.sh");
        MeasurementRunner runner;
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        QSignalSpy results(&runner, &MeasurementRunner::resultAvailable);
        runner.start();
        QTRY_VERIFY_WITH_TIMEOUT(results.count() >= 3, 20000);
        runner.stop();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QVERIFY(failed.front().front().toString().contains("cancelled"));
        QVERIFY(runner.run().points.size() >= 3);
        QVERIFY(runner.run().points.size() < 600);
    }

    void missingProbeIsNamed()
    {
        qputenv("PARAPLAN_PROBE", "/nonexistent/paraplan-probe");
        MeasurementRunner runner;
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        runner.start();
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.front().front().toString().contains("/nonexistent/paraplan-probe"));
    }

    void noDeviceShowsTheNoGpuState()
    {
        useProbe("no-device.sh");
        MeasurePanel panel;
        QVERIFY(panel.noGpuText().isEmpty()); // the probe is there: nothing said yet
        auto* measure = panel.findChild<QPushButton*>("measure");
        auto* progress = panel.findChild<QProgressBar*>();
        QVERIFY(measure && progress && measure->isEnabled());
        QSignalSpy failed(panel.runner(), &MeasurementRunner::failed);
        measure->click();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
        QCOMPARE(panel.runner()->failure(), MeasurementRunner::Failure::NoDevice);
        const QString text = panel.noGpuText();
        QVERIFY2(text.contains("CUDA device through the NVIDIA driver"), qPrintable(text));
        QVERIFY(text.contains("driver is older than the CUDA runtime"));
        QVERIFY(text.contains("paraplan-probe --plan PLAN.json &gt; probe-run.jsonl"));
        QVERIFY(text.contains("docs/probe-protocol.md"));
        QVERIFY(!panel.statusText().contains("collective points")); // no raw tally
        QVERIFY(panel.statusText().contains("no usable CUDA device"));
        QVERIFY(!measure->isEnabled());
        QCOMPARE(progress->value(), progress->maximum()); // finished, not stuck at 0
        QVERIFY(progress->text().contains("no GPU"));
        auto* import = panel.findChild<QPushButton*>("noGpuImport");
        QVERIFY(import && import->isVisibleTo(&panel));
        // Importing a run leaves the state.
        QString message;
        QVERIFY(panel.importFile(test::dataPath("measurements/all_reduce_4nodes.log"), &message));
        QVERIFY(panel.noGpuText().isEmpty());
        QVERIFY(measure->isEnabled());
    }

    void missingProbeShowsTheNoGpuStateAtOnce()
    {
        qputenv("PARAPLAN_PROBE", "/nonexistent/paraplan-probe");
        MeasurePanel panel;
        const QString text = panel.noGpuText();
        QVERIFY2(text.contains("/nonexistent/paraplan-probe"), qPrintable(text));
        QVERIFY(text.contains("not found"));
        QVERIFY(text.contains("probe-run.jsonl"));
        QVERIFY(!panel.findChild<QPushButton*>("measure")->isEnabled());
        // Look again: still missing, still said, no crash and no raw message.
        panel.findChild<QPushButton*>("lookAgain")->click();
        QVERIFY(panel.noGpuText().contains("not found"));
        QCOMPARE(panel.runner()->failure(), MeasurementRunner::Failure::ProbeMissing);
        // An imported run shows, but Measure stays off: there is still no probe to run.
        QString message;
        QVERIFY(panel.importFile(test::dataPath("measurements/all_reduce_4nodes.log"), &message));
        QVERIFY(!panel.findChild<QPushButton*>("measure")->isEnabled());
    }

    void aProbeThatIsNotExecutableIsSaidSo()
    {
        // Found but without the execute bit (copied from a share, unpacked by hand): said so,
        // with the fix, never "not found".
        QTemporaryDir dir;
        const QString probe = dir.filePath("paraplan-probe");
        QFile file(probe);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("#!/bin/sh\n");
        file.close();
        QVERIFY(file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        qputenv("PARAPLAN_PROBE", probe.toLocal8Bit());
        MeasurePanel panel;
        const QString text = panel.noGpuText();
        QVERIFY2(text.contains("not executable") && text.contains("chmod +x"), qPrintable(text));
        QVERIFY2(!text.contains("not found"), qPrintable(text));
        qunsetenv("PARAPLAN_PROBE");
    }

    void probeIsFoundOnPath()
    {
        QTemporaryDir dir;
        QVERIFY(
            QFile::link(test::dataPath("fakeprobe/success.sh"), dir.filePath("paraplan-probe")));
        const QByteArray path = qgetenv("PATH");
        qunsetenv("PARAPLAN_PROBE");
        qputenv("PATH", dir.path().toUtf8() + ":" + path);
        const QString found = MeasurementRunner::probePath();
        const bool ok = MeasurementRunner::probeFound();
        qputenv("PATH", path);
        QCOMPARE(found, dir.filePath("paraplan-probe"));
        QVERIFY(ok);
        QVERIFY(MeasurementRunner::probeLocations().join(" ").contains("on PATH"));
    }

    void gpuModelMismatchIsWarnedBeforeApply()
    {
        useProbe("success.sh"); // a run on 8 x NVIDIA H200
        MeasurePanel panel;
        ClusterSpec cluster;
        std::string error;
        QVERIFY(clusterFromPreset("dgx-h100", {}, &cluster, &error, HardwareCatalog::bundled()));
        Plan plan;
        plan.cluster = cluster;
        panel.setPlan(plan);
        QSignalSpy available(&panel, &MeasurePanel::runAvailable);
        QSignalSpy apply(&panel, &MeasurePanel::applyRequested);
        panel.runner()->start();
        QTRY_COMPARE_WITH_TIMEOUT(available.count(), 1, 20000);
        QVERIFY(!panel.proposals().empty());
        const QString warning = panel.mismatchText();
        QVERIFY2(warning.contains("Measured on NVIDIA H200, the plan uses NVIDIA H100 SXM5 80GB: "
                                  "applying replaces H100 figures with H200 measurements"),
                 qPrintable(warning));
        // Another GPU model's figures start unticked: Apply alone applies nothing.
        auto* list = panel.findChild<QListWidget*>();
        QVERIFY(list && list->count() > 0);
        for (int i = 0; i < list->count(); ++i)
            QCOMPARE(list->item(i)->checkState(), Qt::Unchecked);
        QStringList asked;
        panel.setConfirmer([&asked](const QString& text) {
            asked << text;
            return false;
        });
        panel.applySelected();
        QCOMPARE(asked.size(), 0);
        QCOMPARE(apply.count(), 0);
        for (int i = 0; i < list->count(); ++i)
            list->item(i)->setCheckState(Qt::Checked);
        panel.applySelected();
        QCOMPARE(asked.size(), 1);
        QCOMPARE(asked.front(), warning);
        QCOMPARE(apply.count(), 0); // declined: nothing applied
        panel.setConfirmer([&asked](const QString& text) {
            asked << text;
            return true;
        });
        panel.applySelected();
        QCOMPARE(apply.count(), 1);
        // The same model under its two names (CUDA's and the catalogue's): no warning.
        MeasurementRun run;
        run.devices = {"NVIDIA H100 80GB HBM3"};
        QVERIFY(gpuMismatchWarning(run, plan).isEmpty());
        run.devices = {"NVIDIA H100 PCIe"};
        QVERIFY(!gpuMismatchWarning(run, plan).isEmpty());
        run.devices = {"NVIDIA A100-SXM4-40GB"};
        QVERIFY(gpuMismatchWarning(run, plan).contains("replaces H100 figures with A100"));
        QVERIFY(
            clusterFromPreset("dgx-a100", {}, &plan.cluster, &error, HardwareCatalog::bundled()));
        QVERIFY(gpuMismatchWarning(run, plan).contains("40GB")); // 40 GB against 80 GB
        run.devices.clear(); // a run that does not name its GPUs cannot be compared
        QVERIFY(gpuMismatchWarning(run, plan).isEmpty());
    }

    void realProbeWithoutAGpu()
    {
        const QString probe = QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-probe";
        if (!QFile::exists(probe))
            QSKIP("paraplan-probe was not built (no CUDA toolkit or NCCL)");
        qputenv("PARAPLAN_PROBE", probe.toUtf8());
        MeasurementRunner runner;
        QSignalSpy finished(&runner, &MeasurementRunner::finished);
        QSignalSpy failed(&runner, &MeasurementRunner::failed);
        runner.start({"--list"});
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 1, 60000);
        if (finished.count() == 1)
            QSKIP("this machine has a GPU: the no-GPU path is not exercised here");
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains("no GPU is visible"), qPrintable(message));
        QCOMPARE(runner.run().error_code, 3);
    }

    void panelFitsAndProposes()
    {
        useProbe("success.sh");
        MeasurePanel panel;
        ClusterOptions options;
        ClusterSpec cluster;
        std::string error;
        QVERIFY(
            clusterFromPreset("dgx-h200", options, &cluster, &error, HardwareCatalog::bundled()));
        Plan plan;
        plan.cluster = cluster;
        panel.setPlan(plan);
        QSignalSpy available(&panel, &MeasurePanel::runAvailable);
        QSignalSpy apply(&panel, &MeasurePanel::applyRequested);
        panel.runner()->start();
        QTRY_COMPARE_WITH_TIMEOUT(available.count(), 1, 20000);
        QCOMPARE(panel.fits().size(), size_t(3));
        QVERIFY(panel.plot()->seriesNames().size() >= 3);
        QCOMPARE(panel.proposals().size(), size_t(1));
        QVERIFY(panel.statusText().contains("Host to device 52"));
        panel.applySelected();
        QCOMPARE(apply.count(), 1);
        QString message;
        QVERIFY(!panel.importFile(test::dataPath("measurements/nope.log"), &message));
        QVERIFY(panel.importFile(test::dataPath("measurements/all_reduce_4nodes.log"), &message));
        QCOMPARE(panel.fits().front().hosts, 4);
    }

    void panelShowsComputeBesideTheAssumedCurve()
    {
        MeasurePanel panel;
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(loadPlan(PARAPLAN_SOURCE_DIR
                         "/resources/examples/llama3-70b-dgx-h100.paraplan.json",
                         &plan, &errors, HardwareCatalog::bundled()));
        panel.setPlan(plan);
        QString message;
        QVERIFY(
            panel.importFile(test::dataPath("measurements/probe-compute-2xh100.jsonl"), &message));
        const QStringList series = panel.gemmPlot()->seriesNames();
        QVERIFY2(series.contains("bf16"), qPrintable(series.join(", ")));
        QVERIFY(series.contains("plan GEMMs"));
        QCOMPARE(panel.gemmPlot()->pointCount("bf16"), 10);
        QVERIFY(std::any_of(series.begin(), series.end(),
                            [](const QString& s) { return s.startsWith("assumed"); }));
        QStringList figures;
        for (const MeasuredFigure& f : panel.proposals())
            figures << QString::fromStdString(f.figure);
        QVERIFY(figures.contains("gemm_peak_fraction"));
        QVERIFY(figures.contains("hbm_fraction"));
        QVERIFY2(panel.statusText().contains("bf16 up to 744 TFLOP/s"),
                 qPrintable(panel.statusText()));
    }

    void calibrationDialogFitsAndOffersTheFigures()
    {
        Plan current;
        std::vector<std::string> errors;
        QVERIFY(loadPlan(PARAPLAN_SOURCE_DIR
                         "/resources/examples/llama3-70b-dgx-h100.paraplan.json",
                         &current, &errors, HardwareCatalog::bundled()));
        CalibrateDialog dialog(current);
        QSignalSpy apply(&dialog, &CalibrateDialog::applyRequested);
        const QString dir = test::dataPath("logs/");
        QString error;
        QVERIFY(!dialog.addRun(dir + "plan-70b-megatron.json", dir + "nope.log", &error));
        QVERIFY(error.contains("nope.log"));
        QVERIFY2(dialog.addRun(dir + "plan-70b-megatron.json", dir + "megatron-70b.log", &error),
                 qPrintable(error));
        // One run cannot carry three figures.
        QVERIFY(!dialog.fit(&error));
        QVERIFY(error.contains("need at least 3 runs"));
        QVERIFY(dialog.figuresForPlan().empty());
        QVERIFY(dialog.addRun(dir + "plan-8b-fsdp-1node.json", dir + "torchtitan-8b-1node.log",
                              &error));
        QVERIFY(dialog.addRun(dir + "plan-8b-fsdp-4nodes.json", dir + "torchtitan-8b-4nodes.log",
                              &error));
        QVERIFY(dialog.addRun(dir + "plan-8b-nemo-32k.json", dir + "nemo-8b-32k.log", &error));
        QVERIFY2(dialog.fit(&error), qPrintable(error));
        QVERIFY(std::abs(dialog.result().value(FreeFigure::GemmScale, 0) / 0.9 - 1) < 0.02);
        QVERIFY(dialog.resultText().contains("after"));
        const std::vector<MeasuredFigure> figures = dialog.figuresForPlan();
        QCOMPARE(figures.size(), size_t(4));
        QCOMPARE(figures.front().figure, std::string("gemm_peak_fraction"));
        QCOMPARE(figures.front().assumed, current.figures.gemm_peak_fraction.value);
        QVERIFY(figures.front().run.find("fitted to 4 training logs") == 0);
        QPushButton* applyButton = nullptr;
        for (QPushButton* b : dialog.findChildren<QPushButton*>())
            if (b->text() == "Apply to this plan")
                applyButton = b;
        QVERIFY(applyButton && applyButton->isEnabled());
        applyButton->click();
        QCOMPARE(apply.count(), 1);
    }
};

QTEST_MAIN(TestMeasureRunner)
#include "tst_measurerunner.moc"
