// paraplan-cli import-measurements: a probe run, an nccl-tests log or its -J JSON: fits per
// collective, copies, and the figures the run would replace.
#include "common.h"

#include "clusterio.h"
#include "measurement.h"
#include "units.h"

#include <QJsonArray>

#include <iomanip>
#include <map>

namespace paraplan::cli {

namespace {

using units::formatNumber;
using units::formatSeconds;

// A fit that misses its points by more than this (RMS of the relative error) is shown with a
// warning: the series is not one latency plus one bandwidth (a protocol switch, a broken run).
constexpr double kPoorFit = 0.2;

std::string poorFit(const AlphaBetaFit& f)
{
    return std::string(collectiveOpName(f.op)) + " over " + std::to_string(f.ranks) +
           " ranks: the fit misses its points by " + formatNumber(100 * f.residual, 2) +
           "% (RMS); its latency and bandwidth describe the run poorly";
}

void printMeasurementsJson(const MeasurementRun& run, const std::vector<AlphaBetaFit>& fits,
                           const std::vector<MeasuredFigure>& figures, std::ostream& out)
{
    QJsonArray fitArray;
    for (const AlphaBetaFit& f : fits)
        fitArray.append(QJsonObject{{"op", collectiveOpName(f.op)},
                                    {"ranks", f.ranks},
                                    {"hosts", f.hosts},
                                    {"points", f.points},
                                    {"alpha_us", f.alpha_s * 1e6},
                                    {"busbw_GBps", f.busbw_GBps},
                                    {"residual", f.residual}});
    QJsonArray copies;
    for (const CopyMeasurement& c : run.copies)
        copies.append(QJsonObject{
            {"what", QString::fromStdString(c.what)}, {"device", c.device}, {"GBps", c.GBps}});
    QJsonArray figureArray;
    for (const MeasuredFigure& f : figures)
        figureArray.append(QJsonObject{{"figure", QString::fromStdString(f.figure)},
                                       {"measured", f.value},
                                       {"assumed", f.assumed},
                                       {"why", QString::fromStdString(f.why)}});
    QJsonArray points;
    for (const MeasuredPoint& p : run.points)
        points.append(QJsonObject{{"op", collectiveOpName(p.op)},
                                  {"bytes", p.bytes},
                                  {"ranks", p.ranks},
                                  {"hosts", p.hosts},
                                  {"time_us", p.time_s * 1e6},
                                  {"algbw_GBps", p.algbw_GBps},
                                  {"busbw_GBps", p.busbw_GBps},
                                  {"in_place", p.in_place}});
    QJsonArray warnings;
    for (const std::string& w : run.warnings)
        warnings.append(QString::fromStdString(w));
    for (const AlphaBetaFit& f : fits)
        if (f.residual > kPoorFit)
            warnings.append(QString::fromStdString(poorFit(f)));
    QJsonArray gemms;
    for (const GemmMeasurement& g : run.compute.gemms)
        gemms.append(QJsonObject{{"device", g.device},
                                 {"dtype", QString::fromStdString(g.dtype)},
                                 {"shape", QString::fromStdString(g.shape)},
                                 {"m", g.m},
                                 {"n", g.n},
                                 {"k", g.k},
                                 {"batch", g.batch},
                                 {"tflops", g.tflops},
                                 {"sm_clock_mhz", g.sm_clock_mhz}});
    QJsonArray attention;
    for (const AttentionMeasurement& a : run.compute.attention)
        attention.append(QJsonObject{{"device", a.device},
                                     {"batch_heads", a.batch_heads},
                                     {"seq", a.seq},
                                     {"head_dim", a.head_dim},
                                     {"fwd_tflops", a.fwd_tflops},
                                     {"bwd_tflops", a.bwd_tflops}});
    QJsonArray hbm;
    for (const HbmMeasurement& h : run.compute.hbm)
        hbm.append(QJsonObject{
            {"device", h.device}, {"kernel", QString::fromStdString(h.kernel)}, {"GBps", h.GBps}});
    printJson("paraplan-import-measurements/1",
              QJsonObject{{"run", QString::fromStdString(run.describe())},
                          {"compute",
                           QJsonObject{{"gemms", gemms}, {"attention", attention}, {"hbm", hbm}}},
                          {"point_count", static_cast<int>(run.points.size())},
                          {"points", points},
                          {"complete", run.complete},
                          {"fits", fitArray},
                          {"copies", copies},
                          {"figures", figureArray},
                          {"warnings", warnings}},
              out);
}

void printMeasurementsText(const MeasurementRun& run, const std::vector<AlphaBetaFit>& fits,
                           const std::vector<MeasuredFigure>& figures,
                           const std::string& clusterName, std::ostream& out)
{
    out << run.describe() << "\n  " << run.points.size() << " collective points, "
        << run.copies.size() << " copies" << (run.complete ? "" : " (incomplete run)") << "\n";
    if (!run.error.empty())
        out << "  the run ended with an error: " << run.error << "\n";
    out << "\n  Fits, t = alpha + S x factor / busbw (out-of-place points)\n";
    out << "    " << std::left << std::setw(16) << "op" << std::right << std::setw(7) << "ranks"
        << std::setw(7) << "hosts" << std::setw(8) << "points" << std::setw(12) << "alpha"
        << std::setw(14) << "busbw" << std::setw(11) << "residual"
        << "\n";
    if (fits.empty())
        out << "    none (see the warnings)\n";
    for (const AlphaBetaFit& f : fits)
        out << "    " << std::left << std::setw(16) << collectiveOpName(f.op) << std::right
            << std::setw(7) << f.ranks << std::setw(7) << f.hosts << std::setw(8) << f.points
            << std::setw(12) << formatSeconds(f.alpha_s) << std::setw(14)
            << formatNumber(f.busbw_GBps, 4) + " GB/s" << std::setw(10)
            << formatNumber(100 * f.residual, 2) + "%"
            << "\n";
    if (!run.copies.empty()) {
        std::map<std::string, std::pair<double, int>> copyAverage;
        for (const CopyMeasurement& c : run.copies) {
            copyAverage[c.what].first += c.GBps;
            ++copyAverage[c.what].second;
        }
        out << "\n  Copies (mean over devices)\n";
        for (const auto& [what, sum] : copyAverage)
            out << "    " << std::left << std::setw(6) << what << std::right << std::setw(12)
                << formatNumber(sum.first / sum.second, 4) + " GB/s"
                << (what == "d2d" ? "  (read + write counted)" : "") << "\n";
    }
    if (!run.compute.empty()) {
        out << "\n  Compute (cuBLASLt GEMMs, best grid shape of at least 4096 a side, median "
               "GPU)\n";
        for (const char* dtype : {"bf16", "fp16", "fp8"}) {
            const GemmMeasurement* best = nullptr;
            const double tflops = measuredGemmTflops(run.compute, dtype, 4096, &best);
            if (tflops > 0)
                out << "    " << std::left << std::setw(6) << dtype << std::right
                    << formatNumber(tflops, 4) << " TFLOP/s at " << formatNumber(best->m, 6) << "x"
                    << formatNumber(best->n, 6) << "x" << formatNumber(best->k, 6)
                    << (best->sm_clock_mhz > 0
                            ? ", SM clock " + formatNumber(best->sm_clock_mhz, 4) + " MHz"
                            : "")
                    << "\n";
        }
        for (const AttentionMeasurement& a : run.compute.attention)
            out << "    unfused attention (" << formatNumber(a.batch_heads, 5) << " heads x "
                << formatNumber(a.seq, 6) << " x " << formatNumber(a.head_dim, 4) << "): forward "
                << formatNumber(a.fwd_tflops, 4) << ", backward " << formatNumber(a.bwd_tflops, 4)
                << " TFLOP/s (GPU " << a.device << ")\n";
        for (const HbmMeasurement& h : run.compute.hbm)
            out << "    HBM " << h.kernel << " " << formatNumber(h.GBps, 4) << " GB/s (GPU "
                << h.device << ")\n";
    }
    if (!figures.empty()) {
        out << "\n  What the run would replace on " << clusterName << "\n";
        for (const MeasuredFigure& f : figures)
            out << "    " << f.figure << ": assumed " << formatNumber(f.assumed) << ", measured "
                << formatNumber(f.value) << "  (" << f.why << ")\n";
    }
    for (const std::string& warning : run.warnings)
        out << "  warning: " << warning << "\n";
    for (const AlphaBetaFit& f : fits)
        if (f.residual > kPoorFit)
            out << "  warning: " << poorFit(f) << "\n";
}

} // namespace

Options importMeasurementsOptions()
{
    return {
        valueOption("--cluster", "P",
                    "A cluster preset or file: list the assumed figures the run would replace."),
        valueOption("--nodes", "N", "Nodes in that cluster."),
        valueOption("--plan", "PLAN",
                    "A plan file: the link and compute figures the run would replace on it "
                    "(instead of --cluster)."),
        jsonOption(),
    };
}

int runImportMeasurements(const Args& args, std::ostream& out)
{
    MeasurementRun run;
    std::string error;
    if (!loadMeasurements(args.positional().front(), &run, &error))
        throw UsageError(error);
    const std::vector<AlphaBetaFit> fits = fitRun(run);
    std::vector<MeasuredFigure> figures;
    std::string target = args.has("--cluster") ? args.text("--cluster") : "";
    if (args.has("--plan")) {
        if (args.has("--cluster"))
            throw UsageError("--plan and --cluster: give one (the plan names its cluster)");
        const Plan plan = planFromFile(args.text("--plan"));
        figures = proposeMeasuredFigures(run, fits, plan.cluster);
        for (MeasuredFigure& f : proposeComputeFigures(run, plan, HardwareCatalog::bundled()))
            figures.push_back(std::move(f));
        target = args.text("--plan");
    } else if (args.has("--cluster")) {
        ClusterOptions clusterOptions;
        if (args.has("--nodes"))
            clusterOptions.nodes = args.integer("--nodes", 1, 1000000);
        ClusterSpec cluster;
        requireClusterFileReadable(args.text("--cluster"));
        if (!loadCluster(args.text("--cluster"), clusterOptions, &cluster, &error,
                         HardwareCatalog::bundled()))
            throw UsageError(error);
        figures = proposeMeasuredFigures(run, fits, cluster);
    }
    if (args.flag("--json"))
        printMeasurementsJson(run, fits, figures, out);
    else
        printMeasurementsText(run, fits, figures, target, out);
    return kExitOk;
}

} // namespace paraplan::cli
