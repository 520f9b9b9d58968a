// paraplan-cli export and import-launch: launch configurations written and read back through
// the CLI, with the exit codes scripts rely on (0 done, 2 bad input, 3 a file not read or
// written) and warnings on stderr.
#include "clirun.h"
#include "planio.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace paraplan;
using test::CliRun;
using test::runCli;

namespace {

QString examplePlan(const char* name)
{
    return QStringLiteral(PARAPLAN_SOURCE_DIR) + "/resources/examples/" + name;
}

/// Every stderr line is a warning or the launcher line.
bool onlyWarnings(const QString& err)
{
    for (const QString& line : err.split('\n', Qt::SkipEmptyParts)) {
        if (!line.startsWith("warning: ") && !line.startsWith("launch: "))
            return false;
    }
    return true;
}

void writeFile(const QString& path, const QByteArray& text)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

} // namespace

class TestCliLaunch : public QObject
{
    Q_OBJECT

private slots:
    void exportWritesToStdout_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("start");
        QTest::newRow("megatron") << "megatron"
                                  << "#!/bin/bash\n";
        QTest::newRow("nemo") << "nemo"
                              << "# Plan \"GPT-3 175B";
    }
    void exportWritesToStdout()
    {
        QFETCH(QString, target);
        QFETCH(QString, start);
        const CliRun run =
            runCli({"export", examplePlan("gpt3-175b-dgx-a100.paraplan.json"), "--to", target});
        QCOMPARE(run.code, 0);
        QVERIFY2(run.out.startsWith(start), qPrintable(run.out.left(200)));
        QVERIFY2(onlyWarnings(run.err), qPrintable(run.err));
        // The plan's price is not a launch setting: said, not dropped silently.
        QVERIFY(run.err.contains("warning: gpu_hour_usd"));
        QVERIFY(run.out.contains("# warning: gpu_hour_usd"));
        QVERIFY(!run.out.contains("nan") && !run.out.contains("inf "));
    }

    // A plan that runs out of memory as planned: the file is still written, its warning says
    // so, and the status is 1 (as evaluate and report give for it); -o names the launch file.
    void exportOfAPlanThatDoesNotFitExitsOne()
    {
        QTemporaryDir dir;
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(loadPlan(examplePlan("llama3-70b-dgx-h100.paraplan.json").toStdString(), &plan,
                         &errors, HardwareCatalog::bundled()));
        plan.parallel.recompute = Recompute::None;
        plan.parallel.micro_batch = 8;
        plan.parallel.global_batch = 1024;
        const QString oom = dir.filePath("oom.paraplan.json");
        std::string error;
        QVERIFY(savePlan(oom.toStdString(), plan, &error, HardwareCatalog::bundled()));
        QCOMPARE(runCli({"evaluate", oom}).code, 1);
        const QString toml = dir.filePath("oom-run.toml");
        const CliRun run = runCli({"export", oom, "--to", "torchtitan", "-o", toml});
        QCOMPARE(run.code, 1);
        QVERIFY2(run.err.contains("warning: the plan does not fit in memory"), qPrintable(run.err));
        QFile file(toml);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY(text.contains("the plan does not fit in memory"));
        QVERIFY(text.contains("--job.config_file ./oom-run.toml"));
        // A plan that fits exits 0 and its launch line names the -o file too.
        const QString json = dir.filePath("ds.json");
        const CliRun fits = runCli({"export", examplePlan("llama3-70b-dgx-h100.paraplan.json"),
                                    "--to", "deepspeed", "-o", json});
        QCOMPARE(fits.code, 0);
        QVERIFY2(fits.err.contains("launch: deepspeed ") &&
                     fits.err.contains("--deepspeed_config ds.json"),
                 qPrintable(fits.err));
    }

    void exportedScriptReadsBackAsAPlan()
    {
        QTemporaryDir dir;
        const QString script = dir.filePath("launch.sh");
        const CliRun run = runCli({"export", examplePlan("llama3-70b-dgx-h100.paraplan.json"),
                                   "--to", "megatron", "-o", script});
        QCOMPARE(run.code, 0);
        QVERIFY(run.out.startsWith("wrote " + script));
        QVERIFY(QFileInfo(script).isExecutable());
        // chmod +x: executable for whoever may read it (the umask's read bits).
        const QFileDevice::Permissions mode = QFile(script).permissions();
        QCOMPARE(bool(mode & QFileDevice::ExeGroup), bool(mode & QFileDevice::ReadGroup));
        QCOMPARE(bool(mode & QFileDevice::ExeOther), bool(mode & QFileDevice::ReadOther));
        // Read over a base plan with another layout: the file's layout comes back.
        const QString plan = dir.filePath("back.json");
        const CliRun back = runCli({"import-launch", script, "--from", "megatron", "--base",
                                    examplePlan("llama3-70b-two-racks.paraplan.json"), "-o", plan});
        QCOMPARE(back.code, 0);
        QVERIFY2(onlyWarnings(back.err), qPrintable(back.err));
        Plan read;
        std::vector<std::string> errors;
        QVERIFY(loadPlan(plan.toStdString(), &read, &errors, HardwareCatalog::bundled()));
        QCOMPARE(read.parallel.tp, 8);
        QCOMPARE(read.parallel.pp, 4);
        QCOMPARE(read.parallel.interleave, 5);
        QCOMPARE(read.parallel.global_batch, 512);
        QCOMPARE(read.training.seq_len, 8192);
        const CliRun evaluated = runCli({"evaluate", plan});
        QCOMPARE(evaluated.code, 0);
        // Without -o the plan goes to stdout.
        const CliRun toStdout = runCli({"import-launch", script, "--from", "megatron", "--base",
                                        examplePlan("llama3-70b-two-racks.paraplan.json")});
        QCOMPARE(toStdout.code, 0);
        QVERIFY(toStdout.out.contains("\"schema\": \"paraplan-plan/1\""));
    }

    void badInputExitsTwoAndIoFailuresThree_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString plan = examplePlan("llama3-70b-dgx-h100.paraplan.json");
        QTest::newRow("unknown target")
            << QStringList{"export", plan, "--to", "jax"} << 2 << "--to: unknown target 'jax'";
        QTest::newRow("no target") << QStringList{"export", plan} << 2 << "--to";
        QTest::newRow("missing plan")
            << QStringList{"export", "absent.json", "--to", "megatron"} << 3 << "absent.json";
        QTest::newRow("unwritable")
            << QStringList{"export", plan, "--to", "megatron", "-o", "/nonexistent/dir/x.sh"} << 3
            << "cannot write '/nonexistent/dir/x.sh'";
        QTest::newRow("over the plan")
            << QStringList{"export", plan, "--to", "nemo", "-o", plan} << 2 << "is the input";
        QTest::newRow("missing launch file")
            << QStringList{"import-launch", "absent.sh", "--from", "megatron", "--base", plan} << 3
            << "absent.sh";
        QTest::newRow("missing base")
            << QStringList{"import-launch", plan, "--from", "megatron", "--base", "absent.json"}
            << 3 << "absent.json";
        QTest::newRow("no base") << QStringList{"import-launch", plan, "--from", "megatron"} << 2
                                 << "--base";
        QTest::newRow("nemo cannot be read")
            << QStringList{"import-launch", plan, "--from", "nemo", "--base", plan} << 2
            << "a nemo file cannot be read back";
        QTest::newRow("not a launch file")
            << QStringList{"import-launch", plan, "--from", "megatron", "--base", plan} << 2
            << "no pretrain_gpt.py command";
    }
    void badInputExitsTwoAndIoFailuresThree()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        const CliRun run = runCli(args);
        QCOMPARE(run.code, code);
        const QStringList errors = run.err.split('\n', Qt::SkipEmptyParts).filter("error: ");
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors[0].startsWith("error: ") && errors[0].contains(message),
                 qPrintable(run.err));
    }

    void importWarnsAndRefusesOnStderr()
    {
        QTemporaryDir dir;
        const QString script = dir.filePath("job.sh");
        writeFile(script, "torchrun --nnodes 16 --nproc-per-node 8 pretrain_gpt.py \\\n"
                          "  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 \\\n"
                          "  --lr 3e-4 --bf16\n");
        const QString plan = examplePlan("llama3-70b-dgx-h100.paraplan.json");
        const CliRun run = runCli({"import-launch", script, "--from", "megatron", "--base", plan});
        QCOMPARE(run.code, 0);
        QVERIFY2(run.err.contains("warning: --lr is not a plan setting"), qPrintable(run.err));
        writeFile(script, "python pretrain_gpt.py --tensor-model-parallel-size 3\n");
        const CliRun bad = runCli({"import-launch", script, "--from", "megatron", "--base", plan});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("error: " + script + ": TP x PP x CP = 3 does not divide"),
                 qPrintable(bad.err));
        QVERIFY(bad.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCliLaunch)
#include "tst_cli_launch.moc"
