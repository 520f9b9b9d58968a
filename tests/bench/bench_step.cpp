// Evaluating one plan must take at most 20 us, so a search can score 50,000 plans per second
// on one core. Run: build/bench/bench_step
#include "clusterio.h"
#include "modelio.h"
#include "search.h"
#include "stepmodel.h"

#include "benchmain.h"

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
    for (auto _ : state) {
        const StepCost cost = engine.evaluate(p);
        benchmark::DoNotOptimize(cost.step_time_s);
        if (!bench::check(state, cost.ok && cost.step_time_s > 0, "the plan was rejected"))
            break;
    }
    state.SetItemsProcessed(state.iterations());
}

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

void BM_EvaluateGpt3On64(benchmark::State& state)
{
    run(state, plan("gpt3-175b", "dgx-a100", 8, 8, 8, 1, 2048));
}
BENCHMARK(BM_EvaluateGpt3On64);

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
        benchmark::DoNotOptimize(result.top.data());
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
