// The planner binary's command line, run as a user's script would (the real `paraplan` on the
// offscreen platform): each bad option or unopenable plan ends with paraplan-cli's exit status
// (2 bad input; 3 a plan missing or unreadable, a screenshot that cannot be written) and one
// "error: ..." line naming it, in seconds, and leaves no image (an old one untouched); a good
// one writes an image of the requested size. And in the window: a plan that fails to open
// says so in the status bar without taking the title, an invalid one is shown and marked.
#include "mainwindow.h"

#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace paraplan::ui;

namespace {

const QString kExample =
    PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-dgx-h100.paraplan.json";

struct Run
{
    int status = -1;
    QStringList errorLines; ///< stderr lines starting "error: "
    QString err;
    QString out;
    qint64 ms = 0;
};

// The Qt notices the offscreen platform itself prints are not ours; every other line is.
bool qtNotice(const QString& line)
{
    return line.startsWith("This plugin does not support") || line.startsWith("QStandardPaths:");
}

// The window's environment: the offscreen platform and a scratch home (settings, recent files
// and recovery copies go there, not to the user's); `display` false: no display at all
// (DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM unset).
QProcessEnvironment guiEnvironment(const QString& home, bool display = true)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    if (!display) {
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(name);
    }
    env.insert("HOME", home);
    env.insert("XDG_CONFIG_HOME", home + "/config");
    env.insert("XDG_DATA_HOME", home + "/data");
    env.insert("XDG_RUNTIME_DIR", home);
    return env;
}

Run runGui(const QStringList& args, const QString& home, bool display = true)
{
    QProcess process;
    process.setProcessEnvironment(guiEnvironment(home, display));
    QElapsedTimer timer;
    timer.start();
    process.start(PARAPLAN_BINARY_DIR "/app/paraplan", args);
    Run run;
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        return run;
    }
    run.ms = timer.elapsed();
    run.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.err = QString::fromUtf8(process.readAllStandardError());
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    for (const QString& line : run.err.split('\n', Qt::SkipEmptyParts))
        if (!qtNotice(line))
            run.errorLines << line;
    return run;
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

// The example plan with one field of "parallel" changed (the raw JSON number text).
QByteArray exampleWith(const char* key, const QByteArray& value)
{
    QFile file(kExample);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read the example plan");
    QJsonObject plan = QJsonDocument::fromJson(file.readAll()).object();
    QJsonObject parallel = plan["parallel"].toObject();
    parallel[key] = 12345; // placeholder, replaced below so the number's text is exact
    plan["parallel"] = parallel;
    return QJsonDocument(plan).toJson().replace("12345", value);
}

} // namespace

