#include "plan.h"

#include "inputlimits.h"
#include "kernels.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace paraplan {

const char* recomputeName(Recompute recompute)
{
    return enumName(kRecomputeNames, recompute);
}

const char* kernelStyleName(KernelStyle style)
{
    return enumName(kKernelStyleNames, style);
}

const char* tpOverlapName(TpOverlap overlap)
{
    return enumName(kTpOverlapNames, overlap);
}

const char* fp8RecipeName(Fp8Recipe recipe)
{
    return enumName(kFp8RecipeNames, recipe);
}

const char* moeDispatcherName(MoeDispatcher dispatcher)
{
    return enumName(kMoeDispatcherNames, dispatcher);
}

const char* epOverlapName(EpOverlap overlap)
{
    return enumName(kEpOverlapNames, overlap);
}

namespace {

void modelAndClusterIssues(const Plan& plan, const GpuSpec* gpu, std::vector<PlanIssue>* issues)
{
    // The model's checks read its numbers alone: this thread remembers the last model they
    // passed (a search validates one model's layouts).
    static thread_local bool known = false;
    static thread_local ModelNumbers valid{};
    const ModelNumbers numbers = modelNumbers(plan.model);
    if (!known || std::memcmp(numbers.data(), valid.data(), sizeof numbers) != 0) {
        std::vector<std::string> problems = validateModel(plan.model);
        for (std::string& problem : problems)
            issues->push_back({"model", "model", std::move(problem)});
        if (problems.empty()) {
            valid = numbers;
            known = true;
        }
    }
    for (std::string& problem : validateCluster(plan.cluster, gpu))
        issues->push_back({"cluster", "cluster", std::move(problem)});
}

} // namespace

std::vector<PlanIssue> validateModelAndCluster(const Plan& plan, const HardwareCatalog& catalog)
{
    std::vector<PlanIssue> issues;
    modelAndClusterIssues(plan, catalog.gpu(plan.cluster.gpu_id), &issues);
    return issues;
}

namespace {

// The rules of validatePlan, grouped; each adds the issues it finds.
struct PlanRules
{
    const Plan& plan;
    std::vector<PlanIssue>& issues;
    const GpuSpec* gpu; // the catalog's entry for the plan's GPU, or null
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    const TrainingSettings& t = plan.training;

