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

// A network boundary (node, rack) between the sweep's points at `x` and beyond: a solid
// coloured line, unlike the dotted grey grid, the side past it lightly shaded, and a label at
// the top of the axes, just left of the line (the side past it is often narrow), or right of it
// where the left has less room.
QCPItemText* addBoundary(QCustomPlot* plot, double x, const QString& text)
{
    const QPen pen = plotstyle::boundaryPen();
    auto* shade = new QCPItemRect(plot);
    shade->setLayer("grid");
    for (QCPItemPosition* corner : {shade->topLeft, shade->bottomRight}) {
        corner->setTypeX(QCPItemPosition::ptPlotCoords);
        corner->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    shade->topLeft->setCoords(x, 0);
    shade->bottomRight->setCoords(x * 1e6, 1);
    QColor fill = pen.color();
    fill.setAlpha(22);
    shade->setBrush(fill);
    shade->setPen(Qt::NoPen);
    shade->setSelectable(false);
    auto* line = new QCPItemStraightLine(plot);
    line->setObjectName("boundary");
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(pen);
    auto* label = new QCPItemText(plot);
    label->setObjectName("boundary label");
    label->setText(text);
    label->setFont(QFont(QFont().family(), 8, QFont::Bold));
    label->setColor(pen.color());
    label->setTextAlignment(Qt::AlignRight);
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(x, 0.02);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    label->setPadding(QMargins(2, 0, 4, 0));
    label->setClipToAxisRect(true);
    // Where the axes leave too little room left of the line for the label (a boundary near
    // the left end of the range: "rack: 72 GPUs" on a sweep from 64), it goes right of the line
    // instead, over the shaded side, rather than being cut at the axes' edge.
    QObject::connect(plot, &QCustomPlot::beforeReplot, label, [plot, label, x] {
        const QFontMetrics metrics(label->font());
        int width = 0;
        for (const QString& part : label->text().split('\n'))
            width = std::max(width, metrics.horizontalAdvance(part));
        const double line = plot->xAxis->coordToPixel(x);
        const double room = line - plot->axisRect()->left();
        const bool left = room >= width + 8 || room >= plot->axisRect()->right() - line;
        label->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
        label->setTextAlignment(left ? Qt::AlignRight : Qt::AlignLeft);
        label->setPadding(left ? QMargins(2, 0, 4, 0) : QMargins(4, 0, 2, 0));
    });
    return label;
}

} // namespace

TpSweepPlot::TpSweepPlot(QWidget* parent) : PlotView(tr("Throughput by TP degree"), parent)
{
    plot()->xAxis->setLabel(tr("tensor-parallel degree"));
    plot()->yAxis->setLabel(tr("throughput (tokens/s)"));
    plot()->yAxis2->setLabel(tr("step time (s)"));
    plot()->yAxis2->setVisible(true);
    useLog2Axis(plot()->xAxis);
    plot()->legend->setWrap(2);
}

