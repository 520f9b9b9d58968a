#pragma once

// Small helpers the engine suites share: a layout from its degrees and one evaluation of a
// plan with the bundled catalog.

#include "hardware.h"
#include "stepmodel.h"

namespace paraplan::test {

inline ParallelLayout layout(int tp, int pp, int dp, int micro, int global, int zero = 0)
{
    ParallelLayout p;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.micro_batch = micro;
    p.global_batch = global;
    p.zero = zero;
    return p;
}

inline StepCost evaluate(const Plan& plan)
{
    return StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
}

} // namespace paraplan::test
