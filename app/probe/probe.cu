// paraplan-probe: measures this machine's GPUs for Paraplan, nccl-tests style.
// stdout carries JSON Lines only (docs/probe-protocol.md); logs go to stderr.
#include "paraplan_version.h"

#include <cuda_runtime.h>
#include <nccl.h>
#ifdef PARAPLAN_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr int kProtocolVersion = 1;

enum ExitCode
{
    kOk = 0,
    kBadArguments = 2,
    kNoGpu = 3,
    kCudaFailure = 4,
    kNcclFailure = 5,
    kInterrupted = 6,
    kTimeout = 7,
};

const char* kHelp = R"(paraplan-probe: measure this machine's GPUs for Paraplan.

Usage: paraplan-probe [options]

What to do (default: everything):
  --list                 only list the GPUs and their peer access, measure nothing
  --no-copies            skip host-device, device-local and peer copies
  --no-collectives       skip the NCCL collectives
  --ops LIST             collectives to sweep, comma-separated (default: all_reduce,
                         reduce_scatter,all_gather,broadcast,reduce,all_to_all,send_recv)
  --gpus N               use the first N GPUs (default: all); collectives run over 2, 4, ...
                         and N of them
Sweep (nccl-tests conventions; S is the buffer nccl-tests counts):
  --min-bytes B          smallest S (default 1MB; suffixes K, M, G are binary, as nccl-tests)
  --max-bytes B          largest S (default 1G)
  --factor F             multiply S by F each step (default 2)
  --iters N              timed iterations per size (default 20)
  --warmup N             warm-up iterations per size (default 5)
  --no-check             skip the result check
Safety:
  --timeout-s T          give up after T seconds in total (default 900): a hung collective
                         ends the run with an error line and exit code 7
  --help, --version

Multi-node: when built with MPI, run one process per GPU under mpirun (or srun); rank 0
creates the NCCL id, broadcasts it over MPI and prints the results; host names are recorded
so that intra-node and inter-node tiers can be told apart.

Output: JSON Lines on stdout, one object per line with "type": hello, device, peer_access,
progress, result, warning, error, done. See docs/probe-protocol.md.

Exit codes: 0 success; 2 bad arguments; 3 no GPU visible; 4 CUDA failure; 5 NCCL failure;
6 interrupted (SIGINT/SIGTERM); 7 timed out.
)";

struct Options
{
    bool list = false;
    bool copies = true;
    bool collectives = true;
    bool check = true;
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

std::atomic<bool> g_interrupted{false};
std::atomic<bool> g_finished{false};
bool g_printer = true; // MPI: rank 0 prints
int g_processes = 1;
std::string g_host;

void onSignal(int)
{
    g_interrupted = true;
}

std::string quoted(const std::string& text)
{
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (static_cast<unsigned char>(c) >= 0x20)
            out += c;
    }
    return out + "\"";
}

void emit(const char* format, ...)
{
    if (!g_printer)
        return;
    va_list args;
    va_start(args, format);
    std::vprintf(format, args);
    va_end(args);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

[[noreturn]] void fail(ExitCode code, const std::string& what, const std::string& detail)
{
    emit("{\"type\":\"error\",\"code\":%d,\"what\":%s,\"detail\":%s}", code, quoted(what).c_str(),
         quoted(detail).c_str());
    std::fprintf(stderr, "paraplan-probe: %s: %s\n", what.c_str(), detail.c_str());
#ifdef PARAPLAN_MPI
    if (g_processes > 1)
        MPI_Abort(MPI_COMM_WORLD, code); // the other ranks must not wait for this one
    MPI_Finalize();
#endif
    std::exit(code);
}

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

void warn(const std::string& message)
{
    emit("{\"type\":\"warning\",\"message\":%s}", quoted(message).c_str());
}

void checkInterrupted()
{
    if (g_interrupted)
        fail(kInterrupted, "signal", "interrupted; the results so far were printed");
}

bool parseSize(const char* text, size_t* out)
{
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || !(value > 0))
        return false;
    double scale = 1;
    switch (*end) {
    case 'K':
    case 'k':
        scale = 1024.0;
        ++end;
        break;
    case 'M':
    case 'm':
        scale = 1024.0 * 1024;
        ++end;
        break;
    case 'G':
    case 'g':
        scale = 1024.0 * 1024 * 1024;
        ++end;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b')
        ++end;
    if (*end != '\0')
        return false;
    *out = static_cast<size_t>(value * scale);
    return true;
}

double busFactor(const std::string& op, int n)
{
    if (op == "all_reduce")
        return 2.0 * (n - 1) / n;
    if (op == "reduce_scatter" || op == "all_gather" || op == "all_to_all")
        return double(n - 1) / n;
    return 1.0;
}

// Copies: host<->device over pinned memory, device-local, peer. Timed with CUDA events,
// median of `iters`.
double timeCopies(int device, cudaStream_t stream, int iters, const std::function<void()>& copy)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    copy(); // warm-up
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<float> times;
    for (int i = 0; i < iters; ++i) {
        CUDA_CHECK(cudaEventRecord(start, stream));
        copy();
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2] * 1e-3;
}

