// MoE dispatch as Megatron-Core's token dispatchers send it (docs/engine.md, "MoE dispatch"):
// the sequence-parallel shard, k copies per token over EP, the gather over expert TP, MoE
// parallel folding, the allgather and DeepEP dispatchers, the capacity factor and imbalance,
// the EP overlap, shared experts, and the plan file's and Megatron launch's new fields.
#include "gemmshapes.h"
#include "launchconfig.h"
#include "model.h"
#include "modelio.h"
#include "planio.h"
#include "stepmodel.h"
#include "testdata.h"
#include "testplans.h"

#include <QTest>

#include <cmath>

using namespace paraplan;
using test::evaluate;

namespace {

// DeepSeek-V3 (arXiv 2412.19437, its Hugging Face config.json): 61 layers, the first 3 dense,
// 256 routed experts of 2048 (top 8) and one shared expert of 2048.
ModelSpec deepseekV3()
{
    ModelSpec m;
    m.name = "DeepSeek-V3";
    m.layers = 61;
    m.hidden = 7168;
    m.heads = 128;
    m.kv_heads = 128;
    m.head_dim = 192;
    m.ffn_hidden = 18432;
    m.vocab = 129280;
    m.mlp = MlpKind::SwiGLU;
    m.experts = 256;
    m.experts_per_token = 8;
    m.expert_ffn_hidden = 2048;
    m.shared_expert_ffn_hidden = 2048;
    m.dense_layers = 3;
    m.q_lora_rank = 1536;
    m.kv_lora_rank = 512;
    m.rope_head_dim = 64;
    m.v_head_dim = 128;
    return m;
}

// The 512-H100 layout NVIDIA's DGX Cloud benchmark ran: TP 2, PP 8, DP 32, EP 64, expert TP 1.
Plan deepseekPlan()
{
    Plan plan;
    plan.model = deepseekV3();
    plan.cluster = test::clusterPreset("dgx-h100", 64);
    ParallelLayout p = test::layout(2, 8, 32, 1, 4096, 1);
    p.sequence_parallel = true;
    p.ep = 64;
    p.expert_tp = 1;
    p.tp_overlap = TpOverlap::None;
    plan.parallel = p;
    plan.training.seq_len = 4096;
    plan.training.attention = AttentionKernel::Cudnn;
    plan.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan.cluster.gpu_id),
                                        plan.training.optimizer, plan.training.dtype);
    return plan;
}

const CollectiveCost* find(const StepCost& cost, const char* group, CollectiveOp op)
{
    for (const CollectiveCost& cc : cost.collectives) {
        if (std::string(cc.group) == group && cc.call.op == op)
            return &cc;
    }
    return nullptr;
}

bool hasRule(const std::vector<PlanIssue>& issues, const std::string& rule)
{
    for (const PlanIssue& issue : issues) {
        if (issue.rule == rule)
            return true;
    }
    return false;
}

} // namespace

class TestMoeDispatch : public QObject
{
    Q_OBJECT

private slots:
    void alltoallSendsTheSequenceParallelShardKTimes()
    {
        const Plan plan = deepseekPlan();
        const StepCost cost = evaluate(plan);
        QVERIFY2(cost.ok, cost.issues.empty() ? "" : cost.issues.front().message.c_str());
        const CollectiveCost* a2a = find(cost, "ep", CollectiveOp::AllToAll);
        QVERIFY(a2a);
        // b s / (cp tp) tokens x k copies x h x 2 bytes: 2048 x 8 x 7168 x 2.
        QCOMPARE(a2a->call.bytes, 2048.0 * 8 * 7168 * 2);
        QCOMPARE(a2a->call.ranks, 64);
        QCOMPARE(a2a->stride, 1); // expert TP 1: the EP ranks are consecutive (folding)
        // Dispatch and combine, forward and backward, every MoE layer of the critical stage.
        const StageCost& critical = cost.stages[static_cast<size_t>(cost.critical_stage)];
        QCOMPARE(a2a->calls_per_step, 4.0 * critical.moe_layers * cost.microbatches);
        QCOMPARE(a2a->exposed_s, a2a->total_s); // no EP overlap asked
        // Expert TP 1: no gather over expert TP.
        QVERIFY(!find(cost, "ep", CollectiveOp::AllGather));
    }

