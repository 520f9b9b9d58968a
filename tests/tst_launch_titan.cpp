// torchtitan TOML and DeepSpeed JSON export (and torchtitan import): every key written is an
// option of the pinned release with the right type (tests/data/launch/*.keys), the batch
// arithmetic holds, what the target cannot say is a warning, and a torchtitan file reads back
// into the plan it came from.

#include "launchtitan.h"
#include "launchtitandetail.h"
#include "modelio.h"
#include "planio.h"
#include "testdata.h"
#include "tomlsubset.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <map>

using namespace paraplan;

namespace {

// The exports as exportLaunchConfig gives them (the file named from the plan), or named.
LaunchConfig exportTorchtitan(const Plan& plan, const HardwareCatalog& catalog)
{
    return exportLaunchConfig(plan, LaunchTarget::Torchtitan, catalog);
}
LaunchConfig exportDeepSpeed(const Plan& plan, const HardwareCatalog& catalog)
{
    return exportLaunchConfig(plan, LaunchTarget::DeepSpeed, catalog);
}

std::string withoutLinesContaining(const std::string& text, const std::string& part)
{
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = std::min(text.find('\n', start), text.size());
        const std::string line = text.substr(start, end + 1 - start);
        if (line.find(part) == std::string::npos)
            out += line;
        start = end + 1;
    }
    return out;
}

const HardwareCatalog& catalog()
{
    return HardwareCatalog::bundled();
}

/// section.key -> type, from a pinned .keys file (comments start with #).
std::map<std::string, std::string> pinnedKeys(const QString& name)
{
    std::map<std::string, std::string> keys;
    QFile file(test::dataPath("launch/" + name));
    if (!file.open(QIODevice::ReadOnly))
        return keys;
    for (const QByteArray& raw : file.readAll().split('\n')) {
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const QList<QByteArray> parts = line.simplified().split(' ');
        if (parts.size() == 2)
            keys[parts[0].toStdString()] = parts[1].toStdString();
    }
    return keys;
}

Plan examplePlan(const QString& file)
{
    Plan plan;
    std::vector<std::string> errors;
    const QString path = QStringLiteral(PARAPLAN_SOURCE_DIR) + "/resources/examples/" + file;
    if (!loadPlan(path.toStdString(), &plan, &errors, catalog()))
        qWarning("%s: %s", qPrintable(file), errors.empty() ? "?" : errors.front().c_str());
    return plan;
}

struct NamedPlan
{
    QString name;
    Plan plan;
};

/// Every bundled example and the edited layouts the brief names, each valid.
std::vector<NamedPlan> allPlans()
{
    std::vector<NamedPlan> plans;
    const QStringList files =
        QDir(QStringLiteral(PARAPLAN_SOURCE_DIR) + "/resources/examples").entryList({"*.json"});
    for (const QString& f : files)
        plans.push_back({f, examplePlan(f)});
    const Plan llama = examplePlan("llama3-70b-dgx-h100.paraplan.json"); // 128 H100, tp 8 pp 4 dp 4
    auto edit = [&](const QString& name, auto change) {
        Plan p = llama;
        p.name = name.toStdString();
        change(p.parallel, p.training);
        plans.push_back({name, p});
    };
    edit("fsdp-zero3", [](ParallelLayout& l, TrainingSettings& t) {
        l.pp = 1, l.dp = 16, l.zero = 3, l.interleave = 1;
        t.framework = TrainingFramework::Torchtitan; // FSDP2, as the name says
    });
    edit("hsdp-dp_shard", [](ParallelLayout& l, TrainingSettings& t) {
        l.pp = 1, l.dp = 16, l.zero = 3, l.dp_shard = 4, l.interleave = 1;
        t.framework = TrainingFramework::Torchtitan; // FSDP2, as the name says
    });
    edit("pp-interleave2", [](ParallelLayout& l, TrainingSettings&) { l.interleave = 2; });
    edit("cp2", [](ParallelLayout& l, TrainingSettings& t) {
        l.pp = 1, l.cp = 2, l.dp = 8, l.interleave = 1, l.zero = 3, l.global_batch = 256;
        t.framework = TrainingFramework::Torchtitan; // FSDP2, as the name says
    });
    edit("fp8", [](ParallelLayout&, TrainingSettings& t) { t.dtype = Dtype::FP8; });
    edit("recompute-full",
         [](ParallelLayout& l, TrainingSettings&) { l.recompute = Recompute::Full; });
    edit("recompute-none-ddp",
         [](ParallelLayout& l, TrainingSettings&) { l.recompute = Recompute::None, l.zero = 0; });
    edit("zero2-uneven-stages", [](ParallelLayout& l, TrainingSettings&) {
        l.zero = 2, l.interleave = 1, l.stage_layers = {19, 21, 21, 19};
    });
    Plan moe = llama; // Mixtral 8x7B, experts over 2 of the 4 data-parallel ranks
    std::string error;
    modelFromPreset("mixtral-8x7b", &moe.model, &error);
    moe.name = "moe-ep2";
    moe.parallel.ep = 2, moe.parallel.interleave = 2;
    plans.push_back({"moe-ep2", moe});
    return plans;
}

bool anyContains(const std::vector<std::string>& lines, const std::string& a,
                 const std::string& b = {})
{
    for (const std::string& l : lines)
        if (l.find(a) != std::string::npos && l.find(b) != std::string::npos)
            return true;
    return false;
}

std::string firstIssue(const Plan& plan)
{
    const auto issues = validatePlan(plan, HardwareCatalog::bundled());
    return issues.empty() ? std::string() : issues.front().message;
}

std::string joined(const std::vector<std::string>& lines)
{
    std::string out;
    for (const std::string& l : lines)
        out += l + "\n";
    return out;
}

/// Every leaf (and object) of a JSON object as dotted.path -> type.
void flatten(const QJsonObject& o, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>* out)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        const std::string key = prefix + it.key().toStdString();
        const QJsonValue v = it.value();
        std::string type = v.isBool()     ? "bool"
                           : v.isString() ? "str"
                           : v.isObject() ? "object"
                                          : "?";
        if (v.isDouble())
            type = v.toDouble() == std::floor(v.toDouble()) ? "int" : "float";
        out->push_back({key, type});
        if (v.isObject())
            flatten(v.toObject(), key + ".", out);
    }
}

} // namespace

