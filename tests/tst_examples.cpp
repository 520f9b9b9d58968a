// The example plans as a user of the package meets them: found by listing the data folder
// (either suffix, nothing else), listed by `paraplan-cli examples` with paths that evaluate,
// its --json lists them (its schema is checked by tst_cli_schema); the completion
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
        QCOMPARE(datapaths::planFileStem(found[1]), QString("b"));
        QCOMPARE(datapaths::planFileStem(found[0]), QString("a"));
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

    void examplesJsonListsEveryExample()
    {
        // Its shape is checked against resources/schema/paraplan-examples-1.schema.json by
        // tst_cli_schema, with every other JSON output.
        const auto run = runCli({"examples", "--json"});
        QCOMPARE(run.code, 0);
        const QJsonObject printed = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(printed.value("schema").toString(), QString("paraplan-examples/1"));
        const QJsonArray listed = printed.value("examples").toArray();
        QCOMPARE(listed.size(), datapaths::examplePlans().size());
        for (int i = 0; i < listed.size(); ++i)
            QCOMPARE(listed[i].toObject().value("path").toString(), datapaths::examplePlans()[i]);
    }

    void completionScriptsNameEveryCommandAndOption()
    {
        const QString bash = QString::fromStdString(cli::completionScript("bash"));
        const QString zsh = QString::fromStdString(cli::completionScript("zsh"));
        QVERIFY(bash.contains("complete -F _paraplan_cli paraplan-cli"));
        QVERIFY(bash.contains("complete -F _paraplan paraplan")); // the window's too
        QVERIFY(zsh.startsWith("#compdef paraplan-cli paraplan\n"));
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
