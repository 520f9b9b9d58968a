#pragma once

#include "derivation.h"

#include <QString>

namespace paraplan::ui {

/// A derivation as HTML, one anchor per step (for the window's panel and the report).
QString derivationHtml(const Derivation& derivation, bool withTitle = true, bool printable = false);

} // namespace paraplan::ui
