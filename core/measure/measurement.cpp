#include "measurement.h"
#include "measurementdetail.h"

#include "jsonutil.h"
#include "plan.h"
#include "units.h"

#include <QDateTime>
#include <QFileInfo>
#include <QJsonDocument>
#include <QString>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace paraplan {
namespace {

// The newest probe protocol this reader knows: 1 (links), 2 (adds compute records).
constexpr int kReaderProtocol = 2;

} // namespace

namespace detail {

CollectiveOp opFromName(const QString& name, bool* ok)
{
    CollectiveOp op = CollectiveOp::AllReduce;
    QString n = name.toLower();
    n.remove("_perf");
    *ok = parseCollectiveOp(n.toStdString(), &op);
    return op;
}

std::optional<std::string> pointProblem(const MeasuredPoint& point)
{
    if (auto problem = limits::check(limits::kBytes, point.bytes, "size"))
        return problem;
    if (auto problem = limits::check(kTimeUs, point.time_s * 1e6, "time"))
        return problem;
    if (auto problem = limits::check(limits::kRanks, point.ranks, "ranks"))
        return problem;
    if (auto problem =
            limits::check({"hosts", 1, static_cast<double>(point.ranks), "hosts"}, point.hosts))
        return problem;
    if (auto problem = limits::check(kMeasuredGBps, point.algbw_GBps, "algbw"))
        return problem;
    if (auto problem = limits::check(kMeasuredGBps, point.busbw_GBps, "busbw"))
        return problem;
    // The size and the time must agree with a physical link as well as each column alone.
    const MeasuredBandwidth bw =
        bandwidthFromMeasuredTime(point.op, point.bytes, point.ranks, point.time_s);
    return limits::check(kMeasuredGBps, units::toGBps(bw.busbw_Bps), "the busbw size / time imply");
}

void addPoint(MeasurementRun* run, MeasuredPoint point)
{
    if (point.time_s > 0 && point.bytes > 0) {
        const MeasuredBandwidth bw =
            bandwidthFromMeasuredTime(point.op, point.bytes, point.ranks, point.time_s);
        if (point.algbw_GBps <= 0)
            point.algbw_GBps = units::toGBps(bw.algbw_Bps);
        if (point.busbw_GBps <= 0)
            point.busbw_GBps = units::toGBps(bw.busbw_Bps);
    }
    run->points.push_back(point);
}

} // namespace detail

using detail::addPoint;
using detail::opFromName;

namespace {

// Empty when a probe copy record lies in the stated ranges, else the first problem.
std::optional<std::string> copyProblem(const CopyMeasurement& copy)
{
    if (auto problem = limits::check(limits::kBytes, copy.bytes, "bytes"))
        return problem;
    if (auto problem = limits::check(detail::kTimeUs, copy.time_s * 1e6, "time_us"))
        return problem;
    if (auto problem = limits::check(detail::kMeasuredGBps, copy.GBps, "GBps"))
        return problem;
    if (auto problem =
            limits::check(detail::kMeasuredGBps, copy.bidirectional_GBps, "bidirectional_GBps"))
        return problem;
    return limits::check(limits::kLatencyUs, copy.latency_us, "latency_us");
}

} // namespace

std::string MeasurementRun::describe() const
{
    std::string text = source;
    if (!hosts.empty()) {
        text += " on " + hosts.front();
        if (hosts.size() > 1)
            text += " and " + std::to_string(hosts.size() - 1) + " more host(s)";
    }
    if (!date.empty())
        text += ", " + date;
    if (!devices.empty())
        text += ", " + std::to_string(devices.size()) + " x " + devices.front();
    if (!nccl_version.empty())
        text += ", NCCL " + nccl_version;
    if (!cuda_version.empty())
        text += ", " + cuda_version;
    if (!file.empty())
        text += " (" + file + ")";
    return text;
}