void measureCopies(int devices, const Options& o)
{
    const size_t bytes = size_t(256) << 20;
    for (int d = 0; d < devices; ++d) {
        checkInterrupted();
        CUDA_CHECK(cudaSetDevice(d));
        void* host = nullptr;
        void* a = nullptr;
        void* b = nullptr;
        cudaStream_t stream;
        CUDA_CHECK(cudaStreamCreate(&stream));
        CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocDefault));
        CUDA_CHECK(cudaMalloc(&a, bytes));
        CUDA_CHECK(cudaMalloc(&b, bytes));
        struct Kind
        {
            const char* what;
            void* dst;
            const void* src;
            cudaMemcpyKind kind;
            double counted; // bytes counted per copy
        };
        const Kind kinds[] = {{"h2d", a, host, cudaMemcpyHostToDevice, 1.0},
                              {"d2h", host, a, cudaMemcpyDeviceToHost, 1.0},
                              {"d2d", b, a, cudaMemcpyDeviceToDevice, 2.0}};
        for (const Kind& k : kinds) {
            const double t = timeCopies(d, stream, o.iters, [&] {
                CUDA_CHECK(cudaMemcpyAsync(k.dst, k.src, bytes, k.kind, stream));
            });
            emit("{\"type\":\"result\",\"kind\":\"copy\",\"what\":\"%s\",\"device\":%d,"
                 "\"host\":%s,\"bytes\":%zu,\"time_us\":%.3f,\"GBps\":%.3f,\"counts\":\"%s\"}",
                 k.what, d, quoted(g_host).c_str(), bytes, t * 1e6, k.counted * bytes / t / 1e9,
                 k.counted > 1 ? "read+write" : "one way");
        }
        cudaFree(a);
        cudaFree(b);
        cudaFreeHost(host);
        cudaStreamDestroy(stream);
    }
    // Peer copies between every pair (the first 8 GPUs), one way and both ways, and the
    // latency of a 16-byte copy.
    const int n = std::min(devices, 8);
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            if (i == j)
                continue;
            checkInterrupted();
            int can = 0;
            cudaDeviceCanAccessPeer(&can, i, j);
            if (can) {
                CUDA_CHECK(cudaSetDevice(i));
                const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
                if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
                    CUDA_CHECK(e);
                cudaGetLastError();
            }
            void* src = nullptr;
            void* dst = nullptr;
            void* back = nullptr;
            void* backDst = nullptr;
            CUDA_CHECK(cudaSetDevice(i));
            CUDA_CHECK(cudaMalloc(&src, bytes));
            CUDA_CHECK(cudaMalloc(&backDst, bytes));
            CUDA_CHECK(cudaSetDevice(j));
            CUDA_CHECK(cudaMalloc(&dst, bytes));
            CUDA_CHECK(cudaMalloc(&back, bytes));
            cudaStream_t s1, s2;
            CUDA_CHECK(cudaSetDevice(i));
            CUDA_CHECK(cudaStreamCreate(&s1));
            CUDA_CHECK(cudaSetDevice(j));
            CUDA_CHECK(cudaStreamCreate(&s2));
            const double uni = timeCopies(i, s1, o.iters, [&] {
                CUDA_CHECK(cudaMemcpyPeerAsync(dst, j, src, i, bytes, s1));
            });
            // Both ways at once: time the pair of streams from a host clock.
            CUDA_CHECK(cudaDeviceSynchronize());
            const auto t0 = std::chrono::steady_clock::now();
            for (int it = 0; it < o.iters; ++it) {
                CUDA_CHECK(cudaMemcpyPeerAsync(dst, j, src, i, bytes, s1));
                CUDA_CHECK(cudaMemcpyPeerAsync(backDst, i, back, j, bytes, s2));
            }
            CUDA_CHECK(cudaStreamSynchronize(s1));
            CUDA_CHECK(cudaStreamSynchronize(s2));
            const double bi =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                o.iters;
            const double latency = timeCopies(
                i, s1, 100, [&] { CUDA_CHECK(cudaMemcpyPeerAsync(dst, j, src, i, 16, s1)); });
            emit("{\"type\":\"result\",\"kind\":\"copy\",\"what\":\"peer\",\"src\":%d,\"dst\":%d,"
                 "\"host\":%s,\"peer_access\":%s,\"bytes\":%zu,\"time_us\":%.3f,\"GBps\":%.3f,"
                 "\"bidirectional_GBps\":%.3f,\"latency_us\":%.3f}",
                 i, j, quoted(g_host).c_str(), can ? "true" : "false", bytes, uni * 1e6,
                 bytes / uni / 1e9, 2.0 * bytes / bi / 1e9, latency * 1e6);
            cudaStreamDestroy(s1);
            cudaStreamDestroy(s2);
            cudaFree(src);
            cudaFree(dst);
            cudaFree(back);
            cudaFree(backDst);
        }
    }
}

