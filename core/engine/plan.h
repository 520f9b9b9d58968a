#pragma once

#include "cluster.h"
#include "enumnames.h"
#include "hardware.h"
#include "model.h"
#include "provenance.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace paraplan {

struct TopologyGraph;

enum class Recompute
{
    None,
    Selective, ///< the attention core (Korthikanti et al. 2022)
    Full,      ///< every layer's forward, from its stored input
};
inline constexpr EnumName<Recompute> kRecomputeNames[] = {
    {Recompute::None, "none", "none"},
    {Recompute::Selective, "selective", "selective"},
    {Recompute::Full, "full", "full"},
};
const char* recomputeName(Recompute recompute);

enum class Optimizer
{
    Adam,
    SGD,
};

/// The training framework a plan runs on (training.framework): what the `auto` kernel,
/// attention and overlap settings resolve to, and which layouts it can run
/// (frameworkCapabilityIssue). The ZeRO stage never changes it; a plan that names none runs
/// on Megatron. Each default's source: docs/engine.md, "The training framework".
enum class TrainingFramework
{
    Megatron,    ///< Megatron-LM / Megatron-Core, NeMo, Megatron-Bridge (Transformer Engine)
    Torchtitan,  ///< torchtitan: FSDP2 fully_shard, eager unless torch.compile is enabled
    PytorchFsdp, ///< PyTorch FSDP1 flat parameters: llm-foundry, Accelerate, Lightning
    DeepSpeed,   ///< DeepSpeed ZeRO engine, eager PyTorch modules
};
inline constexpr EnumName<TrainingFramework> kTrainingFrameworkNames[] = {
    {TrainingFramework::Megatron, "megatron", "Megatron-Core / NeMo"},
    {TrainingFramework::Torchtitan, "torchtitan", "torchtitan (FSDP2)"},
    {TrainingFramework::PytorchFsdp, "pytorch-fsdp", "PyTorch FSDP1 (llm-foundry, Accelerate)"},
    {TrainingFramework::DeepSpeed, "deepspeed", "DeepSpeed"},
};
const char* trainingFrameworkName(TrainingFramework framework);

/// How the training stack runs its element-wise work (training.kernels).
enum class KernelStyle
{
    Auto,  ///< eager on the PyTorch frameworks, fused on Megatron
    Fused, ///< Megatron-LM / Transformer Engine fused kernels (or torch.compile)
    Eager, ///< PyTorch eager: one kernel, one HBM round trip, per operator
};
inline constexpr EnumName<KernelStyle> kKernelStyleNames[] = {
    {KernelStyle::Auto, "auto", "auto (eager on PyTorch, else fused)"},
    {KernelStyle::Fused, "fused", "fused (Megatron / TE / compiled)"},
    {KernelStyle::Eager, "eager", "eager PyTorch"},
};
const char* kernelStyleName(KernelStyle style);

/// Tensor-parallel communication overlap (parallel.tp_overlap).
enum class TpOverlap
{
    Auto,  ///< ag-gemm on Megatron with SP on and TP in one NVLink domain
    None,  ///< every TP collective on the critical path
    AgGemm ///< all-gather/reduce-scatter split into tp chunks pipelined with the GEMMs
           ///< (Megatron's --tp-comm-overlap, Transformer Engine userbuffers, async TP)
};
inline constexpr EnumName<TpOverlap> kTpOverlapNames[] = {
    {TpOverlap::Auto, "auto", "auto (Megatron, SP, TP in an NVLink domain)"},
    {TpOverlap::None, "none", "none"},
    {TpOverlap::AgGemm, "ag-gemm", "AG/RS pipelined with GEMMs"},
};
const char* tpOverlapName(TpOverlap overlap);

