#pragma once

#include "cluster.h"
#include "hardware.h"
#include "model.h"
#include "provenance.h"

#include <array>
#include <string>
#include <vector>

namespace paraplan {

enum class Recompute
{
    None,
    Selective, ///< the attention core (Korthikanti et al. 2022)
    Full,      ///< every layer's forward, from its stored input
};
const char* recomputeName(Recompute recompute);

enum class Optimizer
{
    Adam,
    SGD,
};

/// Which parallel dimension varies fastest over the global rank order.
enum class ParallelDim
{
    TP,
    CP,
    DP,
    PP,
};

/// The parallel layout: degrees, sharding and schedule.
struct ParallelLayout
{
    int tp = 1;
    int pp = 1;
    int dp = 1;
    int cp = 1;
    int ep = 1;
    int zero = 0;
    bool sequence_parallel = false;
    Recompute recompute = Recompute::None;
    int interleave = 1; ///< virtual pipeline stages per GPU
    int micro_batch = 1;
    int global_batch = 1;
    bool dp_overlap = true;
    /// Innermost first. Megatron's default: TP, then CP, then DP, then PP.
    std::array<ParallelDim, 4> rank_order{ParallelDim::TP, ParallelDim::CP, ParallelDim::DP,
                                          ParallelDim::PP};

    int gpus() const { return tp * pp * dp * cp; }
    int microBatches() const { return global_batch / (micro_batch * dp); }
};

struct TrainingSettings
{
    int seq_len = 2048;
    Dtype dtype = Dtype::BF16;
    Optimizer optimizer = Optimizer::Adam;
    double train_tokens = 0; ///< 0: not given
    double gpu_hour_usd = 0; ///< 0: not given
    bool flash_attention = true;
};

/// Efficiency figures the engine uses, each with its source; a plan may override them.
struct EngineFigures
{
    Sourced gemm_peak_fraction;   ///< compute-bound ceiling of a GEMM
    Sourced hbm_fraction;         ///< achievable share of HBM bandwidth
    Sourced attention_fraction;   ///< FlashAttention kernels' share of peak
    Sourced grad_bytes;           ///< bytes per gradient element kept for accumulation
    Sourced optimizer_step_bytes; ///< HBM traffic of one optimizer step, per parameter
    Sourced dp_bucket_bytes;      ///< gradient bucket size for overlapped DP sync
};

/// An assumed figure of the plan's cluster replaced by a measurement; the plan keeps both.
struct PlanMeasurement
{
    std::string figure; ///< "nvlink_ring_efficiency", "nvls_efficiency", "nic_efficiency", ...
    double value = 0;
    double assumed = 0;
    std::string run; ///< host, date, GPUs, NCCL version, file
    std::string why;
};

/// A plan: what to train, where, how.
struct Plan
{
    std::string name;
    ModelSpec model;
    ClusterSpec cluster;
    ParallelLayout parallel;
    TrainingSettings training;
    EngineFigures figures;
    std::vector<PlanMeasurement> measured; ///< applied to `cluster`; revertible
};

/// One broken rule: its id (for tests and the UI's field marking), the field, the message.
struct PlanIssue
{
    std::string rule;
    std::string field;
    std::string message;
};

/// The model and the cluster alone (what an engine needs before it can be built).
std::vector<PlanIssue> validateModelAndCluster(const Plan& plan);
/// Checks the plan against every rule; empty when valid.
std::vector<PlanIssue> validatePlan(const Plan& plan);

/// The default engine figures for a GPU, with sources.
EngineFigures defaultEngineFigures(const GpuSpec& gpu, Optimizer optimizer, Dtype dtype);

} // namespace paraplan
