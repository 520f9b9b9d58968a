#include "cnumeric.h"

#include <clocale>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <locale.h>

namespace paraplan {

namespace {

// The C locale object: glibc's newlocale returns its static C locale for "C" (no
// allocation), made once before main so the evaluation's hot path never makes it.
locale_t cLocale()
{
    static const locale_t c = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
    return c;
}
[[maybe_unused]] const locale_t madeBeforeMain = cLocale();

} // namespace

double cStrtod(const char* text, char** end)
{
    return strtod_l(text, end, cLocale());
}

int cSnprintf(char* buffer, std::size_t size, const char* format, ...)
{
    const locale_t previous = uselocale(cLocale());
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(buffer, size, format, args);
    va_end(args);
    uselocale(previous);
    return n;
}

} // namespace paraplan
