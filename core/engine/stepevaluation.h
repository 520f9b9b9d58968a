#pragma once

#include "collectivemodel.h"
#include "hardware.h"
#include "layercost.h"
#include "plan.h"
#include "stagememory.h"
#include "stepmodel.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <new>
#include <string>
#include <vector>

namespace paraplan::detail {

using layercost::Context;

// `value` in decimal at the end of `text` (as std::to_string writes it, with no temporary).
inline void appendNumber(std::string& text, long long value)
{
    char digits[24];
    const auto written = std::to_chars(digits, digits + sizeof digits, value);
    text.append(digits, written.ptr);
}

// countParameters(m), from this thread's last answer when the model's numbers are the same.
const ParameterCount& sharedParameterCount(const ModelSpec& m);

// This thread's buffer of the stage layer counts (an evaluation's; reused by the next).
std::vector<int>& stageScratch();

// Per-tier busy seconds of one GPU's links.
using TierBusy = std::array<double, 8>;

// The collective model's answer from this thread's cache of the engine's answers (a search
// asks the same group shapes over and over across layouts), else from the model.
const CollectiveResult& sharedCollective(unsigned long long engine, const CollectiveModel& model,
                                         CollectiveOp op, double bytes, int ranks, int stride);

// The collective answers of one evaluation. The collective model is a pure function of the
// request: an evaluation asks for the same request many times (each pipeline stage's
// data-parallel sync, most stages alike), so the answers are kept for the evaluation's length
// (a ring: the last 8 asked; a stage asks at most 4) and a repeat is a reference to the same bits.
class CollectiveMemo
{
public:
    CollectiveMemo() = default;
    CollectiveMemo(const CollectiveMemo&) = delete;
    CollectiveMemo& operator=(const CollectiveMemo&) = delete;
    ~CollectiveMemo()
    {
        for (size_t i = 0; i < m_count; ++i)
            entry(i).~Entry();
    }

    const CollectiveResult& get(unsigned long long engine, const CollectiveModel& model,
                                CollectiveOp op, double bytes, int ranks, int stride)
    {
        // Newest first: a stage's requests are most often its predecessor's.
        for (size_t n = 0, i = m_next; n < m_count; ++n) {
            i = i == 0 ? kSize - 1 : i - 1;
            const Entry& e = entry(i);
            if (e.op == op && e.bytes == bytes && e.ranks == ranks && e.stride == stride)
                return e.result;
        }
        // Slots are constructed when first used: most evaluations ask for a few requests.
        const size_t slot = m_next;
        if (m_count == kSize)
            entry(slot).~Entry();
        else
            ++m_count;
        m_next = (m_next + 1) % kSize;
        Entry* e = new (&m_storage[slot * sizeof(Entry)]) Entry{
            op, bytes, ranks, stride, sharedCollective(engine, model, op, bytes, ranks, stride)};
        return e->result;
    }

private:
    struct Entry
    {
        CollectiveOp op;
        double bytes;
        int ranks;
        int stride;
        CollectiveResult result;
    };
    static constexpr size_t kSize = 8; // a stage asks at most 4
    Entry& entry(size_t i)
    {
        return *std::launder(reinterpret_cast<Entry*>(&m_storage[i * sizeof(Entry)]));
    }

    alignas(Entry) unsigned char m_storage[kSize * sizeof(Entry)];
    size_t m_count = 0;
    size_t m_next = 0;
};

/// Charges `calls` of the collective `r` to the tiers it keeps busy, and names `group` the
/// tier's busiest where its share is the largest yet (stepcomm.cpp).
void addBusy(TierBusy* busy, std::array<const char*, 8>* groups, std::array<double, 8>* groupBusy,
             const CollectiveResult& r, double calls, const char* group);

// One evaluation of a plan: the context, the per-layer collectives and the stages it builds
// up, phase by phase (stepmodel.cpp: compute, stages, pipeline, metrics; stepcomm.cpp:
// collectives, shared links; stepcommdp.cpp: the data-parallel sync of a stage).
struct Evaluation
{
    Evaluation(const Plan& plan_, const ClusterSpec& cluster_, const CollectiveModel& model_,
               const GpuSpec& gpu_, const HardwareCatalog& catalog_, StepCost& cost_)
        : plan(plan_), cluster(cluster_), model(model_), catalog(catalog_), cost(cost_),
          m(plan_.model), p(plan_.parallel), tr(plan_.training), fig(plan_.figures), gpu(&gpu_),
          count(sharedParameterCount(m)), strides(groupStrides(p)), c{plan_, m, p},
          as(cost_.assumptions), b(cost_.breakdown), layersPerStage(stageScratch())
    {
        busiest.fill("");
    }

