// NCCL topology dumps (NCCL_TOPO_DUMP_FILE), as NCCL writes them (github.com/NVIDIA/nccl,
// src/graph/xml.cc and topo.cc): system, cpu, pci (busid, class, link_speed), gpu (sm), nvlink
// (target, count, tclass), nic and net (speed in Mb/s).
#include "topologyimport.h"
#include "topologyimportdetail.h"

#include "inputlimits.h"

#include <QRegularExpression>
#include <QString>
#include <QXmlStreamReader>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

namespace paraplan {
namespace {

using detail::finishImport;
using detail::kMaxNodeGpus;
using detail::kMaxNodeNics;
using detail::nvswitchOrMesh;

// What an NCCL topology XML says, as read.
struct NcclPci
{
    QString busid;
    QString cls;
    double speedGTs = 0; ///< link_speed, 0 unknown
    bool hasGpu = false;
    bool hasNic = false;
    QString parentSwitch;
};

struct NcclGpu
{
    QString busid;
    int sm = 0;
    QString parentSwitch;
    std::vector<std::tuple<QString, int, QString>> nvlinks; // target, count, tclass
};

struct NcclTopology
{
    std::vector<NcclPci> stack;
    std::vector<NcclGpu> gpus;
    std::vector<double> netGBps;
    int bareGpus = 0;
    int bareNics = 0;
    int pcieGeneration = 0;
    bool sawSystem = false;
};

QString lowerHex(QString value)
{
    return value.trimmed().toLower();
}

// The ranges of the attributes read: NVLinks per pair as in cluster files, a compute
// capability x 10 (sm="90" for 9.0), a PCIe link rate up to 256 GT/s (PCIe 7.0 runs at 128
// GT/s, PCI-SIG), a NIC up to limits::kLinkGBps (in NCCL's Mb/s).
constexpr limits::Range kNvlinkCount{"count", 1, limits::kLinksPerPair.max, "links"};
constexpr limits::Range kSm{"sm", 10, 999, ""};
constexpr limits::Range kLinkSpeed{"link_speed", 0, 256, "GT/s", true, false};
constexpr limits::Range kNetSpeed{"speed", 0, limits::kLinkGBps.max * 8000, "Mb/s", true, false};

// The attribute `name` as a number within `range`; an absent attribute reads as `absent`.
// False with the message, naming the element and its line, when it is present and outside.
bool attribute(const QXmlStreamReader& xml, const char* name, const limits::Range& range,
               double absent, double* value, std::string* error)
{
    const QString text = xml.attributes().value(QLatin1String(name)).toString().trimmed();
    if (!xml.attributes().hasAttribute(QLatin1String(name))) {
        *value = absent;
        return true;
    }
    bool ok = false;
    *value = text.toDouble(&ok);
    if (!ok)
        *value = std::nan("");
    if (auto problem = limits::check(range, *value)) {
        *error = "<" + xml.name().toString().toStdString() + "> at line " +
                 std::to_string(xml.lineNumber()) + ": " + *problem +
                 (ok ? "" : " ('" + text.left(40).toStdString() + "')");
        return false;
    }
    return true;
}

// A pci link_speed, "32.0 GT/s PCIe": its leading number, 0 when it has none ("Unknown").
bool linkSpeed(const QXmlStreamReader& xml, double* gts, std::string* error)
{
    static const QRegularExpression leading("^\\s*([-+0-9.eE]+)");
    const QString text = xml.attributes().value("link_speed").toString();
    const auto match = leading.match(text);
    *gts = 0;
    if (!match.hasMatch())
        return true;
    bool ok = false;
    const double value = match.captured(1).toDouble(&ok);
    if (auto problem = limits::check(kLinkSpeed, ok ? value : std::nan(""))) {
        *error = "<pci> at line " + std::to_string(xml.lineNumber()) + ": " + *problem + " ('" +
                 text.left(40).toStdString() + "')";
        return false;
    }
    *gts = value;
    return true;
}

bool readNcclGpu(const QXmlStreamReader& xml, NcclTopology* t, std::string* error)
{
    if (t->stack.empty()) {
        *error =
            "a <gpu> outside any <pci> element (line " + std::to_string(xml.lineNumber()) + ")";
        return false;
    }
    if (t->gpus.size() + static_cast<size_t>(t->bareGpus) >= kMaxNodeGpus) {
        *error = "more than " + std::to_string(kMaxNodeGpus) +
                 " GPUs in one node's topology (line " + std::to_string(xml.lineNumber()) + ")";
        return false;
    }
    t->stack.back().hasGpu = true;
    NcclGpu gpu;
    gpu.busid = t->stack.back().busid;
    gpu.parentSwitch = t->stack.back().parentSwitch;
    double sm = 0;
    if (!attribute(xml, "sm", kSm, 0, &sm, error))
        return false;
    gpu.sm = static_cast<int>(sm);
    if (const double speed = t->stack.back().speedGTs; speed >= 32)
        t->pcieGeneration = std::max(t->pcieGeneration, 5);
    else if (speed >= 16)
        t->pcieGeneration = std::max(t->pcieGeneration, 4);
    else if (speed >= 8)
        t->pcieGeneration = std::max(t->pcieGeneration, 3);
    t->gpus.push_back(gpu);
    return true;
}

bool readNcclStartElement(const QXmlStreamReader& xml, NcclTopology* t, std::string* error)
{
    const QString name = xml.name().toString();
    const QXmlStreamAttributes a = xml.attributes();
    if (name == "system")
        t->sawSystem = true;
    else if (name == "pci") {
        NcclPci pci;
        pci.busid = lowerHex(a.value("busid").toString());
        pci.cls = lowerHex(a.value("class").toString());
        if (!linkSpeed(xml, &pci.speedGTs, error))
            return false;
        if (!t->stack.empty())
            pci.parentSwitch = t->stack.back().cls == "0x060400" ? t->stack.back().busid
                                                                 : t->stack.back().parentSwitch;
        if (t->stack.size() >= 64) {
            *error = "<pci> elements nested more than 64 deep (line " +
                     std::to_string(xml.lineNumber()) + ")";
            return false;
        }
        t->stack.push_back(pci);
    } else if (name == "gpu") {
        return readNcclGpu(xml, t, error);
    } else if (name == "nvlink") {
        if (t->gpus.empty() || t->stack.empty() || !t->stack.back().hasGpu) {
            *error = "an <nvlink> outside a <gpu> element (line " +
                     std::to_string(xml.lineNumber()) + ")";
            return false;
        }
        if (t->gpus.back().nvlinks.size() >= 64) {
            *error = "more than 64 <nvlink> elements on one GPU (line " +
                     std::to_string(xml.lineNumber()) + ")";
            return false;
        }
        double count = 0;
        if (!attribute(xml, "count", kNvlinkCount, 0, &count, error))
            return false;
        t->gpus.back().nvlinks.emplace_back(lowerHex(a.value("target").toString()),
                                            static_cast<int>(count),
                                            lowerHex(a.value("tclass").toString()));
    } else if (name == "nic") {
        if (!t->stack.empty())
            t->stack.back().hasNic = true;
    } else if (name == "net") {
        if (t->netGBps.size() >= kMaxNodeNics) {
            *error = "more than " + std::to_string(kMaxNodeNics) + " <net> devices in one node";
            return false;
        }
        double speed = 0; // Mb/s; a <net> without one is not counted, as before
        if (!attribute(xml, "speed", kNetSpeed, 0, &speed, error))
            return false;
        if (speed > 0)
            t->netGBps.push_back(speed / 8000.0); // Mb/s -> GB/s
    }
    return true;
}

bool readNcclXml(const std::string& text, NcclTopology* t, std::string* error)
{
    QXmlStreamReader xml(QString::fromStdString(text));
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            if (!readNcclStartElement(xml, t, error))
                return false;
        } else if (xml.isEndElement() && xml.name() == QLatin1String("pci")) {
            if (!t->stack.empty()) {
                const NcclPci& pci = t->stack.back();
                // Cloud dumps leave GPUs (3D controllers) and NICs as bare pci leaves.
                if (!pci.hasGpu && (pci.cls == "0x030200" || pci.cls == "0x030000"))
                    ++t->bareGpus;
                if (!pci.hasNic && (pci.cls == "0x020000" || pci.cls == "0x020700"))
                    ++t->bareNics;
                if (t->gpus.size() + static_cast<size_t>(t->bareGpus) > kMaxNodeGpus ||
                    t->netGBps.size() + static_cast<size_t>(t->bareNics) > kMaxNodeNics) {
                    *error = "more than " + std::to_string(kMaxNodeGpus) + " GPUs or " +
                             std::to_string(kMaxNodeNics) + " NICs in one node's topology (line " +
                             std::to_string(xml.lineNumber()) + ")";
                    return false;
                }
                t->stack.pop_back();
            }
        }
    }
    if (xml.hasError()) {
        *error = "malformed XML at line " + std::to_string(xml.lineNumber()) + ": " +
                 xml.errorString().toStdString();
        return false;
    }
    if (!t->sawSystem) {
        *error = "not an NCCL topology file: no <system> element";
        return false;
    }
    if (t->gpus.empty() && t->bareGpus == 0) {
        *error = "the topology lists no GPU";
        return false;
    }
    return true;
}

