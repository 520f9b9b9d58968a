#pragma once

#include "inputlimits.h"

#include <QCommandLineOption>
#include <QString>

#include <map>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace paraplan::cli {

/// A bad argument or file: reported as one "error: ..." line with exit code 2.
struct UsageError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

/// The positional arguments a command takes (at most one kind), as its help shows them.
struct Positional
{
    const char* name = nullptr; ///< "PLAN"; nullptr when the command takes none
    const char* description =
        nullptr; ///< "a plan file (JSON)": help text and missing-argument error
    int min = 0; ///< how many are required
    int max = 0; ///< how many are accepted; -1: any number

    /// As the usage line writes it: PLAN, [PLAN] or [FILE...].
    std::string syntax() const;
};

/// An input that cannot be read or an output that cannot be written: reported as one
/// "error: ..." line (naming the file and the OS's reason) with exit code 3.
struct IoError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

class Args;

/// One paraplan-cli command: a row of the command table (commandtable.cpp). Its options are
/// QCommandLineOptions whose descriptions are the only help text it has.
struct Command
{
    const char* name;
    const char* summary; ///< one line: `paraplan-cli help` and the top of the command's --help
    Positional positional;
    std::vector<QCommandLineOption> (*options)();
    int (*run)(const Args& args, std::ostream& out);
    bool needs_widgets = false;       ///< draws with Qt Widgets (main() creates a QApplication)
    const char* repeatable = nullptr; ///< the one option that may be given more than once
};

/// An option that takes a value. `name` carries its dashes: "--op", or "-o" for one letter.
QCommandLineOption valueOption(const char* name, const char* valueName, const QString& description);
/// An option without a value (a switch), e.g. "--json".
QCommandLineOption flagOption(const char* name, const QString& description);

/// The command line of one command, parsed by QCommandLineParser against the command's
/// declared options. Options are named with their dashes ("--op", "-o"), as users type them.
class Args
{
public:
    /// Parses `args` (what follows the command's name). Throws UsageError for an unknown
    /// option, a missing or unexpected value, an option given twice, or a positional argument
    /// missing or too many; not when --help / -h is given (see helpRequested()).
    Args(const Command& command, const std::vector<std::string>& args);

    bool helpRequested() const { return m_help; }
    const std::vector<std::string>& positional() const { return m_positional; }
    /// The options given, as named on the command line ("--op"), in declaration order.
    std::vector<std::string> given() const;

    bool has(const std::string& key) const { return m_values.count(key) || m_flags.count(key); }
    bool flag(const std::string& key) const { return m_flags.count(key) > 0; }
    /// The option's value; UsageError "KEY is required" when it was not given.
    std::string text(const std::string& key) const;
    double number(const std::string& key) const;
    double positive(const std::string& key) const;
    int integer(const std::string& key, int min, int max) const;
    /// A byte count ("141GB", "400MiB") within 1 byte to 1 PB.
    double bytes(const std::string& key) const;
    /// A number within `range` (inputlimits.h); UsageError naming the range otherwise.
    double within(const std::string& key, const limits::Range& range) const;
    /// Every value of the command's repeatable option, in the order given.
    const std::vector<std::string>& all(const std::string& key) const;

private:
    std::map<std::string, std::string> m_values;
    std::map<std::string, std::vector<std::string>> m_lists;
    std::set<std::string> m_flags;
    std::vector<std::string> m_order;
    std::vector<std::string> m_positional;
    bool m_help = false;
};

/// "paraplan-cli NAME [options] SYNTAX".
std::string usageLine(const Command& command);
/// The command's --help: usage, summary, options and arguments, as QCommandLineParser
/// writes them from the declarations.
std::string commandHelp(const Command& command);

} // namespace paraplan::cli
