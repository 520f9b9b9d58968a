// The engine's communication phases: TP, CP, EP and PP collectives per layer, data-parallel
// and ZeRO sync per stage, the critical stage's collectives, and the shared-link floor.
#include "gemmshapes.h"
#include "stepevaluation.h"

#include "units.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace paraplan::detail {

void addBusy(TierBusy* busy, std::array<const char*, 8>* groups, std::array<double, 8>* groupBusy,
             const CollectiveResult& r, double calls, const char* group)
{
    if (!(calls > 0) || !r.ok)
        return;
    auto add = [&](Tier tier, double seconds) {
        const size_t i = static_cast<size_t>(tier);
        (*busy)[i] += seconds;
        if (seconds > (*groupBusy)[i]) {
            (*groupBusy)[i] = seconds;
            (*groups)[i] = group;
        }
    };
    bool network = false;
    if (r.phase_count == 0) {
        add(r.bottleneck, calls * r.bandwidth_time_s);
        network = r.bottleneck == Tier::Network || r.bottleneck == Tier::Spine;
    }
    for (int i = 0; i < r.phase_count; ++i) {
        const CollectivePhase& ph = r.phases[static_cast<size_t>(i)];
        add(ph.tier, calls * ph.time_s);
        network = network || ph.tier == Tier::Network || ph.tier == Tier::Spine;
    }
    // A ring across nodes keeps the NICs busy as long as it runs, even when NVLink is the
    // slower of its links.
    if (!network && r.nodes_spanned > 1)
        add(Tier::Network, calls * r.bandwidth_time_s);
}

namespace {

// Whether a collective keeps a tier busy (the tiers addBusy charges it to).
bool touches(const CollectiveResult& r, Tier tier)
{
    if (r.bottleneck == tier)
        return true;
    for (int i = 0; i < r.phase_count; ++i) {
        if (r.phases[static_cast<size_t>(i)].tier == tier)
            return true;
    }
    return tier == Tier::Network && r.nodes_spanned > 1;
}

// The stride of the slowest hop of a chain or ring of `ranks` GPUs `stride` apart (CP's ring,
// PP's stages): a chain that spans more GPUs than an NVLink domain has a hop across the
// network even when one hop's two GPUs fit in a domain (two NVL72 racks: 64 and 80).
int slowestHopStride(const ClusterSpec& cluster, int ranks, int stride)
{
    const int domain = cluster.nvlinkDomainGpus();
    if (!cluster.is_torus && static_cast<long long>(ranks) * stride > domain)
        return std::max(stride, domain);
    return stride;
}

} // namespace

void Evaluation::layerCollectives()
{
    activation = c.tokens * m.hidden * c.actBytes;
    passes = p.recompute == Recompute::Full ? 3 : 2;
    tensorParallel();
    otherParallel();
}

