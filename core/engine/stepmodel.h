#pragma once

#include "collectivemodel.h"
#include "plan.h"

#include <array>
#include <string>
#include <vector>

namespace paraplan {

/// One kind of collective a step issues, with how often and what is left exposed.
struct CollectiveCost
{
    const char* group = "";   ///< "tp", "cp", "ep", "pp", "dp"
    const char* purpose = ""; ///< what it carries
    CollectiveResult call;    ///< one call, as the collective model costs it
    int stride = 1;           ///< GPU stride of the group's ranks
    double calls_per_step = 0;
    double total_s = 0;   ///< calls x time, on the critical stage
    double exposed_s = 0; ///< the part not hidden behind compute
};

/// Per pipeline stage: layers and memory per GPU.
struct StageCost
{
    int stage = 0;
    int layers = 0;
    int moe_layers = 0;
    int sliding_layers = 0;     ///< of `layers`, those on a sliding window
    int sliding_moe_layers = 0; ///< ... of which MoE
    double params = 0;          ///< parameters held per GPU before ZeRO sharding
    /// Of `params`, the routed experts' (sharded over the expert data-parallel group)
    double expert_params = 0;
    // Time of one micro-batch through this stage (forward + backward), per GPU.
    double forward_s = 0;
    double backward_s = 0;
    double recompute_s = 0;
    double tp_comm_s = 0;
    double cp_comm_exposed_s = 0;
    double ep_comm_s = 0;
    double pp_comm_s = 0;
    double microbatch_s = 0; ///< all of the above
    // Memory per GPU, bytes.
    double weights_bytes = 0;
    double grads_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0;
    double buffers_bytes = 0;
    double total_bytes = 0;
    double in_flight_microbatches = 0;
    double activation_bytes_per_layer = 0; ///< one micro-batch
    bool fits = true;
};

/// What one training step costs. Every component of `step_time_s` is in `breakdown`.
struct StepBreakdown
{
    double compute_s = 0;   ///< forward + backward on the critical stage, all micro-batches
    double recompute_s = 0; ///< recomputed forward work
    double bubble_s = 0;    ///< pipeline fill and drain
    double tp_comm_exposed_s = 0;
    double cp_comm_exposed_s = 0;
    double ep_comm_exposed_s = 0;
    double pp_comm_exposed_s = 0;
    double dp_comm_exposed_s = 0;
    double optimizer_s = 0;

