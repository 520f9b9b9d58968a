#include "plots.h"

#include "plotstyle.h"
#include "units.h"

#include <qcustomplot.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

#include <cmath>
#include <cstdio>

namespace paraplan::ui {

using plotstyle::colour;

namespace {

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
        // No solid line at zero: on a category axis (pipeline stage 0) it read as a stray
        // line above the first bar; the axes themselves mark zero.
        axis->grid()->setZeroLinePen(Qt::NoPen);
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

} // namespace

PlotView::PlotView(const QString& title, QWidget* parent) : QWidget(parent), m_title(title)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(320, 200);
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
    // An empty legend would cap the width of the whole column (title, axes, legend) at its own
    // few pixels: a filler beside it, without a width limit, keeps the axes at full width.
    legendRow->addElement(0, 1, new QCPLayoutElement(m_plot));
    legendRow->setColumnStretchFactor(1, 0.001);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(3);
    m_plot->legend->setFont(QFont(QFont().family(), 8));
    m_plot->legend->setIconSize(22, 11);
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

void PlotView::setMinimumPlotHeight(int height)
{
    m_plot->setMinimumHeight(height);
}

void PlotView::queueReplot()
{
    fitLegendColumns();
    // A plot out of sight (on another tab) is redrawn as it is shown (showEvent): redrawing
    // the hidden ones was most of an edit's redraw. Exports draw afresh (toPainter, savePng).
    if (isVisible())
        m_plot->replot(QCustomPlot::rpQueuedReplot);
}

// As many legend columns as the plot's own layout asks for, but no more than fit the widest
// entry (its text, icon and padding), so that no entry is cut short in a narrow plot.
void PlotView::fitLegendColumns()
{
    if (m_legendColumns == 0)
        m_legendColumns = std::max(1, m_plot->legend->wrap());
    QCPLegend* legend = m_plot->legend;
    const QFontMetrics metrics(legend->font());
    int widest = 100;
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
            widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()));
    }
    const int column = widest + legend->iconSize().width() + legend->iconTextPadding() +
                       legend->columnSpacing() + 12;
    const int columns = std::min(m_legendColumns, std::max(1, (width() - 20) / column));
    if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(legend->fillOrder(), true); // lays the entries out again
    }
}

void PlotView::clearPlottables()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_emptyLabel = nullptr;
    m_emptyText.clear();
}

void PlotView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // Laid out again at the size it is shown at: a plot filled while hidden (another tab)
    // would otherwise show the layout of its first, smaller size.
    queueReplot();
}

void PlotView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitLegendColumns();
}

void PlotView::setEmptyText(const QString& text)
{
    m_emptyText = text;
    if (text.isEmpty()) {
        if (m_emptyLabel)
            m_plot->removeItem(m_emptyLabel);
        m_emptyLabel = nullptr;
        queueReplot();
        return;
    }
    if (!m_emptyLabel) {
        m_emptyLabel = new QCPItemText(m_plot);
        m_emptyLabel->position->setType(QCPItemPosition::ptAxisRectRatio);
        m_emptyLabel->position->setCoords(0.5, 0.45);
        m_emptyLabel->setPositionAlignment(Qt::AlignCenter);
        m_emptyLabel->setTextAlignment(Qt::AlignCenter);
        m_emptyLabel->setFont(QFont(QFont().family(), 10));
        m_emptyLabel->setColor(QColor(80, 80, 80));
        m_emptyLabel->setPadding(QMargins(8, 6, 8, 6));
        m_emptyLabel->setBrush(QColor(255, 255, 255, 230));
        m_emptyLabel->setClipToAxisRect(false);
    }
    m_emptyLabel->setText(text);
    queueReplot();
}

QColor PlotView::seriesColour(const QString& series) const
{
    for (int i = 0; i < m_plot->plottableCount(); ++i) {
        QCPAbstractPlottable* plottable = m_plot->plottable(i);
        if (plottable->name() != series)
            continue;
        if (qobject_cast<QCPBars*>(plottable))
            return plottable->brush().color();
        return plottable->pen().color();
    }
    return {};
}