class TstLaunchTitan : public QObject
{
    Q_OBJECT

private slots:
    void plansAreValid();
    void tomlReader();
    void tomlReaderErrors();
    void torchtitanKeysArePinned();
    void importerKnowsThePinnedKeys();
    void torchtitanLayout();
    void torchtitanWarnings();
    void torchtitanAsyncTpNeedsCompile();
    void torchtitanSeqLenDivisor();
    void nearestFlavorKeepsTheBaseModel();
    void torchtitanRoundTrip();
    void torchtitanImportNegative();
    void torchtitanImportRefusals();
    void frameworksOwnFilesImport();
    void deepspeedKeysArePinned();
    void deepspeedBatchArithmetic();
    void deepspeedWarningsAndLauncher();
    void invalidPlanIsAnError();
};

void TstLaunchTitan::plansAreValid()
{
    const auto plans = allPlans();
    QVERIFY(plans.size() >= 11);
    for (const NamedPlan& p : plans) {
        QVERIFY2(firstIssue(p.plan).empty(),
                 qPrintable(p.name + ": " + QString::fromStdString(firstIssue(p.plan))));
    }
}

void TstLaunchTitan::tomlReader()
{
    const std::string text = "# comment\n"
                             "top = 1\n"
                             "[a]\n"
                             "s = \"x \\\"y\\\" \\\\ z\"  # trailing\n"
                             "lit = 'c:\\path'\n"
                             "n = -1_000\n"
                             "h = 0x1F\n"
                             "f = 1.5e3\n"
                             "b = false\n"
                             "dotted.key = true\n"
                             "\"quoted key\" = 2\n"
                             "[a.b.c]\n"
                             "arr = [\n  [\"p\", \"q\"],  # one\n  [\"r\"],\n]\n"
                             "empty = []\n";
    TomlDocument doc;
    std::vector<std::string> errors;
    QVERIFY2(parseToml(text, &doc, &errors), joined(errors).c_str());
    QCOMPARE(doc.find("top")->value.integer, 1LL);
    QCOMPARE(doc.find("a.s")->value.text, std::string("x \"y\" \\ z"));
    QCOMPARE(doc.find("a.lit")->value.text, std::string("c:\\path"));
    QCOMPARE(doc.find("a.n")->value.integer, -1000LL);
    QCOMPARE(doc.find("a.h")->value.integer, 31LL);
    QCOMPARE(doc.find("a.f")->value.number, 1500.0);
    QCOMPARE(doc.find("a.b")->value.kind, TomlValue::Kind::Bool);
    QVERIFY(doc.find("a.dotted.key")->value.boolean);
    QCOMPARE(doc.find("a.quoted key")->value.integer, 2LL);
    const TomlEntry* arr = doc.find("a.b.c.arr");
    QVERIFY(arr);
    QCOMPARE(arr->line, 13);
    QVERIFY(tomlValueHasType(arr->value, "list[list[str]]"));
    QVERIFY(!tomlValueHasType(arr->value, "list[str]"));
    QCOMPARE(arr->value.items[1].items[0].text, std::string("r"));
    QCOMPARE(doc.find("a.b.c.empty")->value.items.size(), size_t(0));
    QVERIFY(tomlValueHasType(doc.find("a.n")->value, "float")); // an int for a float field
    QVERIFY(!tomlValueHasType(doc.find("a.f")->value, "int"));
}

void TstLaunchTitan::tomlReaderErrors()
{
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"a = 1\nb = {x = 1}\n", "line 2: inline tables"},
        {"[t]\n[[u]]\n", "line 2: arrays of tables"},
        {"a = 1979-05-27\n", "line 1: dates"},
        {"\n\nx = inf\n", "line 3: 'inf' is not a finite number"},
        {"a = 1\na = 2\n", "line 2: the key a appears twice"},
        {"s = \"open\n", "line 1: a string is not closed"},
        {"a = bare\n", "line 1: 'bare' is not a value"},
        {"a = 1 2\n", "line 1: unexpected text after the value"},
        {"a\n", "line 1: expected = after the key 'a'"},
        {"a = [1, 2\n", "line 1: an array is not closed"},
        {"a = \"\"\"x\"\"\"\n", "line 1: multi-line strings"},
        {"a = 99999999999999999999\n", "too large"},
        {"[t\n", "line 1: a table header is not closed"},
    };
    for (const auto& [text, expected] : cases) {
        TomlDocument doc;
        std::vector<std::string> errors;
        QVERIFY2(!parseToml(text, &doc, &errors), text.c_str());
        QVERIFY2(anyContains(errors, expected), (text + " -> " + joined(errors)).c_str());
    }
    // Several bad lines: each one reported, the good ones kept.
    TomlDocument doc;
    std::vector<std::string> errors;
    QVERIFY(!parseToml("a = {\nb = 2\nc = nan\n", &doc, &errors));
    QCOMPARE(errors.size(), size_t(2));
    QVERIFY(doc.find("b"));
}

void TstLaunchTitan::torchtitanKeysArePinned()
{
    const auto pinned = pinnedKeys("torchtitan-0.2.2.keys");
    QVERIFY(pinned.size() > 60);
    for (const NamedPlan& p : allPlans()) {
        const LaunchConfig config = exportTorchtitan(p.plan, catalog());
        QVERIFY2(config.error.empty(), config.error.c_str());
        QCOMPARE(config.target, LaunchTarget::Torchtitan);
        QCOMPARE(config.suffix, std::string(".toml"));
        QVERIFY(config.release.find("v0.2.2") != std::string::npos);
        TomlDocument doc;
        std::vector<std::string> errors;
        QVERIFY2(parseToml(config.text, &doc, &errors),
                 qPrintable(p.name + ": " + QString::fromStdString(joined(errors))));
        for (const TomlEntry& e : doc.entries) {
            const auto it = pinned.find(e.key);
            QVERIFY2(it != pinned.end(),
                     qPrintable(p.name + ": " + QString::fromStdString(e.key) + " is not pinned"));
            QVERIFY2(tomlValueHasType(e.value, it->second),
                     qPrintable(p.name + ": " +
                                QString::fromStdString(e.key + " is " + tomlTypeName(e.value) +
                                                       ", pinned " + it->second)));
        }
        for (const char* key : {"model.name", "model.flavor", "training.local_batch_size",
                                "training.global_batch_size", "training.seq_len",
                                "parallelism.data_parallel_shard_degree",
                                "parallelism.tensor_parallel_degree", "activation_checkpoint.mode"})
            QVERIFY2(doc.find(key), qPrintable(p.name + ": missing " + key));
        // The launcher is in the file, as a comment.
        QVERIFY(!config.launcher.empty());
        QVERIFY(config.text.find("#   " + config.launcher) != std::string::npos);
        for (const std::string& w : config.warnings)
            QVERIFY(config.text.find(w) != std::string::npos);
    }
}

