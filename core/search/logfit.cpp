#include "logfit.h"

#include "units.h"

#include <QDate>

#include <algorithm>
#include <array>
#include <cmath>

namespace paraplan {

const char* freeFigureName(FreeFigure figure)
{
    switch (figure) {
    case FreeFigure::GemmScale:
        return "gemm_scale";
    case FreeFigure::AttentionScale:
        return "attention_scale";
    case FreeFigure::Overlap:
        return "overlap";
    }
    return "";
}

bool freeFigureFromName(const std::string& name, FreeFigure* figure)
{
    for (FreeFigure f : {FreeFigure::GemmScale, FreeFigure::AttentionScale, FreeFigure::Overlap}) {
        if (name == freeFigureName(f)) {
            *figure = f;
            return true;
        }
    }
    return false;
}

double LogFit::value(FreeFigure figure, double fallback) const
{
    for (size_t i = 0; i < figures.size(); ++i) {
        if (figures[i] == figure)
            return values[i];
    }
    return fallback;
}

namespace {

// The bounds a fitted value may take: a scale from a fifth to twice the assumed figure, an
// overlap share in [0, 1].
std::pair<double, double> boundsOf(FreeFigure figure)
{
    return figure == FreeFigure::Overlap ? std::make_pair(0.0, 1.0) : std::make_pair(0.2, 2.0);
}

double startOf(FreeFigure)
{
    return 1.0; // the engine as it is: scales of 1, everything hideable hidden
}

Sourced fitted(double value)
{
    return {std::min(1.0, value), Origin::Measurement, "fit in progress"};
}

} // namespace

namespace {

// The figure a scale multiplies: the assumed one, also where a measurement (an earlier fit,
// a probe run) has replaced it, so that fitting again does not compound.
double assumedFigure(const Plan& plan, const char* name, double current)
{
    for (const PlanMeasurement& m : plan.measured)
        if (m.figure == name)
            return m.assumed;
    return current;
}

} // namespace

Plan planWithFit(const Plan& plan, const std::vector<FreeFigure>& figures,
                 const std::vector<double>& values, const HardwareCatalog& catalog)
{
    Plan p = plan;
    for (size_t i = 0; i < figures.size(); ++i) {
        const double v = values[i];
        switch (figures[i]) {
        case FreeFigure::GemmScale:
            p.figures.gemm_peak_fraction = fitted(
                assumedFigure(plan, "gemm_peak_fraction", plan.figures.gemm_peak_fraction.value) *
                v);
            break;
        case FreeFigure::AttentionScale:
            p.figures.attention_fraction =
                fitted(assumedFigure(plan, "attention_fraction",
                                     attentionFigure(plan, false, catalog).value) *
                       v);
            p.figures.attention_bwd_fraction =
                fitted(assumedFigure(plan, "attention_bwd_fraction",
                                     attentionFigure(plan, true, catalog).value) *
                       v);
            break;
        case FreeFigure::Overlap:
            p.figures.overlap_fraction = fitted(v);
            break;
        }
    }
    return p;
}

namespace {

struct Problem
{
    const std::vector<TrainingRun>& runs;
    const std::vector<FreeFigure>& figures;
    const HardwareCatalog& catalog;
    std::vector<double> measured;

    // log(predicted / measured) for each run; false when the engine rejects a plan.
    bool residuals(const std::vector<double>& x, std::vector<double>* r,
                   std::vector<double>* predicted = nullptr) const
    {
        r->assign(runs.size(), 0);
        if (predicted)
            predicted->assign(runs.size(), 0);
        for (size_t i = 0; i < runs.size(); ++i) {
            const Plan p = planWithFit(runs[i].plan, figures, x, catalog);
            const StepCost cost = StepEngine(p.cluster, catalog).evaluate(p);
            if (!cost.ok || !(cost.step_time_s > 0))
                return false;
            (*r)[i] = std::log(cost.step_time_s / measured[i]);
            if (predicted)
                (*predicted)[i] = cost.step_time_s;
        }
        return true;
    }

