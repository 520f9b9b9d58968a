#include "computeplot.h"

#include "kernels.h"
#include "measurement.h"
#include "plan.h"
#include "plotstyle.h"

#include <qcustomplot.h>

#include <cmath>
#include <map>

namespace paraplan::ui {

GemmPlot::GemmPlot(QWidget* parent)
    : PlotView(tr("Measured GEMM rate by size, and the engine's assumption"), parent)
{
    plot()->xAxis->setLabel(
        tr("GEMM size: M = N = K, or (M N K batch)^(1/3) for the plan's shapes"));
    plot()->yAxis->setLabel(tr("TFLOP/s"));
    // A log-2 axis labelled with plain integers: 1024, 2048, ... 16384.
    plot()->xAxis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setLogBase(2);
    ticker->setSubTickCount(0);
    plot()->xAxis->setTicker(ticker);
    plot()->xAxis->setNumberFormat("f");
    plot()->xAxis->setNumberPrecision(0);
    plot()->xAxis->setRange(700, 24000);
    plot()->yAxis->setRange(0, 1000);
    setEmptyText(tr("No GEMMs measured yet: measure this machine\nor import a probe run."));
}

void GemmPlot::setData(const ComputeMeasurements& measured, const Plan& plan,
                       const HardwareCatalog& catalog)
{
    clearPlottables();
    // x: the cube root of the GEMM's multiply-adds (M for a square one), so that the grid and
    // the plan's rectangular shapes share one axis.
    auto side = [](double m, double n, double k, double batch) {
        return std::cbrt(m * n * k * batch);
    };
    std::map<std::string, QCPGraph*> series;
    int next = 0;
    for (const GemmMeasurement& g : measured.gemms) {
        const std::string key = g.shape == "grid" ? g.dtype : "plan GEMMs";
        QCPGraph*& graph = series[key];
        if (!graph) {
            graph = plot()->addGraph();
            graph->setName(QString::fromStdString(key));
            graph->setProperty("xUnit", "");
            graph->setProperty("yUnit", "TFLOP/s");
            graph->setLineStyle(QCPGraph::lsNone);
            const bool grid = g.shape == "grid";
            const QCPScatterStyle::ScatterShape shape =
                !grid               ? QCPScatterStyle::ssDiamond
                : g.dtype == "fp16" ? QCPScatterStyle::ssSquare
                : g.dtype == "fp8"  ? QCPScatterStyle::ssTriangle
                                    : QCPScatterStyle::ssCircle;
            graph->setScatterStyle(QCPScatterStyle(
                shape, QPen(plotstyle::colour(next), 1.5),
                grid ? Qt::NoBrush : QBrush(plotstyle::colour(next)), grid ? 6 : 9));
            ++next;
        }
        graph->addData(side(g.m, g.n, g.k, g.batch), g.tflops);
    }
    // What the engine assumes: the plan's GEMM share of peak with the tile and wave model,
    // compute-bound (the roofline's other side only matters for thin GEMMs).
    const GpuSpec* gpu = catalog.gpu(plan.cluster.gpu_id);
    if (gpu) {
        const double peak = gpu->peakTflops(plan.training.dtype);
        const double share = plan.figures.gemm_peak_fraction.value;
        QCPGraph* assumed = plot()->addGraph();
        assumed->setName(tr("assumed, %1").arg(dtypeName(plan.training.dtype)));
        assumed->setProperty("yUnit", "TFLOP/s");
        assumed->setPen(QPen(Qt::black, 1.5, Qt::DashLine));
        // At the probe's grid sizes only: between them the tile and wave model zigzags where
        // nothing was measured.
        for (double n : {1024, 2048, 4096, 8192, 16384})
            assumed->addData(n, peak * kernels::gemmEfficiency(gpu->kernels, share, n, n, n));
    }
    if (measured.gemms.empty())
        setEmptyText(tr("No GEMMs measured yet: measure this machine or import\n"
                        "a probe run. The dashed line is the rate the engine assumes."));
    if (plot()->plottableCount() == 0) {
        queueReplot();
        return;
    }
    plot()->rescaleAxes();
    plot()->xAxis->setRange(plot()->xAxis->range().lower / 1.3, plot()->xAxis->range().upper * 1.3);
    plot()->yAxis->setRangeLower(0);
    plot()->yAxis->setRangeUpper(plot()->yAxis->range().upper * 1.1);
    queueReplot();
}

} // namespace paraplan::ui