void Evaluation::tensorParallel()
{
    if (p.tp > 1) {
        // Megatron: two all-reduces forward and two backward per layer (reduce-scatter +
        // all-gather pairs with sequence parallelism), two more when the forward is recomputed.
        const CollectiveOp op = c.sp ? CollectiveOp::AllGather : CollectiveOp::AllReduce;
        tpCost.group = "tp";
        tpCost.purpose = c.sp ? "sequence-parallel all-gathers and reduce-scatters (half the "
                                "calls each) around attention and MLP, forward and backward"
                              : "all-reduce after attention and MLP, forward and backward";
        tpCost.call = collective(op, activation, p.tp, strides.tp);
        // Its place at the head of the collectives, filled in by criticalCollectives().
        cost.collectives.emplace_back();
        tpCost.stride = strides.tp;
        double each = tpCost.call.time_s;
        if (c.sp) {
            tpRs = collective(CollectiveOp::ReduceScatter, activation, p.tp, strides.tp);
            each = tpCost.call.time_s + tpRs.time_s; // one AG + one RS per all-reduce replaced
        }
        tpPerLayer = 2 * passes * each;
        tpCallsPerLayer = 2 * passes * (c.sp ? 2 : 1);
        tpExposedPerLayer = tpPerLayer;
        if (as.tp_overlap) {
            // Each collective is split into tp chunks pipelined with its GEMM (Wang et al.
            // 2022, "Overlap communication with dependent computation via decomposition";
            // Megatron-Core --tp-comm-overlap): one chunk stays exposed, and the rest hides
            // behind the GEMMs as far as they last.
            const LayerCompute& l = cost.dense_layer;
            const double gemm = l.gemm_forward_s * (passes - 1) + l.gemm_backward_s;
            tpExposedPerLayer = std::max(tpPerLayer / p.tp, tpPerLayer - gemm);
        }
        // An MoE layer keeps the attention's pair of TP collectives; its MLP's pair is the
        // dispatcher's gather over expert TP (moeDispatch), unless shared experts (a TP-split
        // dense MLP, Megatron-Core SharedExpertMLP) bring their own.
        const double moeShare = m.shared_expert_ffn_hidden > 0 ? 1.0 : 0.5;
        tpMoePerLayer = moeShare * tpPerLayer;
        tpMoeExposedPerLayer = moeShare * tpExposedPerLayer;
        tpMoeCallsPerLayer = moeShare * tpCallsPerLayer;
        cost.tp_within_node = !cluster.is_torus && tpCost.call.nodes_spanned == 1;
        if (!cost.tp_within_node) {
            std::string& text = cost.addWarning();
            text += "TP = ";
            appendNumber(text, p.tp);
            text += " spans ";
            appendNumber(text, tpCost.call.nodes_spanned);
            text += " nodes: its collectives cross the network";
        }
    }
}

void Evaluation::otherParallel()
{
    if (p.cp > 1) {
        // Ring attention passes each rank's K and V chunk around the CP group (c - 1 times
        // forward); the backward passes K, V and their gradients: 3 (c - 1) sends in all. A
        // ring step lasts as long as its slowest hop: a group that spans nodes has a hop
        // across the network.
        const double kvChunk = 2 * c.tokens * c.kvLocal * c.d * c.actBytes;
        cpCost.group = "cp";
        cpCost.purpose = "ring attention: K and V chunks (and their gradients) around the group";
        cpCost.call = collective(CollectiveOp::SendRecv, kvChunk, 2,
                                 slowestHopStride(cluster, p.cp, strides.cp));
        cpCost.stride = strides.cp;
        cpPerLayer = 3.0 * (p.cp - 1) * cpCost.call.time_s;
    }
    if (m.isMoe() && static_cast<long long>(p.ep) * p.expertTp() > 1) {
        moeDispatch();
        epOverlap();
    }
    if (p.pp > 1) {
        // One activation forward and one gradient backward per micro-batch and stage
        // boundary (scatter-gathered across the TP ranks, as Megatron does); v times with
        // interleaving.
        ppCost.group = "pp";
        ppCost.purpose = "activations forward and gradients backward between stages";
        // Every stage boundary costs the slowest one, as CP's ring steps do.
        ppCost.call = collective(CollectiveOp::SendRecv, activation / p.tp, 2,
                                 slowestHopStride(cluster, p.pp, strides.pp));
        ppCost.stride = strides.pp;
        ppPerMicrobatch = 2.0 * p.interleave * ppCost.call.time_s;
    }
}

namespace {

// The expected number of distinct ranks a token's k experts sit on, E experts spread evenly
// over `ranks`, chosen without repetition: ranks x (1 - C(E - E/ranks, k) / C(E, k)).
double distinctRanks(double experts, double ranks, double k)
{
    const double perRank = experts / ranks;
    double none = 1; // P(no expert of a given rank chosen)
    for (int i = 0; i < static_cast<int>(k); ++i)
        none *= std::max(0.0, experts - perRank - i) / (experts - i);
    return ranks * (1 - none);
}

} // namespace

