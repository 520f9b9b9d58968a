#pragma once

#include "collectivemodel.h"
#include "plan.h"
#include "stepmodel.h"

#include <QJsonObject>

namespace paraplan {

/// One collective's cost as JSON: time, latency and bandwidth terms, algbw/busbw, the
/// bottleneck tier, placement and phases (what `paraplan-cli collective --json` prints).
QJsonObject collectiveResultJson(const CollectiveResult& result);
/// A training step's cost as JSON: breakdown, memory per stage, every collective, metrics
/// (what `paraplan-cli evaluate --json` and `report --json` print).
QJsonObject stepCostToJson(const Plan& plan, const StepCost& cost);

} // namespace paraplan
