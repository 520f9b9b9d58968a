// Plan files and model imports: the bundled examples, round trips, Hugging Face configs, and
// every kind of bad file getting a message instead of a crash.
#include "clusterio.h"
#include "modelio.h"
#include "modeljson.h"
#include "planio.h"
#include "stepmodel.h"
#include "testdata.h"
#include "topologygraph.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringEncoder>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <sys/stat.h>

using namespace paraplan;

namespace {

bool anyContains(const std::vector<std::string>& errors, const QString& part)
{
    for (const std::string& error : errors) {
        if (QString::fromStdString(error).contains(part))
            return true;
    }
    return false;
}

const char* kValidPlan = R"({
  "name": "test",
  "model": {"preset": "llama2-7b"},
  "cluster": {"preset": "dgx-a100", "nodes": 2},
  "parallel": {"tp": 2, "pp": 2, "dp": 4, "zero": 1, "sequence_parallel": true,
               "recompute": "selective", "interleave": 2, "micro_batch": 1,
               "global_batch": 64, "rank_order": "tp-cp-dp-pp"},
  "training": {"seq_len": 4096, "dtype": "bf16", "optimizer": "adam",
               "train_tokens": 1e12, "gpu_hour_usd": 2.0},
  "overrides": {"gemm_peak_fraction": 0.8}
})";

} // namespace