std::vector<ProbeStreamParser::Event> ProbeStreamParser::feed(const std::string& chunk)
{
    std::vector<Event> events;
    m_pending += chunk;
    size_t start = 0;
    for (size_t end = m_pending.find('\n'); end != std::string::npos;
         end = m_pending.find('\n', start)) {
        const std::string line = m_pending.substr(start, end - start);
        start = end + 1;
        const Event event = parseLine(line);
        if (event != Event::None)
            events.push_back(event);
    }
    m_pending.erase(0, start);
    // A runaway line without a newline is garbage, not memory to hold forever.
    if (m_pending.size() > 1 << 20) {
        warn("a line of more than 1 MiB without a newline was dropped");
        m_pending.clear();
        events.push_back(Event::Garbage);
    }
    return events;
}

std::vector<ProbeStreamParser::Event> ProbeStreamParser::finish()
{
    std::vector<Event> events;
    if (!m_pending.empty()) {
        const Event event = parseLine(m_pending);
        if (event != Event::None)
            events.push_back(event);
        m_pending.clear();
    }
    if (m_run.warnings_dropped > 0 && !m_summarised) {
        m_run.warnings.push_back("and " + std::to_string(m_run.warnings_dropped) +
                                 " more warning(s) not kept");
        m_summarised = true;
    }
    return events;
}

void ProbeStreamParser::warn(std::string message)
{
    if (m_run.warnings.size() < kKeptWarnings)
        m_run.warnings.push_back(std::move(message));
    else
        ++m_run.warnings_dropped;
}

ProbeStreamParser::Event ProbeStreamParser::parseLine(const std::string& raw)
{
    const QString line = QString::fromStdString(raw).trimmed();
    if (line.isEmpty())
        return Event::None;
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(line.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        warn("not a protocol line: " + line.left(120).toStdString());
        return Event::Garbage;
    }
    const QJsonObject o = document.object();
    const QString type = o.value("type").toString();
    if (type == "hello") {
        m_protocol = o.value("protocol").toInt();
        m_run.source = "paraplan-probe " + o.value("probe_version").toString().toStdString();
        const int nccl = o.value("nccl_version").toInt();
        if (nccl > 0)
            m_run.nccl_version = std::to_string(nccl / 10000) + "." +
                                 std::to_string(nccl / 100 % 100) + "." +
                                 std::to_string(nccl % 100);
        auto cudaVersion = [](int v) {
            return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
        };
        const int runtime = o.value("cuda_runtime").toInt();
        const int driver = o.value("cuda_driver").toInt();
        if (runtime > 0)
            m_run.cuda_version = "CUDA " + cudaVersion(runtime) +
                                 (driver > 0 ? ", driver " + cudaVersion(driver) : "");
        m_run.date = o.value("date").toString().left(10).toStdString();
        const std::string host = o.value("host").toString().toStdString();
        if (!host.empty())
            m_run.hosts = {host};
        if (m_protocol > kReaderProtocol)
            warn("protocol " + std::to_string(m_protocol) + " is newer than this reader's " +
                 std::to_string(kReaderProtocol) + "; unknown lines are skipped");
        return Event::Hello;
    }
    if (type == "device") {
        m_run.devices.push_back(o.value("name").toString().toStdString());
        return Event::Device;
    }
    if (type == "progress") {
        m_run.progress_done = o.value("done").toInt();
        m_run.progress_total = o.value("total").toInt();
        return Event::Progress;
    }
    if (type == "result") {
        if (o.value("kind").toString() == "copy") {
            CopyMeasurement copy;
            copy.what = o.value("what").toString().toStdString();
            copy.device = o.value("device").toInt(-1);
            copy.src = o.value("src").toInt(-1);
            copy.dst = o.value("dst").toInt(-1);
            copy.bytes = o.value("bytes").toDouble();
            copy.time_s = o.value("time_us").toDouble() * 1e-6;
            copy.GBps = o.value("GBps").toDouble();
            copy.bidirectional_GBps = o.value("bidirectional_GBps").toDouble();
            copy.latency_us = o.value("latency_us").toDouble();
            if (const auto problem = copyProblem(copy)) {
                warn("a copy result outside the stated ranges (" + *problem +
                     "): " + line.left(120).toStdString());
                return Event::Garbage;
            }
            m_run.copies.push_back(copy);
            return Event::Result;
        }
        bool ok = false;
        MeasuredPoint point;
        point.op = opFromName(o.value("op").toString(), &ok);
        point.bytes = o.value("bytes").toDouble();
        point.ranks = o.value("ranks").toInt();
        point.hosts = std::max(1, o.value("hosts").toInt(1));
        point.time_s = o.value("time_us").toDouble() * 1e-6;
        point.algbw_GBps = o.value("algbw_GBps").toDouble();
        point.busbw_GBps = o.value("busbw_GBps").toDouble();
        point.wrong = o.value("wrong").toInteger(-1);
        if (!ok || !(point.bytes > 0) || point.ranks < 2 || !(point.time_s > 0)) {
            warn("a result line without a usable op, size, ranks or time: " +
                 line.left(120).toStdString());
            return Event::Garbage;
        }
        if (const auto problem = detail::pointProblem(point)) {
            warn("a result outside the stated ranges (" + *problem +
                 "): " + line.left(120).toStdString());
            return Event::Garbage;
        }
        if (point.wrong > 0)
            warn(std::string(collectiveOpName(point.op)) + " of " +
                 units::formatBytes(point.bytes) + " had " + std::to_string(point.wrong) +
                 " wrong values");
        addPoint(&m_run, point);
        return Event::Result;
    }
    if (type == "gemm" || type == "attention" || type == "hbm" || type == "clock") {
        std::string problem;
        if (!readComputeRecord(o, type.toStdString(), &m_run.compute, &problem)) {
            warn(problem + ": " + line.left(120).toStdString());
            return Event::Garbage;
        }
        return Event::Result;
    }
    if (type == "warning") {
        warn(o.value("message").toString().toStdString());
        return Event::Warning;
    }
    if (type == "error") {
        m_run.error = o.value("what").toString().toStdString() + ": " +
                      o.value("detail").toString().toStdString();
        m_run.error_code = o.value("code").toInt();
        return Event::Error;
    }
    if (type == "done") {
        m_run.complete = true;
        return Event::Done;
    }
    return Event::None; // a type from a newer protocol
}

