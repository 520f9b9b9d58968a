// derivePlan's second half: the critical stage and pipeline, the plan's collectives (each with
// its own derivation as a part), the step's totals, time to train and cost, and memory.

#include "collectivewalkthrough.h"
#include "stepwalkthroughdetail.h"
#include "summary.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace paraplan::walkthrough {
namespace {

using units::formatBytes;
using units::formatGBps;
using units::formatGiB;
using units::formatNumber;

// A count as people write it: whole, with thousands separators ("146,855", "3,631,695");
// under 1,000 with four significant digits.
std::string grouped(double value)
{
    return std::abs(value) >= 1000 && std::abs(value) < 1e15 ? groupedNumber(value)
                                                             : formatNumber(value, 4);
}

// Tokens in the unit people use for a training budget: "15 T", "300 B".
std::string tokenCount(double tokens)
{
    return tokens >= 1e12 ? formatNumber(tokens / 1e12, 4) + " T"
                          : formatNumber(tokens / 1e9, 4) + " B";
}
using units::formatSeconds;

} // namespace

void Walk::stageSteps() const
{
    const StageCost& st = cost.stages[static_cast<size_t>(cost.critical_stage)];
    // The stage's parts that are not zero, shown and summed.
    std::vector<DerivationTerm> terms = {{"forward + backward", st.forward_s + st.backward_s}};
    for (const DerivationTerm& term :
         {DerivationTerm{"recompute", st.recompute_s}, DerivationTerm{"TP comm", st.tp_comm_s},
          DerivationTerm{"CP comm exposed", st.cp_comm_exposed_s},
          DerivationTerm{"EP comm", st.ep_comm_s}, DerivationTerm{"PP send/recv", st.pp_comm_s}})
        if (term.value > 0)
            terms.push_back(term);
    std::string substitution;
    for (const DerivationTerm& term : terms)
        substitution +=
            (substitution.empty() ? "" : " + ") + formatSeconds(term.value) + " " + term.name;
    DerivationStep& stage = add(
        "Critical stage, one micro-batch",
        "forward + backward of its layers (+ LM head / embedding) + recompute + TP comm + "
        "CP/EP comm + PP send/recv",
        std::to_string(st.layers) + " layers: " + substitution, formatSeconds(st.microbatch_s),
        st.microbatch_s, "s", "stage " + std::to_string(st.stage) + " of " + std::to_string(p.pp));
    stage.terms = terms;
    const int mb = cost.microbatches;
    add("Micro-batches per pipeline", "m = B / (b × dp)",
        std::to_string(p.global_batch) + " / (" + std::to_string(p.micro_batch) + " × " +
            std::to_string(p.dp) + ")",
        std::to_string(mb), mb, "");
    if (p.pp > 1) {
        // Every stage's time for one micro-batch, the sum and the slowest: the numbers the
        // bubble is made of (long pipelines: the first and last few stages, then the sum).
        double sum = 0;
        double slowest = 0;
        std::string times;
        const size_t stages = cost.stages.size();
        for (size_t i = 0; i < stages; ++i) {
            const double t = cost.stages[i].microbatch_s;
            sum += t;
            slowest = std::max(slowest, t);
            if (stages <= 8 || i < 3 || i + 3 >= stages)
                times += (times.empty() ? "" : " + ") + formatSeconds(t);
            else if (i == 3)
                times += " + ...";
        }
        add("Pipeline bubble",
            p.interleave > 1 ? "(sum of stage times - slowest) / v; uniform: (p - 1) / v × stage"
                             : "sum of stage times - slowest; uniform: (p - 1) × stage",
            "stage times per micro-batch " + times + " = " + formatSeconds(sum) + "; slowest " +
                formatSeconds(slowest) + "; (" + formatSeconds(sum) + " - " +
                formatSeconds(slowest) + ") / " + std::to_string(p.interleave) +
                " (p = " + std::to_string(p.pp) + ", v = " + std::to_string(p.interleave) +
                "; uniform stages would give (p - 1) / (v m) = " +
                formatNumber(double(p.pp - 1) / (double(p.interleave) * mb)) +
                " of the pipelined time)",
            formatSeconds(cost.breakdown.bubble_s), cost.breakdown.bubble_s, "s",
            "formula: Narayanan et al. 2021 (1F1B and interleaved schedules)");
    }
}

