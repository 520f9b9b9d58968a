#include "computemeasure.h"

#include "inputlimits.h"

#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace paraplan {

namespace {

using limits::Range;

// The ranges a compute record is read against. A GEMM side or a sequence up to 2^24 (16.7M, the
// largest model.max_positions of docs/limits.md); a time from 1 ns to one day; a rate up to
// 1 EFLOP/s per GPU, over 50x the 18 PFLOP/s of a B200's sparse FP4 (NVIDIA HGX B200
// datasheet: 144 PFLOPS for 8 GPUs); an HBM rate up to 100 TB/s (limits::kLinkGBps), over 12x
// the B200's 8 TB/s (same datasheet); an SM clock up to 10 GHz.
constexpr Range kSide{"", 1, 1 << 24, ""};
constexpr Range kHeadDim{"head_dim", 1, limits::kHeadDim.max, ""};
constexpr Range kTimeS = limits::kMeasuredSeconds;
constexpr Range kTflops{"", 0, 1e6, "TFLOP/s", true, false};
constexpr Range kHbmGBps{"", 0, limits::kLinkGBps.max, "GB/s", true, false};
constexpr Range kClockMhz{"", 0, 1e4, "MHz", false, false};

// The first of `checks` (field, range, value) that fails, as limits::check words it.
bool inRanges(std::initializer_list<std::tuple<const char*, Range, double>> checks,
              const char* what, std::string* problem)
{
    for (const auto& [field, range, value] : checks) {
        if (auto text = limits::check(range, value, field)) {
            *problem = std::string(what) + " (" + *text + ")";
            return false;
        }
    }
    return true;
}

} // namespace

bool readComputeRecord(const QJsonObject& o, const std::string& type, ComputeMeasurements* out,
                       std::string* problem)
{
    const int device = o.value("device").toInt(0);
    if (type == "gemm") {
        GemmMeasurement g;
        g.device = device;
        g.dtype = o.value("dtype").toString().toStdString();
        g.shape = o.value("shape").toString("grid").toStdString();
        g.m = o.value("m").toDouble();
        g.n = o.value("n").toDouble();
        g.k = o.value("k").toDouble();
        g.batch = o.value("batch").toDouble(1);
        g.time_s = o.value("time_s").toDouble();
        g.sm_clock_mhz = o.value("sm_clock_mhz").toDouble();
        if (g.dtype.empty()) {
            *problem = "a gemm line without a dtype";
            return false;
        }
        if (!inRanges({{"m", kSide, g.m},
                       {"n", kSide, g.n},
                       {"k", kSide, g.k},
                       {"batch", kSide, g.batch},
                       {"time_s", kTimeS, g.time_s}},
                      "a gemm line without a usable shape, time or clock", problem))
            return false;
        // The rate follows from the shape and the time; the line's own figure is not trusted.
        g.tflops = 2 * g.m * g.n * g.k * g.batch / g.time_s / 1e12;
        if (!inRanges({{"the rate its shape and time imply", kTflops, g.tflops},
                       {"sm_clock_mhz", kClockMhz, g.sm_clock_mhz}},
                      "a gemm line without a usable shape, time or clock", problem))
            return false;
        out->gemms.push_back(g);
        return true;
    }
    if (type == "attention") {
        AttentionMeasurement a;
        a.device = device;
        a.dtype = o.value("dtype").toString().toStdString();
        a.batch_heads = o.value("batch_heads").toDouble();
        a.seq = o.value("seq").toDouble();
        a.head_dim = o.value("head_dim").toDouble();
        a.fwd_time_s = o.value("fwd_time_s").toDouble();
        a.bwd_time_s = o.value("bwd_time_s").toDouble();
        if (!inRanges({{"batch_heads", kSide, a.batch_heads},
                       {"seq", kSide, a.seq},
                       {"head_dim", kHeadDim, a.head_dim},
                       {"fwd_time_s", kTimeS, a.fwd_time_s},
                       {"bwd_time_s", kTimeS, a.bwd_time_s}},
                      "an attention line without a usable shape or times", problem))
            return false;
        const double flops = 4 * a.batch_heads * a.seq * a.seq * a.head_dim;
        a.fwd_tflops = flops / a.fwd_time_s / 1e12;
        a.bwd_tflops = 2 * flops / a.bwd_time_s / 1e12;
        if (!inRanges({{"the forward rate its shape and time imply", kTflops, a.fwd_tflops},
                       {"the backward rate its shape and time imply", kTflops, a.bwd_tflops}},
                      "an attention line without a usable shape or times", problem))
            return false;
        out->attention.push_back(a);
        return true;
    }
    if (type == "hbm") {
        HbmMeasurement h;
        h.device = device;
        h.kernel = o.value("kernel").toString().toStdString();
        h.bytes = o.value("bytes").toDouble();
        h.time_s = o.value("time_s").toDouble();
        if (h.kernel.empty()) {
            *problem = "an hbm line without a kernel";
            return false;
        }
        if (!inRanges({{"bytes", limits::kBytes, h.bytes}, {"time_s", kTimeS, h.time_s}},
                      "an hbm line without usable bytes or a time", problem))
            return false;
        h.GBps = h.bytes / h.time_s / 1e9;
        if (!inRanges({{"the rate its bytes and time imply", kHbmGBps, h.GBps}},
                      "an hbm line without usable bytes or a time", problem))
            return false;
        out->hbm.push_back(h);
        return true;
    }
    if (type == "clock") {
        ClockMeasurement c;
        c.device = device;
        c.sm_mhz_mean = o.value("sm_mhz_mean").toDouble();
        c.sm_mhz_min = o.value("sm_mhz_min").toDouble();
        c.sm_mhz_max = o.value("sm_mhz_max").toDouble();
        c.samples = o.value("samples").toInt();
        if (!inRanges({{"sm_mhz_mean", kClockMhz, c.sm_mhz_mean},
                       {"sm_mhz_min", kClockMhz, c.sm_mhz_min},
                       {"sm_mhz_max", kClockMhz, c.sm_mhz_max}},
                      "a clock line without usable clocks", problem))
            return false;
        out->clocks.push_back(c);
        return true;
    }
    *problem = "not a compute record: " + type;
    return false;
}

double measuredGemmTflops(const ComputeMeasurements& c, const std::string& dtype, double minSide,
                          const GemmMeasurement** best)
{
    std::map<int, const GemmMeasurement*> perDevice;
    for (const GemmMeasurement& g : c.gemms) {
        if (g.dtype != dtype || g.shape != "grid" || std::min({g.m, g.n, g.k}) < minSide)
            continue;
        const GemmMeasurement*& slot = perDevice[g.device];
        if (!slot || g.tflops > slot->tflops)
            slot = &g;
    }
    if (perDevice.empty())
        return 0;
    std::vector<const GemmMeasurement*> rates;
    for (const auto& entry : perDevice)
        rates.push_back(entry.second);
    std::sort(rates.begin(), rates.end(), [](const GemmMeasurement* a, const GemmMeasurement* b) {
        return a->tflops < b->tflops;
    });
    const GemmMeasurement* median = rates[(rates.size() - 1) / 2];
    if (best)
        *best = median;
    return median->tflops;
}

} // namespace paraplan
