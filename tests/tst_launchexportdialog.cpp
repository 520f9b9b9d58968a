// File > Export launch configuration (offscreen): the dialog shows the plan as each target's
// file with its warnings, picks the target the plan's stack launches with, writes the same
// bytes it shows, reports a file it cannot write, and opens from the window's File menu.
#include "launchexportdialog.h"
#include "mainwindow.h"
#include "plandocument.h"
#include "planio.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QListWidget>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

const char* kGpt3 = PARAPLAN_SOURCE_DIR "/resources/examples/gpt3-175b-dgx-a100.paraplan.json";

Plan loadExample(const char* path)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(path, &plan, &errors, HardwareCatalog::bundled()))
        qFatal("cannot load %s", path);
    return plan;
}

} // namespace

class TestLaunchExportDialog : public QObject
{
    Q_OBJECT

private slots:
    void showsWhatTheCoreExports()
    {
        const Plan plan = loadExample(kGpt3);
        LaunchExportDialog dialog(plan, kGpt3);
        QCOMPARE(dialog.target(), LaunchTarget::Megatron);
        for (const EnumName<LaunchTarget>& entry : kLaunchTargetNames) {
            dialog.setTarget(entry.value);
            // Named as the Save dialog will suggest: the plan file's stem and the target.
            const std::string name =
                std::string("gpt3-175b-dgx-a100-") + entry.name + launchSuffix(entry.value);
            const LaunchConfig expected =
                exportLaunchConfig(plan, entry.value, HardwareCatalog::bundled(), name);
            QCOMPARE(dialog.config().file_name, name);
            QVERIFY2(expected.error.empty(), expected.error.c_str());
            QCOMPARE(dialog.config().text, expected.text);
            auto* text = dialog.findChild<QPlainTextEdit*>();
            QCOMPARE(text->toPlainText(), QString::fromStdString(expected.text));
            auto* warnings = dialog.findChild<QListWidget*>();
            QCOMPARE(warnings->count(), std::max<int>(1, int(expected.warnings.size())));
            if (!expected.warnings.empty())
                QCOMPARE(warnings->item(0)->text(), QString::fromStdString(expected.warnings[0]));
        }
        dialog.setTarget(LaunchTarget::Megatron);
        QVERIFY(dialog.config().text.find("--tensor-model-parallel-size 8") != std::string::npos);
    }

    void theFrameworkPicksTheTarget()
    {
        // The plan's framework, never its ZeRO stage, picks the file written by default.
        Plan plan = loadExample(kGpt3);
        plan.parallel.zero = 3;
        QCOMPARE(LaunchExportDialog::defaultTarget(plan), LaunchTarget::Megatron);
        plan.training.framework = TrainingFramework::Torchtitan;
        QVERIFY(pytorchFramework(plan));
        QCOMPARE(LaunchExportDialog::defaultTarget(plan), LaunchTarget::Torchtitan);
        plan.training.framework = TrainingFramework::DeepSpeed;
        QCOMPARE(LaunchExportDialog::defaultTarget(plan), LaunchTarget::DeepSpeed);
    }

    void anInvalidPlanExportsNothing()
    {
        Plan plan = loadExample(kGpt3);
        plan.parallel.tp = 3; // 96 heads divide, but 64 GPUs do not
        LaunchExportDialog dialog(plan, QString());
        QVERIFY(!dialog.config().error.empty());
        auto* text = dialog.findChild<QPlainTextEdit*>();
        QVERIFY(text->toPlainText().startsWith("Nothing to export: "));
        for (QPushButton* button : dialog.findChildren<QPushButton*>()) {
            if (button->text() == "&Save..." || button->text() == "&Copy")
                QVERIFY(!button->isEnabled());
        }
    }

    void savesTheBytesItShows()
    {
        LaunchExportDialog dialog(loadExample(kGpt3), kGpt3);
        dialog.setTarget(LaunchTarget::NeMo);
        QTemporaryDir dir;
        const QString path = dir.filePath("gpt3-nemo.yaml");
        QString error;
        QVERIFY2(dialog.saveTo(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll().toStdString(), dialog.config().text);

        // Saved under another name, the launch line names that file.
        dialog.setTarget(LaunchTarget::Torchtitan);
        const QString toml = dir.filePath("mine.toml");
        QVERIFY2(dialog.saveTo(toml, &error), qPrintable(error));
        QFile saved(toml);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        QVERIFY(saved.readAll().contains("--job.config_file ./mine.toml"));

        QVERIFY(!dialog.saveTo(dir.filePath("no/such/folder/x.yaml"), &error));
        // Not written: the dialog shows the file it did write, not the one it could not.
        QCOMPARE(dialog.config().file_name, std::string("mine.toml"));
        QVERIFY2(error.contains("no/such/folder/x.yaml"), qPrintable(error));
        if (QFile::exists("/dev/full")) {
            QVERIFY(!dialog.saveTo("/dev/full", &error));
        }
        if (qEnvironmentVariableIsSet("PARAPLAN_SHOT_DIR")) {
            dialog.setTarget(LaunchTarget::Megatron);
            dialog.grab().save(qEnvironmentVariable("PARAPLAN_SHOT_DIR") + "/launch-export.png");
        }
    }

    void opensFromTheFileMenu()
    {
        MainWindow window(false);
        QVERIFY(window.openFile(kGpt3));
        QAction* action = nullptr;
        for (QAction* candidate : window.menuBar()->findChildren<QAction*>()) {
            if (candidate->text() == "Export &launch configuration...")
                action = candidate;
        }
        QVERIFY(action);
        bool seen = false;
        QTimer::singleShot(0, [&] {
            auto* dialog = qobject_cast<LaunchExportDialog*>(QApplication::activeModalWidget());
            if (dialog) {
                seen = dialog->config().text.find("pretrain_gpt.py") != std::string::npos;
                dialog->reject();
            }
        });
        action->trigger();
        QVERIFY(seen);
    }
};

QTEST_MAIN(TestLaunchExportDialog)
#include "tst_launchexportdialog.moc"