    // Forward differences, stepping inward at an upper bound.
    bool jacobian(const std::vector<double>& at, const std::vector<double>& r0,
                  std::vector<std::vector<double>>* jac) const
    {
        const size_t k = figures.size();
        jac->assign(r0.size(), std::vector<double>(k, 0));
        for (size_t j = 0; j < k; ++j) {
            const double hi = boundsOf(figures[j]).second;
            std::vector<double> moved = at;
            double h = 1e-4 * std::max(0.1, std::abs(at[j]));
            if (moved[j] + h > hi)
                h = -h;
            moved[j] += h;
            std::vector<double> r1;
            if (!residuals(moved, &r1))
                return false;
            for (size_t i = 0; i < r0.size(); ++i)
                (*jac)[i][j] = (r1[i] - r0[i]) / h;
        }
        return true;
    }
};

double sumOfSquares(const std::vector<double>& r)
{
    double s = 0;
    for (double v : r)
        s += v * v;
    return s;
}

// Solves A d = b for a small symmetric positive system (Gaussian elimination with pivoting).
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>* d)
{
    const size_t n = b.size();
    for (size_t c = 0; c < n; ++c) {
        size_t pivot = c;
        for (size_t r = c + 1; r < n; ++r)
            if (std::abs(a[r][c]) > std::abs(a[pivot][c]))
                pivot = r;
        if (!(std::abs(a[pivot][c]) > 1e-300))
            return false;
        std::swap(a[c], a[pivot]);
        std::swap(b[c], b[pivot]);
        for (size_t r = c + 1; r < n; ++r) {
            const double f = a[r][c] / a[c][c];
            for (size_t k = c; k < n; ++k)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    d->assign(n, 0);
    for (size_t c = n; c-- > 0;) {
        double s = b[c];
        for (size_t k = c + 1; k < n; ++k)
            s -= a[c][k] * (*d)[k];
        (*d)[c] = s / a[c][c];
    }
    return true;
}

// Levenberg-Marquardt on log(predicted / measured) from `x`, values kept inside their
// bounds; returns the iterations taken.
int levenbergMarquardt(const Problem& problem, std::vector<std::vector<double>> jac,
                       std::vector<double>* xOut, std::vector<double>* rOut)
{
    const std::vector<FreeFigure>& figures = problem.figures;
    const size_t k = figures.size();
    std::vector<double> x = *xOut;
    std::vector<double> r = *rOut;
    double lambda = 1e-3;
    double cost = sumOfSquares(r);
    int iteration = 0;
    for (; iteration < 200 && cost > 1e-16; ++iteration) {
        std::vector<std::vector<double>> a(k, std::vector<double>(k, 0));
        std::vector<double> g(k, 0);
        for (size_t i = 0; i < r.size(); ++i)
            for (size_t p = 0; p < k; ++p) {
                g[p] -= jac[i][p] * r[i];
                for (size_t q = 0; q < k; ++q)
                    a[p][q] += jac[i][p] * jac[i][q];
            }
        bool improved = false;
        while (lambda < 1e12) {
            std::vector<std::vector<double>> damped = a;
            for (size_t p = 0; p < k; ++p)
                damped[p][p] += lambda * std::max(a[p][p], 1e-12);
            std::vector<double> d;
            std::vector<double> trial = x;
            std::vector<double> rTrial;
            if (solve(damped, g, &d)) {
                for (size_t p = 0; p < k; ++p) {
                    const auto [lo, hi] = boundsOf(figures[p]);
                    trial[p] = std::clamp(x[p] + d[p], lo, hi);
                }
                if (problem.residuals(trial, &rTrial) && sumOfSquares(rTrial) < cost) {
                    const double gain = cost - sumOfSquares(rTrial);
                    x = trial;
                    r = rTrial;
                    cost = sumOfSquares(r);
                    lambda = std::max(1e-9, lambda / 3);
                    improved = gain > 1e-14 * (1 + cost);
                    break;
                }
            }
            lambda *= 4;
        }
        if (!improved || !problem.jacobian(x, r, &jac))
            break;
    }
    *xOut = x;
    *rOut = r;
    return iteration;
}

// Each run's steady step time, after checking its plan and that the log matches it.
bool measureRuns(const std::vector<TrainingRun>& runs, int warmup, const HardwareCatalog& catalog,
                 Problem* problem, LogFit* result, std::string* files, std::string* error)
{
    for (const TrainingRun& run : runs) {
        const std::vector<PlanIssue> issues = validatePlan(run.plan, catalog);
        if (!issues.empty()) {
            *error = run.plan_file + ": " + issues.front().message;
            return false;
        }
        const ParallelLayout& l = run.plan.parallel;
        const TrainingLog& log = run.log;
        auto mismatch = [&](const char* what, long long logged, long long planned) {
            *error = log.file + ": the run's " + what + " is " + std::to_string(logged) + ", " +
                     run.plan_file + " says " + std::to_string(planned) +
                     ": is this the plan that ran?";
            return false;
        };
        if (log.global_batch > 0 && log.global_batch != l.global_batch)
            return mismatch("global batch", log.global_batch, l.global_batch);
        if (log.seq_len > 0 && log.seq_len != run.plan.training.seq_len)
            return mismatch("sequence length", log.seq_len, run.plan.training.seq_len);
        for (const std::string& w : log.warnings)
            result->warnings.push_back(w);
        const double tokensPerGpu =
            static_cast<double>(l.global_batch) * run.plan.training.seq_len / std::max(1, l.gpus());
        FittedRun fr;
        fr.plan_file = run.plan_file;
        fr.log_file = run.log.file;
        fr.format = trainingLogFormatName(run.log.format);
        std::string why;
        fr.measured_step_time_s =
            steadyStepTime(run.log, warmup, tokensPerGpu, &fr.steps_used, &why);
        if (!(fr.measured_step_time_s > 0)) {
            *error = why;
            return false;
        }
        problem->measured.push_back(fr.measured_step_time_s);
        result->runs.push_back(fr);
        const size_t slash = run.log.file.find_last_of('/');
        *files += (files->empty() ? "" : ", ") +
                  (slash == std::string::npos ? run.log.file : run.log.file.substr(slash + 1));
    }

    return true;
}

// Every figure moves some run's step, and the runs tell the figures apart.
bool identifiable(const std::vector<FreeFigure>& figures,
                  const std::vector<std::vector<double>>& jac, std::string* error)
{
    const size_t k = figures.size();
    const size_t n = jac.size();
    for (size_t j = 0; j < k; ++j) {
        double norm = 0;
        for (size_t i = 0; i < n; ++i)
            norm += jac[i][j] * jac[i][j];
        if (std::sqrt(norm) < 1e-3) {
            *error = std::string("no run's step time depends on ") + freeFigureName(figures[j]) +
                     (figures[j] == FreeFigure::AttentionScale
                          ? " (no run uses a fused attention kernel)"
                      : figures[j] == FreeFigure::Overlap
                          ? " (no run overlaps data-parallel communication with compute)"
                          : "") +
                     "; leave it out of --fit";
            return false;
        }
    }
    // Runs that cannot tell the figures apart (copies of one run, runs of one shape): the
    // normalised normal matrix is (nearly) singular.
    if (k > 1) {
        std::vector<std::vector<double>> c(k, std::vector<double>(k, 0));
        for (size_t i = 0; i < n; ++i)
            for (size_t p = 0; p < k; ++p)
                for (size_t q = 0; q < k; ++q)
                    c[p][q] += jac[i][p] * jac[i][q];
        std::vector<double> d(k);
        for (size_t p = 0; p < k; ++p)
            d[p] = std::sqrt(c[p][p]);
        for (size_t p = 0; p < k; ++p)
            for (size_t q = 0; q < k; ++q)
                c[p][q] /= d[p] * d[q];
        const double det = k == 2 ? c[0][0] * c[1][1] - c[0][1] * c[1][0]
                                  : c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1]) -
                                        c[0][1] * (c[1][0] * c[2][2] - c[1][2] * c[2][0]) +
                                        c[0][2] * (c[1][0] * c[2][1] - c[1][1] * c[2][0]);
        if (!(det > 1e-6)) {
            *error = "the runs cannot tell the " + std::to_string(k) +
                     " figures apart (they respond alike, e.g. copies of one run): add runs "
                     "of other shapes (sequence length, data-parallel size) or fit fewer";
            return false;
        }
    }
    return true;
}

} // namespace

