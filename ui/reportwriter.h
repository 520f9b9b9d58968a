#pragma once

#include "planevaluator.h"
#include "searchpanel.h"

#include <QByteArray>
#include <QPageSize>
#include <QString>

class QIODevice;

#include <ostream>
#include <string>
#include <vector>

namespace paraplan::ui {

struct ReportOptions
{
    QPageSize::PageSizeId paper = QPageSize::A4;
    /// Plans pinned for comparison; a "Comparison" section when any are given.
    std::vector<ComparedPlan> comparison;
};

/// The plan report, laid out from the same results the window shows: title block, headline
/// figures, cluster picture, step breakdown and collectives, memory per stage, the bandwidth
/// plots as vector graphics, the worked derivation, and every figure's source.
class ReportWriter
{
public:
    /// Writes a paginated PDF with header, footer and page numbers. Needs a QApplication
    /// (the plots are widgets); works on the offscreen platform. Atomic: the PDF goes to a
    /// temporary beside `path` that replaces it only once every byte is on disk; on failure
    /// an old file at `path` is untouched and *error names the OS's reason.
    static bool writePdf(const PlanResults& results, const QString& path,
                         const ReportOptions& options, QString* error, int* pages = nullptr);
    /// The same PDF into an open device (a buffer, standard output).
    static bool writePdf(const PlanResults& results, QIODevice* device,
                         const ReportOptions& options, QString* error, int* pages = nullptr);
    static QString collectivesCsv(const StepCost& cost);
    static QString memoryCsv(const StepCost& cost);
    /// The report's section titles, in order (for tests and the table of contents).
    static QStringList sectionTitles(const PlanResults& results, const ReportOptions& options = {});
};

/// Writes `bytes` to `path` atomically (a temporary in the same directory, flushed and checked,
/// then renamed over `path`); on failure `path` is untouched and *error reads
/// "cannot write 'PATH': <the OS's reason>".
bool writeFileSafely(const QString& path, const QByteArray& bytes, QString* error);

/// Loads and evaluates the plan file, then writes its PDF report to `output` ("-": to `out`);
/// says on `out` what it wrote, only once it is on disk. False with *error (one line) when
/// the plan cannot be read or is rejected or the file not written. Needs a QApplication.
/// `paraplan-cli report` runs this for the PDF (its CSV and JSON need no widgets).
bool writePlanFileReport(const std::string& planPath, const QString& output,
                         const ReportOptions& options, std::ostream& out, std::string* error);

} // namespace paraplan::ui
