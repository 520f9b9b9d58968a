#pragma once

#include "enumnames.h"
#include "provenance.h"

#include <array>
#include <string>
#include <vector>

namespace paraplan {

enum class Dtype
{
    FP32,
    TF32,
    BF16,
    FP16,
    FP8,
};
inline constexpr int kDtypeCount = 5;
const char* dtypeName(Dtype dtype);
bool parseDtype(const std::string& text, Dtype* dtype);

/// The attention kernel (training.attention).
enum class AttentionKernel
{
    Unfused, ///< batched QK^T / AV GEMMs with a softmax kernel between them
    Flash2,  ///< FlashAttention-2 (Dao 2023)
    Flash3,  ///< FlashAttention-3 (Shah et al. 2024), Hopper only
    Cudnn,   ///< cuDNN fused attention (Transformer Engine's NVTE_FUSED_ATTN=1)
    Sdpa,    ///< PyTorch scaled_dot_product_attention, its built-in flash backend
    Triton,  ///< Triton's fused attention (flash-attn's Triton kernel, llm-foundry's attn_impl)
    Auto,    ///< sdpa on PyTorch FSDP-style stacks, flash2 on Megatron-style ones
};
inline constexpr int kAttentionKernelCount = 6; ///< kernels with figures (all but Auto)
inline constexpr EnumName<AttentionKernel> kAttentionKernelNames[] = {
    {AttentionKernel::Auto, "auto", "auto (SDPA on PyTorch, else FlashAttention-2)"},
    {AttentionKernel::Unfused, "unfused", "unfused (GEMMs + softmax)"},
    {AttentionKernel::Flash2, "flash2", "FlashAttention-2"},
    {AttentionKernel::Flash3, "flash3", "FlashAttention-3 (Hopper)"},
    {AttentionKernel::Cudnn, "cudnn", "cuDNN fused attention"},
    {AttentionKernel::Sdpa, "sdpa", "PyTorch SDPA (flash backend)"},
    {AttentionKernel::Triton, "triton", "Triton fused attention"},
};
const char* attentionKernelName(AttentionKernel kernel);
bool parseAttentionKernel(const std::string& text, AttentionKernel* kernel);

/// A fused attention kernel's published throughput on one GPU (causal, 16-bit, head dim 128):
/// forward and backward shares of dense peak at long sequences, and how they fall for short
/// ones: share(s) = share x s / (s + seq_half).
struct AttentionFigures
{
    bool available = false;
    double fwd = 0;
    double bwd = 0;
    double seq_half = 0;
    double head_dim_64 = 1; ///< throughput at head dim 64 relative to 128
    Origin origin = Origin::Preset;
    std::string source;
};

/// Kernel-level figures of one GPU, from published benchmarks (gpus.json "kernels").
struct KernelFigures
{
    int sm_count = 0;
    double gemm_tflops = 0;             ///< best sustained 16-bit GEMM (0: not known)
    std::array<double, 3> gemm_shape{}; ///< M, N, K where it was measured
    /// True when `gemm_tflops` is the best shape of a search (gpus.json "best_of_search", the
    /// default); false when it was measured at one fixed large shape.
    bool gemm_best_of_search = true;
    Origin gemm_origin = Origin::Preset;
    std::string gemm_source;
    /// Sustained FP8 (e4m3) GEMM at `fp8_gemm_shape` (0: not known; the 16-bit share is taken).
    double fp8_gemm_tflops = 0;
    std::array<double, 3> fp8_gemm_shape{};
    Origin fp8_gemm_origin = Origin::Preset;
    std::string fp8_gemm_source;
    /// FP8 GEMM with its accumulators promoted to FP32 every few K steps (cuBLASLt with fast
    /// accumulation off), as Transformer Engine and torchao run the backward's dgrad and wgrad
    /// (gpus.json "fp8_gemm.promoted"; 0: no separate figure, the forward's is taken).
    double fp8_promoted_tflops = 0;
    std::array<double, 3> fp8_promoted_shape{};
    bool fp8_promoted_best_of_search = true;
    Origin fp8_promoted_origin = Origin::Preset;
    std::string fp8_promoted_source;
    bool fp8_tn_only = false; ///< FP8 GEMMs take K-major (TN) operands only: transposed copies
    bool mxfp8 = false;       ///< block-scaled MXFP8 tensor cores (1x32 E8M0 scales, Blackwell)
    /// 16-bit grouped expert GEMMs of an MoE layer (gpus.json "grouped_gemm"; 0: not known,
    /// the dense GEMM figures are taken): their sustained TFLOP/s, and the HBM bytes per
    /// routed token-expert pair per hidden element (forward) that the layer's router,
    /// permute, unpermute and per-expert work add beyond the GEMMs (0: the engine's copies).
    double grouped_gemm_tflops = 0;
    double grouped_pair_bytes = 0;
    Origin grouped_origin = Origin::Preset;
    std::string grouped_source;
    /// FP8 grouped expert GEMMs' sustained TFLOP/s ("grouped_gemm.fp8_tflops"; 0: not
    /// measured, the dense FP8 reference plus the 16-bit grouping's extra time per FLOP).
    double grouped_fp8_tflops = 0;
    std::string grouped_fp8_source;
    std::array<AttentionFigures, kAttentionKernelCount> attention{}; ///< by AttentionKernel
};

/// One accelerator model, as its datasheet gives it.
struct GpuSpec
{
    std::string id;
    std::string name;
    std::string vendor;
    std::array<double, kDtypeCount> peak_tflops{}; ///< dense; 0 where the dtype is unsupported
    double hbm_GiB = 0;
    double hbm_GBps = 0;
    Sourced hbm_achievable_fraction; ///< share of hbm_GBps that memory-bound kernels reach
    int nvlink_generation = 0;
    int nvlink_links = 0;
    int pcie_generation = 0;
    /// The datasheet's maximum board power (TDP) in W, cited in `source`; 0: not given.
    double tdp_w = 0;
    bool is_tpu = false;
    std::string source;
    KernelFigures kernels;

    double peakTflops(Dtype dtype) const { return peak_tflops[static_cast<int>(dtype)]; }
};

enum class LinkKind
{
    PCIe,
    NVLink,
    NVSwitch,
    InfiniBand,
    RoCE,
    ICI,
};
const char* linkKindName(LinkKind kind);

/// A link technology. Bandwidth is per direction, per link or per port.
struct InterconnectSpec
{
    std::string id;
    std::string name;
    LinkKind kind = LinkKind::PCIe;
    double per_direction_GBps = 0;
    Origin origin = Origin::Preset; ///< of per_direction_GBps: "origin" in the file
    double achievable_fraction = 0; ///< 0 where no practical figure is known
    std::string achievable_source;
    Origin achievable_origin = Origin::Preset; ///< "achievable_origin" in the file
    int chips_per_node = 0;                    ///< NVSwitch generations only
    bool in_switch_reduction = false;          ///< NVLS on NVSwitch gen 3 and later
    std::string source;

    double bidirectionalGBps() const { return 2 * per_direction_GBps; }
};

/// The GPU and interconnect presets of resources/hardware, read once.
class HardwareCatalog
{
public:
    std::vector<GpuSpec> gpus;
    std::vector<InterconnectSpec> interconnects;

    const GpuSpec* gpu(const std::string& id) const;
    const InterconnectSpec* interconnect(const std::string& id) const;

    /// The catalog compiled into the binary. Throws std::runtime_error if the bundled data is
    /// malformed (a build defect, caught by the tests).
    static const HardwareCatalog& bundled();
};

} // namespace paraplan
