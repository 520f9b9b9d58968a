#pragma once

#include <array>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace paraplan::cli {

/// Exit codes of paraplan-cli: the one table every command and main() use, documented in
/// `paraplan-cli --help` (exitStatusHelp()) and docs/user-guide.md.
enum ExitCode
{
    kExitOk = 0,    ///< done; the answer is yes (the plan fits, a layout fits, ...)
    kExitNo = 1,    ///< done, and the answer is no: the plan does not fit in memory, no
                    ///< layout fits, a calibration set is outside --tolerance, an answer is off
    kExitUsage = 2, ///< bad input: usage, an option's value, a file that is not what it
                    ///< should be, an invalid plan; one "error: ..." line on stderr
    kExitIo = 3,    ///< I/O error: an input missing or unreadable, an output (a file or
                    ///< standard output) that cannot be written; one "error: ..." line
};

/// The "Exit status" section of `paraplan-cli --help`, the table above in words.
std::string exitStatusHelp();

/// Standard output as main() gives it to run(): a buffer over a file descriptor that keeps the
/// OS's reason (errno) of the first write that failed, so that "cannot write to standard
/// output" can say why (/dev/full: "No space left on device").
class FdOutputBuffer : public std::streambuf
{
public:
    explicit FdOutputBuffer(int fd);
    ~FdOutputBuffer() override;
    /// errno of the first failed write; 0 while every write succeeded.
    int error() const { return m_error; }

protected:
    int_type overflow(int_type c) override;
    int sync() override;

private:
    bool drain();
    int m_fd;
    int m_error = 0;
    std::array<char, 1 << 16> m_buffer{};
};

/// Runs one paraplan-cli command (`args` excludes the program name). Results go to `out`,
/// problems to `err`. The commands and their options are the table in commandtable.cpp.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The stream run() was given for problems: commands print "warning: ..." lines there.
std::ostream& errorStream();

/// Text on its way to a terminal: the control characters a file may carry in a name (an
/// escape sequence in a plan's name, a bell) are written as "\x1b" (C0 but tab, newline and
/// carriage return; DEL) or "\u009b" (C1, UTF-8), never raw. run() filters `out` and `err`
/// through one each.
class ControlEscapingBuffer : public std::streambuf
{
public:
    explicit ControlEscapingBuffer(std::ostream& target) : m_target(target) {}
    ~ControlEscapingBuffer() override { sync(); }
    std::ostream& target() { return m_target; }

protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

private:
    bool put(unsigned char c);
    bool write(const char* s, std::streamsize n);
    std::ostream& m_target;
    bool m_lead = false; ///< a 0xC2 byte waits: the next one may make a C1 control
};

/// The stream under run()'s filter (binary output: the report's PDF to stdout).
std::ostream& unfiltered(std::ostream& out);

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
/// on failure. `report` calls it for the PDF only (after reading and evaluating the plan
/// itself); the CSV tables and the JSON need no widgets and are written by the command.
using ReportRunner = bool (*)(const ReportJob& job, std::ostream& out, std::string* error);

/// The report needs the GUI library (its plots are widgets), which paraplan_cli_lib does not
/// link: paraplan-cli built with Qt Widgets registers the runner (app/cli/main.cpp). Without
/// one, `report` says that this paraplan-cli was built without them.
void setReportRunner(ReportRunner runner);

} // namespace paraplan::cli
