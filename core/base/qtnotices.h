#pragma once

// Qt's own notices ("QStandardPaths: XDG_RUNTIME_DIR not set", "QFSFileEngine::open: No file
// name specified", "This plugin does not support propagateSizeHints()") speak to developers;
// Paraplan's programs promise one "error:" line or none on stderr. Installed first thing in
// main(): they are dropped unless PARAPLAN_QT_MESSAGES=1; a fatal one always shows and aborts.

namespace paraplan {

void quietQtNotices();

} // namespace paraplan
