// StepEngine::evaluate(plan, into) with one reused StepCost makes no heap allocation for a
// valid plan once its buffers have grown: this executable counts every operator new of the
// process and evaluates sequences of different valid layouts (the examples and presets, swept
// over tp, pp, ZeRO, recompute and sequence parallelism; plans with warnings among them).
#include "clusterio.h"
#include "countingnew.h"
#include "modelio.h"
#include "planio.h"
#include "stepmodel.h"
#include "testplans.h"

#include <QDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

using namespace paraplan;

namespace {

std::vector<Plan> bases()
{
    std::vector<Plan> out;
    const QDir examples(PARAPLAN_SOURCE_DIR "/resources/examples");
    for (const QString& file : examples.entryList({"*.paraplan.json"}, QDir::Files, QDir::Name)) {
        Plan plan;
        std::vector<std::string> errors;
        if (!loadPlan(examples.filePath(file).toStdString(), &plan, &errors,
                      HardwareCatalog::bundled()))
            qFatal("cannot load %s", qPrintable(file));
        out.push_back(plan);
    }
    auto preset = [&out](const char* model, int nodes, int cp, int ep, int seq) {
        Plan plan;
        std::string error;
        ClusterOptions options;
        options.nodes = nodes;
        if (!modelFromPreset(model, &plan.model, &error) ||
            !clusterFromPreset("dgx-h100", options, &plan.cluster, &error,
                               HardwareCatalog::bundled()))
            qFatal("%s", error.c_str());
        ParallelLayout& p = plan.parallel;
        p.tp = 8;
        p.cp = cp;
        p.ep = ep;
        p.dp = nodes / cp;
        p.zero = 1;
        p.global_batch = p.dp * 16;
        plan.training.seq_len = seq;
        plan.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(plan.cluster.gpu_id),
                                            plan.training.optimizer, plan.training.dtype);
        out.push_back(plan);
    };
    preset("mixtral-8x7b", 8, 1, 8, 4096);
    preset("llama3-405b", 2048, 2, 1, 8192);
    preset("llama3-405b", 2048, 1, 1, 8192);
    return out;
}

// The valid layouts of a base plan: every tp and pp that fill its cluster, each ZeRO stage,
// recompute mode and sequence-parallel setting.
std::vector<Plan> layouts(const Plan& base, const StepEngine& engine)
{
    std::vector<Plan> out;
    for (int tp : {1, 2, 4, 8, 16})
        for (int pp : {1, 2, 4, 8, 16})
            for (int zero : {0, 1, 2, 3})
                for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
                    for (bool sp : {false, true}) {
                        const Plan p = test::sweptLayout(base, tp, pp, zero, r, sp);
                        if (engine.evaluate(p).ok)
                            out.push_back(p);
                    }
    return out;
}

} // namespace

class TestStepAlloc : public QObject
{
    Q_OBJECT

private slots:
    // The counter counts (so a zero below means something): a StepCost returned by value
    // allocates its vectors.
    void theCounterCounts()
    {
        const Plan plan = bases().front();
        const StepEngine engine(plan.cluster, HardwareCatalog::bundled());
        const long long before = test::allocations();
        const StepCost cost = engine.evaluate(plan);
        QVERIFY(cost.ok);
        QVERIFY(test::allocations() - before > 0);
    }

    void aReusedAnswerAllocatesNothing()
    {
        long long evaluated = 0;
        long long withWarnings = 0;
        for (const Plan& base : bases()) {
            const StepEngine engine(base.cluster, HardwareCatalog::bundled());
            const std::vector<Plan> plans = layouts(base, engine);
            QVERIFY(plans.size() > 10);
            StepCost cost;
            // One pass grows the buffers (the answer's vectors and warnings, this thread's
            // caches: a collective asked for the first time is costed, which allocates); then
            // every layout, in another order, allocates nothing.
            for (const Plan& p : plans)
                engine.evaluate(p, cost);
            engine.evaluate(base, cost); // the plan as written is asked below too
            long long allocations = 0;
            for (size_t i = plans.size(); i-- > 0;) {
                const long long before = test::allocations();
                engine.evaluate(plans[i], cost);
                allocations += test::allocations() - before;
                QVERIFY(cost.ok);
                withWarnings += cost.warnings.empty() ? 0 : 1;
                ++evaluated;
            }
            // Interleaved with the plan as written (a different pipeline, other warnings).
            for (size_t i = 0; i < plans.size(); i += 3) {
                const long long before = test::allocations();
                engine.evaluate(base, cost);
                engine.evaluate(plans[i], cost);
                allocations += test::allocations() - before;
                evaluated += 2;
            }
            QCOMPARE(allocations, 0LL);
        }
        QVERIFY2(evaluated > 1000, qPrintable(QString::number(evaluated)));
        QVERIFY2(withWarnings > 50, qPrintable(QString::number(withWarnings)));
    }

    // The reused answer is the fresh one: after a plan with warnings, one without has none.
    void aReusedAnswerKeepsNothingStale()
    {
        const Plan base = bases().front();
        const StepEngine engine(base.cluster, HardwareCatalog::bundled());
        const std::vector<Plan> plans = layouts(base, engine);
        StepCost cost;
        for (const Plan& p : plans) {
            engine.evaluate(p, cost);
            const StepCost fresh = engine.evaluate(p);
            QCOMPARE(cost.warnings, fresh.warnings);
            QCOMPARE(cost.stages.size(), fresh.stages.size());
            QCOMPARE(cost.collectives.size(), fresh.collectives.size());
            QCOMPARE(cost.links.size(), fresh.links.size());
            QCOMPARE(cost.step_time_s, fresh.step_time_s);
            QCOMPARE(cost.assumptions.attention_fwd_figure.source,
                     fresh.assumptions.attention_fwd_figure.source);
        }
    }
};

QTEST_GUILESS_MAIN(TestStepAlloc)
#include "tst_stepalloc.moc"