void TstLaunchTitan::importerKnowsThePinnedKeys()
{
    const auto pinned = pinnedKeys("torchtitan-0.2.2.keys");
    size_t read = 0;
    for (const TorchtitanKey& k : torchtitanKeys()) {
        const auto it = pinned.find(k.key);
        QVERIFY2(it != pinned.end(), k.key);
        QCOMPARE(it->second, std::string(k.type));
        read += k.read ? 1 : 0;
    }
    QCOMPARE(torchtitanKeys().size(), pinned.size());
    QVERIFY(read >= 20);
}

void TstLaunchTitan::torchtitanLayout()
{
    auto exported = [](const Plan& plan) {
        TomlDocument doc;
        std::vector<std::string> errors;
        parseToml(exportTorchtitan(plan, catalog()).text, &doc, &errors);
        return doc;
    };
    Plan plan = examplePlan("llama3-70b-dgx-h100.paraplan.json"); // tp 8, pp 4, dp 4, ZeRO-1, v 5
    TomlDocument doc = exported(plan);
    QCOMPARE(doc.find("model.flavor")->value.text, std::string("70B"));
    QCOMPARE(doc.find("parallelism.pipeline_parallel_schedule")->value.text,
             std::string("Interleaved1F1B"));
    const TomlValue& parts = doc.find("parallelism.module_fqns_per_model_part")->value;
    QCOMPARE(parts.items.size(), size_t(20)); // pp 4 x interleave 5
    QCOMPARE(parts.items.front().items.front().text, std::string("tok_embeddings"));
    QCOMPARE(parts.items.back().items.back().text, std::string("output"));
    QCOMPARE(parts.items[1].items.front().text, std::string("layers.4"));
    // 512 sequences = 1 x 4 dp x 128 micro-batches; with pipelining one step holds them all.
    QCOMPARE(doc.find("training.local_batch_size")->value.integer, 128LL);
    QCOMPARE(doc.find("parallelism.pipeline_parallel_microbatch_size")->value.integer, 1LL);
    QCOMPARE(doc.find("training.steps")->value.integer,
             static_cast<long long>(std::ceil(15e12 / (512.0 * 8192))));
    QCOMPARE(doc.find("parallelism.fsdp_reshard_after_forward")->value.text, std::string("never"));
    QCOMPARE(doc.find("activation_checkpoint.mode")->value.text, std::string("selective"));

    plan.parallel.pp = 1, plan.parallel.dp = 16, plan.parallel.zero = 3, plan.parallel.dp_shard = 4;
    plan.parallel.interleave = 1;
    doc = exported(plan); // HSDP: 4 shards x 4 replicas
    QCOMPARE(doc.find("parallelism.data_parallel_shard_degree")->value.integer, 4LL);
    QCOMPARE(doc.find("parallelism.data_parallel_replicate_degree")->value.integer, 4LL);
    QVERIFY(!doc.find("parallelism.fsdp_reshard_after_forward"));
    QVERIFY(!doc.find("parallelism.module_fqns_per_model_part"));
    QCOMPARE(doc.find("training.local_batch_size")->value.integer, 1LL);
    plan.training.dtype = Dtype::FP8;
    doc = exported(plan);
    QCOMPARE(doc.find("model.converters")->value.items.at(0).text,
             std::string("quantize.linear.float8"));
    QVERIFY(doc.find("quantize.linear.float8.enable_fsdp_float8_all_gather")->value.boolean);
    QVERIFY(
        doc.find("quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp")->value.boolean);
    // torchtitan's float8 converter asserts a recipe_name and the FSDP float8 all-gather are
    // not both set: no recipe_name (tensorwise scaling, its default path).
    QVERIFY(!doc.find("quantize.linear.float8.recipe_name"));
    QVERIFY(
        importTorchtitan(exportTorchtitan(plan, catalog()).text, plan, catalog()).errors.empty());

    for (const NamedPlan& np : allPlans())
        if (np.name == "moe-ep2") {
            QCOMPARE(exported(np.plan).find("parallelism.expert_parallel_degree")->value.integer,
                     2LL);
            QVERIFY(anyContains(exportDeepSpeed(np.plan, catalog()).warnings, "expert parallel 2",
                                "--expert-model-parallel-size 2"));
        }

    // One node: torchtitan's run_train.sh; several: torchrun on every node.
    QVERIFY(exportTorchtitan(examplePlan("gpt3-175b-dgx-a100.paraplan.json"), catalog())
                .launcher.find("torchrun --nnodes 8 --nproc-per-node 8") == 0);
    Plan small = plan;
    small.cluster.nodes = 1, small.parallel.tp = 8, small.parallel.dp = 1, small.parallel.zero = 0;
    small.parallel.dp_shard = 0, small.parallel.global_batch = 8;
    QVERIFY2(validatePlan(small, catalog()).empty(), firstIssue(small).c_str());
    const std::string single = exportTorchtitan(small, catalog()).launcher;
    QVERIFY2(single.rfind("NGPU=8 CONFIG_FILE=./", 0) == 0, single.c_str());
    QVERIFY(single.find(".toml ./run_train.sh") == single.size() - 20);
}

void TstLaunchTitan::torchtitanWarnings()
{
    // ZeRO-1 (the bundled Llama examples): no such thing in torchtitan.
    const LaunchConfig zero1 =
        exportTorchtitan(examplePlan("llama3-70b-dgx-h100.paraplan.json"), catalog());
    QVERIFY2(anyContains(zero1.warnings, "ZeRO-1", "fsdp_reshard_after_forward"),
             joined(zero1.warnings).c_str());
    QVERIFY(anyContains(zero1.warnings, "recompute selective"));
    QVERIFY(!anyContains(zero1.warnings, "model:"));
    // GPT-3 175B: no llama3 flavor, fp16, no async TP with eager kernels...
    const LaunchConfig gpt3 =
        exportTorchtitan(examplePlan("gpt3-175b-dgx-a100.paraplan.json"), catalog());
    QVERIFY2(anyContains(gpt3.warnings, "none of torchtitan's llama3 flavors", "nearest"),
             joined(gpt3.warnings).c_str());
    // TP 8 x PP 8 x DP 1, ZeRO 0: no FSDP, so torchtitan's maybe_enable_amp turns mixed
    // precision off: float32, not the bfloat16 an fp16 plan gets elsewhere.
    QVERIFY(anyContains(gpt3.warnings, "dtype fp16 with tensor or pipeline parallelism",
                        "the file trains in float32"));
    QVERIFY(!anyContains(gpt3.warnings, "trains in bfloat16"));
    Plan fp16 = examplePlan("llama3-70b-dgx-h100.paraplan.json"); // FSDP: bfloat16 applies
    fp16.training.dtype = Dtype::FP16;
    QVERIFY(anyContains(exportTorchtitan(fp16, catalog()).warnings, "dtype fp16",
                        "the file trains in bfloat16"));
    QVERIFY(!anyContains(exportTorchtitan(fp16, catalog()).warnings, "trains in float32"));
    QVERIFY(!anyContains(gpt3.warnings, "ZeRO 0")); // dp 1: nothing to replicate
    Plan ddp = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    ddp.parallel.zero = 0;
    QVERIFY(anyContains(exportTorchtitan(ddp, catalog()).warnings, "ZeRO 0", "1-D mesh"));
    Plan plan = examplePlan("llama3-70b-two-racks.paraplan.json");
    plan.parallel.sequence_parallel = false;
    plan.parallel.dp_overlap = false;
    plan.parallel.rank_order = {ParallelDim::TP, ParallelDim::DP, ParallelDim::CP, ParallelDim::PP};
    plan.training.optimizer = Optimizer::SGD;
    plan.training.train_tokens = 0;
    const LaunchConfig edited = exportTorchtitan(plan, catalog());
    for (const char* what : {"sequence_parallel = false", "dp_overlap = false", "rank_order",
                             "optimizer sgd", "train_tokens is not set"})
        QVERIFY2(anyContains(edited.warnings, what), what);
    QVERIFY(edited.text.find("steps =") == std::string::npos);
}

