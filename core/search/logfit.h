#pragma once

// Calibration from a user's own training runs: each log paired with the plan it ran; the few
// free figures of the engine fitted by least squares on the relative step-time error.

#include "measurement.h"
#include "stepmodel.h"
#include "traininglog.h"

#include <string>
#include <vector>

namespace paraplan {

/// The figures a fit may free. The scales multiply each plan's own figure (capped at 1).
enum class FreeFigure
{
    GemmScale,      ///< gemm_peak_fraction
    AttentionScale, ///< attention_fraction and attention_bwd_fraction (fused kernels)
    Overlap,        ///< overlap_fraction: the share of hideable DP traffic hidden
};
const char* freeFigureName(FreeFigure figure); ///< "gemm_scale", "attention_scale", "overlap"
bool freeFigureFromName(const std::string& name, FreeFigure* figure);

/// One training run: the plan it ran and its log.
struct TrainingRun
{
    std::string plan_file;
    Plan plan;
    TrainingLog log;
};

struct FittedRun
{
    std::string plan_file;
    std::string log_file;
    std::string format;
    int steps_used = 0;
    double measured_step_time_s = 0;
    double predicted_before_s = 0;
    double predicted_after_s = 0;
};

struct LogFit
{
    std::vector<FreeFigure> figures;
    std::vector<double> values; ///< one per figure: the scales, or the overlap fraction
    std::vector<FittedRun> runs;
    double rms_before = 0; ///< RMS relative step-time error over the runs
    double rms_after = 0;
    int iterations = 0;
    std::string provenance; ///< "fitted to 3 training logs (a.log, b.log, c.log), 2026-12-01"
    std::vector<std::string> warnings; ///< e.g. as many runs as figures: an exact fit

    double value(FreeFigure figure, double fallback) const;
};

/// Fits `figures` over the runs. Fails, saying why, with fewer runs than figures, a run whose
/// plan the engine rejects, a log with no steady step, or a figure no run is sensitive to.
bool fitTrainingRuns(const std::vector<TrainingRun>& runs, const std::vector<FreeFigure>& figures,
                     int warmup, const HardwareCatalog& catalog, LogFit* fit, std::string* error);

/// The figures the fit replaces on `plan`, each with the plan's figure as its assumed value.
std::vector<MeasuredFigure> fittedFigures(const LogFit& fit, const Plan& plan,
                                          const HardwareCatalog& catalog);

/// The plan with the fit's values in place (what a prediction after the fit evaluates).
Plan planWithFit(const Plan& plan, const std::vector<FreeFigure>& figures,
                 const std::vector<double>& values, const HardwareCatalog& catalog);

} // namespace paraplan
