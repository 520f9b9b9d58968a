// Trust at today's scale: kernel-level compute figures, shared links, FSDP/ZeRO-3 per layer,
// TP overlap, production layouts (uneven stages, ZeRO with PP, HSDP), the calibration sets
// row by row through the plan-file path, a property test over the search space, and the
// search on Llama 3 405B at 16,384 H100s.
#include "calibration.h"
#include "clusterio.h"
#include "kernels.h"
#include "measurement.h"
#include "modelio.h"
#include "planio.h"
#include "search.h"
#include "stepmodel.h"
#include "testplans.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace paraplan;
using test::evaluate;
using test::layout;

namespace {

// The dense rows of the 2026 calibration set (FP8 on H100 and B200, BF16 on GB200 NVL72).
// Issue 24 asks 10% each: NeMo FP8 Llama 3 70B on H100 (+5.1%), FP8 405B on B200 (-3.9%) and
// BF16 405B on GB200 NVL72 (-7.4%) meet it; torchtitan float8 on Meta's 500 W HBM2e H100
// (-13%; its bf16 twins are as fast: that part's sustained clocks have no published figure)
// does not yet and is held where it stands, as a guard against regressions. docs/engine.md,
// "Calibration", says so.
constexpr double kDense2026Tolerance = 0.20;
// The MoE rows of the 2026 set, each (the MoE issue's bound).
constexpr double kMoe2026Tolerance = 0.15;
// Qwen3-30B-A3B on 16 H100 (FP8, HybridEP over two nodes) is predicted about a fifth too fast,
// outside the MoE issue's bound: an open gap. With the dispatch costed as HybridEP moves it
// (once per remote node, within 12% of its published kernel timing) it no longer hides the
// fine-grained experts' missing cost; this bound keeps the gap from growing unseen.
constexpr double kFineGrainedMoeGap = 0.25;
// Any MoE run (the Megatron-Bridge 26.04.01 set), each.
constexpr double kMoeAnyRunBound = 0.35;
constexpr double kFp8H100Tolerance = 0.10;

Plan makePlan(const char* model, const char* cluster, int nodes, int seq = 4096,
              std::optional<double> spine = {}, std::optional<int> perRack = {})
{
    Plan plan;
    std::string error;
    if (!modelFromPreset(model, &plan.model, &error))
        qFatal("%s", error.c_str());
    ClusterOptions options;
    options.nodes = nodes;
    options.spine_oversubscription = spine;
    options.nodes_per_rack = perRack;
    if (!clusterFromPreset(cluster, options, &plan.cluster, &error, HardwareCatalog::bundled()))
        qFatal("%s", error.c_str());
    plan.training.seq_len = seq;
    plan.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan.cluster.gpu_id),
                                        plan.training.optimizer, plan.training.dtype);
    return plan;
}

Plan planFromText(const std::string& text)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!planFromJsonText(text, {}, &plan, &errors, HardwareCatalog::bundled()))
        qFatal("%s", errors.front().c_str());
    return plan;
}

const CollectiveCost* findCollective(const StepCost& cost, const char* group, CollectiveOp op)
{
    for (const CollectiveCost& c : cost.collectives) {
        if (std::string(c.group) == group && c.call.op == op)
            return &c;
    }
    return nullptr;
}

// The largest share of peak any kernel of the plan can reach: a perfectly shaped GEMM, or the
// attention kernel at any length. Model FLOPs count the whole score matrix where causal
// kernels compute half of it, so attention may show up to twice its share.
double kernelCeiling(const Plan& plan, const StepCost& cost)
{
    const GpuSpec* gpu = HardwareCatalog::bundled().gpu(plan.cluster.gpu_id);
    const KernelFigures& k = gpu->kernels;
    const double huge = 1 << 20;
    // MFU counts against the plan's dtype peak (the FP8 one under FP8): the 16-bit kernels'
    // shares scale by the 16-bit peak over it.
    const double fp8 = plan.training.dtype == Dtype::FP8;
    const double scale = fp8 ? gpu->peakTflops(Dtype::BF16) / gpu->peakTflops(Dtype::FP8) : 1;
    const double gemm =
        scale * kernels::gemmEfficiency(k, plan.figures.gemm_peak_fraction.value, huge, huge, huge);
    double fp8Gemm = 0;
    if (fp8)
        fp8Gemm = std::max(kernels::gemmEfficiencyGivenReference(
                               k, plan.figures.fp8_gemm_peak_fraction.value,
                               kernels::fp8GemmReferenceEfficiency(k), huge, huge, huge, 128),
                           kernels::gemmEfficiencyGivenReference(
                               k, plan.figures.fp8_backward_gemm_peak_fraction.value,
                               kernels::fp8PromotedReferenceEfficiency(k), huge, huge, huge, 128));
    const double attention =
        2 * scale *
        std::max(attentionFigure(plan, false, HardwareCatalog::bundled()).value,
                 attentionFigure(plan, true, HardwareCatalog::bundled()).value);
    (void)cost;
    return std::max({gemm, fp8Gemm, attention});
}

} // namespace

