#pragma once

#include "cluster.h"
#include "collectivemodel.h"
#include "computemeasure.h"

#include <string>
#include <vector>

namespace paraplan {

/// One measured collective: nccl-tests' S, ranks, hosts and time.
struct MeasuredPoint
{
    CollectiveOp op = CollectiveOp::AllReduce;
    double bytes = 0;
    int ranks = 0;
    int hosts = 1;
    double time_s = 0;
    double algbw_GBps = 0;
    double busbw_GBps = 0;
    bool in_place = false;
    long long wrong = -1; ///< -1: not checked
};

/// A measured copy: h2d, d2h, d2d (read+write counted) or peer.
struct CopyMeasurement
{
    std::string what;
    int device = -1;
    int src = -1;
    int dst = -1;
    double bytes = 0;
    double time_s = 0;
    double GBps = 0;
    double bidirectional_GBps = 0;
    double latency_us = 0;
};

/// A whole run: the probe's JSON Lines, or an nccl-tests log or JSON file.
struct MeasurementRun
{
    std::string source; ///< "paraplan-probe", "nccl-tests log", "nccl-tests JSON"
    std::string file;
    std::vector<std::string> hosts;
    std::string date;
    std::string nccl_version;
    std::string cuda_version; ///< "CUDA 13.0, driver 13.0" (probe runs)
    std::vector<std::string> devices;
    std::vector<MeasuredPoint> points;
    std::vector<CopyMeasurement> copies;
    ComputeMeasurements compute; ///< protocol 2: GEMMs, attention, HBM, SM clock
    std::vector<std::string> warnings;
    long long warnings_dropped = 0; ///< probe stream: warnings beyond the kept ones
    std::string error;              ///< the run's own error line, if it ended with one
    int error_code = 0;
    bool complete = false; ///< a "done" line (probe) or the closing summary (nccl-tests)
    int progress_done = 0;
    int progress_total = 0;

    /// "paraplan-probe on host1, 2026-11-29, 8 x NVIDIA H100 80GB HBM3, NCCL 2.28.9".
    std::string describe() const;
};

/// The probe's stream, parsed as it arrives: feed() any chunk; complete lines are parsed, a
/// partial last line waits for the rest. Unknown types are ignored; lines that are not JSON
/// become warnings and never stop the parse. Only the first kKeptWarnings warnings are kept
/// (a stream of garbage must not grow without bound); the rest are counted in
/// warnings_dropped, and finish() adds one line saying how many.
class ProbeStreamParser
{
public:
    static constexpr size_t kKeptWarnings = 20;

    enum class Event
    {
        None,
        Hello,
        Device,
        Progress,
        Result,
        Warning,
        Error,
        Done,
        Garbage,
    };

    /// Parses what `chunk` completes; returns the events, in order.
    std::vector<Event> feed(const std::string& chunk);
    /// Parses a final unterminated line, if any.
    std::vector<Event> finish();
    const MeasurementRun& run() const { return m_run; }
    MeasurementRun& run() { return m_run; }
    int protocol() const { return m_protocol; }

private:
    Event parseLine(const std::string& line);
    void warn(std::string message);

