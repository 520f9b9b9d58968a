#include "clicommands.h"

#include "calibration.h"
#include "clusterio.h"
#include "collectivemodel.h"
#include "collectivewalkthrough.h"
#include "costjson.h"
#include "dptraffic.h"
#include "hardware.h"
#include "measurement.h"
#include "modelio.h"
#include "paraplan_version.h"
#include "planio.h"
#include "search.h"
#include "stepmodel.h"
#include "stepwalkthrough.h"
#include "topologyimport.h"
#include "units.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <iomanip>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace paraplan::cli {
namespace {

using units::formatBytes;
using units::formatGBps;
using units::formatNumber;
using units::formatSeconds;

// A bad argument: reported as one "error: ..." line with exit code 2.
struct UsageError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

const char* kHelp = R"(paraplan-cli: the Paraplan cost model, headless.

Usage: paraplan-cli COMMAND [OPTIONS]

Commands
  collective        Cost of one collective on a flat link or a cluster.
  sweep-collective  The same over message sizes (1 KB to 16 GB): the data behind the
                    bandwidth-vs-message-size plot. CSV by default, --json for JSON.
  walkthrough       A collective (or a measured time) explained as a worked derivation.
  dp-traffic        Data-parallel gradient sync bytes per rank under ZeRO 0-3, with the
                    model-state memory per GPU.
  evaluate PLAN     What one training step of a plan costs: breakdown, collectives,
                    memory per pipeline stage, MFU, tokens/s, time and cost to train.
  walkthrough PLAN  The same as a worked derivation, figure by figure.
  cliffs PLAN       The bandwidth cliffs the window plots: tokens/s against TP, bus
                    bandwidth against message size per tier, step time against GPU count,
                    what-ifs; --json or --csv.
  search PLAN       Every valid layout of the plan's model, cluster and global batch
                    (tp, pp, dp, cp, ep, ZeRO, sequence parallel, recompute, interleave,
                    micro-batch), ranked: --objective step-time|time-to-train|cost|
                    tokens-per-gpu, --top N, --threads K, --json; constraints --max-tp N,
                    --pp-across-nodes, --min-headroom SHARE, --micro-batch N;
                    --tokens-per-step T sets the global batch to T / seq_len sequences.
  report PLAN -o FILE.pdf [--paper a4|letter]
                    The plan report as PDF: headline figures, cluster, step breakdown,
                    collectives, memory per stage, bandwidth plots, derivation, sources.
                    --csv writes its tables as CSV, --json the step cost as JSON.
  validate [FILE...] The engine against published measurements, every row through the
                    plan-file path: Korthikanti et al. 2022 (A100, Megatron-LM), torchtitan
                    2024 (FSDP2, A100 and H100), NeMo 2024 (H100, 3D parallel); --json.
  import-measurements FILE
                    Read a probe run (JSON Lines), an nccl-tests log or its -J JSON: points,
                    alpha-beta fits per collective, copies; with --cluster, the assumed
                    figures the run would replace.
  model             A model preset (--preset ID) or Hugging Face config (--hf-config FILE):
                    architecture, parameters, FLOPs per token.
  presets           GPU, interconnect and cluster presets with their sources.
  export-cluster    Write a cluster preset (with options applied) as a cluster JSON file.
  import-topology FILE
                    Read 'nvidia-smi topo -m' output or an NCCL topology XML dump into a
                    cluster file (-o FILE; JSON on stdout without it). What the file cannot
                    tell is given: --gpu ID, --nic ID, --nodes N, --nodes-per-rack R,
                    --oversubscription R.
  help              This text.

Collective options
  --op OP              all_reduce, reduce_scatter, all_gather, broadcast, reduce,
                       all_to_all, send_recv
  --bytes B            S as nccl-tests counts it: the all_reduce buffer, the whole input of
                       reduce_scatter, the whole output of all_gather, one rank's send buffer
                       of all_to_all. Accepts 141e9, 141GB, 400MB, 400MiB, 16GiB.
  --ranks N            ranks in the group (send_recv: 2)
  --stride S           rank i sits on GPU i*S (default 1: consecutive GPUs)
  --algo A             ring, tree, hierarchical, torus, in-switch (NVLS/SHARP), direct, auto
                       (default auto: the cheapest that applies, as NCCL does)
  One flat link:
  --bw-GBps X          bandwidth per rank per direction, GB/s (1e9 B/s)
  --latency-us Y       latency per ring step (default 0, as the seed's worked examples)
  Or a cluster:
  --cluster P          a preset (see 'presets') or a cluster JSON file
  --nodes K            nodes (chips for a torus)
  --nodes-per-rack R   nodes behind one rack switch
  --oversubscription R spine oversubscription, R:1 (1 = non-blocking)
  --nvswitch-out LIST  what-if: NVSwitch chips out of service, e.g. 0 or 0,2
  --degrade T=F        what-if: scale tier T (nvlink, pcie, nic, spine, ici) by F in (0,1]
  Output:
  --json               JSON instead of text
  --measured-time T    instead of modelling, turn a measured time (2.16ms) into algbw and
                       busbw with nccl-tests' definitions

sweep-collective also takes --min-bytes (1KB), --max-bytes (16.8GB = 1KB x 2^24), --factor
  (2), --csv.
dp-traffic takes --params P (7e9), --dtype fp32|bf16|fp16|fp8 (bf16) or --bytes-per-param,
  --ranks N, --zero 0..3, and optionally --bw-GBps X for the sync time; --walkthrough, --json.
export-cluster takes the cluster options and -o FILE.

Units: GB = 1e9 bytes and GB/s = 1e9 B/s everywhere (nccl-tests' convention); bandwidths are
per direction. Exit status: 0 on success, 2 on bad arguments or files (one 'error:' line).
)";

class Args
{
public:
    Args(const std::vector<std::string>& args, size_t first, std::set<std::string> valued,
         std::set<std::string> flags)
    {
        for (size_t i = first; i < args.size(); ++i) {
            std::string key = args[i];
            std::string value;
            bool hasValue = false;
            const size_t eq = key.find('=');
            if (key.rfind("--", 0) == 0 && eq != std::string::npos) {
                value = key.substr(eq + 1);
                key = key.substr(0, eq);
                hasValue = true;
            }
            if (flags.count(key)) {
                if (hasValue)
                    throw UsageError(key + " takes no value");
                m_flags.insert(key);
                continue;
            }
            if (!valued.count(key))
                throw UsageError("unknown option '" + key + "' (see 'paraplan-cli help')");
            if (!hasValue) {
                if (i + 1 >= args.size())
                    throw UsageError(key + " needs a value");
                value = args[++i];
            }
            if (m_values.count(key))
                throw UsageError(key + " given twice");
            m_values[key] = value;
        }
    }

    bool has(const std::string& key) const { return m_values.count(key) || m_flags.count(key); }
    bool flag(const std::string& key) const { return m_flags.count(key) > 0; }

    std::string text(const std::string& key) const
    {
        auto it = m_values.find(key);
        if (it == m_values.end())
            throw UsageError(key + " is required");
        return it->second;
    }

    double number(const std::string& key) const
    {
        const std::optional<double> value = units::parseNumber(text(key));
        if (!value)
            throw UsageError(key + ": '" + text(key) + "' is not a number");
        return *value;
    }

    double positive(const std::string& key) const
    {
        const double value = number(key);
        if (!(value > 0))
            throw UsageError(key + " must be positive (got " + text(key) + ")");
        return value;
    }

    int integer(const std::string& key, int min, int max) const
    {
        const double value = number(key);
        if (value != std::floor(value) || value < min || value > max)
            throw UsageError(key + " must be a whole number from " + std::to_string(min) + " to " +
                             std::to_string(max) + " (got " + text(key) + ")");
        return static_cast<int>(value);
    }

    double bytes(const std::string& key) const
    {
        std::string error;
        const std::optional<double> value = units::parseBytes(text(key), &error);
        if (!value)
            throw UsageError(key + ": " + error);
        return *value;
    }

private:
    std::map<std::string, std::string> m_values;
    std::set<std::string> m_flags;
};

const std::set<std::string> kCollectiveOptions = {"--op",
                                                  "--bytes",
                                                  "--ranks",
                                                  "--stride",
                                                  "--algo",
                                                  "--bw-GBps",
                                                  "--latency-us",
                                                  "--cluster",
                                                  "--nodes",
                                                  "--nodes-per-rack",
                                                  "--oversubscription",
                                                  "--nvswitch-out",
                                                  "--degrade",
                                                  "--measured-time"};

std::set<std::string> withOptions(std::set<std::string> base,
                                  std::initializer_list<const char*> more)
{
    for (const char* option : more)
        base.insert(option);
    return base;
}

ClusterSpec clusterFromArgs(const Args& args)
{
    ClusterOptions options;
    if (args.has("--nodes"))
        options.nodes = args.integer("--nodes", 1, 1000000);
    if (args.has("--nodes-per-rack"))
        options.nodes_per_rack = args.integer("--nodes-per-rack", 0, 1000000);
    if (args.has("--oversubscription")) {
        const double ratio = args.number("--oversubscription");
        if (!(ratio >= 1))
            throw UsageError("--oversubscription must be a ratio of at least 1 (got " +
                             args.text("--oversubscription") + ")");
        options.spine_oversubscription = ratio;
    }
    ClusterSpec cluster;
    std::string error;
    if (!loadCluster(args.text("--cluster"), options, &cluster, &error))
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

struct CollectiveSetup
{
    std::unique_ptr<CollectiveModel> model;
    CollectiveRequest request;
    CollectiveInputSources sources;
};

CollectiveSetup collectiveFromArgs(const Args& args, bool needBytes = true)
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
    request.ranks = args.integer("--ranks", 1, 100000000);
    if (request.ranks < 2)
        throw UsageError("--ranks: a collective needs at least 2 ranks");
    if (args.has("--stride"))
        request.stride = args.integer("--stride", 1, 100000000);
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
            latency = args.number("--latency-us");
            if (!(latency >= 0))
                throw UsageError("--latency-us must not be negative");
        }
        setup.model = std::make_unique<CollectiveModel>(
            CollectiveModel::flatLink(args.positive("--bw-GBps"), latency));
        setup.sources.link = "user entry: --bw-GBps " + args.text("--bw-GBps");
        setup.sources.latency = args.has("--latency-us")
                                    ? "user entry: --latency-us " + args.text("--latency-us")
                                    : "default: no latency term, as the seed's worked examples";
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

void printJson(const QJsonObject& object, std::ostream& out)
{
    out << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

int measured(const Args& args, std::ostream& out, bool walkthrough)
{
    CollectiveOp op;
    if (!parseCollectiveOp(args.text("--op"), &op))
        throw UsageError("--op: unknown collective '" + args.text("--op") + "'");
    const double bytes = args.bytes("--bytes");
    const int ranks = args.integer("--ranks", 2, 100000000);
    std::string error;
    const std::optional<double> time = units::parseSeconds(args.text("--measured-time"), &error);
    if (!time)
        throw UsageError("--measured-time: " + error);
    for (const char* modelOnly : {"--bw-GBps", "--cluster", "--algo"}) {
        if (args.has(modelOnly))
            throw UsageError(std::string("--measured-time reports a measurement; ") + modelOnly +
                             " does not apply");
    }
    const Derivation derivation = deriveMeasuredBandwidth(op, bytes, ranks, *time);
    if (args.flag("--json")) {
        if (walkthrough) {
            out << derivation.toJson();
        } else {
            const MeasuredBandwidth bw = bandwidthFromMeasuredTime(op, bytes, ranks, *time);
            printJson(QJsonObject{{"op", collectiveOpName(op)},
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

int commandCollective(const Args& args, std::ostream& out)
{
    if (args.has("--measured-time"))
        return measured(args, out, false);
    CollectiveSetup setup = collectiveFromArgs(args);
    const CollectiveResult r = setup.model->evaluate(setup.request);
    if (!r.ok)
        throw UsageError(r.error);
    if (args.flag("--json")) {
        printJson(collectiveResultJson(r), out);
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

int commandSweep(const Args& args, std::ostream& out)
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
        out << "bytes,time_s,algbw_GBps,busbw_GBps,algorithm,protocol,bottleneck,regime\n";
    for (double bytes = minBytes; bytes <= maxBytes * (1 + 1e-12); bytes *= factor) {
        setup.request.bytes = std::round(bytes);
        const CollectiveResult r = setup.model->evaluate(setup.request);
        if (!r.ok)
            throw UsageError(r.error);
        if (json) {
            rows.append(collectiveResultJson(r));
        } else {
            out << std::setprecision(12) << r.bytes << "," << std::setprecision(6) << r.time_s
                << "," << units::toGBps(r.algbw_Bps) << "," << units::toGBps(r.busbw_Bps) << ","
                << algorithmName(r.algorithm) << "," << protocolName(r.protocol) << ","
                << tierName(r.bottleneck) << "," << regimeName(r.regime) << "\n";
        }
    }
    if (json)
        printJson(QJsonObject{{"op", collectiveOpName(setup.request.op)},
                              {"ranks", setup.request.ranks},
                              {"cluster", QString::fromStdString(setup.model->cluster().name)},
                              {"points", rows}},
                  out);
    return kExitOk;
}

Plan planFromFile(const std::string& path);
StepCost evaluatePlan(const Plan& plan);

int commandWalkthroughPlan(const std::vector<std::string>& args, std::ostream& out)
{
    const Args options(args, 2, {}, {"--json"});
    const Plan plan = planFromFile(args[1]);
    const StepCost cost = evaluatePlan(plan);
    const Derivation d = derivePlan(plan, cost);
    out << (options.flag("--json") ? d.toJson() : d.toText());
    return kExitOk;
}

int commandWalkthrough(const Args& args, std::ostream& out)
{
    if (args.has("--measured-time"))
        return measured(args, out, true);
    CollectiveSetup setup = collectiveFromArgs(args);
    const CollectiveResult r = setup.model->evaluate(setup.request);
    if (!r.ok)
        throw UsageError(r.error);
    const Derivation derivation = deriveCollective(*setup.model, setup.request, r, setup.sources);
    out << (args.flag("--json") ? derivation.toJson() : derivation.toText());
    return kExitOk;
}

int commandDpTraffic(const Args& args, std::ostream& out)
{
    const double params = args.positive("--params");
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
        bytesPerParam = args.positive("--bytes-per-param");
    const int ranks = args.integer("--ranks", 1, 100000000);
    const int zero = args.has("--zero") ? args.integer("--zero", 0, 3) : 0;
    const double bw = args.has("--bw-GBps") ? args.positive("--bw-GBps") : 0;
    const Derivation d = deriveDataParallelTraffic(zero, params, bytesPerParam, ranks, bw);
    if (args.flag("--walkthrough")) {
        out << (args.flag("--json") ? d.toJson() : d.toText());
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
        printJson(json, out);
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

int commandPresets(const Args& args, std::ostream& out)
{
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    const std::vector<ClusterPresetInfo> clusters = clusterPresets();
    if (args.flag("--json")) {
        QJsonArray gpus;
        for (const GpuSpec& gpu : catalog.gpus) {
            QJsonObject peaks;
            for (int d = 0; d < kDtypeCount; ++d) {
                if (gpu.peak_tflops[static_cast<size_t>(d)] > 0)
                    peaks[dtypeName(static_cast<Dtype>(d))] =
                        gpu.peak_tflops[static_cast<size_t>(d)];
            }
            gpus.append(QJsonObject{{"id", QString::fromStdString(gpu.id)},
                                    {"name", QString::fromStdString(gpu.name)},
                                    {"peak_tflops", peaks},
                                    {"hbm_GiB", gpu.hbm_GiB},
                                    {"hbm_GBps", gpu.hbm_GBps},
                                    {"source", QString::fromStdString(gpu.source)}});
        }
        QJsonArray links;
        for (const InterconnectSpec& link : catalog.interconnects)
            links.append(QJsonObject{{"id", QString::fromStdString(link.id)},
                                     {"name", QString::fromStdString(link.name)},
                                     {"kind", linkKindName(link.kind)},
                                     {"per_direction_GBps", link.per_direction_GBps},
                                     {"bidirectional_GBps", link.bidirectionalGBps()},
                                     {"source", QString::fromStdString(link.source)}});
        QJsonArray clusterArray;
        for (const ClusterPresetInfo& info : clusters)
            clusterArray.append(QJsonObject{{"id", QString::fromStdString(info.id)},
                                            {"name", QString::fromStdString(info.name)},
                                            {"default_nodes", info.default_nodes},
                                            {"source", QString::fromStdString(info.source)}});
        printJson(QJsonObject{{"gpus", gpus}, {"interconnects", links}, {"clusters", clusterArray}},
                  out);
        return kExitOk;
    }
    out << "GPUs (dense peak TFLOP/s; HBM)\n";
    for (const GpuSpec& gpu : catalog.gpus) {
        out << "  " << std::left << std::setw(16) << gpu.id << gpu.name << "\n      ";
        for (int d = 0; d < kDtypeCount; ++d) {
            if (gpu.peak_tflops[static_cast<size_t>(d)] > 0)
                out << dtypeName(static_cast<Dtype>(d)) << " "
                    << formatNumber(gpu.peak_tflops[static_cast<size_t>(d)], 4) << "  ";
        }
        out << "HBM " << formatNumber(gpu.hbm_GiB) << " GiB at " << formatNumber(gpu.hbm_GBps, 4)
            << " GB/s\n      source: " << gpu.source << "\n";
    }
    out << "\nInterconnects (per direction; bidirectional = 2x, shown for reference)\n";
    for (const InterconnectSpec& link : catalog.interconnects) {
        out << "  " << std::left << std::setw(16) << link.id << link.name << ": "
            << formatNumber(link.per_direction_GBps, 4) << " GB/s per direction ("
            << formatNumber(link.bidirectionalGBps(), 4)
            << " bidirectional)\n      source: " << link.source << "\n";
    }
    out << "\nClusters (take --nodes, --nodes-per-rack, --oversubscription)\n";
    for (const ClusterPresetInfo& info : clusters)
        out << "  " << std::left << std::setw(18) << info.id << info.name
            << "\n      source: " << info.source << "\n";
    return kExitOk;
}

int commandExportCluster(const Args& args, std::ostream& out)
{
    const ClusterSpec cluster = clusterFromArgs(args);
    std::string error;
    if (!saveClusterFile(args.text("-o"), cluster, &error))
        throw UsageError(error);
    out << "wrote " << args.text("-o") << "\n";
    return kExitOk;
}

Plan planFromFile(const std::string& path)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(path, &plan, &errors)) {
        std::string message = path + ": " + errors.front();
        if (errors.size() > 1)
            message += " (and " + std::to_string(errors.size() - 1) + " more: " + errors[1] +
                       (errors.size() > 2 ? ", ..." : "") + ")";
        throw UsageError(message);
    }
    return plan;
}

StepCost evaluatePlan(const Plan& plan)
{
    const StepEngine engine(plan.cluster);
    StepCost cost = engine.evaluate(plan);
    if (!cost.ok) {
        std::string message = "plan rejected: " + cost.issues.front().message + " [rule " +
                              cost.issues.front().rule + "]";
        if (cost.issues.size() > 1)
            message += " (and " + std::to_string(cost.issues.size() - 1) + " more)";
        throw UsageError(message);
    }
    return cost;
}

int commandSearch(const std::vector<std::string>& args, std::ostream& out)
{
    if (args.size() < 2 || args[1].rfind("--", 0) == 0)
        throw UsageError("search needs a plan file: paraplan-cli search PLAN.json [--objective "
                         "step-time|time-to-train|cost|tokens-per-gpu] [--top N] [--threads K] "
                         "[--json]");
    const Args options(args, 2,
                       {"--objective", "--top", "--threads", "--max-tp", "--min-headroom",
                        "--micro-batch", "--max-interleave", "--max-micro-batch",
                        "--tokens-per-step"},
                       {"--json", "--pp-across-nodes"});
    Plan plan = planFromFile(args[1]);
    if (options.has("--tokens-per-step")) {
        // A token budget per step instead of the plan's global batch: whole sequences.
        const double tokens = options.positive("--tokens-per-step");
        const double sequences = std::round(tokens / plan.training.seq_len);
        if (sequences < 1 || sequences > 1e9)
            throw UsageError("--tokens-per-step " + options.text("--tokens-per-step") +
                             " is not a whole number of sequences of " +
                             std::to_string(plan.training.seq_len) + " tokens");
        plan.parallel.global_batch = static_cast<int>(sequences);
    }
    SearchOptions search;
    if (options.has("--objective") &&
        !searchObjectiveFromName(options.text("--objective"), &search.objective))
        throw UsageError("--objective: use step-time, time-to-train, cost or tokens-per-gpu "
                         "(got '" +
                         options.text("--objective") + "')");
    if (options.has("--top"))
        search.top = options.integer("--top", 1, 100000);
    if (options.has("--threads"))
        search.threads = options.integer("--threads", 1, 256);
    if (options.has("--max-tp"))
        search.constraints.max_tp = options.integer("--max-tp", 1, 1 << 20);
    if (options.has("--micro-batch"))
        search.constraints.fixed_micro_batch = options.integer("--micro-batch", 1, 1 << 20);
    if (options.has("--max-interleave"))
        search.max_interleave = options.integer("--max-interleave", 1, 64);
    if (options.has("--max-micro-batch"))
        search.max_micro_batch = options.integer("--max-micro-batch", 1, 1 << 20);
    if (options.has("--min-headroom")) {
        const double headroom = options.number("--min-headroom");
        if (!(headroom >= 0 && headroom < 1))
            throw UsageError("--min-headroom is a share of HBM in [0, 1) (got " +
                             options.text("--min-headroom") + ")");
        search.constraints.min_headroom = headroom;
    }
    search.constraints.pp_across_nodes = options.flag("--pp-across-nodes");
    const SearchResult result = searchPlans(plan, search);
    if (!result.ok)
        throw UsageError(result.error);

    if (options.flag("--json")) {
        QJsonObject rejected;
        for (const auto& [rule, count] : result.rejected)
            rejected[QString::fromStdString(rule)] = static_cast<double>(count);
        QJsonObject constrained;
        for (const auto& [rule, count] : result.constrained)
            constrained[QString::fromStdString(rule)] = static_cast<double>(count);
        auto candidates = [&](const std::vector<SearchCandidate>& list) {
            QJsonArray array;
            for (const SearchCandidate& c : list) {
                QJsonObject entry{{"parallel", parallelLayoutToJson(c.layout)},
                                  {"score", c.score},
                                  {"step_time_s", c.step_time_s},
                                  {"memory_bytes", c.memory_bytes},
                                  {"tokens_per_s", c.tokens_per_s},
                                  {"mfu", c.cost.metrics.mfu}};
                if (!c.behind.empty()) {
                    entry["behind"] = QString::fromStdString(c.behind);
                    entry["behind_s"] = c.behind_s;
                }
                array.append(entry);
            }
            return array;
        };
        QJsonObject given{{"parallel", parallelLayoutToJson(plan.parallel)},
                          {"scored", result.given_ok}};
        if (result.given_ok) {
            given["step_time_s"] = result.given.step_time_s;
            given["memory_bytes"] = result.given.memory_bytes;
            given["mfu"] = result.given.cost.metrics.mfu;
            given["rank"] = static_cast<double>(result.given_rank);
            QJsonArray behind;
            for (const auto& [label, seconds] : result.given_behind)
                behind.append(QJsonObject{{"component", QString::fromStdString(label)},
                                          {"seconds", seconds}});
            given["behind"] = behind;
        } else {
            given["problem"] = QString::fromStdString(result.given_problem);
        }
        printJson(QJsonObject{{"plan", QString::fromStdString(plan.name)},
                              {"given", given},
                              {"objective", searchObjectiveName(search.objective)},
                              {"space", static_cast<double>(result.space)},
                              {"rejected", rejected},
                              {"did_not_fit", static_cast<double>(result.did_not_fit)},
                              {"constrained", constrained},
                              {"scored", static_cast<double>(result.scored)},
                              {"seconds", result.seconds},
                              {"top", candidates(result.top)},
                              {"pareto", candidates(result.pareto)}},
                  out);
        return kExitOk;
    }
    out << (plan.name.empty() ? args[1] : plan.name) << ": " << plan.model.name << " on "
        << plan.cluster.totalGpus() << " GPUs, global batch " << plan.parallel.global_batch
        << ", objective " << searchObjectiveName(search.objective) << "\n";
    out << "  " << result.space << " layouts: " << result.scored << " scored, "
        << result.did_not_fit << " over memory";
    out << ", " << result.invalidCount() << " invalid";
    if (result.excludedCount() > 0)
        out << ", " << result.excludedCount() << " excluded by constraints";
    out << " (" << formatSeconds(result.seconds) << ", "
        << formatNumber(double(result.space) / std::max(result.seconds, 1e-9), 3) << " plans/s)\n";
    if (!result.rejected.empty()) {
        out << "  invalid by rule:";
        for (const auto& [rule, count] : result.rejected)
            out << " " << rule << " " << count << ";";
        out << "\n";
    }
    if (!result.constrained.empty()) {
        out << "  excluded by constraint:";
        for (const auto& [rule, count] : result.constrained)
            out << " " << rule << " " << count << ";";
        out << "\n";
    }
    if (result.top.empty()) {
        out << "\n  no layout fits: try more GPUs, a smaller micro-batch or full recompute\n";
        return kExitOk;
    }
    out << "\n  " << std::left << std::setw(4) << "#" << std::setw(40) << "layout" << std::right
        << std::setw(11) << "step" << std::setw(10) << "GiB/GPU" << std::setw(8) << "MFU"
        << "  behind the best by\n";
    for (size_t i = 0; i < result.top.size(); ++i) {
        const SearchCandidate& c = result.top[i];
        const ParallelLayout& p = c.layout;
        std::string layout = "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " dp" +
                             std::to_string(p.dp) + " cp" + std::to_string(p.cp) +
                             (p.ep > 1 ? " ep" + std::to_string(p.ep) : "") + " z" +
                             std::to_string(p.zero) + (p.sequence_parallel ? " sp" : "") + " " +
                             recomputeName(p.recompute) + " v" + std::to_string(p.interleave) +
                             " mb" + std::to_string(p.micro_batch);
        out << "  " << std::left << std::setw(4) << (i + 1) << std::setw(40) << layout << std::right
            << std::setw(11) << formatSeconds(c.step_time_s) << std::setw(10)
            << formatNumber(units::toGiB(c.memory_bytes), 3) << std::setw(7)
            << formatNumber(100 * c.cost.metrics.mfu, 3) << "%  "
            << (i == 0              ? std::string("best")
                : c.behind == "tie" ? std::string("same step time")
                                    : c.behind + " +" + formatSeconds(c.behind_s))
            << "\n";
    }
    if (result.given_ok) {
        const SearchCandidate& g = result.given;
        const SearchCandidate& best = result.top.front();
        out << "\n  This plan's layout: " << formatSeconds(g.step_time_s) << ", "
            << formatNumber(100 * g.cost.metrics.mfu, 3) << "% MFU, "
            << formatNumber(units::toGiB(g.memory_bytes), 3) << " GiB/GPU: rank "
            << result.given_rank << " of " << result.scored;
        if (g.step_time_s > best.step_time_s) {
            out << ", " << formatSeconds(g.step_time_s - best.step_time_s) << " ("
                << formatNumber(100 * (g.step_time_s / best.step_time_s - 1), 3)
                << "%) behind the best";
            if (!result.given_behind.empty()) {
                out << ":";
                for (size_t i = 0; i < result.given_behind.size() && i < 3; ++i)
                    out << (i ? "," : "") << " " << result.given_behind[i].first << " +"
                        << formatSeconds(result.given_behind[i].second);
            }
        }
        out << "\n";
    } else {
        out << "\n  This plan's layout is not scored: " << result.given_problem << "\n";
    }
    out << "\n  Pareto front, memory per GPU against step time (" << result.pareto.size()
        << " plans): ";
    for (size_t i = 0; i < result.pareto.size(); ++i)
        out << (i ? ", " : "") << formatNumber(units::toGiB(result.pareto[i].memory_bytes), 3)
            << " GiB " << formatSeconds(result.pareto[i].step_time_s);
    out << "\n";
    return kExitOk;
}

int commandCliffs(const std::vector<std::string>& args, std::ostream& out)
{
    if (args.size() < 2 || args[1].rfind("--", 0) == 0)
        throw UsageError("cliffs needs a plan file: paraplan-cli cliffs PLAN.json [--json|--csv]");
    const Args options(args, 2, {}, {"--json", "--csv"});
    if (options.flag("--json") && options.flag("--csv"))
        throw UsageError("give --json or --csv, not both");
    const Plan plan = planFromFile(args[1]);
    const StepCost cost = evaluatePlan(plan);
    const auto own = std::make_shared<const StepEngine>(plan.cluster);
    std::map<std::string, std::shared_ptr<const StepEngine>> engines;
    const PlanAnalysis analysis = analyzePlan(
        plan, cost, *own,
        [&](const ClusterSpec& cluster) {
            std::shared_ptr<const StepEngine>& engine = engines[clusterToJsonText(cluster)];
            if (!engine)
                engine = std::make_shared<const StepEngine>(cluster);
            return engine;
        },
        HardwareCatalog::bundled());
    if (options.flag("--json")) {
        printJson(planAnalysisToJson(analysis), out);
        return kExitOk;
    }
    if (options.flag("--csv")) {
        out << planAnalysisToCsv(analysis);
        return kExitOk;
    }
    out << (plan.name.empty() ? args[1] : plan.name) << ": bandwidth cliffs\n";
    out << "\n  Tokens/s against TP at " << plan.cluster.totalGpus()
        << " GPUs (DP absorbs the rest; a node holds " << analysis.gpus_per_node << ")\n";
    for (const TpSweepPoint& point : analysis.tp) {
        out << "    tp " << std::setw(3) << point.tp << "  ";
        if (point.ok)
            out << std::setw(12) << formatNumber(point.tokens_per_s, 4) << " tokens/s  "
                << std::setw(9) << formatSeconds(point.step_s)
                << (point.fits ? "" : "  (does not fit)")
                << (point.tp > analysis.gpus_per_node ? "  [crosses the network]" : "") << "\n";
        else
            out << "invalid: " << point.note << "\n";
    }
    out << "\n  all_reduce bus bandwidth against message size, per tier (GB/s)\n";
    for (const SweepSeries& series : analysis.bandwidth) {
        out << "    " << series.name << ":";
        for (size_t i = 0; i < series.x.size(); i += 4)
            out << " " << formatBytes(series.x[i]) << " " << formatNumber(series.y[i], 3) << ";";
        out << "\n";
    }
    for (const SweepSeries& used : analysis.bandwidth_used)
        out << "    this plan's " << used.name << ": " << formatBytes(used.x.front()) << " at "
            << formatNumber(used.y.front(), 3) << " GB/s\n";
    if (!analysis.scaling_step.x.empty()) {
        out << "\n  Step time against GPUs (DP scaled, TP x PP x CP fixed)\n";
        for (size_t i = 0; i < analysis.scaling_step.x.size(); ++i)
            out << "    " << std::setw(8) << analysis.scaling_step.x[i] << " GPUs  step "
                << std::setw(9) << formatSeconds(analysis.scaling_step.y[i]) << "  DP sync "
                << formatSeconds(analysis.scaling_dp_total.y[i]) << " ("
                << formatSeconds(analysis.scaling_dp_exposed.y[i]) << " exposed)\n";
        if (analysis.rack_boundary_gpus > 0)
            out << "    one rack holds " << analysis.rack_boundary_gpus << " GPUs\n";
    }
    out << "\n  What-ifs\n";
    for (size_t i = 0; i < analysis.what_if_labels.size(); ++i)
        out << "    " << std::left << std::setw(28) << analysis.what_if_labels[i] << std::right
            << formatSeconds(analysis.what_if_step_s[i]) << "\n";
    return kExitOk;
}

int commandEvaluate(const std::vector<std::string>& args, std::ostream& out)
{
    if (args.size() < 2 || args[1].rfind("--", 0) == 0)
        throw UsageError("evaluate needs a plan file: paraplan-cli evaluate PLAN.json [--json]");
    const Args options(args, 2, {}, {"--json"});
    const Plan plan = planFromFile(args[1]);
    const StepCost cost = evaluatePlan(plan);
    if (options.flag("--json")) {
        printJson(stepCostToJson(plan, cost), out);
        return kExitOk;
    }
    const ParallelLayout& p = plan.parallel;
    const StepMetrics& mt = cost.metrics;
    out << (plan.name.empty() ? args[1] : plan.name) << "\n"
        << "  " << plan.model.name << " on " << plan.cluster.name << ", "
        << plan.cluster.totalGpus() << " GPUs\n"
        << "  tp " << p.tp << "  pp " << p.pp << "  dp " << p.dp << "  cp " << p.cp << "  ep "
        << p.ep << "  zero " << p.zero << (p.sequence_parallel ? "  sp" : "") << "  recompute "
        << recomputeName(p.recompute) << "  interleave " << p.interleave << "  micro-batch "
        << p.micro_batch << "  global batch " << p.global_batch << " (" << cost.microbatches
        << " micro-batches per pipeline)\n\n";
    auto row = [&](const char* label, const std::string& value) {
        out << "  " << std::left << std::setw(24) << label << value << "\n";
    };
    row("step time", formatSeconds(cost.step_time_s));
    row("tokens/s", formatNumber(mt.tokens_per_s, 4));
    row("MFU / HFU", formatNumber(100 * mt.mfu) + "% / " + formatNumber(100 * mt.hfu) + "%");
    if (mt.time_to_train_s > 0) {
        row("time to train", formatNumber(mt.time_to_train_s / 86400) + " days (" +
                                 formatNumber(mt.gpu_hours, 4) + " GPU-hours)");
        if (mt.cost_usd > 0)
            row("cost", "$" + formatNumber(mt.cost_usd, 4));
    }
    row("memory (fullest stage)", formatNumber(units::toGiB(cost.max_stage_total_bytes)) +
                                      " GiB of " + formatNumber(units::toGiB(cost.hbm_bytes)) +
                                      " GiB" + (cost.fits ? " (fits)" : " (DOES NOT FIT)"));
    out << "\n  Step-time breakdown\n";
    const StepBreakdown& b = cost.breakdown;
    auto part = [&](const char* label, double seconds) {
        if (seconds <= 0)
            return;
        out << "    " << std::left << std::setw(20) << label << std::right << std::setw(10)
            << formatSeconds(seconds) << std::setw(8)
            << formatNumber(100 * seconds / cost.step_time_s) + "%"
            << "\n";
    };
    for (const BreakdownComponent& component : kBreakdownComponents)
        part(component.label, b.*component.field);
    if (!cost.collectives.empty()) {
        out << "\n  Collectives (critical stage)\n";
        out << "    " << std::left << std::setw(7) << "group" << std::setw(16) << "op" << std::right
            << std::setw(10) << "bytes" << std::setw(7) << "ranks" << std::setw(16) << "tier"
            << std::setw(10) << "each" << std::setw(9) << "calls" << std::setw(11) << "total"
            << std::setw(11) << "exposed"
            << "\n";
        for (const CollectiveCost& c : cost.collectives)
            out << "    " << std::left << std::setw(7) << c.group << std::setw(16)
                << collectiveOpName(c.call.op) << std::right << std::setw(10)
                << formatBytes(c.call.bytes) << std::setw(7) << c.call.ranks << std::setw(16)
                << tierName(c.call.bottleneck) << std::setw(10) << formatSeconds(c.call.time_s)
                << std::setw(9) << formatNumber(c.calls_per_step, 4) << std::setw(11)
                << formatSeconds(c.total_s) << std::setw(11) << formatSeconds(c.exposed_s) << "\n";
    }
    if (!cost.links.empty()) {
        out << "\n  Links (one GPU's share of each tier, per step)\n";
        out << "    " << std::left << std::setw(16) << "tier" << std::right << std::setw(11)
            << "busy" << std::setw(10) << "of step"
            << "  loaded most by\n";
        for (const LinkUse& link : cost.links)
            out << "    " << std::left << std::setw(16) << tierName(link.tier) << std::right
                << std::setw(11) << formatSeconds(link.busy_s) << std::setw(10)
                << formatNumber(100 * link.share, 3) + "%"
                << "  " << link.busiest_group << "\n";
    }
    const StepAssumptions& as = cost.assumptions;
    out << "\n  Kernels: attention " << attentionKernelName(as.attention);
    if (as.attention != AttentionKernel::Unfused)
        out << " (" << formatNumber(100 * as.attention_fwd_share, 3) << "% of peak forward, "
            << formatNumber(100 * as.attention_bwd_share, 3) << "% backward at this length)";
    out << "; GEMMs " << formatNumber(100 * cost.dense_layer.gemm_efficiency, 3)
        << "% of peak (this plan's shapes); element-wise " << kernelStyleName(as.kernels)
        << (plan.training.kernels == KernelStyle::Auto ? " (auto)" : "") << "; TP overlap "
        << (plan.parallel.tp < 2 ? "n/a" : (as.tp_overlap ? "ag-gemm" : "none")) << "; slowest of "
        << plan.parallel.gpus() << " GPUs x" << formatNumber(as.slowest_gpu_factor, 4) << "\n";
    out << "\n  Memory per GPU by pipeline stage (GiB)\n";
    out << "    stage layers  weights    grads optimizer activations buffers    total\n";
    const size_t shown = std::min<size_t>(cost.stages.size(), 8);
    for (size_t i = 0; i < cost.stages.size(); ++i) {
        if (i == shown && i + 1 < cost.stages.size()) {
            out << "    ... (" << cost.stages.size() - shown - 1 << " more stages)\n";
            i = cost.stages.size() - 1;
        }
        const StageCost& st = cost.stages[i];
        out << "    " << std::right << std::setw(5) << st.stage << std::setw(7) << st.layers;
        for (double bytes : {st.weights_bytes, st.grads_bytes, st.optimizer_bytes,
                             st.activations_bytes, st.buffers_bytes, st.total_bytes})
            out << std::setw(9) << formatNumber(units::toGiB(bytes));
        out << (st.fits ? "" : "  over") << "\n";
    }
    for (const std::string& warning : cost.warnings)
        out << "\n  warning: " << warning;
    if (!cost.warnings.empty())
        out << "\n";
    return kExitOk;
}

QJsonObject calibrationReportJson(const CalibrationReport& report)
{
    QJsonArray rows;
    for (const CalibrationRow& row : report.rows)
        rows.append(QJsonObject{{"name", QString::fromStdString(row.name)},
                                {"model", QString::fromStdString(row.model)},
                                {"plan", QString::fromStdString(row.plan.name)},
                                {"gpus", row.gpus},
                                {"assumptions", QString::fromStdString(row.assumptions)},
                                {"measured_s", row.measured_s},
                                {"predicted_s", row.predicted_s},
                                {"error", row.error},
                                {"mfu", row.mfu},
                                {"measured_mfu", row.measured_mfu}});
    QJsonArray memory;
    for (const MemoryCalibrationRow& row : report.memory)
        memory.append(QJsonObject{{"model", QString::fromStdString(row.model)},
                                  {"what", QString::fromStdString(row.what)},
                                  {"measured_GiB", row.measured_GiB},
                                  {"predicted_GiB", row.predicted_GiB},
                                  {"error", row.error}});
    return QJsonObject{{"id", QString::fromStdString(report.id)},
                       {"source", QString::fromStdString(report.source)},
                       {"rows", rows},
                       {"mean_abs_error", report.mean_abs_error},
                       {"median_abs_error", report.median_abs_error},
                       {"max_abs_error", report.max_abs_error},
                       {"memory", memory},
                       {"memory_max_abs_error", report.memory_max_abs_error}};
}

void printCalibrationReport(const CalibrationReport& report, std::ostream& out)
{
    out << "Calibration set " << report.id << ": " << report.source << "\n";
    if (!report.hardware.empty())
        out << "Hardware: " << report.hardware << "\n";
    out << "\n  " << std::left << std::setw(36) << "row" << std::right << std::setw(6) << "GPUs"
        << std::setw(11) << "measured" << std::setw(11) << "predicted" << std::setw(9) << "error"
        << std::setw(15) << "MFU (publ.)"
        << "\n";
    for (const CalibrationRow& row : report.rows) {
        std::string mfu = formatNumber(100 * row.mfu, 3) + "%";
        if (row.measured_mfu > 0)
            mfu += " (" + formatNumber(100 * row.measured_mfu, 3) + "%)";
        out << "  " << std::left << std::setw(36) << row.name << std::right << std::setw(6)
            << row.gpus << std::setw(11) << formatSeconds(row.measured_s) << std::setw(11)
            << formatSeconds(row.predicted_s) << std::setw(9)
            << formatNumber(100 * row.error, 2) + "%" << std::setw(15) << mfu << "\n"
            << "      assumes: " << row.assumptions << "\n";
    }
    out << "\n  iteration time: mean |error| " << formatNumber(100 * report.mean_abs_error, 3)
        << "%, median " << formatNumber(100 * report.median_abs_error, 3) << "%, max "
        << formatNumber(100 * report.max_abs_error, 3) << "%";
    if (report.reference_mean_pct > 0)
        out << "  (best public analytical tool on this set: "
            << formatNumber(report.reference_mean_pct, 3) << "% / "
            << formatNumber(report.reference_max_pct, 3) << "%)";
    out << "\n";
    if (!report.memory.empty()) {
        out << "\n  First-stage memory per GPU (GiB)\n";
        for (const MemoryCalibrationRow& row : report.memory)
            out << "  " << std::left << std::setw(14) << row.model << std::setw(26) << row.what
                << std::right << std::setw(10) << formatNumber(row.measured_GiB, 4) << std::setw(10)
                << formatNumber(row.predicted_GiB, 4) << std::setw(8)
                << formatNumber(100 * row.error, 2) + "%"
                << "\n";
        out << "\n  memory: max |error| " << formatNumber(100 * report.memory_max_abs_error, 3)
            << "%\n";
    }
}

int commandValidate(const std::vector<std::string>& args, std::ostream& out)
{
    std::vector<std::string> paths;
    size_t first = 1;
    while (first < args.size() && args[first].rfind("--", 0) != 0)
        paths.push_back(args[first++]);
    const Args options(args, first, {}, {"--json"});
    if (paths.empty())
        paths = bundledCalibrationSets();
    std::vector<CalibrationReport> reports;
    for (const std::string& path : paths) {
        CalibrationReport report;
        std::string error;
        if (!runCalibration(path, &report, &error))
            throw UsageError(error);
        reports.push_back(std::move(report));
    }
    if (options.flag("--json")) {
        QJsonArray sets;
        for (const CalibrationReport& report : reports)
            sets.append(calibrationReportJson(report));
        printJson(QJsonObject{{"sets", sets}}, out);
        return kExitOk;
    }
    for (size_t i = 0; i < reports.size(); ++i) {
        if (i > 0)
            out << "\n";
        printCalibrationReport(reports[i], out);
    }
    return kExitOk;
}

int commandModel(const std::vector<std::string>& args, std::ostream& out)
{
    const Args options(args, 1, {"--preset", "--hf-config", "--seq-len"}, {"--json"});
    ModelSpec model;
    std::string error;
    if (options.has("--preset") == options.has("--hf-config"))
        throw UsageError("give --preset ID or --hf-config FILE");
    if (options.has("--preset")
            ? !modelFromPreset(options.text("--preset"), &model, &error)
            : !loadHuggingFaceConfig(options.text("--hf-config"), &model, &error))
        throw UsageError(error);
    const std::vector<std::string> problems = validateModel(model);
    if (!problems.empty())
        throw UsageError(problems.front());
    const int seq = options.has("--seq-len")
                        ? options.integer("--seq-len", 1, 10000000)
                        : (model.max_positions > 0 ? model.max_positions : 2048);
    const ParameterCount count = countParameters(model);
    const double flopsPerToken = modelFlopsPerStep(model, 1, seq) / seq;
    if (options.flag("--json")) {
        printJson(QJsonObject{{"name", QString::fromStdString(model.name)},
                              {"layers", model.layers},
                              {"hidden", model.hidden},
                              {"heads", model.heads},
                              {"kv_heads", model.kv_heads},
                              {"ffn_hidden", model.ffn_hidden},
                              {"vocab", model.vocab},
                              {"experts", model.experts},
                              {"parameters", count.total},
                              {"active_parameters", count.active_per_token},
                              {"seq_len", seq},
                              {"training_flops_per_token", flopsPerToken},
                              {"source", QString::fromStdString(model.source)}},
                  out);
        return kExitOk;
    }
    out << model.name << "\n  source: " << model.source << "\n"
        << "  layers " << model.layers << ", hidden " << model.hidden << ", heads " << model.heads
        << " (KV " << model.kv_heads << "), FFN " << model.ffn_hidden
        << (model.mlp == MlpKind::SwiGLU ? " SwiGLU" : " GeLU") << ", vocab " << model.vocab
        << (model.tied_embeddings ? " (tied)" : "") << "\n";
    if (model.isMoe())
        out << "  experts " << model.experts << ", " << model.experts_per_token
            << " per token, expert FFN " << model.expert_ffn_hidden << "\n";
    out << "  parameters " << formatNumber(count.total / 1e9, 4) << "B";
    if (model.isMoe())
        out << " (" << formatNumber(count.active_per_token / 1e9, 4) << "B active per token)";
    out << "\n  training FLOPs per token at s = " << seq << ": "
        << formatNumber(flopsPerToken / 1e9, 4)
        << " GFLOP (6 x parameters = " << formatNumber(6 * count.active_per_token / 1e9, 4)
        << " GFLOP, plus attention)\n";
    return kExitOk;
}

int commandImportTopology(const std::vector<std::string>& args, std::ostream& out)
{
    if (args.size() < 2 || args[1].rfind("-", 0) == 0)
        throw UsageError("import-topology needs a file: paraplan-cli import-topology FILE "
                         "[-o cluster.json] [--gpu ID] [--nic ID] [--nodes N]");
    const Args options(
        args, 2, {"-o", "--gpu", "--nic", "--nodes", "--nodes-per-rack", "--oversubscription"}, {});
    TopologyImportOptions import;
    if (options.has("--gpu"))
        import.gpu_id = options.text("--gpu");
    if (options.has("--nic"))
        import.nic_id = options.text("--nic");
    if (options.has("--nodes"))
        import.nodes = options.integer("--nodes", 1, 1000000);
    if (options.has("--nodes-per-rack"))
        import.nodes_per_rack = options.integer("--nodes-per-rack", 0, 1000000);
    if (options.has("--oversubscription")) {
        import.spine_oversubscription = options.number("--oversubscription");
        if (!(import.spine_oversubscription >= 1))
            throw UsageError("--oversubscription must be a ratio of at least 1");
    }
    TopologyImport result;
    std::string error;
    if (!importTopologyFile(args[1], import, &result, &error))
        throw UsageError(error);
    if (!options.has("-o")) {
        out << clusterToJsonText(result.cluster);
        return kExitOk;
    }
    if (!saveClusterFile(options.text("-o"), result.cluster, &error))
        throw UsageError(error);
    out << "Read " << args[1] << " (" << result.format << "): " << result.gpus << " GPUs, "
        << result.nics << " NICs, " << nodeFabricName(result.cluster.node.fabric) << " fabric\n";
    for (const std::string& note : result.notes)
        out << "  " << note << "\n";
    out << "wrote " << options.text("-o") << " (" << result.cluster.nodes << " node(s))\n";
    return kExitOk;
}

int commandImportMeasurements(const std::vector<std::string>& args, std::ostream& out)
{
    if (args.size() < 2 || args[1].rfind("-", 0) == 0)
        throw UsageError("import-measurements needs a file: paraplan-cli import-measurements "
                         "FILE [--cluster PRESET_OR_FILE [--nodes N]] [--json]");
    const Args options(args, 2, {"--cluster", "--nodes"}, {"--json"});
    MeasurementRun run;
    std::string error;
    if (!loadMeasurements(args[1], &run, &error))
        throw UsageError(error);
    const std::vector<AlphaBetaFit> fits = fitRun(run);
    std::vector<MeasuredFigure> figures;
    if (options.has("--cluster")) {
        ClusterOptions clusterOptions;
        if (options.has("--nodes"))
            clusterOptions.nodes = options.integer("--nodes", 1, 1000000);
        ClusterSpec cluster;
        if (!loadCluster(options.text("--cluster"), clusterOptions, &cluster, &error))
            throw UsageError(error);
        figures = proposeMeasuredFigures(run, fits, cluster);
    }
    if (options.flag("--json")) {
        QJsonArray fitArray;
        for (const AlphaBetaFit& f : fits)
            fitArray.append(QJsonObject{{"op", collectiveOpName(f.op)},
                                        {"ranks", f.ranks},
                                        {"hosts", f.hosts},
                                        {"points", f.points},
                                        {"alpha_us", f.alpha_s * 1e6},
                                        {"busbw_GBps", f.busbw_GBps},
                                        {"residual", f.residual}});
        QJsonArray copies;
        for (const CopyMeasurement& c : run.copies)
            copies.append(QJsonObject{
                {"what", QString::fromStdString(c.what)}, {"device", c.device}, {"GBps", c.GBps}});
        QJsonArray figureArray;
        for (const MeasuredFigure& f : figures)
            figureArray.append(QJsonObject{{"figure", QString::fromStdString(f.figure)},
                                           {"measured", f.value},
                                           {"assumed", f.assumed},
                                           {"why", QString::fromStdString(f.why)}});
        QJsonArray warnings;
        for (const std::string& w : run.warnings)
            warnings.append(QString::fromStdString(w));
        printJson(QJsonObject{{"run", QString::fromStdString(run.describe())},
                              {"points", static_cast<int>(run.points.size())},
                              {"complete", run.complete},
                              {"fits", fitArray},
                              {"copies", copies},
                              {"figures", figureArray},
                              {"warnings", warnings}},
                  out);
        return kExitOk;
    }
    out << run.describe() << "\n  " << run.points.size() << " collective points, "
        << run.copies.size() << " copies" << (run.complete ? "" : " (incomplete run)") << "\n";
    if (!run.error.empty())
        out << "  the run ended with an error: " << run.error << "\n";
    out << "\n  Fits, t = alpha + S x factor / busbw (out-of-place points)\n";
    out << "    " << std::left << std::setw(16) << "op" << std::right << std::setw(7) << "ranks"
        << std::setw(7) << "hosts" << std::setw(8) << "points" << std::setw(12) << "alpha"
        << std::setw(14) << "busbw" << std::setw(11) << "residual"
        << "\n";
    for (const AlphaBetaFit& f : fits)
        out << "    " << std::left << std::setw(16) << collectiveOpName(f.op) << std::right
            << std::setw(7) << f.ranks << std::setw(7) << f.hosts << std::setw(8) << f.points
            << std::setw(12) << formatSeconds(f.alpha_s) << std::setw(14)
            << formatNumber(f.busbw_GBps, 4) + " GB/s" << std::setw(10)
            << formatNumber(100 * f.residual, 2) + "%"
            << "\n";
    if (!run.copies.empty()) {
        std::map<std::string, std::pair<double, int>> copyAverage;
        for (const CopyMeasurement& c : run.copies) {
            copyAverage[c.what].first += c.GBps;
            ++copyAverage[c.what].second;
        }
        out << "\n  Copies (mean over devices)\n";
        for (const auto& [what, sum] : copyAverage)
            out << "    " << std::left << std::setw(6) << what << std::right << std::setw(12)
                << formatNumber(sum.first / sum.second, 4) + " GB/s"
                << (what == "d2d" ? "  (read + write counted)" : "") << "\n";
    }
    if (!figures.empty()) {
        out << "\n  What the run would replace on " << options.text("--cluster") << "\n";
        for (const MeasuredFigure& f : figures)
            out << "    " << f.figure << ": assumed " << formatNumber(f.assumed) << ", measured "
                << formatNumber(f.value) << "  (" << f.why << ")\n";
    }
    for (const std::string& warning : run.warnings)
        out << "  warning: " << warning << "\n";
    return kExitOk;
}

} // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)
{
    try {
        if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
            out << kHelp;
            return args.empty() ? kExitUsage : kExitOk;
        }
        if (args[0] == "--version") {
            out << "paraplan-cli " << PARAPLAN_VERSION << "\n";
            return kExitOk;
        }
        const std::string& command = args[0];
        if (command == "collective")
            return commandCollective(Args(args, 1, kCollectiveOptions, {"--json"}), out);
        if (command == "sweep-collective")
            return commandSweep(
                Args(args, 1,
                     withOptions(kCollectiveOptions, {"--min-bytes", "--max-bytes", "--factor"}),
                     {"--json", "--csv"}),
                out);
        if (command == "walkthrough" && args.size() > 1 && args[1].rfind("--", 0) != 0)
            return commandWalkthroughPlan(args, out);
        if (command == "walkthrough")
            return commandWalkthrough(Args(args, 1, kCollectiveOptions, {"--json"}), out);
        if (command == "dp-traffic")
            return commandDpTraffic(
                Args(args, 1,
                     {"--params", "--dtype", "--bytes-per-param", "--ranks", "--zero", "--bw-GBps"},
                     {"--json", "--walkthrough"}),
                out);
        if (command == "import-topology")
            return commandImportTopology(args, out);
        if (command == "import-measurements")
            return commandImportMeasurements(args, out);
        if (command == "model")
            return commandModel(args, out);
        if (command == "cliffs")
            return commandCliffs(args, out);
        if (command == "evaluate")
            return commandEvaluate(args, out);
        if (command == "search")
            return commandSearch(args, out);
        if (command == "validate")
            return commandValidate(args, out);
        if (command == "presets")
            return commandPresets(Args(args, 1, {}, {"--json"}), out);
        if (command == "export-cluster")
            return commandExportCluster(
                Args(args, 1,
                     {"--cluster", "--nodes", "--nodes-per-rack", "--oversubscription",
                      "--nvswitch-out", "--degrade", "-o"},
                     {}),
                out);
        throw UsageError("unknown command '" + command + "' (see 'paraplan-cli help')");
    } catch (const UsageError& error) {
        err << "error: " << error.what() << "\n";
        return kExitUsage;
    } catch (const std::exception& error) {
        err << "error: " << error.what() << "\n";
        return kExitUsage;
    }
}

} // namespace paraplan::cli
