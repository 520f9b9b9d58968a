#include "plots.h"

#include "units.h"

#include <qcustomplot.h>

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

#include <cmath>

namespace paraplan::ui {
namespace {

// A colour-blind-safe palette (Okabe and Ito).
const QColor kPalette[] = {QColor(0, 114, 178),   QColor(230, 159, 0),   QColor(0, 158, 115),
                           QColor(204, 121, 167), QColor(86, 180, 233),  QColor(213, 94, 0),
                           QColor(240, 228, 66),  QColor(120, 120, 120), QColor(0, 0, 0)};

QColor colour(int i)
{
    return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

QString formatValue(double value, const QString& unit)
{
    if (unit == "s")
        return QString::fromStdString(units::formatSeconds(value));
    if (unit == "B")
        return QString::fromStdString(units::formatBytes(value));
    return QString::fromStdString(units::formatNumber(value, 4)) +
           (unit.isEmpty() ? "" : " " + unit);
}

void styleAxes(QCustomPlot* plot)
{
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->yAxis2}) {
        axis->setLabelFont(QFont(QFont().family(), 9));
        axis->setTickLabelFont(QFont(QFont().family(), 8));
    }
}

QCPBars* stackedBar(QCPAxis* key, QCPAxis* value, const QString& name, const QColor& c,
                    QCPBars* below)
{
    auto* bars = new QCPBars(key, value);
    bars->setName(name);
    bars->setPen(QPen(c.darker(130)));
    bars->setBrush(c);
    bars->setWidth(0.6);
    if (below)
        bars->moveAbove(below);
    return bars;
}

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

PlotView::PlotView(const QString& title, QWidget* parent) : QWidget(parent), m_title(title)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(320, 220);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->plotLayout()->insertRow(0);
    auto* titleElement =
        new QCPTextElement(m_plot, title, QFont(QFont().family(), 10, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, titleElement);
    // The legend sits in its own row under the axes, so it never hides data.
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(2, 0, legendRow);
    legendRow->setMargins(QMargins(5, 0, 5, 5));
    legendRow->addElement(0, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(3);
    m_plot->legend->setFont(QFont(QFont().family(), 8));
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    styleAxes(m_plot);
    m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_plot, &QCustomPlot::customContextMenuRequested, this, &PlotView::showContextMenu);
    connect(m_plot, &QCustomPlot::mouseMove, this, &PlotView::showTooltip);
    connect(m_plot, &QCustomPlot::afterReplot, this, &PlotView::replotted);
    layout->addWidget(m_plot);
}

PlotView::~PlotView() = default;

void PlotView::queueReplot()
{
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotView::clearPlottables()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
}

QStringList PlotView::seriesNames() const
{
    QStringList names;
    for (int i = 0; i < m_plot->plottableCount(); ++i) {
        QCPAbstractPlottable* plottable = m_plot->plottable(i);
        if (!plottable->name().isEmpty())
            names << plottable->name();
    }
    return names;
}

int PlotView::pointCount(const QString& series) const
{
    for (int i = 0; i < m_plot->plottableCount(); ++i) {
        QCPAbstractPlottable* plottable = m_plot->plottable(i);
        if (plottable->name() != series)
            continue;
        if (auto* graph = qobject_cast<QCPGraph*>(plottable))
            return graph->dataCount();
        if (auto* bars = qobject_cast<QCPBars*>(plottable))
            return bars->dataCount();
    }
    return 0;
}

bool PlotView::exportTo(const QString& path, QString* error, QSize size)
{
    const int w = size.isValid() ? size.width() : m_plot->width();
    const int h = size.isValid() ? size.height() : m_plot->height();
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == "png") {
        ok = m_plot->savePng(path, w, h, 2.0);
    } else if (suffix == "pdf") {
        ok = m_plot->savePdf(path, w, h, QCP::epNoCosmetic, "Paraplan", m_title);
    } else if (suffix == "svg") {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(w, h));
        generator.setViewBox(QRect(0, 0, w, h));
        generator.setTitle(m_title);
        generator.setDescription("Paraplan plot");
        QCPPainter painter;
        ok = painter.begin(&generator);
        if (ok) {
            m_plot->toPainter(&painter, w, h);
            ok = painter.end();
        }
    } else {
        *error = "unknown image format '" + suffix + "' (use .png, .pdf or .svg)";
        return false;
    }
    if (!ok)
        *error = "could not write " + path;
    return ok;
}

