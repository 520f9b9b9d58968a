#include "widgetreport.h"

#include "clicommands.h"
#include "reportwriter.h"

namespace paraplan::cli {
namespace {

bool writeReport(const ReportJob& job, std::ostream& out, std::string* error)
{
    ui::ReportOptions options;
    options.paper = job.paper == ReportJob::Paper::Letter ? QPageSize::Letter : QPageSize::A4;
    return ui::writePlanFileReport(job.plan_path, QString::fromStdString(job.output), options, out,
                                   error);
}

} // namespace

void useWidgetReport()
{
    setReportRunner(&writeReport);
}

} // namespace paraplan::cli