// NVLinks: to NVSwitch targets (a switched fabric) or to other GPUs (a mesh).
void ncclNvlinks(const NcclTopology& t, int count, TopologyImport* r)
{
    const std::vector<NcclGpu>& gpus = t.gpus;
    std::map<QString, int> gpuIndex;
    for (size_t i = 0; i < gpus.size(); ++i)
        gpuIndex[gpus[i].busid] = static_cast<int>(i);
    std::vector<std::vector<int>> nv(static_cast<size_t>(count),
                                     std::vector<int>(static_cast<size_t>(count), 0));
    std::map<QString, int> switchLinks; // NVSwitch target -> links from GPU 0
    bool switched = false;
    for (size_t i = 0; i < gpus.size(); ++i) {
        for (const auto& [target, links, tclass] : gpus[i].nvlinks) {
            if (tclass == "0x068000") {
                switched = true;
                if (i == 0)
                    switchLinks[target] += links;
            } else if (tclass == "0x030200" && gpuIndex.count(target)) {
                nv[i][static_cast<size_t>(gpuIndex[target])] += links;
            }
        }
    }
    NodeSpec& node = r->cluster.node;
    node.gpus = count;
    if (!switched) {
        nvswitchOrMesh(nv, "NCCL topology", r);
        return;
    }
    node.fabric = NodeFabric::NVSwitch;
    node.switch_links_per_gpu.clear();
    std::string split;
    for (const auto& [target, links] : switchLinks) {
        node.switch_links_per_gpu.push_back(links);
        split += (split.empty() ? "" : "+") + std::to_string(links);
    }
    const int total =
        std::accumulate(node.switch_links_per_gpu.begin(), node.switch_links_per_gpu.end(), 0);
    node.nvswitch_id = switchLinks.size() == 6   ? "nvswitch-gen2"
                       : switchLinks.size() == 2 ? "nvswitch-gen4"
                                                 : "nvswitch-gen3";
    node.in_switch_reduction = node.nvswitch_id != "nvswitch-gen2";
    r->notes.push_back("NCCL topology: each GPU has NVLinks to " +
                       std::to_string(switchLinks.size()) + " NVSwitch targets (" + split + " = " +
                       std::to_string(total) + " links)");
}

