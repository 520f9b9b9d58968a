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

/// UsageError when the file `output` (an option's value; "-" is stdout) is one of `inputs`
/// or a file one of them refers to (a plan's cluster.file or model.hf_config): a report or
/// fit written over the plan, log, cluster or config it was made from would lose it.
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

/// `object` as indented JSON with `"schema": "paraplan-NAME/1"` (`schema`) as its first key:
/// the output's JSON Schema is resources/schema/paraplan-NAME-1.schema.json.
void printJson(const char* schema, const QJsonObject& object, std::ostream& out);
/// A JSON object's text (QJsonDocument's indented form) with the schema key put first.
std::string withSchema(const char* schema, const std::string& jsonText);

/// IoError ("cannot read 'PATH': REASON") unless `path` names a readable file.
void requireReadable(const std::string& path);
/// --cluster VALUE: when it is not a preset but names a file (it exists, holds a '/' or ends
/// in .json), that file must be readable (IoError otherwise). A bare unknown name stays bad
/// input, reported by the cluster reader with the list of presets.
void requireClusterFileReadable(const std::string& value);
/// Writes `text` to `path` through the one atomic writer (json::writeFileAtomically); IoError
/// naming the file and the reason when it cannot.
void writeOutputFile(const std::string& path, const std::string& text);
/// `plan` saved to `path` (planio's atomic save); IoError when it cannot be written.
void savePlanFile(const std::string& path, const Plan& plan);
/// `cluster` saved to `path` as a cluster file; IoError when it cannot be written.
void saveClusterFileOrThrow(const std::string& path, const ClusterSpec& cluster);

/// The launch target named by `option` (--to, --from); UsageError naming the choices.
LaunchTarget launchTargetFromArgs(const Args& args, const char* option);

/// The plan in `path`; UsageError naming the file and its first problem.
Plan planFromFile(const std::string& path);
/// The plan's step cost; UsageError naming the plan's file `path` (when given), the first
/// rule the plan breaks and how many more.
StepCost evaluatePlan(const Plan& plan, const std::string& path = {});
/// `cost` itself when the engine costed its plan; else UsageError naming `path` (when given)
/// and the first rule the plan breaks (as evaluatePlan).
const StepCost& requireCosted(const StepCost& cost, const std::string& path = {});

} // namespace paraplan::cli
