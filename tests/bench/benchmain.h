#pragma once

// What the Google Benchmark executables share: a check that fails the run (not only the one
// benchmark) when a result is wrong, and a main that turns that into the exit code, so the
// CTest smoke runs catch a benchmark that measures something broken.
#include <QCoreApplication>

#include <benchmark/benchmark.h>

#include <cstdio>

namespace paraplan::bench {

inline bool& failed()
{
    static bool value = false;
    return value;
}

/// Stops the benchmark with `what` and fails the run unless `ok`. Returns `ok`.
inline bool check(benchmark::State& state, bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "check failed: %s\n", what);
        state.SkipWithError(what);
        failed() = true;
    }
    return ok;
}

/// benchmark::DoNotOptimize through a const reference. Google Benchmark 1.7's overload for a
/// non-const lvalue takes it as an "+m,r" asm operand, and GCC 12 chose the register, loaded
/// from a stale copy, and wrote that back into the object after the call under test (here
/// StepCost::step_time_s, read as 0 right after evaluate() had set it); the const overload
/// only reads the value.
template <class T> inline void keep(const T& value)
{
    benchmark::DoNotOptimize(value);
}

inline int run(int argc, char** argv)
{
    QCoreApplication app(argc, argv); // the presets are Qt resources
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return failed() ? 1 : 0;
}

} // namespace paraplan::bench
