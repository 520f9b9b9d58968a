// The training-step engine: calibration against published measurements, the seed's TP cliff,
// parameter and FLOP counts, the pipeline schedule, memory per stage, and every validation
// rule.
#include "analysis.h"
#include "calibration.h"
#include "clusterio.h"
#include "enginecache.h"
#include "modelio.h"
#include "planio.h"
#include "stagememory.h"
#include "stepmodel.h"
#include "testplans.h"

#include <QTest>

#include <cmath>

using namespace paraplan;
using test::evaluate;
using test::layout;

namespace {

Plan makePlan(const char* model, const char* cluster, int nodes, ParallelLayout layout,
              int seq = 2048, Dtype dtype = Dtype::BF16)
{
    Plan plan;
    std::string error;
    if (!modelFromPreset(model, &plan.model, &error))
        qFatal("%s", error.c_str());
    ClusterOptions options;
    options.nodes = nodes;
    if (!clusterFromPreset(cluster, options, &plan.cluster, &error, HardwareCatalog::bundled()))
        qFatal("%s", error.c_str());
    plan.parallel = layout;
    plan.training.seq_len = seq;
    plan.training.dtype = dtype;
    plan.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan.cluster.gpu_id),
                                        plan.training.optimizer, dtype);
    return plan;
}

bool hasRule(const StepCost& cost, const QString& rule)
{
    for (const PlanIssue& issue : cost.issues) {
        if (QString::fromStdString(issue.rule) == rule)
            return true;
    }
    return false;
}

} // namespace

class TestStepModel : public QObject
{
    Q_OBJECT

private slots:
    void interleavedInFlightFollowsMegatronsWarmup()
    {
        // Megatron-Core's get_pp_rank_microbatches: (p - r - 1) 2 + (v - 1) p warm-up chunks
        // plus the first steady forward, capped at m v; each chunk is 1/v of the stage.
        // p 4, v 8, m 4: the last rank holds (0 + 28 + 1) / 8 = 3.625, the first 35 / 8.
        QCOMPARE(paraplan::inFlightMicrobatches(4, 4, 8, 3), 29.0 / 8);
        QCOMPARE(paraplan::inFlightMicrobatches(4, 4, 8, 0), 32.0 / 8); // capped at m v = 32
        QCOMPARE(paraplan::inFlightMicrobatches(16, 4, 8, 0), 35.0 / 8);
        QCOMPARE(paraplan::inFlightMicrobatches(16, 4, 1, 1), 3.0); // 1F1B: min(m, p - r)
        QCOMPARE(paraplan::inFlightMicrobatches(2, 4, 1, 0), 2.0);
    }

    void modelStateBytesFollowTheFramework()
    {
        paraplan::Plan plan;
        plan.training.dtype = paraplan::Dtype::BF16;
        // Megatron: bf16 weights, main_grad in the reduction dtype, fp32 master + moments.
        paraplan::ModelStateBytes b = paraplan::modelStateBytes(plan);
        QCOMPARE(b.weights + b.grads + b.master + b.moments, 2.0 + 4 + 4 + 8);
        plan.training.grad_reduce_bytes = 2;
        plan.training.optimizer_state_bytes = 2;
        b = paraplan::modelStateBytes(plan);
        QCOMPARE(b.weights + b.grads + b.master + b.moments, 2.0 + 2 + 4 + 4);
        // torchtitan FSDP2: an fp32 parameter that is the optimizer's, fp32 grads, fp32 moments.
        plan.training = {};
        plan.training.framework = paraplan::TrainingFramework::Torchtitan;
        plan.parallel.dp = 8;
        plan.parallel.zero = 3;
        b = paraplan::modelStateBytes(plan);
        QCOMPARE(b.weights + b.grads + b.master + b.moments, 4.0 + 4 + 0 + 8);
        QCOMPARE(b.heldCopy, 0.0);
        QCOMPARE(b.gatheredCopy, 2.0);
        // DDP (zero 0): autocast's 16-bit copies and a second gradient copy in the buckets.
        plan.parallel.zero = 0;
        b = paraplan::modelStateBytes(plan);
        QCOMPARE(b.heldCopy, 2.0);
        QCOMPARE(b.buckets, 4.0);
    }

