#include "planevaluator.h"

#include "clusterio.h"
#include "units.h"

#include <algorithm>
#include <cmath>

namespace paraplan::ui {
PlanEvaluator::PlanEvaluator(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const PlanResults>>();
    qRegisterMetaType<std::vector<paraplan::PlanIssue>>();
}

std::shared_ptr<const StepEngine> PlanEvaluator::engineFor(const ClusterSpec& cluster)
{
    return m_engines.engineFor(cluster);
}

void PlanEvaluator::evaluate(const Plan& plan)
{
    // An invalid model or cluster cannot even build an engine: reject before. The engine
    // checks the rest of the plan itself.
    std::vector<PlanIssue> issues = validateModelAndCluster(plan, HardwareCatalog::bundled());
    if (!issues.empty()) {
        emit planRejected(issues);
        return;
    }
    auto results = std::make_shared<PlanResults>();
    results->plan = plan;
    // The plan's own engine, looked up once for the plan and the sweeps that keep its
    // cluster.
    const std::shared_ptr<const StepEngine> engine = engineFor(plan.cluster);
    results->cost = engine->evaluate(plan);
    if (!results->cost.ok) {
        emit planRejected(results->cost.issues);
        return;
    }
    results->analysis = analyzePlan(
        plan, results->cost, *engine,
        [this](const ClusterSpec& cluster) { return engineFor(cluster); },
        HardwareCatalog::bundled());
    m_latest = results;
    emit resultsAvailable(results);
}

} // namespace paraplan::ui
