// paraplan-cli collective: the cost of one collective, or algbw and busbw from a measured time.
#include "common.h"

#include "costjson.h"
#include "units.h"

#include <iomanip>

namespace paraplan::cli {

using units::formatBytes;
using units::formatGBps;
using units::formatSeconds;

Options collectiveOptions()
{
    Options options = collectiveOptionList(true);
    options.push_back(jsonOption());
    return options;
}

int runCollective(const Args& args, std::ostream& out)
{
    if (args.has("--measured-time"))
        return measured(args, out, false);
    CollectiveSetup setup = collectiveFromArgs(args);
    const CollectiveResult r = setup.model->evaluate(setup.request);
    if (!r.ok)
        throw UsageError(r.error);
    if (args.flag("--json")) {
        printJson("paraplan-collective/1", collectiveResultJson(r), out);
        return kExitOk;
    }
    out << collectiveOpName(r.op) << "  " << formatBytes(r.bytes) << "  " << r.ranks
        << " ranks  on " << setup.model->cluster().name;
    if (setup.model->isFlatLink())
        out << " of " << formatGBps(setup.model->figures().flat_Bps) << " per direction";
    out << "\n";
    auto row = [&](const char* label, const std::string& value) {
        out << "  " << std::left << std::setw(16) << label << value << "\n";
    };
    row("algorithm",
        std::string(algorithmName(r.algorithm)) +
            (setup.model->isFlatLink() ? "" : std::string(" (") + protocolName(r.protocol) + ")"));
    row("time", formatSeconds(r.time_s) + "  (latency " + formatSeconds(r.latency_s) +
                    " + bandwidth " + formatSeconds(r.bandwidth_time_s) + ")");
    row("algbw", formatGBps(r.algbw_Bps));
    row("busbw", formatGBps(r.busbw_Bps));
    row("bytes per rank", formatBytes(r.wire_bytes_per_rank));
    row("bottleneck", std::string(tierName(r.bottleneck)) + " at " + formatGBps(r.bottleneck_Bps));
    row("regime", regimeName(r.regime));
    if (!setup.model->isFlatLink() && !setup.model->cluster().is_torus)
        row("placement", std::to_string(r.gpus_per_node_in_group) + " GPU(s)/node on " +
                             std::to_string(r.nodes_spanned) + " node(s), " +
                             std::to_string(r.racks_spanned) + " rack(s)");
    return kExitOk;
}

} // namespace paraplan::cli
