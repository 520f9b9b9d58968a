// The plan report: a PDF laid out from the same results the window shows, on A4 and Letter,
// its text read back with pdftotext (poppler-utils) to check sections and headline figures;
// CSV tables; the CLI's report command and the window's File > Export report.
#include "clicommands.h"
#include "mainwindow.h"
#include "measurement.h"
#include "planevaluator.h"
#include "planio.h"
#include "reportwriter.h"
#include "units.h"
#include "widgetreport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <sstream>
#include <sys/resource.h>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

QString examplePath(const char* name)
{
    return QStringLiteral(PARAPLAN_SOURCE_DIR "/resources/examples/") + name;
}

std::shared_ptr<const PlanResults> evaluateExample(const char* name)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(examplePath(name).toStdString(), &plan, &errors, HardwareCatalog::bundled()))
        qFatal("cannot load %s: %s", name, errors.front().c_str());
    PlanEvaluator evaluator;
    evaluator.evaluate(plan);
    return evaluator.latest();
}

// The PDF's text, one string per page, ligatures unfolded ("fi" is one glyph in DejaVu).
QStringList pdfPages(const QString& path)
{
    QProcess process;
    process.start("pdftotext", {"-layout", path, "-"});
    if (!process.waitForFinished(30000) || process.exitCode() != 0)
        return {};
    QString text = QString::fromUtf8(process.readAllStandardOutput())
                       .normalized(QString::NormalizationForm_KC);
    QStringList pages = text.split(QChar('\f'));
    if (!pages.isEmpty() && pages.last().trimmed().isEmpty())
        pages.removeLast();
    return pages;
}

