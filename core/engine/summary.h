#pragma once

#include "memoryfix.h"
#include "plan.h"
#include "stepmodel.h"

#include <string>
#include <vector>

namespace paraplan {

/// One headline figure of a plan, formatted once: the window, the PDF report and the CLI
/// render these strings.
struct HeadlineFigure
{
    std::string key;      ///< "step_time", "tokens_per_s", "mfu", "memory", "time_to_train", "cost"
    std::string label;    ///< "step time"
    std::string value;    ///< short: "27.7 s", "146,855", "57.6% / 57.6%", "43.2 / 80 GiB"
    std::string detail;   ///< long: the value with what it rests on
    std::string anchor;   ///< the derivation step it comes from ("" when none)
    bool warning = false; ///< the figure says something is wrong (the plan does not fit)
};

/// The headline of an evaluated plan, in display order.
std::vector<HeadlineFigure> headlineFigures(const Plan& plan, const StepCost& cost);

/// The memory verdict in words: "memory (fits)", "memory (tight)", "memory (does not fit)".
std::string memoryLabel(const StepCost& cost);
/// The fullest stage's peak against HBM, its reserved bytes, and what is spare or over.
std::string memoryDetail(const StepCost& cost);
/// The verdict and, where the plan does not fit, the changes that would make it fit, in
/// lines: memoryDetail(), then "To make it fit: recompute full: 13.4% slower, ...".
std::string memoryVerdictText(const StepCost& cost, const std::vector<MemoryFix>& fixes);
/// "tp8 pp4 dp4 cp1 z1 sp selective v5 mb1": a layout in one line (search, comparisons).
std::string layoutLabel(const ParallelLayout& layout);
/// A count with thousands separators, whatever the machine's locale: "146,855".
std::string groupedNumber(double value);
/// A long duration: days with thousands separators above a day ("1,146.5 days"), hours below
/// ("5.8 hours"), minutes below an hour ("42.0 minutes").
std::string formatDays(double seconds);

} // namespace paraplan
