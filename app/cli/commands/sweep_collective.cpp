// paraplan-cli sweep-collective: one collective over message sizes, the data behind the
// bandwidth-vs-message-size plot.
#include "common.h"

#include "costjson.h"
#include "csv.h"
#include "units.h"

#include <QJsonArray>

#include <cmath>
#include <iomanip>

namespace paraplan::cli {

Options sweepCollectiveOptions()
{
    Options options = collectiveOptionList(false);
    for (QCommandLineOption option : {
             valueOption("--min-bytes", "B", "The smallest message (default 1KB)."),
             valueOption("--max-bytes", "B", "The largest message (default 16.8GB = 1KB x 2^24)."),
             valueOption("--factor", "F", "Each message this many times the last (default 2)."),
             flagOption("--csv", "CSV (the default): one row per message size."),
             flagOption("--json", "JSON instead of CSV."),
         })
        options.push_back(option);
    return options;
}

int runSweepCollective(const Args& args, std::ostream& out)
{
    CollectiveSetup setup = collectiveFromArgs(args, false);
    const double minBytes = args.has("--min-bytes") ? args.bytes("--min-bytes") : 1e3;
    // 1 KB x 2^24 = 16.8 GB: the doubling sweep reaches past 16 GB.
    const double maxBytes = args.has("--max-bytes") ? args.bytes("--max-bytes") : 1e3 * 16777216.0;
    const double factor = args.has("--factor") ? args.number("--factor") : 2.0;
    if (!(factor > 1.0))
        throw UsageError("--factor must be greater than 1");
    if (maxBytes < minBytes)
        throw UsageError("--max-bytes must not be below --min-bytes");
    if (std::log(maxBytes / minBytes) / std::log(factor) > 10000)
        throw UsageError("the sweep would have more than 10,000 sizes; raise --factor");
    if (args.flag("--json") && args.flag("--csv"))
        throw UsageError("choose one of --json and --csv");
    QJsonArray rows;
    const bool json = args.flag("--json");
    if (!json)
        out << csv::record({"bytes", "time_s", "algbw_GBps", "busbw_GBps", "algorithm", "protocol",
                            "bottleneck", "regime"});
    for (double bytes = minBytes; bytes <= maxBytes * (1 + 1e-12); bytes *= factor) {
        setup.request.bytes = std::round(bytes);
        const CollectiveResult r = setup.model->evaluate(setup.request);
        if (!r.ok)
            throw UsageError(r.error);
        if (json) {
            rows.append(collectiveResultJson(r));
        } else {
            out << csv::record({csv::number(r.bytes, 12), csv::number(r.time_s, 6),
                                csv::number(units::toGBps(r.algbw_Bps), 6),
                                csv::number(units::toGBps(r.busbw_Bps), 6),
                                algorithmName(r.algorithm), protocolName(r.protocol),
                                tierName(r.bottleneck), regimeName(r.regime)});
        }
    }
    if (json)
        printJson("paraplan-sweep-collective/1",
                  QJsonObject{{"op", collectiveOpName(setup.request.op)},
                              {"ranks", setup.request.ranks},
                              {"cluster", QString::fromStdString(setup.model->cluster().name)},
                              {"points", rows}},
                  out);
    return kExitOk;
}

} // namespace paraplan::cli
