// Interview practice (core/engine/practice.h): questions generated from the bundled plans,
// answers graded against the derivation's own figure (right, 2x off, 10% off), units read as
// users type them, and `paraplan-cli practice`.
#include "clirun.h"
#include "clusterio.h"
#include "hardware.h"
#include "modelio.h"
#include "planio.h"
#include "practice.h"

#include <QDir>
#include <QTest>

#include <cmath>
#include <set>

using namespace paraplan;

namespace {

struct Loaded
{
    Plan plan;
    std::unique_ptr<StepEngine> engine;
    StepCost cost;
    std::vector<PracticeQuestion> questions;
};

QString examplePath(const QString& name)
{
    return QStringLiteral(PARAPLAN_SOURCE_DIR) + "/resources/examples/" + name;
}

Loaded load(const QString& name, std::uint64_t seed = 1)
{
    Loaded l;
    std::vector<std::string> errors;
    if (!loadPlan(examplePath(name).toStdString(), &l.plan, &errors, HardwareCatalog::bundled()))
        return l;
    l.engine = std::make_unique<StepEngine>(l.plan.cluster, HardwareCatalog::bundled());
    l.cost = l.engine->evaluate(l.plan);
    l.questions = practiceQuestions(l.plan, l.cost, *l.engine, seed);
    return l;
}

const PracticeQuestion* find(const std::vector<PracticeQuestion>& questions,
                             const std::string& prefix)
{
    for (const PracticeQuestion& q : questions) {
        if (q.key.rfind(prefix, 0) == 0)
            return &q;
    }
    return nullptr;
}

// The derivation's own figure for the question's answer.
double derivationFigure(const PracticeQuestion& q)
{
    return q.derivation.steps.at(static_cast<size_t>(q.answer_step)).value;
}

// What every question must hold: a derivation of two steps or more whose figure is the answer,
// a public source, an expected answer that reads back as right, valid choices.
std::string checkQuestions(const std::vector<PracticeQuestion>& questions)
{
    for (const PracticeQuestion& q : questions) {
        const std::string at = q.key + ": ";
        if (q.derivation.steps.size() < 2)
            return at + "fewer than two steps";
        if (q.answer_step < 0 || q.answer_step >= static_cast<int>(q.derivation.steps.size()))
            return at + "no answer step";
        if (q.prompt.empty() || q.context.empty() || q.source.empty())
            return at + "no prompt, context or source";
        for (const std::string& source : {q.source, q.derivation.steps.front().source}) {
            if (source.find("shared/") != std::string::npos ||
                source.find("seed") != std::string::npos)
                return at + "source cites our notes: " + source;
        }
        if (q.kind == PracticeAnswerKind::Number) {
            if (q.expected != derivationFigure(q))
                return at + "expected is not the derivation's figure";
            if (!std::isfinite(q.expected) || !(q.expected > 0) || q.answer_unit.empty())
                return at + "expected not a positive finite figure with a unit";
            const std::string shown = practiceExpectedText(q);
            if (shown.find("nan") != std::string::npos || shown.find("inf") != std::string::npos)
                return at + "shown as " + shown;
            const PracticeVerdict v = gradePracticeAnswer(q, shown);
            if (v.grade != PracticeGrade::Right)
                return at + "its own answer graded " + v.text;
        } else {
            if (q.choices.size() < 2 || q.correct_choice < 0 ||
                q.correct_choice >= static_cast<int>(q.choices.size()))
                return at + "choices";
            if (gradePracticeAnswer(q, q.choices[static_cast<size_t>(q.correct_choice)]).grade !=
                PracticeGrade::Right)
                return at + "its own choice graded wrong";
        }
    }
    return {};
}

// `seconds` written in milliseconds, as a user types it.
std::string ms(double seconds)
{
    return QString::number(seconds * 1e3, 'g', 17).toStdString() + " ms";
}

} // namespace

