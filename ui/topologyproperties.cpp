// The topology editor's property panel: the selected node, the selected rack, or the
// cluster as a whole (its spine and the node type every node shares).

#include "topologyeditor.h"

#include "hardware.h"
#include "summary.h"
#include "topologyitems.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGraphicsScene>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>

#include <algorithm>
#include <cmath>

namespace paraplan::ui {
namespace {

// A 1-100 % field for a derating factor; `apply` gets the new percentage.
QSpinBox* percentBox(double value, QObject* context, const std::function<void(int)>& apply)
{
    auto* box = new QSpinBox;
    box->setRange(1, 100);
    box->setSuffix(" %");
    box->setValue(static_cast<int>(std::lround(value * 100)));
    box->setKeyboardTracking(false);
    QObject::connect(box, &QSpinBox::valueChanged, context, apply);
    return box;
}

} // namespace

void TopologyEditor::updateProperties()
{
    if (m_rebuilding)
        return;
    clearProperties();
    const TopologyGraph& g = m_document->graph();
    const QList<int> nodes = selectedNodeIds();
    int rackId = -1;
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (auto* rack = dynamic_cast<RackItem*>(item))
            rackId = rack->id();
    }
    if (nodes.size() == 1)
        showNodeProperties(*g.node(nodes.front()));
    else if (rackId >= 0 && g.rack(rackId))
        showRackProperties(*g.rack(rackId));
    else
        showClusterProperties(static_cast<int>(nodes.size()));
}

void TopologyEditor::clearProperties()
{
    // The edit that triggered this may come from one of these widgets, still in its signal:
    // take the rows out now and delete their widgets later.
    while (m_propertyForm->rowCount() > 0) {
        const QFormLayout::TakeRowResult row = m_propertyForm->takeRow(0);
        for (QLayoutItem* item : {row.labelItem, row.fieldItem}) {
            if (!item)
                continue;
            if (QWidget* widget = item->widget()) {
                widget->hide();
                widget->deleteLater();
            }
            delete item;
        }
    }
}

void TopologyEditor::showNodeProperties(const TopoNode& node)
{
    const TopoNode* n = &node;
    m_properties->setTitle(QString::fromStdString(n->name));
    m_propertyForm->addRow(tr("GPUs"),
                           new QLabel(QString::fromStdString(groupedNumber(n->spec->gpus))));
    m_propertyForm->addRow(tr("Fabric"), new QLabel(nodeFabricName(n->spec->fabric)));
    const int id = n->id;
    for (size_t chip = 0; chip < n->switch_in_service.size(); ++chip) {
        auto* box =
            new QCheckBox(tr("in service (%1 links)").arg(n->spec->switch_links_per_gpu[chip]));
        box->setObjectName(QString("chip%1").arg(chip));
        box->setChecked(n->switch_in_service[chip]);
        connect(box, &QCheckBox::toggled, this, [this, id, chip](bool on) {
            m_document->edit(on ? tr("NVSwitch chip %1 back").arg(chip)
                                : tr("NVSwitch chip %1 out").arg(chip),
                             0, [id, chip, on](TopologyGraph& graph) {
                                 graph.node(id)->switch_in_service[chip] = on;
                             });
        });
        m_propertyForm->addRow(tr("NVSwitch %1").arg(chip), box);
    }
    m_propertyForm->addRow(tr("NVLink at"),
                           percentBox(n->nvlink_factor, this, [this, id](int value) {
                               m_document->edit(tr("NVLink at %1%").arg(value), 9001,
                                                [id, value](TopologyGraph& graph) {
                                                    graph.node(id)->nvlink_factor = value / 100.0;
                                                });
                           }));
    m_propertyForm->addRow(tr("NICs at"), percentBox(n->nic_factor, this, [this, id](int value) {
                               m_document->edit(tr("NICs at %1%").arg(value), 9002,
                                                [id, value](TopologyGraph& graph) {
                                                    graph.node(id)->nic_factor = value / 100.0;
                                                });
                           }));
    m_propertyForm->addRow(
        tr("NICs"), new QLabel(tr("%1 x %2 GB/s").arg(n->spec->nics).arg(n->spec->nic_GBps.value)));
}

void TopologyEditor::showRackProperties(const TopoRack& rack)
{
    const TopologyGraph& g = m_document->graph();
    const int rackId = rack.id;
    m_properties->setTitle(QString::fromStdString(rack.name));
    m_propertyForm->addRow(tr("Nodes"), new QLabel(QString::number(g.nodesInRack(rackId).size())));
    m_propertyForm->addRow(
        tr("Uplink at"), percentBox(rack.uplink_factor, this, [this, rackId](int value) {
            m_document->edit(tr("Rack uplink at %1%").arg(value), 9003,
                             [rackId, value](TopologyGraph& graph) {
                                 graph.rack(rackId)->uplink_factor = value / 100.0;
                             });
        }));
}

