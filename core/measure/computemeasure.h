#pragma once

// Compute measured by paraplan-probe (protocol 2): cuBLASLt GEMMs, unfused attention, HBM
// stream kernels and the sustained SM clock; and the engine figures they can replace.

#include <string>
#include <vector>

class QJsonObject;

namespace paraplan {

struct GemmMeasurement
{
    int device = 0;
    std::string dtype; ///< "bf16", "fp16", "fp8"
    std::string shape; ///< "grid" or the plan's GEMM ("qkv", "attn_proj", "mlp_up", ...)
    double m = 0;
    double n = 0;
    double k = 0;
    double batch = 1;
    double time_s = 0;
    double tflops = 0;
    double sm_clock_mhz = 0; ///< mean while it ran; 0 unknown
};

struct AttentionMeasurement
{
    int device = 0;
    std::string dtype;
    double batch_heads = 0;
    double seq = 0;
    double head_dim = 0;
    double fwd_time_s = 0;
    double bwd_time_s = 0;
    double fwd_tflops = 0;
    double bwd_tflops = 0;
};

struct HbmMeasurement
{
    int device = 0;
    std::string kernel; ///< "copy" or "triad"
    double bytes = 0;   ///< read + written
    double time_s = 0;
    double GBps = 0;
};

struct ClockMeasurement
{
    int device = 0;
    double sm_mhz_mean = 0;
    double sm_mhz_min = 0;
    double sm_mhz_max = 0; ///< the rated maximum
    int samples = 0;
};

struct ComputeMeasurements
{
    std::vector<GemmMeasurement> gemms;
    std::vector<AttentionMeasurement> attention;
    std::vector<HbmMeasurement> hbm;
    std::vector<ClockMeasurement> clocks;

    bool empty() const { return gemms.empty() && attention.empty() && hbm.empty(); }
};

/// Reads a "gemm", "attention", "hbm" or "clock" line into `out`. False with `problem` set when
/// the record lacks a usable shape or time (the line is then kept as a warning, not applied).
bool readComputeRecord(const QJsonObject& o, const std::string& type, ComputeMeasurements* out,
                       std::string* problem);

/// The best GEMM rate (TFLOP/s) per device in `dtype` over the grid shapes at least `minSide`
/// on every side; the median over devices (the engine plans with a typical GPU). 0: none.
double measuredGemmTflops(const ComputeMeasurements& c, const std::string& dtype, double minSide,
                          const GemmMeasurement** best);

} // namespace paraplan
