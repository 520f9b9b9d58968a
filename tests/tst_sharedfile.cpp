// One plan file, several writers: two windows on one file and an edit made outside the app.
// Nothing another writer saved is replaced, and no unsaved edit is discarded, without a
// question; an unmodified window offers the other version when the watcher sees it.
#include "mainwindow.h"
#include "planio.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

int globalBatchIn(const QString& path)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled()))
        return -1;
    return plan.parallel.global_batch;
}

void setGlobalBatch(MainWindow& window, int batch)
{
    window.document()->edit("batch", Field::GlobalBatch,
                            [batch](Plan& plan) { plan.parallel.global_batch = batch; });
}

// Another program's save of the file: the plan with `batch`, written by rename as editors do.
void saveOutside(const QString& path, int batch)
{
    Plan plan = examplePlan();
    plan.parallel.global_batch = batch;
    std::string error;
    QVERIFY2(savePlan(path.toStdString(), plan, &error, HardwareCatalog::bundled()), error.c_str());
}

// The questions a window asked, and the answer it gets.
struct Chooser
{
    QList<DiskConflict> asked;
    DiskChoice answer = DiskChoice::Keep;
    void attach(MainWindow& window)
    {
        window.setDiskConflictChooser([this](const DiskConflict& c) {
            asked.append(c);
            return answer;
        });
    }
};

} // namespace

class TestSharedFile : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_file;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("ParaplanTests");
        QCoreApplication::setApplicationName("tst_sharedfile");
        QVERIFY(m_dir.isValid());
    }

    void init()
    {
        m_file = m_dir.filePath("shared.paraplan.json");
        QFile::remove(m_file);
        saveOutside(m_file, 64);
    }

    void twoWindowsOnOneFile()
    {
        MainWindow a(false);
        MainWindow b(false);
        Chooser askA;
        Chooser askB;
        askA.attach(a);
        askB.attach(b);
        QVERIFY(a.openFile(m_file));
        QVERIFY(b.openFile(m_file));
        setGlobalBatch(a, 128);
        QVERIFY(a.saveTo(m_file)); // nobody else saved since A opened it: no question
        QVERIFY(askA.asked.isEmpty());
        QCOMPARE(globalBatchIn(m_file), 128);

        // B saves over A's version only when told to: first it is asked, and keeps both.
        setGlobalBatch(b, 256);
        QVERIFY(!b.saveTo(m_file));
        QCOMPARE(askB.asked.size(), 1);
        QVERIFY(askB.asked.front().saving);
        QVERIFY(askB.asked.front().modified);
        QCOMPARE(askB.asked.front().path, m_file);
        QCOMPARE(globalBatchIn(m_file), 128);                      // A's edit is still there
        QCOMPARE(b.document()->plan().parallel.global_batch, 256); // and B's in its window
        QVERIFY(b.document()->isModified());
        QVERIFY(b.writeRecovery()); // B's unsaved edit is still kept safe

        // Told to overwrite, it does; A is then the one asked before it replaces B's.
        askB.answer = DiskChoice::Overwrite;
        QVERIFY(b.saveTo(m_file));
        QCOMPARE(globalBatchIn(m_file), 256);
        QVERIFY(!b.document()->isModified());
        setGlobalBatch(a, 512);
        QVERIFY(!a.saveTo(m_file));
        QCOMPARE(askA.asked.size(), 1);
        QCOMPARE(globalBatchIn(m_file), 256);

        // Reload: A takes B's version, its own edit discarded because it said so.
        askA.answer = DiskChoice::Reload;
        QVERIFY(!a.saveTo(m_file));
        QCOMPARE(a.document()->plan().parallel.global_batch, 256);
        QVERIFY(!a.document()->isModified());
        setGlobalBatch(a, 1024);
        QVERIFY(a.saveTo(m_file)); // in step with the file again: no question
        QCOMPARE(askA.asked.size(), 2);
        QCOMPARE(globalBatchIn(m_file), 1024);
    }

    void anOutsideEditIsOfferedAndNeverWiped()
    {
        MainWindow window(false);
        Chooser ask;
        ask.attach(window);
        QVERIFY(window.openFile(m_file));
        QSignalSpy seen(window.document(), &PlanDocument::fileChangedOnDisk);

        // Unmodified: the watcher sees the outside save and the window offers it.
        ask.answer = DiskChoice::Reload;
        saveOutside(m_file, 96);
        QVERIFY(seen.wait(5000));
        QCOMPARE(ask.asked.size(), 1);
        QVERIFY(!ask.asked.front().saving);
        QVERIFY(!ask.asked.front().modified);
        QCOMPARE(window.document()->plan().parallel.global_batch, 96);

        // Modified: kept, and the next save asks instead of wiping the outside edit.
        setGlobalBatch(window, 32);
        ask.answer = DiskChoice::Keep;
        saveOutside(m_file, 160);
        QVERIFY(seen.wait(5000));
        QCOMPARE(ask.asked.size(), 2);
        QVERIFY(ask.asked.back().modified);
        QCOMPARE(window.document()->plan().parallel.global_batch, 32);
        QVERIFY(!window.saveTo(m_file));
        QCOMPARE(ask.asked.size(), 3);
        QCOMPARE(globalBatchIn(m_file), 160);

        // Rewriting the same bytes (a touch, a no-op save elsewhere) is no change.
        ask.answer = DiskChoice::Reload;
        QVERIFY(!window.saveTo(m_file)); // reload: the window now holds 160
        QCOMPARE(window.document()->plan().parallel.global_batch, 160);
        const int before = ask.asked.size();
        saveOutside(m_file, 160);
        QTest::qWait(300);
        setGlobalBatch(window, 48);
        QVERIFY(window.saveTo(m_file));
        QCOMPARE(ask.asked.size(), before);
        QCOMPARE(globalBatchIn(m_file), 48);
    }

    void aRemovedFileIsNotSilentlyRecreated()
    {
        MainWindow window(false);
        Chooser ask;
        ask.attach(window);
        QVERIFY(window.openFile(m_file));
        setGlobalBatch(window, 32);
        QVERIFY(QFile::remove(m_file));
        QVERIFY(!window.saveTo(m_file));
        QVERIFY(!ask.asked.isEmpty());
        QVERIFY(ask.asked.back().removed);
        QVERIFY(!QFile::exists(m_file));
        ask.answer = DiskChoice::Overwrite;
        QVERIFY(window.saveTo(m_file));
        QCOMPARE(globalBatchIn(m_file), 32);
    }
};

QTEST_MAIN(TestSharedFile)
#include "tst_sharedfile.moc"
