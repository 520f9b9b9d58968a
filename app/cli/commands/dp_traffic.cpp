// paraplan-cli dp-traffic: data-parallel gradient sync bytes per rank under ZeRO 0-3, with
// the model-state memory per GPU.
#include "common.h"

#include "dptraffic.h"
#include "units.h"

namespace paraplan::cli {

using units::formatBytes;
using units::formatNumber;
using units::formatSeconds;

Options dpTrafficOptions()
{
    return {
        valueOption("--params", "P", "Parameters (7e9) whose gradients are synchronized."),
        valueOption("--dtype", "D",
                    "Gradient dtype: fp32, tf32, bf16, fp16 or fp8 (default bf16)."),
        valueOption("--bytes-per-param", "B", "Bytes per gradient element, instead of --dtype."),
        valueOption("--ranks", "N", "Data-parallel ranks."),
        valueOption("--zero", "Z", "ZeRO stage, 0 to 3 (default 0)."),
        valueOption("--bw-GBps", "X",
                    "Bandwidth per rank per direction, GB/s (1e9 B/s): adds the sync time."),
        flagOption("--walkthrough", "The worked derivation instead of the summary."),
        jsonOption(),
    };
}

int runDpTraffic(const Args& args, std::ostream& out)
{
    const double params = args.within("--params", limits::kParams);
    double bytesPerParam = 2;
    if (args.has("--dtype") && args.has("--bytes-per-param"))
        throw UsageError("give --dtype or --bytes-per-param, not both");
    if (args.has("--dtype")) {
        Dtype dtype;
        if (!parseDtype(args.text("--dtype"), &dtype))
            throw UsageError("--dtype: unknown dtype '" + args.text("--dtype") +
                             "' (fp32, tf32, bf16, fp16, fp8)");
        bytesPerParam = (dtype == Dtype::FP32 || dtype == Dtype::TF32) ? 4
                        : dtype == Dtype::FP8                          ? 1
                                                                       : 2;
    }
    if (args.has("--bytes-per-param"))
        bytesPerParam =
            args.within("--bytes-per-param", {"--bytes-per-param", 0, 64, "bytes", true, false});
    const int ranks = static_cast<int>(args.within("--ranks", limits::kRanks));
    const int zero = args.has("--zero") ? args.integer("--zero", 0, 3) : 0;
    const double bw = args.has("--bw-GBps") ? args.within("--bw-GBps", limits::kLinkGBps) : 0;
    const Derivation d = deriveDataParallelTraffic(zero, params, bytesPerParam, ranks, bw);
    if (args.flag("--walkthrough")) {
        out << (args.flag("--json") ? withSchema("paraplan-walkthrough/1", d.toJson())
                                    : d.toText());
        return kExitOk;
    }
    const DataParallelTraffic traffic = dataParallelTraffic(zero, params * bytesPerParam, ranks);
    const double state = zeroModelStateBytesPerGpu(zero, params, ranks);
    if (args.flag("--json")) {
        QJsonObject json{{"zero", zero},
                         {"ranks", ranks},
                         {"gradient_bytes", params * bytesPerParam},
                         {"bytes_per_rank", traffic.wire_bytes_per_rank},
                         {"passes", traffic.passes},
                         {"model_state_bytes_per_gpu", state}};
        if (bw > 0)
            json["sync_time_s"] = traffic.wire_bytes_per_rank / units::bytesPerSecondFromGBps(bw);
        printJson("paraplan-dp-traffic/1", json, out);
        return kExitOk;
    }
    out << "ZeRO " << zero << ", " << ranks << " data-parallel ranks\n"
        << "  gradient bytes P        " << formatBytes(params * bytesPerParam) << "\n"
        << "  bytes per rank per step " << formatBytes(traffic.wire_bytes_per_rank) << "  ("
        << formatNumber(traffic.passes) << "(n-1)/n x P)\n"
        << "  model state per GPU     " << formatBytes(state) << "\n";
    if (bw > 0)
        out << "  sync time at " << formatNumber(bw) << " GB/s  "
            << formatSeconds(traffic.wire_bytes_per_rank / units::bytesPerSecondFromGBps(bw))
            << "\n";
    return kExitOk;
}

} // namespace paraplan::cli