bool loadMeasurements(const std::string& path, MeasurementRun* run, std::string* error)
{
    std::string text;
    if (!json::readFile(path, &text, error))
        return false;
    bool ok = false;
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) {
        *error = path + ": the file is empty";
        return false;
    }
    // JSON Lines with "type" fields: a probe run (with or without its hello line); one JSON
    // document: nccl-tests -J.
    const bool jsonLines =
        text.find("}\n{") != std::string::npos || text.find("}\r\n{") != std::string::npos;
    if (text[first] == '{' && text.find("\"type\"") != std::string::npos &&
        (text.find("\"hello\"") != std::string::npos || jsonLines)) {
        ProbeStreamParser parser;
        parser.feed(text);
        parser.finish();
        *run = parser.run();
        ok = !run->points.empty() || !run->copies.empty() || !run->compute.empty();
        if (parser.protocol() == 0)
            run->warnings.insert(run->warnings.begin(),
                                 "no hello line: the start of the probe run is missing");
        if (run->date.empty()) // protocol 1 runs carry no date: the file's own
            run->date = "file of " + QFileInfo(QString::fromStdString(path))
                                         .lastModified()
                                         .date()
                                         .toString(Qt::ISODate)
                                         .toStdString();
        if (!ok)
            *error = !run->error.empty() ? "the probe run failed: " + run->error
                     : run->warnings.empty()
                         ? "the probe output holds no result"
                         : "the probe output holds no usable result (" +
                               std::to_string(run->warnings.size() + run->warnings_dropped -
                                              (run->warnings_dropped > 0 ? 1 : 0)) +
                               " line(s) skipped; the first: " + run->warnings.front() + ")";
    } else if (text[first] == '{') {
        ok = parseNcclTestsJson(text, run, error, path.substr(path.find_last_of('/') + 1));
    } else {
        ok = parseNcclTestsLog(text, run, error, path.substr(path.find_last_of('/') + 1));
    }
    if (!ok) {
        *error = path + ": " + *error;
        return false;
    }
    std::vector<AlphaBetaFit> refused;
    fitRun(*run, &refused);
    for (const AlphaBetaFit& fit : refused)
        run->warnings.push_back(fit.problem);
    run->file = path;
    return true;
}