void PlotView::showContextMenu(const QPoint& pos)
{
    QMenu menu(this);
    menu.addAction(tr("Reset zoom"), this, [this] {
        m_plot->rescaleAxes();
        queueReplot();
    });
    menu.addSeparator();
    for (const char* format : {"PNG", "PDF", "SVG"}) {
        const QString suffix = QString(format).toLower();
        menu.addAction(tr("Export %1...").arg(format), this, [this, suffix, format] {
            const QString path =
                QFileDialog::getSaveFileName(this, tr("Export plot"), m_title + "." + suffix,
                                             QString("%1 (*.%2)").arg(format, suffix));
            if (path.isEmpty())
                return;
            QString error;
            if (!exportTo(path, &error))
                QToolTip::showText(QCursor::pos(), error, this);
        });
    }
    menu.exec(m_plot->mapToGlobal(pos));
}

void PlotView::showTooltip(QMouseEvent* event)
{
    // The nearest data point of any graph within 12 pixels, or the bar under the cursor.
    const QPointF pos = event->position();
    QString best;
    double bestDistance = 12;
    for (int i = 0; i < m_plot->plottableCount(); ++i) {
        QCPAbstractPlottable* plottable = m_plot->plottable(i);
        const QString xUnit = plottable->property("xUnit").toString();
        const QString yUnit = plottable->property("yUnit").toString();
        if (auto* graph = qobject_cast<QCPGraph*>(plottable)) {
            for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
                if (std::isnan(it->value))
                    continue;
                const QPointF point = graph->coordsToPixels(it->key, it->value);
                const double distance = std::hypot(point.x() - pos.x(), point.y() - pos.y());
                if (distance < bestDistance) {
                    bestDistance = distance;
                    best = QString("%1\n%2: %3\n%4: %5")
                               .arg(graph->name(), graph->keyAxis()->label(),
                                    formatValue(it->key, xUnit), graph->valueAxis()->label(),
                                    formatValue(it->value, yUnit));
                }
            }
        } else if (auto* bars = qobject_cast<QCPBars*>(plottable)) {
            if (bars->selectTest(pos, false) >= 0 && bars->selectTest(pos, false) < 1) {
                const double key = bars->keyAxis()->pixelToCoord(
                    bars->keyAxis()->orientation() == Qt::Horizontal ? pos.x() : pos.y());
                const auto it = bars->data()->findBegin(std::round(key) - 0.5);
                if (it != bars->data()->constEnd())
                    best = QString("%1: %2").arg(bars->name(), formatValue(it->value, yUnit));
                bestDistance = 0;
            }
        }
    }
    if (best.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), best, m_plot);
}

BreakdownPlot::BreakdownPlot(QWidget* parent) : PlotView(tr("Step time by component"), parent)
{
    plot()->yAxis->setLabel(tr(""));
    plot()->xAxis->setLabel(tr("time per step (s)"));
}

