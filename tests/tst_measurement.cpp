// Measurements without a GPU: nccl-tests logs of every variant, its -J JSON and the probe's
// JSON Lines replay through the same parsers the live run uses; fits recover known alpha and
// beta; measured figures replace assumed ones with their run as the source.
#include "clusterio.h"
#include "measurement.h"
#include "planio.h"
#include "testdata.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <random>

using namespace paraplan;

namespace {

std::string fixture(const char* name)
{
    return test::dataPath(QString("measurements/") + name).toStdString();
}

std::string readAll(const std::string& path)
{
    QFile file(QString::fromStdString(path));
    file.open(QIODevice::ReadOnly);
    return file.readAll().toStdString();
}

} // namespace

class TestMeasurement : public QObject
{
    Q_OBJECT

private slots:
    void aFitPredictsBusBandwidthBySize()
    {
        AlphaBetaFit fit;
        fit.op = CollectiveOp::AllReduce;
        fit.ranks = 8;
        fit.alpha_s = 20e-6;
        fit.busbw_GBps = 400;
        // Large messages reach the fitted bandwidth; at S where the latency equals the
        // bandwidth term, half of it.
        QVERIFY(std::fabs(fit.busbwAt(1e12) / 400 - 1) < 1e-3);
        const double factor = 2.0 * 7 / 8;
        const double half = fit.alpha_s * 400e9 / factor;
        QVERIFY(std::fabs(fit.busbwAt(half) / 200 - 1) < 1e-9);
        QCOMPARE(fit.busbwAt(0), 0.0);
    }

