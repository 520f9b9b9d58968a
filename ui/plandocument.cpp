#include "plandocument.h"

#include "cluster.h"
#include "clusterio.h"
#include "inputlimits.h"
#include "modelio.h"
#include "planio.h"
#include "topologydelta.h"
#include "topologygraph.h"

#include <QDateTime>
#include <QFileInfo>
#include <QStringList>
#include <QUndoCommand>

#include <algorithm>

namespace paraplan::ui {
namespace {

using Drawing = std::shared_ptr<const TopologyGraph>;

// What an undo step keeps of the plan's drawings: not the drawings, but how the one before
// and the one after relate (the same one or none, one changed into the other, or a drawing on
// one side only, kept as a change of its cluster's own layout) and what changed (a
// GraphDelta). Either drawing is rebuilt from the other, the one the plan shows.
class StepDrawings
{
public:
    void record(const Drawing& before, const Drawing& after, const ClusterSpec& beforeCluster,
                const ClusterSpec& afterCluster, const GraphDelta* known = nullptr)
    {
        m_delta = GraphDelta();
        if (before == after)
            m_kind = Kind::Same;
        else if (before && after)
            m_kind = Kind::Changed;
        else
            m_kind = before ? Kind::BeforeOnly : Kind::AfterOnly;
        if (m_kind == Kind::Changed)
            m_delta = known ? *known : GraphDelta::between(*before, *after);
        else if (m_kind == Kind::BeforeOnly)
            m_delta = GraphDelta::between(graphFromCluster(beforeCluster), *before);
        else if (m_kind == Kind::AfterOnly)
            m_delta = GraphDelta::between(graphFromCluster(afterCluster), *after);
    }

    bool same() const { return m_kind == Kind::Same; }

    /// This step's drawings followed by `next`'s, composed from the two deltas alone (no
    /// drawing copied or compared); false where that cannot be done exactly (a drawing
    /// removed after a change, or a cluster's layout a delta is kept against that differs),
    /// and this step is left as it was. `before` and `after` are this step's plan clusters,
    /// `nextBefore` and `nextAfter` the next one's.
    bool mergeWith(const StepDrawings& next, const ClusterSpec& before, const ClusterSpec& after,
                   const ClusterSpec& nextBefore, const ClusterSpec& nextAfter)
    {
        const Kind a = m_kind;
        const Kind b = next.m_kind;
        if (a == Kind::Same) { // next's change, from this step's drawing (the same one)
            if (b == Kind::BeforeOnly && !(before == nextBefore))
                return false;
            *this = next;
            return true;
        }
        // A drawing kept against its cluster's layout is kept against the merged step's.
        if (a == Kind::AfterOnly && !(after == nextAfter))
            return false;
        if (b == Kind::Same)
            return true;
        if (b != Kind::Changed || (a != Kind::Changed && a != Kind::AfterOnly))
            return false;
        m_delta = m_delta.then(next.m_delta);
        return true;
    }

    size_t bytes() const { return m_delta.bytes(); }

    Drawing before(const Drawing& after, const ClusterSpec& beforeCluster) const
    {
        if (m_kind == Kind::Same)
            return after;
        if (m_kind == Kind::AfterOnly)
            return nullptr;
        const bool changed = m_kind == Kind::Changed;
        if (changed && !after)
            return nullptr; // not the step's own drawing (cannot happen: steps run in order)
        auto graph =
            std::make_shared<TopologyGraph>(changed ? *after : graphFromCluster(beforeCluster));
        if (changed)
            m_delta.revert(graph.get());
        else
            m_delta.apply(graph.get());
        return graph;
    }

    Drawing after(const Drawing& before, const ClusterSpec& afterCluster) const
    {
        if (m_kind == Kind::Same)
            return before;
        if (m_kind == Kind::BeforeOnly || (m_kind == Kind::Changed && !before))
            return nullptr;
        auto graph = std::make_shared<TopologyGraph>(
            m_kind == Kind::Changed ? *before : graphFromCluster(afterCluster));
        m_delta.apply(graph.get());
        return graph;
    }

private:
    enum class Kind
    {
        Same,
        Changed,
        BeforeOnly,
        AfterOnly,
    };
    Kind m_kind = Kind::Same;
    GraphDelta m_delta;
};

// One edit: the plan before and after (without their drawings: see StepDrawings, so that a
// step's size follows the edit, not the cluster). Consecutive edits of the same field within
// a short while merge, so that dragging a slider is a single step.
class EditCommand : public QUndoCommand
{
public:
    EditCommand(PlanDocument* document, const QString& text, Field field, int mergeKey, Plan before,
                Plan after, const GraphDelta* drawingChange)
        : QUndoCommand(text), m_document(document), m_field(field), m_mergeKey(mergeKey),
          m_before(std::move(before)), m_after(std::move(after)),
          m_time(QDateTime::currentMSecsSinceEpoch())
    {
        m_pending = std::move(m_after.drawing); // the first redo (the push) shows it as it is
        m_drawings.record(m_before.drawing, m_pending, m_before.cluster, m_after.cluster,
                          drawingChange);
        m_before.drawing.reset();
    }

