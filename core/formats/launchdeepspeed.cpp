// DeepSpeed config JSON export. Key names: DeepSpeed v0.19 (deepspeedai/DeepSpeed,
// deepspeed/runtime/constants.py and deepspeed/runtime/zero/config.py), pinned in
// tests/data/launch/deepspeed-0.19.keys.

#include "launchconfigdetail.h"
#include "launchtitan.h"

#include <cmath>
#include <sstream>

namespace paraplan {

const char* const kDeepSpeedRelease =
    "DeepSpeed v0.19 (deepspeedai/DeepSpeed, deepspeed/runtime/constants.py and "
    "deepspeed/runtime/zero/config.py)";

namespace {

const char* jsonBool(bool b)
{
    return b ? "true" : "false";
}

/// Whether the plan shards ZeRO-3 within groups of dp_shard ranks (MiCS).
bool shardGroups(const ParallelLayout& p)
{
    return p.zero >= 3 && p.dp_shard > 0 && p.dp_shard < p.dp * p.cp;
}

/// DeepSpeed's MiCS takes consecutive global ranks as a shard group (_generate_mics_config in
/// deepspeed/runtime/zero/mics_utils.py: np.arange(world_size).reshape(-1, shard_size)). The
/// training script's groups put model (tensor) parallelism innermost and pipeline stages
/// outermost (DeepSpeed's PipeModelDataParallelTopology: axes pipe, data, model; Megatron's
/// tp-cp-dp-pp order), so consecutive ranks are data-parallel only when tp = cp = 1.
bool consecutiveRanksAreDataParallel(const ParallelLayout& p)
{
    return p.tp == 1 && p.cp == 1;
}

/// Warnings for the settings a plain DeepSpeed config has no key for.
void modelParallelWarnings(const Plan& plan, std::vector<std::string>* warnings)
{
    const ParallelLayout& p = plan.parallel;
    std::string degrees;
    auto add = [&](const char* what, int n, const char* flag) {
        if (n > 1)
            degrees += std::string(degrees.empty() ? "" : ", ") + what + " " + std::to_string(n) +
                       " (" + flag + " " + std::to_string(n) + ")";
    };
    add("tensor parallel", p.tp, "--tensor-model-parallel-size");
    add("pipeline parallel", p.pp, "--pipeline-model-parallel-size");
    add("context parallel", p.cp, "--context-parallel-size");
    add("expert parallel", p.ep, "--expert-model-parallel-size");
    if (!degrees.empty())
        warnings->push_back(
            degrees +
            ": a DeepSpeed config has no key for these degrees; they belong to the training "
            "script (Megatron-DeepSpeed's flags in brackets). The batch keys assume data "
            "parallel " +
            std::to_string(p.dp) +
            ", which DeepSpeed sees only when the script passes its mpu "
            "(plain DeepSpeed counts all " +
            std::to_string(p.gpus()) + " GPUs as data parallel)");
    if (p.pp > 1 && p.interleave > 1)
        warnings->push_back("interleave " + std::to_string(p.interleave) +
                            ": virtual pipeline stages are a training-script setting, not a "
                            "DeepSpeed config key");
    if (p.recompute != Recompute::None)
        warnings->push_back(std::string("recompute ") + recomputeName(p.recompute) +
                            ": activation recomputation is switched on in the training script "
                            "(Megatron-DeepSpeed --recompute-granularity, Hugging Face "
                            "gradient_checkpointing_enable()); the config does not set it");
    if (p.tp > 1 && (p.sequence_parallel || tpOverlapActive(plan)))
        warnings->push_back("sequence parallel and tensor-parallel overlap are training-script "
                            "settings (Megatron-DeepSpeed), not DeepSpeed config keys");
    if (p.zero < 3 && p.dp_shard > 0 && p.dp_shard < p.dp * p.cp)
        warnings->push_back("dp_shard = " + std::to_string(p.dp_shard) + " with ZeRO-" +
                            std::to_string(p.zero) +
                            ": DeepSpeed shards within a group (MiCS) only at stage 3; the file "
                            "shards over all data-parallel ranks");
    if (p.rank_order != ParallelLayout().rank_order)
        warnings->push_back("rank_order is set by the training script's process groups, not by "
                            "the DeepSpeed config");
    if (shardGroups(p) && !consecutiveRanksAreDataParallel(p))
        warnings->push_back(
            "dp_shard = " + std::to_string(p.dp_shard) +
            ": DeepSpeed's MiCS builds its shard groups from consecutive global ranks "
            "(np.arange(world_size).reshape(-1, mics_shard_size)), and with tensor or context "
            "parallelism innermost consecutive ranks belong to one tensor- or context-parallel "
            "group, not to one data-parallel group; the file leaves mics_shard_size out, so "
            "ZeRO-3 shards over all data-parallel ranks");
    if (p.pp > 1 && p.zero >= 2)
        warnings->push_back(
            "ZeRO-" + std::to_string(p.zero) + " with pipeline parallel " + std::to_string(p.pp) +
            ": DeepSpeed's PipelineEngine refuses it (deepspeed/runtime/pipe/engine.py: "
            "\"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\"); the file keeps "
            "stage " +
            std::to_string(p.zero) +
            ", which a training script on DeepSpeed's PipelineModule (Megatron-DeepSpeed) "
            "refuses at start-up; use ZeRO-1 there");
}

void writePrecision(const Plan& plan, std::ostringstream& out, std::vector<std::string>* warnings)
{
    const Dtype dtype = plan.training.dtype;
    const bool fp16 = dtype == Dtype::FP16;
    const bool bf16 = dtype == Dtype::BF16 || dtype == Dtype::FP8;
    out << "  \"bf16\": {\"enabled\": " << jsonBool(bf16) << "},\n"
        << "  \"fp16\": {\"enabled\": " << jsonBool(fp16) << (fp16 ? ", \"loss_scale\": 0" : "")
        << "},\n";
    if (dtype == Dtype::FP8)
        warnings->push_back("dtype fp8: a DeepSpeed config has no FP8 training switch (FP8 comes "
                            "from Transformer Engine in the model code); the file enables bf16");
    if (plan.training.optimizer_state_bytes == 2)
        warnings->push_back("optimizer_dtype bf16 is not written: a DeepSpeed config has no "
                            "switch for 16-bit Adam moments (the fp32 optimizer states stay)");
    if ((bf16 || fp16) && gradReduceBytes(plan) == 4)
        out << "  \"communication_data_type\": \"fp32\",\n";
}

void writeZero(const Plan& plan, std::ostringstream& out)
{
    const ParallelLayout& p = plan.parallel;
    const double gradBytes = std::max(1, gradReduceBytes(plan));
    const long long bucket =
        std::max(1LL, std::llround(plan.figures.dp_bucket_bytes.value / gradBytes));
    out << "  \"zero_optimization\": {\n"
        << "    \"stage\": " << p.zero;
    if (p.zero > 0) {
        out << ",\n    \"overlap_comm\": " << jsonBool(p.dp_overlap)
            << ",\n    \"contiguous_gradients\": true"
            << ",\n    \"reduce_scatter\": true"
            << ",\n    \"reduce_bucket_size\": " << bucket;
    }
    if (p.zero == 1 || p.zero == 2)
        out << ",\n    \"allgather_bucket_size\": " << bucket;
    if (p.zero >= 3) {
        const ParameterCount params = countParameters(plan.model);
        const double layer = params.layer(plan.model.isMoe()) / std::max(1, p.tp);
        const long long prefetch =
            std::max(1LL, std::llround(std::max(1, p.zero3_prefetch) * layer));
        out << ",\n    \"stage3_prefetch_bucket_size\": " << prefetch;
        if (shardGroups(p) && consecutiveRanksAreDataParallel(p))
            out << ",\n    \"mics_shard_size\": " << p.dp_shard;
    }
    out << "\n  },\n";
}

} // namespace

void exportDeepSpeed(const Plan& plan, LaunchConfig* config)
{
    LaunchConfig& out = *config;
    out.release = kDeepSpeedRelease;
    const std::string& fileName = out.file_name;

    const ParallelLayout& p = plan.parallel;
    std::ostringstream json;
    json << "{\n"
         << "  \"train_batch_size\": " << p.global_batch << ",\n"
         << "  \"train_micro_batch_size_per_gpu\": " << p.micro_batch << ",\n"
         << "  \"gradient_accumulation_steps\": " << p.microBatches() << ",\n";
    writePrecision(plan, json, &out.warnings);
    writeZero(plan, json);
    if (plan.training.optimizer == Optimizer::Adam)
        json << "  \"optimizer\": {\"type\": \"AdamW\"},\n";
    else
        out.warnings.push_back("optimizer sgd: DeepSpeed's config names no SGD optimizer; pass "
                               "torch.optim.SGD to deepspeed.initialize(optimizer=...)");
    json << "  \"steps_per_print\": 10\n"
         << "}\n";
    out.warnings.push_back("the learning rate and its schedule are not part of a plan: add "
                           "optimizer.params and a scheduler to the file (DeepSpeed's defaults "
                           "apply otherwise)");
    modelParallelWarnings(plan, &out.warnings);

    const launch::LaunchShape shape = launch::launchShape(plan);
    out.launcher = "deepspeed --num_nodes " + std::to_string(shape.nodes) + " --num_gpus " +
                   std::to_string(shape.gpus_per_node) +
                   (shape.nodes > 1 ? " --hostfile hostfile" : "") +
                   " train.py --deepspeed --deepspeed_config " + fileName;
    out.text = json.str();
}

} // namespace paraplan