void TstLaunchTitan::torchtitanAsyncTpNeedsCompile()
{
    // Async TP: torchtitan raises without torch.compile, so only with fused kernels.
    auto asyncTp = [](const Plan& p) {
        TomlDocument doc;
        std::vector<std::string> errors;
        parseToml(exportTorchtitan(p, catalog()).text, &doc, &errors);
        return doc.find("parallelism.enable_async_tensor_parallel")->value.boolean;
    };
    Plan overlap = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    overlap.parallel.tp_overlap = TpOverlap::AgGemm;
    overlap.training.kernels = KernelStyle::Eager;
    QVERIFY(!asyncTp(overlap));
    QVERIFY(anyContains(exportTorchtitan(overlap, catalog()).warnings, "tp_overlap ag-gemm",
                        "enable_async_tensor_parallel = false"));
    overlap.training.kernels = KernelStyle::Fused;
    QVERIFY(asyncTp(overlap));
    QVERIFY(!anyContains(exportTorchtitan(overlap, catalog()).warnings, "tp_overlap"));
}

void TstLaunchTitan::torchtitanSeqLenDivisor()
{
    // seq_len must divide by tp x 2 x cp (parallelize_llama asserts it).
    Plan odd = examplePlan("llama3-70b-dgx-h100.paraplan.json"); // tp 8, cp 1
    odd.training.seq_len = 8200;
    QVERIFY2(validatePlan(odd, catalog()).empty(), firstIssue(odd).c_str());
    QVERIFY(
        anyContains(exportTorchtitan(odd, catalog()).warnings, "seq_len 8200", "tp x 2 x cp = 16"));
    odd.training.seq_len = 8192;
    QVERIFY(!anyContains(exportTorchtitan(odd, catalog()).warnings, "tp x 2 x cp"));
}

void TstLaunchTitan::nearestFlavorKeepsTheBaseModel()
{
    // GPT-3 has no torchtitan flavor: the file names the nearest (405B) and the split names
    // GPT-3's 96 layers. Read back over the plan it came from, the model stays GPT-3.
    const Plan gpt3 = examplePlan("gpt3-175b-dgx-a100.paraplan.json");
    const LaunchConfig config = exportTorchtitan(gpt3, catalog());
    QVERIFY(config.text.find("flavor = \"405B\"") != std::string::npos);
    const LaunchImport back = importTorchtitan(config.text, gpt3, catalog());
    QVERIFY2(back.errors.empty(), joined(back.errors).c_str());
    QCOMPARE(back.plan.model.preset, gpt3.model.preset);
    QCOMPARE(back.plan.model.layers, 96);
    QVERIFY(anyContains(back.warnings, "the base plan's model (GPT-3 175B"));
    QCOMPARE(stageLayerCounts(back.plan.model, back.plan.parallel),
             stageLayerCounts(gpt3.model, gpt3.parallel));
    // Over a base of a torchtitan flavor, the file's flavor is the model, and that is said.
    Plan llama = gpt3;
    std::string error;
    QVERIFY(modelFromPreset("llama3-8b", &llama.model, &error));
    const LaunchImport other = importTorchtitan(config.text, llama, catalog());
    QCOMPARE(other.plan.model.preset, std::string("llama3-405b"));
    QVERIFY(anyContains(other.warnings, "the model becomes"));
    // A mixture of experts has no llama3 flavor: the file is a dense model, and says so.
    const Plan moe = allPlans().back().plan; // Mixtral 8x7B, EP 2
    QVERIFY(moe.model.isMoe());
    const LaunchConfig moeConfig = exportTorchtitan(moe, catalog());
    QVERIFY2(moeConfig.error.empty(), moeConfig.error.c_str());
    QVERIFY(anyContains(moeConfig.warnings, "llama3 has no expert layers"));
    // One of torchtitan's MoE flavors: DeepSeek-V3 is written as deepseek_v3 671B (without
    // its MTP module, said so) and read back as the preset without it.
    Plan deepseek = moe;
    QVERIFY(modelFromPreset("deepseek-v3", &deepseek.model, &error));
    QCOMPARE(deepseek.model.mtp_layers, 1);
    const LaunchConfig dsConfig = exportTorchtitan(deepseek, catalog());
    QVERIFY2(dsConfig.error.empty(), dsConfig.error.c_str());
    QVERIFY(dsConfig.text.find("name = \"deepseek_v3\"\nflavor = \"671B\"") != std::string::npos);
    QVERIFY(anyContains(dsConfig.warnings, "no multi-token-prediction module"));
    const LaunchImport dsBack = importTorchtitan(dsConfig.text, moe, catalog());
    QVERIFY2(dsBack.errors.empty(), joined(dsBack.errors).c_str());
    QCOMPARE(dsBack.plan.model.preset, std::string("deepseek-v3"));
    QCOMPARE(dsBack.plan.model.mtp_layers, 0);
    // Each MoE flavor's preset matches its own flavor and no other.
    for (const titan::MoeFlavor& f : titan::moeFlavors()) {
        ModelSpec m;
        QVERIFY(modelFromPreset(f.preset, &m, &error));
        QCOMPARE(titan::matchingMoeFlavor(m), &f);
    }

    // A model name is quoted into the warnings, and the warnings into comments: a newline in
    // it cannot start a line of its own (a TOML key, or a shell command in Megatron's script).
    Plan named = gpt3;
    named.model.name = "GPT-3\nrm -rf ~";
    for (const LaunchTarget target : {LaunchTarget::Torchtitan, LaunchTarget::Megatron}) {
        const LaunchConfig c = exportLaunchConfig(named, target, catalog());
        QVERIFY(c.text.find("\nrm -rf") == std::string::npos);
    }
}