    int id() const override
    {
        if (m_field == Field::Whole || (m_field == Field::Topology && m_mergeKey == 0))
            return -1;
        return m_field == Field::Topology ? 100000 + m_mergeKey : static_cast<int>(m_field);
    }

    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* next = static_cast<const EditCommand*>(other);
        if (next->m_field != m_field || next->m_mergeKey != m_mergeKey ||
            next->m_time - m_time > 1500)
            return false;
        // The document shows `next`'s result now; this step's first drawing is rebuilt from it.
        if (!m_drawings.mergeWith(next->m_drawings, m_before.cluster, m_after.cluster,
                                  next->m_before.cluster, next->m_after.cluster)) {
            const Drawing last = m_document->plan().drawing;
            const Drawing middle = next->m_drawings.before(last, next->m_before.cluster);
            const Drawing first = m_drawings.before(middle, m_before.cluster);
            m_drawings.record(first, last, m_before.cluster, next->m_after.cluster);
        }
        m_after = next->m_after;
        m_time = next->m_time;
        setText(next->text());
        return true;
    }

    void undo() override
    {
        Plan plan = m_before;
        plan.drawing = m_drawings.before(m_document->plan().drawing, m_before.cluster);
        m_document->setPlanFromHistory(plan);
    }
    void redo() override
    {
        Plan plan = m_after;
        plan.drawing = m_pending ? std::move(m_pending)
                                 : m_drawings.after(m_document->plan().drawing, m_after.cluster);
        m_pending.reset();
        m_document->setPlanFromHistory(plan);
    }

    size_t bytes() const { return sizeof(*this) + m_drawings.bytes(); }

private:
    PlanDocument* m_document;
    Field m_field;
    int m_mergeKey;
    Plan m_before; ///< without its drawing
    Plan m_after;  ///< without its drawing
    StepDrawings m_drawings;
    Drawing m_pending; ///< the drawing after, until the first redo shows it
    qint64 m_time;
};

} // namespace

void refreshDefaultFigures(Plan* plan)
{
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan->cluster.gpu_id);
    if (!gpu)
        return;
    const EngineFigures defaults = defaultEngineFigures(
        *gpu, plan->training.optimizer, plan->training.dtype, plan->training.attention);
    EngineFigures& f = plan->figures;
    auto keepUser = [](Sourced& current, const Sourced& fallback) {
        if (current.origin != Origin::UserEntry)
            current = fallback;
    };
    keepUser(f.gemm_peak_fraction, defaults.gemm_peak_fraction);
    keepUser(f.hbm_fraction, defaults.hbm_fraction);
    keepUser(f.attention_fraction, defaults.attention_fraction);
    keepUser(f.attention_bwd_fraction, defaults.attention_bwd_fraction);
    keepUser(f.comm_sm_share, defaults.comm_sm_share);
    keepUser(f.gpu_spread, defaults.gpu_spread);
    keepUser(f.grad_bytes, defaults.grad_bytes);
    keepUser(f.optimizer_step_bytes, defaults.optimizer_step_bytes);
    keepUser(f.dp_bucket_bytes, defaults.dp_bucket_bytes);
    keepUser(f.fp8_gemm_peak_fraction, defaults.fp8_gemm_peak_fraction);
    keepUser(f.fp8_backward_gemm_peak_fraction, defaults.fp8_backward_gemm_peak_fraction);
    keepUser(f.overlap_fraction, defaults.overlap_fraction);
    keepUser(f.host_launch_s, defaults.host_launch_s);
    keepUser(f.kernel_gap_s, defaults.kernel_gap_s);
    keepUser(f.graph_kernel_gap_s, defaults.graph_kernel_gap_s);
    keepUser(f.moe_imbalance, defaults.moe_imbalance);
    keepUser(f.allocator_reserve, defaults.allocator_reserve);
    keepUser(f.runtime_reserve_bytes, defaults.runtime_reserve_bytes);
}

namespace {

int ParallelLayout::*degreeOf(Field field)
{
    switch (field) {
    case Field::Tp:
        return &ParallelLayout::tp;
    case Field::Pp:
        return &ParallelLayout::pp;
    case Field::Cp:
        return &ParallelLayout::cp;
    default:
        return nullptr;
    }
}

QString degreeName(Field field)
{
    return field == Field::Tp ? "TP" : field == Field::Pp ? "PP" : "CP";
}

// The nearest values of the edited degree below and above `value` for which
// GPUs / (degree x others) is whole; 0 where there is none.
std::pair<long long, long long> nearestKeeping(long long quotient, long long value)
{
    long long below = 0;
    for (long long d = std::min(value - 1, quotient); d >= 1 && below == 0; --d)
        if (quotient % d == 0)
            below = d;
    long long above = 0;
    for (long long d = value + 1; d <= quotient && above == 0; ++d)
        if (quotient % d == 0)
            above = d;
    return {below, above};
}

} // namespace