class TestPractice : public QObject
{
    Q_OBJECT

private slots:
    void everyExamplePosesQuestions_data()
    {
        QTest::addColumn<QString>("name");
        const QStringList plans = QDir(examplePath("")).entryList({"*.json"});
        QVERIFY(plans.size() >= 3);
        for (const QString& name : plans)
            QTest::newRow(name.toUtf8().constData()) << name;
    }
    void everyExamplePosesQuestions()
    {
        QFETCH(QString, name);
        const Loaded l = load(name);
        QVERIFY(l.cost.ok);
        QVERIFY2(l.questions.size() >= 8, qPrintable(QString::number(l.questions.size())));
        std::set<std::string> topics;
        std::set<std::string> keys;
        for (const PracticeQuestion& q : l.questions) {
            topics.insert(q.topic);
            QVERIFY2(keys.insert(q.key).second, q.key.c_str()); // no question twice
            QVERIFY2(q.context.find(l.plan.model.name) != std::string::npos, q.key.c_str());
        }
        const std::string problem = checkQuestions(l.questions);
        QVERIFY2(problem.empty(), problem.c_str());
        for (const char* topic : {"collective", "memory", "throughput"})
            QVERIFY2(topics.count(topic), topic);
    }

    // The acceptance: a generated collective question answered right, 2x off and 10% off,
    // each verdict checked against the derivation's own figure.
    void collectiveAnswersGraded()
    {
        const Loaded l = load("llama3-70b-dgx-h100.paraplan.json");
        for (const char* prefix : {"collective-time:dp:", "collective-time:tp:"}) {
            const PracticeQuestion* q = find(l.questions, prefix);
            QVERIFY2(q, prefix);
            QCOMPARE(q->unit, std::string("s"));
            const double figure = derivationFigure(*q);
            // The figure is the engine's own time of that call.
            bool found = false;
            for (const CollectiveCost& c : l.cost.collectives)
                found =
                    found || (q->key.find(std::string(":") + c.group + ":") != std::string::npos &&
                              c.call.time_s == figure);
            QVERIFY(found);

            const PracticeVerdict right = gradePracticeAnswer(*q, ms(figure));
            QCOMPARE(right.grade, PracticeGrade::Right);
            QVERIFY(right.relative_error < 1e-9);

            const PracticeVerdict twice = gradePracticeAnswer(*q, ms(2 * figure));
            QCOMPARE(twice.grade, PracticeGrade::Off);
            QVERIFY(std::fabs(twice.factor - 2.0) < 1e-9); // through a 17-digit text
            QVERIFY2(twice.text.find("off by 2.0x (too high)") != std::string::npos,
                     twice.text.c_str());
            const PracticeVerdict half = gradePracticeAnswer(*q, ms(figure / 2));
            QCOMPARE(half.grade, PracticeGrade::Off);
            QVERIFY2(half.text.find("off by 2.0x (too low)") != std::string::npos,
                     half.text.c_str());

            const PracticeVerdict tenPercent = gradePracticeAnswer(*q, ms(1.1 * figure));
            QCOMPARE(tenPercent.grade, PracticeGrade::Close);
            QVERIFY(std::fabs(tenPercent.relative_error - 0.10) < 1e-9);
            QVERIFY2(tenPercent.text.find("close: high") == 0, tenPercent.text.c_str());

            // The thresholds' edges: within 5% right, past 25% off.
            QCOMPARE(gradePracticeAnswer(*q, ms(0.96 * figure)).grade, PracticeGrade::Right);
            QCOMPARE(gradePracticeAnswer(*q, ms(1.3 * figure)).grade, PracticeGrade::Off);
        }
    }

