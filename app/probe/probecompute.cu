// paraplan-probe's compute measurements (docs/probe-protocol.md, protocol 2): cuBLASLt GEMMs
// over a square grid and a plan's shapes, the plan's unfused attention (forward and backward),
// HBM copy and STREAM triad bandwidth, and the SM clock sampled through NVML while the GEMMs
// run. Each result is a JSON Lines object: gemm, attention, hbm, clock.
//
// NVML is loaded at run time (dlopen of the driver's libnvidia-ml.so.1) so that the probe
// builds without the NVML development files and still runs, reporting a clock of 0, where the
// driver has no NVML.
#include "probecommon.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace probe {
namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

// ---------------------------------------------------------------------------------------------
// NVML, the few calls the probe needs, resolved with dlsym (nvml.h's types and constants).

using NvmlDevice = struct nvmlDevice_st*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1; // NVML_CLOCK_SM

struct Nvml
{
    bool ok = false;
    int (*getHandleByPciBusId)(const char*, NvmlDevice*) = nullptr;
    int (*getClockInfo)(NvmlDevice, int, unsigned int*) = nullptr;
    int (*getMaxClockInfo)(NvmlDevice, int, unsigned int*) = nullptr;
};

const Nvml& nvml()
{
    static Nvml n;
    static std::once_flag once;
    std::call_once(once, [] {
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
        std::string why;
        if (!lib) {
            why = "libnvidia-ml.so.1 not found";
        } else {
            auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
            n.getHandleByPciBusId = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(
                dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
            n.getClockInfo = reinterpret_cast<int (*)(NvmlDevice, int, unsigned int*)>(
                dlsym(lib, "nvmlDeviceGetClockInfo"));
            n.getMaxClockInfo = reinterpret_cast<int (*)(NvmlDevice, int, unsigned int*)>(
                dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
            if (!init || !n.getHandleByPciBusId || !n.getClockInfo || !n.getMaxClockInfo)
                why = "NVML lacks the clock calls";
            else if (const int status = init(); status != kNvmlSuccess)
                why = "nvmlInit_v2 returned " + std::to_string(status);
            else
                n.ok = true;
        }
        if (!n.ok)
            warn("NVML unavailable (" + why + "): sm_clock_mhz and the clock records are 0");
    });
    return n;
}

// The NVML handle of CUDA device `device`, matched by PCI bus id; null when unknown.
NvmlDevice nvmlHandle(int device)
{
    const Nvml& n = nvml();
    if (!n.ok)
        return nullptr;
    char busId[32] = {0};
    if (cudaDeviceGetPCIBusId(busId, sizeof busId, device) != cudaSuccess)
        return nullptr;
    NvmlDevice handle = nullptr;
    if (n.getHandleByPciBusId(busId, &handle) != kNvmlSuccess)
        return nullptr;
    return handle;
}

// Samples the SM clock every ~10 ms from a host thread between start() and stop().
class ClockSampler
{
public:
    explicit ClockSampler(NvmlDevice handle) : m_handle(handle) {}
    ~ClockSampler() { stop(); }

    void start()
    {
        m_samples.clear();
        if (!m_handle)
            return;
        m_running = true;
        m_thread = std::thread([this] {
            // One sample at once, so that a short timed loop still has one.
            do {
                unsigned int mhz = 0;
                if (nvml().getClockInfo(m_handle, kNvmlClockSm, &mhz) == kNvmlSuccess && mhz > 0)
                    m_samples.push_back(mhz);
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            } while (m_running);
        });
    }
    /// Stops sampling; the samples since start().
    const std::vector<unsigned int>& stop()
    {
        m_running = false;
        if (m_thread.joinable())
            m_thread.join();
        return m_samples;
    }

private:
    NvmlDevice m_handle;
    std::atomic<bool> m_running{false};
    std::thread m_thread;
    std::vector<unsigned int> m_samples;
};

// ---------------------------------------------------------------------------------------------
// Kernels.

// A deterministic pseudo-random value in [-1, 1) for element i (not zeros: zeros run faster).
__device__ float hashUniform(size_t i, unsigned int seed)
{
    unsigned int x = static_cast<unsigned int>(i) * 2654435761u ^
                     static_cast<unsigned int>(i >> 32) * 40503u ^ seed * 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T>
__global__ void fillRandom(T* data, size_t count, unsigned int seed, float scale)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
         i += size_t(gridDim.x) * blockDim.x)
        data[i] = T(hashUniform(i, seed) * scale);
}

// Block-wide sum or max (blockDim.x a multiple of 32, at most 1024), the result in every thread.
template <bool kMax> __device__ float blockReduce(float v)
{
    __shared__ float partial[32];
    const auto combine = [](float a, float b) { return kMax ? fmaxf(a, b) : a + b; };
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    __syncthreads(); // partial may still be read from a previous call
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < static_cast<int>(blockDim.x >> 5) ? partial[lane] : (kMax ? -INFINITY : 0.0f);
        for (int offset = 16; offset > 0; offset >>= 1)
            v = combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
        if (lane == 0)
            partial[0] = v;
    }
    __syncthreads();
    return partial[0];
}

