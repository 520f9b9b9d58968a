// Will it fit: the memory per framework against hand-derived bytes, the verdict with the
// runtime and allocator reserves, the changes that make a plan fit, and the published measured
// memory of tests/data/memory-2026.json row by row.
#include "calibration.h"
#include "launchconfig.h"
#include "layercost.h"
#include "memoryfix.h"
#include "modelio.h"
#include "planio.h"
#include "stagememory.h"
#include "stepmodel.h"
#include "testdata.h"
#include "testplans.h"
#include "units.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace paraplan;
using test::evaluate;
using test::layout;

namespace {

Plan llamaPlan(const char* model, int nodes, ParallelLayout layout, int seq,
               TrainingFramework framework, Dtype dtype = Dtype::BF16)
{
    Plan plan;
    std::string error;
    if (!modelFromPreset(model, &plan.model, &error))
        qFatal("%s", error.c_str());
    plan.cluster = test::clusterPreset("dgx-h100", nodes);
    plan.parallel = layout;
    plan.training.seq_len = seq;
    plan.training.dtype = dtype;
    plan.training.framework = framework;
    plan.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan.cluster.gpu_id),
                                        plan.training.optimizer, dtype);
    return plan;
}

LayoutMemoryTerms termsOf(const Plan& plan)
{
    layercost::Context c{plan, plan.model, plan.parallel};
    setMemoryContext(c, resolvedAttention(plan));
    LayoutMemoryTerms t;
    setLayoutMemoryTerms(c, countParameters(plan.model), t);
    return t;
}

} // namespace

class TestMemory : public QObject
{
    Q_OBJECT

private slots:
    void theLossPeakFollowsTheFramework()
    {
        // Llama 3 8B, 2 x 8192 tokens, vocab 128256, TP 1: Megatron-Core's cross entropy holds
        // the bf16 logits and one fp32 copy (2 + 4 bytes per logit); PyTorch's holds three fp32
        // tensors in its backward (12).
        const double logits = 2.0 * 8192 * 128256;
        Plan plan =
            llamaPlan("llama3-8b", 1, layout(1, 1, 8, 2, 16), 8192, TrainingFramework::Megatron);
        QCOMPARE(lossBytesPerLogit(plan), 6.0);
        QCOMPARE(termsOf(plan).logitsBytes, logits * 6);
        plan.training.framework = TrainingFramework::Torchtitan;
        plan.parallel.zero = 3;
        QCOMPARE(lossBytesPerLogit(plan), 12.0);
        QCOMPARE(termsOf(plan).logitsBytes, logits * 12);
        // Under TP the logits are split by vocabulary (vocab-parallel / loss_parallel).
        plan.parallel = layout(2, 1, 4, 2, 16, 3);
        QCOMPARE(termsOf(plan).logitsBytes, logits / 2 * 12);
    }

    void transformerEngineSavesFp8Inputs()
    {
        // Llama 3 70B, TP 4 with sequence parallelism, no dropout, 4096 tokens: per token and
        // hidden unit, bf16 keeps (8 replicated) / 4 + (2 + 4 x 1/8 + 2 + 6 x 3.5) / 4 =
        // 8.375 bytes; Transformer Engine's FP8 saves the QKV, fc1 and fc2 inputs in one byte
        // and an FP8 copy of the attention output: (6 + 2 + 0.5 + 2 + 1 + 5 x 3.5) / 4 = 7.25.
        ParallelLayout tp4 = layout(4, 1, 2, 1, 8);
        tp4.sequence_parallel = true;
        Plan bf16 = llamaPlan("llama3-70b", 1, tp4, 4096, TrainingFramework::Megatron);
        Plan fp8 = llamaPlan("llama3-70b", 1, tp4, 4096, TrainingFramework::Megatron, Dtype::FP8);
        const double sbh = 4096.0 * 8192;
        QCOMPARE(termsOf(bf16).denseAct, 8.375 * sbh);
        QCOMPARE(termsOf(fp8).denseAct, 7.25 * sbh);
        // torchao's float8 saves its inputs in bf16: no change on torchtitan.
        Plan tbf16 = bf16, tfp8 = fp8;
        tbf16.training.framework = tfp8.training.framework = TrainingFramework::Torchtitan;
        tbf16.training.attention = tfp8.training.attention = AttentionKernel::Sdpa;
        QCOMPARE(termsOf(tfp8).denseAct, termsOf(tbf16).denseAct);
    }

