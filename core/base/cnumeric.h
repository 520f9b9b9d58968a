#pragma once

// Numbers in the C locale whatever the process's own: QCoreApplication switches the C library
// to the user's locale (setlocale(LC_ALL, "")), where strtod, atof and snprintf read and write
// a decimal comma (de_DE, fr_FR) and tolower('I') is not 'i' (tr_TR). Every machine-format
// read and write (options, plan files, logs, TOML, shell flags, CSV) and every number in the
// text output goes through these, so "1.5" reads as 1.5 and 1.5 prints as "1.5" everywhere.

#include <cstddef>

namespace paraplan {

/// strtod in the C locale: '.' is the decimal point; same contract as std::strtod.
double cStrtod(const char* text, char** end);

/// snprintf in the C locale (this thread's locale switched to "C" around the call); same
/// contract as std::snprintf. Allocation-free.
int cSnprintf(char* buffer, std::size_t size, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

/// ASCII case mapping, whatever the locale (tr_TR maps 'I' to a dotless i).
constexpr char asciiLower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char asciiUpper(char c)
{
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

} // namespace paraplan
