#include "topologyimport.h"
#include "topologyimportdetail.h"

#include "hardware.h"
#include "inputlimits.h"
#include "jsonutil.h"

#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace paraplan {
namespace {

using detail::kMaxNodeGpus;
using detail::kMaxNodeNics;

Sourced fromImport(double value, std::string how)
{
    return {value, Origin::UserEntry, std::move(how)};
}

// The NVLink generation of a GPU from the catalog.
const char* nvlinkIdFor(const GpuSpec& gpu)
{
    switch (gpu.nvlink_generation) {
    case 3:
        return "nvlink3";
    case 5:
        return "nvlink5";
    default:
        return "nvlink4";
    }
}

const char* pcieIdFor(int generation)
{
    switch (generation) {
    case 3:
        return "pcie-gen3-x16";
    case 4:
        return "pcie-gen4-x16";
    default:
        return "pcie-gen5-x16";
    }
}

} // namespace

namespace detail {

// Fills in what every import shares: GPU, PCIe, NICs, nodes, defaults.
bool finishImport(const TopologyImportOptions& options, const std::string& gpuGuess,
                  const std::string& gpuWhy, int pcieGeneration, double nicGBps, int nics,
                  TopologyImport* r, std::string* error, const HardwareCatalog& catalog)
{
    ClusterSpec& c = r->cluster;
    std::string gpuId = options.gpu_id.empty() ? gpuGuess : options.gpu_id;
    if (gpuId.empty()) {
        *error = "the file does not say which GPU this is: give it (--gpu, e.g. h100-sxm5-80gb)";
        return false;
    }
    const GpuSpec* gpu = catalog.gpu(gpuId);
    if (!gpu) {
        *error = "unknown GPU '" + gpuId + "' (see 'paraplan-cli presets')";
        return false;
    }
    c.gpu_id = gpuId;
    r->notes.push_back(options.gpu_id.empty() ? "GPU: " + gpu->name + " (" + gpuWhy + ")"
                                              : "GPU: " + gpu->name + " (user entry)");
    NodeSpec& n = c.node;
    if (n.fabric != NodeFabric::PCIe) {
        const char* nvlink = nvlinkIdFor(*gpu);
        n.nvlink_id = nvlink;
        n.nvlink_link_GBps = {
            catalog.interconnect(nvlink)->per_direction_GBps, catalog.interconnect(nvlink)->origin,
            catalog.interconnect(nvlink)->name + " (" + catalog.interconnect(nvlink)->source + ")"};
    }
    const int generation = pcieGeneration > 0 ? pcieGeneration : gpu->pcie_generation;
    const InterconnectSpec* pcie = catalog.interconnect(pcieIdFor(generation));
    n.pcie_id = pcie->id;
    n.pcie_GBps = {pcie->per_direction_GBps, pcie->origin, pcie->name + " (" + pcie->source + ")"};
    n.host_link_id = pcie->id;
    n.host_link_GBps = n.pcie_GBps;
    n.pcie_efficiency = {pcie->achievable_fraction, pcie->achievable_origin,
                         pcie->achievable_source};
    // Efficiencies: the same sources as the presets of the same GPU generation.
    const bool hopper = gpu->nvlink_generation >= 4;
    n.nvlink_ring_efficiency =
        hopper ? Sourced{0.822, Origin::Preset,
                         "NVLink4 ring all_reduce ~370 of 450 GB/s (NVIDIA/nccl-tests issue #212 "
                         "(S. Jeaugey, NVIDIA, 2024))"}
               : Sourced{0.767, Origin::Preset,
                         "NVLink3 ring all_reduce ~230 of 300 GB/s (8x A100 SXM nccl-tests results "
                         "in NVIDIA/nccl-tests issues #100 and #149)"};
    n.nvls_efficiency = {0.611, Origin::Preset,
                         "NVLS all_reduce algbw ~275 of 450 GB/s (NVIDIA/nccl-tests issue #212 (S. "
                         "Jeaugey, NVIDIA, 2024))"};
    r->notes.push_back("PCIe: " + pcie->name +
                       (pcieGeneration > 0 ? " (from the file's link speed)" : " (the GPU's)"));

    // NICs: the file counts them; their speed comes from the file (NCCL XML) or the user.
    n.nics = nics;
    std::string nicId = options.nic_id;
    if (nicId.empty() && nicGBps > 0) {
        for (const InterconnectSpec& spec : catalog.interconnects) {
            if ((spec.kind == LinkKind::InfiniBand || spec.kind == LinkKind::RoCE) &&
                std::fabs(spec.per_direction_GBps - nicGBps) < 0.5) {
                nicId = spec.id;
                break;
            }
        }
    }
    if (!nicId.empty()) {
        const InterconnectSpec* nic = catalog.interconnect(nicId);
        if (!nic) {
            *error = "unknown NIC '" + nicId + "' (e.g. ib-ndr, ib-hdr, roce-400)";
            return false;
        }
        n.nic_id = nicId;
        n.nic_GBps = {nic->per_direction_GBps, nic->origin, nic->name + " (" + nic->source + ")"};
        n.nic_efficiency = {
            nic->achievable_fraction > 0 ? nic->achievable_fraction : 1.0,
            nic->achievable_fraction > 0 ? nic->achievable_origin : Origin::Assumption,
            nic->achievable_fraction > 0 ? nic->achievable_source : "line rate assumed"};
        r->notes.push_back(
            "NICs: " + std::to_string(nics) + " x " + nic->name +
            (options.nic_id.empty() ? " (from the file's net speed)" : " (user entry)"));
    } else if (nicGBps > 0) {
        n.nic_GBps = fromImport(nicGBps, "NIC speed from the NCCL topology file");
        n.nic_efficiency = {1.0, Origin::Assumption, "line rate assumed"};
    }
    if (options.nodes > 1 && n.nic_GBps.value <= 0) {
        *error = "the file does not say the NICs' speed, needed for " +
                 std::to_string(options.nodes) + " nodes: give it (--nic, e.g. ib-ndr)";
        return false;
    }
    if (options.nodes > 1 && nics < 1) {
        *error = "the file shows no NIC, but " + std::to_string(options.nodes) +
                 " nodes need one: give the NIC (--nic) and check the file";
        return false;
    }
    if (n.nic_efficiency.value == 0)
        n.nic_efficiency = {1.0, Origin::Assumption, "line rate assumed"};
    c.nodes = options.nodes;
    c.network.nodes_per_rack = options.nodes_per_rack;
    c.network.spine_oversubscription = {options.spine_oversubscription, Origin::UserEntry,
                                        "spine oversubscription"};
    c.source = "imported from " + r->format;
    if (c.name.empty())
        c.name = std::to_string(r->gpus) + "x " + gpu->name + " (" + r->format + ")";
    for (std::string& problem : validateCluster(c, catalog)) {
        *error = "the imported topology is not usable: " + problem;
        return false;
    }
    return true;
}

// GPUs joined by NVLink everywhere with one count: an NVSwitch node.
void nvswitchOrMesh(const std::vector<std::vector<int>>& nv, const std::string& how,
                    TopologyImport* r)
{
    const int n = static_cast<int>(nv.size());
    std::set<int> counts;
    bool everyPair = n > 1;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            if (i == j)
                continue;
            if (nv[i][j] <= 0)
                everyPair = false;
            else
                counts.insert(nv[i][j]);
        }
    }
    NodeSpec& node = r->cluster.node;
    node.gpus = n;
    if (counts.empty()) {
        node.fabric = NodeFabric::PCIe;
        r->notes.push_back("no NVLink between GPUs: a PCIe node");
        return;
    }
    if (everyPair && counts.size() == 1 && n > 2) {
        const int links = *counts.begin();
        node.fabric = NodeFabric::NVSwitch;
        // The chip split is not in this format; the known systems' splits are used.
        if (links == 18)
            node.switch_links_per_gpu = {5, 5, 4, 4};
        else if (links == 12)
            node.switch_links_per_gpu = {2, 2, 2, 2, 2, 2};
        else
            node.switch_links_per_gpu = {links};
        node.nvswitch_id = links == 12 ? "nvswitch-gen2" : "nvswitch-gen3";
        node.in_switch_reduction = links != 12;
        r->notes.push_back(how + ": every GPU pair shows NV" + std::to_string(links) +
                           ", a switched fabric of " + std::to_string(links) +
                           " NVLinks per GPU (NVSwitch)");
        return;
    }
    node.fabric = NodeFabric::NVLinkMesh;
    node.nvlink_pairs.clear();
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
            if (nv[i][j] > 0)
                node.nvlink_pairs.push_back({i, j, nv[i][j]});
        }
    }
    r->notes.push_back(how + ": NVLink between " + std::to_string(node.nvlink_pairs.size()) +
                       " GPU pairs only, no switch: a mesh; the other pairs talk over PCIe");
}

} // namespace detail

