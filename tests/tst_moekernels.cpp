// The MoE block of a layer against kernel-level published figures (docs/engine.md, "Grouped
// expert GEMMs" and "The MoE router block"): SonicMoE's Figure 14 timings of Megatron-Core's
// MoE layer on H100, and the router block's kernels per pass by router fusion, dispatcher and
// CUDA-graph scope, with the plan file's fields for them.
#include "launchconfig.h"
#include "planio.h"
#include "stepmodel.h"
#include "testdata.h"
#include "testplans.h"

#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace paraplan;
using test::evaluate;
using test::hasRule;

namespace {

// One MoE layer of `d` hidden, `experts` of `n` (top `k`) on `tokens` tokens per GPU, on DGX
// H100, every GPU the same (no spread between them): the shape of one SonicMoE benchmark.
Plan moeBlockPlan(double tokens, double d, double n, int experts, int k)
{
    Plan plan;
    ModelSpec& m = plan.model;
    m.name = "MoE block";
    m.layers = 1;
    m.hidden = static_cast<int>(d);
    m.heads = 8;
    m.kv_heads = 8;
    m.head_dim = static_cast<int>(d) / 8;
    m.ffn_hidden = static_cast<int>(n);
    m.vocab = 32000;
    m.mlp = MlpKind::SwiGLU;
    m.experts = experts;
    m.experts_per_token = k;
    m.expert_ffn_hidden = static_cast<int>(n);
    plan.cluster = test::clusterPreset("dgx-h100", 1);
    plan.parallel = test::layout(1, 1, 8, 1, 8);
    plan.training.seq_len = static_cast<int>(tokens);
    plan.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan.cluster.gpu_id),
                                        plan.training.optimizer, plan.training.dtype);
    plan.figures.gpu_spread.value = 0;
    return plan;
}

struct BlockRate
{
    double forward = 0; // expert-GEMM TFLOP/s of the block, as SonicMoE counts them
    double backward = 0;
};

BlockRate blockRate(const Plan& plan)
{
    const StepCost cost = evaluate(plan);
    if (!cost.ok) {
        for (const PlanIssue& issue : cost.issues)
            qWarning("%s: %s", issue.field.c_str(), issue.message.c_str());
        return {};
    }
    const ModelSpec& m = plan.model;
    const double flops =
        6.0 * m.hidden * m.expert_ffn_hidden * plan.training.seq_len * m.experts_per_token;
    return {flops / cost.moe_layer.moe_block_forward_s / 1e12,
            2 * flops / cost.moe_layer.moe_block_backward_s / 1e12};
}

// Qwen3-30B-A3B's shape (Qwen/Qwen3-30B-A3B config.json: 48 layers of 128 experts of 768, top
// 8) with EP 8 on one DGX H100 node.
Plan routerPlan()
{
    Plan plan = moeBlockPlan(4096, 2048, 768, 128, 8);
    plan.model.layers = 48;
    plan.model.heads = 32;
    plan.model.kv_heads = 4;
    plan.model.head_dim = 128;
    plan.model.vocab = 151936;
    plan.parallel.ep = 8;
    plan.parallel.global_batch = 64;
    return plan;
}

} // namespace

