// The four bandwidth-cliff plots: TP degree, message size, data-parallel scaling and the
// what-ifs. The series come from core/engine/analysis (PlanAnalysis); these only draw them.

#include "plots.h"

#include "plotstyle.h"
#include "units.h"

#include <qcustomplot.h>

#include <algorithm>

#include <cmath>

namespace paraplan::ui {

using plotstyle::colour;

namespace {

// A log-2 axis labelled with plain integers (TP degrees, GPU counts).
void useLog2Axis(QCPAxis* axis)
{
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setLogBase(2);
    ticker->setSubTickCount(0);
    axis->setTicker(ticker);
    axis->setNumberFormat("f");
    axis->setNumberPrecision(0);
}

// A dotted vertical line at x marking a boundary (node, rack), with a small grey label the
// caller places.
QCPItemText* addBoundary(QCustomPlot* plot, double x, const QString& text)
{
    auto* line = new QCPItemStraightLine(plot);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(QColor(120, 120, 120), 1, Qt::DotLine));
    auto* label = new QCPItemText(plot);
    label->setText(text);
    label->setFont(QFont(QFont().family(), 8));
    label->setColor(QColor(90, 90, 90));
    label->setClipToAxisRect(true);
    return label;
}

} // namespace

TpSweepPlot::TpSweepPlot(QWidget* parent)
    : PlotView(tr("Throughput by TP degree (same GPUs)"), parent)
{
    plot()->xAxis->setLabel(tr("tensor-parallel degree"));
    plot()->yAxis->setLabel(tr("throughput (tokens/s)"));
    plot()->yAxis2->setLabel(tr("step time (s)"));
    plot()->yAxis2->setVisible(true);
    useLog2Axis(plot()->xAxis);
}

void TpSweepPlot::setResults(const PlanResults& r)
{
    clearPlottables();
    const PlanAnalysis& a = r.analysis;
    QVector<double> degrees, tokensPerS, stepS;
    for (const TpSweepPoint& point : a.tp) {
        degrees.push_back(point.tp);
        tokensPerS.push_back(point.ok ? point.tokens_per_s : std::nan(""));
        stepS.push_back(point.ok ? point.step_s : std::nan(""));
    }
    QCPGraph* tokens = plot()->addGraph(plot()->xAxis, plot()->yAxis);
    tokens->setName(tr("tokens/s"));
    tokens->setProperty("yUnit", "tokens/s");
    tokens->setPen(QPen(colour(0), 2));
    tokens->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
    tokens->setData(degrees, tokensPerS, true);
    QCPGraph* step = plot()->addGraph(plot()->xAxis, plot()->yAxis2);
    step->setName(tr("step time"));
    step->setProperty("yUnit", "s");
    step->setPen(QPen(colour(1), 1.5, Qt::DashLine));
    step->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 5));
    step->setData(degrees, stepS, true);
    QCPGraph* overflow = plot()->addGraph(plot()->xAxis, plot()->yAxis);
    overflow->setName(tr("does not fit in memory"));
    overflow->setProperty("yUnit", "tokens/s");
    overflow->setLineStyle(QCPGraph::lsNone);
    overflow->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCrossCircle,
                                              QPen(QColor(190, 30, 30), 1.5), Qt::NoBrush, 11));
    for (const TpSweepPoint& point : a.tp) {
        if (point.ok && !point.fits)
            overflow->addData(point.tp, point.tokens_per_s);
    }
    QCPGraph* current = plot()->addGraph(plot()->xAxis, plot()->yAxis);
    current->setName(tr("this plan"));
    current->setProperty("yUnit", "tokens/s");
    current->setLineStyle(QCPGraph::lsNone);
    current->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(Qt::black, 2), QBrush(colour(5)), 12));
    current->addData(r.plan.parallel.tp, r.cost.metrics.tokens_per_s);
    // The NVSwitch (node) domain: TP beyond it crosses the network.
    if (!r.plan.cluster.is_torus) {
        QCPItemText* label = addBoundary(plot(), a.gpus_per_node,
                                         tr("node boundary (%1 GPUs) ").arg(a.gpus_per_node));
        label->position->setCoords(a.gpus_per_node, 0);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    }
    bool anyValid = false;
    double maxTokens = 0, maxStep = 0;
    for (const TpSweepPoint& point : a.tp) {
        if (point.ok) {
            anyValid = true;
            maxTokens = std::max(maxTokens, point.tokens_per_s);
            maxStep = std::max(maxStep, point.step_s);
        }
    }
    plot()->xAxis->setRange(0.8, std::max(2.0, a.tp.empty() ? 2.0 : double(a.tp.back().tp)) * 1.25);
    if (anyValid) {
        plot()->yAxis->setRange(0, maxTokens * 1.15);
        plot()->yAxis2->setRange(0, maxStep * 1.15);
    }
    queueReplot();
}