namespace {

using detail::finishImport;
using detail::nvswitchOrMesh;

QString stripAnsi(QString text)
{
    static const QRegularExpression ansi("\x1B\\[[0-9;]*[A-Za-z]");
    return text.remove(ansi);
}

// The matrix of `nvidia-smi topo -m`: its header row, the GPU and NIC columns, and the cell of
// each GPU pair.
struct SmiMatrix
{
    int header = -1;
    std::vector<int> gpuColumn;
    std::vector<int> nicColumn;
    std::vector<std::vector<QString>> cell;
};

bool findSmiColumns(const QStringList& lines, SmiMatrix* m, std::string* error)
{
    for (int i = 0; i < lines.size(); ++i) {
        // The header's first cell is empty; the GPU0 row's is "GPU0".
        const QStringList cells = lines[i].split('\t');
        if (cells.size() > 1 && cells[0].trimmed().isEmpty() && cells[1].trimmed() == "GPU0") {
            m->header = i;
            break;
        }
    }
    if (m->header < 0) {
        *error = "not nvidia-smi topo -m output: no header row with GPU0";
        return false;
    }
    // Columns: tab-separated; a header cell per GPU, then NIC columns (NIC# or mlx5_#), then
    // the affinity columns.
    static const QRegularExpression gpuName("^GPU\\d+$");
    static const QRegularExpression nicName("^(NIC\\d+|mlx\\d+_\\d+|mlx5_\\d+)$");
    const QStringList head = lines[m->header].split('\t');
    for (int col = 0; col < head.size(); ++col) {
        const QString name = head[col].trimmed();
        if (gpuName.match(name).hasMatch())
            m->gpuColumn.push_back(col);
        else if (nicName.match(name).hasMatch())
            m->nicColumn.push_back(col);
    }
    if (m->gpuColumn.empty()) {
        *error = "no GPU columns in the header (is the output tab-separated?)";
        return false;
    }
    // Checked before the GPU x GPU matrix is allocated.
    if (m->gpuColumn.size() > kMaxNodeGpus || m->nicColumn.size() > kMaxNodeNics) {
        *error = "the header lists " + std::to_string(m->gpuColumn.size()) + " GPU and " +
                 std::to_string(m->nicColumn.size()) + " NIC columns; a node has at most " +
                 std::to_string(kMaxNodeGpus) + " GPUs and " + std::to_string(kMaxNodeNics) +
                 " NICs";
        return false;
    }
    return true;
}

bool readSmiRows(const QStringList& lines, SmiMatrix* m, std::string* error)
{
    const int gpus = static_cast<int>(m->gpuColumn.size());
    m->cell.assign(static_cast<size_t>(gpus), std::vector<QString>(static_cast<size_t>(gpus)));
    int rowsSeen = 0;
    for (int i = m->header + 1; i < lines.size(); ++i) {
        const QStringList cells = lines[i].split('\t');
        const QString name = cells.value(0).trimmed();
        const auto match = QRegularExpression("^GPU(\\d+)$").match(name);
        if (!match.hasMatch())
            continue;
        const int row = match.captured(1).toInt();
        if (row >= gpus) {
            *error = "row " + name.toStdString() + " has no column in the header";
            return false;
        }
        for (int g = 0; g < gpus; ++g) {
            const int col = m->gpuColumn[static_cast<size_t>(g)];
            if (col >= cells.size()) {
                *error = "row " + name.toStdString() + " is truncated: it stops before GPU" +
                         std::to_string(g);
                return false;
            }
            m->cell[static_cast<size_t>(row)][static_cast<size_t>(g)] = cells[col].trimmed();
        }
        ++rowsSeen;
    }
    if (rowsSeen != gpus) {
        *error = "the matrix has " + std::to_string(rowsSeen) + " GPU rows for " +
                 std::to_string(gpus) + " GPU columns (truncated output?)";
        return false;
    }
    return true;
}

// NV# cells: the NVLink count of each GPU pair.
bool smiNvlinkCounts(const SmiMatrix& m, std::vector<std::vector<int>>* nv, std::string* error)
{
    const int gpus = static_cast<int>(m.gpuColumn.size());
    nv->assign(static_cast<size_t>(gpus), std::vector<int>(static_cast<size_t>(gpus), 0));
    static const QRegularExpression nvCell("^NV(\\d+)$");
    static const QSet<QString> known = {"X", "PIX", "PXB", "PHB", "NODE", "SYS", "NV", "SOC"};
    for (int i = 0; i < gpus; ++i) {
        for (int j = 0; j < gpus; ++j) {
            const QString& value = m.cell[static_cast<size_t>(i)][static_cast<size_t>(j)];
            const auto match = nvCell.match(value);
            if (match.hasMatch()) {
                // Read wide: "NV999999999999" overflows an int, which QString reads as 0.
                const double links = match.captured(1).toDouble();
                if (auto problem = limits::check(limits::kLinksPerPair, links,
                                                 "the NVLink count of a GPU pair")) {
                    *error = "cell '" + value.toStdString() + "' at row GPU" + std::to_string(i) +
                             ", column GPU" + std::to_string(j) + ": " + *problem;
                    return false;
                }
                (*nv)[static_cast<size_t>(i)][static_cast<size_t>(j)] = static_cast<int>(links);
            } else if (!known.contains(value)) {
                *error = "unknown cell '" + value.toStdString() + "' at GPU" + std::to_string(i) +
                         "/GPU" + std::to_string(j) +
                         " (expected X, NV#, PIX, PXB, PHB, NODE or SYS)";
                return false;
            }
        }
    }
    return true;
}

// PCIe sharing: GPUs joined by PIX (one bridge) or PXB (several bridges, no host bridge)
// sit under one switch and share its uplink.
void smiPcieSharing(const SmiMatrix& m, TopologyImport* r)
{
    const int gpus = static_cast<int>(m.gpuColumn.size());
    NodeSpec& node = r->cluster.node;
    std::vector<int> group(static_cast<size_t>(gpus));
    std::iota(group.begin(), group.end(), 0);
    for (int i = 0; i < gpus; ++i) {
        for (int j = 0; j < gpus; ++j) {
            const QString& value = m.cell[static_cast<size_t>(i)][static_cast<size_t>(j)];
            if (value == "PIX" || value == "PXB") {
                const int a = group[static_cast<size_t>(i)];
                const int b = group[static_cast<size_t>(j)];
                for (int& g : group)
                    if (g == b)
                        g = a;
            }
        }
    }
    std::map<int, int> sizes;
    for (int g : group)
        ++sizes[g];
    int perSwitch = sizes.begin()->second;
    for (const auto& [id, size] : sizes)
        perSwitch = std::min(perSwitch, size);
    if (gpus % perSwitch != 0)
        perSwitch = 1;
    node.gpus_per_host_link = perSwitch;
    node.pcie_p2p = perSwitch > 1;
    if (node.fabric != NodeFabric::NVSwitch)
        r->notes.push_back("PCIe: " + std::to_string(perSwitch) +
                           " GPU(s) per PCIe switch (PIX/PXB between them), the rest through the "
                           "host bridges (PHB/NODE/SYS)");
}

// A switched fabric's link count tells the NVLink generation, not the exact part.
void smiGpuGuess(const NodeSpec& node, std::string* guess, std::string* why)
{
    if (node.fabric == NodeFabric::NVSwitch && node.nvlinkLinksPerGpu() == 18) {
        *guess = "h100-sxm5-80gb";
        *why = "NV18 on every pair: an H100 or H200 NVSwitch system, H100 SXM5 80GB assumed; "
               "give --gpu to choose";
    } else if (node.fabric == NodeFabric::NVSwitch && node.nvlinkLinksPerGpu() == 12) {
        *guess = "a100-sxm4-80gb";
        *why = "NV12 on every pair: an A100 NVSwitch system, the 80 GB part assumed; give --gpu "
               "to choose";
    }
}

} // namespace

