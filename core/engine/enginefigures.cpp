#include "plan.h"

#include "kernels.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <string>

// The engine's figures of a GPU before any plan override: kernel shares from the GPU's
// published benchmarks, memory and optimizer bytes, launch gaps (defaultEngineFigures).
namespace paraplan {

namespace {

// Transformer Engine runs the forward's FP8 GEMMs with fast accumulation and the backward's
// with the accumulators promoted to FP32 (NVIDIA/TransformerEngine commit fecb10bd,
// transformer_engine/pytorch/module/base.py: _2X_ACC_FPROP = False, _2X_ACC_DGRAD = True,
// _2X_ACC_WGRAD = True); torchao's float8 training does the same (pytorch/ao commit 36027d82,
// torchao/float8/config.py: gemm_config_output use_fast_accum=True, grad_input and
// grad_weight False). Where the GPU has no promoted figure the forward's is taken.
Sourced fp8BackwardFigure(const GpuSpec& gpu, const Sourced& forward)
{
    const KernelFigures& k = gpu.kernels;
    const double fp8Peak = gpu.peakTflops(Dtype::FP8);
    const std::string why = "the backward's dgrad and wgrad GEMMs run with FP32-promoted "
                            "accumulation (Transformer Engine _2X_ACC_DGRAD / _2X_ACC_WGRAD, "
                            "torchao grad_input / grad_weight use_fast_accum False)";
    if (!(k.fp8_promoted_tflops > 0 && fp8Peak > 0))
        return {forward.value, forward.origin,
                "the forward's figure (no promoted-accumulation figure for " + gpu.name + "; " +
                    why + "): " + forward.source};
    const double typical = k.fp8_promoted_best_of_search ? 0.94 : 1.0;
    return {std::min(1.0, k.fp8_promoted_tflops / fp8Peak * typical), k.fp8_promoted_origin,
            why + "; " + k.fp8_promoted_source +
                (k.fp8_promoted_best_of_search
                     ? "; x 0.94, a fixed large shape against the best of a search (as the "
                       "16-bit GEMM figure)"
                     : "")};
}

Sourced moeImbalanceFigure()
{
    return assumption(
        1, "balanced routing: the busiest expert rank takes the mean share of tokens (the "
           "auxiliary load-balancing loss, Fedus et al. 2021 (Switch Transformer, arXiv "
           "2101.03961) eq. 4, and DeepSeek-V3's bias balancing, arXiv 2412.19437 section 2.1.2, "
           "keep it near; benchmark runs force it: Megatron-Core --moe-router-force-load-"
           "balancing). A capacity factor caps it. Measure it from the router's tokens per "
           "expert (Megatron-Core --moe-per-layer-logging) and enter overrides.moe_imbalance");
}

// DDP's bucket size, and the memory the fullest stage's tensors do not account for
// (docs/engine.md, "Memory per framework"): the caching allocator's reserve, and the
// process's own.
void setBufferFigures(EngineFigures& f)
{
    f.dp_bucket_bytes =
        preset(25 * units::kMiB, "PyTorch DDP's default bucket_cap_mb = 25 "
                                 "(torch.nn.parallel.DistributedDataParallel documentation)");
    f.allocator_reserve = assumption(
        0.05, "5% of the peak allocated bytes kept reserved by PyTorch's caching allocator "
              "(fragmentation and rounding), a margin: a fragmented run can reserve far more "
              "(NVIDIA-NeMo/Megatron-Bridge skills/nemo-mbridge-perf-memory-tuning/SKILL.md at "
              "067f987d: a 58.8 GB (54.8 GiB) peak ran out of an 80 GB H100, over 40% more, and "
              "ran with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True). Measure it as "
              "reserved_bytes.all.peak / allocated_bytes.all.peak - 1 from "
              "torch.cuda.memory_stats() and enter overrides.allocator_reserve");
    f.runtime_reserve_bytes =
        preset((781.0 + 688.0) * units::kMiB,
               "outside the caching allocator, per process: the CUDA context, 781 MiB after "
               "`import torch; torch.zeros(1).cuda()` (nvidia-smi, PyTorch issue #34323), and "
               "one NCCL communicator's buffers, 688 MiB for a group of more than two A100s on "
               "NVLink (NVIDIA/nccl issue #964)");
}

} // namespace

EngineFigures defaultEngineFigures(const GpuSpec& gpu, Optimizer optimizer, Dtype dtype,
                                   AttentionKernel attention)
{
    EngineFigures f;
    const KernelFigures& k = gpu.kernels;
    const double peak = gpu.peakTflops(Dtype::BF16);
    if (k.gemm_tflops > 0 && peak > 0) {
        // The published figure is the best over a search of shapes; one fixed large shape
        // reaches 92-95% of it: A100 8192^3 258 of 271 TFLOP/s (H. He 2024, "Strangely,
        // Matrix Multiplications on GPUs Run Faster When Given 'Predictable' Data",
        // thonking.ai/p/strangely-matrix-multiplications), B200 8192^3 1610 and
        // 4096x8192x8192 1652 of 1745 (pyptx documentation, "Performance", Blackwell GEMM
        // table, cuBLAS column, pyptx.dev/performance).
        // A figure measured at one fixed large shape (best_of_search false) is taken as it is.
        const double typical = k.gemm_best_of_search ? 0.94 : 1.0;
        f.gemm_peak_fraction = {
            k.gemm_tflops / peak * typical, k.gemm_origin,
            !k.gemm_best_of_search ? k.gemm_source
                                   : k.gemm_source + "; x 0.94: a fixed large shape reaches 92-95% "
                                                     "of the best shape a search finds (A100 "
                                                     "8192^3: 258 of 271 TFLOP/s, Horace He 2024, "
                                                     "'Strangely, Matrix Multiplications on GPUs "
                                                     "Run Faster When Given \"Predictable\" "
                                                     "Data', thonking.ai/p/strangely-matrix-"
                                                     "multiplications; B200 8192^3: cuBLAS 1610 of "
                                                     "1745, pyptx documentation (2026), "
                                                     "'Performance', Blackwell GEMM table, "
                                                     "pyptx.dev/performance)"};
    } else {
        f.gemm_peak_fraction =
            assumption(0.8, "no published GEMM benchmark for " + gpu.name +
                                ": 80%, the share cuBLAS reaches on H100 "
                                "(Bekman, Machine Learning Engineering, MAMF table)");
    }
    const double fp8Peak = gpu.peakTflops(Dtype::FP8);
    if (k.fp8_gemm_tflops > 0 && fp8Peak > 0) {
        // Measured at one fixed large shape, not the best of a search: no 0.94.
        f.fp8_gemm_peak_fraction = {std::min(1.0, k.fp8_gemm_tflops / fp8Peak), k.fp8_gemm_origin,
                                    k.fp8_gemm_source};
    } else {
        f.fp8_gemm_peak_fraction = assumption(
            f.gemm_peak_fraction.value, "no published FP8 GEMM benchmark for " + gpu.name +
                                            ": the 16-bit GEMM share of peak taken for FP8 (" +
                                            f.gemm_peak_fraction.source + ")");
    }
    f.fp8_backward_gemm_peak_fraction = fp8BackwardFigure(gpu, f.fp8_gemm_peak_fraction);
    f.moe_imbalance = moeImbalanceFigure();
    f.hbm_fraction = gpu.hbm_achievable_fraction;
    // "On the same 8-GPU node you can see 5%+ MAMF spread between GPUs" (Bekman, Machine
    // Learning Engineering): a range of 5% over 8 GPUs is 2.85 standard deviations.
    f.gpu_spread = preset(0.0176, "GPUs of one model differ in sustained speed: a 5% spread "
                                  "over the 8 GPUs of a node (Bekman, Machine Learning "
                                  "Engineering, MAMF notes) is sigma = 5% / 2.85");
    const AttentionFigures* a = kernels::attentionFigures(gpu, attention);
    if (attention == AttentionKernel::Auto)
        attention = AttentionKernel::Flash2; // shown until the plan's stack resolves it
    if (attention == AttentionKernel::Unfused) {
        f.attention_fraction = preset(1, "unfused attention runs as GEMMs: the GEMM figures apply");
        f.attention_bwd_fraction = f.attention_fraction;
    } else if (a) {
        f.attention_fraction = {a->fwd, a->origin, a->source};
        f.attention_bwd_fraction = {a->bwd, a->origin, a->source};
    } else {
        f.attention_fraction =
            assumption(0.6, "no published attention-kernel benchmark for " + gpu.name +
                                "; 60%, about FlashAttention-2's share on A100 (Dao 2023)");
        f.attention_bwd_fraction = f.attention_fraction;
    }
    // NCCL's kernels run on SMs while they overlap compute (NCCL_MIN_CTAS/NCCL_MAX_CTAS,
    // NCCL environment-variable documentation; 16 channels is a typical inter-node choice).
    const double sms = k.sm_count > 0 ? k.sm_count : 100;
    f.comm_sm_share =
        assumption(std::min(0.5, 16.0 / sms),
                   "16 NCCL channels (one CTA each) of " + std::to_string(static_cast<int>(sms)) +
                       " SMs: compute overlapping a collective runs that much "
                       "slower (NCCL documentation, NCCL_MIN_CTAS)");
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
    // Kernel launches (docs/engine.md, "Kernel launches"). NVIDIA's "Getting Started with
    // CUDA Graphs" (Gray, NVIDIA Technical Blog, 2019): a 2.9 us kernel takes 3.8 us per
    // kernel back to back from a stream and 3.4 us inside a graph.
    f.kernel_gap_s = preset(0.9e-6, "kernels launched one by one, back to back: 3.8 us per "
                                    "2.9 us kernel (Gray, 'Getting Started with CUDA Graphs', "
                                    "NVIDIA Technical Blog, 2019)");
    f.graph_kernel_gap_s = preset(0.5e-6, "kernels back to back in a CUDA graph: 3.4 us per "
                                          "2.9 us kernel (Gray, 'Getting Started with CUDA "
                                          "Graphs', NVIDIA Technical Blog, 2019)");
    f.host_launch_s = assumption(
        10e-6, "host time per kernel launched from PyTorch: Python, the ATen dispatcher, "
               "autograd recording and cudaLaunchKernel, 5-25 us per operator in PyTorch "
               "profiler traces; 10 us assumed (measure with the PyTorch profiler)");
    setBufferFigures(f);
    f.overlap_fraction = preset(1, "the schedule model: a gradient bucket or FSDP gather is "
                                   "hidden as far as the compute it overlaps lasts (PyTorch "
                                   "DDP and FSDP2 overlap, Megatron-LM overlap_grad_reduce)");
    return f;
}

} // namespace paraplan