// Row softmax in place: one block per row of `len` bf16 scores, fp32 math.
__global__ void softmaxRows(__nv_bfloat16* scores, int len)
{
    __nv_bfloat16* row = scores + size_t(blockIdx.x) * len;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < len; i += blockDim.x)
        m = fmaxf(m, __bfloat162float(row[i]));
    m = blockReduce<true>(m);
    float sum = 0;
    for (int i = threadIdx.x; i < len; i += blockDim.x)
        sum += __expf(__bfloat162float(row[i]) - m);
    const float inv = 1.0f / blockReduce<false>(sum);
    for (int i = threadIdx.x; i < len; i += blockDim.x)
        row[i] = __float2bfloat16(__expf(__bfloat162float(row[i]) - m) * inv);
}

// Softmax backward in place: dS = P * (dP - rowsum(dP * P)), dS written over dP.
__global__ void softmaxBackwardRows(const __nv_bfloat16* p, __nv_bfloat16* dp, int len)
{
    const __nv_bfloat16* pRow = p + size_t(blockIdx.x) * len;
    __nv_bfloat16* dRow = dp + size_t(blockIdx.x) * len;
    float dot = 0;
    for (int i = threadIdx.x; i < len; i += blockDim.x)
        dot += __bfloat162float(pRow[i]) * __bfloat162float(dRow[i]);
    dot = blockReduce<false>(dot);
    for (int i = threadIdx.x; i < len; i += blockDim.x)
        dRow[i] = __float2bfloat16(__bfloat162float(pRow[i]) * (__bfloat162float(dRow[i]) - dot));
}

__global__ void copyKernel(const float4* __restrict__ a, float4* __restrict__ b, size_t n4)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4;
         i += size_t(gridDim.x) * blockDim.x)
        b[i] = a[i];
}