    void issue(const char* rule, const char* field, std::string message)
    {
        issues.push_back({rule, field, std::move(message)});
    }
    bool degrees();
    void tensorParallel();
    void pipeline();
    void batchContextExperts();
    void sharding();
    void training();
    void figures();
};

bool PlanRules::degrees()
{
    struct Degree
    {
        const char* field;
        long long value;
        const limits::Range& range;
    };
    bool degreesOk = true;
    for (const Degree& d : {Degree{"parallel.tp", p.tp, limits::kDegree},
                            Degree{"parallel.pp", p.pp, limits::kDegree},
                            Degree{"parallel.dp", p.dp, limits::kDegree},
                            Degree{"parallel.cp", p.cp, limits::kDegree},
                            Degree{"parallel.ep", p.ep, limits::kDegree},
                            Degree{"parallel.interleave", p.interleave, limits::kInterleave},
                            Degree{"parallel.micro_batch", p.micro_batch, limits::kMicroBatch},
                            Degree{"parallel.global_batch", p.global_batch, limits::kGlobalBatch},
                            Degree{"training.seq_len", t.seq_len, limits::kSeqLen}}) {
        if (auto problem = limits::check(d.range, static_cast<double>(d.value), d.field)) {
            issue(d.value < 1 ? "positive" : "range", d.field, std::move(*problem));
            degreesOk = false;
        }
    }
    if (!degreesOk)
        return false;
    // Within the ranges above every product below fits 64 bits; the GPU count must also fit
    // the largest cluster.
    const auto tpPp = limits::product(p.tp, p.pp);
    const auto tpPpDp = tpPp ? limits::product(*tpPp, p.dp) : std::nullopt;
    const auto gpus = tpPpDp ? limits::product(*tpPpDp, p.cp, limits::kMaxGpus) : std::nullopt;
    if (!gpus) {
        issue("gpu-count", "parallel",
              "tp x pp x dp x cp = " + std::to_string(p.tp) + " x " + std::to_string(p.pp) + " x " +
                  std::to_string(p.dp) + " x " + std::to_string(p.cp) +
                  " is more GPUs than the largest cluster Paraplan models (1,048,576)");
        return false;
    }
    return true;
}

void PlanRules::tensorParallel()
{
    const long long gpus = static_cast<long long>(p.tp) * p.pp * p.dp * p.cp;
    if (gpus != plan.cluster.totalGpus())
        issue("gpu-count", "parallel",
              "tp x pp x dp x cp = " + std::to_string(p.tp) + " x " + std::to_string(p.pp) + " x " +
                  std::to_string(p.dp) + " x " + std::to_string(p.cp) + " = " +
                  std::to_string(gpus) + " GPUs, but the cluster has " +
                  std::to_string(plan.cluster.totalGpus()));
    if (m.heads % p.tp != 0)
        issue("tp-heads", "parallel.tp",
              "tp = " + std::to_string(p.tp) + " must divide the " + std::to_string(m.heads) +
                  " attention heads (Megatron-LM and torchtitan give every TP rank whole heads)");
    if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
        issue("tp-kv-heads", "parallel.tp",
              "tp = " + std::to_string(p.tp) + " must divide the " + std::to_string(m.kv_heads) +
                  " KV heads, or be a multiple of them (KV heads are then replicated)");
    if (m.ffn_hidden % p.tp != 0)
        issue("tp-ffn", "parallel.tp",
              "tp = " + std::to_string(p.tp) + " must divide ffn_hidden " +
                  std::to_string(m.ffn_hidden) +
                  " (the MLP's columns are split evenly across TP ranks)");
    if (m.isMoe() && m.expert_ffn_hidden % p.tp != 0)
        issue("tp-ffn", "parallel.tp",
              "tp = " + std::to_string(p.tp) + " must divide expert_ffn_hidden " +
                  std::to_string(m.expert_ffn_hidden));
}

void PlanRules::pipeline()
{
    if (p.pp > m.layers)
        issue("pp-layers", "parallel.pp",
              "pp = " + std::to_string(p.pp) + " exceeds the " + std::to_string(m.layers) +
                  " layers: every stage needs at least one");
    if (p.interleave > 1 && p.pp < 2)
        issue("interleave-pp", "parallel.interleave",
              "interleave = " + std::to_string(p.interleave) +
                  " needs pp > 1 (virtual stages interleave the stages of a pipeline)");
    const bool explicitStages = !p.stage_layers.empty();
    if (explicitStages && (p.first_stage_layers > 0 || p.last_stage_layers > 0))
        issue("stage-layers", "parallel.stage_layers",
              "give either stage_layers or first/last_stage_layers, not both");
    if (explicitStages) {
        long long sum = 0;
        bool positive = true;
        for (int n : p.stage_layers) {
            sum += n;
            positive = positive && n >= 1;
        }
        if (static_cast<long long>(p.stage_layers.size()) != p.pp)
            issue("stage-layers", "parallel.stage_layers",
                  "stage_layers lists " + std::to_string(p.stage_layers.size()) +
                      " stages, but pp = " + std::to_string(p.pp));
        else if (!positive || sum != m.layers)
            issue("stage-layers", "parallel.stage_layers",
                  "stage_layers must give every stage at least one layer and add up to the " +
                      std::to_string(m.layers) + " layers (they add up to " + std::to_string(sum) +
                      ")");
    }
    if (p.first_stage_layers < 0 || p.last_stage_layers < 0 || p.first_stage_layers > m.layers ||
        p.last_stage_layers > m.layers)
        issue("stage-layers", "parallel.first_stage_layers",
              "first/last_stage_layers must lie between 0 and the model's " +
                  std::to_string(m.layers) + " layers");
    else if ((p.first_stage_layers > 0 || p.last_stage_layers > 0) && !explicitStages) {
        const int fixedStages = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
        const long long rest =
            static_cast<long long>(m.layers) - p.first_stage_layers - p.last_stage_layers;
        if (p.pp < 2)
            issue("stage-layers", "parallel.first_stage_layers",
                  "first/last_stage_layers need pp > 1");
        else if (rest < p.pp - fixedStages || (p.pp == fixedStages && rest != 0))
            issue("stage-layers", "parallel.first_stage_layers",
                  "first_stage_layers + last_stage_layers = " +
                      std::to_string(static_cast<long long>(p.first_stage_layers) +
                                     p.last_stage_layers) +
                      " leave " + std::to_string(rest) + " of " + std::to_string(m.layers) +
                      " layers for the other " + std::to_string(p.pp - fixedStages) +
                      " stages, which need at least one each");
    }
    if (p.interleave > 1 && p.pp > 1) {
        // Megatron's virtual pipeline needs at least one layer in every model chunk; uneven
        // stages (--decoder-first/last-pipeline-num-layers) are allowed with it.
        // In this thread's buffer: validation runs on every evaluation of a search.
        static thread_local std::vector<int> layers;
        stageLayerCounts(m, p, &layers);
        for (size_t i = 0; i < layers.size(); ++i) {
            if (layers[i] < p.interleave) {
                issue("interleave-layers", "parallel.interleave",
                      "interleave = " + std::to_string(p.interleave) +
                          " virtual stages need at least that many layers on every pipeline "
                          "stage; stage " +
                          std::to_string(i) + " has " + std::to_string(layers[i]));
                break;
            }
        }
    }
}

void PlanRules::batchContextExperts()
{
    const long long perStep = static_cast<long long>(p.micro_batch) * p.dp;
    if (p.global_batch % perStep != 0)
        issue("batch-divisible", "parallel.global_batch",
              "global_batch = " + std::to_string(p.global_batch) +
                  " must be a multiple of micro_batch x dp = " + std::to_string(perStep) +
                  " (every data-parallel rank runs whole micro-batches)");
    else if (p.interleave > 1 && p.pp > 1 && (p.global_batch / perStep) % p.pp != 0)
        issue("interleave-microbatches", "parallel.global_batch",
              "the interleaved schedule needs the " + std::to_string(p.global_batch / perStep) +
                  " micro-batches per pipeline to be a multiple of pp = " + std::to_string(p.pp) +
                  " (Megatron-LM's interleaved 1F1B schedule runs them in groups of pp)");
    if (p.cp > 1 && t.seq_len % (2 * p.cp) != 0)
        issue("cp-seq", "parallel.cp",
              "cp = " + std::to_string(p.cp) + " needs seq_len divisible by 2 x cp = " +
                  std::to_string(2 * p.cp) + " (load-balanced causal chunks)");
    if (p.ep > 1) {
        if (!m.isMoe())
            issue("ep-moe", "parallel.ep",
                  "ep = " + std::to_string(p.ep) + " needs a mixture-of-experts model");
        else if (m.experts % p.ep != 0)
            issue("ep-experts", "parallel.ep",
                  "ep = " + std::to_string(p.ep) + " must divide the " + std::to_string(m.experts) +
                      " experts");
    }
    if (p.expert_tp < 0 || p.expert_tp > limits::kDegree.max) {
        issue("expert-tp", "parallel.expert_tp",
              "expert_tp must be 0 (the TP degree) or a positive degree up to " +
                  std::to_string(static_cast<long long>(limits::kDegree.max)));
        return;
    }
    if (p.expert_tp > 0 && !m.isMoe() && p.expert_tp != p.tp)
        issue("ep-moe", "parallel.expert_tp",
              "expert_tp = " + std::to_string(p.expert_tp) + " needs a mixture-of-experts model");
    // Megatron-Core's expert grid (MoE parallel folding): expert TP x EP x expert DP spans
    // the tp x cp x dp ranks of each pipeline stage.
    const long long grid = static_cast<long long>(p.tp) * p.cp * p.dp;
    const long long expertRanks = static_cast<long long>(p.ep) * p.expertTp();
    if (p.ep > 1 || p.expertTp() != p.tp) {
        if (p.expertTp() == p.tp && grid % expertRanks != 0)
            issue("ep-dp", "parallel.ep",
                  "ep = " + std::to_string(p.ep) +
                      " must divide dp x cp (expert-parallel ranks are drawn from them; with "
                      "parallel.expert_tp other than tp, from tp x cp x dp)");
        else if (grid % expertRanks != 0)
            issue("ep-fold", "parallel.expert_tp",
                  "ep x expert_tp = " + std::to_string(expertRanks) +
                      " must divide tp x cp x dp = " + std::to_string(grid) +
                      " (the expert groups are drawn from them: MoE parallel folding)");
    }
    if (m.isMoe() && p.expertTp() > 1 && m.expert_ffn_hidden % p.expertTp() != 0)
        issue("expert-tp", "parallel.expert_tp",
              "expert_tp = " + std::to_string(p.expertTp()) +
                  " must divide the experts' FFN width " + std::to_string(m.expert_ffn_hidden));
}

void PlanRules::sharding()
{
    if (p.sequence_parallel && p.tp < 2)
        issue("sp-tp", "parallel.sequence_parallel",
              "sequence parallelism needs tp > 1 (it shards the TP group's replicated "
              "activations)");
    if (p.zero < 0 || p.zero > 3)
        issue("zero-range", "parallel.zero",
              "zero must be 0, 1, 2 or 3 (got " + std::to_string(p.zero) + ")");
    if (p.dp_shard < 0)
        issue("dp-shard", "parallel.dp_shard", "dp_shard must not be negative");
    else if (p.dp_shard > 0) {
        const long long ranks = static_cast<long long>(p.dp) * p.cp;
        if (ranks % p.dp_shard != 0)
            issue("dp-shard", "parallel.dp_shard",
                  "dp_shard = " + std::to_string(p.dp_shard) + " must divide dp x cp = " +
                      std::to_string(ranks) + " (HSDP: shard groups replicated across the rest)");
        else if (p.zero == 0 && p.dp_shard != ranks)
            issue("dp-shard", "parallel.dp_shard",
                  "dp_shard shards optimizer state, gradients or parameters: it needs zero >= 1");
    }
    if (p.zero3_prefetch < 0 || p.zero3_prefetch > 16)
        issue("zero3-prefetch", "parallel.zero3_prefetch",
              "zero3_prefetch must lie in 0..16 layers (got " + std::to_string(p.zero3_prefetch) +
                  ")");
}

void PlanRules::training()
{
    if (gpu && t.attention == AttentionKernel::Flash3 &&
        !gpu->kernels.attention[static_cast<size_t>(AttentionKernel::Flash3)].available)
        issue("attention-gpu", "training.attention",
              std::string("FlashAttention-3 runs on Hopper GPUs only (Shah et al. 2024); ") +
                  gpu->name + " has no such kernel: use auto, flash2, cudnn, sdpa or unfused");
    if (gpu && gpu->peakTflops(t.dtype) <= 0)
        issue("dtype-gpu", "training.dtype",
              std::string(dtypeName(t.dtype)) + " is not supported by " + gpu->name);
    if (t.dtype != Dtype::FP8 &&
        (t.fp8_recipe != Fp8Recipe::Auto || t.fp8_attention || t.fp8_param_gather))
        issue("fp8-recipe",
              t.fp8_attention      ? "training.fp8_attention"
              : t.fp8_param_gather ? "training.fp8_param_gather"
                                   : "training.fp8_recipe",
              std::string("fp8_recipe, fp8_attention and fp8_param_gather apply to dtype fp8 "
                          "only (dtype is ") +
                  dtypeName(t.dtype) + ")");
    if (t.dtype == Dtype::FP8 && t.fp8_param_gather && pytorchFramework(plan))
        issue("fp8-param-gather", "training.fp8_param_gather",
              "fp8_param_gather is Megatron-Core's (--fp8-param-gather, Transformer Engine's "
              "FP8 weights); torchao's float8 keeps the weights in their own dtype: turn it "
              "off or use framework megatron");
    if (gpu && t.dtype == Dtype::FP8 && t.fp8_recipe == Fp8Recipe::Mxfp8 && !gpu->kernels.mxfp8)
        issue("fp8-recipe-gpu", "training.fp8_recipe",
              "MXFP8 needs block-scaled FP8 tensor cores (1x32 E8M0 scales), which Blackwell "
              "GPUs have and " +
                  gpu->name + " has not: use delayed, current or blockwise");
    // Without selective recompute the modules are ignored, as Megatron-Core ignores them.
    if (p.recompute_modules != 0 && p.recompute == Recompute::Selective &&
        t.framework != TrainingFramework::Megatron)
        issue("recompute-modules", "parallel.recompute_modules",
              "recompute_modules are Megatron-Core's selective recompute "
              "(--recompute-granularity selective --recompute-modules): use framework "
              "\"megatron\", or remove them (PyTorch stacks checkpoint by their own policy)");
    if ((p.recompute_modules & (kRecomputeMoe | kRecomputeMoeAct | kRecomputeSharedExperts)) &&
        !m.isMoe())
        issue("recompute-modules", "parallel.recompute_modules",
              "moe, moe_act and shared_experts recompute MoE layers, which this model has none "
              "of");
    if ((p.recompute_modules & kRecomputeMlaUpProj) && !m.isMla())
        issue("recompute-modules", "parallel.recompute_modules",
              "mla_up_proj recomputes latent attention's up-projections, which this model does "
              "not have");
    if (t.cuda_graph_scope != 0 && t.cuda_graphs != CudaGraphs::Layers)
        issue("cuda-graph-scope", "training.cuda_graph_scope",
              std::string("a capture scope is a partial per-layer capture: it needs cuda_graphs "
                          "\"layers\" (cuda_graphs is ") +
                  cudaGraphsName(t.cuda_graphs) + ")");
    // Megatron-Core's own checks (megatron/core/transformer/transformer_config.py at d98e8a64):
    // an MoE layer's experts are captured with drop-and-pad routing only, moe and moe_router
    // are exclusive, and the MoE scopes need experts.
    const unsigned moeScopes = kGraphMoe | kGraphMoeRouter | kGraphMoePreprocess;
    const bool wholeMoe = t.cuda_graphs == CudaGraphs::Layers &&
                          (t.cuda_graph_scope == 0 || (t.cuda_graph_scope & kGraphMoe) != 0);
    if (t.framework == TrainingFramework::Megatron && m.isMoe() && wholeMoe &&
        !(m.capacity_factor > 0))
        issue("cuda-graph-scope", "training.cuda_graph_scope",
              "Megatron-Core captures an MoE layer's experts only with drop-and-pad routing "
              "(transformer_config.py: 'moe cuda graph is only supported with drop-padding "
              "MoE'): give model.capacity_factor, or capture [\"attn\", \"moe_router\", "
              "\"moe_preprocess\"]");
    if ((t.cuda_graph_scope & kGraphMoe) && (t.cuda_graph_scope & kGraphMoeRouter))
        issue("cuda-graph-scope", "training.cuda_graph_scope",
              "moe and moe_router are exclusive (moe captures the router with the experts)");
    if ((t.cuda_graph_scope & moeScopes) && !m.isMoe())
        issue("cuda-graph-scope", "training.cuda_graph_scope",
              "moe, moe_router and moe_preprocess capture MoE layers, and this model has none");
    if ((t.cuda_graph_scope & kGraphMoePreprocess) && !(t.cuda_graph_scope & kGraphMoeRouter))
        issue("cuda-graph-scope", "training.cuda_graph_scope",
              "moe_preprocess is captured together with moe_router only (Megatron-Core's "
              "--cuda-graph-scope): add moe_router");
    if (m.learned_positions && m.max_positions > 0 && t.seq_len > m.max_positions)
        issue("seq-positions", "training.seq_len",
              "seq_len = " + std::to_string(t.seq_len) + " exceeds the model's " +
                  std::to_string(m.max_positions) + " learned positions");
    if (auto problem = limits::check(limits::kTrainTokens, t.train_tokens))
        issue("range", "training.train_tokens", std::move(*problem));
    if (auto problem = limits::check(limits::kGpuHourUsd, t.gpu_hour_usd))
        issue("range", "training.gpu_hour_usd", std::move(*problem));
    PlanIssue unsupported;
    if (frameworkCapabilityIssue(t.framework, p, &unsupported))
        issue(unsupported.rule.c_str(), unsupported.field.c_str(), std::move(unsupported.message));
}

void PlanRules::figures()
{
    const EngineFigures& f = plan.figures;
    for (const Sourced* figure : {&f.gemm_peak_fraction, &f.hbm_fraction, &f.attention_fraction,
                                  &f.attention_bwd_fraction}) {
        if (!(figure->value > 0 && figure->value <= 1)) {
            issue("figure-range", "overrides", "efficiency overrides must lie in (0, 1]");
            break;
        }
    }
    if (t.dtype == Dtype::FP8 &&
        !(f.fp8_gemm_peak_fraction.value > 0 && f.fp8_gemm_peak_fraction.value <= 1))
        issue("figure-range", "overrides", "fp8_gemm_peak_fraction must lie in (0, 1]");
    if (t.dtype == Dtype::FP8 && !(f.fp8_backward_gemm_peak_fraction.value > 0 &&
                                   f.fp8_backward_gemm_peak_fraction.value <= 1))
        issue("figure-range", "overrides", "fp8_backward_gemm_peak_fraction must lie in (0, 1]");
    if (!(f.grad_bytes.value > 0 && f.grad_bytes.value <= 16) ||
        !(f.optimizer_step_bytes.value > 0 && f.optimizer_step_bytes.value <= 256))
        issue("figure-range", "overrides",
              "grad_bytes must lie in (0, 16] and optimizer_step_bytes in (0, 256] bytes per "
              "parameter");
    if (!(f.dp_bucket_bytes.value > 0 && f.dp_bucket_bytes.value <= limits::kBytes.max))
        issue("figure-range", "overrides", "dp_bucket_bytes must lie in (0, 1e15] bytes");
    if (!(f.moe_imbalance.value >= 1 && f.moe_imbalance.value <= 64))
        issue("figure-range", "overrides",
              "moe_imbalance (the busiest expert rank's tokens over the mean) must lie in [1, 64]");
    if (!(f.allocator_reserve.value >= 0 && f.allocator_reserve.value <= 1))
        issue("figure-range", "overrides",
              "allocator_reserve (the caching allocator's reserve over its peak allocated "
              "bytes) must lie in [0, 1]");
    if (!(f.runtime_reserve_bytes.value >= 0 && f.runtime_reserve_bytes.value <= 1e12))
        issue("figure-range", "overrides", "runtime_reserve_bytes must lie in [0, 1e12] bytes");
    if (!(f.comm_sm_share.value >= 0 && f.comm_sm_share.value < 1))
        issue("figure-range", "overrides", "comm_sm_share must lie in [0, 1)");
    if (!(f.overlap_fraction.value >= 0 && f.overlap_fraction.value <= 1))
        issue("figure-range", "overrides", "overlap_fraction must lie in [0, 1]");
    if (!(f.host_launch_s.value >= 0 && f.host_launch_s.value <= 1e-3) ||
        !(f.kernel_gap_s.value >= 0 && f.kernel_gap_s.value <= 1e-3) ||
        !(f.graph_kernel_gap_s.value >= 0 && f.graph_kernel_gap_s.value <= 1e-3))
        issue("figure-range", "overrides",
              "host_launch_s, kernel_gap_s and graph_kernel_gap_s must lie in [0, 1e-3] s");
    if (!(f.gpu_spread.value >= 0 && f.gpu_spread.value < 0.2))
        issue("figure-range", "overrides", "gpu_spread must lie in [0, 0.2)");
    if (t.grad_reduce_bytes != 0 && t.grad_reduce_bytes != 2 && t.grad_reduce_bytes != 4)
        issue("grad-reduce", "training.grad_reduce_dtype",
              "gradients are reduced in fp32 or a 16-bit type");
    if (t.optimizer_state_bytes != 0 && t.optimizer_state_bytes != 2 &&
        t.optimizer_state_bytes != 4)
        issue("optimizer-dtype", "training.optimizer_dtype",
              "the optimizer's moments are kept in fp32 or a 16-bit type");
}

} // namespace

