// One evaluation: issue 17's targets are at most 1 us for GPT-3 175B on 64 A100s and at most
// 2 us for Llama 3 405B on 16,384 H100s, one thread. Run: taskset -c 0 build/bench/bench_step
// The "allocs" counter is the heap allocations of one evaluation (a counting operator new):
// evaluate(plan, into) with one reused StepCost, as the search calls it, makes none for a valid
// plan (checked); BM_EvaluateGpt3On64ByValue is evaluate(plan), which returns a new StepCost.
#include "../countingnew.h"
#include "clusterio.h"
#include "modelio.h"
#include "planio.h"
#include "search.h"
#include "stepmodel.h"

#include "benchmain.h"

#include <atomic>
#include <cstdlib>
#include <new>

using namespace paraplan;

namespace {

Plan plan(const char* model, const char* cluster, int nodes, int tp, int pp, int dp, int seq)
{
    Plan p;
    std::string error;
    modelFromPreset(model, &p.model, &error);
    ClusterOptions options;
    options.nodes = nodes;
    clusterFromPreset(cluster, options, &p.cluster, &error, HardwareCatalog::bundled());
    p.parallel.tp = tp;
    p.parallel.pp = pp;
    p.parallel.dp = dp;
    p.parallel.zero = 1;
    p.parallel.sequence_parallel = true;
    p.parallel.recompute = Recompute::Selective;
    p.parallel.micro_batch = 1;
    p.parallel.global_batch = dp * 64;
    p.training.seq_len = seq;
    p.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(p.cluster.gpu_id),
                                     p.training.optimizer, p.training.dtype);
    return p;
}

void run(benchmark::State& state, const Plan& p)
{
    const StepEngine engine(p.cluster, HardwareCatalog::bundled());
    StepCost cost;
    engine.evaluate(p, cost); // the buffers grow once
    const long long before = test::allocations();
    for (auto _ : state) {
        engine.evaluate(p, cost);
        bench::keep(cost.step_time_s);
        if (!bench::check(state, cost.ok && cost.step_time_s > 0, "the plan was rejected"))
            break;
    }
    const long long allocations = test::allocations() - before;
    bench::check(state, allocations == 0, "an evaluation into a reused StepCost allocated");
    state.SetItemsProcessed(state.iterations());
    state.counters["allocs"] =
        benchmark::Counter(double(allocations), benchmark::Counter::kAvgIterations);
}