// One collective call over `comms` (one per local GPU, grouped).
void launch(const std::string& op, const std::vector<ncclComm_t>& comms,
            const std::vector<int>& devices, const std::vector<float*>& send,
            const std::vector<float*>& recv, size_t count, const std::vector<cudaStream_t>& streams,
            int worldRanks, int firstRank)
{
    NCCL_CHECK(ncclGroupStart());
    for (size_t r = 0; r < comms.size(); ++r) {
        const int rank = firstRank + static_cast<int>(r);
        if (op == "all_reduce")
            NCCL_CHECK(
                ncclAllReduce(send[r], recv[r], count, ncclFloat, ncclSum, comms[r], streams[r]));
        else if (op == "reduce_scatter")
            NCCL_CHECK(ncclReduceScatter(send[r], recv[r], count, ncclFloat, ncclSum, comms[r],
                                         streams[r]));
        else if (op == "all_gather")
            NCCL_CHECK(ncclAllGather(send[r], recv[r], count, ncclFloat, comms[r], streams[r]));
        else if (op == "broadcast")
            NCCL_CHECK(ncclBroadcast(send[r], recv[r], count, ncclFloat, 0, comms[r], streams[r]));
        else if (op == "reduce")
            NCCL_CHECK(
                ncclReduce(send[r], recv[r], count, ncclFloat, ncclSum, 0, comms[r], streams[r]));
        else if (op == "all_to_all") {
            for (int peer = 0; peer < worldRanks; ++peer) {
                NCCL_CHECK(
                    ncclSend(send[r] + peer * count, count, ncclFloat, peer, comms[r], streams[r]));
                NCCL_CHECK(
                    ncclRecv(recv[r] + peer * count, count, ncclFloat, peer, comms[r], streams[r]));
            }
        } else if (op == "send_recv") {
            NCCL_CHECK(
                ncclSend(send[r], count, ncclFloat, (rank + 1) % worldRanks, comms[r], streams[r]));
            NCCL_CHECK(ncclRecv(recv[r], count, ncclFloat, (rank - 1 + worldRanks) % worldRanks,
                                comms[r], streams[r]));
        }
    }
    NCCL_CHECK(ncclGroupEnd());
    (void)devices;
}

__global__ void fillKernel(float* data, size_t count, float value)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        data[i] = value;
}

struct Sweep
{
    std::vector<ncclComm_t> comms;
    std::vector<int> devices;
    int worldRanks = 0;
    int firstRank = 0;
    int hosts = 1;
};

