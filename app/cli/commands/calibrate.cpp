// paraplan-cli calibrate: the engine's free figures fitted to the user's own training logs
// (Megatron-LM, torchtitan, NeMo), each paired with the plan it ran.
#include "common.h"

#include "jsonutil.h"
#include "logfit.h"
#include "measurement.h"
#include "units.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <iomanip>
#include <sstream>

namespace paraplan::cli {

namespace {

constexpr const char* kFitSchema = "paraplan-calibrate/1";

using units::formatNumber;
using units::formatSeconds;

// "plan.json:train.log" (a path may hold ':' itself; the split is after ".json" when there).
std::pair<std::string, std::string> splitRun(const std::string& run)
{
    size_t at = run.find(".json:");
    at = at == std::string::npos ? run.rfind(':') : at + 5;
    if (at == std::string::npos || at == 0 || at + 1 >= run.size())
        throw UsageError("--run wants PLAN.json:LOG, got '" + run + "'");
    return {run.substr(0, at), run.substr(at + 1)};
}

std::vector<FreeFigure> figuresFromArgs(const Args& args)
{
    std::vector<FreeFigure> figures;
    const std::string list =
        args.has("--fit") ? args.text("--fit") : "gemm_scale,attention_scale,overlap";
    std::stringstream in(list);
    std::string name;
    while (std::getline(in, name, ',')) {
        FreeFigure f;
        if (!freeFigureFromName(name, &f))
            throw UsageError("--fit: unknown figure '" + name +
                             "' (gemm_scale, attention_scale, overlap)");
        if (std::find(figures.begin(), figures.end(), f) != figures.end())
            throw UsageError("--fit: " + name + " named twice");
        figures.push_back(f);
    }
    if (figures.empty())
        throw UsageError("--fit names no figure");
    return figures;
}

QJsonObject fitJson(const LogFit& fit, int warmup)
{
    QJsonObject fitted;
    for (size_t i = 0; i < fit.figures.size(); ++i)
        fitted[freeFigureName(fit.figures[i])] = fit.values[i];
    QJsonArray runs;
    for (const FittedRun& r : fit.runs)
        runs.append(QJsonObject{{"plan", QString::fromStdString(r.plan_file)},
                                {"log", QString::fromStdString(r.log_file)},
                                {"format", QString::fromStdString(r.format)},
                                {"steps_used", r.steps_used},
                                {"measured_step_time_s", r.measured_step_time_s},
                                {"predicted_before_s", r.predicted_before_s},
                                {"predicted_after_s", r.predicted_after_s}});
    QJsonArray warnings;
    for (const std::string& w : fit.warnings)
        warnings.append(QString::fromStdString(w));
    return QJsonObject{{"fitted", fitted},
                       {"warnings", warnings},
                       {"runs", runs},
                       {"rms_error_before", fit.rms_before},
                       {"rms_error_after", fit.rms_after},
                       {"warmup", warmup},
                       {"provenance", QString::fromStdString(fit.provenance)}};
}

// A relative error as "+1.23%" (two decimals: the fit's residuals are often tiny).
std::string percent(double fraction, bool sign)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << (sign && fraction >= 0 ? "+" : "") << 100 * fraction
      << "%";
    return s.str();
}

void printFit(const LogFit& fit, int warmup, std::ostream& out)
{
    out << "Fit over " << fit.runs.size() << " run" << (fit.runs.size() == 1 ? "" : "s")
        << " (the first step line and steps up to " << warmup << " skipped as warm-up)\n";
    for (size_t i = 0; i < fit.figures.size(); ++i)
        out << "  " << std::left << std::setw(17) << freeFigureName(fit.figures[i])
            << formatNumber(fit.values[i], 4)
            << (fit.figures[i] == FreeFigure::Overlap
                    ? "  (share of hideable data-parallel traffic hidden)"
                    : "  (x the plan's assumed figure)")
            << "\n";
    out << "  RMS step-time error: " << percent(fit.rms_before, false) << " before, "
        << percent(fit.rms_after, false) << " after\n\n";
    auto withError = [](double predicted, double measured) {
        return formatSeconds(predicted) + " (" + percent(predicted / measured - 1, true) + ")";
    };
    auto base = [](const std::string& path) {
        const size_t slash = path.find_last_of('/');
        return slash == std::string::npos ? path : path.substr(slash + 1);
    };
    for (const FittedRun& r : fit.runs)
        out << "  " << base(r.plan_file) << " : " << base(r.log_file) << " (" << r.format << ", "
            << r.steps_used << " steady steps)\n      measured "
            << formatSeconds(r.measured_step_time_s) << "   predicted before "
            << withError(r.predicted_before_s, r.measured_step_time_s) << "   after "
            << withError(r.predicted_after_s, r.measured_step_time_s) << "\n";
    out << "\n  provenance: " << fit.provenance << "\n";
    for (const std::string& w : fit.warnings)
        out << "  warning: " << w << "\n";
}

} // namespace

