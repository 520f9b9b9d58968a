#pragma once

// The per-format halves of launchconfig.cpp: one exporter (and importer) per framework, and
// what the formats share (the header comment, the launcher line, warnings every target gives).

#include "launchconfig.h"
#include "launchtitan.h" // exportTorchtitan, exportDeepSpeed, importTorchtitan

#include <map>
#include <string>
#include <vector>

namespace paraplan {

/// The per-format exporters: exportLaunchConfig has checked the plan (valid) and filled
/// `config` with the target, suffix, file_name (the name the launch line gives the file) and
/// the warnings every target gives; each sets release, text and launcher and adds its own
/// warnings.
void exportMegatron(const Plan& plan, LaunchConfig* config);
void exportNemo(const Plan& plan, LaunchConfig* config);

LaunchImport importMegatron(const std::string& text, const Plan& base,
                            const HardwareCatalog& catalog);

namespace launch {

/// The Megatron-LM and NeMo sources whose option names the exports use (cited in the files).
extern const char* const kMegatronRelease;
extern const char* const kNemoRelease;

/// The header every exported file starts with, each line prefixed by `comment` ("# ", "// "):
/// the plan's name, the Paraplan version, the release the option names come from, the cluster
/// and the layout.
std::string headerComment(const Plan& plan, const std::string& release, const char* comment);

/// Nodes and GPUs per node the job runs on: the plan's GPUs over the cluster's nodes.
struct LaunchShape
{
    int nodes = 1;
    int gpus_per_node = 1;
};
LaunchShape launchShape(const Plan& plan);

/// "torchrun --nnodes N --nproc-per-node G [rendezvous] SCRIPT" for the plan's cluster.
std::string torchrunLine(const Plan& plan, const std::string& script);

/// Warnings every target gives: settings of the plan that are not launch settings at all
/// (gpu_hour_usd), clusters no GPU framework runs on (a TPU torus), GPUs that do not fill
/// nodes, a plan that does not fit in memory (the job would run out of memory as planned), and
/// a plan costed on another software stack than `stack`, the one the target runs (with the
/// step time on each). `cost` is the plan's evaluation by `engine` (costed: ok).
std::vector<std::string> commonWarnings(const Plan& plan, const StepEngine& engine,
                                        const StepCost& cost, TrainingFramework framework);

/// Text on one comment line: a newline or other control character (from a plan or model name)
/// would end the comment and let the rest run as a command or be read as a setting.
std::string oneLine(const std::string& text);

/// The plan's name as a file name: lower case words joined by '_', at most 40 characters.
std::string fileSlug(const std::string& name);

/// Why the engine would not cost the plan, as one LaunchConfig error ("" when it did).
std::string planError(const StepCost& cost);

/// The flags of one Megatron-LM command line: "--flag" -> its values (none for a switch).
using MegatronFlags = std::map<std::string, std::vector<std::string>>;
/// Applies read flags over result->plan (the base plan); `world` is the launcher's GPU count
/// (0: not given). Problems go to result->errors and result->warnings.
void applyMegatronFlags(const MegatronFlags& flags, long long world, LaunchImport* result,
                        const HardwareCatalog& catalog);

/// Integers and decimals as the files write them (no exponent, no trailing zeros).
std::string integerText(double value);

} // namespace launch
} // namespace paraplan
