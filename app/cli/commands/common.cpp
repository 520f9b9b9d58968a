#include "common.h"

#include "clusterio.h"
#include "hardware.h"
#include "jsonutil.h"
#include "planio.h"
#include "units.h"

#include <QFileInfo>

#include <QJsonDocument>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace paraplan::cli {

using units::formatBytes;
using units::formatGBps;
using units::formatSeconds;

QCommandLineOption jsonOption()
{
    return flagOption("--json", "JSON instead of text.");
}

Options clusterOptions()
{
    return {
        valueOption("--cluster", "P",
                    "A cluster: a preset (see 'paraplan-cli presets') or a cluster JSON file."),
        valueOption("--nodes", "K", "Nodes in the cluster (chips for a torus)."),
        valueOption("--nodes-per-rack", "R", "Nodes behind one rack switch."),
        valueOption("--oversubscription", "R", "Spine oversubscription, R:1 (1 = non-blocking)."),
        valueOption("--nvswitch-out", "LIST",
                    "What-if: NVSwitch chips out of service, e.g. 0 or 0,2."),
        valueOption("--degrade", "T=F",
                    "What-if: scale tier T (nvlink, pcie, nic, spine, ici) by F in (0, 1]."),
    };
}

void refuseOverwritingInput(const char* option, const std::string& output,
                            const std::vector<std::string>& inputs)
{
    if (output == "-")
        return;
    for (const std::string& input : inputs) {
        std::error_code code;
        if (std::filesystem::equivalent(output, input, code) && !code)
            throw UsageError(std::string(option) + " '" + output + "' is the input file '" + input +
                             "': writing it would lose it; give another file");
        for (const std::string& named : planReferencedFiles(input)) {
            if (std::filesystem::equivalent(output, named, code) && !code)
                throw UsageError(std::string(option) + " '" + output + "' is '" + named +
                                 "', which the plan '" + input +
                                 "' refers to: writing it would lose it (and the plan would "
                                 "no longer open); give another file");
        }
    }
}

ClusterSpec clusterFromArgs(const Args& args)
{
    ClusterOptions options;
    if (args.has("--nodes"))
        options.nodes = static_cast<int>(args.within("--nodes", limits::kNodes));
    if (args.has("--nodes-per-rack"))
        options.nodes_per_rack =
            static_cast<int>(args.within("--nodes-per-rack", limits::kNodesPerRack));
    if (args.has("--oversubscription")) {
        options.spine_oversubscription =
            args.within("--oversubscription", limits::kOversubscription);
    }
    ClusterSpec cluster;
    std::string error;
    requireClusterFileReadable(args.text("--cluster"));
    if (!loadCluster(args.text("--cluster"), options, &cluster, &error, HardwareCatalog::bundled()))
        throw UsageError(error);
    if (args.has("--nvswitch-out")) {
        std::stringstream list(args.text("--nvswitch-out"));
        std::string item;
        while (std::getline(list, item, ',')) {
            const std::optional<double> chip = units::parseNumber(item);
            if (!chip || *chip != std::floor(*chip))
                throw UsageError("--nvswitch-out: '" + item + "' is not a chip index");
            cluster.what_if.nvswitch_chips_out.push_back(static_cast<int>(*chip));
        }
    }
    if (args.has("--degrade")) {
        const std::string spec = args.text("--degrade");
        const size_t eq = spec.find('=');
        const std::optional<double> factor =
            eq == std::string::npos ? std::nullopt : units::parseNumber(spec.substr(eq + 1));
        if (!factor || !(*factor > 0 && *factor <= 1))
            throw UsageError("--degrade: expected TIER=FACTOR with FACTOR in (0, 1], got '" + spec +
                             "'");
        const std::string tier = spec.substr(0, eq);
        FailureWhatIf& w = cluster.what_if;
        double* target = tier == "nvlink"  ? &w.nvlink_factor
                         : tier == "pcie"  ? &w.pcie_factor
                         : tier == "nic"   ? &w.nic_factor
                         : tier == "spine" ? &w.spine_factor
                         : tier == "ici"   ? &w.ici_factor
                                           : nullptr;
        if (!target)
            throw UsageError("--degrade: unknown tier '" + tier +
                             "' (nvlink, pcie, nic, spine, ici)");
        *target = *factor;
    }
    const std::vector<std::string> problems = validateCluster(cluster, HardwareCatalog::bundled());
    if (!problems.empty())
        throw UsageError(problems.front());
    return cluster;
}