void Walk::collectiveSteps() const
{
    if (cost.collectives.empty())
        return;
    const CollectiveModel model(plan.cluster);
    int index = 0;
    for (const CollectiveCost& c : cost.collectives) {
        const std::string anchor = "collective-" + std::to_string(index++);
        const std::string call = std::string(collectiveOpName(c.call.op)) + " of " +
                                 formatBytes(c.call.bytes) + " over " +
                                 std::to_string(c.call.ranks) + " ranks";
        DerivationStep& step =
            add(std::string(c.group) + ": " + c.purpose,
                "calls per step × time per call; exposed part on the critical path",
                formatNumber(c.calls_per_step, 4) + " × " + formatSeconds(c.call.time_s) + " (" +
                    call + ", " + tierName(c.call.bottleneck) + " at " +
                    formatGBps(c.call.bottleneck_Bps) + ")",
                formatSeconds(c.total_s) + " total, " + formatSeconds(c.exposed_s) + " exposed",
                c.exposed_s, "s",
                "the call: derivation " + std::to_string(index) + " of the collectives below");
        step.anchor = "step-" + anchor;
        CollectiveRequest request{c.call.op, c.call.bytes, c.call.ranks, c.stride, Algorithm::Auto};
        CollectiveInputSources sources;
        sources.bytes = "the plan: " + std::string(c.purpose);
        sources.ranks = std::string("the plan's ") + c.group + " group";
        Derivation part = deriveCollective(model, request, c.call, sources);
        part.title = "Collective " + std::to_string(index) + ", " + c.group + ": " + part.title;
        part.anchor = anchor;
        d.parts.push_back(std::move(part));
    }
}

void Walk::stepTotals() const
{
    double params = 0;
    for (const StageCost& st : cost.stages)
        params = std::max(params, st.params);
    const int shard = p.zero >= 1 ? p.shardRanks() : 1;
    add("Optimizer step",
        "parameters of the fullest stage per GPU / ZeRO shard × bytes per parameter / H",
        formatNumber(params, 4) + " / " + std::to_string(shard) + " × " +
            formatNumber(f.optimizer_step_bytes.value) + " B / " + formatGBps(hbm()),
        formatSeconds(cost.breakdown.optimizer_s), cost.breakdown.optimizer_s, "s",
        describeSource(f.optimizer_step_bytes));
    const StepBreakdown& b = cost.breakdown;
    const double comm =
        b.tp_comm_exposed_s + b.cp_comm_exposed_s + b.ep_comm_exposed_s + b.pp_comm_exposed_s;
    DerivationStep& step =
        add("Step time",
            "t_step = m × (compute + recompute + exposed comm of the critical stage) + bubble + DP "
            "+ optimizer",
            formatSeconds(b.compute_s) + " compute + " + formatSeconds(b.recompute_s) +
                " recompute + " + formatSeconds(comm) + " TP/CP/EP/PP exposed + " +
                formatSeconds(b.bubble_s) + " bubble + " + formatSeconds(b.dp_comm_exposed_s) +
                " DP exposed + " + formatSeconds(b.optimizer_s) + " optimizer",
            formatSeconds(cost.step_time_s), cost.step_time_s, "s");
    step.terms = {{"compute", b.compute_s},
                  {"recompute", b.recompute_s},
                  {"exposed TP/CP/EP/PP", comm},
                  {"bubble", b.bubble_s},
                  {"exposed DP", b.dp_comm_exposed_s},
                  {"optimizer", b.optimizer_s}};
    add("Tokens per second", "R = B s / t_step",
        std::to_string(p.global_batch) + " × " + std::to_string(t.seq_len) + " / " +
            formatSeconds(cost.step_time_s),
        grouped(mt.tokens_per_s) + " tokens/s", mt.tokens_per_s, "tokens/s");
    // MFU and HFU: FLOPs per step over what the GPUs could do in the step.
    auto utilization = [&](const char* label, const char* flopsTerm, double flops, double share) {
        add(label, std::string(flopsTerm) + " / (t_step × n × P_d)",
            formatNumber(flops / 1e15, 4) + " PFLOP / (" + formatSeconds(cost.step_time_s) + " × " +
                std::to_string(p.gpus()) + " × " + formatNumber(mt.peak_flops_per_gpu / 1e12, 4) +
                " TFLOP/s)",
            formatNumber(100 * share, 3) + "%", share, "",
            "definition: Chowdhery et al. 2022 (PaLM), appendix B");
    };
    utilization("MFU", "model FLOPs", mt.model_flops_per_step, mt.mfu);
    utilization("HFU", "(model FLOPs + recomputed FLOPs)", mt.hardware_flops_per_step, mt.hfu);
}

void Walk::trainingTotals() const
{
    if (!(mt.time_to_train_s > 0)) {
        d.notes.push_back("Time to train and cost: the plan gives no token budget "
                          "(training.train_tokens), so neither is derived.");
        return;
    }
    const double days = mt.time_to_train_s / 86400;
    DerivationStep& time =
        add("Time to train", "t_train = T / R",
            tokenCount(t.train_tokens) + " tokens / " + grouped(mt.tokens_per_s) +
                " tokens/s = " + grouped(mt.time_to_train_s) + " s; / 86,400 s per day",
            grouped(days) + " days", mt.time_to_train_s, "s",
            "T: user entry (the plan's training.train_tokens); R: the step above; every step "
            "assumed the same, no restarts, checkpoints or evaluation");
    time.anchor = "time-to-train";
    DerivationStep& hours =
        add("GPU-hours", "G = t_train × n / 3600 s",
            grouped(mt.time_to_train_s) + " s × " + grouped(p.gpus()) + " / 3,600 s",
            grouped(mt.gpu_hours) + " GPU-h", mt.gpu_hours, "GPU-h");
    hours.anchor = "gpu-hours";
    if (!(mt.cost_usd > 0)) {
        d.notes.push_back("Cost: the plan gives no price per GPU-hour (training.gpu_hour_usd).");
        return;
    }
    DerivationStep& price =
        add("Cost", "G × u", grouped(mt.gpu_hours) + " GPU-h × $" + formatNumber(t.gpu_hour_usd, 3),
            "$" + grouped(mt.cost_usd), mt.cost_usd, "USD",
            "u: user entry (the plan's training.gpu_hour_usd); compute only: storage, network "
            "egress and idle reservations are not included");
    price.anchor = "cost";
}

