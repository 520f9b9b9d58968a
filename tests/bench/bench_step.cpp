// Evaluating one plan must take at most 20 us, so a search can score 50,000 plans per second
// on one core. Run: build/bench/bench_step
#include "clusterio.h"
#include "modelio.h"
#include "stepmodel.h"

#include <QCoreApplication>

#include <benchmark/benchmark.h>

using namespace paraplan;

namespace {

Plan plan(const char* model, const char* cluster, int nodes, int tp, int pp, int dp, int seq)
{
    Plan p;
    std::string error;
    modelFromPreset(model, &p.model, &error);
    ClusterOptions options;
    options.nodes = nodes;
    clusterFromPreset(cluster, options, &p.cluster, &error);
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
    const StepEngine engine(p.cluster);
    for (auto _ : state)
        benchmark::DoNotOptimize(engine.evaluate(p).step_time_s);
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

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