    /// Communication left on the critical path, all groups together.
    double exposedCommunication() const
    {
        return tp_comm_exposed_s + cp_comm_exposed_s + ep_comm_exposed_s + pp_comm_exposed_s +
               dp_comm_exposed_s;
    }
    double total() const
    {
        return compute_s + recompute_s + bubble_s + tp_comm_exposed_s + cp_comm_exposed_s +
               ep_comm_exposed_s + pp_comm_exposed_s + dp_comm_exposed_s + optimizer_s;
    }
};

/// One component of a step as every view lists it: its JSON key, its label, its field, and
/// whether it is communication left on the critical path.
struct BreakdownComponent
{
    const char* key;
    const char* label;
    double StepBreakdown::*field;
    bool communication;
};
/// The step's components in display order (the CLI, the plots, the report, the search).
inline constexpr BreakdownComponent kBreakdownComponents[] = {
    {"compute", "compute", &StepBreakdown::compute_s, false},
    {"recompute", "recompute", &StepBreakdown::recompute_s, false},
    {"bubble", "pipeline bubble", &StepBreakdown::bubble_s, false},
    {"tp_comm_exposed", "TP comm (exposed)", &StepBreakdown::tp_comm_exposed_s, true},
    {"cp_comm_exposed", "CP comm (exposed)", &StepBreakdown::cp_comm_exposed_s, true},
    {"ep_comm_exposed", "EP comm (exposed)", &StepBreakdown::ep_comm_exposed_s, true},
    {"pp_comm_exposed", "PP comm (exposed)", &StepBreakdown::pp_comm_exposed_s, true},
    {"dp_comm_exposed", "DP comm (exposed)", &StepBreakdown::dp_comm_exposed_s, true},
    {"optimizer", "optimizer", &StepBreakdown::optimizer_s, false},
};

struct StepMetrics
{
    double tokens_per_step = 0;
    double tokens_per_s = 0;
    double model_flops_per_step = 0;
    double hardware_flops_per_step = 0;
    double peak_flops_per_gpu = 0;
    double mfu = 0;
    double hfu = 0;
    double time_to_train_s = 0; ///< 0 when no token budget is given
    double gpu_hours = 0;
    double cost_usd = 0;
};

/// One forward GEMM of a layer as the engine timed it: a roofline of its math at the shape's
/// share of peak against its operand traffic, plus the output write (half hidden inside the
/// main loop, half after it), stretched by TP-overlap kernels sharing its SMs.
struct GemmTiming
{
    const char* name = ""; ///< "qkv", "attn_proj", "mlp_up", "mlp_down", "router", "shared_up", ...
    double M = 0;
    double K = 0;
    double N = 0;
    double batch = 1;
    double flops = 0;      ///< 2 M K N x batch
    double efficiency = 0; ///< the shape's share of peak
    double compute_s = 0;  ///< flops / (peak x efficiency)
    double operands_s = 0; ///< operand bytes / HBM
    double output_s = 0;   ///< output bytes / HBM
    double slowdown = 1;   ///< TP-overlap kernels on some SMs
    double time_s = 0;     ///< slowdown x (max(compute, operands + output/2) + output/2)
};

/// How the per-layer compute time came about, for derivations.
struct LayerCompute
{
    std::array<GemmTiming, 10> gemms; ///< the forward GEMMs, `gemm_count` of them
    size_t gemm_count = 0;
    double gemm_forward_s = 0;
    double gemm_backward_s = 0;
    double gemm_efficiency = 0; ///< forward GEMM FLOPs / (time x peak): shape-weighted
    double attention_forward_s = 0;
    double attention_backward_s = 0;
    double elementwise_forward_s = 0;
    double elementwise_backward_s = 0;
    double forward_s = 0;
    double backward_s = 0;
    double recompute_s = 0;
    double gemm_forward_flops = 0;
    double attention_forward_flops = 0;
    double elementwise_forward_bytes = 0;
    double elementwise_backward_bytes = 0;
    /// Kernel launches of the layer (docs/engine.md, "Kernel launches"): kernels per pass,
    /// the gaps between them on the GPU, and the host's time to issue them.
    double kernels_forward = 0;
    double kernels_backward = 0;
    double launch_gap_forward_s = 0;  ///< included in forward_s
    double launch_gap_backward_s = 0; ///< included in backward_s
    double host_forward_s = 0;        ///< the host's issue time; forward_s is at least this
    double host_backward_s = 0;
    bool launch_bound = false; ///< the host's issue time sets a pass's length
    /// MoE on Megatron-Core: the router and the dispatcher's preprocessing, per pass: their
    /// kernels, those issued from the host, and their time in each pass (in forward_s and
    /// backward_s; docs/engine.md, "The MoE router block").
    double router_kernels = 0;
    double router_host_kernels = 0;
    double router_forward_s = 0;
    double router_backward_s = 0;
    /// The MoE block of the layer alone (router GEMM and kernels, dispatch permutes, grouped
    /// expert GEMMs, activation), forward and backward: the part MoE-layer kernel benchmarks
    /// time (tests/data/sonicmoe-fig14-h100.json). Included in forward_s / backward_s.
    double moe_block_forward_s = 0;
    double moe_block_backward_s = 0;
    // dtype fp8: the quantization passes (layercost::fp8CastBytes), in forward_s / backward_s.
    double fp8_cast_forward_bytes = 0;  ///< the linear layers' inputs, per micro-batch
    double fp8_cast_backward_bytes = 0; ///< their output gradients
    double fp8_weight_cast_bytes = 0;   ///< the weights' casts, their share per micro-batch
    double fp8_cast_forward_s = 0;      ///< inputs and weights at the HBM rate
    double fp8_cast_backward_s = 0;
};

/// How busy one tier of links is over a step, on the busiest GPU's links.
struct LinkUse
{
    Tier tier = Tier::Link;
    double busy_s = 0;              ///< seconds per step the tier carries collectives of this GPU
    double share = 0;               ///< busy_s / step time
    const char* busiest_group = ""; ///< the group that loads it most
};

/// What the plan's `auto` settings and kernel figures resolved to for this evaluation.
struct StepAssumptions
{
    AttentionKernel attention = AttentionKernel::Flash2;
    KernelStyle kernels = KernelStyle::Fused;
    bool tp_overlap = false;
    int grad_reduce_bytes = 4;
    Sourced attention_fwd_figure;   ///< the kernel's forward share at long sequences, sourced
    Sourced attention_bwd_figure;   ///< ... backward
    double attention_fwd_share = 0; ///< at this sequence length and head dimension
    double attention_bwd_share = 0;
    bool pytorch_framework = false;
    double slowest_gpu_factor = 1; ///< the slowest GPU's time relative to a typical one
    /// The recipe an fp8 plan runs (Auto: not fp8).
    Fp8Recipe fp8_recipe = Fp8Recipe::Auto;
};

/// Strings kept for reuse: a copy or a move starts empty (they are buffers, not data).
class SpareStrings
{
public:
    SpareStrings() = default;
    SpareStrings(const SpareStrings&) {}
    SpareStrings(SpareStrings&&) noexcept {}
    SpareStrings& operator=(const SpareStrings&) { return *this; }
    SpareStrings& operator=(SpareStrings&&) noexcept { return *this; }

