// paraplan-cli report: the plan report as PDF, or its tables as CSV or its step cost as JSON.
// The options are parsed here; the layout is the GUI library's (ui/reportwriter), reached
// through the runner that paraplan-cli registers when it is built with Qt Widgets.
#include "common.h"

namespace paraplan::cli {
namespace {

ReportRunner& registeredRunner()
{
    static ReportRunner runner = nullptr;
    return runner;
}

ReportJob jobFromArgs(const Args& args)
{
    ReportJob job;
    job.plan_path = args.positional().front();
    if (args.has("-o")) {
        job.output = args.text("-o");
        refuseOverwritingInput("-o", job.output, {job.plan_path});
    }
    if (args.has("--paper")) {
        const std::string paper = args.text("--paper");
        if (paper == "letter")
            job.paper = ReportJob::Paper::Letter;
        else if (paper != "a4")
            throw UsageError("--paper: use a4 or letter (got '" + paper + "')");
    }
    const bool csv = args.flag("--csv");
    const bool json = args.flag("--json");
    if (csv && json)
        throw UsageError("choose one of --json and --csv");
    if (!csv && !json && job.output.empty())
        throw UsageError("report needs -o FILE.pdf (or --json / --csv for its data)");
    job.data = csv    ? ReportJob::Data::TablesCsv
               : json ? ReportJob::Data::StepJson
                      : ReportJob::Data::Pdf;
    return job;
}

} // namespace

void setReportRunner(ReportRunner runner)
{
    registeredRunner() = runner;
}

Options reportOptions()
{
    return {
        valueOption("-o", "FILE",
                    "Where to write the report (PDF), or its data with --csv or --json "
                    "(without -o they go to stdout; -o - sends any of them, the PDF too, "
                    "to stdout)."),
        valueOption("--paper", "SIZE", "a4 (default) or letter."),
        flagOption("--csv", "The report's tables (collectives, memory per stage) as CSV."),
        flagOption("--json",
                   "The step cost as JSON (the object 'paraplan-cli evaluate --json' prints)."),
    };
}

int runReport(const Args& args, std::ostream& out)
{
    const ReportRunner runner = registeredRunner();
    if (!runner)
        throw UsageError("report needs Paraplan built with Qt Widgets (qt6-base-dev and "
                         "libqcustomplot-dev); this paraplan-cli was built without them");
    const ReportJob job = jobFromArgs(args);
    std::string error;
    if (!runner(job, out, &error))
        throw UsageError(error);
    return kExitOk;
}

} // namespace paraplan::cli
