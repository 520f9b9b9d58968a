// Report export time on a 1,024-GPU plan: the six plots drawn again as vector pictures, the
// cluster picture, the document laid out and paginated, the PDF written.
// Target: at most 2 s. Run: QT_QPA_PLATFORM=offscreen build/bench/bench_report
#include "clusterio.h"
#include "planevaluator.h"
#include "planio.h"
#include "reportwriter.h"

#include <QTemporaryDir>
#include <QTest>

using namespace paraplan;
using namespace paraplan::ui;

class BenchReport : public QObject
{
    Q_OBJECT

private slots:
    void export1024Gpus()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(loadPlan(PARAPLAN_SOURCE_DIR
                         "/resources/examples/llama3-70b-dgx-h100.paraplan.json",
                         &plan, &errors, HardwareCatalog::bundled()));
        ClusterOptions options;
        options.nodes = 128;
        std::string error;
        QVERIFY(clusterFromPreset("dgx-h100", options, &plan.cluster, &error,
                                  HardwareCatalog::bundled()));
        plan.parallel.tp = 8;
        plan.parallel.pp = 8;
        plan.parallel.dp = 16;
        plan.parallel.global_batch = 1024;
        PlanEvaluator evaluator;
        evaluator.evaluate(plan);
        const auto results = evaluator.latest();
        QVERIFY(results);
        QCOMPARE(results->plan.cluster.totalGpus(), 1024);
        QTemporaryDir dir;
        const QString path = dir.filePath("report.pdf");
        QBENCHMARK
        {
            QString failure;
            QVERIFY2(ReportWriter::writePdf(*results, path, {}, &failure), qPrintable(failure));
        }
    }
};

QTEST_MAIN(BenchReport)
#include "bench_report.moc"
