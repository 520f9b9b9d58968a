#include "traininglog.h"
#include "cnumeric.h"

#include "jsonutil.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>

namespace paraplan {

const char* trainingLogFormatName(TrainingLogFormat format)
{
    switch (format) {
    case TrainingLogFormat::Megatron:
        return "Megatron-LM";
    case TrainingLogFormat::Torchtitan:
        return "torchtitan";
    case TrainingLogFormat::NeMo:
        return "NeMo / PyTorch Lightning";
    case TrainingLogFormat::Unknown:
        break;
    }
    return "unknown";
}

namespace {

// A whole token as a positive finite number ("1,234" allowed: torchtitan groups thousands).
bool positiveNumber(std::string token, double* value)
{
    token.erase(std::remove(token.begin(), token.end(), ','), token.end());
    if (token.empty())
        return false;
    char* end = nullptr;
    const double v = cStrtod(token.c_str(), &end);
    if (end != token.c_str() + token.size() || !std::isfinite(v) || !(v > 0))
        return false;
    *value = v;
    return true;
}

std::vector<std::string> splitLines(const std::string& text)
{
    std::vector<std::string> lines;
    std::string current;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n' || c == '\r') {
            lines.push_back(current);
            current.clear();
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
                ++i;
        } else {
            current += c;
        }
    }
    if (!current.empty())
        lines.push_back(current);
    return lines;
}

struct Patterns
{
    std::regex ansi{"\x1b\\[[0-9;]*[A-Za-z]"};
    std::regex megatronStep{"iteration\\s+(\\d+)\\s*/"};
    std::regex megatronTime{"elapsed time per iteration \\(ms\\):\\s*([^|\\s]*)"};
    std::regex titanStep{"(^|\\s)step:\\s*(\\d+)"};
    std::regex titanRate{"(tps|wps):\\s*([0-9.,eE+-]*)"};
    std::regex nemoTime{"train_step_timing in s\\s*[=:]\\s*([^,\\]\\s|]*)"};
    std::regex nemoStep{"global_step\\s*[=:]\\s*([0-9.]+)"};
    std::regex nemoIteration{"iteration\\s+(\\d+)"};
    std::regex batch{"global[ _]batch[ _]size:?\\s*(\\d+)"};
    std::regex titanStart{"global batch size (\\d+), sequence length (\\d+)"};
};

const Patterns& patterns()
{
    static const Patterns p;
    return p;
}

// A step time must be positive and below a million seconds (11.6 days).
bool plausibleTime(const std::string& token, double scale, double* seconds)
{
    double value = 0;
    if (!positiveNumber(token, &value) || !(value * scale < 1e6))
        return false;
    *seconds = value * scale;
    return true;
}

// Reads one line into `step`; returns false for a line that is no step line, and sets
// `problem` for a step line whose figures cannot be read.
bool readStepLine(const std::string& line, TrainingLogFormat* format, LoggedStep* step,
                  std::string* problem)
{
    const Patterns& p = patterns();
    std::smatch m;
    if (line.find("elapsed time per iteration (ms)") != std::string::npos) {
        if (!std::regex_search(line, m, p.megatronStep)) {
            *problem = "a Megatron-LM step line without its 'iteration N/M'";
            return true;
        }
        step->step = std::stoll(m[1].str());
        if (!std::regex_search(line, m, p.megatronTime) ||
            !plausibleTime(m[1].str(), 1e-3, &step->step_time_s)) {
            *problem = "'elapsed time per iteration (ms)' is not a positive number below 1e9";
            return true;
        }
        *format = TrainingLogFormat::Megatron;
        return true;
    }
    if (line.find("train_step_timing in s") != std::string::npos) {
        if (!std::regex_search(line, m, p.nemoTime) ||
            !plausibleTime(m[1].str(), 1, &step->step_time_s)) {
            *problem = "'train_step_timing in s' is not a positive number below 1e6";
            return true;
        }
        // Printed as "19.0" or "19"; a number past 1e15 (no run has that many steps) is
        // numbered by its place, not cast out of range (std::stod/stoll threw or overflowed).
        const auto stepNumber = [](const std::string& text) {
            const double value = cStrtod(text.c_str(), nullptr);
            return value >= 0 && value < 1e15 ? static_cast<long long>(value) : -1LL;
        };
        if (std::regex_search(line, m, p.nemoStep))
            step->step = stepNumber(m[1].str());
        else if (std::regex_search(line, m, p.nemoIteration))
            step->step = stepNumber(m[1].str());
        else
            step->step = -1; // numbered by its place in the log
        *format = TrainingLogFormat::NeMo;
        return true;
    }
    const bool validation = line.find("alidat") != std::string::npos; // (V|v)alidation
    if (!validation && line.find("loss:") != std::string::npos &&
        std::regex_search(line, m, p.titanStep)) {
        step->step = std::stoll(m[2].str());
        std::smatch rate;
        double tps = 0;
        if (!std::regex_search(line, rate, p.titanRate) || !positiveNumber(rate[2].str(), &tps)) {
            *problem = "a torchtitan step line without a positive 'tps:' (tokens per second)";
            return true;
        }
        step->tokens_per_s_gpu = tps;
        *format = TrainingLogFormat::Torchtitan;
        return true;
    }
    return false;
}

} // namespace

