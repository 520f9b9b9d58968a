// The example plans as a user of the package meets them: found by listing the data folder
// (either suffix, nothing else), listed by `paraplan-cli examples` with paths that evaluate,
// its --json valid against resources/schema/paraplan-examples-1.schema.json; the completion
// scripts written from the command table.
#include "clirun.h"
#include "commandtable.h"
#include "completion.h"
#include "datapaths.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace paraplan;
using paraplan::test::runCli;

namespace {

// The subset of JSON Schema the Paraplan schema files use (type, const, required,
// properties, additionalProperties: false, items, minItems, minLength): the first problem,
// or empty when `value` is valid.
QString violation(const QJsonValue& value, const QJsonObject& schema, const QString& at)
{
    const QString type = schema.value("type").toString();
    if (schema.contains("const") && value != schema.value("const"))
        return at + ": not " + schema.value("const").toString();
    if (type == "string") {
        if (!value.isString())
            return at + ": not a string";
        if (value.toString().size() < schema.value("minLength").toInt(0))
            return at + ": too short";
    } else if (type == "array") {
        if (!value.isArray())
            return at + ": not an array";
        const QJsonArray array = value.toArray();
        if (array.size() < schema.value("minItems").toInt(0))
            return at + ": too few items";
        for (int i = 0; i < array.size(); ++i) {
            const QString problem = violation(array[i], schema.value("items").toObject(),
                                              at + "[" + QString::number(i) + "]");
            if (!problem.isEmpty())
                return problem;
        }
    } else if (type == "object") {
        if (!value.isObject())
            return at + ": not an object";
        const QJsonObject object = value.toObject();
        const QJsonObject properties = schema.value("properties").toObject();
        for (const QJsonValue& key : schema.value("required").toArray()) {
            if (!object.contains(key.toString()))
                return at + ": lacks " + key.toString();
        }
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (!properties.contains(it.key())) {
                if (schema.value("additionalProperties") == QJsonValue(false))
                    return at + ": unexpected " + it.key();
                continue;
            }
            const QString problem =
                violation(it.value(), properties.value(it.key()).toObject(), at + "." + it.key());
            if (!problem.isEmpty())
                return problem;
        }
    }
    return {};
}

QJsonObject readJson(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return QJsonDocument::fromJson(file.readAll()).object();
}

} // namespace

class TestExamples : public QObject
{
    Q_OBJECT

private slots:
    void examplesAreListedFromTheFolderWithEitherSuffix()
    {
        QTemporaryDir dir;
        for (const char* name : {"b.paraplan.json", "a.json", "notes.txt", "run.sh"}) {
            QFile file(dir.filePath(name));
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        QDir(dir.path()).mkdir("c.json"); // a folder is not a plan
        const QStringList found = datapaths::examplePlansIn(dir.path());
        QCOMPARE(found, QStringList({dir.filePath("a.json"), dir.filePath("b.paraplan.json")}));
        QCOMPARE(datapaths::exampleName(found[1]), QString("b"));
        QCOMPARE(datapaths::exampleName(found[0]), QString("a"));
    }

    void theBundledExamplesAreFoundAndEachEvaluates()
    {
        // From the build folder the source tree's resources/ is the data folder.
        QCOMPARE(datapaths::dataDir(), QDir(PARAPLAN_SOURCE_DIR "/resources").canonicalPath());
        const QStringList examples = datapaths::examplePlans();
        QVERIFY(examples.size() >= 3);
        for (const QString& path : examples) {
            const auto run = runCli({"evaluate", path});
            QVERIFY2(run.code == 0 || run.code == 1, qPrintable(path + ": " + run.err));
            QVERIFY2(run.out.contains("step time"), qPrintable(run.out.left(400)));
        }
    }

    void examplesCommandListsFullPaths()
    {
        const auto run = runCli({"examples"});
        QCOMPARE(run.code, 0);
        QVERIFY(run.err.isEmpty());
        for (const QString& path : datapaths::examplePlans()) {
            QVERIFY2(QFileInfo(path).isAbsolute(), qPrintable(path));
            QVERIFY2(run.out.contains(path), qPrintable(run.out));
        }
    }

    void examplesJsonMatchesItsSchema()
    {
        const auto run = runCli({"examples", "--json"});
        QCOMPARE(run.code, 0);
        const QJsonObject printed = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const QJsonObject schema =
            readJson(PARAPLAN_SOURCE_DIR "/resources/schema/paraplan-examples-1.schema.json");
        QCOMPARE(schema.value("$id").toString(), QString("paraplan-examples/1"));
        QCOMPARE(violation(printed, schema, "$"), QString());
        QCOMPARE(printed.value("examples").toArray().size(), datapaths::examplePlans().size());
        // The checker itself refuses what the schema forbids.
        QJsonObject broken = printed;
        broken.insert("schema", "paraplan-examples/2");
        QVERIFY(!violation(broken, schema, "$").isEmpty());
        broken = printed;
        broken.insert("extra", 1);
        QVERIFY(!violation(broken, schema, "$").isEmpty());
        broken = printed;
        broken.insert("examples", QJsonArray());
        QVERIFY(!violation(broken, schema, "$").isEmpty());
    }

    void completionScriptsNameEveryCommandAndOption()
    {
        const QString bash = QString::fromStdString(cli::completionScript("bash"));
        const QString zsh = QString::fromStdString(cli::completionScript("zsh"));
        QVERIFY(bash.contains("complete -F _paraplan_cli paraplan-cli"));
        QVERIFY(zsh.startsWith("#compdef paraplan-cli\n"));
        for (const cli::Command& command : cli::commandTable()) {
            QVERIFY2(bash.contains(QString("    %1)\n").arg(command.name)), command.name);
            QVERIFY2(zsh.contains(QString("    %1)\n").arg(command.name)), command.name);
            for (const QCommandLineOption& option : command.options()) {
                const QString name = option.names().constFirst();
                const QString dashed = (name.size() == 1 ? "-" : "--") + name;
                QVERIFY2(bash.contains(dashed), qPrintable(dashed));
                QVERIFY2(zsh.contains("'" + dashed), qPrintable(dashed));
            }
        }
        QVERIFY(cli::completionScript("fish").empty());
        const auto bad = runCli({"--completion", "fish"});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.startsWith("error: "));
    }
};

QTEST_MAIN(TestExamples)
#include "tst_examples.moc"
