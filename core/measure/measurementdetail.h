#pragma once
// Helpers the measurement readers share (measurement.cpp, nccltests.cpp); not a public API.
#include "inputlimits.h"
#include "measurement.h"

#include <QString>

#include <optional>
#include <string>

namespace paraplan::detail {

/// A measured time in the microseconds nccl-tests and the probe print: limits::kMeasuredSeconds.
inline constexpr limits::Range kTimeUs{
    "time", limits::kMeasuredSeconds.min * 1e6, limits::kMeasuredSeconds.max * 1e6, "us", false,
    false};
/// A measured bandwidth column (algbw, busbw, a copy's GB/s): 0 (nccl-tests prints 0.00 for the
/// smallest sizes) up to limits::kLinkGBps.max, 100 TB/s.
inline constexpr limits::Range kMeasuredGBps{"bandwidth", 0,     limits::kLinkGBps.max,
                                             "GB/s",      false, false};

/// "all_reduce_perf", "all_reduce", ... -> the op; *ok false for anything else.
CollectiveOp opFromName(const QString& name, bool* ok);
/// Empty when every figure of the point lies in its stated range (size, time, ranks, hosts,
/// the given bandwidths and the bus bandwidth its size and time imply), else the first
/// problem as limits::check words it: "time must be a number from 0.001 to ... us (got 1e+300)".
std::optional<std::string> pointProblem(const MeasuredPoint& point);
/// Appends the point, deriving algbw and busbw from the time where the source gave none.
void addPoint(MeasurementRun* run, MeasuredPoint point);

} // namespace paraplan::detail
