#pragma once

#include "planevaluator.h"

#include <QWidget>

#include <memory>
#include <vector>

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

    /// A node's label as last painted: its text, the width it took and the room its box had.
    struct NodeLabel
    {
        QString text;
        double width = 0;
        double room = 0;
    };
    /// The node labels of the last paint (for tests: each fits its box).
    const std::vector<NodeLabel>& nodeLabels() const { return m_labels; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::shared_ptr<const PlanResults> m_results;
    ColourBy m_colourBy = ColourBy::TensorGroup;
    std::vector<NodeLabel> m_labels;
};

} // namespace paraplan::ui
