#pragma once

// A plan as the launch configuration of the framework that runs it, and back: Megatron-LM
// command-line flags, a torchtitan train_config TOML, a DeepSpeed config JSON and a NeMo YAML
// fragment. Every setting of the plan either reaches the file or is listed as a warning; none
// is dropped silently.

#include "enumnames.h"
#include "plan.h"
#include "stepmodel.h"

#include <string>
#include <vector>

namespace paraplan {

enum class LaunchTarget
{
    Megatron,   ///< Megatron-LM pretrain_gpt.py flags, in a torchrun script
    Torchtitan, ///< torchtitan's train_config TOML
    DeepSpeed,  ///< a DeepSpeed config JSON (the launcher line beside it)
    NeMo,       ///< a NeMo (Megatron GPT) YAML fragment
};
inline constexpr EnumName<LaunchTarget> kLaunchTargetNames[] = {
    {LaunchTarget::Megatron, "megatron", "Megatron-LM flags (torchrun script)"},
    {LaunchTarget::Torchtitan, "torchtitan", "torchtitan TOML"},
    {LaunchTarget::DeepSpeed, "deepspeed", "DeepSpeed JSON"},
    {LaunchTarget::NeMo, "nemo", "NeMo YAML"},
};
const char* launchTargetName(LaunchTarget target);
/// The target's file suffix: ".sh", ".toml", ".json", ".yaml".
const char* launchSuffix(LaunchTarget target);

/// One exported launch configuration.
struct LaunchConfig
{
    LaunchTarget target = LaunchTarget::Megatron;
    std::string text;      ///< the file's contents
    std::string suffix;    ///< the file's usual suffix: ".sh", ".toml", ".json", ".yaml"
    std::string file_name; ///< the file's name as the launch line refers to it
    std::string launcher;  ///< the command that starts the job (also inside `text` where the
                           ///< format has comments)
    std::string release;   ///< the framework release whose option names the file uses, cited
    /// Settings of the plan the target cannot express (or expresses only approximately), one
    /// sentence each naming the setting and what the file does instead.
    std::vector<std::string> warnings;
    std::string error; ///< non-empty when nothing could be exported (the plan is invalid)
    bool fits = false; ///< the plan fits in memory as planned (else a warning says by how much)
};

/// The plan as a launch configuration for `target`, to be saved as `fileName` (a file name
/// without folder, which the launch line names; empty: the plan's name as a file name with the
/// target's suffix). The plan should be valid (validatePlan); an invalid one gives `error`.
LaunchConfig exportLaunchConfig(const Plan& plan, LaunchTarget target,
                                const HardwareCatalog& catalog, const std::string& fileName = {});

/// Writes `config.text` to `path` atomically (a device or FIFO is refused); a shell script is
/// made executable for whoever may read it. False with `error` naming the file and the reason.
bool saveLaunchConfig(const LaunchConfig& config, const std::string& path, std::string* error);

/// A launch configuration read back into a plan.
struct LaunchImport
{
    Plan plan;
    /// Settings of the file Paraplan does not model, and plan settings the file does not
    /// give (kept from the base plan), one sentence each.
    std::vector<std::string> warnings;
    std::vector<std::string> errors; ///< non-empty: the file could not be read as `target`
    /// The imported plan's evaluation (empty when `errors` is not): its memory verdict is
    /// the one the warnings give.
    StepCost cost;
};

/// Reads `text` (a file exported for `target`, or one written by hand in the same form) over
/// `base`: the file's settings replace the base plan's, and what the file cannot say (the
/// cluster, the engine figures, settings the target has no option for) comes from `base`.
/// Megatron-LM flags and torchtitan TOML can be read back; other targets give an error.
LaunchImport importLaunchConfig(const std::string& text, LaunchTarget target, const Plan& base,
                                const HardwareCatalog& catalog);

} // namespace paraplan
