// MoE dispatch as Megatron-Core's token dispatchers send it (docs/engine.md, "MoE dispatch"):
// the sequence-parallel shard, k copies per token over EP, the gather over expert TP, MoE
// parallel folding, the allgather and DeepEP dispatchers, the capacity factor and imbalance,
// the EP overlap, shared experts, and the plan file's and Megatron launch's new fields.
#include "gemmshapes.h"
#include "launchconfig.h"
#include "model.h"
#include "modelio.h"
#include "modeljson.h"
#include "planio.h"
#include "stepmodel.h"
#include "testdata.h"
#include "testplans.h"

#include <QTest>

#include <cmath>

using namespace paraplan;
using test::evaluate;
using test::hasRule;

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

// `model` on DGX H100 nodes with layout `p` and EP `ep`, at 8,192 tokens.
Plan moePlan(const ModelSpec& model, int nodes, ParallelLayout p, int ep)
{
    Plan plan;
    plan.model = model;
    plan.cluster = test::clusterPreset("dgx-h100", nodes);
    p.ep = ep;
    plan.parallel = p;
    plan.training.seq_len = 8192;
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
        // EP 64 spans 8 nodes: DeepEP's internode kernels send a token over the network once
        // per node holding one of its 8 experts (256 experts, 32 per node), 8 (1 - C(224, 8) /
        // C(256, 8)) nodes, an all-to-all over the 8 nodes (the same local rank of each).
        const auto distinctOf = [](double perRank, double ranks) {
            double none = 1;
            for (int i = 0; i < 8; ++i)
                none *= (256.0 - perRank - i) / (256.0 - i);
            return ranks * (1 - none);
        };
        const double nodes = distinctOf(32, 8);
        QVERIFY(nodes > 5 && nodes < 6);
        QCOMPARE(a2a->call.ranks, 8);
        QVERIFY(a2a->call.nodes_spanned == 8);
        QVERIFY(std::fabs(a2a->call.bytes / (2048.0 * nodes * 7168 * 2) - 1) < 1e-12);
        QVERIFY(deepep.step_time_s < evaluate(deepseekPlan()).step_time_s);

        // Inside one NVLink domain (EP 8 of a node), once per GPU holding one of the token's
        // experts: 8 (1 - C(224, 8) / C(256, 8)) GPUs, an all-to-all over the 8 GPUs.
        plan.parallel.ep = 8;
        const StepCost node = evaluate(plan);
        const CollectiveCost* local = find(node, "ep", CollectiveOp::AllToAll);
        QVERIFY(local);
        QCOMPARE(local->call.ranks, 8);
        QCOMPARE(local->call.nodes_spanned, 1);
        QVERIFY(std::fabs(local->call.bytes / (2048.0 * distinctOf(32, 8) * 7168 * 2) - 1) < 1e-12);
        // Across nodes, the GPU-level count would be 64 (1 - C(252, 8) / C(256, 8)), more
        // than 7.5 copies of each token over the network instead of fewer than 6.
        QVERIFY(distinctOf(4, 64) > 7.5);
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
              {"qwen3-30b-a3b", "hf/qwen3-30b-a3b.json"},
              {"qwen3-235b-a22b", "hf/qwen3-235b-a22b.json"},
              {"gpt-oss-120b", "hf/gpt-oss-120b.json"},
              {"llama4-scout", "hf/llama4-scout.json"},
              {"llama4-maverick", "hf/llama4-maverick.json"},
              {"mixtral-8x22b", "hf/mixtral-8x22b.json"}}) {
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
        // The published totals (model cards; GPT-OSS's 116.8B counts its sinks, Scout's 109B
        // its vision encoder, which the text model leaves out).
        for (const auto& [preset, total] :
             {std::pair<const char*, double>{"qwen3-235b-a22b", 235e9},
              {"gpt-oss-120b", 116.8e9},
              {"llama4-maverick", 400e9},
              {"mixtral-8x22b", 141e9}}) {
            ModelSpec m;
            QVERIFY2(modelFromPreset(preset, &m, &error), error.c_str());
            QVERIFY2(std::fabs(countParameters(m).total / total - 1) < 0.01, preset);
        }
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

    void layerPatternsSurviveFilesAndLaunches()
    {
        // Maverick's interleaved experts, GPT-OSS-style alternating windows and an MTP module,
        // through the plan file and a Megatron launch and back.
        Plan plan = deepseekPlan();
        ModelSpec& m = plan.model;
        m.moe_layer_pattern.assign(61, 1);
        for (int i = 0; i < 61; i += 4)
            m.moe_layer_pattern[size_t(i)] = 0;
        m.dense_layers = 16;
        m.sliding_window = 128;
        m.sliding_pattern.assign(61, 0);
        for (int i = 0; i < 61; i += 2)
            m.sliding_pattern[size_t(i)] = 1;
        m.mtp_layers = 1;
        QVERIFY(validateModel(m).empty());
        const std::string text = planToJsonText(plan, HardwareCatalog::bundled());
        Plan back;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(text, {}, &back, &errors, HardwareCatalog::bundled()));
        QVERIFY(modelNumbers(back.model) == modelNumbers(m));
        const LaunchConfig exported =
            exportLaunchConfig(plan, LaunchTarget::Megatron, HardwareCatalog::bundled());
        for (const char* flag : {"--moe-layer-freq '[0,1,1,1,0,", "--window-size '(128,0)'",
                                 "--window-attn-skip-freq '[1,0,1,0,", "--mtp-num-layers 1"})
            QVERIFY2(exported.text.find(flag) != std::string::npos, flag);
        const LaunchImport imported = importLaunchConfig(
            exported.text, LaunchTarget::Megatron, deepseekPlan(), HardwareCatalog::bundled());
        QVERIFY2(imported.errors.empty(),
                 imported.errors.empty() ? "" : imported.errors.front().c_str());
        const ModelSpec& r = imported.plan.model;
        QVERIFY(r.moe_layer_pattern == m.moe_layer_pattern);
        QCOMPARE(r.dense_layers, 16);
        QCOMPARE(r.sliding_window, 128);
        QVERIFY(r.sliding_pattern == m.sliding_pattern);
        QCOMPARE(r.mtp_layers, 1);
        // Megatron's own expressions: "([0]*3+[1]*58)" is a count, "([1]*3+[0]*1)*..." a list.
        const LaunchImport leading = importLaunchConfig(
            "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --num-experts 8 "
            "--moe-layer-freq '([0]*2+[1]*6)' --window-size '(64,0)' --window-attn-skip-freq 4",
            LaunchTarget::Megatron, deepseekPlan(), HardwareCatalog::bundled());
        QCOMPARE(leading.plan.model.dense_layers, 2);
        QVERIFY(leading.plan.model.moe_layer_pattern.empty());
        // Layer numbers 4 and 8 (1-based) attend in full.
        QVERIFY(leading.plan.model.isSlidingLayer(0) && !leading.plan.model.isSlidingLayer(3));
        const LaunchImport repeated = importLaunchConfig(
            "--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --num-experts 8 "
            "--moe-layer-freq '([1]*3+[0]*1)*2'",
            LaunchTarget::Megatron, deepseekPlan(), HardwareCatalog::bundled());
        QCOMPARE(repeated.plan.model.dense_layers, 2);
        QVERIFY(repeated.plan.model.isMoeLayer(2) && !repeated.plan.model.isMoeLayer(3));
    }

    void expertStatesShardOverExpertDataParallelRanks()
    {
        // EP 64 x expert TP 1 over TP 2 x DP 32: expert DP 1, so the distributed optimizer
        // keeps each GPU's routed experts' fp32 states whole (Megatron-Core's expert grid).
        Plan plan = deepseekPlan();
        const StepCost whole = evaluate(plan);
        const StageCost& middle = whole.stages[3];
        QVERIFY(middle.expert_params > 0 && middle.expert_params < middle.params);
        const double other = middle.params - middle.expert_params;
        QVERIFY(std::fabs(middle.optimizer_bytes - (other * 12 / 32 + middle.expert_params * 12)) <
                1e-6 * middle.optimizer_bytes);
        // EP 16: expert DP 4, the experts' states a quarter each and their own reduce-scatter.
        plan.parallel.ep = 16;
        const StepCost quarter = evaluate(plan);
        const StageCost& m16 = quarter.stages[3];
        QVERIFY(std::fabs(m16.optimizer_bytes - ((m16.params - m16.expert_params) * 12 / 32 +
                                                 m16.expert_params * 12 / 4)) <
                1e-6 * m16.optimizer_bytes);
        int expertSyncs = 0;
        for (const CollectiveCost& cc : quarter.collectives)
            expertSyncs += std::string(cc.group) == "dp" && cc.call.ranks == 4 ? 1 : 0;
        QCOMPARE(expertSyncs, 2); // the gradients' reduce-scatter and the shards' all-gather
    }

    void zero3GathersExpertsOverExpertDataParallelRanks()
    {
        // ZeRO-3: each layer's dense parameters gathered over DP x CP, its routed experts over
        // their expert data-parallel group; at EP 64 folded under TP 2 x DP 32 that group is
        // one GPU, so the experts are whole and never gathered. (The stage reported is the one
        // whose sync is slowest: its per-layer sizes are one stage's.)
        Plan plan = deepseekPlan();
        plan.parallel.zero = 3;
        const double weightBytes = 2; // bf16
        auto someStage = [](const StepCost& cost, double bytes, auto perLayer) {
            for (const StageCost& st : cost.stages)
                if (std::fabs(bytes - perLayer(st)) < 1e-6 * bytes)
                    return true;
            return false;
        };
        const StepCost folded = evaluate(plan);
        QVERIFY(folded.ok);
        int expertCalls = 0;
        int denseGathers = 0;
        for (const CollectiveCost& cc : folded.collectives) {
            if (std::string(cc.group) != "dp")
                continue;
            if (cc.call.op == CollectiveOp::AllGather && cc.call.ranks == 32) {
                ++denseGathers;
                QVERIFY(someStage(folded, cc.call.bytes, [&](const StageCost& st) {
                    return (st.params - st.expert_params) / st.layers * weightBytes;
                }));
            }
            expertCalls += std::string(cc.purpose).find("expert") != std::string::npos ? 1 : 0;
        }
        QCOMPARE(denseGathers, 1);
        QCOMPARE(expertCalls, 0);
        // EP 16: expert DP 4, the experts' own per-layer gather and reduce-scatter.
        plan.parallel.ep = 16;
        const StepCost quarter = evaluate(plan);
        QVERIFY(quarter.ok);
        int expertSyncs = 0;
        for (const CollectiveCost& cc : quarter.collectives) {
            if (std::string(cc.group) != "dp" || cc.call.ranks != 4)
                continue;
            ++expertSyncs;
            const double element = cc.call.op == CollectiveOp::AllGather
                                       ? weightBytes
                                       : quarter.assumptions.grad_reduce_bytes;
            QVERIFY(someStage(quarter, cc.call.bytes, [&](const StageCost& st) {
                return st.expert_params / st.layers * element;
            }));
        }
        QCOMPARE(expertSyncs, 2);
        // The exposed parts add up to the step's data-parallel term.
        double exposed = 0;
        for (const CollectiveCost& cc : quarter.collectives)
            exposed += std::string(cc.group) == "dp" ? cc.exposed_s : 0;
        QVERIFY(std::fabs(exposed - quarter.breakdown.dp_comm_exposed_s) <
                1e-9 * quarter.breakdown.dp_comm_exposed_s);
    }

    void mtpModulesRunOnTheLastStage()
    {
        Plan plan = deepseekPlan();
        const StepCost without = evaluate(plan);
        plan.model.mtp_layers = 1;
        const StepCost with = evaluate(plan);
        const StageCost& a = without.stages.back();
        const StageCost& b = with.stages.back();
        // One MoE layer's compute and dispatch, the projection and the LM head again.
        QVERIFY(b.forward_s > a.forward_s + with.moe_layer.forward_s);
        QVERIFY(std::fabs(b.ep_comm_s - a.ep_comm_s * (a.moe_layers + 1) / a.moe_layers) <
                1e-9 * b.ep_comm_s);
        // Its parameters (the layer, the 2h x h projection over TP, two norms) and the
        // embedding it looks tokens up in.
        const ParameterCount count = countParameters(plan.model);
        QVERIFY(count.mtp_per_module > count.layer(true));
        QVERIFY(b.params > a.params + double(plan.model.vocab) * plan.model.hidden / 2);
        QCOMPARE(with.stages[3].params, without.stages[3].params);
        QCOMPARE(count.total, countParameters(deepseekV3()).total); // as published: without
    }

    void slidingWindowLayersAttendOverTheWindow()
    {
        QCOMPARE(slidingWindowShare(4096, 4096), 1.0);
        QCOMPARE(slidingWindowShare(4096, 8192), 1.0);
        // Each query sees min(i + 1, w) keys: w (w + 1) / 2 + (s - w) w of s (s + 1) / 2.
        QCOMPARE(slidingWindowShare(8, 2), (3.0 + 6 * 2) / 36);
        ModelSpec oss;
        std::string error;
        QVERIFY2(modelFromPreset("gpt-oss-120b", &oss, &error), error.c_str());
        QCOMPARE(int(oss.sliding_pattern.size()), 36);
        QVERIFY(oss.isSlidingLayer(0) && !oss.isSlidingLayer(1));
        Plan plan = moePlan(oss, 2, test::layout(1, 1, 16, 1, 256, 1), 16);
        const StepCost windowed = evaluate(plan);
        QCOMPARE(windowed.stages[0].sliding_layers, 18);
        plan.model.sliding_window = 0;
        plan.model.sliding_pattern.clear();
        const StepCost full = evaluate(plan);
        // 18 of the 36 layers keep 128 of 8192 keys' share: the saving is that share of
        // their attention.
        const double saved = full.stages[0].forward_s - windowed.stages[0].forward_s;
        const double expected =
            18 * (1 - slidingWindowShare(8192, 128)) * full.moe_layer.attention_forward_s;
        QVERIFY(std::fabs(saved - expected) < 1e-9 * expected);
    }

    void moeLayerFrequencyPlacesTheDenseLayers()
    {
        ModelSpec maverick;
        std::string error;
        QVERIFY2(modelFromPreset("llama4-maverick", &maverick, &error), error.c_str());
        QCOMPARE(maverick.dense_layers, 24);
        QVERIFY(!maverick.isMoeLayer(0) && maverick.isMoeLayer(1));
        Plan plan = moePlan(maverick, 8, test::layout(4, 2, 8, 1, 256, 1), 8);
        const StepCost interleaved = evaluate(plan);
        QCOMPARE(interleaved.stages[0].moe_layers, 12);
        QCOMPARE(interleaved.stages[1].moe_layers, 12);
        plan.model.moe_layer_pattern.clear(); // the 24 dense layers leading instead
        const StepCost leading = evaluate(plan);
        QCOMPARE(leading.stages[0].moe_layers, 0);
        QCOMPARE(leading.stages[1].moe_layers, 24);
        // Megatron's N form and a list that disagrees with dense_layers.
        std::vector<std::string> errors;
        json::Reader reader(&errors);
        ModelSpec m = maverick;
        m.moe_layer_pattern.clear();
        applyModelFields(QJsonObject{{"moe_layer_freq", 2}}, "model", reader, &m);
        QVERIFY(errors.empty());
        QVERIFY(m.isMoeLayer(0) && !m.isMoeLayer(1)); // Megatron: i % N == 0
        QCOMPARE(m.dense_layers, 24);
        m.dense_layers = 3;
        QVERIFY(!validateModel(m).empty());
    }
};

QTEST_GUILESS_MAIN(TestMoeDispatch)
#include "tst_moedispatch.moc"
