#pragma once

#include "derivation.h"

namespace paraplan {

/// Data-parallel gradient synchronisation per step under ZeRO (Rajbhandari et al. 2020).
/// Stages 0-2 move 2(n-1)/n P bytes per rank (all-reduce, or reduce-scatter + all-gather);
/// stage 3 adds a parameter all-gather: 3(n-1)/n P.
struct DataParallelTraffic
{
    double wire_bytes_per_rank = 0;
    double passes = 0; ///< 2 or 3 passes of (n-1)/n P
};
DataParallelTraffic dataParallelTraffic(int zero_stage, double param_bytes, int ranks);

/// Model-state bytes per GPU for mixed-precision Adam: 2 bytes of weights, 2 of gradients and
/// `optimizer_bytes_per_param` (12: fp32 master, momentum, variance) per parameter, sharded
/// over `ranks` by ZeRO stage (Rajbhandari et al. 2020, ZeRO, section 5 and figure 1).
double zeroModelStateBytesPerGpu(int zero_stage, double params, int ranks,
                                 double optimizer_bytes_per_param = 12);

/// The derivation of both, optionally with the sync time at `bandwidth_GBps` (0: omitted).
Derivation deriveDataParallelTraffic(int zero_stage, double params, double bytes_per_param,
                                     int ranks, double bandwidth_GBps);

} // namespace paraplan
