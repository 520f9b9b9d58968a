#pragma once

#include "hardware.h"

namespace paraplan {

/// Kernel-level efficiency: how much of a GPU's dense peak one GEMM or attention kernel reaches.
/// Figures come from published benchmarks (gpus.json "kernels"); shapes scale them by the
/// tile and wave quantization the NVIDIA Matrix Multiplication Background guide describes.
namespace kernels {

/// The share of the tile-level ceiling a GEMM of M x N x K keeps after wave quantization (the
/// last wave of output tiles leaves SMs idle) and the per-tile prologue/epilogue (short K).
/// cuBLAS picks among tile shapes; the best is taken. 1 for a perfectly shaped GEMM.
/// `kStep` is the depth of one main-loop step: 64 for 16-bit operands, 128 for FP8 (the same
/// 128 bytes per row, twice the elements), so a tile's prologue costs FP8 twice the K.
double gemmShapeEfficiency(int smCount, double M, double N, double K, double kStep = 64);

/// The efficiency of an M x N x K GEMM: `referenceShare` (the published best share, reached at
/// the reference shape) scaled by this shape's quantization relative to the reference's.
double gemmEfficiency(const KernelFigures& k, double referenceShare, double M, double N, double K);
/// The reference shape's own quantization, gemmShapeEfficiency at `k.gemm_shape` (0 when the
/// figures give no shape): what gemmEfficiency divides by, computed once per GPU.
double gemmReferenceEfficiency(const KernelFigures& k);
/// gemmEfficiency with the reference's quantization given (gemmReferenceEfficiency): the same
/// number, bit for bit, without recomputing the reference on every GEMM.
double gemmEfficiencyGivenReference(const KernelFigures& k, double referenceShare, double reference,
                                    double M, double N, double K, double kStep = 64);
/// The FP8 reference shape's quantization (gemmShapeEfficiency at `k.fp8_gemm_shape`, 128-deep
/// steps; the 16-bit reference's when the figures give no FP8 shape).
double fp8GemmReferenceEfficiency(const KernelFigures& k);
/// The promoted-accumulation FP8 figure's reference quantization (at `k.fp8_promoted_shape`,
/// 128-deep steps; the FP8 reference's when the figures give no promoted one, or give the best
/// of a search, which the engine takes at 0.94 as a fixed large shape's).
double fp8PromotedReferenceEfficiency(const KernelFigures& k);

/// An attention kernel's share of peak at sequence length `seq` and head dimension `d`:
/// share x seq / (seq + seq_half), times the head-dim-64 factor for d <= 64.
double attentionShare(double share, const AttentionFigures& a, double seq, double d);

/// The published figures for a kernel on a GPU; falls back to FlashAttention-2's when the GPU
/// has none for that kernel. nullptr when the GPU has no attention figures at all.
const AttentionFigures* attentionFigures(const GpuSpec& gpu, AttentionKernel kernel);

/// The expected slowdown of the slowest of `gpus` GPUs whose sustained speeds spread with
/// standard deviation `sigma`: 1 + sigma x E[max of n standard normals] (Blom's formula).
double slowestGpuFactor(double sigma, double gpus);

} // namespace kernels
} // namespace paraplan
