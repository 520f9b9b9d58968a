// libFuzzer harness: nvidia-smi topo -m output (importNvidiaSmiTopology), one node and four.

#include "fuzzinput.h"
#include "topologyimport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    const std::string input = fuzz::text(data, size);
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    TopologyImportOptions options;
    options.gpu_id = "h100-sxm5-80gb";
    TopologyImport result;
    std::string error;
    if (!importNvidiaSmiTopology(input, options, &result, &error, catalog))
        FUZZ_ASSERT(!error.empty(), "a refused topology names its problem");
    options.nodes = 4;
    options.nic_id = "";
    TopologyImport several;
    std::string severalError;
    importNvidiaSmiTopology(input, options, &several, &severalError, catalog);
    return 0;
}
