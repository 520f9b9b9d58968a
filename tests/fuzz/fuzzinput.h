#pragma once

// Shared by the libFuzzer harnesses: the input as text, and the checks a harness makes on what a
// reader accepted. A failed check aborts, which libFuzzer reports as a crash with the input.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace paraplan::fuzz {

inline std::string text(const uint8_t* data, size_t size)
{
    return std::string(reinterpret_cast<const char*>(data), size);
}

/// Aborts with `what` when `value` is inf or nan: a reader must never hand those on.
inline void checkFinite(double value, const char* what)
{
    if (!std::isfinite(value)) {
        std::fprintf(stderr, "fuzz check failed: %s is %f\n", what, value);
        std::abort();
    }
}

/// Aborts when a reader refuses what Paraplan itself wrote, printing the text and its errors.
inline void checkReadBack(bool ok, const char* what, const std::string& written,
                          const std::vector<std::string>& errors)
{
    if (ok)
        return;
    std::fprintf(stderr, "fuzz check failed: %s read back from its own output:\n%s\n", what,
                 written.c_str());
    for (const std::string& error : errors)
        std::fprintf(stderr, "  %s\n", error.c_str());
    std::abort();
}

inline void check(bool condition, const char* what)
{
    if (!condition) {
        std::fprintf(stderr, "fuzz check failed: %s\n", what);
        std::abort();
    }
}

/// Plan and cluster files name other files ("file", "hf_config") that the reader opens (reads
/// only), relative to the folder of the seed plans (kBaseDir, tests/data/plans). Inputs that
/// could reach a device or a pseudo file (which can block or never end) are skipped: paths into
/// /dev, /proc and /sys, and JSON escapes that could spell them.
inline bool mayNameSpecialFile(const std::string& input)
{
    for (const char* needle : {"/dev", "/proc", "/sys", "\\/", "\\u"}) {
        if (input.find(needle) != std::string::npos)
            return true;
    }
    return false;
}

constexpr const char* kBaseDir = PARAPLAN_FUZZ_BASE_DIR;

} // namespace paraplan::fuzz

// The harnesses' assertions: a failed one aborts, which libFuzzer reports with its input.
#define FUZZ_ASSERT(condition, what) ::paraplan::fuzz::check((condition), (what))
#define FUZZ_ASSERT_FINITE(value, what) ::paraplan::fuzz::checkFinite((value), (what))
#define FUZZ_ASSERT_READ_BACK(ok, what, written, errors)                                           \
    ::paraplan::fuzz::checkReadBack((ok), (what), (written), (errors))
