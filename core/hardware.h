#pragma once

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
    bool is_tpu = false;
    std::string source;

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
    double achievable_fraction = 0; ///< 0 where no practical figure is known
    std::string achievable_source;
    int chips_per_node = 0;           ///< NVSwitch generations only
    bool in_switch_reduction = false; ///< NVLS on NVSwitch gen 3 and later
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