void sweep(const Sweep& s, const Options& o, int* done, int total, double hostTimeScale)
{
    const size_t maxCount = std::max<size_t>(o.maxBytes / sizeof(float), 1);
    const int n = s.worldRanks;
    std::vector<float*> send(s.comms.size()), recv(s.comms.size());
    std::vector<cudaStream_t> streams(s.comms.size());
    for (size_t r = 0; r < s.comms.size(); ++r) {
        CUDA_CHECK(cudaSetDevice(s.devices[r]));
        // all_gather and all_to_all need the full S on both sides; size for the largest.
        CUDA_CHECK(cudaMalloc(&send[r], maxCount * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&recv[r], maxCount * sizeof(float)));
        CUDA_CHECK(cudaStreamCreate(&streams[r]));
    }
    for (const std::string& op : o.ops) {
        for (size_t bytes = o.minBytes; bytes <= o.maxBytes;
             bytes = std::max(bytes + 1, static_cast<size_t>(bytes * o.factor))) {
            checkInterrupted();
            // count per the nccl-tests conventions for what S covers.
            const bool perRankChunks =
                op == "reduce_scatter" || op == "all_gather" || op == "all_to_all";
            size_t count = bytes / sizeof(float) / (perRankChunks ? n : 1);
            if (count == 0)
                continue;
            const size_t S = count * sizeof(float) * (perRankChunks ? n : 1);
            for (size_t r = 0; r < s.comms.size(); ++r) {
                CUDA_CHECK(cudaSetDevice(s.devices[r]));
                fillKernel<<<256, 256, 0, streams[r]>>>(send[r], maxCount, 1.0f);
                CUDA_CHECK(cudaGetLastError());
            }
            for (int w = 0; w < o.warmup; ++w)
                launch(op, s.comms, s.devices, send, recv, count, streams, n, s.firstRank);
            for (size_t r = 0; r < s.comms.size(); ++r)
                CUDA_CHECK(cudaStreamSynchronize(streams[r]));
#ifdef PARAPLAN_MPI
            MPI_Barrier(MPI_COMM_WORLD);
#endif
            const auto t0 = std::chrono::steady_clock::now();
            for (int it = 0; it < o.iters; ++it)
                launch(op, s.comms, s.devices, send, recv, count, streams, n, s.firstRank);
            for (size_t r = 0; r < s.comms.size(); ++r)
                CUDA_CHECK(cudaStreamSynchronize(streams[r]));
            double t =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                o.iters;
#ifdef PARAPLAN_MPI
            double slowest = t;
            MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t = slowest;
#endif
            t *= hostTimeScale;
            // Result check: an all_reduce of ones sums to n on every rank.
            long long wrong = -1;
            if (o.check && op == "all_reduce") {
                std::vector<float> sample(std::min<size_t>(count, 1024));
                CUDA_CHECK(cudaSetDevice(s.devices[0]));
                fillKernel<<<256, 256, 0, streams[0]>>>(send[0], count, 1.0f);
                for (size_t r = 1; r < s.comms.size(); ++r) {
                    CUDA_CHECK(cudaSetDevice(s.devices[r]));
                    fillKernel<<<256, 256, 0, streams[r]>>>(send[r], count, 1.0f);
                }
                launch(op, s.comms, s.devices, send, recv, count, streams, n, s.firstRank);
                for (size_t r = 0; r < s.comms.size(); ++r)
                    CUDA_CHECK(cudaStreamSynchronize(streams[r]));
                CUDA_CHECK(cudaSetDevice(s.devices[0]));
                CUDA_CHECK(cudaMemcpy(sample.data(), recv[0], sample.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost));
                wrong = 0;
                for (float v : sample)
                    wrong += v != static_cast<float>(n);
            }
            const double algbw = S / t / 1e9;
            emit("{\"type\":\"result\",\"kind\":\"collective\",\"op\":\"%s\",\"bytes\":%zu,"
                 "\"count\":%zu,\"dtype\":\"float\",\"ranks\":%d,\"hosts\":%d,\"host\":%s,"
                 "\"time_us\":%.3f,\"algbw_GBps\":%.4f,\"busbw_GBps\":%.4f,\"wrong\":%lld}",
                 op.c_str(), S, count, n, s.hosts, quoted(g_host).c_str(), t * 1e6, algbw,
                 algbw * busFactor(op, n), wrong);
            ++*done;
            emit("{\"type\":\"progress\",\"done\":%d,\"total\":%d,\"what\":%s}", *done, total,
                 quoted(op + " over " + std::to_string(n) + " ranks").c_str());
        }
    }
    for (size_t r = 0; r < s.comms.size(); ++r) {
        cudaSetDevice(s.devices[r]);
        cudaFree(send[r]);
        cudaFree(recv[r]);
        cudaStreamDestroy(streams[r]);
    }
}