class TestTrust : public QObject
{
    Q_OBJECT

private slots:
    void gemmFiguresFollowThePublishedBenchmarks()
    {
        const HardwareCatalog& catalog = HardwareCatalog::bundled();
        for (const char* id : {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200-hgx"}) {
            const GpuSpec* gpu = catalog.gpu(id);
            QVERIFY(gpu && gpu->kernels.sm_count > 0 && gpu->kernels.gemm_tflops > 0);
            QVERIFY(!gpu->kernels.gemm_source.empty());
            const EngineFigures f = defaultEngineFigures(*gpu, Optimizer::Adam, Dtype::BF16);
            // The reference shape reproduces the published share (times the fixed-shape
            // discount the source documents).
            const auto& s = gpu->kernels.gemm_shape;
            const double atReference =
                kernels::gemmEfficiency(gpu->kernels, f.gemm_peak_fraction.value, s[0], s[1], s[2]);
            const double discount = gpu->kernels.gemm_best_of_search ? 0.94 : 1.0;
            QVERIFY(std::fabs(atReference / (discount * gpu->kernels.gemm_tflops /
                                             gpu->peakTflops(Dtype::BF16)) -
                              1) < 1e-9);
            // Small and skinny GEMMs are slower.
            const double big =
                kernels::gemmEfficiency(gpu->kernels, f.gemm_peak_fraction.value, 8192, 8192, 8192);
            const double small =
                kernels::gemmEfficiency(gpu->kernels, f.gemm_peak_fraction.value, 1024, 1024, 1024);
            const double skinny =
                kernels::gemmEfficiency(gpu->kernels, f.gemm_peak_fraction.value, 8192, 8192, 128);
            QVERIFY2(small < 0.85 * big, id);
            QVERIFY2(skinny < 0.8 * big, id);
            QVERIFY(big <= 1.0);
        }
    }

    void attentionFiguresByKernelAndLength()
    {
        const GpuSpec* h100 = HardwareCatalog::bundled().gpu("h100-sxm5-80gb");
        const AttentionFigures* fa2 = kernels::attentionFigures(*h100, AttentionKernel::Flash2);
        const AttentionFigures* fa3 = kernels::attentionFigures(*h100, AttentionKernel::Flash3);
        const AttentionFigures* cudnn = kernels::attentionFigures(*h100, AttentionKernel::Cudnn);
        const AttentionFigures* sdpa = kernels::attentionFigures(*h100, AttentionKernel::Sdpa);
        const AttentionFigures* triton = kernels::attentionFigures(*h100, AttentionKernel::Triton);
        QVERIFY(fa2 && fa3 && cudnn && sdpa && triton);
        // FlashAttention-3 paper, causal head dim 128 forward at 16k: Triton 378 TFLOP/s
        // between FlashAttention-2 (335) and cuDNN (539); at 512 below both (146).
        QVERIFY(triton != fa2 && triton->source.find("Triton") != std::string::npos);
        const double triton16k = 989 * kernels::attentionShare(triton->fwd, *triton, 16384, 128);
        QVERIFY2(std::fabs(triton16k / 378 - 1) < 0.02, qPrintable(QString::number(triton16k)));
        QVERIFY(kernels::attentionShare(triton->fwd, *triton, 16384, 128) >
                kernels::attentionShare(fa2->fwd, *fa2, 16384, 128));
        QVERIFY(kernels::attentionShare(triton->fwd, *triton, 16384, 128) <
                kernels::attentionShare(cudnn->fwd, *cudnn, 16384, 128));
        // A GPU without Triton figures (A100) falls back to FlashAttention-2's.
        const GpuSpec* a100sxm = HardwareCatalog::bundled().gpu("a100-sxm4-80gb");
        QCOMPARE(kernels::attentionFigures(*a100sxm, AttentionKernel::Triton),
                 kernels::attentionFigures(*a100sxm, AttentionKernel::Flash2));
        // FlashAttention-3 paper: FA2 reaches about 35% of H100, FA3 about 62% (causal, d 128).
        QVERIFY(fa3->fwd > 1.5 * fa2->fwd && fa3->bwd > 1.5 * fa2->bwd);
        QVERIFY(sdpa->fwd < fa2->fwd);
        QVERIFY(!fa2->source.empty() && !fa3->source.empty());
        // Short sequences are slower, head dim 64 slower than 128.
        QVERIFY(kernels::attentionShare(fa3->fwd, *fa3, 512, 128) <
                0.6 * kernels::attentionShare(fa3->fwd, *fa3, 16384, 128));
        QVERIFY(kernels::attentionShare(fa3->fwd, *fa3, 8192, 64) <
                kernels::attentionShare(fa3->fwd, *fa3, 8192, 128));
        // No FlashAttention-3 off Hopper: the A100 falls back to nothing for it, and the plan
        // rule says so (tst_stepmodel's attention-gpu row).
        const GpuSpec* a100 = HardwareCatalog::bundled().gpu("a100-sxm4-80gb");
        QVERIFY(!a100->kernels.attention[size_t(AttentionKernel::Flash3)].available);

        // In a plan: flash3 is faster than flash2, flash2 than unfused, on H100 at 8K.
        Plan plan = makePlan("llama3-8b", "dgx-h100", 1, 8192);
        plan.parallel = layout(1, 1, 8, 1, 8, 1);
        auto step = [&](AttentionKernel kernel) {
            Plan p = plan;
            p.training.attention = kernel;
            const StepCost cost = evaluate(p);
            if (!cost.ok)
                qFatal("%s", cost.issues.front().message.c_str());
            return cost.dense_layer.attention_forward_s + cost.dense_layer.attention_backward_s;
        };
        QVERIFY(step(AttentionKernel::Flash3) < step(AttentionKernel::Flash2));
        QVERIFY(step(AttentionKernel::Flash2) < step(AttentionKernel::Unfused));
        // An override replaces the published figure.
        plan.training.attention = AttentionKernel::Flash2;
        plan.figures.attention_fraction = userEntry(0.7, "test");
        QCOMPARE(attentionFigure(plan, false, HardwareCatalog::bundled()).value, 0.7);
    }

    void eagerElementwiseCostsMoreThanFused()
    {
        Plan plan = makePlan("llama3-8b", "dgx-h100", 1, 8192);
        plan.parallel = layout(1, 1, 8, 1, 8, 3);
        plan.training.kernels = KernelStyle::Fused;
        const StepCost fused = evaluate(plan);
        plan.training.kernels = KernelStyle::Auto; // torchtitan: eager unless compiled
        plan.training.framework = TrainingFramework::Torchtitan;
        const StepCost eager = evaluate(plan);
        QVERIFY(fused.ok && eager.ok);
        QCOMPARE(eager.assumptions.kernels, KernelStyle::Eager);
        QCOMPARE(eager.assumptions.attention, AttentionKernel::Sdpa);
        QVERIFY(eager.dense_layer.elementwise_forward_bytes >
                3 * fused.dense_layer.elementwise_forward_bytes);
        QVERIFY(eager.step_time_s > 1.1 * fused.step_time_s);
    }

    void fsdpGathersPerLayerAndSharesTheNetwork()
    {
        // Llama 3 70B, ZeRO-3 on 64 A100s: per-layer gathers and scatters of the per-layer
        // size; the network's busy time appears in `links`.
        Plan plan = makePlan("llama3-70b", "dgx-a100", 8, 4096);
        plan.parallel = layout(1, 1, 64, 1, 64, 3);
        plan.parallel.recompute = Recompute::Full;
        const StepCost cost = evaluate(plan);
        QVERIFY(cost.ok);
        const CollectiveCost* gather = findCollective(cost, "dp", CollectiveOp::AllGather);
        const CollectiveCost* scatter = findCollective(cost, "dp", CollectiveOp::ReduceScatter);
        QVERIFY(gather && scatter);
        QCOMPARE(gather->calls_per_step, 2.0 * plan.model.layers);
        QCOMPARE(scatter->calls_per_step, double(plan.model.layers));
        QVERIFY(std::fabs(gather->call.bytes / (cost.stages[0].params / 80 * 2) - 1) < 0.02);
        bool network = false;
        for (const LinkUse& link : cost.links) {
            QVERIFY(link.busy_s <= cost.step_time_s * (1 + 1e-9));
            network |= link.tier == Tier::Network && link.busy_s > 0;
        }
        QVERIFY(network);

        // Starve the compute (short sequences) and the same traffic cannot hide: the step is
        // at least the network's busy time, and a warning says why.
        plan.training.seq_len = 128;
        const StepCost starved = evaluate(plan);
        QVERIFY(starved.ok);
        double networkBusy = 0;
        for (const LinkUse& link : starved.links) {
            if (link.tier == Tier::Network)
                networkBusy = link.busy_s;
        }
        QVERIFY(networkBusy > 0);
        QVERIFY(starved.step_time_s >= networkBusy * (1 - 1e-9));
        QVERIFY(starved.breakdown.dp_comm_exposed_s > 0.5 * networkBusy);
    }

    void tensorParallelAcrossNodesLoadsTheNics()
    {
        // TP 16 on 8-GPU nodes: its ring crosses the NICs, which the DP and PP traffic share.
        Plan plan = makePlan("llama3-70b", "dgx-h100", 16, 8192);
        plan.parallel = layout(16, 4, 2, 1, 512, 1);
        plan.parallel.sequence_parallel = true;
        const StepCost cost = evaluate(plan);
        QVERIFY(cost.ok);
        const CollectiveCost* tp = findCollective(cost, "tp", CollectiveOp::AllGather);
        QVERIFY(tp && tp->call.nodes_spanned == 2);
        double network = 0;
        for (const LinkUse& link : cost.links) {
            if (link.tier == Tier::Network) {
                network = link.busy_s;
                QCOMPARE(std::string(link.busiest_group), std::string("tp"));
            }
        }
        // The bandwidth part of every TP call (its latency, ~10% here, keeps no link busy).
        QVERIFY(network >= 0.85 * tp->total_s);
        QVERIFY(cost.step_time_s >= network);
    }

    void aPlanKeepsItsFramework()
    {
        // ZeRO-3 does not switch a Megatron plan to PyTorch kernels: the framework is a plan
        // setting, and the default.
        Plan plan = makePlan("llama3-8b", "dgx-h100", 1, 8192);
        plan.parallel = layout(1, 1, 8, 1, 8, 3);
        QCOMPARE(plan.training.framework, TrainingFramework::Megatron);
        const StepCost megatron = evaluate(plan);
        QVERIFY(megatron.ok && !megatron.assumptions.pytorch_framework);
        QCOMPARE(megatron.assumptions.kernels, KernelStyle::Fused);
        QCOMPARE(megatron.assumptions.attention, AttentionKernel::Flash2);
        plan.training.framework = TrainingFramework::Torchtitan;
        const StepCost titan = evaluate(plan);
        QVERIFY(titan.ok && titan.assumptions.pytorch_framework);
        QCOMPARE(titan.assumptions.kernels, KernelStyle::Eager);
        QCOMPARE(titan.assumptions.attention, AttentionKernel::Sdpa);
        QVERIFY(titan.step_time_s > megatron.step_time_s);
        // The search costs every candidate on the plan's framework, and skips (and counts by
        // rule) the layouts it cannot run: torchtitan has no ZeRO-1.
        plan.parallel.zero = 1;
        SearchOptions options;
        options.max_micro_batch = 2;
        const SearchResult result = searchPlans(plan, HardwareCatalog::bundled(), options);
        QVERIFY(result.ok);
        QVERIFY(!result.top.empty());
        for (const SearchCandidate& c : result.top) {
            QVERIFY(c.cost.assumptions.pytorch_framework);
            QVERIFY(c.layout.shardingZero() != 1);
        }
        QVERIFY(result.rejected.count("framework-zero") == 1);
        QVERIFY(result.rejected.at("framework-zero") > 0);
        plan.training.framework = TrainingFramework::Megatron;
        const SearchResult onMegatron = searchPlans(plan, HardwareCatalog::bundled(), options);
        QVERIFY(onMegatron.ok);
        QCOMPARE(onMegatron.rejected.count("framework-zero"), size_t(0));
        for (const SearchCandidate& c : onMegatron.top)
            QVERIFY(!c.cost.assumptions.pytorch_framework);
    }

    void contextParallelRingCostsItsSlowestHop()
    {
        // CP 16 with TP 1: the ring spans two nodes, so a ring step runs at network speed.
        Plan plan = makePlan("llama3-8b", "dgx-h100", 4, 32768);
        plan.parallel = layout(1, 1, 2, 1, 2, 1);
        plan.parallel.cp = 16;
        const StepCost spanning = evaluate(plan);
        QVERIFY(spanning.ok);
        const CollectiveCost* ring = findCollective(spanning, "cp", CollectiveOp::SendRecv);
        QVERIFY(ring);
        QCOMPARE(ring->call.bottleneck, Tier::Network);
        plan.parallel.cp = 8;
        plan.parallel.dp = 4;
        plan.parallel.global_batch = 4;
        const StepCost inNode = evaluate(plan);
        QVERIFY(inNode.ok);
        QVERIFY(findCollective(inNode, "cp", CollectiveOp::SendRecv)->call.bottleneck !=
                Tier::Network);
    }

    void tensorParallelOverlapHidesMostOfItsTraffic()
    {
        Plan plan = makePlan("gpt3-175b", "dgx-h100", 16, 2048);
        plan.parallel = layout(4, 8, 4, 1, 256, 1);
        plan.parallel.sequence_parallel = true;
        plan.parallel.interleave = 12;
        plan.parallel.tp_overlap = TpOverlap::None;
        const StepCost exposed = evaluate(plan);
        plan.parallel.tp_overlap = TpOverlap::Auto; // Megatron-style with SP: ag-gemm
        const StepCost overlapped = evaluate(plan);
        QVERIFY(exposed.ok && overlapped.ok);
        QVERIFY(overlapped.assumptions.tp_overlap && !exposed.assumptions.tp_overlap);
        QVERIFY(overlapped.breakdown.tp_comm_exposed_s < 0.5 * exposed.breakdown.tp_comm_exposed_s);
        // ... while the GEMMs, run in tp chunks, get slower.
        QVERIFY(overlapped.dense_layer.gemm_forward_s > exposed.dense_layer.gemm_forward_s);
        QVERIFY(overlapped.step_time_s < exposed.step_time_s);
    }

    void productionLayoutsAreAccepted()
    {
        // Llama 3 405B as Meta ran it: tp8 pp16 dp128, first and last stage one layer lighter,
        // interleaved (Dubey et al. 2024, section 3.3.2).
        const std::string text = R"({
            "model": {"preset": "llama3-405b"},
            "cluster": {"preset": "dgx-h100", "nodes": 2048},
            "parallel": {"tp": 8, "pp": 16, "dp": 128, "micro_batch": 1, "global_batch": 2048,
                         "sequence_parallel": true, "zero": 1, "interleave": 2,
                         "first_stage_layers": 7, "last_stage_layers": 7},
            "training": {"seq_len": 8192, "flash_attention": true}})";
        Plan plan = planFromText(text);
        const StepCost cost = evaluate(plan);
        QVERIFY2(cost.ok, cost.ok ? "" : cost.issues.front().message.c_str());
        QCOMPARE(cost.stages.front().layers, 7);
        QCOMPARE(cost.stages.back().layers, 7);
        QCOMPARE(cost.stages[1].layers, 8);
        // The same split given stage by stage.
        std::vector<int> split(16, 8);
        split.front() = split.back() = 7;
        plan.parallel.first_stage_layers = plan.parallel.last_stage_layers = 0;
        plan.parallel.stage_layers = split;
        QCOMPARE(evaluate(plan).step_time_s, cost.step_time_s);
        // Round trip through the plan file.
        Plan again = planFromText(planToJsonText(plan, HardwareCatalog::bundled()));
        QCOMPARE(again.parallel.stage_layers, split);
        // ZeRO-2/3 with pipeline parallelism (torchtitan's FSDP + PP) and HSDP.
        plan.parallel.zero = 3;
        QVERIFY(evaluate(plan).ok);
        Plan hsdp = makePlan("llama3-70b", "dgx-h100", 8, 4096);
        hsdp.parallel = layout(1, 1, 64, 1, 64, 3);
        const StepCost full = evaluate(hsdp);
        hsdp.parallel.dp_shard = 8;
        const StepCost hybrid = evaluate(hsdp);
        QVERIFY(full.ok && hybrid.ok);
        QVERIFY(std::fabs(hybrid.stages[0].optimizer_bytes / full.stages[0].optimizer_bytes - 8) <
                1e-9);
        bool replicas = false;
        for (const CollectiveCost& c : hybrid.collectives)
            replicas |= c.call.op == CollectiveOp::AllReduce && c.call.ranks == 8;
        QVERIFY(replicas);
        Plan hsdpAgain = planFromText(planToJsonText(hsdp, HardwareCatalog::bundled()));
        QCOMPARE(hsdpAgain.parallel.dp_shard, 8);
    }

    void newSettingsRoundTripAndTheOldSwitchStillReads()
    {
        Plan plan = planFromText(R"({"model": {"preset": "llama3-8b"},
            "cluster": {"preset": "dgx-h100", "nodes": 1},
            "parallel": {"tp": 2, "dp": 4, "micro_batch": 1, "global_batch": 8,
                         "sequence_parallel": true, "tp_overlap": "ag-gemm", "zero": 3,
                         "zero3_prefetch": 2},
            "training": {"attention": "flash3", "kernels": "fused", "grad_reduce_dtype": "bf16"},
            "overrides": {"attention_bwd_fraction": 0.5, "comm_sm_share": 0.1,
                          "gpu_spread": 0.01}})");
        Plan again = planFromText(planToJsonText(plan, HardwareCatalog::bundled()));
        QCOMPARE(again.parallel.tp_overlap, TpOverlap::AgGemm);
        QCOMPARE(again.parallel.zero3_prefetch, 2);
        QCOMPARE(again.training.attention, AttentionKernel::Flash3);
        QCOMPARE(again.training.kernels, KernelStyle::Fused);
        QCOMPARE(again.training.grad_reduce_bytes, 2);
        QCOMPARE(again.figures.attention_bwd_fraction.value, 0.5);
        QCOMPARE(again.figures.comm_sm_share.value, 0.1);
        QCOMPARE(again.figures.gpu_spread.value, 0.01);
        const Plan legacy = planFromText(R"({"model": {"preset": "llama3-8b"},
            "cluster": {"preset": "dgx-h100", "nodes": 1},
            "parallel": {"dp": 8, "micro_batch": 1, "global_batch": 8},
            "training": {"flash_attention": false}})");
        QCOMPARE(legacy.training.attention, AttentionKernel::Unfused);
        std::vector<std::string> errors;
        Plan bad;
        QVERIFY(!planFromJsonText(R"({"model": {"preset": "llama3-8b"},
            "cluster": {"preset": "dgx-h100", "nodes": 1},
            "parallel": {"dp": 8, "micro_batch": 1, "global_batch": 8},
            "training": {"attention": "flash9"}})",
                                  {}, &bad, &errors, HardwareCatalog::bundled()));
        QVERIFY(QString::fromStdString(errors.front()).contains("flash2"));
    }

    void aMeasurementReplacesAKernelFigure()
    {
        const std::string base = R"({"model": {"preset": "llama3-8b"},
            "cluster": {"preset": "dgx-h100", "nodes": 1},
            "parallel": {"dp": 8, "micro_batch": 1, "global_batch": 8, "zero": 1},
            "training": {"seq_len": 8192})";
        const Plan assumed = planFromText(base + "}");
        Plan measured = planFromText(base + R"(, "measured": [{"figure": "gemm_peak_fraction",
            "value": 0.6, "assumed": 0.755, "run": "probe on h100-a, 2026-11-30"}]})");
        QCOMPARE(measured.figures.gemm_peak_fraction.origin, Origin::Measurement);
        QVERIFY(
            QString::fromStdString(measured.figures.gemm_peak_fraction.source).contains("h100-a"));
        QVERIFY(evaluate(measured).step_time_s > evaluate(assumed).step_time_s);
        // Kept in the plan file, and reverted to the published figure.
        const Plan again = planFromText(planToJsonText(measured, HardwareCatalog::bundled()));
        QCOMPARE(again.figures.gemm_peak_fraction.value, 0.6);
        QVERIFY(
            revertMeasurementOfPlan("gemm_peak_fraction", &measured, HardwareCatalog::bundled()));
        QCOMPARE(measured.figures.gemm_peak_fraction.value,
                 assumed.figures.gemm_peak_fraction.value);
        QCOMPARE(measured.figures.gemm_peak_fraction.origin, Origin::Preset);
    }

    void calibrationSetsRowByRow()
    {
        std::vector<double> modern;
        std::vector<double> dense2026;
        for (const std::string& path : bundledCalibrationSets()) {
            CalibrationReport report;
            std::string error;
            QVERIFY2(runCalibration(path, &report, &error, HardwareCatalog::bundled()),
                     error.c_str());
            for (const CalibrationRow& row : report.rows) {
                qInfo("%-16s %-36s measured %7.2f s predicted %7.2f s error %+5.1f%%",
                      report.id.c_str(), row.name.c_str(), row.measured_s, row.predicted_s,
                      100 * row.error);
                QVERIFY(!row.assumptions.empty());
                if (report.id == "2026") {
                    // FP8 recipes, Blackwell and GB200 NVL72 (dense), and MoE layouts (their
                    // dispatch as Megatron-Core's dispatchers send it, with folding).
                    QVERIFY2(row.predicted_s > 0 && std::isfinite(row.predicted_s),
                             row.name.c_str());
                    QVERIFY2(!row.family.empty(), row.name.c_str());
                    if (row.family.rfind("moe", 0) != 0)
                        dense2026.push_back(row.error);
                    else
                        QVERIFY2(std::fabs(row.error) <=
                                     (row.name.find("qwen3-30b") != std::string::npos
                                          ? kFineGrainedMoeGap
                                          : kMoe2026Tolerance),
                                 row.name.c_str());
                    if (row.family == "fp8-dense-h100")
                        QVERIFY2(std::fabs(row.error) <= kFp8H100Tolerance, row.name.c_str());
                } else if (report.id == "moe-megatron-bridge-2604") {
                    // A check beyond the 2026 set's MoE rows: each within the MoE issue's
                    // bound on any run (docs/engine.md, "Calibration": where each stands).
                    QVERIFY2(std::fabs(row.error) <= kMoeAnyRunBound, row.name.c_str());
                } else if (report.id == "korthikanti2022") {
                    QVERIFY2(std::fabs(row.error) <= 0.06, row.name.c_str());
                } else if (report.id == "torchtitan2024") {
                    modern.push_back(std::fabs(row.error));
                    if (row.name.find("405b") != std::string::npos) {
                        // 500 W HBM2e H100s: a DGX H100 must come out faster.
                        QVERIFY2(row.error < 0, row.name.c_str());
                        QVERIFY2(row.error > -0.20, row.name.c_str());
                    } else {
                        QVERIFY2(std::fabs(row.error) <= 0.08, row.name.c_str());
                    }
                } else {
                    modern.push_back(std::fabs(row.error));
                    QVERIFY2(std::fabs(row.error) <= 0.10, row.name.c_str());
                }
            }
            if (report.id == "korthikanti2022") {
                QVERIFY(report.mean_abs_error <= 0.03);
                QVERIFY(report.max_abs_error <= 0.06);
            }
        }
        QCOMPARE(modern.size(), size_t(10));
        QCOMPARE(dense2026.size(), size_t(4));
        for (double e : dense2026)
            QVERIFY2(std::fabs(e) <= kDense2026Tolerance, qPrintable(QString::number(e)));
        double sum = 0;
        for (double e : modern)
            sum += e;
        std::sort(modern.begin(), modern.end());
        qInfo("modern sets together: mean %.1f%%, median %.1f%%", 100 * sum / modern.size(),
              100 * (modern[4] + modern[5]) / 2);
        // The modern rows together (mean and median of |error|); docs/engine.md, "Accuracy",
        // says where the H100 rows still fall short.
        QVERIFY(sum / modern.size() <= 0.08);
        QVERIFY((modern[4] + modern[5]) / 2 <= 0.08);
    }

    void noPlanOutrunsItsLinksOrItsKernels_data()
    {
        QTest::addColumn<QString>("cluster");
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("fp8");
        for (const char* cluster : {"dgx-a100", "dgx-h100", "fat-tree-2:1"})
            for (const char* model : {"llama3-8b", "llama3-70b", "mixtral-8x7b"})
                QTest::newRow(qPrintable(QString("%1 %2").arg(cluster, model)))
                    << QString(cluster) << QString(model) << false;
        // Blackwell: HGX B200 nodes and GB200 NVL72 trays (16 trays of 4: 64 GPUs in one
        // NVLink domain), in bf16 and under FP8 recipes, as the H100 nodes.
        for (const char* cluster : {"dgx-h100", "hgx-b200", "gb200-nvl72"})
            for (const char* model : {"llama3-8b", "llama3-70b"})
                for (bool fp8 : {false, true}) {
                    if (!fp8 && QString(cluster) == "dgx-h100")
                        continue; // above
                    QTest::newRow(
                        qPrintable(QString("%1 %2 %3").arg(cluster, model, fp8 ? "fp8" : "bf16")))
                        << QString(cluster) << QString(model) << fp8;
                }
    }
    void noPlanOutrunsItsLinksOrItsKernels()
    {
        // Every valid layout of the search space on 64 GPUs: no step shorter than the busy
        // time of any link, and no MFU above the kernel figures it was built from.
        QFETCH(QString, cluster);
        QFETCH(QString, model);
        QFETCH(bool, fp8);
        const bool fatTree = cluster.startsWith("fat-tree");
        const int nodes = cluster == "gb200-nvl72" ? 16 : 8; // 64 GPUs
        Plan base = fatTree ? makePlan(qPrintable(model), "dgx-h100", 8, 4096, 2.0, 2)
                            : makePlan(qPrintable(model), qPrintable(cluster), nodes, 4096);
        base.parallel.global_batch = 128;
        if (fp8) {
            base.training.dtype = Dtype::FP8;
            base.figures =
                defaultEngineFigures(*HardwareCatalog::bundled().gpu(base.cluster.gpu_id),
                                     base.training.optimizer, Dtype::FP8);
        }
        SearchOptions options;
        options.max_micro_batch = 4;
        options.max_interleave = 2;
        const StepEngine engine(base.cluster, HardwareCatalog::bundled());
        long long checked = 0;
        for (const ParallelLayout& p : enumerateLayouts(base, options)) {
            Plan plan = base;
            plan.parallel = p;
            const StepCost cost = engine.evaluate(plan);
            if (!cost.ok)
                continue;
            ++checked;
            QVERIFY(std::isfinite(cost.step_time_s) && cost.step_time_s > 0);
            for (const LinkUse& link : cost.links)
                QVERIFY2(cost.step_time_s >= link.busy_s * (1 - 1e-9),
                         qPrintable(QString("%1 busy %2 s > step %3 s")
                                        .arg(tierName(link.tier))
                                        .arg(link.busy_s)
                                        .arg(cost.step_time_s)));
            QVERIFY2(cost.metrics.mfu <= kernelCeiling(plan, cost) + 1e-9,
                     qPrintable(QString("MFU %1").arg(cost.metrics.mfu)));
            if (!fp8)
                continue;
            // FP8 shortens the linear layers' GEMMs and nothing else (casts add time): the
            // step speeds up by at most as much as the layer's GEMMs do.
            Plan bf16 = plan;
            bf16.training.dtype = Dtype::BF16;
            const StepCost twin = engine.evaluate(bf16);
            if (!twin.ok)
                continue;
            const double gemmRatio =
                (twin.dense_layer.gemm_forward_s + twin.dense_layer.gemm_backward_s) /
                (cost.dense_layer.gemm_forward_s + cost.dense_layer.gemm_backward_s);
            QVERIFY2(twin.step_time_s / cost.step_time_s <= std::max(1.0, gemmRatio) + 1e-9,
                     qPrintable(QString("FP8 speed-up %1, its GEMMs' %2")
                                    .arg(twin.step_time_s / cost.step_time_s)
                                    .arg(gemmRatio)));
        }
        QVERIFY(checked > 100);
    }

    void searchAtLlama3Scale()
    {
        // Llama 3 405B on 2,048 DGX H100 nodes, global batch 2,048 x 8,192 tokens, starting
        // from Meta's layout.
        Plan base = planFromText(R"({
            "model": {"preset": "llama3-405b"},
            "cluster": {"preset": "dgx-h100", "nodes": 2048},
            "parallel": {"tp": 8, "pp": 16, "dp": 128, "micro_batch": 1, "global_batch": 2048,
                         "sequence_parallel": true, "zero": 1,
                         "first_stage_layers": 7, "last_stage_layers": 7},
            "training": {"seq_len": 8192, "flash_attention": true}})");
        SearchOptions options;
        options.threads = 2;
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY(result.ok);
        QCOMPARE(result.top.size(), size_t(10));
        for (const SearchCandidate& c : result.top) {
            for (const LinkUse& link : c.cost.links)
                QVERIFY(c.cost.step_time_s >= link.busy_s * (1 - 1e-9));
        }
        qInfo("best %.2f s at %.1f%% MFU; Meta's layout %.2f s, rank %lld",
              result.top[0].step_time_s, 100 * result.top[0].cost.metrics.mfu,
              result.given.step_time_s, result.given_rank);
        QVERIFY(result.top.front().cost.metrics.mfu <= 0.55);
        QVERIFY(result.given_ok);
        QVERIFY(result.given_rank > 1);
        QVERIFY(!result.given_behind.empty());
        QCOMPARE(result.given_behind.front().first, std::string("pipeline bubble"));
    }
};

QTEST_GUILESS_MAIN(TestTrust)
#include "tst_trust.moc"
