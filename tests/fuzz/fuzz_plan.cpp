// libFuzzer harness: the plan file reader (planFromJsonText). A plan it accepts must survive
// writing and reading back, byte for byte on the second save (save -> open -> save is
// idempotent), and one that validates must evaluate to finite numbers.

#include "fuzzinput.h"
#include "planio.h"
#include "stepmodel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace paraplan;
    const std::string input = fuzz::text(data, size);
    if (fuzz::mayNameSpecialFile(input))
        return 0;
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    Plan plan;
    std::vector<std::string> errors;
    if (!planFromJsonText(input, fuzz::kBaseDir, &plan, &errors, catalog)) {
        FUZZ_ASSERT(!errors.empty(), "a refused plan names its problem");
        return 0;
    }
    const std::string written = planToJsonText(plan, catalog);
    Plan again;
    std::vector<std::string> againErrors;
    FUZZ_ASSERT_READ_BACK(planFromJsonText(written, fuzz::kBaseDir, &again, &againErrors, catalog),
                          "a plan", written, againErrors);
    FUZZ_ASSERT(planToJsonText(again, catalog) == written,
                "save -> open -> save writes the same bytes");
    // Building the collective model grows with the cluster; keep the evaluations small.
    if (validatePlan(plan, catalog).empty() && plan.cluster.totalGpus() <= 4096) {
        const StepCost cost = StepEngine(plan.cluster, catalog).evaluate(plan);
        if (cost.ok) {
            FUZZ_ASSERT_FINITE(cost.step_time_s, "step_time_s");
            FUZZ_ASSERT_FINITE(cost.metrics.mfu, "mfu");
            FUZZ_ASSERT_FINITE(cost.hbm_bytes, "hbm_bytes");
        }
    }
    return 0;
}
