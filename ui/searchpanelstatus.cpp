// The Search tab's account of a finished search: the short status line above the table and
// the whole account in its tooltip, in the words the CLI uses (searchwording.h).
#include "searchpanel.h"

#include "searchwording.h"
#include "summary.h"
#include "units.h"

#include <QComboBox>
#include <QLabel>

namespace paraplan::ui {

namespace {

QString count(long long n)
{
    // Thousands separators as every other count on screen (summary.h), whatever the locale.
    return QString::fromStdString(groupedNumber(double(n)));
}

QString seconds(double s)
{
    return QString::fromStdString(units::formatSeconds(s));
}

// What the tab offers to take the plan's layout in, else the CLI's option.
QString tabHint(const SearchSpaceMiss& miss, const Plan& base)
{
    const ParallelLayout& p = base.parallel;
    if (miss.setting == "interleave" && p.interleave <= 64)
        return QObject::tr("raise Max interleave to %1").arg(p.interleave);
    if (miss.setting == "max-tp")
        return QObject::tr("raise Largest TP to %1").arg(p.tp);
    if (miss.setting == "pp-across-nodes")
        return QObject::tr("untick \"pipeline stages on different nodes\"");
    if (miss.setting == "micro-batch" && miss.option.rfind("--micro-batch", 0) == 0)
        return QObject::tr("set Micro-batch to %1").arg(p.micro_batch);
    if (!miss.option.empty())
        return QObject::tr("search with paraplan-cli search %1")
            .arg(QString::fromStdString(miss.option));
    return {};
}

// "this plan uses interleave 5, outside the searched 1-4; raise Max interleave to 5"
QStringList outsideTexts(const SearchResult& result, const Plan& base)
{
    QStringList texts;
    for (const SearchSpaceMiss& miss : result.given_outside) {
        const QString hint = tabHint(miss, base);
        texts << QString::fromStdString(miss.text) + (hint.isEmpty() ? QString() : "; " + hint);
    }
    return texts;
}

// Each constraint with its own count: "headroom 567, max-tp 11,400".
QString byConstraint(const SearchResult& result)
{
    QStringList parts;
    for (const auto& [rule, n] : result.constrained)
        parts << QString("%1 %2").arg(QString::fromStdString(rule), count(n));
    return parts.join(", ");
}

// Where the plan the search started from stands: by name outside the space, its rank (or
// where it would fall), against the best row, and its headroom.
QString givenText(const SearchResult& result, const Plan& base, const SearchOptions& options,
                  bool brief)
{
    QString text;
    const QStringList outside = outsideTexts(result, base);
    if (!outside.isEmpty())
        text += QObject::tr(" This plan's layout is outside the searched space (%1), so it is no "
                            "row of the table")
                    .arg(outside.join("; "));
    if (!result.given_ok) {
        if (!result.given_problem.empty())
            text += (outside.isEmpty() ? QObject::tr(" This plan's layout is not scored: %1.")
                                       : QObject::tr("; it is not scored: %1."))
                        .arg(QString::fromStdString(result.given_problem));
        else if (!outside.isEmpty())
            text += ".";
        return text;
    }
    const SearchCandidate& g = result.given;
    const bool ranked = outside.isEmpty() && result.given_within_headroom;
    text += outside.isEmpty() ? QObject::tr(" This plan: %1, ").arg(seconds(g.step_time_s))
                              : QObject::tr("; at %1 it ").arg(seconds(g.step_time_s));
    if (result.scored == 0)
        text.chop(2); // nothing to rank it among
    else
        text += ranked
                    ? QObject::tr("rank %1 of %2").arg(result.given_rank).arg(count(result.scored))
                    : QObject::tr("would rank %1 among the %2 scored layouts")
                          .arg(result.given_rank)
                          .arg(count(result.scored));
    if (!result.top.empty()) {
        const SearchCandidate& best = result.top.front();
        text += ", " + QString::fromStdString(
                           againstBestText(g.step_time_s, best.step_time_s, "the best row"));
        if (!brief && !result.given_parts.empty())
            text += QObject::tr(" (%1%: %2)")
                        .arg(100 * (g.step_time_s / best.step_time_s - 1), 0, 'f', 1)
                        .arg(QString::fromStdString(
                            behindText(g.step_time_s - best.step_time_s, result.given_parts)));
    }
    if (!result.given_within_headroom)
        text += QObject::tr("; it leaves %1 GiB free, less than the headroom's %2 GiB")
                    .arg(units::toGiB(g.cost.hbm_bytes - g.memory_bytes), 0, 'f', 2)
                    .arg(units::toGiB(options.constraints.min_headroom * g.cost.hbm_bytes +
                                      options.constraints.reserve_bytes),
                         0, 'f', 2);
    return text + ".";
}

} // namespace

QString SearchPanel::fullStatus(const Plan& base, const SearchOptions& options) const
{
    const SearchResult& r = m_result;
    QString text =
        tr("%1 layouts of %2 on %3 GPUs (global batch %4) in %5 (%6 layouts/s, every layout "
           "judged, invalid and excluded included): %7 scored (fit with the headroom free, "
           "kept for ranking), %8 over memory, %9 invalid, %10 excluded by constraints "
           "(headroom: %11% of HBM + %12).")
            .arg(count(r.space), QString::fromStdString(base.model.name))
            .arg(base.cluster.totalGpus())
            .arg(base.parallel.global_batch)
            .arg(seconds(r.seconds),
                 QString::fromStdString(
                     units::formatNumber(double(r.space) / std::max(r.seconds, 1e-9), 3)),
                 count(r.scored), count(r.did_not_fit), count(r.invalidCount()),
                 count(r.excludedCount()))
            .arg(100 * options.constraints.min_headroom, 0, 'g', 3)
            .arg(QString::fromStdString(reserveText(options.constraints.reserve_bytes)));
    text += tr(" Objective: %1; step times within %2 of the fastest layout not yet ranked are a "
               "tie, ranked by free memory, then the simpler layout; %3 the same plan as their "
               "ZeRO-0 twin (not scored), %4 more folded into identical rows.")
                .arg(m_objective->currentText().toLower(),
                     QString::fromStdString(plainPercent(kSearchTieTolerance)), count(r.duplicates),
                     count(r.folded));
    const std::string timing = searchTimingSentence(r, options);
    if (!timing.empty())
        text += " " + QString::fromStdString(timing);
    QStringList rules;
    for (const auto& [rule, n] : r.rejected)
        rules << QString("%1 %2").arg(QString::fromStdString(rule), count(n));
    if (!rules.isEmpty())
        text += tr(" Invalid by rule: %1.").arg(rules.join(", "));
    if (!r.constrained.empty())
        text += tr(" Excluded by constraint: %1.").arg(byConstraint(r));
    if (r.top.empty())
        text += tr(" No layout fits: more GPUs, full recompute or a smaller batch.");
    return text + givenText(r, base, options, false);
}

// A few lines above the table: the counts, each constraint with its own, how many were
// timed, and where this plan stands; the whole account in the tooltip and statusText().
void SearchPanel::showBriefStatus(const Plan& base, const SearchOptions& options)
{
    const SearchResult& r = m_result;
    QString brief = tr("%1 layouts in %2: %3 scored, %4 over memory, %5 invalid")
                        .arg(count(r.space), seconds(r.seconds), count(r.scored),
                             count(r.did_not_fit), count(r.invalidCount()));
    if (!r.constrained.empty())
        brief += tr(", excluded by constraint: %1").arg(byConstraint(r));
    brief += tr("; %1 the same plan as their ZeRO-0 twin.").arg(count(r.duplicates));
    const std::string timing = searchTimingBrief(r, options);
    if (!timing.empty())
        brief += " " + QString::fromStdString(timing);
    if (r.top.empty())
        brief += tr(" No layout fits: more GPUs, full recompute or a smaller batch.");
    brief += givenText(r, base, options, true);
    brief += tr(" (Hover for the whole account.)");
    m_status->setText(brief);
    m_status->setToolTip(fullStatus(base, options));
}

} // namespace paraplan::ui
