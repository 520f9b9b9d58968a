#pragma once

#include <string>

namespace paraplan {

/// Where a number came from. Every figure the app shows carries one.
enum class Origin
{
    Preset,      ///< a data file in resources/, with the document it was taken from
    Formula,     ///< computed; `text` names the formula and its reference
    UserEntry,   ///< typed by the user (a CLI flag, a field, a plan or cluster file)
    Measurement, ///< a probe run or an imported nccl-tests log
    Assumption,  ///< no published figure; stated so that the user can replace it
};

const char* originName(Origin origin);

/// A number with its unit in the field name of the owner and its source here.
struct Sourced
{
    double value = 0;
    Origin origin = Origin::Preset;
    std::string source;
};

/// The same figure from the same origin and source (what an edit compares).
inline bool operator==(const Sourced& a, const Sourced& b)
{
    return a.value == b.value && a.origin == b.origin && a.source == b.source;
}
inline bool operator!=(const Sourced& a, const Sourced& b)
{
    return !(a == b);
}

inline Sourced preset(double value, std::string source)
{
    return {value, Origin::Preset, std::move(source)};
}
inline Sourced userEntry(double value, std::string what)
{
    return {value, Origin::UserEntry, std::move(what)};
}
inline Sourced assumption(double value, std::string why)
{
    return {value, Origin::Assumption, std::move(why)};
}

/// "preset: NVIDIA H100 datasheet" and so on, for derivations and reports.
std::string describeSource(const Sourced& figure);

} // namespace paraplan