// evaluate(plan): a new StepCost each call (its vectors allocated and freed).
void runByValue(benchmark::State& state, const Plan& p)
{
    const StepEngine engine(p.cluster, HardwareCatalog::bundled());
    const long long before = test::allocations();
    for (auto _ : state) {
        const StepCost cost = engine.evaluate(p);
        bench::keep(cost.step_time_s);
        if (!bench::check(state, cost.ok && cost.step_time_s > 0, "the plan was rejected"))
            break;
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["allocs"] = benchmark::Counter(double(test::allocations() - before),
                                                  benchmark::Counter::kAvgIterations);
}

// The search's pattern: each call a different layout of the same plan (every tp, pp, ZeRO
// stage, recompute mode and micro-batch that fills the cluster), so no layout is evaluated
// twice in a row. Counts accepted layouts; the time is per evaluation, rejected ones included
// (a rejected layout allocates its issues' messages; an accepted one nothing, checked).
void runSweep(benchmark::State& state, const Plan& base)
{
    const StepEngine engine(base.cluster, HardwareCatalog::bundled());
    const int gpus = base.cluster.totalGpus();
    std::vector<Plan> layouts;
    for (int tp : {1, 2, 4, 8})
        for (int pp : {1, 2, 4, 8, 16})
            for (int zero : {0, 1, 3})
                for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
                    for (int mb : {1, 2}) {
                        if (gpus % (tp * pp) != 0)
                            continue;
                        Plan p = base;
                        p.parallel.tp = tp;
                        p.parallel.pp = pp;
                        p.parallel.dp = gpus / (tp * pp);
                        p.parallel.zero = zero;
                        p.parallel.recompute = r;
                        p.parallel.micro_batch = mb;
                        p.parallel.sequence_parallel = tp > 1;
                        p.parallel.interleave = 1;
                        p.parallel.global_batch = std::max(p.parallel.dp * mb, 1536);
                        layouts.push_back(p);
                    }
    size_t next = 0;
    long long accepted = 0;
    long long acceptedAllocations = 0;
    StepCost cost;
    for (const Plan& p : layouts) // the buffers grow once
        engine.evaluate(p, cost);
    const long long before = test::allocations();
    for (auto _ : state) {
        const long long start = test::allocations();
        engine.evaluate(layouts[next], cost);
        bench::keep(cost.step_time_s);
        if (cost.ok) {
            ++accepted;
            acceptedAllocations += test::allocations() - start;
        }
        next = next + 1 == layouts.size() ? 0 : next + 1;
    }
    bench::check(state, accepted > 0 || state.iterations() < static_cast<long long>(layouts.size()),
                 "no layout of the sweep was accepted");
    bench::check(state, acceptedAllocations == 0, "an accepted layout allocated");
    state.SetItemsProcessed(state.iterations());
    state.counters["layouts"] = double(layouts.size());
    state.counters["accepted"] =
        benchmark::Counter(double(accepted), benchmark::Counter::kAvgIterations);
    state.counters["allocs"] = benchmark::Counter(double(test::allocations() - before),
                                                  benchmark::Counter::kAvgIterations);
}

// The bundled example as the user opens it: GPT-3 175B on 8 DGX A100 (64 GPUs).
void BM_EvaluateGpt3Example(benchmark::State& state)
{
    Plan p;
    std::vector<std::string> errors;
    if (!bench::check(state,
                      loadPlan(PARAPLAN_SOURCE_DIR
                               "/resources/examples/gpt3-175b-dgx-a100.paraplan.json",
                               &p, &errors, HardwareCatalog::bundled()),
                      "cannot load the GPT-3 example"))
        return;
    run(state, p);
}
BENCHMARK(BM_EvaluateGpt3Example);

void BM_EvaluateLlama70bOn128(benchmark::State& state)
{
    run(state, plan("llama3-70b", "dgx-h100", 16, 8, 4, 4, 8192));
}
BENCHMARK(BM_EvaluateLlama70bOn128);

void BM_Evaluate405bOn16384(benchmark::State& state)
{
    run(state, plan("llama3-405b", "dgx-h100", 2048, 8, 16, 128, 8192));
}
BENCHMARK(BM_Evaluate405bOn16384);

// Issue 25's target: one MoE evaluation, DeepSeek-V3 (arXiv 2412.19437's shapes) on 1,024
// H100s as NVIDIA's DGX Cloud recipe lays it out (TP 2, PP 8, EP 64 folded with expert TP 1),
// at most 3 us.
void BM_EvaluateDeepSeekV3On1024(benchmark::State& state)
{
    Plan p = plan("llama3-405b", "dgx-h100", 128, 2, 8, 64, 4096);
    ModelSpec& m = p.model;
    m = ModelSpec{};
    m.name = "DeepSeek-V3";
    m.layers = 61, m.hidden = 7168, m.heads = 128, m.kv_heads = 128, m.head_dim = 192;
    m.ffn_hidden = 18432, m.vocab = 129280, m.mlp = MlpKind::SwiGLU;
    m.experts = 256, m.experts_per_token = 8, m.expert_ffn_hidden = 2048;
    m.shared_expert_ffn_hidden = 2048, m.dense_layers = 3;
    m.q_lora_rank = 1536, m.kv_lora_rank = 512, m.rope_head_dim = 64, m.v_head_dim = 128;
    p.parallel.ep = 64;
    p.parallel.expert_tp = 1;
    run(state, p);
}
BENCHMARK(BM_EvaluateDeepSeekV3On1024);

void BM_EvaluateGpt3On64(benchmark::State& state)
{
    run(state, plan("gpt3-175b", "dgx-a100", 8, 8, 8, 1, 2048));
}
BENCHMARK(BM_EvaluateGpt3On64);

void BM_EvaluateGpt3On64ByValue(benchmark::State& state)
{
    runByValue(state, plan("gpt3-175b", "dgx-a100", 8, 8, 8, 1, 2048));
}
BENCHMARK(BM_EvaluateGpt3On64ByValue);

void BM_EvaluateSweepGpt3On64(benchmark::State& state)
{
    runSweep(state, plan("gpt3-175b", "dgx-a100", 8, 8, 8, 1, 2048));
}
BENCHMARK(BM_EvaluateSweepGpt3On64);

void BM_EvaluateSweep405bOn16384(benchmark::State& state)
{
    runSweep(state, plan("llama3-405b", "dgx-h100", 2048, 8, 16, 128, 8192));
}
BENCHMARK(BM_EvaluateSweep405bOn16384);

// One evaluation grows with the pipeline depth: each stage is costed, its data-parallel
// collectives included. A 16,384-layer model (the largest model.layers) on 1,048,576 H100s
// (131,072 DGX H100 nodes), tp 8, at pp = the argument; the search's layout budget weighs
// each layout by its stage count from these figures (kSearchStageWeight in search.h).
void BM_EvaluateDeepPipeline(benchmark::State& state)
{
    const int pp = static_cast<int>(state.range(0));
    Plan p = plan("llama3-405b", "dgx-h100", 131072, 8, pp, 131072 / pp, 8192);
    p.model.layers = 16384;
    p.parallel.global_batch = 131072 / pp * 64;
    run(state, p);
}
BENCHMARK(BM_EvaluateDeepPipeline)->Arg(1)->Arg(64)->Arg(1024)->Arg(16384);

// The search over every layout of Llama 3 405B on 16,384 H100s (2,048 DGX H100 nodes),
// global batch 2,048 sequences of 8,192 tokens (Llama 3's 16M tokens per step). Target: at
// least 500,000 plans per second on one core, the whole space in under a second. Argument:
// threads.
void BM_Search405bOn16384(benchmark::State& state)
{
    Plan base = plan("llama3-405b", "dgx-h100", 2048, 8, 16, 128, 8192);
    base.parallel.global_batch = 2048;
    SearchOptions options;
    options.threads = static_cast<int>(state.range(0));
    long long space = 0;
    long long scored = 0;
    for (auto _ : state) {
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        space = result.space;
        scored = result.scored;
        if (!bench::check(state, result.ok && result.scored > 0 && !result.top.empty(),
                          "the search found no plan"))
            break;
        bench::keep(result.top.data());
    }
    state.SetItemsProcessed(state.iterations() * space);
    state.counters["space"] = static_cast<double>(space);
    state.counters["scored"] = static_cast<double>(scored);
}
BENCHMARK(BM_Search405bOn16384)->Arg(1)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

int main(int argc, char** argv)
{
    return paraplan::bench::run(argc, argv);
}