    void kernelLaunchesBoundSmallLayersAndCudaGraphsLiftThem()
    {
        // Llama 3 8B on one DGX H100 at 128 tokens per micro-batch, eager kernels: a layer's
        // 42 forward kernels take less GPU time than the host needs to issue them (42 x 10 us),
        // so the pass is the host's; a whole-step CUDA graph leaves only the GPU's work and its
        // (shorter) gaps. At 8,192 tokens the same launches hide behind the kernels.
        Plan small = makePlan("llama3-8b", "dgx-h100", 1, layout(1, 1, 8, 1, 8), 128);
        small.training.kernels = KernelStyle::Eager;
        const StepCost none = evaluate(small);
        QVERIFY(none.ok);
        const LayerCompute& l = none.dense_layer;
        QCOMPARE(l.kernels_forward, 42.0);
        QCOMPARE(l.kernels_backward, 84.0);
        QVERIFY(l.launch_bound);
        QCOMPARE(l.forward_s, l.kernels_forward * small.figures.host_launch_s.value);
        small.training.cuda_graphs = CudaGraphs::Full;
        const StepCost graphed = evaluate(small);
        QVERIFY(!graphed.dense_layer.launch_bound);
        QVERIFY(graphed.dense_layer.forward_s < 0.8 * l.forward_s);
        QCOMPARE(graphed.dense_layer.launch_gap_forward_s,
                 42 * small.figures.graph_kernel_gap_s.value);
        QVERIFY(graphed.step_time_s < none.step_time_s);
        // Per-layer graphs: one launch per pass, never more than the kernels' own gaps allow.
        small.training.cuda_graphs = CudaGraphs::Layers;
        const StepCost layers = evaluate(small);
        QCOMPARE(layers.dense_layer.host_forward_s, small.figures.host_launch_s.value);
        QVERIFY(layers.step_time_s <= none.step_time_s);

        Plan large = makePlan("llama3-8b", "dgx-h100", 1, layout(1, 1, 8, 1, 8), 8192);
        large.training.kernels = KernelStyle::Eager;
        const StepCost big = evaluate(large);
        QVERIFY(!big.dense_layer.launch_bound);
        // The gaps alone: 42 x 0.9 us of a pass of milliseconds.
        QVERIFY(big.dense_layer.launch_gap_forward_s < 0.01 * big.dense_layer.forward_s);
        // Fused (Megatron / TE) layers launch 12 kernels, 16 with TP and sequence parallelism.
        Plan tp = makePlan("llama3-8b", "dgx-h100", 1, layout(2, 1, 4, 1, 8), 8192);
        tp.training.kernels = KernelStyle::Fused;
        tp.parallel.sequence_parallel = true;
        QCOMPARE(evaluate(tp).dense_layer.kernels_forward, 16.0);
    }

    void zeroStageNeverSwitchesTheFramework()
    {
        // The 70B example (ZeRO-1 on Megatron) at ZeRO-3: the same kernels, attention and TP
        // overlap; what ZeRO-3 adds is its own gather and scatter traffic, not a stack switch
        // (when ZeRO-3 switched to PyTorch kernels the step grew 1.6x).
        Plan plan;
        std::vector<std::string> errors;
        const std::string path = std::string(PARAPLAN_SOURCE_DIR) +
                                 "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
        QVERIFY(loadPlan(path, &plan, &errors, HardwareCatalog::bundled()));
        QCOMPARE(plan.training.framework, TrainingFramework::Megatron);
        const StepEngine engine(plan.cluster, HardwareCatalog::bundled());
        const StepCost one = engine.evaluate(plan);
        plan.parallel.zero = 3;
        const StepCost three = engine.evaluate(plan);
        QVERIFY(one.ok && three.ok);
        QCOMPARE(three.assumptions.kernels, one.assumptions.kernels);
        QCOMPARE(three.assumptions.attention, one.assumptions.attention);
        QCOMPARE(three.assumptions.tp_overlap, one.assumptions.tp_overlap);
        QVERIFY(!three.assumptions.pytorch_framework);
        QCOMPARE(three.breakdown.compute_s, one.breakdown.compute_s);
        const double ratio = three.step_time_s / one.step_time_s;
        QVERIFY2(ratio >= 1 && ratio < 1.2, QByteArray::number(ratio));
        // The difference is data-parallel communication and the optimizer step.
        const double extra = three.step_time_s - one.step_time_s;
        const double dp = (three.breakdown.dp_comm_exposed_s - one.breakdown.dp_comm_exposed_s) +
                          (three.breakdown.optimizer_s - one.breakdown.optimizer_s);
        QVERIFY2(std::abs(extra - dp) <= 1e-9 * one.step_time_s + 1e-12,
                 QByteArray::number(extra) + " vs " + QByteArray::number(dp));
    }

    void zeroThreeAtOneShardRankShardsNothing()
    {
        // dp x cp = 1: ZeRO-3 shards nothing, so it costs as ZeRO-0 (no gather traffic, no
        // gathered copies in memory), as the search scores it.
        Plan plan;
        std::vector<std::string> errors;
        const std::string path = std::string(PARAPLAN_SOURCE_DIR) +
                                 "/resources/examples/llama3-70b-dgx-h100.paraplan.json";
        QVERIFY(loadPlan(path, &plan, &errors, HardwareCatalog::bundled()));
        plan.parallel.tp = 8;
        plan.parallel.pp = 1;
        plan.parallel.dp = 1;
        plan.parallel.interleave = 1;
        plan.parallel.recompute = Recompute::Full;
        plan.cluster.nodes = 1;
        const StepEngine engine(plan.cluster, HardwareCatalog::bundled());
        plan.parallel.zero = 0;
        const StepCost none = engine.evaluate(plan);
        plan.parallel.zero = 3;
        const StepCost three = engine.evaluate(plan);
        QVERIFY2(none.ok && three.ok,
                 three.issues.empty() ? "" : three.issues.front().message.c_str());
        QCOMPARE(three.step_time_s, none.step_time_s);
        QCOMPARE(three.max_stage_total_bytes, none.max_stage_total_bytes);
        // With two ranks it does shard: the memory falls.
        plan.parallel.tp = 4;
        plan.parallel.dp = 2;
        const StepCost sharded = engine.evaluate(plan);
        plan.parallel.zero = 0;
        const StepCost replicated = engine.evaluate(plan);
        QVERIFY(sharded.ok && replicated.ok);
        QVERIFY(sharded.max_stage_total_bytes < replicated.max_stage_total_bytes);
    }

