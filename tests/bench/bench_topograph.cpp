// The topology model's conversions at 2,048 and 16,384 DGX H100 nodes (and a million GPUs):
// the cluster laid out as a drawing (graphFromCluster) and the drawing read back as the
// cluster the cost model uses (clusterFromGraph), plus node and rack look-ups by id and the
// delta an undo step keeps. They run on every cluster edit; they must grow linearly with the
// node count (issue 17).
// Run: build/bench/bench_topograph
#include "benchmain.h"
#include "clusterio.h"
#include "topologydelta.h"
#include "topologygraph.h"

using namespace paraplan;

namespace {

ClusterSpec dgxCluster(int nodes)
{
    ClusterOptions options;
    options.nodes = nodes;
    options.nodes_per_rack = 32;
    ClusterSpec cluster;
    std::string error;
    clusterFromPreset("dgx-h100", options, &cluster, &error, HardwareCatalog::bundled());
    return cluster;
}

void BM_GraphFromCluster(benchmark::State& state)
{
    const ClusterSpec cluster = dgxCluster(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        TopologyGraph g = graphFromCluster(cluster);
        bench::keep(g.nodes.data());
        if (!bench::check(state, static_cast<long long>(g.nodes.size()) == state.range(0),
                          "graphFromCluster lays out every node"))
            return;
    }
    state.SetComplexityN(state.range(0));
}

void BM_ClusterFromGraph(benchmark::State& state)
{
    const ClusterSpec cluster = dgxCluster(static_cast<int>(state.range(0)));
    const TopologyGraph g = graphFromCluster(cluster);
    const std::string reference = clusterToJsonText(cluster);
    for (auto _ : state) {
        ClusterSpec back;
        std::string error;
        const bool ok = clusterFromGraph(g, &back, &error, HardwareCatalog::bundled());
        if (!bench::check(state, ok && back.nodes == cluster.nodes, "the drawing reads back"))
            return;
    }
    // Outside the timed loop: the cluster read back is the one laid out.
    ClusterSpec back;
    std::string error;
    clusterFromGraph(g, &back, &error, HardwareCatalog::bundled());
    bench::check(state, clusterToJsonText(back) == reference, "round trip keeps the cluster");
    state.SetComplexityN(state.range(0));
}

void BM_LookUpEveryNodeAndRack(benchmark::State& state)
{
    const TopologyGraph g = graphFromCluster(dgxCluster(static_cast<int>(state.range(0))));
    for (auto _ : state) {
        long long found = 0;
        for (const TopoNode& n : g.nodes)
            found += g.node(n.id) == &n && g.rack(n.rack) != nullptr;
        if (!bench::check(state, found == static_cast<long long>(g.nodes.size()),
                          "every node and its rack are found by id"))
            return;
    }
    state.SetComplexityN(state.range(0));
}

// What the window spent per edit to tell whether the plan's cluster changed, before clusters
// compared member by member (BM_ClusterEquality).
void BM_ClusterToJsonText(benchmark::State& state)
{
    const ClusterSpec cluster = dgxCluster(16384);
    for (auto _ : state) {
        std::string text = clusterToJsonText(cluster);
        if (!bench::check(state, !text.empty(), "the cluster writes as JSON"))
            return;
        bench::keep(text.data());
    }
}

// What it spends now: two equal clusters compared field by field (the worst case: no early
// difference), and the same verdict as their JSON texts.
void BM_ClusterEquality(benchmark::State& state)
{
    const ClusterSpec a = dgxCluster(16384);
    const ClusterSpec b = dgxCluster(16384);
    ClusterSpec other = b;
    other.what_if.nic_factor = 0.5;
    for (auto _ : state) {
        const bool same = a == b;
        bench::keep(same);
        if (!bench::check(state, same, "equal clusters compare equal"))
            return;
    }
    bench::check(state,
                 (a == other) == (clusterToJsonText(a) == clusterToJsonText(other)) &&
                     clusterToJsonText(a) == clusterToJsonText(b),
                 "equality agrees with the JSON texts");
}

// One undo step of a drawing edit (two nodes moved): the delta found, applied and reverted.
// Linear in the nodes (one pass over both drawings); its size does not grow with them.
void BM_GraphDelta(benchmark::State& state)
{
    const TopologyGraph before = graphFromCluster(dgxCluster(static_cast<int>(state.range(0))));
    TopologyGraph after = before;
    after.nodes.front().x += 10;
    after.nodes.back().y += 10;
    size_t bytes = 0;
    for (auto _ : state) {
        const GraphDelta delta = GraphDelta::between(before, after);
        bytes = delta.bytes();
        bench::keep(bytes);
    }
    TopologyGraph graph = before;
    const GraphDelta delta = GraphDelta::between(before, after);
    delta.apply(&graph);
    const bool forward = graph == after;
    delta.revert(&graph);
    bench::check(state, forward && graph == before && bytes < 16 * 1024,
                 "the delta is small and restores both drawings");
    state.counters["bytes"] = static_cast<double>(bytes);
    state.SetComplexityN(state.range(0));
}

} // namespace

BENCHMARK(BM_ClusterToJsonText)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ClusterEquality)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GraphDelta)->Arg(2048)->Arg(16384)->Arg(125000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GraphFromCluster)->Arg(2048)->Arg(16384)->Arg(125000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ClusterFromGraph)->Arg(2048)->Arg(16384)->Arg(125000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LookUpEveryNodeAndRack)->Arg(2048)->Arg(16384)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv)
{
    return paraplan::bench::run(argc, argv);
}
