// paraplan-cli export: a plan as the launch configuration of the framework that runs it.
#include "common.h"

#include "datapaths.h"
#include "launchconfig.h"

#include <QFileInfo>

namespace paraplan::cli {

Options exportOptions()
{
    return {
        valueOption(
            "--to", "TARGET",
            QString::fromStdString("The framework: " + enumChoices(kLaunchTargetNames) + ".")),
        valueOption("-o", "FILE",
                    "Write the file here (atomically) instead of to stdout; a .sh script is "
                    "made executable."),
    };
}

LaunchTarget launchTargetFromArgs(const Args& args, const char* option)
{
    LaunchTarget target = LaunchTarget::Megatron;
    const std::string name = args.text(option);
    if (!enumFromName(kLaunchTargetNames, name, &target))
        throw UsageError(std::string(option) + ": unknown target '" + name + "' (" +
                         enumChoices(kLaunchTargetNames) + ")");
    return target;
}

int runExport(const Args& args, std::ostream& out)
{
    const std::string path = args.positional().front();
    const LaunchTarget target = launchTargetFromArgs(args, "--to");
    const Plan plan = planFromFile(path);
    const bool toStdout = !args.has("-o") || args.text("-o") == "-";
    // The launch line names the file as it is written (stdout: the name the plan suggests).
    // Named as the window's Save suggests: the plan file's stem and the target.
    const std::string fileName =
        toStdout ? datapaths::planFileStem(QString::fromStdString(path)).toStdString() + "-" +
                       launchTargetName(target) + launchSuffix(target)
                 : QFileInfo(QString::fromStdString(args.text("-o"))).fileName().toStdString();
    const LaunchConfig config =
        exportLaunchConfig(plan, target, HardwareCatalog::bundled(), fileName);
    if (!config.error.empty())
        throw UsageError(path + ": " + config.error);
    for (const std::string& warning : config.warnings)
        errorStream() << "warning: " << warning << "\n";
    if (!config.launcher.empty() && config.text.find(config.launcher) == std::string::npos)
        errorStream() << "launch: " << config.launcher << "\n";
    // Like evaluate and report: the file is written, and a plan that runs out of memory as
    // planned exits 1 (its warning says so).
    const int answer = config.fits ? kExitOk : kExitNo;
    if (toStdout) {
        out << config.text; // run() checks that standard output took it
        return answer;
    }
    const std::string output = args.text("-o");
    refuseOverwritingInput("-o", output, {path});
    std::string error;
    if (!saveLaunchConfig(config, output, &error))
        throw IoError(error);
    out << "wrote " << output << " (" << launchTargetName(target) << ", option names as in "
        << config.release << ")\n";
    return answer;
}

} // namespace paraplan::cli
