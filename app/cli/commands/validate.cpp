// paraplan-cli validate: the engine against published measurements, every row through the
// plan-file path.
#include "common.h"

#include "calibration.h"
#include "units.h"

#include <QJsonArray>

#include <algorithm>
#include <iomanip>

namespace paraplan::cli {

namespace {

using units::formatNumber;
using units::formatSeconds;

QJsonObject calibrationReportJson(const CalibrationReport& report)
{
    QJsonArray rows;
    for (const CalibrationRow& row : report.rows) {
        QJsonArray notExpressible;
        for (const std::string& what : row.not_expressible)
            notExpressible.append(QString::fromStdString(what));
        rows.append(QJsonObject{{"name", QString::fromStdString(row.name)},
                                {"family", QString::fromStdString(row.family)},
                                {"not_expressible", notExpressible},
                                {"model", QString::fromStdString(row.model)},
                                {"plan", QString::fromStdString(row.plan.name)},
                                {"gpus", row.gpus},
                                {"assumptions", QString::fromStdString(row.assumptions)},
                                {"measured_s", row.measured_s},
                                {"predicted_s", row.predicted_s},
                                {"error", row.error},
                                {"mfu", row.mfu},
                                {"measured_mfu", row.measured_mfu}});
    }
    QJsonArray memory;
    for (const MemoryCalibrationRow& row : report.memory) {
        QJsonObject o{{"model", QString::fromStdString(row.model)},
                      {"what", QString::fromStdString(row.what)},
                      {"measured_GiB", row.measured_GiB},
                      {"predicted_GiB", row.predicted_GiB},
                      {"error", row.error}};
        if (!row.name.empty()) {
            o["name"] = QString::fromStdString(row.name);
            o["measures"] = QString::fromStdString(row.measures);
            o["stage"] = row.stage;
            o["predicted_fits"] = row.predicted_fits;
            o["reserved"] = row.reserved;
            if (!row.expected_verdict.empty())
                o["verdict"] = QString::fromStdString(row.expected_verdict);
            if (!(row.measured_GiB > 0))
                o["measured_GiB"] = QJsonValue::Null;
        }
        memory.append(o);
    }
    return QJsonObject{{"id", QString::fromStdString(report.id)},
                       {"source", QString::fromStdString(report.source)},
                       {"rows", rows},
                       {"mean_abs_error", report.mean_abs_error},
                       {"median_abs_error", report.median_abs_error},
                       {"max_abs_error", report.max_abs_error},
                       {"memory", memory},
                       {"memory_max_abs_error", report.memory_max_abs_error},
                       {"memory_mean_abs_error", report.memory_mean_abs_error},
                       {"verdicts", report.verdicts},
                       {"verdicts_matched", report.verdicts_matched}};
}

void printTimingRows(const CalibrationReport& report, int nameWidth, std::ostream& out)
{
    out << "\n  " << std::left << std::setw(nameWidth) << "row" << std::right << std::setw(6)
        << "GPUs" << std::setw(11) << "measured" << std::setw(11) << "predicted" << std::setw(9)
        << "error" << std::setw(15) << "MFU (publ.)"
        << "\n";
    for (const CalibrationRow& row : report.rows) {
        std::string mfu = formatNumber(100 * row.mfu, 3) + "%";
        if (row.measured_mfu > 0)
            mfu += " (" + formatNumber(100 * row.measured_mfu, 3) + "%)";
        out << "  " << std::left << std::setw(nameWidth) << row.name << std::right << std::setw(6)
            << row.gpus << std::setw(11) << formatSeconds(row.measured_s) << std::setw(11)
            << formatSeconds(row.predicted_s) << std::setw(9)
            << formatNumber(100 * row.error, 2) + "%" << std::setw(15) << mfu << "\n"
            << "      assumes: " << row.assumptions << "\n";
        if (!row.family.empty())
            out << "      family: " << row.family << "\n";
        for (const std::string& what : row.not_expressible)
            out << "      not expressible (costed without it): " << what << "\n";
    }
    out << "\n  iteration time: mean |error| " << formatNumber(100 * report.mean_abs_error, 3)
        << "%, median " << formatNumber(100 * report.median_abs_error, 3) << "%, max "
        << formatNumber(100 * report.max_abs_error, 3) << "%";
    if (report.reference_mean_pct > 0)
        out << "  (best public analytical tool on this set: "
            << formatNumber(report.reference_mean_pct, 3) << "% / "
            << formatNumber(report.reference_max_pct, 3) << "%)";
    out << "\n";
}

void printMeasuredMemoryRows(const CalibrationReport& report, int nameWidth, std::ostream& out)
{
    out << "\n  " << std::left << std::setw(nameWidth) << "row (measured memory per GPU)"
        << std::right << std::setw(6) << "GPUs" << std::setw(12) << "measured" << std::setw(12)
        << "predicted" << std::setw(9) << "error" << std::setw(14) << "fit (publ.)"
        << "\n";
    for (const MemoryCalibrationRow& row : report.memory) {
        const bool scored = row.measured_GiB > 0;
        std::string fit = row.predicted_fits ? "fits" : "oom";
        if (!row.expected_verdict.empty())
            fit += " (" + row.expected_verdict + ")";
        const std::string stage = row.stage == -1   ? "the fullest stage"
                                  : row.stage == -2 ? "the last stage"
                                                    : "stage " + std::to_string(row.stage);
        out << "  " << std::left << std::setw(nameWidth) << row.name << std::right << std::setw(6)
            << row.plan.parallel.gpus() << std::setw(12)
            << (scored ? formatNumber(row.measured_GiB, 4) + " GiB" : std::string("-"))
            << std::setw(12) << formatNumber(row.predicted_GiB, 4) + " GiB" << std::setw(9)
            << (scored ? formatNumber(100 * row.error, 2) + "%" : std::string("-")) << std::setw(14)
            << fit << "\n"
            << "      measures: " << row.measures << " (scored on " << stage
            << (row.reserved ? "'s reserved bytes: peak x (1 + allocator_reserve)" : "") << ")\n";
    }
    out << "\n  memory: mean |error| " << formatNumber(100 * report.memory_mean_abs_error, 3)
        << "%, max " << formatNumber(100 * report.memory_max_abs_error, 3) << "%; fit verdicts "
        << report.verdicts_matched << " of " << report.verdicts << " as published\n";
}

void printCalibrationReport(const CalibrationReport& report, std::ostream& out)
{
    out << "Calibration set " << report.id << ": " << report.source << "\n";
    if (!report.hardware.empty())
        out << "Hardware: " << report.hardware << "\n";
    // The row column fits the longest name (the 2026 set's run names are up to 50 wide).
    int nameWidth = 36;
    for (const CalibrationRow& row : report.rows)
        nameWidth = std::max(nameWidth, static_cast<int>(row.name.size()) + 2);
    for (const MemoryCalibrationRow& row : report.memory)
        nameWidth = std::max(nameWidth, static_cast<int>(row.name.size()) + 2);
    if (!report.rows.empty())
        printTimingRows(report, nameWidth, out);
    if (!report.memory.empty() && !report.memory.front().name.empty()) {
        printMeasuredMemoryRows(report, nameWidth, out);
        return;
    }
    if (!report.memory.empty()) {
        out << "\n  First-stage memory per GPU (GiB)\n";
        for (const MemoryCalibrationRow& row : report.memory)
            out << "  " << std::left << std::setw(14) << row.model << std::setw(26) << row.what
                << std::right << std::setw(10) << formatNumber(row.measured_GiB, 4) << std::setw(10)
                << formatNumber(row.predicted_GiB, 4) << std::setw(8)
                << formatNumber(100 * row.error, 2) + "%"
                << "\n";
        out << "\n  memory: max |error| " << formatNumber(100 * report.memory_max_abs_error, 3)
            << "%\n";
    }
}

} // namespace

Options validateOptions()
{
    return {
        valueOption("--tolerance", "SHARE",
                    "Exit 1 when a set's largest iteration-time |error| exceeds SHARE "
                    "(0.15 = 15%); without it the command only reports."),
        jsonOption(),
    };
}

int runValidate(const Args& args, std::ostream& out)
{
    std::vector<std::string> paths = args.positional();
    if (paths.empty())
        paths = bundledCalibrationSets();
    const bool checked = args.has("--tolerance");
    const double tolerance =
        checked ? args.within("--tolerance", {"--tolerance", 0, 10, "", false, false}) : 0;
    std::vector<CalibrationReport> reports;
    for (const std::string& path : paths) {
        CalibrationReport report;
        std::string error;
        if (!runCalibration(path, &report, &error, HardwareCatalog::bundled()))
            throw UsageError(error.find(path) == std::string::npos ? path + ": " + error : error);
        reports.push_back(std::move(report));
    }
    bool within = true;
    for (const CalibrationReport& report : reports)
        within = within && (!checked || report.max_abs_error <= tolerance);
    if (args.flag("--json")) {
        QJsonArray sets;
        for (const CalibrationReport& report : reports) {
            QJsonObject set = calibrationReportJson(report);
            if (checked)
                set["within_tolerance"] = report.max_abs_error <= tolerance;
            sets.append(set);
        }
        QJsonObject doc{{"sets", sets}};
        if (checked)
            doc["tolerance"] = tolerance;
        printJson("paraplan-validate/1", doc, out);
        return within ? kExitOk : kExitNo;
    }
    for (size_t i = 0; i < reports.size(); ++i) {
        if (i > 0)
            out << "\n";
        printCalibrationReport(reports[i], out);
        if (checked && reports[i].max_abs_error > tolerance)
            out << "  outside the tolerance: max |error| "
                << formatNumber(100 * reports[i].max_abs_error, 3) << "% > "
                << formatNumber(100 * tolerance, 3) << "%\n";
    }
    return within ? kExitOk : kExitNo;
}

} // namespace paraplan::cli