bool fitTrainingRuns(const std::vector<TrainingRun>& runs, const std::vector<FreeFigure>& figures,
                     int warmup, const HardwareCatalog& catalog, LogFit* fit, std::string* error)
{
    if (figures.empty()) {
        *error = "no figure to fit";
        return false;
    }
    if (runs.size() < figures.size()) {
        *error = std::to_string(figures.size()) + " free figures need at least " +
                 std::to_string(figures.size()) + " runs; " + std::to_string(runs.size()) +
                 " given (fit fewer figures with --fit, e.g. --fit gemm_scale)";
        return false;
    }
    Problem problem{runs, figures, catalog, {}};
    LogFit result;
    result.figures = figures;
    std::string files;
    if (!measureRuns(runs, warmup, catalog, &problem, &result, &files, error))
        return false;

    const size_t k = figures.size();
    std::vector<double> x(k);
    for (size_t j = 0; j < k; ++j)
        x[j] = startOf(figures[j]);
    std::vector<double> r;
    std::vector<double> before;
    if (!problem.residuals(x, &r, &before)) {
        *error = "the engine rejects a run's plan";
        return false;
    }
    // A run five times off the engine is not a matter of efficiencies.
    for (size_t i = 0; i < runs.size(); ++i) {
        const double ratio = problem.measured[i] / before[i];
        if (ratio > 5 || ratio < 0.2) {
            *error = runs[i].log.file + ": its steps take " +
                     units::formatSeconds(problem.measured[i]) + ", " +
                     units::formatNumber(ratio, 3) + " x what " + runs[i].plan_file +
                     " predicts (" + units::formatSeconds(before[i]) +
                     "); no efficiency explains that: is this the plan that ran?";
            return false;
        }
    }
    std::vector<std::vector<double>> jac;
    if (!problem.jacobian(x, r, &jac)) {
        *error = "the engine rejects a run's plan near the assumed figures";
        return false;
    }
    if (!identifiable(figures, jac, error))
        return false;
    const int iterations = levenbergMarquardt(problem, jac, &x, &r);
    std::vector<double> after;
    problem.residuals(x, &r, &after);
    double sumBefore = 0;
    double sumAfter = 0;
    for (size_t i = 0; i < result.runs.size(); ++i) {
        FittedRun& fr = result.runs[i];
        fr.predicted_before_s = before[i];
        fr.predicted_after_s = after[i];
        const double eb = before[i] / fr.measured_step_time_s - 1;
        const double ea = after[i] / fr.measured_step_time_s - 1;
        sumBefore += eb * eb;
        sumAfter += ea * ea;
    }
    const double n = static_cast<double>(result.runs.size());
    result.rms_before = std::sqrt(sumBefore / n);
    result.rms_after = std::sqrt(sumAfter / n);
    result.values = x;
    result.iterations = iterations;
    if (runs.size() == figures.size())
        result.warnings.push_back(
            "as many runs as free figures: the fit passes through every run and cannot show "
            "its own error; add runs of other shapes to test it");
    for (size_t j = 0; j < k; ++j) {
        const auto [lo, hi] = boundsOf(figures[j]);
        if (x[j] <= lo + 1e-9 || x[j] >= hi - 1e-9)
            result.warnings.push_back(std::string(freeFigureName(figures[j])) + " stopped at its " +
                                      (x[j] <= lo + 1e-9 ? "lower" : "upper") + " bound (" +
                                      units::formatNumber(x[j]) + "): the runs are " +
                                      (x[j] <= lo + 1e-9 ? "slower" : "faster") +
                                      " than this figure alone can explain");
    }
    result.provenance = "fitted to " + std::to_string(runs.size()) + " training log" +
                        (runs.size() == 1 ? "" : "s") + " (" + files + "), " +
                        QDate::currentDate().toString(Qt::ISODate).toStdString();
    *fit = std::move(result);
    return true;
}