    void choiceAndBytesAnswers()
    {
        const Loaded l = load("llama3-70b-two-racks.paraplan.json");
        const PracticeQuestion* tier = find(l.questions, "bottleneck:dp:");
        QVERIFY(tier);
        QCOMPARE(tier->kind, PracticeAnswerKind::Choice);
        const std::string correct = tier->choices.at(static_cast<size_t>(tier->correct_choice));
        QCOMPARE(gradePracticeAnswer(*tier, correct).grade, PracticeGrade::Right);
        QCOMPARE(gradePracticeAnswer(*tier, std::to_string(tier->correct_choice + 1)).grade,
                 PracticeGrade::Right);
        QCOMPARE(gradePracticeAnswer(*tier, std::string(1, char('a' + tier->correct_choice))).grade,
                 PracticeGrade::Right);
        const int other = tier->correct_choice == 0 ? 1 : 0;
        const PracticeVerdict wrong =
            gradePracticeAnswer(*tier, tier->choices.at(static_cast<size_t>(other)));
        QCOMPARE(wrong.grade, PracticeGrade::Wrong);
        QVERIFY(wrong.text.find(correct) != std::string::npos);
        QCOMPARE(gradePracticeAnswer(*tier, "9").grade, PracticeGrade::Unreadable);

        const PracticeQuestion* bytes = find(l.questions, "collective-bytes:");
        QVERIFY(bytes);
        QCOMPARE(bytes->unit, std::string("B"));
        const double figure = derivationFigure(*bytes);
        QCOMPARE(gradePracticeAnswer(*bytes, QString::number(figure, 'g', 12).toStdString() + " B")
                     .grade,
                 PracticeGrade::Right);
        QCOMPARE(
            gradePracticeAnswer(*bytes, QString::number(figure * 10, 'g', 12).toStdString() + "B")
                .factor,
            10.0);
    }

    void unitsAsUsersTypeThem()
    {
        PracticeQuestion t;
        t.unit = "s";
        t.answer_unit = "ms";
        t.expected = 3.2e-3;
        QCOMPARE(*parsePracticeAnswer(t, "3.2 ms"), 3.2e-3);
        QCOMPARE(*parsePracticeAnswer(t, "3.2e-3 s"), 3.2e-3);
        QCOMPARE(*parsePracticeAnswer(t, "3200us"), 3.2e-3);
        QCOMPARE(*parsePracticeAnswer(t, " 3.2 "), 3.2e-3); // bare: the unit asked
        std::string error;
        QVERIFY(!parsePracticeAnswer(t, "3.2 parsecs", &error));
        QVERIFY2(error.find("parsecs") != std::string::npos, error.c_str());
        QVERIFY(!parsePracticeAnswer(t, "", &error));
        QCOMPARE(gradePracticeAnswer(t, "nan ms").grade, PracticeGrade::Unreadable);
        QCOMPARE(gradePracticeAnswer(t, "-3.2").grade, PracticeGrade::Off);

        PracticeQuestion m;
        m.unit = "B";
        m.answer_unit = "GiB";
        m.expected = 12.0 * 1024 * 1024 * 1024;
        QCOMPARE(*parsePracticeAnswer(m, "12 GiB"), m.expected);
        QCOMPARE(*parsePracticeAnswer(m, "12"), m.expected);
        QCOMPARE(*parsePracticeAnswer(m, "12 GB"), 12e9);
        QCOMPARE(gradePracticeAnswer(m, "12 GB").grade, PracticeGrade::Close); // 7% under

        PracticeQuestion b;
        b.unit = "B/s";
        b.answer_unit = "GB/s";
        b.expected = 40e9;
        QCOMPARE(*parsePracticeAnswer(b, "40 GB/s"), 40e9);
        QCOMPARE(*parsePracticeAnswer(b, "40GBps"), 40e9);
        QCOMPARE(*parsePracticeAnswer(b, "40"), 40e9);

        PracticeQuestion r;
        r.unit = "";
        r.answer_unit = "%";
        r.expected = 0.42;
        QCOMPARE(*parsePracticeAnswer(r, "42%"), 0.42);
        QCOMPARE(*parsePracticeAnswer(r, "42"), 0.42);
        QCOMPARE(practiceExpectedText(r), std::string("42%"));

        PracticeQuestion k;
        k.unit = "tokens/s";
        k.answer_unit = "tokens/s";
        k.expected = 1.2e6;
        QCOMPARE(*parsePracticeAnswer(k, "1.2M tokens/s"), 1.2e6);
        QCOMPARE(*parsePracticeAnswer(k, "1200k"), 1.2e6);
        QCOMPARE(*parsePracticeAnswer(k, "1200000"), 1.2e6);
    }

