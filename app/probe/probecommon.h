// paraplan-probe's shared parts: the options, the JSON Lines output (docs/probe-protocol.md)
// and its failure exits, and the measurements of probemeasure.cu and probecompute.cu.
#pragma once

#include "probeplan.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

namespace probe {

constexpr int kProtocolVersion = 2;

enum ExitCode
{
    kOk = 0,
    kBadArguments = 2,
    kNoGpu = 3,
    kCudaFailure = 4,
    kNcclFailure = 5,
    kInterrupted = 6,
    kTimeout = 7,
    kNoMpi = 8, ///< started as one of many processes, but built without MPI
};

struct Options
{
    bool list = false;
    bool copies = true;
    bool collectives = true;
    bool compute = true; ///< GEMMs, attention, HBM bandwidth, SM clock (probecompute.cu)
    bool check = true;
    std::vector<std::string> gemmDtypes{"bf16", "fp16", "fp8"};
    std::string planPath; ///< --plan: also measure that plan's shapes
    ProbePlanShapes plan; ///< read from planPath at argument time
    std::vector<std::string> ops{"all_reduce", "reduce_scatter", "all_gather", "broadcast",
                                 "reduce",     "all_to_all",     "send_recv"};
    int gpus = 0;
    size_t minBytes = 1 << 20;
    size_t maxBytes = size_t(1) << 30;
    double factor = 2;
    int iters = 20;
    int warmup = 5;
    double timeout_s = 900;
};

extern std::atomic<bool> g_interrupted;
extern std::atomic<bool> g_finished;
extern bool g_printer; // MPI: rank 0 prints
extern int g_processes;
extern std::string g_host;

std::string quoted(const std::string& text);
/// One JSON Lines object on stdout (rank 0 only), flushed.
void emit(const char* format, ...);
/// An error line, then the exit with `code`.
[[noreturn]] void fail(ExitCode code, const std::string& what, const std::string& detail);
void warn(const std::string& message);
void checkInterrupted();

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        const cudaError_t status_ = (call);                                                        \
        if (status_ != cudaSuccess)                                                                \
            fail(kCudaFailure, #call, cudaGetErrorString(status_));                                \
    } while (0)

#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        const ncclResult_t status_ = (call);                                                       \
        if (status_ != ncclSuccess)                                                                \
            fail(kNcclFailure, #call, ncclGetErrorString(status_));                                \
    } while (0)

#define CUBLAS_CHECK(call)                                                                         \
    do {                                                                                           \
        const cublasStatus_t status_ = (call);                                                     \
        if (status_ != CUBLAS_STATUS_SUCCESS)                                                      \
            fail(kCudaFailure, #call, cublasLtGetStatusName(status_));                             \
    } while (0)

// probemeasure.cu: copies and collective sweeps.
struct Sweep
{
    std::vector<ncclComm_t> comms;
    std::vector<int> devices;
    int worldRanks = 0;
    int firstRank = 0;
    int hosts = 1;
};

void measureCopies(int devices, const Options& o);
void sweep(const Sweep& s, const Options& o, int* done, int total, double hostTimeScale);
int sizesPerOp(const Options& o);

// probecompute.cu: on each of the first `devices` GPUs, cuBLASLt GEMMs (the square grid and
// the plan's shapes), the plan's unfused attention, HBM copy/triad, and the SM clock sampled
// through NVML while the GEMMs run. Returns the number of gemm, attention and hbm records
// emitted (the clock records are summaries and not counted).
int measureCompute(int devices, const Options& o);

} // namespace probe
