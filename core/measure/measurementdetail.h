#pragma once
// Helpers the measurement readers share (measurement.cpp, nccltests.cpp); not a public API.
#include "measurement.h"

#include <QString>

namespace paraplan::detail {

/// "all_reduce_perf", "all_reduce", ... -> the op; *ok false for anything else.
CollectiveOp opFromName(const QString& name, bool* ok);
/// Appends the point, deriving algbw and busbw from the time where the source gave none.
void addPoint(MeasurementRun* run, MeasuredPoint point);

} // namespace paraplan::detail