/// Which part of the step is captured as CUDA graphs (training.cuda_graphs): a captured
/// region is launched once from the host and its kernels follow each other with the graph's
/// shorter gaps (Megatron-Core --enable-cuda-graph / --cuda-graph-scope, Transformer Engine
/// make_graphed_callables; torch.compile mode="reduce-overhead").
enum class CudaGraphs
{
    None,   ///< every kernel launched from Python (the default of Megatron-LM, torchtitan,
            ///< FSDP and DeepSpeed)
    Layers, ///< each transformer layer's forward and backward captured (TE/Megatron-Core)
    Full,   ///< the whole forward-backward captured (Megatron-Core full_iteration scope)
};
inline constexpr EnumName<CudaGraphs> kCudaGraphsNames[] = {
    {CudaGraphs::None, "none", "none (kernels launched from Python)"},
    {CudaGraphs::Layers, "layers", "per transformer layer"},
    {CudaGraphs::Full, "full", "the whole forward-backward"},
};
const char* cudaGraphsName(CudaGraphs graphs);
/// The modules Megatron-Core's selective recompute re-runs (parallel.recompute_modules, with
/// recompute "selective": --recompute-modules, megatron/core/transformer/transformer_config.py
/// at d98e8a64; none set: its default, core_attn). Bit flags.
enum RecomputeModule : unsigned
{
    kRecomputeCoreAttn = 1u << 0,      ///< "core_attn": the attention core
    kRecomputeMlp = 1u << 1,           ///< "mlp": a dense layer's MLP
    kRecomputeMoeAct = 1u << 2,        ///< "moe_act": the routed experts' activation function
    kRecomputeMoe = 1u << 3,           ///< "moe": the whole MoE block
    kRecomputeLayernorm = 1u << 4,     ///< "layernorm": the input and pre-MLP norms
    kRecomputeSharedExperts = 1u << 5, ///< "shared_experts": the shared experts' MLP
    kRecomputeMlaUpProj = 1u << 6,     ///< "mla_up_proj": latent attention's up-projections
};
inline constexpr EnumName<unsigned> kRecomputeModuleNames[] = {
    {kRecomputeCoreAttn, "core_attn", "attention core"},
    {kRecomputeMlp, "mlp", "dense MLP"},
    {kRecomputeMoeAct, "moe_act", "expert activation"},
    {kRecomputeMoe, "moe", "MoE block"},
    {kRecomputeLayernorm, "layernorm", "norms"},
    {kRecomputeSharedExperts, "shared_experts", "shared experts"},
    {kRecomputeMlaUpProj, "mla_up_proj", "MLA up-projections"},
};
/// The names of `flags`' bits in `names`' order ("core_attn", "mlp", ...).
template <size_t N>
std::vector<std::string> flagNames(const EnumName<unsigned> (&names)[N], unsigned flags)
{
    std::vector<std::string> out;
    for (const EnumName<unsigned>& entry : names)
        if (flags & entry.value)
            out.push_back(entry.name);
    return out;
}

