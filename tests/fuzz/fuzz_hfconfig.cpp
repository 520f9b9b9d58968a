// libFuzzer harness: Hugging Face config.json (modelFromHuggingFaceConfig).

#include "fuzzinput.h"
#include "modelio.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    ModelSpec model;
    std::vector<std::string> errors;
    if (!paraplan::modelFromHuggingFaceConfig(fuzz::text(data, size), "config.json", &model,
                                              &errors))
        FUZZ_ASSERT(!errors.empty(), "a refused config names its problem");
    return 0;
}
