#pragma once

// What the plots share between plots.cpp and cliffplots.cpp (private to the plots).

#include <QColor>

namespace paraplan::ui::plotstyle {

/// The i-th colour of the plots' colour-blind-safe palette (Okabe and Ito), wrapping around.
QColor colour(int i);

} // namespace paraplan::ui::plotstyle
