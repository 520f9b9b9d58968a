#include "moecontext.h"

#include "gemmshapes.h"
#include "hardware.h"

#include <algorithm>

namespace paraplan {
namespace {

// The FP8 grouped expert GEMMs' share of the FP8 datasheet peak: the GPU's measured FP8
// grouped rate, or, none measured, its dense FP8 reference slowed by the time the 16-bit
// grouped figure spends per FLOP above the dense 16-bit reference (the grouping's cost, its
// per-expert launches, streams and tails, taken as the same in FP8: an assumption, docs/engine.md
// "Grouped expert GEMMs"). 0: the dense figures.
double groupedFp8Share(const GpuSpec& gpu, double groupedShare, double gemmReference,
                       double fp8Reference)
{
    const double fp8Peak = gpu.peakTflops(Dtype::FP8);
    const double bf16Peak = gpu.peakTflops(Dtype::BF16);
    if (!(groupedShare > 0) || !(fp8Peak > 0) || !(bf16Peak > 0))
        return 0;
    if (gpu.kernels.grouped_fp8_tflops > 0)
        return std::min(1.0, gpu.kernels.grouped_fp8_tflops / fp8Peak);
    if (!(gemmReference > groupedShare) || !(fp8Reference > 0))
        return 0;
    // Seconds per FLOP (times 1e12): dense FP8, plus the grouping's extra in 16 bits.
    const double extra = 1 / (groupedShare * bf16Peak) - 1 / (gemmReference * bf16Peak);
    return 1 / (1 / (fp8Reference * fp8Peak) + extra) / fp8Peak;
}

// The MoE router block's kernels per pass on Megatron-Core (docs/engine.md, "The MoE router
// block"), issued from the host and replayed by a CUDA graph. NVIDIA's DeepSeek-V3 on GB200
// guide (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, commit eb0783b6, sections
// 2.1.4 and 2.2) counts the router part's kernels: 72, 31 with --moe-router-fusion, and 17
// for the router and preprocessing with DeepEP, whose fused kernel does the preprocessing the
// all-to-all dispatcher runs as 31 - 17 = 14 kernels. Without router fusion DeepEP's block is
// 72 - 14 = 58. The all-gather dispatcher's preprocessing is taken as the all-to-all's. The
// PyTorch frameworks' routers are not counted here (their MoE layer keeps its 6 launches).
void routerBlockKernels(const Plan& plan, double* host, double* graphed)
{
    *host = *graphed = 0;
    const TrainingSettings& tr = plan.training;
    if (!plan.model.isMoe() || tr.framework != TrainingFramework::Megatron)
        return;
    const bool deepep = resolvedMoeDispatcher(plan) == MoeDispatcher::DeepEP;
    const double preprocess = deepep ? 0 : 14;
    const double router = (tr.moe_router_fusion ? 31 : 72) - 14;
    const unsigned scope = tr.cuda_graph_scope;
    const bool whole =
        tr.cuda_graphs == CudaGraphs::Full ||
        (tr.cuda_graphs == CudaGraphs::Layers && (scope == 0 || (scope & kGraphMoe) != 0));
    const bool routerGraphed =
        whole || (tr.cuda_graphs == CudaGraphs::Layers && (scope & kGraphMoeRouter) != 0);
    const bool preprocessGraphed =
        whole || (tr.cuda_graphs == CudaGraphs::Layers && (scope & kGraphMoePreprocess) != 0);
    *(routerGraphed ? graphed : host) += router;
    *(preprocessGraphed ? graphed : host) += preprocess;
}

} // namespace

void setMoeContext(const Plan& plan, const GpuSpec& gpu, double gemmReference,
                   layercost::Context& c)
{
    const ModelSpec& m = plan.model;
    c.moeLoad = m.isMoe() ? moeLoad(m, plan.figures.moe_imbalance.value) : 1;
    // Grouped expert GEMMs at the GPU's measured rate (its share of the 16-bit datasheet peak).
    const double bf16Peak = gpu.peakTflops(Dtype::BF16);
    c.groupedShare = m.isMoe() && gpu.kernels.grouped_gemm_tflops > 0 && bf16Peak > 0
                         ? std::min(1.0, gpu.kernels.grouped_gemm_tflops / bf16Peak)
                         : 0;
    c.groupedFp8Share =
        c.fp8 ? groupedFp8Share(gpu, c.groupedShare, gemmReference, c.fp8Reference) : 0;
    c.groupedPairBytes = m.isMoe() ? gpu.kernels.grouped_pair_bytes : 0;
    routerBlockKernels(plan, &c.routerHostKernels, &c.routerGraphKernels);
}

} // namespace paraplan
