#pragma once

// What the plots share between plots.cpp, cliffplots.cpp and computeplot.cpp (private to the
// plots, defined in plotstyle.cpp): the palette, the one map from a step or memory component to its
// colour, and the pen of a network boundary.

#include <QColor>
#include <QPen>
#include <QString>

class QCPAxis;

namespace paraplan::ui::plotstyle {

/// The i-th colour of the plots' colour-blind-safe palette (Okabe and Ito), wrapping around.
QColor colour(int i);

/// The one colour of a component wherever it is drawn (step time, pinned plans, memory; the
/// window, the PDF report and exported images), whatever else the plan holds. `key` is a
/// BreakdownComponent key ("compute", "tp_comm_exposed"...), "comm_hidden", or a memory part
/// ("weights", "gradients", "optimizer_state", "activations", "buffers"). No two components
/// drawn in one plot share a colour. An unknown key gets a mid grey.
QColor componentColour(const QString& key);

/// The pen of a node or rack boundary: solid dark grey, unlike the dotted light-grey grid and
/// unlike any series colour.
QPen boundaryPen();

/// A log-10 axis of powers of ten written as 1e3, 1e6... (message sizes, bandwidths).
void useLog10Axis(QCPAxis* axis);

} // namespace paraplan::ui::plotstyle
