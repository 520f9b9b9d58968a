// Plan files and model imports: the bundled examples, round trips, Hugging Face configs, and
// every kind of bad file getting a message instead of a crash.
#include "modelio.h"
#include "planio.h"
#include "stepmodel.h"
#include "testdata.h"
#include "topologygraph.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

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
        QCOMPARE(plan.figures.hbm_fraction.origin, Origin::Preset);
        QCOMPARE(plan.cluster.nodes, 2);
        QCOMPARE(plan.model.preset, std::string("llama2-7b"));
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
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<int>("experts");
        QTest::addColumn<double>("billions");
        QTest::newRow("llama") << "llama2-7b.json" << 32 << 32 << 0 << 6.74;
        QTest::newRow("mixtral") << "mixtral-8x7b.json" << 32 << 8 << 8 << 46.70;
        QTest::newRow("qwen2") << "qwen2-7b.json" << 28 << 4 << 0 << 7.62;
        QTest::newRow("gpt2") << "gpt2.json" << 12 << 12 << 0 << 0.1244;
    }
    void huggingFaceConfigs()
    {
        QFETCH(QString, file);
        QFETCH(int, layers);
        QFETCH(int, kvHeads);
        QFETCH(int, experts);
        QFETCH(double, billions);
        ModelSpec model;
        std::string error;
        QVERIFY2(loadHuggingFaceConfig(test::dataPath("hf/" + file).toStdString(), &model, &error),
                 error.c_str());
        QCOMPARE(model.layers, layers);
        QCOMPARE(model.kv_heads, kvHeads);
        QCOMPARE(model.experts, experts);
        const double total = countParameters(model).total / 1e9;
        QVERIFY2(std::fabs(total / billions - 1) < 0.01, qPrintable(QString::number(total)));
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

    void unknownArchitectureListsMissingKeys()
    {
        ModelSpec model;
        std::string error;
        QVERIFY(!loadHuggingFaceConfig(test::dataPath("hf/t5-small.json").toStdString(), &model,
                                       &error));
        const QString message = QString::fromStdString(error);
        QVERIFY2(message.contains("model_type 't5'"), error.c_str());
        for (const char* key :
             {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"})
            QVERIFY2(message.contains(key), key);
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
