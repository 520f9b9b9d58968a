// paraplan-cli: commands run in-process through the same entry point as the binary, plus one
// end-to-end run of the real executable for exit codes and stderr.
#include "clicommands.h"
#include "clirun.h"
#include "clusterio.h"
#include "commandtable.h"
#include "testdata.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace paraplan;
using test::CliRun;
using test::runCli;

namespace {

QJsonObject json(const CliRun& run)
{
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}

QString examplePlan(const char* name)
{
    return QStringLiteral(PARAPLAN_SOURCE_DIR) + "/resources/examples/" + name;
}

// How QCommandLineParser lists an option in its help: "--op <OP>", "-o <FILE>", "--json".
QString listedAs(const QCommandLineOption& option)
{
    const QString name = option.names().constFirst();
    return (name.size() == 1 ? "-" : "--") + name +
           (option.valueName().isEmpty() ? QString() : " <" + option.valueName() + ">");
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT

private slots:
    void collectiveJsonHasTheDocumentedKeys()
    {
        const CliRun run = runCli({"collective", "--op", "all_reduce", "--bytes", "141GB",
                                   "--ranks", "8", "--bw-GBps", "900", "--json"});
        QCOMPARE(run.code, 0);
        QVERIFY(run.err.isEmpty());
        const QJsonObject result = json(run);
        for (const char* key :
             {"time_s", "algbw_GBps", "busbw_GBps", "bytes_per_rank", "bottleneck", "regime"})
            QVERIFY2(result.contains(key), key);
        QVERIFY(qAbs(result["time_s"].toDouble() - 0.27417) < 1e-4);
        QCOMPARE(result["bottleneck"].toString(), QString("link"));
        QCOMPARE(result["regime"].toString(), QString("bandwidth-bound"));
        QVERIFY(qAbs(result["busbw_GBps"].toDouble() - 900) < 1e-6);
    }

    void byteFormsAgree_data()
    {
        QTest::addColumn<QString>("bytes");
        QTest::newRow("scientific") << "141e9";
        QTest::newRow("GB") << "141GB";
        QTest::newRow("spaced") << "141 GB";
    }
    void byteFormsAgree()
    {
        QFETCH(QString, bytes);
        const CliRun run = runCli({"collective", "--op", "all_reduce", "--bytes", bytes, "--ranks",
                                   "8", "--bw-GBps", "900", "--json"});
        QCOMPARE(run.code, 0);
        QCOMPARE(json(run)["bytes"].toDouble(), 141e9);
        const CliRun binary = runCli({"collective", "--op", "all_reduce", "--bytes", "400MiB",
                                      "--ranks", "8", "--bw-GBps", "900", "--json"});
        QCOMPARE(json(binary)["bytes"].toDouble(), 400.0 * 1024 * 1024);
    }

    void clusterCollective()
    {
        const CliRun run = runCli({"collective", "--op", "all_reduce", "--bytes", "1GB", "--ranks",
                                   "64", "--stride", "8", "--cluster", "dgx-h100", "--nodes", "64",
                                   "--nodes-per-rack", "32", "--oversubscription", "2", "--json"});
        QCOMPARE(run.code, 0);
        const QJsonObject result = json(run);
        QCOMPARE(result["bottleneck"].toString(), QString("spine"));
        QCOMPARE(result["placement"].toObject()["racks"].toInt(), 2);
        QVERIFY(result["phases"].toArray().size() >= 1);
    }

    void whatIfOptions()
    {
        const QStringList base = {"collective", "--op",    "all_reduce", "--bytes",
                                  "4GB",        "--ranks", "8",          "--cluster",
                                  "dgx-h100",   "--algo",  "ring",       "--json"};
        const double healthy = json(runCli(base))["busbw_GBps"].toDouble();
        const double chipOut =
            json(runCli(base + QStringList{"--nvswitch-out", "0"}))["busbw_GBps"].toDouble();
        const double degraded =
            json(runCli(base + QStringList{"--degrade", "nvlink=0.5"}))["busbw_GBps"].toDouble();
        QVERIFY(qAbs(chipOut / healthy - 13.0 / 18) < 1e-3);
        QVERIFY(qAbs(degraded / healthy - 0.5) < 1e-3);
    }

    void sweepCoversOneKilobyteToSixteenGigabytes()
    {
        const CliRun csv = runCli(
            {"sweep-collective", "--op", "all_reduce", "--ranks", "8", "--cluster", "dgx-h100"});
        QCOMPARE(csv.code, 0);
        const QStringList lines = csv.out.trimmed().split("\r\n"); // RFC 4180 line ends
        QCOMPARE(
            lines.first(),
            QString("bytes,time_s,algbw_GBps,busbw_GBps,algorithm,protocol,bottleneck,regime"));
        QCOMPARE(lines.size(), 1 + 25); // 1 KB x 2^0 .. 2^24 (16.8 GB)
        QVERIFY(lines.at(1).startsWith("1000,"));
        QVERIFY(lines.at(1).endsWith("latency-bound"));
        QVERIFY(lines.last().endsWith("bandwidth-bound"));
        const CliRun js =
            runCli({"sweep-collective", "--op", "reduce_scatter", "--ranks", "4", "--bw-GBps",
                    "100", "--json", "--min-bytes", "1MB", "--max-bytes", "1GB", "--factor", "10"});
        QCOMPARE(js.code, 0);
        QCOMPARE(json(js)["points"].toArray().size(), 4);
    }

    void importMeasurementsListsItsPointsAndRefusesEmptyRuns()
    {
        const CliRun js =
            runCli({"import-measurements", test::dataPath("measurements/allreduce.txt"), "--json"});
        QCOMPARE(js.code, 0);
        const QJsonArray points = json(js)["points"].toArray();
        QCOMPARE(points.size(), 22);
        QCOMPARE(json(js)["point_count"].toInt(), 22);
        const QJsonObject first = points.first().toObject();
        QCOMPARE(first["op"].toString(), QString("all_reduce"));
        QCOMPARE(first["ranks"].toInt(), 8);
        QCOMPARE(first["hosts"].toInt(), 1);
        QCOMPARE(first["bytes"].toDouble(), 1048576.0);
        QVERIFY(first["time_us"].toDouble() > 0 && first["busbw_GBps"].toDouble() > 0);
        const CliRun empty = runCli(
            {"import-measurements", test::dataPath("measurements/all_reduce_no_usable_rows.json")});
        QCOMPARE(empty.code, 2);
        QVERIFY2(empty.err.startsWith("error: ") && empty.err.contains("no usable"),
                 qPrintable(empty.err));
        QVERIFY(empty.out.isEmpty());
    }

    void walkthroughReadsLikeTheSeed()
    {
        const CliRun run = runCli({"walkthrough", "--op", "all_reduce", "--bytes", "134217728",
                                   "--ranks", "8", "--bw-GBps", "450"});
        QCOMPARE(run.code, 0);
        QVERIFY(run.out.contains("2(n-1)/n × S"));
        QVERIFY(run.out.contains("2(8-1)/8 × 134 MB"));
        QVERIFY(run.out.contains("Approximation: a common shortcut writes 2S"));
        QVERIFY(run.out.contains("597 us")); // the seed's ~0.6 ms, via 2S
        QVERIFY(run.out.contains("user entry: --bw-GBps 450"));
        const CliRun cluster = runCli({"walkthrough", "--op", "all_reduce", "--bytes", "14GB",
                                       "--ranks", "16", "--cluster", "dgx-a100"});
        QCOMPARE(cluster.code, 0);
        QVERIFY(cluster.out.contains("Network share per GPU"));
        QVERIFY(cluster.out.contains("preset"));
        QVERIFY(cluster.out.contains("Alternative:"));
        const CliRun asJson = runCli({"walkthrough", "--op", "all_gather", "--bytes", "1GB",
                                      "--ranks", "8", "--cluster", "dgx-h100", "--json"});
        QCOMPARE(asJson.code, 0);
        QVERIFY(json(asJson)["steps"].toArray().size() >= 5);
    }

    void measuredTimeGivesBusBandwidth()
    {
        const CliRun run = runCli({"collective", "--op", "all_reduce", "--bytes", "400MB",
                                   "--ranks", "4", "--measured-time", "2.16ms", "--json"});
        QCOMPARE(run.code, 0);
        QVERIFY(qAbs(json(run)["busbw_GBps"].toDouble() - 277.78) < 0.01);
        const CliRun explained = runCli({"walkthrough", "--op", "reduce_scatter", "--bytes",
                                         "400MB", "--ranks", "4", "--measured-time", "4.3ms"});
        QCOMPARE(explained.code, 0);
        QVERIFY(explained.out.contains("69.8 GB/s"));
        QVERIFY(explained.out.contains("S = 1.60 GB and busbw = 279 GB/s"));
    }

    void dpTraffic()
    {
        const CliRun run = runCli({"dp-traffic", "--params", "7e9", "--dtype", "bf16", "--ranks",
                                   "8", "--zero", "3", "--bw-GBps", "277", "--json"});
        QCOMPARE(run.code, 0);
        const QJsonObject result = json(run);
        QCOMPARE(result["passes"].toDouble(), 3.0);
        QVERIFY(qAbs(result["bytes_per_rank"].toDouble() - 3 * 7.0 / 8 * 14e9) < 1);
        const CliRun text = runCli(
            {"dp-traffic", "--params", "7.5e9", "--ranks", "64", "--zero", "1", "--walkthrough"});
        QVERIFY(text.out.contains("31.4 GB"));
    }

    void presetsListSources()
    {
        const CliRun run = runCli({"presets"});
        QCOMPARE(run.code, 0);
        for (const char* id : {"dgx-a100", "dgx-h100", "dgx-h200", "hgx-b200", "pcie-h100",
                               "a100-nvlink-mesh", "tpu-v4-pod", "h100-sxm5-80gb", "ib-ndr"})
            QVERIFY2(run.out.contains(id), id);
        QVERIFY(run.out.count("source:") >= 30);
        QVERIFY(run.out.contains("per direction"));
        const CliRun js = runCli({"presets", "--json"});
        QCOMPARE(json(js)["clusters"].toArray().size(), 9);
    }

    void exportClusterWritesALoadableFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("c.json");
        const CliRun run = runCli({"export-cluster", "--cluster", "dgx-h200", "--nodes", "16",
                                   "--oversubscription", "2", "-o", path});
        QCOMPARE(run.code, 0);
        ClusterSpec cluster;
        std::string error;
        QVERIFY2(loadCluster(path.toStdString(), {}, &cluster, &error, HardwareCatalog::bundled()),
                 error.c_str());
        QCOMPARE(cluster.nodes, 16);
        const CliRun again = runCli({"collective", "--op", "all_reduce", "--bytes", "1GB",
                                     "--ranks", "128", "--cluster", path, "--json"});
        QCOMPARE(again.code, 0);
    }

