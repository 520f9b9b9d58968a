// paraplan-probe: lists this machine's GPUs and (in later protocol revisions) measures them.
// stdout carries JSON Lines only; logs go to stderr. Exit codes are documented in --help.
#include "paraplan_version.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr int kProtocolVersion = 1;

enum ExitCode
{
    kOk = 0,
    kBadArguments = 2,
    kNoGpu = 3,
    kCudaFailure = 4,
    kNcclFailure = 5,
};

const char* kHelp = R"(paraplan-probe: describe this machine's GPUs for Paraplan.

Usage: paraplan-probe [--list] [--help] [--version]

  --list     print the protocol greeting, one 'device' line per GPU with its properties, the
             peer-access matrix, and 'done' (the default)
  --help     this text
  --version  the probe and protocol versions

Output: JSON Lines on stdout, one object per line with a "type": hello (protocol and probe
version, CUDA runtime and driver, NCCL version), device, peer_access, warning, error, done.
Logs go to stderr.

Exit codes: 0 success; 2 bad arguments; 3 no GPU visible; 4 CUDA failure; 5 NCCL failure.
)";

// Minimal JSON string escaping for names from the driver.
std::string quoted(const char* text)
{
    std::string out = "\"";
    for (const char* c = text; *c; ++c) {
        if (*c == '"' || *c == '\\')
            out += '\\';
        if (static_cast<unsigned char>(*c) >= 0x20)
            out += *c;
    }
    return out + "\"";
}

int fail(ExitCode code, const char* what, const char* detail)
{
    std::printf("{\"type\":\"error\",\"code\":%d,\"what\":%s,\"detail\":%s}\n", code,
                quoted(what).c_str(), quoted(detail).c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "paraplan-probe: %s: %s\n", what, detail);
    return code;
}

} // namespace

int main(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::fputs(kHelp, stdout);
            return kOk;
        }
        if (!std::strcmp(argv[i], "--version")) {
            std::printf("paraplan-probe %s (protocol %d)\n", PARAPLAN_VERSION, kProtocolVersion);
            return kOk;
        }
        if (std::strcmp(argv[i], "--list") != 0) {
            std::fprintf(stderr, "error: unknown argument '%s' (see --help)\n", argv[i]);
            return kBadArguments;
        }
    }

    int runtime = 0;
    int driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    int nccl = 0;
    if (ncclGetVersion(&nccl) != ncclSuccess)
        return fail(kNcclFailure, "ncclGetVersion", "NCCL did not report a version");
    std::printf("{\"type\":\"hello\",\"protocol\":%d,\"probe_version\":\"%s\","
                "\"cuda_runtime\":%d,\"cuda_driver\":%d,\"nccl_version\":%d}\n",
                kProtocolVersion, PARAPLAN_VERSION, runtime, driver, nccl);

    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver || count == 0)
        return fail(kNoGpu, "cudaGetDeviceCount",
                    status == cudaSuccess ? "no GPU visible" : cudaGetErrorString(status));
    if (status != cudaSuccess)
        return fail(kCudaFailure, "cudaGetDeviceCount", cudaGetErrorString(status));

    for (int device = 0; device < count; ++device) {
        cudaDeviceProp prop{};
        const cudaError_t error = cudaGetDeviceProperties(&prop, device);
        if (error != cudaSuccess)
            return fail(kCudaFailure, "cudaGetDeviceProperties", cudaGetErrorString(error));
        char busId[32] = {0};
        cudaDeviceGetPCIBusId(busId, sizeof busId, device);
        std::printf("{\"type\":\"device\",\"index\":%d,\"name\":%s,\"memory_bytes\":%zu,"
                    "\"sm_count\":%d,\"compute_capability\":\"%d.%d\",\"pci_bus_id\":%s}\n",
                    device, quoted(prop.name).c_str(), prop.totalGlobalMem,
                    prop.multiProcessorCount, prop.major, prop.minor, quoted(busId).c_str());
    }
    std::printf("{\"type\":\"peer_access\",\"matrix\":[");
    for (int a = 0; a < count; ++a) {
        std::printf("%s[", a ? "," : "");
        for (int b = 0; b < count; ++b) {
            int can = a == b ? 1 : 0;
            if (a != b)
                cudaDeviceCanAccessPeer(&can, a, b);
            std::printf("%s%d", b ? "," : "", can);
        }
        std::printf("]");
    }
    std::printf("]}\n");
    std::printf("{\"type\":\"done\",\"devices\":%d}\n", count);
    return kOk;
}