__global__ void triadKernel(float4* __restrict__ a, const float4* __restrict__ b,
                            const float4* __restrict__ c, float s, size_t n4)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4;
         i += size_t(gridDim.x) * blockDim.x) {
        const float4 x = b[i];
        const float4 y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

template <typename T>
void fill(void* data, size_t count, unsigned int seed, float scale, cudaStream_t stream)
{
    fillRandom<T><<<1024, 256, 0, stream>>>(static_cast<T*>(data), count, seed, scale);
    CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------------------------
// cuBLASLt.

// One matmul, set up once and launched many times. Column-major throughout (cuBLAS's
// convention): D (m x n, ld m) = alpha * op(A) * op(B), where A is stored k x m (ld k) when
// transA, else m x k (ld m), and B is stored n x k (ld n) when transB, else k x n (ld k).
// Batched: `batch` matrices each, strided by one matrix. FP32 compute and scale; C = D.
class LtGemm
{
public:
    LtGemm(cublasLtHandle_t lt, cudaDataType_t abType, cudaDataType_t cType, bool transA,
           bool transB, long long m, long long n, long long k, long long batch, float alpha)
        : m_lt(lt), m_alpha(alpha)
    {
        CUBLAS_CHECK(cublasLtMatmulDescCreate(&m_op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        const cublasOperation_t ta = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
        const cublasOperation_t tb = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        CUBLAS_CHECK(
            cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        CUBLAS_CHECK(
            cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        m_a = layout(abType, transA ? k : m, transA ? m : k, batch);
        m_b = layout(abType, transB ? n : k, transB ? k : n, batch);
        m_c = layout(cType, m, n, batch);
        cublasLtMatmulPreference_t preference = nullptr;
        CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
        const uint64_t workspace = kWorkspaceBytes;
        CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
            preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
        cublasLtMatmulHeuristicResult_t result{};
        int returned = 0;
        // No algorithm for this shape and type is not a failure: the caller skips it.
        const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
            lt, m_op, m_a, m_b, m_c, m_c, preference, 1, &result, &returned);
        cublasLtMatmulPreferenceDestroy(preference);
        m_ok = status == CUBLAS_STATUS_SUCCESS && returned > 0 &&
               result.state == CUBLAS_STATUS_SUCCESS;
        if (m_ok)
            m_algo = result.algo;
    }
    ~LtGemm()
    {
        cublasLtMatrixLayoutDestroy(m_a);
        cublasLtMatrixLayoutDestroy(m_b);
        cublasLtMatrixLayoutDestroy(m_c);
        cublasLtMatmulDescDestroy(m_op);
    }
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;

    bool ok() const { return m_ok; }
    void run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const
    {
        const float beta = 0;
        CUBLAS_CHECK(cublasLtMatmul(m_lt, m_op, &m_alpha, a, m_a, b, m_b, &beta, c, m_c, c, m_c,
                                    &m_algo, workspace, kWorkspaceBytes, stream));
    }

private:
    static cublasLtMatrixLayout_t layout(cudaDataType_t type, long long rows, long long cols,
                                         long long batch)
    {
        cublasLtMatrixLayout_t l = nullptr;
        CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows),
                                                static_cast<uint64_t>(cols), rows));
        if (batch > 1) {
            const int32_t count = static_cast<int32_t>(batch);
            const int64_t stride = rows * cols;
            CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                          &count, sizeof count));
            CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
        }
        return l;
    }

    cublasLtHandle_t m_lt;
    float m_alpha;
    cublasLtMatmulDesc_t m_op = nullptr;
    cublasLtMatrixLayout_t m_a = nullptr;
    cublasLtMatrixLayout_t m_b = nullptr;
    cublasLtMatrixLayout_t m_c = nullptr;
    cublasLtMatmulAlgo_t m_algo{};
    bool m_ok = false;
};

// The state of one device's measurements.
struct DeviceContext
{
    int device = 0;
    cudaStream_t stream = nullptr;
    cublasLtHandle_t lt = nullptr;
    void* workspace = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    ClockSampler* sampler = nullptr;
    std::vector<unsigned int> clockSamples; // over every GEMM of this device
    bool fp8Warned = false;
};

