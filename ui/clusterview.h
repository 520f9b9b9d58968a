#pragma once

#include "planevaluator.h"

#include <QWidget>

#include <memory>

namespace paraplan::ui {

/// A read-only picture of the cluster: racks, nodes and GPUs, coloured by the TP group, the
/// pipeline stage or the DP replica each GPU belongs to.
class ClusterView : public QWidget
{
    Q_OBJECT

public:
    enum class ColourBy
    {
        TensorGroup,
        PipelineStage,
        DataReplica,
    };

    explicit ClusterView(QWidget* parent = nullptr);
    void setResults(std::shared_ptr<const PlanResults> results);
    void setColourBy(ColourBy colourBy);
    ColourBy colourBy() const { return m_colourBy; }

    /// The colour group of global GPU `gpu` under the current mode (for tests).
    int groupOf(long long gpu) const;
    QSize sizeHint() const override { return {640, 420}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::shared_ptr<const PlanResults> m_results;
    ColourBy m_colourBy = ColourBy::TensorGroup;
};

} // namespace paraplan::ui
