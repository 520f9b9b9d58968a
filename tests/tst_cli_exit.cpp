// paraplan-cli's exit status, command by command, from the real binary: 0 done (yes), 1 done
// and the answer is no (a plan that does not fit, nothing fits, a set outside --tolerance, an
// answer that is not right), 2 bad input, 3 I/O error (a missing input, an output that cannot
// be written, standard output on /dev/full). Every status 2 or 3 comes with exactly one
// "error: " line on stderr that names the file where there is one.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

namespace {

QString binary()
{
    return QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-cli";
}

QString example(const char* name)
{
    return QStringLiteral(PARAPLAN_SOURCE_DIR) + "/resources/examples/" + name;
}

QString data(const QString& relative)
{
    return QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/" + relative;
}

struct Outcome
{
    int code = -1;
    QString out;
    QString err;
};

// Runs paraplan-cli; `stdoutFile` (e.g. /dev/full) receives its standard output when given.
Outcome run(const QStringList& args, const QString& stdoutFile = {})
{
    QProcess process;
    if (!stdoutFile.isEmpty())
        process.setStandardOutputFile(stdoutFile);
    process.start(binary(), args);
    Outcome outcome;
    if (!process.waitForFinished(120000) || process.exitStatus() != QProcess::NormalExit)
        return outcome;
    outcome.code = process.exitCode();
    outcome.out = QString::fromUtf8(process.readAllStandardOutput());
    outcome.err = QString::fromUtf8(process.readAllStandardError());
    return outcome;
}

int errorLines(const QString& err)
{
    int count = 0;
    for (const QString& line : err.split('\n', Qt::SkipEmptyParts))
        count += line.startsWith("error: ") ? 1 : 0;
    return count;
}

} // namespace

class TestCliExit : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    QString badJson() const { return m_dir.filePath("bad.json"); }
    QString missing() const { return m_dir.filePath("absent.json"); }

private slots:
    void initTestCase()
    {
        if (!QFileInfo(binary()).isExecutable())
            QSKIP("paraplan-cli not built");
        QVERIFY(m_dir.isValid());
        QFile bad(badJson());
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"schema\": \"paraplan-plan/1\", \"model\": ");
    }

    void exitStatusPerCommand_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("errorPart"); // for 2 and 3: in the one error line

        const QString fits = example("llama3-70b-dgx-h100.paraplan.json");
        const QString noFit = data("plans/llama3-70b-no-fit.json");
        const QString nothingFits = data("plans/gpt3-175b-one-node.json");
        const QStringList collective{"--op", "all_reduce", "--bytes", "1GB", "--ranks", "8"};
        for (const char* command : {"evaluate", "walkthrough", "cliffs"}) {
            const QString c = command;
            QTest::newRow(qPrintable(c + ": fits")) << QStringList{c, fits} << 0 << "";
            QTest::newRow(qPrintable(c + ": fits, json"))
                << QStringList{c, fits, "--json"} << 0 << "";
            QTest::newRow(qPrintable(c + ": does not fit")) << QStringList{c, noFit} << 1 << "";
            QTest::newRow(qPrintable(c + ": does not fit, json"))
                << QStringList{c, noFit, "--json"} << 1 << "";
            QTest::newRow(qPrintable(c + ": bad option"))
                << QStringList{c, fits, "--bogus"} << 2 << "unknown option '--bogus'";
            QTest::newRow(qPrintable(c + ": missing file"))
                << QStringList{c, missing()} << 3 << missing() + "': No such file or directory";
            QTest::newRow(qPrintable(c + ": bad JSON file"))
                << QStringList{c, badJson()} << 2 << badJson();
        }
        QTest::newRow("report json: fits") << QStringList{"report", fits, "--json"} << 0 << "";
        QTest::newRow("report json: does not fit")
            << QStringList{"report", noFit, "--json"} << 1 << "";
        QTest::newRow("report csv: does not fit")
            << QStringList{"report", noFit, "--csv", "--table", "memory"} << 1 << "";
        QTest::newRow("report: bad table")
            << QStringList{"report", fits, "--csv", "--table", "links"} << 2 << "--table";
        QTest::newRow("report: csv without table")
            << QStringList{"report", fits, "--csv"} << 2 << "--csv needs --table";
        QTest::newRow("report: missing file")
            << QStringList{"report", missing(), "--json"} << 3 << missing();
        QTest::newRow("report: bad JSON file")
            << QStringList{"report", badJson(), "--json"} << 2 << badJson();
        QTest::newRow("report: -o /dev/full")
            << QStringList{"report", fits, "--json", "-o", "/dev/full"} << 3 << "'/dev/full'";
