// The engine figures a probe run's compute records replace: the GEMM share of peak and the
// achievable share of HBM bandwidth.
#include "measurement.h"
#include "plan.h"
#include "units.h"

#include <algorithm>

namespace paraplan {

namespace {

// The probe measures GEMMs in the 16- and 8-bit types; fp32 and tf32 plans have none.
const char* dtypeRecordName(Dtype dtype)
{
    return dtype == Dtype::FP32 || dtype == Dtype::TF32 ? nullptr : dtypeName(dtype);
}

std::string deviceCount(size_t n)
{
    return n == 1 ? "1 GPU" : std::to_string(n) + " GPUs";
}

} // namespace

std::vector<MeasuredFigure> proposeComputeFigures(const MeasurementRun& run, const Plan& plan,
                                                  const HardwareCatalog& catalog)
{
    std::vector<MeasuredFigure> out;
    const GpuSpec* gpu = catalog.gpu(plan.cluster.gpu_id);
    if (!gpu || run.compute.empty())
        return out;
    const ComputeMeasurements& c = run.compute;
    // GEMMs: the best grid shape of at least 4096 a side in the plan's dtype, the median GPU.
    const char* dtype = dtypeRecordName(plan.training.dtype);
    const double peak = gpu->peakTflops(plan.training.dtype);
    const GemmMeasurement* best = nullptr;
    const double tflops = dtype ? measuredGemmTflops(c, dtype, 4096, &best) : 0;
    // A rate above the datasheet's peak is a broken record (or the wrong GPU), not a figure.
    if (tflops > 0 && peak > 0 && best && tflops <= 1.02 * peak) {
        std::vector<int> devices;
        for (const GemmMeasurement& g : c.gemms)
            if (std::find(devices.begin(), devices.end(), g.device) == devices.end())
                devices.push_back(g.device);
        std::string why =
            "cuBLASLt " + std::string(dtype) + " GEMM " + units::formatNumber(best->m, 6) + "x" +
            units::formatNumber(best->n, 6) + "x" + units::formatNumber(best->k, 6) + ": " +
            units::formatNumber(tflops, 4) + " of " + units::formatNumber(peak, 4) +
            " TFLOP/s (best grid shape, median of " + deviceCount(devices.size()) + ")";
        if (best->sm_clock_mhz > 0)
            why +=
                " at a sustained " + units::formatNumber(best->sm_clock_mhz, 4) + " MHz SM clock";
        out.push_back({"gemm_peak_fraction", std::min(1.0, tflops / peak),
                       plan.figures.gemm_peak_fraction.value, why, run.describe()});
    }
    // HBM: the best triad (STREAM's a = b + s c) over the GPUs, read + written bytes.
    double bestHbm = 0;
    for (const HbmMeasurement& h : c.hbm)
        if (h.kernel == "triad")
            bestHbm = std::max(bestHbm, h.GBps);
    if (bestHbm > 0 && gpu->hbm_GBps > 0 && bestHbm <= 1.02 * gpu->hbm_GBps)
        out.push_back({"hbm_fraction", std::min(1.0, bestHbm / gpu->hbm_GBps),
                       plan.figures.hbm_fraction.value,
                       "STREAM triad " + units::formatNumber(bestHbm, 4) + " of " +
                           units::formatNumber(gpu->hbm_GBps, 4) + " GB/s",
                       run.describe()});
    return out;
}

} // namespace paraplan
