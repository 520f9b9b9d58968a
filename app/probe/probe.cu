// paraplan-probe: measures this machine's GPUs for Paraplan, nccl-tests style.
// stdout carries JSON Lines only (docs/probe-protocol.md); logs go to stderr.
#include "paraplan_version.h"
#include "probecommon.h"

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
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace probe {

std::atomic<bool> g_interrupted{false};
std::atomic<bool> g_finished{false};
bool g_printer = true; // MPI: rank 0 prints
int g_processes = 1;
std::string g_host;

namespace {

const char* kHelp = R"(paraplan-probe: measure this machine's GPUs for Paraplan.

Usage: paraplan-probe [options]

What to do (default: everything):
  --list                 only list the GPUs and their peer access, measure nothing
  --no-copies            skip host-device, device-local and peer copies
  --no-collectives       skip the NCCL collectives
  --no-compute           skip the compute measurements (GEMMs, attention, HBM bandwidth, SM
                         clock), which run first, on each GPU (rank 0's node under MPI)
  --compute-only         only the compute measurements: skip copies and collectives
  --plan PLAN.json       also measure that plan's GEMM shapes (bf16) and its unfused attention
  --gemm-dtypes LIST     GEMM dtypes of the square grid (M=N=K 1024 ... 16384), comma-separated
                         (default: bf16,fp16,fp8; fp8 e4m3 on compute capability 8.9 and later)
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
gemm, attention, hbm, clock, progress, result, warning, error, done. See
docs/probe-protocol.md.

Exit status (3 to 8 come after an "error" line on stdout):
  0  success: everything asked for was measured (or listed, or --help, --version)
  2  bad arguments: an unknown option, a bad value, a --plan file that cannot be read
     or is not a plan (one 'error:' line on stderr)
  3  no GPU visible, or a driver too old for the CUDA runtime
  4  a CUDA or cuBLASLt call failed
  5  an NCCL call failed
  6  interrupted (SIGINT or SIGTERM); the results so far were printed
  7  timed out: no progress within --timeout-s
  8  started by mpirun or srun as one of many processes that this one cannot join:
     built without MPI, or MPI sees a world of one (srun without the right --mpi
     plugin); each would measure alone
)";

void onSignal(int)
{
    g_interrupted = true;
}

} // namespace

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

void warn(const std::string& message)
{
    emit("{\"type\":\"warning\",\"message\":%s}", quoted(message).c_str());
}

void checkInterrupted()
{
    if (g_interrupted)
        fail(kInterrupted, "signal", "interrupted; the results so far were printed");
}

namespace {

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

[[noreturn]] void badArgument(const std::string& message)
{
    std::fprintf(stderr, "error: %s (see --help)\n", message.c_str());
    std::exit(kBadArguments);
}

// --ops LIST: comma-separated collective names.
void parseOps(const std::string& list, Options* o)
{
    o->ops.clear();
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = list.find(',', start);
        const std::string op =
            list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        static const char* known[] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast",
                                      "reduce",     "all_to_all",     "send_recv"};
        if (std::find_if(std::begin(known), std::end(known),
                         [&](const char* k) { return op == k; }) == std::end(known))
            badArgument("unknown collective '" + op + "'");
        o->ops.push_back(op);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
}

// --gemm-dtypes LIST: comma-separated GEMM dtypes.
void parseGemmDtypes(const std::string& list, Options* o)
{
    o->gemmDtypes.clear();
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = list.find(',', start);
        const std::string dtype =
            list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (dtype != "bf16" && dtype != "fp16" && dtype != "fp8")
            badArgument("unknown GEMM dtype '" + dtype + "' (bf16, fp16 or fp8)");
        o->gemmDtypes.push_back(dtype);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
}

// The sweep's numbers: sizes, factor, iterations, the timeout. False: not one of them.
bool parseSweepArgument(const std::string& arg,
                        const std::function<const char*(const char*)>& value, Options* o)
{
    if (arg == "--gpus") {
        o->gpus = std::atoi(value("--gpus"));
        if (o->gpus < 1)
            badArgument("--gpus must be at least 1");
    } else if (arg == "--min-bytes") {
        if (!parseSize(value("--min-bytes"), &o->minBytes))
            badArgument("--min-bytes: not a size");
    } else if (arg == "--max-bytes") {
        if (!parseSize(value("--max-bytes"), &o->maxBytes))
            badArgument("--max-bytes: not a size");
    } else if (arg == "--factor") {
        o->factor = std::atof(value("--factor"));
        if (!(o->factor > 1))
            badArgument("--factor must be greater than 1");
    } else if (arg == "--iters") {
        o->iters = std::atoi(value("--iters"));
        if (o->iters < 1)
            badArgument("--iters must be at least 1");
    } else if (arg == "--warmup") {
        o->warmup = std::atoi(value("--warmup"));
        if (o->warmup < 0)
            badArgument("--warmup must not be negative");
    } else if (arg == "--timeout-s") {
        o->timeout_s = std::atof(value("--timeout-s"));
        if (!(o->timeout_s > 0))
            badArgument("--timeout-s must be positive");
    } else {
        return false;
    }
    return true;
}

// Reads the command line into `o`. Returns -1 to go on, or the exit code to return with
// (--help, --version, bad arguments).
int parseArguments(int argc, char** argv, Options* o)
{
    bool computeOnly = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const std::function<const char*(const char*)> value = [&](const char* name) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "error: %s needs a value (see --help)\n", name);
                std::exit(kBadArguments);
            }
            return static_cast<const char*>(argv[++i]);
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(kHelp, stdout);
            return kOk;
        } else if (arg == "--version") {
            std::printf("paraplan-probe %s (protocol %d)\n", PARAPLAN_VERSION, kProtocolVersion);
            return kOk;
        } else if (arg == "--list") {
            o->list = true;
        } else if (arg == "--no-copies") {
            o->copies = false;
        } else if (arg == "--no-collectives") {
            o->collectives = false;
        } else if (arg == "--no-compute") {
            o->compute = false;
        } else if (arg == "--compute-only") {
            computeOnly = true;
        } else if (arg == "--plan") {
            o->planPath = value("--plan");
        } else if (arg == "--gemm-dtypes") {
            parseGemmDtypes(value("--gemm-dtypes"), o);
        } else if (arg == "--no-check") {
            o->check = false;
        } else if (arg == "--ops") {
            parseOps(value("--ops"), o);
        } else if (!parseSweepArgument(arg, value, o)) {
            badArgument("unknown argument '" + arg + "'");
        }
    }
    if (o->minBytes > o->maxBytes) {
        std::fprintf(stderr, "error: --min-bytes exceeds --max-bytes (see --help)\n");
        return kBadArguments;
    }
    if (computeOnly) {
        if (!o->compute)
            badArgument("--compute-only and --no-compute leave nothing to measure");
        o->copies = false;
        o->collectives = false;
    }
    if (!o->planPath.empty()) {
        std::string error;
        if (!loadPlanShapes(o->planPath, &o->plan, &error))
            badArgument("--plan: " + error);
    }
    return -1;
}

