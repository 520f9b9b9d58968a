// The layout search: its best equals a brute-force loop over the same space written here
// independently; random valid plans never beat it; counts add up; threads change nothing;
// constraints, objectives, the Pareto front, the reasons, cancel, and the CLI command.
#include "clicommands.h"
#include "clusterio.h"
#include "modelio.h"
#include "search.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <random>
#include <sstream>

using namespace paraplan;

namespace {

Plan smallPlan(const char* model = "llama3-8b")
{
    Plan p;
    std::string error;
    if (!modelFromPreset(model, &p.model, &error))
        qFatal("%s", error.c_str());
    ClusterOptions options;
    options.nodes = 2;
    if (!clusterFromPreset("dgx-h100", options, &p.cluster, &error, HardwareCatalog::bundled()))
        qFatal("%s", error.c_str());
    p.parallel.global_batch = 64;
    p.training.seq_len = 4096;
    p.training.train_tokens = 1e12;
    p.training.gpu_hour_usd = 2.5;
    p.figures = defaultEngineFigures(*HardwareCatalog::bundled().gpu(p.cluster.gpu_id),
                                     p.training.optimizer, p.training.dtype);
    return p;
}

struct Brute
{
    long long space = 0;
    long long scored = 0;
    double best = 1e300;
    std::vector<std::pair<ParallelLayout, double>> valid; ///< fits memory, with its score
    std::vector<ParallelLayout> all;
};

// The space as the search documents it, enumerated by plain loops and scored one by one.
Brute bruteForce(const Plan& base, SearchObjective objective)
{
    Brute b;
    const int n = static_cast<int>(base.cluster.totalGpus());
    const StepEngine engine(base.cluster, HardwareCatalog::bundled());
    for (int tp = 1; tp <= n; ++tp)
        for (int pp = 1; pp <= n; ++pp)
            for (int cp = 1; cp <= n; ++cp) {
                if (n % (tp * pp * cp) != 0)
                    continue;
                const int dp = n / (tp * pp * cp);
                for (int zero = 0; zero < 4; ++zero)
                    for (bool sp : {false, true}) {
                        if (sp && tp == 1)
                            continue;
                        for (Recompute rc :
                             {Recompute::Full, Recompute::Selective, Recompute::None})
                            for (int v = 1; v <= (pp > 1 ? 4 : 1); ++v)
                                for (int mb : {1, 2, 4, 8, 16}) {
                                    Plan plan = base;
                                    ParallelLayout& p = plan.parallel;
                                    p.tp = tp;
                                    p.pp = pp;
                                    p.cp = cp;
                                    p.dp = dp;
                                    p.ep = 1;
                                    p.zero = zero;
                                    p.sequence_parallel = sp;
                                    p.recompute = rc;
                                    p.interleave = v;
                                    p.micro_batch = mb;
                                    ++b.space;
                                    b.all.push_back(p);
                                    const StepCost cost = engine.evaluate(plan);
                                    if (!cost.ok || !cost.fits)
                                        continue;
                                    ++b.scored;
                                    const double score = searchScore(cost, n, objective);
                                    b.valid.push_back({p, score});
                                    b.best = std::min(b.best, score);
                                }
                    }
            }
    return b;
}

long long sum(const std::map<std::string, long long>& counts)
{
    long long total = 0;
    for (const auto& entry : counts)
        total += entry.second;
    return total;
}

} // namespace

class TestSearch : public QObject
{
    Q_OBJECT

private slots:
    void bestEqualsBruteForce_data()
    {
        QTest::addColumn<int>("objective");
        for (SearchObjective o : {SearchObjective::StepTime, SearchObjective::TimeToTrain,
                                  SearchObjective::Cost, SearchObjective::TokensPerGpu})
            QTest::newRow(searchObjectiveName(o)) << int(o);
    }
    void bestEqualsBruteForce()
    {
        QFETCH(int, objective);
        const Plan base = smallPlan();
        const auto o = SearchObjective(objective);
        const Brute brute = bruteForce(base, o);
        SearchOptions options;
        options.objective = o;
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY2(result.ok, result.error.c_str());
        QCOMPARE(result.space, brute.space);
        QCOMPARE(result.scored, brute.scored);
        QVERIFY(result.scored > 10);
        QCOMPARE(result.top.front().score, brute.best);
        // Every count has a home: the space is the sum of what happened to each layout.
        QCOMPARE(sum(result.rejected) + result.did_not_fit + sum(result.constrained) +
                     result.scored,
                 result.space);
        QVERIFY(!result.rejected.empty());
        // The top N are ordered.
        for (size_t i = 1; i < result.top.size(); ++i)
            QVERIFY(result.top[i - 1].score <= result.top[i].score);
    }

