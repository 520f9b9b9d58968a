#include "stepwalkthrough.h"

#include "collectivewalkthrough.h"
#include "units.h"

#include <cmath>

namespace paraplan {
namespace {

using units::formatBytes;
using units::formatGBps;
using units::formatNumber;
using units::formatSeconds;

std::string gib(double bytes)
{
    return formatNumber(units::toGiB(bytes), 4) + " GiB";
}

} // namespace

namespace {

constexpr const char* flopsSource = "formula: Korthikanti et al. 2022, generalised by "
                                    "Megatron-LM to GQA, SwiGLU and MoE";

// One walkthrough: the plan, its cost and the derivation being written, with short names for
// the parts every section reads.
struct Walk
{
    const Plan& plan;
    const StepCost& cost;
    Derivation& d;
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    const TrainingSettings& t = plan.training;
    const EngineFigures& f = plan.figures;
    const StepMetrics& mt = cost.metrics;
    const StepAssumptions& as = cost.assumptions;

    void planInputs() const;
    void layerSteps() const;
    void stageSteps() const;
    void stepTotals() const;
    void memoryAndNotes() const;
};

void Walk::planInputs() const
{
    d.title = "One training step of " + m.name + " on " + std::to_string(p.gpus()) + " x " +
              plan.cluster.gpu_id + " (tp " + std::to_string(p.tp) + ", pp " +
              std::to_string(p.pp) + ", dp " + std::to_string(p.dp) + ")";
    d.inputs.push_back("model: " + m.name + ", L = " + std::to_string(m.layers) +
                       ", h = " + std::to_string(m.hidden) + ", a = " + std::to_string(m.heads) +
                       ", g = " + std::to_string(m.kv_heads) + ", f = " +
                       std::to_string(m.ffn_hidden) + ", V = " + std::to_string(m.vocab) + " (" +
                       (m.source.empty() ? "user entry" : m.source) + ")");
    d.inputs.push_back("cluster: " + plan.cluster.name + ", " +
                       std::to_string(plan.cluster.totalGpus()) + " GPUs (" + plan.cluster.source +
                       ")");
    d.inputs.push_back("batch: B = " + std::to_string(p.global_batch) +
                       " sequences of s = " + std::to_string(t.seq_len) +
                       " tokens, micro-batch b = " + std::to_string(p.micro_batch) +
                       " (user entry)");
    d.inputs.push_back("GEMM share of dense peak at the measured shape " +
                       formatNumber(f.gemm_peak_fraction.value) + " (" +
                       describeSource(f.gemm_peak_fraction) + ")");
    d.inputs.push_back("HBM fraction " + formatNumber(f.hbm_fraction.value) + " (" +
                       describeSource(f.hbm_fraction) + ")");
    if (!cost.ok) {
        for (const PlanIssue& issue : cost.issues)
            d.notes.push_back("rejected [" + issue.rule + "]: " + issue.message);
        return;
    }
    d.inputs.push_back(std::string("training stack: ") +
                       (as.fsdp_style ? "PyTorch FSDP (torchtitan, DeepSpeed, Hugging Face)"
                                      : "Megatron-Core / NeMo") +
                       (t.stack == TrainingStack::Auto
                            ? (p.zero >= 3 ? " (auto: ZeRO-3 layouts run on PyTorch FSDP; set "
                                             "training.stack to change it)"
                                           : " (auto: ZeRO-0/1/2 layouts run on Megatron-Core; "
                                             "set training.stack to change it)")
                            : " (plan)"));
    d.inputs.push_back(std::string("attention kernel: ") + attentionKernelName(as.attention) +
                       (t.attention == AttentionKernel::Auto
                            ? (as.fsdp_style ? " (auto: PyTorch stacks call SDPA)"
                                             : " (auto: Megatron-LM calls flash-attn)")
                            : " (plan)") +
                       (as.attention != AttentionKernel::Unfused
                            ? ", " + describeSource(cost.assumptions.attention_fwd_figure)
                            : std::string()));
    d.inputs.push_back(std::string("element-wise kernels: ") + kernelStyleName(as.kernels) +
                       (t.kernels == KernelStyle::Auto
                            ? (as.fsdp_style ? " (auto: PyTorch stacks run eager operators)"
                                             : " (auto: Megatron-style fused kernels)")
                            : " (plan)"));
    d.inputs.push_back(std::string("TP overlap: ") +
                       (p.tp < 2        ? "n/a (tp = 1)"
                        : as.tp_overlap ? "AG/RS pipelined with the GEMMs"
                                        : "none: TP collectives on the critical path") +
                       (p.tp_overlap == TpOverlap::Auto && p.tp > 1
                            ? (as.tp_overlap ? " (auto: Megatron-style stack, sequence "
                                               "parallel, TP inside one node)"
                                             : " (auto: on only for Megatron-style stacks with "
                                               "sequence parallelism and TP inside one node)")
                            : ""));
    d.inputs.push_back("gradients reduced in " +
                       std::string(as.grad_reduce_bytes == 4 ? "fp32" : "16 bits") +
                       (t.grad_reduce_bytes == 0 ? " (auto: Megatron-LM's bf16 rule, FSDP2's "
                                                   "reduce_dtype)"
                                                 : " (plan)"));
}

void Walk::layerSteps() const
{
    d.add("Slowest GPU of the step",
          "1 + sigma x E[max of n standard normals] (Blom); every kernel runs at its pace",
          "sigma = " + formatNumber(f.gpu_spread.value, 3) + ", n = " + std::to_string(p.gpus()),
          "x" + formatNumber(as.slowest_gpu_factor, 4), as.slowest_gpu_factor, "",
          describeSource(f.gpu_spread));
    d.add("Model FLOPs per step", "12 B s L h^2 [ (1 + g/a + s/h)(q/h) + (f/h) k c ] + 6 B s h V",
          "B = " + std::to_string(p.global_batch) + ", s = " + std::to_string(t.seq_len) +
              ", L = " + std::to_string(m.layers) + ", h = " + std::to_string(m.hidden),
          formatNumber(mt.model_flops_per_step / 1e15, 4) + " PFLOP", mt.model_flops_per_step,
          "FLOP", flopsSource);

    const LayerCompute& l = cost.dense_layer;
    d.add("One layer, one micro-batch, forward: GEMMs",
          "sum over GEMMs of max(2MKN / (peak x share x shape factor), bytes / HBM); the shape "
          "factor is tile and wave quantization against the measured shape",
          formatNumber(l.gemm_forward_flops / 1e12, 4) + " TFLOP at " +
              formatNumber(mt.peak_flops_per_gpu / 1e12, 4) + " TFLOP/s x " +
              formatNumber(l.gemm_efficiency, 3) + " (this layer's shapes)",
          formatSeconds(l.gemm_forward_s), l.gemm_forward_s, "s",
          "formula: roofline per GEMM; NVIDIA Matrix Multiplication Background User's Guide "
          "(2023), sections 3.1-3.2 (docs/engine.md)");
    d.add("... attention scores and values",
          cost.assumptions.attention != AttentionKernel::Unfused
              ? "causal half of 4 b s^2 d heads / (peak x kernel share at s), backward 2.5x"
              : "QK^T and AV batched GEMMs (full, unfused)",
          formatNumber(l.attention_forward_flops / 1e12, 4) + " TFLOP" +
              (as.attention != AttentionKernel::Unfused
                   ? " at " + formatNumber(100 * as.attention_fwd_share, 3) + "% of peak (" +
                         formatNumber(100 * as.attention_bwd_share, 3) + "% backward)"
                   : std::string()),
          formatSeconds(l.attention_forward_s), l.attention_forward_s, "s",
          cost.assumptions.attention != AttentionKernel::Unfused
              ? describeSource(cost.assumptions.attention_fwd_figure)
              : "formula: roofline");
    d.add("... element-wise kernels (norms, activations, residuals, softmax, dropout)",
          "bytes / (HBM x fraction)", formatBytes(l.elementwise_forward_bytes),
          formatSeconds(l.elementwise_forward_s), l.elementwise_forward_s, "s",
          as.kernels == KernelStyle::Eager
              ? "formula: PyTorch eager operators, one HBM round trip each (docs/engine.md)"
              : "formula: Megatron-LM / Transformer Engine fused kernels (docs/engine.md)");
    d.add("One layer, forward + backward + recompute",
          "forward + backward (dgrad + wgrad GEMMs, element-wise backward) + recompute",
          formatSeconds(l.forward_s) + " + " + formatSeconds(l.backward_s) + " + " +
              formatSeconds(l.recompute_s),
          formatSeconds(l.forward_s + l.backward_s + l.recompute_s),
          l.forward_s + l.backward_s + l.recompute_s, "s",
          std::string("recompute: ") + recomputeName(p.recompute));
}

void Walk::stageSteps() const
{
    const StageCost& st = cost.stages[static_cast<size_t>(cost.critical_stage)];
    d.add("Critical stage, one micro-batch",
          "layers x layer + TP comm + CP/EP comm + PP send/recv (+ LM head / embedding)",
          std::to_string(st.layers) + " layers: " + formatSeconds(st.forward_s + st.backward_s) +
              " + recompute " + formatSeconds(st.recompute_s) + " + TP " +
              formatSeconds(st.tp_comm_s) + " + PP " + formatSeconds(st.pp_comm_s),
          formatSeconds(st.microbatch_s), st.microbatch_s, "s",
          "stage " + std::to_string(st.stage) + " of " + std::to_string(p.pp));
    const int mb = cost.microbatches;
    d.add("Micro-batches per pipeline", "m = B / (b x dp)",
          std::to_string(p.global_batch) + " / (" + std::to_string(p.micro_batch) + " x " +
              std::to_string(p.dp) + ")",
          std::to_string(mb), mb, "");
    if (p.pp > 1)
        d.add("Pipeline bubble",
              p.interleave > 1 ? "(sum of stage times - slowest) / v; uniform: (p-1)/v x stage"
                               : "sum of stage times - slowest; uniform: (p-1) x stage",
              "p = " + std::to_string(p.pp) + ", v = " + std::to_string(p.interleave) +
                  ", fraction of the pipelined time (p-1)/(v m) = " +
                  formatNumber(double(p.pp - 1) / (double(p.interleave) * mb)),
              formatSeconds(cost.breakdown.bubble_s), cost.breakdown.bubble_s, "s",
              "formula: Narayanan et al. 2021 (1F1B and interleaved schedules)");
    for (const CollectiveCost& c : cost.collectives) {
        d.add(std::string(c.group) + ": " + c.purpose,
              "calls per step x time per call; exposed part on the critical path",
              formatNumber(c.calls_per_step, 4) + " x " + formatSeconds(c.call.time_s) + " (" +
                  collectiveOpName(c.call.op) + " of " + formatBytes(c.call.bytes) + " over " +
                  std::to_string(c.call.ranks) + " ranks, " + tierName(c.call.bottleneck) + " at " +
                  formatGBps(c.call.bottleneck_Bps) + ")",
              formatSeconds(c.total_s) + " total, " + formatSeconds(c.exposed_s) + " exposed",
              c.exposed_s, "s",
              "see 'paraplan-cli walkthrough --op " + std::string(collectiveOpName(c.call.op)) +
                  "' for the call");
    }
}

void Walk::stepTotals() const
{
    d.add("Optimizer step", "params per GPU (/ dp with ZeRO) x bytes per parameter / HBM",
          formatNumber(f.optimizer_step_bytes.value) + " B/param",
          formatSeconds(cost.breakdown.optimizer_s), cost.breakdown.optimizer_s, "s",
          describeSource(f.optimizer_step_bytes));
    const StepBreakdown& b = cost.breakdown;
    d.add("Step time",
          "m x (compute + recompute + exposed comm of the critical stage) + bubble + DP + "
          "optimizer",
          formatSeconds(b.compute_s) + " + " + formatSeconds(b.recompute_s) + " + " +
              formatSeconds(b.tp_comm_exposed_s + b.cp_comm_exposed_s + b.ep_comm_exposed_s +
                            b.pp_comm_exposed_s) +
              " + " + formatSeconds(b.bubble_s) + " + " + formatSeconds(b.dp_comm_exposed_s) +
              " + " + formatSeconds(b.optimizer_s),
          formatSeconds(cost.step_time_s), cost.step_time_s, "s");
    d.add("Tokens per second", "B s / step time",
          formatNumber(mt.tokens_per_step, 4) + " / " + formatSeconds(cost.step_time_s),
          formatNumber(mt.tokens_per_s, 4), mt.tokens_per_s, "tokens/s");
    d.add("MFU", "model FLOPs / (step time x GPUs x peak)",
          formatNumber(mt.model_flops_per_step / 1e15, 4) + " PFLOP / (" +
              formatSeconds(cost.step_time_s) + " x " + std::to_string(p.gpus()) + " x " +
              formatNumber(mt.peak_flops_per_gpu / 1e12, 4) + " TFLOP/s)",
          formatNumber(100 * mt.mfu, 3) + "%", mt.mfu, "", flopsSource);
    d.add("HFU", "(model FLOPs + recomputed FLOPs) / (step time x GPUs x peak)", "",
          formatNumber(100 * mt.hfu, 3) + "%", mt.hfu, "");
}

void Walk::memoryAndNotes() const
{
    const StageCost& first = cost.stages.front();
    const char* memorySource = "formula: Korthikanti et al. 2022 Table 2 (activations), "
                               "Rajbhandari et al. 2020 (ZeRO sharding)";
    d.add("Memory of stage 0 per GPU",
          "weights + gradients + optimizer state + activations x in-flight micro-batches + "
          "buffers",
          gib(first.weights_bytes) + " + " + gib(first.grads_bytes) + " + " +
              gib(first.optimizer_bytes) + " + " + gib(first.activation_bytes_per_layer) + " x " +
              std::to_string(first.layers) + " layers x " +
              formatNumber(first.in_flight_microbatches) + " + " + gib(first.buffers_bytes),
          gib(first.total_bytes) + (first.fits ? " (fits)" : " (does not fit)"), first.total_bytes,
          "B", memorySource);
    for (const std::string& warning : cost.warnings)
        d.notes.push_back("warning: " + warning);
    for (const LinkUse& link : cost.links)
        d.add(std::string("Link use: ") + tierName(link.tier),
              "sum over collectives crossing it of calls x their time on it; the step is at "
              "least this long",
              std::string("loaded most by ") + link.busiest_group,
              formatSeconds(link.busy_s) + " (" + formatNumber(100 * link.share, 3) +
                  "% of the step)",
              link.busy_s, "s", "formula: shared-link accounting (docs/engine.md)");
    d.notes.push_back(
        std::string(as.tp_overlap ? "TP collectives overlap the GEMMs (one chunk stays exposed); "
                                  : "TP collectives are on the critical path; ") +
        (p.zero >= 3 ? "ZeRO-3 gathers each layer's parameters ahead of its compute and "
                       "reduce-scatters its gradients after it; "
                     : "DP gradient sync overlaps the last micro-batch's backward when "
                       "dp_overlap is on; ") +
        "collectives that share a link tier cannot overlap more than the compute lasts.");
}

} // namespace

Derivation derivePlan(const Plan& plan, const StepCost& cost)
{
    Derivation d;
    const Walk walk{plan, cost, d};
    walk.planInputs();
    if (!cost.ok)
        return d;
    walk.layerSteps();
    walk.stageSteps();
    walk.stepTotals();
    walk.memoryAndNotes();
    return d;
}

} // namespace paraplan
