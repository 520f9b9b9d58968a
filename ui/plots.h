#pragma once

#include "measurement.h"
#include "planevaluator.h"
#include "search.h"

#include <QPointF>
#include <QStringList>
#include <QWidget>

class QCustomPlot;
class QCPItemText;
class QMouseEvent;

namespace paraplan::ui {

/// A QCustomPlot with what every Paraplan plot offers: title, units on the axes, legend,
/// zoom and pan, a hover tooltip with exact values, and export to PNG, PDF and SVG.
class PlotView : public QWidget
{
    Q_OBJECT

public:
    explicit PlotView(const QString& title, QWidget* parent = nullptr);
    ~PlotView() override;

    QCustomPlot* plot() const { return m_plot; }
    /// By suffix: .png, .pdf or .svg. `size` 0 keeps the on-screen size.
    bool exportTo(const QString& path, QString* error, QSize size = {});
    /// Names of the plottables that hold data (graphs and bars), for tests and reports.
    QStringList seriesNames() const;
    int pointCount(const QString& series) const;
    /// Redraws once at the next event-loop turn, however many updates came before.
    void queueReplot();
    QString title() const { return m_title; }
    /// A sentence in the middle of the axes, which keep their full size, while there is
    /// nothing to draw; "" takes it away. Cleared with the plottables.
    void setEmptyText(const QString& text);
    QString emptyText() const { return m_emptyText; }
    /// The fill of a bar series or the pen of a graph, as drawn; invalid when none has that name.
    QColor seriesColour(const QString& series) const;
    /// The least height the plot keeps (200 px by default).
    void setMinimumPlotHeight(int height);
    /// The axes' rectangle inside the plot, as last laid out.
    QRect axesRect() const;

signals:
    void replotted();

protected:
    void clearPlottables();
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void fitLegendColumns();

private:
    void showTooltip(QMouseEvent* event);
    void showContextMenu(const QPoint& pos);

    QCustomPlot* m_plot = nullptr;
    QString m_title;
    QString m_emptyText;
    QCPItemText* m_emptyLabel = nullptr;
    int m_legendColumns = 0; ///< the plot's own legend columns, fewer when it is narrow
};

/// The step time, stacked by component, and the communication exposed vs hidden.
class BreakdownPlot : public PlotView
{
    Q_OBJECT
public:
    explicit BreakdownPlot(QWidget* parent = nullptr);
    void setResults(const PlanResults& results);
};

/// Memory per GPU for every pipeline stage, stacked, against the HBM capacity.
class MemoryPlot : public PlotView
{
    Q_OBJECT
public:
    explicit MemoryPlot(QWidget* parent = nullptr);
    void setResults(const PlanResults& results);
};

/// Plot 1: throughput and step time against TP degree at the same GPU count.
class TpSweepPlot : public PlotView
{
    Q_OBJECT
public:
    explicit TpSweepPlot(QWidget* parent = nullptr);
    void setResults(const PlanResults& results);
};

/// Plot 2: collective bus bandwidth against message size, per tier (log-log), with the
/// measured curves beside the assumed ones once a measurement is loaded.
class BandwidthPlot : public PlotView
{
    Q_OBJECT
public:
    explicit BandwidthPlot(QWidget* parent = nullptr);
    void setResults(const PlanResults& results);
    void setMeasured(const std::vector<AlphaBetaFit>& fits);

private:
    /// Moves each point's label to the first corner around its point where it overlaps no
    /// earlier label and stays inside the axes (runs after every layout, in pixels).
    void placeLabels();

    std::vector<AlphaBetaFit> m_measured;
    std::vector<std::pair<QCPItemText*, QPointF>> m_labels; ///< with their point (plot coords)
};

/// Measured bus bandwidth as points arrive, with each series' fitted alpha-beta curve.
class MeasuredPlot : public PlotView
{
    Q_OBJECT
public:
    explicit MeasuredPlot(QWidget* parent = nullptr);
    void clear();
    void addPoint(const MeasuredPoint& point);
    void setFits(const std::vector<AlphaBetaFit>& fits);
};

/// Plot 3: step time and DP sync time against GPU count.
class ScalingPlot : public PlotView
{
    Q_OBJECT
public:
    explicit ScalingPlot(QWidget* parent = nullptr);
    void setResults(const PlanResults& results);
};

/// Plot 4: the plan's step time under failure and spine what-ifs.
class WhatIfPlot : public PlotView
{
    Q_OBJECT
public:
    explicit WhatIfPlot(QWidget* parent = nullptr);
    void setResults(const PlanResults& results);
};

/// Memory per GPU against step time for a search: its top candidates and the Pareto front.
class ParetoPlot : public PlotView
{
    Q_OBJECT

public:
    explicit ParetoPlot(QWidget* parent = nullptr);
    void setSearch(const SearchResult& result);
};

/// Pinned plans side by side: each one's step time, stacked by component.
class CompareBreakdownPlot : public PlotView
{
    Q_OBJECT

public:
    explicit CompareBreakdownPlot(QWidget* parent = nullptr);
    void setPlans(const QStringList& labels, const std::vector<StepBreakdown>& breakdowns);
};

} // namespace paraplan::ui