/// The parts of each layer a partial capture covers (training.cuda_graph_scope, with
/// cuda_graphs "layers"): Megatron-Core's --cuda-graph-scope with --cuda-graph-impl
/// transformer_engine, which Megatron-Bridge's MoE recipes use because a dropless MoE layer's
/// routed experts have dynamic shapes (bit flags; none set: the whole layer).
enum CudaGraphScope : unsigned
{
    kGraphAttn = 1u << 0,          ///< "attn": the attention block
    kGraphMlp = 1u << 1,           ///< "mlp": a dense layer's MLP
    kGraphMoe = 1u << 2,           ///< "moe": the whole MoE block (needs static shapes)
    kGraphMoeRouter = 1u << 3,     ///< "moe_router": the router (and the shared experts)
    kGraphMoePreprocess = 1u << 4, ///< "moe_preprocess": the dispatcher's preprocessing
};
inline constexpr EnumName<unsigned> kCudaGraphScopeNames[] = {
    {kGraphAttn, "attn", "attention"},
    {kGraphMlp, "mlp", "dense MLP"},
    {kGraphMoe, "moe", "MoE block"},
    {kGraphMoeRouter, "moe_router", "MoE router"},
    {kGraphMoePreprocess, "moe_preprocess", "MoE dispatch preprocessing"},
};
/// How FP8 training scales its tensors (training.fp8_recipe; only with dtype fp8).
enum class Fp8Recipe
{
    Auto,     ///< the stack's default: delayed on Megatron / Transformer Engine, current on
              ///< PyTorch (torchao float8's tensorwise dynamic scaling)
    Delayed,  ///< per-tensor scale from an amax history (TE's DelayedScaling)
    Current,  ///< per-tensor scale from this tensor's amax (TE Float8CurrentScaling, torchao)
    Mxfp8,    ///< 1x32 blocks with E8M0 scales on Blackwell tensor cores (TE MXFP8BlockScaling)
    Blockwise ///< 1x128 activation and 128x128 weight blocks (DeepSeek-V3; TE Float8BlockScaling)
};
inline constexpr EnumName<Fp8Recipe> kFp8RecipeNames[] = {
    {Fp8Recipe::Auto, "auto", "auto (delayed on Megatron, current on PyTorch)"},
    {Fp8Recipe::Delayed, "delayed", "delayed scaling (tensor-wise)"},
    {Fp8Recipe::Current, "current", "current scaling (tensor-wise)"},
    {Fp8Recipe::Mxfp8, "mxfp8", "MXFP8 (1x32 blocks, Blackwell)"},
    {Fp8Recipe::Blockwise, "blockwise", "blockwise (1x128 / 128x128)"},
};
const char* fp8RecipeName(Fp8Recipe recipe);

/// How an MoE layer's tokens reach their experts (training.moe_dispatcher), as Megatron-Core's
/// token dispatchers do it (megatron/core/transformer/moe/token_dispatcher.py).
enum class MoeDispatcher
{
    Auto,      ///< alltoall (the MoE recipes of NeMo and Megatron-Bridge; torchtitan; DeepSpeed)
    AllToAll,  ///< permute, all-to-all over EP, all-gather over expert TP (and back)
    AllGather, ///< every token all-gathered over expert TP x EP, outputs reduce-scattered
    DeepEP,    ///< DeepEP / HybridEP fused kernels: a token sent once per destination GPU
};
inline constexpr EnumName<MoeDispatcher> kMoeDispatcherNames[] = {
    {MoeDispatcher::Auto, "auto", "auto (alltoall)"},
    {MoeDispatcher::AllToAll, "alltoall", "all-to-all"},
    {MoeDispatcher::AllGather, "allgather", "all-gather"},
    {MoeDispatcher::DeepEP, "deepep", "DeepEP / HybridEP"},
};
const char* moeDispatcherName(MoeDispatcher dispatcher);

/// Whether the expert-parallel dispatch and combine hide behind other work (parallel.ep_overlap).
enum class EpOverlap : unsigned char
{
    None, ///< on the critical path (every framework's default)
    A2a,  ///< behind the other micro-batch's compute (Megatron-Core
          ///< --overlap-moe-expert-parallel-comm, DeepEP's hook-based overlap)
};
inline constexpr EnumName<EpOverlap> kEpOverlapNames[] = {
    {EpOverlap::None, "none", "none"},
    {EpOverlap::A2a, "a2a", "A2A behind the other micro-batch"},
};
const char* epOverlapName(EpOverlap overlap);

