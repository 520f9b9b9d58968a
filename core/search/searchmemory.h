#pragma once

#include "hardware.h"
#include "model.h"
#include "plan.h"

namespace paraplan {

/// The memory verdict of a layout without its timing: the bytes per GPU of the fullest
/// pipeline stage, the figure StepEngine::evaluate() reports as
/// StepCost::max_stage_total_bytes, from the engine's own per-stage memory functions
/// (core/engine/stagememory.h, fullestStageBytes()), so that it equals the full evaluation's
/// figure to the last bit (tst_search memoryOnlyEqualsTheEngine checks it on every layout of
/// the bundled examples). The search uses it for the layouts its step-time bound does not
/// cost, so that they are still counted as scored, over memory or short of headroom; this
/// class keeps the base plan's parameter count and the GPU's HBM for it.
class LayoutMemory
{
public:
    /// For plans on `gpu` with the model and training settings of `base` (the layout varies).
    LayoutMemory(const Plan& base, const GpuSpec& gpu);
    /// The fullest stage's bytes per GPU of `plan` (its model and training are the base's);
    /// meaningful only for a plan the engine accepts (validatePlan() finds no issue).
    double fullestStageBytes(const Plan& plan) const;
    /// The GPU's HBM in bytes, as StepCost::hbm_bytes.
    double hbmBytes() const { return m_hbmBytes; }
    /// What the fullest stage may fill and still fit, as StepCost::fits judges: HBM less the
    /// base plan's runtime reserve (figures.runtime_reserve_bytes).
    double usableBytes() const { return m_hbmBytes - m_runtimeReserve; }

private:
    ParameterCount m_count;
    double m_hbmBytes = 0;
    double m_runtimeReserve = 0;
};

} // namespace paraplan