void Evaluation::moeDispatch()
{
    // Megatron-Core's token dispatchers (megatron/core/transformer/moe/token_dispatcher.py,
    // Megatron-LM 7094270c6): the MoE layer takes the rank's sequence-parallel shard; alltoall
    // permutes it into k copies per token, all-to-alls them over EP and all-gathers them over
    // expert TP (combine: reduce-scatter, all-to-all back); allgather gathers every token over
    // expert TP x EP and reduce-scatters the outputs; DeepEP sends a token once per GPU that
    // holds one of its experts. The busiest expert rank (load) sets the pace.
    const int etp = p.expertTp();
    const double k = m.experts_per_token;
    const double shard = moeShardTokens(p, c.tokens);
    const double token = m.hidden * c.actBytes;
    const double load = c.moeLoad;
    const MoeDispatcher dispatcher = resolvedMoeDispatcher(plan);
    // The expert grid (Megatron-Core parallel_state, order tp-ep-dp-pp): expert TP innermost,
    // EP next; with expert TP = TP the EP ranks are those of cp x dp.
    const int etpStride = strides.tp;
    const int epStride = strides.tp == 1 ? etp : etp == p.tp ? strides.dp : strides.tp * etp;
    epCost.group = "ep";
    etpCost.group = "ep";
    epCost.stride = epStride;
    etpCost.stride = etpStride;
    expertDpStride = epStride * std::max(1, p.ep);
    double perPass = 0;
    epCallsPerLayer = etpCallsPerLayer = 0;
    if (dispatcher == MoeDispatcher::AllGather) {
        const int ranks = etp * p.ep;
        const double gathered = shard * ranks * token;
        epCost.purpose = "allgather dispatcher: every token all-gathered over expert TP x EP, "
                         "the outputs reduce-scattered back, forward and backward";
        epCost.call = collective(CollectiveOp::AllGather, gathered, ranks, etpStride);
        epCombine = collective(CollectiveOp::ReduceScatter, gathered, ranks, etpStride);
        perPass = epCost.call.time_s + epCombine.time_s;
        epCallsPerLayer = 2 * passes;
    } else {
        if (p.ep > 1) {
            const double copies =
                dispatcher == MoeDispatcher::DeepEP ? distinctRanks(m.experts, p.ep, k) : k;
            epCost.purpose = dispatcher == MoeDispatcher::DeepEP
                                 ? "DeepEP dispatch and combine: each token once per GPU "
                                   "holding one of its experts, forward and backward"
                                 : "alltoall dispatcher: k copies of each token to their "
                                   "experts' EP ranks and back, forward and backward";
            if (dispatcher != MoeDispatcher::DeepEP ||
                !deepEpAcrossDomains(shard * token * load, epStride))
                epCost.call = collective(CollectiveOp::AllToAll, shard * copies * token * load,
                                         p.ep, epStride);
            epCombine = epCost.call;
            perPass += 2 * epCost.call.time_s;
            epCallsPerLayer = 2 * passes;
        }
        if (etp > 1) {
            const double gathered = etp * shard * k * token * load;
            etpCost.purpose = "the dispatched tokens all-gathered over expert TP, their "
                              "outputs reduce-scattered, forward and backward";
            etpCost.call = collective(CollectiveOp::AllGather, gathered, etp, etpStride);
            etpRs = collective(CollectiveOp::ReduceScatter, gathered, etp, etpStride);
            perPass += etpCost.call.time_s + etpRs.time_s;
            etpCallsPerLayer = 2 * passes;
        }
    }
    epPerLayer = passes * perPass;
}

