#pragma once

#include "planevaluator.h"

#include <QAbstractTableModel>

#include <memory>

namespace paraplan::ui {

/// The collectives of the critical stage: group, op, bytes, ranks, tier, times.
class CollectivesModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column
    {
        Group,
        Op,
        Bytes,
        Ranks,
        Tier,
        TimeEach,
        Calls,
        Total,
        Exposed,
        Purpose,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    void setResults(std::shared_ptr<const PlanResults> results);
    const CollectiveCost* collective(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const PlanResults> m_results;
};

/// Memory per GPU for every pipeline stage, in GiB.
class MemoryModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column
    {
        Stage,
        Layers,
        Weights,
        Grads,
        Optimizer,
        Activations,
        Buffers,
        Total,
        Fits,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    void setResults(std::shared_ptr<const PlanResults> results);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const PlanResults> m_results;
};

} // namespace paraplan::ui