    void engineCacheKeysOnTheWholeCluster()
    {
        // One engine per cluster, compared member by member: the same GPU and node count with
        // another network is another engine (a key of GPU, nodes and name would share it).
        EngineCache cache(2, HardwareCatalog::bundled());
        const ClusterSpec a = test::clusterPreset("dgx-h100", 16, 8);
        ClusterSpec b = a;
        b.network.spine_oversubscription.value = 4;
        const auto first = cache.engineFor(a);
        QCOMPARE(cache.engineFor(a).get(), first.get());
        const auto other = cache.engineFor(b);
        QVERIFY(other.get() != first.get());
        QCOMPARE(cache.engineFor(b).get(), other.get());
        // Past its capacity the cache starts again; engines handed out stay valid.
        ClusterSpec c = a;
        c.nodes = 8;
        const auto third = cache.engineFor(c);
        QVERIFY(cache.engineFor(a).get() != first.get());
        QVERIFY(first->collectives().cluster() == a);
        QVERIFY(third->collectives().cluster() == c);
    }
    // The step waits for the slowest stage's DP sync: the DP collectives reported (the Step
    // time table, the derivation) are that stage's, so their exposed times add up to the
    // breakdown's DP term. On the two-rack example stage 1's sync is slower than the critical
    // stage's (the table showed 84 ms against the breakdown's 139 ms).
    void dpCollectivesAddUpToTheStepsDpTerm()
    {
        for (const char* name :
             {"llama3-70b-two-racks.paraplan.json", "llama3-70b-dgx-h100.paraplan.json",
              "gpt3-175b-dgx-a100.paraplan.json"}) {
            Plan plan;
            std::vector<std::string> errors;
            QVERIFY(loadPlan(std::string(PARAPLAN_SOURCE_DIR "/resources/examples/") + name, &plan,
                             &errors, HardwareCatalog::bundled()));
            const StepCost cost =
                StepEngine(plan.cluster, HardwareCatalog::bundled()).evaluate(plan);
            QVERIFY(cost.ok);
            double dp = 0;
            for (const CollectiveCost& c : cost.collectives)
                if (std::string(c.group) == "dp") // a pointer, not a string
                    dp += c.exposed_s;
            QVERIFY2(std::fabs(dp - cost.breakdown.dp_comm_exposed_s) <= 1e-9 * cost.step_time_s,
                     qPrintable(QString("%1: table %2 s, breakdown %3 s")
                                    .arg(name)
                                    .arg(dp)
                                    .arg(cost.breakdown.dp_comm_exposed_s)));
        }
    }

    void calibrationMeetsTheTarget()
    {
        CalibrationReport report;
        std::string error;
        QVERIFY2(runCalibration({}, &report, &error, HardwareCatalog::bundled()), error.c_str());
        QCOMPARE(report.rows.size(), size_t(8));
        for (const CalibrationRow& row : report.rows)
            qInfo("%-14s %-9s measured %7.2f s predicted %7.2f s error %+5.1f%%", row.model.c_str(),
                  recomputeName(row.plan.parallel.recompute), row.measured_s, row.predicted_s,
                  100 * row.error);
        // Targets of the issue: mean at most 5%, max at most 10% (the best public analytical
        // tool gets 3.65% / 8.87% on this set).
        QVERIFY2(report.mean_abs_error <= 0.05, qPrintable(QString::number(report.mean_abs_error)));
        QVERIFY2(report.max_abs_error <= 0.10, qPrintable(QString::number(report.max_abs_error)));
        QCOMPARE(report.memory.size(), size_t(12));
        QVERIFY2(report.memory_max_abs_error <= 0.10,
                 qPrintable(QString::number(report.memory_max_abs_error)));
    }

