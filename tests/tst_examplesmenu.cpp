// File > Open Example: the menu lists the example plans found in the data folder, and picking
// one opens it as an untitled plan (the installed file is read-only; Save asks where).
#include "datapaths.h"
#include "hardware.h"
#include "mainwindow.h"
#include "plandocument.h"
#include "planio.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QMenu>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

using namespace paraplan;
using namespace paraplan::ui;

class TestExamplesMenu : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("ParaplanTests");
        QCoreApplication::setApplicationName("tst_examplesmenu");
    }

    void openExampleMenuListsAndOpensEachExample()
    {
        MainWindow window(false);
        auto* menu = window.menuBar()->findChild<QMenu*>("examplesMenu");
        QVERIFY(menu);
        QCOMPARE(menu->title().remove('&'), QString("Open Example"));
        const QStringList examples = datapaths::examplePlans();
        QVERIFY(examples.size() >= 3);
        const QList<QAction*> actions = menu->actions();
        QCOMPARE(actions.size(), examples.size());
        for (int i = 0; i < examples.size(); ++i) {
            QCOMPARE(actions[i]->text(), datapaths::planFileStem(examples[i]));
            QCOMPARE(actions[i]->toolTip(), examples[i]);
        }
        // Each one opens: the plan read from the file, untitled, unmodified.
        for (int i = 0; i < examples.size(); ++i) {
            Plan expected;
            std::vector<std::string> errors;
            QVERIFY(loadPlan(examples[i].toStdString(), &expected, &errors,
                             HardwareCatalog::bundled()));
            actions[i]->trigger();
            QCOMPARE(window.document()->plan().name, expected.name);
            QCOMPARE(window.document()->path(), QString());
            QVERIFY(!window.document()->isModified());
            QVERIFY2(window.statusText().isEmpty() || !window.statusText().contains("not opened"),
                     qPrintable(window.statusText()));
        }
    }

    void aBrokenExampleIsReportedAndThePlanKept()
    {
        MainWindow window(false);
        QVERIFY(window.openExample(datapaths::examplePlans().front()));
        const std::string shown = window.document()->plan().name;
        QSignalSpy errors(&window, &MainWindow::errorReported);
        QVERIFY(!window.openExample(QDir::temp().filePath("no-such-example.paraplan.json")));
        QCOMPARE(errors.count(), 1);
        QCOMPARE(window.document()->plan().name, shown);
    }
};

QTEST_MAIN(TestExamplesMenu)
#include "tst_examplesmenu.moc"
