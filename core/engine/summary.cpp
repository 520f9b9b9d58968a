#include "summary.h"

#include "units.h"

#include <QLocale>
#include <QString>
#include <algorithm>
#include <cmath>

namespace paraplan {

std::string groupedNumber(double value)
{
    return QLocale(QLocale::English).toString(value, 'f', 0).toStdString();
}

std::string formatDays(double seconds)
{
    // Under a day reads in hours ("5.8 hours", not "0.2 days"); under an hour in minutes.
    const QLocale english(QLocale::English);
    if (seconds < 3600)
        return english.toString(seconds / 60, 'f', 1).toStdString() + " minutes";
    if (seconds < 86400)
        return english.toString(seconds / 3600, 'f', 1).toStdString() + " hours";
    return english.toString(seconds / 86400, 'f', 1).toStdString() + " days";
}

std::string layoutLabel(const ParallelLayout& p)
{
    std::string text = "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " dp" +
                       std::to_string(p.dp) + " cp" + std::to_string(p.cp);
    if (p.ep > 1)
        text += " ep" + std::to_string(p.ep);
    // Folded expert groups (expert TP apart from TP) say so.
    if (p.expertTp() != p.tp)
        text += " etp" + std::to_string(p.expertTp());
    text += " z" + std::to_string(p.zero);
    if (p.sequence_parallel)
        text += " sp";
    text += std::string(" ") + recomputeName(p.recompute) + " v" + std::to_string(p.interleave) +
            " mb" + std::to_string(p.micro_batch);
    return text;
}

std::string memoryLabel(const StepCost& cost)
{
    return !cost.fits ? "memory (does not fit)" : cost.tight ? "memory (tight)" : "memory (fits)";
}

std::string memoryDetail(const StepCost& cost)
{
    // "61.14 of 80.00 GiB at stage 0's peak (64.20 GiB reserved by the allocator); fits with
    // 17.43 GiB to spare (1.43 GiB kept for the CUDA context and NCCL)".
    auto gib = [](double bytes) {
        return QString::number(units::toGiB(bytes), 'f', 2).toStdString();
    };
    // Where and when the peak falls: the end of a stage's warm-up (its in-flight micro-batches'
    // activations held), or on the last stage and without a pipeline the loss's backward.
    const size_t last = cost.stages.size() - 1;
    const size_t fullest = std::min(last, static_cast<size_t>(cost.fullest_stage));
    const double held = cost.stages.empty() ? 0 : cost.stages[fullest].in_flight_microbatches;
    const std::string inFlight =
        QString::number(held, 'f', held == std::floor(held) ? 0 : 2).toStdString();
    const std::string where =
        cost.stages.size() > 1
            ? "stage " + std::to_string(cost.fullest_stage) + "'s peak, " +
                  (fullest == last ? "its first backward" : "the end of its warm-up") + " with " +
                  inFlight + (inFlight == "1" ? " micro-batch" : " micro-batches") + " in flight"
            : "its peak, the loss's backward";
    std::string text = gib(cost.max_stage_total_bytes) + " of " + gib(cost.hbm_bytes) + " GiB at " +
                       where + " (" + gib(cost.max_stage_reserved_bytes) +
                       " GiB reserved by the allocator); ";
    const double spare = cost.spareBytes();
    text += spare >= 0 ? "fits with " + gib(spare) + " GiB to spare"
                       : "does not fit: over by " + gib(-spare) + " GiB";
    text += " (" + gib(cost.runtime_reserve_bytes) + " GiB kept for the CUDA context and NCCL)";
    if (cost.tight)
        text += "; tight: the allocator's reserve would not fit";
    return text;
}

std::string memoryVerdictText(const StepCost& cost, const std::vector<MemoryFix>& fixes)
{
    std::string text = "Memory: " + memoryDetail(cost) + ".";
    if (cost.fits)
        return text;
    if (fixes.empty())
        return text + "\nNo change tried fits, alone or two together (more recompute, a higher "
                      "ZeRO stage, half the micro-batch, sequence parallelism, no interleaving, "
                      "and where DP is even twice the PP or TP): more GPUs, or a GPU with more "
                      "memory.";
    text += "\nTo make it fit (each evaluated; the GPUs and the global batch kept):";
    for (const MemoryFix& fix : fixes)
        text += "\n  " + memoryFixText(fix);
    return text;
}

std::vector<HeadlineFigure> headlineFigures(const Plan& plan, const StepCost& cost)
{
    const StepMetrics& mt = cost.metrics;
    auto fixed = [](double value, int decimals) {
        return QString::number(value, 'f', decimals).toStdString();
    };
    const std::string stepTime = units::formatSeconds(cost.step_time_s);
    const std::string mfu = fixed(100 * mt.mfu, 1) + "% / " + fixed(100 * mt.hfu, 1) + "%";
    std::vector<HeadlineFigure> figures = {
        {"step_time", "step time", stepTime, stepTime, "step-time", false},
        {"tokens_per_s", "tokens/s", groupedNumber(mt.tokens_per_s),
         groupedNumber(mt.tokens_per_s) + " tokens/s (" + groupedNumber(mt.tokens_per_step) +
             " tokens per step)",
         "tokens-per-second", false},
        {"mfu", "MFU / HFU", mfu, mfu, "mfu", false},
        {"memory", memoryLabel(cost),
         fixed(units::toGiB(cost.max_stage_total_bytes), 1) + " / " +
             fixed(units::toGiB(cost.hbm_bytes), 0) + " GiB",
         memoryDetail(cost), "memory-verdict", !cost.fits}};
    if (mt.time_to_train_s > 0) {
        figures.push_back({"time_to_train", "time to train", formatDays(mt.time_to_train_s),
                           formatDays(mt.time_to_train_s) + " for " +
                               groupedNumber(plan.training.train_tokens / 1e9) + " B tokens (" +
                               groupedNumber(mt.gpu_hours) + " GPU-hours)",
                           "time-to-train", false});
        if (mt.cost_usd > 0)
            figures.push_back({"cost", "cost", "$" + fixed(mt.cost_usd / 1e6, 2) + "M",
                               "$" + groupedNumber(mt.cost_usd) + " at $" +
                                   fixed(plan.training.gpu_hour_usd, 2) + " per GPU-hour",
                               "cost", false});
    }
    return figures;
}

} // namespace paraplan
