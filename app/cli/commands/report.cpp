// paraplan-cli report: the plan report as PDF, or its tables as CSV or its step cost as JSON.
// The options are parsed here; the layout is the GUI library's (ui/reportwriter), reached
// through the runner that paraplan-cli registers when it is built with Qt Widgets.
#include "common.h"

#include "costjson.h"

#include <QJsonDocument>

namespace paraplan::cli {
namespace {

// The tables `report --csv --table NAME` writes, one RFC 4180 table each.
std::string tableCsv(const std::string& table, const StepCost& cost)
{
    if (table == "collectives")
        return stepCollectivesCsv(cost);
    if (table == "memory")
        return stepMemoryCsv(cost);
    throw UsageError("--table: use collectives or memory (got '" + table + "')");
}

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
    if (csv != args.has("--table"))
        throw UsageError(csv ? "--csv needs --table collectives or --table memory (one table "
                               "per file)"
                             : "--table applies to --csv");
    if (csv && args.text("--table") != "collectives" && args.text("--table") != "memory")
        throw UsageError("--table: use collectives or memory (got '" + args.text("--table") + "')");
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
        flagOption("--csv",
                   "One of the report's tables as CSV (RFC 4180: a header row, CRLF line ends, "
                   "quoted fields), the one --table names."),
        valueOption("--table", "NAME",
                    "With --csv: collectives (one row per collective of the critical stage) or "
                    "memory (memory per GPU by pipeline stage). One table per file: run twice "
                    "for both."),
        flagOption("--json",
                   "The step cost as JSON (the object 'paraplan-cli evaluate --json' prints)."),
    };
}

int runReport(const Args& args, std::ostream& out)
{
    const ReportJob job = jobFromArgs(args);
    // The plan is read and evaluated here first: a missing file (3) or an invalid plan (2) is
    // reported as such, and a plan that does not fit exits 1 once the report is written.
    const Plan plan = planFromFile(job.plan_path);
    const StepCost cost = evaluatePlan(plan, job.plan_path);
    const int answer = cost.fits ? kExitOk : kExitNo;
    if (job.data != ReportJob::Data::Pdf) {
        const std::string text =
            job.data == ReportJob::Data::TablesCsv
                ? tableCsv(args.text("--table"), cost)
                : withSchema("paraplan-evaluate/1", QJsonDocument(stepCostToJson(plan, cost))
                                                        .toJson(QJsonDocument::Indented)
                                                        .toStdString());
        if (job.output.empty() || job.output == "-") {
            out << text;
            return answer;
        }
        writeOutputFile(job.output, text);
        out << "wrote " << job.output << "\n";
        return answer;
    }
    const ReportRunner runner = registeredRunner();
    if (!runner)
        throw UsageError("report needs Paraplan built with Qt Widgets (qt6-base-dev and "
                         "libqcustomplot-dev); this paraplan-cli was built without them");
    // The plan was read and evaluated above: what fails now is writing the PDF.
    std::string error;
    // The PDF's bytes are binary: written past the text filter (clicommands.h).
    std::ostream& raw = unfiltered(out);
    if (!runner(job, raw, &error)) {
        if (job.output == "-" && !raw)
            return answer; // run() reports standard output that cannot be written
        throw IoError(error);
    }
    return answer;
}

} // namespace paraplan::cli
