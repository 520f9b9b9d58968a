#pragma once

// Unit conventions for every raw number in Paraplan.
// GB = 1e9 bytes and GB/s = 1e9 bytes per second (nccl-tests' convention); GiB = 2^30 is used
// only where a memory capacity is shown and is always named so. Numbers enter through a
// function named after their unit and leave through an explicit conversion.

#include <optional>
#include <string>
#include <string_view>

namespace paraplan::units {

inline constexpr double kKB = 1e3;
inline constexpr double kMB = 1e6;
inline constexpr double kGB = 1e9;
inline constexpr double kTB = 1e12;
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

constexpr double bytesFromGB(double gb)
{
    return gb * kGB;
}
constexpr double bytesFromGiB(double gib)
{
    return gib * kGiB;
}
constexpr double toGB(double bytes)
{
    return bytes / kGB;
}
constexpr double toGiB(double bytes)
{
    return bytes / kGiB;
}

constexpr double bytesPerSecondFromGBps(double gbps)
{
    return gbps * kGB;
}
constexpr double toGBps(double bytes_per_s)
{
    return bytes_per_s / kGB;
}
constexpr double bytesPerSecondFromGbitps(double gbitps)
{
    return gbitps * 1e9 / 8.0;
}

constexpr double secondsFromUs(double us)
{
    return us * 1e-6;
}
constexpr double secondsFromMs(double ms)
{
    return ms * 1e-3;
}
constexpr double toUs(double s)
{
    return s * 1e6;
}
constexpr double toMs(double s)
{
    return s * 1e3;
}

/// Parses a byte count: plain or scientific numbers ("141e9"), decimal suffixes
/// ("141GB", "400 MB", "1.5kB", "2TB") and binary ones ("400MiB", "16GiB"). A bare "K", "M" or
/// "G" is decimal. Returns nothing and fills `error` when the text is not a positive size.
std::optional<double> parseBytes(std::string_view text, std::string* error = nullptr);

/// Parses a duration: "2.16ms", "4.3 ms", "15us", "0.27s", or a bare number of seconds.
std::optional<double> parseSeconds(std::string_view text, std::string* error = nullptr);

/// The text without leading and trailing white space.
std::string trimmed(std::string_view text);
/// The text in ASCII lower case.
std::string lower(std::string text);

/// Parses a finite number (no suffix). Rejects NaN, infinities and trailing garbage.
std::optional<double> parseNumber(std::string_view text);

/// "141 GB", "268 MB", "4 B": decimal units, three significant digits.
std::string formatBytes(double bytes);
/// "4.230 GiB": binary gibibytes, four significant digits (memory per GPU in derivations).
std::string formatGiB(double bytes);
/// "0.274 s", "62.2 ms", "15.0 us".
std::string formatSeconds(double seconds);
/// "450 GB/s", "8.00 GB/s".
std::string formatGBps(double bytes_per_s);
/// Three significant digits, no exponent for everyday magnitudes.
std::string formatNumber(double value, int significant = 3);
/// A share as a percentage for tables: "12.3%", "<0.01%" for what rounds away, "0%".
std::string formatPercent(double share);

} // namespace paraplan::units
