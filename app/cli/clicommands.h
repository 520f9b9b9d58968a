#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace paraplan::cli {

/// Exit codes of paraplan-cli.
enum ExitCode
{
    kExitOk = 0,
    kExitUsage = 2, ///< bad arguments or files: one "error: ..." line on stderr
    kExitIo = 3,    ///< a file could not be read or written: one "error: ..." line on stderr
};

/// Runs one paraplan-cli command (`args` excludes the program name). Results go to `out`,
/// problems to `err`. The commands and their options are the table in commandtable.cpp.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The stream run() was given for problems: commands print "warning: ..." lines there.
std::ostream& errorStream();

/// Whether the command named `name` draws with Qt Widgets (`report`): main() then runs it
/// under a QApplication.
bool commandNeedsWidgets(const std::string& name);

/// What `paraplan-cli report` asks for, once its options are parsed and checked.
struct ReportJob
{
    enum class Paper
    {
        A4,
        Letter
    };
    enum class Data
    {
        Pdf,       ///< the report as PDF, to `output`
        TablesCsv, ///< its tables as CSV, to `output` or `out`
        StepJson   ///< the step cost as JSON, to `output` or `out`
    };
    std::string plan_path;
    std::string output; ///< empty: CSV or JSON to `out`
    Paper paper = Paper::A4;
    Data data = Data::Pdf;
};

/// Lays out and writes a report; says what it wrote on `out`. False with *error (one line)
/// on failure.
using ReportRunner = bool (*)(const ReportJob& job, std::ostream& out, std::string* error);

/// The report needs the GUI library (its plots are widgets), which paraplan_cli_lib does not
/// link: paraplan-cli built with Qt Widgets registers the runner (app/cli/main.cpp). Without
/// one, `report` says that this paraplan-cli was built without them.
void setReportRunner(ReportRunner runner);

} // namespace paraplan::cli
