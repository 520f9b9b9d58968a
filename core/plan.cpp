#include "plan.h"

#include "units.h"

#include <cmath>

namespace paraplan {

const char* recomputeName(Recompute recompute)
{
    switch (recompute) {
    case Recompute::None:
        return "none";
    case Recompute::Selective:
        return "selective";
    case Recompute::Full:
        return "full";
    }
    return "?";
}

EngineFigures defaultEngineFigures(const GpuSpec& gpu, Optimizer optimizer, Dtype dtype)
{
    EngineFigures f;
    f.gemm_peak_fraction =
        preset(0.85, "compute-bound ceiling of a GEMM: the top of the 70-85% of dense peak that "
                     "large GEMMs reach on A100/H100 (hardware-figures.md); each GEMM's memory "
                     "traffic is added on top (an additive roofline), which brings typical "
                     "transformer shapes to 70-80%");
    f.hbm_fraction = gpu.hbm_achievable_fraction;
    f.attention_fraction =
        preset(0.6, "FlashAttention-2 (Dao 2023) reaches 50-73% of A100 peak in the forward "
                    "pass; 0.6 taken for forward and backward");
    const bool mixed = dtype != Dtype::FP32 && dtype != Dtype::TF32;
    f.grad_bytes = preset(4, mixed ? "Megatron-LM accumulates gradients in fp32 main_grad "
                                     "buffers (Korthikanti et al. 2022's memory figures imply "
                                     "18 bytes per parameter with Adam: 2 + 4 + 12)"
                                   : "fp32 training: fp32 gradients");
    // One optimizer step's HBM traffic per parameter (Megatron's mixed-precision step: check
    // for inf/NaN, clip by the global norm, the update, copy fp32 master weights to the
    // 16-bit model, zero the gradients).
    if (optimizer == Optimizer::Adam)
        f.optimizer_step_bytes =
            mixed ? preset(46, "Adam, mixed precision: read master, grad, m, v (16) + write "
                               "master, m, v (12) + master->16-bit copy (6) + inf check (4) + "
                               "norm (4) + zero grad (4) bytes per parameter")
                  : preset(36, "Adam, fp32: read weight, grad, m, v (16) + write weight, m, v "
                               "(12) + norm (4) + zero grad (4) bytes per parameter");
    else
        f.optimizer_step_bytes =
            mixed ? preset(38, "SGD with momentum, mixed precision: read master, grad, momentum "
                               "(12) + write master, momentum (8) + copy (6) + inf check (4) + "
                               "norm (4) + zero grad (4) bytes per parameter")
                  : preset(28, "SGD with momentum, fp32: read weight, grad, momentum (12) + "
                               "write weight, momentum (8) + norm (4) + zero grad (4) bytes "
                               "per parameter");
    f.dp_bucket_bytes = preset(25 * units::kMiB, "PyTorch DDP's default bucket_cap_mb = 25 "
                                                 "(planner-models.md: 25 MB buckets)");
    return f;
}

std::vector<PlanIssue> validateModelAndCluster(const Plan& plan)
{
    std::vector<PlanIssue> issues;
    for (std::string& problem : validateModel(plan.model))
        issues.push_back({"model", "model", std::move(problem)});
    for (std::string& problem : validateCluster(plan.cluster, HardwareCatalog::bundled()))
        issues.push_back({"cluster", "cluster", std::move(problem)});
    return issues;
}

std::vector<PlanIssue> validatePlan(const Plan& plan)
{
    std::vector<PlanIssue> issues = validateModelAndCluster(plan);
    if (!issues.empty())
        return issues;
    auto issue = [&](const char* rule, const char* field, std::string message) {
        issues.push_back({rule, field, std::move(message)});
    };
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    const TrainingSettings& t = plan.training;
    const HardwareCatalog& catalog = HardwareCatalog::bundled();

    struct Degree
    {
        const char* field;
        long long value;
    };
    bool degreesOk = true;
    for (const Degree& d :
         {Degree{"parallel.tp", p.tp}, Degree{"parallel.pp", p.pp}, Degree{"parallel.dp", p.dp},
          Degree{"parallel.cp", p.cp}, Degree{"parallel.ep", p.ep},
          Degree{"parallel.interleave", p.interleave},
          Degree{"parallel.micro_batch", p.micro_batch},
          Degree{"parallel.global_batch", p.global_batch}, Degree{"training.seq_len", t.seq_len}}) {
        if (d.value < 1) {
            issue("positive", d.field,
                  std::string(d.field) + " must be at least 1 (got " + std::to_string(d.value) +
                      ")");
            degreesOk = false;
        }
    }
    if (!degreesOk)
        return issues;

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
                  " attention heads");
    if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
        issue("tp-kv-heads", "parallel.tp",
              "tp = " + std::to_string(p.tp) + " must divide the " + std::to_string(m.kv_heads) +
                  " KV heads, or be a multiple of them (KV heads are then replicated)");
    if (m.ffn_hidden % p.tp != 0)
        issue("tp-ffn", "parallel.tp",
              "tp = " + std::to_string(p.tp) + " must divide ffn_hidden " +
                  std::to_string(m.ffn_hidden));
    if (m.isMoe() && m.expert_ffn_hidden % p.tp != 0)
        issue("tp-ffn", "parallel.tp",
              "tp = " + std::to_string(p.tp) + " must divide expert_ffn_hidden " +
                  std::to_string(m.expert_ffn_hidden));
    if (p.pp > m.layers)
        issue("pp-layers", "parallel.pp",
              "pp = " + std::to_string(p.pp) + " exceeds the " + std::to_string(m.layers) +
                  " layers: every stage needs at least one");
    if (p.interleave > 1) {
        if (p.pp < 2)
            issue("interleave-pp", "parallel.interleave",
                  "interleave = " + std::to_string(p.interleave) + " needs pp > 1");
        else if (m.layers % (p.pp * p.interleave) != 0)
            issue("interleave-layers", "parallel.interleave",
                  "interleaving needs layers divisible by pp x interleave: " +
                      std::to_string(m.layers) + " layers over " + std::to_string(p.pp) + " x " +
                      std::to_string(p.interleave) + " virtual stages");
    }
    const long long perStep = static_cast<long long>(p.micro_batch) * p.dp;
    if (p.global_batch % perStep != 0)
        issue("batch-divisible", "parallel.global_batch",
              "global_batch = " + std::to_string(p.global_batch) +
                  " must be a multiple of micro_batch x dp = " + std::to_string(perStep));
    else if (p.interleave > 1 && p.pp > 1 && (p.global_batch / perStep) % p.pp != 0)
        issue("interleave-microbatches", "parallel.global_batch",
              "the interleaved schedule needs the " + std::to_string(p.global_batch / perStep) +
                  " micro-batches per pipeline to be a multiple of pp = " + std::to_string(p.pp));
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
        if ((static_cast<long long>(p.dp) * p.cp) % p.ep != 0)
            issue("ep-dp", "parallel.ep",
                  "ep = " + std::to_string(p.ep) +
                      " must divide dp x cp (expert-parallel ranks are drawn from them)");
    }
    if (p.sequence_parallel && p.tp < 2)
        issue("sp-tp", "parallel.sequence_parallel", "sequence parallelism needs tp > 1");
    if (p.zero < 0 || p.zero > 3)
        issue("zero-range", "parallel.zero",
              "zero must be 0, 1, 2 or 3 (got " + std::to_string(p.zero) + ")");
    else if (p.zero >= 2 && p.pp > 1)
        issue("zero-pp", "parallel.zero",
              "ZeRO-" + std::to_string(p.zero) +
                  " shards gradients, which pipeline "
                  "parallelism accumulates across micro-batches: DeepSpeed and Megatron allow only "
                  "ZeRO-0/1 with pp > 1");
    const GpuSpec* gpu = catalog.gpu(plan.cluster.gpu_id);
    if (gpu && gpu->peakTflops(t.dtype) <= 0)
        issue("dtype-gpu", "training.dtype",
              std::string(dtypeName(t.dtype)) + " is not supported by " + gpu->name);
    if (m.learned_positions && m.max_positions > 0 && t.seq_len > m.max_positions)
        issue("seq-positions", "training.seq_len",
              "seq_len = " + std::to_string(t.seq_len) + " exceeds the model's " +
                  std::to_string(m.max_positions) + " learned positions");
    if (t.train_tokens < 0 || !std::isfinite(t.train_tokens))
        issue("positive", "training.train_tokens", "train_tokens must be a positive number");
    if (t.gpu_hour_usd < 0 || !std::isfinite(t.gpu_hour_usd))
        issue("positive", "training.gpu_hour_usd", "gpu_hour_usd must not be negative");
    const EngineFigures& f = plan.figures;
    for (const Sourced* figure : {&f.gemm_peak_fraction, &f.hbm_fraction, &f.attention_fraction}) {
        if (!(figure->value > 0 && figure->value <= 1)) {
            issue("figure-range", "overrides", "efficiency overrides must lie in (0, 1]");
            break;
        }
    }
    if (!(f.grad_bytes.value > 0) || !(f.optimizer_step_bytes.value > 0) ||
        !(f.dp_bucket_bytes.value > 0))
        issue("figure-range", "overrides", "byte-count overrides must be positive");
    return issues;
}

} // namespace paraplan