    void questionsFollowThePlanAndTheSeed()
    {
        const Loaded a = load("llama3-70b-dgx-h100.paraplan.json");
        const Loaded b = load("gpt3-175b-dgx-a100.paraplan.json");
        const Loaded again = load("llama3-70b-dgx-h100.paraplan.json");
        const Loaded reseeded = load("llama3-70b-dgx-h100.paraplan.json", 7);
        QCOMPARE(again.questions.size(), a.questions.size());
        for (size_t i = 0; i < a.questions.size(); ++i) {
            QCOMPARE(again.questions[i].key, a.questions[i].key);
            QCOMPARE(again.questions[i].prompt, a.questions[i].prompt);
            QCOMPARE(again.questions[i].choices, a.questions[i].choices);
        }
        bool reordered = false;
        for (size_t i = 0; i < a.questions.size(); ++i)
            reordered = reordered || reseeded.questions[i].key != a.questions[i].key;
        QVERIFY(reordered);
        std::set<std::string> promptsA;
        for (const PracticeQuestion& q : a.questions)
            promptsA.insert(q.context + q.prompt);
        int shared = 0;
        for (const PracticeQuestion& q : b.questions)
            shared += static_cast<int>(promptsA.count(q.context + q.prompt));
        QVERIFY2(shared == 0, qPrintable(QString::number(shared)));
        // gpt3 has dp = 1: no DP collective and no ZeRO what-if; it has a bubble (pp 8).
        QVERIFY(!find(b.questions, "memory:zero"));
        QVERIFY(find(b.questions, "bubble"));
        QVERIFY(find(a.questions, "memory:zero2"));
        QVERIFY(find(a.questions, "memory:zero3"));
        QVERIFY(find(a.questions, "what-if:tp16:step"));
    }

    void whatIfAndMemoryUseTheEngine()
    {
        const Loaded l = load("llama3-70b-dgx-h100.paraplan.json");
        Plan zero2 = l.plan;
        zero2.parallel.zero = 2;
        const StepCost c2 = l.engine->evaluate(zero2);
        const PracticeQuestion* q2 = find(l.questions, "memory:zero2");
        QVERIFY(q2);
        QCOMPARE(q2->expected, c2.max_stage_total_bytes);
        QVERIFY(q2->expected < l.cost.max_stage_total_bytes); // gradients sharded
        const PracticeQuestion* planned = find(l.questions, "memory:planned");
        QVERIFY(planned);
        QCOMPARE(planned->expected, l.cost.max_stage_total_bytes);

        Plan tp16 = l.plan;
        tp16.parallel.tp = 16;
        tp16.parallel.dp = 2;
        const PracticeQuestion* step = find(l.questions, "what-if:tp16:step");
        QVERIFY(step);
        QCOMPARE(step->expected, l.engine->evaluate(tp16).step_time_s);
        const PracticeQuestion* grows = find(l.questions, "what-if:tp16:grows");
        QVERIFY(grows);
        QCOMPARE(grows->choices.at(static_cast<size_t>(grows->correct_choice)),
                 std::string("TP comm (exposed)")); // TP 16 leaves the 8-GPU node
    }