BandwidthPlot::BandwidthPlot(QWidget* parent)
    : PlotView(tr("Bus bandwidth by message size"), parent)
{
    plot()->xAxis->setLabel(tr("all_reduce message size S (bytes)"));
    plot()->yAxis->setLabel(tr("assumed bus bandwidth (GB/s)"));
    plot()->legend->setWrap(2);
    for (QCPAxis* axis : {plot()->xAxis, plot()->yAxis})
        plotstyle::useLog10Axis(axis);
}

void BandwidthPlot::setResults(const PlanResults& r)
{
    clearPlottables();
    int i = 0;
    double low = 1e300, high = 0;
    for (const SweepSeries& series : r.analysis.bandwidth) {
        QCPGraph* graph = plot()->addGraph();
        graph->setName(QString::fromStdString(series.name));
        graph->setProperty("xUnit", "B");
        graph->setProperty("yUnit", "GB/s");
        graph->setPen(QPen(colour(i++), 2));
        graph->setData(QVector<double>(series.x.begin(), series.x.end()),
                       QVector<double>(series.y.begin(), series.y.end()), true);
        for (double y : series.y) {
            low = std::min(low, y);
            high = std::max(high, y);
        }
    }
    // The message sizes this plan actually sends, on their own tiers.
    QCPGraph* used = plot()->addGraph();
    used->setName(tr("this plan's collectives"));
    used->setProperty("xUnit", "B");
    used->setProperty("yUnit", "GB/s");
    used->setLineStyle(QCPGraph::lsNone);
    used->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(Qt::black, 1.5), QBrush(colour(5)), 10));
    // Collectives of the same size share one label.
    std::vector<std::pair<QPointF, QStringList>> points;
    for (const SweepSeries& point : r.analysis.bandwidth_used) {
        const QPointF at(point.x.front(), point.y.front());
        auto same = std::find_if(points.begin(), points.end(), [&](const auto& p) {
            return std::fabs(p.first.x() / at.x() - 1) < 0.25 &&
                   std::fabs(p.first.y() / at.y() - 1) < 0.25;
        });
        if (same == points.end())
            points.push_back({at, {QString::fromStdString(point.name)}});
        else
            same->second << QString::fromStdString(point.name);
        low = std::min(low, at.y());
        high = std::max(high, at.y());
    }
    for (const auto& [at, names] : points) {
        used->addData(at.x(), at.y());
        auto* label = new QCPItemText(plot());
        label->position->setCoords(at.x(), at.y());
        // Labels near the right edge go above and to the left of their point, the others
        // below and to the right, so neighbours on one curve do not collide.
        const bool right = at.x() > 3e8;
        label->setPositionAlignment(right ? (Qt::AlignRight | Qt::AlignBottom)
                                          : (Qt::AlignLeft | Qt::AlignTop));
        const QString text = names.join(", ");
        label->setText(right ? text + " " : " " + text);
        label->setFont(QFont(QFont().family(), 8));
        label->setClipToAxisRect(true);
    }
    // Measured curves, fitted, beside the assumed ones (dashed, one per series).
    int m = 0;
    for (const AlphaBetaFit& fit : m_measured) {
        QCPGraph* graph = plot()->addGraph();
        graph->setName(tr("measured: %1, %2 ranks%3")
                           .arg(collectiveOpName(fit.op))
                           .arg(fit.ranks)
                           .arg(fit.hosts > 1 ? tr(" on %1 hosts").arg(fit.hosts) : QString()));
        graph->setProperty("xUnit", "B");
        graph->setProperty("yUnit", "GB/s");
        graph->setPen(QPen(colour(3 + m++), 2, Qt::DashLine));
        for (double bytes = SweepBounds::kMinBytes; bytes <= SweepBounds::kMaxBytes * 1.0001;
             bytes *= 2)
            graph->addData(bytes, fit.busbwAt(bytes));
    }
    plot()->xAxis->setRange(1e3, 1.6e10);
    if (high > 0)
        plot()->yAxis->setRange(std::max(low / 2, 1e-3), high * 3);
    queueReplot();
}

