#pragma once

#include "stepmodel.h"

#include <string>
#include <vector>

namespace paraplan {

/// One published measurement, the plan that reproduces its setup, and our prediction.
struct CalibrationRow
{
    std::string model;
    int gpus = 0;
    Plan plan;
    double measured_s = 0;
    double predicted_s = 0;
    double error = 0; ///< (predicted - measured) / measured
    double mfu = 0;
};

struct MemoryCalibrationRow
{
    std::string model;
    std::string what; ///< "params_and_optimizer", "activations_none", "activations_sp_selective"
    double measured_GiB = 0;
    double predicted_GiB = 0;
    double error = 0;
};

struct CalibrationReport
{
    std::string source;
    std::string hardware;
    std::vector<CalibrationRow> rows;
    std::vector<MemoryCalibrationRow> memory;
    double mean_abs_error = 0;
    double max_abs_error = 0;
    double memory_max_abs_error = 0;
    double reference_mean_pct = 0; ///< the best public tool's figures, from the file
    double reference_max_pct = 0;
};

/// Runs the calibration set (the Korthikanti et al. 2022 file; the bundled copy when `path` is
/// empty) through the engine: DGX A100 nodes, the rows' layouts, no FlashAttention (2022).
bool runCalibration(const std::string& path, CalibrationReport* report, std::string* error);

} // namespace paraplan