GpuCountKeeping keepGpuCount(const Plan& plan, Field field, int value)
{
    GpuCountKeeping result;
    const ParallelLayout& p = plan.parallel;
    result.dp = p.dp;
    int ParallelLayout::*member = degreeOf(field);
    if (!member || value < 1)
        return result;
    const QString name = degreeName(field);
    result.change = QObject::tr("%1 %2 -> %3").arg(name).arg(p.*member).arg(value);
    ParallelLayout next = p;
    next.*member = value;
    const long long gpus = plan.cluster.totalGpus();
    // The degrees other than DP and the edited one; they stay as they are.
    const long long others = static_cast<long long>(next.tp) * next.pp * next.cp / value;
    const QString othersText =
        field == Field::Tp   ? QObject::tr("PP %1 x CP %2").arg(next.pp).arg(next.cp)
        : field == Field::Pp ? QObject::tr("TP %1 x CP %2").arg(next.tp).arg(next.cp)
                             : QObject::tr("TP %1 x PP %2").arg(next.tp).arg(next.pp);
    if (gpus < 1)
        return result;
    if (gpus % others != 0) {
        result.note = QObject::tr("no %1 keeps %2 GPUs with %3 (%4 does not divide %2); DP "
                                  "left at %5")
                          .arg(name)
                          .arg(gpus)
                          .arg(othersText)
                          .arg(others)
                          .arg(p.dp);
        return result;
    }
    const long long quotient = gpus / others;
    if (quotient % value != 0) {
        const auto [below, above] = nearestKeeping(quotient, value);
        QStringList nearest;
        for (long long d : {below, above})
            if (d > 0)
                nearest << QString::number(d);
        result.note = QObject::tr("%1 GPUs / (%2 %3 x %4) is not whole: DP left at %5, the "
                                  "plan is invalid; %2 %6 %7 %1 GPUs")
                          .arg(gpus)
                          .arg(name)
                          .arg(value)
                          .arg(othersText)
                          .arg(p.dp)
                          .arg(nearest.join(QObject::tr(" or ")))
                          .arg(nearest.size() == 1 ? QObject::tr("keeps") : QObject::tr("keep"));
        return result;
    }
    const long long dp = quotient / value;
    if (dp > static_cast<long long>(limits::kDegree.max))
        return result;
    result.divides = true;
    result.dp = static_cast<int>(dp);
    if (result.dp != p.dp)
        result.note = QObject::tr("DP %1 -> %2 to keep %3 GPUs").arg(p.dp).arg(dp).arg(gpus);
    const long long perStep = static_cast<long long>(p.micro_batch) * dp;
    if (p.global_batch % perStep != 0)
        result.note += (result.note.isEmpty() ? QString() : QString("; ")) +
                       QObject::tr("global batch %1 is not a multiple of micro-batch %2 x DP %3 "
                                   "= %4: change the global batch or the micro-batch")
                           .arg(p.global_batch)
                           .arg(p.micro_batch)
                           .arg(dp)
                           .arg(perStep);
    return result;
}

PlanDocument::PlanDocument(QObject* parent) : QObject(parent)
{
    connect(&m_undo, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
    // A note belongs to the edit that left it: any later step, undo or redo clears it.
    connect(&m_undo, &QUndoStack::indexChanged, this, [this] { m_note.clear(); });
    // A save by rename (ours, another window's, an editor's) replaces the watched file: the
    // watch follows the name. Only a content change this document did not make is reported.
    connect(&m_watcher, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
        if (path != m_path)
            return;
        if (!m_watcher.files().contains(path) && QFileInfo::exists(path))
            m_watcher.addPath(path);
        if (changedOnDisk())
            emit fileChangedOnDisk();
    });
}

void PlanDocument::editDegreeKeepingGpus(Field field, int value)
{
    int ParallelLayout::*member = degreeOf(field);
    if (!member)
        return;
    const GpuCountKeeping keep = keepGpuCount(m_plan, field, value);
    const QString name = degreeName(field);
    QString description = QString("%1 = %2").arg(name).arg(value);
    if (keep.divides && keep.dp != m_plan.parallel.dp)
        description += tr(", DP %1 -> %2").arg(m_plan.parallel.dp).arg(keep.dp);
    const int dp = keep.dp;
    edit(description, field, [member, value, dp](Plan& plan) {
        plan.parallel.*member = value;
        plan.parallel.dp = dp;
    });
    m_note = keep.note.isEmpty() ? QString() : keep.change + ": " + keep.note;
}

