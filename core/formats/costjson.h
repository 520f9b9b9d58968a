#pragma once

#include "analysis.h"

#include "analysis.h"
#include "collectivemodel.h"
#include "plan.h"
#include "stepmodel.h"

#include <string>

#include <QJsonObject>

namespace paraplan {

/// One collective's cost as JSON: time, latency and bandwidth terms, algbw/busbw, the
/// bottleneck tier, placement and phases (what `paraplan-cli collective --json` prints).
QJsonObject collectiveResultJson(const CollectiveResult& result);
/// A training step's cost as JSON: breakdown, memory per stage, every collective, metrics
/// (what `paraplan-cli evaluate --json` and `report --json` print).
QJsonObject stepCostToJson(const Plan& plan, const StepCost& cost);
/// The bandwidth-cliff series as JSON (what `paraplan-cli cliffs --json` prints).
QJsonObject planAnalysisToJson(const PlanAnalysis& analysis);
/// The same as one CSV table in long form: series, x, y, note (RFC 4180 quoting).
std::string planAnalysisToCsv(const PlanAnalysis& analysis);
/// The step's collectives as one CSV table (RFC 4180: header row, CRLF, quoting): what
/// `paraplan-cli report --csv --table collectives` writes.
std::string stepCollectivesCsv(const StepCost& cost);
/// Memory per GPU by pipeline stage as one CSV table (`report --csv --table memory`).
std::string stepMemoryCsv(const StepCost& cost);

} // namespace paraplan