class TestPlan : public QObject
{
    Q_OBJECT

private slots:
    void aDrawnClusterReopensAsDrawn()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(R"({"model": {"preset": "llama3-8b"},
            "cluster": {"preset": "dgx-h100", "nodes": 4, "nodes_per_rack": 2},
            "parallel": {"dp": 32, "micro_batch": 1, "global_batch": 32}})",
                                 {}, &plan, &errors, HardwareCatalog::bundled()));
        TopologyGraph graph = graphForPlan(plan, HardwareCatalog::bundled());
        graph.nodes[1].x += 123;
        graph.nodes[2].name = "spare";
        graph.racks[1].name = "row B";
        // Swap one node of each rack: the racks still hold two nodes each.
        std::swap(graph.nodes[1].rack, graph.nodes[2].rack);
        graph.nodes[3].switch_in_service[0] = false;
        QVERIFY(drawingDescribes(graph, plan.cluster, HardwareCatalog::bundled()) ==
                false); // a chip out changes it
        ClusterSpec drawn;
        std::string error;
        QVERIFY(clusterFromGraph(graph, &drawn, &error, HardwareCatalog::bundled()));
        plan.cluster = drawn;
        plan.drawing = std::make_shared<const TopologyGraph>(graph);
        Plan again;
        QVERIFY(planFromJsonText(planToJsonText(plan, HardwareCatalog::bundled()), {}, &again,
                                 &errors, HardwareCatalog::bundled()));
        QVERIFY(again.drawing);
        QCOMPARE(again.drawing->nodes[1].x, graph.nodes[1].x);
        QCOMPARE(again.drawing->nodes[2].name, std::string("spare"));
        QCOMPARE(again.drawing->racks[1].name, std::string("row B"));
        QVERIFY(!again.drawing->nodes[3].switch_in_service[0]);
        QCOMPARE(again.cluster.what_if.nvswitch_chips_out, plan.cluster.what_if.nvswitch_chips_out);
        // A drawing of some other cluster is refused, naming the problem.
        QJsonObject root =
            QJsonDocument::fromJson(
                QByteArray::fromStdString(planToJsonText(plan, HardwareCatalog::bundled())))
                .object();
        QJsonObject cluster = root["cluster"].toObject();
        cluster["nodes"] = 6;
        root["cluster"] = cluster;
        errors.clear();
        QVERIFY(!planFromJsonText(QJsonDocument(root).toJson().toStdString(), {}, &again, &errors,
                                  HardwareCatalog::bundled()));
        QVERIFY(QString::fromStdString(errors.front()).startsWith("drawing"));
    }

    void filesInsideAPlanAreFilesNeverDevicesOrPipes()
    {
        // /dev/stdin (a terminal or a pipe), /proc/self/fd/0 and a FIFO would block the read
        // or read something else; each is refused at once, naming the field.
        QTemporaryDir dir;
        const QString fifo = dir.filePath("pipe.json");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        for (const QString& target : {QString("/dev/stdin"), QString("/proc/self/fd/0"),
                                      QString("/dev/zero"), fifo, dir.path()}) {
            if (QFileInfo(target).isFile())
                continue; // the suite's standard input redirected from a file: a file indeed
            for (const char* field : {"hf_config", "file"}) {
                const bool model = std::strcmp(field, "hf_config") == 0;
                const QString text =
                    QString(R"({"schema": "paraplan-plan/1", "model": %1, "cluster": %2,
                        "parallel": {"tp": 8, "micro_batch": 1, "global_batch": 8}})")
                        .arg(model ? QString(R"({"hf_config": "%1"})").arg(target)
                                   : QString(R"({"preset": "llama3-8b"})"),
                             model ? QString(R"({"preset": "dgx-h100", "nodes": 1})")
                                   : QString(R"({"file": "%1"})").arg(target));
                Plan plan;
                std::vector<std::string> errors;
                QVERIFY(!planFromJsonText(text.toStdString(), dir.path().toStdString(), &plan,
                                          &errors, HardwareCatalog::bundled()));
                const std::string& e = errors.front();
                QVERIFY2(e.find(model ? "model.hf_config" : "cluster.file") != std::string::npos &&
                             e.find("not a file") != std::string::npos,
                         e.c_str());
            }
        }
    }

    void saveOpenSaveIsByteIdentical_data()
    {
        QTest::addColumn<QString>("path");
        const QString source = QStringLiteral(PARAPLAN_SOURCE_DIR);
        for (const QString& folder : {source + "/resources/examples", source + "/tests/data/plans",
                                      source + "/tests/data/logs"}) {
            for (const QString& name : QDir(folder).entryList({"*.json"}, QDir::Files))
                QTest::newRow(qPrintable(name)) << folder + "/" + name;
        }
    }

    void saveOpenSaveIsByteIdentical()
    {
        // A plan saved, opened and saved again is the same bytes: nothing drifts (a preset's id
        // and origin, a figure's source, a file reference) however often a plan is saved.
        QFETCH(QString, path);
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY2(loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled()),
                 errors.empty() ? "" : errors.front().c_str());
        const std::string base = QFileInfo(path).absolutePath().toStdString();
        const std::string first = planToJsonText(plan, HardwareCatalog::bundled());
        Plan reopened;
        QVERIFY2(planFromJsonText(first, base, &reopened, &errors, HardwareCatalog::bundled()),
                 errors.empty() ? "" : errors.front().c_str());
        const std::string second = planToJsonText(reopened, HardwareCatalog::bundled());
        if (first != second) {
            const QStringList a = QString::fromStdString(first).split('\n');
            const QStringList b = QString::fromStdString(second).split('\n');
            int line = 0;
            while (line < a.size() && line < b.size() && a[line] == b[line])
                ++line;
            QFAIL(qPrintable(QString("line %1 differs:\n  first:  %2\n  second: %3")
                                 .arg(line + 1)
                                 .arg(a.value(line), b.value(line))));
        }
    }

    void referencesStayReferencesAndPresetsStayPresets()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath("a");
        QVERIFY(QDir().mkpath(a) && QDir().mkpath(dir.filePath("b")));
        QVERIFY(QFile::copy(test::dataPath("hf/llama2-7b.json"), a + "/config.json"));
        ClusterSpec cluster;
        std::string error;
        ClusterOptions options;
        options.nodes = 2;
        QVERIFY(
            clusterFromPreset("dgx-a100", options, &cluster, &error, HardwareCatalog::bundled()));
        auto writeCluster = [&](const std::string& name) {
            cluster.name = name;
            QFile file(a + "/mycluster.json");
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(QByteArray::fromStdString(clusterToJsonText(cluster)));
        };
        writeCluster("first");
        const QString planPath = a + "/plan.json";
        {
            QFile plan(planPath);
            QVERIFY(plan.open(QIODevice::WriteOnly));
            plan.write(R"({"schema": "paraplan-plan/1", "model": {"hf_config": "config.json"},
                "cluster": {"file": "mycluster.json", "nodes": 2},
                "parallel": {"tp": 2, "dp": 8, "micro_batch": 1, "global_batch": 64},
                "training": {"seq_len": 4096}})");
        }
        Plan plan;
        std::vector<std::string> errors;
        auto load = [&](const QString& path) {
            errors.clear();
            QVERIFY2(loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled()),
                     errors.empty() ? "" : errors.front().c_str());
        };
        load(planPath);
        // Saved beside it: the names as written; the cluster's datasheet figures keep their
        // preset origin and the cluster its id.
        QVERIFY(savePlan(planPath.toStdString(), plan, &error, HardwareCatalog::bundled()));
        QFile saved(planPath);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        const QByteArray text = saved.readAll();
        saved.close();
        QVERIFY2(text.contains(R"("hf_config": "config.json")"), text.constData());
        QVERIFY2(text.contains(R"("file": "mycluster.json")"), text.constData());
        QCOMPARE(plan.cluster.preset, std::string("dgx-a100"));
        QCOMPARE(plan.cluster.node.nvlink_link_GBps.origin, Origin::Preset);
        // A later edit of the cluster file reaches the saved plan.
        writeCluster("second");
        load(planPath);
        QCOMPARE(plan.cluster.name, std::string("second"));
        // Saved in another folder: the names still reach the same files.
        const QString elsewhere = dir.filePath("b/plan.json");
        QVERIFY(savePlan(elsewhere.toStdString(), plan, &error, HardwareCatalog::bundled()));
        load(elsewhere);
        QCOMPARE(plan.cluster.name, std::string("second"));
        QCOMPARE(plan.model.layers, 32);
        // Edited in the plan: embedded, the file left alone.
        plan.cluster.nodes = 4;
        plan.model.layers = 16;
        const std::string embedded = planToJsonText(plan, HardwareCatalog::bundled());
        QVERIFY(embedded.find("\"file\"") == std::string::npos);
        QVERIFY(embedded.find("\"hf_config\"") == std::string::npos);
        QVERIFY(embedded.find("\"layers\": 16") != std::string::npos);
    }

    void wideTextFilesAreNamedAsSuch()
    {
        // A plan saved as UTF-16 or UTF-32 (with or without a byte-order mark) is named as
        // such, not "illegal value"; a UTF-8 byte-order mark is read past.
        QFile example(QStringLiteral(PARAPLAN_SOURCE_DIR) +
                      "/resources/examples/llama3-70b-dgx-h100.paraplan.json");
        QVERIFY(example.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(example.readAll());
        QTemporaryDir dir;
        const struct
        {
            QStringConverter::Encoding encoding;
            bool bom;
            const char* named;
        } cases[] = {{QStringConverter::Utf16LE, true, "UTF-16LE"},
                     {QStringConverter::Utf16LE, false, "UTF-16LE"},
                     {QStringConverter::Utf16BE, true, "UTF-16BE"},
                     {QStringConverter::Utf16BE, false, "UTF-16BE"},
                     {QStringConverter::Utf32LE, true, "UTF-32LE"},
                     {QStringConverter::Utf32BE, false, "UTF-32BE"},
                     {QStringConverter::Utf8, true, nullptr}};
        for (const auto& c : cases) {
            QStringEncoder encode(c.encoding, c.bom ? QStringConverter::Flag::WriteBom
                                                    : QStringConverter::Flag::Default);
            const QString path = dir.filePath("plan.json");
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(encode(text));
            file.close();
            Plan plan;
            std::vector<std::string> errors;
            const bool read =
                loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled());
            if (!c.named) {
                QVERIFY2(read, errors.empty() ? "" : errors.front().c_str());
                continue;
            }
            QVERIFY(!read);
            QVERIFY2(errors.front().find(std::string("is ") + c.named) != std::string::npos,
                     errors.front().c_str());
        }
    }

    void bundledExamplesEvaluate_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(PARAPLAN_SOURCE_DIR) + "/resources/examples");
        const QStringList plans = dir.entryList({"*.json"});
        QVERIFY(plans.size() >= 2);
        for (const QString& name : plans)
            QTest::newRow(name.toUtf8().constData()) << dir.filePath(name);
    }
    void bundledExamplesEvaluate()
    {
        QFETCH(QString, path);
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY2(loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled()),
                 errors.empty() ? "" : errors.front().c_str());
        const StepCost cost = StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
        QVERIFY2(cost.ok, cost.issues.empty() ? "" : cost.issues.front().message.c_str());
        QVERIFY(cost.fits);
        QVERIFY(cost.metrics.mfu > 0.2 && cost.metrics.mfu < 0.8);
    }

    // The two-rack example sets 8 nodes per rack where the DGX H100 preset's source gives 32:
    // the source shown says so rather than contradict the plan; the GPT-3 example keeps the
    // preset's rack and shows the source as it is.
    void clusterSourceSaysWhenThePlanSetsTheRackSize()
    {
        const QString examples = PARAPLAN_SOURCE_DIR "/resources/examples/";
        Plan racks, gpt3;
        std::vector<std::string> errors;
        QVERIFY(loadPlan((examples + "llama3-70b-two-racks.paraplan.json").toStdString(), &racks,
                         &errors, HardwareCatalog::bundled()));
        QVERIFY(loadPlan((examples + "gpt3-175b-dgx-a100.paraplan.json").toStdString(), &gpt3,
                         &errors, HardwareCatalog::bundled()));
        const std::string shown = clusterSource(racks.cluster);
        QVERIFY2(shown.find("here 8 nodes per rack, a plan entry, in place of the source's 32") !=
                     std::string::npos,
                 shown.c_str());
        QCOMPARE(clusterSource(gpt3.cluster), gpt3.cluster.source);
        // An edit in the window (the rack size alone) says so too.
        gpt3.cluster.network.nodes_per_rack = 4;
        QVERIFY(clusterSource(gpt3.cluster).find("here 4 nodes per rack") != std::string::npos);
    }

    void readsEveryField()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY2(planFromJsonText(kValidPlan, "", &plan, &errors, HardwareCatalog::bundled()),
                 errors.empty() ? "" : errors.front().c_str());
        QCOMPARE(plan.parallel.tp, 2);
        QCOMPARE(plan.parallel.interleave, 2);
        QCOMPARE(plan.parallel.recompute, Recompute::Selective);
        QVERIFY(plan.parallel.sequence_parallel);
        QCOMPARE(plan.training.seq_len, 4096);
        QCOMPARE(plan.training.train_tokens, 1e12);
        QCOMPARE(plan.figures.gemm_peak_fraction.value, 0.8);
        QCOMPARE(plan.figures.gemm_peak_fraction.origin, Origin::UserEntry);
        // The A100 80GB copy fraction has no published measurement: labelled an assumption.
        QCOMPARE(plan.figures.hbm_fraction.origin, Origin::Assumption);
        QCOMPARE(plan.cluster.nodes, 2);
        QCOMPARE(plan.model.preset, std::string("llama2-7b"));
    }

    void cudaGraphsAndLaunchFiguresRoundTrip()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(kValidPlan, "", &plan, &errors, HardwareCatalog::bundled()));
        QCOMPARE(plan.training.cuda_graphs, CudaGraphs::None);
        QCOMPARE(plan.figures.host_launch_s.origin, Origin::Assumption);
        plan.training.cuda_graphs = CudaGraphs::Layers;
        plan.figures.host_launch_s = {4e-6, Origin::UserEntry, "plan overrides.host_launch_s"};
        const std::string text = planToJsonText(plan, HardwareCatalog::bundled());
        QVERIFY(QString::fromStdString(text).contains("\"cuda_graphs\": \"layers\""));
        Plan again;
        QVERIFY(planFromJsonText(text, {}, &again, &errors, HardwareCatalog::bundled()));
        QCOMPARE(again.training.cuda_graphs, CudaGraphs::Layers);
        QCOMPARE(again.figures.host_launch_s.value, 4e-6);
        QCOMPARE(again.figures.host_launch_s.origin, Origin::UserEntry);
        // An unknown scope is named.
        std::string bad = text;
        const std::string scope = "\"cuda_graphs\": \"layers\"";
        bad.replace(bad.find(scope), scope.size(), "\"cuda_graphs\": \"graphs\"");
        errors.clear();
        QVERIFY(!planFromJsonText(bad, {}, &again, &errors, HardwareCatalog::bundled()));
        QVERIFY(!errors.empty() &&
                errors.front().find("unknown cuda_graphs 'graphs'") != std::string::npos);
    }

    void frameworkReadsAndOldStackStillReads_data()
    {
        QTest::addColumn<QString>("training");
        QTest::addColumn<int>("zero");
        QTest::addColumn<QString>("framework");
        // The default is megatron, whatever the ZeRO stage.
        QTest::newRow("none, zero 1") << "" << 1 << "megatron";
        QTest::newRow("none, zero 3") << "" << 3 << "megatron";
        QTest::newRow("framework") << R"("framework": "deepspeed")" << 1 << "deepspeed";
        QTest::newRow("pytorch-fsdp") << R"("framework": "pytorch-fsdp")" << 3 << "pytorch-fsdp";
        // The older "stack": as it resolved for that file.
        QTest::newRow("stack megatron, zero 3") << R"("stack": "megatron")" << 3 << "megatron";
        QTest::newRow("stack pytorch, zero 1") << R"("stack": "pytorch")" << 2 << "torchtitan";
        QTest::newRow("stack auto, zero 1") << R"("stack": "auto")" << 1 << "megatron";
        QTest::newRow("stack auto, zero 3") << R"("stack": "auto")" << 3 << "torchtitan";
        // Both: the framework wins.
        QTest::newRow("both") << R"("stack": "pytorch", "framework": "megatron")" << 3
                              << "megatron";
    }
    void frameworkReadsAndOldStackStillReads()
    {
        QFETCH(QString, training);
        QFETCH(int, zero);
        QFETCH(QString, framework);
        const QString text =
            QString(R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                        "parallel": {"dp": 8, "zero": %1, "micro_batch": 1, "global_batch": 64},
                        "training": {"seq_len": 4096%2}})")
                .arg(zero)
                .arg(training.isEmpty() ? QString() : ", " + training);
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY2(
            planFromJsonText(text.toStdString(), "", &plan, &errors, HardwareCatalog::bundled()),
            errors.empty() ? "" : errors.front().c_str());
        QCOMPARE(QString(trainingFrameworkName(plan.training.framework)), framework);
        // Saving writes "framework" (never "stack"), and it reads back the same.
        const std::string saved = planToJsonText(plan, HardwareCatalog::bundled());
        const QJsonObject t = QJsonDocument::fromJson(QByteArray::fromStdString(saved))
                                  .object()["training"]
                                  .toObject();
        QCOMPARE(t["framework"].toString(), framework);
        QVERIFY(!t.contains("stack"));
        Plan back;
        QVERIFY(planFromJsonText(saved, "", &back, &errors, HardwareCatalog::bundled()));
        QCOMPARE(back.training.framework, plan.training.framework);
    }

    void frameworkRefusesWhatItCannotRun_data()
    {
        QTest::addColumn<QString>("framework");
        QTest::addColumn<QString>("parallel");
        QTest::addColumn<QString>("rule");
        QTest::newRow("torchtitan zero 1") << "torchtitan"
                                           << R"("dp": 8, "zero": 1)"
                                           << "framework-zero";
        QTest::newRow("fsdp1 pp") << "pytorch-fsdp"
                                  << R"("dp": 4, "pp": 2, "zero": 3)"
                                  << "framework-pp";
        QTest::newRow("deepspeed zero 3 pp") << "deepspeed"
                                             << R"("dp": 4, "pp": 2, "zero": 3)"
                                             << "framework-zero-pp";
        QTest::newRow("deepspeed interleave") << "deepspeed"
                                              << R"("dp": 2, "pp": 4, "interleave": 2, "zero": 1)"
                                              << "framework-interleave";
        QTest::newRow("deepspeed tp overlap") << "deepspeed"
                                              << R"("dp": 4, "tp": 2, "tp_overlap": "ag-gemm")"
                                              << "framework-tp-overlap";
        // The same layouts where each can run them: nothing to refuse.
        QTest::newRow("torchtitan zero 3") << "torchtitan"
                                           << R"("dp": 8, "zero": 3)"
                                           << "";
        QTest::newRow("torchtitan zero 1, dp 1") << "torchtitan"
                                                 << R"("tp": 8, "zero": 1)"
                                                 << "";
        QTest::newRow("megatron zero 3 pp") << "megatron"
                                            << R"("dp": 4, "pp": 2, "zero": 3)"
                                            << "";
        QTest::newRow("deepspeed zero 1 pp") << "deepspeed"
                                             << R"("dp": 4, "pp": 2, "zero": 1)"
                                             << "";
    }
    void frameworkRefusesWhatItCannotRun()
    {
        QFETCH(QString, framework);
        QFETCH(QString, parallel);
        QFETCH(QString, rule);
        const QString text =
            QString(R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                        "parallel": {%1, "micro_batch": 1, "global_batch": 64},
                        "training": {"seq_len": 4096, "framework": "%2"}})")
                .arg(parallel, framework);
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY2(
            planFromJsonText(text.toStdString(), "", &plan, &errors, HardwareCatalog::bundled()),
            errors.empty() ? "" : errors.front().c_str());
        const std::vector<PlanIssue> issues = validatePlan(plan, HardwareCatalog::bundled());
        const PlanIssue* found = nullptr;
        for (const PlanIssue& issue : issues)
            found = issue.rule.rfind("framework", 0) == 0 ? &issue : found;
        if (rule.isEmpty()) {
            QVERIFY2(!found, found ? found->message.c_str() : "");
            return;
        }
        QVERIFY(found);
        QCOMPARE(QString::fromStdString(found->rule), rule);
        // The message names the framework.
        QVERIFY2(found->message.rfind(framework.toStdString() + " cannot run", 0) == 0,
                 found->message.c_str());
    }

    void roundTripKeepsTheCost()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(kValidPlan, "", &plan, &errors, HardwareCatalog::bundled()));
        QTemporaryDir dir;
        const std::string path = dir.filePath("plan.json").toStdString();
        std::string error;
        QVERIFY2(savePlan(path, plan, &error, HardwareCatalog::bundled()), error.c_str());
        Plan loaded;
        QVERIFY2(loadPlan(path, &loaded, &errors, HardwareCatalog::bundled()),
                 errors.empty() ? "" : errors.front().c_str());
        const StepCost a = StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
        const StepCost b = StepEngine(loaded.cluster, HardwareCatalog::bundled()).evaluate(loaded);
        QVERIFY(a.ok && b.ok);
        QCOMPARE(b.step_time_s, a.step_time_s);
        QCOMPARE(b.max_stage_total_bytes, a.max_stage_total_bytes);
        QCOMPARE(loaded.figures.gemm_peak_fraction.value, 0.8);
    }

    void saveFailsCleanly()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(kValidPlan, "", &plan, &errors, HardwareCatalog::bundled()));
        std::string error;
        QVERIFY(!savePlan("/nonexistent-dir/plan.json", plan, &error, HardwareCatalog::bundled()));
        QVERIFY(QString::fromStdString(error).contains("cannot write"));
    }

    void huggingFaceConfigs_data()
    {
        // Published totals and active parameters (billions); tolerance 2%.
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<int>("experts");
        QTest::addColumn<double>("billions");
        QTest::addColumn<double>("activeBillions"); // 0: dense (= total)
        QTest::newRow("llama") << "llama2-7b.json" << 32 << 32 << 0 << 6.74 << 0.0;
        QTest::newRow("mixtral") << "mixtral-8x7b.json" << 32 << 8 << 8 << 46.70 << 12.9;
        QTest::newRow("qwen2") << "qwen2-7b.json" << 28 << 4 << 0 << 7.62 << 0.0;
        QTest::newRow("gpt2") << "gpt2.json" << 12 << 12 << 0 << 0.1244 << 0.0;
        // Qwen1.5-MoE-A2.7B model card: 14.3B in total, 2.7B activated.
        QTest::newRow("qwen2_moe") << "qwen1.5-moe-a2.7b.json" << 24 << 16 << 60 << 14.3 << 2.7;
        // Qwen3-30B-A3B model card: 30.5B in total, 3.3B activated.
        QTest::newRow("qwen3_moe") << "qwen3-30b-a3b.json" << 48 << 4 << 128 << 30.5 << 3.3;
        // DeepSeek-V3 technical report (arXiv:2412.19437): 671B in total, 37B activated.
        QTest::newRow("deepseek_v3") << "deepseek-v3.json" << 61 << 128 << 256 << 671.0 << 37.0;
        // Gemma 2 report (arXiv:2408.00118), 9B: 917,504,000 embedding + 8,324,201,984 others.
        QTest::newRow("gemma2") << "gemma-2-9b.json" << 42 << 8 << 0 << 9.2417 << 0.0;
        // Gemma report (arXiv:2403.08295), 7B: 786,432,000 embedding + 7,751,248,896 others.
        QTest::newRow("gemma") << "gemma-7b.json" << 28 << 16 << 0 << 8.5377 << 0.0;
        // Phi-3 report (arXiv:2404.14219): phi-3-mini, 3.8B.
        QTest::newRow("phi3") << "phi-3-mini-4k.json" << 32 << 32 << 0 << 3.8 << 0.0;
        // GPT-NeoX-20B paper (arXiv:2204.06745): 20,554,567,680 parameters.
        QTest::newRow("gpt_neox") << "gpt-neox-20b.json" << 44 << 64 << 0 << 20.55 << 0.0;
        // tiiuae/falcon-7b model card: 7B; multi-query attention (one KV head).
        QTest::newRow("falcon") << "falcon-7b.json" << 32 << 1 << 0 << 7.0 << 0.0;
    }
    void huggingFaceConfigs()
    {
        QFETCH(QString, file);
        QFETCH(int, layers);
        QFETCH(int, kvHeads);
        QFETCH(int, experts);
        QFETCH(double, billions);
        QFETCH(double, activeBillions);
        ModelSpec model;
        std::string error;
        QVERIFY2(loadHuggingFaceConfig(test::dataPath("hf/" + file).toStdString(), &model, &error),
                 error.c_str());
        QCOMPARE(model.layers, layers);
        QCOMPARE(model.kv_heads, kvHeads);
        QCOMPARE(model.experts, experts);
        const ParameterCount count = countParameters(model);
        const double total = count.total / 1e9;
        QVERIFY2(std::fabs(total / billions - 1) < 0.02, qPrintable(QString::number(total)));
        const double active = count.active_per_token / 1e9;
        const double wanted = activeBillions > 0 ? activeBillions : billions;
        QVERIFY2(std::fabs(active / wanted - 1) < 0.02, qPrintable(QString::number(active)));
        // The FLOPs agree with the parameters: at s = 1 (no attention-score term to speak of),
        // one token's training FLOPs are 6 x the weight matrices it touches, which is the
        // active count less the embeddings, norms, routers and biases (under 1%), plus the LM
        // head's V x h product (a matrix product even when tied to the embedding).
        const double flops = modelFlopsPerStep(model, 1, 1);
        const double matrices = count.active_per_token - count.embedding - count.lm_head -
                                count.final_norm -
                                model.layers * (count.norms_per_layer + count.router_per_layer) +
                                double(model.vocab) * model.hidden;
        QVERIFY2(std::fabs(flops / (6 * matrices) - 1) < 0.01,
                 qPrintable(QString::number(flops / (6 * matrices))));
        // The context window stays information; it is not the training sequence.
        QVERIFY(model.max_positions >= 0);
    }

    void huggingFaceImportRefusesWhatItCannotModel_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("unknown model_type")
            << R"({"model_type":"mamba","hidden_size":768,"num_hidden_layers":24})"
            << "cannot read model_type 'mamba': Paraplan reads the families llama";
        QTest::newRow("no model_type")
            << R"({"hidden_size":768,"num_hidden_layers":24,"num_attention_heads":12})"
            << "names no model_type";
        QTest::newRow("absurd hidden")
            << R"({"model_type":"llama","hidden_size":4294967296,"num_hidden_layers":2,
                  "num_attention_heads":8,"intermediate_size":64,"vocab_size":100})"
            << "config.hidden_size: 4294967296 is outside 1..1048576";
        QTest::newRow("absurd layers")
            << R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":100000,
                  "num_attention_heads":8,"intermediate_size":64,"vocab_size":100})"
            << "config.num_hidden_layers: 100000 is outside 1..16384";
        QTest::newRow("absurd vocab")
            << R"({"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":8,"vocab_size":1e12})"
            << "config.vocab_size: 1000000000000 is outside 1..134217728";
        QTest::newRow("context window beyond 64 bits") // found by fuzz_hfconfig
            << R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,
                  "num_attention_heads":8,"intermediate_size":64,"vocab_size":100,
                  "max_position_embeddings":32e68})"
            << "config.max_position_embeddings: 3.2e+69 is outside 1..16777216";
        QTest::newRow("absurd experts")
            << R"({"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":2,
                  "num_attention_heads":8,"intermediate_size":64,"vocab_size":100,
                  "num_experts":1000000,"num_experts_per_tok":2,"moe_intermediate_size":32})"
            << "config.num_experts: 1000000 is outside 1..65536";
        QTest::newRow("gpt2 hidden that 4 x would overflow")
            << R"({"model_type":"gpt2","n_embd":1073741824,"n_layer":2,"n_head":8,"vocab_size":9})"
            << "config.n_embd: 1073741824 is outside";
        QTest::newRow("fractional size")
            << R"({"model_type":"mistral","hidden_size":64.5,"num_hidden_layers":2,
                  "num_attention_heads":8,"intermediate_size":64,"vocab_size":100})"
            << "config.hidden_size: not a whole number";
        QTest::newRow("more experts per token than experts")
            << R"({"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":2,
                  "num_attention_heads":8,"intermediate_size":64,"vocab_size":100,
                  "num_experts":4,"num_experts_per_tok":8,"moe_intermediate_size":32})"
            << "more than the 4 experts";
    }
    void huggingFaceImportRefusesWhatItCannotModel()
    {
        QFETCH(QString, config);
        QFETCH(QString, messagePart);
        ModelSpec model;
        std::vector<std::string> errors;
        QVERIFY(!modelFromHuggingFaceConfig(config.toStdString(), "test", &model, &errors));
        QVERIFY(!errors.empty());
        QVERIFY2(QString::fromStdString(errors.front()).contains(messagePart),
                 errors.front().c_str());
    }

    void huggingFaceImportSaysWhatItApproximates()
    {
        ModelSpec model;
        std::string error;
        std::vector<std::string> warnings;
        QVERIFY(loadHuggingFaceConfig(test::dataPath("hf/deepseek-v3.json").toStdString(), &model,
                                      &error, &warnings));
        QCOMPARE(model.dense_layers, 3);
        QCOMPARE(model.shared_expert_ffn_hidden, 2048);
        QCOMPARE(model.kv_lora_rank, 512);
        QCOMPARE(model.headDim(), 192);
        QCOMPARE(model.valueHeadDim(), 128);
        QCOMPARE(model.max_positions, 163840); // kept as the window, not the sequence
        QString all;
        for (const std::string& w : warnings)
            all += QString::fromStdString(w) + "\n";
        QVERIFY2(all.contains("latent attention") && all.contains("multi-token-prediction"),
                 qPrintable(all));
        warnings.clear();
        QVERIFY(loadHuggingFaceConfig(test::dataPath("hf/gemma-2-9b.json").toStdString(), &model,
                                      &error, &warnings));
        QCOMPARE(model.mlp, MlpKind::SwiGLU); // the gate is kept
        QCOMPARE(model.headDim(), 256);       // not 3584 / 16 = 224
        QVERIFY(model.tied_embeddings);
        QVERIFY(!warnings.empty());
        // A plan-free model reading keeps MLA and shared experts through its JSON.
        QVERIFY(loadHuggingFaceConfig(test::dataPath("hf/deepseek-v3.json").toStdString(), &model,
                                      &error));
        ModelSpec copy;
        std::vector<std::string> errors;
        json::Reader reader(&errors);
        applyModelFields(modelToJson(model), "model", reader, &copy);
        QVERIFY(errors.empty());
        QCOMPARE(countParameters(copy).total, countParameters(model).total);
    }

    void llamaConfigMatchesThePreset()
    {
        ModelSpec imported;
        ModelSpec preset;
        std::string error;
        QVERIFY(loadHuggingFaceConfig(test::dataPath("hf/llama2-7b.json").toStdString(), &imported,
                                      &error));
        QVERIFY(modelFromPreset("llama2-7b", &preset, &error));
        QCOMPARE(countParameters(imported).total, countParameters(preset).total);
        QCOMPARE(imported.mlp, MlpKind::SwiGLU);
    }

    void unknownArchitectureListsTheFamilies()
    {
        ModelSpec model;
        std::string error;
        QVERIFY(!loadHuggingFaceConfig(test::dataPath("hf/t5-small.json").toStdString(), &model,
                                       &error));
        const QString message = QString::fromStdString(error);
        QVERIFY2(message.contains("model_type 't5'"), error.c_str());
        for (const char* family :
             {"llama", "qwen2_moe", "deepseek_v3", "gemma2", "phi3", "gpt_neox", "falcon", "gpt2"})
            QVERIFY2(message.contains(family), family);
    }

    void planWithRelativeHuggingFaceConfig()
    {
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY2(loadPlan(test::dataPath("plans/llama-hf.json").toStdString(), &plan, &errors,
                          HardwareCatalog::bundled()),
                 errors.empty() ? "" : errors.front().c_str());
        QCOMPARE(plan.model.hidden, 4096);
        QVERIFY(StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan).ok);
    }

    void badPlanFiles_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("not json") << "{"
                                  << "invalid JSON";
        QTest::newRow("array") << "[]"
                               << "top level must be a JSON object";
        QTest::newRow("unknown top key")
            << R"({"modle": {}, "model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"micro_batch": 1, "global_batch": 8}})"
            << "modle: unknown key";
        QTest::newRow("unknown framework")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"micro_batch": 1, "global_batch": 8},
                  "training": {"framework": "jax"}})"
            << "training.framework";
        QTest::newRow("missing parallel")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"}})"
            << "parallel: missing";
        QTest::newRow("missing model")
            << R"({"cluster": {"preset": "dgx-a100"}, "parallel": {"micro_batch": 1, "global_batch": 8}})"
            << "model: missing";
        QTest::newRow("unknown model preset")
            << R"({"model": {"preset": "llama9"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"micro_batch": 1, "global_batch": 8}})"
            << "unknown model preset 'llama9'";
        QTest::newRow("unknown parallel key")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"tensor": 8, "micro_batch": 1, "global_batch": 8}})"
            << "parallel.tensor: unknown key";
        QTest::newRow("string degree")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"tp": "8", "micro_batch": 1, "global_batch": 8}})"
            << "parallel.tp: must be a number";
        QTest::newRow("fractional degree")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"tp": 2.5, "micro_batch": 1, "global_batch": 8}})"
            << "parallel.tp: must be a whole number";
        QTest::newRow("bad recompute")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"recompute": "some", "micro_batch": 1, "global_batch": 8}})"
            << "unknown recompute 'some'";
        QTest::newRow("bad dtype")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"micro_batch": 1, "global_batch": 8}, "training": {"dtype": "fp4"}})"
            << "unknown dtype 'fp4'";
        QTest::newRow("bad rank order")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"micro_batch": 1, "global_batch": 8, "rank_order": "tp-tp-dp-pp"}})"
            << "rank_order";
        QTest::newRow("cluster section not object")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": "dgx-a100",
                  "parallel": {"micro_batch": 1, "global_batch": 8}})"
            << "cluster: must be an object";
        QTest::newRow("missing cluster file")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"file": "nope.json"},
                  "parallel": {"micro_batch": 1, "global_batch": 8}})"
            << "nope.json";
        QTest::newRow("unknown override")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"micro_batch": 1, "global_batch": 8}, "overrides": {"speed": 2}})"
            << "overrides.speed: unknown key";
        QTest::newRow("huge degree")
            << R"({"model": {"preset": "llama2-7b"}, "cluster": {"preset": "dgx-a100"},
                  "parallel": {"dp": 1e12, "micro_batch": 1, "global_batch": 8}})"
            << "whole number";
    }
    void badPlanFiles()
    {
        QFETCH(QString, text);
        QFETCH(QString, messagePart);
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(
            !planFromJsonText(text.toStdString(), "", &plan, &errors, HardwareCatalog::bundled()));
        QVERIFY2(anyContains(errors, messagePart),
                 errors.empty() ? "no error" : errors.front().c_str());
    }

    void everyFieldRemovedOrMistyped()
    {
        // Remove each key of the valid plan in turn, then set it to a string: the plan either
        // loads and evaluates or is rejected with messages; nothing crashes.
        const QJsonObject root = QJsonDocument::fromJson(kValidPlan).object();
        int rejected = 0;
        int variants = 0;
        for (const QString& section : root.keys()) {
            QJsonObject sectionObject = root.value(section).toObject();
            const QStringList keys =
                root.value(section).isObject() ? sectionObject.keys() : QStringList{QString()};
            for (const QString& key : keys) {
                for (int mode = 0; mode < 3; ++mode) {
                    QJsonObject variant = root;
                    if (key.isEmpty()) {
                        if (mode == 0)
                            variant.remove(section);
                        else
                            variant[section] = mode == 1 ? QJsonValue("x") : QJsonValue(-1e300);
                    } else {
                        QJsonObject inner = sectionObject;
                        if (mode == 0)
                            inner.remove(key);
                        else
                            inner[key] = mode == 1 ? QJsonValue("x") : QJsonValue(-1e300);
                        variant[section] = inner;
                    }
                    Plan plan;
                    std::vector<std::string> errors;
                    ++variants;
                    if (!planFromJsonText(QJsonDocument(variant).toJson().toStdString(), "", &plan,
                                          &errors, HardwareCatalog::bundled())) {
                        QVERIFY(!errors.empty());
                        ++rejected;
                        continue;
                    }
                    const StepCost cost =
                        StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
                    if (!cost.ok) {
                        QVERIFY(!cost.issues.empty());
                        ++rejected;
                    } else {
                        QVERIFY(std::isfinite(cost.step_time_s) && cost.step_time_s > 0);
                    }
                }
            }
        }
        QVERIFY(variants > 40);
        QVERIFY(rejected > variants / 2);
    }
};

QTEST_GUILESS_MAIN(TestPlan)
#include "tst_plan.moc"