#ifdef PARAPLAN_TEST_HAVE_GUI
        QTest::newRow("report pdf: -o into a missing directory")
            << QStringList{"report", fits, "-o", m_dir.filePath("none/r.pdf")} << 3
            << m_dir.filePath("none/r.pdf") + "': No such file or directory";
#else
        // A build without the GUI (PARAPLAN_BUILD_GUI=OFF) has no PDF writer: it says so.
        QTest::newRow("report pdf: no GUI in this build")
            << QStringList{"report", fits, "-o", m_dir.filePath("r.pdf")} << 2
            << "needs Paraplan built with Qt Widgets";
#endif

        QTest::newRow("search: a layout fits")
            << QStringList{"search", fits, "--max-interleave", "2"} << 0 << "";
        QTest::newRow("search: nothing fits") << QStringList{"search", nothingFits} << 1 << "";
        QTest::newRow("search: nothing fits, json")
            << QStringList{"search", nothingFits, "--json"} << 1 << "";
        QTest::newRow("search: bad option value")
            << QStringList{"search", fits, "--top", "0"} << 2 << "--top";
        QTest::newRow("search: missing file") << QStringList{"search", missing()} << 3 << missing();
        QTest::newRow("search: bad JSON file")
            << QStringList{"search", badJson()} << 2 << badJson();

        QTest::newRow("validate: bundled sets") << QStringList{"validate"} << 0 << "";
        QTest::newRow("validate: within a wide tolerance")
            << QStringList{"validate", "--tolerance", "0.5"} << 0 << "";
        QTest::newRow("validate: outside a tight tolerance")
            << QStringList{"validate", "--tolerance", "0.001"} << 1 << "";
        QTest::newRow("validate: outside, json")
            << QStringList{"validate", "--tolerance", "0.001", "--json"} << 1 << "";
        QTest::newRow("validate: bad tolerance")
            << QStringList{"validate", "--tolerance", "-1"} << 2 << "--tolerance";
        QTest::newRow("validate: missing file")
            << QStringList{"validate", missing()} << 3 << missing();
        QTest::newRow("validate: bad JSON file")
            << QStringList{"validate", badJson()} << 2 << badJson();

        QTest::newRow("practice: an answer far off")
            << QStringList{"practice", fits, "--question", "1", "--answer", "1000 s"} << 1 << "";
        QTest::newRow("practice: unreadable answer")
            << QStringList{"practice", fits, "--question", "1", "--answer", "soon"} << 2
            << "--answer";
        QTest::newRow("practice: missing file")
            << QStringList{"practice", missing()} << 3 << missing();

        QTest::newRow("collective")
            << (QStringList{"collective"} + collective + QStringList{"--cluster", "dgx-h100"}) << 0
            << "";
        QTest::newRow("collective: bad value")
            << (QStringList{"collective"} + collective +
                QStringList{"--cluster", "dgx-h100", "--stride", "x"})
            << 2 << "--stride";
        QTest::newRow("collective: missing cluster file")
            << (QStringList{"collective"} + collective + QStringList{"--cluster", missing()}) << 3
            << missing() + "': No such file or directory";
        QTest::newRow("collective: bad cluster file")
            << (QStringList{"collective"} + collective + QStringList{"--cluster", badJson()}) << 2
            << badJson();
        QTest::newRow("collective: unknown preset")
            << (QStringList{"collective"} + collective + QStringList{"--cluster", "dgx-h1000"}) << 2
            << "neither a cluster preset";
        QTest::newRow("sweep-collective")
            << QStringList{"sweep-collective", "--op",    "all_gather", "--ranks", "8",
                           "--cluster",        "dgx-h100"}
            << 0 << "";
        QTest::newRow("dp-traffic")
            << QStringList{"dp-traffic", "--params", "7e9", "--ranks", "8"} << 0 << "";
        QTest::newRow("model") << QStringList{"model", "--preset", "llama3-8b"} << 0 << "";
        QTest::newRow("model: missing config")
            << QStringList{"model", "--hf-config", missing()} << 3 << missing();
        QTest::newRow("model: bad config")
            << QStringList{"model", "--hf-config", badJson()} << 2 << badJson();
        QTest::newRow("presets") << QStringList{"presets"} << 0 << "";
        QTest::newRow("import-measurements")
            << QStringList{"import-measurements", data("measurements/all_reduce_8xh200.log")} << 0
            << "";
        QTest::newRow("import-measurements: missing file")
            << QStringList{"import-measurements", missing()} << 3 << missing();
        QTest::newRow("import-measurements: bad file")
            << QStringList{"import-measurements", badJson()} << 2 << badJson();
        QTest::newRow("import-topology")
            << QStringList{"import-topology", data("topology/dgx-h100.topo.txt")} << 0 << "";
        QTest::newRow("import-topology: missing file")
            << QStringList{"import-topology", missing()} << 3 << missing();
        QTest::newRow("import-topology: -o /dev/full")
            << QStringList{"import-topology", data("topology/dgx-h100.topo.txt"), "-o", "/dev/full"}
            << 3 << "'/dev/full'";
        QTest::newRow("export-cluster: -o into a missing directory")
            << QStringList{"export-cluster", "--cluster", "dgx-h100", "-o",
                           m_dir.filePath("none/c.json")}
            << 3 << m_dir.filePath("none/c.json");
        QTest::newRow("export-cluster: -o a directory")
            << QStringList{"export-cluster", "--cluster", "dgx-h100", "-o", m_dir.path()} << 3
            << "it is a directory";
        const QString run =
            data("logs/plan-70b-megatron.json") + ":" + data("logs/megatron-70b.log");
        QTest::newRow("calibrate: -o /dev/full")
            << QStringList{"calibrate", "--run", run, "--fit", "gemm_scale", "-o", "/dev/full"} << 3
            << "'/dev/full'";
        QTest::newRow("calibrate: missing log")
            << QStringList{"calibrate", "--run",
                           data("logs/plan-70b-megatron.json") + ":" + missing()}
            << 3 << missing();
        QTest::newRow("help") << QStringList{"help"} << 0 << "";
        QTest::newRow("help: unknown command") << QStringList{"help", "bogus"} << 2 << "bogus";
        QTest::newRow("no command") << QStringList{} << 2 << "no command";
    }

    void exitStatusPerCommand()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, errorPart);
        const Outcome outcome = run(args);
        QVERIFY2(
            outcome.code == code,
            qPrintable(
                QString("exit %1, expected %2: %3").arg(outcome.code).arg(code).arg(outcome.err)));
        if (code >= 2) {
            QCOMPARE(errorLines(outcome.err), 1);
            QVERIFY2(outcome.err.contains(errorPart), qPrintable(outcome.err));
        } else {
            // 0 and 1 are answers: printed, with no error line.
            QCOMPARE(errorLines(outcome.err), 0);
            QVERIFY(!outcome.out.isEmpty());
        }
    }

    void practiceExitsZeroOnTheRightAnswer()
    {
        const QString plan = example("llama3-70b-dgx-h100.paraplan.json");
        const Outcome revealed = run({"practice", plan, "--question", "2", "--reveal"});
        QCOMPARE(revealed.code, 0);
        const QRegularExpressionMatch answer =
            QRegularExpression("\\nAnswer: ([^\\n]+)\\n").match(revealed.out);
        QVERIFY2(answer.hasMatch(), qPrintable(revealed.out));
        const Outcome graded =
            run({"practice", plan, "--question", "2", "--answer", answer.captured(1)});
        QVERIFY2(graded.code == 0 && graded.out.contains("verdict: right"),
                 qPrintable(answer.captured(1) + ": " + graded.out.right(400)));
    }

    void standardOutputOnDevFullExitsThree_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("evaluate --json")
            << QStringList{"evaluate", example("llama3-70b-dgx-h100.paraplan.json"), "--json"};
        QTest::newRow("evaluate") << QStringList{"evaluate",
                                                 example("gpt3-175b-dgx-a100.paraplan.json")};
        QTest::newRow("search --json")
            << QStringList{"search", example("llama3-70b-dgx-h100.paraplan.json"), "--json",
                           "--max-interleave", "2"};
        QTest::newRow("report --csv")
            << QStringList{"report", example("llama3-70b-dgx-h100.paraplan.json"), "--csv",
                           "--table", "collectives"};
