#pragma once

// The parts of derivePlan (stepwalkthrough.cpp: inputs, symbols, FLOPs and one layer;
// stepwalkthroughtotals.cpp: stages, collectives, totals, time to train, cost, memory).

#include "derivation.h"
#include "stepmodel.h"

#include <string>

namespace paraplan::walkthrough {

// One walkthrough: the plan, its cost and the derivation being written, with short names for
// the parts every section reads. Every step goes through add(), which defines the symbols of
// its formula from the table of meanings (tst_sources checks that none is left undefined).
struct Walk
{
    const Plan& plan;
    const StepCost& cost;
    Derivation& d;
    const ModelSpec& m = plan.model;
    const ParallelLayout& p = plan.parallel;
    const TrainingSettings& t = plan.training;
    const EngineFigures& f = plan.figures;
    const StepMetrics& mt = cost.metrics;
    const StepAssumptions& as = cost.assumptions;

    DerivationStep& add(std::string label, std::string formula, std::string substitution,
                        std::string result, double value, std::string unit,
                        std::string source = {}) const;
    // H: the achievable HBM bandwidth the engine used (datasheet x fraction / slowest GPU).
    double hbm() const;
    // The layer the derivation details: an MoE layer where most layers have experts (their
    // routed expert GEMMs, routing and launches), the dense layer otherwise.
    bool showsMoeLayer() const { return m.isMoe() && 2 * m.moeLayers() >= m.layers; }
    const LayerCompute& layer() const
    {
        return showsMoeLayer() ? cost.moe_layer : cost.dense_layer;
    }
    // The meaning of a symbol in this plan ("" when the table has none).
    std::string meaning(const std::string& symbol) const;

    void planInputs() const;
    void modelFlops() const;
    void layerSteps() const;
    void gemmSteps() const;
    std::string groupedSource(const GpuSpec& gpu, bool fp8) const;
    void fp8CastStep() const;
    void stageSteps() const;
    void moeDispatchStep() const;
    void collectiveSteps() const;
    void stepTotals() const;
    void trainingTotals() const;
    void memoryAndNotes() const;
};

} // namespace paraplan::walkthrough
