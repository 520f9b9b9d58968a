// paraplan-probe, where CUDA and NCCL were found at build time: on any machine (with or
// without a GPU) it must speak its protocol and exit with a documented code.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

class TestProbe : public QObject
{
    Q_OBJECT

private slots:
    void listSpeaksTheProtocol()
    {
        const QString binary = QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-probe";
        if (!QFile::exists(binary))
            QSKIP("paraplan-probe was not built (no CUDA toolkit or NCCL)");
        QProcess probe;
        probe.start(binary, {"--list"});
        QVERIFY(probe.waitForFinished(60000));
        const int code = probe.exitCode();
        QVERIFY2(code == 0 || code == 3 || code == 4, qPrintable(QString::number(code)));
        const QList<QByteArray> lines = probe.readAllStandardOutput().trimmed().split('\n');
        QVERIFY(!lines.isEmpty());
        QJsonParseError error;
        const QJsonObject hello = QJsonDocument::fromJson(lines.first(), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(hello["type"].toString(), QString("hello"));
        QCOMPARE(hello["protocol"].toInt(), 2);
        for (const QByteArray& line : lines) {
            const QJsonObject object = QJsonDocument::fromJson(line, &error).object();
            QCOMPARE(error.error, QJsonParseError::NoError);
            QVERIFY(object.contains("type"));
        }
        const QString last = QJsonDocument::fromJson(lines.last()).object()["type"].toString();
        QCOMPARE(last, code == 0 ? QString("done") : QString("error"));
    }

    void badArgumentsExitTwo()
    {
        const QString binary = QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-probe";
        if (!QFile::exists(binary))
            QSKIP("paraplan-probe was not built (no CUDA toolkit or NCCL)");
        QProcess probe;
        probe.start(binary, {"--no-such-flag"});
        QVERIFY(probe.waitForFinished(60000));
        QCOMPARE(probe.exitCode(), 2);
        QVERIFY(probe.readAllStandardOutput().isEmpty());
    }

    void anUnreadablePlanIsABadArgument()
    {
        const QString binary = QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-probe";
        if (!QFile::exists(binary))
            QSKIP("paraplan-probe was not built (no CUDA toolkit or NCCL)");
        QProcess probe;
        probe.start(binary, {"--plan", "/nonexistent/plan.json"});
        QVERIFY(probe.waitForFinished(60000));
        QCOMPARE(probe.exitCode(), 2);
        QVERIFY(probe.readAllStandardError().contains("/nonexistent/plan.json"));
        probe.start(binary, {"--gemm-dtypes", "int4"});
        QVERIFY(probe.waitForFinished(60000));
        QCOMPARE(probe.exitCode(), 2);
    }

    void startedAsManyProcessesWithoutMpiStops()
    {
        // srun set up four tasks, but this process cannot join them: built without MPI, or an
        // MPI that sees itself alone. Either way the probe stops (exit 8) instead of measuring
        // its node as if it were the whole job.
        const QString binary = QStringLiteral(PARAPLAN_BINARY_DIR) + "/app/paraplan-probe";
        if (!QFile::exists(binary))
            QSKIP("paraplan-probe was not built (no CUDA toolkit or NCCL)");
        QProcess probe;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("SLURM_NTASKS", "4");
        probe.setProcessEnvironment(env);
        probe.start(binary, {"--list"});
        QVERIFY(probe.waitForFinished(60000));
        QCOMPARE(probe.exitCode(), 8);
        const QByteArray out = probe.readAllStandardOutput();
        QVERIFY2(out.contains("\"code\":8") && out.contains("SLURM_NTASKS=4"), out.constData());
        QVERIFY(probe.readAllStandardError().contains("4 processes"));
    }
};

QTEST_GUILESS_MAIN(TestProbe)
#include "tst_probe.moc"
