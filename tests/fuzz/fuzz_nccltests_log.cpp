// libFuzzer harness: nccl-tests text output (parseNcclTestsLog), then the alpha-beta fits.

#include "fuzzinput.h"
#include "measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    MeasurementRun run;
    std::string error;
    if (!parseNcclTestsLog(fuzz::text(data, size), &run, &error, "all_reduce_perf.log")) {
        FUZZ_ASSERT(!error.empty(), "a refused log names its problem");
        return 0;
    }
    for (const AlphaBetaFit& fit : fitRun(run)) {
        FUZZ_ASSERT_FINITE(fit.alpha_s, "alpha_s");
        FUZZ_ASSERT_FINITE(fit.busbw_GBps, "busbw_GBps");
    }
    run.describe();
    return 0;
}
