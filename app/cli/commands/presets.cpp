// paraplan-cli presets: GPU, interconnect and cluster presets with their sources.
#include "common.h"

#include "clusterio.h"
#include "hardware.h"
#include "units.h"

#include <QJsonArray>

#include <iomanip>

namespace paraplan::cli {

using units::formatNumber;

Options presetsOptions()
{
    return {jsonOption()};
}

int runPresets(const Args& args, std::ostream& out)
{
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    const std::vector<ClusterPresetInfo> clusters = clusterPresets();
    if (args.flag("--json")) {
        QJsonArray gpus;
        for (const GpuSpec& gpu : catalog.gpus) {
            QJsonObject peaks;
            for (int d = 0; d < kDtypeCount; ++d) {
                if (gpu.peak_tflops[static_cast<size_t>(d)] > 0)
                    peaks[dtypeName(static_cast<Dtype>(d))] =
                        gpu.peak_tflops[static_cast<size_t>(d)];
            }
            gpus.append(QJsonObject{{"id", QString::fromStdString(gpu.id)},
                                    {"name", QString::fromStdString(gpu.name)},
                                    {"peak_tflops", peaks},
                                    {"hbm_GiB", gpu.hbm_GiB},
                                    {"hbm_GBps", gpu.hbm_GBps},
                                    {"tdp_w", gpu.tdp_w},
                                    {"source", QString::fromStdString(gpu.source)}});
        }
        QJsonArray links;
        for (const InterconnectSpec& link : catalog.interconnects)
            links.append(QJsonObject{{"id", QString::fromStdString(link.id)},
                                     {"name", QString::fromStdString(link.name)},
                                     {"kind", linkKindName(link.kind)},
                                     {"per_direction_GBps", link.per_direction_GBps},
                                     {"bidirectional_GBps", link.bidirectionalGBps()},
                                     {"source", QString::fromStdString(link.source)}});
        QJsonArray clusterArray;
        for (const ClusterPresetInfo& info : clusters)
            clusterArray.append(QJsonObject{{"id", QString::fromStdString(info.id)},
                                            {"name", QString::fromStdString(info.name)},
                                            {"default_nodes", info.default_nodes},
                                            {"source", QString::fromStdString(info.source)}});
        printJson("paraplan-presets/1",
                  QJsonObject{{"gpus", gpus}, {"interconnects", links}, {"clusters", clusterArray}},
                  out);
        return kExitOk;
    }
    out << "GPUs (dense peak TFLOP/s; HBM)\n";
    for (const GpuSpec& gpu : catalog.gpus) {
        out << "  " << std::left << std::setw(16) << gpu.id << gpu.name << "\n      ";
        for (int d = 0; d < kDtypeCount; ++d) {
            if (gpu.peak_tflops[static_cast<size_t>(d)] > 0)
                out << dtypeName(static_cast<Dtype>(d)) << " "
                    << formatNumber(gpu.peak_tflops[static_cast<size_t>(d)], 4) << "  ";
        }
        out << "HBM " << formatNumber(gpu.hbm_GiB) << " GiB at " << formatNumber(gpu.hbm_GBps, 4)
            << " GB/s";
        if (gpu.tdp_w > 0)
            out << "  TDP " << formatNumber(gpu.tdp_w, 4) << " W";
        out << "\n      source: " << gpu.source << "\n";
    }
    out << "\nInterconnects (per direction; bidirectional = 2x, shown for reference)\n";
    for (const InterconnectSpec& link : catalog.interconnects) {
        out << "  " << std::left << std::setw(16) << link.id << link.name << ": "
            << formatNumber(link.per_direction_GBps, 4) << " GB/s per direction ("
            << formatNumber(link.bidirectionalGBps(), 4)
            << " bidirectional)\n      source: " << link.source << "\n";
    }
    out << "\nClusters (take --nodes, --nodes-per-rack, --oversubscription)\n";
    for (const ClusterPresetInfo& info : clusters)
        out << "  " << std::left << std::setw(18) << info.id << info.name
            << "\n      source: " << info.source << "\n";
    return kExitOk;
}

} // namespace paraplan::cli
