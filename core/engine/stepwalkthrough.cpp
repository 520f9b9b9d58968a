#include "stepwalkthrough.h"

#include "hardware.h"
#include "stepwalkthroughdetail.h"
#include "summary.h"
#include "units.h"

#include <cmath>
#include <map>

namespace paraplan {
namespace walkthrough {
namespace {

// "core_attn, mlp": the modules of a selective recompute.
std::string recomputeModulesText(unsigned modules)
{
    std::string text;
    for (const std::string& name : flagNames(kRecomputeModuleNames, modules))
        text += (text.empty() ? "" : ", ") + name;
    return text;
}

using units::formatBytes;
using units::formatNumber;
using units::formatSeconds;

// FLOPs in the unit that keeps them short: "172 GFLOP", "1.752 TFLOP", "304.0 PFLOP".
std::string tflops(double flops)
{
    if (flops >= 1e15)
        return formatNumber(flops / 1e15, 4) + " PFLOP";
    if (flops >= 1e12)
        return formatNumber(flops / 1e12, 4) + " TFLOP";
    if (flops >= 1e9)
        return formatNumber(flops / 1e9, 4) + " GFLOP";
    return formatNumber(flops / 1e6, 4) + " MFLOP";
}
std::string perSecond(double flops_per_s)
{
    return formatNumber(flops_per_s / 1e12, 4) + " TFLOP/s";
}
std::string count(double value)
{
    return formatNumber(value, 15);
}

// Bytes per element of the training dtype, as the engine counts activations and operands.
double elementBytes(Dtype dtype)
{
    return dtype == Dtype::FP32 || dtype == Dtype::TF32 ? 4 : 2;
}

} // namespace

DerivationStep& Walk::add(std::string label, std::string formula, std::string substitution,
                          std::string result, double value, std::string unit,
                          std::string source) const
{
    for (const std::string& symbol : formulaSymbols(formula)) {
        const std::string text = meaning(symbol);
        if (!text.empty())
            d.define(symbol, text);
    }
    return d.add(std::move(label), std::move(formula), std::move(substitution), std::move(result),
                 value, std::move(unit), std::move(source));
}

std::string Walk::meaning(const std::string& symbol) const
{
    const std::string swiglu =
        m.mlp == MlpKind::SwiGLU ? "SwiGLU: gate, up and down" : "GeLU: up and down";
    const std::map<std::string, std::string> table = {
        {"B", "global batch, sequences per step (" + std::to_string(p.global_batch) + ")"},
        {"s", "sequence length, tokens (" + std::to_string(t.seq_len) + ")"},
        {"b", "micro-batch, sequences (" + std::to_string(p.micro_batch) + ")"},
        {"L", "transformer layers (" + std::to_string(m.layers) + ")"},
        {"L_d", "layers with a dense MLP (" + std::to_string(m.layers - m.moeLayers()) + ")"},
        {"L_e", "layers with experts (" + std::to_string(m.moeLayers()) + ")"},
        {"h", "hidden size (" + std::to_string(m.hidden) + ")"},
        {"a", "attention (query) heads (" + std::to_string(m.heads) + ")"},
        {"g", "key/value heads, grouped-query attention (" + std::to_string(m.kv_heads) + ")"},
        {"d", "head dimension (" + std::to_string(m.headDim()) + ")"},
        {"d_v", "value head dimension (" + std::to_string(m.valueHeadDim()) + ")"},
        {"f", "MLP hidden size (" + std::to_string(m.ffn_hidden) + ")"},
        {"f_e", "one expert's MLP hidden size (" + std::to_string(m.expert_ffn_hidden) + ")"},
        {"f_s",
         "shared experts' MLP hidden size (" + std::to_string(m.shared_expert_ffn_hidden) + ")"},
        {"k", "experts each token visits (" + std::to_string(m.experts_per_token) + ")"},
        {"c", "weight matrices per MLP (" + std::to_string(m.mlp == MlpKind::SwiGLU ? 3 : 2) +
                  ", " + swiglu + ")"},
        {"V", "vocabulary size (" + std::to_string(m.vocab) + ")"},
        {"W_a", "attention weights per layer (the Q, K, V and output projections)"},
        {"n", "GPUs in the step, tp × pp × dp × cp (" + std::to_string(p.gpus()) + ")"},
        {"sigma",
         "spread of sustained speed between GPUs of one model (standard deviation / mean)"},
        {"E", "expected value"},
        {"M", "rows of the GEMM's left operand (tokens of the micro-batch on this GPU)"},
        {"K", "the GEMM's inner dimension"},
        {"N", "columns of the GEMM's right operand (output features on this GPU)"},
        {"n_b", "GEMMs in the batch (the local experts)"},
        {"P", "peak FLOP/s of one GPU in the training dtype, / the slowest-GPU factor"},
        {"e", "the GEMM shape's share of peak: the measured share x tile and wave quantization"},
        {"H", "achievable HBM bandwidth: datasheet x HBM fraction / the slowest-GPU factor"},
        {"w", "bytes per element (" + formatNumber(elementBytes(t.dtype), 1) + ", " +
                  dtypeName(t.dtype) + ")"},
        {"r", "slowdown of a GEMM whose SMs TP-overlap kernels share (1 without overlap)"},
        {"t", "time of one GEMM"},
        {"t_c", "the GEMM's math at its share of peak"},
        {"t_a", "reading its operands from HBM"},
        {"t_o", "writing its output to HBM (half inside the main loop, half after it)"},
        {"m", "micro-batches per pipeline"},
        {"p", "pipeline stages (" + std::to_string(p.pp) + ")"},
        {"v",
         "model chunks per stage, interleaved schedule (" + std::to_string(p.interleave) + ")"},
        {"T", "tokens to train (the plan's training.train_tokens)"},
        {"R", "tokens per second of the plan"},
        {"G", "GPU-hours"},
        {"u", "price of one GPU-hour (the plan's training.gpu_hour_usd)"},
        {"t_step", "step time"},
        {"P_d", "datasheet peak FLOP/s of one GPU in the training dtype"},
        {"t_train", "time to train"},
    };
    const auto found = table.find(symbol);
    return found == table.end() ? std::string() : found->second;
}

void Walk::planInputs() const
{
    // The GPU by its name ("NVIDIA H100 SXM5 80GB"), not the catalogue's id.
    const GpuSpec* titleGpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id);
    d.title = "One training step of " + m.name + " on " + groupedNumber(double(p.gpus())) + " x " +
              (titleGpu ? titleGpu->name : plan.cluster.gpu_id) + " (tp " + std::to_string(p.tp) +
              ", pp " + std::to_string(p.pp) + ", dp " + groupedNumber(p.dp) + ")";
    d.inputs.push_back("model: " + m.name + ", L = " + std::to_string(m.layers) +
                       ", h = " + std::to_string(m.hidden) + ", a = " + std::to_string(m.heads) +
                       ", g = " + std::to_string(m.kv_heads) + ", f = " +
                       std::to_string(m.ffn_hidden) + ", V = " + std::to_string(m.vocab) + " (" +
                       (m.source.empty() ? "user entry" : m.source) + ")");
    d.inputs.push_back("cluster: " + plan.cluster.name + ", " +
                       groupedNumber(double(plan.cluster.totalGpus())) + " GPUs (" +
                       clusterSource(plan.cluster) + ")");
    d.inputs.push_back("batch: B = " + std::to_string(p.global_batch) +
                       " sequences of s = " + std::to_string(t.seq_len) +
                       " tokens, micro-batch b = " + std::to_string(p.micro_batch) +
                       " (user entry)");
    d.inputs.push_back("GEMM share of dense peak at the measured shape " +
                       formatNumber(f.gemm_peak_fraction.value) + " (" +
                       describeSource(f.gemm_peak_fraction) + ")");
    d.inputs.push_back("HBM fraction " + formatNumber(f.hbm_fraction.value) + " (" +
                       describeSource(f.hbm_fraction) + ")");
    if (t.dtype == Dtype::FP8)
        d.inputs.push_back(
            "FP8: the linear layers' GEMMs at " + formatNumber(f.fp8_gemm_peak_fraction.value) +
            " of the FP8 peak at the measured shape (" + describeSource(f.fp8_gemm_peak_fraction) +
            "), the backward's dgrad and wgrad at " +
            formatNumber(f.fp8_backward_gemm_peak_fraction.value) + " (" +
            describeSource(f.fp8_backward_gemm_peak_fraction) + "); the attention core " +
            (t.fp8_attention ? std::string("in FP8 (plan)") : std::string("in bf16")) +
            ", the embedding, the LM head and the MoE router in bf16; recipe " +
            (t.fp8_recipe == Fp8Recipe::Auto
                 ? std::string("auto (delayed on Megatron / Transformer Engine, current on "
                               "PyTorch / torchao)")
                 : std::string(fp8RecipeName(t.fp8_recipe)) + " (plan)"));
    if (!cost.ok) {
        for (const PlanIssue& issue : cost.issues)
            d.notes.push_back("rejected [" + issue.rule + "]: " + issue.message);
        return;
    }
    d.inputs.push_back(std::string("training framework: ") + trainingFrameworkName(t.framework) +
                       " (set by training.framework)");
    d.inputs.push_back(std::string("attention kernel: ") + attentionKernelName(as.attention) +
                       (t.attention == AttentionKernel::Auto
                            ? (as.pytorch_framework ? " (auto: the PyTorch frameworks call SDPA)"
                                                    : " (auto: Megatron-LM calls flash-attn)")
                            : " (plan)") +
                       (as.attention != AttentionKernel::Unfused
                            ? ", " + describeSource(cost.assumptions.attention_fwd_figure)
                            : std::string()));
    d.inputs.push_back(
        std::string("element-wise kernels: ") + kernelStyleName(as.kernels) +
        (t.kernels == KernelStyle::Auto
             ? (as.pytorch_framework ? " (auto: the PyTorch frameworks run eager operators)"
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

void Walk::modelFlops() const
{
    const double B = p.global_batch;
    const double s = t.seq_len;
    const double h = m.hidden;
    const double c = m.mlp == MlpKind::SwiGLU ? 3 : 2;
    const double Wa = attentionMatrices(m);
    if (m.isMla())
        add("Attention weights per layer",
            "W_a: the latent attention's down- and up-projections, decoupled key and output", "",
            count(Wa), Wa, "", "formula: DeepSeek-V2 (arXiv:2405.04434), section 2.1");
    else
        add("Attention weights per layer", "W_a = h (a d) + 2 h (g d) + (a d) h",
            std::to_string(m.hidden) + " × " + count(double(m.heads) * m.headDim()) + " + 2 × " +
                std::to_string(m.hidden) + " × " + count(double(m.kv_heads) * m.headDim()) + " + " +
                count(double(m.heads) * m.headDim()) + " × " + std::to_string(m.hidden),
            count(Wa), Wa, "", "formula: Vaswani et al. 2017; Ainslie et al. 2023 (GQA)");

    // Forward + backward: 6 FLOPs per weight per token, and the score and context products.
    const double tokens6 = 6 * B * s;
    const double L = m.layers;
    const double Le = m.moeLayers();
    const double Ld = L - Le;
    const double weights = tokens6 * L * Wa;
    const double scores = tokens6 * L * s * m.heads * (m.headDim() + m.valueHeadDim());
    const double dense = tokens6 * Ld * c * h * m.ffn_hidden;
    const double experts =
        tokens6 * Le * c * h *
        (double(m.experts_per_token) * m.expert_ffn_hidden + m.shared_expert_ffn_hidden);
    const double head = tokens6 * h * m.vocab;
    const std::string dv = m.isMla() ? "(d + d_v)" : "2 d";
    std::string formula = "6 B s [L W_a + L s a " + dv + " + " +
                          (m.isMoe() ? "L_d c h f + L_e c h (k f_e + f_s)" : "L c h f") + " + h V]";
    const std::string sixBs =
        "6 × " + std::to_string(p.global_batch) + " × " + std::to_string(t.seq_len);
    std::string substitution = sixBs + " × [" + count(L) + " × " + count(Wa) + " + " + count(L) +
                               " × " + std::to_string(t.seq_len) + " × " + std::to_string(m.heads) +
                               " × " + count(m.headDim() + m.valueHeadDim()) + " + ";
    if (m.isMoe())
        substitution += count(Ld) + " × " + count(c) + " × " + count(h) + " × " +
                        std::to_string(m.ffn_hidden) + " + " + count(Le) + " × " + count(c) +
                        " × " + count(h) + " × (" + std::to_string(m.experts_per_token) + " × " +
                        std::to_string(m.expert_ffn_hidden) + " + " +
                        std::to_string(m.shared_expert_ffn_hidden) + ")";
    else
        substitution +=
            count(L) + " × " + count(c) + " × " + count(h) + " × " + std::to_string(m.ffn_hidden);
    substitution += " + " + count(h) + " × " + std::to_string(m.vocab) + "] = " + tflops(weights) +
                    " (attention weights) + " + tflops(scores) + " (scores and context) + " +
                    tflops(dense) + " (dense MLP)" +
                    (m.isMoe() ? " + " + tflops(experts) + " (experts)" : std::string()) + " + " +
                    tflops(head) + " (LM head)";
    DerivationStep& step = add(
        "Model FLOPs per step", formula, substitution,
        formatNumber(mt.model_flops_per_step / 1e15, 4) + " PFLOP", mt.model_flops_per_step, "FLOP",
        "formula: 6 FLOPs per weight per token forward and backward (Kaplan et al. 2020, "
        "section 2.1) and the attention scores, as Narayanan et al. 2021 (arXiv:2104.04473) "
        "and Korthikanti et al. 2022 count them, generalised to GQA, SwiGLU and MoE");
    step.terms = {{"attention weights", weights},
                  {"scores and context", scores},
                  {"dense MLP", dense},
                  {"experts", experts},
                  {"LM head", head}};
}

double Walk::hbm() const
{
    if (const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id))
        return units::bytesPerSecondFromGBps(gpu->hbm_GBps) * f.hbm_fraction.value /
               as.slowest_gpu_factor;
    // A GPU outside the bundled catalog: the rate the element-wise kernels were costed at.
    const LayerCompute& l = layer();
    return l.elementwise_forward_s > 0 ? l.elementwise_forward_bytes / l.elementwise_forward_s : 0;
}

void Walk::gemmSteps() const
{
    const LayerCompute& l = layer();
    const double w = elementBytes(t.dtype);
    const double P = mt.peak_flops_per_gpu / as.slowest_gpu_factor;
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id);
    const double H = hbm();
    if (gpu)
        add("Achievable HBM bandwidth", "H = datasheet × HBM fraction / slowest-GPU factor",
            formatNumber(gpu->hbm_GBps, 4) + " GB/s × " + formatNumber(f.hbm_fraction.value) +
                " / " + formatNumber(as.slowest_gpu_factor, 4),
            units::formatGBps(H), H, "B/s",
            gpu->source + "; fraction " + describeSource(f.hbm_fraction));
    add("Peak per GPU at the slowest GPU's pace", "P = datasheet peak / slowest-GPU factor",
        perSecond(mt.peak_flops_per_gpu) + " / " + formatNumber(as.slowest_gpu_factor, 4),
        perSecond(P), P, "FLOP/s", gpu ? gpu->source : std::string("the cluster's GPU preset"));
    for (size_t i = 0; i < l.gemm_count; ++i) {
        const GemmTiming& g = l.gemms[i];
        const bool batched = g.batch != 1;
        const std::string nb = batched ? " n_b" : "";
        // FP8 GEMMs read 1-byte operands (all but the MoE router under dtype fp8).
        const bool fp8Gemm = t.dtype == Dtype::FP8 && std::string(g.name) != "router";
        const double operands = (fp8Gemm ? 1 : w) * (g.M * g.K + g.K * g.N) * g.batch;
        // FP8 GEMMs write 16-bit outputs.
        const double output = (t.dtype == Dtype::FP8 ? 2 : w) * g.M * g.N * g.batch;
        const double hbm = H > 0 ? H : (g.operands_s > 0 ? operands / g.operands_s : 0);
        std::string substitution =
            "M = " + count(g.M) + ", K = " + count(g.K) + ", N = " + count(g.N) +
            (batched ? ", n_b = " + count(g.batch) : std::string()) + "; t_c = " + tflops(g.flops) +
            " / (" + perSecond(P) + " × " + formatNumber(g.efficiency) +
            ") = " + formatSeconds(g.compute_s) + "; t_a = " + formatBytes(operands) + " / " +
            units::formatGBps(hbm) + " = " + formatSeconds(g.operands_s) +
            "; t_o = " + formatBytes(output) + " / " + units::formatGBps(hbm) + " = " +
            formatSeconds(g.output_s) + "; r = " + formatNumber(g.slowdown, 4) + ": " +
            formatNumber(g.slowdown, 4) + " × (max(" + formatSeconds(g.compute_s) + ", " +
            formatSeconds(g.operands_s + 0.5 * g.output_s) + ") + " +
            formatSeconds(0.5 * g.output_s) + ")";
        const bool experts =
            showsMoeLayer() && batched && std::string(g.name).rfind("mlp_", 0) == 0;
        add(std::string("GEMM ") + g.name +
                (experts ? " (the routed experts' grouped GEMM: n_b local experts of M tokens each)"
                         : "") +
                ", forward, one micro-batch",
            "t = r × (max(t_c, t_a + t_o / 2) + t_o / 2); t_c = 2 M K N" + nb +
                " / (P × e); t_a = w (M K + K N)" + nb + " / H; t_o = w M N" + nb + " / H",
            substitution, formatSeconds(g.time_s), g.time_s, "s",
            "formula: roofline per GEMM; NVIDIA Matrix Multiplication Background User's "
            "Guide (2023), sections 3.1-3.2; output write: docs/engine.md" +
                (experts && gpu ? groupedSource(*gpu, fp8Gemm) : std::string()));
    }
}

// Where a grouped expert GEMM's share e comes from: the GPU's measured grouped rate, FP8 or
// 16-bit, or the rule that carries the 16-bit one to FP8 (docs/engine.md, "Grouped expert
// GEMMs"); nothing when the GPU has no grouped figure (the dense share applies).
std::string Walk::groupedSource(const GpuSpec& gpu, bool fp8) const
{
    const KernelFigures& k = gpu.kernels;
    if (!(k.grouped_gemm_tflops > 0))
        return {};
    const std::string bf16 = "grouped rate " + formatNumber(k.grouped_gemm_tflops, 4) +
                             " TFLOP/s (" + k.grouped_source + ")";
    if (!fp8)
        return "; e: " + bf16;
    if (k.grouped_fp8_tflops > 0)
        return "; e: FP8 grouped rate " + formatNumber(k.grouped_fp8_tflops, 4) + " TFLOP/s (" +
               k.grouped_fp8_source + ")";
    return "; e: the dense FP8 share slowed by the time per FLOP the 16-bit grouped rate spends "
           "above the dense 16-bit share (docs/engine.md, 'Grouped expert GEMMs': an "
           "assumption); " +
           bf16;
}

void Walk::fp8CastStep() const
{
    const LayerCompute& l = layer();
    const Fp8Recipe recipe = as.fp8_recipe;
    const bool block = recipe == Fp8Recipe::Mxfp8 || recipe == Fp8Recipe::Blockwise;
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id);
    const bool tnOnly = gpu && gpu->kernels.fp8_tn_only;
    const int copies = tnOnly || block ? 2 : 1;
    const int amax = recipe == Fp8Recipe::Current ? 2 : 0;
    const std::string perElement =
        as.pytorch_framework ? std::to_string(copies) + " × (2 + " + std::to_string(amax) + " + 1)"
                             : "2 + " + std::to_string(amax) + " + " + std::to_string(copies);
    const double total = l.fp8_cast_forward_bytes + l.fp8_weight_cast_bytes;
    add("... FP8 quantization of the linear layers' inputs and weights (" +
            std::string(fp8RecipeName(recipe)) + " scaling)",
        "(sum over FP8 GEMMs of M K × bytes per element (+ scales) + weights K N × bytes per "
        "element × casts per micro-batch) / H; bytes per element = read 16-bit 2 + amax read " +
            std::string("(2 for current scaling) + one FP8 byte per copy"),
        "bytes per element " + perElement + " (" + std::to_string(copies) + " FP8 cop" +
            (copies == 1 ? "y" : "ies") + (tnOnly ? ": K-major GEMMs need a transposed one" : "") +
            (block ? ": row- and column-wise scaled" : "") + "); inputs " +
            formatBytes(l.fp8_cast_forward_bytes) + " + weights " +
            formatBytes(l.fp8_weight_cast_bytes) +
            (as.pytorch_framework ? " (every micro-batch)" : " (once per step, its share)") +
            " = " + formatBytes(total) + " / " + units::formatGBps(hbm()) + "; backward " +
            formatBytes(l.fp8_cast_backward_bytes) +
            " (output gradients) = " + formatSeconds(l.fp8_cast_backward_s),
        formatSeconds(l.fp8_cast_forward_s), l.fp8_cast_forward_s, "s",
        "formula: bytes of the quantization passes at the HBM rate (docs/engine.md, \"FP8\")");
}

void Walk::layerSteps() const
{
    add("Slowest GPU of the step",
        "1 + sigma × E[max of n standard normals] (Blom); every kernel runs at its pace",
        "sigma = " + formatNumber(f.gpu_spread.value, 3) + ", n = " + std::to_string(p.gpus()) +
            (f.gpu_spread.value > 0
                 ? ": 1 + " + formatNumber(f.gpu_spread.value, 3) + " × " +
                       formatNumber((as.slowest_gpu_factor - 1) / f.gpu_spread.value, 3)
                 : std::string()),
        "x" + formatNumber(as.slowest_gpu_factor, 4), as.slowest_gpu_factor, "",
        describeSource(f.gpu_spread));
    modelFlops();
    gemmSteps();

    const LayerCompute& l = layer();
    double compute = 0;
    std::string each;
    for (size_t i = 0; i < l.gemm_count; ++i) {
        compute += l.gemms[i].slowdown * l.gemms[i].compute_s;
        each += std::string(i ? " + " : "") + formatSeconds(l.gemms[i].time_s) + " (" +
                l.gemms[i].name + ")";
    }
    const double above = l.gemm_forward_s - compute;
    DerivationStep& gemms =
        add(std::string(showsMoeLayer() ? "One MoE layer" : "One layer") +
                ", one micro-batch, forward: GEMMs",
            "sum of the GEMMs' t = their math (sum of r × t_c) + the time above it (operands and "
            "outputs through HBM where they take longer than the math, and the output writes)",
            each + " = " + formatSeconds(compute) + " compute + " + formatSeconds(above) +
                " above the compute",
            formatSeconds(l.gemm_forward_s), l.gemm_forward_s, "s",
            "formula: roofline per GEMM (steps above); " + tflops(l.gemm_forward_flops) + " at " +
                formatNumber(100 * l.gemm_efficiency, 3) + "% of peak overall");
    gemms.terms = {{"compute", compute}, {"above the compute", above}};
    add("... attention scores and values",
        as.attention != AttentionKernel::Unfused
            ? (m.isMla() ? "causal half of 2 b s^2 (d + d_v) × heads / (peak × kernel share at "
                           "s), backward 2.5×"
                         : "causal half of 4 b s^2 d × heads / (peak × kernel share at s), "
                           "backward 2.5×")
            : "scores (queries by keys) and context (scores by values) as batched GEMMs, "
              "full and unfused",
        tflops(l.attention_forward_flops) +
            (as.attention != AttentionKernel::Unfused
                 ? " at " + formatNumber(100 * as.attention_fwd_share, 3) + "% of peak (" +
                       formatNumber(100 * as.attention_bwd_share, 3) + "% backward)"
                 : std::string()),
        formatSeconds(l.attention_forward_s), l.attention_forward_s, "s",
        as.attention != AttentionKernel::Unfused ? describeSource(as.attention_fwd_figure)
                                                 : "formula: roofline");
    add("... element-wise kernels (norms, activations, residuals, softmax, dropout)", "bytes / H",
        formatBytes(l.elementwise_forward_bytes) + " / " +
            (l.elementwise_forward_s > 0
                 ? units::formatGBps(l.elementwise_forward_bytes / l.elementwise_forward_s)
                 : std::string("H")),
        formatSeconds(l.elementwise_forward_s), l.elementwise_forward_s, "s",
        as.kernels == KernelStyle::Eager
            ? "formula: PyTorch eager operators, one HBM round trip each (docs/engine.md)"
            : "formula: Megatron-LM / Transformer Engine fused kernels (docs/engine.md)");
    // A partial capture (cuda_graph_scope) leaves the layer's kernels launched one by one but
    // for the router block's captured ones (below).
    const bool partial = plan.training.partialCapture();
    const bool graphed = plan.training.cuda_graphs != CudaGraphs::None && !partial;
    const Sourced& gap = graphed ? f.graph_kernel_gap_s : f.kernel_gap_s;
    add("... kernel launches (gaps between kernels; the host's issue time as a floor)",
        "forward = max(work + kernels × gap, host time); host time = kernels × host per launch "
        "(one launch per layer in a per-layer CUDA graph, none in a whole-step graph)",
        formatNumber(l.kernels_forward, 3) + " kernels × " + formatNumber(gap.value * 1e6, 3) +
            " us = " + formatSeconds(l.launch_gap_forward_s) + " of gaps; host " +
            formatSeconds(l.host_forward_s) + " (" + formatNumber(f.host_launch_s.value * 1e6, 3) +
            " us per launch, CUDA graphs " + cudaGraphsName(plan.training.cuda_graphs) +
            (partial ? ", a partial capture: these kernels are launched one by one" : "") + ")" +
            (l.launch_bound ? ": launch-bound, the host sets the pace" : ""),
        formatSeconds(l.launch_gap_forward_s), l.launch_gap_forward_s, "s",
        describeSource(gap) + "; host: " + describeSource(f.host_launch_s));
    if (showsMoeLayer() && l.router_kernels > 0) {
        const double graphed = l.router_kernels - l.router_host_kernels;
        add("... MoE router block (router and dispatch preprocessing), each pass",
            "host-issued kernels × host per launch + (a partial CUDA graph's launch) + captured "
            "kernels × gap",
            formatNumber(l.router_host_kernels, 3) + " × " +
                formatNumber(f.host_launch_s.value * 1e6, 3) + " us" +
                (graphed > 0 && partial
                     ? " + 1 graph launch × " + formatNumber(f.host_launch_s.value * 1e6, 3) + " us"
                     : std::string()) +
                (graphed > 0 ? " + " + formatNumber(graphed, 3) + " captured × " +
                                   formatNumber(f.graph_kernel_gap_s.value * 1e6, 3) + " us"
                             : std::string()) +
                " (" + formatNumber(l.router_kernels, 3) + " kernels: router fusion " +
                (t.moe_router_fusion ? "on" : "off") + ", " +
                moeDispatcherName(resolvedMoeDispatcher(plan)) + " dispatcher)",
            formatSeconds(l.router_forward_s), l.router_forward_s, "s",
            "NVIDIA Megatron-LM, docs/discussions/deepseek-v3-gb200-optimization/"
            "deepseek-v3-gb200-optimization.md at eb0783b6, sections 2.1.4 and 2.2 (router part "
            "72 kernels, 31 with --moe-router-fusion, router and preprocessing 17 with DeepEP); "
            "the dropless dispatcher's device-to-host sync exposes their launches "
            "(megatron/core/transformer/moe/token_dispatcher.py, cuda_sync_point); host: " +
                describeSource(f.host_launch_s));
    }
    if (t.dtype == Dtype::FP8)
        fp8CastStep();
    DerivationStep& layer =
        add(std::string(showsMoeLayer() ? "One MoE layer" : "One layer") +
                ", forward + backward + recompute",
            "forward + backward (dgrad + wgrad GEMMs, element-wise backward) + recompute",
            formatSeconds(l.forward_s) + " + " + formatSeconds(l.backward_s) + " + " +
                formatSeconds(l.recompute_s),
            formatSeconds(l.forward_s + l.backward_s + l.recompute_s),
            l.forward_s + l.backward_s + l.recompute_s, "s",
            std::string("recompute: ") + recomputeName(p.recompute) +
                (p.recompute_modules != 0 && p.recompute == Recompute::Selective
                     ? " (modules " + recomputeModulesText(p.recompute_modules) + ")"
                     : std::string()));
    layer.terms = {
        {"forward", l.forward_s}, {"backward", l.backward_s}, {"recompute", l.recompute_s}};
}

} // namespace walkthrough

Derivation derivePlan(const Plan& plan, const StepCost& cost)
{
    Derivation d;
    const walkthrough::Walk walk{plan, cost, d};
    walk.planInputs();
    if (!cost.ok)
        return d;
    walk.layerSteps();
    walk.stageSteps();
    walk.moeDispatchStep();
    walk.collectiveSteps();
    walk.stepTotals();
    walk.trainingTotals();
    walk.memoryAndNotes();
    return d;
}

} // namespace paraplan
