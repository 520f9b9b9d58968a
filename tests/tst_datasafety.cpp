// Saves that cannot lie: a write that fails (a full disk, a file-size limit) leaves the old
// file intact and says why; recovery copies are one per window and survive every choice;
// destroying a window with an edit pending sends nothing to the half-destroyed window.
#include "clicommands.h"
#include "clirun.h"
#include "mainwindow.h"
#include "planio.h"
#include "recoverystore.h"
#include "signalquit.h"
#include "widgetreport.h"

#include <QDir>
#include <QFile>
#include <QLockFile>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <csignal>
#include <cstring>
#include <sys/resource.h>

using namespace paraplan;
using namespace paraplan::ui;
using paraplan::test::CliRun;
using paraplan::test::runCli;

namespace {

// A real write failure without root: files of this process may not grow past `bytes`; a
// write beyond fails with EFBIG (SIGXFSZ ignored), as a full disk fails with ENOSPC.
class FileSizeLimit
{
public:
    explicit FileSizeLimit(rlim_t bytes)
    {
        getrlimit(RLIMIT_FSIZE, &m_old);
        m_oldHandler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit limit = m_old;
        limit.rlim_cur = bytes;
        m_ok = setrlimit(RLIMIT_FSIZE, &limit) == 0;
    }
    ~FileSizeLimit()
    {
        setrlimit(RLIMIT_FSIZE, &m_old);
        std::signal(SIGXFSZ, m_oldHandler);
    }
    bool ok() const { return m_ok; }

private:
    rlimit m_old{};
    void (*m_oldHandler)(int) = nullptr;
    bool m_ok = false;
};

QByteArray bytesOf(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

void writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QCOMPARE(file.write(bytes), bytes.size());
}

QString tooLarge()
{
    return QString::fromLocal8Bit(std::strerror(EFBIG)); // "File too large"
}

void setGlobalBatch(MainWindow& window, int batch)
{
    window.document()->edit("batch", Field::GlobalBatch,
                            [batch](Plan& plan) { plan.parallel.global_batch = batch; });
}

QStringList recoveryCopies()
{
    return QDir(MainWindow::recoveryDirectory()).entryList({"recovery-*.json"}, QDir::Files);
}

void clearRecoveryCopies()
{
    QDir dir(MainWindow::recoveryDirectory());
    for (const QString& name : dir.entryList({"recovery-*"}, QDir::Files))
        dir.remove(name);
}

// A copy left by a window whose process died (`owner` 0): the plan, and a lock naming a
// dead process; or one held by the live process `owner`, running `name`.
QString crashedCopy(int globalBatch, const QString& id = "crashed", qint64 owner = 0,
                    const QByteArray& name = "paraplan")
{
    Plan plan = examplePlan();
    plan.parallel.global_batch = globalBatch;
    const QString path = QDir(MainWindow::recoveryDirectory()).filePath("recovery-" + id + ".json");
    std::string error;
    if (!savePlan(path.toStdString(), plan, &error, HardwareCatalog::bundled()))
        qFatal("%s", error.c_str());
    qint64 pid = owner;
    if (pid == 0) {
        QProcess gone;
        gone.start("true", {});
        gone.waitForStarted();
        pid = gone.processId();
        gone.waitForFinished();
    }
    QFile lock(QDir(MainWindow::recoveryDirectory()).filePath("recovery-" + id + ".lock"));
    lock.open(QIODevice::WriteOnly);
    lock.write(QByteArray::number(pid) + "\n" + name + "\n" + QSysInfo::machineHostName().toUtf8() +
               "\n");
    return path;
}

} // namespace