void TstLaunchTitan::torchtitanRoundTrip()
{
    for (const NamedPlan& np : allPlans()) {
        const Plan& p = np.plan;
        // The base: same cluster, another model and layout.
        Plan base = p;
        std::string error;
        QVERIFY(modelFromPreset(p.model.preset == "llama3-8b" ? "llama3-70b" : "llama3-8b",
                                &base.model, &error));
        base.parallel = ParallelLayout();
        base.parallel.dp = static_cast<int>(p.cluster.totalGpus());
        base.parallel.global_batch = base.parallel.dp;
        base.training.seq_len = 1024;
        base.training.dtype = Dtype::FP32;
        const LaunchConfig config = exportTorchtitan(p, catalog());
        const LaunchImport back = importTorchtitan(config.text, base, catalog());
        const QString ctx = np.name + ": " + QString::fromStdString(joined(back.errors));
        QVERIFY2(back.errors.empty(), qPrintable(ctx));
        const Plan& q = back.plan;
        // A llama3 flavor, or an MoE flavor of the plan's model (the DeepSeek-V3 example).
        const bool flavored =
            p.model.preset.rfind("llama3-", 0) == 0 || titan::matchingMoeFlavor(p.model) != nullptr;
        if (flavored) {
            QCOMPARE(q.model.preset, p.model.preset);
            QCOMPARE(q.model.layers, p.model.layers);
            QCOMPARE(stageLayerCounts(q.model, q.parallel), stageLayerCounts(p.model, p.parallel));
        } else {
            // The nearest flavor by parameter count (GPT-3 175B: 405B, Mixtral 8x7B: 70B),
            // warned on export; the layer split of another layer count is not taken.
            const bool gpt3 = p.model.preset == "gpt3-175b";
            QCOMPARE(q.model.preset, std::string(gpt3 ? "llama3-405b" : "llama3-70b"));
            QVERIFY(
                anyContains(config.warnings, gpt3 ? "the file names 405B" : "the file names 70B"));
            if (p.parallel.pp > 1 && p.model.layers != q.model.layers)
                QVERIFY(anyContains(back.warnings, "module_fqns_per_model_part names " +
                                                       std::to_string(p.model.layers) + " layers"));
        }
        const ParallelLayout &a = p.parallel, &b = q.parallel;
        QCOMPARE(b.tp, a.tp);
        QCOMPARE(b.pp, a.pp);
        QCOMPARE(b.dp, a.dp);
        QCOMPARE(b.cp, a.cp);
        if (q.model.isMoe() || a.ep == 1)
            QCOMPARE(b.ep, a.ep);
        else // the file's dense flavor: torchtitan ignores expert parallelism there
            QVERIFY(b.ep == 1 && anyContains(back.warnings, "has no effect on the dense"));
        QCOMPARE(b.interleave, a.interleave);
        QCOMPARE(b.micro_batch, a.micro_batch);
        QCOMPARE(b.global_batch, a.global_batch);
        QCOMPARE(b.recompute, a.recompute);
        QCOMPARE(b.shardRanks(), a.shardRanks());
        if (a.zero == 1) { // torchtitan has no ZeRO-1: read as ZeRO-2, said so
            QCOMPARE(b.zero, 2);
            QVERIFY(anyContains(back.warnings, "torchtitan has no ZeRO-1"));
        } else {
            QCOMPARE(b.zero, a.zero);
        }
        if (a.tp > 1)
            QCOMPARE(b.sequence_parallel, true);
        // async TP only under torch.compile (torchtitan raises otherwise)
        QCOMPARE(tpOverlapActive(q),
                 tpOverlapActive(p) && resolvedKernelStyle(p) == KernelStyle::Fused);
        QCOMPARE(resolvedKernelStyle(q), resolvedKernelStyle(p));
        QCOMPARE(q.training.seq_len, p.training.seq_len);
        // TP or PP without FSDP: torchtitan turns mixed precision off, the file trains in fp32.
        const bool ampOff = b.zero == 0 && (a.tp > 1 || a.pp > 1);
        const Dtype half = p.training.dtype == Dtype::FP16 ? Dtype::BF16 : p.training.dtype;
        QCOMPARE(q.training.dtype, ampOff && half == Dtype::BF16 ? Dtype::FP32 : half);
        if (ampOff && half == Dtype::BF16) {
            QVERIFY(anyContains(config.warnings, "the file trains in float32"));
            QVERIFY(anyContains(back.warnings, "the plan trains in fp32"));
        }
        QCOMPARE(q.training.optimizer, p.training.optimizer);
        QCOMPARE(gradReduceBytes(q), 4); // torchtitan reduces in float32 only
        if (gradReduceBytes(p) != 4)
            QVERIFY(anyContains(config.warnings, "grad_reduce_bytes = 2"));
        const double stepTokens = static_cast<double>(a.global_batch) * p.training.seq_len;
        QVERIFY2(q.training.train_tokens >= p.training.train_tokens &&
                     q.training.train_tokens < p.training.train_tokens + stepTokens,
                 qPrintable(ctx));
        QCOMPARE(q.name, p.name);
        QCOMPARE(q.cluster.nodes, p.cluster.nodes);
        // Exporting the import again gives the same file.
        QCOMPARE(exportTorchtitan(q, catalog()).text.empty(), false);
        // (ZeRO-1 reads back as ZeRO-2; a plan torchtitan trains in fp32 writes "float32".)
        // The import runs on torchtitan's stack (PyTorch): a plan costed on a Megatron-style
        // stack loses the warning that compares the two.
        if (flavored && a.zero != 1 && !(ampOff && half == Dtype::BF16))
            QCOMPARE(withoutLinesContaining(exportTorchtitan(q, catalog()).text, "costed on"),
                     withoutLinesContaining(config.text, "costed on"));
    }
}

