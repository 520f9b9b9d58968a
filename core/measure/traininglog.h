#pragma once

// Step times read from the logs training frameworks print: Megatron-LM's "elapsed time per
// iteration (ms)", torchtitan's "tps" (tokens per second per GPU) and NeMo / PyTorch
// Lightning's "train_step_timing in s".

#include <string>
#include <vector>

namespace paraplan {

enum class TrainingLogFormat
{
    Unknown,
    Megatron,   ///< " iteration   20/  500 | ... | elapsed time per iteration (ms): 1234.5 | ..."
    Torchtitan, ///< "step: 20  loss: 7.1  memory: ...  tps: 1,234  tflops: ...  mfu: ..."
    NeMo,       ///< "... global_step=19.0, ..., train_step_timing in s=4.15]" (also "key: value")
};

const char* trainingLogFormatName(TrainingLogFormat format);

/// One step line: the step it reports and its time (Megatron, NeMo) or throughput (torchtitan).
struct LoggedStep
{
    long long step = 0;
    int line = 0;                ///< 1-based line in the log
    double step_time_s = 0;      ///< Megatron, NeMo; 0 for torchtitan
    double tokens_per_s_gpu = 0; ///< torchtitan; 0 otherwise
};

struct TrainingLog
{
    std::string file;
    TrainingLogFormat format = TrainingLogFormat::Unknown;
    std::vector<LoggedStep> steps;
    int lines = 0;
    /// What the log says of the run, where it says it (0: not said): Megatron and NeMo print
    /// the global batch on every step line, torchtitan its global batch and sequence length
    /// when training starts.
    long long global_batch = 0;
    long long seq_len = 0;
    std::vector<std::string> warnings; ///< e.g. an unterminated last step line, ignored
};

/// Reads every step line of a log; the rest (losses, banners, warnings) is ignored. Fails,
/// naming the file and line, on a step line whose time is missing, not a number, not positive
/// or over a million seconds, on step lines that disagree on the global batch, and on a log
/// without a single step line. `\r` ends a line too (progress bars); a last line without an
/// end (a log still being written, or cut off) is ignored with a warning.
bool parseTrainingLog(const std::string& text, const std::string& file, TrainingLog* log,
                      std::string* error);
bool loadTrainingLog(const std::string& path, TrainingLog* log, std::string* error);

/// The steps a measurement uses: the first step line (start-up: compilation, allocator, NCCL
/// set-up) and every step numbered at or below `warmup` are skipped.
std::vector<LoggedStep> steadySteps(const TrainingLog& log, int warmup);

/// The median steady step time; torchtitan's throughput becomes a time through the tokens
/// each GPU processes per step (global batch x sequence / GPUs). 0 and `error` set when no
/// steady step is left.
double steadyStepTime(const TrainingLog& log, int warmup, double tokens_per_gpu_step, int* used,
                      std::string* error);

} // namespace paraplan
