#include "tablemodels.h"

#include "summary.h"
#include "units.h"

#include <QBrush>
#include <QColor>

namespace paraplan::ui {
namespace {

QString text(const std::string& value)
{
    return QString::fromStdString(value);
}

} // namespace

void CollectivesModel::setResults(std::shared_ptr<const PlanResults> results)
{
    beginResetModel();
    m_results = std::move(results);
    endResetModel();
}

const CollectiveCost* CollectivesModel::collective(int row) const
{
    if (!m_results || row < 0 || row >= static_cast<int>(m_results->cost.collectives.size()))
        return nullptr;
    return &m_results->cost.collectives[static_cast<size_t>(row)];
}

int CollectivesModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_results)
        return 0;
    return static_cast<int>(m_results->cost.collectives.size());
}

int CollectivesModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CollectivesModel::data(const QModelIndex& index, int role) const
{
    const CollectiveCost* c = collective(index.row());
    if (!c || !index.isValid())
        return {};
    if (role == Qt::TextAlignmentRole)
        return index.column() == Purpose || index.column() <= Op || index.column() == Tier
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole)
        return QString("%1 of %2 over %3 ranks (stride %4): %5 at %6, %7, %8 protocol. "
                       "Double-click for the derivation.")
            .arg(collectiveOpName(c->call.op), text(units::formatBytes(c->call.bytes)))
            .arg(text(groupedNumber(c->call.ranks)), text(groupedNumber(c->stride)))
            .arg(tierName(c->call.bottleneck), text(units::formatGBps(c->call.bottleneck_Bps)),
                 regimeName(c->call.regime), protocolName(c->call.protocol));
    if (role == Qt::UserRole) { // raw values, for sorting and tests
        switch (index.column()) {
        case Bytes:
            return c->call.bytes;
        case TimeEach:
            return c->call.time_s;
        case Total:
            return c->total_s;
        case Exposed:
            return c->exposed_s;
        case Ranks:
            return c->call.ranks;
        default:
            break;
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Group:
        return QString(c->group).toUpper();
    case Op:
        return QString(collectiveOpName(c->call.op));
    case Bytes:
        return text(units::formatBytes(c->call.bytes));
    case Ranks:
        return text(groupedNumber(c->call.ranks));
    case Tier:
        return QString(tierName(c->call.bottleneck));
    case TimeEach:
        return text(units::formatSeconds(c->call.time_s));
    case Calls:
        return text(units::formatNumber(c->calls_per_step, 4));
    case Total:
        return text(units::formatSeconds(c->total_s));
    case Exposed:
        return text(units::formatSeconds(c->exposed_s));
    case Purpose:
        return QString(c->purpose);
    }
    return {};
}

QVariant CollectivesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* kHeaders[ColumnCount] = {"Group",        "Op",        "Bytes (S)",  "Ranks",
                                                "Tier crossed", "Time each", "Calls/step", "Total",
                                                "Exposed",      "Carries"};
    return QString(kHeaders[section]);
}

void MemoryModel::setResults(std::shared_ptr<const PlanResults> results)
{
    beginResetModel();
    m_results = std::move(results);
    endResetModel();
}

int MemoryModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_results)
        return 0;
    return static_cast<int>(m_results->cost.stages.size());
}

int MemoryModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

namespace {
// GiB to two decimals; a share too small to show is "<0.01", never a zero that is not one
// (ZeRO over 31,250 ranks leaves 0.0008 GiB of optimizer state a GPU).
QString gibCell(double bytes)
{
    const double gib = units::toGiB(bytes);
    if (gib > 0 && gib < 0.005)
        return QStringLiteral("<0.01");
    return QString::number(gib, 'f', 2);
}
} // namespace

QVariant MemoryModel::data(const QModelIndex& index, int role) const
{
    if (!m_results || !index.isValid() || index.row() >= rowCount())
        return {};
    const StageCost& st = m_results->cost.stages[static_cast<size_t>(index.row())];
    const double bytes[] = {0,
                            0,
                            st.weights_bytes,
                            st.grads_bytes,
                            st.optimizer_bytes,
                            st.activations_bytes,
                            st.buffers_bytes,
                            st.total_bytes};
    if (role == Qt::TextAlignmentRole)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && index.column() == Fits && !st.fits)
        return QBrush(QColor(190, 30, 30));
    if (role == Qt::UserRole && index.column() >= Weights && index.column() <= Total)
        return bytes[index.column()];
    if (role == Qt::ToolTipRole && index.column() >= Weights && index.column() <= Total)
        return text(units::formatGiB(bytes[index.column()])); // four significant digits
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Stage:
        return st.stage;
    case Layers:
        return st.layers;
    case Fits:
        return st.fits ? QString("yes") : QString("no");
    default:
        return gibCell(bytes[index.column()]);
    }
}

QVariant MemoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* kHeaders[ColumnCount] = {
        "Stage",           "Layers",          "Weights (GiB)",
        "Gradients (GiB)", "Optimizer (GiB)", "Activations (GiB)",
        "Buffers (GiB)",   "Total (GiB)",     "Fits"};
    return QString(kHeaders[section]);
}

} // namespace paraplan::ui
