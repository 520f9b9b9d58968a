// Compute measured by the probe (protocol 2) without a GPU: GEMM, attention, HBM and clock
// records replay through the parser the live run uses; the GEMM share of peak and the HBM
// share follow from them, apply to a plan as measurements and revert; bad records are named
// and applied nowhere; the CLI reports them.
#include "clicommands.h"
#include "measurement.h"
#include "planio.h"
#include "stepmodel.h"
#include "testdata.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <sstream>

using namespace paraplan;

namespace {

const char* kRun = "measurements/probe-compute-2xh100.jsonl";

MeasurementRun loadRun(const char* name)
{
    MeasurementRun run;
    std::string error;
    if (!loadMeasurements(test::dataPath(name).toStdString(), &run, &error))
        qFatal("%s", error.c_str());
    return run;
}

Plan examplePlan(Dtype dtype = Dtype::BF16)
{
    Plan plan;
    std::vector<std::string> errors;
    const std::string path =
        std::string(PARAPLAN_SOURCE_DIR) + "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
    if (!loadPlan(path, &plan, &errors, HardwareCatalog::bundled()))
        qFatal("%s", errors.front().c_str());
    plan.training.dtype = dtype;
    return plan;
}

const MeasuredFigure* find(const std::vector<MeasuredFigure>& figures, const char* name)
{
    for (const MeasuredFigure& f : figures)
        if (f.figure == name)
            return &f;
    return nullptr;
}

} // namespace

class TestComputeMeasure : public QObject
{
    Q_OBJECT

private slots:
    void protocolTwoRecordsAreRead()
    {
        const MeasurementRun run = loadRun(kRun);
        // 2 GPUs x (15 grid GEMMs in three dtypes + 5 of the plan's shapes).
        QCOMPARE(run.compute.gemms.size(), size_t(40));
        QCOMPARE(run.compute.attention.size(), size_t(2));
        QCOMPARE(run.compute.hbm.size(), size_t(4));
        QCOMPARE(run.compute.clocks.size(), size_t(2));
        QVERIFY(run.complete);
        QVERIFY(run.warnings.empty());
        // Rates follow from shape and time, whatever the line claims.
        for (const GemmMeasurement& g : run.compute.gemms)
            QVERIFY(std::abs(g.tflops - 2 * g.m * g.n * g.k * g.batch / g.time_s / 1e12) < 1e-6);
        const AttentionMeasurement& a = run.compute.attention.front();
        QVERIFY(std::abs(a.fwd_tflops / 300 - 1) < 1e-4);
        QVERIFY(std::abs(a.bwd_tflops / 280 - 1) < 1e-4);
        // A protocol 1 run has no compute and still reads.
        QVERIFY(loadRun("measurements/probe-8xh200.jsonl").compute.empty());
    }

    void theGemmShareAndHbmShareFollow()
    {
        const MeasurementRun run = loadRun(kRun);
        const GemmMeasurement* best = nullptr;
        // Per GPU the best grid shape at least 4096 a side (8192^3: 755 and 743.7 TFLOP/s);
        // the lower median of two GPUs.
        QVERIFY(std::abs(measuredGemmTflops(run.compute, "bf16", 4096, &best) / 743.675 - 1) <
                1e-4);
        QCOMPARE(best->m, 8192.0);
        QCOMPARE(best->device, 1);
        const Plan plan = examplePlan();
        const std::vector<MeasuredFigure> figures =
            proposeComputeFigures(run, plan, HardwareCatalog::bundled());
        const MeasuredFigure* gemm = find(figures, "gemm_peak_fraction");
        const MeasuredFigure* hbm = find(figures, "hbm_fraction");
        QVERIFY(gemm && hbm);
        const double peak =
            HardwareCatalog::bundled().gpu(plan.cluster.gpu_id)->peakTflops(Dtype::BF16);
        QVERIFY(std::abs(gemm->value - best->tflops / peak) < 1e-12);
        QVERIFY(std::abs(gemm->value / (743.675 / peak) - 1) < 1e-4);
        QCOMPARE(gemm->assumed, plan.figures.gemm_peak_fraction.value);
        QVERIFY(gemm->why.find("8192x8192x8192") != std::string::npos);
        QVERIFY(gemm->why.find("1740 MHz") != std::string::npos);
        QVERIFY(std::abs(hbm->value - 3015.0 / 3350) < 1e-3);
        // fp8 plans take the fp8 GEMMs; fp32 ones have no GEMM figure to replace.
        const std::vector<MeasuredFigure> fp8 =
            proposeComputeFigures(run, examplePlan(Dtype::FP8), HardwareCatalog::bundled());
        QVERIFY(find(fp8, "gemm_peak_fraction"));
        QVERIFY(find(fp8, "gemm_peak_fraction")->why.find("fp8 GEMM") != std::string::npos);
        const std::vector<MeasuredFigure> fp32 =
            proposeComputeFigures(run, examplePlan(Dtype::FP32), HardwareCatalog::bundled());
        QVERIFY(!find(fp32, "gemm_peak_fraction"));
        QVERIFY(find(fp32, "hbm_fraction"));
    }

