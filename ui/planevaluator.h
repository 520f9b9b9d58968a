#pragma once

#include "stepmodel.h"

#include <QObject>
#include <QString>
#include <QVector>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace paraplan::ui {

/// One curve of a plot, in the plot's units.
struct Series
{
    QString name;
    QVector<double> x;
    QVector<double> y;
};

/// Everything the window shows for one plan, computed by the core in one pass.
struct PlanResults
{
    Plan plan;
    StepCost cost;
    double step_time_s() const { return cost.step_time_s; }
    // Plot 1: tokens/s and step time against TP at the same GPU count.
    QVector<double> tp_degrees;
    QVector<double> tp_tokens_per_s;
    QVector<double> tp_step_s;
    QVector<QString> tp_notes; ///< why a degree is missing ("" when valid)
    QVector<bool> tp_fits;     ///< whether that layout fits in memory
    int gpus_per_node = 1;
    // Plot 2: collective bandwidth against message size, per tier of this cluster.
    std::vector<Series> bandwidth;      ///< busbw (GB/s) against bytes, all_reduce
    std::vector<Series> bandwidth_used; ///< the plan's own collectives on those curves
    // Plot 3: step time and DP sync against GPU count (DP scaled, TP x PP x CP fixed).
    Series scaling_step;
    Series scaling_dp_total;
    Series scaling_dp_exposed;
    double rack_boundary_gpus = 0; ///< 0: the cluster has one rack at every size shown
    // Plot 4: what-ifs against the plan as it is.
    QVector<QString> what_if_labels;
    QVector<double> what_if_step_s;
};

/// Evaluates plans on the core, caching one engine per cluster so that an edit that leaves
/// the cluster alone costs microseconds.
class PlanEvaluator : public QObject
{
    Q_OBJECT

public:
    explicit PlanEvaluator(QObject* parent = nullptr);

    /// Evaluates now and emits resultsAvailable or planRejected.
    void evaluate(const Plan& plan);
    std::shared_ptr<const PlanResults> latest() const { return m_latest; }

signals:
    void resultsAvailable(std::shared_ptr<const PlanResults> results);
    void planRejected(const std::vector<paraplan::PlanIssue>& issues);

private:
    /// Shared: a sweep keeps its engine while the cache may drop entries.
    std::shared_ptr<const StepEngine> engineFor(const ClusterSpec& cluster);
    void fillSweeps(const StepEngine& engine, PlanResults* results);

    std::map<std::string, std::shared_ptr<const StepEngine>> m_engines;
    std::shared_ptr<const PlanResults> m_latest;
};

} // namespace paraplan::ui

Q_DECLARE_METATYPE(std::shared_ptr<const paraplan::ui::PlanResults>)
Q_DECLARE_METATYPE(std::vector<paraplan::PlanIssue>)