/// Which parallel dimension varies fastest over the global rank order.
enum class ParallelDim : unsigned char
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
    /// Expert tensor parallelism (Megatron --expert-tensor-parallel-size); 0: the TP degree.
    /// EP x expert TP is drawn from the tp x cp x dp ranks (MoE parallel folding).
    int expert_tp = 0;
    int zero = 0;
    bool sequence_parallel = false;
    /// RecomputeModule bits of a selective recompute (0: Megatron-Core's default, core_attn);
    /// one byte, in the padding after sequence_parallel.
    unsigned char recompute_modules = 0;
    EpOverlap ep_overlap = EpOverlap::None;
    Recompute recompute = Recompute::None;
    /// The modules a selective recompute re-runs: its bits, or core_attn where none is set.
    unsigned recomputeModules() const
    {
        return recompute != Recompute::Selective ? 0u
               : recompute_modules               ? recompute_modules
                                                 : unsigned(kRecomputeCoreAttn);
    }
    int interleave = 1; ///< virtual pipeline stages per GPU
    int micro_batch = 1;
    int global_batch = 1;
    bool dp_overlap = true;
    TpOverlap tp_overlap = TpOverlap::Auto;
    int zero3_prefetch = 1; ///< layers gathered ahead of the one computing (ZeRO-3/FSDP)
    /// HSDP: ranks a ZeRO shard group spans (0: all dp x cp ranks); replicas all-reduce.
    int dp_shard = 0;
    /// Layers per pipeline stage (empty: an even split, see stageLayers()).
    std::vector<int> stage_layers;
    int first_stage_layers = 0; ///< Megatron's --decoder-first-pipeline-num-layers (0: even)
    int last_stage_layers = 0;  ///< Megatron's --decoder-last-pipeline-num-layers (0: even)
    /// Innermost first. Megatron's default: TP, then CP, then DP, then PP.
    std::array<ParallelDim, 4> rank_order{ParallelDim::TP, ParallelDim::CP, ParallelDim::DP,
                                          ParallelDim::PP};

    int gpus() const { return tp * pp * dp * cp; }
    int expertTp() const { return expert_tp > 0 ? expert_tp : tp; }
    int microBatches() const { return global_batch / (micro_batch * dp); }
    /// The ZeRO shard group size: dp_shard, or every dp x cp rank.
    int shardRanks() const { return dp_shard > 0 ? dp_shard : dp * cp; }
    /// The ZeRO stage that shards anything: a shard group of one rank (dp x cp = 1, or
    /// dp_shard = 1) keeps every byte whole, so its ZeRO stage costs as ZeRO-0.
    int shardingZero() const { return shardRanks() > 1 ? zero : 0; }
};

struct TrainingSettings
{
    int seq_len = 2048;
    Dtype dtype = Dtype::BF16;
    Optimizer optimizer = Optimizer::Adam;
    double train_tokens = 0; ///< 0: not given
    double gpu_hour_usd = 0; ///< 0: not given
    TrainingFramework framework = TrainingFramework::Megatron;
    AttentionKernel attention = AttentionKernel::Auto;
    KernelStyle kernels = KernelStyle::Auto;
    /// Bytes per gradient element in the data-parallel reduction (0: auto: fp32 for bf16,
    /// as Megatron-LM's bf16 runs and FSDP2's reduce_dtype; the training dtype otherwise).
    int grad_reduce_bytes = 0;
    /// Bytes per element of the optimizer's moments (training.optimizer_dtype; 0: auto, fp32):
    /// Megatron-Core's --exp-avg-dtype / --exp-avg-sq-dtype with its precision-aware optimizer.
    int optimizer_state_bytes = 0;
    CudaGraphs cuda_graphs = CudaGraphs::None;
    Fp8Recipe fp8_recipe = Fp8Recipe::Auto; ///< with dtype fp8: how tensors are scaled
    bool fp8_attention = false; ///< with dtype fp8: the attention core in FP8 too (TE + cuDNN)
    /// With dtype fp8 on Transformer Engine: the layers' weights kept in FP8 and all-gathered
    /// in FP8, no 16-bit copy (Megatron-LM --fp8-param-gather, default off; Megatron-Bridge's
    /// FP8 precision presets turn it on).
    bool fp8_param_gather = false;
    MoeDispatcher moe_dispatcher = MoeDispatcher::Auto;
    /// Megatron-Core --moe-router-fusion (Transformer Engine's fused router kernels; off by
    /// default in Megatron-Core's TransformerConfig, on in Megatron-Bridge's MoE recipes).
    bool moe_router_fusion = false;
    /// CudaGraphScope bits of a partial capture (0: the whole layer, when cuda_graphs is
    /// "layers").
    unsigned cuda_graph_scope = 0;
    /// A per-layer capture of some parts only: the rest of each layer launched one by one.
    bool partialCapture() const
    {
        return cuda_graphs == CudaGraphs::Layers && cuda_graph_scope != 0;
    }
};
/// The scope names of CudaGraphScope bits, in kCudaGraphScopeNames' order.
std::vector<std::string> cudaGraphScopeNames(unsigned scope);