#ifdef PARAPLAN_TEST_HAVE_GUI
        QTest::newRow("report pdf to stdout")
            << QStringList{"report", example("llama3-70b-dgx-h100.paraplan.json"), "-o", "-"};
#endif
        QTest::newRow("presets --json") << QStringList{"presets", "--json"};
        QTest::newRow("--help") << QStringList{"--help"};
        QTest::newRow("--version") << QStringList{"--version"};
        QTest::newRow("export-cluster -o -")
            << QStringList{"export-cluster", "--cluster", "dgx-h100", "-o", "-"};
    }

    void standardOutputOnDevFullExitsThree()
    {
        QFETCH(QStringList, args);
        if (!QFileInfo::exists("/dev/full"))
            QSKIP("no /dev/full on this system");
        const Outcome outcome = run(args, "/dev/full");
        QCOMPARE(outcome.code, 3);
        QCOMPARE(errorLines(outcome.err), 1);
        QVERIFY2(
            outcome.err.contains("error: cannot write to standard output: No space left on device"),
            qPrintable(outcome.err));
    }

    void outputToStandardStreamsDevicesAndLongNames()
    {
        // -o /dev/stdout (to a pipe and to a redirected file), -o /dev/null and a FIFO are
        // written to, not renamed over; a 250-byte name saves again and again.
        const QString plan = QStringLiteral(PARAPLAN_SOURCE_DIR) +
                             "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
        const Outcome piped = run({"report", plan, "--json", "-o", "/dev/stdout"});
        QCOMPARE(piped.code, 0);
        QVERIFY2(piped.out.startsWith("{"), qPrintable(piped.err));
        const QString redirected = m_dir.filePath("redirected.json");
        const Outcome toFile = run({"report", plan, "--json", "-o", "/dev/stdout"}, redirected);
        QCOMPARE(toFile.code, 0);
        QFile file(redirected);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("\"schema\": \"paraplan-evaluate/1\""));
        QCOMPARE(run({"report", plan, "--json", "-o", "/dev/null"}).code, 0);
        QCOMPARE(QFileInfo("/dev/null").isFile(), false); // still the device
        const QString longName = m_dir.filePath(QString(245, 'p') + ".json");
        for (int i = 0; i < 3; ++i) {
            const Outcome saved = run({"report", plan, "--json", "-o", longName});
            QVERIFY2(saved.code == 0, qPrintable(saved.err));
        }
        QVERIFY(QFileInfo(longName).size() > 100);
        QCOMPARE(QDir(m_dir.path()).entryList({".paraplan-*"}, QDir::Files | QDir::Hidden).size(),
                 0);
    }

    void dashReadsStandardInput()
    {
        // "-" for the plan or the file: standard input, from a pipe or a redirected file.
        const QString plan = QStringLiteral(PARAPLAN_SOURCE_DIR) +
                             "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
        QProcess redirected;
        redirected.setStandardInputFile(plan);
        redirected.start(binary(), {"evaluate", "-"});
        QVERIFY(redirected.waitForFinished(60000));
        QCOMPARE(redirected.exitCode(), 0);
        QVERIFY(redirected.readAllStandardOutput().startsWith("Llama 3 70B"));
        QFile log(QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/measurements/all_reduce_8xh200.log");
        QVERIFY(log.open(QIODevice::ReadOnly));
        QProcess piped;
        piped.start(binary(), {"import-measurements", "-"});
        QVERIFY(piped.waitForStarted());
        piped.write(log.readAll());
        piped.closeWriteChannel();
        QVERIFY(piped.waitForFinished(60000));
        QCOMPARE(piped.exitCode(), 0);
        QVERIFY(piped.readAllStandardOutput().contains("28 collective points"));
    }

    void unwritableDirectoryExitsThree()
    {
        if (geteuid() == 0)
            QSKIP("running as root: a directory without write permission is still writable to "
                  "root, so this case cannot be made here (the missing-directory and /dev/full "
                  "cases above run as root too)");
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::ExeOwner));
        const QString target = dir.filePath("report.json");
        const Outcome outcome =
            run({"report", example("llama3-70b-dgx-h100.paraplan.json"), "--json", "-o", target});
        QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QCOMPARE(outcome.code, 3);
        QCOMPARE(errorLines(outcome.err), 1);
        QVERIFY2(outcome.err.contains(target) && outcome.err.contains("Permission denied"),
                 qPrintable(outcome.err));
        QVERIFY(!QFile::exists(target));
    }

    void anUnreadableInputExitsThree()
    {
        if (geteuid() == 0)
            QSKIP("running as root: root reads a file without read permission");
        const QString copy = m_dir.filePath("unreadable.json");
        QVERIFY(QFile::copy(example("llama3-70b-dgx-h100.paraplan.json"), copy));
        QVERIFY(QFile::setPermissions(copy, QFile::WriteOwner));
        const Outcome outcome = run({"evaluate", copy});
        QCOMPARE(outcome.code, 3);
        QVERIFY2(outcome.err.contains(copy + "': Permission denied"), qPrintable(outcome.err));
    }

    void theHelpDocumentsTheExitStatus()
    {
        const Outcome help = run({"--help"});
        QCOMPARE(help.code, 0);
        const int section = help.out.indexOf("Exit status");
        QVERIFY(section > 0);
        for (const char* line : {"  0  ", "  1  ", "  2  ", "  3  "})
            QVERIFY2(help.out.indexOf(line, section) > section, line);
        QVERIFY(help.out.contains("paraplan-NAME-1.schema.json"));
    }
};

QTEST_GUILESS_MAIN(TestCliExit)
#include "tst_cli_exit.moc"
