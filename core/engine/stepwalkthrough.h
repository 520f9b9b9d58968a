#pragma once

#include "derivation.h"
#include "stepmodel.h"

namespace paraplan {

/// The step cost of `plan` explained figure by figure: model FLOPs, one layer's compute,
/// the stage and pipeline, each collective, memory of the fullest stage, MFU and tokens/s.
Derivation derivePlan(const Plan& plan, const StepCost& cost);

} // namespace paraplan