    void expertTensorParallelGathersTheDispatchedTokens()
    {
        Plan plan = deepseekPlan();
        plan.parallel.ep = 32;
        plan.parallel.expert_tp = 0; // the TP degree: 2
        const StepCost cost = evaluate(plan);
        QVERIFY(cost.ok);
        const CollectiveCost* a2a = find(cost, "ep", CollectiveOp::AllToAll);
        const CollectiveCost* gather = find(cost, "ep", CollectiveOp::AllGather);
        QVERIFY(a2a && gather);
        QCOMPARE(a2a->call.bytes, 2048.0 * 8 * 7168 * 2);
        QCOMPARE(a2a->stride, 2); // expert TP = TP: EP over the dp ranks
        QCOMPARE(gather->call.ranks, 2);
        QCOMPARE(gather->call.bytes, 2 * 2048.0 * 8 * 7168 * 2); // etp x the received tokens
        // The expert GEMMs see the same tokens either way: folding moves work, not FLOPs.
        const double k = 8;
        const LayerGemms folded =
            layerGemmShapes(plan.model, deepseekPlan().parallel, 4096, 64, 64, 192, true);
        const LayerGemms split =
            layerGemmShapes(plan.model, plan.parallel, 4096, 64, 64, 192, true);
        auto expertFlops = [](const LayerGemms& g) {
            double flops = 0;
            for (const GemmShape& s : g)
                if (std::string(s.name) == "mlp_up" || std::string(s.name) == "mlp_down")
                    flops += 2 * s.M * s.K * s.N * s.batch;
            return flops;
        };
        const double expected = 2.0 * 4096 / 2 * k * 7168 * 3 * 2048; // per GPU: T/tp x k x 3hf
        QVERIFY(std::fabs(expertFlops(folded) / expected - 1) < 1e-12);
        QVERIFY(std::fabs(expertFlops(split) / expected - 1) < 1e-12);
    }

