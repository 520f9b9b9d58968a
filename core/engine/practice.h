#pragma once

// Interview practice on the current plan: questions generated from the plan and its
// collectives (collective times and bytes, the bottleneck tier, memory per GPU under the
// plan's ZeRO stage and under ZeRO-2/3, the pipeline bubble, a what-if with TP doubled,
// tokens/s and MFU), each with the engine's own figure as the answer and the derivation that
// produces it, revealed one step at a time. docs/practice.md.

#include "derivation.h"
#include "stepmodel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace paraplan {

enum class PracticeAnswerKind
{
    Number, ///< a figure with a unit, graded by relative error
    Choice, ///< one of `choices`, graded by exact match
};

struct PracticeQuestion
{
    std::string key;     ///< stable identity: "collective-time:dp:1", "memory:zero2", ...
    std::string topic;   ///< "collective", "bottleneck", "memory", "pipeline", "what-if", ...
    std::string context; ///< the plan in one line: model, GPUs, cluster, layout, batch
    std::string prompt;  ///< the question itself, with the plan's concrete numbers
    PracticeAnswerKind kind = PracticeAnswerKind::Number;
    /// The unit of `expected` (as DerivationStep::unit: "s", "B", "B/s", "tokens/s", "" for a
    /// ratio) and the unit a bare number is read in and answers are shown in ("ms", "GiB",
    /// "GB/s", "%", ...).
    std::string unit;
    std::string answer_unit;
    /// Number: the value of derivation.steps[answer_step], in `unit`. Choice: correct_choice.
    double expected = 0;
    std::vector<std::string> choices;
    int correct_choice = -1;
    Derivation derivation; ///< the worked answer; at least two steps
    int answer_step = -1;  ///< the step whose figure is the answer
    std::string source;    ///< the public source of the method
};

/// The verdict thresholds on the relative error |answer - expected| / expected: within
/// kRight "right", within kClose "close", beyond that "off by Nx" (N = the larger of
/// answer/expected and expected/answer). Choices are right or wrong.
struct PracticeThresholds
{
    static constexpr double kRight = 0.05;
    static constexpr double kClose = 0.25;
};

enum class PracticeGrade
{
    Unreadable, ///< the answer could not be read (text says why)
    Right,
    Close,
    Off,   ///< a number beyond kClose
    Wrong, ///< a wrong choice
};
const char* practiceGradeName(PracticeGrade grade);

struct PracticeVerdict
{
    PracticeGrade grade = PracticeGrade::Unreadable;
    double value = 0;          ///< the answer in the question's unit (a choice: its index)
    double relative_error = 0; ///< numbers only
    double factor = 1;         ///< max(answer/expected, expected/answer); numbers only
    std::string text;          ///< one line for the user: "close: 3.52 ms against 3.20 ms ..."
};

/// The questions the plan poses, in an order (and with choices in an order) fixed by `seed`.
/// `cost` is `engine.evaluate(plan)`; the what-ifs are evaluated with `engine`. Empty when
/// the plan was rejected.
std::vector<PracticeQuestion> practiceQuestions(const Plan& plan, const StepCost& cost,
                                                const StepEngine& engine, std::uint64_t seed = 1);

/// The answer as a number in the question's unit: "3.2 ms", "3.2e-3 s", "12 GiB", "40 GB/s",
/// "42%", "1.2M tokens/s"; a bare number is read in `answer_unit`. A choice: its number (1..n),
/// its letter (a..) or its text. Nothing, with `error` filled, when it cannot be read.
std::optional<double> parsePracticeAnswer(const PracticeQuestion& question, std::string_view text,
                                          std::string* error = nullptr);

PracticeVerdict gradePracticeAnswer(const PracticeQuestion& question, std::string_view text);

/// `value` (in the question's unit) as the question shows answers: "3.20 ms", "71.3 GiB".
std::string formatPracticeValue(const PracticeQuestion& question, double value);
/// The expected answer as shown: a number with its unit, or the correct choice.
std::string practiceExpectedText(const PracticeQuestion& question);

} // namespace paraplan
