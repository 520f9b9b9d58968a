// paraplan-cli search: every valid parallel layout for a plan's model, cluster and global batch,
// ranked.
#include "common.h"

#include "costjson.h"
#include "search.h"
#include "searchwording.h"
#include "summary.h"
#include "units.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <iomanip>

namespace paraplan::cli {

using units::formatNumber;
using units::formatSeconds;

namespace {

// --tokens-per-step: a token budget per step instead of the plan's global batch.
void applyTokensPerStep(const Args& args, Plan* planPointer)
{
    if (!args.has("--tokens-per-step"))
        return;
    Plan& plan = *planPointer;
    const double tokens = args.within("--tokens-per-step",
                                      {"--tokens-per-step", 1, 1LL << 52, "tokens", false, false});
    const double sequences = std::round(tokens / plan.training.seq_len);
    if (sequences < 1 || sequences > 1e9)
        throw UsageError("--tokens-per-step " + args.text("--tokens-per-step") +
                         " is not a whole number of sequences of " +
                         std::to_string(plan.training.seq_len) + " tokens");
    plan.parallel.global_batch = static_cast<int>(sequences);
}

SearchOptions searchFromArgs(const Args& args)
{
    SearchOptions search;
    if (args.has("--objective") &&
        !searchObjectiveFromName(args.text("--objective"), &search.objective))
        throw UsageError("--objective: use " + enumChoices(kSearchObjectiveNames) + " (got '" +
                         args.text("--objective") + "')");
    if (args.has("--top"))
        search.top = args.integer("--top", 1, 100000);
    if (args.has("--threads"))
        search.threads = args.integer("--threads", 1, 256);
    // The step-time bound is on by default; it changes nothing shown.
    if (args.flag("--bound") && args.flag("--exhaustive"))
        throw UsageError("--bound and --exhaustive: use one (--exhaustive turns the bound off)");
    search.bound = !args.flag("--exhaustive");
    if (args.has("--max-tp"))
        search.constraints.max_tp = args.integer("--max-tp", 1, 1 << 20);
    search.dispatchers = !args.flag("--keep-dispatcher");
    if (args.has("--micro-batch"))
        search.constraints.fixed_micro_batch = args.integer("--micro-batch", 1, 1 << 20);
    if (args.has("--max-interleave"))
        search.max_interleave = args.integer("--max-interleave", 1, 64);
    if (args.has("--max-micro-batch"))
        search.max_micro_batch = args.integer("--max-micro-batch", 1, 1 << 20);
    if (args.has("--headroom") && args.has("--min-headroom"))
        throw UsageError("--headroom and --min-headroom are one setting: give one");
    for (const char* name : {"--headroom", "--min-headroom"}) {
        if (!args.has(name))
            continue;
        const double headroom = args.number(name);
        if (!(headroom >= 0 && headroom < 1))
            throw UsageError(std::string(name) + " is a share of HBM in [0, 1) (got " +
                             args.text(name) + ")");
        search.constraints.min_headroom = headroom;
    }
    if (args.has("--reserve")) {
        const double gib = args.number("--reserve");
        if (!(gib >= 0 && gib <= 1024))
            throw UsageError("--reserve is in GiB, 0 to 1024 (got " + args.text("--reserve") + ")");
        search.constraints.reserve_bytes = reserveBytesFromGiB(gib);
    }
    search.constraints.pp_across_nodes = args.flag("--pp-across-nodes");
    return search;
}

QJsonArray partsJson(const std::vector<BehindPart>& parts)
{
    QJsonArray array;
    for (const BehindPart& part : parts)
        array.append(QJsonObject{{"component", QString::fromStdString(part.label)},
                                 {"seconds", part.seconds}});
    return array;
}

void printSearchJson(const Plan& plan, const SearchOptions& search, const SearchResult& result,
                     std::ostream& out)
{
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
            if (c.moe_dispatcher != MoeDispatcher::Auto)
                entry["moe_dispatcher"] = moeDispatcherName(c.moe_dispatcher);
            entry["behind_s"] = c.behind_s;
            entry["behind"] = partsJson(c.behind);
            entry["tied"] = c.tied;
            entry["tie_with"] = c.tie_with;
            entry["folded"] = c.folded;
            array.append(entry);
        }
        return array;
    };
    QJsonArray outside;
    for (const SearchSpaceMiss& miss : result.given_outside)
        outside.append(QJsonObject{{"setting", QString::fromStdString(miss.setting)},
                                   {"text", QString::fromStdString(searchSpaceMissText(miss))},
                                   {"option", QString::fromStdString(miss.option)}});
    QJsonObject given{{"parallel", parallelLayoutToJson(plan.parallel)},
                      {"scored", result.given_ok},
                      {"outside", outside}};
    if (result.given.moe_dispatcher != MoeDispatcher::Auto)
        given["moe_dispatcher"] = moeDispatcherName(result.given.moe_dispatcher);
    if (result.given_ok) {
        given["step_time_s"] = result.given.step_time_s;
        given["memory_bytes"] = result.given.memory_bytes;
        given["mfu"] = result.given.cost.metrics.mfu;
        given["rank"] = static_cast<double>(result.given_rank);
        given["within_headroom"] = result.given_within_headroom;
        QJsonArray behind;
        for (const auto& [label, seconds] : result.given_behind)
            behind.append(
                QJsonObject{{"component", QString::fromStdString(label)}, {"seconds", seconds}});
        given["behind"] = behind;
        if (!result.top.empty())
            given["behind_s"] = result.given.step_time_s - result.top.front().step_time_s;
        given["behind_parts"] = partsJson(result.given_parts);
    } else {
        given["problem"] = QString::fromStdString(result.given_problem);
    }
    printJson(
        "paraplan-search/1",
        QJsonObject{{"plan", QString::fromStdString(plan.name)},
                    {"given", given},
                    {"objective", searchObjectiveName(search.objective)},
                    {"framework", trainingFrameworkName(plan.training.framework)},
                    {"space", static_cast<double>(result.space)},
                    {"rejected", rejected},
                    {"did_not_fit", static_cast<double>(result.did_not_fit)},
                    {"constrained", constrained},
                    {"headroom", QJsonObject{{"share", search.constraints.min_headroom},
                                             {"reserve_bytes", search.constraints.reserve_bytes}}},
                    {"tie_tolerance", kSearchTieTolerance},
                    {"duplicates", static_cast<double>(result.duplicates)},
                    {"exhaustive", !search.bound},
                    {"bounded", static_cast<double>(result.bounded)},
                    {"evaluated", static_cast<double>(result.evaluated)},
                    {"scored", static_cast<double>(result.scored)},
                    {"folded", static_cast<double>(result.folded)},
                    {"seconds", result.seconds},
                    {"top", candidates(result.top)},
                    {"pareto", candidates(result.pareto)}},
        out);
}

