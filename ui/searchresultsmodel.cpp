// The Search tab's ranked table: one row per candidate, numbers sortable as numbers, and
// "behind the best by" as a net figure with its parts in the tooltip.
#include "searchpanel.h"

#include "summary.h"
#include "units.h"

#include <QObject>

namespace paraplan::ui {

QString layoutText(const ParallelLayout& p)
{
    return QString::fromStdString(paraplan::layoutLabel(p));
}

QString candidateText(const SearchCandidate& candidate)
{
    return QString::fromStdString(paraplan::candidateLabel(candidate));
}

QString comparedText(const ComparedPlan& plan)
{
    return QString::fromStdString(paraplan::candidateLabel(plan.layout, plan.moe_dispatcher));
}

QString stageMemory(const StepCost& cost)
{
    QStringList totals;
    for (const StageCost& stage : cost.stages)
        totals << QString::number(units::toGiB(stage.total_bytes), 'f', 1);
    if (totals.size() > 8) // long pipelines: first and last stages
        totals = totals.mid(0, 4) + QStringList{"..."} + totals.mid(totals.size() - 3);
    return totals.join(" / ");
}

// The column shows the net difference and the row's note; the selected row's parts are
// spelled out under the table (m_why) and in the tooltip.
QString behindCell(const SearchCandidate& c, int rank)
{
    return QString::fromStdString(searchRowNet(c, rank));
}

QString behindToolTip(const SearchCandidate& c, int rank)
{
    QStringList lines;
    if (rank == 1) {
        lines << QObject::tr("The first of the ranking: every other row is set against it.");
    } else {
        lines << QObject::tr("Step time minus the best's: %1%2. Its parts, which add up to it:")
                     .arg(c.behind_s >= 0 ? "+" : "",
                          QString::fromStdString(units::formatSeconds(c.behind_s)));
        for (const BehindPart& part : c.behind)
            lines << QString("  %1 %2%3")
                         .arg(QString::fromStdString(part.label), part.seconds >= 0 ? "+" : "",
                              QString::fromStdString(units::formatSeconds(part.seconds)));
        if (c.tie_with > 0 && c.tie_with < rank)
            lines << QObject::tr("A tie with #%1: scores within %2% of the group's fastest "
                                 "rank by free memory (0.5 GiB steps), then the simpler layout.")
                         .arg(c.tie_with)
                         .arg(100 * kSearchTieTolerance, 0, 'f', 1);
    }
    if (c.folded > 0)
        lines << QObject::tr("%n other layout(s) are the same plan and are folded into this row "
                             "(ZeRO stages at a shard group of one rank, or settings that change "
                             "neither step time nor memory).",
                             nullptr, c.folded);
    return lines.join("\n");
}

// --- the results model ---------------------------------------------------------------------

void SearchResultsModel::setResult(const SearchResult& result, int gpus)
{
    beginResetModel();
    m_candidates = result.top;
    m_gpus = std::max(1, gpus);
    endResetModel();
}

const SearchCandidate* SearchResultsModel::candidate(int row) const
{
    if (row < 0 || row >= static_cast<int>(m_candidates.size()))
        return nullptr;
    return &m_candidates[static_cast<size_t>(row)];
}

int SearchResultsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_candidates.size());
}

int SearchResultsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SearchResultsModel::data(const QModelIndex& index, int role) const
{
    const SearchCandidate* c = candidate(index.row());
    if (!c)
        return {};
    const double tokensPerGpu = c->tokens_per_s / m_gpus;
    if (role == Qt::UserRole) { // sort key
        switch (index.column()) {
        case Rank:
            return index.row();
        case Layout:
            return candidateText(*c);
        case StepTime:
            return c->step_time_s;
        case Memory:
            return c->memory_bytes;
        case Mfu:
            return c->cost.metrics.mfu;
        case TokensPerGpu:
            return tokensPerGpu;
        case Behind:
            return c->behind_s;
        }
    }
    if (role == Qt::TextAlignmentRole)
        return index.column() == Layout || index.column() == Behind
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == Behind)
        return behindToolTip(*c, index.row() + 1);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Rank:
        return index.row() + 1;
    case Layout:
        return candidateText(*c);
    case StepTime:
        return QString::fromStdString(units::formatSeconds(c->step_time_s));
    case Memory:
        return QString::number(units::toGiB(c->memory_bytes), 'f', 1);
    case Mfu:
        return QString("%1%").arg(100 * c->cost.metrics.mfu, 0, 'f', 1);
    case TokensPerGpu:
        return QString::number(tokensPerGpu, 'f', 0);
    case Behind:
        return behindCell(*c, index.row() + 1);
    }
    return {};
}

QVariant SearchResultsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Rank:
        return tr("#");
    case Layout:
        return tr("Layout");
    case StepTime:
        return tr("Step time");
    case Memory:
        return tr("GiB/GPU");
    case Mfu:
        return tr("MFU");
    case TokensPerGpu:
        return tr("tokens/s/GPU");
    case Behind:
        return tr("Behind the best by");
    }
    return {};
}

} // namespace paraplan::ui