void BreakdownPlot::setResults(const PlanResults& results)
{
    clearPlottables();
    const StepBreakdown& b = results.cost.breakdown;
    const double exposed = b.exposedCommunication();
    double total = 0;
    for (const CollectiveCost& c : results.cost.collectives)
        total += c.total_s;
    const double hidden = std::max(0.0, total - exposed);
    // Top bar: the step by component; bottom bar: communication, exposed then hidden.
    struct Part
    {
        QString name;
        double step;
        double comm;
    };
    std::vector<Part> parts;
    for (const BreakdownComponent& component : kBreakdownComponents) {
        const double value = b.*component.field;
        parts.push_back({tr(component.label), value, component.communication ? value : 0});
    }
    parts.push_back({tr("comm hidden behind compute"), 0, hidden});
    QCPBars* below = nullptr;
    int colourIndex = 0;
    for (const Part& part : parts) {
        if (part.step <= 0 && part.comm <= 0)
            continue;
        QCPBars* bars =
            stackedBar(plot()->yAxis, plot()->xAxis, part.name, colour(colourIndex++), below);
        bars->setProperty("yUnit", "s");
        bars->addData(2, part.step); // top bar: the step
        bars->addData(1, part.comm); // bottom bar: communication, exposed + hidden
        below = bars;
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    ticker->addTick(2, tr("step time"));
    ticker->addTick(1, tr("communication"));
    plot()->yAxis->setTicker(ticker);
    plot()->yAxis->setRange(0.4, 2.6);
    plot()->xAxis->setRange(0, std::max(results.cost.step_time_s, exposed + hidden) * 1.02);
    queueReplot();
}

MemoryPlot::MemoryPlot(QWidget* parent) : PlotView(tr("Memory per GPU by pipeline stage"), parent)
{
    plot()->xAxis->setLabel(tr("pipeline stage"));
    plot()->yAxis->setLabel(tr("memory per GPU (GiB)"));
}

void MemoryPlot::setResults(const PlanResults& results)
{
    clearPlottables();
    const std::vector<StageCost>& stages = results.cost.stages;
    struct Part
    {
        QString name;
        double StageCost::*field;
    };
    const Part parts[] = {{tr("weights"), &StageCost::weights_bytes},
                          {tr("gradients"), &StageCost::grads_bytes},
                          {tr("optimizer state"), &StageCost::optimizer_bytes},
                          {tr("activations"), &StageCost::activations_bytes},
                          {tr("buffers"), &StageCost::buffers_bytes}};
    QCPBars* below = nullptr;
    int i = 0;
    for (const Part& part : parts) {
        QCPBars* bars = stackedBar(plot()->xAxis, plot()->yAxis, part.name, colour(i++), below);
        bars->setWidth(stages.size() > 16 ? 0.9 : 0.6);
        bars->setProperty("yUnit", "GiB");
        for (const StageCost& st : stages)
            bars->addData(st.stage, units::toGiB(st.*(part.field)));
        below = bars;
    }
    const double hbm = units::toGiB(results.cost.hbm_bytes);
    auto* line = new QCPItemStraightLine(plot());
    line->point1->setCoords(0, hbm);
    line->point2->setCoords(1, hbm);
    line->setPen(QPen(QColor(190, 30, 30), 1.5, Qt::DashLine));
    auto* label = new QCPItemText(plot());
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    label->position->setType(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(0.98, 0);
    label->position->setType(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(stages.size() - 0.5, hbm);
    label->setText(tr("HBM %1 GiB").arg(hbm, 0, 'f', 0));
    label->setColor(QColor(190, 30, 30));
    label->setFont(QFont(QFont().family(), 8));
    double top = hbm;
    for (const StageCost& st : stages)
        top = std::max(top, units::toGiB(st.total_bytes));
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(std::max(1.0, std::ceil(stages.size() / 16.0)));
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssNone);
    plot()->xAxis->setTicker(ticker);
    plot()->xAxis->setRange(-0.6, stages.size() - 0.4);
    plot()->yAxis->setRange(0, top * 1.15);
    queueReplot();
}

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
    for (QCPAxis* axis : {plot()->xAxis, plot()->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
        ticker->setSubTickCount(0);
        axis->setTicker(ticker);
        axis->setNumberFormat("eb");
        axis->setNumberPrecision(0);
    }
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
        const double factor = busBandwidthFactor(fit.op, fit.ranks);
        for (double bytes = 1e3; bytes <= 1.7e10; bytes *= 2) {
            const double t = fit.alpha_s + bytes * factor / (fit.busbw_GBps * 1e9);
            graph->addData(bytes, factor * bytes / t / 1e9);
        }
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

MeasuredPlot::MeasuredPlot(QWidget* parent) : PlotView(tr("Measured bus bandwidth"), parent)
{
    plot()->xAxis->setLabel(tr("message size S (bytes)"));
    plot()->yAxis->setLabel(tr("measured bus bandwidth (GB/s)"));
    for (QCPAxis* axis : {plot()->xAxis, plot()->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
        ticker->setSubTickCount(0);
        axis->setTicker(ticker);
        axis->setNumberFormat("eb");
        axis->setNumberPrecision(0);
    }
    plot()->xAxis->setRange(1e3, 1.7e10);
    plot()->yAxis->setRange(0.1, 2000);
    plot()->legend->setWrap(3);
}

void MeasuredPlot::clear()
{
    clearPlottables();
    queueReplot();
}

void MeasuredPlot::addPoint(const MeasuredPoint& point)
{
    if (point.in_place)
        return;
    const QString name =
        tr("%1, %2 ranks%3")
            .arg(collectiveOpName(point.op))
            .arg(point.ranks)
            .arg(point.hosts > 1 ? tr(" on %1 hosts").arg(point.hosts) : QString());
    QCPGraph* graph = nullptr;
    for (int i = 0; i < plot()->graphCount(); ++i) {
        if (plot()->graph(i)->name() == name)
            graph = plot()->graph(i);
    }
    if (!graph) {
        graph = plot()->addGraph();
        graph->setName(name);
        graph->setProperty("xUnit", "B");
        graph->setProperty("yUnit", "GB/s");
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssCircle, colour(plot()->graphCount() - 1), 5));
    }
    graph->addData(point.bytes, point.busbw_GBps);
    queueReplot(); // one redraw per event-loop turn, however many points arrive
}

void MeasuredPlot::setFits(const std::vector<AlphaBetaFit>& fits)
{
    for (const AlphaBetaFit& fit : fits) {
        QCPGraph* graph = plot()->addGraph();
        graph->setName(tr("fit, %1 ranks").arg(fit.ranks));
        graph->setProperty("xUnit", "B");
        graph->setProperty("yUnit", "GB/s");
        graph->setPen(QPen(QColor(60, 60, 60), 1, Qt::DashLine));
        const double factor = busBandwidthFactor(fit.op, fit.ranks);
        for (double bytes = 1e3; bytes <= 1.7e10; bytes *= 2) {
            const double t = fit.alpha_s + bytes * factor / (fit.busbw_GBps * 1e9);
            graph->addData(bytes, factor * bytes / t / 1e9);
        }
    }
    queueReplot();
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

namespace paraplan::ui {

ParetoPlot::ParetoPlot(QWidget* parent) : PlotView(tr("Memory per GPU against step time"), parent)
{
    plot()->xAxis->setLabel(tr("memory per GPU, fullest stage (GiB)"));
    plot()->yAxis->setLabel(tr("step time (s)"));
}

void ParetoPlot::setSearch(const SearchResult& result)
{
    clearPlottables();
    QCPGraph* top = plot()->addGraph();
    top->setName(tr("top candidates"));
    top->setProperty("yUnit", "s");
    top->setLineStyle(QCPGraph::lsNone);
    top->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, colour(1), 5));
    QCPGraph* front = plot()->addGraph();
    front->setName(tr("Pareto front"));
    front->setProperty("yUnit", "s");
    front->setLineStyle(QCPGraph::lsStepLeft);
    front->setPen(QPen(colour(0), 2));
    front->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour(0), 6));
    QCPGraph* best = plot()->addGraph();
    best->setName(tr("best"));
    best->setProperty("yUnit", "s");
    best->setLineStyle(QCPGraph::lsNone);
    best->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(Qt::black, 1.5), QColor(230, 120, 0), 11));
    double maxMemory = 0;
    double maxTime = 0;
    for (const SearchCandidate& c : result.top) {
        top->addData(units::toGiB(c.memory_bytes), c.step_time_s);
        maxMemory = std::max(maxMemory, units::toGiB(c.memory_bytes));
        maxTime = std::max(maxTime, c.step_time_s);
    }
    for (const SearchCandidate& c : result.pareto) {
        front->addData(units::toGiB(c.memory_bytes), c.step_time_s);
        maxMemory = std::max(maxMemory, units::toGiB(c.memory_bytes));
        maxTime = std::max(maxTime, c.step_time_s);
    }
    if (!result.top.empty())
        best->addData(units::toGiB(result.top.front().memory_bytes),
                      result.top.front().step_time_s);
    plot()->xAxis->setRange(0, std::max(1.0, maxMemory * 1.1));
    plot()->yAxis->setRange(0, std::max(1e-3, maxTime * 1.1));
    queueReplot();
}

