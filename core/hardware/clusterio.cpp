#include "clusterio.h"

#include "hardware.h"
#include "inputlimits.h"
#include "jsonutil.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cmath>
#include <stdexcept>

namespace paraplan {
namespace {

bool isWholeNumber(const QJsonValue& value)
{
    return value.isDouble() && value.toDouble() == std::floor(value.toDouble()) &&
           std::fabs(value.toDouble()) <= 2e9;
}

// An array of `size` entries (any size when 0), each accepted by `entry`.
template <typename Test> bool isArrayOf(const QJsonValue& value, int size, Test entry)
{
    if (!value.isArray() || (size > 0 && value.toArray().size() != size))
        return false;
    for (const QJsonValue& item : value.toArray()) {
        if (!entry(item))
            return false;
    }
    return true;
}

QJsonObject bundledClusters()
{
    QFile file(QStringLiteral(":/paraplan/hardware/clusters.json"));
    if (!file.open(QIODevice::ReadOnly))
        throw std::runtime_error("bundled resource missing: clusters.json");
    QJsonObject root;
    std::string error;
    if (!json::parseDocument(file.readAll().toStdString(), &root, &error))
        throw std::runtime_error("clusters.json: " + error);
    return root;
}

QJsonObject presetEntry(const std::string& id)
{
    static const QJsonObject root = bundledClusters();
    for (const QJsonValue& value : root.value("clusters").toArray()) {
        const QJsonObject entry = value.toObject();
        if (entry.value("id").toString().toStdString() == id)
            return entry;
    }
    return {};
}

// Reads the fields present in `object` over `cluster`. Numbers read here carry `origin` and
// `label`, so a preset's figures say which preset and a file's say which file.
class ClusterParser
{
public:
    ClusterParser(const HardwareCatalog& catalog, Origin origin, std::string label,
                  std::vector<std::string>* errors);
    void apply(const QJsonObject& root, ClusterSpec* cluster);

private:
    QJsonObject object(const QJsonObject& parent, const char* key);
    Sourced fromLink(const InterconnectSpec& spec) const;
    // "nvlink": "nvlink4" picks a catalog link; "nvlink_GBps": 20 overrides its rate.
    void link(const QJsonObject& node, const char* key, const char* override_key,
              const std::string& path, std::string* id, Sourced* rate);
    // An efficiency is {"value": v, "source": "...", "origin": "assumption"} or a bare number.
    void fraction(const QJsonObject& node, const char* key, const std::string& path, Sourced* out);
    // A fraction that must lie in `range` when the file gives it (0 is not "unset").
    void efficiency(const QJsonObject& node, const char* key, const std::string& path,
                    const limits::Range& range, Sourced* out);
    void applyNode(const QJsonObject& node, NodeSpec* spec);
    void applyNetwork(const QJsonObject& network, NetworkSpec* spec, bool checkKeys = true);
    void applyTorus(const QJsonObject& torus, TorusSpec* spec);
    void applyWhatIf(const QJsonObject& whatIf, FailureWhatIf* spec);