QByteArray readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class TestReport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_results = evaluateExample("llama3-70b-dgx-h100.paraplan.json");
        QVERIFY(m_results);
    }

    void writesAPaginatedPdf_data()
    {
        QTest::addColumn<int>("paper");
        QTest::addColumn<QByteArray>("mediaBox");
        QTest::newRow("A4") << int(QPageSize::A4) << QByteArray("/MediaBox [0 0 595");
        QTest::newRow("Letter") << int(QPageSize::Letter) << QByteArray("/MediaBox [0 0 612");
    }
    void writesAPaginatedPdf()
    {
        QFETCH(int, paper);
        QFETCH(QByteArray, mediaBox);
        const QString path = m_dir.filePath(QString("report-%1.pdf").arg(paper));
        ReportOptions options;
        options.paper = QPageSize::PageSizeId(paper);
        QString error;
        int pages = 0;
        QVERIFY2(ReportWriter::writePdf(*m_results, path, options, &error, &pages),
                 qPrintable(error));
        QVERIFY(!QFile::exists(path + ".part"));
        const QByteArray pdf = readAll(path);
        QVERIFY(pdf.startsWith("%PDF-"));
        QVERIFY(pdf.contains(mediaBox));
        // Title block, six plots, four tables, the derivation with each collective's own and
        // the sources: more than a page, fewer than twenty.
        QVERIFY2(pages >= 4 && pages <= 20, qPrintable(QString::number(pages)));
        QCOMPARE(pdf.count("/Type /Page\n") + pdf.count("/Type /Page\r") +
                     pdf.count("/Type /Page "),
                 qsizetype(pages));
    }

    void textHasEverySectionAndTheHeadlineFigures()
    {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        const QString path = m_dir.filePath("text.pdf");
        QString error;
        int pageCount = 0;
        QVERIFY(ReportWriter::writePdf(*m_results, path, {}, &error, &pageCount));
        const QStringList pages = pdfPages(path);
        QCOMPARE(pages.size(), pageCount);
        const QString all = pages.join('\n');

        // Every section, in order.
        qsizetype from = 0;
        for (const QString& title : ReportWriter::sectionTitles(*m_results)) {
            const qsizetype at = all.indexOf(title, from);
            QVERIFY2(at >= 0, qPrintable("missing or out of order: " + title));
            from = at + title.size();
        }
        // The headline figures are the engine's.
        const StepCost& cost = m_results->cost;
        QVERIFY(all.contains(QString::fromStdString(units::formatSeconds(cost.step_time_s))));
        const QString tokens =
            QLocale(QLocale::English).toString(cost.metrics.tokens_per_s, 'f', 0) + " tokens/s";
        QVERIFY2(all.contains(tokens), qPrintable(tokens));
        QVERIFY(all.contains(QString("%1%").arg(100 * cost.metrics.mfu, 0, 'f', 1)));
        QVERIFY(all.contains(QString::number(units::toGiB(cost.max_stage_total_bytes), 'f', 2)));
        // Every collective's group and op appear in the collectives table.
        for (const CollectiveCost& c : cost.collectives)
            QVERIFY(all.contains(QString::fromStdString(c.group)));
        // Page furniture: numbered pages with the plan's name in the header.
        // Each page's text starts with its header and ends with its footer: no line of a
        // paragraph split by a page break is drawn beyond the page's body (the PDF keeps
        // clipped text, which text extraction and search find).
        for (int i = 0; i < pages.size(); ++i) {
            const QString page = pages[i].trimmed();
            QVERIFY2(page.startsWith(QString::fromStdString(m_results->plan.name)),
                     qPrintable(QString("page %1: %2").arg(i + 1).arg(page.left(200))));
            QVERIFY2(
                page.section('\n', -1).contains(QRegularExpression(
                    QString("Paraplan \\S+, \\S+ +page %1 of %2$").arg(i + 1).arg(pages.size()))),
                qPrintable(QString("page %1: %2").arg(i + 1).arg(page.right(200))));
        }
        // No section title is stranded at the foot of a page without its content: the text
        // after a title on its page is more than the page's footer.
        for (const QString& page : pages) {
            for (const QString& title : ReportWriter::sectionTitles(*m_results)) {
                const qsizetype at = page.indexOf(QRegularExpression(
                    "^[ \\t]*" + title + "[ \\t]*$", QRegularExpression::MultilineOption));
                if (at < 0)
                    continue;
                const QStringList after = page.mid(at).section('\n', 1).split('\n');
                const auto content =
                    std::count_if(after.begin(), after.end(), [](const QString& l) {
                        return !l.trimmed().isEmpty() &&
                               !l.contains(QRegularExpression("page \\d+ of"));
                    });
                QVERIFY2(content > 0, qPrintable("stranded heading: " + title));
            }
        }
    }

    // The PDF names no internal path or note, includes the collectives' derivations and the
    // time-to-train and cost steps, and formats the DP bucket as a size.
    void pdfTextCitesPublicSourcesAndIsComplete()
    {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        for (const char* example :
             {"llama3-70b-dgx-h100.paraplan.json", "gpt3-175b-dgx-a100.paraplan.json",
              "llama3-70b-two-racks.paraplan.json"}) {
            const auto results = evaluateExample(example);
            const QString path = m_dir.filePath(QString("sources-%1.pdf").arg(example));
            QString error;
            QVERIFY2(ReportWriter::writePdf(*results, path, {}, &error), qPrintable(error));
            const QString all = pdfPages(path).join('\n');
            const QString flat = all.simplified();
            QVERIFY(!flat.isEmpty());
            for (const char* forbidden :
                 {"shared/", "reference/", "the seed", "our notes", "our references",
                  "as commonly reported", "planner-models", "collectives-and-measurement",
                  "hardware-figures", "see 'paraplan-cli walkthrough", "paraplan-cli walkthrough"})
                QVERIFY2(!flat.contains(forbidden, Qt::CaseInsensitive),
                         qPrintable(QString(example) + ": " + forbidden));
            QVERIFY2(!flat.contains(QRegularExpression("\\bseeds?\\b",
                                                       QRegularExpression::CaseInsensitiveOption)),
                     example);
            // Every collective's derivation is in the report, with its own steps.
            for (size_t i = 0; i < results->cost.collectives.size(); ++i)
                QVERIFY2(flat.contains(QString("Collective %1, %2")
                                           .arg(i + 1)
                                           .arg(results->cost.collectives[i].group)),
                         qPrintable(QString("%1: collective %2").arg(example).arg(i + 1)));
            // The provenance table shows the HBM fraction once (the GPU's and the plan's are the
            // same figure), and the spine ratio's source is a document, not a preset's id.
            const QString provenance = all.mid(all.lastIndexOf("Assumptions and provenance"));
            static const QRegularExpression hbmRow("^\\s*(GPU )?HBM (achievable|fraction)\\b",
                                                   QRegularExpression::MultilineOption);
            QCOMPARE(provenance.count(hbmRow), 1);
            QVERIFY2(!flat.contains(QRegularExpression("\\bpreset [a-z0-9]+-")), example);
            QVERIFY(flat.contains("Bus bandwidth"));
            QVERIFY(flat.contains("Symbols"));
            QVERIFY(flat.contains("Time to train"));
            QVERIFY(flat.contains("GPU-hours"));
            // "DP bucket 25 MiB (26.2 MB)", not "26214400 B".
            QVERIFY2(!flat.contains("26214400"), example);
            QVERIFY2(flat.contains("25 MiB"), example);
        }
    }

    void measuredComputeShowsBesideTheAssumedInTheProvenanceTable()
    {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(loadPlan(examplePath("llama3-70b-dgx-h100.paraplan.json").toStdString(), &plan,
                         &errors, HardwareCatalog::bundled()));
        MeasurementRun run;
        std::string error;
        QVERIFY(loadMeasurements(PARAPLAN_TEST_DATA_DIR "/measurements/probe-compute-2xh100.jsonl",
                                 &run, &error));
        const double assumed = plan.figures.gemm_peak_fraction.value;
        for (const MeasuredFigure& f : proposeComputeFigures(run, plan, HardwareCatalog::bundled()))
            QVERIFY(applyMeasurementToPlan(f, &plan));
        PlanEvaluator evaluator;
        evaluator.evaluate(plan);
        const QString path = m_dir.filePath("measured.pdf");
        QString message;
        QVERIFY(ReportWriter::writePdf(*evaluator.latest(), path, {}, &message));
        const QString all = pdfPages(path).join('\n').simplified();
        // The measured value beside the assumed one, with the run as its source (a long figure
        // name wraps in its column).
        QVERIFY(all.contains(QString("gemm_peak_fraction %1 (assumed %2) measurement")
                                 .arg(plan.figures.gemm_peak_fraction.value, 0, 'f', 3)
                                 .arg(assumed, 0, 'f', 3)));
        QVERIFY(all.contains("hbm_fraction (measured)"));
        QVERIFY(all.contains("h100-node"));
    }

    void aFailedWriteNamesThePathAndKeepsTheOldReport()
    {
        QString error;
        QVERIFY(!ReportWriter::writePdf(*m_results, "/nonexistent-dir/r.pdf", {}, &error));
        QVERIFY2(error.contains("/nonexistent-dir/r.pdf"), qPrintable(error));

        // A report being replaced stays whole when the new one cannot be written (here the
        // process may not write files past 4 KiB, so the new one fails part way, EFBIG).
        const QString path = m_dir.filePath("kept.pdf");
        QVERIFY(ReportWriter::writePdf(*m_results, path, {}, &error));
        const QByteArray first = readAll(path);
        QVERIFY(first.startsWith("%PDF-"));
        error.clear();
        rlimit old{};
        getrlimit(RLIMIT_FSIZE, &old);
        const auto handler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit small = old;
        small.rlim_cur = 4096;
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &small), 0);
        const bool written = ReportWriter::writePdf(*m_results, path, {}, &error);
        setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, handler);
        QVERIFY(!written);
        QVERIFY2(error.contains("kept.pdf") && error.contains(std::strerror(EFBIG)),
                 qPrintable(error));
        QCOMPARE(readAll(path), first);
    }

    void csvTablesMatchTheCost()
    {
        const StepCost& cost = m_results->cost;
        const QStringList collectives =
            ReportWriter::collectivesCsv(cost).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(collectives.size(), qsizetype(cost.collectives.size() + 1));
        const qsizetype columns = collectives.first().count(',');
        for (const QString& line : collectives)
            QCOMPARE(line.count(','), columns);
        const QStringList memory = ReportWriter::memoryCsv(cost).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(memory.size(), qsizetype(cost.stages.size() + 1));
    }

    void cliReportCommand()
    {
        cli::useWidgetReport();
        std::ostringstream out, err;
        const std::string plan = examplePath("gpt3-175b-dgx-a100.paraplan.json").toStdString();
        const std::string pdf = m_dir.filePath("cli.pdf").toStdString();
        QCOMPARE(cli::run({"report", plan, "-o", pdf, "--paper", "letter"}, out, err), 0);
        QVERIFY2(QString::fromStdString(out.str()).contains("pages"), err.str().c_str());
        QVERIFY(readAll(QString::fromStdString(pdf)).contains("/MediaBox [0 0 612"));

        std::ostringstream csvOut, csvErr;
        QCOMPARE(cli::run({"report", plan, "--csv", "--table", "collectives"}, csvOut, csvErr), 0);
        QVERIFY(QString::fromStdString(csvOut.str()).startsWith("group,op,bytes,"));

        std::ostringstream jsonOut, jsonErr;
        const std::string jsonPath = m_dir.filePath("cli.json").toStdString();
        QCOMPARE(cli::run({"report", plan, "--json", "-o", jsonPath}, jsonOut, jsonErr), 0);
        const QJsonObject json =
            QJsonDocument::fromJson(readAll(QString::fromStdString(jsonPath))).object();
        QVERIFY(json["step_time_s"].toDouble() > 0);
        QVERIFY(!json["collectives"].toArray().isEmpty());

        struct Case
        {
            std::vector<std::string> args;
            const char* message;
            int code = 2;
        };
        const std::vector<Case> bad = {
            {{"report"}, "report needs a plan"},
            {{"report", plan}, "needs -o"},
            {{"report", plan, "-o", pdf, "--paper", "a5"}, "--paper: use a4 or letter"},
            {{"report", plan, "--bogus"}, "unknown option '--bogus'"},
            {{"report", plan, "--json", "--csv"}, "choose one of --json and --csv"},
            {{"report", "/nonexistent/plan.json", "-o", pdf}, "/nonexistent/plan.json", 3},
        };
        for (const Case& c : bad) {
            std::ostringstream o, e;
            QCOMPARE(cli::run(c.args, o, e), c.code); // 2 bad input, 3 a missing file
            QVERIFY2(QString::fromStdString(e.str()).contains(c.message), e.str().c_str());
        }
    }

    void windowExportsTheShownPlan()
    {
        MainWindow window(false);
        QSignalSpy shown(&window, &MainWindow::resultsShown);
        QVERIFY(window.openFile(examplePath("llama3-70b-two-racks.paraplan.json")));
        QVERIFY(shown.wait(5000) || window.evaluator()->latest());
        const QString pdf = m_dir.filePath("window.pdf");
        QVERIFY(window.exportReport(pdf));
        QVERIFY(readAll(pdf).startsWith("%PDF-"));
        QVERIFY(window.statusText().contains("pages"));
        // One table a file, the same bytes `paraplan-cli report --csv --table NAME` writes.
        for (const QString table : {"collectives", "memory"}) {
            const QString csv = m_dir.filePath("window-" + table + ".csv");
            QVERIFY(window.exportTableCsv(table, csv));
            const StepCost& cost = window.evaluator()->latest()->cost;
            QCOMPARE(readAll(csv), (table == "memory" ? ReportWriter::memoryCsv(cost)
                                                      : ReportWriter::collectivesCsv(cost))
                                       .toUtf8());
            QVERIFY(!readAll(csv).contains("#"));
        }
        QSignalSpy errors(&window, &MainWindow::errorReported);
        QVERIFY(!window.exportTableCsv("memory", "/nonexistent-dir/t.csv"));
        QCOMPARE(errors.size(), 1);
        QVERIFY(errors.first().first().toString().contains("/nonexistent-dir/t.csv"));
    }

private:
    QTemporaryDir m_dir;
    std::shared_ptr<const PlanResults> m_results;
};

QTEST_MAIN(TestReport)
#include "tst_report.moc"