Options collectiveOptionList(bool withBytes)
{
    Options options = {
        valueOption("--op", "OP",
                    "The collective: all_reduce, reduce_scatter, all_gather, broadcast, reduce, "
                    "all_to_all or send_recv."),
    };
    if (withBytes)
        options.push_back(valueOption(
            "--bytes", "B",
            "S as nccl-tests counts it: the all_reduce buffer, the whole input of reduce_scatter, "
            "the whole output of all_gather, one rank's send buffer of all_to_all. Accepts 141e9, "
            "141GB, 400MB, 400MiB, 16GiB (GB = 1e9 bytes)."));
    for (QCommandLineOption option : {
             valueOption("--ranks", "N", "Ranks in the group (send_recv: 2)."),
             valueOption("--stride", "S", "Rank i sits on GPU i*S (default 1: consecutive GPUs)."),
             valueOption("--algo", "A",
                         "ring, tree, hierarchical, torus, in-switch (NVLS/SHARP), direct or auto "
                         "(default: the cheapest that applies, as NCCL does)."),
             valueOption("--bw-GBps", "X",
                         "One flat link instead of a cluster: its bandwidth per rank per "
                         "direction, GB/s (1e9 B/s)."),
             valueOption("--latency-us", "Y",
                         "The flat link's latency per ring step, microseconds (default 0: the "
                         "bandwidth-only textbook form)."),
         })
        options.push_back(option);
    for (const QCommandLineOption& option : clusterOptions())
        options.push_back(option);
    if (withBytes)
        options.push_back(valueOption("--measured-time", "T",
                                      "Instead of modelling, turn a measured time (2.16ms) into "
                                      "algbw and busbw with nccl-tests' definitions."));
    return options;
}

CollectiveSetup collectiveFromArgs(const Args& args, bool needBytes)
{
    CollectiveSetup setup;
    CollectiveRequest& request = setup.request;
    const std::string opText = args.text("--op");
    if (!parseCollectiveOp(opText, &request.op))
        throw UsageError("--op: unknown collective '" + opText +
                         "' (all_reduce, reduce_scatter, all_gather, broadcast, reduce, "
                         "all_to_all, send_recv)");
    if (needBytes)
        request.bytes = args.bytes("--bytes");
    request.ranks = static_cast<int>(args.within("--ranks", limits::kRanks));
    if (request.ranks < 2)
        throw UsageError("--ranks: a collective needs at least 2 ranks");
    if (args.has("--stride"))
        request.stride = static_cast<int>(args.within("--stride", limits::kRanks));
    if (args.has("--algo")) {
        const std::string algo = args.text("--algo");
        if (!parseAlgorithm(algo, &request.algorithm))
            throw UsageError("--algo: unknown algorithm '" + algo +
                             "' (ring, tree, hierarchical, torus, in-switch, direct, auto)");
    }
    const bool flat = args.has("--bw-GBps");
    const bool cluster = args.has("--cluster");
    if (flat == cluster)
        throw UsageError("give either --bw-GBps (one flat link) or --cluster (a preset or file)");
    if (flat) {
        for (const char* clusterOnly :
             {"--nodes", "--nodes-per-rack", "--oversubscription", "--nvswitch-out", "--degrade"}) {
            if (args.has(clusterOnly))
                throw UsageError(std::string(clusterOnly) + " needs --cluster");
        }
        double latency = 0;
        if (args.has("--latency-us")) {
            latency = args.within("--latency-us", limits::kLatencyUs);
        }
        setup.model = std::make_unique<CollectiveModel>(
            CollectiveModel::flatLink(args.within("--bw-GBps", limits::kLinkGBps), latency));
        setup.sources.link = "user entry: --bw-GBps " + args.text("--bw-GBps");
        setup.sources.latency = args.has("--latency-us")
                                    ? "user entry: --latency-us " + args.text("--latency-us")
                                    : "default: no latency term (the bandwidth-only textbook form)";
    } else {
        if (args.has("--latency-us"))
            throw UsageError("--latency-us applies to a flat link (--bw-GBps); a cluster's "
                             "latencies come from its links");
        setup.model = std::make_unique<CollectiveModel>(clusterFromArgs(args));
    }
    setup.sources.bytes = "user entry: --bytes " + (needBytes ? args.text("--bytes") : "");
    setup.sources.ranks = "user entry: --ranks " + args.text("--ranks");
    return setup;
}

std::string withSchema(const char* schema, const std::string& jsonText)
{
    // QJsonDocument writes an object's keys sorted; the schema goes first by hand, as the
    // indented form's first line after "{".
    const std::string line = std::string("    \"schema\": \"") + schema + "\"";
    if (jsonText.rfind("{\n}", 0) == 0)
        return "{\n" + line + "\n}\n";
    if (jsonText.rfind("{\n", 0) != 0)
        throw std::logic_error("withSchema: not an indented JSON object");
    return "{\n" + line + ",\n" + jsonText.substr(2);
}

void printJson(const char* schema, const QJsonObject& object, std::ostream& out)
{
    out << withSchema(schema, QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString());
}

void requireReadable(const std::string& path)
{
    if (path.empty())
        throw UsageError("an empty file name was given");
    // By the name's bytes (a Latin-1 name is no UTF-8 QString).
    std::error_code code;
    const std::filesystem::file_status status = std::filesystem::status(path, code);
    std::string reason;
    if (!std::filesystem::exists(status))
        reason = std::strerror(code && code.value() != ENOENT ? code.value() : ENOENT);
    else if (std::filesystem::is_directory(status))
        reason = std::strerror(EISDIR);
    else if (::access(path.c_str(), R_OK) != 0)
        reason = std::strerror(EACCES);
    if (!reason.empty())
        throw IoError("cannot read '" + path + "': " + reason);
}

