#include "dptraffic.h"

#include "collectivewalkthrough.h"
#include "units.h"

namespace paraplan {

DataParallelTraffic dataParallelTraffic(int zero_stage, double param_bytes, int ranks)
{
    DataParallelTraffic traffic;
    traffic.passes = zero_stage >= 3 ? 3.0 : 2.0;
    traffic.wire_bytes_per_rank = traffic.passes * (ranks - 1.0) / ranks * param_bytes;
    return traffic;
}

double zeroModelStateBytesPerGpu(int zero_stage, double params, int ranks,
                                 double optimizer_bytes_per_param)
{
    const double K = optimizer_bytes_per_param;
    const double N = ranks;
    switch (zero_stage) {
    case 0:
        return (2 + 2 + K) * params;
    case 1:
        return 4 * params + K * params / N;
    case 2:
        return 2 * params + (2 + K) * params / N;
    default:
        return (2 + 2 + K) * params / N;
    }
}

Derivation deriveDataParallelTraffic(int zero_stage, double params, double bytes_per_param,
                                     int ranks, double bandwidth_GBps)
{
    using units::formatBytes;
    using units::formatNumber;
    Derivation d;
    const double P = params * bytes_per_param;
    const int n = ranks;
    d.title = "Data-parallel sync per step, ZeRO stage " + std::to_string(zero_stage) + ", " +
              formatNumber(params / 1e9) + "B parameters over " + std::to_string(n) + " ranks";
    d.inputs.push_back("parameters = " + formatNumber(params, 4) + " (user entry)");
    d.inputs.push_back("bytes per gradient element = " + formatNumber(bytes_per_param) +
                       " (user entry: dtype)");
    d.inputs.push_back("n = " + std::to_string(n) + " data-parallel ranks (user entry)");
    const char* zeroSource = "formula: Rajbhandari et al. 2020 (ZeRO), section 7";
    d.add("Gradient bytes P", "parameters × bytes per element",
          formatNumber(params, 4) + " × " + formatNumber(bytes_per_param), formatBytes(P), P, "B");
    const DataParallelTraffic traffic = dataParallelTraffic(zero_stage, P, n);
    const std::string passes = zero_stage >= 3 ? "3" : "2";
    d.add("Bytes each rank sends per step",
          zero_stage >= 3 ? "3(n-1)/n × P: reduce-scatter + all-gather of gradients, plus the "
                            "forward all-gather of parameters"
                          : (zero_stage == 0 ? "2(n-1)/n × P: one all-reduce"
                                             : "2(n-1)/n × P: reduce-scatter, optimizer step on "
                                               "the shard, all-gather"),
          passes + " × " + fractionText(n - 1, n) + " × " + formatBytes(P),
          formatBytes(traffic.wire_bytes_per_rank), traffic.wire_bytes_per_rank, "B", zeroSource);
    d.notes.push_back("Large-n shortcut (the usual " + passes + "P): " + passes + " × " +
                      formatBytes(P) + " = " + formatBytes(traffic.passes * P) + ".");
    if (bandwidth_GBps > 0) {
        const double Bps = units::bytesPerSecondFromGBps(bandwidth_GBps);
        d.add("Sync time, bandwidth term", "bytes per rank / B",
              formatBytes(traffic.wire_bytes_per_rank) + " / " + units::formatGBps(Bps),
              units::formatSeconds(traffic.wire_bytes_per_rank / Bps),
              traffic.wire_bytes_per_rank / Bps, "s", "B: user entry");
    }
    const double state = zeroModelStateBytesPerGpu(zero_stage, params, n);
    static const char* kMemoryFormula[4] = {"(2 + 2 + K) × params", "4 × params + K × params / N",
                                            "2 × params + (2 + K) × params / N",
                                            "(2 + 2 + K) × params / N"};
    d.add("Model state per GPU (mixed-precision Adam, K = 12)",
          kMemoryFormula[zero_stage < 0 ? 0 : (zero_stage > 3 ? 3 : zero_stage)],
          "K = 12 bytes (fp32 master, momentum, variance), N = " + std::to_string(n),
          formatBytes(state), state, "B", "formula: Rajbhandari et al. 2020, section 3");
    return d;
}

} // namespace paraplan