    void ratesAboveTheDatasheetAreNotProposed()
    {
        // A GEMM faster than the H100's dense peak and a triad faster than its HBM: broken
        // records, or another GPU; neither becomes a figure.
        ProbeStreamParser parser;
        parser.feed(
            R"({"type":"hello","protocol":2})"
            "\n"
            R"({"type":"gemm","device":0,"dtype":"bf16","shape":"grid","m":8192,"n":8192,"k":8192,"time_s":1e-4})"
            "\n"
            R"({"type":"hbm","device":0,"kernel":"triad","bytes":3e9,"time_s":1e-4})"
            "\n");
        // 11,000 TFLOP/s and 30,000 GB/s: inside the read ranges, above the H100's datasheet.
        QCOMPARE(parser.run().compute.gemms.size(), size_t(1));
        QCOMPARE(parser.run().compute.hbm.size(), size_t(1));
        QVERIFY(
            proposeComputeFigures(parser.run(), examplePlan(), HardwareCatalog::bundled()).empty());
    }

    void aRunWithoutItsHelloIsStillAProbeRun()
    {
        QTemporaryDir dir;
        QFile f(dir.filePath("nohello.jsonl"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"type":"device","index":0,"name":"NVIDIA H100 80GB HBM3"})"
            "\n"
            R"({"type":"gemm","device":0,"dtype":"bf16","shape":"grid","m":4096,"n":4096,"k":4096,"batch":1,"time_s":0.0002})"
            "\n");
        f.close();
        MeasurementRun run;
        std::string error;
        QVERIFY2(loadMeasurements(f.fileName().toStdString(), &run, &error), error.c_str());
        QCOMPARE(run.compute.gemms.size(), size_t(1));
        QCOMPARE(run.warnings.front(),
                 std::string("no hello line: the start of the probe run is missing"));
    }

    void measuredComputeAppliesAndReverts()
    {
        const MeasurementRun run = loadRun(kRun);
        Plan plan = examplePlan();
        const double before =
            StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan).step_time_s;
        for (const MeasuredFigure& f : proposeComputeFigures(run, plan, HardwareCatalog::bundled()))
            QVERIFY(applyMeasurementToPlan(f, &plan));
        QCOMPARE(plan.figures.gemm_peak_fraction.origin, Origin::Measurement);
        QVERIFY(plan.figures.gemm_peak_fraction.source.find("h100-node") != std::string::npos);
        const double after =
            StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan).step_time_s;
        QVERIFY(after != before);
        // The plan file keeps them.
        Plan back;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(planToJsonText(plan, HardwareCatalog::bundled()), "", &back,
                                 &errors, HardwareCatalog::bundled()));
        QCOMPARE(back.measured.size(), size_t(2));
        QCOMPARE(back.figures.gemm_peak_fraction.value, plan.figures.gemm_peak_fraction.value);
        QVERIFY(revertMeasurementOfPlan("gemm_peak_fraction", &plan, HardwareCatalog::bundled()));
        QVERIFY(revertMeasurementOfPlan("hbm_fraction", &plan, HardwareCatalog::bundled()));
        QCOMPARE(StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan).step_time_s,
                 before);
    }

    void badComputeRecordsAreNamedAndSkipped()
    {
        ProbeStreamParser parser;
        parser.feed(
            R"({"type":"hello","protocol":2,"probe_version":"0.2.0"})"
            "\n"
            R"({"type":"gemm","device":0,"dtype":"bf16","m":4096,"n":4096,"k":4096,"time_s":0})"
            "\n"
            R"({"type":"gemm","device":0,"dtype":"bf16","m":-1,"n":4096,"k":4096,"time_s":1})"
            "\n"
            R"({"type":"hbm","device":0,"kernel":"triad","bytes":1e9})"
            "\n"
            R"({"type":"attention","device":0,"batch_heads":8,"seq":1024,"head_dim":128})"
            "\n");
        const MeasurementRun& run = parser.run();
        QVERIFY(run.compute.empty());
        QCOMPARE(run.warnings.size(), size_t(4));
        QVERIFY(run.warnings[0].find("a gemm line without") == 0);
        QVERIFY(run.warnings[2].find("an hbm line without") == 0);
        QVERIFY(run.warnings[3].find("an attention line without") == 0);
        // A newer protocol is read as far as it is known.
        ProbeStreamParser newer;
        newer.feed(R"({"type":"hello","protocol":3})"
                   "\n");
        QVERIFY(newer.run().warnings.front().find("protocol 3 is newer than this reader's 2") !=
                std::string::npos);
    }

    // Records inside a good stream with a figure outside its stated range: each is named with
    // the range and skipped; nothing absurd reaches the report.
    void recordsOutsideTheirRangesAreSkipped()
    {
        ProbeStreamParser parser;
        parser.feed(
            R"({"type":"hello","protocol":2,"probe_version":"0.2.0"})"
            "\n"
            R"({"type":"gemm","device":0,"dtype":"bf16","m":1e308,"n":1e308,"k":1e308,"time_s":1})"
            "\n"
            R"({"type":"gemm","device":0,"dtype":"bf16","m":4096,"n":4096,"k":4096,"time_s":1e300})"
            "\n"
            R"({"type":"attention","device":0,"dtype":"bf16","batch_heads":8,"seq":1e9,)"
            R"("head_dim":128,"fwd_time_s":1,"bwd_time_s":2})"
            "\n"
            R"({"type":"hbm","device":0,"kernel":"triad","bytes":1e12,"time_s":1e-9})"
            "\n"
            R"({"type":"clock","device":0,"sm_mhz_mean":1e9})"
            "\n"
            R"({"type":"gemm","device":0,"dtype":"bf16","m":4096,"n":4096,"k":4096,"time_s":0.0002})"
            "\n");
        const MeasurementRun& run = parser.run();
        QCOMPARE(run.compute.gemms.size(), size_t(1)); // only the last, good line
        QVERIFY(run.compute.attention.empty() && run.compute.hbm.empty() &&
                run.compute.clocks.empty());
        const std::vector<std::string> expected = {
            "m must be a whole number from 1 to 16,777,216 (got 1e308)",
            "time_s must be a number from 1e-09 to 86,400 s (got 1e300)",
            "seq must be a whole number from 1 to 16,777,216 (got 1,000,000,000)",
            "the rate its bytes and time imply must be a number above 0 up to 100,000 GB/s",
            "sm_mhz_mean must be a number from 0 to 10,000 MHz (got 1,000,000,000)"};
        QCOMPARE(run.warnings.size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i)
            QVERIFY2(run.warnings[i].find(expected[i]) != std::string::npos,
                     run.warnings[i].c_str());
    }

    // import-measurements shows no fit for a series at one size, and warns of a fit that
    // misses its points (here, times that jump at 8 MB: 25% RMS).
    void theCliSaysWhenAFitCannotBeMadeOrIsPoor()
    {
        QTemporaryDir dir;
        auto write = [&](const char* name, const QString& text) {
            QFile file(dir.filePath(name));
            file.open(QIODevice::WriteOnly);
            file.write(text.toUtf8());
            return file.fileName().toStdString();
        };
        const QString header = "# Collective test starting: all_reduce_perf\n";
        const QString row = "%1 %2 float sum -1 %3 1.00 1.75 0\n";
        QString one = header;
        QString poor = header;
        for (int i = 0; i < 6; ++i) {
            const double bytes = 1048576.0 * (1 << i);
            one += row.arg(1048576).arg(262144).arg(30 + i);
            poor += row.arg(bytes, 0, 'f', 0)
                        .arg(bytes / 4, 0, 'f', 0)
                        .arg(i == 3 ? 400.0 : 30 + bytes / 4e5, 0, 'f', 2);
        }
        std::ostringstream out;
        std::ostringstream err;
        QCOMPARE(cli::run({"import-measurements", write("one.log", one)}, out, err), 0);
        QVERIFY2(out.str().find("none (see the warnings)") != std::string::npos, out.str().c_str());
        QVERIFY(out.str().find("all 6 point(s) at one size") != std::string::npos);
        QVERIFY(out.str().find("0 s") == std::string::npos); // no alpha of 0
        std::ostringstream text;
        QCOMPARE(cli::run({"import-measurements", write("poor.log", poor)}, text, err), 0);
        QVERIFY2(text.str().find("the fit misses its points by") != std::string::npos,
                 text.str().c_str());
    }

    void theCliReportsComputeAndItsFigures()
    {
        std::ostringstream out;
        std::ostringstream err;
        const std::string plan = std::string(PARAPLAN_SOURCE_DIR) +
                                 "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
        int code = cli::run(
            {"import-measurements", test::dataPath(kRun).toStdString(), "--plan", plan, "--json"},
            out, err);
        QCOMPARE(code, 0);
        const QJsonObject doc =
            QJsonDocument::fromJson(QByteArray::fromStdString(out.str())).object();
        QCOMPARE(doc["compute"].toObject()["gemms"].toArray().size(), 40);
        QStringList figures;
        for (const QJsonValue& f : doc["figures"].toArray())
            figures << f.toObject()["figure"].toString();
        QVERIFY(figures.contains("gemm_peak_fraction"));
        QVERIFY(figures.contains("hbm_fraction"));
        std::ostringstream text;
        code = cli::run({"import-measurements", test::dataPath(kRun).toStdString(), "--plan", plan},
                        text, err);
        QCOMPARE(code, 0);
        QVERIFY(text.str().find("bf16  743.7 TFLOP/s at 8192x8192x8192") != std::string::npos);
        QVERIFY(text.str().find("HBM triad") != std::string::npos);
        std::ostringstream none;
        QCOMPARE(cli::run({"import-measurements", test::dataPath(kRun).toStdString(), "--plan",
                           plan, "--cluster", "dgx-h100"},
                          none, err),
                 2);
    }
};

QTEST_GUILESS_MAIN(TestComputeMeasure)
#include "tst_computemeasure.moc"