std::vector<PlanIssue> validatePlan(const Plan& plan, const HardwareCatalog& catalog)
{
    std::vector<PlanIssue> issues;
    validatePlan(plan, catalog.gpu(plan.cluster.gpu_id), &issues);
    return issues;
}

void validatePlan(const Plan& plan, const GpuSpec* gpu, std::vector<PlanIssue>* issues)
{
    issues->clear();
    modelAndClusterIssues(plan, gpu, issues);
    if (!issues->empty())
        return;
    PlanRules rules{plan, *issues, gpu};
    if (!rules.degrees())
        return;
    rules.tensorParallel();
    rules.pipeline();
    rules.batchContextExperts();
    rules.sharding();
    rules.training();
    rules.figures();
}

std::vector<int> stageLayerCounts(const ModelSpec& model, const ParallelLayout& layout)
{
    std::vector<int> counts;
    stageLayerCounts(model, layout, &counts);
    return counts;
}

void stageLayerCounts(const ModelSpec& model, const ParallelLayout& p, std::vector<int>* out)
{
    out->clear();
    const int pp = p.pp;
    const int layers = model.layers;
    if (pp < 1 || layers < pp)
        return;
    if (!p.stage_layers.empty()) {
        if (static_cast<int>(p.stage_layers.size()) != pp)
            return;
        long long sum = 0;
        for (int n : p.stage_layers) {
            if (n < 1)
                return;
            sum += n;
        }
        if (sum == layers)
            *out = p.stage_layers;
        return;
    }
    // Only the first and last stage can be fixed; the others share the rest. In the caller's
    // buffer: the search evaluates layouts by the million.
    std::vector<int>& counts = *out;
    counts.assign(static_cast<size_t>(pp), 0);
    const bool fixedFirst = pp > 1 && p.first_stage_layers > 0;
    const bool fixedLast = pp > 1 && p.last_stage_layers > 0;
    long long rest = layers;
    if (fixedFirst) {
        counts.front() = p.first_stage_layers;
        rest -= p.first_stage_layers;
    }
    if (fixedLast) {
        counts.back() = p.last_stage_layers;
        rest -= p.last_stage_layers;
    }
    auto fixed = [&](int i) { return (i == 0 && fixedFirst) || (i == pp - 1 && fixedLast); };
    const int free = pp - (fixedFirst ? 1 : 0) - (fixedLast ? 1 : 0);
    if (free == 0) {
        if (rest != 0)
            counts.clear();
        return;
    }
    if (rest < free) {
        counts.clear();
        return;
    }
    const long long base = rest / free;
    long long extra = rest % free;
    for (int i = 0; i < pp; ++i) {
        if (!fixed(i))
            counts[static_cast<size_t>(i)] = static_cast<int>(base);
    }
    // The remainder goes to the middle stages first: the first stage also runs the embedding
    // and the last the LM head and loss (as Llama 3 405B's layout lightened both ends).
    auto give = [&](int i) {
        if (extra > 0 && !fixed(i)) {
            ++counts[static_cast<size_t>(i)];
            --extra;
        }
    };
    for (int i = 1; i + 1 < pp; ++i)
        give(i);
    give(0);
    if (pp > 1)
        give(pp - 1);
}

