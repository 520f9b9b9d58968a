#include "computemeasure.h"

#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <map>

namespace paraplan {

namespace {

bool positive(double v)
{
    return std::isfinite(v) && v > 0;
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
        if (!positive(g.m) || !positive(g.n) || !positive(g.k) || !positive(g.batch) ||
            !positive(g.time_s) || g.dtype.empty()) {
            *problem = "a gemm line without a dtype, a shape or a positive time";
            return false;
        }
        // The rate follows from the shape and the time; the line's own figure is not trusted.
        g.tflops = 2 * g.m * g.n * g.k * g.batch / g.time_s / 1e12;
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
        if (!positive(a.batch_heads) || !positive(a.seq) || !positive(a.head_dim) ||
            !positive(a.fwd_time_s) || !positive(a.bwd_time_s)) {
            *problem = "an attention line without a shape or positive times";
            return false;
        }
        const double flops = 4 * a.batch_heads * a.seq * a.seq * a.head_dim;
        a.fwd_tflops = flops / a.fwd_time_s / 1e12;
        a.bwd_tflops = 2 * flops / a.bwd_time_s / 1e12;
        out->attention.push_back(a);
        return true;
    }
    if (type == "hbm") {
        HbmMeasurement h;
        h.device = device;
        h.kernel = o.value("kernel").toString().toStdString();
        h.bytes = o.value("bytes").toDouble();
        h.time_s = o.value("time_s").toDouble();
        if (!positive(h.bytes) || !positive(h.time_s) || h.kernel.empty()) {
            *problem = "an hbm line without a kernel, bytes or a positive time";
            return false;
        }
        h.GBps = h.bytes / h.time_s / 1e9;
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
        if (!(c.sm_mhz_mean >= 0) || !std::isfinite(c.sm_mhz_mean)) {
            *problem = "a clock line without a usable mean";
            return false;
        }
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
