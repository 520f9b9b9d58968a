// paraplan-cli import-launch: a Megatron-LM or torchtitan launch file read back into a plan.
#include "common.h"

#include "jsonutil.h"
#include "launchconfig.h"

namespace paraplan::cli {
namespace {

// importLaunchConfig reads back Megatron-LM flags and torchtitan TOML (launchconfig.h).
bool importable(LaunchTarget target)
{
    return target == LaunchTarget::Megatron || target == LaunchTarget::Torchtitan;
}

} // namespace

std::vector<std::string> importableLaunchTargets()
{
    std::vector<std::string> names;
    for (const EnumName<LaunchTarget>& entry : kLaunchTargetNames) {
        if (importable(entry.value))
            names.push_back(entry.name);
    }
    return names;
}

Options importLaunchOptions()
{
    return {
        valueOption("--from", "TARGET", "The file's framework: megatron or torchtitan."),
        valueOption("--base", "PLAN",
                    "Required: the plan the file's settings replace; it gives the cluster, the "
                    "engine figures and what the file does not say."),
        valueOption("-o", "FILE", "Write the plan file here (atomically) instead of stdout."),
    };
}

int runImportLaunch(const Args& args, std::ostream& out)
{
    const std::string path = args.positional().front();
    const LaunchTarget target = launchTargetFromArgs(args, "--from");
    if (!importable(target))
        throw UsageError("--from: a " + std::string(launchTargetName(target)) +
                         " file cannot be read back (megatron, torchtitan)");
    const std::string basePath = args.text("--base");
    requireReadable(basePath);
    std::string text;
    std::string error;
    if (!json::readFile(path, &text, &error))
        throw IoError(error);
    const Plan base = planFromFile(basePath);
    const LaunchImport result = importLaunchConfig(text, target, base, HardwareCatalog::bundled());
    for (const std::string& warning : result.warnings)
        errorStream() << "warning: " << warning << "\n";
    if (!result.errors.empty()) {
        std::string message = path + ": " + result.errors.front();
        if (result.errors.size() > 1)
            message += " (and " + std::to_string(result.errors.size() - 1) + " more)";
        throw UsageError(message);
    }
    // As export and evaluate: the plan is written, and one that does not fit exits 1.
    const int answer = requireCosted(result.cost, path).fits ? kExitOk : kExitNo;
    if (!args.has("-o") || args.text("-o") == "-") {
        out << planToJsonText(result.plan, HardwareCatalog::bundled());
        return answer;
    }
    const std::string output = args.text("-o");
    refuseOverwritingInput("-o", output, {path, basePath});
    savePlanFile(output, result.plan);
    out << "wrote " << output << "\n";
    return answer;
}

} // namespace paraplan::cli
