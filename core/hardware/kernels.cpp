#include "kernels.h"

#include <algorithm>
#include <cmath>

namespace paraplan::kernels {

namespace {

// std::ceil of a positive value below 2^62, without a library call (x86-64's baseline has no
// rounding instruction): the same number, bit for bit.
double ceilPositive(double x)
{
    if (!(x < 4.6e18))
        return std::ceil(x);
    const double truncated = static_cast<double>(static_cast<long long>(x));
    return truncated < x ? truncated + 1 : truncated;
}

} // namespace

double gemmShapeEfficiency(int smCount, double M, double N, double K, double kStep)
{
    if (!(M > 0 && N > 0 && K > 0))
        return 1;
    const double sms = smCount > 0 ? smCount : 1;
    // Output tiles cuBLAS uses for 16-bit GEMMs (NVIDIA, Matrix Multiplication Background
    // User's Guide, 2023, section 2.3: 256x128 down to 64x64). A smaller tile re-reads its
    // operands more often, so its own ceiling is lower (relative figures: an assumption).
    struct Tile
    {
        double m, n, share;
    };
    static constexpr Tile kTiles[] = {{128, 256, 1.0}, {128, 128, 0.9}, {64, 128, 0.75}};
    double best = 0;
    for (const Tile& t : kTiles) {
        const double tiles = ceilPositive(M / t.m) * ceilPositive(N / t.n);
        const double waves = ceilPositive(tiles / sms);
        // Wave quantization (guide, section 3.2) and tile quantization (section 3.1): the
        // useful share of the work the SMs do.
        const double useful = std::min(1.0, (M * N) / (waves * sms * t.m * t.n));
        best = std::max(best, t.share * useful);
    }
    // Each tile's prologue and epilogue cost about one main-loop iteration: 64 deep for
    // 16-bit operands, 128 for FP8 (one iteration moves the same bytes, twice the elements).
    const double kShare = K / (K + kStep);
    return best * kShare;
}

double gemmReferenceEfficiency(const KernelFigures& k)
{
    if (k.sm_count <= 0 || !(k.gemm_shape[0] > 0))
        return 0;
    return gemmShapeEfficiency(k.sm_count, k.gemm_shape[0], k.gemm_shape[1], k.gemm_shape[2]);
}

double fp8GemmReferenceEfficiency(const KernelFigures& k)
{
    if (k.sm_count <= 0 || !(k.fp8_gemm_shape[0] > 0))
        return gemmReferenceEfficiency(k);
    return gemmShapeEfficiency(k.sm_count, k.fp8_gemm_shape[0], k.fp8_gemm_shape[1],
                               k.fp8_gemm_shape[2], 128);
}

double fp8PromotedReferenceEfficiency(const KernelFigures& k)
{
    // A best-of-search figure enters the engine times 0.94, as a fixed large shape's
    // (defaultEngineFigures): it is then referred to the forward's fixed shape.
    if (k.sm_count <= 0 || !(k.fp8_promoted_tflops > 0) || !(k.fp8_promoted_shape[0] > 0) ||
        k.fp8_promoted_best_of_search)
        return fp8GemmReferenceEfficiency(k);
    return gemmShapeEfficiency(k.sm_count, k.fp8_promoted_shape[0], k.fp8_promoted_shape[1],
                               k.fp8_promoted_shape[2], 128);
}

double gemmEfficiencyGivenReference(const KernelFigures& k, double referenceShare, double reference,
                                    double M, double N, double K, double kStep)
{
    if (k.sm_count <= 0 || !(k.gemm_shape[0] > 0) || !(reference > 0))
        return referenceShare;
    const double here = gemmShapeEfficiency(k.sm_count, M, N, K, kStep);
    return std::min(1.0, referenceShare * here / reference);
}

double gemmEfficiency(const KernelFigures& k, double referenceShare, double M, double N, double K)
{
    return gemmEfficiencyGivenReference(k, referenceShare, gemmReferenceEfficiency(k), M, N, K);
}

double attentionShare(double share, const AttentionFigures& a, double seq, double d)
{
    double s = share;
    if (seq > 0 && a.seq_half > 0)
        s *= seq / (seq + a.seq_half);
    if (d <= 64)
        s *= a.head_dim_64;
    return s;
}

const AttentionFigures* attentionFigures(const GpuSpec& gpu, AttentionKernel kernel)
{
    const auto& table = gpu.kernels.attention;
    const auto index = static_cast<size_t>(kernel);
    if (index < table.size() && table[index].available)
        return &table[index];
    const AttentionFigures& fa2 = table[static_cast<size_t>(AttentionKernel::Flash2)];
    return fa2.available ? &fa2 : nullptr;
}

namespace {

// The standard normal quantile (Abramowitz and Stegun 26.2.23, |error| < 4.5e-4).
double normalQuantile(double p)
{
    const bool upper = p > 0.5;
    const double q = upper ? 1 - p : p;
    const double t = std::sqrt(-2 * std::log(q));
    const double z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                             (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
    return upper ? z : -z;
}

} // namespace

double slowestGpuFactor(double sigma, double gpus)
{
    if (!(gpus > 1) || !(sigma > 0))
        return 1;
    const double p = (gpus - 0.375) / (gpus + 0.25);
    return 1 + sigma * normalQuantile(p);
}

} // namespace paraplan::kernels
