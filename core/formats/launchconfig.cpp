#include "launchconfig.h"

#include "launchconfigdetail.h"
#include "paraplan_version.h"

#include <cmath>
#include <cstdio>

namespace paraplan {

const char* launchTargetName(LaunchTarget target)
{
    return enumName(kLaunchTargetNames, target);
}

LaunchConfig exportLaunchConfig(const Plan& plan, LaunchTarget target,
                                const HardwareCatalog& catalog)
{
    switch (target) {
    case LaunchTarget::Megatron:
        return exportMegatron(plan, catalog);
    case LaunchTarget::NeMo:
        return exportNemo(plan, catalog);
    case LaunchTarget::Torchtitan:
        return exportTorchtitan(plan, catalog);
    case LaunchTarget::DeepSpeed:
        return exportDeepSpeed(plan, catalog);
    }
    LaunchConfig config;
    config.error = "unknown launch target";
    return config;
}

LaunchImport importLaunchConfig(const std::string& text, LaunchTarget target, const Plan& base,
                                const HardwareCatalog& catalog)
{
    if (target == LaunchTarget::Megatron)
        return importMegatron(text, base, catalog);
    if (target == LaunchTarget::Torchtitan)
        return importTorchtitan(text, base, catalog);
    LaunchImport result;
    result.plan = base;
    result.errors.push_back(std::string("a ") + launchTargetName(target) +
                            " file cannot be read back; import reads megatron and torchtitan");
    return result;
}

namespace launch {

const char* const kMegatronRelease =
    "NVIDIA/Megatron-LM, megatron/training/arguments.py at commit "
    "000c4ac24f61159c138b0975def722c65245983c (Megatron Core 0.14 or later)";
const char* const kNemoRelease =
    "NVIDIA/NeMo, examples/nlp/language_modeling/conf/megatron_llama_config.yaml at commit "
    "fec822132a91ddf7ed7b9bf196b5efcb96827cb9 (NeMo 1.x Megatron GPT YAML)";

std::string integerText(double value)
{
    if (!std::isfinite(value))
        return "0";
    char buffer[64];
    if (value == std::floor(value) && std::fabs(value) < 1e18)
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
    else
        std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
}

LaunchShape launchShape(const Plan& plan)
{
    LaunchShape shape;
    const int perNode = std::max(1, plan.cluster.gpusPerNode());
    const int gpus = plan.parallel.gpus();
    shape.gpus_per_node = std::min(perNode, gpus);
    shape.nodes = std::max(1, (gpus + perNode - 1) / perNode);
    return shape;
}

std::string torchrunLine(const Plan& plan, const std::string& script)
{
    const LaunchShape shape = launchShape(plan);
    std::string line = "torchrun --nnodes " + std::to_string(shape.nodes) + " --nproc-per-node " +
                       std::to_string(shape.gpus_per_node);
    if (shape.nodes > 1)
        line += " --node-rank \"$NODE_RANK\" --master-addr \"$MASTER_ADDR\" --master-port 29500";
    return line + " " + script;
}

namespace {

/// Text from the plan file on one comment line: a newline or other control character would
/// end the comment and let the rest run as a command.
std::string oneLine(const std::string& text)
{
    std::string out = text;
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = ' ';
    }
    return out;
}

} // namespace

std::string headerComment(const Plan& plan, const std::string& release, const char* comment)
{
    const std::string c = comment;
    const ParallelLayout& p = plan.parallel;
    const LaunchShape shape = launchShape(plan);
    std::string out;
    out +=
        c + "Plan \"" + oneLine(plan.name) + "\", written by Paraplan " + PARAPLAN_VERSION + ".\n";
    out += c + "Option names as in " + release + ".\n";
    auto count = [](int n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    out += c + "Cluster: " + count(shape.nodes, "node", "nodes") + " x " +
           count(shape.gpus_per_node, "GPU", "GPUs") + " (" + oneLine(plan.cluster.gpu_id) +
           "); TP " + std::to_string(p.tp) + " x PP " + std::to_string(p.pp) + " x CP " +
           std::to_string(p.cp) + " x DP " + std::to_string(p.dp) + " = " +
           std::to_string(p.gpus()) + " GPUs.\n";
    return out;
}

std::vector<std::string> commonWarnings(const Plan& plan)
{
    std::vector<std::string> warnings;
    if (plan.training.gpu_hour_usd > 0)
        warnings.push_back("gpu_hour_usd (" + integerText(plan.training.gpu_hour_usd) +
                           " USD per GPU-hour) is a costing figure, not a launch setting: "
                           "not written");
    if (plan.cluster.is_torus)
        warnings.push_back("the cluster is a TPU torus; the file is written for GPUs with the "
                           "same layout, which no TPU runtime reads");
    const LaunchShape shape = launchShape(plan);
    if (plan.parallel.gpus() % std::max(1, plan.cluster.gpusPerNode()) != 0)
        warnings.push_back(std::to_string(plan.parallel.gpus()) +
                           " GPUs do not fill whole nodes of " +
                           std::to_string(plan.cluster.gpusPerNode()) + "; the launcher asks for " +
                           std::to_string(shape.nodes) + " full nodes");
    return warnings;
}

std::string planError(const Plan& plan, const HardwareCatalog& catalog)
{
    const std::vector<PlanIssue> issues = validatePlan(plan, catalog);
    if (issues.empty())
        return {};
    return "the plan is invalid (" + issues.front().field + ": " + issues.front().message +
           "); fix it before exporting";
}

} // namespace launch
} // namespace paraplan