// PCIe sharing: GPUs under the same PCIe switch.
void ncclPcieSharing(const NcclTopology& t, int count, NodeSpec* node)
{
    std::map<QString, int> perSwitch;
    for (const NcclGpu& gpu : t.gpus)
        ++perSwitch[gpu.parentSwitch];
    int shared = t.gpus.empty() ? 1 : perSwitch.begin()->second;
    for (const auto& [id, size] : perSwitch)
        shared = std::min(shared, size);
    if (shared < 1 || count % shared != 0)
        shared = 1;
    node->gpus_per_host_link = shared;
    node->pcie_p2p = shared > 1;
}

// The GPU from its compute capability.
void ncclGpuGuess(const NcclTopology& t, std::string* guess, std::string* why)
{
    int sm = 0;
    for (const NcclGpu& gpu : t.gpus)
        sm = std::max(sm, gpu.sm);
    if (sm >= 100) {
        *guess = "b200-hgx";
        *why = "sm " + std::to_string(sm) + ": Blackwell";
    } else if (sm >= 90) {
        *guess = "h100-sxm5-80gb";
        *why = "sm 90: H100 or H200, H100 SXM5 80GB assumed; give --gpu h200-sxm-141gb for H200";
    } else if (sm >= 80) {
        *guess = "a100-sxm4-80gb";
        *why = "sm 80: A100, the 80 GB SXM part assumed; give --gpu for another";
    }
}

} // namespace

bool importNcclTopologyXml(const std::string& text, const TopologyImportOptions& options,
                           TopologyImport* result, std::string* error,
                           const HardwareCatalog& catalog)
{
    TopologyImport r;
    r.format = "NCCL topology XML";
    NcclTopology t;
    if (!readNcclXml(text, &t, error))
        return false;
    // Bare GPU leaves carry no NVLink information: they are PCIe-connected as far as we know.
    const int count = static_cast<int>(t.gpus.size()) + t.bareGpus;
    r.gpus = count;
    ncclNvlinks(t, count, &r);
    if (t.bareGpus > 0)
        r.notes.push_back(std::to_string(t.bareGpus) +
                          " GPU(s) appear only as bare PCI devices (a partial cloud dump): no "
                          "NVLink is assumed for them");
    ncclPcieSharing(t, count, &r.cluster.node);
    r.nics = static_cast<int>(t.netGBps.size()) + t.bareNics;
    const double nicGBps =
        t.netGBps.empty() ? 0 : *std::max_element(t.netGBps.begin(), t.netGBps.end());
    std::string guess;
    std::string why;
    ncclGpuGuess(t, &guess, &why);
    if (!finishImport(options, guess, why, t.pcieGeneration, nicGBps, r.nics, &r, error, catalog))
        return false;
    *result = std::move(r);
    return true;
}

} // namespace paraplan