/// Efficiency figures the engine uses, each with its source; a plan may override them.
struct EngineFigures
{
    Sourced gemm_peak_fraction;     ///< large, well-shaped GEMMs' sustained share of dense peak
    Sourced hbm_fraction;           ///< achievable share of HBM bandwidth
    Sourced attention_fraction;     ///< the attention kernel's forward share of peak, long s
    Sourced attention_bwd_fraction; ///< the same for its backward
    Sourced comm_sm_share;          ///< compute slowed by this share while NCCL kernels run
    Sourced gpu_spread; ///< standard deviation of GPUs' sustained speed (the slowest sets the pace)
    Sourced grad_bytes; ///< bytes per gradient element kept for accumulation
    Sourced optimizer_step_bytes; ///< HBM traffic of one optimizer step, per parameter
    Sourced dp_bucket_bytes;      ///< gradient bucket size for overlapped DP sync
    /// Share of the data-parallel communication the schedule can hide that a run really hides
    /// (1: as the schedule model says; a calibration from training logs may lower it).
    Sourced overlap_fraction;
    /// Host time to issue one kernel from Python (dispatcher, autograd, launch): a layer whose
    /// kernels are shorter than this waits on the host (launch-bound).
    Sourced host_launch_s;
    /// GPU idle time between two back-to-back kernels launched one by one (and its shorter
    /// twin inside a CUDA graph, graph_kernel_gap_s).
    Sourced kernel_gap_s;
    Sourced graph_kernel_gap_s;
    /// FP8 GEMMs' sustained share of the dense FP8 peak at their reference shape (dtype fp8).
    Sourced fp8_gemm_peak_fraction;
    /// The backward's FP8 GEMMs (dgrad, wgrad), which Transformer Engine and torchao run with
    /// promoted FP32 accumulation: their share of the FP8 peak at their reference shape.
    Sourced fp8_backward_gemm_peak_fraction;
    /// MoE: tokens of the busiest expert rank over the mean (1: balanced routing); the expert
    /// GEMMs and the dispatch wait for that rank.
    Sourced moe_imbalance;
    /// The caching allocator's reserve over its peak allocated bytes, a share: what
    /// torch.cuda.memory_stats()'s reserved_bytes.all.peak holds beyond allocated_bytes.all.peak
    /// (fragmentation and rounding); peak reserved = peak allocated x (1 + this).
    Sourced allocator_reserve;
    /// Bytes per GPU outside the caching allocator: the CUDA context and NCCL's communicator
    /// buffers. The fit verdict counts them on top of the fullest stage's allocated peak.
    Sourced runtime_reserve_bytes;
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
/// A file the plan file named for its model (model.hf_config) or cluster (cluster.file): a
/// save writes the name again, not the contents, while the model or cluster is still what was
/// read (so later edits of that file reach the plan); an edited one is embedded.
struct PlanFileRef
{
    std::string written;  ///< as the plan file spelled it ("mycluster.json"); empty: none
    std::string path;     ///< resolved when read
    std::string base_dir; ///< the folder `written` is relative to (the plan file's)
    int nodes = 0;        ///< cluster.file's own options, as written (0: not given)
    int nodes_per_rack = 0;
    double spine_oversubscription = 0;
};

struct Plan
{
    std::string name;
    ModelSpec model;
    ClusterSpec cluster;
    ParallelLayout parallel;
    TrainingSettings training;
    EngineFigures figures;
    std::vector<PlanMeasurement> measured; ///< applied to `cluster`; revertible
    /// How the topology editor drew `cluster` (positions, names, rack membership, per-node
    /// what-ifs): layout data kept in the plan file. Null: laid out from the cluster. It always
    /// describes `cluster` (edits that change the cluster otherwise drop it).
    std::shared_ptr<const TopologyGraph> drawing;
    PlanFileRef hf_config;                           ///< where `model` came from, if a file
    std::shared_ptr<const ModelSpec> model_read;     ///< `model` as read (with hf_config)
    PlanFileRef cluster_file;                        ///< where `cluster` came from, if a file
    std::shared_ptr<const ClusterSpec> cluster_read; ///< `cluster` as read (with cluster_file)
};

/// One broken rule: its id (for tests and the UI's field marking), the field, the message.
struct PlanIssue
{
    std::string rule;
    std::string field;
    std::string message;
};

/// The model and the cluster alone (what an engine needs before it can be built).
std::vector<PlanIssue> validateModelAndCluster(const Plan& plan, const HardwareCatalog& catalog);
/// Checks the plan against every rule; empty when valid.
std::vector<PlanIssue> validatePlan(const Plan& plan, const HardwareCatalog& catalog);
/// The same into `issues` (cleared first, its capacity kept), with the plan's GPU already
/// looked up (`gpu`: the catalog's entry for plan.cluster.gpu_id, or null).
void validatePlan(const Plan& plan, const GpuSpec* gpu, std::vector<PlanIssue>* issues);

/// The default engine figures for a GPU, with sources.
EngineFigures defaultEngineFigures(const GpuSpec& gpu, Optimizer optimizer, Dtype dtype,
                                   AttentionKernel attention = AttentionKernel::Flash2);

/// Layers of each pipeline stage: `stage_layers` when given; else first/last-stage counts with
/// the rest split evenly over the middle stages; else an even split whose remainder goes to
/// the middle stages first (the first holds the embedding, the last the LM head). Empty when
/// the layout cannot be split (see validatePlan).
std::vector<int> stageLayerCounts(const ModelSpec& model, const ParallelLayout& layout);
/// The same into `counts` (its capacity kept; empty when the layout cannot be split).
void stageLayerCounts(const ModelSpec& model, const ParallelLayout& layout,
                      std::vector<int>* counts);

/// What `auto` settings resolve to: the framework's defaults. True for the PyTorch frameworks
/// (torchtitan, PyTorch FSDP, DeepSpeed: SDPA, eager operators, no TP overlap), false for
/// Megatron (flash-attn, Transformer Engine fused kernels, TP overlap).
bool pytorchFramework(const Plan& plan);
/// What the plan's framework cannot run in `layout` (docs/engine.md, "What each framework
/// can run"): the rule id (e.g. "framework-zero"), the field and a message naming the
/// framework and the setting; false when it can run it.
bool frameworkCapabilityIssue(TrainingFramework framework, const ParallelLayout& layout,
                              PlanIssue* issue);
KernelStyle resolvedKernelStyle(const Plan& plan);
AttentionKernel resolvedAttention(const Plan& plan);
/// The attention kernel's forward (or backward) share of peak at long sequences, with its
/// source: the plan's override, else the resolved kernel's published figure on this GPU.
Sourced attentionFigure(const Plan& plan, bool backward, const HardwareCatalog& catalog);
/// The same with the plan's GPU already looked up (`gpu`: the catalog's entry for
/// plan.cluster.gpu_id, or null).
Sourced attentionFigure(const Plan& plan, bool backward, const GpuSpec* gpu);
/// The same into `figure` (its source string's buffer reused).
void assignAttentionFigure(const Plan& plan, bool backward, const GpuSpec* gpu, Sourced* figure);
bool tpOverlapActive(const Plan& plan);
int gradReduceBytes(const Plan& plan);
/// The FP8 recipe a plan runs (`auto` resolved from the stack; Auto when dtype is not fp8).
Fp8Recipe resolvedFp8Recipe(const Plan& plan);
/// FP8 training on Transformer Engine (dtype fp8 on Megatron-Core), whose modules cache FP8
/// weights and save FP8 GEMM inputs; torchao's float8 keeps neither.
bool transformerEngineFp8(const Plan& plan);
/// The MoE token dispatcher a plan runs (`auto`: alltoall, on every framework).
MoeDispatcher resolvedMoeDispatcher(const Plan& plan);

} // namespace paraplan
