// Interview practice: the questions a plan poses, each answered by the engine's own figure
// and explained by the derivation that produces it (grading: practicegrading.cpp).
#include "practice.h"

#include "collectivewalkthrough.h"
#include "summary.h"
#include "units.h"

#include <algorithm>
#include <set>

namespace paraplan {
namespace {

using units::formatBytes;
using units::formatGiB;
using units::formatNumber;
using units::formatSeconds;

constexpr const char* kFlopsSource = "formula: Korthikanti et al. 2022, generalised by "
                                     "Megatron-LM to GQA, SwiGLU and MoE";
constexpr const char* kMemorySource = "formula: Rajbhandari et al. 2020 (ZeRO, section 3: model "
                                      "states per GPU under each stage), Korthikanti et al. 2022 "
                                      "Table 2 (activations)";
constexpr const char* kBubbleSource =
    "formula: Narayanan et al. 2021 (Megatron-LM, 1F1B and interleaved schedules, section 2.2)";
constexpr const char* kMfuSource =
    "definition: Chowdhery et al. 2022 (PaLM, Appendix B: model FLOPs utilization)";
constexpr const char* kCollectiveSource =
    "formula: nccl-tests doc/PERFORMANCE.md (NVIDIA/nccl-tests); ring: Patarasuk and Yuan 2009";
constexpr const char* kWhatIfSource = "method: the plan re-evaluated with the changed layout; "
                                      "TP cost: Shoeybi et al. 2019 (Megatron-LM, section 3)";
constexpr const char* kTokensSource = "definition: tokens per step (global batch x sequence "
                                      "length) / step time";
constexpr const char* kLinkSource = "formula: shared-link accounting (docs/engine.md)";

// splitmix64 (Steele, Lea and Flood 2014): the same sequence on every platform, which
// std::uniform_int_distribution does not promise.
struct Random
{
    std::uint64_t state;
    std::uint64_t next()
    {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    template <typename T> void shuffle(std::vector<T>& items)
    {
        for (size_t i = items.size(); i > 1; --i)
            std::swap(items[i - 1], items[static_cast<size_t>(next() % i)]);
    }
};

// The last step holding `value` in `unit`: the figure the answer is taken from.
int findStep(const Derivation& d, double value, const std::string& unit)
{
    for (size_t i = d.steps.size(); i-- > 0;) {
        if (d.steps[i].unit == unit && d.steps[i].value == value)
            return static_cast<int>(i);
    }
    return -1;
}

std::string secondsUnit(double seconds)
{
    return seconds < 1e-3 ? "us" : seconds < 1 ? "ms" : "s";
}

std::string bytesUnit(double bytes)
{
    return bytes >= 1e9 ? "GB" : bytes >= 1e6 ? "MB" : "KB";
}

struct Generator
{
    const Plan& plan;
    const StepCost& cost;
    const StepEngine& engine;
    std::vector<PracticeQuestion> out;
    std::string context;
    std::vector<std::string> tiers; ///< every tier the plan's collectives cross

