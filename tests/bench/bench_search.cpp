// The layout search's speed (issue 17): the whole search, one thread and more, on three jobs.
// Targets (one thread): Llama 3 405B on 2,048 DGX H100 nodes in at most 0.15 s; Mixtral 8x7B
// on 16,384 DGX H100 nodes in at most 2 s with under 100 MB (read the peak with
// /usr/bin/time -v); two threads at least 1.8x one. Counters: space (layouts enumerated),
// scored, evaluated (plans the engine fully costed), evaluated_per_s and bounded (skipped by
// the step-time bound). Arguments: threads, bound (SearchOptions::bound) off or on.
// Run: build/bench/bench_search [--benchmark_filter=Gpt3_13b]
#include "clusterio.h"
#include "modelio.h"
#include "search.h"
#include "stepmodel.h"

#include "benchmain.h"

#include <chrono>

using namespace paraplan;

namespace {

Plan plan(const char* model, int nodes, int seq, int globalBatch)
{
    Plan p;
    std::string error;
    modelFromPreset(model, &p.model, &error);
    ClusterOptions options;
    options.nodes = nodes;
    clusterFromPreset("dgx-h100", options, &p.cluster, &error, HardwareCatalog::bundled());
    p.parallel.tp = 8;
    p.parallel.pp = 1;
    p.parallel.dp = nodes;
    p.parallel.zero = 1;
    p.parallel.sequence_parallel = true;
    p.parallel.recompute = Recompute::Selective;
    p.parallel.micro_batch = 1;
    p.parallel.global_batch = globalBatch;
    p.training.seq_len = seq;
    p.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(p.cluster.gpu_id),
                                     p.training.optimizer, p.training.dtype);
    return p;
}

// GPT-3 13B (Brown et al. 2020, Table 2.1: 40 layers, d_model 5,120, 40 heads of 128, context
// 2,048, batch 1M tokens = 512 sequences) on one DGX H100 (8 GPUs): the job the issue's
// side-by-side search rate is measured on. The architecture is GPT-3 175B's at that size.
Plan gpt3_13b()
{
    Plan p = plan("gpt3-175b", 1, 2048, 512);
    p.model.layers = 40;
    p.model.hidden = 5120;
    p.model.heads = 40;
    p.model.kv_heads = 40;
    p.model.ffn_hidden = 4 * 5120;
    return p;
}

// What every run must agree on with the one-thread, unbounded search of the same job: the ranked
// rows (layouts and step times, in order) and the layouts accounted for.
bool sameRanking(const SearchResult& a, const SearchResult& reference)
{
    if (a.top.size() != reference.top.size() || a.space != reference.space)
        return false;
    for (size_t i = 0; i < a.top.size(); ++i) {
        const ParallelLayout &x = a.top[i].layout, &y = reference.top[i].layout;
        if (a.top[i].step_time_s != reference.top[i].step_time_s || x.tp != y.tp || x.pp != y.pp ||
            x.dp != y.dp || x.cp != y.cp || x.zero != y.zero || x.micro_batch != y.micro_batch ||
            x.interleave != y.interleave || x.recompute != y.recompute)
            return false;
    }
    auto accounted = [](const SearchResult& r) {
        long long headroom = 0;
        for (const auto& [name, count] : r.constrained)
            headroom += name == "headroom" ? count : 0;
        return r.scored + r.did_not_fit + headroom + r.bounded;
    };
    return accounted(a) == accounted(reference);
}

void runSearch(benchmark::State& state, const Plan& base)
{
    const SearchResult reference = searchPlans(base, HardwareCatalog::bundled(), SearchOptions());
    SearchOptions options;
    options.threads = static_cast<int>(state.range(0));
    options.bound = state.range(1) != 0;
    SearchResult result;
    double seconds = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        result = searchPlans(base, HardwareCatalog::bundled(), options);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!bench::check(state, result.ok && result.scored > 0 && !result.top.empty(),
                          "the search found no plan") ||
            !bench::check(state, sameRanking(result, reference),
                          "threads or the bound changed the ranking"))
            break;
        benchmark::DoNotOptimize(result.top.data());
    }
    state.SetItemsProcessed(state.iterations() * result.space);
    state.counters["space"] = static_cast<double>(result.space);
    state.counters["scored"] = static_cast<double>(result.scored);
    state.counters["evaluated"] = static_cast<double>(result.evaluated);
    state.counters["bounded"] = static_cast<double>(result.bounded);
    state.counters["evaluated_per_s"] =
        seconds > 0 ? static_cast<double>(result.evaluated) * state.iterations() / seconds : 0;
}

void BM_Search405bOn2048Nodes(benchmark::State& state)
{
    // Llama 3's 16M tokens per step: 2,048 sequences of 8,192 tokens.
    runSearch(state, plan("llama3-405b", 2048, 8192, 2048));
}
BENCHMARK(BM_Search405bOn2048Nodes)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SearchMixtralOn16384Nodes(benchmark::State& state)
{
    // 16,384 sequences of 4,096 tokens per step (64M tokens) on 131,072 H100s.
    runSearch(state, plan("mixtral-8x7b", 16384, 4096, 16384));
}
BENCHMARK(BM_SearchMixtralOn16384Nodes)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SearchGpt3_13bOn8(benchmark::State& state)
{
    runSearch(state, gpt3_13b());
}
BENCHMARK(BM_SearchGpt3_13bOn8)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace

int main(int argc, char** argv)
{
    return paraplan::bench::run(argc, argv);
}
