// libFuzzer harness: nccl-tests -J JSON (parseNcclTestsJson), then the alpha-beta fits.

#include "fuzzinput.h"
#include "measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    MeasurementRun run;
    std::string error;
    if (!parseNcclTestsJson(fuzz::text(data, size), &run, &error)) {
        FUZZ_ASSERT(!error.empty(), "a refused file names its problem");
        return 0;
    }
    for (const AlphaBetaFit& fit : fitRun(run)) {
        FUZZ_ASSERT_FINITE(fit.alpha_s, "alpha_s");
        FUZZ_ASSERT_FINITE(fit.busbw_GBps, "busbw_GBps");
    }
    run.describe();
    return 0;
}
