// Every JSON output of paraplan-cli against its JSON Schema (resources/schema/): each command
// that offers --json is run on the bundled examples and the test data, its output starts with
// "schema": "paraplan-NAME/1" and validates against paraplan-NAME-1.schema.json. The suite
// also fails when a command offers --json but is not run here, when a schema named by an
// output has no file, and when a schema file is used by no output. The files Paraplan writes and
// reads are held to theirs too: plans (paraplan-plan/1: the bundled examples, the test data,
// import-launch's output, a plan saved after edits) and clusters (paraplan-cluster/1:
// export-cluster, import-topology), and files the readers refuse are refused by the schema.
// The validator itself (tests/jsonschema.h) is tested first, keyword by keyword, on documents
// it must refuse.
#include "clirun.h"
#include "clusterio.h"
#include "commandtable.h"
#include "hardware.h"
#include "jsonschema.h"
#include "measurement.h"
#include "planio.h"
#include "topologygraph.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace paraplan;
using test::CliRun;
using test::JsonSchemaValidator;
using test::runCli;

namespace {

QString sourcePath(const QString& relative)
{
    return QStringLiteral(PARAPLAN_SOURCE_DIR) + "/" + relative;
}

QString dataPath(const QString& relative)
{
    return QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/" + relative;
}

QJsonObject parse(const QString& text)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return {};
    return doc.object();
}

// The schema paraplan-NAME-1.schema.json, with every other bundled schema for its $refs.
JsonSchemaValidator schemaValidator(const QString& name)
{
    const QString dir = sourcePath("resources/schema/");
    QJsonObject root;
    QList<QJsonObject> all;
    for (const QString& file : QDir(dir).entryList({"*.schema.json"})) {
        QFile f(dir + file);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QJsonObject schema = parse(QString::fromUtf8(f.readAll()));
        all.append(schema);
        if (file == name + "-1.schema.json")
            root = schema;
    }
    return JsonSchemaValidator(root, all);
}

QString readText(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

QString planPath(const QString& example)
{
    return sourcePath("resources/examples/" + example);
}

// What the plan reader says of `text`: empty when it reads it.
QString planErrors(const QJsonObject& plan)
{
    Plan read;
    std::vector<std::string> errors;
    const std::string text = QJsonDocument(plan).toJson().toStdString();
    if (planFromJsonText(text, PARAPLAN_SOURCE_DIR "/resources/examples", &read, &errors,
                         HardwareCatalog::bundled()))
        return {};
    return QString::fromStdString(errors.empty() ? std::string("refused") : errors.front());
}

QString clusterErrors(const QJsonObject& cluster)
{
    ClusterSpec read;
    std::vector<std::string> errors;
    const std::string text = QJsonDocument(cluster).toJson().toStdString();
    if (clusterFromJsonText(text, "test", {}, &read, &errors, HardwareCatalog::bundled()))
        return {};
    return QString::fromStdString(errors.empty() ? std::string("refused") : errors.front());
}

// `value` put at the dotted `path` in `json` ("parallel.tp", "drawing.racks.0.x": a number
// indexes an array); an undefined value removes the object key.
QJsonValue withValue(const QJsonValue& json, const QStringList& path, const QJsonValue& value)
{
    bool isIndex = false;
    const int index = path.front().toInt(&isIndex);
    if (isIndex && json.isArray()) {
        QJsonArray array = json.toArray();
        array[index] = path.size() == 1 ? value : withValue(array.at(index), path.mid(1), value);
        return array;
    }
    QJsonObject object = json.toObject();
    if (path.size() == 1 && value.isUndefined())
        object.remove(path.front());
    else
        object[path.front()] =
            path.size() == 1 ? value : withValue(object.value(path.front()), path.mid(1), value);
    return object;
}

// A plan as File > Save writes it, with a drawing (the example's cluster, as laid out).
QJsonObject savedPlanWithDrawing()
{
    Plan plan;
    std::vector<std::string> errors;
    loadPlan(PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-two-racks.paraplan.json", &plan,
             &errors, HardwareCatalog::bundled());
    plan.drawing = std::make_shared<const TopologyGraph>(graphFromCluster(plan.cluster));
    return parse(QString::fromStdString(planToJsonText(plan, HardwareCatalog::bundled())));
}

QStringList problemsOf(const char* schema, const char* instance)
{
    const JsonSchemaValidator validator(parse(schema));
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray("[") + instance + "]");
    return validator.validate(doc.array().at(0));
}

