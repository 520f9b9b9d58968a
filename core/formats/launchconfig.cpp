#include "launchconfig.h"
#include "cnumeric.h"

#include "jsonutil.h"
#include "launchconfigdetail.h"
#include "paraplan_version.h"
#include "stepmodel.h"
#include "units.h"

#include <QFile>

#include <cctype>
#include <cmath>
#include <cstdio>

namespace paraplan {

const char* launchTargetName(LaunchTarget target)
{
    return enumName(kLaunchTargetNames, target);
}

const char* launchSuffix(LaunchTarget target)
{
    switch (target) {
    case LaunchTarget::Megatron:
        return ".sh";
    case LaunchTarget::Torchtitan:
        return ".toml";
    case LaunchTarget::DeepSpeed:
        return ".json";
    case LaunchTarget::NeMo:
        return ".yaml";
    }
    return "";
}

LaunchConfig exportLaunchConfig(const Plan& plan, LaunchTarget target,
                                const HardwareCatalog& catalog, const std::string& fileName)
{
    LaunchConfig config;
    config.target = target;
    config.suffix = launchSuffix(target);
    config.file_name =
        !fileName.empty()
            ? fileName
            : launch::fileSlug(plan.name.empty() ? "plan" : plan.name) + config.suffix;
    // One evaluation: whether the plan can be exported at all, its memory verdict and the
    // step time the stack warning compares.
    const StepEngine engine(plan.cluster, catalog);
    const StepCost cost = engine.evaluate(plan);
    config.error = launch::planError(cost);
    if (!config.error.empty())
        return config;
    config.fits = cost.fits;
    // The framework the file runs on: NeMo is Megatron-Core underneath.
    const TrainingFramework framework =
        target == LaunchTarget::Torchtitan  ? TrainingFramework::Torchtitan
        : target == LaunchTarget::DeepSpeed ? TrainingFramework::DeepSpeed
                                            : TrainingFramework::Megatron;
    config.warnings = launch::commonWarnings(plan, engine, cost, framework);
    switch (target) {
    case LaunchTarget::Megatron:
        exportMegatron(plan, &config);
        break;
    case LaunchTarget::NeMo:
        exportNemo(plan, &config);
        break;
    case LaunchTarget::Torchtitan:
        exportTorchtitan(plan, &config);
        break;
    case LaunchTarget::DeepSpeed:
        exportDeepSpeed(plan, &config);
        break;
    }
    return config;
}

bool saveLaunchConfig(const LaunchConfig& config, const std::string& path, std::string* error)
{
    if (!json::writeFileAtomically(path, config.text, error))
        return false;
    if (config.suffix == ".sh") {
        // chmod +x as the umask left it: execute wherever read is allowed.
        QFile file(QString::fromStdString(path));
        QFileDevice::Permissions permissions = file.permissions();
        if (permissions & QFileDevice::ReadOwner)
            permissions |= QFileDevice::ExeOwner | QFileDevice::ExeUser;
        if (permissions & QFileDevice::ReadGroup)
            permissions |= QFileDevice::ExeGroup;
        if (permissions & QFileDevice::ReadOther)
            permissions |= QFileDevice::ExeOther;
        if (!file.setPermissions(permissions)) {
            *error = "cannot make '" + path + "' executable: " + file.errorString().toStdString();
            return false;
        }
    }
    return true;
}

LaunchImport importLaunchConfig(const std::string& text, LaunchTarget target, const Plan& base,
                                const HardwareCatalog& catalog)
{
    if (target == LaunchTarget::Megatron || target == LaunchTarget::Torchtitan) {
        LaunchImport result = target == LaunchTarget::Megatron
                                  ? importMegatron(text, base, catalog)
                                  : importTorchtitan(text, base, catalog);
        if (result.errors.empty()) {
            result.cost = StepEngine(result.plan.cluster, catalog).evaluate(result.plan);
            const StepCost& cost = result.cost;
            if (cost.ok && !cost.fits)
                result.warnings.push_back("the imported plan does not fit in memory: " +
                                          units::formatGiB(cost.max_stage_total_bytes) + " of " +
                                          units::formatGiB(cost.hbm_bytes) +
                                          " per GPU on its fullest stage");
        }
        return result;
    }
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
        cSnprintf(buffer, sizeof buffer, "%.0f", value);
    else
        cSnprintf(buffer, sizeof buffer, "%.6g", value);
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

std::string oneLine(const std::string& text)
{
    std::string out = text;
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = ' ';
    }
    return out;
}

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

std::vector<std::string> commonWarnings(const Plan& plan, const StepEngine& engine,
                                        const StepCost& cost, TrainingFramework framework)
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
    if (!cost.fits)
        warnings.push_back(
            "the plan does not fit in memory: " + units::formatGiB(cost.max_stage_total_bytes) +
            " of " + units::formatGiB(cost.hbm_bytes) +
            " per GPU on its fullest stage, so this job runs out of memory as "
            "planned; change the layout first (the Memory tab or "
            "'paraplan-cli search')");
    const bool pytorch = framework != TrainingFramework::Megatron;
    if (plan.training.framework != framework && pytorchFramework(plan) == pytorch)
        warnings.push_back(std::string("the plan's training.framework is ") +
                           trainingFrameworkName(plan.training.framework) + "; this file runs on " +
                           trainingFrameworkName(framework) +
                           ", whose defaults Paraplan costs alike, but set the plan's framework "
                           "to check the layouts it can run");
    if (pytorchFramework(plan) != pytorch) {
        // The file keeps the plan's element-wise kernels (torchtitan writes them as
        // [compile]); the stack changes the attention kernel and what overlaps.
        Plan onTarget = plan;
        onTarget.training.framework = framework;
        onTarget.training.kernels = resolvedKernelStyle(plan);
        // TP overlap as the files write it: Megatron's --tp-comm-overlap, torchtitan's async
        // TP (compiled kernels only).
        // DeepSpeed has no TP overlap (frameworkCapabilityIssue).
        const bool overlap = tpOverlapActive(plan) && framework != TrainingFramework::DeepSpeed &&
                             (!pytorch || resolvedKernelStyle(plan) == KernelStyle::Fused);
        onTarget.parallel.tp_overlap = overlap ? TpOverlap::AgGemm : TpOverlap::None;
        // torchtitan has no ZeRO-1: its file writes it as fsdp_reshard_after_forward "never".
        if (framework == TrainingFramework::Torchtitan && onTarget.parallel.shardingZero() == 1)
            onTarget.parallel.zero = 2;
        const StepCost there = engine.evaluate(onTarget);
        PlanIssue unsupported;
        if (frameworkCapabilityIssue(framework, onTarget.parallel, &unsupported))
            warnings.push_back("this layout does not run as planned on the file's framework: " +
                               unsupported.message);
        if (!there.ok)
            return warnings;
        const char* planned = pytorch ? "a Megatron-style stack" : "a PyTorch FSDP-style stack";
        const char* target = pytorch ? "PyTorch" : "Megatron-style";
        if (std::abs(there.step_time_s - cost.step_time_s) > 0.01 * cost.step_time_s)
            warnings.push_back(std::string("the plan is costed on ") + planned + " (" +
                               units::formatSeconds(cost.step_time_s) +
                               " per step); this framework is a " + target +
                               " stack, on which Paraplan costs the same layout at " +
                               units::formatSeconds(there.step_time_s) +
                               " per step (its attention kernel and overlap); set the plan's "
                               "training.framework to compare");
    }
    return warnings;
}

std::string fileSlug(const std::string& name)
{
    std::string slug;
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            slug += asciiLower(c);
        else if (!slug.empty() && slug.back() != '_')
            slug += '_';
    }
    while (!slug.empty() && slug.back() == '_')
        slug.pop_back();
    if (slug.size() > 40) { // whole words, at most 40 characters
        const size_t cut = slug.rfind('_', 40);
        slug = slug.substr(0, cut == std::string::npos || cut == 0 ? 40 : cut);
    }
    return slug.empty() ? "paraplan" : slug;
}

std::string planError(const StepCost& cost)
{
    if (cost.ok)
        return {};
    if (cost.issues.empty()) // every rejection names its rule; say so rather than nothing
        return "the plan could not be costed; fix it before exporting";
    // As `evaluate` says it: the first problem, and how many more there are.
    std::string more;
    if (cost.issues.size() > 1)
        more = " (and " + std::to_string(cost.issues.size() - 1) + " more)";
    return "the plan is invalid (" + cost.issues.front().field + ": " +
           cost.issues.front().message + ")" + more + "; fix it before exporting";
}

} // namespace launch
} // namespace paraplan