CompareBreakdownPlot::CompareBreakdownPlot(QWidget* parent)
    : PlotView(tr("Pinned plans: step time by component"), parent)
{
    plot()->xAxis->setLabel(tr("time per step (s)"));
}

void CompareBreakdownPlot::setPlans(const QStringList& labels,
                                    const std::vector<StepBreakdown>& breakdowns)
{
    clearPlottables();
    QCPBars* below = nullptr;
    int colourIndex = 0;
    double longest = 0;
    for (const StepBreakdown& b : breakdowns)
        longest = std::max(longest, b.total());
    for (const BreakdownComponent& part : kBreakdownComponents) {
        bool any = false;
        for (const StepBreakdown& b : breakdowns)
            any = any || b.*(part.field) > 0;
        if (!any)
            continue;
        QCPBars* bars =
            stackedBar(plot()->yAxis, plot()->xAxis, tr(part.label), colour(colourIndex++), below);
        bars->setProperty("yUnit", "s");
        bars->setWidth(0.6);
        for (size_t i = 0; i < breakdowns.size(); ++i)
            bars->addData(double(breakdowns.size() - i), breakdowns[i].*(part.field));
        below = bars;
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < labels.size(); ++i)
        ticker->addTick(double(labels.size() - i), labels[i]);
    plot()->yAxis->setTicker(ticker);
    plot()->yAxis->setRange(0.4, labels.size() + 0.6);
    plot()->xAxis->setRange(0, std::max(1e-3, longest * 1.05));
    queueReplot();
}

} // namespace paraplan::ui