    MeasurementRun m_run;
    bool m_summarised = false;
    std::string m_pending;
    int m_protocol = 0;
};

/// nccl-tests text output, every variant from 2019 on: with or without the root and redop
/// columns, #wrong, the older float "error" column or N/A, out-of-place and in-place halves,
/// rank lines with or without their Group column. The collective comes from the content (the
/// "Collective test starting" header or a *_perf command line), else from the columns (size
/// against count x element bytes, busbw against algbw, the redop); `name_hint` (the file
/// name) only as a last resort, with a warning. The rank count comes from the rank lines,
/// checked against the columns. Rows with a nan, inf, zero or negative time or bandwidth are
/// skipped with a counted warning; a log without a usable row is an error.
bool parseNcclTestsLog(const std::string& text, MeasurementRun* run, std::string* error,
                       const std::string& name_hint = {});
/// nccl-tests -J JSON (version, args, nccl_version, config with devices, results), read the
/// same way.
bool parseNcclTestsJson(const std::string& text, MeasurementRun* run, std::string* error,
                        const std::string& name_hint = {});
/// Any of the three, told apart by their content.
bool loadMeasurements(const std::string& path, MeasurementRun* run, std::string* error);

/// A latency + bandwidth fit of one collective series: t = alpha + S x factor / B.
struct AlphaBetaFit
{
    CollectiveOp op = CollectiveOp::AllReduce;
    int ranks = 0;
    int hosts = 1;
    int points = 0;
    double alpha_s = 0;
    double busbw_GBps = 0;
    double residual = 0; ///< RMS of the relative error over the points
    /// Why no fit could be made (alpha and busbw are then 0 and mean nothing): the sizes span
    /// less than a factor of 2, so latency and bandwidth cannot be told apart.
    std::string problem;

    /// The bus bandwidth (GB/s) the fit predicts for an S-byte call: factor S / t(S) with
    /// t(S) = alpha + factor S / busbw (factor: the op's bus-bandwidth factor at these ranks).
    double busbwAt(double bytes) const;
};
/// Least squares on the relative error (large and small messages weigh alike). Points whose
/// sizes span less than a factor of 2 (all at one size, say) cannot separate the latency from
/// the bandwidth: the fit then carries a `problem` and no figures.
AlphaBetaFit fitAlphaBeta(CollectiveOp op, int ranks, const std::vector<MeasuredPoint>& points);
/// One fit per (op, ranks, hosts) series of the run, out-of-place points only; series that
/// cannot be fitted are left out (and put in `refused`, when given). loadMeasurements() adds a
/// warning for each.
std::vector<AlphaBetaFit> fitRun(const MeasurementRun& run,
                                 std::vector<AlphaBetaFit>* refused = nullptr);

/// An assumed figure of the cluster that a measurement can replace.
struct MeasuredFigure
{
    std::string figure; ///< "nvlink_ring_efficiency", "nvls_efficiency", "nic_efficiency",
                        ///< "pcie_efficiency"
    double value = 0;
    double assumed = 0;
    std::string why; ///< how the value follows from the fit
    std::string run; ///< MeasurementRun::describe()
};
/// What the run can replace on `cluster`: intra-node all_reduce fits give the NVLink (or NVLS,
/// or PCIe) efficiency, inter-node ones the NIC efficiency.
std::vector<MeasuredFigure> proposeMeasuredFigures(const MeasurementRun& run,
                                                   const std::vector<AlphaBetaFit>& fits,
                                                   const ClusterSpec& cluster);
struct Plan;
/// What the run's compute records replace on `plan`: gemm_peak_fraction from the best grid
/// GEMM of at least 4096 a side in the plan's dtype (the median GPU), hbm_fraction from the best
/// STREAM triad; neither when it exceeds the datasheet figure (a broken record or another GPU).
/// Unfused attention is reported but replaces nothing (it runs as GEMMs).
std::vector<MeasuredFigure> proposeComputeFigures(const MeasurementRun& run, const Plan& plan,
                                                  const HardwareCatalog& catalog);
/// Applies a measured figure to the plan's cluster and records it (replacing an earlier
/// measurement of the same figure); reverting puts the assumed value back and forgets it.
bool applyMeasurementToPlan(const MeasuredFigure& figure, Plan* plan);
bool revertMeasurementOfPlan(const std::string& figure, Plan* plan, const HardwareCatalog& catalog);

/// Sets the figure on the cluster as a measurement, with the run as its source.
bool applyMeasuredFigure(const MeasuredFigure& figure, ClusterSpec* cluster);
/// Puts the assumed value back.
bool revertMeasuredFigure(const MeasuredFigure& figure, ClusterSpec* cluster);

} // namespace paraplan
