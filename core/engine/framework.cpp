// The training framework a plan runs on (training.framework): its name, and the layouts each
// framework can run, with the framework release and file each rule comes from
// (docs/engine.md, "What each framework can run"). CUDA graph scopes' names too.
#include "plan.h"

#include <string>

namespace paraplan {

const char* cudaGraphsName(CudaGraphs graphs)
{
    return enumName(kCudaGraphsNames, graphs);
}

const char* trainingFrameworkName(TrainingFramework framework)
{
    return enumName(kTrainingFrameworkNames, framework);
}

bool pytorchFramework(const Plan& plan)
{
    return plan.training.framework != TrainingFramework::Megatron;
}

bool frameworkCapabilityIssue(TrainingFramework framework, const ParallelLayout& p,
                              PlanIssue* issue)
{
    const std::string name = trainingFrameworkName(framework);
    auto refuse = [&](const char* rule, const char* field, const std::string& message) {
        *issue = PlanIssue{rule, field, name + " cannot run " + message};
        return true;
    };
    const int zero = p.shardingZero(); // a shard group of one rank shards nothing
    switch (framework) {
    case TrainingFramework::Megatron:
        // Every stage: DDP, the distributed optimizer (--use-distributed-optimizer) and
        // Megatron FSDP's optim_grads / optim_grads_params (--use-custom-fsdp, Megatron-Core
        // 0.11, docs/source/api-guide/custom_fsdp.md), with TP, PP (interleaved) and CP.
        return false;
    case TrainingFramework::Torchtitan:
        // fully_shard (FSDP2) shards parameters, gradients and optimizer state together
        // (torchtitan/models/llama3/infra/parallelize.py apply_fsdp); reshard_after_forward
        // "never" keeps the gathered parameters to the backward (ZeRO-2); replicate is DDP.
        if (zero == 1)
            return refuse("framework-zero", "parallel.zero",
                          "ZeRO-1 (optimizer state sharded alone): FSDP2 shards parameters "
                          "and gradients with it; use zero 2 or 3, or set training.framework");
        return false;
    case TrainingFramework::PytorchFsdp:
        // FSDP1's ShardingStrategy: NO_SHARD, SHARD_GRAD_OP, FULL_SHARD, HYBRID_SHARD
        // (torch/distributed/fsdp/api.py); llm-foundry's parallelism config has no
        // pipeline or context parallelism (llmfoundry/command_utils/train.py).
        if (zero == 1)
            return refuse("framework-zero", "parallel.zero",
                          "ZeRO-1 (optimizer state sharded alone): FSDP1 has no such sharding "
                          "strategy; use zero 2 (SHARD_GRAD_OP) or 3 (FULL_SHARD)");
        if (p.pp > 1)
            return refuse("framework-pp", "parallel.pp",
                          "pipeline parallelism (pp = " + std::to_string(p.pp) +
                              "): llm-foundry and Accelerate's FSDP1 path have no pipeline "
                              "schedule");
        if (p.cp > 1)
            return refuse("framework-cp", "parallel.cp",
                          "context parallelism (cp = " + std::to_string(p.cp) +
                              "): FSDP1 training loops have no ring attention");
        return false;
    case TrainingFramework::DeepSpeed:
        // deepspeed/runtime/pipe/engine.py (PipelineEngine): "ZeRO-2 and ZeRO-3 are
        // incompatible with pipeline parallelism"; its TrainSchedule
        // (deepspeed/runtime/pipe/schedule.py) is plain 1F1B; DeepSpeed's sequence
        // parallelism is Ulysses all-to-all, not ring context parallelism; AutoTP issues its
        // all-reduces without GEMM overlap.
        if (p.pp > 1 && zero >= 2)
            return refuse("framework-zero-pp", "parallel.zero",
                          "ZeRO-" + std::to_string(zero) +
                              " with pipeline parallelism (its PipelineEngine allows ZeRO-0/1 "
                              "only)");
        if (p.interleave > 1)
            return refuse("framework-interleave", "parallel.interleave",
                          "an interleaved pipeline schedule (its PipeSchedule is 1F1B)");
        if (p.cp > 1)
            return refuse("framework-cp", "parallel.cp",
                          "ring context parallelism (cp = " + std::to_string(p.cp) +
                              "): its sequence parallelism is Ulysses all-to-all");
        if (p.tp_overlap == TpOverlap::AgGemm)
            return refuse("framework-tp-overlap", "parallel.tp_overlap",
                          "tp_overlap ag-gemm: its tensor parallelism does not overlap "
                          "collectives with GEMMs");
        return false;
    }
    return false;
}

} // namespace paraplan
