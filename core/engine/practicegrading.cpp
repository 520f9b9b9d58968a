// Interview practice: reading the user's answer and grading it against the derivation's
// figure (the questions: practice.cpp).
#include "cnumeric.h"
#include "practice.h"

#include "units.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace paraplan {
namespace {

using units::formatNumber;
using units::lower;
using units::trimmed;

bool endsWith(const std::string& text, const std::string& suffix)
{
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// How many of the question's units one `answer_unit` is.
double unitScale(const std::string& answerUnit)
{
    if (answerUnit == "us")
        return 1e-6;
    if (answerUnit == "ms")
        return 1e-3;
    if (answerUnit == "KB")
        return units::kKB;
    if (answerUnit == "MB")
        return units::kMB;
    if (answerUnit == "GB" || answerUnit == "GB/s")
        return units::kGB;
    if (answerUnit == "GiB")
        return units::kGiB;
    if (answerUnit == "%")
        return 0.01;
    return 1; // "s", "tokens/s"
}

std::optional<double> parseCount(std::string text, std::string* error)
{
    // "1.2M tokens/s", "350k", "350000 tok/s"
    for (const char* suffix : {"tokens/s", "tokens per second", "tok/s", "/s"}) {
        if (endsWith(text, suffix)) {
            text = trimmed(text.substr(0, text.size() - std::string(suffix).size()));
            break;
        }
    }
    double scale = 1;
    if (!text.empty() && (text.back() == 'k' || text.back() == 'm' || text.back() == 'b')) {
        scale = text.back() == 'k' ? 1e3 : text.back() == 'm' ? 1e6 : 1e9;
        text.pop_back();
    }
    if (const std::optional<double> value = units::parseNumber(text))
        return *value * scale;
    if (error)
        *error = "'" + text +
                 "' is not a number of tokens per second (examples: 350000, 350k, "
                 "1.2M tokens/s)";
    return std::nullopt;
}

std::optional<double> parseChoice(const PracticeQuestion& q, const std::string& text,
                                  std::string* error)
{
    const int n = static_cast<int>(q.choices.size());
    if (const std::optional<double> number = units::parseNumber(text)) {
        if (*number >= 1 && *number <= n && std::floor(*number) == *number)
            return *number - 1;
    } else if (text.size() == 1 && text[0] >= 'a' && text[0] < 'a' + n) {
        return text[0] - 'a';
    }
    for (int i = 0; i < n; ++i) {
        if (lower(q.choices[static_cast<size_t>(i)]) == text)
            return i;
    }
    if (error)
        *error = "'" + text + "' is not one of the choices (answer 1 to " + std::to_string(n) +
                 ", a letter, or the choice's name)";
    return std::nullopt;
}

} // namespace

const char* practiceGradeName(PracticeGrade grade)
{
    switch (grade) {
    case PracticeGrade::Unreadable:
        return "unreadable";
    case PracticeGrade::Right:
        return "right";
    case PracticeGrade::Close:
        return "close";
    case PracticeGrade::Off:
        return "off";
    case PracticeGrade::Wrong:
        return "wrong";
    }
    return "unreadable";
}

std::optional<double> parsePracticeAnswer(const PracticeQuestion& q, std::string_view input,
                                          std::string* error)
{
    const std::string text = lower(trimmed(input));
    if (text.empty()) {
        if (error)
            *error = "no answer given";
        return std::nullopt;
    }
    if (q.kind == PracticeAnswerKind::Choice)
        return parseChoice(q, text, error);
    // A bare number is in the unit the question asks for.
    if (const std::optional<double> bare = units::parseNumber(text))
        return *bare * unitScale(q.answer_unit);
    std::string problem;
    std::optional<double> value;
    if (q.unit == "s") {
        value = units::parseSeconds(text, &problem);
    } else if (q.unit == "B") {
        value = units::parseBytes(text, &problem);
    } else if (q.unit == "B/s") {
        std::string bytes = text;
        for (const char* suffix : {"/s", "ps"}) {
            if (endsWith(bytes, suffix)) {
                bytes = bytes.substr(0, bytes.size() - 2);
                break;
            }
        }
        value = units::parseBytes(bytes, &problem);
    } else if (q.unit == "tokens/s") {
        value = parseCount(text, &problem);
    } else if (endsWith(text, "%")) {
        value = units::parseNumber(text.substr(0, text.size() - 1));
        if (value)
            *value /= 100;
        else
            problem = "'" + text + "' is not a percentage (examples: 42%, 0.42)";
    } else {
        problem = "'" + text + "' is not a number";
    }
    if (!value && error)
        *error = problem;
    return value;
}

std::string formatPracticeValue(const PracticeQuestion& q, double value)
{
    if (q.kind == PracticeAnswerKind::Choice) {
        const int i = static_cast<int>(value);
        return i >= 0 && i < static_cast<int>(q.choices.size()) ? q.choices[static_cast<size_t>(i)]
                                                                : std::string("?");
    }
    if (q.unit == "s")
        return units::formatSeconds(value); // "80.0 ms" for 80000 us typed
    if (q.unit == "B" && q.answer_unit != "GiB")
        return units::formatBytes(value);
    const std::string unit = q.answer_unit.empty() ? q.unit : q.answer_unit;
    return formatNumber(value / unitScale(q.answer_unit), 3) + (unit == "%" ? "" : " ") + unit;
}

std::string practiceExpectedText(const PracticeQuestion& q)
{
    return formatPracticeValue(q, q.expected);
}

PracticeVerdict gradePracticeAnswer(const PracticeQuestion& q, std::string_view text)
{
    PracticeVerdict v;
    std::string error;
    const std::optional<double> value = parsePracticeAnswer(q, text, &error);
    if (!value) {
        v.text = "cannot read the answer: " + error;
        return v;
    }
    v.value = *value;
    if (q.kind == PracticeAnswerKind::Choice) {
        const bool right = static_cast<int>(*value) == q.correct_choice;
        v.grade = right ? PracticeGrade::Right : PracticeGrade::Wrong;
        v.text = right ? "right: " + practiceExpectedText(q)
                       : "wrong: " + formatPracticeValue(q, *value) + "; the answer is " +
                             practiceExpectedText(q);
        return v;
    }
    const double expected = q.expected;
    v.relative_error = std::fabs(*value - expected) / expected;
    v.factor = *value > 0 ? std::max(*value / expected, expected / *value) : 0;
    const std::string against =
        formatPracticeValue(q, *value) + " against " + practiceExpectedText(q);
    const std::string percent = " (" + formatNumber(100 * v.relative_error, 2) + "% off)";
    if (v.relative_error <= PracticeThresholds::kRight) {
        v.grade = PracticeGrade::Right;
        v.text = "right: " + against + percent;
    } else if (v.relative_error <= PracticeThresholds::kClose) {
        v.grade = PracticeGrade::Close;
        v.text =
            std::string("close: ") + (*value > expected ? "high, " : "low, ") + against + percent;
    } else if (!(*value > 0)) {
        v.grade = PracticeGrade::Off;
        v.text = "off: " + formatPracticeValue(q, *value) + " cannot be right, the answer is " +
                 practiceExpectedText(q);
    } else {
        v.grade = PracticeGrade::Off;
        // One decimal below 10 ("2.0x", "7.4x"), whole above, whatever the last bits are.
        char factor[32];
        cSnprintf(factor, sizeof factor, v.factor < 10 ? "%.1f" : "%.0f", v.factor);
        v.text = "off by " + std::string(factor) + "x (" +
                 (*value > expected ? "too high" : "too low") + "): " + against;
    }
    return v;
}

} // namespace paraplan
