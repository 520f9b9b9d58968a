// libFuzzer harness: the cluster file reader (clusterFromJsonText); an accepted cluster must be
// read back from its own JSON.

#include "clusterio.h"
#include "fuzzinput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    const std::string input = fuzz::text(data, size);
    if (fuzz::mayNameSpecialFile(input))
        return 0;
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    ClusterSpec cluster;
    std::vector<std::string> errors;
    if (!clusterFromJsonText(input, "fuzz", {}, &cluster, &errors, catalog)) {
        FUZZ_ASSERT(!errors.empty(), "a refused cluster names its problem");
        return 0;
    }
    ClusterSpec again;
    std::vector<std::string> againErrors;
    const std::string written = clusterToJsonText(cluster);
    FUZZ_ASSERT_READ_BACK(clusterFromJsonText(written, "fuzz", {}, &again, &againErrors, catalog),
                          "a cluster", written, againErrors);
    return 0;
}