QRect PlotView::axesRect() const
{
    return m_plot->axisRect()->outerRect();
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

bool PlotView::exportTo(const QString& target, QString* error, QSize size)
{
    const int w = size.isValid() ? size.width() : m_plot->width();
    const int h = size.isValid() ? size.height() : m_plot->height();
    const QFileInfo info(target);
    const QString suffix = info.suffix().toLower();
    if (info.exists() && !info.isFile()) {
        *error = "could not write " + target + ": it is not a regular file";
        return false;
    }
    // Drawn into a temporary beside the target and renamed over it only once complete: a
    // failed export leaves the old image as it was.
    const QString path =
        info.dir().filePath("." + info.fileName() + ".part-" +
                            QString::number(QCoreApplication::applicationPid()) + "." + suffix);
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
    ok = ok && QFileInfo(path).size() > 0;
    if (ok && std::rename(QFile::encodeName(path).constData(),
                          QFile::encodeName(target).constData()) != 0)
        ok = false;
    if (!ok) {
        QFile::remove(path);
        *error = "could not write " + target;
    }
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
        QString key;
        QString name;
        double step;
        double comm;
    };
    std::vector<Part> parts;
    for (const BreakdownComponent& component : kBreakdownComponents) {
        const double value = b.*component.field;
        parts.push_back(
            {component.key, tr(component.label), value, component.communication ? value : 0});
    }
    parts.push_back({"comm_hidden", tr("comm hidden behind compute"), 0, hidden});
    QCPBars* below = nullptr;
    for (const Part& part : parts) {
        if (part.step <= 0 && part.comm <= 0)
            continue;
        QCPBars* bars = stackedBar(plot()->yAxis, plot()->xAxis, part.name,
                                   plotstyle::componentColour(part.key), below);
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
        const char* key;
        QString name;
        double StageCost::*field;
    };
    const Part parts[] = {{"weights", tr("weights"), &StageCost::weights_bytes},
                          {"gradients", tr("gradients"), &StageCost::grads_bytes},
                          {"optimizer_state", tr("optimizer state"), &StageCost::optimizer_bytes},
                          {"activations", tr("activations"), &StageCost::activations_bytes},
                          {"buffers", tr("buffers"), &StageCost::buffers_bytes}};
    QCPBars* below = nullptr;
    for (const Part& part : parts) {
        QCPBars* bars = stackedBar(plot()->xAxis, plot()->yAxis, part.name,
                                   plotstyle::componentColour(part.key), below);
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

MeasuredPlot::MeasuredPlot(QWidget* parent) : PlotView(tr("Measured bus bandwidth"), parent)
{
    plot()->xAxis->setLabel(tr("message size S (bytes)"));
    plot()->yAxis->setLabel(tr("measured bus bandwidth (GB/s)"));
    for (QCPAxis* axis : {plot()->xAxis, plot()->yAxis})
        plotstyle::useLog10Axis(axis);
    plot()->xAxis->setRange(1e3, 1.7e10);
    plot()->yAxis->setRange(0.1, 2000);
    plot()->legend->setWrap(3);
    clear();
}

void MeasuredPlot::clear()
{
    clearPlottables();
    setEmptyText(tr("Nothing measured yet.\nMeasure this machine, or import an nccl-tests log\n"
                    "or a probe run: each point appears here as it arrives."));
}

void MeasuredPlot::addPoint(const MeasuredPoint& point)
{
    if (point.in_place)
        return;
    if (!emptyText().isEmpty())
        setEmptyText({});
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
        for (double bytes = SweepBounds::kMinBytes; bytes <= SweepBounds::kMaxBytes * 1.0001;
             bytes *= 2)
            graph->addData(bytes, fit.busbwAt(bytes));
    }
    queueReplot();
}
} // namespace paraplan::ui

namespace paraplan::ui {

ParetoPlot::ParetoPlot(QWidget* parent) : PlotView(tr("Memory per GPU against step time"), parent)
{
    plot()->xAxis->setLabel(tr("memory per GPU, fullest stage (GiB)"));
    plot()->yAxis->setLabel(tr("step time (s)"));
    plot()->xAxis->setRange(0, 100);
    plot()->yAxis->setRange(0, 10);
    setEmptyText(tr("Not searched yet: each layout\nthe search finds is drawn here."));
}

void ParetoPlot::setSearch(const SearchResult& result)
{
    clearPlottables();
    if (result.top.empty() && result.pareto.empty()) {
        setEmptyText(tr("No layout to draw:\nthe search found none valid."));
        queueReplot();
        return;
    }
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
    // Up to nine components under a plot kept low (the Search tab fits 1280x720): rows of
    // four where the plot is wide enough (fewer where narrow, fitLegendColumns).
    plot()->legend->setWrap(4);
    setPlans({}, {});
}

void CompareBreakdownPlot::setPlans(const QStringList& labels,
                                    const std::vector<StepBreakdown>& breakdowns)
{
    clearPlottables();
    if (breakdowns.empty()) {
        plot()->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
        plot()->yAxis->setRange(0.4, 2.6);
        plot()->xAxis->setRange(0, 10);
        setEmptyText(tr("No plans pinned yet: pin a search\n"
                        "result or the current plan to\ncompare their steps here."));
        return;
    }
    QCPBars* below = nullptr;
    double longest = 0;
    for (const StepBreakdown& b : breakdowns)
        longest = std::max(longest, b.total());
    for (const BreakdownComponent& part : kBreakdownComponents) {
        bool any = false;
        for (const StepBreakdown& b : breakdowns)
            any = any || b.*(part.field) > 0;
        if (!any)
            continue;
        QCPBars* bars = stackedBar(plot()->yAxis, plot()->xAxis, tr(part.label),
                                   plotstyle::componentColour(part.key), below);
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