    void setup();
    void layerCollectives();
    void tensorParallel();
    void otherParallel();
    void moeDispatch();
    bool deepEpAcrossDomains(double tokenBytes, int epStride);
    void epOverlap();
    void stageSetup();
    void stages();
    void stageTimesAndStates(StageCost& st, int i, int denseHere);
    void stageInFlight(StageCost& st, int i, int denseHere);
    void mtpOnLastStage(StageCost& st) const;
    void pipeline();
    void dataParallel();
    void zero3Stage(const StageCost& st, bool report, int dpStride, double* exposed,
                    double* overlapped, CollectiveCost* gather, CollectiveCost* reduce);
    void bucketedStage(const StageCost& st, int i, bool report, int dpStride, double* exposed,
                       double* overlapped, CollectiveCost* gather, CollectiveCost* reduce);
    void optimizer();
    void criticalCollectives();
    void sharedLinks();
    void metrics();
    void memoryWarning(); // the "does not fit" or "tight" warning

    const CollectiveResult& collective(CollectiveOp op, double bytes, int ranks, int stride) const
    {
        return memo.get(engineSerial, model, op, bytes, ranks, stride);
    }
    const StageCost& criticalStage() const
    {
        return cost.stages[static_cast<size_t>(cost.critical_stage)];
    }

    unsigned long long engineSerial = 0; // StepEngine's serial: which model the answers are of
    double gemmReference = 0; // kernels::gemmReferenceEfficiency of the GPU, from the engine
    const std::string* hbmText = nullptr; // units::formatNumber(gpu->hbm_GiB), from the engine
    const Plan& plan;
    const ClusterSpec& cluster;
    const CollectiveModel& model;
    const HardwareCatalog& catalog;
    StepCost& cost;
    const ModelSpec& m;
    const ParallelLayout& p;
    const TrainingSettings& tr;
    const EngineFigures& fig;
    const GpuSpec* gpu;
    const ParameterCount count;
    const GroupStrides strides;
    Context c;
    StepAssumptions& as;
    StepBreakdown& b;

    // Link use of the critical GPU, by tier, and the group that loads each tier most.
    TierBusy busy{};
    std::array<const char*, 8> busiest{};
    std::array<double, 8> busiestSeconds{};

    // Collectives of one layer and one micro-batch.
    double activation = 0;
    double passes = 2; // forward, backward, and the forward again under full recompute
    CollectiveCost tpCost;
    double tpPerLayer = 0;        // communication time, one layer, one micro-batch
    double tpExposedPerLayer = 0; // the part left on the critical path
    double tpCallsPerLayer = 0;
    CollectiveResult tpRs;
    CollectiveCost cpCost;
    double cpPerLayer = 0;
    // MoE dispatch (stepcomm.cpp, moeDispatch): the EP collective (all-to-all, or the
    // all-gather of the allgather dispatcher) and its combine, the expert-TP all-gather and
    // reduce-scatter of the alltoall dispatcher; per MoE layer and micro-batch, all passes.
    CollectiveCost epCost;
    CollectiveResult epCombine;
    CollectiveCost etpCost;
    CollectiveResult etpRs;
    double epPerLayer = 0, epExposedPerLayer = 0, epCallsPerLayer = 0, etpCallsPerLayer = 0;
    double epHiddenShare = 0; // of the EP time, the share the EP overlap hides
    int expertDpStride = 1;   // the expert data-parallel group's rank stride (EP stride x ep)
    CollectiveCost expertReduce, expertGather; // its gradient sync, shards' gather (reported)
    // TP collectives of an MoE layer: the attention's, and the shared experts' (the experts'
    // own gather over expert TP is the dispatcher's).
    double tpMoePerLayer = 0, tpMoeExposedPerLayer = 0, tpMoeCallsPerLayer = 0;
    CollectiveCost ppCost;
    double ppPerMicrobatch = 0;

    // Stages.
    std::vector<int>& layersPerStage; // stageScratch()
    LayoutMemoryTerms mem; // stagememory.h: micro-batches, bytes per state, ZeRO shards, ...
    double hbmBytes = 0;
    double usableBytes = 0; // hbmBytes less the runtime reserve: what the stages may fill
    // The LM head's forward and backward (layercost::lmHeadSeconds), an MTP module's
    // projection's (mtpProjectionSeconds), a sliding layer's share of causal attention work.
    double lmHead = 0, mtpProjection = 0, slidingShare = 1;
    double sumMicrobatch = 0, maxMicrobatch = 0;

    // Data-parallel sync: the collectives' times of a stage's bucketed sync by its parameter
    // count (params -1: unused), the last few asked.
    struct BucketTimes
    {
        double params = -1, expertParams = 0;
        double reduce = 0; // the gradient all-reduce or reduce-scatter (experts' included)
        double bucket = 0; // its last bucket (dp_overlap)
        double gather = 0; // the updated parameters' all-gather (ZeRO >= 1)
    };
    std::array<BucketTimes, 4> bucketTimes{};
    size_t bucketTimesNext = 0;

    mutable CollectiveMemo memo; // collective()'s answers
};

} // namespace paraplan::detail