// The watchdog: a hung collective ends the run with an error line, not a silent hang.
void startWatchdog(const Options& o)
{
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
}

void emitHello(int processes)
{
    int runtime = 0;
    int driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    int nccl = 0;
    if (ncclGetVersion(&nccl) != ncclSuccess)
        fail(kNcclFailure, "ncclGetVersion", "NCCL did not report a version");
    char date[32] = {0};
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    emit("{\"type\":\"hello\",\"protocol\":%d,\"probe_version\":\"%s\",\"cuda_runtime\":%d,"
         "\"cuda_driver\":%d,\"nccl_version\":%d,\"host\":%s,\"processes\":%d,\"date\":\"%s\"}",
         kProtocolVersion, PARAPLAN_VERSION, runtime, driver, nccl, quoted(g_host).c_str(),
         processes, date);
}

// The GPUs visible (into `count`) and how many of them to use.
int usableDevices(const Options& o, int* count)
{
    const cudaError_t status = cudaGetDeviceCount(count);
    if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver || *count == 0)
        fail(kNoGpu, "cudaGetDeviceCount",
             status == cudaSuccess ? "no GPU visible" : cudaGetErrorString(status));
    if (status != cudaSuccess)
        fail(kCudaFailure, "cudaGetDeviceCount", cudaGetErrorString(status));
    const int devices = o.gpus > 0 ? std::min(o.gpus, *count) : *count;
    if (o.gpus > *count)
        warn("asked for " + std::to_string(o.gpus) + " GPUs, " + std::to_string(*count) +
             " are visible");
    return devices;
}