    // Every cluster preset, several layouts: whatever the plan, the questions hold.
    void everyClusterPresetPosesSoundQuestions()
    {
        int plans = 0;
        for (const ClusterPresetInfo& preset : clusterPresets()) {
            Plan base;
            std::string error;
            QVERIFY2(modelFromPreset("llama3-8b", &base.model, &error), error.c_str());
            ClusterOptions options;
            options.nodes = std::max(2, preset.default_nodes > 64 ? 4 : preset.default_nodes);
            QVERIFY2(clusterFromPreset(preset.id, options, &base.cluster, &error,
                                       HardwareCatalog::bundled()),
                     error.c_str());
            base.training.seq_len = 4096;
            base.figures =
                defaultEngineFigures(*HardwareCatalog::bundled().gpu(base.cluster.gpu_id),
                                     base.training.optimizer, base.training.dtype);
            const StepEngine engine(base.cluster, HardwareCatalog::bundled());
            const int n = static_cast<int>(base.cluster.totalGpus());
            const int g = std::max(1, std::min(8, base.cluster.gpusPerNode()));
            struct Degrees
            {
                int tp, pp, zero;
            };
            for (const Degrees d :
                 {Degrees{g, 1, 1}, Degrees{2, 2, 0}, Degrees{1, 1, 3}, Degrees{4, 2, 2}}) {
                if (n % (d.tp * d.pp) != 0)
                    continue;
                Plan plan = base;
                plan.parallel.tp = d.tp;
                plan.parallel.pp = d.pp;
                plan.parallel.dp = n / (d.tp * d.pp);
                plan.parallel.zero = d.zero;
                plan.parallel.global_batch = 8 * plan.parallel.dp;
                const StepCost cost = engine.evaluate(plan);
                if (!cost.ok)
                    continue;
                ++plans;
                const std::vector<PracticeQuestion> questions =
                    practiceQuestions(plan, cost, engine, 3);
                QVERIFY(questions.size() >= 4);
                const std::string problem = checkQuestions(questions);
                QVERIFY2(problem.empty(), (preset.id + ": " + problem).c_str());
            }
        }
        QVERIFY2(plans >= 10, qPrintable(QString::number(plans)));
    }

    void rejectedPlanPosesNothing()
    {
        Loaded l = load("llama3-70b-dgx-h100.paraplan.json");
        l.plan.parallel.tp = 3; // does not divide the heads
        const StepCost bad = l.engine->evaluate(l.plan);
        QVERIFY(!bad.ok);
        QVERIFY(practiceQuestions(l.plan, bad, *l.engine).empty());
    }

    void cliPractice()
    {
        const QString plan = examplePath("llama3-70b-dgx-h100.paraplan.json");
        const test::CliRun list = test::runCli({"practice", plan});
        QCOMPARE(list.code, 0);
        QVERIFY(list.out.startsWith("Practice on Llama 3 70B"));
        const Loaded l = load("llama3-70b-dgx-h100.paraplan.json");
        int k = 0;
        for (size_t i = 0; i < l.questions.size() && !k; ++i)
            k = l.questions[i].key.rfind("collective-time:dp:", 0) == 0 ? int(i) + 1 : 0;
        QVERIFY(k > 0);
        const double figure = derivationFigure(l.questions[size_t(k - 1)]);
        const QString question = QString::number(k);
        const test::CliRun right = test::runCli({"practice", plan, "--question", question,
                                                 "--answer", QString::fromStdString(ms(figure))});
        QCOMPARE(right.code, 0);
        QVERIFY2(right.out.contains("verdict: right"), qPrintable(right.out));
        QVERIFY(right.out.contains("<- the answer"));
        const test::CliRun off = test::runCli({"practice", plan, "--question", question, "--answer",
                                               QString::fromStdString(ms(2 * figure))});
        QVERIFY2(off.out.contains("verdict: off") && off.out.contains("off by 2.0x"),
                 qPrintable(off.out));
        const test::CliRun close =
            test::runCli({"practice", plan, "--question", question, "--answer",
                          QString::fromStdString(ms(1.1 * figure))});
        QVERIFY2(close.out.contains("verdict: close"), qPrintable(close.out));

        const test::CliRun unreadable =
            test::runCli({"practice", plan, "--question", question, "--answer", "fast"});
        QCOMPARE(unreadable.code, 2);
        QVERIFY(unreadable.err.startsWith("error: "));
        QCOMPARE(unreadable.err.count('\n'), 1);
        const test::CliRun noQuestion = test::runCli({"practice", plan, "--answer", "3 ms"});
        QCOMPARE(noQuestion.code, 2);
        QVERIFY(noQuestion.err.contains("--question"));
        const test::CliRun outOfRange = test::runCli({"practice", plan, "--question", "999"});
        QCOMPARE(outOfRange.code, 2);
        QVERIFY(!outOfRange.out.contains("nan") && !outOfRange.out.contains("inf"));
    }
};

QTEST_GUILESS_MAIN(TestPractice)
#include "tst_practice.moc"
