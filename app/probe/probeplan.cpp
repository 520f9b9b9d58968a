#include "probeplan.h"

#include "gemmshapes.h"
#include "planio.h"

#include <algorithm>
#include <cmath>

namespace probe {

bool loadPlanShapes(const std::string& path, ProbePlanShapes* shapes, std::string* error)
{
    const paraplan::HardwareCatalog& catalog = paraplan::HardwareCatalog::bundled();
    paraplan::Plan plan;
    std::vector<std::string> errors;
    if (!paraplan::loadPlan(path, &plan, &errors, catalog)) {
        *error = path + ": " + (errors.empty() ? "cannot be read" : errors.front());
        return false;
    }
    auto whole = [](double v) { return std::max(1LL, static_cast<long long>(std::llround(v))); };
    const paraplan::PlanShapes s = paraplan::planShapes(plan);
    ProbePlanShapes out;
    out.plan_name = plan.name;
    for (const paraplan::GemmShape& g : s.gemms)
        out.gemms.push_back({g.name, whole(g.M), whole(g.N), whole(g.K), whole(g.batch)});
    const paraplan::AttentionShape& a = s.attention;
    out.attention.push_back({whole(a.batch_heads), whole(a.seq_q), whole(a.head_dim)});
    *shapes = std::move(out);
    return true;
}

} // namespace probe