// The command lines whose JSON this suite validates: every command that has --json, on the
// examples and test data, with the option combinations that change the output's shape.
std::vector<QStringList> jsonRuns()
{
    std::vector<QStringList> runs;
    QStringList plans;
    for (const QString& name : QDir(sourcePath("resources/examples")).entryList({"*.json"}))
        plans.append(sourcePath("resources/examples/" + name));
    plans.append(dataPath("plans/llama3-70b-no-fit.json"));
    plans.append(dataPath("plans/gpt3-175b-one-node.json"));
    plans.append(dataPath("plans/llama-hf.json"));
    for (const QString& plan : plans) {
        runs.push_back({"evaluate", plan, "--json"});
        runs.push_back({"report", plan, "--json"});
        runs.push_back({"walkthrough", plan, "--json"});
        runs.push_back({"cliffs", plan, "--json"});
        runs.push_back({"search", plan, "--json", "--top", "3", "--max-interleave", "2"});
        runs.push_back(
            {"search", plan, "--json", "--top", "3", "--max-interleave", "2", "--exhaustive"});
        runs.push_back(
            {"search", plan, "--json", "--top", "3", "--max-interleave", "2", "--bound"});
    }
    // The plan's layout outside the searched space (TP 8 over a largest TP of 4): given.outside.
    runs.push_back({"search", sourcePath("resources/examples/llama3-70b-two-racks.paraplan.json"),
                    "--json", "--top", "3", "--max-tp", "4"});
    const QStringList collective{"--op", "all_reduce", "--bytes", "1GB", "--ranks", "16"};
    runs.push_back(QStringList{"collective"} + collective +
                   QStringList{"--cluster", "dgx-h100", "--nodes", "2", "--json"});
    runs.push_back({"collective", "--op", "all_to_all", "--bytes", "256MB", "--ranks", "64",
                    "--cluster", "dgx-a100", "--nodes", "8", "--json"});
    runs.push_back(QStringList{"collective"} + collective +
                   QStringList{"--bw-GBps", "50", "--json"});
    runs.push_back(QStringList{"collective"} + collective +
                   QStringList{"--measured-time", "2.16ms", "--json"});
    runs.push_back({"sweep-collective", "--op", "all_gather", "--ranks", "8", "--cluster",
                    "dgx-h100", "--max-bytes", "1MB", "--json"});
    runs.push_back(QStringList{"walkthrough"} + collective +
                   QStringList{"--cluster", "dgx-h100", "--nodes", "2", "--json"});
    runs.push_back(QStringList{"walkthrough"} + collective +
                   QStringList{"--measured-time", "2.16ms", "--json"});
    runs.push_back({"dp-traffic", "--params", "7e9", "--ranks", "8", "--json"});
    runs.push_back({"dp-traffic", "--params", "7e9", "--ranks", "8", "--zero", "3", "--bw-GBps",
                    "50", "--json"});
    runs.push_back({"dp-traffic", "--params", "7e9", "--ranks", "8", "--zero", "2", "--walkthrough",
                    "--json"});
    runs.push_back({"examples", "--json"});
    runs.push_back({"validate", "--json"});
    runs.push_back({"validate", "--json", "--tolerance", "0.05"});
    runs.push_back(
        {"calibrate", "--run",
         dataPath("logs/plan-8b-fsdp-1node.json") + ":" + dataPath("logs/torchtitan-8b-1node.log"),
         "--run",
         dataPath("logs/plan-8b-fsdp-4nodes.json") + ":" +
             dataPath("logs/torchtitan-8b-4nodes.log"),
         "--fit", "gemm_scale,overlap", "--json"});
    for (const QString& file :
         QDir(dataPath("measurements")).entryList({"*.log", "*.json", "*.jsonl", "*.txt"})) {
        if (file == "all_reduce_no_usable_rows.json") // refused on purpose (exit 2): no JSON
            continue;
        runs.push_back({"import-measurements", dataPath("measurements/" + file), "--json"});
        runs.push_back({"import-measurements", dataPath("measurements/" + file), "--cluster",
                        "dgx-h100", "--json"});
    }
    runs.push_back({"model", "--preset", "llama3-70b", "--json"});
    for (const QString& file : QDir(dataPath("hf")).entryList({"*.json"}))
        if (file != "t5-small.json") // an encoder-decoder, refused on purpose (exit 2)
            runs.push_back({"model", "--hf-config", dataPath("hf/" + file), "--json"});
    runs.push_back({"presets", "--json"});
    return runs;
}

bool offersJson(const cli::Command& command)
{
    for (const QCommandLineOption& option : command.options()) {
        if (option.names().contains("json"))
            return true;
    }
    return false;
}

} // namespace