    void outputNeverReplacesAFileThePlanNames()
    {
        // A plan that reads its cluster from a file beside it: -o naming that file (in any
        // spelling) is refused, and the cluster file and the plan stay as they were.
        QTemporaryDir dir;
        const QString cluster = dir.filePath("mycluster.json");
        QCOMPARE(runCli({"export-cluster", "--cluster", "dgx-h100", "--nodes", "16", "-o", cluster})
                     .code,
                 0);
        const QString plan = dir.filePath("plan.json");
        QFile file(plan);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"schema": "paraplan-plan/1", "model": {"preset": "llama3-70b"},
            "cluster": {"file": "mycluster.json"},
            "parallel": {"tp": 8, "pp": 4, "dp": 4, "sequence_parallel": true,
                         "recompute": "selective", "micro_batch": 1, "global_batch": 512},
            "training": {"seq_len": 4096}})");
        file.close();
        QFile read(cluster);
        QVERIFY(read.open(QIODevice::ReadOnly));
        const QByteArray before = read.readAll();
        read.close();
        const QString script = dir.filePath("run.sh");
        QCOMPARE(runCli({"export", plan, "--to", "megatron", "-o", script}).code, 0);
        for (const QStringList& args : {QStringList{"report", plan, "--json", "-o", cluster},
                                        QStringList{"export", plan, "--to", "megatron", "-o",
                                                    dir.filePath("./mycluster.json")},
                                        QStringList{"import-launch", script, "--from", "megatron",
                                                    "--base", plan, "-o", cluster}}) {
            const CliRun run = runCli(args);
            QCOMPARE(run.code, 2);
            QVERIFY2(run.err.contains("which the plan '" + plan + "' refers to"),
                     qPrintable(run.err));
            QVERIFY(read.open(QIODevice::ReadOnly));
            QCOMPARE(read.readAll(), before);
            read.close();
        }
        QCOMPARE(runCli({"evaluate", plan}).code, 0);
    }

    void fileNamesAreBytes()
    {
        // Latin-1 names (not UTF-8) read and written by their bytes: the file the command
        // writes is the one it names.
        QTemporaryDir dir;
        const std::string folder = dir.path().toStdString();
        const std::string plan = folder + "/plan-\xe9.json";
        const std::string output = folder + "/out-\xe9.json";
        {
            QFile example(QStringLiteral(PARAPLAN_SOURCE_DIR) +
                          "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
            QVERIFY(example.open(QIODevice::ReadOnly));
            std::ofstream copy(plan, std::ios::binary);
            copy << example.readAll().toStdString();
        }
        std::ostringstream out;
        std::ostringstream err;
        QCOMPARE(cli::run({"evaluate", plan}, out, err), 0);
        QVERIFY2(err.str().empty(), err.str().c_str());
        out.str("");
        QCOMPARE(cli::run({"report", plan, "--json", "-o", output}, out, err), 0);
        QCOMPARE(out.str(), "wrote " + output + "\n");
        QVERIFY(std::filesystem::is_regular_file(output));
        QVERIFY(std::filesystem::file_size(output) > 100);
    }

    void controlCharactersNeverReachTheTerminalRaw()
    {
        // A plan whose name carries escape sequences (C0 ESC, BEL, the C1 CSI in UTF-8):
        // text output and error lines show them escaped; JSON escapes them as JSON does.
        QTemporaryDir dir;
        QFile example(QStringLiteral(PARAPLAN_SOURCE_DIR) +
                      "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
        QVERIFY(example.open(QIODevice::ReadOnly));
        QJsonObject plan = QJsonDocument::fromJson(example.readAll()).object();
        plan["name"] = QString::fromUtf8("evil \x1b[31mred\x07 \xc2\x9b"
                                         "2J");
        const QString path = dir.filePath("evil.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QJsonDocument(plan).toJson());
        file.close();
        const CliRun text = runCli({"evaluate", path});
        QCOMPARE(text.code, 0);
        QVERIFY2(text.out.startsWith("evil \\x1b[31mred\\x07 \\u009b2J\n"), qPrintable(text.out));
        for (const QChar c : text.out + text.err)
            QVERIFY(c == '\n' || c == '\t' || c == '\r' ||
                    (c >= ' ' && c != QChar(0x7f) && (c < QChar(0x80) || c > QChar(0x9f))));
        const CliRun missing = runCli({"evaluate", dir.filePath("no\x1b[2Jsuch.json")});
        QCOMPARE(missing.code, 3);
        QVERIFY2(missing.err.contains("no\\x1b[2Jsuch.json"), qPrintable(missing.err));
        QVERIFY(runCli({"evaluate", path, "--json"}).out.contains("\\u001b[31m"));
    }

    void evaluatePlanJson()
    {
        const QString plan = QStringLiteral(PARAPLAN_SOURCE_DIR) +
                             "/resources/examples/gpt3-175b-dgx-a100.paraplan.json";
        const CliRun run = runCli({"evaluate", plan, "--json"});
        QCOMPARE(run.code, 0);
        const QJsonObject result = json(run);
        for (const char* key : {"step_time_s", "tokens_per_s", "mfu", "hfu", "fits", "breakdown_s",
                                "memory_bytes", "collectives"})
            QVERIFY2(result.contains(key), key);
        const QJsonObject breakdown = result["breakdown_s"].toObject();
        double sum = 0;
        for (const char* key : {"compute", "bubble", "tp_comm_exposed", "pp_comm_exposed",
                                "dp_comm_exposed", "optimizer"})
            QVERIFY2(breakdown.contains(key), key);
        for (const QJsonValue& value : breakdown)
            sum += value.toDouble();
        QVERIFY(qAbs(sum - result["step_time_s"].toDouble()) < 1e-9);
        const QJsonObject memory = result["memory_bytes"].toObject();
        QCOMPARE(memory["stages"].toArray().size(), 8);
        QVERIFY(memory["max_stage_total"].toDouble() > 0);
        QVERIFY(result["fits"].toBool());
        // Korthikanti et al. measured 13.75 s for this layout.
        QVERIFY(qAbs(result["step_time_s"].toDouble() / 13.75 - 1) < 0.10);
        QVERIFY(result["collectives"].toArray().size() >= 2);
        const CliRun text = runCli({"evaluate", plan});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("Step-time breakdown"));
        QVERIFY(text.out.contains("Memory per GPU by pipeline stage"));
        QVERIFY(text.out.contains("MFU / HFU"));
    }

    void walkthroughOfAPlan()
    {
        const QString plan = QStringLiteral(PARAPLAN_SOURCE_DIR) +
                             "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
        const CliRun run = runCli({"walkthrough", plan});
        QCOMPARE(run.code, 0);
        for (const char* part : {"Model FLOPs per step", "Pipeline bubble", "MFU",
                                 "Memory of stage 0 per GPU", "Korthikanti"})
            QVERIFY2(run.out.contains(part), part);
    }

    void cliffsPrintTheSeries()
    {
        const QString plan = QStringLiteral(PARAPLAN_SOURCE_DIR) +
                             "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
        const CliRun text = runCli({"cliffs", plan});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("crosses the network"));
        QVERIFY(text.out.contains("What-ifs"));
        const CliRun csv = runCli({"cliffs", plan, "--csv"});
        QCOMPARE(csv.code, 0);
        const QStringList lines = csv.out.trimmed().split("\r\n"); // RFC 4180 line ends
        QCOMPARE(lines.front(), QString("series,x,y,note"));
        QVERIFY(lines.size() > 30);
        // The what-if labels carry commas ("spine 2:1, 2 racks"): quoted.
        QVERIFY(csv.out.contains("\"spine 2:1, 2 racks\""));
        const QJsonObject json =
            QJsonDocument::fromJson(runCli({"cliffs", plan, "--json"}).out.toUtf8()).object();
        QCOMPARE(json["tp_sweep"].toObject()["points"].toArray().size(), 6);
        QCOMPARE(runCli({"cliffs"}).code, 2);
        QCOMPARE(runCli({"cliffs", plan, "--json", "--csv"}).code, 2);
    }

    void cliffsGoPastTheNodeOnTheBundledExample()
    {
        // GPT-3 175B with PP 8 on 64 GPUs: TP 16 and 32 need 128 and 256 GPUs, and say so.
        const QString plan = QStringLiteral(PARAPLAN_SOURCE_DIR) +
                             "/resources/examples/gpt3-175b-dgx-a100.paraplan.json";
        const CliRun text = runCli({"cliffs", plan});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("on 128 GPUs: the plan's 64 cannot hold it"));
        const QJsonArray points =
            QJsonDocument::fromJson(runCli({"cliffs", plan, "--json"}).out.toUtf8())
                .object()["tp_sweep"]
                .toObject()["points"]
                .toArray();
        QStringList seen;
        for (const QJsonValue& point : points)
            seen << QString("%1@%2")
                        .arg(point.toObject()["tp"].toInt())
                        .arg(point.toObject()["gpus"].toInt());
        QVERIFY2(seen.contains("8@64") && seen.contains("16@128") && seen.contains("32@256"),
                 qPrintable(seen.join(" ")));
        QVERIFY(runCli({"cliffs", plan, "--csv"}).out.contains("16,") &&
                runCli({"cliffs", plan, "--csv"}).out.contains("on 128 GPUs"));
    }

    void validateAgainstPublishedMeasurements()
    {
        const CliRun run = runCli({"validate", "--json"});
        QCOMPARE(run.code, 0);
        const QJsonArray sets = json(run)["sets"].toArray();
        QCOMPARE(sets.size(), 6);
        const QJsonObject korthikanti = sets[0].toObject();
        QCOMPARE(korthikanti["id"].toString(), QString("korthikanti2022"));
        QCOMPARE(korthikanti["rows"].toArray().size(), 8);
        QVERIFY(korthikanti["mean_abs_error"].toDouble() <= 0.03);
        QVERIFY(korthikanti["max_abs_error"].toDouble() <= 0.06);
        QVERIFY(korthikanti["memory_max_abs_error"].toDouble() <= 0.10);
        QCOMPARE(sets[1].toObject()["id"].toString(), QString("torchtitan2024"));
        QCOMPARE(sets[2].toObject()["id"].toString(), QString("nemo2024"));
        // The 2026 set (FP8, MoE, Blackwell): its rows state their plans as fields and name
        // their family and what the plan format could not state.
        const QJsonObject set2026 = sets[3].toObject();
        QCOMPARE(set2026["id"].toString(), QString("2026"));
        QCOMPARE(set2026["rows"].toArray().size(), 6);
        QStringList families;
        for (const QJsonValue& row : set2026["rows"].toArray()) {
            families << row.toObject()["family"].toString();
            QVERIFY(row.toObject()["not_expressible"].isArray());
            QVERIFY(row.toObject()["predicted_s"].toDouble() > 0);
        }
        QVERIFY(families.contains("fp8-dense-h100"));
        QVERIFY(families.contains("moe-h100"));
        QVERIFY(families.contains("blackwell"));
        // Megatron-Bridge 26.04.01's MoE runs: ten rows of MoE models, each with its plan.
        const QJsonObject moe = sets[4].toObject();
        QCOMPARE(moe["id"].toString(), QString("moe-megatron-bridge-2604"));
        QCOMPARE(moe["rows"].toArray().size(), 10);
        for (const QJsonValue& row : moe["rows"].toArray()) {
            QCOMPARE(row.toObject()["family"].toString(), QString("moe-check"));
            QVERIFY(row.toObject()["predicted_s"].toDouble() > 0);
        }
        // The measured memory of 2026: bytes per row (reserved rows say so) and verdicts.
        const QJsonObject memory = sets[5].toObject();
        QCOMPARE(memory["id"].toString(), QString("memory-2026"));
        QVERIFY(memory["rows"].toArray().isEmpty());
        int reserved = 0;
        for (const QJsonValue& row : memory["memory"].toArray()) {
            QVERIFY(row.toObject()["predicted_GiB"].toDouble() > 0);
            reserved += row.toObject()["reserved"].toBool() ? 1 : 0;
        }
        QCOMPARE(reserved, 2);
        QCOMPARE(memory["verdicts_matched"].toInt(), memory["verdicts"].toInt());
        QVERIFY(memory["memory_mean_abs_error"].toDouble() <= 0.11);
        for (const QJsonValue& set : sets) {
            for (const QJsonValue& row : set.toObject()["rows"].toArray())
                QVERIFY(row.toObject()["assumptions"].toString().contains("attention"));
        }
        const CliRun text = runCli({"validate"});
        QVERIFY(text.out.contains("mean |error|"));
        QVERIFY(text.out.contains("assumes: attention"));
        const CliRun file = runCli({"validate", QStringLiteral(PARAPLAN_TEST_DATA_DIR) +
                                                    "/calibration-korthikanti2022.json"});
        QCOMPARE(file.code, 0);
    }

    void badPlansExitTwo_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("rule")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-h100", "nodes": 1},
            "parallel": {"tp": 3, "dp": 1, "micro_batch": 1, "global_batch": 8}})"
            << "[rule gpu-count]";
        QTest::newRow("file") << "{"
                              << "invalid JSON";
        QTest::newRow("several") << R"({"model": {"preset": "x"}, "cluster": {"preset": "y"},
            "parallel": {"micro_batch": 1, "global_batch": 8}})"
                                 << "more";
    }
    void badPlansExitTwo()
    {
        QFETCH(QString, text);
        QFETCH(QString, messagePart);
        QTemporaryDir dir;
        const QString path = dir.filePath("plan.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.toUtf8());
        file.close();
        for (const char* command : {"evaluate", "walkthrough"}) {
            const CliRun run = runCli({command, path});
            QCOMPARE(run.code, 2);
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY2(run.err.startsWith("error: "), qPrintable(run.err));
            QVERIFY2(run.err.contains(messagePart), qPrintable(run.err));
        }
        const CliRun missing = runCli({"evaluate", dir.filePath("absent.json")});
        QCOMPARE(missing.code, 3); // a missing input is an I/O error
        QVERIFY2(missing.err.contains("cannot read '" + dir.filePath("absent.json") +
                                      "': No such file or directory"),
                 qPrintable(missing.err));
        const CliRun noFile = runCli({"evaluate", "--json"});
        QCOMPARE(noFile.code, 2);
    }

    // A plan that breaks several rules: every command names the file, the first rule and
    // how many more (export said only the first; evaluate did not name the file).
    void rejectedPlansNameTheFileAndCountTheRest()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-h100", "nodes": 1},
            "parallel": {"tp": 3, "dp": 1, "micro_batch": 1, "global_batch": 8}})");
        file.close();
        const QList<QStringList> commands = {{"evaluate", path},
                                             {"walkthrough", path},
                                             {"cliffs", path},
                                             {"export", path, "--to", "megatron"}};
        for (const QStringList& command : commands) {
            const CliRun run = runCli(command);
            QCOMPARE(run.code, 2);
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY2(run.err.startsWith("error: " + path + ": "), qPrintable(run.err));
            const QRegularExpression more(R"(\(and (\d+) more\))");
            const QRegularExpressionMatch match = more.match(run.err);
            QVERIFY2(match.hasMatch() && match.captured(1).toInt() >= 1, qPrintable(run.err));
        }
    }

    void modelCommand()
    {
        const CliRun preset = runCli({"model", "--preset", "llama3-405b", "--json"});
        QCOMPARE(preset.code, 0);
        QVERIFY(qAbs(json(preset)["parameters"].toDouble() / 405.85e9 - 1) < 0.01);
        const CliRun hf =
            runCli({"model", "--hf-config",
                    QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/hf/mixtral-8x7b.json"});
        QCOMPARE(hf.code, 0);
        QVERIFY(hf.out.contains("active per token"));
        const CliRun unknown = runCli(
            {"model", "--hf-config", QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/hf/t5-small.json"});
        QCOMPARE(unknown.code, 2);
        QVERIFY2(unknown.err.startsWith("error: ") && unknown.err.contains("model_type 't5'") &&
                     unknown.err.contains("qwen2_moe"),
                 qPrintable(unknown.err));
        // The sequence comes from --seq-len (default 2048), never from the config's context
        // window; a longer one than the window is said.
        const QString dsv3 = QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/hf/deepseek-v3.json";
        const CliRun window = runCli({"model", "--hf-config", dsv3, "--json"});
        QCOMPARE(window.code, 0);
        QCOMPARE(json(window)["seq_len"].toInt(), 2048);
        QCOMPARE(json(window)["context_window"].toInt(), 163840);
        QVERIFY(qAbs(json(window)["parameters"].toDouble() / 671e9 - 1) < 0.02);
        const CliRun longer =
            runCli({"model", "--hf-config",
                    QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/hf/gpt2.json", "--seq-len", "4096"});
        QCOMPARE(longer.code, 0);
        QVERIFY(longer.out.contains("beyond the model's context window of 1024"));
    }

    void importTopology()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("cluster.json");
        const CliRun run =
            runCli({"import-topology",
                    QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/topology/dgx-h100.topo.txt", "-o",
                    out, "--nodes", "4", "--nic", "ib-ndr"});
        QCOMPARE(run.code, 0);
        QVERIFY(run.out.contains("NV18"));
        const CliRun use = runCli({"collective", "--op", "all_reduce", "--bytes", "1GB", "--ranks",
                                   "32", "--cluster", out, "--json"});
        QCOMPARE(use.code, 0);
        QCOMPARE(json(use)["placement"].toObject()["nodes"].toInt(), 4);
        const CliRun missing = runCli({"import-topology", QStringLiteral(PARAPLAN_TEST_DATA_DIR) +
                                                              "/topology/pcie-box.topo.txt"});
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("--gpu"));
    }

    void badArgumentsGiveOneErrorLine_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("messagePart");
        const QStringList flat = {"collective", "--op",      "all_reduce", "--ranks",
                                  "8",          "--bw-GBps", "900"};
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command";
        QTest::newRow("unknown option")
            << (flat + QStringList{"--bytes", "1GB", "--wat", "1"}) << "unknown option '--wat'";
        QTest::newRow("missing bytes") << flat << "--bytes is required";
        QTest::newRow("bad bytes") << (flat + QStringList{"--bytes", "lots"}) << "not a byte count";
        QTest::newRow("negative bytes") << (flat + QStringList{"--bytes", "-1GB"}) << "positive";
        QTest::newRow("bad op") << QStringList{"collective", "--op", "allsum",    "--bytes", "1",
                                               "--ranks",    "2",    "--bw-GBps", "1"}
                                << "unknown collective";
        QTest::newRow("nan bandwidth")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "8",    "--bw-GBps",  "nan"}
            << "not a number";
        QTest::newRow("zero bandwidth")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "8",    "--bw-GBps",  "0"}
            << "--bw-GBps must be a number from 0.001 to 100,000 GB/s (got 0)";
        QTest::newRow("absurd bandwidth")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "8",    "--bw-GBps",  "1e308"}
            << "to 100,000 GB/s (got 1e308)";
        QTest::newRow("1e8-rank all-to-all")
            << QStringList{"collective", "--op",      "all_to_all", "--bytes", "1GB",
                           "--ranks",    "100000000", "--bw-GBps",  "100"}
            << "--ranks must be a whole number from 1 to 1,048,576 ranks";
        QTest::newRow("absurd bytes")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1e300",
                           "--ranks",    "8",    "--bw-GBps",  "100"}
            << "--bytes must be";
        QTest::newRow("absurd measured time")
            << QStringList{"walkthrough", "--op", "all_reduce",      "--bytes", "1GB",
                           "--ranks",     "8",    "--measured-time", "1e-300"}
            << "--measured-time must be a number from 1e-09 to 86,400 s (got 1e-300)";
        QTest::newRow("one rank") << QStringList{"collective", "--op",      "all_reduce",
                                                 "--bytes",    "1GB",       "--ranks",
                                                 "1",          "--bw-GBps", "10"}
                                  << "at least 2 ranks";
        QTest::newRow("fractional ranks")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "2.5",  "--bw-GBps",  "10"}
            << "whole number";
        QTest::newRow("both link kinds")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB", "--ranks", "8",
                           "--bw-GBps",  "10",   "--cluster",  "dgx-h100"}
            << "either --bw-GBps";
        QTest::newRow("neither link kind")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB", "--ranks", "8"}
            << "either --bw-GBps";
        QTest::newRow("unknown cluster")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "8",    "--cluster",  "dgx-x9"}
            << "neither a cluster preset";
        QTest::newRow("group too large")
            << QStringList{"collective", "--op", "all_reduce", "--bytes", "1GB",
                           "--ranks",    "1000", "--cluster",  "dgx-h100"}
            << "the cluster has 32";
        QTest::newRow("zero nodes")
            << QStringList{"collective", "--op",      "all_reduce", "--bytes", "1GB", "--ranks",
                           "8",          "--cluster", "dgx-h100",   "--nodes", "0"}
            << "--nodes must be a whole number from 1 to 1,048,576 nodes (got 0)";
        QTest::newRow("bad algorithm")
            << QStringList{"collective", "--op",      "all_reduce", "--bytes", "1GB",  "--ranks",
                           "8",          "--bw-GBps", "10",         "--algo",  "magic"}
            << "unknown algorithm";
        QTest::newRow("bad degrade")
            << QStringList{"collective", "--op",     "all_reduce", "--bytes", "1GB", "--ranks", "8",
                           "--cluster",  "dgx-h100", "--degrade",  "nvlink=3"}
            << "(0, 1]";
        QTest::newRow("value missing")
            << QStringList{"collective", "--op", "all_reduce", "--bytes"} << "needs a value";
        QTest::newRow("bad measured time")
            << QStringList{"collective", "--op", "all_reduce",      "--bytes", "1GB",
                           "--ranks",    "8",    "--measured-time", "fast"}
            << "not a duration";
        QTest::newRow("bad zero stage")
            << QStringList{"dp-traffic", "--params", "7e9", "--ranks", "8", "--zero", "4"}
            << "from 0 to 3";
        QTest::newRow("bad factor")
            << QStringList{"sweep-collective", "--op", "all_reduce", "--ranks", "8",
                           "--bw-GBps",        "10",   "--factor",   "1"}
            << "greater than 1";
    }
    void badArgumentsGiveOneErrorLine()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, messagePart);
        const CliRun run = runCli(args);
        QCOMPARE(run.code, 2);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(run.err.startsWith("error: "), qPrintable(run.err));
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains(messagePart), qPrintable(run.err));
    }

    void badClusterFileIsReportedByName()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("broken.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"preset\": \"dgx-h100\", \"nodes\": ");
        file.close();
        const CliRun run = runCli({"collective", "--op", "all_reduce", "--bytes", "1GB", "--ranks",
                                   "8", "--cluster", path});
        QCOMPARE(run.code, 2);
        QVERIFY(run.err.contains("broken.json"));
        QVERIFY(run.err.contains("invalid JSON"));
    }

    void everyCommandAnswersHelp()
    {
        QVERIFY(cli::commandTable().size() >= 15);
        for (const cli::Command& command : cli::commandTable()) {
            const QString name = command.name;
            for (const char* flag : {"--help", "-h"}) {
                const CliRun run = runCli({name, flag});
                QVERIFY2(run.code == 0, qPrintable(name + " " + flag + ": " + run.err));
                QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
                QVERIFY2(run.out.startsWith("Usage: paraplan-cli " + name + " [options]"),
                         qPrintable(run.out));
                QVERIFY2(run.out.contains(command.summary), qPrintable(name));
                QVERIFY2(run.out.contains("-h, --help"), qPrintable(name));
                for (const QCommandLineOption& option : command.options()) {
                    QVERIFY2(!option.description().isEmpty(), qPrintable(name + listedAs(option)));
                    QVERIFY2(run.out.contains("  " + listedAs(option) + " "),
                             qPrintable(name + ": " + listedAs(option) + " not in\n" + run.out));
                    // The first words of its description, before any line break.
                    QVERIFY2(run.out.contains(option.description().section(' ', 0, 1)),
                             qPrintable(name + ": " + option.description()));
                }
                if (command.positional.name)
                    QVERIFY2(run.out.contains(QString("\n  ") + command.positional.name + " "),
                             qPrintable(run.out));
            }
            // help COMMAND prints the same.
            const CliRun viaHelp = runCli({"help", name});
            QCOMPARE(viaHelp.code, 0);
            QCOMPARE(viaHelp.out, runCli({name, "--help"}).out);
        }
    }

    void shortHelpIsNotAFileName()
    {
        for (const char* command : {"evaluate", "walkthrough", "search", "cliffs", "report",
                                    "import-topology", "import-measurements", "validate"}) {
            const CliRun run = runCli({command, "-h"});
            QVERIFY2(run.code == 0, qPrintable(run.err));
            QVERIFY(run.err.isEmpty());
            QVERIFY(run.out.startsWith(QString("Usage: paraplan-cli ") + command));
            QVERIFY(!run.out.contains("cannot open"));
        }
        // Help wins over the rest of the line, even a bad one.
        const CliRun mixed = runCli({"evaluate", examplePlan("gpt3-175b-dgx-a100.paraplan.json"),
                                     "--json", "--bogus", "-h"});
        QCOMPARE(mixed.code, 0);
        QVERIFY(mixed.out.startsWith("Usage: paraplan-cli evaluate"));
    }

    void unknownOptionsNameThemselves_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("option");
        const QString plan = examplePlan("gpt3-175b-dgx-a100.paraplan.json");
        QTest::newRow("evaluate") << QStringList{"evaluate", plan, "--foo"} << "--foo";
        QTest::newRow("with a value") << QStringList{"search", plan, "--bogus=3"} << "--bogus";
        QTest::newRow("single dash") << QStringList{"presets", "-x"} << "-x";
        QTest::newRow("single-dash word") << QStringList{"presets", "-foo"} << "-foo";
        QTest::newRow("before the plan") << QStringList{"cliffs", "--wat", plan} << "--wat";
        QTest::newRow("report") << QStringList{"report", plan, "--bogus"} << "--bogus";
        QTest::newRow("collective")
            << QStringList{"collective", "--op",      "all_reduce", "--bytes",  "1GB", "--ranks",
                           "8",          "--bw-GBps", "10",         "--max-tp", "2"}
            << "--max-tp";
        QTest::newRow("help") << QStringList{"help", "--foo"} << "--foo";
        QTest::newRow("no command") << QStringList{"--foo"} << "--foo";
    }
    void unknownOptionsNameThemselves()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, option);
        const CliRun run = runCli(args);
        QCOMPARE(run.code, 2);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(run.err.startsWith("error: unknown option '" + option + "' (see 'paraplan-cli "),
                 qPrintable(run.err));
        QCOMPARE(run.err.count('\n'), 1);
        if (args.first() != option)
            QVERIFY2(run.err.contains(args.first() + " --help"), qPrintable(run.err));
    }

    void badCommandLinesGiveOneErrorLine_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString plan = examplePlan("gpt3-175b-dgx-a100.paraplan.json");
        QTest::newRow("flag with a value")
            << QStringList{"evaluate", plan, "--json=1"} << "--json takes no value";
        QTest::newRow("twice") << QStringList{"model", "--preset", "a", "--preset", "b"}
                               << "--preset given twice";
        QTest::newRow("no plan") << QStringList{"evaluate"}
                                 << "evaluate needs a plan file (JSON): paraplan-cli evaluate "
                                    "[options] PLAN";
        QTest::newRow("two plans") << QStringList{"cliffs", plan, plan} << "unexpected argument";
        QTest::newRow("stray argument")
            << QStringList{"presets", "all"} << "unexpected argument 'all'";
        QTest::newRow("collective option on a plan")
            << QStringList{"walkthrough", plan, "--op", "all_reduce"}
            << "--op does not apply to a plan's walkthrough";
        QTest::newRow("help for nothing")
            << QStringList{"help", "frobnicate"} << "unknown command 'frobnicate'";
        QTest::newRow("report without widgets")
            << QStringList{"report", plan, "-o", "x.pdf"} << "built without them";
    }
    void badCommandLinesGiveOneErrorLine()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliRun run = runCli(args);
        QCOMPARE(run.code, 2);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(run.err.startsWith("error: ") && run.err.contains(message), qPrintable(run.err));
        QCOMPARE(run.err.count('\n'), 1);
    }

    void helpListsEveryCommand()
    {
        const CliRun help = runCli({"help"});
        QCOMPARE(help.code, 0);
        QVERIFY(help.err.isEmpty());
        const QStringList lines = help.out.split('\n');
        for (const cli::Command& command : cli::commandTable()) {
            const QString name = command.name;
            const auto listed = std::find_if(lines.begin(), lines.end(), [&](const QString& line) {
                return line.startsWith("  " + name + " ");
            });
            QVERIFY2(listed != lines.end(), qPrintable(name));
            QVERIFY2(listed->contains(QString(command.summary).section(' ', 0, 2)),
                     qPrintable(*listed));
        }
        QCOMPARE(runCli({"--help"}).out, help.out);
        QCOMPARE(runCli({"-h"}).code, 0);
        const CliRun nothing = runCli({});
        QCOMPARE(nothing.code, 2); // the usage line and one error line, on stderr
        QVERIFY(nothing.out.isEmpty());
        QCOMPARE(nothing.err, QStringLiteral("Usage: paraplan-cli COMMAND [options] [arguments]\n"
                                             "error: no command given (see 'paraplan-cli help' "
                                             "for the commands)\n"));
    }

    void versionAnswers()
    {
        const CliRun run = runCli({"--version"});
        QCOMPARE(run.code, 0);
        QVERIFY(run.out.startsWith("paraplan-cli "));
        QCOMPARE(run.out.count('\n'), 1);
    }

    void searchDeclaresItsSpaceLimits()
    {
        const CliRun help = runCli({"search", "--help"});
        for (const char* option : {"--max-interleave <V>", "--max-micro-batch <N>",
                                   "--tokens-per-step <T>", "--pp-across-nodes"})
            QVERIFY2(help.out.contains(option), option);
        const CliRun run =
            runCli({"search", examplePlan("llama3-70b-dgx-h100.paraplan.json"), "--max-interleave",
                    "2", "--max-micro-batch", "2", "--top", "1", "--json"});
        QCOMPARE(run.code, 0);
        for (const QJsonValue& candidate : json(run)["top"].toArray()) {
            const QJsonObject parallel = candidate.toObject()["parallel"].toObject();
            QVERIFY(parallel["interleave"].toInt() <= 2);
            QVERIFY(parallel["micro_batch"].toInt() <= 2);
        }
    }

    void theBinaryExitsWithTwoOnBadInput()
    {
        const QString binary = QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-cli";
        if (!QFile::exists(binary))
            QSKIP("paraplan-cli not built");
        QProcess process;
        process.start(binary, {"collective", "--op", "all_reduce", "--bytes", "x", "--ranks", "8",
                               "--bw-GBps", "1"});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 2);
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QVERIFY(err.startsWith("error: "));
        QVERIFY(process.readAllStandardOutput().isEmpty());
        process.start(binary, {"collective", "--op", "all_reduce", "--bytes", "141GB", "--ranks",
                               "8", "--bw-GBps", "900"});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 0);
        QVERIFY(QString::fromUtf8(process.readAllStandardOutput()).contains("274 ms"));
    }

    void theBinaryAnswersHelpAndWritesReports()
    {
        const QString binary = QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-cli";
        if (!QFile::exists(binary))
            QSKIP("paraplan-cli not built");
        QProcess process;
        for (const char* command : {"report", "evaluate"}) {
            process.start(binary, {command, "-h"});
            QVERIFY(process.waitForFinished(30000));
            QCOMPARE(process.exitCode(), 0);
            QVERIFY(QString::fromUtf8(process.readAllStandardOutput())
                        .startsWith(QString("Usage: paraplan-cli ") + command));
        }
        // With Qt Widgets the report's tables come out; without, one line says why not.
        // The report's tables, one per run (they need no widgets).
        process.start(binary, {"report", examplePlan("gpt3-175b-dgx-a100.paraplan.json"), "--csv",
                               "--table", "memory"});
        QVERIFY(process.waitForFinished(60000));
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        QCOMPARE(process.exitCode(), 0);
        QVERIFY2(out.startsWith("stage,layers,weights_bytes,"), qPrintable(out));
        QVERIFY(out.endsWith("\r\n"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