// Where the plan the search started from stands: outside the searched space (by name), its
// rank among the scored layouts, against the best row, and its headroom.
void printGivenText(const SearchOptions& search, const SearchResult& result, std::ostream& out)
{
    if (!result.given_outside.empty()) {
        out << "\n  This plan's layout is outside the searched space, so it is no row of the "
               "table:";
        for (const SearchSpaceMiss& miss : result.given_outside)
            out << "\n    " << searchSpaceMissText(miss);
        out << "\n";
    }
    if (!result.given_ok) {
        out << (result.given_outside.empty() ? "\n" : "")
            << "  This plan's layout is not scored: " << result.given_problem << "\n";
        return;
    }
    const SearchCandidate& g = result.given;
    out << (result.given_outside.empty() ? "\n" : "") << "  This plan's layout"
        << (g.moe_dispatcher != MoeDispatcher::Auto
                ? std::string(" (") + moeDispatcherName(g.moe_dispatcher) + ")"
                : std::string())
        << ": " << formatSeconds(g.step_time_s) << ", " << formatNumber(100 * g.cost.metrics.mfu, 3)
        << "% MFU, " << formatNumber(units::toGiB(g.memory_bytes), 3) << " GiB/GPU";
    // Its rank, when there are scored layouts to rank it among.
    if (result.scored > 0 && result.given_outside.empty() && result.given_within_headroom)
        out << ": rank " << result.given_rank << " of " << result.scored << " scored";
    else if (result.scored > 0)
        out << ": it would rank " << result.given_rank << " among the " << result.scored
            << " scored layouts";
    if (!result.top.empty()) {
        const SearchCandidate& best = result.top.front();
        out << "; " << againstBestText(g.step_time_s, best.step_time_s, "the best row") << " ("
            << formatNumber(100 * (g.step_time_s / best.step_time_s - 1), 3) << "%)";
        if (!result.given_parts.empty())
            out << ": " << behindText(g.step_time_s - best.step_time_s, result.given_parts);
    }
    if (!result.given_within_headroom)
        out << "; it leaves " << formatNumber(units::toGiB(g.cost.hbm_bytes - g.memory_bytes), 3)
            << " GiB free, less than the headroom's "
            << formatNumber(units::toGiB(search.constraints.min_headroom * g.cost.hbm_bytes +
                                         search.constraints.reserve_bytes),
                            3)
            << " GiB";
    out << "\n";
}