void TstLaunchTitan::torchtitanImportNegative()
{
    const Plan base = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    const std::string good = exportTorchtitan(base, catalog()).text;
    // A bad TOML line: an error with its line number, nothing imported.
    LaunchImport r = importTorchtitan("[training]\nseq_len = 8192\nsteps = = 3\n", base, catalog());
    QVERIFY2(anyContains(r.errors, "line 3:"), joined(r.errors).c_str());
    // An unknown key: a warning naming it and its line; the rest imports.
    r = importTorchtitan(good + "\n[parallelism]\n", base, catalog());
    QVERIFY(anyContains(r.errors, "[parallelism] appears twice"));
    const size_t at = good.find("[training]\n") + 11;
    std::string unknown = good;
    unknown.insert(at, "warp_drive = true\n");
    r = importTorchtitan(unknown, base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QVERIFY2(anyContains(r.warnings, "training.warp_drive is not an option of torchtitan v0.2.2"),
             joined(r.warnings).c_str());
    // Real torchtitan keys Paraplan does not model: named, ignored.
    std::string modelled = good;
    modelled.insert(at, "max_norm = 1.0\n");
    r = importTorchtitan(modelled + "\n[checkpoint]\nenable = true\ninterval = 500\n", base,
                         catalog());
    QVERIFY(r.errors.empty());
    QVERIFY(anyContains(r.warnings,
                        "training.max_norm is a torchtitan setting Paraplan does not model"));
    QVERIFY(anyContains(r.warnings, "[checkpoint] is not part of a plan"));
    // A wrong type: an error naming the key, its line and both types.
    std::string typed = good;
    const size_t seq = typed.find("seq_len = 8192");
    typed.replace(seq, 14, "seq_len = \"8192\"");
    r = importTorchtitan(typed, base, catalog());
    QVERIFY2(anyContains(r.errors, "training.seq_len must be int, not str"),
             joined(r.errors).c_str());
    QVERIFY(r.errors.front().rfind("line ", 0) == 0);
    // Values torchtitan itself would refuse.
    r = importTorchtitan(
        "[training]\nlocal_batch_size = 3\nglobal_batch_size = 100\n"
        "[parallelism]\ndata_parallel_shard_degree = 16\ntensor_parallel_degree = 8\n",
        base, catalog());
    QVERIFY2(anyContains(r.errors, "global_batch_size", "multiple of local_batch_size"),
             joined(r.errors).c_str());
    r = importTorchtitan(
        "[parallelism]\npipeline_parallel_degree = 4\ntensor_parallel_degree = 8\n"
        "data_parallel_shard_degree = 4\n"
        "module_fqns_per_model_part = [[\"layers.0\"], [\"layers.1\"], [\"layers.2\"]]\n",
        base, catalog());
    QVERIFY(anyContains(r.errors, "3 parts, not a multiple of pipeline_parallel_degree = 4"));
    // Huge degrees: errors, no overflow.
    r = importTorchtitan("[parallelism]\ndata_parallel_replicate_degree = 1000000000\n"
                         "tensor_parallel_degree = 1000000000\npipeline_parallel_degree = "
                         "1000000000\ncontext_parallel_degree = 1000000000\n",
                         base, catalog());
    QVERIFY(!r.errors.empty());
    r = importTorchtitan("[parallelism]\ndata_parallel_replicate_degree = 1000000000\n"
                         "data_parallel_shard_degree = 1000000000\n[training]\n"
                         "local_batch_size = 1000000000\n",
                         base, catalog());
    QVERIFY(anyContains(r.errors, "more than a plan can hold"));
    r = importTorchtitan("[activation_checkpoint]\nmode = \"sometimes\"\n", base, catalog());
    QVERIFY(anyContains(r.errors, "activation_checkpoint.mode"));
    // A layout that does not fit the base plan's cluster.
    r = importTorchtitan("[parallelism]\ndata_parallel_shard_degree = 3\n", base, catalog());
    QVERIFY(!r.errors.empty());
    // An unknown flavor is refused (the base plan's model would be costed under its name).
    r = importTorchtitan("[model]\nname = \"qwen3\"\nflavor = \"32B\"\n", base, catalog());
    QVERIFY(anyContains(r.errors, "qwen3 flavor 32B has no Paraplan preset"));
    r = importTorchtitan("[model]\nname = \"flux\"\nflavor = \"flux-dev\"\n", base, catalog());
    QVERIFY(anyContains(r.errors, "flux flavor flux-dev has no Paraplan preset"));
    // Sequence parallelism follows tp (torchtitan has no switch): a tp 1 file over a base
    // plan with sequence parallelism imports, without it.
    QVERIFY(base.parallel.sequence_parallel);
    r = importTorchtitan("[parallelism]\ntensor_parallel_degree = 1\n[training]\n"
                         "local_batch_size = 1\nglobal_batch_size = 128\n",
                         base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QVERIFY(!r.plan.parallel.sequence_parallel);
    // -1 takes the rest of the cluster's GPUs.
    r = importTorchtitan("[parallelism]\n"
                         "tensor_parallel_degree = 8\n[training]\nlocal_batch_size = 1\n"
                         "global_batch_size = 64\n",
                         base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QCOMPARE(r.plan.parallel.dp, 16);
    QCOMPARE(r.plan.parallel.zero, 3);
    QCOMPARE(r.plan.parallel.recompute, Recompute::Selective); // torchtitan's default mode
}

// The frameworks' own files (tests/data/launch/frameworks, with their commits): the right model
// and layout, or a refusal that names what is missing.
void TstLaunchTitan::frameworksOwnFilesImport()
{
    const Plan base = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    auto read = [](const char* name) {
        QFile file(test::dataPath(QString("launch/frameworks/") + name));
        if (!file.open(QIODevice::ReadOnly))
            qFatal("no %s", name);
        return file.readAll().toStdString();
    };
    LaunchImport r = importTorchtitan(read("torchtitan-v0.2.2-llama3_8b.toml"), base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QCOMPARE(r.plan.model.preset, std::string("llama3-8b"));
    QCOMPARE(r.plan.training.seq_len, 8192);
    QCOMPARE(r.plan.parallel.tp, 1);
    QCOMPARE(r.plan.parallel.zero, 3); // data_parallel_shard_degree -1: FSDP over all GPUs
    QVERIFY(!r.plan.parallel.sequence_parallel);
    r = importTorchtitan(read("torchtitan-v0.2.2-deepseek_v3_671b.toml"), base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QCOMPARE(r.plan.model.preset, std::string("deepseek-v3"));
    QVERIFY(r.plan.model.isMoe());
    r = importTorchtitan(read("torchtitan-v0.2.2-qwen3_32b.toml"), base, catalog());
    QVERIFY(anyContains(r.errors, "qwen3 flavor 32B has no Paraplan preset"));
    // Megatron-LM's example scripts: their if blocks (DTYPE == fp8 decided by the script, the
    // mock-data test by its arguments' defaults, the W&B key by the environment either way).
    r = importLaunchConfig(read("megatron-lm-d98e8a6-train_llama3_8b_h100_fp8.sh"),
                           LaunchTarget::Megatron, base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QCOMPARE(r.plan.model.layers, 32);
    QCOMPARE(r.plan.model.hidden, 4096);
    QCOMPARE(r.plan.model.kv_heads, 8);
    QCOMPARE(r.plan.model.ffn_hidden, 14336);
    QCOMPARE(r.plan.training.dtype, Dtype::FP8);
    QVERIFY(r.plan.training.fp8_param_gather);
    QCOMPARE(r.plan.training.seq_len, 8192);
    QCOMPARE(r.plan.parallel.tp, 1);
    QCOMPARE(r.plan.parallel.global_batch, 128);
    r = importLaunchConfig(read("megatron-lm-d98e8a6-train_mixtral_8x7b_distributed.sh"),
                           LaunchTarget::Megatron, base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QCOMPARE(r.plan.model.experts, 8);
    QCOMPARE(r.plan.model.experts_per_token, 2);
    QCOMPARE(r.plan.model.layers, 32);
    QCOMPARE(r.plan.parallel.pp, 4);
    QCOMPARE(r.plan.parallel.ep, 8);
    QVERIFY(!r.plan.parallel.sequence_parallel); // --sequence-parallel at tp 1: off, as Megatron
}

void TstLaunchTitan::torchtitanImportRefusals()
{
    const Plan base = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    const std::string good = exportTorchtitan(base, catalog()).text;
    LaunchImport r;
    // What torchtitan refuses at start-up: async TP without compile, a seq_len that does not
    // divide by tp x 2 x cp, a float8 recipe with the FSDP float8 all-gather.
    auto edited = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        const size_t at = text.find(from);
        if (at == std::string::npos)
            return text + "\n# missing: " + from;
        return text.replace(at, from.size(), to);
    };
    QVERIFY(good.find("enable_async_tensor_parallel = true") != std::string::npos);
    r = importTorchtitan(edited("enable = true  # kernels: fused", "enable = false"), base,
                         catalog());
    QVERIFY2(anyContains(r.errors, "enable_async_tensor_parallel", "Async TP requires"),
             joined(r.errors).c_str());
    r = importTorchtitan(edited("seq_len = 8192", "seq_len = 8200"), base, catalog());
    QVERIFY2(anyContains(r.errors, "training.seq_len", "= 16"), joined(r.errors).c_str());
    Plan fp8 = base;
    fp8.training.dtype = Dtype::FP8;
    r = importTorchtitan(exportTorchtitan(fp8, catalog()).text +
                             "\n[quantize.linear.float8]\nrecipe_name = \"tensorwise\"\n",
                         base, catalog());
    QVERIFY(anyContains(r.errors, "appears twice")); // one table: edit it in place instead
    std::string recipe = exportTorchtitan(fp8, catalog()).text;
    recipe.insert(recipe.find("[quantize.linear.float8]\n") + 25, "recipe_name = \"rowwise\"\n");
    r = importTorchtitan(recipe, base, catalog());
    QVERIFY2(anyContains(r.errors, "enable_fsdp_float8_all_gather", "recipe_name"),
             joined(r.errors).c_str());
    // ZeRO-3 under PP: Paraplan models torchtitan's "default" (gathered across micro-batches);
    // "always" gathers per micro-batch, which the plan does not count: warned.
    r = importTorchtitan(edited("\nfsdp_reshard_after_forward = \"never\"\n",
                                "\nfsdp_reshard_after_forward = \"always\"\n"),
                         base, catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QCOMPARE(r.plan.parallel.zero, 3);
    QVERIFY(anyContains(r.warnings, "fsdp_reshard_after_forward = \"always\"", "micro-batch"));
    r = importTorchtitan(edited("\nfsdp_reshard_after_forward = \"never\"\n", "\n"), base,
                         catalog());
    QVERIFY2(r.errors.empty(), joined(r.errors).c_str());
    QCOMPARE(r.plan.parallel.zero, 3);
    QVERIFY(!anyContains(r.warnings, "fsdp_reshard_after_forward"));
}

void TstLaunchTitan::deepspeedKeysArePinned()
{
    const auto pinned = pinnedKeys("deepspeed-0.19.keys");
    QVERIFY(pinned.size() > 40);
    for (const NamedPlan& p : allPlans()) {
        const LaunchConfig config = exportDeepSpeed(p.plan, catalog());
        QVERIFY2(config.error.empty(), config.error.c_str());
        QCOMPARE(config.suffix, std::string(".json"));
        QJsonParseError parseError;
        const QJsonDocument doc =
            QJsonDocument::fromJson(QByteArray::fromStdString(config.text), &parseError);
        QVERIFY2(doc.isObject(), qPrintable(parseError.errorString()));
        std::vector<std::pair<std::string, std::string>> keys;
        flatten(doc.object(), "", &keys);
        for (const auto& [key, type] : keys) {
            const auto it = pinned.find(key);
            QVERIFY2(it != pinned.end(), qPrintable(p.name + ": " + QString::fromStdString(key)));
            QVERIFY2(it->second == type || (it->second == "float" && type == "int"),
                     qPrintable(p.name + ": " + QString::fromStdString(key + " " + type)));
        }
        const QJsonObject zero = doc.object()["zero_optimization"].toObject();
        QCOMPARE(zero["stage"].toInt(), p.plan.parallel.zero);
        if (p.plan.parallel.zero > 0)
            QCOMPARE(zero["overlap_comm"].toBool(), p.plan.parallel.dp_overlap);
        const Dtype dtype = p.plan.training.dtype;
        QCOMPARE(doc.object()["bf16"].toObject()["enabled"].toBool(),
                 dtype == Dtype::BF16 || dtype == Dtype::FP8);
        QCOMPARE(doc.object()["fp16"].toObject()["enabled"].toBool(), dtype == Dtype::FP16);
    }
}

void TstLaunchTitan::deepspeedBatchArithmetic()
{
    for (const NamedPlan& p : allPlans()) {
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(
                                                          exportDeepSpeed(p.plan, catalog()).text))
                                  .object();
        const int batch = o["train_batch_size"].toInt();
        const int micro = o["train_micro_batch_size_per_gpu"].toInt();
        const int accumulation = o["gradient_accumulation_steps"].toInt();
        QVERIFY(batch > 0 && micro > 0 && accumulation > 0);
        QCOMPARE(batch, micro * accumulation * p.plan.parallel.dp);
        QCOMPARE(batch, p.plan.parallel.global_batch);
    }
    // ZeRO-3 figures that follow from the plan: DDP's 25 MiB bucket in fp32 gradient elements,
    // the prefetch of one layer (Llama 3 70B: 855,654,400 parameters a layer, / tp 8).
    Plan plan = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    plan.parallel.pp = 1, plan.parallel.dp = 16, plan.parallel.zero = 3, plan.parallel.dp_shard = 4;
    plan.parallel.interleave = 1;
    const QJsonObject zero =
        QJsonDocument::fromJson(QByteArray::fromStdString(exportDeepSpeed(plan, catalog()).text))
            .object()["zero_optimization"]
            .toObject();
    QCOMPARE(zero["reduce_bucket_size"].toInteger(), 25LL * 1024 * 1024 / 4);
    const double layer = countParameters(plan.model).layer(false);
    QCOMPARE(zero["stage3_prefetch_bucket_size"].toInteger(), std::llround(layer / 8));
    // MiCS groups consecutive global ranks: with TP 8 innermost those are one TP group, so no
    // mics_shard_size (warned); with TP 1 they are data-parallel ranks and it is written.
    QVERIFY(!zero.contains("mics_shard_size"));
    QVERIFY(anyContains(exportDeepSpeed(plan, catalog()).warnings, "dp_shard = 4",
                        "leaves mics_shard_size out"));
    plan.parallel.tp = 1, plan.parallel.dp = 128, plan.parallel.dp_shard = 8;
    plan.parallel.sequence_parallel = false;
    QVERIFY2(validatePlan(plan, catalog()).empty(), firstIssue(plan).c_str());
    const LaunchConfig mics = exportDeepSpeed(plan, catalog());
    QCOMPARE(QJsonDocument::fromJson(QByteArray::fromStdString(mics.text))
                 .object()["zero_optimization"]
                 .toObject()["mics_shard_size"]
                 .toInt(),
             8);
    QVERIFY(!anyContains(mics.warnings, "mics_shard_size"));
    plan.parallel.cp = 2, plan.parallel.dp = 64; // context-parallel ranks innermost
    QVERIFY2(validatePlan(plan, catalog()).empty(), firstIssue(plan).c_str());
    const LaunchConfig cp = exportDeepSpeed(plan, catalog());
    QVERIFY(cp.text.find("mics_shard_size") == std::string::npos);
    QVERIFY(anyContains(cp.warnings, "leaves mics_shard_size out"));
}

void TstLaunchTitan::deepspeedWarningsAndLauncher()
{
    const LaunchConfig ds =
        exportLaunchConfig(examplePlan("llama3-70b-dgx-h100.paraplan.json"),
                           LaunchTarget::DeepSpeed, catalog(), "ds_config.json");
    QCOMPARE(ds.launcher, std::string("deepspeed --num_nodes 16 --num_gpus 8 --hostfile hostfile "
                                      "train.py --deepspeed --deepspeed_config ds_config.json"));
    // Unnamed, the file is named from the plan, and the launch line names that file.
    const LaunchConfig unnamed =
        exportDeepSpeed(examplePlan("llama3-70b-dgx-h100.paraplan.json"), catalog());
    QCOMPARE(unnamed.file_name, std::string("llama_3_70b_on_16_dgx_h100_nodes.json"));
    QVERIFY(unnamed.launcher.find("--deepspeed_config " + unnamed.file_name) != std::string::npos);
    const LaunchConfig toml = exportLaunchConfig(examplePlan("llama3-70b-dgx-h100.paraplan.json"),
                                                 LaunchTarget::Torchtitan, catalog(), "mine.toml");
    QCOMPARE(toml.file_name, std::string("mine.toml"));
    QVERIFY(toml.launcher.find("--job.config_file ./mine.toml") != std::string::npos);
    QVERIFY(toml.text.find("--job.config_file ./mine.toml") != std::string::npos);
    QVERIFY2(anyContains(ds.warnings, "tensor parallel 8", "pipeline parallel 4"),
             joined(ds.warnings).c_str());
    QVERIFY(anyContains(ds.warnings, "--tensor-model-parallel-size 8"));
    QVERIFY(anyContains(ds.warnings, "data parallel 4"));
    QVERIFY(anyContains(ds.warnings, "interleave 5"));
    QVERIFY(anyContains(ds.warnings, "recompute selective"));
    QVERIFY(!anyContains(ds.warnings, "PipelineEngine")); // ZeRO-1 pipelines in DeepSpeed
    Plan plan = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    plan.training.dtype = Dtype::FP8;
    plan.parallel.cp = 2, plan.parallel.dp = 2, plan.parallel.global_batch = 256;
    QVERIFY(validatePlan(plan, catalog()).empty());
    const LaunchConfig fp8 = exportDeepSpeed(plan, catalog());
    QVERIFY(anyContains(fp8.warnings, "dtype fp8"));
    QVERIFY(anyContains(fp8.warnings, "context parallel 2"));
    // ZeRO-2/3 with pipeline parallelism: DeepSpeed's PipelineEngine asserts stage < 2.
    for (int stage : {2, 3}) {
        Plan piped = examplePlan("llama3-70b-dgx-h100.paraplan.json"); // pp 4
        piped.parallel.zero = stage;
        QVERIFY(validatePlan(piped, catalog()).empty());
        QVERIFY(anyContains(exportDeepSpeed(piped, catalog()).warnings,
                            "ZeRO-" + std::to_string(stage) + " with pipeline parallel 4",
                            "incompatible with pipeline parallelism"));
    }
    // A pure data-parallel ZeRO-3 plan that fits has nothing to warn about but the learning
    // rate and the plan's GPU-hour price (warned by every target).
    plan = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    plan.parallel.tp = 1, plan.parallel.pp = 1, plan.parallel.dp = 128, plan.parallel.zero = 3;
    plan.parallel.interleave = 1, plan.parallel.recompute = Recompute::None;
    plan.parallel.sequence_parallel = false;
    plan.training.seq_len = 2048;                           // fits without recompute (56 of 80 GiB)
    plan.training.framework = TrainingFramework::DeepSpeed; // the file's own framework
    QVERIFY2(validatePlan(plan, catalog()).empty(), firstIssue(plan).c_str());
    const LaunchConfig dp = exportDeepSpeed(plan, catalog());
    QCOMPARE(dp.warnings.size(), size_t(2));
    QVERIFY(anyContains(dp.warnings, "learning rate"));
    QVERIFY(anyContains(dp.warnings, "gpu_hour_usd"));
}

void TstLaunchTitan::invalidPlanIsAnError()
{
    Plan plan = examplePlan("llama3-70b-dgx-h100.paraplan.json");
    plan.parallel.global_batch = 7;
    QVERIFY(!exportTorchtitan(plan, catalog()).error.empty());
    QVERIFY(exportTorchtitan(plan, catalog()).text.empty());
    QVERIFY(!exportDeepSpeed(plan, catalog()).error.empty());
    QVERIFY(exportDeepSpeed(plan, catalog()).text.empty());
}

QTEST_GUILESS_MAIN(TstLaunchTitan)
#include "tst_launch_titan.moc"
