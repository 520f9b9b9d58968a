// libFuzzer harness: the small text readers behind command-line options and plan fields (byte
// sizes, durations, numbers, dtypes, collectives, algorithms, attention kernels).

#include "collectivemodel.h"
#include "fuzzinput.h"
#include "hardware.h"
#include "units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    using namespace paraplan::units;
    const std::string input = fuzz::text(data, size);
    std::string error;
    if (const auto bytes = parseBytes(input, &error))
        FUZZ_ASSERT_FINITE(*bytes, "bytes");
    if (const auto seconds = parseSeconds(input, &error))
        FUZZ_ASSERT_FINITE(*seconds, "seconds");
    parseNumber(input);
    Dtype dtype;
    parseDtype(input, &dtype);
    CollectiveOp op;
    parseCollectiveOp(input, &op);
    Algorithm algorithm;
    parseAlgorithm(input, &algorithm);
    AttentionKernel kernel;
    parseAttentionKernel(input, &kernel);
    return 0;
}
