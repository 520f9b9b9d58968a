// The layout search: its best equals a brute-force loop over the same space written here
// independently; random valid plans never beat it; counts add up; threads change nothing;
// constraints, objectives, the Pareto front, the reasons, cancel, and the CLI command.
#include "clicommands.h"
#include "clusterio.h"
#include "modelio.h"
#include "planio.h"
#include "search.h"
#include "searchspace.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
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

Plan planFromText(const std::string& text)
{
    Plan plan;
    std::vector<std::string> errors;
    if (!planFromJsonText(text, {}, &plan, &errors, HardwareCatalog::bundled()))
        qFatal("%s", errors.front().c_str());
    return plan;
}

// The tester's case: Llama 3 8B on 1,048,576 H100s (131,072 DGX H100 nodes).
Plan llama8bOnAMillionGpus()
{
    return planFromText(R"({
        "model": {"preset": "llama3-8b"},
        "cluster": {"preset": "dgx-h100", "nodes": 131072},
        "parallel": {"tp": 8, "dp": 131072, "micro_batch": 1, "global_batch": 1048576},
        "training": {"seq_len": 8192}})");
}

auto fields(const ParallelLayout& p)
{
    return std::make_tuple(p.tp, p.pp, p.dp, p.cp, p.ep, p.zero, p.sequence_parallel,
                           int(p.recompute), p.interleave, p.micro_batch);
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

    void spaceIsCountedWithoutListingIt_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("maxTp");
        QTest::addColumn<int>("microBatch");
        QTest::addColumn<bool>("ppAcrossNodes");
        QTest::newRow("dense") << "llama3-8b" << 0 << 0 << false;
        QTest::newRow("dense, constrained") << "llama3-8b" << 2 << 4 << true;
        QTest::newRow("unsearched micro-batch") << "llama3-8b" << 0 << 3 << false;
        QTest::newRow("mixture of experts") << "mixtral-8x7b" << 4 << 0 << true;
    }
    void spaceIsCountedWithoutListingIt()
    {
        // The counts the budget is checked on equal the layouts listed and scored.
        QFETCH(QString, model);
        QFETCH(int, maxTp);
        QFETCH(int, microBatch);
        QFETCH(bool, ppAcrossNodes);
        const Plan base = smallPlan(qPrintable(model));
        SearchOptions options;
        options.constraints.max_tp = maxTp;
        options.constraints.fixed_micro_batch = microBatch;
        options.constraints.pp_across_nodes = ppAcrossNodes;
        const LayoutSpace space(base, options);
        const std::vector<ParallelLayout> layouts = enumerateLayouts(base, options);
        QCOMPARE(space.size(), static_cast<long long>(layouts.size()));
        long long kept = 0;
        long long stages = 0;
        for (const ParallelLayout& p : layouts) {
            if ((maxTp > 0 && p.tp > maxTp) || (microBatch > 0 && p.micro_batch != microBatch) ||
                (ppAcrossNodes && p.pp > 1 && groupStrides(p).pp < base.cluster.gpusPerNode()))
                continue;
            ++kept;
            if (p.pp <= base.model.layers && p.interleave * p.pp <= base.model.layers)
                stages += p.pp;
        }
        QCOMPARE(space.toEvaluate(), kept);
        QCOMPARE(space.stagesToEvaluate(), stages);
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY2(result.ok, result.error.c_str());
        QCOMPARE(result.space, space.size());
        QCOMPARE(result.space - result.excludedCount() +
                     (result.constrained.count("headroom") ? result.constrained.at("headroom") : 0),
                 kept);
        if (model == "llama3-8b" && maxTp == 0 && microBatch == 0) {
            // The dense space is the brute force's, layout for layout.
            std::vector<ParallelLayout> brute = bruteForce(base, SearchObjective::StepTime).all;
            QCOMPARE(layouts.size(), brute.size());
            auto byFields = [](const ParallelLayout& a, const ParallelLayout& b) {
                return fields(a) < fields(b);
            };
            std::vector<ParallelLayout> listed = layouts;
            std::sort(listed.begin(), listed.end(), byFields);
            std::sort(brute.begin(), brute.end(), byFields);
            for (size_t i = 0; i < listed.size(); ++i)
                QCOMPARE(fields(listed[i]), fields(brute[i]));
        }
    }

    void topAndParetoEqualTheFullRanking_data()
    {
        QTest::addColumn<int>("threads");
        QTest::newRow("one thread") << 1;
        QTest::newRow("five threads") << 5;
    }
    void topAndParetoEqualTheFullRanking()
    {
        // The search keeps only the top N, the Pareto front and counts; they equal what a
        // ranking of every scored layout, built here from the brute force, gives.
        QFETCH(int, threads);
        // The search costs every layout on the stack resolved from the plan it starts from;
        // the brute force is given that stack outright.
        Plan base = smallPlan();
        base.training.stack = TrainingStack::Megatron;
        base.parallel.tp = 8;
        base.parallel.dp = 2;
        SearchOptions options;
        options.top = 60;
        options.threads = threads;
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        Brute brute = bruteForce(base, SearchObjective::StepTime);
        std::sort(brute.valid.begin(), brute.valid.end(), [](const auto& a, const auto& b) {
            return a.second != b.second ? a.second < b.second : fields(a.first) < fields(b.first);
        });
        QCOMPARE(result.top.size(), size_t(60));
        for (size_t i = 0; i < result.top.size(); ++i) {
            QCOMPARE(fields(result.top[i].layout), fields(brute.valid[i].first));
            QCOMPARE(result.top[i].score, brute.valid[i].second);
        }
        // The front by the documented rule: sorted by memory, then step time, then fields,
        // a layout joins when it is faster than every one before it.
        const StepEngine engine(base.cluster, HardwareCatalog::bundled());
        std::vector<std::tuple<double, double, ParallelLayout>> all;
        for (const auto& [layout, score] : brute.valid) {
            Plan plan = base;
            plan.parallel = layout;
            const StepCost cost = engine.evaluate(plan);
            all.emplace_back(cost.max_stage_total_bytes, cost.step_time_s, layout);
        }
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
            return std::make_tuple(std::get<0>(a), std::get<1>(a), fields(std::get<2>(a))) <
                   std::make_tuple(std::get<0>(b), std::get<1>(b), fields(std::get<2>(b)));
        });
        std::vector<ParallelLayout> front;
        double fastest = 1e300;
        for (const auto& [memory, step, layout] : all) {
            if (step < fastest) {
                fastest = step;
                front.push_back(layout);
            }
        }
        QCOMPARE(result.pareto.size(), front.size());
        for (size_t i = 0; i < front.size(); ++i)
            QCOMPARE(fields(result.pareto[i].layout), fields(front[i]));
        // The starting plan's rank counts the scored layouts that beat it.
        QVERIFY(result.given_ok);
        long long better = 0;
        for (const auto& entry : brute.valid)
            better += entry.second < result.given.score ? 1 : 0;
        QCOMPARE(result.given_rank, better + 1);
    }

    void aSearchOverItsBudgetIsRefusedBeforeItStarts()
    {
        // Llama 3 8B on 1,048,576 GPUs at the largest interleave and micro-batch the options
        // accept: 46,398,492 layouts, counted by blocks (this took 41 s and 7.4 GB when the
        // search listed and kept them).
        const Plan base = llama8bOnAMillionGpus();
        SearchOptions options;
        options.max_interleave = 64;
        options.max_micro_batch = 1 << 20;
        const LayoutSpace space(base, options);
        QCOMPARE(space.size(), 46398492LL);
        QCOMPARE(space.toEvaluate(), 46398492LL);
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY(!result.ok);
        QVERIFY(result.over_budget);
        QCOMPARE(result.scored, 0LL);
        QCOMPARE(result.error, std::string("the search would evaluate 46398492 layouts (more "
                                           "than 4000000)"));
        // A fixed micro-batch narrows it to one layout in 21, within the budget.
        options.constraints.fixed_micro_batch = 1;
        QCOMPARE(LayoutSpace(base, options).toEvaluate(), 46398492LL / 21);
        QVERIFY(searchProblem(base, options).empty());

        // The CLI says so in one line, and names the options that narrow it.
        QTemporaryDir dir;
        const QString path = dir.filePath("plan.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray::fromStdString(planToJsonText(base, HardwareCatalog::bundled())));
        file.close();
        std::ostringstream out, err;
        QCOMPARE(cli::run({"search", path.toStdString(), "--max-interleave", "64",
                           "--max-micro-batch", "1048576"},
                          out, err),
                 2);
        QCOMPARE(err.str(), std::string("error: the search would evaluate 46398492 layouts "
                                        "(more than 4000000); narrow it with --max-tp, "
                                        "--micro-batch, --max-interleave or --max-micro-batch\n"));
        QVERIFY(out.str().empty());
    }

    void deepPipelinesCountTheirStages()
    {
        // The largest model.layers: every evaluation costs each of up to 16,384 stages, so the
        // budget counts stages too.
        const Plan base = planFromText(R"({
            "model": {"name": "deep", "layers": 16384, "hidden": 512, "heads": 8,
                      "ffn_hidden": 2048, "vocab": 32000},
            "cluster": {"preset": "dgx-h100", "nodes": 131072},
            "parallel": {"tp": 1, "pp": 1024, "dp": 1024, "micro_batch": 1,
                         "global_batch": 1048576},
            "training": {"seq_len": 4096}})");
        SearchOptions options;
        options.max_interleave = 1;
        options.constraints.fixed_micro_batch = 1;
        const LayoutSpace space(base, options);
        QVERIFY(space.toEvaluate() < kMaxSearchLayouts);
        QVERIFY(space.stagesToEvaluate() > kMaxSearchStages);
        const SearchResult result = searchPlans(base, HardwareCatalog::bundled(), options);
        QVERIFY(!result.ok && result.over_budget);
        QVERIFY2(QString::fromStdString(result.error).contains("pipeline stages"),
                 result.error.c_str());
        // The top N each keep a step cost with every stage: too many of them are refused.
        options.constraints.max_tp = 1;
        QVERIFY(searchProblem(base, options).empty());
        options.top = 100000;
        const std::string problem = searchProblem(base, options);
        QVERIFY2(QString::fromStdString(problem).contains("the top 100000 layouts"),
                 problem.c_str());
    }

    void theTestersLargestPlanIsRefused()
    {
        // Every model dimension at its largest, on 1,048,576 GPUs: refused with the default
        // options and with the largest ones (it ran past 90 s, or out of memory at 14.7 GB).
        const Plan base = planFromText(R"({
            "model": {"name": "largest", "layers": 16384, "hidden": 1048576, "heads": 65536,
                      "kv_heads": 65536, "ffn_hidden": 4194304, "vocab": 134217728,
                      "experts": 65536, "experts_per_token": 2, "expert_ffn_hidden": 4194304},
            "cluster": {"preset": "dgx-h100", "nodes": 131072},
            "parallel": {"tp": 8, "dp": 131072, "micro_batch": 1,
                         "global_batch": 1073741824},
            "training": {"seq_len": 4194304}})");
        SearchOptions options;
        bool overBudget = false;
        QVERIFY(!searchProblem(base, options, &overBudget).empty());
        QVERIFY(overBudget);
        options.max_interleave = 64;
        options.max_micro_batch = 1 << 20;
        QCOMPARE(LayoutSpace(base, options).toEvaluate(), 476849772LL);
        QVERIFY(!searchPlans(base, HardwareCatalog::bundled(), options).ok);
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