    /// Moves every string of `from` here, leaving `from` empty (its capacity kept).
    void keep(std::vector<std::string>& from);
    /// A string of the pool (empty, its capacity kept), or a new one, moved to the end of `to`.
    std::string& take(std::vector<std::string>& to);

private:
    std::vector<std::string> m_strings;
};

struct StepCost
{
    bool ok = false;
    std::vector<PlanIssue> issues; ///< why the plan was rejected
    std::vector<std::string> warnings;

    double step_time_s = 0;
    StepBreakdown breakdown;
    std::vector<CollectiveCost> collectives;
    std::vector<StageCost> stages;
    int critical_stage = 0;
    double max_stage_total_bytes = 0; ///< the fullest stage's peak allocated bytes per GPU
    int fullest_stage = 0;            ///< that stage (the first of equals)
    /// Its peak reserved by the caching allocator: max_stage_total_bytes x (1 +
    /// overrides.allocator_reserve), what torch.cuda.memory_stats() reports as
    /// reserved_bytes.all.peak.
    double max_stage_reserved_bytes = 0;
    double runtime_reserve_bytes = 0; ///< outside the allocator: CUDA context, NCCL buffers
    double hbm_bytes = 0;
    /// The verdict: the fullest stage's allocated peak and the runtime reserve within HBM.
    bool fits = false;
    /// It fits, but its reserved peak would not: it runs only while the allocator's
    /// fragmentation stays under the reserve left (expandable segments keep it low).
    bool tight = false;
    /// HBM left at the fullest stage's peak, the runtime reserve counted (negative: over).
    double spareBytes() const { return hbm_bytes - max_stage_total_bytes - runtime_reserve_bytes; }
    StepMetrics metrics;
    LayerCompute dense_layer;
    LayerCompute moe_layer;
    double lm_head_s = 0;   ///< forward + backward of the LM head, last stage
    double embedding_s = 0; ///< forward + backward of the embedding, first stage
    int microbatches = 0;
    bool tp_within_node = true;
    std::vector<LinkUse> links; ///< tiers with traffic, busiest first
    StepAssumptions assumptions;

    /// Back to a default-constructed answer, keeping the capacity of every vector and string
    /// (StepEngine::evaluate(plan, into) fills a cleared answer without allocating).
    void clear();
    /// A new warning at the end of `warnings`, empty, in a string a cleared answer kept.
    std::string& addWarning() { return m_spareWarnings.take(warnings); }

private:
    SpareStrings m_spareWarnings; ///< the strings of cleared warnings
};

/// Evaluates plans on one cluster. Construction builds the cluster's collective model (the
/// topology work); evaluate() is cheap and safe to call from several threads.
class StepEngine
{
public:
    /// `catalog` supplies the cluster's GPU (its peaks, HBM and kernel figures) and the rules'
    /// hardware checks; it must outlive the engine, unchanged (the GPU is looked up here, once).
    StepEngine(const ClusterSpec& cluster, const HardwareCatalog& catalog);

    StepCost evaluate(const Plan& plan) const;
    /// The same answer into `into`, which is cleared first and keeps its buffers: a caller
    /// that evaluates many plans with one StepCost makes no heap allocation for a valid plan
    /// once the buffers have grown (tst_stepalloc).
    void evaluate(const Plan& plan, StepCost& into) const;
    const CollectiveModel& collectives() const { return m_collectives; }

private:
    ClusterSpec m_cluster;
    CollectiveModel m_collectives;
    const HardwareCatalog* m_catalog;
    const GpuSpec* m_gpu;       ///< the cluster's GPU in the catalog, resolved once (null: unknown)
    double m_gemmReference = 0; ///< kernels::gemmReferenceEfficiency of its kernel figures
    std::string m_hbmText;      ///< its HBM in GiB as the "does not fit" warning writes it
    /// Unique per constructed engine: keys the threads' caches of its collective answers
    /// (a copy shares it, and the same model).
    unsigned long long m_serial;
};

/// The stride of each parallel dimension's groups for a rank order.
struct GroupStrides
{
    int tp = 1;
    int cp = 1;
    int dp = 1;
    int pp = 1;
};
GroupStrides groupStrides(const ParallelLayout& layout);

} // namespace paraplan
