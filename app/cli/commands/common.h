#pragma once

// What several commands share: plan files, cluster and collective options, JSON output.

#include "collectivemodel.h"
#include "collectivewalkthrough.h"
#include "commands.h"
#include "launchconfig.h"
#include "planio.h"
#include "stepmodel.h"

#include <QJsonObject>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace paraplan::cli {

/// UsageError when the file `output` (an option's value; "-" is stdout) is one of `inputs`:
/// a report or fit written over the plan or log it was made from would lose it.
void refuseOverwritingInput(const char* option, const std::string& output,
                            const std::vector<std::string>& inputs);

/// --json: "JSON instead of text".
QCommandLineOption jsonOption();

/// --cluster (a preset or file) and what may be applied to it: --nodes, --nodes-per-rack,
/// --oversubscription, --nvswitch-out, --degrade.
Options clusterOptions();
/// A cluster from those options; UsageError for a bad value or an invalid cluster.
ClusterSpec clusterFromArgs(const Args& args);

/// One collective: --op, --bytes (when `withBytes`), --ranks, --stride, --algo, a flat link
/// (--bw-GBps, --latency-us) or a cluster (clusterOptions()), and --measured-time (when
/// `withBytes`).
Options collectiveOptionList(bool withBytes);

struct CollectiveSetup
{
    std::unique_ptr<CollectiveModel> model;
    CollectiveRequest request;
    CollectiveInputSources sources;
};

CollectiveSetup collectiveFromArgs(const Args& args, bool needBytes = true);

/// --measured-time: algbw and busbw from a measured time (`walkthrough`: as a derivation).
int measured(const Args& args, std::ostream& out, bool walkthrough);

void printJson(const QJsonObject& object, std::ostream& out);

/// An I/O failure: one "error: MESSAGE" line on errorStream(), and kExitIo to return.
int ioError(const std::string& message);
/// The launch target named by `option` (--to, --from); UsageError naming the choices.
LaunchTarget launchTargetFromArgs(const Args& args, const char* option);

/// The plan in `path`; UsageError naming the file and its first problem.
Plan planFromFile(const std::string& path);
/// The plan's step cost; UsageError naming the first rule the plan breaks.
StepCost evaluatePlan(const Plan& plan);

} // namespace paraplan::cli