// One device line per GPU, then the peer access matrix.
void listDevices(int devices)
{
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
}

#ifdef PARAPLAN_MPI
// One process per GPU: the local rank picks the device; rank 0's id is broadcast.
void sweepAcrossProcesses(const Options& o, int count, int mpiRank, int mpiSize, char* hostname,
                          int* done)
{
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpiRank, MPI_INFO_NULL, &local);
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
    Sweep s{{comm}, {localRank % count}, mpiSize, mpiRank, static_cast<int>(distinct.size())};
    sweep(s, o, done, static_cast<int>(o.ops.size()) * sizesPerOp(o), 1.0);
    ncclCommDestroy(comm);
}
#endif

// One process, every local GPU: subsets of 2, 4, ... and all of them.
void sweepLocalGpus(const Options& o, int devices, int* done)
{
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
        sweep(s, o, done, total, 1.0);
        for (ncclComm_t comm : s.comms)
            ncclCommDestroy(comm);
    }
}

} // namespace

// The world size a launcher gave this process (Open MPI, PMI/PMIx as Slurm and MPICH set
// them, Slurm itself), and the variable that says so; 1 when started alone.
int launcherWorldSize(std::string* variable)
{
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS",
                             "SLURM_NPROCS", "MV2_COMM_WORLD_SIZE"}) {
        const char* value = std::getenv(name);
        if (value && std::atoi(value) > 1) {
            *variable = std::string(name) + "=" + value;
            return std::atoi(value);
        }
    }
    return 1;
}

} // namespace probe

int main(int argc, char** argv)
{
    using namespace probe;
    Options o;
    if (const int code = parseArguments(argc, argv, &o); code >= 0)
        return code;
    std::string launcher;
    const int launched = launcherWorldSize(&launcher);

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

    startWatchdog(o);
    const auto started = std::chrono::steady_clock::now();
    emitHello(mpiSize);
#ifdef PARAPLAN_MPI
    if (launched > 1 && mpiSize == 1)
        fail(kNoMpi, "MPI sees one process",
             "the launcher started " + std::to_string(launched) + " processes (" + launcher +
                 ") but MPI sees each alone: with srun, give the MPI plugin this Open MPI was "
                 "built for (srun --mpi=pmix, or pmi2); or start the probe with mpirun.");
#endif
#ifndef PARAPLAN_MPI
    if (launched > 1)
        fail(kNoMpi, "built without MPI",
             "started as one of " + std::to_string(launched) + " processes (" + launcher +
                 ") but this paraplan-probe was built without MPI, so each process would "
                 "measure its node alone. Install libopenmpi-dev and rebuild (the setup script "
                 "does), or run one paraplan-probe per node without mpirun/srun.");
#endif

    int count = 0;
    const int devices = usableDevices(o, &count);
    listDevices(devices);
    if (o.list) {
        g_finished = true;
        emit("{\"type\":\"done\",\"devices\":%d,\"results\":0}", devices);
        return kOk;
    }

    int done = 0;
    int results = 0;
    // Compute first, on rank 0's GPUs like the copies; its records count as results.
    if (o.compute && mpiRank == 0)
        results += measureCompute(devices, o);
    if (o.copies && mpiRank == 0) {
        measureCopies(devices, o);
        results += devices * 3 + std::min(devices, 8) * (std::min(devices, 8) - 1);
    }
    if (o.collectives) {
        if (mpiSize > 1) {
#ifdef PARAPLAN_MPI
            sweepAcrossProcesses(o, count, mpiRank, mpiSize, hostname, &done);
#endif
        } else if (devices < 2) {
            warn("one GPU: collectives need at least two; copies only");
        } else {
            sweepLocalGpus(o, devices, &done);
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