// DeepEP's internode kernels and HybridEP across NVLink domains (deepseek-ai/DeepEP README,
// "normal kernels": RDMA to the same local rank of each target node, NVLink forwarding inside
// it): a token crosses the network once per remote domain holding one of its experts, then
// reaches that domain's GPUs over NVLink, the two legs pipelined; the longer one sets the pace.
// False (nothing set) where the EP group sits in one domain or does not split evenly over them.
bool Evaluation::deepEpAcrossDomains(double tokenBytes, int epStride)
{
    const int domain = cluster.nvlinkDomainGpus();
    const long long span = static_cast<long long>(p.ep) * epStride;
    if (cluster.is_torus || span <= domain || domain % epStride != 0)
        return false;
    const int inDomain = std::max(1, domain / epStride); // EP ranks sharing a domain
    const int domains = p.ep / inDomain;
    if (domains < 2 || domains * inDomain != p.ep)
        return false;
    const double k = m.experts_per_token;
    const CollectiveResult rdma =
        collective(CollectiveOp::AllToAll, tokenBytes * distinctRanks(m.experts, domains, k),
                   domains, inDomain * epStride);
    const CollectiveResult local =
        inDomain > 1
            ? collective(CollectiveOp::AllToAll, tokenBytes * distinctRanks(m.experts, p.ep, k),
                         inDomain, epStride)
            : CollectiveResult{};
    epCost.call = local.ok && local.time_s > rdma.time_s ? local : rdma;
    epCost.purpose = "DeepEP / HybridEP dispatch and combine across NVLink domains: each token "
                     "once per remote domain holding one of its experts over the network, then "
                     "over NVLink to those GPUs, forward and backward";
    return true;
}

void Evaluation::epOverlap()
{
    // EP A2A overlap (Megatron-Core --overlap-moe-expert-parallel-comm, its combined 1F1B
    // schedule; DeepEP's hooks): a micro-batch's dispatch and combine run during another
    // micro-batch's compute of the same layer, forward beside backward. The micro-batches of
    // the pipeline's warm-up and cool-down have no partner (one at pp = 1, pp - 1 otherwise).
    epExposedPerLayer = epPerLayer;
    epHiddenShare = 0;
    if (p.ep_overlap != EpOverlap::A2a || epPerLayer <= 0)
        return;
    const double microbatches = std::max(1, p.microBatches());
    const double unpaired = std::min(1.0, std::max(1, p.pp - 1) / microbatches);
    const LayerCompute& l = cost.moe_layer;
    const double partner = l.forward_s + l.backward_s + l.recompute_s;
    epExposedPerLayer =
        unpaired * epPerLayer + (1 - unpaired) * std::max(0.0, epPerLayer - partner);
    epHiddenShare = 1 - epExposedPerLayer / epPerLayer;
}