Options calibrateOptions()
{
    return {
        valueOption("--run", "PLAN:LOG",
                    "A training run: the plan file it ran and its log (Megatron-LM, torchtitan "
                    "or NeMo / PyTorch Lightning). Give one --run per run."),
        valueOption("--fit", "LIST",
                    "Figures to fit, comma-separated: gemm_scale, attention_scale, overlap "
                    "(default all three; at least as many runs as figures)."),
        valueOption("--warmup", "N",
                    "Steps numbered up to N are warm-up and skipped, as is the first step "
                    "line (default 3)."),
        valueOption("-o", "FILE", "Write the fit (the --json document) to FILE (- for stdout)."),
        valueOption("--apply", "PLAN",
                    "Apply the fitted figures to PLAN as measurements (with --plan-out)."),
        valueOption("--plan-out", "FILE", "Where --apply writes the plan."),
        jsonOption(),
    };
}

int runCalibrate(const Args& args, std::ostream& out)
{
    const std::vector<std::string>& given = args.all("--run");
    if (given.empty())
        throw UsageError("calibrate needs at least one --run PLAN.json:LOG");
    if (args.has("--apply") != args.has("--plan-out"))
        throw UsageError("--apply and --plan-out go together");
    const std::vector<FreeFigure> figures = figuresFromArgs(args);
    const int warmup = args.has("--warmup") ? args.integer("--warmup", 0, 1000000) : 3;
    std::vector<TrainingRun> runs;
    std::vector<std::string> inputs;
    if (args.has("--apply"))
        inputs.push_back(args.text("--apply"));
    for (const std::string& run : given) {
        const auto [planFile, logFile] = splitRun(run);
        inputs.push_back(planFile);
        inputs.push_back(logFile);
        if (args.has("--plan-out")) // the applied plan may replace its own file, not a log
            refuseOverwritingInput("--plan-out", args.text("--plan-out"), {logFile});
        TrainingRun r;
        r.plan_file = planFile;
        r.plan = planFromFile(planFile);
        requireReadable(logFile);
        std::string error;
        if (!loadTrainingLog(logFile, &r.log, &error))
            throw UsageError(error);
        runs.push_back(std::move(r));
    }
    if (args.has("-o"))
        refuseOverwritingInput("-o", args.text("-o"), inputs);
    const HardwareCatalog& catalog = HardwareCatalog::bundled();
    LogFit fit;
    std::string error;
    if (!fitTrainingRuns(runs, figures, warmup, catalog, &fit, &error))
        throw UsageError(error);
    const QJsonObject doc = fitJson(fit, warmup);
    if (args.has("--apply")) {
        Plan plan = planFromFile(args.text("--apply"));
        for (const MeasuredFigure& figure : fittedFigures(fit, plan, catalog)) {
            if (!applyMeasurementToPlan(figure, &plan))
                throw UsageError("the fitted " + figure.figure + " (" + formatNumber(figure.value) +
                                 ") cannot be applied");
        }
        const std::vector<PlanIssue> issues = validatePlan(plan, catalog);
        if (!issues.empty())
            throw UsageError("the plan with the fitted figures breaks a rule: " +
                             issues.front().message);
        savePlanFile(args.text("--plan-out"), plan);
    }
    if (args.has("-o")) {
        // "-o -": the fit document alone on stdout.
        const std::string text = withSchema(kFitSchema, QJsonDocument(doc).toJson().toStdString());
        if (args.text("-o") == "-") {
            out << text;
            return kExitOk;
        }
        writeOutputFile(args.text("-o"), text);
    }
    if (args.flag("--json"))
        printJson(kFitSchema, doc, out);
    else
        printFit(fit, warmup, out);
    return 0;
}

} // namespace paraplan::cli