PlanDocument::~PlanDocument()
{
    m_undo.blockSignals(true);
}

void PlanDocument::edit(const QString& description, Field field,
                        const std::function<void(Plan&)>& edit, int mergeKey,
                        const GraphDelta* drawingChange)
{
    Plan after = m_plan;
    edit(after);
    refreshDefaultFigures(&after);
    std::string error;
    finalizeCluster(&after.cluster, &error); // torus dimensions follow the chip count
    // An edit elsewhere that changes the cluster's shape (nodes, racks, preset, an import)
    // leaves the drawing behind; one of its cluster-wide fields (the spine, the node type, a
    // what-if) is carried into the drawing, which keeps its racks (empty ones too) and places.
    if (after.drawing && field != Field::Topology && after.cluster != m_plan.cluster &&
        !drawingDescribes(*after.drawing, after.cluster, HardwareCatalog::bundled())) {
        TopologyGraph carried;
        if (carryDrawing(*after.drawing, after.cluster, &carried, HardwareCatalog::bundled()))
            after.drawing = std::make_shared<const TopologyGraph>(std::move(carried));
        else
            after.drawing.reset();
    }
    m_undo.push(new EditCommand(this, description, field, mergeKey, m_plan, std::move(after),
                                drawingChange));
}

size_t PlanDocument::historyBytes() const
{
    size_t bytes = 0;
    for (int i = 0; i < m_undo.count(); ++i)
        bytes += static_cast<const EditCommand*>(m_undo.command(i))->bytes();
    return bytes;
}

void PlanDocument::setPlanFromHistory(const Plan& plan)
{
    m_plan = plan;
    emit planChanged();
}

void PlanDocument::reset(const Plan& plan, const QString& path)
{
    m_plan = plan;
    m_undo.clear();
    m_undo.setClean();
    bindFile(path);
    emit modifiedChanged(false);
    emit planChanged();
}

bool PlanDocument::open(const QString& path, QString* error)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!loadPlan(path.toStdString(), &plan, &errors, HardwareCatalog::bundled())) {
        QString message = QString::fromStdString(errors.front());
        for (size_t i = 1; i < errors.size() && i < 6; ++i)
            message += "\n" + QString::fromStdString(errors[i]);
        if (errors.size() > 6)
            message += QString("\n(and %1 more)").arg(errors.size() - 6);
        *error = message;
        return false;
    }
    reset(plan, path);
    return true;
}

bool PlanDocument::save(const QString& path, QString* error)
{
    std::string message;
    if (!savePlan(path.toStdString(), m_plan, &message, HardwareCatalog::bundled())) {
        *error = QString::fromStdString(message);
        return false;
    }
    m_undo.setClean();
    bindFile(path);
    return true;
}

void PlanDocument::bindFile(const QString& path)
{
    // The identity is taken right after the read or write: a change after it is someone
    // else's (the window's own saves update it before the watcher reports them).
    m_identity = path.isEmpty() ? FileIdentity() : fileIdentity(path);
    if (!m_watcher.files().isEmpty())
        m_watcher.removePaths(m_watcher.files());
    if (!path.isEmpty() && m_identity.exists)
        m_watcher.addPath(path);
    if (m_path != path) {
        m_path = path;
        emit pathChanged(m_path);
    }
}

bool PlanDocument::changedOnDisk() const
{
    return !m_path.isEmpty() && m_identity.known && !fileIdentity(m_path).sameContent(m_identity);
}

Plan examplePlan()
{
    Plan plan;
    std::string error;
    modelFromPreset("gpt3-175b", &plan.model, &error);
    ClusterOptions options;
    options.nodes = 8;
    clusterFromPreset("dgx-a100", options, &plan.cluster, &error, HardwareCatalog::bundled());
    plan.name = "GPT-3 175B on 8 DGX A100 nodes";
    ParallelLayout& p = plan.parallel;
    p.tp = 8;
    p.pp = 8;
    p.dp = 1;
    p.sequence_parallel = true;
    p.recompute = Recompute::Selective;
    p.interleave = 3;
    p.micro_batch = 1;
    p.global_batch = 64;
    plan.training.seq_len = 2048;
    plan.training.dtype = Dtype::FP16;
    plan.training.attention = AttentionKernel::Unfused;
    plan.parallel.tp_overlap = TpOverlap::None;
    plan.training.kernels = KernelStyle::Fused;
    plan.training.train_tokens = 3e11;
    plan.training.gpu_hour_usd = 2.0;
    plan.figures =
        defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan.cluster.gpu_id),
                             plan.training.optimizer, plan.training.dtype, plan.training.attention);
    return plan;
}

} // namespace paraplan::ui