void printSearchText(const std::string& title, const Plan& plan, const SearchOptions& search,
                     const SearchResult& result, std::ostream& out)
{
    out << (plan.name.empty() ? title : plan.name) << ": " << plan.model.name << " on "
        << plan.cluster.totalGpus() << " GPUs, global batch " << plan.parallel.global_batch
        << ", objective " << searchObjectiveName(search.objective) << ", every layout on the "
        << trainingFrameworkName(plan.training.framework) << " framework (training.framework)";
    // An MoE plan's layouts with EP x expert TP > 1 run under each dispatcher searched.
    if (plan.model.isMoe()) {
        std::string names;
        for (MoeDispatcher d : search.dispatchers ? searchDispatchers(plan.training.framework)
                                                  : std::vector<MoeDispatcher>{})
            names += (names.empty() ? "" : ", ") + std::string(moeDispatcherName(d));
        out << (search.dispatchers
                    ? "; MoE token dispatchers " + names +
                          " (allgather within one NVLink domain; --keep-dispatcher keeps the "
                          "plan's)"
                    : std::string("; the plan's MoE token dispatcher, ") +
                          moeDispatcherName(resolvedMoeDispatcher(plan)));
    }
    out << "\n";
    out << "  " << result.space << " layouts: " << result.scored
        << " scored (fit with the headroom free, kept for ranking), " << result.did_not_fit
        << " over memory";
    out << ", " << result.invalidCount() << " invalid";
    if (result.excludedCount() > 0)
        out << ", " << result.excludedCount() << " excluded by constraints";
    if (result.duplicates > 0)
        out << ", " << result.duplicates << " same plan as their ZeRO-0 twin";
    out << " (" << formatSeconds(result.seconds) << ", "
        << formatNumber(double(result.space) / std::max(result.seconds, 1e-9), 3)
        << " layouts/s, every layout judged, invalid and excluded included)\n";
    const std::string timing = searchTimingSentence(result, search);
    if (!timing.empty())
        out << "  " << timing << "\n";
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
    out << "  memory headroom: " << formatNumber(100 * search.constraints.min_headroom, 3)
        << "% of HBM + " << reserveText(search.constraints.reserve_bytes)
        << " (CUDA context and NCCL buffers) kept free; step times within "
        << plainPercent(kSearchTieTolerance)
        << " of each other rank by free memory, then the simpler layout\n";
    if (result.top.empty()) {
        out << "\n  no layout fits: try more GPUs, a smaller micro-batch or full recompute\n";
        printGivenText(search, result, out);
        return;
    }
    size_t width = 40; // the layout column: its longest label (folded expert TP is longer)
    for (const SearchCandidate& c : result.top)
        width = std::max(width, candidateLabel(c).size() + 1);
    const int column = static_cast<int>(width);
    out << "\n  " << std::left << std::setw(4) << "#" << std::setw(column) << "layout" << std::right
        << std::setw(11) << "step" << std::setw(10) << "GiB/GPU" << std::setw(8) << "MFU"
        << "  behind the best by\n";
    for (size_t i = 0; i < result.top.size(); ++i) {
        const SearchCandidate& c = result.top[i];
        const std::string layout = candidateLabel(c);
        out << "  " << std::left << std::setw(4) << (i + 1) << std::setw(column) << layout
            << std::right << std::setw(11) << formatSeconds(c.step_time_s) << std::setw(10)
            << formatNumber(units::toGiB(c.memory_bytes), 3) << std::setw(7)
            << formatNumber(100 * c.cost.metrics.mfu, 3) << "%  "
            << searchRowBehind(c, static_cast<int>(i) + 1) << "\n";
    }
    printGivenText(search, result, out);
    out << "\n  Pareto front, memory per GPU against step time (" << result.pareto.size()
        << " plans): ";
    for (size_t i = 0; i < result.pareto.size(); ++i)
        out << (i ? ", " : "") << formatNumber(units::toGiB(result.pareto[i].memory_bytes), 3)
            << " GiB " << formatSeconds(result.pareto[i].step_time_s);
    out << "\n";
}

} // namespace