void BandwidthPlot::setMeasured(const std::vector<AlphaBetaFit>& fits)
{
    m_measured = fits;
}

ScalingPlot::ScalingPlot(QWidget* parent) : PlotView(tr("Data-parallel scaling"), parent)
{
    plot()->xAxis->setLabel(tr("GPUs (DP grows; TP x PP x CP fixed)"));
    plot()->yAxis->setLabel(tr("step time (s)"));
    plot()->yAxis2->setLabel(tr("DP sync per step (s)"));
    plot()->yAxis2->setVisible(true);
    useLog2Axis(plot()->xAxis);
}

void ScalingPlot::setResults(const PlanResults& r)
{
    clearPlottables();
    int i = 0;
    double high = 0;
    double highSync = 0;
    const PlanAnalysis& a = r.analysis;
    for (const SweepSeries* series :
         {&a.scaling_step, &a.scaling_dp_total, &a.scaling_dp_exposed}) {
        if (series->x.empty())
            continue;
        const bool step = series == &a.scaling_step;
        QCPGraph* graph = plot()->addGraph(plot()->xAxis, step ? plot()->yAxis : plot()->yAxis2);
        graph->setName(QString::fromStdString(series->name));
        graph->setProperty("yUnit", "s");
        const Qt::PenStyle style = i == 2 ? Qt::DashLine : Qt::SolidLine;
        graph->setPen(QPen(colour(i), 2, style));
        ++i;
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        graph->setData(QVector<double>(series->x.begin(), series->x.end()),
                       QVector<double>(series->y.begin(), series->y.end()), true);
        for (double y : series->y)
            (step ? high : highSync) = std::max(step ? high : highSync, y);
    }
    plot()->yAxis2->setRange(0, std::max(highSync, 1e-6) * 1.3);
    if (a.rack_boundary_gpus > 0) {
        const bool right =
            !a.scaling_step.x.empty() && a.rack_boundary_gpus * 3 > a.scaling_step.x.back();
        QCPItemText* label =
            addBoundary(plot(), a.rack_boundary_gpus,
                        right ? tr("one rack: %1 GPUs ").arg(a.rack_boundary_gpus)
                              : tr(" one rack: %1 GPUs").arg(a.rack_boundary_gpus));
        label->position->setCoords(a.rack_boundary_gpus, high * 1.1);
        label->setPositionAlignment((right ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    }
    if (!a.scaling_step.x.empty()) {
        plot()->xAxis->setRange(a.scaling_step.x.front() / 1.4, a.scaling_step.x.back() * 1.4);
        plot()->yAxis->setRange(0, high * 1.2);
    }
    queueReplot();
}

WhatIfPlot::WhatIfPlot(QWidget* parent) : PlotView(tr("What-if: step time"), parent)
{
    plot()->yAxis->setLabel(tr("step time (s)"));
    plot()->legend->setVisible(false);
}

void WhatIfPlot::setResults(const PlanResults& r)
{
    clearPlottables();
    auto* bars = new QCPBars(plot()->xAxis, plot()->yAxis);
    bars->setName(tr("step time"));
    bars->setProperty("yUnit", "s");
    bars->setBrush(colour(0));
    bars->setPen(QPen(colour(0).darker(130)));
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double high = 0;
    const PlanAnalysis& a = r.analysis;
    const int count = static_cast<int>(a.what_if_labels.size());
    for (int i = 0; i < count; ++i) {
        bars->addData(i + 1, a.what_if_step_s[size_t(i)]);
        ticker->addTick(i + 1, QString::fromStdString(a.what_if_labels[size_t(i)]));
        high = std::max(high, a.what_if_step_s[size_t(i)]);
        auto* label = new QCPItemText(plot());
        label->position->setCoords(i + 1, a.what_if_step_s[size_t(i)]);
        label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        const double change = a.what_if_step_s[size_t(i)] / a.what_if_step_s[0] - 1;
        label->setText(
            i == 0 ? QString::fromStdString(units::formatSeconds(a.what_if_step_s[size_t(i)]))
                   : QString("%1%2%").arg(change >= 0 ? "+" : "").arg(100 * change, 0, 'f', 1));
        label->setFont(QFont(QFont().family(), 8));
    }
    plot()->xAxis->setTicker(ticker);
    plot()->xAxis->setTickLabelRotation(count > 4 ? 20 : 0);
    plot()->xAxis->setRange(0.4, count + 0.6);
    plot()->yAxis->setRange(0, high * 1.2);
    queueReplot();
}

} // namespace paraplan::ui