class TestDataSafety : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("ParaplanTests");
        QCoreApplication::setApplicationName("tst_datasafety");
        QDir().mkpath(MainWindow::recoveryDirectory());
        clearRecoveryCopies();
        cli::useWidgetReport();
    }
    void init() { clearRecoveryCopies(); }
    void cleanupTestCase() { clearRecoveryCopies(); }

    void aFailedSaveKeepsTheOldPlanTheEditsAndTheRecoveryCopy()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("plan.json");
        MainWindow window(false);
        QVERIFY(window.saveTo(path));
        const QByteArray old = bytesOf(path);
        QVERIFY(old.size() > 2048);
        setGlobalBatch(window, 128);
        QVERIFY(window.writeRecovery());
        const QByteArray recovery = bytesOf(window.recoveryPath());
        QVERIFY(recovery.contains("128"));
        QSignalSpy errors(&window, &MainWindow::errorReported);
        {
            FileSizeLimit limit(1024);
            QVERIFY(limit.ok());
            QVERIFY(!window.saveTo(path));
        }
        QCOMPARE(errors.count(), 1);
        const QString message = errors.front().front().toString();
        QVERIFY2(message.contains(tooLarge()) && message.contains(path), qPrintable(message));
        QCOMPARE(bytesOf(path), old); // byte for byte
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"plan.json"});
        QVERIFY(window.document()->isModified());
        QVERIFY(window.isWindowModified());
        QCOMPARE(bytesOf(window.recoveryPath()), recovery);
        // Room again: the save goes through, and only then the copy goes.
        QVERIFY(window.saveTo(path));
        QVERIFY(bytesOf(path).contains("128"));
        QVERIFY(!window.document()->isModified());
        QVERIFY(!QFile::exists(window.recoveryPath()));
    }

    void cliCommandsSayWhyAFileWasNotWritten_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<bool>("saysWrote");
        QTest::newRow("export-cluster")
            << QStringList{"export-cluster", "--cluster", "dgx-h200", "--nodes", "16", "-o"}
            << true;
        QTest::newRow("import-topology")
            << QStringList{"import-topology",
                           QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/topology/dgx-h100.topo.txt",
                           "--nodes",
                           "4",
                           "--nic",
                           "ib-ndr",
                           "-o"}
            << true;
        QTest::newRow("report --csv")
            << QStringList{"report", planFile(), "--csv", "--table", "memory", "-o"} << true;
        QTest::newRow("report --json") << QStringList{"report", planFile(), "--json", "-o"} << true;
        QTest::newRow("report (PDF)") << QStringList{"report", planFile(), "-o"} << true;
        // calibrate prints the fit, not "wrote"; its files go through the same checked write.
        const QString logs = QStringLiteral(PARAPLAN_TEST_DATA_DIR) + "/logs/";
        const QStringList runs = {
            "--run", logs + "plan-70b-megatron.json:" + logs + "megatron-70b.log",
            "--run", logs + "plan-8b-fsdp-1node.json:" + logs + "torchtitan-8b-1node.log",
            "--run", logs + "plan-8b-fsdp-4nodes.json:" + logs + "torchtitan-8b-4nodes.log",
            "--run", logs + "plan-8b-nemo-32k.json:" + logs + "nemo-8b-32k.log"};
        QTest::newRow("calibrate -o") << (QStringList{"calibrate"} << runs << "-o") << false;
        QTest::newRow("calibrate --plan-out")
            << (QStringList{"calibrate"} << runs << "--apply" << logs + "plan-8b-fsdp-1node.json"
                                         << "--plan-out")
            << false;
    }

    void cliCommandsSayWhyAFileWasNotWritten()
    {
        QFETCH(QStringList, args);
        QFETCH(bool, saysWrote);
        QTemporaryDir dir;
        const QString path = dir.filePath("out");
        const QByteArray old("the previous file, which must survive\n");
        writeBytes(path, old);
        CliRun run;
        {
            FileSizeLimit limit(64);
            QVERIFY(limit.ok());
            run = runCli(args << path);
        }
        QCOMPARE(run.code, 3); // an output that cannot be written: an I/O error
        QVERIFY2(!run.out.contains("wrote"), qPrintable(run.out));
        const QString expected = "error: cannot write '" + path + "': " + tooLarge() + "\n";
        QCOMPARE(run.err, expected);
        QCOMPARE(bytesOf(path), old);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"out"});
        // With room, the same command writes and says so.
        const CliRun again = runCli(args.mid(0, args.size() - 1) << path);
        QCOMPARE(again.code, 0);
        QCOMPARE(again.out.contains("wrote " + path), saysWrote);
        QVERIFY(bytesOf(path) != old);
    }

    void dashMeansStandardOutput()
    {
        QTemporaryDir dir;
        QVERIFY(QDir::setCurrent(dir.path()));
        const CliRun cluster =
            runCli({"export-cluster", "--cluster", "dgx-h200", "--nodes", "2", "-o", "-"});
        QCOMPARE(cluster.code, 0);
        QVERIFY(cluster.out.trimmed().startsWith("{"));
        QVERIFY(!cluster.out.contains("wrote"));
        const CliRun csv =
            runCli({"report", planFile(), "--csv", "--table", "collectives", "-o", "-"});
        QCOMPARE(csv.code, 0);
        QVERIFY(csv.out.startsWith("group,op,bytes,"));
        const CliRun pdf = runCli({"report", planFile(), "-o", "-"});
        QCOMPARE(pdf.code, 0);
        QVERIFY(pdf.out.startsWith("%PDF"));
        QVERIFY(!QFile::exists(dir.filePath("-")));
        QVERIFY(QDir::setCurrent(QDir::tempPath()));
    }

    void windowExportsKeepTheOldFile()
    {
        QTemporaryDir dir;
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 5000);
        const QByteArray old("an old export\n");
        const QString pdf = dir.filePath("plan.pdf");
        const QString csv = dir.filePath("plan.csv");
        writeBytes(pdf, old);
        writeBytes(csv, old);
        QSignalSpy errors(&window, &MainWindow::errorReported);
        {
            FileSizeLimit limit(64);
            QVERIFY(limit.ok());
            QVERIFY(!window.exportReport(pdf));
            QVERIFY(!window.exportTableCsv("memory", csv));
        }
        QCOMPARE(errors.count(), 2);
        for (const QList<QVariant>& error : errors)
            QVERIFY2(error.front().toString().contains(tooLarge()),
                     qPrintable(error.front().toString()));
        QCOMPARE(bytesOf(pdf), old);
        QCOMPARE(bytesOf(csv), old);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);
        QVERIFY(window.exportReport(pdf));
        QVERIFY(bytesOf(pdf).startsWith("%PDF"));
        QVERIFY(window.exportTableCsv("memory", csv));
        QVERIFY(bytesOf(csv).startsWith("stage,"));
    }

    // (A) Accepting the offer keeps the copy until the recovered plan is saved.
    void acceptingTheOfferKeepsTheCopyUntilSaved()
    {
        const QString kept = crashedCopy(192);
        MainWindow window(false);
        int offers = 0;
        window.setRecoveryChooser([&](const RecoveryOffer& offer) {
            ++offers;
            return offer.recoveryPath == QFileInfo(kept).absoluteFilePath()
                       ? RecoveryChoice::Recover
                       : RecoveryChoice::Keep;
        });
        window.start();
        QCOMPARE(offers, 1);
        QCOMPARE(window.document()->plan().parallel.global_batch, 192);
        QVERIFY(window.document()->isModified());
        QVERIFY(QFile::exists(kept));                  // not deleted on accepting
        QVERIFY(QFile::exists(window.recoveryPath())); // and already copied as the window's own
        {
            // Held by this window: another one does not offer it.
            MainWindow other(false);
            int otherOffers = 0;
            other.setRecoveryChooser([&](const RecoveryOffer&) {
                ++otherOffers;
                return RecoveryChoice::Discard;
            });
            other.start();
            QCOMPARE(otherOffers, 0);
            QVERIFY(QFile::exists(kept));
        }
        QTemporaryDir dir;
        QVERIFY(window.saveTo(dir.filePath("recovered.json")));
        QVERIFY(!QFile::exists(kept));
        QVERIFY(!QFile::exists(window.recoveryPath()));
    }

    // The offer names the kept plan (its name, and the file it was edited from), not only
    // the time it was saved.
    void theOfferNamesTheKeptPlanAndItsFile()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath("mine.paraplan.json");
        {
            // A window editing a file notes the file beside its recovery copy.
            MainWindow window(false);
            QVERIFY(window.saveTo(file));
            setGlobalBatch(window, 128);
            QVERIFY(window.writeRecovery());
            QCOMPARE(RecoveryStore::sourceOf(window.recoveryPath()),
                     QFileInfo(file).absoluteFilePath());
        }
        const QString kept = crashedCopy(192);
        QVERIFY(RecoveryStore::recordSource(kept, file));
        RecoveryOffer seen;
        {
            MainWindow window(false);
            window.setRecoveryChooser([&](const RecoveryOffer& offer) {
                seen = offer;
                return RecoveryChoice::Keep;
            });
            window.start();
        }
        const QString name = QString::fromStdString(examplePlan().name);
        QVERIFY(!name.isEmpty());
        QCOMPARE(seen.planName, name);
        QCOMPARE(seen.planFile, file);
        const QString text = describeRecoveryOffer(seen);
        QVERIFY2(text.contains(name) && text.contains("edited from mine.paraplan.json") &&
                     text.contains("saved "),
                 qPrintable(text));
        // Discarded, the note goes with the copy.
        MainWindow other(false);
        other.setRecoveryChooser([](const RecoveryOffer&) { return RecoveryChoice::Discard; });
        other.start();
        QVERIFY(!QFile::exists(kept));
        QVERIFY(RecoveryStore::sourceOf(kept).isEmpty());
    }

    // (B) After a crash, opening a file (as a file manager does) asks; nothing is lost.
    void openingAFileAfterACrashAsks_data()
    {
        QTest::addColumn<int>("choice");
        QTest::newRow("recover") << int(RecoveryChoice::Recover);
        QTest::newRow("open the file") << int(RecoveryChoice::OpenFile);
        QTest::newRow("discard the copy") << int(RecoveryChoice::Discard);
    }
    void openingAFileAfterACrashAsks()
    {
        QFETCH(int, choice);
        QTemporaryDir dir;
        const QString file = dir.filePath("plan.json");
        Plan onDisk = examplePlan();
        onDisk.parallel.global_batch = 256;
        std::string error;
        QVERIFY(savePlan(file.toStdString(), onDisk, &error, HardwareCatalog::bundled()));
        const QByteArray fileBytes = bytesOf(file);
        const QString kept = crashedCopy(192);
        MainWindow window(false);
        QString askedAbout;
        window.setRecoveryChooser([&](const RecoveryOffer& offer) {
            askedAbout = offer.fileToOpen;
            return RecoveryChoice(choice);
        });
        window.start(file);
        QCOMPARE(askedAbout, file);
        QCOMPARE(bytesOf(file), fileBytes);
        switch (RecoveryChoice(choice)) {
        case RecoveryChoice::Recover:
            // The recovered plan, unsaved and not bound to the file; the file stays on disk.
            QCOMPARE(window.document()->plan().parallel.global_batch, 192);
            QVERIFY(window.document()->path().isEmpty());
            QVERIFY(window.document()->isModified());
            QVERIFY(QFile::exists(kept));
            QVERIFY(window.statusBar()->currentMessage().contains(file));
            break;
        case RecoveryChoice::OpenFile: {
            QCOMPARE(window.document()->plan().parallel.global_batch, 256);
            QCOMPARE(window.document()->path(), file);
            QVERIFY(QFile::exists(kept));
            // Kept for a later start: the next window is offered it.
            MainWindow later(false);
            QString offered;
            later.setRecoveryChooser([&](const RecoveryOffer& offer) {
                offered = offer.recoveryPath;
                return RecoveryChoice::Keep;
            });
            later.start();
            QCOMPARE(offered, QFileInfo(kept).absoluteFilePath());
            break;
        }
        default:
            QCOMPARE(window.document()->plan().parallel.global_batch, 256);
            QVERIFY(!QFile::exists(kept)); // explicitly discarded
        }
    }

    // (C) and two windows: each has its own copy; the second neither offers nor deletes the
    // first's live work.
    void twoWindowsKeepTheirOwnCopies()
    {
        MainWindow first(false);
        setGlobalBatch(first, 96);
        QVERIFY(first.writeRecovery());
        const QByteArray firstCopy = bytesOf(first.recoveryPath());
        QVERIFY(!firstCopy.isEmpty());

        MainWindow second(false);
        int offers = 0;
        second.setRecoveryChooser([&](const RecoveryOffer&) {
            ++offers;
            return RecoveryChoice::Discard;
        });
        second.start();
        QCOMPARE(offers, 0);
        QVERIFY(second.recoveryPath() != first.recoveryPath());
        setGlobalBatch(second, 160);
        QVERIFY(second.writeRecovery());
        QCOMPARE(recoveryCopies().size(), 2);
        QVERIFY(second.close()); // non-interactive: a clean close without asking
        QVERIFY(!QFile::exists(second.recoveryPath()));
        QCOMPARE(bytesOf(first.recoveryPath()), firstCopy);
    }

    // A signal reaches the event loop, where the window copies the edit it made a moment ago
    // (before the two-second timer would have), and the copy is offered at the next start.
    void aSignalKeepsTheLastEdits()
    {
        QString kept;
        {
            MainWindow window(false);
            setGlobalBatch(window, 224);
            int received = 0;
            const SignalQuit quit([&](int sig) {
                received = sig;
                QVERIFY(window.writeRecovery());
            });
            QVERIFY(quit.installed());
            QVERIFY(!QFile::exists(window.recoveryPath()));
            std::raise(SIGTERM);
            QTRY_COMPARE(received, int(SIGTERM));
            kept = window.recoveryPath();
            QVERIFY(QFile::exists(kept));
        } // the window goes without a close: the copy stays, as after a crash
        QVERIFY(QFile::exists(kept));
        MainWindow next(false);
        int offers = 0;
        next.setRecoveryChooser([&](const RecoveryOffer&) {
            ++offers;
            return RecoveryChoice::Recover;
        });
        next.start();
        QCOMPARE(offers, 1);
        QCOMPARE(next.document()->plan().parallel.global_batch, 224);
    }

    // Another process's live copy (its lock names a running process) is not offered, nor
    // touched; once that process is gone, it is.
    void anotherRunningProcessKeepsItsCopy()
    {
        QProcess owner;
        owner.start("sleep", {"30"});
        QVERIFY(owner.waitForStarted());
        const QString live = crashedCopy(144, "live", owner.processId(), "sleep");
        const QByteArray bytes = bytesOf(live);
        int offers = 0;
        auto count = [&](const RecoveryOffer&) {
            ++offers;
            return RecoveryChoice::Keep;
        };
        {
            MainWindow window(false);
            window.setRecoveryChooser(count);
            window.start();
        }
        QCOMPARE(offers, 0);
        QCOMPARE(bytesOf(live), bytes);
        owner.kill();
        owner.waitForFinished();
        MainWindow later(false);
        later.setRecoveryChooser(count);
        later.start();
        QCOMPARE(offers, 1);
        QCOMPARE(bytesOf(live), bytes); // kept ("Keep")
    }

    // The timer writes the copy a moment after an edit, without a call.
    void anEditIsCopiedWithinSeconds()
    {
        MainWindow window(false);
        setGlobalBatch(window, 80);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(window.recoveryPath()), 6000);
        QVERIFY(bytesOf(window.recoveryPath()).contains("80"));
    }

    void anUnreadableCopyIsKeptAndSaid()
    {
        const QString bad = QDir(MainWindow::recoveryDirectory()).filePath("recovery-bad.json");
        writeBytes(bad, "{ not json");
        MainWindow window(false);
        window.setRecoveryChooser([](const RecoveryOffer&) { return RecoveryChoice::Recover; });
        QSignalSpy errors(&window, &MainWindow::errorReported);
        window.start();
        QCOMPARE(errors.count(), 1);
        const QString message = errors.front().front().toString();
        QVERIFY2(message.contains("could not be read") && message.contains("unreadable"),
                 qPrintable(message));
        QVERIFY(!QFile::exists(bad));
        const QStringList aside = QDir(MainWindow::recoveryDirectory())
                                      .entryList({"recovery-bad.unreadable-*.json"}, QDir::Files);
        QCOMPARE(aside.size(), 1);
        QCOMPARE(bytesOf(QDir(MainWindow::recoveryDirectory()).filePath(aside.front())),
                 QByteArray("{ not json"));
        QVERIFY(!window.document()->isModified()); // the window's plan is untouched
    }

    // Destroying a window with an edit pending: its session and undo stack die after the
    // window's destructor; nothing they emit may reach the half-destroyed window.
    void destroyingAWindowWithAnEditPendingSignalsNoOne()
    {
        auto* window = new MainWindow(false);
        setGlobalBatch(*window, 112);
        QVERIFY(window->document()->isModified());
        QObject* asObject = window;
        int reachedHalfDestroyed = 0;
        auto check = [&] {
            if (!qobject_cast<MainWindow*>(asObject))
                ++reachedHalfDestroyed;
        };
        QUndoStack* stack = window->document()->undoStack();
        QObject::connect(stack, &QUndoStack::indexChanged, check);
        QObject::connect(stack, &QUndoStack::cleanChanged, check);
        QObject::connect(window->document(), &PlanDocument::modifiedChanged, check);
        delete window;
        QCOMPARE(reachedHalfDestroyed, 0);
    }

private:
    QString planFile()
    {
        const QString path = m_plans.filePath("plan.json");
        std::string error;
        if (!QFile::exists(path) &&
            !savePlan(path.toStdString(), examplePlan(), &error, HardwareCatalog::bundled()))
            qFatal("%s", error.c_str());
        return path;
    }

    QTemporaryDir m_plans;
};

QTEST_MAIN(TestDataSafety)
#include "tst_datasafety.moc"
