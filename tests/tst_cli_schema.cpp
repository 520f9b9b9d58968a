// Every JSON output of paraplan-cli against its JSON Schema (resources/schema/): each command
// that offers --json is run on the bundled examples and the test data, its output starts with
// "schema": "paraplan-NAME/1" and validates against paraplan-NAME-1.schema.json. The suite
// also fails when a command offers --json but is not run here, when a schema named by an
// output has no file, and when a schema file is used by no output. The validator itself
// (tests/jsonschema.h) is tested first, keyword by keyword, on documents it must refuse.
#include "clirun.h"
#include "commandtable.h"
#include "jsonschema.h"

#include <QDir>
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
    }
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
        QSet<QString> used;
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
        // A schema file that no output uses describes nothing.
        for (const QString& file :
             QDir(sourcePath("resources/schema")).entryList({"*.schema.json"})) {
            const QString name = QString(file).remove(QRegularExpression("-1\\.schema\\.json$"));
            QVERIFY2(used.contains(name),
                     qPrintable("resources/schema/" + file + " is used by no output"));
        }
        QVERIFY(validated > 40);
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
        const CliRun run = runCli(
            {"evaluate", sourcePath("resources/examples/llama3-70b-dgx-h100.paraplan.json"), "--json"});
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
};

QTEST_MAIN(TestCliSchema)
#include "tst_cli_schema.moc"