AttentionKernel resolvedAttention(const Plan& plan)
{
    if (plan.training.attention != AttentionKernel::Auto)
        return plan.training.attention;
    // torchtitan (torchtitan/models/attention.py, flex attention off by default), and the
    // Hugging Face models llm-foundry, Accelerate and DeepSpeed train (attn_implementation
    // "sdpa" by default) call scaled_dot_product_attention; Megatron-LM calls flash-attn.
    return pytorchFramework(plan) ? AttentionKernel::Sdpa : AttentionKernel::Flash2;
}

Sourced attentionFigure(const Plan& plan, bool backward, const HardwareCatalog& catalog)
{
    const Sourced& own =
        backward ? plan.figures.attention_bwd_fraction : plan.figures.attention_fraction;
    if (own.origin == Origin::UserEntry || own.origin == Origin::Measurement)
        return own;
    return attentionFigure(plan, backward, catalog.gpu(plan.cluster.gpu_id));
}

Sourced attentionFigure(const Plan& plan, bool backward, const GpuSpec* gpu)
{
    Sourced figure;
    assignAttentionFigure(plan, backward, gpu, &figure);
    return figure;
}

void assignAttentionFigure(const Plan& plan, bool backward, const GpuSpec* gpu, Sourced* figure)
{
    const Sourced& own =
        backward ? plan.figures.attention_bwd_fraction : plan.figures.attention_fraction;
    const AttentionFigures* a = nullptr;
    if (own.origin != Origin::UserEntry && own.origin != Origin::Measurement && gpu)
        a = kernels::attentionFigures(*gpu, resolvedAttention(plan));
    if (!a) {
        *figure = own;
        return;
    }
    figure->value = backward ? a->bwd : a->fwd;
    figure->origin = a->origin;
    figure->source = a->source; // into the string's own buffer
}

