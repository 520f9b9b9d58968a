// paraplan-cli evaluate: what one training step of a plan costs.
#include "common.h"

#include "costjson.h"
#include "memoryfix.h"
#include "planio.h"
#include "summary.h"
#include "units.h"

#include <QJsonArray>
#include <QJsonObject>

#include <iomanip>

namespace paraplan::cli {

using units::formatBytes;
using units::formatNumber;
using units::formatSeconds;

namespace {

// The fixes of a plan that does not fit, as evaluate --json writes them.
QJsonArray memoryFixesJson(const std::vector<MemoryFix>& fixes)
{
    QJsonArray list;
    for (const MemoryFix& fix : fixes)
        list.append(QJsonObject{{"change", QString::fromStdString(fix.change)},
                                {"step_time_s", fix.step_time_s},
                                {"slowdown", fix.slowdown},
                                {"spare_bytes", fix.spare_bytes},
                                {"tight", fix.tight},
                                {"layout", parallelLayoutToJson(fix.layout)}});
    return list;
}

} // namespace

Options evaluateOptions()
{
    return {jsonOption()};
}

int runEvaluate(const Args& args, std::ostream& out)
{
    const Plan plan = planFromFile(args.positional().front());
    const StepEngine engine(plan.cluster, HardwareCatalog::bundled());
    const StepCost cost = requireCosted(engine.evaluate(plan), args.positional().front());
    const std::vector<MemoryFix> fixes = memoryFixes(plan, cost, engine);
    if (args.flag("--json")) {
        QJsonObject json = stepCostToJson(plan, cost);
        if (!cost.fits)
            json["memory_fixes"] = memoryFixesJson(fixes);
        printJson("paraplan-evaluate/1", json, out);
        return cost.fits ? kExitOk : kExitNo;
    }
    const ParallelLayout& p = plan.parallel;
    out << (plan.name.empty() ? args.positional().front() : plan.name) << "\n"
        << "  " << plan.model.name << " on " << plan.cluster.name << ", "
        << plan.cluster.totalGpus() << " GPUs\n"
        << "  tp " << p.tp << "  pp " << p.pp << "  dp " << p.dp << "  cp " << p.cp << "  ep "
        << p.ep << "  zero " << p.zero << (p.sequence_parallel ? "  sp" : "") << "  recompute "
        << recomputeName(p.recompute) << "  interleave " << p.interleave << "  micro-batch "
        << p.micro_batch << "  global batch " << p.global_batch << " (" << cost.microbatches
        << (cost.microbatches == 1 ? " micro-batch" : " micro-batches") << " per pipeline)\n\n";
    auto row = [&](const char* label, const std::string& value) {
        out << "  " << std::left << std::setw(24) << label << value << "\n";
    };
    for (const HeadlineFigure& figure : headlineFigures(plan, cost))
        row(figure.label.c_str(), figure.detail);
    out << "\n  Step-time breakdown\n";
    const StepBreakdown& b = cost.breakdown;
    auto part = [&](const char* label, double seconds) {
        if (seconds <= 0)
            return;
        out << "    " << std::left << std::setw(20) << label << std::right << std::setw(10)
            << formatSeconds(seconds) << std::setw(8)
            << units::formatPercent(seconds / cost.step_time_s) << "\n";
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
                << units::formatPercent(link.share) << "  " << link.busiest_group << "\n";
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
    if (!cost.fits) {
        // The verdict's lines past its first (the headline gave that), indented.
        const std::string text = memoryVerdictText(cost, fixes);
        out << "\n";
        size_t start = text.find('\n');
        while (start != std::string::npos) {
            const size_t end = text.find('\n', start + 1);
            out << "  " << text.substr(start + 1, end - start - 1) << "\n";
            start = end;
        }
    }
    for (const std::string& warning : cost.warnings)
        out << "\n  warning: " << warning;
    if (!cost.warnings.empty())
        out << "\n";
    return cost.fits ? kExitOk : kExitNo;
}

} // namespace paraplan::cli
