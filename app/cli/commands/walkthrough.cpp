// paraplan-cli walkthrough: a collective, a measured time or a plan's training step as a
// worked derivation.
#include "common.h"

#include "stepwalkthrough.h"

namespace paraplan::cli {
namespace {

int walkthroughPlan(const Args& args, std::ostream& out)
{
    for (const std::string& option : args.given()) {
        if (option != "--json")
            throw UsageError(option + " does not apply to a plan's walkthrough (only --json does)");
    }
    const Plan plan = planFromFile(args.positional().front());
    const StepCost cost = evaluatePlan(plan, args.positional().front());
    const Derivation d = derivePlan(plan, cost);
    out << (args.flag("--json") ? withSchema("paraplan-walkthrough/1", d.toJson()) : d.toText());
    return cost.fits ? kExitOk : kExitNo;
}

} // namespace

Options walkthroughOptions()
{
    Options options = collectiveOptionList(true);
    options.push_back(jsonOption());
    return options;
}

int runWalkthrough(const Args& args, std::ostream& out)
{
    if (!args.positional().empty())
        return walkthroughPlan(args, out);
    if (args.has("--measured-time"))
        return measured(args, out, true);
    CollectiveSetup setup = collectiveFromArgs(args);
    const CollectiveResult r = setup.model->evaluate(setup.request);
    if (!r.ok)
        throw UsageError(r.error);
    const Derivation derivation = deriveCollective(*setup.model, setup.request, r, setup.sources);
    out << (args.flag("--json") ? withSchema("paraplan-walkthrough/1", derivation.toJson())
                                : derivation.toText());
    return kExitOk;
}

} // namespace paraplan::cli
