// Edit-to-redrawn time on a 1,024-GPU plan: one field edit, the core's evaluation (plan,
// TP sweep, bandwidth curves, DP scaling, what-ifs), models and every plot redrawn.
// Target: at most 16 ms (one frame). Run: QT_QPA_PLATFORM=offscreen build/bench/bench_window
#include "clusterio.h"
#include "mainwindow.h"
#include "plots.h"

#include <QSignalSpy>
#include <QTest>

using namespace paraplan;
using namespace paraplan::ui;

class BenchWindow : public QObject
{
    Q_OBJECT

private slots:
    void editToRedrawn1024Gpus()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        window.document()->edit("1,024 GPUs", Field::Whole, [](Plan& plan) {
            ClusterOptions options;
            options.nodes = 128;
            std::string error;
            clusterFromPreset("dgx-h100", options, &plan.cluster, &error,
                              HardwareCatalog::bundled());
            plan.parallel.tp = 8;
            plan.parallel.pp = 8;
            plan.parallel.dp = 16;
            plan.parallel.global_batch = 1024;
        });
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QTRY_VERIFY(shown.count() >= 1);
        QVERIFY(window.evaluator()->latest()->plan.cluster.totalGpus() == 1024);
        // Warm the engine caches the sweeps use, as a user's first edit does.
        QTest::qWait(50);
        int flip = 0;
        QBENCHMARK
        {
            QSignalSpy replotted(window.plots().back(), &PlotView::replotted);
            shown.clear();
            window.document()->edit("micro-batch", Field::MicroBatch, [&flip](Plan& plan) {
                plan.parallel.micro_batch = (flip++ % 2) ? 1 : 2;
            });
            while (shown.isEmpty() || replotted.isEmpty())
                QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        }
    }
};

QTEST_MAIN(BenchWindow)
#include "bench_window.moc"
