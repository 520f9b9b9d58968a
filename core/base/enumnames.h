#pragma once

#include <cstddef>
#include <string>

namespace paraplan {

/// One value of an enum with its name in files and on the command line, and a short
/// description for menus. Each enum has one constexpr table of these; the JSON readers, the
/// combo boxes and the CLI's help all read it.
template <typename E> struct EnumName
{
    E value;
    const char* name;
    const char* description;
};

template <typename E, std::size_t N>
const char* enumName(const EnumName<E> (&table)[N], E value, const char* unknown = "?")
{
    for (const EnumName<E>& entry : table) {
        if (entry.value == value)
            return entry.name;
    }
    return unknown;
}

template <typename E, std::size_t N>
bool enumFromName(const EnumName<E> (&table)[N], const std::string& name, E* value)
{
    for (const EnumName<E>& entry : table) {
        if (name == entry.name) {
            *value = entry.value;
            return true;
        }
    }
    return false;
}

/// "a, b, c" (or with another separator): every name, for help and error messages.
template <typename E, std::size_t N>
std::string enumChoices(const EnumName<E> (&table)[N], const char* separator = ", ")
{
    std::string out;
    for (const EnumName<E>& entry : table)
        out += (out.empty() ? "" : separator) + std::string(entry.name);
    return out;
}

} // namespace paraplan
