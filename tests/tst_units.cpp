#include "inputlimits.h"
#include "summary.h"
#include "units.h"

#include <QFile>

#include <QTest>

#include <cmath>
#include <limits>

using namespace paraplan;

class TestUnits : public QObject
{
    Q_OBJECT

private slots:
    void inputRangesAreDocumented()
    {
        // docs/limits.md lists every stated range exactly as the program checks it.
        QFile doc(QStringLiteral(PARAPLAN_SOURCE_DIR "/docs/limits.md"));
        QVERIFY(doc.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(doc.readAll());
        for (const paraplan::limits::Range& range : paraplan::limits::all()) {
            const QString row = QStringLiteral("| `%1` | %2")
                                    .arg(QString::fromLatin1(range.field),
                                         QString::fromStdString(paraplan::limits::describe(range)));
            QVERIFY2(text.contains(row), qPrintable("docs/limits.md lacks: " + row));
        }
    }

    void inputRangeMessagesNameFieldRangeAndValue()
    {
        using namespace paraplan::limits;
        QCOMPARE(QString::fromStdString(*check(kSeqLen, 2e9)),
                 QStringLiteral("training.seq_len must be a whole number from 1 to 4,194,304 "
                                "tokens (got 2,000,000,000)"));
        QVERIFY(!check(kSeqLen, 4194304));
        QVERIFY(check(kSeqLen, 8192.5)); // not whole
        QVERIFY(check(kLinkGBps, 0));    // exclusive minimum
        QVERIFY(check(kGpuHourUsd, std::numeric_limits<double>::infinity()));
        QVERIFY(check(kGpuHourUsd, std::nan("")));
        QVERIFY(!product(1 << 20, 1 << 20, kMaxGpus));
        QVERIFY(!product(1LL << 62, 4));
        QCOMPARE(*product(1024, 1024, kMaxGpus), 1LL << 20);
    }

    void parseBytes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("bytes");
        QTest::newRow("scientific") << "141e9" << 141e9;
        QTest::newRow("GB decimal") << "141GB" << 141e9;
        QTest::newRow("MB with space") << "400 MB" << 400e6;
        QTest::newRow("MiB binary") << "400MiB" << 400.0 * 1024 * 1024;
        QTest::newRow("GiB binary") << "16GiB" << 16.0 * 1024 * 1024 * 1024;
        QTest::newRow("bare G is decimal") << "2G" << 2e9;
        QTest::newRow("lower case") << "1.5kb" << 1500.0;
        QTest::newRow("plain bytes") << "4" << 4.0;
        QTest::newRow("B suffix") << "8B" << 8.0;
        QTest::newRow("TB") << "1TB" << 1e12;
    }
    void parseBytes()
    {
        QFETCH(QString, text);
        QFETCH(double, bytes);
        const std::optional<double> parsed = units::parseBytes(text.toStdString());
        QVERIFY(parsed.has_value());
        QCOMPARE(*parsed, bytes);
    }

    void rejectsBadBytes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("empty") << ""
                               << "not a byte count";
        QTest::newRow("word") << "lots"
                              << "not a byte count";
        QTest::newRow("negative") << "-5GB"
                                  << "must be positive";
        QTest::newRow("zero") << "0"
                              << "must be positive";
        QTest::newRow("unknown unit") << "5XB"
                                      << "unknown size unit";
        QTest::newRow("nan") << "nan"
                             << "not a byte count";
        QTest::newRow("inf") << "inf"
                             << "not a byte count";
        QTest::newRow("overflow") << "1e400"
                                  << "not a byte count";
    }
    void rejectsBadBytes()
    {
        QFETCH(QString, text);
        QFETCH(QString, messagePart);
        std::string error;
        QVERIFY(!units::parseBytes(text.toStdString(), &error).has_value());
        QVERIFY2(QString::fromStdString(error).contains(messagePart), error.c_str());
    }

    void parseSeconds_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("seconds");
        QTest::newRow("ms") << "2.16ms" << 2.16e-3;
        QTest::newRow("ms spaced") << "4.3 ms" << 4.3e-3;
        QTest::newRow("us") << "15us" << 15e-6;
        QTest::newRow("s") << "0.27s" << 0.27;
        QTest::newRow("bare") << "1.5" << 1.5;
    }
    void parseSeconds()
    {
        QFETCH(QString, text);
        QFETCH(double, seconds);
        const std::optional<double> parsed = units::parseSeconds(text.toStdString());
        QVERIFY(parsed.has_value());
        QVERIFY(qFuzzyCompare(*parsed, seconds));
    }

    void formatting_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        QTest::newRow("bytes GB") << "bytes" << 141e9 << "141 GB";
        QTest::newRow("bytes MB") << "bytes" << 268.4e6 << "268 MB";
        QTest::newRow("bytes small") << "bytes" << 6.0 << "6 B";
        QTest::newRow("seconds s") << "seconds" << 1.4 << "1.40 s";
        QTest::newRow("ratio") << "number" << 2.0 << "2";
        QTest::newRow("fraction") << "number" << 0.822 << "0.822";
        QTest::newRow("seconds ms") << "seconds" << 0.274 << "274 ms";
        QTest::newRow("seconds us") << "seconds" << 15e-6 << "15 us";
        QTest::newRow("bandwidth") << "bandwidth" << 450e9 << "450 GB/s";
    }
    void formatting()
    {
        QFETCH(QString, kind);
        QFETCH(double, value);
        QFETCH(QString, text);
        std::string formatted;
        if (kind == "bytes")
            formatted = units::formatBytes(value);
        else if (kind == "seconds")
            formatted = units::formatSeconds(value);
        else if (kind == "number")
            formatted = units::formatNumber(value);
        else
            formatted = units::formatGBps(value);
        QCOMPARE(QString::fromStdString(formatted), text);
    }

    void timeToTrainReadsInHoursBelowADay()
    {
        // A 1,000,000-GPU plan trains in about 5.8 hours: "0.2 days" hid that.
        QCOMPARE(formatDays(5.8 * 3600), std::string("5.8 hours"));
        QCOMPARE(formatDays(0.2 * 86400), std::string("4.8 hours"));
        QCOMPARE(formatDays(42 * 60), std::string("42.0 minutes"));
        QCOMPARE(formatDays(86400), std::string("1.0 days"));
        QCOMPARE(formatDays(1179.44 * 86400), std::string("1,179.4 days"));
    }
};

QTEST_GUILESS_MAIN(TestUnits)
#include "tst_units.moc"