void Evaluation::dataParallel()
{
    // Data-parallel sync over the DP x CP ranks, which hold the same parameters: within a
    // shard group (all of them unless HSDP), then across the replicas.
    const int dpRanks = p.dp * p.cp;
    const int dpStride = p.cp > 1 ? std::min(strides.cp, strides.dp) : strides.dp;
    const int replicas = dpRanks / std::max(1, mem.shardRanks);
    const double commShare = fig.comm_sm_share.value;
    const double reduceBytes = as.grad_reduce_bytes;
    if (dpRanks > 1) {
        CollectiveCost reduce;
        CollectiveCost gather;
        CollectiveCost replicate;
        const bool perLayer = p.zero >= 3;
        // One stage's sync, exposed; `report` fills the collectives and the links' load.
        auto stageSync = [&](int i, bool report) {
            const StageCost& st = cost.stages[static_cast<size_t>(i)];
            double exposed = 0;
            double overlapped = 0;
            if (perLayer)
                zero3Stage(st, report, dpStride, &exposed, &overlapped, &gather, &reduce);
            else
                bucketedStage(st, i, report, dpStride, &exposed, &overlapped, &gather, &reduce);
            double replicaExposed = 0;
            if (replicas > 1) {
                // HSDP: each shard's gradients all-reduced across the replicas, after the
                // backward (hidden behind the remaining backward as far as it lasts).
                const double shardBytes = st.params * reduceBytes / mem.shardRanks;
                const CollectiveResult a = collective(CollectiveOp::AllReduce, shardBytes, replicas,
                                                      dpStride * mem.shardRanks);
                replicaExposed =
                    p.dp_overlap ? std::max(0.0, a.time_s - st.backward_s / 2) : a.time_s;
                overlapped += a.time_s - replicaExposed;
                if (report) {
                    replicate = CollectiveCost{"dp",
                                               "HSDP: gradient shards all-reduced across "
                                               "replica groups",
                                               a,
                                               dpStride * mem.shardRanks,
                                               1,
                                               a.time_s,
                                               replicaExposed};
                    addBusy(&busy, &busiest, &busiestSeconds, a, 1, "dp");
                }
            }
            // What the run fails to hide stays exposed; the hidden part takes SMs from the
            // compute it hides behind.
            const double hiddenShare = fig.overlap_fraction.value;
            const double unhidden = (1 - hiddenShare) * overlapped;
            exposed += replicaExposed + unhidden + commShare * hiddenShare * overlapped;
            if (report) {
                const double sm = unhidden + commShare * hiddenShare * overlapped;
                if (perLayer) {
                    // Split the exposed time between the gathers and the scatters (the
                    // experts' too) by their link time.
                    const double experts = expertGather.total_s + expertReduce.total_s;
                    const double total = gather.total_s + reduce.total_s + experts;
                    const double base = exposed - replicaExposed;
                    gather.exposed_s = total > 0 ? base * gather.total_s / total : 0;
                    expertGather.exposed_s = total > 0 ? base * expertGather.total_s / total : 0;
                    expertReduce.exposed_s = total > 0 ? base * expertReduce.total_s / total : 0;
                    reduce.exposed_s =
                        base - gather.exposed_s - expertGather.exposed_s - expertReduce.exposed_s;
                } else {
                    reduce.exposed_s += sm;
                }
            }
            return exposed;
        };
        // The step waits for the slowest stage's sync: that stage's collectives are the ones
        // reported, so the table's exposed times add up to the step's DP term (the critical
        // stage's when no stage is slower).
        // Without pipeline stages there is one sync: reported at once, not costed twice.
        int slowest = cost.critical_stage;
        if (p.pp > 1) {
            double worst = stageSync(slowest, false);
            for (int i = 0; i < p.pp; ++i) {
                const double exposed = i == cost.critical_stage ? worst : stageSync(i, false);
                if (exposed > worst) {
                    worst = exposed;
                    slowest = i;
                }
            }
        }
        b.dp_comm_exposed_s = stageSync(slowest, true);
        cost.collectives.push_back(reduce);
        if (p.zero >= 1)
            cost.collectives.push_back(gather);
        // The experts' sync is in the DP group's exposed time (one window hides both).
        if (expertReduce.calls_per_step > 0)
            cost.collectives.push_back(expertReduce);
        if (expertGather.calls_per_step > 0)
            cost.collectives.push_back(expertGather);
        if (replicas > 1)
            cost.collectives.push_back(replicate);
    }
}