double AlphaBetaFit::busbwAt(double bytes) const
{
    const double factor = busBandwidthFactor(op, ranks);
    if (!(bytes > 0) || !(busbw_GBps > 0) || !(factor > 0))
        return 0;
    const double t = alpha_s + bytes * factor / (busbw_GBps * 1e9);
    return factor * bytes / t / 1e9;
}

AlphaBetaFit fitAlphaBeta(CollectiveOp op, int ranks, const std::vector<MeasuredPoint>& points)
{
    AlphaBetaFit fit;
    fit.op = op;
    fit.ranks = ranks;
    fit.points = static_cast<int>(points.size());
    if (points.empty())
        return fit;
    fit.hosts = points.front().hosts;
    const auto [smallest, largest] = std::minmax_element(
        points.begin(), points.end(),
        [](const MeasuredPoint& a, const MeasuredPoint& b) { return a.bytes < b.bytes; });
    if (!(largest->bytes >= 2 * smallest->bytes)) {
        fit.problem =
            std::string(collectiveOpName(op)) + " over " + std::to_string(ranks) + " ranks: " +
            (largest->bytes == smallest->bytes
                 ? "all " + std::to_string(points.size()) + " point(s) at one size (" +
                       units::formatBytes(smallest->bytes) + ")"
                 : "the " + std::to_string(points.size()) +
                       " points span less than a factor of "
                       "2 in size (" +
                       units::formatBytes(smallest->bytes) + " to " +
                       units::formatBytes(largest->bytes) + ")") +
            ": latency and bandwidth cannot be told apart, so no fit is made; measure a range "
            "of sizes (nccl-tests -b 1M -e 8G -f 2)";
        return fit;
    }
    // Minimise sum((t - a - b S)^2 / t^2): weighted least squares with weights 1/t^2.
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const MeasuredPoint& p : points) {
        const double w = 1.0 / (p.time_s * p.time_s);
        sw += w;
        sx += w * p.bytes;
        sy += w * p.time_s;
        sxx += w * p.bytes * p.bytes;
        sxy += w * p.bytes * p.time_s;
    }
    const double det = sw * sxx - sx * sx;
    double a = 0;
    double b = 0;
    if (points.size() >= 2 && std::fabs(det) > 0) {
        b = (sw * sxy - sx * sy) / det;
        a = (sy - b * sx) / sw;
    } else {
        b = points.front().time_s / points.front().bytes;
    }
    if (a < 0) { // a negative latency is noise: refit through the origin
        a = 0;
        b = sxy / sxx;
    }
    fit.alpha_s = a;
    const double factor = busBandwidthFactor(op, ranks);
    fit.busbw_GBps = b > 0 ? units::toGBps(factor / b) : 0;
    double sum = 0;
    for (const MeasuredPoint& p : points) {
        const double predicted = a + b * p.bytes;
        sum += std::pow((predicted - p.time_s) / p.time_s, 2);
    }
    fit.residual = std::sqrt(sum / points.size());
    // Times that do not grow with the size give no bandwidth (or an unphysical one).
    if (auto problem = limits::check(limits::kLinkGBps, fit.busbw_GBps, "the fitted busbw")) {
        fit.problem = std::string(collectiveOpName(op)) + " over " + std::to_string(ranks) +
                      " ranks: " + *problem +
                      "; the times do not grow with the size as a link's would, so no fit is made";
        fit.alpha_s = 0;
        fit.busbw_GBps = 0;
    }
    return fit;
}