void TpSweepPlot::setResults(const PlanResults& r)
{
    clearPlottables();
    const PlanAnalysis& a = r.analysis;
    // At the plan's GPU count, a line; past the node where those GPUs cannot hold a replica,
    // hollow points on the GPUs they need, their tokens/s scaled to the plan's GPU count.
    auto scaled = [&](const TpSweepPoint& point) {
        return point.gpus == a.plan_gpus || point.gpus <= 0
                   ? point.tokens_per_s
                   : point.tokens_per_s * double(a.plan_gpus) / double(point.gpus);
    };
    QVector<double> degrees, tokensPerS, stepS;
    for (const TpSweepPoint& point : a.tp) {
        if (point.gpus != a.plan_gpus)
            continue;
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
    QCPGraph* more = nullptr;
    for (const TpSweepPoint& point : a.tp) {
        if (point.gpus == a.plan_gpus || !point.ok)
            continue;
        if (!more) {
            more = plot()->addGraph(plot()->xAxis, plot()->yAxis);
            more->setName(tr("on more GPUs, per GPU x %1").arg(a.plan_gpus));
            more->setProperty("yUnit", "tokens/s");
            more->setPen(QPen(colour(0), 1.5, Qt::DotLine));
            more->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(colour(0), 1.5),
                                                  QBrush(Qt::white), 8));
        }
        more->addData(point.tp, scaled(point));
        auto* label = new QCPItemText(plot());
        label->position->setCoords(point.tp, scaled(point));
        label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        label->setText(tr("%1 GPUs").arg(point.gpus) + "\n");
        label->setFont(QFont(QFont().family(), 7));
        label->setColor(QColor(60, 60, 60));
    }
    QCPGraph* overflow = plot()->addGraph(plot()->xAxis, plot()->yAxis);
    overflow->setName(tr("does not fit in memory"));
    overflow->setProperty("yUnit", "tokens/s");
    overflow->setLineStyle(QCPGraph::lsNone);
    overflow->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCrossCircle,
                                              QPen(QColor(190, 30, 30), 1.5), Qt::NoBrush, 11));
    for (const TpSweepPoint& point : a.tp) {
        if (point.ok && !point.fits)
            overflow->addData(point.tp, scaled(point));
    }
    QCPGraph* current = plot()->addGraph(plot()->xAxis, plot()->yAxis);
    current->setName(tr("this plan"));
    current->setProperty("yUnit", "tokens/s");
    current->setLineStyle(QCPGraph::lsNone);
    current->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(Qt::black, 2), QBrush(colour(5)), 12));
    current->addData(r.plan.parallel.tp, r.cost.metrics.tokens_per_s);
    // The NVSwitch (node) domain: TP past it crosses the network. The line sits halfway (on
    // the log axis) between the node's size and the next degree.
    // A rack-scale NVLink domain (72 GPUs of NVL72) is no power of two: its line sits at its size.
    const int domain = a.nvlink_domain_gpus;
    const bool pow2 = domain > 0 && (domain & (domain - 1)) == 0;
    if (!r.plan.cluster.is_torus)
        addBoundary(plot(), pow2 ? domain * std::sqrt(2.0) : double(domain),
                    domain > a.gpus_per_node
                        ? tr("NVLink domain:\n%1 GPUs (%2 nodes)\npast it: network")
                              .arg(domain)
                              .arg(domain / std::max(1, a.gpus_per_node))
                        : tr("node: %1 GPUs\npast it: network").arg(domain));
    bool anyValid = false;
    double maxTokens = 0, maxStep = 0;
    int maxTp = std::max(2, a.nvlink_domain_gpus * 2);
    for (const TpSweepPoint& point : a.tp) {
        maxTp = std::max(maxTp, point.tp);
        if (point.ok) {
            anyValid = true;
            maxTokens = std::max(maxTokens, scaled(point));
            if (point.gpus == a.plan_gpus)
                maxStep = std::max(maxStep, point.step_s);
        }
    }
    plot()->xAxis->setRange(0.8, maxTp * 1.5);
    if (anyValid) {
        // Head room above the points for the boundary's label.
        plot()->yAxis->setRange(0, maxTokens * 1.45);
        plot()->yAxis2->setRange(0, std::max(maxStep, 1e-6) * 1.45);
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
    connect(plot(), &QCustomPlot::afterLayout, this, &BandwidthPlot::placeLabels);
}

void BandwidthPlot::placeLabels()
{
    const QRectF area = plot()->axisRect()->rect();
    const Qt::Alignment corners[] = {Qt::AlignLeft | Qt::AlignTop, Qt::AlignRight | Qt::AlignBottom,
                                     Qt::AlignRight | Qt::AlignTop,
                                     Qt::AlignLeft | Qt::AlignBottom};
    std::vector<QRectF> placed;
    for (const auto& [label, point] : m_labels) {
        const QPointF at(plot()->xAxis->coordToPixel(point.x()),
                         plot()->yAxis->coordToPixel(point.y()));
        const QSizeF size = QFontMetricsF(label->font())
                                .boundingRect(QRectF(), Qt::AlignLeft, label->text())
                                .size();
        // Each corner, then moved away from the point by up to four label heights, until the
        // label is inside the axes and clear of the labels placed before it; where no place is
        // clear, the first inside the axes (over another label rather than cut at the edge),
        // and failing that the first tried.
        int best = -1; // 2: inside and clear, 1: inside, 0: tried
        QRectF chosen;
        for (int shift = 0; shift <= 4 && best < 2; ++shift) {
            for (Qt::Alignment corner : corners) {
                const double dy = shift * size.height();
                const bool below = corner & Qt::AlignTop;
                const QPointF topLeft(corner & Qt::AlignRight ? at.x() - size.width() : at.x(),
                                      below ? at.y() + dy : at.y() - size.height() - dy);
                const QRectF rect(topLeft, size);
                const bool inside = area.contains(rect);
                const bool clear =
                    std::none_of(placed.begin(), placed.end(),
                                 [&](const QRectF& other) { return other.intersects(rect); });
                const int score = inside ? (clear ? 2 : 1) : 0;
                if (score <= best)
                    continue;
                best = score;
                chosen = rect;
                label->setPositionAlignment(corner);
                label->setTextAlignment(corner & Qt::AlignRight ? Qt::AlignRight : Qt::AlignLeft);
                label->position->setPixelPosition(
                    QPointF(at.x(), below ? at.y() + dy : at.y() - dy));
                if (best == 2)
                    break;
            }
        }
        placed.push_back(chosen);
    }
}