KernelStyle resolvedKernelStyle(const Plan& plan)
{
    if (plan.training.kernels != KernelStyle::Auto)
        return plan.training.kernels;
    // torchtitan compiles only when compile.enable is set (torchtitan/config/job_config.py,
    // Compile.enable = False); FSDP1 loops and DeepSpeed run eager modules; Megatron-Core
    // runs Transformer Engine's fused kernels.
    return pytorchFramework(plan) ? KernelStyle::Eager : KernelStyle::Fused;
}

bool tpOverlapActive(const Plan& plan)
{
    const ParallelLayout& p = plan.parallel;
    if (p.tp < 2)
        return false;
    switch (p.tp_overlap) {
    case TpOverlap::None:
        return false;
    case TpOverlap::AgGemm:
        return true;
    case TpOverlap::Auto:
        break;
    }
    // Megatron-Core / NeMo overlap TP communication with the GEMMs (Transformer Engine
    // userbuffers) when sequence parallelism is on and the TP group shares one NVLink domain;
    // torchtitan leaves async TP off (parallelism.enable_async_tensor_parallel = False), and
    // DeepSpeed and FSDP1 have none.
    int stride = 1;
    for (ParallelDim dim : p.rank_order) {
        if (dim == ParallelDim::TP)
            break;
        stride *= dim == ParallelDim::CP ? p.cp : dim == ParallelDim::DP ? p.dp : p.pp;
    }
    const bool inNode = !plan.cluster.is_torus &&
                        static_cast<long long>(p.tp) * stride <= plan.cluster.nvlinkDomainGpus();
    return p.sequence_parallel && inNode && !pytorchFramework(plan);
}

