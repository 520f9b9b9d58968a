#include "commandtable.h"

#include "commands/commands.h"

namespace paraplan::cli {
namespace {

constexpr const char* kPlan = "a plan file (JSON)";

} // namespace

const std::vector<Command>& commandTable()
{
    // name, summary, positional arguments {name, description, min, max}, options, body.
    static const std::vector<Command> table = {
        {"collective",
         "Cost of one collective on a flat link or a cluster.",
         {},
         collectiveOptions,
         runCollective},
        {"sweep-collective",
         "One collective over message sizes: the bandwidth-vs-message-size data.",
         {},
         sweepCollectiveOptions,
         runSweepCollective},
        {"walkthrough",
         "A collective, a measured time or a plan's step as a worked derivation.",
         {"PLAN",
          "a plan file (JSON): its training step figure by figure, instead of one collective "
          "(then only --json applies)",
          0, 1},
         walkthroughOptions,
         runWalkthrough},
        {"dp-traffic",
         "ZeRO 0-3 data-parallel sync bytes per rank, and model state per GPU.",
         {},
         dpTrafficOptions,
         runDpTraffic},
        {"evaluate",
         "What one training step of a plan costs: time, MFU, collectives, memory.",
         {"PLAN", kPlan, 1, 1},
         evaluateOptions,
         runEvaluate},
        {"cliffs",
         "The bandwidth-cliff series the window plots: TP, sizes, GPUs, what-ifs.",
         {"PLAN", kPlan, 1, 1},
         cliffsOptions,
         runCliffs},
        {"search",
         "Every valid layout of the plan's model, cluster and batch, ranked.",
         {"PLAN", kPlan, 1, 1},
         searchOptions,
         runSearch},
        {"report",
         "The plan report as PDF, or its tables (CSV) or step cost (JSON).",
         {"PLAN", kPlan, 1, 1},
         reportOptions,
         runReport,
         true},
        {"validate",
         "The engine against published measurements, through the plan-file path.",
         {"FILE",
          "calibration sets (JSON); without one, the bundled sets: Korthikanti et al. 2022 "
          "(A100, Megatron-LM), torchtitan 2024 (FSDP2, A100 and H100), NeMo 2024 (H100, 3D "
          "parallel), 2026 (FP8, MoE, Blackwell, GB200 NVL72), Megatron-Bridge 26.04 MoE "
          "(GPT-OSS, Qwen3, DeepSeek-V3 on H100, B200, GB200), measured memory 2026 "
          "(torchtitan, Megatron-LM, Megatron-Bridge, NeMo, Lightning)",
          0, -1},
         validateOptions,
         runValidate},
        {"calibrate",
         "Fit the engine's free figures to your own training logs, each with its plan.",
         {},
         calibrateOptions,
         runCalibrate,
         false,
         "--run"},
        {"import-measurements",
         "Read a probe run or nccl-tests output: alpha-beta fits, copies, figures.",
         {"FILE", "a probe run (JSON Lines), an nccl-tests log or its -J JSON", 1, 1},
         importMeasurementsOptions,
         runImportMeasurements},
        {"model",
         "A model preset or Hugging Face config: architecture, parameters, FLOPs.",
         {},
         modelOptions,
         runModel},
        {"presets",
         "GPU, interconnect and cluster presets with their sources.",
         {},
         presetsOptions,
         runPresets},
        {"export-cluster",
         "Write a cluster preset, with options applied, as a cluster JSON file.",
         {},
         exportClusterOptions,
         runExportCluster},
        {"import-topology",
         "'nvidia-smi topo -m' output or an NCCL topology dump as a cluster file.",
         {"FILE", "the output of 'nvidia-smi topo -m' or an NCCL topology XML dump", 1, 1},
         importTopologyOptions,
         runImportTopology},
        {"export",
         "A plan as a Megatron-LM, torchtitan, DeepSpeed or NeMo launch file.",
         {"PLAN", kPlan, 1, 1},
         exportOptions,
         runExport},
        {"import-launch",
         "A Megatron-LM or torchtitan launch file read back into a plan file.",
         {"FILE", "a Megatron-LM launch script (or its flags) or a torchtitan TOML", 1, 1},
         importLaunchOptions,
         runImportLaunch},
        {"practice",
         "Interview questions on a plan: answer one, see how far off, and the derivation.",
         {"PLAN", kPlan, 1, 1},
         practiceOptions,
         runPractice},
        {"examples",
         "The example plans installed with Paraplan, with their full paths.",
         {},
         examplesOptions,
         runExamples},
        {"help",
         "List the commands, or show one command's usage and options.",
         {"COMMAND", "the command whose usage and options to show", 0, 1},
         helpOptions,
         runHelp},
    };
    return table;
}

const Command* findCommand(const std::string& name)
{
    for (const Command& command : commandTable()) {
        if (name == command.name)
            return &command;
    }
    return nullptr;
}

} // namespace paraplan::cli