void Evaluation::criticalCollectives()
{
    const StageCost& critical = criticalStage();
    // The collectives of the critical stage, with their totals.
    // The last stage's multi-token-prediction layers run the collectives of their kind.
    const bool mtp = cost.critical_stage == p.pp - 1 && m.mtp_layers > 0;
    const bool mtpMoe = mtp && m.isMoeLayer(m.layers - 1);
    const double moeCritical = critical.moe_layers + (mtpMoe ? m.mtp_layers : 0);
    const double layersCritical = critical.layers + (mtp ? m.mtp_layers : 0);
    if (p.tp > 1) {
        const double denseCritical = layersCritical - moeCritical;
        tpCost.calls_per_step = mem.microbatches * denseCritical * tpCallsPerLayer +
                                mem.microbatches * moeCritical * tpMoeCallsPerLayer;
        tpCost.total_s = mem.microbatches * denseCritical * tpPerLayer +
                         mem.microbatches * moeCritical * tpMoePerLayer;
        tpCost.exposed_s = mem.microbatches * critical.tp_comm_s;
        if (c.sp) {
            addBusy(&busy, &busiest, &busiestSeconds, tpCost.call, tpCost.calls_per_step / 2, "tp");
            addBusy(&busy, &busiest, &busiestSeconds, tpRs, tpCost.calls_per_step / 2, "tp");
        } else {
            addBusy(&busy, &busiest, &busiestSeconds, tpCost.call, tpCost.calls_per_step, "tp");
        }
        cost.collectives.front() = tpCost; // the place tensorParallel() kept
    }
    if (p.cp > 1) {
        cpCost.calls_per_step = mem.microbatches * layersCritical * 3.0 * (p.cp - 1);
        cpCost.total_s = cpCost.calls_per_step * cpCost.call.time_s;
        cpCost.exposed_s = mem.microbatches * critical.cp_comm_exposed_s;
        addBusy(&busy, &busiest, &busiestSeconds, cpCost.call, cpCost.calls_per_step, "cp");
        cost.collectives.push_back(cpCost);
    }
    if (epPerLayer > 0) {
        // The dispatch's collectives in their shares of the EP time; the overlap hides the
        // same share of each.
        const double layers = mem.microbatches * moeCritical;
        const double keep = 1 - epHiddenShare;
        auto add = [&](CollectiveCost& cc, const CollectiveResult& second, double calls) {
            cc.calls_per_step = layers * calls;
            cc.total_s = layers * calls / 2 * (cc.call.time_s + second.time_s);
            cc.exposed_s = keep * cc.total_s;
            addBusy(&busy, &busiest, &busiestSeconds, cc.call, cc.calls_per_step / 2, "ep");
            addBusy(&busy, &busiest, &busiestSeconds, second, cc.calls_per_step / 2, "ep");
            cost.collectives.push_back(cc);
        };
        if (epCallsPerLayer > 0)
            add(epCost, epCombine, epCallsPerLayer);
        if (etpCallsPerLayer > 0)
            add(etpCost, etpRs, etpCallsPerLayer);
    }
    if (p.pp > 1) {
        ppCost.calls_per_step = 2.0 * mem.microbatches * p.interleave;
        ppCost.total_s = mem.microbatches * critical.pp_comm_s;
        ppCost.exposed_s = ppCost.total_s;
        addBusy(&busy, &busiest, &busiestSeconds, ppCost.call, ppCost.calls_per_step, "pp");
        cost.collectives.push_back(ppCost);
    }
}

void Evaluation::sharedLinks()
{
    // Shared links: collectives of different groups that cross the same tier in the same
    // step compete for it. Whatever of a tier's busy time the step's compute cannot cover is
    // exposed, charged to the group that loads the tier most.
    {
        const double hideable = b.compute_s + b.recompute_s + b.bubble_s;
        for (size_t t = 0; t < busy.size(); ++t) {
            if (!(busy[t] > 0))
                continue;
            double exposedHere = 0;
            for (const CollectiveCost& cc : cost.collectives) {
                if (touches(cc.call, static_cast<Tier>(t)))
                    exposedHere += cc.exposed_s;
            }
            const double deficit = busy[t] - hideable - exposedHere;
            if (deficit <= 0)
                continue;
            const char* group = busiest[t];
            auto is = [group](const char* name) { return std::strcmp(group, name) == 0; };
            double* field = is("tp")   ? &b.tp_comm_exposed_s
                            : is("cp") ? &b.cp_comm_exposed_s
                            : is("ep") ? &b.ep_comm_exposed_s
                            : is("pp") ? &b.pp_comm_exposed_s
                                       : &b.dp_comm_exposed_s;
            *field += deficit;
            for (CollectiveCost& cc : cost.collectives) {
                if (is(cc.group) && touches(cc.call, static_cast<Tier>(t))) {
                    cc.exposed_s += deficit;
                    break;
                }
            }
            std::string& text = cost.addWarning();
            text += tierName(static_cast<Tier>(t));
            text += " links are busy ";
            text += units::formatSeconds(busy[t]);
            text += " per step, more than the compute can hide: ";
            text += units::formatSeconds(deficit);
            text += " more exposed";
        }
    }

    cost.step_time_s = b.total();
    for (size_t t = 0; t < busy.size(); ++t) {
        if (busy[t] > 0)
            cost.links.push_back(
                {static_cast<Tier>(t), busy[t], busy[t] / cost.step_time_s, busiest[t]});
    }
    std::sort(cost.links.begin(), cost.links.end(),
              [](const LinkUse& a, const LinkUse& b) { return a.busy_s > b.busy_s; });
}

} // namespace paraplan::detail