int sizesPerOp(const Options& o)
{
    int sizes = 0;
    for (size_t bytes = o.minBytes; bytes <= o.maxBytes;
         bytes = std::max(bytes + 1, static_cast<size_t>(bytes * o.factor)))
        ++sizes;
    return sizes;
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "error: %s needs a value (see --help)\n", name);
                std::exit(kBadArguments);
            }
            return argv[++i];
        };
        auto bad = [&](const std::string& message) {
            std::fprintf(stderr, "error: %s (see --help)\n", message.c_str());
            std::exit(kBadArguments);
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(kHelp, stdout);
            return kOk;
        } else if (arg == "--version") {
            std::printf("paraplan-probe %s (protocol %d)\n", PARAPLAN_VERSION, kProtocolVersion);
            return kOk;
        } else if (arg == "--list") {
            o.list = true;
        } else if (arg == "--no-copies") {
            o.copies = false;
        } else if (arg == "--no-collectives") {
            o.collectives = false;
        } else if (arg == "--no-check") {
            o.check = false;
        } else if (arg == "--ops") {
            o.ops.clear();
            std::string list = value("--ops");
            size_t start = 0;
            while (start <= list.size()) {
                const size_t comma = list.find(',', start);
                const std::string op = list.substr(
                    start, comma == std::string::npos ? std::string::npos : comma - start);
                static const char* known[] = {"all_reduce", "reduce_scatter", "all_gather",
                                              "broadcast",  "reduce",         "all_to_all",
                                              "send_recv"};
                if (std::find_if(std::begin(known), std::end(known),
                                 [&](const char* k) { return op == k; }) == std::end(known))
                    bad("unknown collective '" + op + "'");
                o.ops.push_back(op);
                if (comma == std::string::npos)
                    break;
                start = comma + 1;
            }
        } else if (arg == "--gpus") {
            o.gpus = std::atoi(value("--gpus"));
            if (o.gpus < 1)
                bad("--gpus must be at least 1");
        } else if (arg == "--min-bytes") {
            if (!parseSize(value("--min-bytes"), &o.minBytes))
                bad("--min-bytes: not a size");
        } else if (arg == "--max-bytes") {
            if (!parseSize(value("--max-bytes"), &o.maxBytes))
                bad("--max-bytes: not a size");
        } else if (arg == "--factor") {
            o.factor = std::atof(value("--factor"));
            if (!(o.factor > 1))
                bad("--factor must be greater than 1");
        } else if (arg == "--iters") {
            o.iters = std::atoi(value("--iters"));
            if (o.iters < 1)
                bad("--iters must be at least 1");
        } else if (arg == "--warmup") {
            o.warmup = std::atoi(value("--warmup"));
            if (o.warmup < 0)
                bad("--warmup must not be negative");
        } else if (arg == "--timeout-s") {
            o.timeout_s = std::atof(value("--timeout-s"));
            if (!(o.timeout_s > 0))
                bad("--timeout-s must be positive");
        } else {
            bad("unknown argument '" + arg + "'");
        }
    }
    if (o.minBytes > o.maxBytes) {
        std::fprintf(stderr, "error: --min-bytes exceeds --max-bytes (see --help)\n");
        return kBadArguments;
    }

    int mpiRank = 0;
    int mpiSize = 1;
#ifdef PARAPLAN_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpiRank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpiSize);
    g_printer = mpiRank == 0;
    g_processes = mpiSize;