void requireClusterFileReadable(const std::string& value)
{
    for (const ClusterPresetInfo& preset : clusterPresets()) {
        if (preset.id == value)
            return;
    }
    const bool looksLikeAFile = value.find('/') != std::string::npos ||
                                (value.size() > 5 && value.substr(value.size() - 5) == ".json") ||
                                QFileInfo::exists(QString::fromStdString(value));
    if (looksLikeAFile)
        requireReadable(value);
}

void writeOutputFile(const std::string& path, const std::string& text)
{
    std::string error;
    if (!json::writeFileAtomically(path, text, &error))
        throw IoError(error);
}

void savePlanFile(const std::string& path, const Plan& plan)
{
    std::string error;
    if (!savePlan(path, plan, &error, HardwareCatalog::bundled()))
        throw IoError(error);
}

void saveClusterFileOrThrow(const std::string& path, const ClusterSpec& cluster)
{
    std::string error;
    if (!saveClusterFile(path, cluster, &error))
        throw IoError(error);
}

int measured(const Args& args, std::ostream& out, bool walkthrough)
{
    CollectiveOp op;
    if (!parseCollectiveOp(args.text("--op"), &op))
        throw UsageError("--op: unknown collective '" + args.text("--op") + "'");
    const double bytes = args.bytes("--bytes");
    const int ranks = static_cast<int>(args.within("--ranks", limits::kRanks));
    if (ranks < 2)
        throw UsageError("--ranks: a collective needs at least 2 ranks");
    std::string error;
    const std::optional<double> time = units::parseSeconds(args.text("--measured-time"), &error);
    if (!time)
        throw UsageError("--measured-time: " + error);
    if (auto problem = limits::check(limits::kMeasuredSeconds, *time, "--measured-time"))
        throw UsageError(*problem);
    for (const char* modelOnly : {"--bw-GBps", "--cluster", "--algo"}) {
        if (args.has(modelOnly))
            throw UsageError(std::string("--measured-time reports a measurement; ") + modelOnly +
                             " does not apply");
    }
    const Derivation derivation = deriveMeasuredBandwidth(op, bytes, ranks, *time);
    if (args.flag("--json")) {
        if (walkthrough) {
            out << withSchema("paraplan-walkthrough/1", derivation.toJson());
        } else {
            const MeasuredBandwidth bw = bandwidthFromMeasuredTime(op, bytes, ranks, *time);
            printJson("paraplan-collective-measured/1",
                      QJsonObject{{"op", collectiveOpName(op)},
                                  {"bytes", bytes},
                                  {"ranks", ranks},
                                  {"time_s", *time},
                                  {"algbw_GBps", units::toGBps(bw.algbw_Bps)},
                                  {"busbw_GBps", units::toGBps(bw.busbw_Bps)},
                                  {"origin", "measurement"}},
                      out);
        }
    } else if (walkthrough) {
        out << derivation.toText();
    } else {
        const MeasuredBandwidth bw = bandwidthFromMeasuredTime(op, bytes, ranks, *time);
        out << collectiveOpName(op) << "  " << formatBytes(bytes) << "  " << ranks
            << " ranks  measured " << formatSeconds(*time) << "\n"
            << "  algbw  " << formatGBps(bw.algbw_Bps) << "\n"
            << "  busbw  " << formatGBps(bw.busbw_Bps) << "\n";
    }
    return kExitOk;
}

Plan planFromFile(const std::string& path)
{
    requireReadable(path);
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(path, &plan, &errors, HardwareCatalog::bundled())) {
        // The reader's messages about the file itself already name it.
        const std::string& first = errors.front();
        std::string message = first.find("'" + path + "'") != std::string::npos || path.empty()
                                  ? first
                                  : path + ": " + first;
        if (errors.size() > 1)
            message += " (and " + std::to_string(errors.size() - 1) + " more: " + errors[1] +
                       (errors.size() > 2 ? ", ..." : "") + ")";
        throw UsageError(message);
    }
    return plan;
}

StepCost evaluatePlan(const Plan& plan, const std::string& path)
{
    const StepEngine engine(plan.cluster, HardwareCatalog::bundled());
    return requireCosted(engine.evaluate(plan), path);
}

const StepCost& requireCosted(const StepCost& cost, const std::string& path)
{
    if (!cost.ok) {
        if (cost.issues.empty()) // every rejection names its rule; say so rather than crash
            throw UsageError((path.empty() ? std::string() : path + ": ") +
                             "plan rejected: the plan could not be costed");
        std::string message = (path.empty() ? std::string() : path + ": ") +
                              "plan rejected: " + cost.issues.front().message + " [rule " +
                              cost.issues.front().rule + "]";
        if (cost.issues.size() > 1)
            message += " (and " + std::to_string(cost.issues.size() - 1) + " more)";
        throw UsageError(message);
    }
    return cost;
}

} // namespace paraplan::cli
