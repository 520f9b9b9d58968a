// paraplan-cli cliffs: the bandwidth cliffs the window plots, as text, JSON or CSV.
#include "common.h"

#include "analysis.h"
#include "clusterio.h"
#include "costjson.h"
#include "hardware.h"
#include "units.h"

#include <iomanip>
#include <map>

namespace paraplan::cli {

using units::formatBytes;
using units::formatNumber;
using units::formatSeconds;

Options cliffsOptions()
{
    return {
        flagOption("--json", "The series as JSON instead of text."),
        flagOption("--csv", "The series as CSV (series,x,y,note) instead of text."),
    };
}

int runCliffs(const Args& args, std::ostream& out)
{
    if (args.flag("--json") && args.flag("--csv"))
        throw UsageError("give --json or --csv, not both");
    const Plan plan = planFromFile(args.positional().front());
    const StepCost cost = evaluatePlan(plan, args.positional().front());
    const auto own = std::make_shared<const StepEngine>(plan.cluster, HardwareCatalog::bundled());
    std::map<std::string, std::shared_ptr<const StepEngine>> engines;
    const PlanAnalysis analysis = analyzePlan(
        plan, cost, *own,
        [&](const ClusterSpec& cluster) {
            std::shared_ptr<const StepEngine>& engine = engines[clusterToJsonText(cluster)];
            if (!engine)
                engine = std::make_shared<const StepEngine>(cluster, HardwareCatalog::bundled());
            return engine;
        },
        HardwareCatalog::bundled());
    if (args.flag("--json")) {
        printJson("paraplan-cliffs/1", planAnalysisToJson(analysis), out);
        return cost.fits ? kExitOk : kExitNo;
    }
    if (args.flag("--csv")) {
        out << planAnalysisToCsv(analysis);
        return cost.fits ? kExitOk : kExitNo;
    }
    out << (plan.name.empty() ? args.positional().front() : plan.name) << ": bandwidth cliffs\n";
    out << "\n  Tokens/s against TP at " << plan.cluster.totalGpus()
        << " GPUs (DP absorbs the rest; a node holds " << analysis.gpus_per_node;
    if (analysis.nvlink_domain_gpus > analysis.gpus_per_node)
        out << ", an NVLink domain " << analysis.nvlink_domain_gpus;
    out << ")\n";
    for (const TpSweepPoint& point : analysis.tp) {
        out << "    tp " << std::setw(3) << point.tp << "  ";
        if (point.ok)
            out << std::setw(12) << formatNumber(point.tokens_per_s, 4) << " tokens/s  "
                << std::setw(9) << formatSeconds(point.step_s)
                << (point.fits ? "" : "  (does not fit)")
                << (point.tp > analysis.nvlink_domain_gpus ? "  [crosses the network]" : "")
                << (point.gpus != analysis.plan_gpus
                        ? "  (on " + std::to_string(point.gpus) + " GPUs: the plan's " +
                              std::to_string(analysis.plan_gpus) + " cannot hold it)"
                        : "")
                << "\n";
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
    return cost.fits ? kExitOk : kExitNo;
}

} // namespace paraplan::cli
