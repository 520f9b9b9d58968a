#pragma once

#include "analysis.h"
#include "enginecache.h"
#include "stepmodel.h"

#include <QObject>
#include <QString>
#include <QVector>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace paraplan::ui {

/// Everything the window shows for one plan, computed by the core in one pass.
struct PlanResults
{
    Plan plan;
    StepCost cost;
    PlanAnalysis analysis; ///< the bandwidth-cliff series (core/engine/analysis.h)
    double step_time_s() const { return cost.step_time_s; }
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

    /// Engines by cluster (compared member by member), the plan's and its what-ifs'.
    EngineCache m_engines{64, HardwareCatalog::bundled()};
    std::shared_ptr<const PlanResults> m_latest;
};

} // namespace paraplan::ui

Q_DECLARE_METATYPE(std::shared_ptr<const paraplan::ui::PlanResults>)
Q_DECLARE_METATYPE(std::vector<paraplan::PlanIssue>)
