#pragma once

// What the plots share between plots.cpp and cliffplots.cpp (private to the plots).

#include <QColor>

class QCPAxis;

namespace paraplan::ui::plotstyle {

/// The i-th colour of the plots' colour-blind-safe palette (Okabe and Ito), wrapping around.
QColor colour(int i);

/// A log-10 axis of powers of ten written as 1e3, 1e6... (message sizes, bandwidths).
void useLog10Axis(QCPAxis* axis);

} // namespace paraplan::ui::plotstyle