    void recomputeModulesKeepOnlyTheirInputs()
    {
        // Llama 3 70B, TP 4 with sequence parallelism, bf16: recomputing the MLP
        // (--recompute-modules mlp) drops fc1's output and fc2's input, 6 x 3.5 bytes per token
        // and hidden unit: (8 + 2 + 0.5 + 2) / 4 = 3.125 left of 8.375; the MLP's GEMMs run
        // again in the backward.
        ParallelLayout tp4 = layout(4, 1, 2, 1, 8);
        tp4.sequence_parallel = true;
        tp4.recompute = Recompute::Selective;
        Plan plan = llamaPlan("llama3-70b", 1, tp4, 4096, TrainingFramework::Megatron);
        const double sbh = 4096.0 * 8192;
        QCOMPARE(termsOf(plan).denseAct, 8.375 * sbh);
        const StepCost base = evaluate(plan);
        plan.parallel.recompute_modules = kRecomputeCoreAttn | kRecomputeMlp;
        QCOMPARE(termsOf(plan).denseAct, 3.125 * sbh);
        const StepCost mlp = evaluate(plan);
        QVERIFY(mlp.ok);
        double mlpForward = 0;
        for (size_t i = 0; i < base.dense_layer.gemm_count; ++i) {
            const GemmTiming& g = base.dense_layer.gemms[i];
            if (g.name == std::string("mlp_up") || g.name == std::string("mlp_down"))
                mlpForward += g.time_s;
        }
        QVERIFY(mlpForward > 0);
        QCOMPARE(mlp.dense_layer.recompute_s, base.dense_layer.recompute_s + mlpForward);
        QVERIFY(mlp.step_time_s > base.step_time_s);
        // Only Megatron-Core's selective recompute has modules; other recompute ignores them.
        plan.training.framework = TrainingFramework::Torchtitan;
        QVERIFY(test::hasRule(evaluate(plan).issues, "recompute-modules"));
        plan.training.framework = TrainingFramework::Megatron;
        plan.parallel.recompute = Recompute::Full;
        QVERIFY(evaluate(plan).ok);
        // An MoE layer: moe_act drops the activation's output (fc2's input), 2 f / h x k.
        Plan moe;
        std::string error;
        QVERIFY(modelFromPreset("qwen3-30b-a3b", &moe.model, &error));
        moe.cluster = test::clusterPreset("dgx-h100", 1);
        moe.parallel = layout(1, 1, 8, 1, 8, 1);
        moe.parallel.ep = 8;
        moe.parallel.recompute = Recompute::Selective;
        moe.training.seq_len = 4096;
        moe.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(moe.cluster.gpu_id),
                                           moe.training.optimizer, moe.training.dtype);
        const double before = termsOf(moe).moeAct;
        moe.parallel.recompute_modules = kRecomputeMoeAct;
        const double k = moe.model.experts_per_token;
        QCOMPARE(before - termsOf(moe).moeAct, 2.0 * moe.model.expert_ffn_hidden /
                                                   moe.model.hidden * k * 4096 * moe.model.hidden);
        QVERIFY(evaluate(moe).ok);
        // The experts' part follows the busiest rank's tokens: per routed token the activation
        // (6 f / h, SwiGLU) and the dispatch's two saved copies (fc1's permuted input and the
        // experts' output, 2 + 2): twice the tokens, that much more.
        moe.parallel.recompute_modules = 0;
        const double balanced = termsOf(moe).moeAct;
        moe.figures.moe_imbalance = {2, Origin::UserEntry, "a test"};
        QCOMPARE(termsOf(moe).moeAct - balanced,
                 (6.0 * moe.model.expert_ffn_hidden / moe.model.hidden + 4) * k * 4096 *
                     moe.model.hidden);
    }

    void fp8WeightsReplaceTheSixteenBitCopy()
    {
        // Llama 3 8B, DP 8 with the distributed optimizer, FP8 current scaling. Transformer
        // Engine caches each layer weight's FP8 copies (2 bytes) beside the bf16 weight (2);
        // with --fp8-param-gather the FP8 tensors are the weight: 2 bytes per layer parameter
        // in all, 2 fewer, and the all-gather moves 1 byte per layer parameter instead of 2.
        // The embedding, final norm and LM head stay bf16 either way.
        Plan plan = llamaPlan("llama3-8b", 1, layout(1, 1, 8, 1, 8, 1), 4096,
                              TrainingFramework::Megatron, Dtype::FP8);
        plan.training.fp8_recipe = Fp8Recipe::Current;
        const double layerParams = 32 * termsOf(plan).denseParams;
        const StepCost cached = evaluate(plan);
        QVERIFY(cached.ok);
        const StageCost& st = cached.stages.front();
        QCOMPARE(st.weights_bytes, 2 * st.params + 2 * layerParams);
        plan.training.fp8_param_gather = true;
        const StepCost fp8 = evaluate(plan);
        QVERIFY(fp8.ok);
        QCOMPARE(fp8.stages.front().weights_bytes, 2 * st.params);
        auto gatherBytes = [](const StepCost& cost) {
            for (const CollectiveCost& cc : cost.collectives)
                if (std::string(cc.purpose) == "updated parameter shards all-gathered")
                    return cc.call.bytes;
            return -1.0;
        };
        QCOMPARE(gatherBytes(cached), 2 * st.params);
        QCOMPARE(gatherBytes(fp8), 2 * st.params - layerParams);
        // A plan field: written only when on, read back; refused outside Megatron's FP8.
        const std::string text = planToJsonText(plan, HardwareCatalog::bundled());
        QVERIFY(text.find(R"("fp8_param_gather": true)") != std::string::npos);
        Plan back;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(text, {}, &back, &errors, HardwareCatalog::bundled()));
        QVERIFY(back.training.fp8_param_gather);
        // Megatron-LM's flag out and back in.
        const LaunchConfig config =
            exportLaunchConfig(plan, LaunchTarget::Megatron, HardwareCatalog::bundled());
        QVERIFY(config.text.find("--fp8-param-gather") != std::string::npos);
        Plan base = plan;
        base.training.fp8_param_gather = false;
        QVERIFY(importLaunchConfig(config.text, LaunchTarget::Megatron, base,
                                   HardwareCatalog::bundled())
                    .plan.training.fp8_param_gather);
        back.training.dtype = Dtype::BF16;
        QVERIFY(!validatePlan(back, HardwareCatalog::bundled()).empty());
        back.training.dtype = Dtype::FP8;
        back.training.framework = TrainingFramework::Torchtitan;
        bool named = false;
        for (const PlanIssue& issue : validatePlan(back, HardwareCatalog::bundled()))
            named = named || issue.field == "training.fp8_param_gather";
        QVERIFY(named);
    }

    void recomputeModulesAreAPlanFieldAndAMegatronFlag()
    {
        const char* text = R"({"schema": "paraplan-plan/1",
            "model": {"preset": "llama3-70b"}, "cluster": {"preset": "dgx-h100", "nodes": 1},
            "parallel": {"tp": 4, "dp": 2, "sequence_parallel": true, "recompute": "selective",
                         "recompute_modules": ["core_attn", "mlp"], "micro_batch": 1,
                         "global_batch": 8},
            "training": {"framework": "megatron", "seq_len": 4096}})";
        Plan plan;
        std::vector<std::string> errors;
        QVERIFY(planFromJsonText(text, {}, &plan, &errors, HardwareCatalog::bundled()));
        QCOMPARE(unsigned(plan.parallel.recompute_modules),
                 unsigned(kRecomputeCoreAttn | kRecomputeMlp));
        QVERIFY(
            planToJsonText(plan, HardwareCatalog::bundled()).find(R"("recompute_modules": [)") !=
            std::string::npos);
        const LaunchConfig config =
            exportLaunchConfig(plan, LaunchTarget::Megatron, HardwareCatalog::bundled());
        QVERIFY(config.text.find("--recompute-modules core_attn mlp") != std::string::npos);
        Plan base = plan;
        base.parallel.recompute_modules = 0;
        const LaunchImport back = importLaunchConfig(config.text, LaunchTarget::Megatron, base,
                                                     HardwareCatalog::bundled());
        QCOMPARE(unsigned(back.plan.parallel.recompute_modules),
                 unsigned(plan.parallel.recompute_modules));
        std::string bad = text;
        bad.replace(bad.find("\"mlp\""), 5, "\"mlps\"");
        errors.clear();
        QVERIFY(!planFromJsonText(bad, {}, &plan, &errors, HardwareCatalog::bundled()));
        QVERIFY2(errors.front().find("unknown module 'mlps'") != std::string::npos,
                 errors.front().c_str());
    }

    void dtypesChangeModelStateAsTheFrameworksDo()
    {
        // One plan per framework, the bytes a dtype change moves derived by hand from the
        // stage's parameters (st.params) and its shard groups.
        // Megatron-Core, distributed optimizer over DP 8: main_grad fp32 -> bf16 saves 2 bytes
        // per parameter, unsharded; bf16 moments save 2 x 2 bytes, sharded over 8.
        Plan mega =
            llamaPlan("llama3-8b", 1, layout(1, 1, 8, 1, 8, 1), 4096, TrainingFramework::Megatron);
        const StepCost base = evaluate(mega);
        QVERIFY(base.ok);
        const StageCost& st = base.stages.front();
        mega.training.grad_reduce_bytes = 2;
        const StepCost bf16Grads = evaluate(mega);
        QCOMPARE(st.grads_bytes - bf16Grads.stages.front().grads_bytes, 2 * st.params);
        mega.training.optimizer_state_bytes = 2;
        const StepCost bf16State = evaluate(mega);
        QCOMPARE(st.optimizer_bytes - bf16State.stages.front().optimizer_bytes,
                 2 * 2 * st.params / 8);
        // torchtitan FSDP2 (ZeRO-3 over 8): the fp32 parameter, its fp32 gradient and moments
        // all sharded: 4 + 4 + 8 bytes per parameter over 8; bf16 moments save 4 over 8.
        Plan titan = llamaPlan("llama3-8b", 1, layout(1, 1, 8, 1, 8, 3), 4096,
                               TrainingFramework::Torchtitan);
        const StageCost tt = evaluate(titan).stages.front();
        QCOMPARE(tt.weights_bytes, 4 * tt.params / 8);
        QCOMPARE(tt.grads_bytes, 4 * tt.params / 8);
        QCOMPARE(tt.optimizer_bytes, 8 * tt.params / 8);
        titan.training.optimizer_state_bytes = 2;
        QCOMPARE(evaluate(titan).stages.front().optimizer_bytes, 4 * tt.params / 8);
        // DeepSpeed ZeRO-2 over 8: 16-bit gradients sharded, fp32 master and moments sharded.
        Plan ds =
            llamaPlan("llama3-8b", 1, layout(1, 1, 8, 1, 8, 2), 4096, TrainingFramework::DeepSpeed);
        const StageCost d = evaluate(ds).stages.front();
        QCOMPARE(d.weights_bytes, 2 * d.params);
        QCOMPARE(d.grads_bytes, 2 * d.params / 8);
        QCOMPARE(d.optimizer_bytes, 12 * d.params / 8);
    }

    void theVerdictCountsTheRuntimeAndTheAllocator()
    {
        Plan plan =
            llamaPlan("llama3-8b", 1, layout(2, 1, 4, 1, 8, 1), 4096, TrainingFramework::Megatron);
        const StepCost cost = evaluate(plan);
        QVERIFY(cost.ok && cost.fits && !cost.tight);
        QCOMPARE(cost.runtime_reserve_bytes, (781.0 + 688.0) * units::kMiB);
        QCOMPARE(cost.spareBytes(),
                 cost.hbm_bytes - cost.max_stage_total_bytes - cost.runtime_reserve_bytes);
        QCOMPARE(cost.max_stage_reserved_bytes, cost.max_stage_total_bytes * 1.05);
        // A runtime reserve that leaves less than the peak: over by the difference.
        const double over = 2 * units::kGiB;
        plan.figures.runtime_reserve_bytes = {cost.spareBytes() + cost.runtime_reserve_bytes + over,
                                              Origin::UserEntry, "a test"};
        const StepCost out = evaluate(plan);
        QVERIFY(!out.fits);
        QCOMPARE(out.spareBytes(), -over);
        QVERIFY2(out.warnings.back().find("does not fit: over by 2 GiB") == 0,
                 out.warnings.back().c_str());
        // Room for the peak but not for the allocator's reserve: tight, with a warning.
        // 1 GiB to spare, and a reserve of 2 GiB over the peak.
        plan.figures.runtime_reserve_bytes = {cost.spareBytes() + cost.runtime_reserve_bytes -
                                                  units::kGiB,
                                              Origin::UserEntry, "a test"};
        plan.figures.allocator_reserve = {2 * units::kGiB / cost.max_stage_total_bytes,
                                          Origin::UserEntry, "a test"};
        const StepCost tight = evaluate(plan);
        QVERIFY(tight.fits && tight.tight);
        QVERIFY2(tight.warnings.back().find("tight: ") == 0, tight.warnings.back().c_str());
        QVERIFY(tight.warnings.back().find("expandable_segments:True") != std::string::npos);
    }

    void theCheapestFixesFitAndAreEvaluated()
    {
        // Llama 3 70B on 64 GPUs, FSDP2 with op-level selective checkpointing at 2 x 8192
        // tokens per GPU: torchtitan's published out-of-memory layout.
        Plan plan = llamaPlan("llama3-70b", 8, layout(1, 1, 64, 2, 128, 3), 8192,
                              TrainingFramework::Torchtitan);
        plan.parallel.recompute = Recompute::Selective;
        plan.training.attention = AttentionKernel::Sdpa;
        const StepEngine engine(plan.cluster, HardwareCatalog::bundled());
        const StepCost cost = engine.evaluate(plan);
        QVERIFY(cost.ok && !cost.fits);
        const std::vector<MemoryFix> fixes = memoryFixes(plan, cost, engine);
        QVERIFY(!fixes.empty());
        double last = 0;
        for (const MemoryFix& fix : fixes) {
            Plan fixed = plan;
            fixed.parallel = fix.layout;
            const StepCost answer = engine.evaluate(fixed);
            QVERIFY2(answer.ok && answer.fits, fix.change.c_str());
            QCOMPARE(fix.step_time_s, answer.step_time_s);
            QCOMPARE(fix.slowdown, answer.step_time_s / cost.step_time_s - 1);
            QVERIFY(fix.tight || fix.step_time_s >= last);
            // A PP or TP change is named by the degrees it leads to.
            for (const char* dim : {"pp ", "tp "}) {
                const size_t at = fix.change.find(dim);
                if (at == std::string::npos)
                    continue;
                const int degree = dim[0] == 'p' ? fix.layout.pp : fix.layout.tp;
                QCOMPARE(fix.change.substr(at), std::string(dim) + std::to_string(degree) + " dp " +
                                                    std::to_string(fix.layout.dp));
            }
            last = fix.step_time_s;
        }
        QCOMPARE(fixes.front().change, std::string("recompute full"));
        QVERIFY(memoryFixText(fixes.front()).find("% slower, ") != std::string::npos);
        // Llama 3 70B at TP 8 without ZeRO on 64 GPUs: the distributed optimizer, and twice the
        // PP or TP with half the DP, each named by the degrees it leads to.
        Plan dense = llamaPlan("llama3-70b", 8, layout(8, 1, 8, 1, 64, 0), 4096,
                               TrainingFramework::Megatron);
        dense.parallel.sequence_parallel = true;
        dense.parallel.recompute = Recompute::Full;
        const StepEngine denseEngine(dense.cluster, HardwareCatalog::bundled());
        std::vector<std::string> names;
        for (const MemoryFix& fix : memoryFixes(dense, denseEngine.evaluate(dense), denseEngine, 8))
            names.push_back(fix.change);
        QVERIFY(std::find(names.begin(), names.end(), "ZeRO 1") != names.end());
        QVERIFY(std::find(names.begin(), names.end(), "pp 2 dp 4") != names.end());
        QVERIFY(std::find(names.begin(), names.end(), "tp 16 dp 4") != names.end());
        // A plan that fits needs none.
        plan.parallel.recompute = Recompute::Full;
        QVERIFY(memoryFixes(plan, engine.evaluate(plan), engine).empty());
    }

    void publishedMeasuredMemoryRowByRow()
    {
        // Each row's bytes against its published figure (peak reserved rows against the
        // predicted reserved bytes), and every published verdict. The bounds are today's
        // accuracy, kept from slipping: the Megatron-Bridge FP8 SFT rows at TP 4 are predicted
        // 15% high (their rank and what "Peak Mem (GB)" measures are not published; the TP 8
        // row of the same table is within 6%), torchtitan's 70B full-recompute row 21% low.
        CalibrationReport report;
        std::string error;
        QVERIFY2(runCalibration(test::dataPath("memory-2026.json").toStdString(), &report, &error,
                                HardwareCatalog::bundled()),
                 error.c_str());
        QCOMPARE(report.memory.size(), size_t(11));
        int reserved = 0;
        for (const MemoryCalibrationRow& row : report.memory) {
            reserved += row.reserved ? 1 : 0;
            if (row.measured_GiB > 0)
                QVERIFY2(std::fabs(row.error) <= 0.22,
                         qPrintable(QString::fromStdString(row.name) + ": " +
                                    QString::number(100 * row.error, 'f', 1) + "%"));
        }
        QCOMPARE(reserved, 2); // the torchtitan rows log reserved_bytes.all.peak
        // NeMo's Nemotron-4 340B on 128 H100 (TP 8, PP 8, VP 12) with its bf16 gradients and
        // optimizer state fits; with fp32 ones (the defaults) it would not.
        for (const MemoryCalibrationRow& row : report.memory) {
            if (row.name != "dgxc-nemotron4-340b-tp8pp8vp12-h100x128")
                continue;
            QVERIFY(row.predicted_fits);
            Plan fp32 = row.plan;
            fp32.training.grad_reduce_bytes = 0;
            fp32.training.optimizer_state_bytes = 0;
            QVERIFY(!evaluate(fp32).fits);
        }
        QVERIFY2(report.memory_mean_abs_error <= 0.085,
                 qPrintable(QString::number(100 * report.memory_mean_abs_error)));
        QCOMPARE(report.verdicts, 9);
        QCOMPARE(report.verdicts_matched, report.verdicts);
    }
};

QTEST_GUILESS_MAIN(TestMemory)
#include "tst_memory.moc"
