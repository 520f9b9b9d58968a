// The walkthrough's MoE dispatch step: the bytes Megatron-Core's token dispatcher puts on each
// hop for one MoE layer and micro-batch, with its formula and source, and what hides them.
#include "gemmshapes.h"
#include "stagememory.h"
#include "stepwalkthroughdetail.h"
#include "units.h"

#include <string>

namespace paraplan::walkthrough {

using units::formatBytes;
using units::formatNumber;
using units::formatSeconds;

void Walk::moeDispatchStep() const
{
    const int etp = p.expertTp();
    if (!m.isMoe() || static_cast<long long>(p.ep) * etp < 2)
        return;
    const double tokens = double(p.micro_batch) * t.seq_len / std::max(1, p.cp);
    const double shard = moeShardTokens(p, tokens);
    const double load = moeLoad(m, f.moe_imbalance.value);
    const double bytes = activationBytes(t.dtype); // the engine's (stagememory.h)
    const double k = m.experts_per_token;
    const MoeDispatcher dispatcher = resolvedMoeDispatcher(plan);
    const std::string source =
        "Megatron-Core token dispatchers (NVIDIA/Megatron-LM "
        "megatron/core/transformer/moe/token_dispatcher.py at 7094270c6: "
        "MoEAlltoAllTokenDispatcher, MoEAllGatherTokenDispatcher, MoEFlexTokenDispatcher); "
        "load " +
        formatNumber(load) + ": " + describeSource(f.moe_imbalance) +
        (m.capacity_factor > 0 ? "; capped by capacity factor " + formatNumber(m.capacity_factor)
                               : std::string());
    const std::string common = "tokens in = b s / (cp tp) = " + formatNumber(tokens, 6) +
                               (p.tp > 1 ? " / " + std::to_string(p.tp) : std::string()) + " = " +
                               formatNumber(shard, 6) + "; h = " + std::to_string(m.hidden) + ", " +
                               formatNumber(bytes) + " B";
    if (dispatcher == MoeDispatcher::AllGather) {
        const double out = shard * etp * p.ep * m.hidden * bytes;
        add("MoE dispatch per GPU, one MoE layer, one micro-batch (allgather dispatcher)",
            "all-gather over expert TP × EP of tokens in × h × bytes; outputs reduce-scattered "
            "back",
            common + "; expert TP x EP = " + std::to_string(etp * p.ep),
            formatBytes(out) + " gathered", out, "B", source);
    } else {
        const bool deepep = dispatcher == MoeDispatcher::DeepEP;
        const double alltoall = shard * k * m.hidden * bytes * load;
        // The engine's all-to-all (DeepEP's: per GPU, or per NVLink domain across domains).
        const CollectiveResult* call = nullptr;
        for (const CollectiveCost& cc : cost.collectives) {
            if (std::string(cc.group) == "ep" && cc.call.op == CollectiveOp::AllToAll)
                call = &cc.call;
        }
        const bool domains = deepep && call && call->ranks < p.ep;
        std::string formula =
            !deepep ? "all-to-all over EP: tokens in × k × h × bytes × load"
            : domains
                ? "over the network, an all-to-all over the EP group's NVLink domains: tokens in "
                  "× (domains holding one of its k experts) × h × bytes × load; then over NVLink "
                  "to the GPUs holding them; the longer leg sets the pace"
                : "all-to-all over EP: tokens in × (GPUs holding one of its k experts) × h × "
                  "bytes × load";
        if (etp > 1)
            formula += "; then all-gather over expert TP: expert TP × that";
        const double sendBytes = deepep && call ? call->bytes : alltoall;
        std::string substitution = common + "; k = " + formatNumber(k) + "; load " +
                                   formatNumber(load) + "; EP = " + std::to_string(p.ep) +
                                   ", expert TP = " + std::to_string(etp);
        if (domains) {
            const bool network = call->nodes_spanned > 1; // the leg that sets the pace
            const int count = network ? call->ranks : p.ep / std::max(1, call->ranks);
            substitution += "; " + std::to_string(count) + " NVLink domains of " +
                            std::to_string(p.ep / std::max(1, count)) + " EP ranks; " +
                            (network ? "the network leg is the longer"
                                     : "the NVLink leg is the longer (shown)");
        }
        if (deepep)
            substitution += " (the alltoall dispatcher's k copies: " + formatBytes(alltoall) +
                            "; a GPU, or a domain, holding two of a token's experts receives "
                            "it once)";
        add("MoE dispatch per GPU, one MoE layer, one micro-batch (" +
                std::string(moeDispatcherName(dispatcher)) + " dispatcher)",
            formula, substitution,
            formatBytes(sendBytes) + " per all-to-all (dispatch; the combine returns as many)",
            sendBytes, "B",
            source + (domains ? "; deepseek-ai/DeepEP README, normal kernels (RDMA to the same "
                                "local rank of each node, NVLink forwarding inside it)"
                              : std::string()));
    }
    double total = 0;
    double exposed = 0;
    for (const CollectiveCost& cc : cost.collectives) {
        if (std::string(cc.group) == "ep") {
            total += cc.total_s;
            exposed += cc.exposed_s;
        }
    }
    const bool overlap = p.ep_overlap == EpOverlap::A2a;
    add("MoE dispatch and combine, hidden and exposed",
        overlap ? "exposed = warm-up share × EP + rest × max(0, EP - the other micro-batch's "
                  "layer compute)"
                : "exposed = EP time (no EP overlap)",
        formatSeconds(total) + " per step on the critical stage" +
            (overlap ? "; the other micro-batch's forward and backward of the same layer hide "
                       "it; the first max(1, pp - 1) of " +
                           std::to_string(std::max(1, p.microBatches())) +
                           " micro-batches have no partner"
                     : "; Megatron-Core runs it on the critical path unless "
                       "--overlap-moe-expert-parallel-comm is set"),
        formatSeconds(exposed) + " exposed, " + formatSeconds(total - exposed) + " hidden", exposed,
        "s",
        overlap ? "Megatron-Core --overlap-moe-expert-parallel-comm (arguments.py at 000c4ac; "
                  "the combined 1F1B schedule), DeepEP's hook-based overlap"
                : "Megatron-Core default (overlap_moe_expert_parallel_comm False, "
                  "model_parallel_config.py)");
}

} // namespace paraplan::walkthrough
