// The engine's data-parallel sync of one pipeline stage: ZeRO-3 / FSDP's per-layer gathers and
// reduce-scatters, and the bucketed gradient sync of ZeRO 0-2 with the routed experts' sync
// over their own expert data-parallel group (the rest of the communication: stepcomm.cpp).
#include "stepevaluation.h"

#include <algorithm>
#include <cmath>

namespace paraplan::detail {

void Evaluation::zero3Stage(const StageCost& st, bool report, int dpStride, double* exposed,
                            double* overlapped, CollectiveCost* gather, CollectiveCost* reduce)
{
    const double reduceBytes = as.grad_reduce_bytes;
    // ZeRO-3 / FSDP: every layer's parameters are all-gathered before its forward
    // and again before its backward (and recompute), and its gradients
    // reduce-scattered after its backward, each of the per-layer size; the next
    // `zero3_prefetch` layers' gathers run during this layer's compute (Zhao et al.
    // 2023, PyTorch FSDP; Rajbhandari et al. 2020, ZeRO-3 prefetch).
    const int layers = std::max(1, st.layers);
    // The routed experts are sharded over their own expert data-parallel group (Megatron-FSDP's
    // and torchtitan's expert meshes, as ZeRO 1-2's expert sync): they are gathered and
    // reduce-scattered there, the rest over DP x CP, one after the other on each layer.
    const bool experts = st.expert_params > 0 &&
                         (mem.expertShardRanks != mem.shardRanks || expertDpStride != dpStride);
    const double layerParams = (experts ? st.params - st.expert_params : st.params) / layers;
    // Copies: the experts' two collectives below go through the evaluation's memo too.
    const CollectiveResult g =
        collective(CollectiveOp::AllGather, stageGatherBytes(mem, st, false, !experts) / layers,
                   mem.shardRanks, dpStride);
    const CollectiveResult r = collective(CollectiveOp::ReduceScatter, layerParams * reduceBytes,
                                          mem.shardRanks, dpStride);
    double gatherTime = g.time_s;
    double scatterTime = r.time_s;
    CollectiveResult ge;
    CollectiveResult re;
    if (experts && mem.expertShardRanks > 1) {
        const double expertLayer = st.expert_params / layers;
        ge = collective(CollectiveOp::AllGather, stageGatherBytes(mem, st, true) / layers,
                        mem.expertShardRanks, expertDpStride);
        re = collective(CollectiveOp::ReduceScatter, expertLayer * reduceBytes,
                        mem.expertShardRanks, expertDpStride);
        gatherTime += ge.time_s;
        scatterTime += re.time_s;
    }
    // Under PP the gathered stage stays resident across micro-batches: one gather
    // and one reduce-scatter per layer per step; else per micro-batch.
    const double rounds = p.pp > 1 ? 1.0 : mem.microbatches;
    const double layerFwd = st.forward_s / layers;
    const double layerBwd = (st.backward_s + st.recompute_s) / layers;
    // Forward: the first gather is exposed; afterwards each layer's gather runs
    // during the layers ahead of it, and whatever the link cannot keep up with
    // shows (prefetching deeper smooths uneven layers but adds no bandwidth).
    const double fwdExposed = gatherTime + (layers - 1) * std::max(0.0, gatherTime - layerFwd);
    // Backward: a gather and a reduce-scatter share the link per layer; the last
    // reduce-scatter is exposed.
    const double bwdExposed =
        scatterTime + (layers - 1) * std::max(0.0, gatherTime + scatterTime - layerBwd);
    const double gathers = rounds * 2 * layers;
    const double scatters = rounds * layers;
    // Gathered shards are copied out into the parameters (read and write 16 bits)
    // and gradients copied into the reduce-scatter buffer in the reduce dtype, on
    // the compute stream (FSDP2's copy-out/copy-in; DeepSpeed's flat buffers).
    const double copyBytes =
        st.params / layers *
        (gathers * 2 * mem.gatherBytes + scatters * (mem.gatherBytes + reduceBytes));
    *exposed =
        (p.pp > 1 ? 1.0 : double(mem.microbatches)) * (fwdExposed + bwdExposed) + copyBytes / c.hbm;
    if (p.zero3_prefetch == 0)
        *exposed = gathers * gatherTime + scatters * scatterTime;
    *overlapped = std::max(0.0, gathers * gatherTime + scatters * scatterTime - *exposed);
    if (report) {
        *gather = CollectiveCost{"dp",
                                 "ZeRO-3 / FSDP per-layer parameter all-gather, "
                                 "forward and backward",
                                 g,
                                 dpStride,
                                 gathers,
                                 gathers * g.time_s,
                                 0};
        *reduce = CollectiveCost{"dp",     "per-layer gradient reduce-scatter (ZeRO-3 / FSDP)",
                                 r,        dpStride,
                                 scatters, scatters * r.time_s,
                                 0};
        addBusy(&busy, &busiest, &busiestSeconds, g, gathers, "dp");
        addBusy(&busy, &busiest, &busiestSeconds, r, scatters, "dp");
        expertReduce = expertGather = CollectiveCost{};
        if (ge.ok && re.ok) {
            expertGather = CollectiveCost{"dp",
                                          "ZeRO-3 / FSDP per-layer expert all-gather (expert "
                                          "DP), forward and backward",
                                          ge,
                                          expertDpStride,
                                          gathers,
                                          gathers * ge.time_s,
                                          0};
            expertReduce = CollectiveCost{"dp",
                                          "per-layer expert gradient reduce-scatter (expert DP, "
                                          "ZeRO-3 / FSDP)",
                                          re,
                                          expertDpStride,
                                          scatters,
                                          scatters * re.time_s,
                                          0};
            addBusy(&busy, &busiest, &busiestSeconds, ge, gathers, "dp");
            addBusy(&busy, &busiest, &busiestSeconds, re, scatters, "dp");
        }
    }
}

namespace {

// The routed experts' bucketed sync over the expert data-parallel group, added to the
// stage's gradient sync and gather times; `report` keeps the collectives.
void expertBucketSync(Evaluation& e, const StageCost& st, bool report, CollectiveOp op,
                      double* reduce, double* gather)
{
    const int ranks = e.mem.expertShardRanks;
    const int stride = e.expertDpStride;
    const bool zero = e.p.zero >= 1;
    const CollectiveResult r =
        report ? e.collective(op, st.expert_params * e.as.grad_reduce_bytes, ranks, stride)
               : sharedCollective(e.engineSerial, e.model, op,
                                  st.expert_params * e.as.grad_reduce_bytes, ranks, stride);
    *reduce += r.time_s;
    CollectiveResult g;
    if (zero) {
        const double bytes = stageGatherBytes(e.mem, st, true);
        g = report ? e.collective(CollectiveOp::AllGather, bytes, ranks, stride)
                   : sharedCollective(e.engineSerial, e.model, CollectiveOp::AllGather, bytes,
                                      ranks, stride);
        *gather += g.time_s;
    }
    if (!report)
        return;
    e.expertReduce = CollectiveCost{"dp",
                                    e.p.zero == 0 ? "expert gradient all-reduce (expert DP)"
                                                  : "expert gradient reduce-scatter (expert DP)",
                                    r,
                                    stride,
                                    1,
                                    r.time_s,
                                    0};
    addBusy(&e.busy, &e.busiest, &e.busiestSeconds, r, 1, "dp");
    if (zero) {
        e.expertGather = CollectiveCost{
            "dp", "updated expert shards all-gathered (expert DP)", g, stride, 1, g.time_s, 0};
        addBusy(&e.busy, &e.busiest, &e.busiestSeconds, g, 1, "dp");
    }
}

void splitExposed(CollectiveCost* group, CollectiveCost* experts, double total)
{
    if (experts->calls_per_step <= 0 || !(total > 0))
        return;
    experts->exposed_s = group->exposed_s * experts->total_s / total;
    group->exposed_s -= experts->exposed_s;
}

} // namespace

void Evaluation::bucketedStage(const StageCost& st, int i, bool report, int dpStride,
                               double* exposed, double* overlapped, CollectiveCost* gather,
                               CollectiveCost* reduce)
{
    const double reduceBytes = as.grad_reduce_bytes;
    // The routed experts sync over the expert data-parallel group (Megatron-Core's expert
    // gradient buffers, the distributed optimizer's expert shards), the rest over DP x CP.
    const double expertParams = st.expert_params;
    const double bytes = (st.params - expertParams) * reduceBytes;
    const int expertRanks = mem.expertShardRanks;
    const bool expertSync = expertParams > 0 && expertRanks > 1;
    const CollectiveOp op = p.zero == 0 ? CollectiveOp::AllReduce : CollectiveOp::ReduceScatter;
    // The collectives' times: looked up for the stage reported (its results are kept), else
    // from this evaluation's times by parameter count (most stages hold the same layers).
    const CollectiveResult* r = nullptr;
    const CollectiveResult* g = nullptr; // in the evaluation's memo, valid for this stage
    BucketTimes* known = nullptr;
    if (!report) {
        for (BucketTimes& t : bucketTimes) {
            if (t.params == st.params && t.expertParams == expertParams) {
                known = &t;
                break;
            }
        }
    }
    BucketTimes times;
    if (known) {
        times = *known;
    } else if (!report) {
        // Only their times: read from this thread's answers, not copied into the memo.
        auto time = [&](CollectiveOp o, double b) {
            return sharedCollective(engineSerial, model, o, b, mem.shardRanks, dpStride).time_s;
        };
        times.reduce = time(op, bytes);
        if (p.dp_overlap)
            times.bucket = time(op, std::min(bytes, fig.dp_bucket_bytes.value));
        if (p.zero >= 1)
            times.gather = time(CollectiveOp::AllGather, stageGatherBytes(mem, st, false));
        if (expertSync)
            expertBucketSync(*this, st, false, op, &times.reduce, &times.gather);
    } else {
        r = &collective(op, bytes, mem.shardRanks, dpStride);
        times.reduce = r->time_s;
        if (p.dp_overlap)
            times.bucket =
                collective(op, std::min(bytes, fig.dp_bucket_bytes.value), mem.shardRanks, dpStride)
                    .time_s;
        if (p.zero >= 1) {
            g = &collective(CollectiveOp::AllGather, stageGatherBytes(mem, st, false),
                            mem.shardRanks, dpStride);
            times.gather = g->time_s;
        }
        expertReduce = expertGather = CollectiveCost{};
        if (expertSync)
            expertBucketSync(*this, st, true, op, &times.reduce, &times.gather);
    }
    if (!known) {
        times.params = st.params;
        times.expertParams = expertParams;
        bucketTimes[bucketTimesNext] = times;
        bucketTimesNext = (bucketTimesNext + 1) % bucketTimes.size();
    }
    double rsExposed = times.reduce;
    if (p.dp_overlap) {
        // Overlap with this stage's last micro-batch backward; stages after the
        // first finish earlier by the backward passes still running upstream.
        const double window = st.backward_s + st.recompute_s;
        const double slack = i * (st.backward_s + st.recompute_s) / p.interleave;
        rsExposed = std::max(times.bucket, times.reduce - window - slack);
    }
    double gatherExposed = 0;
    if (p.zero >= 1) {
        // The updated parameters, gathered during the next step's first forward.
        gatherExposed = p.dp_overlap ? std::max(0.0, times.gather - st.forward_s) : times.gather;
    }
    *exposed = rsExposed + gatherExposed;
    *overlapped = std::max(0.0, times.reduce - rsExposed) +
                  (p.zero >= 1 ? std::max(0.0, times.gather - gatherExposed) : 0.0);
    if (report) {
        *reduce = CollectiveCost{
            "dp",     p.zero == 0 ? "gradient all-reduce" : "gradient reduce-scatter (ZeRO)",
            *r,       dpStride,
            1,        r->time_s,
            rsExposed};
        addBusy(&busy, &busiest, &busiestSeconds, *r, 1, "dp");
        if (g) {
            *gather = CollectiveCost{
                "dp",         "updated parameter shards all-gathered", *g, dpStride, 1, g->time_s,
                gatherExposed};
            addBusy(&busy, &busiest, &busiestSeconds, *g, 1, "dp");
        }
        // The exposed time shared with the experts' sync in proportion to link time.
        splitExposed(reduce, &expertReduce, times.reduce);
        splitExposed(gather, &expertGather, times.gather);
    }
}

} // namespace paraplan::detail
