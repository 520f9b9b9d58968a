#include "clicommands.h"

#include "commands/commands.h"
#include "commandtable.h"
#include "completion.h"
#include "paraplan_version.h"

#include <exception>

namespace paraplan::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    try {
        if (args.empty()) {
            // The usage line and the one error line, on stderr: a script sees why it failed.
            err << "Usage: paraplan-cli COMMAND [options] [arguments]\n";
            throw UsageError("no command given (see 'paraplan-cli help' for the commands)");
        }
        if (args[0] == "--help" || args[0] == "-h") {
            out << overviewHelp();
            return kExitOk;
        }
        if (args[0] == "--version") {
            if (args.size() > 1)
                throw UsageError("--version takes no arguments (got '" + args[1] + "')");
            out << "paraplan-cli " << PARAPLAN_VERSION << "\n";
            return kExitOk;
        }
        if (args[0] == "--completion") {
            // Hidden: the build writes the bash and zsh completion scripts with it.
            const std::string script = completionScript(args.size() == 2 ? args[1] : "");
            if (script.empty() || args.size() != 2)
                throw UsageError("--completion takes one shell: bash or zsh");
            out << script;
            return kExitOk;
        }
        const Command* command = findCommand(args[0]);
        if (!command)
            throw UsageError(
                (args[0].rfind("-", 0) == 0 ? "unknown option '" : "unknown command '") + args[0] +
                "' (see 'paraplan-cli help')");
        const Args parsed(*command, std::vector<std::string>(args.begin() + 1, args.end()));
        if (parsed.helpRequested()) {
            out << commandHelp(*command);
            return kExitOk;
        }
        return command->run(parsed, out);
    } catch (const std::exception& error) {
        err << "error: " << error.what() << "\n";
        return kExitUsage;
    }
}

bool commandNeedsWidgets(const std::string& name)
{
    const Command* command = findCommand(name);
    return command && command->needs_widgets;
}

} // namespace paraplan::cli