void BandwidthPlot::setResults(const PlanResults& r)
{
    clearPlottables();
    m_labels.clear(); // removed with the plot's items
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
        // Within a factor of 4 either way the labels would overlap on the log axes: one
        // label, one line per collective.
        auto same = std::find_if(points.begin(), points.end(), [&](const auto& p) {
            return std::fabs(std::log10(p.first.x() / at.x())) < 0.6 &&
                   std::fabs(std::log10(p.first.y() / at.y())) < 0.6;
        });
        if (same == points.end())
            points.push_back({at, {QString::fromStdString(point.name)}});
        else
            same->second << QString::fromStdString(point.name);
        low = std::min(low, at.y());
        high = std::max(high, at.y());
    }
    std::sort(points.begin(), points.end(),
              [](const auto& a, const auto& b) { return a.first.x() < b.first.x(); });
    for (const auto& [at, names] : points) {
        used->addData(at.x(), at.y());
        auto* label = new QCPItemText(plot());
        label->position->setCoords(at.x(), at.y());
        // Labels near the right edge go above and to the left of their point, the others
        // below and to the right, so neighbours on one curve do not collide.
        const bool right = at.x() > 3e8;
        label->setPositionAlignment(right ? (Qt::AlignRight | Qt::AlignBottom)
                                          : (Qt::AlignLeft | Qt::AlignTop));
        QStringList lines;
        for (const QString& name : names)
            lines << " " + name + " ";
        label->setText(lines.join("\n"));
        label->setTextAlignment(right ? Qt::AlignRight : Qt::AlignLeft);
        m_labels.emplace_back(label, at);
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
    // Past the largest message this plan sends, so that its point and label are inside.
    double largest = 1.6e10;
    for (const auto& point : points)
        largest = std::max(largest, point.first.x() * 4);
    plot()->xAxis->setRange(1e3, largest);
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
    // The rack boundary halfway (on the log axis) between the last size that fits one rack and
    // the next.
    // Only where the sweep crosses it: a sweep that starts past one rack (DeepSeek-V3 on 512
    // GPUs, racks of 256) would put the line left of the axes and cut its label there.
    const bool crossed = !a.scaling_step.x.empty() &&
                         a.rack_boundary_gpus * std::sqrt(2.0) > a.scaling_step.x.front() / 1.4 &&
                         a.rack_boundary_gpus * std::sqrt(2.0) < a.scaling_step.x.back() * 1.4;
    if (a.rack_boundary_gpus > 0 && crossed)
        addBoundary(plot(), a.rack_boundary_gpus * std::sqrt(2.0),
                    tr("rack: %1 GPUs").arg(a.rack_boundary_gpus));
    if (!a.scaling_step.x.empty()) {
        plot()->xAxis->setRange(a.scaling_step.x.front() / 1.4, a.scaling_step.x.back() * 1.4);
        plot()->yAxis->setRange(0, high * 1.2);
    }
    queueReplot();
}

WhatIfPlot::WhatIfPlot(QWidget* parent) : PlotView(tr("What-if: step time"), parent)
{
    plot()->xAxis->setLabel(tr("step time (s)"));
    plot()->legend->setVisible(false);
}

void WhatIfPlot::setResults(const PlanResults& r)
{
    clearPlottables();
    // Horizontal bars, "as planned" on top: every label is written level beside its bar and
    // none runs off, however narrow the plot.
    auto* bars = new QCPBars(plot()->yAxis, plot()->xAxis);
    bars->setName(tr("step time"));
    bars->setProperty("yUnit", "s");
    bars->setBrush(colour(0));
    bars->setPen(QPen(colour(0).darker(130)));
    bars->setWidth(0.6);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double high = 0;
    const PlanAnalysis& a = r.analysis;
    const int count = static_cast<int>(a.what_if_labels.size());
    for (int i = 0; i < count; ++i) {
        const double key = count - i;
        const double value = a.what_if_step_s[size_t(i)];
        bars->addData(key, value);
        ticker->addTick(key, QString::fromStdString(a.what_if_labels[size_t(i)]));
        high = std::max(high, value);
        auto* label = new QCPItemText(plot());
        label->setObjectName("bar label");
        label->position->setCoords(value, key);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        const double change = a.what_if_step_s[0] > 0 ? value / a.what_if_step_s[0] - 1 : 0;
        label->setText(
            " " +
            (i == 0 ? QString::fromStdString(units::formatSeconds(value))
                    : QString("%1%2%").arg(change >= 0 ? "+" : "").arg(100 * change, 0, 'f', 1)));
        label->setFont(QFont(QFont().family(), 8));
        label->setClipToAxisRect(false);
    }
    plot()->yAxis->setTicker(ticker);
    plot()->yAxis->setRange(0.4, count + 0.6);
    plot()->xAxis->setRange(0, std::max(high, 1e-6) * 1.25);
    queueReplot();
}

} // namespace paraplan::ui