class TestMoeKernels : public QObject
{
    Q_OBJECT

private slots:
    void megatronMoeLayerMatchesSonicMoeFigure14()
    {
        const QJsonObject set = test::loadJson("sonicmoe-fig14-h100.json");
        const QJsonArray rows = set.value("rows").toArray();
        QCOMPARE(rows.size(), 12);
        double sumSq = 0;
        double sum = 0;
        double worst = 0;
        int count = 0;
        for (const QJsonValue& v : rows) {
            const QJsonObject r = v.toObject();
            const Plan plan =
                moeBlockPlan(r["tokens"].toDouble(), r["hidden"].toDouble(),
                             r["expert_ffn"].toDouble(), r["experts"].toInt(), r["top_k"].toInt());
            const BlockRate rate = blockRate(plan);
            QVERIFY2(rate.forward > 0, qPrintable(r["name"].toString()));
            for (const auto& [predicted, measured] :
                 {std::pair{rate.forward, r["forward_tflops"].toDouble()},
                  std::pair{rate.backward, r["backward_tflops"].toDouble()}}) {
                const double error = predicted / measured - 1;
                qInfo("%s: %.0f TFLOP/s predicted, %.0f read (%+.1f%%)",
                      qPrintable(r["name"].toString()), predicted, measured, 100 * error);
                sumSq += error * error;
                sum += error;
                worst = std::max(worst, std::abs(error));
                ++count;
            }
        }
        const double rms = std::sqrt(sumSq / count);
        const double mean = sum / count;
        qInfo("rms %.1f%%, mean %+.1f%%, worst %.1f%%", 100 * rms, 100 * mean, 100 * worst);
        // The bars are read by eye to +-5-10%: the engine within that, without a lean.
        QVERIFY2(rms <= 0.07, qPrintable(QString::number(rms)));
        QVERIFY2(worst <= 0.16, qPrintable(QString::number(worst)));
        QVERIFY2(std::abs(mean) <= 0.03, qPrintable(QString::number(mean)));
    }

