#pragma once

// Each command's options and body, one file per command under app/cli/commands/; the table
// in commandtable.cpp puts them together.

#include "clicommands.h"
#include "commandline.h"

#include <QCommandLineOption>

#include <ostream>
#include <string>
#include <vector>

namespace paraplan::cli {

using Options = std::vector<QCommandLineOption>;

Options collectiveOptions();
int runCollective(const Args& args, std::ostream& out);

Options sweepCollectiveOptions();
int runSweepCollective(const Args& args, std::ostream& out);

Options walkthroughOptions();
int runWalkthrough(const Args& args, std::ostream& out);

Options dpTrafficOptions();
int runDpTraffic(const Args& args, std::ostream& out);

Options evaluateOptions();
int runEvaluate(const Args& args, std::ostream& out);

Options calibrateOptions();
int runCalibrate(const Args& args, std::ostream& out);

Options cliffsOptions();
int runCliffs(const Args& args, std::ostream& out);

Options searchOptions();
int runSearch(const Args& args, std::ostream& out);

Options reportOptions();
int runReport(const Args& args, std::ostream& out);

Options validateOptions();
int runValidate(const Args& args, std::ostream& out);

Options importMeasurementsOptions();
int runImportMeasurements(const Args& args, std::ostream& out);

Options importTopologyOptions();
int runImportTopology(const Args& args, std::ostream& out);

Options modelOptions();
int runModel(const Args& args, std::ostream& out);

Options presetsOptions();
int runPresets(const Args& args, std::ostream& out);

Options exportClusterOptions();
int runExportCluster(const Args& args, std::ostream& out);

Options exportOptions();
int runExport(const Args& args, std::ostream& out);

Options importLaunchOptions();
int runImportLaunch(const Args& args, std::ostream& out);
/// The --to names importLaunchConfig reads back (--from's values): megatron, torchtitan.
std::vector<std::string> importableLaunchTargets();

Options practiceOptions();
int runPractice(const Args& args, std::ostream& out);

Options examplesOptions();
int runExamples(const Args& args, std::ostream& out);

Options helpOptions();
int runHelp(const Args& args, std::ostream& out);
/// `paraplan-cli help` with no command: the commands of the table, one line each.
std::string overviewHelp();

} // namespace paraplan::cli