void Walk::memoryAndNotes() const
{
    const StageCost& first = cost.stages.front();
    const char* memorySource = "formula: Korthikanti et al. 2022 Table 2 (activations), "
                               "Rajbhandari et al. 2020 (ZeRO sharding)";
    // How many micro-batches' activations stage 0 holds: min(m, p) under 1F1B; under the
    // interleaved schedule its warm-up chunks and the first steady forward, capped at m v, each
    // 1/v of the stage (inFlightMicrobatches(), the figure the stages carry).
    const int m = cost.microbatches;
    const int v = p.interleave;
    std::string inFlight = "min(m, p)";
    std::string inFlightValues = "min(" + std::to_string(m) + ", " + std::to_string(p.pp) + ")";
    if (v > 1) {
        inFlight = "min(2 (p - 1) + (v - 1) p + 1, m v) / v";
        inFlightValues = "min(2 × " + std::to_string(p.pp - 1) + " + " + std::to_string(v - 1) +
                         " × " + std::to_string(p.pp) + " + 1, " + std::to_string(m) + " × " +
                         std::to_string(v) + ") / " + std::to_string(v);
    }
    add("In-flight micro-batches of stage 0",
        "f = " + inFlight + (v > 1 ? " (interleaved 1F1B)" : " (1F1B schedule)"), inFlightValues,
        formatNumber(first.in_flight_microbatches), first.in_flight_microbatches, "",
        "formula: Narayanan et al. 2021 (1F1B and interleaved schedules); Megatron-Core "
        "schedules.py, get_pp_rank_microbatches (the interleaved warm-up per rank)");
    add("Memory of stage 0 per GPU",
        "weights + gradients + optimizer state + activations × layers × f + buffers",
        formatGiB(first.weights_bytes) + " + " + formatGiB(first.grads_bytes) + " + " +
            formatGiB(first.optimizer_bytes) + " + " + formatGiB(first.activation_bytes_per_layer) +
            " × " + std::to_string(first.layers) + " layers × " +
            formatNumber(first.in_flight_microbatches) + " + " + formatGiB(first.buffers_bytes),
        formatGiB(first.total_bytes) + (first.fits ? " (fits)" : " (does not fit)"),
        first.total_bytes, "B", memorySource);
    const std::string fullest = "stage " + std::to_string(cost.fullest_stage);
    add("Memory verdict",
        "HBM - (the fullest stage's peak + runtime reserve); reserved = peak × (1 + "
        "allocator reserve)",
        formatGiB(cost.hbm_bytes) + " - (" + formatGiB(cost.max_stage_total_bytes) + " at " +
            fullest + " + " + formatGiB(cost.runtime_reserve_bytes) + "); reserved " +
            formatGiB(cost.max_stage_total_bytes) + " × (1 + " +
            formatNumber(plan.figures.allocator_reserve.value) +
            ") = " + formatGiB(cost.max_stage_reserved_bytes),
        (cost.fits ? formatGiB(cost.spareBytes()) + " to spare" +
                         (cost.tight ? " (tight: less than the allocator's reserve)" : "")
                   : "over by " + formatGiB(-cost.spareBytes()) + " (does not fit)"),
        cost.spareBytes(), "B",
        describeSource(plan.figures.runtime_reserve_bytes) + "; " +
            describeSource(plan.figures.allocator_reserve));
    for (const std::string& warning : cost.warnings)
        d.notes.push_back("warning: " + warning);
    for (const LinkUse& link : cost.links)
        add(std::string("Link use: ") + tierName(link.tier),
            "sum over collectives crossing it of calls × their time on it; the step is at "
            "least this long",
            std::string("loaded most by ") + link.busiest_group,
            formatSeconds(link.busy_s) + " (" + formatNumber(100 * link.share, 3) +
                "% of the step)",
            link.busy_s, "s", "formula: shared-link accounting (docs/engine.md)");
    d.notes.push_back(
        std::string(as.tp_overlap ? "TP collectives overlap the GEMMs (one chunk stays exposed); "
                                  : "TP collectives are on the critical path; ") +
        (p.zero >= 3 ? "ZeRO-3 gathers each layer's parameters ahead of its compute and "
                       "reduce-scatters its gradients after it; "
                     : "DP gradient sync overlaps the last micro-batch's backward when "
                       "dp_overlap is on; ") +
        "collectives that share a link tier cannot overlap more than the compute lasts.");
}

} // namespace paraplan::walkthrough