    void setup();
    bool finish(PracticeQuestion q, int answerStep, bool truncate);
    Derivation collectiveDerivation(const CollectiveCost& c) const;
    void collectives();
    void bottlenecks();
    void busiestLink();
    /// `zero`: the ZeRO stage `c` was evaluated at (the plan's, or a what-if's).
    Derivation memoryDerivation(const StepCost& c, const std::string& title, int zero) const;
    void memory();
    void bubble();
    void tpWhatIf();
    void throughput();
};

void Generator::setup()
{
    const ParallelLayout& p = plan.parallel;
    context = plan.model.name + " on " + groupedNumber(double(p.gpus())) + " GPUs of " +
              plan.cluster.name + ": tp " + std::to_string(p.tp) + ", pp " + std::to_string(p.pp) +
              ", dp " + groupedNumber(p.dp) + ", ZeRO-" + std::to_string(p.zero) +
              ", global batch " + groupedNumber(p.global_batch) + " x " +
              groupedNumber(plan.training.seq_len) + " tokens";
    std::set<Tier> seen;
    auto note = [&](Tier t) {
        if (seen.insert(t).second)
            tiers.push_back(tierName(t));
    };
    for (const CollectiveCost& c : cost.collectives) {
        for (int i = 0; i < c.call.phase_count; ++i)
            note(c.call.phases[static_cast<size_t>(i)].tier);
        note(c.call.bottleneck);
    }
    for (const LinkUse& link : cost.links)
        note(link.tier);
}

// Keeps a question whose answer is a figure of its derivation (the derivation cut after it
// when `truncate`), with at least two steps to reveal.
bool Generator::finish(PracticeQuestion q, int answerStep, bool truncate)
{
    if (answerStep < 0 || q.derivation.steps.size() < 2)
        return false;
    if (truncate)
        q.derivation.steps.resize(static_cast<size_t>(answerStep) + 1);
    if (q.derivation.steps.size() < 2)
        return false;
    q.answer_step = answerStep;
    q.context = context;
    const DerivationStep& step = q.derivation.steps[static_cast<size_t>(answerStep)];
    if (q.kind == PracticeAnswerKind::Number) {
        q.expected = step.value;
        q.unit = step.unit;
        if (!(q.expected > 0))
            return false;
    } else {
        q.expected = q.correct_choice;
    }
    if (q.source.empty())
        q.source = step.source;
    out.push_back(std::move(q));
    return true;
}

Derivation Generator::collectiveDerivation(const CollectiveCost& c) const
{
    CollectiveRequest request;
    request.op = c.call.op;
    request.bytes = c.call.bytes;
    request.ranks = c.call.ranks;
    request.stride = c.stride;
    CollectiveInputSources sources;
    sources.bytes = "the plan's " + std::string(c.group) + " group: " + c.purpose;
    sources.ranks = "the plan's " + std::string(c.group) + " degree";
    return deriveCollective(engine.collectives(), request, c.call, sources);
}

void Generator::collectives()
{
    for (const CollectiveCost& c : cost.collectives) {
        const std::string op = collectiveOpName(c.call.op);
        const std::string what = "The " + std::string(c.group) + " group's " + c.purpose +
                                 ": one " + op + " of S = " + formatBytes(c.call.bytes) + " over " +
                                 groupedNumber(c.call.ranks) + " ranks (GPU stride " +
                                 groupedNumber(c.stride) + ", " +
                                 formatNumber(c.calls_per_step, 4) +
                                 (c.calls_per_step == 1 ? " call" : " calls") + " per step).";
        PracticeQuestion time;
        time.key = "collective-time:" + std::string(c.group) + ":" + op;
        time.topic = "collective";
        time.derivation = collectiveDerivation(c);
        time.answer_unit = secondsUnit(c.call.time_s);
        time.prompt = what + " How long does one call take?";
        time.source = kCollectiveSource;
        finish(time, findStep(time.derivation, c.call.time_s, "s"), true);

        if (c.call.phase_count != 1)
            continue;
        const double wire = c.call.phases[0].wire_bytes_per_rank;
        PracticeQuestion bytes;
        bytes.key = "collective-bytes:" + std::string(c.group) + ":" + op;
        bytes.topic = "collective";
        bytes.derivation = collectiveDerivation(c);
        bytes.answer_unit = bytesUnit(wire);
        bytes.prompt = what + " How many bytes does each rank send in one call?";
        bytes.source = kCollectiveSource;
        finish(bytes, findStep(bytes.derivation, wire, "B"), true);
    }
}

void Generator::bottlenecks()
{
    if (tiers.size() < 2)
        return;
    std::set<std::string> asked;
    for (const CollectiveCost& c : cost.collectives) {
        const std::string op = collectiveOpName(c.call.op);
        const std::string key = "bottleneck:" + std::string(c.group) + ":" + op;
        if (!asked.insert(key).second)
            continue;
        PracticeQuestion q;
        q.key = key;
        q.topic = "bottleneck";
        q.kind = PracticeAnswerKind::Choice;
        q.prompt = "The " + std::string(c.group) + " group runs one " + op + " of " +
                   formatBytes(c.call.bytes) + " over " + groupedNumber(c.call.ranks) +
                   " ranks (GPU stride " + groupedNumber(c.stride) +
                   "). Which tier of the machine limits its bandwidth?";
        q.choices = tiers;
        const auto it = std::find(tiers.begin(), tiers.end(), tierName(c.call.bottleneck));
        q.correct_choice = static_cast<int>(it - tiers.begin());
        q.derivation = collectiveDerivation(c);
        int step = -1;
        for (int i = 0; i < c.call.phase_count && step < 0; ++i) {
            const CollectivePhase& phase = c.call.phases[static_cast<size_t>(i)];
            if (phase.tier == c.call.bottleneck)
                step = findStep(q.derivation, phase.time_s, "s");
        }
        const int timeStep = findStep(q.derivation, c.call.time_s, "s");
        if (timeStep >= 0)
            q.derivation.steps.resize(static_cast<size_t>(timeStep) + 1);
        q.source = kCollectiveSource;
        finish(q, step, false);
    }
}

void Generator::busiestLink()
{
    if (cost.links.size() < 2)
        return;
    PracticeQuestion q;
    q.key = "busiest-link";
    q.topic = "bottleneck";
    q.kind = PracticeAnswerKind::Choice;
    q.prompt = "Over one training step, which tier of the busiest GPU's links "
               "carries collectives for the longest time?";
    q.derivation.title = "Link use over one step of " + plan.model.name;
    for (const LinkUse& link : cost.links) {
        q.choices.push_back(tierName(link.tier));
        q.derivation.add(std::string("Link use: ") + tierName(link.tier),
                         "sum over the collectives crossing it of calls x their time on it",
                         std::string("loaded most by ") + link.busiest_group,
                         formatSeconds(link.busy_s), link.busy_s, "s", kLinkSource);
    }
    q.derivation.add("Step time", "as the engine evaluates the plan", "",
                     formatSeconds(cost.step_time_s), cost.step_time_s, "s");
    q.correct_choice = 0; // busiest first
    q.source = kLinkSource;
    finish(q, 0, false);
}

// The fullest stage's memory per GPU, component by component, as the engine counted it.
Derivation Generator::memoryDerivation(const StepCost& c, const std::string& title, int zero) const
{
    const auto fullest = std::max_element(
        c.stages.begin(), c.stages.end(),
        [](const StageCost& a, const StageCost& b) { return a.total_bytes < b.total_bytes; });
    const StageCost& st = *fullest;
    Derivation d;
    d.title = title;
    d.inputs.push_back("stage " + std::to_string(st.stage) + " of " +
                       std::to_string(plan.parallel.pp) + ": " + std::to_string(st.layers) +
                       " layers, " + formatNumber(st.params / 1e9, 4) +
                       " B parameters per GPU before ZeRO sharding");
    // Each part as parameters x the bytes per parameter it came to (after any sharding), so
    // the shown numbers multiply out to the result.
    const std::string params = formatNumber(st.params / 1e9, 4) + " B parameters";
    auto perParam = [&](double bytes) {
        return params + " x " + formatNumber(st.params > 0 ? bytes / st.params : 0, 4) +
               " B per parameter";
    };
    const bool gatheredUnderPp = zero >= 3 && plan.parallel.pp > 1;
    d.add("Weights",
          gatheredUnderPp ? "parameters per GPU x bytes per weight (ZeRO-3 with pipeline stages "
                            "keeps the stage's parameters gathered: not divided)"
                          : "parameters per GPU x bytes per weight (/ shard group under ZeRO-3)",
          perParam(st.weights_bytes), formatGiB(st.weights_bytes), st.weights_bytes, "B",
          kMemorySource);
    d.add("Gradients", "parameters per GPU x bytes per gradient (/ shard group under ZeRO-2, 3)",
          perParam(st.grads_bytes), formatGiB(st.grads_bytes), st.grads_bytes, "B", kMemorySource);
    d.add("Optimizer state",
          "parameters per GPU x (fp32 master + Adam moments) (/ shard group under ZeRO-1, 2, 3)",
          perParam(st.optimizer_bytes), formatGiB(st.optimizer_bytes), st.optimizer_bytes, "B",
          kMemorySource);
    d.add("Activations", "bytes per layer and micro-batch x layers x micro-batches in flight",
          formatGiB(st.activation_bytes_per_layer) + " x " + std::to_string(st.layers) + " x " +
              formatNumber(st.in_flight_microbatches),
          formatGiB(st.activations_bytes), st.activations_bytes, "B", kMemorySource);
    d.add("Buffers", "communication buckets, gathered parameters, workspace", "",
          formatGiB(st.buffers_bytes), st.buffers_bytes, "B", "docs/engine.md (memory)");
    d.add("Memory per GPU", "weights + gradients + optimizer state + activations + buffers",
          formatGiB(st.weights_bytes) + " + " + formatGiB(st.grads_bytes) + " + " +
              formatGiB(st.optimizer_bytes) + " + " + formatGiB(st.activations_bytes) + " + " +
              formatGiB(st.buffers_bytes),
          formatGiB(st.total_bytes) + (st.fits ? " (fits)" : " (does not fit)"), st.total_bytes,
          "B", kMemorySource);
    return d;
}

void Generator::memory()
{
    const int zero = plan.parallel.zero;
    PracticeQuestion q;
    q.key = "memory:planned";
    q.topic = "memory";
    q.answer_unit = "GiB";
    q.prompt = "How much memory does each GPU of the fullest pipeline stage hold "
               "(weights, gradients, optimizer state, activations, buffers)?";
    q.derivation = memoryDerivation(
        cost, "Memory per GPU of " + plan.model.name + " under ZeRO-" + std::to_string(zero), zero);
    q.source = kMemorySource;
    finish(q, static_cast<int>(q.derivation.steps.size()) - 1, false);

    if (plan.parallel.dp < 2)
        return; // nothing to shard
    for (int stage : {2, 3}) {
        if (stage == zero)
            continue;
        Plan variant = plan;
        variant.parallel.zero = stage;
        const StepCost vc = engine.evaluate(variant);
        if (!vc.ok || vc.stages.empty())
            continue;
        PracticeQuestion w;
        w.key = "memory:zero" + std::to_string(stage);
        w.topic = "memory";
        w.answer_unit = "GiB";
        w.prompt = "Under ZeRO-" + std::to_string(stage) + " instead of ZeRO-" +
                   std::to_string(zero) + " (all else as planned, on " +
                   trainingFrameworkName(plan.training.framework) +
                   "), how much memory does each GPU of the fullest pipeline stage hold?";
        w.derivation = memoryDerivation(
            vc, "Memory per GPU of " + plan.model.name + " under ZeRO-" + std::to_string(stage),
            stage);
        w.derivation.notes.push_back("as planned (ZeRO-" + std::to_string(zero) +
                                     "): " + formatGiB(cost.max_stage_total_bytes) + " per GPU");
        w.source = kMemorySource;
        finish(w, static_cast<int>(w.derivation.steps.size()) - 1, false);
    }
}

void Generator::bubble()
{
    const ParallelLayout& p = plan.parallel;
    if (p.pp < 2 || !(cost.breakdown.bubble_s > 0) || !(cost.step_time_s > 0))
        return;
    const StageCost& st = cost.stages[static_cast<size_t>(cost.critical_stage)];
    PracticeQuestion q;
    q.key = "bubble";
    q.topic = "pipeline";
    q.answer_unit = "%";
    q.prompt = "The pipeline has " + std::to_string(p.pp) + " stages" +
               (p.interleave > 1 ? " with " + std::to_string(p.interleave) +
                                       " virtual stages per GPU (interleaved 1F1B)"
                                 : " (1F1B)") +
               " and " + std::to_string(cost.microbatches) +
               " micro-batches per step. What fraction of the step time is pipeline bubble?";
    Derivation& d = q.derivation;
    d.title = "Pipeline bubble of " + plan.model.name;
    d.add("Micro-batches per pipeline", "m = B / (b x dp)",
          std::to_string(p.global_batch) + " / (" + std::to_string(p.micro_batch) + " x " +
              std::to_string(p.dp) + ")",
          std::to_string(cost.microbatches), cost.microbatches, "");
    d.add("Critical stage, one micro-batch", "layers x layer time + its communication",
          std::to_string(st.layers) + " layers", formatSeconds(st.microbatch_s), st.microbatch_s,
          "s");
    d.add("Pipeline bubble",
          p.interleave > 1 ? "(sum of stage times - slowest) / v; uniform: (p-1)/v x stage"
                           : "sum of stage times - slowest; uniform: (p-1) x stage",
          "p = " + std::to_string(p.pp) + ", v = " + std::to_string(p.interleave),
          formatSeconds(cost.breakdown.bubble_s), cost.breakdown.bubble_s, "s", kBubbleSource);
    d.add("Step time", "all components of the step", "", formatSeconds(cost.step_time_s),
          cost.step_time_s, "s");
    const double fraction = cost.breakdown.bubble_s / cost.step_time_s;
    d.add("Bubble fraction of the step", "bubble / step time",
          formatSeconds(cost.breakdown.bubble_s) + " / " + formatSeconds(cost.step_time_s),
          formatNumber(100 * fraction, 3) + "%", fraction, "", kBubbleSource);
    d.notes.push_back("the textbook ratio for uniform stages, bubble / pipelined time = "
                      "(p-1)/(v m) = " +
                      formatNumber(double(p.pp - 1) / (double(p.interleave) * cost.microbatches)) +
                      "; the step also holds DP sync and the optimizer");
    q.source = kBubbleSource;
    finish(q, static_cast<int>(d.steps.size()) - 1, false);
}

void Generator::tpWhatIf()
{
    Plan variant = plan;
    ParallelLayout& v = variant.parallel;
    v.tp *= 2;
    std::string absorbed;
    if (v.dp % 2 == 0) {
        v.dp /= 2;
        absorbed = "dp halved to " + std::to_string(v.dp);
    } else if (v.pp % 2 == 0) {
        v.pp /= 2;
        v.interleave = 1;
        v.stage_layers.clear();
        absorbed = "pp halved to " + std::to_string(v.pp);
    } else {
        return;
    }
    const StepCost vc = engine.evaluate(variant);
    if (!vc.ok || !(vc.step_time_s > 0))
        return;
    Derivation d;
    d.title = "TP " + std::to_string(plan.parallel.tp) + " -> " + std::to_string(v.tp) + " (" +
              absorbed + ")";
    d.add("Step time as planned", "the engine's evaluation of the plan", "",
          formatSeconds(cost.step_time_s), cost.step_time_s, "s");
    std::vector<std::string> grown;
    int largest = -1;
    double largestGrowth = 0;
    for (const BreakdownComponent& c : kBreakdownComponents) {
        const double before = cost.breakdown.*c.field;
        const double after = vc.breakdown.*c.field;
        if (!(before > 0) && !(after > 0))
            continue;
        d.add(std::string(c.label) + " at tp " + std::to_string(v.tp),
              "the engine's figure at tp " + std::to_string(plan.parallel.tp) + " -> at tp " +
                  std::to_string(v.tp),
              "", formatSeconds(before) + " -> " + formatSeconds(after), after, "s", kWhatIfSource);
        grown.push_back(c.label);
        if (after - before > largestGrowth) {
            largestGrowth = after - before;
            largest = static_cast<int>(grown.size()) - 1;
        }
    }
    d.add("Step time at tp " + std::to_string(v.tp), "sum of the components", "",
          formatSeconds(vc.step_time_s), vc.step_time_s, "s", kWhatIfSource);
    if (vc.tp_within_node != cost.tp_within_node)
        d.notes.push_back("TP " + std::to_string(v.tp) +
                          (vc.tp_within_node ? " stays inside one node"
                                             : " leaves the node: its collectives cross the "
                                               "network instead of NVLink"));
    const std::string setup = "What if TP doubles to " + std::to_string(v.tp) + " (" + absorbed +
                              ", same GPUs and batch)?";
    PracticeQuestion time;
    time.key = "what-if:tp" + std::to_string(v.tp) + ":step";
    time.topic = "what-if";
    time.answer_unit = secondsUnit(vc.step_time_s);
    time.prompt = setup + " What is the new step time?";
    time.derivation = d;
    time.source = kWhatIfSource;
    finish(time, static_cast<int>(d.steps.size()) - 1, false);

    if (largest < 0 || grown.size() < 2)
        return;
    PracticeQuestion choice;
    choice.key = "what-if:tp" + std::to_string(v.tp) + ":grows";
    choice.topic = "what-if";
    choice.kind = PracticeAnswerKind::Choice;
    choice.prompt = setup + " Which component of the step grows the most?";
    choice.choices = grown;
    choice.correct_choice = largest;
    choice.derivation = d;
    choice.source = kWhatIfSource;
    finish(choice, largest + 1, false);
}

void Generator::throughput()
{
    const StepMetrics& mt = cost.metrics;
    const ParallelLayout& p = plan.parallel;
    PracticeQuestion tokens;
    tokens.key = "tokens-per-s";
    tokens.topic = "throughput";
    tokens.answer_unit = "tokens/s";
    tokens.prompt = "How many tokens per second does the cluster train?";
    Derivation& d = tokens.derivation;
    d.title = "Throughput of " + plan.model.name;
    d.add("Tokens per step", "B s",
          std::to_string(p.global_batch) + " x " + std::to_string(plan.training.seq_len),
          formatNumber(mt.tokens_per_step, 4), mt.tokens_per_step, "tokens");
    d.add("Step time", "the engine's evaluation of the plan", "", formatSeconds(cost.step_time_s),
          cost.step_time_s, "s");
    d.add("Tokens per second", "B s / step time",
          formatNumber(mt.tokens_per_step, 4) + " / " + formatSeconds(cost.step_time_s),
          formatNumber(mt.tokens_per_s, 4), mt.tokens_per_s, "tokens/s", kTokensSource);
    tokens.source = kTokensSource;
    finish(tokens, 2, false);

    PracticeQuestion mfu;
    mfu.key = "mfu";
    mfu.topic = "throughput";
    mfu.answer_unit = "%";
    mfu.prompt = "What is the model FLOPs utilization (MFU) of a step, at " +
                 formatNumber(mt.peak_flops_per_gpu / 1e12, 4) + " TFLOP/s peak per GPU?";
    Derivation& m = mfu.derivation;
    m.title = "MFU of " + plan.model.name;
    m.add("Model FLOPs per step", "12 B s L h^2 [ (1 + g/a + s/h)(q/h) + (f/h) k c ] + 6 B s h V",
          "B = " + std::to_string(p.global_batch) + ", s = " +
              std::to_string(plan.training.seq_len) + ", L = " + std::to_string(plan.model.layers) +
              ", h = " + std::to_string(plan.model.hidden),
          formatNumber(mt.model_flops_per_step / 1e15, 4) + " PFLOP", mt.model_flops_per_step,
          "FLOP", kFlopsSource);
    m.add("Step time", "the engine's evaluation of the plan", "", formatSeconds(cost.step_time_s),
          cost.step_time_s, "s");
    m.add("MFU", "model FLOPs / (step time x GPUs x peak)",
          formatNumber(mt.model_flops_per_step / 1e15, 4) + " PFLOP / (" +
              formatSeconds(cost.step_time_s) + " x " + std::to_string(p.gpus()) + " x " +
              formatNumber(mt.peak_flops_per_gpu / 1e12, 4) + " TFLOP/s)",
          formatNumber(100 * mt.mfu, 3) + "%", mt.mfu, "", kMfuSource);
    mfu.source = kMfuSource;
    finish(mfu, 2, false);
}

} // namespace

std::vector<PracticeQuestion> practiceQuestions(const Plan& plan, const StepCost& cost,
                                                const StepEngine& engine, std::uint64_t seed)
{
    if (!cost.ok || cost.stages.empty())
        return {};
    Generator g{plan, cost, engine, {}, {}, {}};
    g.setup();
    g.collectives();
    g.bottlenecks();
    g.busiestLink();
    g.memory();
    g.bubble();
    g.tpWhatIf();
    g.throughput();

    Random random{seed};
    random.shuffle(g.out);
    for (PracticeQuestion& q : g.out) {
        if (q.kind != PracticeAnswerKind::Choice)
            continue;
        const std::string correct = q.choices[static_cast<size_t>(q.correct_choice)];
        random.shuffle(q.choices);
        q.correct_choice = static_cast<int>(std::find(q.choices.begin(), q.choices.end(), correct) -
                                            q.choices.begin());
        q.expected = q.correct_choice;
    }
    return g.out;
}

} // namespace paraplan