    void routerBlockFollowsFusionDispatcherAndCapture()
    {
        const double host = 10e-6; // the engine's host time per launch (defaultEngineFigures)
        Plan plan = routerPlan();
        QCOMPARE(plan.figures.host_launch_s.value, host);
        struct Case
        {
            bool fusion;
            MoeDispatcher dispatcher;
            double kernels;
        };
        // Megatron-LM's GB200 guide (eb0783b6, 2.1.4, 2.2): 72, 31 fused, 17 with DeepEP.
        for (const Case& k :
             {Case{false, MoeDispatcher::AllToAll, 72}, Case{true, MoeDispatcher::AllToAll, 31},
              Case{true, MoeDispatcher::AllGather, 31}, Case{true, MoeDispatcher::DeepEP, 17},
              Case{false, MoeDispatcher::DeepEP, 58}}) {
            plan.training.moe_router_fusion = k.fusion;
            plan.training.moe_dispatcher = k.dispatcher;
            const StepCost cost = evaluate(plan);
            QVERIFY(cost.ok);
            QCOMPARE(cost.moe_layer.router_kernels, k.kernels);
            QCOMPARE(cost.moe_layer.router_host_kernels, k.kernels);
            QCOMPARE(cost.moe_layer.router_forward_s, k.kernels * host);
            QCOMPARE(cost.moe_layer.router_backward_s, k.kernels * host);
        }
        // Fusion shortens the step by its 41 launches per pass and layer.
        plan.training.moe_dispatcher = MoeDispatcher::AllToAll;
        plan.training.moe_router_fusion = false;
        const StepCost unfused = evaluate(plan);
        plan.training.moe_router_fusion = true;
        const StepCost fused = evaluate(plan);
        QVERIFY(fused.step_time_s < unfused.step_time_s);
        QCOMPARE(unfused.moe_layer.forward_s - fused.moe_layer.forward_s, 41 * host);

        // A partial capture of the router and the preprocessing: one graph launch, then the
        // kernels at the graph's gap; the router alone leaves the 14 preprocessing kernels.
        plan.training.cuda_graphs = CudaGraphs::Layers;
        plan.training.cuda_graph_scope = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
        const StepCost graphed = evaluate(plan);
        QVERIFY(graphed.ok);
        QCOMPARE(graphed.moe_layer.router_host_kernels, 0.0);
        QCOMPARE(graphed.moe_layer.router_kernels, 31.0);
        const double gap = plan.figures.graph_kernel_gap_s.value;
        QCOMPARE(graphed.moe_layer.router_forward_s, host + 31 * gap);
        plan.training.cuda_graph_scope = kGraphMoeRouter;
        const StepCost router = evaluate(plan);
        QCOMPARE(router.moe_layer.router_host_kernels, 14.0);
        QCOMPARE(router.moe_layer.router_forward_s, 14 * host + host + 17 * gap);
        // A whole-layer capture (drop-and-pad routing, as Megatron-Core needs for it) holds the
        // block: no launch of its own.
        plan.training.cuda_graph_scope = 0;
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "cuda-graph-scope"));
        plan.model.capacity_factor = 1;
        const StepCost whole = evaluate(plan);
        QVERIFY(whole.ok);
        QCOMPARE(whole.moe_layer.router_host_kernels, 0.0);
        QCOMPARE(whole.moe_layer.router_forward_s, 31 * plan.figures.graph_kernel_gap_s.value);

        // PyTorch frameworks run their own routers; dense layers have none.
        plan.training.cuda_graphs = CudaGraphs::None;
        plan.training.framework = TrainingFramework::Torchtitan;
        plan.parallel.zero = 3;
        const StepCost titan = evaluate(plan);
        QVERIFY(titan.ok);
        QCOMPARE(titan.moe_layer.router_kernels, 0.0);
        Plan dense = moeBlockPlan(4096, 2048, 768, 0, 0);
        dense.model.experts_per_token = 0;
        dense.model.expert_ffn_hidden = 0;
        const StepCost denseCost = evaluate(dense);
        QVERIFY(denseCost.ok);
        QCOMPARE(denseCost.dense_layer.router_kernels, 0.0);
    }

    void captureScopesAreValidated()
    {
        Plan plan = routerPlan();
        plan.training.cuda_graph_scope = kGraphMoeRouter;
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "cuda-graph-scope"));
        plan.training.cuda_graphs = CudaGraphs::Layers;
        QVERIFY(!hasRule(validatePlan(plan, HardwareCatalog::bundled()), "cuda-graph-scope"));
        plan.training.cuda_graph_scope = kGraphMoePreprocess;
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "cuda-graph-scope"));
        plan.training.cuda_graph_scope = kGraphMoe | kGraphMoeRouter;
        plan.model.capacity_factor = 1;
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "cuda-graph-scope"));
        plan.training.cuda_graph_scope = kGraphAttn | kGraphMoe; // drop-and-pad: capturable
        QVERIFY(!hasRule(validatePlan(plan, HardwareCatalog::bundled()), "cuda-graph-scope"));
        plan.model.capacity_factor = 0;
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "cuda-graph-scope"));
        Plan dense = moeBlockPlan(4096, 2048, 768, 0, 0);
        dense.model.experts_per_token = 0;
        dense.model.expert_ffn_hidden = 0;
        dense.training.cuda_graphs = CudaGraphs::Layers;
        QVERIFY(!hasRule(validatePlan(dense, HardwareCatalog::bundled()), "cuda-graph-scope"));
        dense.training.cuda_graph_scope = kGraphMoeRouter | kGraphMoePreprocess;
        QVERIFY(hasRule(validatePlan(dense, HardwareCatalog::bundled()), "cuda-graph-scope"));
    }

    void planFilesAndMegatronLaunchesKeepTheFields()
    {
        Plan plan = routerPlan();
        plan.training.moe_router_fusion = true;
        plan.training.moe_dispatcher = MoeDispatcher::DeepEP;
        plan.training.cuda_graphs = CudaGraphs::Layers;
        plan.training.cuda_graph_scope = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
        const std::string text = planToJsonText(plan, HardwareCatalog::bundled());
        QVERIFY(text.find("\"cuda_graph_scope\"") != std::string::npos);
        Plan back;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(text, {}, &back, &errors, HardwareCatalog::bundled()));
        QVERIFY(back.training.moe_router_fusion);
        QCOMPARE(back.training.cuda_graph_scope, plan.training.cuda_graph_scope);
        QVERIFY(back.training.cuda_graphs == CudaGraphs::Layers);

        // An unknown scope is named.
        std::string bad = text;
        const size_t at = bad.find("\"moe_preprocess\"");
        QVERIFY(at != std::string::npos);
        bad.replace(at, std::string("\"moe_preprocess\"").size(), "\"moe_everything\"");
        errors.clear();
        QVERIFY(!planFromJsonText(bad, {}, &back, &errors, HardwareCatalog::bundled()));
        QVERIFY(!errors.empty());
        QVERIFY2(errors.front().find("unknown scope 'moe_everything'") != std::string::npos,
                 errors.front().c_str());

        const LaunchConfig exported =
            exportLaunchConfig(plan, LaunchTarget::Megatron, HardwareCatalog::bundled());
        for (const char* flag : {"--moe-grouped-gemm", "--moe-router-fusion", "--te-rng-tracker",
                                 "--cuda-graph-impl transformer_engine",
                                 "--cuda-graph-modules attn moe_router moe_preprocess"})
            QVERIFY2(exported.text.find(flag) != std::string::npos, flag);
        const LaunchImport imported = importLaunchConfig(exported.text, LaunchTarget::Megatron,
                                                         routerPlan(), HardwareCatalog::bundled());
        QVERIFY2(imported.errors.empty(),
                 imported.errors.empty() ? "" : imported.errors.front().c_str());
        for (const std::string& warning : imported.warnings)
            QVERIFY2(warning.find("Paraplan reads: ignored") == std::string::npos, warning.c_str());
        QVERIFY(imported.plan.training.moe_router_fusion);
        QVERIFY(imported.plan.training.cuda_graphs == CudaGraphs::Layers);
        QCOMPARE(imported.plan.training.cuda_graph_scope, plan.training.cuda_graph_scope);

        // The older spelling (Megatron-Bridge 26.04's --cuda-graph-scope list), the deprecated
        // switch and the whole-step capture read too.
        Plan full = routerPlan();
        full.training.cuda_graphs = CudaGraphs::Full;
        const LaunchConfig fullText =
            exportLaunchConfig(full, LaunchTarget::Megatron, HardwareCatalog::bundled());
        QVERIFY(fullText.text.find("--cuda-graph-scope full_iteration") != std::string::npos);
        const LaunchImport fullBack = importLaunchConfig(fullText.text, LaunchTarget::Megatron,
                                                         routerPlan(), HardwareCatalog::bundled());
        QVERIFY(fullBack.errors.empty());
        QVERIFY(fullBack.plan.training.cuda_graphs == CudaGraphs::Full);
        std::string renamed = exported.text;
        const size_t flag = renamed.find("--cuda-graph-modules");
        QVERIFY(flag != std::string::npos);
        renamed.replace(flag, std::string("--cuda-graph-modules").size(), "--cuda-graph-scope");
        const LaunchImport renamedBack = importLaunchConfig(
            renamed, LaunchTarget::Megatron, routerPlan(), HardwareCatalog::bundled());
        QVERIFY(renamedBack.errors.empty());
        QCOMPARE(renamedBack.plan.training.cuda_graph_scope, plan.training.cuda_graph_scope);
        std::string deprecated = renamed;
        const size_t impl = deprecated.find("--cuda-graph-impl transformer_engine");
        deprecated.replace(impl, std::string("--cuda-graph-impl transformer_engine").size(),
                           "--external-cuda-graph");
        const LaunchImport deprecatedBack = importLaunchConfig(
            deprecated, LaunchTarget::Megatron, routerPlan(), HardwareCatalog::bundled());
        QVERIFY2(deprecatedBack.errors.empty(),
                 deprecatedBack.errors.empty() ? "" : deprecatedBack.errors.front().c_str());
        QVERIFY(deprecatedBack.plan.training.cuda_graphs == CudaGraphs::Layers);
        QCOMPARE(deprecatedBack.plan.training.cuda_graph_scope, plan.training.cuda_graph_scope);
    }
};

QTEST_GUILESS_MAIN(TestMoeKernels)
#include "tst_moekernels.moc"
