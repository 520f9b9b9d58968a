// paraplan-probe's measurements: copies (host-device, device-local, peer) and NCCL collective
// sweeps, each result a JSON Lines object (docs/probe-protocol.md).
#include "probecommon.h"

#ifdef PARAPLAN_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace probe {
namespace {

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

} // namespace

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

namespace {

// One collective call over `comms` (one per local GPU, grouped).
void launch(const std::string& op, const std::vector<ncclComm_t>& comms,
            const std::vector<float*>& send, const std::vector<float*>& recv, size_t count,
            const std::vector<cudaStream_t>& streams, int worldRanks, int firstRank)
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
}

__global__ void fillKernel(float* data, size_t count, float value)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        data[i] = value;
}

} // namespace

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
                launch(op, s.comms, send, recv, count, streams, n, s.firstRank);
            for (size_t r = 0; r < s.comms.size(); ++r)
                CUDA_CHECK(cudaStreamSynchronize(streams[r]));
#ifdef PARAPLAN_MPI
            MPI_Barrier(MPI_COMM_WORLD);
#endif
            const auto t0 = std::chrono::steady_clock::now();
            for (int it = 0; it < o.iters; ++it)
                launch(op, s.comms, send, recv, count, streams, n, s.firstRank);
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
                launch(op, s.comms, send, recv, count, streams, n, s.firstRank);
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

} // namespace probe