size_t freeBytes()
{
    size_t free = 0;
    size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

// Mean seconds per call of `body` over `iters` calls after `warmup` calls, CUDA events.
template <typename Body> double timeMean(DeviceContext& c, int warmup, int iters, const Body& body)
{
    for (int i = 0; i < warmup; ++i)
        body();
    CUDA_CHECK(cudaStreamSynchronize(c.stream));
    CUDA_CHECK(cudaEventRecord(c.start, c.stream));
    for (int i = 0; i < iters; ++i)
        body();
    CUDA_CHECK(cudaEventRecord(c.stop, c.stream));
    CUDA_CHECK(cudaEventSynchronize(c.stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, c.start, c.stop));
    return ms * 1e-3 / iters;
}

struct GemmType
{
    const char* name;
    cudaDataType_t ab;
    cudaDataType_t cd;
    size_t abBytes;
    size_t cdBytes;
};

const GemmType kGemmTypes[] = {{"bf16", CUDA_R_16BF, CUDA_R_16BF, 2, 2},
                               {"fp16", CUDA_R_16F, CUDA_R_16F, 2, 2},
                               {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, 1, 2}};

const GemmType* gemmType(const std::string& name)
{
    for (const GemmType& t : kGemmTypes)
        if (name == t.name)
            return &t;
    return nullptr;
}

// One GEMM shape: A, B filled, timed, one gemm record. "TN" for every type (A stored k x m and
// transposed, B k x n), which fp8 requires and which is the usual fast layout for the others.
// Returns false when it was skipped (no memory, no algorithm).
bool measureGemm(DeviceContext& c, const Options& o, const GemmType& t, const std::string& shape,
                 long long m, long long n, long long k, long long batch)
{
    const std::string what = std::string(t.name) + " " + shape + " " + std::to_string(m) + "x" +
                             std::to_string(n) + "x" + std::to_string(k) + "x" +
                             std::to_string(batch);
    const size_t aCount = size_t(m) * k * batch;
    const size_t bCount = size_t(k) * n * batch;
    const size_t cCount = size_t(m) * n * batch;
    const double needed = double(aCount + bCount) * t.abBytes + double(cCount) * t.cdBytes;
    if (needed > 0.8 * freeBytes()) {
        warn("gemm " + what + " skipped: needs " + std::to_string(needed / 1e9) +
             " GB, more than 80% of the free device memory");
        return false;
    }
    LtGemm gemm(c.lt, t.ab, t.cd, true, false, m, n, k, batch, 1.0f);
    if (!gemm.ok()) {
        if (t.ab == CUDA_R_8F_E4M3) {
            if (!c.fp8Warned)
                warn("device " + std::to_string(c.device) +
                     ": cuBLASLt has no fp8 algorithm (first at " + what + "); fp8 skipped");
            c.fp8Warned = true;
        } else {
            warn("gemm " + what + " skipped: cuBLASLt has no algorithm for it");
        }
        return false;
    }
    void* a = nullptr;
    void* b = nullptr;
    void* d = nullptr;
    CUDA_CHECK(cudaMalloc(&a, aCount * t.abBytes));
    CUDA_CHECK(cudaMalloc(&b, bCount * t.abBytes));
    CUDA_CHECK(cudaMalloc(&d, cCount * t.cdBytes));
    if (t.ab == CUDA_R_16BF) {
        fill<__nv_bfloat16>(a, aCount, 1, 1.0f, c.stream);
        fill<__nv_bfloat16>(b, bCount, 2, 1.0f, c.stream);
    } else if (t.ab == CUDA_R_16F) {
        fill<__half>(a, aCount, 1, 1.0f, c.stream);
        fill<__half>(b, bCount, 2, 1.0f, c.stream);
    } else {
        fill<__nv_fp8_e4m3>(a, aCount, 1, 1.0f, c.stream);
        fill<__nv_fp8_e4m3>(b, bCount, 2, 1.0f, c.stream);
    }
    const auto call = [&] { gemm.run(a, b, d, c.workspace, c.stream); };
    for (int i = 0; i < o.warmup; ++i)
        call();
    CUDA_CHECK(cudaStreamSynchronize(c.stream));
    c.sampler->start();
    const double t_s = timeMean(c, 0, o.iters, call);
    const std::vector<unsigned int>& samples = c.sampler->stop();
    double clock = 0;
    for (unsigned int s : samples)
        clock += s;
    clock = samples.empty() ? 0 : clock / samples.size();
    c.clockSamples.insert(c.clockSamples.end(), samples.begin(), samples.end());
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
    emit("{\"type\":\"gemm\",\"device\":%d,\"dtype\":\"%s\",\"shape\":%s,\"m\":%lld,\"n\":%lld,"
         "\"k\":%lld,\"batch\":%lld,\"time_s\":%.9g,\"tflops\":%.9g,\"sm_clock_mhz\":%.0f}",
         c.device, t.name, quoted(shape).c_str(), m, n, k, batch, t_s,
         2.0 * m * n * k * batch / t_s / 1e12, clock);
    return true;
}

// Unfused, non-causal attention in bf16 for `bh` heads of `seq` x `dim`. Row-major per head:
// Q, K, V, O, dO, dQ, dK, dV are seq x dim (column-major: dim x seq, ld dim); the scores
// S/P and dP/dS are seq x seq with a row per query (column-major: keys x queries).
bool measureAttention(DeviceContext& c, const Options& o, const AttentionJob& job)
{
    const long long seq = job.seq;
    const long long dim = job.head_dim;
    const double perHead = 2.0 * (2.0 * seq * seq + 8.0 * seq * dim); // bytes, bf16
    // The score matrices (P and dP) within 80% of the free memory, so each within 40%.
    const long long fits = static_cast<long long>(0.8 * freeBytes() / perHead);
    const long long bh = std::min(job.batch_heads, fits);
    if (bh < 1) {
        warn("attention " + std::to_string(seq) + "x" + std::to_string(dim) +
             " skipped: one head's score matrices do not fit in the free device memory");
        return false;
    }
    if (bh < job.batch_heads)
        warn("attention: batch_heads reduced from " + std::to_string(job.batch_heads) + " to " +
             std::to_string(bh) + " so that the score matrix fits in 40% of the free memory");
    const cudaDataType_t bf = CUDA_R_16BF;
    // S = Q K^T (col-major: S(k,q) = K^T Q), scaled by 1/sqrt(dim).
    const LtGemm scores(c.lt, bf, bf, true, false, seq, seq, dim, bh,
                        1.0f / std::sqrt(static_cast<float>(dim)));
    // O = P V and dQ = dS K (col-major: O(d,q) = V P).
    const LtGemm pv(c.lt, bf, bf, false, false, dim, seq, seq, bh, 1.0f);
    // dV = P^T dO and dK = dS^T Q (col-major: dV(d,k) = dO P^T).
    const LtGemm ptv(c.lt, bf, bf, false, true, dim, seq, seq, bh, 1.0f);
    // dP = dO V^T: the scores' pattern without the scale.
    const LtGemm dpGemm(c.lt, bf, bf, true, false, seq, seq, dim, bh, 1.0f);
    if (!scores.ok() || !pv.ok() || !ptv.ok() || !dpGemm.ok()) {
        warn("attention " + std::to_string(seq) + "x" + std::to_string(dim) +
             " skipped: cuBLASLt has no algorithm for one of its GEMMs");
        return false;
    }
    const size_t head = size_t(seq) * dim * bh;
    const size_t score = size_t(seq) * seq * bh;
    std::vector<__nv_bfloat16*> t(8);
    for (__nv_bfloat16*& p : t)
        CUDA_CHECK(cudaMalloc(&p, head * sizeof(__nv_bfloat16)));
    __nv_bfloat16* q = t[0];
    __nv_bfloat16* k = t[1];
    __nv_bfloat16* v = t[2];
    __nv_bfloat16* out = t[3];
    __nv_bfloat16* dOut = t[4];
    __nv_bfloat16* dq = t[5];
    __nv_bfloat16* dk = t[6];
    __nv_bfloat16* dv = t[7];
    __nv_bfloat16* p = nullptr;
    __nv_bfloat16* dp = nullptr;
    CUDA_CHECK(cudaMalloc(&p, score * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&dp, score * sizeof(__nv_bfloat16)));
    for (unsigned int i = 0; i < 5; ++i)
        fill<__nv_bfloat16>(t[i], head, 10 + i, 1.0f, c.stream);
    const unsigned int rows = static_cast<unsigned int>(seq * bh);
    const int len = static_cast<int>(seq);
    const auto forward = [&] {
        scores.run(k, q, p, c.workspace, c.stream);
        softmaxRows<<<rows, 256, 0, c.stream>>>(p, len);
        CUDA_CHECK(cudaGetLastError());
        pv.run(v, p, out, c.workspace, c.stream);
    };
    const auto backward = [&] {
        ptv.run(dOut, p, dv, c.workspace, c.stream);
        dpGemm.run(v, dOut, dp, c.workspace, c.stream);
        softmaxBackwardRows<<<rows, 256, 0, c.stream>>>(p, dp, len);
        CUDA_CHECK(cudaGetLastError());
        pv.run(k, dp, dq, c.workspace, c.stream);
        ptv.run(q, dp, dk, c.workspace, c.stream);
    };
    const double fwd = timeMean(c, o.warmup, o.iters, forward);
    forward(); // P for the backward pass
    const double bwd = timeMean(c, o.warmup, o.iters, backward);
    for (__nv_bfloat16* b : t)
        cudaFree(b);
    cudaFree(p);
    cudaFree(dp);
    const double flops = double(bh) * seq * seq * dim;
    emit("{\"type\":\"attention\",\"device\":%d,\"dtype\":\"bf16\",\"batch_heads\":%lld,"
         "\"seq\":%lld,\"head_dim\":%lld,\"fwd_time_s\":%.9g,\"bwd_time_s\":%.9g,"
         "\"fwd_tflops\":%.9g,\"bwd_tflops\":%.9g}",
         c.device, bh, seq, dim, fwd, bwd, 4 * flops / fwd / 1e12, 8 * flops / bwd / 1e12);
    return true;
}

// HBM bandwidth: copy (b = a) and STREAM triad (a = b + s*c) over float arrays of 1 GiB each
// (1/8 of the free memory if less), best of `iters` after warm-up; read + written bytes.
int measureHbm(DeviceContext& c, const Options& o)
{
    const size_t arrayBytes = std::min(size_t(1) << 30, freeBytes() / 8) / 16 * 16;
    const size_t n4 = arrayBytes / sizeof(float4);
    if (n4 == 0) {
        warn("hbm skipped: no free device memory");
        return 0;
    }
    float4* a = nullptr;
    float4* b = nullptr;
    float4* cc = nullptr;
    CUDA_CHECK(cudaMalloc(&a, arrayBytes));
    CUDA_CHECK(cudaMalloc(&b, arrayBytes));
    CUDA_CHECK(cudaMalloc(&cc, arrayBytes));
    const size_t count = arrayBytes / sizeof(float);
    fill<float>(a, count, 20, 1.0f, c.stream);
    fill<float>(b, count, 21, 1.0f, c.stream);
    fill<float>(cc, count, 22, 1.0f, c.stream);
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c.device));
    const unsigned int blocks = static_cast<unsigned int>(std::max(sms, 1) * 8);
    struct Kernel
    {
        const char* name;
        size_t bytes;
        std::function<void()> launch;
    };
    const Kernel kernels[] = {
        {"copy", 2 * arrayBytes, [&] { copyKernel<<<blocks, 256, 0, c.stream>>>(a, b, n4); }},
        {"triad", 3 * arrayBytes,
         [&] { triadKernel<<<blocks, 256, 0, c.stream>>>(a, b, cc, 3.0f, n4); }}};
    for (const Kernel& kernel : kernels) {
        checkInterrupted();
        for (int i = 0; i < o.warmup; ++i)
            kernel.launch();
        CUDA_CHECK(cudaGetLastError());
        double best = 0;
        for (int i = 0; i < o.iters; ++i) {
            const double t = timeMean(c, 0, 1, kernel.launch);
            best = i == 0 ? t : std::min(best, t);
        }
        CUDA_CHECK(cudaGetLastError());
        emit("{\"type\":\"hbm\",\"device\":%d,\"kernel\":\"%s\",\"bytes\":%zu,\"time_s\":%.9g,"
             "\"GBps\":%.9g}",
             c.device, kernel.name, kernel.bytes, best, kernel.bytes / best / 1e9);
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(cc);
    return 2;
}

} // namespace