    // GB200 NVL72: TP 8 spans two 4-GPU trays, inside the rack's NVLink domain, so its
    // collectives ride NVLink: each call costs what it costs inside one 8-GPU NVLink 5 node
    // (HGX B200), and cutting the domain back to the tray (nvlink_domain_gpus = 4) sends them
    // over the network, slower. The cliff boundary sits at the domain, 72 GPUs.
    void nvl72TensorParallelStaysOnNvlinkAcrossTrays()
    {
        ParallelLayout p = layout(8, 8, 2, 1, 128);
        p.sequence_parallel = true;
        const Plan rack = makePlan("llama3-405b", "gb200-nvl72", 32, p, 8192);
        QCOMPARE(rack.cluster.nvlinkDomainSizes(), (std::vector<long long>{72, 56}));
        const StepCost onRack = evaluate(rack);
        QVERIFY2(onRack.ok, onRack.issues.empty() ? "" : onRack.issues.front().message.c_str());
        QVERIFY(onRack.tp_within_node);
        Plan node = makePlan("llama3-405b", "hgx-b200", 16, p, 8192);
        const StepCost inNode = evaluate(node);
        QVERIFY(inNode.ok);
        Plan trays = rack;
        trays.cluster.nvlink_domain_gpus = 4;
        const StepCost split = evaluate(trays);
        QVERIFY(split.ok);
        QVERIFY(!split.tp_within_node);
        auto tpCall = [](const StepCost& cost) {
            for (const CollectiveCost& c : cost.collectives) {
                if (std::string(c.group) == "tp")
                    return c.call;
            }
            qFatal("no TP collective");
        };
        const CollectiveResult a = tpCall(onRack), b = tpCall(inNode), c = tpCall(split);
        QCOMPARE(a.nodes_spanned, 1);
        QCOMPARE(a.bottleneck, Tier::NVSwitch);
        QCOMPARE(a.bytes, b.bytes);
        QVERIFY(std::fabs(a.time_s - b.time_s) <= 1e-12 * b.time_s);
        QCOMPARE(c.nodes_spanned, 2);
        QCOMPARE(c.bottleneck, Tier::Network);
        QVERIFY2(c.time_s > 2 * a.time_s, qPrintable(QString("%1 %2").arg(c.time_s).arg(a.time_s)));
        QVERIFY(split.stages.front().tp_comm_s > onRack.stages.front().tp_comm_s);
        QVERIFY(split.step_time_s > onRack.step_time_s);

        // The cliffs: the boundary at the domain, not the 4-GPU tray.
        const StepEngine engine(rack.cluster, HardwareCatalog::bundled());
        const PlanAnalysis analysis = analyzePlan(
            rack, onRack, engine,
            [](const ClusterSpec& cluster) {
                return std::make_shared<const StepEngine>(cluster, HardwareCatalog::bundled());
            },
            HardwareCatalog::bundled());
        QCOMPARE(analysis.gpus_per_node, 4);
        QCOMPARE(analysis.nvlink_domain_gpus, 72);
        bool domainTier = false;
        for (const SweepSeries& series : analysis.bandwidth)
            domainTier =
                domainTier || series.name.find("NVLink domain (72 GPUs") != std::string::npos;
        QVERIFY(domainTier);
    }

    // A pipeline over two NVL72 racks: stages 16 GPUs apart put one boundary (GPUs 64 and 80)
    // across the racks' network although each hop's two GPUs would fit in one domain; on one
    // rack the same hops stay on NVLink.
    void nvl72PipelineHopAcrossRacksRidesTheNetwork()
    {
        ParallelLayout p = layout(4, 8, 2, 1, 64);
        p.cp = 2;
        p.sequence_parallel = true;
        p.interleave = 8;
        const Plan twoRacks = makePlan("llama3-405b", "gb200-nvl72", 32, p, 8192);
        const StepCost across = evaluate(twoRacks);
        QVERIFY2(across.ok, across.issues.empty() ? "" : across.issues.front().message.c_str());
        auto ppCall = [](const StepCost& cost) {
            for (const CollectiveCost& c : cost.collectives) {
                if (std::string(c.group) == "pp")
                    return c.call;
            }
            qFatal("no PP transfer");
        };
        QCOMPARE(ppCall(across).bottleneck, Tier::Network);
        // 16 trays of one rack (64 GPUs): the pipeline stays inside the domain.
        ParallelLayout half = p;
        half.dp = 1;
        half.global_batch = 32;
        const Plan oneRack = makePlan("llama3-405b", "gb200-nvl72", 16, half, 8192);
        const StepCost inside = evaluate(oneRack);
        QVERIFY(inside.ok);
        QCOMPARE(ppCall(inside).bottleneck, Tier::NVSwitch);
        QVERIFY(ppCall(across).time_s > 4 * ppCall(inside).time_s);
    }

    void tensorParallelCliff()
    {
        // Seed 11.1.1: "a 42% throughput drop at TP=16 and a 65% drop at TP=32 relative to
        // TP=8, on the same number of GPUs". On DGX H100 nodes (8 NDR NICs each, ~376 GB/s of
        // network per node against ~370 GB/s of NVLink ring bandwidth) a ring that leaves the
        // node is not much slower per byte; the drop comes from TP traffic per GPU doubling
        // with TP while compute per GPU halves, plus inter-node latency. We pin the direction
        // and accept the seed's figures within 17 points (TP=16: 25-60%, TP=32: 48-82%), since
        // the seed's measurement system is unnamed.
        auto throughput = [](int tp) {
            ParallelLayout p = layout(tp, 1, 64 / tp, 1, 256);
            p.zero = 1;
            p.sequence_parallel = true;
            p.recompute = Recompute::Selective;
            const StepCost cost = evaluate(makePlan("llama2-70b", "dgx-h100", 8, p, 4096));
            if (!cost.ok)
                qFatal("%s", cost.issues.front().message.c_str());
            return cost.metrics.tokens_per_s;
        };
        const double tp8 = throughput(8);
        const double drop16 = 1 - throughput(16) / tp8;
        const double drop32 = 1 - throughput(32) / tp8;
        qInfo("TP=16 drop %.1f%%, TP=32 drop %.1f%% (seed: 42%%, 65%%)", 100 * drop16,
              100 * drop32);
        QVERIFY(drop16 > 0.25 && drop16 < 0.60);
        QVERIFY(drop32 > 0.48 && drop32 < 0.82);
        QVERIFY(drop32 > drop16);
    }