void TopologyEditor::showClusterProperties(int selectedNodes)
{
    const TopologyGraph& g = m_document->graph();
    m_properties->setTitle(selectedNodes > 1 ? tr("%1 nodes selected").arg(selectedNodes)
                                             : tr("Cluster"));
    // A node type's name is long ("NVIDIA DGX A100 (8x A100 SXM4 80GB, NVSwitch gen 2)"): it
    // wraps rather than widening the panel or being cut.
    auto* name = new QLabel(QString::fromStdString(g.name));
    name->setObjectName("clusterName");
    name->setWordWrap(true);
    m_propertyForm->addRow(name);
    if (!g.is_torus) {
        auto* spine = new QDoubleSpinBox;
        spine->setObjectName("spineRatio");
        spine->setRange(1, 64);
        spine->setDecimals(1);
        spine->setSuffix(" : 1");
        spine->setValue(g.spine_oversubscription.value);
        spine->setKeyboardTracking(false);
        connect(spine, &QDoubleSpinBox::valueChanged, this, [this](double ratio) {
            m_document->edit(tr("Spine %1:1").arg(ratio), 9004, [ratio](TopologyGraph& graph) {
                graph.spine_oversubscription = userEntry(ratio, "spine oversubscription (editor)");
            });
        });
        m_propertyForm->addRow(tr("Spine"), spine);
        // The node type: every node is alike, so these apply to all of them.
        if (!g.nodes.empty())
            addNodeTypeProperties(*g.nodes.front().spec);
    }
    m_propertyForm->addRow(tr("GPUs"),
                           new QLabel(QString::fromStdString(groupedNumber(double(g.gpuCount())))));
}

void TopologyEditor::addNodeTypeProperties(const NodeSpec& type)
{
    auto* nicKind = new QComboBox;
    nicKind->setObjectName("nicKind");
    for (const InterconnectSpec& link : HardwareCatalog::bundled().interconnects) {
        if (link.kind == LinkKind::InfiniBand || link.kind == LinkKind::RoCE)
            nicKind->addItem(QString::fromStdString(link.name), QString::fromStdString(link.id));
    }
    nicKind->setCurrentIndex(nicKind->findData(QString::fromStdString(type.nic_id)));
    connect(nicKind, &QComboBox::activated, this, [this, nicKind](int index) {
        const std::string id = nicKind->itemData(index).toString().toStdString();
        m_document->edit(
            tr("NICs: %1").arg(nicKind->itemText(index)), 0, [id](TopologyGraph& graph) {
                const InterconnectSpec* nic = HardwareCatalog::bundled().interconnect(id);
                graph.editNodeSpecs([&](NodeSpec& spec) {
                    spec.nic_id = id;
                    spec.nic_GBps = {nic->per_direction_GBps, nic->origin,
                                     nic->name + " (" + nic->source + ")"};
                    if (nic->achievable_fraction > 0)
                        spec.nic_efficiency = {nic->achievable_fraction, nic->achievable_origin,
                                               nic->achievable_source};
                });
            });
    });
    m_propertyForm->addRow(tr("NIC kind"), nicKind);
    auto* nics = new QSpinBox;
    nics->setObjectName("nicsPerNode");
    nics->setRange(0, 64);
    nics->setValue(type.nics);
    nics->setKeyboardTracking(false);
    connect(nics, &QSpinBox::valueChanged, this, [this](int count) {
        m_document->edit(tr("%1 NICs per node").arg(count), 9005, [count](TopologyGraph& graph) {
            graph.editNodeSpecs([count](NodeSpec& spec) { spec.nics = count; });
        });
    });
    m_propertyForm->addRow(tr("NICs per node"), nics);
    auto* rate = new QDoubleSpinBox;
    rate->setObjectName("nicRate");
    rate->setRange(0.1, 1000);
    rate->setSuffix(tr(" GB/s per direction"));
    rate->setValue(type.nic_GBps.value);
    rate->setKeyboardTracking(false);
    connect(rate, &QDoubleSpinBox::valueChanged, this, [this](double GBps) {
        m_document->edit(tr("NIC rate %1 GB/s").arg(GBps), 9006, [GBps](TopologyGraph& graph) {
            graph.editNodeSpecs(
                [GBps](NodeSpec& spec) { spec.nic_GBps = userEntry(GBps, "NIC rate (editor)"); });
        });
    });
    m_propertyForm->addRow(tr("NIC rate"), rate);
    if (type.fabric == NodeFabric::PCIe)
        return;
    auto* nvlink = new QDoubleSpinBox;
    nvlink->setObjectName("nvlinkRate");
    nvlink->setRange(0.1, 1000);
    nvlink->setSuffix(tr(" GB/s per link"));
    nvlink->setValue(type.nvlink_link_GBps.value);
    nvlink->setKeyboardTracking(false);
    connect(nvlink, &QDoubleSpinBox::valueChanged, this, [this](double GBps) {
        m_document->edit(tr("NVLink %1 GB/s per link").arg(GBps), 9007,
                         [GBps](TopologyGraph& graph) {
                             graph.editNodeSpecs([GBps](NodeSpec& spec) {
                                 spec.nvlink_link_GBps = userEntry(GBps, "NVLink rate (editor)");
                             });
                         });
    });
    m_propertyForm->addRow(tr("NVLink"), nvlink);
    // Links per switch chip: "18 x 1" when every chip takes the same count (NVL72's 18 NVLink
    // switch chips), "2+2+1+1" otherwise.
    const std::vector<int>& chips = type.switch_links_per_gpu;
    QString links;
    if (chips.size() > 2 &&
        std::all_of(chips.begin(), chips.end(), [&](int n) { return n == chips.front(); }))
        links = tr("%1 x %2").arg(chips.size()).arg(chips.front());
    else
        for (int chip : chips)
            links += (links.isEmpty() ? "" : "+") + QString::number(chip);
    m_propertyForm->addRow(tr("Links per GPU"),
                           new QLabel(links.isEmpty() ? tr("mesh pairs") : links));
}

} // namespace paraplan::ui
