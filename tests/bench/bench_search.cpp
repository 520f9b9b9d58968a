// The layout search's speed (issue 17): the whole search, one thread and more, on three jobs.
// Targets (one thread, the default search): Llama 3 405B on 2,048 DGX H100 nodes in at most
// 0.15 s; DeepSeek-V3 on 2,048 nodes (EP, folded expert TP) in at most 0.5 s; Mixtral 8x7B on
// 16,384 DGX H100 nodes in at most 2 s with under 100 MB (read the peak with /usr/bin/time -v); two
// threads at least 1.8x one. Counters: space (layouts enumerated), scored, evaluated (plans the
// engine fully costed), evaluated_per_s and bounded (judged by memory alone by the step-time
// bound). Arguments: threads, bound (SearchOptions::bound: 1 the default, 0 the exhaustive
// reference). Every run must equal the one-thread exhaustive search (rows, rank, front, counts) or
// the smoke run fails. Run: build/bench/bench_search [--benchmark_filter=Gpt3_13b]
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

// What every run must agree on with the one-thread exhaustive search of the same job (the
// bound off): the ranked rows (layouts, step times, folds, in order), the given plan's rank,
// the Pareto front and every count; the bound moves layouts from `evaluated` to `bounded` only.
bool sameLayout(const ParallelLayout& x, const ParallelLayout& y)
{
    return x.tp == y.tp && x.pp == y.pp && x.dp == y.dp && x.cp == y.cp && x.ep == y.ep &&
           x.expertTp() == y.expertTp() && x.zero == y.zero &&
           x.sequence_parallel == y.sequence_parallel && x.micro_batch == y.micro_batch &&
           x.interleave == y.interleave && x.recompute == y.recompute;
}
bool sameRows(const std::vector<SearchCandidate>& a, const std::vector<SearchCandidate>& b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!sameLayout(a[i].layout, b[i].layout) || a[i].step_time_s != b[i].step_time_s ||
            a[i].memory_bytes != b[i].memory_bytes || a[i].folded != b[i].folded ||
            a[i].tie_with != b[i].tie_with)
            return false;
    }
    return true;
}
bool sameRanking(const SearchResult& a, const SearchResult& reference)
{
    return a.space == reference.space && sameRows(a.top, reference.top) &&
           sameRows(a.pareto, reference.pareto) && a.given_rank == reference.given_rank &&
           a.scored == reference.scored && a.did_not_fit == reference.did_not_fit &&
           a.constrained == reference.constrained && a.rejected == reference.rejected &&
           a.duplicates == reference.duplicates && a.folded == reference.folded &&
           a.evaluated + a.bounded == reference.evaluated + reference.bounded;
}

void runSearch(benchmark::State& state, const Plan& base, const SearchConstraints& constraints = {},
               bool dispatchers = true)
{
    SearchOptions exhaustive;
    exhaustive.constraints = constraints;
    exhaustive.bound = false;
    exhaustive.dispatchers = dispatchers;
    const SearchResult reference = searchPlans(base, HardwareCatalog::bundled(), exhaustive);
    SearchOptions options; // the default: the bound on
    options.constraints = constraints;
    options.dispatchers = dispatchers;
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
                          "threads or the bound changed the ranking, the front or a count"))
            break;
        bench::keep(result.top.data());
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
    // 16,384 sequences of 4,096 tokens per step (64M tokens) on 131,072 H100s, with the plan's
    // dispatcher (each of three would put the space over the search's limit).
    runSearch(state, plan("mixtral-8x7b", 16384, 4096, 16384), {}, false);
}
BENCHMARK(BM_SearchMixtralOn16384Nodes)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SearchDeepSeekV3On2048Nodes(benchmark::State& state)
{
    // Issue 25: EP, expert TP (folded or not) and the token dispatcher (alltoall, allgather
    // within a node, deepep), 16,384 H100s; 8,192 sequences of 4,096 tokens per step. Target:
    // 0.5 s on one thread.
    // With TP at most 8 and micro-batch 1 (the 3.7M layouts' 16.7M stages are over the
    // search's limit otherwise).
    SearchConstraints constraints;
    constraints.max_tp = 8;
    constraints.fixed_micro_batch = 1;
    runSearch(state, plan("deepseek-v3", 2048, 4096, 8192), constraints);
}
BENCHMARK(BM_SearchDeepSeekV3On2048Nodes)
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
