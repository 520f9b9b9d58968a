// libFuzzer harness: the probe's compute records (readComputeRecord), one JSON object a line as
// the probe writes them, then the GEMM figure they give.

#include "computemeasure.h"
#include "fuzzinput.h"
#include "jsonutil.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    const std::string input = fuzz::text(data, size);
    ComputeMeasurements compute;
    size_t start = 0;
    while (start < input.size()) {
        size_t end = input.find('\n', start);
        if (end == std::string::npos)
            end = input.size();
        QJsonObject record;
        std::string error;
        if (json::parseDocument(input.substr(start, end - start), &record, &error)) {
            std::string problem;
            const std::string type = record.value("type").toString().toStdString();
            if (!readComputeRecord(record, type, &compute, &problem))
                FUZZ_ASSERT(!problem.empty(), "a refused record names its problem");
        }
        start = end + 1;
    }
    for (const char* dtype : {"bf16", "fp16", "fp8"})
        FUZZ_ASSERT_FINITE(measuredGemmTflops(compute, dtype, 0, nullptr), "GEMM TFLOP/s");
    return 0;
}
