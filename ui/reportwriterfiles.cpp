// The report's files: the PDF written so that an old file is replaced only by a complete new
// one, and the plan-file report `paraplan-cli report` runs.

#include "reportwriter.h"

#include "costjson.h"
#include "jsonutil.h"
#include "planio.h"

#include <QBuffer>
#include <QJsonDocument>

namespace paraplan::ui {

bool writeFileSafely(const QString& path, const QByteArray& bytes, QString* error)
{
    std::string message;
    if (json::writeFileAtomically(path.toStdString(), bytes.toStdString(), &message))
        return true;
    *error = QString::fromStdString(message);
    return false;
}

bool ReportWriter::writePdf(const PlanResults& results, const QString& path,
                            const ReportOptions& options, QString* error, int* pages)
{
    // Laid out in memory, then written as one checked, atomic file.
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    int count = 0;
    if (!writePdf(results, &buffer, options, error, &count) ||
        !writeFileSafely(path, buffer.data(), error))
        return false;
    if (pages)
        *pages = count;
    return true;
}

bool writePlanFileReport(const std::string& planPath, const QString& output,
                         const ReportOptions& options, std::ostream& out, std::string* error)
{
    auto fail = [&](const std::string& message) {
        if (error)
            *error = message;
        return false;
    };
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(planPath, &plan, &errors, HardwareCatalog::bundled()))
        return fail(planPath + ": " + errors.front());
    PlanEvaluator evaluator;
    std::vector<PlanIssue> issues;
    QObject::connect(&evaluator, &PlanEvaluator::planRejected,
                     [&](const std::vector<PlanIssue>& rejected) { issues = rejected; });
    evaluator.evaluate(plan);
    const auto results = evaluator.latest();
    if (!results)
        return fail("plan rejected: " + (issues.empty() ? std::string("invalid")
                                                        : issues.front().message + " [rule " +
                                                              issues.front().rule + "]"));
    QString message;
    int pages = 0;
    if (output == "-") {
        // The PDF itself on standard output, nothing else.
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        if (!ReportWriter::writePdf(*results, &buffer, options, &message, &pages))
            return fail(message.toStdString());
        out.write(buffer.data().constData(), buffer.data().size());
        return static_cast<bool>(out) || fail("cannot write the report to standard output");
    }
    if (!ReportWriter::writePdf(*results, output, options, &message, &pages))
        return fail(message.toStdString());
    out << "wrote " << output.toStdString() << " (" << pages << " pages)\n";
    return true;
}

} // namespace paraplan::ui
