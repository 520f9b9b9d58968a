// paraplan-cli help [COMMAND]: the commands of the table, or one command's --help.
#include "commands.h"
#include "commandtable.h"

#include <algorithm>
#include <sstream>

namespace paraplan::cli {
namespace {

constexpr size_t kWidth = 100; // the widest line of the overview

// `text` broken at spaces into lines of at most `width` characters.
std::vector<std::string> wrapped(const std::string& text, size_t width)
{
    std::vector<std::string> lines;
    std::istringstream words(text);
    std::string word;
    std::string line;
    while (words >> word) {
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty())
        lines.push_back(line);
    return lines;
}

} // namespace

Options helpOptions()
{
    return {};
}

std::string overviewHelp()
{
    std::vector<std::string> names;
    size_t column = 0;
    for (const Command& command : commandTable()) {
        const std::string syntax = command.positional.syntax();
        names.push_back(command.name + (syntax.empty() ? "" : " " + syntax));
        column = std::max(column, names.back().size() + 2);
    }
    std::ostringstream text;
    text << "paraplan-cli: the Paraplan cost model, headless.\n\n"
         << "Usage: paraplan-cli COMMAND [options] [arguments]\n"
         << "       paraplan-cli COMMAND --help    the command's options and arguments\n"
         << "       paraplan-cli --version\n\n"
         << "Commands:\n";
    const std::vector<Command>& table = commandTable();
    for (size_t i = 0; i < table.size(); ++i) {
        const std::vector<std::string> lines = wrapped(table[i].summary, kWidth - 2 - column);
        for (size_t j = 0; j < lines.size(); ++j)
            text << "  " << (j == 0 ? names[i] : "")
                 << std::string(column - (j == 0 ? names[i].size() : 0), ' ') << lines[j] << "\n";
    }
    text << "\nUnits: GB = 1e9 bytes and GB/s = 1e9 B/s everywhere (nccl-tests' convention);\n"
         << "bandwidths are per direction.\n\n"
         << "JSON output (--json) starts with \"schema\": \"paraplan-NAME/1\"; its JSON Schema is\n"
         << "paraplan-NAME-1.schema.json (resources/schema/ in the source).\n\n"
         << exitStatusHelp();
    return text.str();
}

int runHelp(const Args& args, std::ostream& out)
{
    if (args.positional().empty()) {
        out << overviewHelp();
        return kExitOk;
    }
    const std::string& name = args.positional().front();
    const Command* command = findCommand(name);
    if (!command)
        throw UsageError("unknown command '" + name + "' (see 'paraplan-cli help')");
    out << commandHelp(*command);
    return kExitOk;
}

} // namespace paraplan::cli