    void everyFormatVariantReads_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("hosts");
        QTest::addColumn<int>("points");
        QTest::addColumn<double>("busbw"); // the fitted GB/s, from the fixture's generator
        QTest::addColumn<double>("alphaUs");
        QTest::newRow("modern, #wrong and root") << "all_reduce_8xh200.log"
                                                 << "all_reduce" << 8 << 1 << 28 << 480.0 << 30.0;
        QTest::newRow("2021, error column") << "reduce_scatter_2021_error_column.log"
                                            << "reduce_scatter" << 8 << 1 << 20 << 440.0 << 28.0;
        QTest::newRow("2019, no root column, name from the file")
            << "all_reduce_2019_no_root.log"
            << "all_reduce" << 8 << 1 << 18 << 230.0 << 35.0;
        QTest::newRow("N/A checks, two hosts") << "all_gather_2hosts_na.log"
                                               << "all_gather" << 16 << 2 << 24 << 370.0 << 60.0;
        QTest::newRow("four hosts") << "all_reduce_4nodes.log"
                                    << "all_reduce" << 32 << 4 << 28 << 366.0 << 90.0;
        QTest::newRow("-J JSON") << "all_reduce_8xh200.json"
                                 << "all_reduce" << 8 << 1 << 16 << 480.0 << 30.0;
        QTest::newRow("header names the test, file named allreduce.txt")
            << "allreduce.txt"
            << "all_reduce" << 8 << 1 << 22 << 450.0 << 25.0;
        QTest::newRow("no name, file named reduce: the columns win")
            << "reduce_run.txt"
            << "all_reduce" << 8 << 1 << 22 << 450.0 << 25.0;
        QTest::newRow("pre-2020 rank lines without Group, no redop or root")
            << "all_gather_2019_no_group.log"
            << "all_gather" << 8 << 1 << 22 << 220.0 << 20.0;
        QTest::newRow("real -J layout (version 2), nan and inf skipped")
            << "all_gather_2hosts_v2.json"
            << "all_gather" << 8 << 2 << 20 << 90.0 << 40.0;
        QTest::newRow("nan, inf, negative and zero times skipped")
            << "all_reduce_nan_rows.log"
            << "all_reduce" << 8 << 1 << 18 << 450.0 << 25.0;
    }
    void everyFormatVariantReads()
    {
        QFETCH(QString, file);
        QFETCH(QString, op);
        QFETCH(int, ranks);
        QFETCH(int, hosts);
        QFETCH(int, points);
        QFETCH(double, busbw);
        QFETCH(double, alphaUs);
        MeasurementRun run;
        std::string error;
        QVERIFY2(loadMeasurements(fixture(file.toUtf8().constData()), &run, &error), error.c_str());
        QCOMPARE(static_cast<int>(run.points.size()), points);
        QCOMPARE(QString(collectiveOpName(run.points.front().op)), op);
        QCOMPARE(run.points.front().ranks, ranks);
        QCOMPARE(run.points.front().hosts, hosts);
        QCOMPARE(static_cast<int>(run.hosts.size()), hosts);
        const std::vector<AlphaBetaFit> fits = fitRun(run);
        QCOMPARE(fits.size(), size_t(1));
        // The fixtures carry +-1.5% noise on each time.
        QVERIFY2(std::fabs(fits.front().busbw_GBps / busbw - 1) < 0.03,
                 qPrintable(QString::number(fits.front().busbw_GBps)));
        QVERIFY2(std::fabs(fits.front().alpha_s * 1e6 / alphaUs - 1) < 0.08,
                 qPrintable(QString::number(fits.front().alpha_s * 1e6)));
        QVERIFY(fits.front().residual < 0.02);
    }

    // A value outside its stated range inside an otherwise good file: that row (or record) is
    // skipped with a warning naming it and the range; the rest of the file still reads.
    void aValueOutOfRangeSkipsItsRowWithAWarning_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("from"); // the first occurrence is replaced
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("dropped"); // results, copies and compute records lost
        QTest::addColumn<QString>("warning");
        QTest::newRow("log size of 1e23 bytes")
            << "all_reduce_8xh200.log"
            << "     1048576       262144"
            << "99999999999999999999999       262144" << 2
            << "size must be a number from 1 to 1e15 bytes (got 1e23)";
        QTest::newRow("log out-of-place time of 1e300 us")
            << "all_reduce_8xh200.log"
            << "33.64   31.17"
            << "1e300   31.17" << 1
            << "time must be a number from 0.001 to 86,400,000,000 us (got 1e300)";
        QTest::newRow("log busbw of 1e12 GB/s")
            << "all_reduce_8xh200.log"
            << "31.17   54.54"
            << "31.17   1e12" << 1
            << "busbw must be a number from 0 to 100,000 GB/s (got 1,000,000,000,000)";
        QTest::newRow("JSON time of 1e308 us")
            << "all_reduce_8xh200.json"
            << "\"time\": 34.2,"
            << "\"time\": 1e308," << 1
            << "time must be a number from 0.001 to 86,400,000,000 us (got 1e308)";
        QTest::newRow("JSON size of 1e300 bytes")
            << "all_reduce_8xh200.json"
            << "\"size\": 1048576,"
            << "\"size\": 1e300," << 2 << "size must be a number";
        QTest::newRow("probe time_us of 1e308")
            << "probe-8xh200.jsonl"
            << "\"time_us\":12.722"
            << "\"time_us\":1e308" << 1
            << "time must be a number from 0.001 to 86,400,000,000 us (got 1e308)";
        QTest::newRow("probe 1 PB in 1 ns: a busbw no link has")
            << "probe-8xh200.jsonl"
            << "\"bytes\":1048576,\"count\":262144,\"dtype\":\"float\",\"ranks\":2,\"hosts\":1,"
               "\"host\":\"h200-node\",\"time_us\":12.722"
            << "\"bytes\":1e15,\"count\":262144,\"dtype\":\"float\",\"ranks\":2,\"hosts\":1,"
               "\"host\":\"h200-node\",\"time_us\":0.01"
            << 1 << "the busbw size / time imply must be a number from 0 to 100,000 GB/s";
        QTest::newRow("probe copy of 1e300 bytes")
            << "probe-8xh200.jsonl"
            << "\"bytes\":268435456,\"time_us\":5152.312"
            << "\"bytes\":1e300,\"time_us\":5152.312" << 1 << "bytes must be a number";
        QTest::newRow("probe GEMM m of 1e308")
            << "probe-compute-2xh100.jsonl"
            << "\"m\":4096"
            << "\"m\":1e308" << 1 << "m must be a whole number from 1 to 16,777,216 (got 1e308)";
        QTest::newRow("probe GEMM 2^24 a side in 1 ns")
            << "probe-compute-2xh100.jsonl"
            << "\"m\":4096,\"n\":4096,\"k\":4096,\"batch\":1,\"time_s\":0.000192222"
            << "\"m\":16777216,\"n\":16777216,\"k\":16777216,\"batch\":1,\"time_s\":1e-9" << 1
            << "the rate its shape and time imply must be a number above 0 up to 1,000,000";
        QTest::newRow("probe HBM of 1e300 bytes")
            << "probe-compute-2xh100.jsonl"
            << "\"bytes\":2147483648"
            << "\"bytes\":1e300" << 1 << "bytes must be a number from 1 to 1e15 bytes (got 1e300)";
    }
    void aValueOutOfRangeSkipsItsRowWithAWarning()
    {
        QFETCH(QString, file);
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, dropped);
        QFETCH(QString, warning);
        auto records = [](const MeasurementRun& r) {
            return static_cast<int>(r.points.size() + r.copies.size() + r.compute.gemms.size() +
                                    r.compute.attention.size() + r.compute.hbm.size());
        };
        MeasurementRun good;
        std::string error;
        const std::string path = fixture(file.toUtf8().constData());
        QVERIFY2(loadMeasurements(path, &good, &error), error.c_str());
        QString text = QString::fromStdString(readAll(path));
        const int at = text.indexOf(from);
        QVERIFY2(at >= 0, qPrintable(from));
        text.replace(at, from.size(), to);
        QTemporaryDir dir;
        const QString bad = dir.filePath(file);
        QFile out(bad);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text.toUtf8());
        out.close();
        MeasurementRun run;
        QVERIFY2(loadMeasurements(bad.toStdString(), &run, &error), error.c_str());
        QCOMPARE(records(run), records(good) - dropped);
        std::string warnings;
        for (const std::string& w : run.warnings)
            warnings += w + "\n";
        QVERIFY2(QString::fromStdString(warnings).contains(warning), warnings.c_str());
        // Nothing derived from what is left is out of range.
        for (const AlphaBetaFit& fit : fitRun(run)) {
            QVERIFY(fit.busbw_GBps > 0 && fit.busbw_GBps <= 1e5);
            QVERIFY(fit.alpha_s >= 0 && fit.alpha_s < 86400);
            QVERIFY(fit.residual < 0.05);
        }
        for (const GemmMeasurement& g : run.compute.gemms)
            QVERIFY(g.m <= 16777216 && g.tflops <= 1e6);
    }

    // Every point at one size cannot tell latency from bandwidth: no fit, a warning instead of
    // alpha 0 and a residual of 79%.
    void aSeriesAtOneSizeIsNotFitted()
    {
        QString text = "# Collective test starting: all_reduce_perf\n";
        for (const char* time : {"33.64", "40.10", "51.00", "47.20"})
            text += QString("     1048576       262144     float     sum      -1    %1   31.17   "
                            "54.54      0    33.39   31.40   54.96      0\n")
                        .arg(time);
        QTemporaryDir dir;
        QFile file(dir.filePath("one-size.log"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.toUtf8());
        file.close();
        MeasurementRun run;
        std::string error;
        QVERIFY2(loadMeasurements(file.fileName().toStdString(), &run, &error), error.c_str());
        QCOMPARE(run.points.size(), size_t(8));
        QVERIFY(fitRun(run).empty());
        std::vector<AlphaBetaFit> refused;
        fitRun(run, &refused);
        QCOMPARE(refused.size(), size_t(1));
        QVERIFY2(refused.front().problem.find("all 4 point(s) at one size (1.05 MB)") !=
                     std::string::npos,
                 refused.front().problem.c_str());
        bool warned = false;
        for (const std::string& w : run.warnings)
            warned |= w.find("latency and bandwidth cannot be told apart") != std::string::npos;
        QVERIFY(warned);
        // Sizes within a factor of 2 are refused alike; a factor of 2 is enough.
        std::vector<MeasuredPoint> points(2);
        points[0].bytes = 1e6;
        points[0].time_s = 30e-6;
        points[1].bytes = 1.5e6;
        points[1].time_s = 35e-6;
        QVERIFY(!fitAlphaBeta(CollectiveOp::AllReduce, 8, points).problem.empty());
        points[1].bytes = 2e6;
        QVERIFY(fitAlphaBeta(CollectiveOp::AllReduce, 8, points).problem.empty());
        // Times that shrink with the size give no bandwidth at all.
        points[1].time_s = 20e-6;
        QVERIFY(fitAlphaBeta(CollectiveOp::AllReduce, 8, points).problem.find("fitted busbw") !=
                std::string::npos);
    }

    void theContentDecidesTheCollectiveNotTheFileName()
    {
        MeasurementRun run;
        std::string error;
        auto warned = [&](const char* part) {
            for (const std::string& w : run.warnings)
                if (w.find(part) != std::string::npos)
                    return true;
            return false;
        };
        // No test name in the content: size = count x 4 B and busbw/algbw = 2 x 7/8 say an
        // all_reduce over 8 ranks; the file name's "reduce" is overruled, with a warning.
        QVERIFY2(loadMeasurements(fixture("reduce_run.txt"), &run, &error), error.c_str());
        QCOMPARE(run.points.front().op, CollectiveOp::AllReduce);
        QVERIFY(warned("the file name suggests reduce"));
        QCOMPARE(run.nccl_version, std::string("2.23.4"));
        // The header's name decides without any warning about the name.
        QVERIFY(loadMeasurements(fixture("allreduce.txt"), &run, &error));
        QVERIFY(!warned("file name"));
        QCOMPARE(run.devices.size(), size_t(8));
        QCOMPARE(run.devices.front(), std::string("NVIDIA H100 80GB HBM3"));
        // 2019: all_gather and alltoall print alike; the file name picks, with a warning;
        // ranks, host and GPU come from the rank lines without a Group column.
        QVERIFY(loadMeasurements(fixture("all_gather_2019_no_group.log"), &run, &error));
        QVERIFY(warned("taken from the file name"));
        QCOMPARE(run.hosts, std::vector<std::string>{"host1"});
        QCOMPARE(run.devices.front(), std::string("A100-SXM4-80GB"));
        QVERIFY(!warned("assumed"));
        // The -J writer's own layout: program in args[0], devices under config.
        QVERIFY(loadMeasurements(fixture("all_gather_2hosts_v2.json"), &run, &error));
        QCOMPARE(run.nccl_version, std::string("2.27.4"));
        QCOMPARE(run.devices.front(), std::string("NVIDIA A100-SXM4-80GB"));
        QVERIFY(warned("skipped 2 measurement(s)"));
        QVERIFY(loadMeasurements(fixture("all_reduce_nan_rows.log"), &run, &error));
        QVERIFY(warned("skipped 4 measurement(s)"));
        for (const MeasuredPoint& p : run.points)
            QVERIFY(std::isfinite(p.time_s) && p.time_s > 0 && std::isfinite(p.busbw_GBps));
    }

    void aFileOfSeveralRunsIsReadAsSeveralRuns()
    {
        // A shell loop's output: all_reduce_perf, its command line echoed, reduce_scatter_perf.
        // Each run is read on its own: the all_reduce points are those of its file alone (its
        // busbw is not mixed with the reduce_scatter's), and both collectives are there.
        auto bytesOf = [](const std::string& path) {
            QFile file(QString::fromStdString(path));
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        };
        const QByteArray first = bytesOf(fixture("all_reduce_8xh200.log"));
        const QByteArray second = bytesOf(fixture("reduce_scatter_2021_error_column.log"));
        QVERIFY(!first.isEmpty() && !second.isEmpty());
        QTemporaryDir dir;
        const QString both = dir.filePath("loop.log");
        {
            QFile out(both);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(first + "+ ./build/reduce_scatter_perf -b 1M -e 512M -f 2 -g 8\n" + second);
        }
        MeasurementRun alone;
        MeasurementRun run;
        std::string error;
        QVERIFY2(loadMeasurements(fixture("all_reduce_8xh200.log"), &alone, &error), error.c_str());
        QVERIFY2(loadMeasurements(both.toStdString(), &run, &error), error.c_str());
        std::vector<MeasuredPoint> allReduce;
        int reduceScatter = 0;
        for (const MeasuredPoint& p : run.points) {
            if (p.op == CollectiveOp::AllReduce)
                allReduce.push_back(p);
            reduceScatter += p.op == CollectiveOp::ReduceScatter ? 1 : 0;
        }
        QCOMPARE(allReduce.size(), alone.points.size());
        for (size_t i = 0; i < allReduce.size(); ++i) {
            QCOMPARE(allReduce[i].bytes, alone.points[i].bytes);
            QCOMPARE(allReduce[i].busbw_GBps, alone.points[i].busbw_GBps);
        }
        QVERIFY(reduceScatter > 0);
        QVERIFY(run.complete);
        // A broken second run is named by its place, not read into the first.
        {
            QFile out(both);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(first + "# nThread 1 nGpus 8 minBytes 1048576\n   garbage row\n");
        }
        QVERIFY(!loadMeasurements(both.toStdString(), &run, &error));
        QVERIFY2(error.find("run 2 of 2 (from line") != std::string::npos, error.c_str());
    }

    void theRankCountComesFromTheColumnsWithoutRankLines()
    {
        // An all_gather of 16 ranks without rank lines or a name: count x 4 B x 16 = size.
        std::string text = readAll(fixture("all_gather_2hosts_na.log"));
        std::string stripped;
        for (const QString& line : QString::fromStdString(text).split('\n'))
            if (!line.contains("Rank") && !line.contains("_perf"))
                stripped += line.toStdString() + "\n";
        MeasurementRun run;
        std::string error;
        QVERIFY2(parseNcclTestsLog(stripped, &run, &error, "all_gather.log"), error.c_str());
        QCOMPARE(run.points.front().ranks, 16);
        QCOMPARE(run.points.front().op, CollectiveOp::AllGather);
        // Rank lines that disagree with the columns: the columns are what nccl-tests computed
        // its busbw with, so they win, and the disagreement is said.
        std::string fewer;
        for (const QString& line :
             QString::fromStdString(readAll(fixture("allreduce.txt"))).split('\n'))
            if (!line.contains(QRegularExpression("Rank +[4-7] ")))
                fewer += line.toStdString() + "\n";
        QVERIFY(parseNcclTestsLog(fewer, &run, &error));
        QCOMPARE(run.points.front().ranks, 8);
        QVERIFY(run.warnings.front().find("the rank lines list 4 ranks") != std::string::npos);
        // Without any name at all, a columns-only guess says so.
        QVERIFY(parseNcclTestsLog(stripped, &run, &error, "run.log"));
        bool assumed = false;
        for (const std::string& w : run.warnings)
            assumed = assumed || w.find("assumed") != std::string::npos;
        QVERIFY(assumed);
    }

    void aProbeStreamOfGarbageKeepsABoundedNumberOfWarnings()
    {
        ProbeStreamParser parser;
        std::string chunk;
        for (int i = 0; i < 1000; ++i)
            chunk += "garbage line " + std::to_string(i) + "\n";
        for (int round = 0; round < 300; ++round) // 300,000 lines
            parser.feed(chunk);
        parser.finish();
        const MeasurementRun& run = parser.run();
        QCOMPARE(run.warnings.size(), ProbeStreamParser::kKeptWarnings + 1);
        QCOMPARE(run.warnings_dropped, 300000LL - 20);
        QVERIFY(run.warnings.back().find("and 299980 more") != std::string::npos);
        QVERIFY(run.points.empty());
    }

    void fitRecoversAlphaAndBetaWithinTwoPercent_data()
    {
        QTest::addColumn<double>("alphaUs");
        QTest::addColumn<double>("busbw");
        QTest::addColumn<double>("noise");
        QTest::newRow("exact") << 25.0 << 370.0 << 0.0;
        QTest::newRow("1% noise") << 14.0 << 47.0 << 0.01;
        QTest::newRow("large latency") << 200.0 << 23.5 << 0.005;
    }
    void fitRecoversAlphaAndBetaWithinTwoPercent()
    {
        QFETCH(double, alphaUs);
        QFETCH(double, busbw);
        QFETCH(double, noise);
        std::mt19937 random(42);
        std::uniform_real_distribution<double> jitter(-noise, noise);
        std::vector<MeasuredPoint> points;
        const int n = 8;
        const double factor = busBandwidthFactor(CollectiveOp::AllReduce, n);
        for (double bytes = 8e3; bytes <= 8e9; bytes *= 2) {
            MeasuredPoint p;
            p.op = CollectiveOp::AllReduce;
            p.bytes = bytes;
            p.ranks = n;
            p.time_s = (alphaUs * 1e-6 + bytes * factor / (busbw * 1e9)) * (1 + jitter(random));
            points.push_back(p);
        }
        const AlphaBetaFit fit = fitAlphaBeta(CollectiveOp::AllReduce, n, points);
        QVERIFY2(std::fabs(fit.alpha_s * 1e6 / alphaUs - 1) < 0.02,
                 qPrintable(QString::number(fit.alpha_s * 1e6)));
        QVERIFY2(std::fabs(fit.busbw_GBps / busbw - 1) < 0.02,
                 qPrintable(QString::number(fit.busbw_GBps)));
        QVERIFY(fit.residual <= noise + 1e-9);
    }

    void probeStreamReplaysChunkByChunk()
    {
        // The live path feeds whatever readyRead delivers: any split must give the same run.
        const std::string text = readAll(fixture("probe-8xh200.jsonl"));
        for (size_t chunk : {size_t(1), size_t(7), size_t(4096), text.size()}) {
            ProbeStreamParser parser;
            int results = 0;
            int hellos = 0;
            for (size_t at = 0; at < text.size(); at += chunk)
                for (ProbeStreamParser::Event e : parser.feed(text.substr(at, chunk))) {
                    results += e == ProbeStreamParser::Event::Result;
                    hellos += e == ProbeStreamParser::Event::Hello;
                }
            parser.finish();
            QCOMPARE(hellos, 1);
            QCOMPARE(results, 42 + 25);
            QCOMPARE(parser.run().points.size(), size_t(42));
            QCOMPARE(parser.run().copies.size(), size_t(25));
            QCOMPARE(parser.run().devices.size(), size_t(8));
            QVERIFY(parser.run().complete);
            QCOMPARE(parser.run().nccl_version, std::string("2.28.9"));
            QCOMPARE(parser.protocol(), 1);
        }
    }

    void probeCopiesMatchThePublishedFigures()
    {
        // H200: ~52 GB/s pinned host-device (Gen5 x16), ~4.0 TB/s HBM copy (reference 3).
        MeasurementRun run;
        std::string error;
        QVERIFY(loadMeasurements(fixture("probe-8xh200.jsonl"), &run, &error));
        for (const CopyMeasurement& c : run.copies) {
            if (c.what == "h2d" || c.what == "d2h")
                QVERIFY(std::fabs(c.GBps / 52 - 1) < 0.05);
            if (c.what == "d2d")
                QVERIFY(std::fabs(c.GBps / 4000 - 1) < 0.05);
        }
    }

    void garbageAndErrorsNeverStopTheParse()
    {
        ProbeStreamParser parser;
        const auto events = parser.feed(
            "{\"type\":\"hello\",\"protocol\":1,\"probe_version\":\"0.1.0\"}\n"
            "Segmentation fault (core dumped)\n"
            "{\"type\":\"result\",\"kind\":\"collective\",\"op\":\"all_reduce\",\"bytes\":1048576,"
            "\"ranks\":8,\"time_us\":40.0}\n"
            "{\"type\":\"result\",\"kind\":\"collective\",\"op\":\"all_magic\",\"bytes\":1,"
            "\"ranks\":8,\"time_us\":1}\n"
            "{\"type\":\"from_the_future\",\"x\":1}\n"
            "{\"type\":\"error\",\"code\":5,\"what\":\"ncclCommInitAll\",\"detail\":\"unhandled "
            "system error\"}\n{\"type\":\"res");
        QCOMPARE(events.size(), size_t(5));
        QCOMPARE(events[1], ProbeStreamParser::Event::Garbage);
        QCOMPARE(events[3], ProbeStreamParser::Event::Garbage);
        QCOMPARE(parser.run().points.size(), size_t(1));
        QVERIFY(std::fabs(parser.run().points.front().busbw_GBps - 1048576 / 40e-6 * 1.75 / 1e9) <
                1e-6);
        QCOMPARE(parser.run().error_code, 5);
        QVERIFY(!parser.run().complete);
        QVERIFY(!parser.run().warnings.empty());
        parser.finish(); // the cut last line becomes a warning, not a crash
        QCOMPARE(parser.run().points.size(), size_t(1));
    }

    void badFilesGetAMessage_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("empty") << ""
                               << "empty";
        QTest::newRow("prose") << "hello\nworld\n"
                               << "no nccl-tests result rows";
        QTest::newRow("json without results") << "{\"version\": 1}"
                                              << "results";
        QTest::newRow("broken json") << "{\"results\": ["
                                     << "invalid JSON";
        QTest::newRow("nccl-tests JSON without a usable row")
            << readAll(fixture("all_reduce_no_usable_rows.json")).c_str()
            << "no usable nccl-tests rows: 2 measurement(s)";
        QTest::newRow("log rows of nan only")
            << "# Collective test starting: all_reduce_perf\n 1048576 262144 float sum -1 nan "
               "nan nan 0 nan nan nan 0\n"
            << "no usable nccl-tests rows";
        QTest::newRow("no name anywhere and no columns that tell")
            << "  1048576  262144 mytype  12.0  4.0  2.0  0\n"
            << "cannot tell which collective";
        QTest::newRow("probe run of garbage only")
            << "{\"type\":\"hello\",\"protocol\":2}\nnot json\n{\"type\":\"done\"}\n"
            << "no usable result";
        QTest::newRow("log rows with a time of 1e300 only")
            << "# Collective test starting: all_reduce_perf\n 1048576 262144 float sum -1 1e300 "
               "31.17 54.54 0 1e300 31.40 54.96 0\n"
            << "no usable nccl-tests rows: 2 measurement(s) outside the stated ranges";
        QTest::newRow("log rows of 1e23 bytes only")
            << "# Collective test starting: all_reduce_perf\n 99999999999999999999999 262144 "
               "float sum -1 33.64 31.17 54.54 0 33.39 31.40 54.96 0\n"
            << "size must be a number from 1 to 1e15 bytes (got 1e23)";
        QTest::newRow("JSON rows with a time of 1e308 only")
            << QString::fromStdString(readAll(fixture("all_reduce_8xh200.json")))
                   .replace(QRegularExpression("\"time\": [0-9.]+"), "\"time\": 1e308")
            << "no usable nccl-tests rows: 16 measurement(s)";
        QTest::newRow("probe results with a time of 1e308 only")
            << "{\"type\":\"hello\",\"protocol\":2}\n{\"type\":\"result\",\"kind\":"
               "\"collective\",\"op\":\"all_reduce\",\"bytes\":1048576,\"ranks\":8,\"time_us\":"
               "1e308}\n"
            << "time must be a number from 0.001 to 86,400,000,000 us (got 1e308)";
        QTest::newRow("probe run with only an error")
            << "{\"type\":\"hello\",\"protocol\":1}\n{\"type\":\"error\",\"code\":3,\"what\":"
               "\"cudaGetDeviceCount\",\"detail\":\"no GPU visible\"}\n"
            << "no GPU visible";
    }
    void badFilesGetAMessage()
    {
        QFETCH(QString, text);
        QFETCH(QString, messagePart);
        QTemporaryDir dir;
        const QString path = dir.filePath("run.log");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.toUtf8());
        file.close();
        MeasurementRun run;
        std::string error;
        QVERIFY(!loadMeasurements(path.toStdString(), &run, &error));
        QVERIFY2(QString::fromStdString(error).contains(messagePart), error.c_str());
    }

    void thePlanKeepsMeasuredAndAssumed()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(R"({"model": {"preset": "llama2-13b"},
            "cluster": {"preset": "dgx-h100", "nodes": 4},
            "parallel": {"tp": 8, "pp": 1, "dp": 4, "micro_batch": 1, "global_batch": 32}})",
                                 "", &plan, &errors, HardwareCatalog::bundled()));
        MeasurementRun run;
        std::string error;
        QVERIFY(loadMeasurements(fixture("all_reduce_4nodes.log"), &run, &error));
        const std::vector<MeasuredFigure> figures =
            proposeMeasuredFigures(run, fitRun(run), plan.cluster);
        QVERIFY(applyMeasurementToPlan(figures.front(), &plan));
        QCOMPARE(plan.cluster.node.nic_efficiency.origin, Origin::Measurement);
        // Saved and read back: measured in the cluster, the assumed value remembered.
        Plan loaded;
        QVERIFY2(planFromJsonText(planToJsonText(plan, HardwareCatalog::bundled()), "", &loaded,
                                  &errors, HardwareCatalog::bundled()),
                 errors.empty() ? "" : errors.front().c_str());
        QCOMPARE(loaded.measured.size(), size_t(1));
        QCOMPARE(loaded.cluster.node.nic_efficiency.value, figures.front().value);
        QCOMPARE(loaded.cluster.node.nic_efficiency.origin, Origin::Measurement);
        QVERIFY(QString::fromStdString(loaded.cluster.node.nic_efficiency.source).contains("n1"));
        QVERIFY(revertMeasurementOfPlan("nic_efficiency", &loaded, HardwareCatalog::bundled()));
        QCOMPARE(loaded.cluster.node.nic_efficiency.value, 0.94);
        QVERIFY(loaded.measured.empty());
        // A bad entry is named.
        QVERIFY(!planFromJsonText(R"({"model": {"preset": "llama2-13b"},
            "cluster": {"preset": "dgx-h100", "nodes": 4},
            "parallel": {"tp": 8, "dp": 4, "micro_batch": 1, "global_batch": 32},
            "measured": [{"figure": "warp_speed", "value": 1, "assumed": 1}]})",
                                  "", &plan, &errors, HardwareCatalog::bundled()));
        QVERIFY(QString::fromStdString(errors.back()).contains("unknown figure"));
    }

    void measuredFiguresReplaceAssumedOnes()
    {
        ClusterOptions options;
        options.nodes = 4;
        ClusterSpec cluster;
        std::string error;
        QVERIFY(
            clusterFromPreset("dgx-h100", options, &cluster, &error, HardwareCatalog::bundled()));
        MeasurementRun intra;
        QVERIFY(loadMeasurements(fixture("all_reduce_8xh200.log"), &intra, &error));
        std::vector<MeasuredFigure> figures = proposeMeasuredFigures(intra, fitRun(intra), cluster);
        QCOMPARE(figures.size(), size_t(1));
        // busbw above the 450 GB/s line rate: in-switch reduction, so the NVLS figure.
        QCOMPARE(figures.front().figure, std::string("nvls_efficiency"));
        QVERIFY(std::fabs(figures.front().value - 0.611) < 0.02);
        QVERIFY(applyMeasuredFigure(figures.front(), &cluster));
        QCOMPARE(cluster.node.nvls_efficiency.origin, Origin::Measurement);
        QVERIFY(QString::fromStdString(cluster.node.nvls_efficiency.source).contains("node01"));
        QVERIFY(revertMeasuredFigure(figures.front(), &cluster));
        QCOMPARE(cluster.node.nvls_efficiency.value, 0.611);
        QCOMPARE(cluster.node.nvls_efficiency.origin, Origin::Preset);

        MeasurementRun inter;
        QVERIFY(loadMeasurements(fixture("all_reduce_4nodes.log"), &inter, &error));
        figures = proposeMeasuredFigures(inter, fitRun(inter), cluster);
        QCOMPARE(figures.size(), size_t(1));
        QCOMPARE(figures.front().figure, std::string("nic_efficiency"));
        QVERIFY(std::fabs(figures.front().value - 366.0 / 400) < 0.03);
    }
};

QTEST_GUILESS_MAIN(TestMeasurement)
#include "tst_measurement.moc"
