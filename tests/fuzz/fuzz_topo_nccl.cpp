// libFuzzer harness: NCCL topology XML dumps (importNcclTopologyXml), the GPU inferred and given.

#include "fuzzinput.h"
#include "topologyimport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    const std::string input = fuzz::text(data, size);
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    TopologyImportOptions options;
    TopologyImport result;
    std::string error;
    if (!importNcclTopologyXml(input, options, &result, &error, catalog))
        FUZZ_ASSERT(!error.empty(), "a refused topology names its problem");
    options.gpu_id = "a100-sxm4-80gb";
    options.nodes = 2;
    TopologyImport given;
    std::string givenError;
    importNcclTopologyXml(input, options, &given, &givenError, catalog);
    return 0;
}
