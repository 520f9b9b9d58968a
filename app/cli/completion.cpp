// Shell completion for paraplan-cli, generated from the command table (commandtable.cpp) so
// that it lists exactly the commands and options the parser accepts.
#include "completion.h"

#include "clusterio.h"
#include "collectivemodel.h"
#include "commands/commands.h"
#include "commandtable.h"
#include "hardware.h"
#include "launchconfig.h"
#include "logfit.h"
#include "modelio.h"
#include "search.h"

#include <sstream>
#include <vector>

namespace paraplan::cli {
namespace {

struct OptionInfo
{
    std::string name;  ///< with dashes: "--op", "-o"
    std::string value; ///< the value's name ("OP"); empty for a switch
};

std::vector<OptionInfo> optionsOf(const Command& command)
{
    std::vector<OptionInfo> list = {{"--help", ""}};
    for (const QCommandLineOption& option : command.options()) {
        const QString name = option.names().constFirst();
        list.push_back({(name.size() == 1 ? "-" : "--") + name.toStdString(),
                        option.valueName().toStdString()});
    }
    return list;
}

template <typename E, std::size_t N> std::string names(const EnumName<E> (&table)[N])
{
    std::string words;
    for (const EnumName<E>& entry : table)
        words += (words.empty() ? "" : " ") + std::string(entry.name);
    return words;
}

// The values an option takes when they are a short closed list (enum names, preset ids);
// empty when it takes free text or a number.
std::string enumValues(const std::string& option)
{
    std::string words;
    auto add = [&](const std::string& word) { words += (words.empty() ? "" : " ") + word; };
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    if (option == "--op") {
        for (int i = 0; i < kCollectiveOpCount; ++i)
            add(collectiveOpName(static_cast<CollectiveOp>(i)));
    } else if (option == "--algo") {
        for (int i = 0; i < kAlgorithmCount; ++i)
            add(algorithmName(static_cast<Algorithm>(i)));
    } else if (option == "--dtype") {
        for (int i = 0; i < kDtypeCount; ++i)
            add(dtypeName(static_cast<Dtype>(i)));
    } else if (option == "--gpu") {
        for (const GpuSpec& gpu : catalog.gpus)
            add(gpu.id);
    } else if (option == "--nic") {
        for (const InterconnectSpec& link : catalog.interconnects)
            add(link.id);
    } else if (option == "--cluster") {
        for (const ClusterPresetInfo& info : clusterPresets())
            add(info.id);
    } else if (option == "--preset") {
        for (const ModelPresetInfo& preset : modelPresets())
            add(preset.id);
    } else if (option == "--zero") {
        words = "0 1 2 3";
    } else if (option == "--paper") {
        words = "a4 letter";
    } else if (option == "--to") {
        words = names(kLaunchTargetNames);
    } else if (option == "--from") { // import-launch: only the targets that read back
        for (const std::string& name : importableLaunchTargets())
            add(name);
    } else if (option == "--table") { // report --csv --table (report.cpp)
        words = "collectives memory";
    } else if (option == "--fit") { // calibrate: one figure (the list is comma-separated)
        for (FreeFigure figure :
             {FreeFigure::GemmScale, FreeFigure::AttentionScale, FreeFigure::Overlap})
            add(freeFigureName(figure));
    } else if (option == "--objective") {
        words = names(kSearchObjectiveNames);
    }
    return words;
}

// Value names that are paths: completed with file names.
bool takesFile(const OptionInfo& option)
{
    return option.value == "FILE" || option.value == "PLAN" || option.value == "PLAN:LOG" ||
           option.name == "-o" || option.name == "--cluster";
}

std::string commandNames()
{
    std::string words;
    for (const Command& command : commandTable())
        words += (words.empty() ? "" : " ") + std::string(command.name);
    return words;
}

std::string bashScript()
{
    std::ostringstream s;
    s << "# bash completion for paraplan-cli, written by 'paraplan-cli --completion bash' from\n"
      << "# its command table. Installed as share/bash-completion/completions/paraplan-cli.\n"
      << "# Also the window's, paraplan (the same file, installed under both names).\n"
      << "# File names one per line into COMPREPLY (appended), never split at their spaces;\n"
      << "# -o filenames has readline quote them as it inserts them.\n"
      << "_paraplan_cli_files()\n{\n"
      << "    compopt -o filenames 2>/dev/null\n"
      << "    local name\n"
      << "    while IFS= read -r name; do COMPREPLY+=(\"$name\"); done < <(compgen -f -- \"$1\")\n"
      << "}\n\n"
      << "_paraplan_cli()\n{\n"
      << "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      << "    COMPREPLY=()\n"
      << "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
      << "        COMPREPLY=($(compgen -W \"" << commandNames()
      << " --help --version\" -- \"$cur\"))\n"
      << "        return 0\n    fi\n"
      << "    local options=\"\" positional=\"\"\n"
      << "    case \"${COMP_WORDS[1]}\" in\n";
    for (const Command& command : commandTable()) {
        const std::vector<OptionInfo> options = optionsOf(command);
        std::string all;
        for (const OptionInfo& option : options)
            all += (all.empty() ? "" : " ") + option.name;
        s << "    " << command.name << ")\n        case \"$prev\" in\n";
        for (const OptionInfo& option : options) {
            if (option.value.empty())
                continue;
            const std::string values = enumValues(option.name);
            s << "        " << option.name << ")\n";
            if (option.name == "--cluster") // a preset or a cluster file
                s << "            COMPREPLY=($(compgen -W \"" << values << "\" -- \"$cur\"))\n"
                  << "            _paraplan_cli_files \"$cur\"\n";
            else if (!values.empty())
                s << "            COMPREPLY=($(compgen -W \"" << values << "\" -- \"$cur\"))\n";
            else if (takesFile(option))
                s << "            _paraplan_cli_files \"$cur\"\n";
            s << "            return 0 ;;\n";
        }
        s << "        esac\n        options=\"" << all << "\"\n";
        const char* p = command.positional.name;
        s << "        positional=\""
          << (p == nullptr                  ? ""
              : std::string(p) == "COMMAND" ? "command"
                                            : "file")
          << "\" ;;\n";
    }
    s << "    *) return 0 ;;\n    esac\n"
      << "    if [[ \"$cur\" == -* || -z \"$positional\" ]]; then\n"
      << "        COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
      << "    elif [ \"$positional\" = command ]; then\n"
      << "        COMPREPLY=($(compgen -W \"" << commandNames() << "\" -- \"$cur\"))\n"
      << "    else\n        _paraplan_cli_files \"$cur\"\n    fi\n"
      << "    return 0\n}\n"
      << "complete -F _paraplan_cli paraplan-cli\n\n"
      << "_paraplan()\n{\n"
      << "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      << "    COMPREPLY=()\n"
      << "    case \"$prev\" in\n"
      << "    --screenshot|--import-measurements) _paraplan_cli_files \"$cur\"; return 0 ;;\n"
      << "    --size) COMPREPLY=($(compgen -W \"1280x800 1920x1080 2560x1600\" -- \"$cur\"));"
         " return 0 ;;\n"
      << "    --tab) COMPREPLY=($(compgen -W \"0 1 2 3 4 5 6 7 8\" -- \"$cur\")); return 0 ;;\n"
      << "    esac\n"
      << "    if [[ \"$cur\" == -* ]]; then\n"
      << "        COMPREPLY=($(compgen -W \"--screenshot --size --tab --import-measurements "
         "--search --help --version\" -- \"$cur\"))\n"
      << "    else\n        _paraplan_cli_files \"$cur\"\n    fi\n"
      << "    return 0\n}\n"
      << "complete -F _paraplan paraplan\n";
    return s.str();
}

// zsh's _arguments wants ':' and brackets escaped in descriptions; ours stay short (the
// command summaries), so only those characters are replaced.
std::string zshQuoted(const std::string& text)
{
    std::string quoted;
    for (char c : text) {
        if (c == '\'')
            quoted += "'\\''";
        else if (c == ':')
            quoted += "\\:";
        else
            quoted += c;
    }
    return quoted;
}

std::string zshScript()
{
    std::ostringstream s;
    s << "#compdef paraplan-cli paraplan\n"
      << "# zsh completion for paraplan-cli, written by 'paraplan-cli --completion zsh' from its\n"
      << "# command table, and for the window, paraplan. Installed as\n"
      << "# share/zsh/vendor-completions/_paraplan-cli.\n\n"
      << "_paraplan-cli() {\n"
      << "  if [[ $service == paraplan ]]; then\n"
      << "    _arguments -s '--screenshot=:file:_files' '--size=:WxH:(1280x800 1920x1080)' \\\n"
      << "      '--tab=:index:(0 1 2 3 4 5 6 7 8)' '--import-measurements=:file:_files' \\\n"
      << "      '--search' '--help' '--version' '1:plan:_files'\n"
      << "    return\n  fi\n"
      << "  local -a commands\n  commands=(\n";
    for (const Command& command : commandTable())
        s << "    '" << command.name << ":" << zshQuoted(command.summary) << "'\n";
    s << "  )\n"
      << "  if (( CURRENT == 2 )); then\n"
      << "    _describe -t commands 'paraplan-cli command' commands\n"
      << "    compadd -- --help --version\n    return\n  fi\n"
      << "  local command=${words[2]}\n"
      << "  shift words; (( CURRENT-- ))\n"
      << "  case $command in\n";
    for (const Command& command : commandTable()) {
        s << "    " << command.name << ")\n      _arguments -s";
        for (const OptionInfo& option : optionsOf(command)) {
            s << " \\\n        '" << option.name;
            if (option.value.empty()) {
                s << "'";
                continue;
            }
            const std::string values = enumValues(option.name);
            const std::string label = zshQuoted(option.value);
            // "--op=": the value in the next word or after '='; "-o": in the next word.
            const std::string sep = option.name.size() == 2 ? "" : "=";
            if (!values.empty())
                s << sep << ":" << label << ":(" << values << ")'";
            else if (takesFile(option))
                s << sep << ":" << label << ":_files'";
            else
                s << sep << ":" << label << ": '";
        }
        const char* p = command.positional.name;
        if (p && std::string(p) == "COMMAND")
            s << " \\\n        '1:command:(" << commandNames() << ")'";
        else if (p && command.positional.max < 0)
            s << " \\\n        '*:" << p << ":_files'";
        else if (p)
            s << " \\\n        '1:" << p << ":_files'";
        s << " ;;\n";
    }
    s << "  esac\n}\n\n"
      << "_paraplan-cli \"$@\"\n";
    return s.str();
}

} // namespace

std::string completionScript(const std::string& shell)
{
    if (shell == "bash")
        return bashScript();
    if (shell == "zsh")
        return zshScript();
    return {};
}

} // namespace paraplan::cli
