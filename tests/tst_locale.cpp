// Numbers read and written alike in every locale: the CLI's answers (text, JSON, imports,
// calibration, practice grading) under de_DE, fr_FR and tr_TR equal the C locale's byte for
// byte, with the process's C library really switched (a decimal comma for de_DE and fr_FR).
// scripts/setup.sh generates the three locales.
#include "clirun.h"
#include "cnumeric.h"
#include "units.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <clocale>
#include <cstdlib>
#include <cstring>

using paraplan::test::CliRun;
using paraplan::test::runCli;

namespace {

const char* const kLocales[] = {"de_DE.UTF-8", "fr_FR.UTF-8", "tr_TR.UTF-8"};

QString source(const char* path)
{
    return QStringLiteral(PARAPLAN_SOURCE_DIR "/") + QString::fromUtf8(path);
}

void writeFile(const QString& path, const QByteArray& text)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

} // namespace

class TestLocale : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QList<QStringList> m_commands;

    QString temp(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString example = source("resources/examples/llama3-70b-dgx-h100.paraplan.json");
        const QString moe = source("resources/examples/deepseek-v3-dgx-h100.paraplan.json");
        // A Megatron-LM script with dropout, as users write it (the misread case).
        writeFile(temp("dropout.sh"),
                  "torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                  "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
                  "--attention-dropout 0.1 --hidden-dropout 0.1 --lr 1.5e-4 "
                  "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
                  "--micro-batch-size 1 --global-batch-size 512 --bf16\n");
        // A torchtitan TOML with a fractional learning rate.
        const CliRun titan = runCli({"export", example, "--to", "torchtitan"});
        QCOMPARE(titan.code, 0);
        QByteArray toml = titan.out.toUtf8();
        toml.replace("[optimizer]", "[optimizer]\nlr = 0.0003");
        writeFile(temp("titan.toml"), toml);
        const QString run = source("tests/data/logs/plan-70b-megatron.json") + ":" +
                            source("tests/data/logs/megatron-70b.log");
        m_commands = {
            {"collective", "--op", "all_reduce", "--bytes", "1.5GB", "--ranks", "8", "--bw-GBps",
             "450.5"},
            {"collective", "--op", "all_gather", "--bytes", "1GIB", "--ranks", "16", "--cluster",
             "dgx-h100"},
            {"dp-traffic", "--params", "7.5e9", "--ranks", "64", "--zero", "1", "--bw-GBps",
             "50.5"},
            {"evaluate", example},
            {"evaluate", moe, "--json"},
            {"walkthrough", example},
            {"practice", example, "--question", "1", "--answer", "3.5 ms"},
            {"calibrate", "--run", run, "--fit", "overlap"},
            {"import-launch", temp("dropout.sh"), "--from", "megatron", "--base", example},
            {"import-launch", temp("titan.toml"), "--from", "torchtitan", "--base", example},
            {"cliffs", example, "--json"},
            {"report", example, "--csv", "--table", "memory"},
        };
    }

    void theCLocaleAnswers()
    {
        // The reference run: every command succeeds (or answers no) in the C locale, and the
        // Megatron import keeps its dropout.
        QVERIFY(std::setlocale(LC_ALL, "C"));
        for (const QStringList& args : m_commands) {
            const CliRun r = runCli(args);
            QVERIFY2(r.code == 0 || r.code == 1, qPrintable(args.join(' ') + ": " + r.err));
        }
        const CliRun dropout = runCli(m_commands[8]);
        QVERIFY2(dropout.out.contains("\"dropout\": true"), qPrintable(dropout.out));
    }

    void everyLocaleAnswersAsTheCLocale_data()
    {
        QTest::addColumn<QString>("locale");
        for (const char* locale : kLocales)
            QTest::newRow(locale) << QString::fromLatin1(locale);
    }

    void everyLocaleAnswersAsTheCLocale()
    {
        QFETCH(QString, locale);
        QVERIFY(std::setlocale(LC_ALL, "C"));
        QList<CliRun> reference;
        for (const QStringList& args : m_commands)
            reference.append(runCli(args));
        QVERIFY2(std::setlocale(LC_ALL, locale.toLatin1().constData()),
                 qPrintable(locale + " is not installed: scripts/setup.sh generates it"));
        // The switch is real: the C library itself now reads and writes a decimal comma.
        if (!locale.startsWith("tr")) {
            QCOMPARE(std::localeconv()->decimal_point, ",");
            QCOMPARE(std::strtod("1.5", nullptr), 1.0);
        }
        QCOMPARE(paraplan::cStrtod("1.5", nullptr), 1.5);
        char text[32];
        paraplan::cSnprintf(text, sizeof text, "%.2f", 14.25);
        QCOMPARE(text, "14.25");
        QCOMPARE(paraplan::units::parseBytes("1GIB").value_or(0), 1073741824.0);
        for (int i = 0; i < m_commands.size(); ++i) {
            const CliRun r = runCli(m_commands[i]);
            const QString what = locale + ": " + m_commands[i].join(' ');
            QVERIFY2(r.code == reference[i].code, qPrintable(what + "\n" + r.err));
            QVERIFY2(r.out == reference[i].out, qPrintable(what + "\n" + r.out.left(2000)));
            QVERIFY2(r.err == reference[i].err, qPrintable(what + "\n" + r.err));
        }
        QVERIFY(std::setlocale(LC_ALL, "C"));
    }
};

QTEST_GUILESS_MAIN(TestLocale)
#include "tst_locale.moc"
