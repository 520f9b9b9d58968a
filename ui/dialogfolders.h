#pragma once

// File dialogs start where the last one of their kind ended (kept in QSettings), never in the
// folder the program happened to be started in.

#include <QString>

namespace paraplan::ui {

/// The folder (with `fileName` in it, when given) the last dialog of `kind` chose, while it
/// exists; else the home folder.
QString dialogStart(const QString& kind, const QString& fileName = QString());
/// Remembers the folder of `chosen` (a dialog's answer; empty when cancelled: ignored).
void rememberDialog(const QString& kind, const QString& chosen);

} // namespace paraplan::ui
