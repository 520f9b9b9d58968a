#include "units.h"
#include "cnumeric.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace paraplan::units {

std::string trimmed(std::string_view text)
{
    size_t begin = 0;
    size_t end = text.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])))
        ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])))
        --end;
    return std::string(text.substr(begin, end - begin));
}

std::string lower(std::string text)
{
    for (char& c : text)
        c = asciiLower(c);
    return text;
}

namespace {

// Splits "141GB" into the number and its suffix; the number may carry an exponent.
bool splitNumber(const std::string& text, double* value, std::string* suffix)
{
    if (text.empty())
        return false;
    // Decimal only: strtod would also take hex ("0x10" = 16), "inf" and "nan".
    const size_t digit = text.find_first_of("0123456789");
    if (digit == std::string::npos ||
        (text[digit] == '0' && digit + 1 < text.size() && (text[digit + 1] | 0x20) == 'x'))
        return false;
    const char* begin = text.c_str();
    char* end = nullptr;
    *value = cStrtod(begin, &end);
    if (end == begin || !std::isfinite(*value))
        return false;
    *suffix = lower(trimmed(std::string_view(end)));
    return true;
}

void setError(std::string* error, std::string message)
{
    if (error)
        *error = std::move(message);
}

} // namespace

std::optional<double> parseNumber(std::string_view text)
{
    double value = 0;
    std::string suffix;
    if (!splitNumber(trimmed(text), &value, &suffix) || !suffix.empty())
        return std::nullopt;
    return value;
}

std::optional<double> parseBytes(std::string_view text, std::string* error)
{
    const std::string input = trimmed(text);
    double value = 0;
    std::string suffix;
    if (!splitNumber(input, &value, &suffix)) {
        setError(error, "'" + input + "' is not a byte count (examples: 141e9, 141GB, 400MiB)");
        return std::nullopt;
    }
    struct Suffix
    {
        const char* name;
        double bytes;
    };
    static const Suffix suffixes[] = {
        {"", 1},       {"b", 1},
        {"k", kKB},    {"kb", kKB},
        {"kib", kKiB}, {"m", kMB},
        {"mb", kMB},   {"mib", kMiB},
        {"g", kGB},    {"gb", kGB},
        {"gib", kGiB}, {"t", kTB},
        {"tb", kTB},   {"tib", kGiB * 1024.0},
    };
    for (const Suffix& s : suffixes) {
        if (suffix == s.name) {
            const double bytes = value * s.bytes;
            if (!(bytes > 0) || !std::isfinite(bytes)) {
                setError(error, "byte count '" + input + "' must be positive");
                return std::nullopt;
            }
            return bytes;
        }
    }
    setError(error, "unknown size unit '" + suffix + "' in '" + input +
                        "' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
    return std::nullopt;
}

std::optional<double> parseSeconds(std::string_view text, std::string* error)
{
    const std::string input = trimmed(text);
    double value = 0;
    std::string suffix;
    if (!splitNumber(input, &value, &suffix)) {
        setError(error, "'" + input + "' is not a duration (examples: 2.16ms, 15us, 0.27s)");
        return std::nullopt;
    }
    double scale = 0;
    if (suffix.empty() || suffix == "s")
        scale = 1;
    else if (suffix == "ms")
        scale = 1e-3;
    else if (suffix == "us")
        scale = 1e-6;
    else if (suffix == "ns")
        scale = 1e-9;
    if (scale == 0) {
        setError(error,
                 "unknown time unit '" + suffix + "' in '" + input + "' (use s, ms, us, ns)");
        return std::nullopt;
    }
    const double seconds = value * scale;
    if (!(seconds > 0)) {
        setError(error, "duration '" + input + "' must be positive");
        return std::nullopt;
    }
    return seconds;
}

std::string formatNumber(double value, int significant)
{
    // Not a number is never printed as one ("inf", "nan"): the engine refuses such results,
    // so reaching here means a value was not available.
    if (!std::isfinite(value))
        return "n/a";
    // Beyond 15 digits a number is read by its exponent: 2.03e+17, not 203000000000000000.
    if (std::fabs(value) >= 1e15) {
        char exponent[32];
        cSnprintf(exponent, sizeof exponent, "%.*e", std::max(0, significant - 1), value);
        return exponent;
    }
    if (std::fabs(value) < 1e-12)
        return "0";
    // Whole numbers (ratios, counts, link rates) print without a decimal tail.
    if (value == std::round(value) && std::fabs(value) < 1e15) {
        char whole[32];
        cSnprintf(whole, sizeof whole, "%.0f", value);
        return whole;
    }
    const double magnitude = std::floor(std::log10(std::fabs(value)));
    int decimals = significant - 1 - static_cast<int>(magnitude);
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    char buffer[64];
    cSnprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string formatGiB(double bytes)
{
    return formatNumber(toGiB(bytes), 4) + " GiB";
}

std::string formatBytes(double bytes)
{
    struct Step
    {
        double size;
        const char* unit;
    };
    static const Step steps[] = {{kTB, "TB"}, {kGB, "GB"}, {kMB, "MB"}, {kKB, "KB"}};
    for (const Step& step : steps) {
        if (std::fabs(bytes) >= step.size)
            return formatNumber(bytes / step.size) + " " + step.unit;
    }
    return formatNumber(bytes) + " B";
}

std::string formatPercent(double share)
{
    if (!std::isfinite(share))
        return "n/a";
    if (share > 0 && share < 1e-4)
        return "<0.01%";
    return formatNumber(100 * share, 3) + "%";
}

std::string formatSeconds(double seconds)
{
    const double magnitude = std::fabs(seconds);
    // Beyond two days, days: a step of 2e11 s reads as 2.7 million days, not 12 digits.
    if (std::isfinite(magnitude) && magnitude >= 2 * 86400)
        return formatNumber(seconds / 86400) + " days";
    if (magnitude >= 1.0 || magnitude == 0)
        return formatNumber(seconds) + " s";
    if (magnitude >= 1e-3)
        return formatNumber(seconds * 1e3) + " ms";
    if (magnitude >= 1e-6)
        return formatNumber(seconds * 1e6) + " us";
    return formatNumber(seconds * 1e9) + " ns";
}

std::string formatGBps(double bytes_per_s)
{
    return formatNumber(toGBps(bytes_per_s)) + " GB/s";
}

} // namespace paraplan::units