#endif
    char hostname[256] = {0};
    gethostname(hostname, sizeof hostname - 1);
    g_host = hostname;
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);

    // The watchdog: a hung collective ends the run with an error line, not a silent hang.
    std::thread watchdog([&o] {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(o.timeout_s);
        while (!g_finished && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (!g_finished) {
            emit("{\"type\":\"error\",\"code\":%d,\"what\":\"watchdog\",\"detail\":%s}", kTimeout,
                 quoted("no progress within " + std::to_string(o.timeout_s) +
                        " s; the last result line is the last completed measurement")
                     .c_str());
            std::_Exit(kTimeout);
        }
    });
    watchdog.detach();
    const auto started = std::chrono::steady_clock::now();

    int runtime = 0;
    int driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    int nccl = 0;
    if (ncclGetVersion(&nccl) != ncclSuccess)
        fail(kNcclFailure, "ncclGetVersion", "NCCL did not report a version");
    emit("{\"type\":\"hello\",\"protocol\":%d,\"probe_version\":\"%s\",\"cuda_runtime\":%d,"
         "\"cuda_driver\":%d,\"nccl_version\":%d,\"host\":%s,\"processes\":%d}",
         kProtocolVersion, PARAPLAN_VERSION, runtime, driver, nccl, quoted(g_host).c_str(),
         mpiSize);

    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver || count == 0)
        fail(kNoGpu, "cudaGetDeviceCount",
             status == cudaSuccess ? "no GPU visible" : cudaGetErrorString(status));
    if (status != cudaSuccess)
        fail(kCudaFailure, "cudaGetDeviceCount", cudaGetErrorString(status));
    const int devices = o.gpus > 0 ? std::min(o.gpus, count) : count;
    if (o.gpus > count)
        warn("asked for " + std::to_string(o.gpus) + " GPUs, " + std::to_string(count) +
             " are visible");

    for (int device = 0; device < devices; ++device) {
        cudaDeviceProp prop{};
        CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
        char busId[32] = {0};
        cudaDeviceGetPCIBusId(busId, sizeof busId, device);
        emit("{\"type\":\"device\",\"index\":%d,\"name\":%s,\"memory_bytes\":%zu,\"sm_count\":%d,"
             "\"compute_capability\":\"%d.%d\",\"pci_bus_id\":%s,\"host\":%s}",
             device, quoted(prop.name).c_str(), prop.totalGlobalMem, prop.multiProcessorCount,
             prop.major, prop.minor, quoted(busId).c_str(), quoted(g_host).c_str());
    }
    std::string matrix = "[";
    for (int a = 0; a < devices; ++a) {
        matrix += a ? ",[" : "[";
        for (int b = 0; b < devices; ++b) {
            int can = a == b ? 1 : 0;
            if (a != b)
                cudaDeviceCanAccessPeer(&can, a, b);
            matrix += (b ? "," : "") + std::to_string(can);
        }
        matrix += "]";
    }
    emit("{\"type\":\"peer_access\",\"matrix\":%s]}", matrix.c_str());
    if (o.list) {
        g_finished = true;
        emit("{\"type\":\"done\",\"devices\":%d,\"results\":0}", devices);
        return kOk;
    }

    int done = 0;
    int results = 0;
    if (o.copies && mpiRank == 0) {
        measureCopies(devices, o);
        results += devices * 3 + std::min(devices, 8) * (std::min(devices, 8) - 1);
    }
    if (o.collectives) {
        if (mpiSize > 1) {
#ifdef PARAPLAN_MPI
            // One process per GPU: the local rank picks the device; rank 0's id is broadcast.
            MPI_Comm local;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpiRank, MPI_INFO_NULL,
                                &local);
            int localRank = 0;
            MPI_Comm_rank(local, &localRank);
            ncclUniqueId id;
            if (mpiRank == 0)
                NCCL_CHECK(ncclGetUniqueId(&id));
            MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
            CUDA_CHECK(cudaSetDevice(localRank % count));
            ncclComm_t comm;
            NCCL_CHECK(ncclCommInitRank(&comm, mpiSize, id, mpiRank));
            // Hosts: count the distinct host names.
            std::vector<char> names(static_cast<size_t>(mpiSize) * 256);
            MPI_Allgather(hostname, 256, MPI_CHAR, names.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
            std::vector<std::string> distinct;
            for (int r = 0; r < mpiSize; ++r) {
                const std::string name(&names[static_cast<size_t>(r) * 256]);
                if (std::find(distinct.begin(), distinct.end(), name) == distinct.end())
                    distinct.push_back(name);
            }
            Sweep s{
                {comm}, {localRank % count}, mpiSize, mpiRank, static_cast<int>(distinct.size())};
            sweep(s, o, &done, static_cast<int>(o.ops.size()) * sizesPerOp(o), 1.0);
            ncclCommDestroy(comm);
#endif
        } else if (devices < 2) {
            warn("one GPU: collectives need at least two; copies only");
        } else {
            // One process, every local GPU: subsets of 2, 4, ... and all of them.
            std::vector<int> sizes;
            for (int k = 2; k < devices; k *= 2)
                sizes.push_back(k);
            sizes.push_back(devices);
            const int total = static_cast<int>(sizes.size() * o.ops.size()) * sizesPerOp(o);
            for (int k : sizes) {
                Sweep s;
                s.worldRanks = k;
                s.comms.resize(static_cast<size_t>(k));
                for (int d = 0; d < k; ++d)
                    s.devices.push_back(d);
                NCCL_CHECK(ncclCommInitAll(s.comms.data(), k, s.devices.data()));
                sweep(s, o, &done, total, 1.0);
                for (ncclComm_t comm : s.comms)
                    ncclCommDestroy(comm);
            }
        }
        results += done;
    }
    g_finished = true;
    emit("{\"type\":\"done\",\"devices\":%d,\"results\":%d,\"elapsed_s\":%.3f}", devices, results,
         std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
#ifdef PARAPLAN_MPI
    MPI_Finalize();
#endif
    return kOk;
}