    void parameterCounts_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("billions");
        // Published sizes (model cards and papers).
        QTest::newRow("gpt3-175b") << "gpt3-175b" << 175.0;
        QTest::newRow("megatron-1t") << "megatron-1t" << 1008.0;
        QTest::newRow("llama2-7b") << "llama2-7b" << 6.74;
        QTest::newRow("llama2-13b") << "llama2-13b" << 13.0;
        QTest::newRow("llama2-70b") << "llama2-70b" << 68.98;
        QTest::newRow("llama3-8b") << "llama3-8b" << 8.03;
        QTest::newRow("llama3-70b") << "llama3-70b" << 70.55;
        QTest::newRow("llama3-405b") << "llama3-405b" << 405.85;
        QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << 46.70;
    }
    void parameterCounts()
    {
        QFETCH(QString, model);
        QFETCH(double, billions);
        ModelSpec spec;
        std::string error;
        QVERIFY(modelFromPreset(model.toStdString(), &spec, &error));
        const double total = countParameters(spec).total / 1e9;
        QVERIFY2(std::fabs(total / billions - 1) < 0.01, qPrintable(QString::number(total)));
    }

    void narayananParameterFormula()
    {
        // P = 12 L h^2 (1 + 13/(12h) + (V+s)/(12 L h)) for GPT (tied, learned positions).
        ModelSpec gpt;
        std::string error;
        QVERIFY(modelFromPreset("gpt3-175b", &gpt, &error));
        const double L = gpt.layers, h = gpt.hidden, V = gpt.vocab, s = gpt.max_positions;
        const double narayanan = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h));
        // The formula omits the final LayerNorm (2h parameters).
        QCOMPARE(countParameters(gpt).total - 2 * h, narayanan);
    }

    void mixtralActiveParameters()
    {
        ModelSpec mixtral;
        std::string error;
        QVERIFY(modelFromPreset("mixtral-8x7b", &mixtral, &error));
        // Mistral AI: 46.7B total, 12.9B active per token.
        QVERIFY(std::fabs(countParameters(mixtral).active_per_token / 12.9e9 - 1) < 0.01);
    }

    void korthikantiFlops()
    {
        ModelSpec gpt;
        std::string error;
        QVERIFY(modelFromPreset("megatron-22b", &gpt, &error));
        const double B = 4, s = 2048, L = gpt.layers, h = gpt.hidden, V = gpt.vocab;
        const double expected = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
        QVERIFY(std::fabs(modelFlopsPerStep(gpt, B, int(s)) / expected - 1) < 1e-12);
    }

    void pipelineScheduleAndUnevenStages()
    {
        // 126 layers over pp = 4: the middle stages get the two extra layers (the first also
        // runs the embedding, the last the LM head), said in the warnings.
        ParallelLayout p = layout(8, 4, 1, 1, 32);
        p.zero = 1;
        const StepCost cost = evaluate(makePlan("llama3-405b", "dgx-h100", 4, p, 4096));
        QVERIFY(cost.ok);
        QCOMPARE(cost.stages.size(), size_t(4));
        QCOMPARE(cost.stages[0].layers, 31);
        QCOMPARE(cost.stages[1].layers, 32);
        QCOMPARE(cost.stages[2].layers, 32);
        QCOMPARE(cost.stages[3].layers, 31);
        bool said = false;
        for (const std::string& warning : cost.warnings)
            said |= QString::fromStdString(warning).contains("split unevenly: 31 32 32 31");
        QVERIFY(said);
        // 1F1B: step = m x slowest + (sum - slowest) for the fill and drain.
        double sum = 0;
        double slowest = 0;
        for (const StageCost& st : cost.stages) {
            sum += st.microbatch_s;
            slowest = std::max(slowest, st.microbatch_s);
        }
        QVERIFY(std::fabs(cost.breakdown.bubble_s - (sum - slowest)) < 1e-9);
        const double pipelined = cost.breakdown.compute_s + cost.breakdown.recompute_s +
                                 cost.breakdown.tp_comm_exposed_s +
                                 cost.breakdown.pp_comm_exposed_s;
        QVERIFY(std::fabs(pipelined - cost.microbatches * slowest) < 1e-9);
        // m = 32 not divisible by... any m works for 1F1B; the bubble is about (p-1)/m.
        QVERIFY(std::fabs(cost.breakdown.bubble_s / pipelined - 3.0 / 32) < 0.02);
    }

    void interleavingDividesTheBubble()
    {
        ParallelLayout p = layout(8, 8, 1, 1, 64);
        p.sequence_parallel = true;
        p.recompute = Recompute::Selective;
        const StepCost plain = evaluate(makePlan("gpt3-175b", "dgx-a100", 8, p));
        p.interleave = 3;
        const StepCost interleaved = evaluate(makePlan("gpt3-175b", "dgx-a100", 8, p));
        QVERIFY(plain.ok && interleaved.ok);
        QVERIFY(std::fabs(plain.breakdown.bubble_s / interleaved.breakdown.bubble_s - 3) < 0.15);
        // ... at v times the point-to-point traffic.
        QVERIFY(
            std::fabs(interleaved.breakdown.pp_comm_exposed_s / plain.breakdown.pp_comm_exposed_s -
                      3) < 1e-6);
    }

    void activationMemoryFollowsKorthikanti()
    {
        // GPT with dropout, no FlashAttention, t = 8: per layer s b h (10 + 24/t + 5as/(ht))
        // without SP; 34 s b h / t with SP and selective recompute; 2 s b h with full.
        ParallelLayout p = layout(8, 1, 1, 4, 4);
        Plan plan = makePlan("megatron-22b", "dgx-a100", 1, p, 2048, Dtype::FP16);
        plan.training.attention = AttentionKernel::Unfused;
        const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
        const double sbh = s * b * h;
        auto perLayer = [&](Recompute recompute, bool sp) {
            Plan variant = plan;
            variant.parallel.recompute = recompute;
            variant.parallel.sequence_parallel = sp;
            return evaluate(variant).stages.front().activation_bytes_per_layer;
        };
        QVERIFY(std::fabs(perLayer(Recompute::None, false) /
                              (sbh * (10 + 24 / t + 5 * a * s / (h * t))) -
                          1) < 1e-12);
        QVERIFY(std::fabs(perLayer(Recompute::Selective, true) / (34 * sbh / t) - 1) < 1e-12);
        QVERIFY(std::fabs(perLayer(Recompute::Selective, false) / (sbh * (10 + 24 / t)) - 1) <
                1e-12);
        QVERIFY(std::fabs(perLayer(Recompute::Full, false) / (2 * sbh) - 1) < 1e-12);
        // FlashAttention drops the attention-score term.
        plan.training.attention = AttentionKernel::Flash2;
        QVERIFY(std::fabs(perLayer(Recompute::None, false) / (sbh * (10 + 24 / t)) - 1) < 1e-12);
    }

    void zeroShardsModelState()
    {
        // Rajbhandari et al.: with K = 12, stage 1 shards the optimizer state, 2 also the
        // gradients, 3 also the weights.
        ParallelLayout p = layout(1, 1, 64, 1, 64);
        auto stage = [&](int zero) {
            ParallelLayout q = p;
            q.zero = zero;
            return evaluate(makePlan("llama2-7b", "dgx-a100", 8, q)).stages.front();
        };
        const StageCost z0 = stage(0), z1 = stage(1), z2 = stage(2), z3 = stage(3);
        QCOMPARE(z1.optimizer_bytes, z0.optimizer_bytes / 64);
        QCOMPARE(z1.grads_bytes, z0.grads_bytes);
        QCOMPARE(z2.grads_bytes, z0.grads_bytes / 64);
        QCOMPARE(z2.weights_bytes, z0.weights_bytes);
        QCOMPARE(z3.weights_bytes, z0.weights_bytes / 64);
        QCOMPARE(z0.optimizer_bytes, 12 * z0.params);
        QCOMPARE(z0.weights_bytes, 2 * z0.params);
    }

    void dataParallelSyncOverlapsTheBackward()
    {
        ParallelLayout p = layout(8, 1, 8, 1, 64);
        p.zero = 1;
        Plan plan = makePlan("llama2-13b", "dgx-h100", 8, p, 4096);
        const StepCost overlapped = evaluate(plan);
        plan.parallel.dp_overlap = false;
        const StepCost serial = evaluate(plan);
        QVERIFY(overlapped.ok && serial.ok);
        QVERIFY(serial.breakdown.dp_comm_exposed_s > overlapped.breakdown.dp_comm_exposed_s);
        double total = 0;
        for (const CollectiveCost& c : serial.collectives) {
            if (QString(c.group) == "dp")
                total += c.total_s;
        }
        QVERIFY(std::fabs(serial.breakdown.dp_comm_exposed_s - total) < 1e-9);
        // ZeRO-3 moves 3(n-1)/n P with one micro-batch: a reduce-scatter and two all-gathers
        // of every layer (Rajbhandari et al. 2020), each of the per-layer size. With bf16 the
        // gradients are reduced in fp32 (Megatron-LM, torchtitan's FSDP2): twice the bytes.
        ParallelLayout z3 = layout(1, 1, 64, 1, 64);
        z3.zero = 3;
        Plan fsdp = makePlan("llama2-7b", "dgx-h100", 8, z3, 4096);
        auto traffic = [&](const Plan& plan, double* gathered, double* reduced) {
            const StepCost sharded = evaluate(plan);
            QVERIFY(sharded.ok);
            for (const CollectiveCost& c : sharded.collectives) {
                if (c.call.op == CollectiveOp::AllGather) {
                    *gathered = c.calls_per_step * c.call.wire_bytes_per_rank;
                    QCOMPARE(c.calls_per_step, 2.0 * plan.model.layers);
                }
                if (c.call.op == CollectiveOp::ReduceScatter) {
                    *reduced = c.calls_per_step * c.call.wire_bytes_per_rank;
                    QCOMPARE(c.calls_per_step, double(plan.model.layers));
                }
            }
        };
        double gathered = 0;
        double reduced = 0;
        traffic(fsdp, &gathered, &reduced);
        QVERIFY(std::fabs(gathered / reduced - 1) < 1e-9);
        fsdp.training.grad_reduce_bytes = 2;
        traffic(fsdp, &gathered, &reduced);
        QVERIFY(std::fabs(gathered / reduced - 2) < 1e-9);
    }

    void metricsAreConsistent()
    {
        ParallelLayout p = layout(8, 2, 2, 1, 64);
        p.recompute = Recompute::Full;
        Plan plan = makePlan("llama2-13b", "dgx-h100", 4, p, 4096);
        plan.training.train_tokens = 1e12;
        plan.training.gpu_hour_usd = 2;
        const StepCost cost = evaluate(plan);
        QVERIFY(cost.ok);
        QVERIFY(std::fabs(cost.step_time_s - cost.breakdown.total()) < 1e-12);
        QVERIFY(cost.metrics.mfu > 0.1 && cost.metrics.mfu < 1);
        QVERIFY(std::fabs(cost.metrics.hfu / cost.metrics.mfu - 4.0 / 3) < 1e-9);
        QCOMPARE(cost.metrics.tokens_per_step, 64.0 * 4096);
        QVERIFY(std::fabs(cost.metrics.time_to_train_s - 1e12 / cost.metrics.tokens_per_s) < 1e-6);
        QVERIFY(std::fabs(cost.metrics.cost_usd - cost.metrics.gpu_hours * 2) < 1e-6);
    }

    void tpAcrossNodesIsFlagged()
    {
        ParallelLayout p = layout(16, 1, 2, 1, 32);
        const StepCost cost = evaluate(makePlan("llama2-70b", "dgx-h100", 4, p, 4096));
        QVERIFY(cost.ok);
        QVERIFY(!cost.tp_within_node);
        QVERIFY(!cost.warnings.empty());
        QVERIFY(QString::fromStdString(cost.warnings.front()).contains("spans 2 nodes"));
    }

    void mixtureOfExpertsAndContextParallel()
    {
        ParallelLayout p = layout(2, 1, 16, 1, 64);
        p.ep = 8;
        p.zero = 1;
        const StepCost moe = evaluate(makePlan("mixtral-8x7b", "dgx-h100", 4, p, 4096));
        QVERIFY(moe.ok);
        bool sawEp = false;
        for (const CollectiveCost& c : moe.collectives)
            sawEp |= QString(c.group) == "ep" && c.call.op == CollectiveOp::AllToAll;
        QVERIFY(sawEp);
        QVERIFY(moe.breakdown.ep_comm_exposed_s > 0);

        ParallelLayout cp = layout(8, 1, 2, 1, 16);
        cp.cp = 2;
        ParallelLayout noCp = layout(8, 1, 4, 1, 16);
        const StepCost withCp = evaluate(makePlan("llama3-8b", "dgx-h100", 4, cp, 8192));
        const StepCost without = evaluate(makePlan("llama3-8b", "dgx-h100", 4, noCp, 8192));
        QVERIFY(withCp.ok && without.ok);
        QVERIFY(std::fabs(withCp.stages[0].activation_bytes_per_layer /
                              without.stages[0].activation_bytes_per_layer -
                          0.5) < 1e-9);
        bool sawCp = false;
        for (const CollectiveCost& c : withCp.collectives)
            sawCp |= QString(c.group) == "cp";
        QVERIFY(sawCp);
    }

    void rulesNameWhatFailed_data()
    {
        QTest::addColumn<QString>("rule");
        QTest::newRow("gpu-count") << "gpu-count";
        QTest::newRow("tp-heads") << "tp-heads";
        QTest::newRow("tp-kv-heads") << "tp-kv-heads";
        QTest::newRow("pp-layers") << "pp-layers";
        QTest::newRow("interleave-layers") << "interleave-layers";
        QTest::newRow("interleave-pp") << "interleave-pp";
        QTest::newRow("interleave-microbatches") << "interleave-microbatches";
        QTest::newRow("batch-divisible") << "batch-divisible";
        QTest::newRow("cp-seq") << "cp-seq";
        QTest::newRow("ep-moe") << "ep-moe";
        QTest::newRow("ep-experts") << "ep-experts";
        QTest::newRow("sp-tp") << "sp-tp";
        QTest::newRow("zero-range") << "zero-range";
        QTest::newRow("stage-layers") << "stage-layers";
        QTest::newRow("stage-layers: first/last") << "first-last";
        QTest::newRow("dp-shard") << "dp-shard";
        QTest::newRow("zero3-prefetch") << "zero3-prefetch";
        QTest::newRow("attention-gpu") << "attention-gpu";
        QTest::newRow("dtype-gpu") << "dtype-gpu";
        QTest::newRow("seq-positions") << "seq-positions";
        QTest::newRow("positive") << "positive";
        QTest::newRow("figure-range") << "figure-range";
        QTest::newRow("model") << "model";
        QTest::newRow("cluster") << "cluster";
    }
    void rulesNameWhatFailed()
    {
        QFETCH(QString, rule);
        // A valid plan (llama2-70b, 32 H100s), broken in exactly one way per row.
        Plan plan = makePlan("llama2-70b", "dgx-h100", 4, layout(8, 2, 2, 1, 32), 4096);
        QVERIFY(validatePlan(plan, HardwareCatalog::bundled()).empty());
        if (rule == "gpu-count")
            plan.parallel.dp = 3;
        else if (rule == "tp-heads")
            plan = makePlan("llama2-7b", "dgx-h100", 6, layout(6, 1, 8, 1, 32), 4096);
        else if (rule == "tp-kv-heads")
            plan = makePlan("mixtral-8x7b", "dgx-a100", 24, layout(6, 4, 8, 1, 64), 4096);
        else if (rule == "pp-layers")
            plan = makePlan("llama2-7b", "dgx-h100", 8, layout(1, 64, 1, 1, 64), 4096);
        else if (rule == "interleave-layers")
            plan.parallel.interleave = 41; // 40 layers per stage: a chunk would be empty
        else if (rule == "interleave-pp") {
            plan.parallel = layout(8, 1, 4, 1, 32);
            plan.parallel.interleave = 2;
        } else if (rule == "interleave-microbatches") {
            plan.parallel.interleave = 2;
            plan.parallel.global_batch = 6;
        } else if (rule == "batch-divisible")
            plan.parallel.global_batch = 33;
        else if (rule == "cp-seq") {
            plan.parallel.cp = 2;
            plan.parallel.dp = 1;
            plan.training.seq_len = 4094;
        } else if (rule == "ep-moe")
            plan.parallel.ep = 2;
        else if (rule == "ep-experts") {
            plan = makePlan("mixtral-8x7b", "dgx-h100", 4, layout(8, 1, 4, 1, 32), 4096);
            plan.parallel.ep = 4;
            plan.model.experts = 6;
        } else if (rule == "sp-tp") {
            plan.parallel = layout(1, 2, 16, 1, 32);
            plan.parallel.sequence_parallel = true;
        } else if (rule == "zero-range")
            plan.parallel.zero = 4;
        else if (rule == "stage-layers")
            plan.parallel.stage_layers = {30, 40};
        else if (rule == "first-last") {
            plan.parallel.first_stage_layers = 50;
            plan.parallel.last_stage_layers = 40;
        } else if (rule == "dp-shard") {
            plan.parallel.zero = 1;
            plan.parallel.dp_shard = 3;
        } else if (rule == "zero3-prefetch") {
            plan.parallel.zero = 3;
            plan.parallel.zero3_prefetch = -1;
        } else if (rule == "attention-gpu") {
            plan = makePlan("llama2-70b", "dgx-a100", 4, layout(8, 2, 2, 1, 32), 4096);
            plan.training.attention = AttentionKernel::Flash3;
        } else if (rule == "dtype-gpu")
            plan = makePlan("llama2-70b", "dgx-a100", 4, layout(8, 2, 2, 1, 32), 4096, Dtype::FP8);
        else if (rule == "seq-positions")
            plan = makePlan("gpt3-175b", "dgx-a100", 8, layout(8, 8, 1, 1, 8), 4096);
        else if (rule == "positive")
            plan.parallel.micro_batch = 0;
        else if (rule == "figure-range")
            plan.figures.hbm_fraction.value = std::nan("");
        else if (rule == "model")
            plan.model.hidden = -5;
        else if (rule == "cluster")
            plan.cluster.nodes = 0;
        const StepCost cost = evaluate(plan);
        QVERIFY(!cost.ok);
        QVERIFY2(hasRule(cost, rule == "first-last" ? QString("stage-layers") : rule),
                 qPrintable(QString::fromStdString(
                     cost.issues.empty() ? "no issue" : cost.issues.front().rule)));
        for (const PlanIssue& issue : cost.issues)
            QVERIFY(!issue.message.empty());
    }

    void absurdPlansAreRejectedNotCrashing()
    {
        Plan plan = makePlan("llama2-7b", "dgx-h100", 1, layout(8, 1, 1, 1, 8), 4096);
        for (int dp : {0, -1, 100000000}) {
            plan.parallel.dp = dp;
            const StepCost cost = evaluate(plan);
            QVERIFY(!cost.ok);
        }
        plan.parallel.dp = 1;
        plan.training.train_tokens = std::nan("");
        QVERIFY(!evaluate(plan).ok);
        plan.training.train_tokens = 0;
        plan.parallel.micro_batch = 1;
        plan.parallel.global_batch = 2000000000; // beyond the stated range (2^30)
        QVERIFY(!evaluate(plan).ok);
        plan.parallel.global_batch = 1 << 30;
        plan.training.seq_len = 1 << 22;
        const StepCost huge = evaluate(plan);
        QVERIFY(huge.ok); // legal, just enormous
        QVERIFY(std::isfinite(huge.step_time_s) && std::isfinite(huge.metrics.mfu));
        QVERIFY(huge.metrics.mfu > 0 && huge.metrics.mfu < 1);
    }
};

QTEST_GUILESS_MAIN(TestStepModel)
#include "tst_stepmodel.moc"