bool parseTrainingLog(const std::string& text, const std::string& file, TrainingLog* log,
                      std::string* error)
{
    TrainingLog result;
    result.file = file;
    std::vector<std::string> lines = splitLines(text);
    result.lines = static_cast<int>(lines.size());
    const bool unterminated =
        !text.empty() && text.back() != '\n' && text.back() != '\r' && !lines.empty();
    const Patterns& p = patterns();
    for (size_t i = 0; i < lines.size(); ++i) {
        const int number = static_cast<int>(i) + 1;
        // Regular expressions only where a line can need them: logs run to millions of lines.
        const std::string line = lines[i].find('\x1b') == std::string::npos
                                     ? lines[i]
                                     : std::regex_replace(lines[i], p.ansi, "");
        TrainingLogFormat format = TrainingLogFormat::Unknown;
        LoggedStep step;
        std::string problem;
        bool isStep = false;
        try {
            isStep = readStepLine(line, &format, &step, &problem);
        } catch (const std::exception&) { // a number too large for stoll
            isStep = true;
            problem = "the step number cannot be read";
        }
        std::smatch m;
        if (line.find("global batch size ") != std::string::npos &&
            std::regex_search(line, m, p.titanStart)) {
            result.global_batch = std::stoll(m[1].str().substr(0, 15));
            result.seq_len = std::stoll(m[2].str().substr(0, 15));
        }
        if (!isStep)
            continue;
        if (unterminated && i + 1 == lines.size()) {
            result.warnings.push_back(file + " line " + std::to_string(number) +
                                      ": the last step line has no line end (cut off, or "
                                      "still being written); ignored");
            break;
        }
        if (problem.empty() && format != TrainingLogFormat::Torchtitan &&
            std::regex_search(line, m, p.batch)) {
            const long long batch = std::stoll(m[1].str().substr(0, 15));
            if (result.global_batch > 0 && batch != result.global_batch)
                problem = "global batch " + std::to_string(batch) + " where earlier lines say " +
                          std::to_string(result.global_batch) + " (batch ramp-up is not read)";
            result.global_batch = batch;
        }
        if (!problem.empty()) {
            *error = file + " line " + std::to_string(number) + ": " + problem;
            return false;
        }
        if (result.format != TrainingLogFormat::Unknown && format != result.format) {
            *error = file + " line " + std::to_string(number) + ": a " +
                     trainingLogFormatName(format) + " step line in a " +
                     trainingLogFormatName(result.format) + " log";
            return false;
        }
        result.format = format;
        step.line = number;
        if (step.step < 0)
            step.step = static_cast<long long>(result.steps.size()) + 1;
        // A progress bar redraws the same step; the last drawing holds its timing.
        if (!result.steps.empty() && result.steps.back().step == step.step)
            result.steps.back() = step;
        else
            result.steps.push_back(step);
    }
    if (result.steps.empty()) {
        *error = file + ": no step lines found in " + std::to_string(result.lines) +
                 " lines (Paraplan reads Megatron-LM's 'elapsed time per iteration (ms)', "
                 "torchtitan's 'step: ... tps:' and NeMo's 'train_step_timing in s')";
        return false;
    }
    *log = std::move(result);
    return true;
}

bool loadTrainingLog(const std::string& path, TrainingLog* log, std::string* error)
{
    std::string text;
    // Training logs run long; past 128 MiB (some 400,000 Megatron step lines) the user should
    // cut out the part with the steps, which keeps a read within a few hundred MB of memory.
    if (!json::readFile(path, &text, error, 128LL << 20)) {
        if (error->find("larger than") != std::string::npos)
            *error += "; give the part of the log with the steps";
        return false;
    }
    return parseTrainingLog(text, path, log, error);
}

std::vector<LoggedStep> steadySteps(const TrainingLog& log, int warmup)
{
    std::vector<LoggedStep> steady;
    for (size_t i = 1; i < log.steps.size(); ++i) {
        if (log.steps[i].step > warmup)
            steady.push_back(log.steps[i]);
    }
    return steady;
}

double steadyStepTime(const TrainingLog& log, int warmup, double tokens_per_gpu_step, int* used,
                      std::string* error)
{
    std::vector<double> times;
    for (const LoggedStep& s : steadySteps(log, warmup)) {
        if (s.step_time_s > 0)
            times.push_back(s.step_time_s);
        else if (s.tokens_per_s_gpu > 0 && tokens_per_gpu_step > 0)
            times.push_back(tokens_per_gpu_step / s.tokens_per_s_gpu);
    }
    *used = static_cast<int>(times.size());
    if (times.empty()) {
        *error = log.file + ": no step left after the warm-up (" +
                 std::to_string(log.steps.size()) +
                 " step lines; the first and every step up "
                 "to " +
                 std::to_string(warmup) + " are skipped)";
        return 0;
    }
    std::sort(times.begin(), times.end());
    const size_t n = times.size();
    return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

} // namespace paraplan