class TestGuiArgs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_home;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_home.isValid());
    }

    void badInputEndsWithOneError_data()
    {
        QTest::addColumn<QStringList>("args"); // "SHOT" is the screenshot path
        QTest::addColumn<QString>("expected"); // in the one error line
        QTest::addColumn<int>("status");       // paraplan-cli's: 2 bad input, 3 I/O error

        const QStringList shot{kExample, "--screenshot", "SHOT"};
        QTest::newRow("tab 9") << (shot + QStringList{"--tab", "9"}) << "--tab '9'" << 2;
        QTest::newRow("tab -1") << (shot + QStringList{"--tab", "-1"}) << "--tab '-1'" << 2;
        QTest::newRow("tab nan") << (shot + QStringList{"--tab", "nan"}) << "0 to 8" << 2;
        QTest::newRow("tab empty") << (shot + QStringList{"--tab", ""}) << "--tab ''" << 2;
        QTest::newRow("size 0x0") << (shot + QStringList{"--size", "0x0"}) << "from 200 to 8192"
                                  << 2;
        QTest::newRow("size -5x-5")
            << (shot + QStringList{"--size", "-5x-5"}) << "--size '-5x-5'" << 2;
        QTest::newRow("size abc") << (shot + QStringList{"--size", "abc"}) << "--size 'abc'" << 2;
        QTest::newRow("size 100000x100000")
            << (shot + QStringList{"--size", "100000x100000"}) << "--size 100000x100000" << 2;
        QTest::newRow("size 20000x20000")
            << (shot + QStringList{"--size", "20000x20000"}) << "from 200 to 8192" << 2;
        QTest::newRow("size 199x800")
            << (shot + QStringList{"--size", "199x800"}) << "199x800" << 2;
        QTest::newRow("size 8193x800")
            << (shot + QStringList{"--size", "8193x800"}) << "8193x800" << 2;
        QTest::newRow("size overflow")
            << (shot + QStringList{"--size", "99999999999x800"}) << "--size" << 2;
        QTest::newRow("screenshot in a missing folder")
            << QStringList{kExample, "--screenshot", "/nonexistent/dir/x.png"}
            << "the folder /nonexistent/dir does not exist" << 3;
        QTest::newRow("screenshot is a folder")
            << QStringList{kExample, "--screenshot", QDir::tempPath()} << "is a folder" << 3;
        QTest::newRow("screenshot is a device")
            << QStringList{kExample, "--screenshot", "/dev/null"} << "not a regular file" << 3;
        QTest::newRow("screenshot format") << QStringList{kExample, "--screenshot", "SHOT.xyz"}
                                           << "cannot write 'xyz' images" << 2;
        QTest::newRow("unknown option")
            << (shot + QStringList{"--frobnicate"}) << "frobnicate" << 2;
        QTest::newRow("two plans") << (shot + QStringList{kExample}) << "one plan at most" << 2;
        QTest::newRow("missing plan")
            << QStringList{"/nonexistent/plan.json", "--screenshot", "SHOT"}
            << "cannot open '/nonexistent/plan.json': No such file" << 3;
        QTest::newRow("/dev/zero") << QStringList{"/dev/zero", "--screenshot", "SHOT"}
                                   << "'/dev/zero' is not a regular file" << 2;
        QTest::newRow("folder as plan") << QStringList{QDir::tempPath(), "--screenshot", "SHOT"}
                                        << "'" + QDir::tempPath() + "' is a directory" << 3;
        QTest::newRow("measurements missing")
            << (shot + QStringList{"--import-measurements", "/nonexistent/run.jsonl"})
            << "--import-measurements /nonexistent/run.jsonl: " << 3;
    }

    void badInputEndsWithOneError()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        QFETCH(int, status);
        QTemporaryDir dir;
        // An image already there stays as it was.
        const QString shot = writeFile(dir, "shot.png", "the old image");
        for (QString& arg : args)
            arg.replace("SHOT", shot);
        const Run run = runGui(args, m_home.path());
        QCOMPARE(run.status, status);
        QVERIFY2(run.errorLines.size() == 1, qPrintable(run.err));
        QVERIFY2(run.errorLines.front().startsWith("error: "), qPrintable(run.err));
        QVERIFY2(run.errorLines.front().contains(expected), qPrintable(run.err));
        QVERIFY2(run.ms < 20000, qPrintable(QString::number(run.ms)));
        QFile old(shot);
        QVERIFY(old.open(QIODevice::ReadOnly));
        QCOMPARE(old.readAll(), QByteArray("the old image"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"shot.png"});
    }

    void unopenablePlansEndWithTheirReason_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("truncated") << QByteArray(exampleWith("tp", "8").left(120));
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("tp 2^31") << exampleWith("tp", "2147483648");
        QTest::newRow("not a plan") << QByteArray("[1, 2, 3]");
    }

    void unopenablePlansEndWithTheirReason()
    {
        QFETCH(QByteArray, bytes);
        QTemporaryDir dir;
        const QString plan = writeFile(dir, "plan.json", bytes);
        const QString shot = dir.filePath("shot.png");
        const Run run = runGui({plan, "--screenshot", shot, "--size", "1280x800"}, m_home.path());
        QCOMPARE(run.status, 2);
        QVERIFY2(run.errorLines.size() == 1, qPrintable(run.err));
        QVERIFY2(run.errorLines.front().startsWith("error: " + plan + ": "), qPrintable(run.err));
        // A reason follows the path.
        QVERIFY(run.errorLines.front().size() > QString("error: " + plan + ": ").size() + 5);
        QVERIFY(!QFile::exists(shot));
    }

    void goodPlanWritesAnImageOfTheRequestedSize_data()
    {
        QTest::addColumn<QString>("size");
        QTest::addColumn<QString>("tab");
        QTest::addColumn<QString>("name");
        QTest::newRow("1280x800 tab 0") << "1280x800"
                                        << "0"
                                        << "shot.png";
        QTest::newRow("1366x768 tab Memory") << "1366x768"
                                             << "memory"
                                             << "shot";
        QTest::newRow("1600x1000 tab 7") << "1600x1000"
                                         << "7"
                                         << "shot.PNG";
    }

    void aSignalQuitsCleanly_data()
    {
        QTest::addColumn<int>("sig");
        QTest::newRow("SIGTERM") << int(SIGTERM);
        QTest::newRow("SIGINT") << int(SIGINT);
        QTest::newRow("SIGHUP") << int(SIGHUP);
    }

    void aSignalQuitsCleanly()
    {
        // The window ends through its event loop (status 128 + the signal, one line), not
        // killed by the signal.
        QFETCH(int, sig);
        QProcess process;
        process.setProcessEnvironment(guiEnvironment(m_home.path()));
        process.start(PARAPLAN_BINARY_DIR "/app/paraplan", {kExample});
        QVERIFY(process.waitForStarted());
        QTest::qWait(2000); // the window is up and evaluating
        QCOMPARE(::kill(pid_t(process.processId()), sig), 0);
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 128 + sig);
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QVERIFY2(err.contains(QString("paraplan: %1: quitting").arg(QTest::currentDataTag())),
                 qPrintable(err));
    }

    void withoutADisplayOneErrorLine()
    {
        // No core dump and no "Reinstalling the application may fix this problem": one line,
        // exit 2; a screenshot needs no display and is drawn offscreen.
        const Run run = runGui({kExample}, m_home.path(), false);
        QCOMPARE(run.status, 2);
        QCOMPARE(run.errorLines.size(), 1);
        QVERIFY2(run.errorLines.front().startsWith("error: no display"), qPrintable(run.err));
        QTemporaryDir dir;
        const QString shot = dir.filePath("x.png");
        const Run headless =
            runGui({kExample, "--screenshot", shot, "--size", "800x600"}, m_home.path(), false);
        QVERIFY2(headless.status == 0, qPrintable(headless.err));
        QImage image;
        QVERIFY(image.load(shot, "PNG"));
    }

    void goodPlanWritesAnImageOfTheRequestedSize()
    {
        QFETCH(QString, size);
        QFETCH(QString, tab);
        QFETCH(QString, name);
        QTemporaryDir dir;
        const QString shot = writeFile(dir, name, "the old image");
        const Run run =
            runGui({kExample, "--screenshot", shot, "--size", size, "--tab", tab}, m_home.path());
        QVERIFY2(run.status == 0, qPrintable(run.err));
        QVERIFY2(run.errorLines.isEmpty(), qPrintable(run.err));
        QImage image;
        QVERIFY(image.load(shot, "PNG"));
        QCOMPARE(QString("%1x%2").arg(image.width()).arg(image.height()), size);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{name});
    }

    void smallSizesAreDrawnExactly_data()
    {
        QTest::addColumn<QSize>("size");
        // Below the layout's smallest size (about 1150x690 with the default fonts) the
        // window is squeezed to the size asked for, not grown past it.
        QTest::newRow("200x200") << QSize(200, 200);
        QTest::newRow("1024x600") << QSize(1024, 600);
        QTest::newRow("8192x200") << QSize(8192, 200);
    }

    void smallSizesAreDrawnExactly()
    {
        QFETCH(QSize, size);
        QTemporaryDir dir;
        const QString shot = dir.filePath("shot.png");
        const QString text = QString("%1x%2").arg(size.width()).arg(size.height());
        const Run run = runGui({kExample, "--screenshot", shot, "--size", text}, m_home.path());
        QVERIFY2(run.status == 0, qPrintable(run.err));
        QCOMPARE(QImage(shot).size(), size);
    }

    void invalidPlanIsShownNotRefused()
    {
        // tp 3 opens (a number in range) but breaks the plan's rules: the window shows it,
        // marked, and the screenshot is written.
        QTemporaryDir dir;
        const QString plan = writeFile(dir, "tp3.json", exampleWith("tp", "3"));
        const QString shot = dir.filePath("shot.png");
        const Run run = runGui({plan, "--screenshot", shot, "--size", "1280x800"}, m_home.path());
        QVERIFY2(run.status == 0, qPrintable(run.err));
        QVERIFY(QImage(shot).size() == QSize(1280, 800));
    }

    void helpListsTheOptionsWithTheirRanges()
    {
        const Run run = runGui({"--help"}, m_home.path());
        QCOMPARE(run.status, 0);
        for (const char* text : {"--screenshot", "--size", "200 to 8192", "--tab", "index from 0"})
            QVERIFY2(run.out.contains(text), text);
        // The exit statuses, last (the man page's EXIT STATUS), as the rows above use them.
        const QString statuses = run.out.mid(run.out.indexOf("\nExit status"));
        QVERIFY2(statuses.size() > 1 && statuses.size() < run.out.size() / 2, qPrintable(run.out));
        for (const char* text : {"\n  0  done", "\n  2  bad input", "\n  3  I/O error"})
            QVERIFY2(statuses.contains(text), text);
        // The tabs named in the help are the window's.
        MainWindow window(false);
        const auto* tabs = window.findChild<QTabWidget*>();
        QCOMPARE(tabs->count(), 9);
        for (int i = 0; i < tabs->count(); ++i) {
            const QString entry = QString("%1 %2").arg(i).arg(tabs->tabText(i).remove('&'));
            QVERIFY2(run.out.simplified().contains(entry), qPrintable(entry));
        }
    }

    void failedOpenSaysSoAndKeepsTheTitle()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QString reason;
        QVERIFY(!window.openFile("/nonexistent/plan.json", &reason));
        QVERIFY(!reason.isEmpty());
        // The first results arrive after the failed open (as at a start with a bad file):
        // the message stays above them.
        QTRY_VERIFY(shown.count() >= 1);
        QVERIFY(window.statusBar()->currentMessage().contains("/nonexistent/plan.json"));
        QVERIFY(window.statusBar()->currentMessage().contains(reason.split('\n').front()));
        QVERIFY(!window.windowTitle().contains("plan.json"));
        QVERIFY(window.document()->path().isEmpty());
    }

    void invalidPlanShowsItsMessageInTheStatusBar()
    {
        QTemporaryDir dir;
        const QString plan = writeFile(dir, "tp3.json", exampleWith("tp", "3"));
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QVERIFY(window.openFile(plan));
        QTRY_VERIFY(window.statusText().startsWith("Invalid plan"));
        // Its own result was never computed: nothing older is passed off as its.
        QVERIFY(window.statusText().endsWith("No results until it is fixed."));
        const auto* label = window.statusBar()->findChild<QLabel*>("status");
        QVERIFY(label && label->isVisible());
        QVERIFY(window.statusBar()->currentMessage().isEmpty()); // nothing covers it
        QVERIFY(window.windowTitle().startsWith("tp3.json"));
    }
};

QTEST_MAIN(TestGuiArgs)
#include "tst_guiargs.moc"