Fp8Recipe resolvedFp8Recipe(const Plan& plan)
{
    if (plan.training.dtype != Dtype::FP8)
        return Fp8Recipe::Auto;
    if (plan.training.fp8_recipe != Fp8Recipe::Auto)
        return plan.training.fp8_recipe;
    // Megatron-LM's --fp8-recipe and Transformer Engine's fp8_autocast default to delayed
    // scaling (DelayedScaling); torchao's Float8Linear (torchtitan's float8 converter) defaults
    // to tensorwise dynamic scaling, i.e. current scaling.
    return pytorchFramework(plan) ? Fp8Recipe::Current : Fp8Recipe::Delayed;
}

bool transformerEngineFp8(const Plan& plan)
{
    return plan.training.dtype == Dtype::FP8 && !pytorchFramework(plan);
}

int gradReduceBytes(const Plan& plan)
{
    if (plan.training.grad_reduce_bytes > 0)
        return plan.training.grad_reduce_bytes;
    switch (plan.training.dtype) {
    case Dtype::BF16:
    case Dtype::FP8:
    case Dtype::FP32:
    case Dtype::TF32:
        // Megatron-LM forces fp32 gradient accumulation and all-reduce for bf16
        // (arguments.py: accumulate_allreduce_grads_in_fp32); torchtitan's FSDP2 reduces in
        // float32 (mixed_precision_reduce).
        return 4;
    case Dtype::FP16:
        return 2;
    }
    return 4;
}

std::vector<std::string> cudaGraphScopeNames(unsigned scope)
{
    return flagNames(kCudaGraphScopeNames, scope);
}

MoeDispatcher resolvedMoeDispatcher(const Plan& plan)
{
    const MoeDispatcher d = plan.training.moe_dispatcher;
    return d == MoeDispatcher::Auto ? MoeDispatcher::AllToAll : d;
}

} // namespace paraplan