class TestCliSchema : public QObject
{
    Q_OBJECT

private slots:
    void validatorAcceptsWhatTheSchemaAllows()
    {
        const char* schema = R"({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "integer", "minimum": 1, "maximum": 3},
                           "b": {"type": ["string", "null"]},
                           "c": {"type": "array", "items": {"enum": ["x", "y"]}, "minItems": 1},
                           "d": {"$ref": "#/$defs/pair"}},
            "additionalProperties": false,
            "$defs": {"pair": {"type": "array", "prefixItems": [{"type": "string"},
                                                                {"type": "number"}]}}})";
        QCOMPARE(problemsOf(schema, R"({"a": 2, "b": null, "c": ["x"], "d": ["n", 1.5]})"),
                 QStringList());
        QCOMPARE(problemsOf(schema, R"({"a": 3.0, "b": "s"})"), QStringList());
    }

    void validatorRefusesEachBrokenRule_data()
    {
        QTest::addColumn<QString>("schema");
        QTest::addColumn<QString>("instance");
        QTest::addColumn<QString>("problem");
        QTest::newRow("type") << R"({"type": "string"})"
                              << "1"
                              << "expected string";
        QTest::newRow("integer") << R"({"type": "integer"})"
                                 << "1.5"
                                 << "expected integer";
        QTest::newRow("type array") << R"({"type": ["string", "null"]})"
                                    << "true"
                                    << "expected string or null";
        QTest::newRow("required") << R"({"type": "object", "required": ["a"]})"
                                  << "{}"
                                  << "required property 'a' missing";
        QTest::newRow("additionalProperties false")
            << R"({"properties": {"a": {}}, "additionalProperties": false})"
            << R"({"b": 1})"
            << "$.b: property not in the schema";
        QTest::newRow("additionalProperties schema")
            << R"({"additionalProperties": {"type": "integer"}})"
            << R"({"b": "x"})"
            << "$.b: expected integer";
        QTest::newRow("properties") << R"({"properties": {"a": {"type": "boolean"}}})"
                                    << R"({"a": 0})"
                                    << "$.a: expected boolean";
        QTest::newRow("items") << R"({"items": {"type": "number"}})"
                               << R"([1, "2"])"
                               << "$[1]: expected number";
        QTest::newRow("prefixItems")
            << R"({"prefixItems": [{"type": "string"}], "items": {"type": "number"}})"
            << R"([3, 4])"
            << "$[0]: expected string";
        QTest::newRow("minItems") << R"({"minItems": 2})"
                                  << "[1]"
                                  << "fewer than minItems 2";
        QTest::newRow("maxItems") << R"({"maxItems": 3})"
                                  << "[1, 2, 3, 4]"
                                  << "more than maxItems 3";
        QTest::newRow("minProperties") << R"({"minProperties": 1})"
                                       << "{}"
                                       << "fewer than minProperties 1";
        QTest::newRow("$ref to an unknown document") << R"({"$ref": "other.schema.json"})"
                                                     << "1"
                                                     << "unresolvable $ref 'other.schema.json'";
        QTest::newRow("minLength") << R"({"minLength": 1})"
                                   << R"("")"
                                   << "shorter than minLength 1";
        QTest::newRow("enum") << R"({"enum": ["ring", "tree"]})"
                              << R"("mesh")"
                              << R"("mesh" is not one of ["ring","tree"])";
        QTest::newRow("const") << R"({"const": "paraplan-evaluate/1"})"
                               << R"("paraplan-search/1")"
                               << "expected the constant";
        QTest::newRow("minimum") << R"({"minimum": 0})"
                                 << "-1"
                                 << "below the minimum 0";
        QTest::newRow("maximum") << R"({"maximum": 3})"
                                 << "4"
                                 << "above the maximum 3";
        QTest::newRow("$ref") << R"({"$ref": "#/$defs/n", "$defs": {"n": {"type": "number"}}})"
                              << R"("x")"
                              << "expected number";
        QTest::newRow("$ref missing") << R"({"$ref": "#/$defs/none"})"
                                      << "1"
                                      << "unresolvable $ref";
        QTest::newRow("anyOf") << R"({"anyOf": [{"type": "string"}, {"minimum": 5}]})"
                               << "1"
                               << "0 branches of anyOf match";
        QTest::newRow("oneOf two") << R"({"oneOf": [{"type": "number"}, {"minimum": 0}]})"
                                   << "1"
                                   << "2 branches of oneOf match";
        QTest::newRow("oneOf none") << R"({"oneOf": [{"type": "string"}]})"
                                    << "1"
                                    << "0 branches of oneOf match";
    }

    void validatorRefusesEachBrokenRule()
    {
        QFETCH(QString, schema);
        QFETCH(QString, instance);
        QFETCH(QString, problem);
        const QStringList problems =
            problemsOf(schema.toUtf8().constData(), instance.toUtf8().constData());
        QVERIFY2(problems.size() == 1 && problems.front().contains(problem),
                 qPrintable(problems.join("; ")));
    }

    void validatorFollowsARefIntoAnotherSchema()
    {
        // In b, "#/$defs/n" names b's own n (a number), not the string n of a. (The $ids are
        // put in afterwards: moc takes a "//" in a raw string for a comment.)
        const auto withBase = [](const char* text) {
            return parse(QString(text).replace("BASE", "https://x.invalid/s"));
        };
        const char* schemaA =
            R"({"$id": "BASE/a.json", "$defs": {"n": {"type": "string"}},
                "properties": {"c": {"$ref": "b.json"}, "d": {"$ref": "b.json#/$defs/n"}}})";
        const char* schemaB =
            R"({"$id": "BASE/b.json", "type": "object", "$defs":
                {"n": {"type": "number"}}, "properties": {"n": {"$ref": "#/$defs/n"}}})";
        const char* missing = R"({"$id": "BASE/a.json",
                                  "$ref": "b.json#/$defs/none"})";
        const QJsonObject a = withBase(schemaA);
        const QJsonObject b = withBase(schemaB);
        const JsonSchemaValidator validator(a, QList<QJsonObject>{a, b});
        QCOMPARE(validator.validate(parse(R"({"c": {"n": 1}, "d": 2})")), QStringList());
        QCOMPARE(validator.validate(parse(R"({"c": {"n": "x"}})")),
                 QStringList{"$.c.n: expected number, got \"x\""});
        QCOMPARE(validator.validate(parse(R"({"c": 1})")),
                 QStringList{"$.c: expected object, got 1"});
        QCOMPARE(validator.validate(parse(R"({"d": "x"})")),
                 QStringList{"$.d: expected number, got \"x\""});
        QCOMPARE(JsonSchemaValidator(a).validate(parse(R"({"c": {}})")),
                 QStringList{"$.c: unresolvable $ref 'b.json'"});
        const JsonSchemaValidator missingDef(withBase(missing), QList<QJsonObject>{b});
        QCOMPARE(missingDef.validate(1), QStringList{"$: unresolvable $ref 'b.json#/$defs/none'"});
    }

    void validatorRefusesKeywordsItDoesNotCheck()
    {
        const JsonSchemaValidator validator(
            parse(R"({"type": "object", "properties": {"a": {"pattern": "^x"}},
                      "$defs": {"d": {"maxLength": 3}}})"));
        QCOMPARE(validator.unsupportedKeywords(),
                 QStringList({"#/$defs/d/maxLength", "#/properties/a/pattern"}));
    }

    void everyJsonOutputValidatesAgainstItsSchema()
    {
        std::map<QString, JsonSchemaValidator> validators;
        QSet<QString>& used = m_used;
        QSet<QString> commandsRun;
        int validated = 0;
        for (const QStringList& args : jsonRuns()) {
            const CliRun run = runCli(args);
            const QString line = args.join(' ');
            // 0, or 1 where the answer is no (a plan that does not fit, nothing fits).
            QVERIFY2(run.code == 0 || run.code == 1, qPrintable(line + ": " + run.err));
            const QRegularExpression first(R"(^\{\n    "schema": "(paraplan-[a-z-]+)/1",\n)");
            const QRegularExpressionMatch match = first.match(run.out);
            QVERIFY2(match.hasMatch(), qPrintable(line + ": the schema is not the first key"));
            const QString name = match.captured(1);
            const QString file = sourcePath("resources/schema/" + name + "-1.schema.json");
            QFile schemaFile(file);
            QVERIFY2(schemaFile.open(QIODevice::ReadOnly),
                     qPrintable(line + ": no schema file " + file));
            if (!validators.count(name)) {
                const QJsonObject schema = parse(QString::fromUtf8(schemaFile.readAll()));
                QVERIFY2(!schema.isEmpty(), qPrintable(file + " is not a JSON object"));
                QCOMPARE(schema.value("$schema").toString(),
                         QString("https://json-schema.org/draft/2020-12/schema"));
                validators.emplace(name, JsonSchemaValidator(schema));
                const QStringList unsupported = validators.at(name).unsupportedKeywords();
                QVERIFY2(unsupported.isEmpty(), qPrintable(file + ": " + unsupported.join(", ")));
            }
            const QStringList problems = validators.at(name).validate(parse(run.out));
            QVERIFY2(problems.isEmpty(),
                     qPrintable(line + " against " + name + ":\n  " + problems.join("\n  ")));
            used.insert(name);
            commandsRun.insert(args.front());
            ++validated;
        }
        // A command that offers --json and is not run here has an output no schema covers.
        for (const cli::Command& command : cli::commandTable()) {
            if (offersJson(command))
                QVERIFY2(commandsRun.contains(command.name),
                         qPrintable(QString("'%1' offers --json but no run of it is validated "
                                            "(add it to jsonRuns() and its schema file)")
                                        .arg(command.name)));
        }
        QVERIFY(validated > 40);
        m_ran << QTest::currentTestFunction();
        qInfo("%d outputs of %d commands validated against %d schemas", validated,
              int(commandsRun.size()), int(used.size()));
    }

    void theFitFileCarriesItsSchema()
    {
        // calibrate -o FILE writes the --json document to a file: the same schema, first.
        QTemporaryDir dir;
        const QString path = dir.filePath("fit.json");
        const CliRun run = runCli(
            {"calibrate", "--run",
             dataPath("logs/plan-70b-megatron.json") + ":" + dataPath("logs/megatron-70b.log"),
             "--fit", "gemm_scale", "-o", path});
        QCOMPARE(run.code, 0);
        QFile fit(path);
        QVERIFY(fit.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(fit.readAll());
        QVERIFY2(text.startsWith("{\n    \"schema\": \"paraplan-calibrate/1\",\n"),
                 qPrintable(text.left(80)));
        QFile file(sourcePath("resources/schema/paraplan-calibrate-1.schema.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const JsonSchemaValidator validator(parse(QString::fromUtf8(file.readAll())));
        QCOMPARE(validator.validate(parse(text)), QStringList());
    }

    void aBrokenOutputFailsItsSchema()
    {
        // The real evaluate output, altered: the schema catches each change.
        const CliRun run =
            runCli({"evaluate", sourcePath("resources/examples/llama3-70b-dgx-h100.paraplan.json"),
                    "--json"});
        QCOMPARE(run.code, 0);
        QFile file(sourcePath("resources/schema/paraplan-evaluate-1.schema.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const JsonSchemaValidator validator(parse(QString::fromUtf8(file.readAll())));
        const QJsonObject good = parse(run.out);
        QCOMPARE(validator.validate(good), QStringList());
        QJsonObject missing = good;
        missing.remove("step_time_s");
        QVERIFY(validator.validate(missing).join(' ').contains("'step_time_s' missing"));
        QJsonObject extra = good;
        extra["surprise"] = 1;
        QVERIFY(validator.validate(extra).join(' ').contains("$.surprise"));
        QJsonObject wrongSchema = good;
        wrongSchema["schema"] = "paraplan-evaluate/2";
        QVERIFY(validator.validate(wrongSchema).join(' ').contains("$.schema"));
        QJsonObject wrongType = good;
        wrongType["fits"] = "yes";
        QVERIFY(validator.validate(wrongType).join(' ').contains("$.fits: expected boolean"));
    }

    void planAndClusterFilesValidate()
    {
        // Every plan and cluster file of the source tree that the readers accept.
        const JsonSchemaValidator plans = schemaValidator("paraplan-plan");
        const JsonSchemaValidator clusters = schemaValidator("paraplan-cluster");
        QCOMPARE(plans.unsupportedKeywords(), QStringList());
        QCOMPARE(clusters.unsupportedKeywords(), QStringList());
        int examples = 0;
        int planFiles = 0;
        int clusterFiles = 0;
        for (const QString& name :
             QDir(sourcePath("resources/examples")).entryList({"*.paraplan.json"})) {
            const QString path = sourcePath("resources/examples/" + name);
            Plan plan;
            std::vector<std::string> errors;
            QVERIFY2(loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled()),
                     qPrintable(path));
            const QStringList problems = plans.validate(parse(readText(path)));
            QVERIFY2(problems.isEmpty(), qPrintable(path + ":\n  " + problems.join("\n  ")));
            ++examples;
        }
        QDirIterator it(dataPath(""), {"*.json"}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            const QJsonObject json = parse(readText(path));
            Plan plan;
            std::vector<std::string> errors;
            ClusterSpec cluster;
            std::string error;
            if (loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled())) {
                const QStringList problems = plans.validate(json);
                QVERIFY2(problems.isEmpty(), qPrintable(path + ":\n  " + problems.join("\n  ")));
                ++planFiles;
            } else if (loadCluster(path.toStdString(), {}, &cluster, &error,
                                   HardwareCatalog::bundled())) {
                const QStringList problems = clusters.validate(json);
                QVERIFY2(problems.isEmpty(), qPrintable(path + ":\n  " + problems.join("\n  ")));
                ++clusterFiles;
            }
        }
        // The bundled cluster presets are read by the same parser as a cluster file.
        int presets = 0;
        const QJsonObject bundled = parse(readText(sourcePath("resources/hardware/clusters.json")));
        for (const QJsonValue& entry : bundled.value("clusters").toArray()) {
            const QStringList problems = clusters.validate(entry);
            QVERIFY2(problems.isEmpty(), qPrintable(entry.toObject().value("id").toString() +
                                                    ":\n  " + problems.join("\n  ")));
            ++presets;
        }
        QVERIFY(examples >= 3);
        QVERIFY(planFiles >= 7);
        QVERIFY(presets >= 7);
        m_used << "paraplan-plan"
               << "paraplan-cluster";
        m_ran << QTest::currentTestFunction();
        qInfo("%d examples, %d test plans, %d test cluster files, %d cluster presets validated",
              examples, planFiles, clusterFiles, presets);
    }

    void writtenClustersValidate()
    {
        // export-cluster of every preset (a torus among them), with options and what-ifs, and
        // import-topology of every topology file it reads; each file read back by loadCluster.
        const JsonSchemaValidator validator = schemaValidator("paraplan-cluster");
        std::vector<QStringList> runs;
        for (const ClusterPresetInfo& preset : clusterPresets())
            runs.push_back({"export-cluster", "--cluster", QString::fromStdString(preset.id)});
        runs.push_back({"export-cluster", "--cluster", "dgx-h200", "--nodes", "16",
                        "--oversubscription", "2", "--nodes-per-rack", "4"});
        runs.push_back({"export-cluster", "--cluster", "dgx-h100", "--nodes", "4", "--nvswitch-out",
                        "0,2", "--degrade", "nic=0.5"});
        runs.push_back({"export-cluster", "--cluster", "dgx-a100", "--degrade", "spine=0.75"});
        runs.push_back({"export-cluster", "--cluster", "tpu-v4-pod", "--degrade", "ici=0.5"});
        // Each topology file as it is and with the GPU and NIC given (some files name neither).
        for (const QString& file : QDir(dataPath("topology")).entryList({"*.xml", "*.txt"})) {
            runs.push_back({"import-topology", dataPath("topology/" + file)});
            runs.push_back({"import-topology", dataPath("topology/" + file), "--gpu",
                            "h100-sxm5-80gb", "--nic", "ib-ndr", "--nodes", "2"});
        }
        runs.push_back({"import-topology", dataPath("topology/dgx-h100.topo.txt"), "--nodes", "4",
                        "--nic", "ib-ndr", "--oversubscription", "2"});
        QTemporaryDir dir;
        int validated = 0;
        int imported = 0;
        QSet<QString> parts; // the optional parts of the schema the files exercised
        for (QStringList args : runs) {
            const QString path = dir.filePath(QString("c%1.json").arg(validated));
            args << "-o" << path;
            const CliRun run = runCli(args);
            if (args.front() == "import-topology" && run.code == 2)
                continue; // a topology file refused on purpose (truncated, unknown GPU)
            QVERIFY2(run.code == 0, qPrintable(args.join(' ') + ": " + run.err));
            const QString text = readText(path);
            // A file, not a --json output: its keys are in QJsonObject's (sorted) order.
            QCOMPARE(parse(text).value("schema").toString(), QString("paraplan-cluster/1"));
            const QStringList problems = validator.validate(parse(text));
            QVERIFY2(problems.isEmpty(),
                     qPrintable(args.join(' ') + ":\n  " + problems.join("\n  ")));
            ClusterSpec cluster;
            std::string error;
            QVERIFY2(
                loadCluster(path.toStdString(), {}, &cluster, &error, HardwareCatalog::bundled()),
                error.c_str());
            ++validated;
            imported += args.front() == "import-topology" ? 1 : 0;
            for (const char* part : {"torus", "what_if", "nvlink_pairs", "\"fabric\": \"pcie\""})
                if (text.contains(part))
                    parts.insert(part);
        }
        QVERIFY2(imported >= 13, qPrintable(QString::number(imported)));
        QCOMPARE(parts.size(), 4);
        m_used << "paraplan-cluster";
        m_ran << QTest::currentTestFunction();
        qInfo("%d written cluster files validated (%d by import-topology)", validated, imported);
    }

    void writtenPlansValidate()
    {
        const JsonSchemaValidator validator = schemaValidator("paraplan-plan");
        QTemporaryDir dir;
        int validated = 0;
        auto check = [&](const QString& what, const QString& text) {
            const QStringList problems = validator.validate(parse(text));
            if (!problems.isEmpty())
                return what + ":\n  " + problems.join("\n  ");
            Plan read;
            std::vector<std::string> errors;
            if (!planFromJsonText(text.toStdString(), dir.path().toStdString(), &read, &errors,
                                  HardwareCatalog::bundled()))
                return what + ": the reader refuses it: " + QString::fromStdString(errors.front());
            ++validated;
            return QString();
        };
        // import-launch of a Megatron-LM script and a torchtitan TOML, to a file and stdout.
        for (const QString target : {"megatron", "torchtitan"}) {
            const QString config = dir.filePath("launch-" + target);
            QCOMPARE(runCli({"export", planPath("llama3-70b-dgx-h100.paraplan.json"), "--to",
                             target, "-o", config})
                         .code,
                     0);
            const QString out = dir.filePath(target + ".paraplan.json");
            const CliRun run = runCli({"import-launch", config, "--from", target, "--base",
                                       planPath("llama3-70b-two-racks.paraplan.json"), "-o", out});
            QVERIFY2(run.code == 0, qPrintable(run.err));
            QString problem = check("import-launch --from " + target, readText(out));
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            const CliRun toStdout = runCli({"import-launch", config, "--from", target, "--base",
                                            planPath("llama3-70b-dgx-h100.paraplan.json")});
            QCOMPARE(toStdout.code, 0);
            problem = check("import-launch --from " + target + " (stdout)", toStdout.out);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        // calibrate --apply: the fitted figures as measurements of the plan it writes.
        const QString calibrated = dir.filePath("calibrated.paraplan.json");
        const CliRun calibrate = runCli(
            {"calibrate", "--run",
             dataPath("logs/plan-70b-megatron.json") + ":" + dataPath("logs/megatron-70b.log"),
             "--fit", "gemm_scale", "--apply", planPath("llama3-70b-dgx-h100.paraplan.json"),
             "--plan-out", calibrated});
        QVERIFY2(calibrate.code == 0, qPrintable(calibrate.err));
        QVERIFY(parse(readText(calibrated)).contains("measured"));
        QString calibratedProblem = check("calibrate --apply --plan-out", readText(calibrated));
        QVERIFY2(calibratedProblem.isEmpty(), qPrintable(calibratedProblem));
        // savePlan after edits: stage layers, overrides, a measured figure, the other options,
        // a drawing with a node moved and one slowed.
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(loadPlan(planPath("llama3-70b-two-racks.paraplan.json").toStdString(), &plan,
                         &errors, HardwareCatalog::bundled()));
        plan.parallel.stage_layers = {39, 41};
        plan.parallel.tp_overlap = TpOverlap::AgGemm;
        plan.parallel.zero3_prefetch = 2;
        plan.parallel.dp_shard = 4;
        plan.training.kernels = KernelStyle::Fused;
        plan.training.framework = TrainingFramework::Megatron;
        plan.training.grad_reduce_bytes = 4;
        plan.figures.gemm_peak_fraction = userEntry(0.55, "test");
        plan.figures.dp_bucket_bytes = userEntry(4e7, "test");
        QVERIFY(applyMeasurementToPlan({"nic_efficiency", 0.8, 0.9, "fitted", "a run"}, &plan));
        QVERIFY(applyMeasurementToPlan({"hbm_fraction", 0.85, 0.8, "triad", "a run"}, &plan));
        TopologyGraph drawing = graphFromCluster(plan.cluster);
        drawing.nodes.front().x += 40;
        drawing.racks.front().name = "rack A";
        plan.drawing = std::make_shared<const TopologyGraph>(drawing);
        const QString saved = dir.filePath("edited.paraplan.json");
        std::string error;
        QVERIFY2(savePlan(saved.toStdString(), plan, &error, HardwareCatalog::bundled()),
                 error.c_str());
        const QJsonObject json = parse(readText(saved));
        for (const char* key : {"drawing", "measured", "overrides"})
            QVERIFY2(json.contains(key), key);
        QVERIFY(json.value("parallel").toObject().contains("stage_layers"));
        QString problem = check("savePlan after edits", readText(saved));
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // A plan on a torus, its cluster inline with the torus fields.
        Plan torus;
        QVERIFY(loadPlan(planPath("llama3-70b-dgx-h100.paraplan.json").toStdString(), &torus,
                         &errors, HardwareCatalog::bundled()));
        QVERIFY(clusterFromPreset("tpu-v4-pod", {}, &torus.cluster, &error,
                                  HardwareCatalog::bundled()));
        problem = check("a plan on a torus",
                        QString::fromStdString(planToJsonText(torus, HardwareCatalog::bundled())));
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(validated, 7);
        qInfo("%d written plans validated", validated);
        m_used << "paraplan-plan";
        m_ran << QTest::currentTestFunction();
    }

    void filesTheReadersRefuseTheSchemaRefuses_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("problem");
        const QJsonValue none = QJsonValue(QJsonValue::Undefined);
        auto row = [](const char* name) -> QTestData& { return QTest::newRow(name); };
        row("plan: unknown key") << "plan"
                                 << "colour" << QJsonValue("red") << "$.colour";
        row("plan: later schema") << "plan"
                                  << "schema" << QJsonValue("paraplan-plan/2") << "$.schema";
        row("plan: a cluster file's schema")
            << "plan"
            << "schema" << QJsonValue("paraplan-cluster/1") << "$.schema";
        row("plan: no parallel") << "plan"
                                 << "parallel" << none << "'parallel' missing";
        row("plan: no global_batch") << "plan"
                                     << "parallel.global_batch" << none << "'global_batch' missing";
        row("plan: tp a string") << "plan"
                                 << "parallel.tp" << QJsonValue("8")
                                 << "$.parallel.tp: expected integer";
        row("plan: tp a fraction")
            << "plan"
            << "parallel.tp" << QJsonValue(1.5) << "$.parallel.tp: expected integer";
        row("plan: unknown parallel key")
            << "plan"
            << "parallel.tensor" << QJsonValue(8) << "$.parallel.tensor";
        row("plan: rank_order twice")
            << "plan"
            << "parallel.rank_order" << QJsonValue("tp-tp-dp-pp") << "$.parallel.rank_order";
        row("plan: stage_layers empty")
            << "plan"
            << "parallel.stage_layers" << QJsonValue(QJsonArray()) << "minItems 1";
        row("plan: stage of no layers")
            << "plan"
            << "parallel.stage_layers" << QJsonValue(QJsonArray{40, 0}) << "minimum";
        row("plan: dtype unknown") << "plan"
                                   << "training.dtype" << QJsonValue("bf17") << "$.training.dtype";
        row("plan: sequence_parallel a number")
            << "plan"
            << "parallel.sequence_parallel" << QJsonValue(1) << "expected boolean";
        row("plan: model empty") << "plan"
                                 << "model" << QJsonValue(QJsonObject()) << "minProperties 1";
        row("plan: model key unknown") << "plan"
                                       << "model.params" << QJsonValue(7e10) << "$.model.params";
        row("plan: a cluster file with a cluster's field")
            << "plan"
            << "cluster" << QJsonValue(QJsonObject{{"file", "dgx-h100"}, {"gpu", "h100-sxm"}})
            << "$.cluster: 0 branches of oneOf";
        row("plan: cluster unknown key") << "plan"
                                         << "cluster.racks" << QJsonValue(2) << "$.cluster";
        row("plan: overrides a string")
            << "plan"
            << "overrides.hbm_fraction" << QJsonValue("0.8") << "expected number";
        row("plan: measured not a list")
            << "plan"
            << "measured" << QJsonValue(QJsonObject()) << "expected array";
        row("plan: measured without assumed")
            << "plan"
            << "measured"
            << QJsonValue(QJsonArray{QJsonObject{{"figure", "hbm_fraction"}, {"value", 0.8}}})
            << "'assumed' missing";
        row("plan: drawing a list") << "plan"
                                    << "drawing" << QJsonValue(QJsonArray()) << "expected object";
        row("plan: drawing rack x a string")
            << "plan"
            << "drawing.racks.0.x" << QJsonValue("left") << "$.drawing.racks[0].x";
        row("plan: drawing node rack a fraction")
            << "plan"
            << "drawing.nodes.1.rack" << QJsonValue(0.5) << "$.drawing.nodes[1].rack";
        row("plan: drawing chips out of strings")
            << "plan"
            << "drawing.nodes.0.nvswitch_chips_out" << QJsonValue(QJsonArray{"0"})
            << "$.drawing.nodes[0].nvswitch_chips_out[0]: expected integer";
        row("plan: drawing racks an object")
            << "plan"
            << "drawing.racks" << QJsonValue(QJsonObject()) << "expected array";
        row("plan: drawing node not an object")
            << "plan"
            << "drawing.nodes.0" << QJsonValue(3) << "$.drawing.nodes[0]: expected object";
        row("cluster: torus dims of strings")
            << "cluster"
            << "torus" << QJsonValue(QJsonObject{{"dims", QJsonArray{"a", "b", "c"}}})
            << "$.torus.dims";
        row("cluster: torus dims of two")
            << "cluster"
            << "torus" << QJsonValue(QJsonObject{{"dims", QJsonArray{4, 4}}}) << "$.torus.dims";
        row("cluster: torus wrap of numbers")
            << "cluster"
            << "torus" << QJsonValue(QJsonObject{{"wrap", QJsonArray{1, 0, 1}}}) << "$.torus.wrap";
        row("cluster: nvlink pairs an object")
            << "cluster"
            << "node.nvlink_pairs" << QJsonValue(QJsonObject()) << "expected array";
        row("cluster: nvlink pair of strings")
            << "cluster"
            << "node.nvlink_pairs"
            << QJsonValue(QJsonArray{QJsonObject{{"gpus", QJsonArray{"0", "1"}}, {"links", 2}}})
            << "$.node.nvlink_pairs[0].gpus[0]: expected integer";
        row("cluster: chips out a number")
            << "cluster"
            << "what_if" << QJsonValue(QJsonObject{{"nvswitch_chips_out", 1}})
            << "$.what_if.nvswitch_chips_out: expected array";
        row("cluster: unknown key") << "cluster"
                                    << "colour" << QJsonValue("red") << "$.colour";
        row("cluster: later schema") << "cluster"
                                     << "schema" << QJsonValue("paraplan-cluster/2") << "$.schema";
        row("cluster: a plan's schema") << "cluster"
                                        << "schema" << QJsonValue("paraplan-plan/1") << "$.schema";
        row("cluster: neither preset nor gpu") << "cluster"
                                               << "gpu" << none << "branches of anyOf";
        row("cluster: nodes a string") << "cluster"
                                       << "nodes" << QJsonValue("2") << "$.nodes: expected integer";
        row("cluster: fabric unknown") << "cluster"
                                       << "node.fabric" << QJsonValue("torus") << "$.node.fabric";
        row("cluster: node key unknown")
            << "cluster"
            << "node.nvlink_gbps" << QJsonValue(450) << "$.node.nvlink_gbps";
        row("cluster: efficiency a string")
            << "cluster"
            << "node.nic_efficiency" << QJsonValue("high") << "$.node.nic_efficiency";
        row("cluster: efficiency unknown origin")
            << "cluster"
            << "node.nic_efficiency.origin" << QJsonValue("guess") << "$.node.nic_efficiency";
        row("cluster: efficiency above range")
            << "cluster"
            << "node.nic_efficiency.value" << QJsonValue(2.0) << "$.node.nic_efficiency";
        row("cluster: network key unknown")
            << "cluster"
            << "network.leaves" << QJsonValue(4) << "$.network.leaves";
        row("cluster: sharp a string")
            << "cluster"
            << "network.sharp" << QJsonValue("yes") << "expected boolean";
        row("cluster: switch links not a list")
            << "cluster"
            << "node.switch_links_per_gpu" << QJsonValue(18) << "expected array";
        row("cluster: what_if key unknown")
            << "cluster"
            << "what_if.gpu_factor" << QJsonValue(0.5) << "$.what_if.gpu_factor";
    }

    void filesTheReadersRefuseTheSchemaRefuses()
    {
        // A real file, altered in one place: its reader refuses it and so does its schema.
        QFETCH(QString, kind);
        QFETCH(QString, path);
        QFETCH(QJsonValue, value);
        QFETCH(QString, problem);
        const bool plan = kind == "plan";
        const QJsonObject good =
            plan ? (path.startsWith("drawing")
                        ? savedPlanWithDrawing()
                        : parse(readText(planPath("llama3-70b-dgx-h100.paraplan.json"))))
                 : parse(QString::fromStdString(clusterToJsonText([] {
                       ClusterSpec cluster;
                       std::string error;
                       clusterFromPreset("dgx-h100", {}, &cluster, &error,
                                         HardwareCatalog::bundled());
                       return cluster;
                   }())));
        const JsonSchemaValidator validator =
            schemaValidator(plan ? "paraplan-plan" : "paraplan-cluster");
        QCOMPARE(plan ? planErrors(good) : clusterErrors(good), QString());
        QCOMPARE(validator.validate(good), QStringList());
        const QJsonObject bad = withValue(good, path.split('.'), value).toObject();
        const QString refusal = plan ? planErrors(bad) : clusterErrors(bad);
        QVERIFY2(!refusal.isEmpty(), "the reader accepts it");
        // ... for what was altered (its first key is named), not for something else.
        QVERIFY2(refusal.contains(path.split('.').front()), qPrintable("reader: " + refusal));
        const QStringList problems = validator.validate(bad);
        QVERIFY2(problems.join(' ').contains(problem),
                 qPrintable("reader: " + refusal + "\nschema: " + problems.join("; ")));
    }

    void everySchemaFileIsUsed()
    {
        // A schema file that no output or file validated above uses describes nothing.
        if (m_ran.size() < 4)
            QSKIP("runs only after the four tests that validate outputs and files");
        for (const QString& file :
             QDir(sourcePath("resources/schema")).entryList({"*.schema.json"})) {
            const QString name = QString(file).remove(QRegularExpression("-1\\.schema\\.json$"));
            QVERIFY2(m_used.contains(name),
                     qPrintable("resources/schema/" + file + " is used by no output"));
        }
    }

private:
    QSet<QString> m_used; ///< schemas the tests above validated real outputs or files against
    QSet<QString> m_ran;  ///< those tests, once each passed
};

QTEST_MAIN(TestCliSchema)
#include "tst_cli_schema.moc"
