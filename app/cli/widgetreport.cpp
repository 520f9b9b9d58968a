#include "widgetreport.h"

#include "clicommands.h"
#include "reportwriter.h"

namespace paraplan::cli {
namespace {

bool writeReport(const ReportJob& job, std::ostream& out, std::string* error)
{
    using ui::ReportData;
    ui::ReportOptions options;
    options.paper = job.paper == ReportJob::Paper::Letter ? QPageSize::Letter : QPageSize::A4;
    const ReportData data = job.data == ReportJob::Data::TablesCsv  ? ReportData::TablesCsv
                            : job.data == ReportJob::Data::StepJson ? ReportData::StepJson
                                                                    : ReportData::Pdf;
    return ui::writePlanFileReport(job.plan_path, QString::fromStdString(job.output), data, options,
                                   out, error);
}

} // namespace

void useWidgetReport()
{
    setReportRunner(&writeReport);
}

} // namespace paraplan::cli