std::vector<AlphaBetaFit> fitRun(const MeasurementRun& run, std::vector<AlphaBetaFit>* refused)
{
    std::map<std::tuple<int, int, int>, std::vector<MeasuredPoint>> series;
    for (const MeasuredPoint& p : run.points) {
        if (!p.in_place)
            series[{static_cast<int>(p.op), p.ranks, p.hosts}].push_back(p);
    }
    std::vector<AlphaBetaFit> fits;
    for (const auto& [key, points] : series) {
        AlphaBetaFit fit =
            fitAlphaBeta(static_cast<CollectiveOp>(std::get<0>(key)), std::get<1>(key), points);
        if (fit.problem.empty())
            fits.push_back(fit);
        else if (refused)
            refused->push_back(fit);
    }
    return fits;
}

std::vector<MeasuredFigure> proposeMeasuredFigures(const MeasurementRun& run,
                                                   const std::vector<AlphaBetaFit>& fits,
                                                   const ClusterSpec& cluster)
{
    std::vector<MeasuredFigure> out;
    if (cluster.is_torus)
        return out;
    const NodeSpec& node = cluster.node;
    const AlphaBetaFit* intra = nullptr;
    const AlphaBetaFit* inter = nullptr;
    for (const AlphaBetaFit& fit : fits) {
        if (fit.op != CollectiveOp::AllReduce || fit.points < 3)
            continue;
        if (fit.hosts == 1 && (!intra || fit.ranks > intra->ranks))
            intra = &fit;
        if (fit.hosts > 1 && (!inter || fit.ranks > inter->ranks))
            inter = &fit;
    }
    const std::string description = run.describe();
    if (intra && node.fabric == NodeFabric::NVSwitch) {
        const double line = node.nvlinkLinksPerGpu() * node.nvlink_link_GBps.value;
        const double ring = intra->busbw_GBps / line;
        // busbw above the NVLink line rate can only come from in-switch reduction (NVLS).
        if (ring > 1.0 && node.in_switch_reduction) {
            const double algbw =
                intra->busbw_GBps / busBandwidthFactor(CollectiveOp::AllReduce, intra->ranks);
            out.push_back({"nvls_efficiency", algbw / line, node.nvls_efficiency.value,
                           "all_reduce over " + std::to_string(intra->ranks) +
                               " GPUs of one node: busbw " +
                               units::formatNumber(intra->busbw_GBps) + " GB/s (fit, residual " +
                               units::formatNumber(100 * intra->residual, 2) + "%) is above the " +
                               units::formatNumber(line) + " GB/s line rate: NVLS; algbw " +
                               units::formatNumber(algbw) + " / line rate",
                           description});
        } else {
            out.push_back(
                {"nvlink_ring_efficiency", std::min(ring, 1.0), node.nvlink_ring_efficiency.value,
                 "all_reduce over " + std::to_string(intra->ranks) + " GPUs of one node: busbw " +
                     units::formatNumber(intra->busbw_GBps) + " GB/s (fit, residual " +
                     units::formatNumber(100 * intra->residual, 2) + "%) / " +
                     units::formatNumber(line) + " GB/s line rate",
                 description});
        }
    } else if (intra && node.fabric == NodeFabric::PCIe) {
        const double share = node.host_link_GBps.value / node.gpus_per_host_link;
        out.push_back({"pcie_efficiency",
                       std::min(intra->busbw_GBps / std::min(share, node.pcie_GBps.value), 1.0),
                       node.pcie_efficiency.value,
                       "all_reduce over " + std::to_string(intra->ranks) +
                           " GPUs of one node: busbw " + units::formatNumber(intra->busbw_GBps) +
                           " GB/s against the PCIe share of " + units::formatNumber(share) +
                           " GB/s",
                       description});
    }
    if (inter && node.nics > 0 && node.nic_GBps.value > 0) {
        const int perHost = std::max(1, inter->ranks / std::max(1, inter->hosts));
        const double pipe = node.nics * node.nic_GBps.value * perHost / node.gpus;
        out.push_back({"nic_efficiency", std::min(inter->busbw_GBps / pipe, 1.0),
                       node.nic_efficiency.value,
                       "all_reduce over " + std::to_string(inter->ranks) + " ranks on " +
                           std::to_string(inter->hosts) + " hosts: busbw " +
                           units::formatNumber(inter->busbw_GBps) + " GB/s against " +
                           units::formatNumber(pipe) + " GB/s of NICs for " +
                           std::to_string(perHost) + " GPU(s) per host",
                       description});
    }
    return out;
}

