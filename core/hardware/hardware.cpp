#include "hardware.h"

#include "jsonutil.h"

#include <QFile>

#include <stdexcept>

namespace paraplan {

const char* dtypeName(Dtype dtype)
{
    switch (dtype) {
    case Dtype::FP32:
        return "fp32";
    case Dtype::TF32:
        return "tf32";
    case Dtype::BF16:
        return "bf16";
    case Dtype::FP16:
        return "fp16";
    case Dtype::FP8:
        return "fp8";
    }
    return "?";
}

bool parseDtype(const std::string& text, Dtype* dtype)
{
    for (int i = 0; i < kDtypeCount; ++i) {
        if (text == dtypeName(static_cast<Dtype>(i))) {
            *dtype = static_cast<Dtype>(i);
            return true;
        }
    }
    return false;
}

const char* linkKindName(LinkKind kind)
{
    switch (kind) {
    case LinkKind::PCIe:
        return "pcie";
    case LinkKind::NVLink:
        return "nvlink";
    case LinkKind::NVSwitch:
        return "nvswitch";
    case LinkKind::InfiniBand:
        return "infiniband";
    case LinkKind::RoCE:
        return "roce";
    case LinkKind::ICI:
        return "ici";
    }
    return "?";
}

const GpuSpec* HardwareCatalog::gpu(const std::string& id) const
{
    for (const GpuSpec& spec : gpus) {
        if (spec.id == id)
            return &spec;
    }
    return nullptr;
}

const InterconnectSpec* HardwareCatalog::interconnect(const std::string& id) const
{
    for (const InterconnectSpec& spec : interconnects) {
        if (spec.id == id)
            return &spec;
    }
    return nullptr;
}

namespace {

QJsonObject loadBundled(const char* path)
{
    QFile file(QString::fromLatin1(path));
    if (!file.open(QIODevice::ReadOnly))
        throw std::runtime_error(std::string("bundled resource missing: ") + path);
    QJsonObject root;
    std::string error;
    if (!json::parseDocument(file.readAll().toStdString(), &root, &error))
        throw std::runtime_error(std::string(path) + ": " + error);
    return root;
}

Origin originOf(const QJsonObject& o)
{
    return o.value("origin").toString() == "assumption" ? Origin::Assumption : Origin::Preset;
}

// One GEMM figure's measured shape, [M, N, K].
void readShape(const QJsonObject& o, const std::string& where, json::Reader& reader,
               std::array<double, 3>* shape)
{
    const QJsonArray values = o.value("shape").toArray();
    if (values.size() != 3)
        reader.error(where + ".shape", "must be [M, N, K]");
    for (int i = 0; i < values.size() && i < 3; ++i)
        (*shape)[static_cast<size_t>(i)] = values.at(i).toDouble();
}

// The FP8 GEMM with promoted (FP32) accumulation: kernels.fp8_gemm.promoted.
void readPromoted(const QJsonObject& o, const std::string& where, const std::string& gpuName,
                  json::Reader& reader, KernelFigures* k)
{
    reader.checkKeys(o, where, {"tflops", "shape", "best_of_search", "origin", "source"});
    reader.number(o, "tflops", where, &k->fp8_promoted_tflops, true);
    reader.string(o, "source", where, &k->fp8_promoted_source, true);
    reader.boolean(o, "best_of_search", where, &k->fp8_promoted_best_of_search);
    k->fp8_promoted_source = gpuName + ": " + k->fp8_promoted_source;
    k->fp8_promoted_origin = originOf(o);
    readShape(o, where, reader, &k->fp8_promoted_shape);
    if (!(k->fp8_promoted_tflops > 0))
        reader.error(where + ".tflops", "must be positive");
}

void readKernels(const QJsonObject& o, const std::string& path, const std::string& gpuName,
                 json::Reader& reader, KernelFigures* k)
{
    if (o.isEmpty())
        return;
    reader.checkKeys(o, path, {"sm_count", "gemm", "fp8_gemm", "grouped_gemm", "attention"});
    if (o.contains("grouped_gemm")) {
        const QJsonObject g = o.value("grouped_gemm").toObject();
        const std::string where = path + ".grouped_gemm";
        reader.checkKeys(
            g, where,
            {"tflops", "pair_bytes_per_hidden", "fp8_tflops", "fp8_source", "origin", "source"});
        reader.number(g, "tflops", where, &k->grouped_gemm_tflops, true);
        reader.number(g, "pair_bytes_per_hidden", where, &k->grouped_pair_bytes);
        reader.string(g, "source", where, &k->grouped_source, true);
        k->grouped_source = gpuName + ": " + k->grouped_source;
        k->grouped_origin = originOf(g);
        if (!(k->grouped_gemm_tflops > 0) ||
            !(k->grouped_pair_bytes >= 0 && k->grouped_pair_bytes < 1e4))
            reader.error(where, "tflops must be positive and pair_bytes_per_hidden from 0");
        if (g.contains("fp8_tflops")) {
            reader.number(g, "fp8_tflops", where, &k->grouped_fp8_tflops, true);
            reader.string(g, "fp8_source", where, &k->grouped_fp8_source, true);
            k->grouped_fp8_source = gpuName + ": " + k->grouped_fp8_source;
            if (!(k->grouped_fp8_tflops > 0))
                reader.error(where, "fp8_tflops must be positive");
        }
    }
    reader.integer(o, "sm_count", path, &k->sm_count, true);
    const QJsonObject gemm = o.value("gemm").toObject();
    reader.checkKeys(gemm, path + ".gemm",
                     {"tflops", "shape", "best_of_search", "origin", "source"});
    reader.number(gemm, "tflops", path + ".gemm", &k->gemm_tflops, true);
    reader.boolean(gemm, "best_of_search", path + ".gemm", &k->gemm_best_of_search);
    reader.string(gemm, "source", path + ".gemm", &k->gemm_source, true);
    k->gemm_source = gpuName + ": " + k->gemm_source;
    k->gemm_origin = originOf(gemm);
    readShape(gemm, path + ".gemm", reader, &k->gemm_shape);
    if (o.contains("fp8_gemm")) {
        const QJsonObject fp8 = o.value("fp8_gemm").toObject();
        const std::string where = path + ".fp8_gemm";
        reader.checkKeys(fp8, where,
                         {"tflops", "shape", "tn_only", "mxfp8", "promoted", "origin", "source"});
        reader.number(fp8, "tflops", where, &k->fp8_gemm_tflops, true);
        reader.string(fp8, "source", where, &k->fp8_gemm_source, true);
        reader.boolean(fp8, "tn_only", where, &k->fp8_tn_only);
        reader.boolean(fp8, "mxfp8", where, &k->mxfp8);
        k->fp8_gemm_source = gpuName + ": " + k->fp8_gemm_source;
        k->fp8_gemm_origin = originOf(fp8);
        readShape(fp8, where, reader, &k->fp8_gemm_shape);
        if (fp8.contains("promoted"))
            readPromoted(fp8.value("promoted").toObject(), where + ".promoted", gpuName, reader, k);
    }
    const QJsonObject attention = o.value("attention").toObject();
    for (auto it = attention.begin(); it != attention.end(); ++it) {
        AttentionKernel kernel;
        const std::string where = path + ".attention." + it.key().toStdString();
        if (!parseAttentionKernel(it.key().toStdString(), &kernel) ||
            kernel == AttentionKernel::Unfused || kernel == AttentionKernel::Auto) {
            reader.error(where, "unknown fused attention kernel");
            continue;
        }
        const QJsonObject f = it.value().toObject();
        reader.checkKeys(f, where, {"fwd", "bwd", "seq_half", "head_dim_64", "origin", "source"});
        AttentionFigures& a = k->attention[static_cast<size_t>(kernel)];
        a.available = true;
        reader.number(f, "fwd", where, &a.fwd, true);
        reader.number(f, "bwd", where, &a.bwd, true);
        reader.number(f, "seq_half", where, &a.seq_half, true);
        reader.number(f, "head_dim_64", where, &a.head_dim_64);
        reader.string(f, "source", where, &a.source, true);
        a.source = gpuName + ", " + it.key().toStdString() + ": " + a.source;
        a.origin = originOf(f);
        if (!(a.fwd > 0 && a.fwd <= 1 && a.bwd > 0 && a.bwd <= 1 && a.seq_half >= 0))
            reader.error(where, "fwd and bwd must lie in (0, 1], seq_half must not be negative");
    }
}

void readGpus(const QJsonObject& root, HardwareCatalog* catalog, json::Reader& reader)
{
    const QJsonArray array = root.value("gpus").toArray();
    for (int i = 0; i < array.size(); ++i) {
        const QJsonObject entry = array.at(i).toObject();
        const std::string path = "gpus[" + std::to_string(i) + "]";
        reader.checkKeys(entry, path,
                         {"id", "name", "vendor", "peak_tflops", "hbm_GiB", "hbm_GBps", "memory",
                          "tdp_w", "nvlink", "pcie_generation", "ici", "source",
                          "hbm_achievable_fraction", "kernels"});
        GpuSpec gpu;
        reader.string(entry, "id", path, &gpu.id, true);
        reader.string(entry, "name", path, &gpu.name, true);
        reader.string(entry, "vendor", path, &gpu.vendor, true);
        reader.string(entry, "source", path, &gpu.source, true);
        reader.number(entry, "hbm_GiB", path, &gpu.hbm_GiB, true);
        reader.number(entry, "hbm_GBps", path, &gpu.hbm_GBps, true);
        reader.integer(entry, "pcie_generation", path, &gpu.pcie_generation);
        reader.number(entry, "tdp_w", path, &gpu.tdp_w);
        if (gpu.tdp_w < 0)
            reader.error(path + ".tdp_w", "must not be negative");
        const QJsonObject peaks = entry.value("peak_tflops").toObject();
        for (auto it = peaks.begin(); it != peaks.end(); ++it) {
            Dtype dtype;
            if (!parseDtype(it.key().toStdString(), &dtype) || !it.value().isDouble())
                reader.error(path + ".peak_tflops." + it.key().toStdString(), "unknown dtype");
            else
                gpu.peak_tflops[static_cast<int>(dtype)] = it.value().toDouble();
        }
        const QJsonObject fraction = entry.value("hbm_achievable_fraction").toObject();
        reader.number(fraction, "value", path + ".hbm_achievable_fraction",
                      &gpu.hbm_achievable_fraction.value, true);
        std::string fractionSource;
        reader.string(fraction, "source", path + ".hbm_achievable_fraction", &fractionSource, true);
        gpu.hbm_achievable_fraction.source = gpu.name + ": " + fractionSource;
        gpu.hbm_achievable_fraction.origin = fraction.value("origin").toString() == "assumption"
                                                 ? Origin::Assumption
                                                 : Origin::Preset;
        const QJsonObject nvlink = entry.value("nvlink").toObject();
        reader.integer(nvlink, "generation", path + ".nvlink", &gpu.nvlink_generation);
        reader.integer(nvlink, "links", path + ".nvlink", &gpu.nvlink_links);
        gpu.is_tpu = entry.contains("ici");
        readKernels(entry.value("kernels").toObject(), path + ".kernels", gpu.name, reader,
                    &gpu.kernels);
        catalog->gpus.push_back(std::move(gpu));
    }
}

void readInterconnects(const QJsonObject& root, HardwareCatalog* catalog, json::Reader& reader)
{
    const QJsonArray array = root.value("interconnects").toArray();
    for (int i = 0; i < array.size(); ++i) {
        const QJsonObject entry = array.at(i).toObject();
        const std::string path = "interconnects[" + std::to_string(i) + "]";
        reader.checkKeys(entry, path,
                         {"id", "name", "kind", "per_direction_GBps", "achievable_fraction",
                          "achievable_source", "achievable_origin", "origin", "chips_per_node",
                          "in_switch_reduction", "source"});
        InterconnectSpec spec;
        std::string kind;
        reader.string(entry, "id", path, &spec.id, true);
        reader.string(entry, "name", path, &spec.name, true);
        reader.string(entry, "kind", path, &kind, true);
        reader.string(entry, "source", path, &spec.source, true);
        reader.number(entry, "per_direction_GBps", path, &spec.per_direction_GBps, true);
        reader.number(entry, "achievable_fraction", path, &spec.achievable_fraction);
        reader.string(entry, "achievable_source", path, &spec.achievable_source);
        // "origin" / "achievable_origin": "assumption" where no document gives the figure.
        reader.choice(entry, "origin", path, "origin",
                      {{"preset", Origin::Preset}, {"assumption", Origin::Assumption}},
                      &spec.origin);
        reader.choice(entry, "achievable_origin", path, "origin",
                      {{"preset", Origin::Preset}, {"assumption", Origin::Assumption}},
                      &spec.achievable_origin);
        reader.integer(entry, "chips_per_node", path, &spec.chips_per_node);
        reader.boolean(entry, "in_switch_reduction", path, &spec.in_switch_reduction);
        bool known = false;
        for (LinkKind candidate : {LinkKind::PCIe, LinkKind::NVLink, LinkKind::NVSwitch,
                                   LinkKind::InfiniBand, LinkKind::RoCE, LinkKind::ICI}) {
            if (kind == linkKindName(candidate)) {
                spec.kind = candidate;
                known = true;
            }
        }
        if (!known)
            reader.error(path + ".kind", "unknown link kind '" + kind + "'");
        catalog->interconnects.push_back(std::move(spec));
    }
}

HardwareCatalog loadCatalog()
{
    HardwareCatalog catalog;
    std::vector<std::string> errors;
    json::Reader reader(&errors);
    readGpus(loadBundled(":/paraplan/hardware/gpus.json"), &catalog, reader);
    readInterconnects(loadBundled(":/paraplan/hardware/interconnects.json"), &catalog, reader);
    if (!errors.empty())
        throw std::runtime_error("bundled hardware catalog: " + errors.front());
    return catalog;
}

} // namespace

const char* attentionKernelName(AttentionKernel kernel)
{
    return enumName(kAttentionKernelNames, kernel);
}

bool parseAttentionKernel(const std::string& text, AttentionKernel* kernel)
{
    return enumFromName(kAttentionKernelNames, text, kernel);
}

const HardwareCatalog& HardwareCatalog::bundled()
{
    static const HardwareCatalog catalog = loadCatalog();
    return catalog;
}

} // namespace paraplan
