#pragma once

#include "layercost.h"

namespace paraplan {

/// The MoE figures of the per-layer context (docs/engine.md, "Grouped expert GEMMs" and "The
/// MoE router block"): the busiest expert rank's load, the grouped expert GEMMs' shares of
/// peak and their per-pair traffic, and the router block's kernels. Reads c.fp8 and
/// c.fp8Reference, so it runs after those are set; `gemmReference` is the GPU's dense one.
void setMoeContext(const Plan& plan, const GpuSpec& gpu, double gemmReference,
                   layercost::Context& c);

} // namespace paraplan