bool importNvidiaSmiTopology(const std::string& text, const TopologyImportOptions& options,
                             TopologyImport* result, std::string* error,
                             const HardwareCatalog& catalog)
{
    TopologyImport r;
    r.format = "nvidia-smi topo -m";
    const QStringList lines = stripAnsi(QString::fromStdString(text)).split('\n');
    SmiMatrix matrix;
    if (!findSmiColumns(lines, &matrix, error) || !readSmiRows(lines, &matrix, error))
        return false;
    std::vector<std::vector<int>> nv;
    if (!smiNvlinkCounts(matrix, &nv, error))
        return false;
    r.gpus = static_cast<int>(matrix.gpuColumn.size());
    r.nics = static_cast<int>(matrix.nicColumn.size());
    nvswitchOrMesh(nv, "nvidia-smi topo -m", &r);
    smiPcieSharing(matrix, &r);
    r.notes.push_back(std::to_string(r.nics) + " NIC column(s)");
    std::string guess;
    std::string why;
    smiGpuGuess(r.cluster.node, &guess, &why);
    if (!finishImport(options, guess, why, 0, 0, r.nics, &r, error, catalog))
        return false;
    *result = std::move(r);
    return true;
}

bool importTopologyFile(const std::string& path, const TopologyImportOptions& options,
                        TopologyImport* result, std::string* error, const HardwareCatalog& catalog)
{
    std::string text;
    if (!json::readFile(path, &text, error))
        return false;
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) {
        *error = path + ": the file is empty";
        return false;
    }
    const bool ok = text[first] == '<'
                        ? importNcclTopologyXml(text, options, result, error, catalog)
                        : importNvidiaSmiTopology(text, options, result, error, catalog);
    if (!ok)
        *error = path + ": " + *error;
    return ok;
}

} // namespace paraplan