std::vector<MeasuredFigure> fittedFigures(const LogFit& fit, const Plan& plan,
                                          const HardwareCatalog& catalog)
{
    std::vector<MeasuredFigure> out;
    const Plan after = planWithFit(plan, fit.figures, fit.values, catalog);
    auto add = [&](const char* figure, double value, double assumed, const std::string& why) {
        out.push_back({figure, value, assumed, why, fit.provenance});
    };
    for (size_t i = 0; i < fit.figures.size(); ++i) {
        const std::string scale = "x " + units::formatNumber(fit.values[i], 4);
        switch (fit.figures[i]) {
        case FreeFigure::GemmScale:
            add("gemm_peak_fraction", after.figures.gemm_peak_fraction.value,
                assumedFigure(plan, "gemm_peak_fraction", plan.figures.gemm_peak_fraction.value),
                "GEMM efficiency " + scale);
            break;
        case FreeFigure::AttentionScale:
            add("attention_fraction", after.figures.attention_fraction.value,
                assumedFigure(plan, "attention_fraction",
                              attentionFigure(plan, false, catalog).value),
                "attention efficiency " + scale);
            add("attention_bwd_fraction", after.figures.attention_bwd_fraction.value,
                assumedFigure(plan, "attention_bwd_fraction",
                              attentionFigure(plan, true, catalog).value),
                "attention efficiency " + scale);
            break;
        case FreeFigure::Overlap:
            add("overlap_fraction", fit.values[i],
                assumedFigure(plan, "overlap_fraction", plan.figures.overlap_fraction.value),
                "share of hideable data-parallel traffic hidden");
            break;
        }
    }
    return out;
}

} // namespace paraplan
