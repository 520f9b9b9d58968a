#pragma once

#include <QKeySequence>
#include <QList>

class QWidget;

namespace paraplan::ui {

/// The keys of Edit > Undo: the platform's (Ctrl+Z).
QList<QKeySequence> undoKeys();
/// The keys of Edit > Redo: the platform's plus Ctrl+Y and Ctrl+Shift+Z on every platform,
/// as the user guide and Help > Keyboard Shortcuts say (X11 binds only Ctrl+Shift+Z).
QList<QKeySequence> redoKeys();
/// The same from given platform bindings (tests: another platform's).
QList<QKeySequence> redoKeys(QList<QKeySequence> platform);

/// Gives the window's Undo and Redo keys precedence over the text undo of every spin box
/// inside `panel`: a committed value (typed and Enter, or the arrows) is undone by the plan's
/// history, never by the box's own line edit. A value being typed and not yet committed
/// keeps the box's text undo (Ctrl+Z takes back the typing, as in any text field).
void giveUndoKeysToWindow(QWidget* panel);

} // namespace paraplan::ui
