// paraplan-cli practice: interview questions posed on a plan, an answer graded against the
// engine's own figure, and the derivation that produces it (core/engine/practice.h).
#include "common.h"

#include "practice.h"
#include "units.h"

namespace paraplan::cli {
namespace {

void printQuestion(const PracticeQuestion& q, int number, std::ostream& out)
{
    out << number << ". [" << q.topic << "] " << q.prompt;
    if (q.kind == PracticeAnswerKind::Number)
        out << " (answer in " << q.answer_unit << ")\n";
    else
        out << "\n";
    for (size_t i = 0; i < q.choices.size(); ++i)
        out << "   " << char('a' + i) << ") " << q.choices[i] << "\n";
}

void printDerivation(const PracticeQuestion& q, std::ostream& out)
{
    out << "Derivation: " << q.derivation.title << "\n";
    for (size_t i = 0; i < q.derivation.steps.size(); ++i) {
        const DerivationStep& s = q.derivation.steps[i];
        out << "  " << (i + 1) << ". " << s.label << ": " << s.formula;
        if (!s.substitution.empty())
            out << " = " << s.substitution;
        out << " = " << s.result;
        if (static_cast<int>(i) == q.answer_step)
            out << "   <- the answer";
        out << "\n";
        if (!s.source.empty())
            out << "     source: " << s.source << "\n";
    }
    for (const std::string& note : q.derivation.notes)
        out << "  note: " << note << "\n";
    out << "Answer: " << practiceExpectedText(q) << "\nSource: " << q.source << "\n";
}

} // namespace

Options practiceOptions()
{
    return {
        valueOption("--seed", "N",
                    "Orders the questions and their choices (default 1); the same seed gives "
                    "the same questions."),
        valueOption("--question", "K", "Only question K (1 to the number listed)."),
        valueOption("--answer", "VALUE",
                    "Grade VALUE as the answer to --question: '3.2 ms', '3.2e-3 s', '12 GiB', "
                    "'40 GB/s', '42%', a bare number in the unit asked, or a choice (1, a, or "
                    "its name). Right within 5%, close within 25%, off by Nx beyond."),
        flagOption("--reveal", "Show the derivation and the answer of the questions listed."),
    };
}

int runPractice(const Args& args, std::ostream& out)
{
    const Plan plan = planFromFile(args.positional().front());
    const StepEngine engine(plan.cluster, HardwareCatalog::bundled());
    const StepCost cost = engine.evaluate(plan);
    requireCosted(cost, args.positional().front()); // throws the rule the plan breaks
    const int seed = args.has("--seed") ? args.integer("--seed", 0, 1 << 30) : 1;
    const std::vector<PracticeQuestion> questions =
        practiceQuestions(plan, cost, engine, static_cast<std::uint64_t>(seed));
    if (questions.empty())
        throw UsageError("the plan poses no questions");
    const int count = static_cast<int>(questions.size());
    if (args.has("--answer") && !args.has("--question"))
        throw UsageError("--answer needs --question K (1 to " + std::to_string(count) + ")");
    out << "Practice on " << questions.front().context << "\n";
    int first = 1;
    int last = count;
    bool right = true;
    if (args.has("--question"))
        first = last = args.integer("--question", 1, count);
    for (int k = first; k <= last; ++k) {
        const PracticeQuestion& q = questions[static_cast<size_t>(k - 1)];
        printQuestion(q, k, out);
        if (args.has("--answer")) {
            const PracticeVerdict verdict = gradePracticeAnswer(q, args.text("--answer"));
            if (verdict.grade == PracticeGrade::Unreadable)
                throw UsageError("--answer: " + verdict.text);
            out << "verdict: " << practiceGradeName(verdict.grade) << "\n" << verdict.text << "\n";
            right = verdict.grade == PracticeGrade::Right;
        }
        if (args.flag("--reveal") || args.has("--answer"))
            printDerivation(q, out);
    }
    // An answer that is close, off or a wrong choice: "the answer is no" (exit 1).
    return right ? kExitOk : kExitNo;
}

} // namespace paraplan::cli
