#include "inputpanel.h"

#include "inputlimits.h"
#include "summary.h"
#include "undokeys.h"

#include "clusterio.h"
#include "modelio.h"
#include "units.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPalette>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

namespace paraplan::ui {

namespace {
// A spin box's top: the field's stated range (inputlimits.h), so the box never clamps a
// value the engine accepts.
int maxOf(const limits::Range& range)
{
    return static_cast<int>(range.max);
}

// Shows a plan's value as it is: a box whose stated range does not hold it (a file written
// by hand) widens to show it, and the rules mark the field; it narrows again once the value
// is back in range.
template <typename Box, typename Value> void showValue(Box* box, Value value)
{
    if (!box->property("baseMax").isValid()) {
        box->setProperty("baseMin", box->minimum());
        box->setProperty("baseMax", box->maximum());
    }
    const auto low = box->property("baseMin").template value<Value>();
    const auto high = box->property("baseMax").template value<Value>();
    box->setRange(std::min(low, value), std::max(high, value));
    box->setValue(value);
}
} // namespace
namespace {

// A combo box's items from an enum's name table: the description shown, the value as data.
template <typename E, std::size_t N>
void fillFromNames(QComboBox* combo, const EnumName<E> (&table)[N])
{
    for (const EnumName<E>& entry : table)
        combo->addItem(QString::fromUtf8(entry.description), static_cast<int>(entry.value));
}

} // namespace

namespace {

// An invalid field is tinted through its palette (its base and button colours), never a
// style sheet: a style sheet on a spin box replaces the native style's arrows.
void markField(QWidget* widget, bool invalid, const QString& why)
{
    if (!widget->property("baseToolTip").isValid())
        widget->setProperty("baseToolTip", widget->toolTip());
    const QString base = widget->property("baseToolTip").toString();
    widget->setProperty("invalid", invalid);
    if (invalid) {
        QPalette palette = widget->palette();
        const QColor tint("#f9d6d2");
        palette.setColor(QPalette::Base, tint);
        palette.setColor(QPalette::Button, tint);
        palette.setColor(QPalette::Text, QColor("#8b1a10"));
        palette.setColor(QPalette::ButtonText, QColor("#8b1a10"));
        widget->setPalette(palette);
        widget->setToolTip(base.isEmpty() ? why : why + "\n\n" + base);
    } else {
        widget->setPalette(QPalette()); // back to the inherited palette
        widget->setToolTip(base);
    }
}

// A count with thousands separators, as the headline writes them: "1,000,000".
QString grouped(double count)
{
    return QString::fromStdString(groupedNumber(count));
}

QLabel* note(QWidget* parent)
{
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    QFont font = label->font();
    font.setPointSizeF(font.pointSizeF() * 0.9);
    label->setFont(font);
    label->setStyleSheet("color: #555;");
    return label;
}

} // namespace

InputPanel::InputPanel(PlanDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(buildModelBox());
    layout->addWidget(buildClusterBox());
    layout->addWidget(buildParallelBox());
    layout->addWidget(buildTrainingBox());
    layout->addStretch(1);
    giveUndoKeysToWindow(this); // Ctrl+Z on a committed value undoes the plan edit

    connect(m_document, &PlanDocument::planChanged, this, &InputPanel::syncFromPlan);
    syncFromPlan();
}

// Model: a preset or a config.json, and the shape.
QGroupBox* InputPanel::buildModelBox()
{
    auto* modelBox = new QGroupBox(tr("Model"), this);
    auto* modelForm = new QFormLayout(modelBox);
    m_modelPreset = new QComboBox(modelBox);
    m_modelPreset->setObjectName("modelPreset");
    for (const ModelPresetInfo& info : modelPresets())
        m_modelPreset->addItem(QString::fromStdString(info.name), QString::fromStdString(info.id));
    m_modelPreset->addItem(tr("custom"), QString());
    connect(m_modelPreset, &QComboBox::activated, this, [this](int index) {
        const std::string id = m_modelPreset->itemData(index).toString().toStdString();
        if (id.empty())
            return;
        m_document->edit(tr("Model: %1").arg(m_modelPreset->itemText(index)), Field::Whole,
                         [id](Plan& plan) {
                             std::string error;
                             modelFromPreset(id, &plan.model, &error);
                         });
    });
    auto* importButton = new QPushButton(tr("Import config.json..."), modelBox);
    connect(importButton, &QPushButton::clicked, this, &InputPanel::importModelRequested);
    auto* presetRow = new QHBoxLayout;
    presetRow->addWidget(m_modelPreset, 1);
    presetRow->addWidget(importButton);
    modelForm->addRow(tr("Preset"), presetRow);
    auto modelField = [this](int min, int max, const QString& name, int ModelSpec::*member) {
        return spin(min, max, Field::ModelShape, name, [member](Plan& plan, int value) {
            plan.model.*member = value;
            if (!plan.model.preset.empty())
                plan.model.name = "custom (from " + plan.model.preset + ")";
            plan.model.preset.clear();
            plan.model.source = "user entry";
        });
    };
    m_layers = modelField(1, maxOf(limits::kLayers), tr("layers"), &ModelSpec::layers);
    m_hidden = modelField(1, maxOf(limits::kHidden), tr("hidden size"), &ModelSpec::hidden);
    m_heads = modelField(1, maxOf(limits::kHeads), tr("attention heads"), &ModelSpec::heads);
    m_kvHeads = modelField(1, maxOf(limits::kHeads), tr("KV heads"), &ModelSpec::kv_heads);
    m_ffn = modelField(1, maxOf(limits::kFfnHidden), tr("FFN hidden"), &ModelSpec::ffn_hidden);
    m_vocab = modelField(1, maxOf(limits::kVocab), tr("vocabulary"), &ModelSpec::vocab);
    auto* shapeRow = new QGridLayout;
    shapeRow->addWidget(new QLabel(tr("layers")), 0, 0);
    shapeRow->addWidget(m_layers, 0, 1);
    shapeRow->addWidget(new QLabel(tr("hidden")), 0, 2);
    shapeRow->addWidget(m_hidden, 0, 3);
    shapeRow->addWidget(new QLabel(tr("heads")), 1, 0);
    shapeRow->addWidget(m_heads, 1, 1);
    shapeRow->addWidget(new QLabel(tr("KV heads")), 1, 2);
    shapeRow->addWidget(m_kvHeads, 1, 3);
    shapeRow->addWidget(new QLabel(tr("FFN")), 2, 0);
    shapeRow->addWidget(m_ffn, 2, 1);
    shapeRow->addWidget(new QLabel(tr("vocab")), 2, 2);
    shapeRow->addWidget(m_vocab, 2, 3);
    modelForm->addRow(shapeRow);
    m_modelSummary = note(modelBox);
    modelForm->addRow(m_modelSummary);
    m_fieldWidgets["model"] = {m_modelPreset, m_layers, m_hidden, m_heads,
                               m_kvHeads,     m_ffn,    m_vocab};
    return modelBox;
}

// Cluster: a preset or a cluster file, its size, and what-ifs.
QGroupBox* InputPanel::buildClusterBox()
{
    auto* clusterBox = new QGroupBox(tr("Cluster"), this);
    auto* clusterForm = new QFormLayout(clusterBox);
    m_clusterPreset = new QComboBox(clusterBox);
    m_clusterPreset->setObjectName("clusterPreset");
    for (const ClusterPresetInfo& info : clusterPresets())
        m_clusterPreset->addItem(QString::fromStdString(info.id), QString::fromStdString(info.id));
    m_clusterPreset->addItem(tr("from file"), QString());
    connect(m_clusterPreset, &QComboBox::activated, this, [this](int index) {
        const std::string id = m_clusterPreset->itemData(index).toString().toStdString();
        if (id.empty())
            return;
        const int nodes = m_document->plan().cluster.nodes;
        m_document->edit(tr("Cluster: %1").arg(m_clusterPreset->itemText(index)), Field::Whole,
                         [id, nodes](Plan& plan) {
                             ClusterOptions options;
                             options.nodes = nodes;
                             std::string error;
                             if (!clusterFromPreset(id, options, &plan.cluster, &error,
                                                    HardwareCatalog::bundled()))
                                 clusterFromPreset(id, {}, &plan.cluster, &error,
                                                   HardwareCatalog::bundled());
                         });
    });
    auto* clusterFileButton = new QPushButton(tr("Open..."), clusterBox);
    connect(clusterFileButton, &QPushButton::clicked, this, &InputPanel::openClusterRequested);
    auto* clusterRow = new QHBoxLayout;
    clusterRow->addWidget(m_clusterPreset, 1);
    clusterRow->addWidget(clusterFileButton);
    clusterForm->addRow(tr("Preset"), clusterRow);
    m_nodes = spin(1, maxOf(limits::kNodes), Field::ClusterNodes, tr("nodes"),
                   [](Plan& plan, int value) { plan.cluster.nodes = value; });
    m_perRack = spin(0, maxOf(limits::kNodesPerRack), Field::ClusterRack, tr("nodes per rack"),
                     [](Plan& plan, int value) { plan.cluster.network.nodes_per_rack = value; });
    m_perRack->setSpecialValueText(tr("one rack"));
    m_spine = new QDoubleSpinBox(clusterBox);
    m_spine->setRange(1, 64);
    m_spine->setDecimals(1);
    m_spine->setSuffix(" : 1");
    m_spine->setKeyboardTracking(false);
    connect(m_spine, &QDoubleSpinBox::valueChanged, this, [this](double value) {
        m_document->edit(tr("Spine oversubscription %1:1").arg(value), Field::ClusterSpine,
                         [value](Plan& plan) {
                             plan.cluster.network.spine_oversubscription =
                                 userEntry(value, "spine oversubscription");
                         });
    });
    m_switchOut =
        spin(0, 8, Field::ClusterSwitchOut, tr("NVSwitch chips out"), [](Plan& plan, int value) {
            plan.cluster.what_if.nvswitch_chips_out.clear();
            for (int chip = 0; chip < value; ++chip)
                plan.cluster.what_if.nvswitch_chips_out.push_back(chip);
        });
    m_nicRate = spin(1, 100, Field::ClusterNicRate, tr("NIC rate"), [](Plan& plan, int percent) {
        plan.cluster.what_if.nic_factor = percent / 100.0;
    });
    m_nicRate->setSuffix(" %");
    clusterForm->addRow(tr("Nodes"), m_nodes);
    clusterForm->addRow(tr("Nodes per rack"), m_perRack);
    clusterForm->addRow(tr("Spine"), m_spine);
    clusterForm->addRow(tr("What-if: NVSwitch out"), m_switchOut);
    clusterForm->addRow(tr("What-if: NICs at"), m_nicRate);
    m_clusterSummary = note(clusterBox);
    clusterForm->addRow(m_clusterSummary);
    m_fieldWidgets["cluster"] = {m_clusterPreset, m_nodes,     m_perRack,
                                 m_spine,         m_switchOut, m_nicRate};
    return clusterBox;
}

// Parallelism: the degrees, then the options of the layout.
QGroupBox* InputPanel::buildParallelBox()
{
    auto* parallelBox = new QGroupBox(tr("Parallelism"), this);
    auto* parallelForm = new QFormLayout(parallelBox);
    auto degree = [this](Field field, const QString& name, int ParallelLayout::*member) {
        return spin(1, maxOf(limits::kDegree), field, name,
                    [member](Plan& plan, int value) { plan.parallel.*member = value; });
    };
    // TP, PP and CP keep the cluster's GPU count: DP follows them in the same undo step.
    // DP itself (and the node count) keeps today's behaviour: the GPU count follows the user.
    auto keepingGpus = [this](Field field, const QString& name) {
        auto* box = new QSpinBox(this);
        box->setObjectName(name);
        box->setRange(1, maxOf(limits::kDegree));
        box->setKeyboardTracking(false);
        box->setAccelerated(true);
        box->setToolTip(tr("Changing %1 re-derives DP = GPUs / (TP x PP x CP) so that the "
                           "cluster keeps its GPU count; Edit > Undo restores both")
                            .arg(name));
        connect(box, &QSpinBox::valueChanged, this,
                [this, field](int value) { m_document->editDegreeKeepingGpus(field, value); });
        return box;
    };
    m_tp = keepingGpus(Field::Tp, "TP");
    m_pp = keepingGpus(Field::Pp, "PP");
    m_dp = degree(Field::Dp, "DP", &ParallelLayout::dp);
    m_cp = keepingGpus(Field::Cp, "CP");
    m_ep = degree(Field::Ep, "EP", &ParallelLayout::ep);
    m_interleave = degree(Field::Interleave, tr("interleave"), &ParallelLayout::interleave);
    m_micro = degree(Field::MicroBatch, tr("micro-batch"), &ParallelLayout::micro_batch);
    m_global = degree(Field::GlobalBatch, tr("global batch"), &ParallelLayout::global_batch);
    m_interleave->setMaximum(maxOf(limits::kInterleave));
    m_micro->setMaximum(maxOf(limits::kMicroBatch));
    m_global->setMaximum(maxOf(limits::kGlobalBatch));
    auto* degrees = new QGridLayout;
    const std::pair<const char*, QSpinBox*> cells[] = {
        {"TP", m_tp}, {"PP", m_pp}, {"DP", m_dp}, {"CP", m_cp}, {"EP", m_ep}};
    for (int i = 0; i < 5; ++i) {
        degrees->addWidget(new QLabel(cells[i].first), i / 3, (i % 3) * 2);
        degrees->addWidget(cells[i].second, i / 3, (i % 3) * 2 + 1);
    }
    parallelForm->addRow(degrees);
    m_gpuSummary = note(parallelBox);
    parallelForm->addRow(m_gpuSummary);
    addParallelOptions(parallelBox, parallelForm);
    m_fieldWidgets["parallel"] = {m_tp, m_pp, m_dp, m_cp};
    m_fieldWidgets["parallel.tp"] = {m_tp};
    m_fieldWidgets["parallel.pp"] = {m_pp};
    m_fieldWidgets["parallel.dp"] = {m_dp};
    m_fieldWidgets["parallel.cp"] = {m_cp};
    m_fieldWidgets["parallel.ep"] = {m_ep};
    m_fieldWidgets["parallel.zero"] = {m_zero};
    m_fieldWidgets["parallel.sequence_parallel"] = {m_sp};
    m_fieldWidgets["parallel.interleave"] = {m_interleave};
    m_fieldWidgets["parallel.stage_layers"] = {m_firstStage, m_lastStage};
    m_fieldWidgets["parallel.first_stage_layers"] = {m_firstStage, m_lastStage};
    m_fieldWidgets["parallel.dp_shard"] = {m_dpShard};
    m_fieldWidgets["parallel.micro_batch"] = {m_micro};
    m_fieldWidgets["parallel.global_batch"] = {m_global, m_micro};
    return parallelBox;
}

// ZeRO, TP overlap, SP, recompute, interleave, uneven stages, HSDP and the batch.
void InputPanel::addParallelOptions(QGroupBox* parallelBox, QFormLayout* parallelForm)
{
    m_zero = new QComboBox(parallelBox);
    m_zero->setObjectName("zero");
    m_zero->addItems(
        {tr("0 (DDP)"), tr("1 (optimizer)"), tr("2 (+ gradients)"), tr("3 (+ weights)")});
    connect(m_zero, &QComboBox::activated, this, [this](int index) {
        m_document->edit(tr("ZeRO %1").arg(index), Field::Zero,
                         [index](Plan& plan) { plan.parallel.zero = index; });
    });
    parallelForm->addRow(tr("ZeRO stage"), m_zero);
    m_tpOverlap = new QComboBox(parallelBox);
    m_tpOverlap->setObjectName("tpOverlap");
    fillFromNames(m_tpOverlap, kTpOverlapNames);
    m_tpOverlap->setToolTip(tr("Tensor-parallel communication overlap (Megatron's "
                               "--tp-comm-overlap, Transformer Engine userbuffers, async TP)"));
    connect(m_tpOverlap, &QComboBox::activated, this, [this](int index) {
        const auto overlap = static_cast<TpOverlap>(m_tpOverlap->itemData(index).toInt());
        m_document->edit(tr("TP overlap %1").arg(tpOverlapName(overlap)), Field::TpOverlap,
                         [overlap](Plan& plan) { plan.parallel.tp_overlap = overlap; });
    });
    parallelForm->addRow(tr("TP overlap"), m_tpOverlap);
    m_sp = new QCheckBox(tr("sequence parallelism"), parallelBox);
    m_sp->setObjectName("sequenceParallel");
    connect(m_sp, &QCheckBox::toggled, this, [this](bool on) {
        m_document->edit(on ? tr("Sequence parallelism on") : tr("Sequence parallelism off"),
                         Field::SequenceParallel,
                         [on](Plan& plan) { plan.parallel.sequence_parallel = on; });
    });
    parallelForm->addRow(m_sp);
    m_recompute = new QComboBox(parallelBox);
    m_recompute->setObjectName("recompute");
    fillFromNames(m_recompute, kRecomputeNames);
    connect(m_recompute, &QComboBox::activated, this, [this](int index) {
        m_document->edit(
            tr("Recompute %1").arg(m_recompute->itemText(index)), Field::Recompute,
            [index](Plan& plan) { plan.parallel.recompute = static_cast<Recompute>(index); });
    });
    parallelForm->addRow(tr("Recompute"), m_recompute);
    // Megatron-Core's --recompute-modules: a menu of the modules, checked where recomputed;
    // used with recompute "selective" on framework "megatron".
    m_recomputeModules = new QToolButton(parallelBox);
    m_recomputeModules->setObjectName("recomputeModules");
    m_recomputeModules->setPopupMode(QToolButton::InstantPopup);
    m_recomputeModules->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_recomputeModules->setToolTip(
        tr("With selective recompute on Megatron-Core: the modules re-run in the backward "
           "(--recompute-modules; none checked: core_attn, its default). A recomputed module "
           "keeps only its input and costs its forward again"));
    auto* modulesMenu = new QMenu(m_recomputeModules);
    for (const EnumName<unsigned>& entry : kRecomputeModuleNames) {
        QAction* action = modulesMenu->addAction(QString::fromUtf8(entry.name));
        action->setCheckable(true);
        action->setData(entry.value);
        connect(action, &QAction::triggered, this, [this, action](bool on) {
            const unsigned bit = action->data().toUInt();
            m_document->edit(tr("Recompute module %1 %2").arg(action->text(), on ? "on" : "off"),
                             Field::Recompute, [bit, on](Plan& plan) {
                                 unsigned modules = plan.parallel.recompute_modules;
                                 modules = on ? (modules | bit) : (modules & ~bit);
                                 plan.parallel.recompute_modules =
                                     static_cast<unsigned char>(modules);
                             });
        });
    }
    m_recomputeModules->setMenu(modulesMenu);
    parallelForm->addRow(tr("Recompute modules"), m_recomputeModules);
    parallelForm->addRow(tr("Interleave (v)"), m_interleave);
    // Uneven pipelines (Megatron's --decoder-first/last-pipeline-num-layers) and HSDP.
    auto optionalCount = [this](Field field, const QString& name, const QString& tip,
                                std::function<void(Plan&, int)> apply) {
        QSpinBox* box = spin(0, maxOf(limits::kLayers), field, name, std::move(apply));
        box->setSpecialValueText(tr("even"));
        box->setToolTip(tip);
        return box;
    };
    m_firstStage = optionalCount(
        Field::StageLayers, tr("first stage layers"),
        tr("Layers of the first pipeline stage (it also runs the embedding); 'even' splits "
           "the layers evenly"),
        [](Plan& plan, int value) {
            plan.parallel.first_stage_layers = value;
            plan.parallel.stage_layers.clear();
        });
    m_lastStage = optionalCount(
        Field::StageLayers, tr("last stage layers"),
        tr("Layers of the last pipeline stage (it also runs the LM head and the loss)"),
        [](Plan& plan, int value) {
            plan.parallel.last_stage_layers = value;
            plan.parallel.stage_layers.clear();
        });
    auto* stageRow = new QHBoxLayout;
    stageRow->addWidget(m_firstStage);
    stageRow->addWidget(new QLabel(tr("last")));
    stageRow->addWidget(m_lastStage);
    parallelForm->addRow(tr("First stage layers"), stageRow);
    m_dpShard = spin(0, maxOf(limits::kDegree), Field::DpShard, tr("ZeRO shard group"),
                     [](Plan& plan, int value) { plan.parallel.dp_shard = value; });
    m_dpShard->setSpecialValueText(tr("all DP ranks"));
    m_dpShard->setToolTip(tr("HSDP: shard over groups of this many data-parallel ranks and "
                             "replicate across the groups"));
    parallelForm->addRow(tr("ZeRO shard group"), m_dpShard);
    parallelForm->addRow(tr("Micro-batch"), m_micro);
    parallelForm->addRow(tr("Global batch"), m_global);
}

// Training: sequence, data type, framework, kernels, token budget and price.
QGroupBox* InputPanel::buildTrainingBox()
{
    auto* trainingBox = new QGroupBox(tr("Training"), this);
    auto* trainingForm = new QFormLayout(trainingBox);
    m_seq = spin(1, maxOf(limits::kSeqLen), Field::SeqLen, tr("sequence length"),
                 [](Plan& plan, int value) { plan.training.seq_len = value; });
    trainingForm->addRow(tr("Sequence length"), m_seq);
    m_dtype = new QComboBox(trainingBox);
    m_dtype->setObjectName("dtype");
    for (int d = 0; d < kDtypeCount; ++d)
        m_dtype->addItem(dtypeName(static_cast<Dtype>(d)));
    connect(m_dtype, &QComboBox::activated, this, [this](int index) {
        m_document->edit(tr("dtype %1").arg(m_dtype->itemText(index)), Field::Dtype,
                         [index](Plan& plan) { plan.training.dtype = static_cast<Dtype>(index); });
    });
    trainingForm->addRow(tr("Data type"), m_dtype);
    m_framework = new QComboBox(trainingBox);
    m_framework->setObjectName("framework");
    fillFromNames(m_framework, kTrainingFrameworkNames);
    m_framework->setToolTip(tr("The framework the plan runs on: what the 'auto' attention "
                               "kernel, element-wise kernels and TP overlap resolve to, and "
                               "which layouts it can run (the ZeRO stage never changes it)"));
    connect(m_framework, &QComboBox::activated, this, [this](int index) {
        const auto framework = static_cast<TrainingFramework>(m_framework->itemData(index).toInt());
        m_document->edit(tr("framework %1").arg(trainingFrameworkName(framework)), Field::Framework,
                         [framework](Plan& plan) { plan.training.framework = framework; });
    });
    trainingForm->addRow(tr("Framework"), m_framework);
    m_attention = new QComboBox(trainingBox);
    m_attention->setObjectName("attention");
    fillFromNames(m_attention, kAttentionKernelNames);
    m_attention->setToolTip(tr("The attention kernel: its published forward and backward "
                               "throughput on this GPU sets the attention time"));
    connect(m_attention, &QComboBox::activated, this, [this](int index) {
        const auto kernel = static_cast<AttentionKernel>(m_attention->itemData(index).toInt());
        m_document->edit(tr("attention %1").arg(attentionKernelName(kernel)), Field::Attention,
                         [kernel](Plan& plan) {
                             plan.training.attention = kernel;
                             refreshDefaultFigures(&plan);
                         });
    });
    trainingForm->addRow(tr("Attention kernel"), m_attention);
    m_kernels = new QComboBox(trainingBox);
    m_kernels->setObjectName("kernels");
    fillFromNames(m_kernels, kKernelStyleNames);
    m_kernels->setToolTip(tr("How norms, activations, rotary embeddings and residual adds run: "
                             "fused kernels, or one HBM round trip per PyTorch operator"));
    connect(m_kernels, &QComboBox::activated, this, [this](int index) {
        const auto style = static_cast<KernelStyle>(m_kernels->itemData(index).toInt());
        m_document->edit(tr("element-wise kernels %1").arg(kernelStyleName(style)), Field::Kernels,
                         [style](Plan& plan) { plan.training.kernels = style; });
    });
    trainingForm->addRow(tr("Element-wise kernels"), m_kernels);
    // The dtypes of the gradients and of the optimizer's moments: auto (the framework's
    // default), fp32 or bf16, stored as bytes (0, 4, 2).
    auto stateDtype = [&](const char* name, const QString& tip, int TrainingSettings::*member,
                          const QString& what) {
        auto* box = new QComboBox(trainingBox);
        box->setObjectName(name);
        box->addItem(tr("auto"), 0);
        box->addItem(QStringLiteral("fp32"), 4);
        box->addItem(QStringLiteral("bf16"), 2);
        box->setToolTip(tip);
        connect(box, &QComboBox::activated, this, [this, box, member, what](int index) {
            const int bytes = box->itemData(index).toInt();
            m_document->edit(what.arg(box->itemText(index)), Field::StateDtypes,
                             [member, bytes](Plan& plan) { plan.training.*member = bytes; });
        });
        return box;
    };
    m_gradDtype = stateDtype(
        "gradReduceDtype",
        tr("Gradients' dtype, kept and reduced (training.grad_reduce_dtype): Megatron-Core's "
           "main_grad is fp32 unless --grad-reduce-in-bf16; it sets gradient memory and the DP "
           "bytes on the wire"),
        &TrainingSettings::grad_reduce_bytes, tr("gradients %1"));
    trainingForm->addRow(tr("Gradients"), m_gradDtype);
    m_optimizerDtype =
        stateDtype("optimizerDtype",
                   tr("Adam's moments' dtype (training.optimizer_dtype): fp32 by default, bf16 as "
                      "Megatron-Core's --use-precision-aware-optimizer --exp-avg-dtype bf16 "
                      "--exp-avg-sq-dtype bf16 keeps them"),
                   &TrainingSettings::optimizer_state_bytes, tr("optimizer state %1"));
    trainingForm->addRow(tr("Optimizer state"), m_optimizerDtype);
    m_tokens = new QDoubleSpinBox(trainingBox);
    m_tokens->setObjectName("trainTokens");
    m_tokens->setRange(0, limits::kTrainTokens.max / 1e9);
    m_tokens->setDecimals(1);
    m_tokens->setSuffix(tr(" B tokens"));
    m_tokens->setSpecialValueText(tr("not given"));
    m_tokens->setKeyboardTracking(false);
    connect(m_tokens, &QDoubleSpinBox::valueChanged, this, [this](double billions) {
        m_document->edit(tr("Token budget %1B").arg(billions), Field::TrainTokens,
                         [billions](Plan& plan) { plan.training.train_tokens = billions * 1e9; });
    });
    trainingForm->addRow(tr("Token budget"), m_tokens);
    m_price = new QDoubleSpinBox(trainingBox);
    m_price->setObjectName("gpuHourUsd");
    m_price->setRange(0, limits::kGpuHourUsd.max);
    m_price->setDecimals(2);
    m_price->setPrefix("$");
    m_price->setSuffix(tr(" / GPU-hour"));
    m_price->setSpecialValueText(tr("not given"));
    m_price->setKeyboardTracking(false);
    connect(m_price, &QDoubleSpinBox::valueChanged, this, [this](double usd) {
        m_document->edit(tr("Price $%1/GPU-hour").arg(usd), Field::GpuHourUsd,
                         [usd](Plan& plan) { plan.training.gpu_hour_usd = usd; });
    });
    trainingForm->addRow(tr("Price"), m_price);
    m_fieldWidgets["training.seq_len"] = {m_seq};
    m_fieldWidgets["training.dtype"] = {m_dtype};
    m_fieldWidgets["training.train_tokens"] = {m_tokens};
    m_fieldWidgets["training.gpu_hour_usd"] = {m_price};
    return trainingBox;
}

QSpinBox* InputPanel::spin(int min, int max, Field field, const QString& name,
                           std::function<void(Plan&, int)> apply)
{
    auto* box = new QSpinBox(this);
    box->setObjectName(name);
    box->setRange(min, max);
    box->setKeyboardTracking(false);
    box->setAccelerated(true);
    connect(box, &QSpinBox::valueChanged, this, [this, field, name, apply](int value) {
        m_document->edit(tr("%1 = %2").arg(name).arg(value), field,
                         [apply, value](Plan& plan) { apply(plan, value); });
    });
    return box;
}

QWidget* InputPanel::widgetFor(const QString& field) const
{
    const auto it = m_fieldWidgets.find(field);
    return it == m_fieldWidgets.end() || it->isEmpty() ? nullptr : it->front();
}

void InputPanel::markIssues(const std::vector<PlanIssue>& issues)
{
    QHash<QWidget*, QStringList> messages;
    for (const PlanIssue& issue : issues) {
        const QString field = QString::fromStdString(issue.field);
        for (QWidget* widget : m_fieldWidgets.value(field))
            messages[widget] << QString::fromStdString(issue.message) + " [rule " +
                                    QString::fromStdString(issue.rule) + "]";
    }
    for (const QList<QWidget*>& widgets : m_fieldWidgets) {
        for (QWidget* widget : widgets) {
            const bool invalid = messages.contains(widget);
            markField(widget, invalid, messages.value(widget).join("\n"));
        }
    }
}

void InputPanel::syncFromPlan()
{
    const Plan& plan = m_document->plan();
    const ModelSpec& m = plan.model;
    const QList<QObject*> all = {m_modelPreset, m_layers,     m_hidden,  m_heads,
                                 m_kvHeads,     m_ffn,        m_vocab,   m_clusterPreset,
                                 m_nodes,       m_perRack,    m_spine,   m_switchOut,
                                 m_nicRate,     m_tp,         m_pp,      m_dp,
                                 m_cp,          m_ep,         m_zero,    m_sp,
                                 m_recompute,   m_interleave, m_micro,   m_global,
                                 m_seq,         m_dtype,      m_tokens,  m_price,
                                 m_framework,   m_attention,  m_kernels, m_tpOverlap,
                                 m_firstStage,  m_lastStage,  m_dpShard, m_gradDtype};
    std::vector<std::unique_ptr<QSignalBlocker>> blockers;
    for (QObject* object : all)
        blockers.push_back(std::make_unique<QSignalBlocker>(object));
    const QSignalBlocker optimizerBlocker(m_optimizerDtype);

    const int modelIndex = m_modelPreset->findData(QString::fromStdString(m.preset));
    m_modelPreset->setCurrentIndex(modelIndex >= 0 ? modelIndex : m_modelPreset->count() - 1);
    showValue(m_layers, m.layers);
    showValue(m_hidden, m.hidden);
    showValue(m_heads, m.heads);
    showValue(m_kvHeads, m.kv_heads);
    showValue(m_ffn, m.ffn_hidden);
    showValue(m_vocab, m.vocab);
    const ParameterCount count = countParameters(m);
    m_modelSummary->setText(
        tr("%1: %2B parameters%3, %4 MLP. Source: %5")
            .arg(QString::fromStdString(m.name))
            .arg(count.total / 1e9, 0, 'f', 2)
            .arg(m.isMoe() ? tr(" (%1B active)").arg(count.active_per_token / 1e9, 0, 'f', 2)
                           : QString())
            .arg(m.mlp == MlpKind::SwiGLU ? "SwiGLU" : "GeLU")
            .arg(QString::fromStdString(m.source)));

    const ClusterSpec& c = plan.cluster;
    const int clusterIndex = m_clusterPreset->findData(QString::fromStdString(c.preset));
    m_clusterPreset->setCurrentIndex(clusterIndex >= 0 ? clusterIndex
                                                       : m_clusterPreset->count() - 1);
    showValue(m_nodes, c.nodes);
    showValue(m_perRack, c.network.nodes_per_rack);
    m_spine->setValue(c.network.spine_oversubscription.value);
    const int chips = c.is_torus ? 0 : static_cast<int>(c.node.switch_links_per_gpu.size());
    m_switchOut->setEnabled(chips > 1);
    m_switchOut->setMaximum(std::max(0, chips - 1));
    m_switchOut->setValue(static_cast<int>(c.what_if.nvswitch_chips_out.size()));
    m_nicRate->setValue(static_cast<int>(std::lround(c.what_if.nic_factor * 100)));
    m_nicRate->setEnabled(!c.is_torus && c.nodes > 1);
    m_perRack->setEnabled(!c.is_torus);
    m_spine->setEnabled(!c.is_torus);
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(c.gpu_id);
    m_clusterSummary->setText(tr("%1 x %2 = %3 %4. Source: %5")
                                  .arg(grouped(c.nodes))
                                  .arg(c.gpusPerNode())
                                  .arg(grouped(c.totalGpus()))
                                  .arg(gpu ? QString::fromStdString(gpu->name) : QString())
                                  .arg(QString::fromStdString(clusterSource(c))));

    const ParallelLayout& p = plan.parallel;
    showValue(m_tp, p.tp);
    showValue(m_pp, p.pp);
    showValue(m_dp, p.dp);
    showValue(m_cp, p.cp);
    showValue(m_ep, p.ep);
    m_zero->setCurrentIndex(std::clamp(p.zero, 0, 3));
    m_sp->setChecked(p.sequence_parallel);
    m_recompute->setCurrentIndex(static_cast<int>(p.recompute));
    showRecomputeModules(plan);
    showValue(m_interleave, p.interleave);
    showValue(m_firstStage, p.first_stage_layers);
    showValue(m_lastStage, p.last_stage_layers);
    showValue(m_dpShard, p.dp_shard);
    showValue(m_micro, p.micro_batch);
    showValue(m_global, p.global_batch);
    const long long gpus = static_cast<long long>(p.tp) * p.pp * p.dp * p.cp;
    m_gpuSummary->setText(
        tr("TP x PP x DP x CP = %1 of %2 GPUs; %3 micro-batches per pipeline")
            .arg(grouped(gpus))
            .arg(grouped(c.totalGpus()))
            .arg(p.micro_batch * p.dp > 0
                     ? QString::number(p.global_batch / double(p.micro_batch * p.dp))
                     : QString("-")));
    const TrainingSettings& t = plan.training;
    showValue(m_seq, t.seq_len);
    m_dtype->setCurrentIndex(static_cast<int>(t.dtype));
    showValue(m_tokens, t.train_tokens / 1e9);
    showValue(m_price, t.gpu_hour_usd);
    m_framework->setCurrentIndex(m_framework->findData(int(t.framework)));
    m_attention->setCurrentIndex(m_attention->findData(int(t.attention)));
    m_kernels->setCurrentIndex(m_kernels->findData(int(t.kernels)));
    m_gradDtype->setCurrentIndex(std::max(0, m_gradDtype->findData(t.grad_reduce_bytes)));
    m_optimizerDtype->setCurrentIndex(
        std::max(0, m_optimizerDtype->findData(t.optimizer_state_bytes)));
    m_tpOverlap->setCurrentIndex(m_tpOverlap->findData(int(plan.parallel.tp_overlap)));
}

void InputPanel::showRecomputeModules(const Plan& plan)
{
    // The checked modules, named on the button ("default (core_attn)" where none is set); the
    // button is live only where Megatron-Core's selective recompute reads them.
    const ParallelLayout& p = plan.parallel;
    QStringList names;
    for (QAction* action : m_recomputeModules->menu()->actions()) {
        const QSignalBlocker blocker(action);
        const bool on = (p.recompute_modules & action->data().toUInt()) != 0;
        action->setChecked(on);
        if (on)
            names << action->text();
    }
    m_recomputeModules->setText(names.isEmpty() ? tr("default (core_attn)") : names.join(", "));
    m_recomputeModules->setEnabled(p.recompute == Recompute::Selective &&
                                   plan.training.framework == TrainingFramework::Megatron);
}

} // namespace paraplan::ui