    const HardwareCatalog& m_catalog;
    Origin m_origin;
    std::string m_label;
    json::Reader m_reader;
};

ClusterParser::ClusterParser(const HardwareCatalog& catalog, Origin origin, std::string label,
                             std::vector<std::string>* errors)
    : m_catalog(catalog), m_origin(origin), m_label(std::move(label)), m_reader(errors)
{
}

void ClusterParser::apply(const QJsonObject& root, ClusterSpec* cluster)
{
    m_reader.checkKeys(root, "",
                       {"id", "name", "gpu", "nodes", "node", "network", "torus", "what_if",
                        "source", "preset", "schema", "nodes_per_rack", "spine_oversubscription",
                        "nvlink_domain_gpus"});
    // A cluster file of a later format (or a plan given as a cluster) is refused, not half-read.
    std::string schema;
    if (m_reader.string(root, "schema", "", &schema) && schema != "paraplan-cluster/1")
        m_reader.error("schema", "'" + schema +
                                     "' is not a cluster format this version reads "
                                     "(paraplan-cluster/1)");
    // The preset the cluster started from, as the file says (a saved plan keeps it).
    std::string id;
    if (m_reader.string(root, "id", "", &id))
        cluster->preset = id;
    m_reader.string(root, "name", "", &cluster->name);
    m_reader.string(root, "source", "", &cluster->source);
    if (m_reader.string(root, "gpu", "", &cluster->gpu_id) && !m_catalog.gpu(cluster->gpu_id))
        m_reader.error("gpu", "unknown GPU '" + cluster->gpu_id + "'");
    m_reader.integer(root, "nodes", "", &cluster->nodes);
    m_reader.integer(root, "nvlink_domain_gpus", "", &cluster->nvlink_domain_gpus);
    if (root.contains("node"))
        applyNode(object(root, "node"), &cluster->node);
    if (root.contains("network"))
        applyNetwork(object(root, "network"), &cluster->network);
    // The preset knobs may also stand at the top level, beside "nodes".
    applyNetwork(root, &cluster->network, false);
    if (root.contains("torus")) {
        cluster->is_torus = true;
        applyTorus(object(root, "torus"), &cluster->torus);
    }
    if (root.contains("what_if"))
        applyWhatIf(object(root, "what_if"), &cluster->what_if);
}

QJsonObject ClusterParser::object(const QJsonObject& parent, const char* key)
{
    const QJsonValue value = parent.value(QLatin1String(key));
    if (!value.isObject()) {
        m_reader.error(key, "must be an object");
        return {};
    }
    return value.toObject();
}

Sourced ClusterParser::fromLink(const InterconnectSpec& spec) const
{
    return {spec.per_direction_GBps, spec.origin, spec.name + " (" + spec.source + ")"};
}

void ClusterParser::link(const QJsonObject& node, const char* key, const char* override_key,
                         const std::string& path, std::string* id, Sourced* rate)
{
    if (m_reader.string(node, key, path, id)) {
        const InterconnectSpec* spec = m_catalog.interconnect(*id);
        if (!spec)
            m_reader.error(json::join(path, key), "unknown interconnect '" + *id + "'");
        else
            *rate = fromLink(*spec);
    }
    // The rate: a bare number (this file's own entry), or {"value", "origin", "source"} as a
    // saved cluster writes a rate that is not the link's catalog figure.
    if (node.value(QLatin1String(override_key)).isObject()) {
        fraction(node, override_key, path, rate);
        if (!(rate->value > 0))
            m_reader.error(json::join(path, override_key), "must be a positive bandwidth");
        return;
    }
    double value = 0;
    if (m_reader.number(node, override_key, path, &value)) {
        if (!(value > 0))
            m_reader.error(json::join(path, override_key), "must be a positive bandwidth");
        *rate = {value, m_origin, m_label + ", " + override_key};
    }
}

void ClusterParser::fraction(const QJsonObject& node, const char* key, const std::string& path,
                             Sourced* out)
{
    const QJsonValue value = node.value(QLatin1String(key));
    if (value.isUndefined())
        return;
    const std::string where = json::join(path, key);
    if (value.isDouble()) {
        *out = {value.toDouble(), m_origin == Origin::Preset ? Origin::Preset : m_origin,
                m_label + ", " + key};
        return;
    }
    if (!value.isObject()) {
        m_reader.error(where, "must be a number or {\"value\", \"source\"}");
        return;
    }
    const QJsonObject entry = value.toObject();
    m_reader.checkKeys(entry, where, {"value", "source", "origin"});
    Sourced figure{0, m_origin, m_label};
    m_reader.number(entry, "value", where, &figure.value, true);
    m_reader.string(entry, "source", where, &figure.source);
    std::string origin;
    if (m_reader.string(entry, "origin", where, &origin)) {
        // As written: a preset's datasheet figure saved in a plan stays the preset's.
        if (origin == "assumption")
            figure.origin = Origin::Assumption;
        else if (origin == "measurement")
            figure.origin = Origin::Measurement;
        else if (origin == "preset")
            figure.origin = Origin::Preset;
        else if (origin == "user entry")
            figure.origin = Origin::UserEntry;
        else
            m_reader.error(json::join(where, "origin"), "unknown origin '" + origin + "'");
    }
    *out = figure;
}

void ClusterParser::efficiency(const QJsonObject& node, const char* key, const std::string& path,
                               const limits::Range& range, Sourced* out)
{
    const QJsonValue value = node.value(QLatin1String(key));
    if (value.isUndefined())
        return;
    fraction(node, key, path, out);
    const std::string field = json::join(path, key) + (value.isObject() ? ".value" : "");
    if (!value.isDouble() && !value.isObject())
        return; // fraction() said what is wrong
    if (value.isObject() && !value.toObject().value("value").isDouble())
        return;
    if (auto problem = limits::check(range, out->value, field.c_str()))
        m_reader.error("", *problem + ": the share of the line rate the link achieves, at least " +
                               "1%");
}

void ClusterParser::applyNode(const QJsonObject& node, NodeSpec* spec)
{
    const std::string path = "node";
    m_reader.checkKeys(node, path,
                       {"gpus",
                        "fabric",
                        "nvlink",
                        "nvlink_GBps",
                        "nvswitch",
                        "switch_links_per_gpu",
                        "nvlink_pairs",
                        "pcie",
                        "pcie_GBps",
                        "host_link",
                        "host_link_GBps",
                        "gpus_per_host_link",
                        "pcie_p2p",
                        "nic",
                        "nic_GBps",
                        "nics",
                        "nics_origin",
                        "nvlink_ring_efficiency",
                        "nvls_efficiency",
                        "pcie_efficiency",
                        "nic_efficiency"});
    m_reader.integer(node, "gpus", path, &spec->gpus);
    m_reader.choice(node, "fabric", path, "fabric",
                    {{"nvswitch", NodeFabric::NVSwitch},
                     {"nvlink-mesh", NodeFabric::NVLinkMesh},
                     {"pcie", NodeFabric::PCIe}},
                    &spec->fabric);
    link(node, "nvlink", "nvlink_GBps", path, &spec->nvlink_id, &spec->nvlink_link_GBps);
    if (m_reader.string(node, "nvswitch", path, &spec->nvswitch_id)) {
        const InterconnectSpec* nvswitch = m_catalog.interconnect(spec->nvswitch_id);
        if (!nvswitch || nvswitch->kind != LinkKind::NVSwitch)
            m_reader.error("node.nvswitch", "unknown NVSwitch '" + spec->nvswitch_id + "'");
        else
            spec->in_switch_reduction = nvswitch->in_switch_reduction;
    }
    if (node.contains("switch_links_per_gpu")) {
        spec->switch_links_per_gpu.clear();
        const QJsonValue value = node.value("switch_links_per_gpu");
        for (const QJsonValue& links : value.toArray()) {
            if (!links.isDouble() || links.toDouble() != links.toInt() || links.toInt() < 1 ||
                links.toInt() > limits::kLinksPerChip.max)
                m_reader.error("node.switch_links_per_gpu",
                               "each entry must be a whole number of links from 1 to 64");
            else
                spec->switch_links_per_gpu.push_back(links.toInt());
        }
        if (!value.isArray())
            m_reader.error("node.switch_links_per_gpu", "must be an array of link counts");
    }
    if (node.contains("nvlink_pairs")) {
        spec->nvlink_pairs.clear();
        if (!node.value("nvlink_pairs").isArray())
            m_reader.error("node.nvlink_pairs", "must be an array of pairs");
        for (const QJsonValue& value : node.value("nvlink_pairs").toArray()) {
            const QJsonObject pair = value.toObject();
            const QJsonArray gpus = pair.value("gpus").toArray();
            if (!isArrayOf(pair.value("gpus"), 2, isWholeNumber) ||
                !isWholeNumber(pair.value("links"))) {
                m_reader.error("node.nvlink_pairs",
                               "each pair is {\"gpus\": [a, b], \"links\": n}");
                continue;
            }
            spec->nvlink_pairs.push_back(
                {gpus.at(0).toInt(-1), gpus.at(1).toInt(-1), pair.value("links").toInt()});
        }
    }
    link(node, "pcie", "pcie_GBps", path, &spec->pcie_id, &spec->pcie_GBps);
    if (!spec->pcie_id.empty() && node.contains("pcie")) {
        if (const InterconnectSpec* pcie = m_catalog.interconnect(spec->pcie_id)) {
            if (pcie->achievable_fraction > 0)
                spec->pcie_efficiency = {pcie->achievable_fraction, pcie->achievable_origin,
                                         pcie->achievable_source};
        }
    }
    link(node, "host_link", "host_link_GBps", path, &spec->host_link_id, &spec->host_link_GBps);
    m_reader.integer(node, "gpus_per_host_link", path, &spec->gpus_per_host_link);
    m_reader.boolean(node, "pcie_p2p", path, &spec->pcie_p2p);
    link(node, "nic", "nic_GBps", path, &spec->nic_id, &spec->nic_GBps);
    if (!spec->nic_id.empty() && node.contains("nic")) {
        if (const InterconnectSpec* nic = m_catalog.interconnect(spec->nic_id)) {
            if (nic->achievable_fraction > 0)
                spec->nic_efficiency = {nic->achievable_fraction, nic->achievable_origin,
                                        nic->achievable_source};
        }
    }
    if (m_reader.integer(node, "nics", path, &spec->nics))
        spec->nics_count_source = {static_cast<double>(spec->nics), m_origin, m_label};
    std::string nicsOrigin;
    if (m_reader.string(node, "nics_origin", path, &nicsOrigin))
        spec->nics_count_source = {static_cast<double>(spec->nics), Origin::Assumption, nicsOrigin};
    efficiency(node, "nvlink_ring_efficiency", path, kEfficiency, &spec->nvlink_ring_efficiency);
    efficiency(node, "nvls_efficiency", path, kEfficiency, &spec->nvls_efficiency);
    efficiency(node, "pcie_efficiency", path, kEfficiency, &spec->pcie_efficiency);
    efficiency(node, "nic_efficiency", path, kEfficiency, &spec->nic_efficiency);
}

void ClusterParser::applyNetwork(const QJsonObject& network, NetworkSpec* spec, bool checkKeys)
{
    if (checkKeys)
        m_reader.checkKeys(network, "network",
                           {"nodes_per_rack", "spine_oversubscription", "sharp"});
    // The rack size of the preset's own source (a plan's knob beside "nodes" overrides it).
    if (m_reader.integer(network, "nodes_per_rack", "network", &spec->nodes_per_rack) &&
        checkKeys && m_origin == Origin::Preset)
        spec->source_nodes_per_rack = spec->nodes_per_rack;
    // A bare ratio (cluster files) or {"value", "source"} (the presets say where it comes from).
    fraction(network, "spine_oversubscription", "network", &spec->spine_oversubscription);
    m_reader.boolean(network, "sharp", "network", &spec->sharp);
}

void ClusterParser::applyTorus(const QJsonObject& torus, TorusSpec* spec)
{
    const std::string path = "torus";
    m_reader.checkKeys(torus, path,
                       {"dims", "wrap", "ici", "link_GBps", "hop_latency_us", "efficiency"});
    const QJsonValue dims = torus.value("dims");
    if (dims.isString() && dims.toString() == "auto") {
        spec->dims_auto = true;
    } else if (isArrayOf(dims, 3, isWholeNumber)) {
        spec->dims_auto = false;
        for (int axis = 0; axis < 3; ++axis)
            spec->dims[axis] = dims.toArray().at(axis).toInt(0);
    } else if (!dims.isUndefined()) {
        m_reader.error("torus.dims", "must be \"auto\" or [x, y, z]");
    }
    const QJsonValue wrap = torus.value("wrap");
    if (wrap.isString() && wrap.toString() == "auto") {
        spec->wrap_auto = true;
    } else if (isArrayOf(wrap, 3, [](const QJsonValue& v) { return v.isBool(); })) {
        spec->wrap_auto = false;
        for (int axis = 0; axis < 3; ++axis)
            spec->wrap[axis] = wrap.toArray().at(axis).toBool();
    } else if (!wrap.isUndefined()) {
        m_reader.error("torus.wrap", "must be \"auto\" or [bool, bool, bool]");
    }
    link(torus, "ici", "link_GBps", path, &spec->ici_id, &spec->link_GBps);
    fraction(torus, "hop_latency_us", path, &spec->hop_latency_us);
    efficiency(torus, "efficiency", path, kTorusEfficiency, &spec->efficiency);
}

void ClusterParser::applyWhatIf(const QJsonObject& whatIf, FailureWhatIf* spec)
{
    m_reader.checkKeys(whatIf, "what_if",
                       {"nvswitch_chips_out", "nvlink_factor", "pcie_factor", "nic_factor",
                        "spine_factor", "ici_factor"});
    if (whatIf.contains("nvswitch_chips_out")) {
        spec->nvswitch_chips_out.clear();
        if (!isArrayOf(whatIf.value("nvswitch_chips_out"), 0, isWholeNumber))
            m_reader.error("what_if.nvswitch_chips_out", "must be an array of chip indices");
        for (const QJsonValue& chip : whatIf.value("nvswitch_chips_out").toArray())
            spec->nvswitch_chips_out.push_back(chip.toInt(-1));
    }
    m_reader.number(whatIf, "nvlink_factor", "what_if", &spec->nvlink_factor);
    m_reader.number(whatIf, "pcie_factor", "what_if", &spec->pcie_factor);
    m_reader.number(whatIf, "nic_factor", "what_if", &spec->nic_factor);
    m_reader.number(whatIf, "spine_factor", "what_if", &spec->spine_factor);
    m_reader.number(whatIf, "ici_factor", "what_if", &spec->ici_factor);
}

// Fills the figures the file did not state with documented defaults.
void fillDefaults(ClusterSpec* cluster)
{
    const Sourced lineRate{1.0, Origin::Assumption,
                           "no achievable fraction known for this link: line rate assumed"};
    NodeSpec& node = cluster->node;
    for (Sourced* fraction : {&node.nvlink_ring_efficiency, &node.nvls_efficiency,
                              &node.pcie_efficiency, &node.nic_efficiency}) {
        if (fraction->value == 0)
            *fraction = lineRate;
    }
    if (cluster->is_torus) {
        if (cluster->torus.efficiency.value == 0)
            cluster->torus.efficiency = lineRate;
    }
}

void applyOptions(const ClusterOptions& options, ClusterSpec* cluster)
{
    if (options.nodes)
        cluster->nodes = *options.nodes;
    if (options.nodes_per_rack)
        cluster->network.nodes_per_rack = *options.nodes_per_rack;
    if (options.spine_oversubscription)
        cluster->network.spine_oversubscription = {*options.spine_oversubscription,
                                                   Origin::UserEntry, "spine oversubscription"};
}

bool finish(const ClusterOptions& options, ClusterSpec* cluster, std::vector<std::string>* errors,
            const HardwareCatalog& catalog)
{
    applyOptions(options, cluster);
    fillDefaults(cluster);
    std::string error;
    if (!finalizeCluster(cluster, &error)) {
        errors->push_back(error);
        return false;
    }
    for (std::string& problem : validateCluster(*cluster, catalog))
        errors->push_back(std::move(problem));
    return errors->empty();
}

bool presetInto(const std::string& id, ClusterSpec* cluster, std::vector<std::string>* errors,
                const HardwareCatalog& catalog)
{
    const QJsonObject entry = presetEntry(id);
    if (entry.isEmpty()) {
        std::string known;
        for (const ClusterPresetInfo& info : clusterPresets())
            known += (known.empty() ? "" : ", ") + info.id;
        errors->push_back("unknown cluster preset '" + id + "' (known: " + known + ")");
        return false;
    }
    ClusterParser parser(catalog, Origin::Preset, "preset " + id, errors);
    parser.apply(entry, cluster);
    return errors->empty();
}

} // namespace

std::vector<ClusterPresetInfo> clusterPresets()
{
    std::vector<ClusterPresetInfo> presets;
    for (const QJsonValue& value : bundledClusters().value("clusters").toArray()) {
        const QJsonObject entry = value.toObject();
        presets.push_back({entry.value("id").toString().toStdString(),
                           entry.value("name").toString().toStdString(),
                           entry.value("source").toString().toStdString(),
                           entry.value("nodes").toInt(1)});
    }
    return presets;
}

bool clusterFromPreset(const std::string& id, const ClusterOptions& options, ClusterSpec* cluster,
                       std::string* error, const HardwareCatalog& catalog)
{
    std::vector<std::string> errors;
    ClusterSpec spec;
    if (!presetInto(id, &spec, &errors, catalog) || !finish(options, &spec, &errors, catalog)) {
        *error = errors.front();
        return false;
    }
    *cluster = std::move(spec);
    return true;
}

bool clusterFromJsonText(const std::string& text, const std::string& label,
                         const ClusterOptions& options, ClusterSpec* cluster,
                         std::vector<std::string>* errors, const HardwareCatalog& catalog)
{
    QJsonObject root;
    std::string error;
    if (!json::parseDocument(text, &root, &error)) {
        errors->push_back(error);
        return false;
    }
    ClusterSpec spec;
    std::string preset;
    const QJsonValue presetValue = root.value("preset");
    if (!presetValue.isUndefined()) {
        if (!presetValue.isString() ||
            !presetInto(presetValue.toString().toStdString(), &spec, errors, catalog))
            return errors->empty() ? (errors->push_back("preset: must be a preset id"), false)
                                   : false;
    } else if (!root.contains("gpu")) {
        errors->push_back("a cluster needs either \"preset\" or \"gpu\" with \"node\" or "
                          "\"torus\"");
        return false;
    }
    ClusterParser parser(catalog, Origin::UserEntry, label, errors);
    parser.apply(root, &spec);
    if (!errors->empty())
        return false;
    if (!finish(options, &spec, errors, catalog))
        return false;
    *cluster = std::move(spec);
    return true;
}

bool loadCluster(const std::string& preset_or_file, const ClusterOptions& options,
                 ClusterSpec* cluster, std::string* error, const HardwareCatalog& catalog)
{
    if (!presetEntry(preset_or_file).isEmpty())
        return clusterFromPreset(preset_or_file, options, cluster, error, catalog);
    if (!QFileInfo::exists(QString::fromStdString(preset_or_file))) {
        std::string known;
        for (const ClusterPresetInfo& info : clusterPresets())
            known += (known.empty() ? "" : ", ") + info.id;
        *error = "'" + preset_or_file + "' is neither a cluster preset (" + known +
                 ") nor an existing file";
        return false;
    }
    std::string text;
    if (!json::readFile(preset_or_file, &text, error))
        return false;
    std::vector<std::string> errors;
    if (!clusterFromJsonText(text, "cluster file " + preset_or_file, options, cluster, &errors,
                             catalog)) {
        *error = preset_or_file + ": " + errors.front();
        if (errors.size() > 1)
            *error += " (and " + std::to_string(errors.size() - 1) + " more problems)";
        return false;
    }
    return true;
}

namespace {

QJsonObject sourcedJson(const Sourced& figure)
{
    QJsonObject object;
    object["value"] = figure.value;
    object["origin"] = QString::fromLatin1(originName(figure.origin));
    object["source"] = QString::fromStdString(figure.source);
    return object;
}

} // namespace

std::string clusterToJsonText(const ClusterSpec& cluster)
{
    QJsonObject root;
    root["schema"] = "paraplan-cluster/1";
    if (!cluster.preset.empty())
        root["id"] = QString::fromStdString(cluster.preset);
    root["name"] = QString::fromStdString(cluster.name);
    root["gpu"] = QString::fromStdString(cluster.gpu_id);
    root["nodes"] = cluster.nodes;
    if (cluster.nvlink_domain_gpus != 0)
        root["nvlink_domain_gpus"] = cluster.nvlink_domain_gpus;
    root["source"] = QString::fromStdString(cluster.source);
    if (cluster.is_torus) {
        const TorusSpec& t = cluster.torus;
        QJsonObject torus;
        torus["dims"] = QJsonArray{t.dims[0], t.dims[1], t.dims[2]};
        torus["wrap"] = QJsonArray{t.wrap[0], t.wrap[1], t.wrap[2]};
        if (!t.ici_id.empty())
            torus["ici"] = QString::fromStdString(t.ici_id);
        torus["link_GBps"] = t.link_GBps.value;
        torus["hop_latency_us"] = sourcedJson(t.hop_latency_us);
        torus["efficiency"] = sourcedJson(t.efficiency);
        root["torus"] = torus;
    } else {
        const NodeSpec& n = cluster.node;
        QJsonObject node;
        node["gpus"] = n.gpus;
        node["fabric"] = QString::fromLatin1(nodeFabricName(n.fabric));
        auto putLink = [&](const char* key, const char* rateKey, const std::string& id,
                           const Sourced& rate) {
            if (!id.empty())
                node[key] = QString::fromStdString(id);
            // The link's catalog figure is the id's to give (its origin and source with it);
            // any other rate is written with its own.
            const InterconnectSpec* link =
                id.empty() ? nullptr : HardwareCatalog::bundled().interconnect(id);
            const bool fromLink = link && rate.value == link->per_direction_GBps &&
                                  rate.origin == link->origin &&
                                  rate.source == link->name + " (" + link->source + ")";
            if (rate.value > 0 && !fromLink)
                node[rateKey] = rate.origin == Origin::UserEntry ? QJsonValue(rate.value)
                                                                 : QJsonValue(sourcedJson(rate));
        };
        putLink("nvlink", "nvlink_GBps", n.nvlink_id, n.nvlink_link_GBps);
        if (!n.nvswitch_id.empty())
            node["nvswitch"] = QString::fromStdString(n.nvswitch_id);
        if (!n.switch_links_per_gpu.empty()) {
            QJsonArray links;
            for (int chip : n.switch_links_per_gpu)
                links.append(chip);
            node["switch_links_per_gpu"] = links;
        }
        if (!n.nvlink_pairs.empty()) {
            QJsonArray pairs;
            for (const NVLinkPair& pair : n.nvlink_pairs)
                pairs.append(QJsonObject{{"gpus", QJsonArray{pair.gpu_a, pair.gpu_b}},
                                         {"links", pair.links}});
            node["nvlink_pairs"] = pairs;
        }
        putLink("pcie", "pcie_GBps", n.pcie_id, n.pcie_GBps);
        putLink("host_link", "host_link_GBps", n.host_link_id, n.host_link_GBps);
        node["gpus_per_host_link"] = n.gpus_per_host_link;
        node["pcie_p2p"] = n.pcie_p2p;
        putLink("nic", "nic_GBps", n.nic_id, n.nic_GBps);
        node["nics"] = n.nics;
        node["nvlink_ring_efficiency"] = sourcedJson(n.nvlink_ring_efficiency);
        node["nvls_efficiency"] = sourcedJson(n.nvls_efficiency);
        node["pcie_efficiency"] = sourcedJson(n.pcie_efficiency);
        node["nic_efficiency"] = sourcedJson(n.nic_efficiency);
        root["node"] = node;
        root["network"] =
            QJsonObject{{"nodes_per_rack", cluster.network.nodes_per_rack},
                        {"spine_oversubscription", cluster.network.spine_oversubscription.value},
                        {"sharp", cluster.network.sharp}};
    }
    if (cluster.what_if.any()) {
        const FailureWhatIf& w = cluster.what_if;
        QJsonArray chips;
        for (int chip : w.nvswitch_chips_out)
            chips.append(chip);
        root["what_if"] =
            QJsonObject{{"nvswitch_chips_out", chips},    {"nvlink_factor", w.nvlink_factor},
                        {"pcie_factor", w.pcie_factor},   {"nic_factor", w.nic_factor},
                        {"spine_factor", w.spine_factor}, {"ici_factor", w.ici_factor}};
    }
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

bool saveClusterFile(const std::string& path, const ClusterSpec& cluster, std::string* error)
{
    return json::writeFileAtomically(path, clusterToJsonText(cluster), error);
}

} // namespace paraplan