int measureCompute(int devices, const Options& o)
{
    int results = 0;
    for (int d = 0; d < devices; ++d) {
        checkInterrupted();
        CUDA_CHECK(cudaSetDevice(d));
        cudaDeviceProp prop{};
        CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
        const NvmlDevice handle = nvmlHandle(d);
        ClockSampler sampler(handle);
        DeviceContext c;
        c.device = d;
        c.sampler = &sampler;
        CUDA_CHECK(cudaStreamCreate(&c.stream));
        CUDA_CHECK(cudaEventCreate(&c.start));
        CUDA_CHECK(cudaEventCreate(&c.stop));
        CUBLAS_CHECK(cublasLtCreate(&c.lt));
        CUDA_CHECK(cudaMalloc(&c.workspace, kWorkspaceBytes));

        const bool fp8 = prop.major * 10 + prop.minor >= 89;
        for (const std::string& name : o.gemmDtypes) {
            const GemmType* t = gemmType(name);
            if (!t || (t->ab == CUDA_R_8F_E4M3 && !fp8))
                continue;
            for (long long size : {1024LL, 2048LL, 4096LL, 8192LL, 16384LL}) {
                checkInterrupted();
                results += measureGemm(c, o, *t, "grid", size, size, size, 1);
            }
        }
        for (const GemmJob& job : o.plan.gemms) {
            checkInterrupted();
            results += measureGemm(c, o, kGemmTypes[0], job.name, job.m, job.n, job.k, job.batch);
        }
        for (const AttentionJob& job : o.plan.attention) {
            checkInterrupted();
            results += measureAttention(c, o, job);
        }
        results += measureHbm(c, o);

        unsigned int maxMhz = 0;
        if (handle)
            nvml().getMaxClockInfo(handle, kNvmlClockSm, &maxMhz);
        double mean = 0;
        unsigned int minMhz = 0;
        for (unsigned int s : c.clockSamples) {
            mean += s;
            minMhz = minMhz == 0 ? s : std::min(minMhz, s);
        }
        if (!c.clockSamples.empty())
            mean /= c.clockSamples.size();
        emit("{\"type\":\"clock\",\"device\":%d,\"sm_mhz_mean\":%.0f,\"sm_mhz_min\":%u,"
             "\"sm_mhz_max\":%u,\"samples\":%zu}",
             d, mean, minMhz, maxMhz, c.clockSamples.size());

        cudaFree(c.workspace);
        cublasLtDestroy(c.lt);
        cudaEventDestroy(c.start);
        cudaEventDestroy(c.stop);
        cudaStreamDestroy(c.stream);
    }
    return results;
}

} // namespace probe
