// nccl-tests output, text and -J JSON, read from its content. The formats follow NVIDIA's
// nccl-tests sources (github.com/NVIDIA/nccl-tests, src/common.cu and src/util.cu of 2019 to
// 2025): the "# nThread .. nGpus .." and "# Collective test starting: all_reduce_perf" header,
// "#  Rank  0 Group  0 Pid ..." device lines (no Group column before 2020), a table of size,
// count, type, [redop], [root] and out-of-place and in-place blocks of time, algbw, busbw and a
// check (#wrong, the older float "error", or N/A); -J writes version, start_time, args, env,
// nccl_version, config (nthreads, ngpus, ..., devices) and results with out_of_place/in_place
// objects of time (or cpu_time), alg_bw, bus_bw, nwrong.
#include "measurement.h"
#include "measurementdetail.h"

#include "inputlimits.h"
#include "jsonutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace paraplan {
namespace {

using detail::addPoint;
using detail::opFromName;

struct Half
{
    bool present = false;
    double time_us = 0;
    double algbw = 0;
    double busbw = 0;
    long long wrong = -1;
};

struct Row
{
    double size = 0;
    double count = 0;
    QString type;
    QString redop;
    bool hasRedop = false;
    Half half[2]; ///< out-of-place, in-place
    QString text;
};

// What a log or JSON file says, before the collective and the rank count are decided.
struct Reading
{
    MeasurementRun run;
    QString name;      ///< the test the content names ("all_reduce_perf"), if any
    QString nameWhere; ///< where it was named
    std::set<int> ranks;
    std::vector<std::string> hosts;
    int perProcess = 0; ///< nThread x nGpus from the header
    std::vector<Row> rows;
};

// Bytes per element of nccl-tests' type names (src/common.cu test_typenames).
double elementBytes(const QString& type)
{
    const QString t = type.toLower();
    if (t == "int8" || t == "uint8" || t == "char" || t.startsWith("f8") || t.startsWith("fp8"))
        return 1;
    if (t == "half" || t == "bfloat16" || t == "fp16" || t == "bf16" || t == "float16")
        return 2;
    if (t == "int32" || t == "uint32" || t == "int" || t == "float" || t == "float32")
        return 4;
    if (t == "int64" || t == "uint64" || t == "double" || t == "float64")
        return 8;
    return 0;
}

std::string ncclVersionFromCode(long long code)
{
    if (code <= 0)
        return {};
    // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + ... before.
    const long long major = code >= 10000 ? code / 10000 : code / 1000;
    const long long minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

void noteHost(Reading* in, const std::string& host)
{
    if (!host.empty() && std::find(in->hosts.begin(), in->hosts.end(), host) == in->hosts.end())
        in->hosts.push_back(host);
}

// A test named in the content: "all_reduce_perf" anywhere in a header or command line.
void noteName(Reading* in, const QString& line, const QString& where)
{
    static const QRegularExpression test("([a-z_]+)_perf\\b");
    const auto match = test.match(line);
    if (!match.hasMatch())
        return;
    bool ok = false;
    opFromName(match.captured(1), &ok);
    if (!ok)
        return;
    // "Collective test starting" is nccl-tests' own word; it overrides a command line.
    if (in->name.isEmpty() || where == "the header") {
        in->name = match.captured(1);
        in->nameWhere = where;
    }
}

bool isNumber(const QString& cell)
{
    bool ok = false;
    cell.toDouble(&ok);
    return ok;
}

double cellValue(const QStringList& cells, int at)
{
    bool ok = false;
    const double value = cells.value(at).toDouble(&ok);
    return ok ? value : std::nan("");
}

// Reads one table row; `groupWidth` columns per half (4, or 8 with per-iteration statistics).
bool readRow(const QString& line, int groupWidth, Row* row)
{
    QStringList cells = line.split(QRegularExpression("\\s+"), Qt::SkipEmptyParts);
    // A trailing timestamp ("2025-03-01 10:00:00") is not a column we read.
    static const QRegularExpression stamp("^(\\d{4}-\\d\\d-\\d\\d|\\d\\d:\\d\\d:\\d\\d)$");
    while (!cells.isEmpty() && stamp.match(cells.back()).hasMatch())
        cells.removeLast();
    bool sizeOk = false;
    bool countOk = false;
    row->size = cells.value(0).toDouble(&sizeOk);
    row->count = cells.value(1).toDouble(&countOk);
    if (!sizeOk || !countOk || cells.size() < 3 + 4 || isNumber(cells.value(2)))
        return false;
    row->type = cells.value(2);
    row->text = line.left(100);
    const int groups = (cells.size() - 3) / groupWidth >= 2 ? 2 : 1;
    int first = cells.size() - groups * groupWidth;
    if (first < 3) // fewer cells than one full group: read what is there as out-of-place
        first = 3;
    for (int at = 3; at < first; ++at) {
        if (!isNumber(cells[at])) { // redop ("sum", "none"); a number is the root
            row->redop = cells[at];
            row->hasRedop = true;
        }
    }
    for (int g = 0; g < groups; ++g) {
        const int at = first + g * groupWidth;
        Half& half = row->half[g];
        half.present = at + 2 < cells.size();
        half.time_us = cellValue(cells, at);
        half.algbw = cellValue(cells, at + 1);
        half.busbw = cellValue(cells, at + 2);
        const QString check = cells.value(at + 3);
        bool checkOk = false;
        const double value = check.toDouble(&checkOk);
        half.wrong = check == "N/A" || !checkOk ? -1 : (value > 0 ? 1 : 0);
    }
    return true;
}

void readLogLines(const QString& text, Reading* in)
{
    static const QRegularExpression rankLine(
        "^#\\s*Rank\\s+(\\d+)\\s+(?:Group\\s+\\d+\\s+)?Pid\\s+\\d+\\s+on\\s+(\\S+)\\s+device\\s+"
        "\\d+\\s+\\[[^\\]]*\\]\\s*(.*)$");
    static const QRegularExpression threads("nThread\\s+(\\d+)\\s+nGpus\\s+(\\d+)");
    static const QRegularExpression library("nccl-library=(\\d+)");
    static const QRegularExpression ncclLine("NCCL version (\\d+\\.\\d+\\.\\d+)");
    int groupWidth = 4;
    for (const QString& raw : text.split('\n')) {
        const QString line = raw.trimmed();
        if (line.isEmpty())
            continue;
        if (!line.startsWith('#')) {
            Row row;
            if (readRow(line, groupWidth, &row))
                in->rows.push_back(row);
            else if (line.contains("NCCL version") && in->run.nccl_version.empty())
                in->run.nccl_version = ncclLine.match(line).captured(1).toStdString();
            continue;
        }
        if (const auto rank = rankLine.match(line); rank.hasMatch()) {
            in->ranks.insert(rank.captured(1).toInt());
            noteHost(in, rank.captured(2).toStdString());
            in->run.devices.push_back(rank.captured(3).trimmed().toStdString());
        } else if (const auto t = threads.match(line); t.hasMatch()) {
            in->perProcess = t.captured(1).toInt() * t.captured(2).toInt();
        } else if (line.contains("Collective test starting")) {
            noteName(in, line, "the header");
        } else if (line.contains("nccl-library=")) {
            in->run.nccl_version =
                ncclVersionFromCode(library.match(line).captured(1).toLongLong());
        } else if (line.contains("Avg bus bandwidth")) {
            in->run.complete = true;
        } else if (line.contains("i_min") && line.contains("busbw")) {
            groupWidth = 8; // per-iteration statistics after each half
        } else {
            noteName(in, line, "the command line in the log");
        }
    }
}

// Empty when the row's size and the half's time and bandwidths lie in their stated ranges
// (nan, inf, zero and negative times included), else the first problem.
std::optional<std::string> halfProblem(const Row& row, const Half& half)
{
    if (auto problem = limits::check(limits::kBytes, row.size, "size"))
        return problem;
    if (auto problem = limits::check(detail::kTimeUs, half.time_us, "time"))
        return problem;
    if (auto problem = limits::check(detail::kMeasuredGBps, half.algbw, "algbw"))
        return problem;
    return limits::check(detail::kMeasuredGBps, half.busbw, "busbw");
}

bool usable(const Row& row, const Half& half)
{
    return half.present && !halfProblem(row, half);
}

// What the columns say: the family of collective and the rank count nccl-tests computed with.
struct ColumnEvidence
{
    int sizeRatio = 0;   ///< size / (count x element bytes): 1 or the rank count
    double busRatio = 0; ///< busbw / algbw of the row with the largest algbw
    bool redopKnown = false;
    bool reduces = false; ///< a redop other than "none"
};

ColumnEvidence columnEvidence(const std::vector<Row>& rows)
{
    ColumnEvidence e;
    double bestSize = 0;
    double bestAlgbw = 0;
    for (const Row& row : rows) {
        const double element = elementBytes(row.type);
        if (limits::check(limits::kBytes, row.size))
            continue; // a size outside the stated range tells nothing
        if (element > 0 && row.count > 0 && row.size > bestSize) {
            const double ratio = row.size / (row.count * element);
            if (std::fabs(ratio - std::round(ratio)) < 0.02 * ratio && ratio >= 0.98) {
                e.sizeRatio = static_cast<int>(std::lround(ratio));
                bestSize = row.size;
            }
        }
        for (const Half& half : row.half)
            if (usable(row, half) && half.algbw > bestAlgbw && half.algbw >= 1) {
                bestAlgbw = half.algbw;
                e.busRatio = half.busbw / half.algbw;
            }
        if (row.hasRedop) {
            e.redopKnown = true;
            e.reduces = e.reduces || (row.redop != "none" && !row.redop.isEmpty());
        }
    }
    return e;
}

// The collectives the columns allow, and the rank count they imply (0: not implied).
std::vector<CollectiveOp> candidatesFrom(const ColumnEvidence& e, int* ranks)
{
    using Op = CollectiveOp;
    *ranks = 0;
    // A rank count beyond 2^16, or a busbw/algbw that is not (n-1)/n, is no such evidence.
    const bool perRank =
        e.sizeRatio >= 2 && e.sizeRatio <= 65536 &&
        (e.busRatio == 0 || std::fabs(e.busRatio - (e.sizeRatio - 1.0) / e.sizeRatio) < 0.01);
    if (perRank) {
        *ranks = e.sizeRatio;
        if (e.redopKnown)
            return e.reduces ? std::vector<Op>{Op::ReduceScatter}
                             : std::vector<Op>{Op::AllGather, Op::AllToAll};
        return {Op::AllGather, Op::AllToAll, Op::ReduceScatter};
    }
    if (e.busRatio > 1.02 && e.busRatio < 2.0) {
        // 2(n-1)/n; printed to 2 decimals, so only small n are told apart reliably.
        const int n = static_cast<int>(std::lround(2.0 / (2.0 - e.busRatio)));
        if (n >= 2 && n <= 64 && std::fabs(2.0 * (n - 1) / n - e.busRatio) < 0.002)
            *ranks = n;
        return {Op::AllReduce};
    }
    if (e.sizeRatio == 1 && e.busRatio > 0 && std::fabs(e.busRatio - 1) < 0.01) {
        if (e.redopKnown)
            return e.reduces ? std::vector<Op>{Op::Reduce} : std::vector<Op>{Op::Broadcast};
        return {Op::Broadcast, Op::Reduce, Op::SendRecv};
    }
    return {};
}

// A collective named by a file: "allreduce", "all_reduce", "bcast", ... (the last resort).
bool opFromFileName(const std::string& file, CollectiveOp* op)
{
    QString name = QString::fromStdString(file).toLower();
    name.remove('_').remove('-');
    static const std::pair<const char*, CollectiveOp> kNames[] = {
        {"reducescatter", CollectiveOp::ReduceScatter}, {"allreduce", CollectiveOp::AllReduce},
        {"allgather", CollectiveOp::AllGather},         {"alltoall", CollectiveOp::AllToAll},
        {"broadcast", CollectiveOp::Broadcast},         {"bcast", CollectiveOp::Broadcast},
        {"sendrecv", CollectiveOp::SendRecv},           {"reduce", CollectiveOp::Reduce}};
    for (const auto& [key, value] : kNames) {
        if (name.contains(key)) {
            *op = value;
            return true;
        }
    }
    return false;
}

std::string opList(const std::vector<CollectiveOp>& ops)
{
    std::string list;
    for (CollectiveOp op : ops)
        list += (list.empty() ? "" : " or ") + std::string(collectiveOpName(op));
    return list;
}

// The collective: named by the content, else read from the columns, else (with a warning)
// from the file name.
bool decideOp(const Reading& in, const std::vector<CollectiveOp>& candidates,
              const std::string& nameHint, CollectiveOp* op, std::vector<std::string>* warnings,
              std::string* error)
{
    bool ok = false;
    const CollectiveOp named = opFromName(in.name, &ok);
    auto allowed = [&](CollectiveOp o) {
        return candidates.empty() ||
               std::find(candidates.begin(), candidates.end(), o) != candidates.end();
    };
    CollectiveOp fromFile = CollectiveOp::AllReduce;
    const bool haveFile = !nameHint.empty() && opFromFileName(nameHint, &fromFile);
    if (ok) {
        *op = named;
        if (!allowed(named))
            warnings->push_back(in.nameWhere.toStdString() + " names " + collectiveOpName(named) +
                                " but its columns read as " + opList(candidates) + "; " +
                                collectiveOpName(named) + " used");
    } else if (candidates.size() == 1) {
        *op = candidates.front();
    } else if (haveFile && allowed(fromFile)) {
        *op = fromFile;
        warnings->push_back(
            "the content does not name its test: " + std::string(collectiveOpName(fromFile)) +
            " taken from the file name" +
            (candidates.empty() ? "" : " (the columns allow " + opList(candidates) + ")"));
        return true;
    } else if (!candidates.empty()) {
        *op = candidates.front();
        warnings->push_back("the content does not name its test and its columns allow " +
                            opList(candidates) + ": " + collectiveOpName(*op) + " assumed");
    } else {
        *error = "cannot tell which collective this is: the content names no test "
                 "(all_reduce_perf, ...), its columns do not tell, and the file name does not "
                 "name one";
        return false;
    }
    if (haveFile && fromFile != *op)
        warnings->push_back("the file name suggests " + std::string(collectiveOpName(fromFile)) +
                            "; the content reads as " + collectiveOpName(*op) + ", which is used");
    return true;
}

int decideRanks(const Reading& in, CollectiveOp op, int columnRanks,
                std::vector<std::string>* warnings)
{
    const int listed = static_cast<int>(in.ranks.size());
    const bool columnsTell =
        columnRanks >= 2 && (op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather ||
                             op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllToAll);
    if (listed >= 1) {
        // busbw/algbw printed to two decimals cannot tell 2(n-1)/n of neighbouring large n
        // apart: there the rank lines stand.
        const bool indistinct =
            columnsTell && op == CollectiveOp::AllReduce &&
            std::fabs(busBandwidthFactor(op, listed) - busBandwidthFactor(op, columnRanks)) < 0.003;
        if (indistinct)
            return listed;
        if (columnsTell && columnRanks != listed)
            warnings->push_back("the rank lines list " + std::to_string(listed) +
                                " ranks but the columns were computed for " +
                                std::to_string(columnRanks) + "; " + std::to_string(columnRanks) +
                                " used");
        return columnsTell ? columnRanks : listed;
    }
    if (columnsTell) {
        warnings->push_back("no rank lines: " + std::to_string(columnRanks) +
                            " ranks read from the count and bandwidth columns");
        return columnRanks;
    }
    if (in.perProcess >= 2) {
        warnings->push_back("no rank lines: " + std::to_string(in.perProcess) +
                            " ranks from nThread x nGpus (one process; more with MPI)");
        return in.perProcess;
    }
    const bool matters = busBandwidthFactor(op, 2) != busBandwidthFactor(op, 3);
    warnings->push_back(std::string("no rank lines and nothing else tells the rank count: 2 ") +
                        "assumed" + (matters ? " (the fit's busbw depends on it)" : ""));
    return 2;
}

bool finish(Reading in, const std::string& nameHint, MeasurementRun* run, std::string* error)
{
    if (in.rows.empty()) {
        *error = "no nccl-tests result rows found (expected lines of size, count, type, ..., "
                 "time, algbw, busbw)";
        return false;
    }
    MeasurementRun& r = in.run;
    int columnRanks = 0;
    const std::vector<CollectiveOp> candidates =
        candidatesFrom(columnEvidence(in.rows), &columnRanks);
    CollectiveOp op = CollectiveOp::AllReduce;
    if (!decideOp(in, candidates, nameHint, &op, &r.warnings, error))
        return false;
    const int ranks = decideRanks(in, op, columnRanks, &r.warnings);
    int skipped = 0;
    std::string firstSkipped;
    for (const Row& row : in.rows) {
        for (int h = 0; h < 2; ++h) {
            const Half& half = row.half[h];
            if (!half.present)
                continue;
            MeasuredPoint point;
            point.op = op;
            point.bytes = row.size;
            point.ranks = ranks;
            point.hosts = std::max<int>(1, static_cast<int>(in.hosts.size()));
            point.time_s = half.time_us * 1e-6;
            point.algbw_GBps = half.algbw;
            point.busbw_GBps = half.busbw;
            point.in_place = h == 1;
            point.wrong = half.wrong;
            std::optional<std::string> problem = halfProblem(row, half);
            if (!problem)
                problem = detail::pointProblem(point);
            if (problem) {
                if (skipped++ == 0)
                    firstSkipped = "'" + row.text.simplified().toStdString() + "': " + *problem;
                continue;
            }
            addPoint(&r, point);
        }
    }
    const std::string why = std::to_string(skipped) +
                            " measurement(s) outside the stated ranges or with a time or "
                            "bandwidth that is nan, inf, zero or negative (the first, " +
                            firstSkipped + ")";
    if (r.points.empty()) {
        *error = "no usable nccl-tests rows: " + why;
        return false;
    }
    if (skipped > 0)
        r.warnings.push_back("skipped " + why);
    r.hosts = in.hosts;
    *run = std::move(r);
    return true;
}

// nccl-tests writes a non-finite double as "nan" (a string) or, for inf, a bare inf that is
// not JSON; both become null so the document parses and the half is skipped.
std::string sanitizeJson(const std::string& text)
{
    static const QRegularExpression bare(
        "([:\\[,]\\s*)-?(inf|nan|\"nan\"|\"-?inf\")(?=\\s*[,}\\]])");
    return QString::fromStdString(text).replace(bare, "\\1null").toStdString();
}

Half halfFromJson(const QJsonValue& value)
{
    Half half;
    const QJsonObject block = value.toObject();
    if (block.isEmpty())
        return half;
    half.present = true;
    const QJsonValue time = block.contains("time") ? block.value("time") : block.value("cpu_time");
    auto number = [](const QJsonValue& v) { return v.isDouble() ? v.toDouble() : std::nan(""); };
    half.time_us = number(time);
    half.algbw = number(block.value("alg_bw"));
    half.busbw = number(block.value("bus_bw"));
    const QJsonValue wrong = block.value("nwrong");
    half.wrong = wrong.isDouble() ? (wrong.toDouble() > 0 ? 1 : 0) : -1;
    return half;
}

void readJsonDevices(const QJsonArray& devices, Reading* in)
{
    for (const QJsonValue& value : devices) {
        const QJsonObject device = value.toObject();
        noteHost(in, device.value("hostname").toString().toStdString());
        in->ranks.insert(device.value("rank").toInt(static_cast<int>(in->ranks.size())));
        // device_info is the GPU's name; older hand-made files put it in "device".
        const QJsonValue name =
            device.contains("device_info") ? device.value("device_info") : device.value("device");
        in->run.devices.push_back(name.toVariant().toString().trimmed().toStdString());
    }
}

} // namespace

namespace {

// Several runs in one file (a shell loop over all_reduce_perf, reduce_scatter_perf, ...):
// each starts at its header ("# Collective test starting" or "# nThread ...") once the run
// before it has result rows; after a run's rows and its summary ("# Out of bounds values",
// "# Avg bus bandwidth"), what comes before the next header (a command line, a comment) goes
// with the next run.
struct Segment
{
    QStringList lines;
    int firstLine = 1; // 1-based, in the file
};

std::vector<Segment> splitRuns(const QString& text)
{
    static const QRegularExpression header("^#\\s*(nThread\\s+\\d+|Collective test starting)");
    static const QRegularExpression summary("^#?\\s*(Out of bounds|Avg bus bandwidth|$)");
    std::vector<Segment> runs(1);
    bool rows = false;
    int carried = 0; // trailing lines of the current run that start the next one
    const QStringList lines = text.split('\n');
    for (int i = 0; i < lines.size(); ++i) {
        const QString line = lines[i].trimmed();
        if (header.match(line).hasMatch() && rows) {
            Segment next;
            QStringList& last = runs.back().lines;
            next.lines = last.mid(last.size() - carried);
            last.erase(last.end() - carried, last.end());
            next.firstLine = i + 1 - carried;
            runs.push_back(std::move(next));
            rows = false;
            carried = 0;
        }
        runs.back().lines.append(lines[i]);
        Row row;
        if (!line.startsWith('#') && readRow(line, 4, &row)) {
            rows = true;
            carried = 0;
        } else if (carried > 0 || (rows && !summary.match(line).hasMatch())) {
            ++carried; // past the summary: the next run's
        }
    }
    return runs;
}

} // namespace

bool parseNcclTestsLog(const std::string& text, MeasurementRun* run, std::string* error,
                       const std::string& name_hint)
{
    const std::vector<Segment> runs = splitRuns(QString::fromStdString(text));
    if (runs.size() == 1) {
        Reading in;
        in.run.source = "nccl-tests log";
        readLogLines(QString::fromStdString(text), &in);
        return finish(std::move(in), name_hint, run, error);
    }
    // Each run read on its own (the file name names none of them), then one run of them all.
    MeasurementRun all;
    all.source = "nccl-tests log";
    all.complete = true;
    for (size_t k = 0; k < runs.size(); ++k) {
        Reading in;
        in.run.source = all.source;
        readLogLines(runs[k].lines.join('\n'), &in);
        MeasurementRun one;
        const std::string where = "run " + std::to_string(k + 1) + " of " +
                                  std::to_string(runs.size()) + " (from line " +
                                  std::to_string(runs[k].firstLine) + ")";
        if (!finish(std::move(in), {}, &one, error)) {
            *error = where + ": " + *error;
            return false;
        }
        const std::string op = collectiveOpName(one.points.front().op);
        for (const std::string& w : one.warnings)
            all.warnings.push_back(where + ", " + op + ": " + w);
        all.points.insert(all.points.end(), one.points.begin(), one.points.end());
        for (const std::string& host : one.hosts)
            if (std::find(all.hosts.begin(), all.hosts.end(), host) == all.hosts.end())
                all.hosts.push_back(host);
        if (all.devices.empty())
            all.devices = one.devices;
        if (all.nccl_version.empty())
            all.nccl_version = one.nccl_version;
        all.complete = all.complete && one.complete;
    }
    *run = std::move(all);
    return true;
}

bool parseNcclTestsJson(const std::string& text, MeasurementRun* run, std::string* error,
                        const std::string& name_hint)
{
    QJsonObject root;
    if (!json::parseDocument(sanitizeJson(text), &root, error))
        return false;
    const QJsonArray results = root.value("results").toArray();
    if (results.isEmpty()) {
        *error = "an nccl-tests JSON file needs a non-empty \"results\" array";
        return false;
    }
    Reading in;
    in.run.source = "nccl-tests JSON";
    in.run.date = root.value("start_time").toString().toStdString();
    const QJsonValue version = root.value("nccl_version");
    in.run.nccl_version = version.isDouble() ? ncclVersionFromCode(version.toInteger())
                                             : version.toString().toStdString();
    const QJsonObject config = root.value("config").toObject();
    readJsonDevices(config.contains("devices") ? config.value("devices").toArray()
                                               : root.value("devices").toArray(),
                    &in);
    in.perProcess = config.value("nthreads").toInt(1) * config.value("ngpus").toInt(0);
    // The program is argv[0] in "args"; hand-made files may name a "test".
    const QJsonValue args = root.value("args");
    noteName(&in, args.isArray() ? args.toArray().first().toString() : args.toString(),
             "the JSON's args");
    noteName(&in, config.value("test").toString(root.value("test").toString()), "the JSON");
    for (const QJsonValue& value : results) {
        const QJsonObject o = value.toObject();
        Row row;
        row.size = o.value("size").toDouble();
        row.count = o.value("count").toDouble();
        row.type = o.value("type").toString();
        row.hasRedop = o.contains("redop");
        row.redop = o.value("redop").toString().trimmed();
        row.half[0] = halfFromJson(o.value("out_of_place"));
        row.half[1] = halfFromJson(o.value("in_place"));
        row.text = QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)).left(100);
        in.rows.push_back(row);
    }
    in.run.complete = root.contains("average_bus_bandwidth");
    return finish(std::move(in), name_hint, run, error);
}

} // namespace paraplan