namespace {

Sourced* figureOf(const std::string& name, ClusterSpec* cluster)
{
    NodeSpec& n = cluster->node;
    if (name == "nvlink_ring_efficiency")
        return &n.nvlink_ring_efficiency;
    if (name == "nvls_efficiency")
        return &n.nvls_efficiency;
    if (name == "nic_efficiency")
        return &n.nic_efficiency;
    if (name == "pcie_efficiency")
        return &n.pcie_efficiency;
    return nullptr;
}

} // namespace

bool applyMeasuredFigure(const MeasuredFigure& figure, ClusterSpec* cluster)
{
    Sourced* target = figureOf(figure.figure, cluster);
    if (!target || !(figure.value > 0))
        return false;
    *target = {figure.value, Origin::Measurement, figure.run + "; " + figure.why};
    return true;
}

bool revertMeasuredFigure(const MeasuredFigure& figure, ClusterSpec* cluster)
{
    Sourced* target = figureOf(figure.figure, cluster);
    if (!target || target->origin != Origin::Measurement)
        return false;
    *target = {figure.assumed, Origin::Preset,
               "assumed value restored (was replaced by " + figure.run + ")"};
    return true;
}

namespace {

// The engine's kernel figures a measurement may replace (the compute side of a plan).
Sourced* engineFigure(const std::string& name, EngineFigures* f)
{
    if (name == "gemm_peak_fraction")
        return &f->gemm_peak_fraction;
    if (name == "attention_fraction")
        return &f->attention_fraction;
    if (name == "attention_bwd_fraction")
        return &f->attention_bwd_fraction;
    if (name == "hbm_fraction")
        return &f->hbm_fraction;
    if (name == "overlap_fraction")
        return &f->overlap_fraction;
    return nullptr;
}

} // namespace

bool applyMeasurementToPlan(const MeasuredFigure& figure, Plan* plan)
{
    MeasuredFigure f = figure;
    // An earlier measurement of the same figure keeps the first assumed value.
    for (const PlanMeasurement& m : plan->measured) {
        if (m.figure == f.figure)
            f.assumed = m.assumed;
    }
    if (Sourced* target = engineFigure(f.figure, &plan->figures)) {
        const bool zeroAllowed = f.figure == "overlap_fraction";
        if (!((f.value > 0 || (zeroAllowed && f.value == 0)) && f.value <= 1 &&
              std::isfinite(f.value)))
            return false;
        *target = {f.value, Origin::Measurement,
                   "measured: " + f.run + (f.why.empty() ? "" : " (" + f.why + ")")};
    } else if (!applyMeasuredFigure(f, &plan->cluster)) {
        return false;
    }
    plan->measured.erase(
        std::remove_if(plan->measured.begin(), plan->measured.end(),
                       [&](const PlanMeasurement& m) { return m.figure == f.figure; }),
        plan->measured.end());
    plan->measured.push_back({f.figure, f.value, f.assumed, f.run, f.why});
    return true;
}

bool revertMeasurementOfPlan(const std::string& figure, Plan* plan, const HardwareCatalog& catalog)
{
    for (auto it = plan->measured.begin(); it != plan->measured.end(); ++it) {
        if (it->figure != figure)
            continue;
        MeasuredFigure f{it->figure, it->value, it->assumed, it->why, it->run};
        if (Sourced* target = engineFigure(figure, &plan->figures)) {
            const GpuSpec* gpu = catalog.gpu(plan->cluster.gpu_id);
            EngineFigures defaults;
            if (gpu)
                defaults = defaultEngineFigures(*gpu, plan->training.optimizer,
                                                plan->training.dtype, plan->training.attention);
            *target = *engineFigure(figure, &defaults);
        } else {
            revertMeasuredFigure(f, &plan->cluster);
        }
        plan->measured.erase(it);
        return true;
    }
    return false;
}

} // namespace paraplan
