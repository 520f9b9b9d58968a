#pragma once

#include "stepmodel.h"

#include <string>
#include <vector>

namespace paraplan {

/// One published measurement, the plan that reproduces its setup, and our prediction. Every
/// row's plan goes through the plan-file reader, the path a user's plan file takes.
struct CalibrationRow
{
    std::string name;  ///< the row's id in its file
    std::string model; ///< for display
    int gpus = 0;
    Plan plan;
    std::string assumptions; ///< attention kernel, element-wise kernels, overlap, architecture
    std::string source;      ///< where the measurement was published
    double measured_s = 0;
    double predicted_s = 0;
    double error = 0; ///< (predicted - measured) / measured
    double mfu = 0;
    double measured_mfu = 0; ///< as published (0: not given)
    /// The row's family in sets that group their rows ("fp8-dense-h100", "moe-h100",
    /// "blackwell", ...; empty in the older sets).
    std::string family;
    /// What the source ran that the plan format cannot state yet (the row is costed without it).
    std::vector<std::string> not_expressible;
};

struct MemoryCalibrationRow
{
    std::string model;
    std::string what; ///< "params_and_optimizer", "activations_none", "activations_sp_selective"
    double measured_GiB = 0; ///< 0: a verdict-only row (the run's fit published, not its bytes)
    double predicted_GiB = 0;
    double error = 0;
    // Rows of a measured-memory set (memory-2026.json): the run, its plan and what it measured.
    std::string name;
    std::string measures; ///< "peak allocated, rank 7", "peak reserved, max over GPUs", ...
    int stage = -1;       ///< the pipeline stage measured (-1: the fullest)
    /// The figure is the caching allocator's peak reserved (reserved_bytes.all.peak), not
    /// its peak allocated: scored against the predicted reserved bytes.
    bool reserved = false;
    std::string expected_verdict; ///< "fits" or "oom" as published (empty: not stated)
    bool predicted_fits = true;
    Plan plan;
};

struct CalibrationReport
{
    std::string id; ///< "korthikanti2022", "torchtitan2024", "nemo2024" or the file's name
    std::string source;
    std::string hardware;
    std::vector<std::string> notes;
    std::vector<CalibrationRow> rows;
    std::vector<MemoryCalibrationRow> memory;
    double mean_abs_error = 0;
    double median_abs_error = 0;
    double max_abs_error = 0;
    double memory_max_abs_error = 0;
    double memory_mean_abs_error = 0;
    int verdicts = 0;              ///< memory rows with a published fit verdict
    int verdicts_matched = 0;      ///< ... of which the engine's agrees
    double reference_mean_pct = 0; ///< the best public tool's figures, from the file (0: none)
    double reference_max_pct = 0;
};

/// Runs one calibration file through the engine. Two formats are read: Korthikanti et al.
/// 2022's (models, layouts and iteration times: DGX A100, fp16, the 2022 Megatron-LM stack,
/// written as plan files with those assumptions stated) and the modern one ("rows", each with
/// its plan file as published, or, as the 2026 set writes them, the plan's parts as fields of
/// the row: model, cluster_preset, nodes, cluster_node_override, parallel, training).
bool runCalibration(const std::string& path, CalibrationReport* report, std::string* error,
                    const HardwareCatalog& catalog);

/// The calibration sets that ship with Paraplan (resource paths), in the order validate runs
/// them: Korthikanti 2022 (A100), torchtitan 2024 (FSDP2, A100 and H100), NeMo 2024 (H100),
/// the 2026 set (FP8 recipes, MoE layouts, Blackwell and GB200 NVL72) and Megatron-Bridge's
/// 26.04.01 MoE runs (GPT-OSS, Qwen3, DeepSeek-V3 on H100, B200 and GB200 NVL72), then the
/// measured memory of 2026 (memory-2026.json: torchtitan, Megatron-LM, Megatron-Bridge, NeMo,
/// Lightning).
std::vector<std::string> bundledCalibrationSets();

} // namespace paraplan
