#pragma once

#include "plots.h"

namespace paraplan {
struct ComputeMeasurements;
struct Plan;
class HardwareCatalog;
} // namespace paraplan

namespace paraplan::ui {

/// Achieved GEMM rate against GEMM size: the probe's measured GEMMs (grid shapes by dtype,
/// the plan's own shapes) beside what the engine assumes for the same shapes.
class GemmPlot : public PlotView
{
    Q_OBJECT
public:
    explicit GemmPlot(QWidget* parent = nullptr);
    void setData(const ComputeMeasurements& measured, const Plan& plan,
                 const HardwareCatalog& catalog);
};

} // namespace paraplan::ui
