// libFuzzer harness: the probe's JSON Lines stream (ProbeStreamParser), fed in three chunks so
// that lines are split across feeds, then the fits and the compute figures.

#include "fuzzinput.h"
#include "measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    const std::string input = fuzz::text(data, size);
    ProbeStreamParser parser;
    const size_t first = size / 3;
    const size_t second = (2 * size) / 3;
    parser.feed(input.substr(0, first));
    parser.feed(input.substr(first, second - first));
    parser.feed(input.substr(second));
    parser.finish();
    const MeasurementRun& run = parser.run();
    for (const AlphaBetaFit& fit : fitRun(run)) {
        FUZZ_ASSERT_FINITE(fit.alpha_s, "alpha_s");
        FUZZ_ASSERT_FINITE(fit.busbw_GBps, "busbw_GBps");
    }
    FUZZ_ASSERT_FINITE(measuredGemmTflops(run.compute, "bf16", 4096, nullptr), "GEMM TFLOP/s");
    run.describe();
    return 0;
}