Options searchOptions()
{
    return {
        valueOption(
            "--objective", "O",
            QString::fromStdString("What to rank by: " + enumChoices(kSearchObjectiveNames, ", ") +
                                   " (default step-time).")),
        valueOption("--top", "N",
                    "How many layouts to list (default 10). Ranking: by the objective; scores "
                    "within 0.5% of the fastest layout not yet ranked are a tie, ranked by free "
                    "memory (0.5 GiB steps), then the "
                    "simpler layout (fewer parallel dimensions, smaller TP/PP, no interleave, "
                    "lower ZeRO, less recompute). Layouts that are the same plan fold into one "
                    "row. Each row: its step time minus the best's, then the components that "
                    "add up to it."),
        valueOption("--threads", "K",
                    "Worker threads, 1 to 256 (default 1; same ranking for any count)."),
        flagOption("--exhaustive",
                   "Time every valid layout (the reference). By default a layout whose step-time "
                   "lower bound shows it cannot reach the top N, beat this plan or join the "
                   "Pareto front is checked for memory only, not timed (every objective is "
                   "monotone in step time); the rows, ranks, front and counts are the same "
                   "either way, only the time differs."),
        flagOption("--bound", "The step-time bound (the default; kept for scripts): an error "
                              "with --exhaustive."),
        valueOption("--max-tp", "N", "Constraint: tensor parallelism at most N."),
        flagOption("--keep-dispatcher",
                   "MoE: every layout runs the plan's training.moe_dispatcher. By default each "
                   "layout whose EP x expert TP exceeds 1 is tried with each token dispatcher the "
                   "plan's framework has (Megatron-Core: alltoall, allgather within one NVLink "
                   "domain, deepep; torchtitan: alltoall, deepep)."),
        flagOption("--pp-across-nodes",
                   "Constraint: every pipeline stage of a group on a different node."),
        valueOption("--headroom", "SHARE",
                    "Constraint: leave this share of HBM free on the fullest stage, in [0, 1) "
                    "(default 0.05), on top of --reserve."),
        valueOption("--reserve", "GIB",
                    "Constraint: and this many GiB more for what the engine does not count "
                    "(default 1.43: a CUDA context, 781 MiB, PyTorch issue #34323, and one NCCL "
                    "communicator, 688 MiB, NVIDIA/nccl issue #964). --headroom 0 --reserve 0 "
                    "keeps every layout that fits."),
        valueOption("--min-headroom", "SHARE", "The same as --headroom (older name)."),
        valueOption("--micro-batch", "N", "Constraint: this micro-batch size only."),
        valueOption("--max-interleave", "V",
                    "Search interleave (virtual pipeline stages) 1 to V, V at most 64 (default 4; "
                    "a plan with a larger interleave is named as outside the searched space)."),
        valueOption("--max-micro-batch", "N",
                    "Search micro-batch sizes 1, 2, 4, ... up to N (default 16)."),
        valueOption("--tokens-per-step", "T",
                    "Set the global batch to T / seq_len whole sequences instead of the plan's."),
        jsonOption(),
    };
}

int runSearch(const Args& args, std::ostream& out)
{
    Plan plan = planFromFile(args.positional().front());
    applyTokensPerStep(args, &plan);
    const SearchOptions search = searchFromArgs(args);
    const SearchResult result = searchPlans(plan, HardwareCatalog::bundled(), search);
    if (!result.ok)
        throw UsageError(result.error +
                         (!result.over_budget ? ""
                          : plan.model.isMoe() && search.dispatchers
                              ? "; narrow it with --max-tp, --micro-batch, --max-interleave, "
                                "--max-micro-batch or --keep-dispatcher"
                              : "; narrow it with --max-tp, --micro-batch, --max-interleave or "
                                "--max-micro-batch"));
    if (args.flag("--json"))
        printSearchJson(plan, search, result, out);
    else
        printSearchText(args.positional().front(), plan, search, result, out);
    return result.top.empty() ? kExitNo : kExitOk;
}

} // namespace paraplan::cli
