// libFuzzer harness: training framework logs (parseTrainingLog), then the steady step time.

#include "fuzzinput.h"
#include "traininglog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    TrainingLog log;
    std::string error;
    if (!parseTrainingLog(fuzz::text(data, size), "train.log", &log, &error)) {
        FUZZ_ASSERT(!error.empty(), "a refused log names its problem");
        return 0;
    }
    int used = 0;
    std::string steadyError;
    const double t = steadyStepTime(log, 2, 4096, &used, &steadyError);
    FUZZ_ASSERT_FINITE(t, "steady step time");
    return 0;
}