    void foldingIsValidatedAgainstTheWholeGrid()
    {
        Plan plan = deepseekPlan();
        QVERIFY(validatePlan(plan, HardwareCatalog::bundled()).empty());
        plan.parallel.expert_tp = 4; // 64 x 4 = 256 does not divide 2 x 1 x 32 = 64
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "ep-fold"));
        plan.parallel.expert_tp = 0; // EP 64 from dp x cp = 32 without folding
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "ep-dp"));
        plan.parallel.expert_tp = 3;
        plan.parallel.ep = 1;
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "expert-tp"));
        plan = deepseekPlan();
        plan.figures.moe_imbalance = userEntry(0.5, "test");
        QVERIFY(hasRule(validatePlan(plan, HardwareCatalog::bundled()), "figure-range"));
        plan = deepseekPlan();
        plan.model.capacity_factor = 0.5;
        QVERIFY(!validatePlan(plan, HardwareCatalog::bundled()).empty());
    }

    void allgatherAndDeepEpMoveWhatTheirKernelsMove()
    {
        Plan plan = deepseekPlan();
        plan.training.moe_dispatcher = MoeDispatcher::AllGather;
        const StepCost gathered = evaluate(plan);
        const CollectiveCost* ag = find(gathered, "ep", CollectiveOp::AllGather);
        QVERIFY(ag);
        // Every token over expert TP x EP: 64 ranks' shards of 2048 tokens.
        QCOMPARE(ag->call.ranks, 64);
        QCOMPARE(ag->call.bytes, 2048.0 * 64 * 7168 * 2);
        QVERIFY(find(gathered, "ep", CollectiveOp::ReduceScatter) == nullptr); // one entry

        plan.training.moe_dispatcher = MoeDispatcher::DeepEP;
        const StepCost deepep = evaluate(plan);
        const CollectiveCost* a2a = find(deepep, "ep", CollectiveOp::AllToAll);
        QVERIFY(a2a);
        // Once per GPU holding one of the token's 8 experts (256 experts, 4 per GPU):
        // 64 (1 - C(252, 8) / C(256, 8)) GPUs, fewer than 8.
        double none = 1;
        for (int i = 0; i < 8; ++i)
            none *= (252.0 - i) / (256.0 - i);
        const double distinct = 64 * (1 - none);
        QVERIFY(distinct > 7.5 && distinct < 8);
        QVERIFY(std::fabs(a2a->call.bytes / (2048.0 * distinct * 7168 * 2) - 1) < 1e-12);
        QVERIFY(deepep.step_time_s < evaluate(deepseekPlan()).step_time_s);
    }

    void theBusiestExpertRankSetsThePace()
    {
        Plan plan = deepseekPlan();
        const StepCost balanced = evaluate(plan);
        plan.figures.moe_imbalance = userEntry(1.5, "plan overrides.moe_imbalance");
        const StepCost skewed = evaluate(plan);
        QCOMPARE(find(skewed, "ep", CollectiveOp::AllToAll)->call.bytes,
                 1.5 * find(balanced, "ep", CollectiveOp::AllToAll)->call.bytes);
        QVERIFY(skewed.moe_layer.gemm_forward_s > balanced.moe_layer.gemm_forward_s);
        // A capacity factor drops the tokens beyond it: the busiest rank takes at most that.
        plan.model.capacity_factor = 1.25;
        const StepCost capped = evaluate(plan);
        QCOMPARE(find(capped, "ep", CollectiveOp::AllToAll)->call.bytes,
                 1.25 * find(balanced, "ep", CollectiveOp::AllToAll)->call.bytes);
        QCOMPARE(moeLoad(plan.model, 1.5), 1.25);
        QCOMPARE(moeLoad(plan.model, 1.1), 1.1);
    }

    void epOverlapHidesBehindTheOtherMicroBatch()
    {
        Plan plan = deepseekPlan();
        const StepCost plain = evaluate(plan);
        plan.parallel.ep_overlap = EpOverlap::A2a;
        const StepCost overlapped = evaluate(plan);
        const CollectiveCost* a2a = find(overlapped, "ep", CollectiveOp::AllToAll);
        QCOMPARE(a2a->total_s, find(plain, "ep", CollectiveOp::AllToAll)->total_s);
        QVERIFY(a2a->exposed_s < a2a->total_s);
        QVERIFY(a2a->exposed_s >= 0);
        QVERIFY(overlapped.step_time_s < plain.step_time_s);
        // The warm-up's micro-batches have no partner: 7 of 128 at pp 8 stay exposed at least.
        QVERIFY(a2a->exposed_s >= 7.0 / 128 * a2a->total_s * (1 - 1e-12));
        // One micro-batch: nothing to overlap with.
        plan.parallel.global_batch = 256;
        plan.parallel.pp = 1;
        plan.parallel.dp = 256;
        plan.parallel.first_stage_layers = plan.parallel.last_stage_layers = 0;
        const StepCost single = evaluate(plan);
        QVERIFY(single.ok);
        const CollectiveCost* one = find(single, "ep", CollectiveOp::AllToAll);
        QCOMPARE(one->exposed_s, one->total_s);
    }

    void sharedExpertsRunAsATensorParallelMlp()
    {
        const Plan plan = deepseekPlan();
        const LayerGemms g = layerGemmShapes(plan.model, plan.parallel, 4096, 64, 64, 192, true);
        bool up = false;
        for (const GemmShape& s : g) {
            if (std::string(s.name) == "shared_up") {
                up = true;
                QCOMPARE(s.M, 4096.0);
                QCOMPARE(s.N, 2.0 * 2048 / 2); // gate and up, split over TP 2
                QVERIFY(s.tp_region);
            }
        }
        QVERIFY(up);
        // Their parameters split over TP, the routed experts' over EP x expert TP.
        const StepCost cost = evaluate(plan);
        ModelSpec noShared = plan.model;
        noShared.shared_expert_ffn_hidden = 0;
        Plan without = plan;
        without.model = noShared;
        const double sharedParams = 3.0 * 7168 * 2048 / 2;
        const StageCost& last = cost.stages.back();
        QVERIFY(std::fabs(last.params - evaluate(without).stages.back().params -
                          last.moe_layers * sharedParams) < 1);
    }

    void latentAttentionRunsItsOwnProjections()
    {
        // At TP 1 the step's attention GEMMs are the latent attention's matrices, token by
        // token: 2 T x attentionMatrices (DeepSeek-V2, arXiv 2405.04434, section 2.1).
        Plan plan = deepseekPlan();
        plan.parallel.tp = 1;
        const LayerGemms g = layerGemmShapes(plan.model, plan.parallel, 4096, 128, 128, 192, true);
        double flops = 0;
        int projections = 0;
        for (const GemmShape& s : g) {
            const std::string name = s.name;
            if (name == "q_down" || name == "q_up" || name == "kv_down" || name == "kv_up" ||
                name == "attn_proj") {
                flops += 2 * s.M * s.K * s.N * s.batch;
                ++projections;
            }
        }
        QCOMPARE(projections, 5);
        QVERIFY(std::fabs(flops / (2 * 4096 * attentionMatrices(plan.model)) - 1) < 1e-12);
    }

    void moePresetsAreTheirPublishedConfigs()
    {
        // Each MoE preset is its Hugging Face config.json, number for number (the configs as
        // the publishers ship them, in tests/data/hf).
        for (const auto& [preset, file] :
             {std::pair<const char*, const char*>{"deepseek-v3", "hf/deepseek-v3.json"},
              {"qwen3-30b-a3b", "hf/qwen3-30b-a3b.json"}}) {
            ModelSpec fromPreset;
            ModelSpec fromConfig;
            std::string error;
            QVERIFY2(modelFromPreset(preset, &fromPreset, &error), error.c_str());
            QVERIFY2(loadHuggingFaceConfig(test::dataPath(file).toStdString(), &fromConfig, &error),
                     error.c_str());
            QVERIFY2(modelNumbers(fromPreset) == modelNumbers(fromConfig), preset);
        }
        ModelSpec v3;
        std::string error;
        QVERIFY(modelFromPreset("deepseek-v3", &v3, &error));
        QVERIFY(std::fabs(countParameters(v3).total / 671e9 - 1) < 0.01); // arXiv 2412.19437
        QVERIFY(std::fabs(countParameters(v3).active_per_token / 37e9 - 1) < 0.02);
    }

    void planFilesAndMegatronLaunchesKeepTheFields()
    {
        Plan plan = deepseekPlan();
        plan.parallel.ep_overlap = EpOverlap::A2a;
        plan.training.moe_dispatcher = MoeDispatcher::DeepEP;
        plan.model.capacity_factor = 1.5;
        plan.figures.moe_imbalance = userEntry(1.2, "plan overrides.moe_imbalance");
        const std::string text = planToJsonText(plan, HardwareCatalog::bundled());
        Plan back;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(text, {}, &back, &errors, HardwareCatalog::bundled()));
        QCOMPARE(back.parallel.expert_tp, 1);
        QVERIFY(back.parallel.ep_overlap == EpOverlap::A2a);
        QVERIFY(back.training.moe_dispatcher == MoeDispatcher::DeepEP);
        QCOMPARE(back.model.capacity_factor, 1.5);
        QCOMPARE(back.figures.moe_imbalance.value, 1.2);

        const LaunchConfig exported =
            exportLaunchConfig(plan, LaunchTarget::Megatron, HardwareCatalog::bundled());
        for (const char* flag :
             {"--expert-model-parallel-size 64", "--expert-tensor-parallel-size 1",
              "--moe-token-dispatcher-type flex", "--moe-enable-deepep",
              "--overlap-moe-expert-parallel-comm", "--moe-expert-capacity-factor 1.5"})
            QVERIFY2(exported.text.find(flag) != std::string::npos, flag);
        const LaunchImport imported = importLaunchConfig(
            exported.text, LaunchTarget::Megatron, deepseekPlan(), HardwareCatalog::bundled());
        QVERIFY2(imported.errors.empty(),
                 imported.errors.empty() ? "" : imported.errors.front().c_str());
        for (const std::string& warning : imported.warnings)
            QVERIFY2(warning.find("Paraplan reads: ignored") == std::string::npos, warning.c_str());
        QCOMPARE(imported.plan.parallel.expert_tp, 1);
        QCOMPARE(imported.plan.parallel.ep, 64);
        QVERIFY(imported.plan.parallel.ep_overlap == EpOverlap::A2a);
        QVERIFY(imported.plan.training.moe_dispatcher == MoeDispatcher::DeepEP);
        QCOMPARE(imported.plan.model.capacity_factor, 1.5);
    }
};

QTEST_GUILESS_MAIN(TestMoeDispatch)
#include "tst_moedispatch.moc"
