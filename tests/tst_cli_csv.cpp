// CSV per RFC 4180 (https://www.rfc-editor.org/rfc/rfc4180, section 2): every CSV that
// paraplan-cli writes is read back with a strict reader (records end in CRLF, a field holding
// a comma, a quote, CR or LF is quoted with its quotes doubled, a quote inside an unquoted
// field is an error, every record has the header's field count), one table per output.
#include "clirun.h"
#include "csv.h"

#include <QTemporaryDir>
#include <QTest>

#include <optional>

using namespace paraplan;
using test::CliRun;
using test::runCli;

namespace {

using Table = std::vector<std::vector<std::string>>;

// A strict RFC 4180 reader: the records of `text`, or nothing (and *error) at the first
// departure from the grammar. The last record must end in CRLF too (Paraplan always ends
// it), and every record must have as many fields as the first (the header).
std::optional<Table> readRfc4180(const std::string& text, std::string* error)
{
    Table table;
    std::vector<std::string> record;
    std::string field;
    size_t i = 0;
    auto fail = [&](const std::string& why) -> std::optional<Table> {
        *error = why + " at byte " + std::to_string(i);
        return std::nullopt;
    };
    while (i < text.size()) {
        field.clear();
        if (text[i] == '"') {
            ++i;
            while (true) {
                if (i >= text.size())
                    return fail("unterminated quoted field");
                if (text[i] == '"') {
                    if (i + 1 < text.size() && text[i + 1] == '"') {
                        field += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += text[i++];
            }
        } else {
            while (i < text.size() && text[i] != ',' && text[i] != '\r') {
                if (text[i] == '"' || text[i] == '\n')
                    return fail(std::string("bare ") + (text[i] == '"' ? "quote" : "LF") +
                                " in an unquoted field");
                field += text[i++];
            }
        }
        record.push_back(field);
        if (i < text.size() && text[i] == ',') {
            ++i;
            continue;
        }
        if (text.compare(i, 2, "\r\n") != 0)
            return fail("a record that does not end in CRLF");
        i += 2;
        if (!table.empty() && record.size() != table.front().size())
            return fail("a record of " + std::to_string(record.size()) +
                        " fields under a header of " + std::to_string(table.front().size()));
        table.push_back(record);
        record.clear();
    }
    if (table.empty())
        return fail("no header row");
    return table;
}

Table readOrFail(const QString& text)
{
    std::string error;
    const std::optional<Table> table = readRfc4180(text.toStdString(), &error);
    if (!table)
        qWarning("not RFC 4180: %s", error.c_str());
    return table.value_or(Table{});
}

} // namespace

class TestCliCsv : public QObject
{
    Q_OBJECT

    // Its what-if labels hold commas ("spine 2:1, 2 racks").
    const QString m_plan = QStringLiteral(PARAPLAN_SOURCE_DIR) +
                           "/resources/examples/llama3-70b-dgx-h100.paraplan.json";

private slots:
    void theStrictReaderRefusesWhatRfc4180Forbids_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("problem");
        QTest::newRow("LF line end") << "a,b\n1,2\n"
                                     << "bare LF";
        QTest::newRow("bare quote") << "a,b\r\n1,x\"y\r\n"
                                    << "bare quote";
        QTest::newRow("unterminated") << "a,b\r\n1,\"x\r\n"
                                      << "unterminated quoted field";
        QTest::newRow("field count") << "a,b\r\n1,2,3\r\n"
                                     << "3 fields under a header of 2";
        QTest::newRow("no final CRLF") << "a,b\r\n1,2"
                                       << "does not end in CRLF";
        QTest::newRow("text after a quote") << "a\r\n\"x\"y\r\n"
                                            << "does not end in CRLF";
    }

    void theStrictReaderRefusesWhatRfc4180Forbids()
    {
        QFETCH(QString, text);
        QFETCH(QString, problem);
        std::string error;
        QVERIFY(!readRfc4180(text.toStdString(), &error));
        QVERIFY2(QString::fromStdString(error).contains(problem), error.c_str());
    }

    void theHelperQuotesWhatNeedsIt()
    {
        const std::vector<std::string> fields = {"plain",        "a,b",      "say \"hi\"",
                                                 "two\r\nlines", "lf\nonly", ""};
        const std::string line = csv::record(fields);
        QCOMPARE(line, std::string("plain,\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\",\"lf\n"
                                   "only\",\r\n"));
        std::string error;
        const std::optional<Table> table = readRfc4180(line, &error);
        QVERIFY2(table && table->size() == 1, error.c_str());
        QCOMPARE(table->front(), fields);
        QCOMPARE(csv::number(0.5), std::string("0.5"));
        QCOMPARE(csv::number(std::numeric_limits<double>::infinity()), std::string());
    }

    void reportWritesOneTablePerOutput_data()
    {
        QTest::addColumn<QString>("table");
        QTest::addColumn<QString>("header");
        QTest::newRow("collectives")
            << "collectives"
            << "group,op,bytes,ranks,tier,time_each_s,calls_per_step,total_s,exposed_s,"
               "algbw_GBps,busbw_GBps";
        QTest::newRow("memory") << "memory"
                                << "stage,layers,weights_bytes,grads_bytes,optimizer_bytes,"
                                   "activations_bytes,buffers_bytes,total_bytes,fits";
    }

    void reportWritesOneTablePerOutput()
    {
        QFETCH(QString, table);
        QFETCH(QString, header);
        const CliRun run = runCli({"report", m_plan, "--csv", "--table", table});
        QCOMPARE(run.code, 0);
        const Table rows = readOrFail(run.out);
        QVERIFY(rows.size() > 1);
        QCOMPARE(QString::fromStdString(rows.front().front()), header.section(',', 0, 0));
        QStringList names;
        for (const std::string& name : rows.front())
            names.append(QString::fromStdString(name));
        QCOMPARE(names.join(','), header);
        QVERIFY(!run.out.contains('#'));
        // The same table to a file, byte for byte.
        QTemporaryDir dir;
        const QString path = dir.filePath(table + ".csv");
        const CliRun toFile = runCli({"report", m_plan, "--csv", "--table", table, "-o", path});
        QCOMPARE(toFile.code, 0);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(file.readAll()), run.out);
    }

    void cliffsAndSweepsAreRfc4180()
    {
        const CliRun cliffs = runCli({"cliffs", m_plan, "--csv"});
        QCOMPARE(cliffs.code, 0);
        const Table series = readOrFail(cliffs.out);
        QVERIFY(series.size() > 30);
        QCOMPARE(series.front(), (std::vector<std::string>{"series", "x", "y", "note"}));
        // What-if labels hold commas ("spine 2:1, 2 racks"): read back whole.
        bool commaLabel = false;
        for (const auto& row : series)
            commaLabel = commaLabel || row[3].find(", ") != std::string::npos;
        QVERIFY(commaLabel);
        const CliRun sweep = runCli({"sweep-collective", "--op", "all_reduce", "--ranks", "16",
                                     "--cluster", "dgx-h100", "--nodes", "2"});
        QCOMPARE(sweep.code, 0);
        const Table points = readOrFail(sweep.out);
        QCOMPARE(points.size(), size_t(1 + 25));
        QCOMPARE(points.front().size(), size_t(8));
    }
};

QTEST_GUILESS_MAIN(TestCliCsv)
#include "tst_cli_csv.moc"