    void randomValidPlansNeverBeatTheBest()
    {
        const Plan base = smallPlan();
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), {});
        const Brute brute = bruteForce(base, SearchObjective::StepTime);
        QVERIFY(brute.valid.size() > 50);
        // Valid plans drawn at random, evaluated afresh: none is faster than the best.
        std::mt19937 random(20261129);
        std::uniform_int_distribution<size_t> pick(0, brute.valid.size() - 1);
        const StepEngine engine(base.cluster, HardwareCatalog::bundled());
        int checked = 0;
        for (int i = 0; i < 500; ++i) {
            Plan plan = base;
            plan.parallel = brute.valid[pick(random)].first;
            const StepCost cost = engine.evaluate(plan);
            QVERIFY(cost.ok && cost.fits);
            ++checked;
            QVERIFY(cost.step_time_s >= result.top.front().step_time_s);
        }
        QVERIFY(checked > 50);
    }

    void threadsChangeNothing()
    {
        const Plan base = smallPlan();
        SearchOptions one;
        one.top = 25;
        SearchOptions several = one;
        several.threads = 3;
        const SearchResult a = searchPlans(base, HardwareCatalog::bundled(), one);
        const SearchResult b = searchPlans(base, HardwareCatalog::bundled(), several);
        QCOMPARE(a.rejected, b.rejected);
        QCOMPARE(a.did_not_fit, b.did_not_fit);
        QCOMPARE(a.scored, b.scored);
        QCOMPARE(a.top.size(), b.top.size());
        for (size_t i = 0; i < a.top.size(); ++i) {
            const ParallelLayout& x = a.top[i].layout;
            const ParallelLayout& y = b.top[i].layout;
            QCOMPARE(std::make_tuple(x.tp, x.pp, x.dp, x.cp, x.zero, x.sequence_parallel,
                                     int(x.recompute), x.interleave, x.micro_batch),
                     std::make_tuple(y.tp, y.pp, y.dp, y.cp, y.zero, y.sequence_parallel,
                                     int(y.recompute), y.interleave, y.micro_batch));
            QCOMPARE(a.top[i].score, b.top[i].score);
        }
        QCOMPARE(a.pareto.size(), b.pareto.size());
    }

    void constraintsHold()
    {
        const Plan base = smallPlan();
        SearchOptions options;
        options.top = 50;
        options.constraints.max_tp = 2;
        options.constraints.pp_across_nodes = true;
        options.constraints.min_headroom = 0.3;
        options.constraints.fixed_micro_batch = 1;
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY(result.ok);
        QVERIFY(!result.top.empty());
        for (const SearchCandidate& c : result.top) {
            QVERIFY(c.layout.tp <= 2);
            QCOMPARE(c.layout.micro_batch, 1);
            if (c.layout.pp > 1)
                QVERIFY(groupStrides(c.layout).pp >= base.cluster.gpusPerNode());
            QVERIFY(c.memory_bytes <= 0.7 * c.cost.hbm_bytes + 1);
        }
        for (const char* rule : {"max-tp", "micro-batch", "pp-across-nodes", "headroom"})
            QVERIFY2(result.constrained.count(rule) && result.constrained.at(rule) > 0, rule);
        QCOMPARE(sum(result.rejected) + result.did_not_fit + sum(result.constrained) +
                     result.scored,
                 result.space);
    }

    void objectivesNeedTheirInputs()
    {
        Plan base = smallPlan();
        base.training.train_tokens = 0;
        SearchOptions options;
        options.objective = SearchObjective::TimeToTrain;
        SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY(!result.ok);
        QVERIFY(QString::fromStdString(result.error).contains("train_tokens"));
        options.objective = SearchObjective::Cost;
        result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY(!result.ok);
        QVERIFY(QString::fromStdString(result.error).contains("gpu_hour_usd"));
    }

    void paretoFrontIsNonDominated()
    {
        const Plan base = smallPlan();
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), {});
        QVERIFY(result.pareto.size() >= 2);
        for (size_t i = 1; i < result.pareto.size(); ++i) {
            QVERIFY(result.pareto[i].memory_bytes > result.pareto[i - 1].memory_bytes);
            QVERIFY(result.pareto[i].step_time_s < result.pareto[i - 1].step_time_s);
        }
        // No scored plan is at once smaller and faster than a member of the front.
        const Brute brute = bruteForce(base, SearchObjective::StepTime);
        const StepEngine engine(base.cluster, HardwareCatalog::bundled());
        for (const auto& [layout, score] : brute.valid) {
            Plan plan = base;
            plan.parallel = layout;
            const StepCost cost = engine.evaluate(plan);
            for (const SearchCandidate& member : result.pareto)
                QVERIFY(!(cost.max_stage_total_bytes < member.memory_bytes &&
                          cost.step_time_s < member.step_time_s));
        }
        // The fastest plan ends the front.
        QCOMPARE(result.pareto.back().step_time_s, result.top.front().step_time_s);
    }

    void eachCandidateSaysWhyItLoses()
    {
        const Plan base = smallPlan();
        SearchOptions options;
        options.top = 40;
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        const StepBreakdown& best = result.top.front().cost.breakdown;
        int explained = 0;
        for (size_t i = 1; i < result.top.size(); ++i) {
            const SearchCandidate& c = result.top[i];
            QVERIFY(!c.behind.empty());
            if (c.behind == "tie")
                continue;
            ++explained;
            QVERIFY(c.behind_s > 0);
            const StepBreakdown& b = c.cost.breakdown;
            const double deltas[] = {b.compute_s - best.compute_s,
                                     b.recompute_s - best.recompute_s,
                                     b.bubble_s - best.bubble_s,
                                     b.tp_comm_exposed_s - best.tp_comm_exposed_s,
                                     b.cp_comm_exposed_s - best.cp_comm_exposed_s,
                                     b.ep_comm_exposed_s - best.ep_comm_exposed_s,
                                     b.pp_comm_exposed_s - best.pp_comm_exposed_s,
                                     b.dp_comm_exposed_s - best.dp_comm_exposed_s,
                                     b.optimizer_s - best.optimizer_s};
            QCOMPARE(c.behind_s, *std::max_element(std::begin(deltas), std::end(deltas)));
        }
        QVERIFY(explained > 0);
    }

    void mixtureOfExpertsSearchesExpertParallelism()
    {
        const Plan base = smallPlan("mixtral-8x7b");
        SearchOptions options;
        options.top = 200;
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY2(result.ok, result.error.c_str());
        QCOMPARE(sum(result.rejected) + result.did_not_fit + sum(result.constrained) +
                     result.scored,
                 result.space);
        bool expertParallel = false;
        for (const SearchCandidate& c : result.top)
            expertParallel = expertParallel || c.layout.ep > 1;
        QVERIFY(expertParallel);
        // ep must divide the 8 experts: ep 16 is enumerated and rejected by that rule.
        QVERIFY(result.rejected.count("ep-experts"));
    }

    void cancelStops()
    {
        std::atomic<bool> cancel{true};
        const SearchResult result =
            searchPlans(smallPlan(), HardwareCatalog::bundled(), {}, &cancel);
        QVERIFY(result.cancelled);
        QVERIFY(result.scored < result.space);
    }

    void cliSearch()
    {
        const std::string plan = PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-dgx-h100.json";
        std::ostringstream out, err;
        QCOMPARE(cli::run({"search", plan, "--top", "3", "--threads", "2", "--json"}, out, err), 0);
        const QJsonObject json =
            QJsonDocument::fromJson(QByteArray::fromStdString(out.str())).object();
        QCOMPARE(json["top"].toArray().size(), 3);
        const QJsonObject first = json["top"].toArray().first().toObject();
        QVERIFY(first["parallel"].toObject().contains("tp"));
        QVERIFY(first["step_time_s"].toDouble() > 0);
        double total = json["scored"].toDouble() + json["did_not_fit"].toDouble();
        for (const QJsonValue& v : json["rejected"].toObject())
            total += v.toDouble();
        QCOMPARE(total, json["space"].toDouble());

        std::ostringstream text, textErr;
        QCOMPARE(cli::run({"search", plan, "--top", "2"}, text, textErr), 0);
        QVERIFY(QString::fromStdString(text.str()).contains("Pareto front"));

        // A token budget per step: 16M tokens of 8,192-token sequences is a batch of 2,048.
        std::ostringstream budget, budgetErr;
        QCOMPARE(cli::run({"search", plan, "--tokens-per-step", "16777216", "--top", "1"}, budget,
                          budgetErr),
                 0);
        QVERIFY2(QString::fromStdString(budget.str()).contains("global batch 2048"),
                 budget.str().c_str());

        std::ostringstream o, e;
        QCOMPARE(cli::run({"search", plan, "--objective", "speed"}, o, e), 2);
        QVERIFY(QString::fromStdString(e.str()).contains("--objective"));
    }
};

QTEST_MAIN(TestSearch)
#include "tst_search.moc"
