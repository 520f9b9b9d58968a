// The collective model is called millions of times (live recompute, plan search): one
// evaluation must take well under a microsecond. Run: build/bench/bench_collective
#include "clusterio.h"
#include "collectivemodel.h"

#include "benchmain.h"

#include <cmath>

using namespace paraplan;

namespace {

ClusterSpec cluster(const char* id, int nodes)
{
    ClusterOptions options;
    options.nodes = nodes;
    ClusterSpec spec;
    std::string error;
    if (!clusterFromPreset(id, options, &spec, &error, HardwareCatalog::bundled()))
        throw std::runtime_error(error);
    return spec;
}

void evaluateLoop(benchmark::State& state, const CollectiveModel& model, CollectiveOp op, int ranks,
                  int stride)
{
    CollectiveRequest request;
    request.op = op;
    request.ranks = ranks;
    request.stride = stride;
    double bytes = 1e3;
    double previous = 0;
    for (auto _ : state) {
        request.bytes = bytes;
        const double time = model.evaluate(request).time_s;
        bench::keep(time);
        // Every size costs a finite positive time, and more bytes never cost less.
        if (!bench::check(state, time > 0 && std::isfinite(time), "a non-positive time") ||
            !bench::check(state, bytes == 1e3 || time >= previous, "time fell as bytes grew"))
            break;
        previous = time;
        bytes = bytes < 1e10 ? bytes * 1.7 : 1e3;
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_AllReduceAutoOneNode(benchmark::State& state)
{
    static const CollectiveModel model(cluster("dgx-h100", 1));
    evaluateLoop(state, model, CollectiveOp::AllReduce, 8, 1);
}
BENCHMARK(BM_AllReduceAutoOneNode);

void BM_AllReduceAutoAcrossRacks(benchmark::State& state)
{
    ClusterSpec spec = cluster("dgx-h100", 2048);
    spec.network.spine_oversubscription.value = 2;
    static const CollectiveModel model(spec);
    evaluateLoop(state, model, CollectiveOp::AllReduce, 2048, 8);
}
BENCHMARK(BM_AllReduceAutoAcrossRacks);

void BM_AllToAllMesh(benchmark::State& state)
{
    static const CollectiveModel model(cluster("a100-nvlink-mesh", 4));
    evaluateLoop(state, model, CollectiveOp::AllToAll, 32, 1);
}
BENCHMARK(BM_AllToAllMesh);

void BM_AllReduceTorus(benchmark::State& state)
{
    static const CollectiveModel model(cluster("tpu-v4-pod", 4096));
    evaluateLoop(state, model, CollectiveOp::AllReduce, 4096, 1);
}
BENCHMARK(BM_AllReduceTorus);

void BM_BuildMeshModel(benchmark::State& state)
{
    const ClusterSpec spec = cluster("a100-nvlink-mesh", 1);
    for (auto _ : state) {
        const CollectiveModel model(spec);
        if (!bench::check(state, model.evaluate({CollectiveOp::AllReduce, 1e9, 8}).time_s > 0,
                          "the mesh model cannot cost an all_reduce"))
            break;
    }
}
BENCHMARK(BM_BuildMeshModel)->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char** argv)
{
    return paraplan::bench::run(argc, argv);
}
