// The window's Undo/Redo keys over the spin boxes' own text undo (see undokeys.h).
#include "undokeys.h"

#include <QAbstractSpinBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QKeyEvent>
#include <QSpinBox>
#include <QWidget>

#include <cmath>

namespace paraplan::ui {

QList<QKeySequence> undoKeys()
{
    return QKeySequence::keyBindings(QKeySequence::Undo);
}

QList<QKeySequence> redoKeys()
{
    return redoKeys(QKeySequence::keyBindings(QKeySequence::Redo));
}

QList<QKeySequence> redoKeys(QList<QKeySequence> keys)
{
    for (const QKeySequence& key :
         {QKeySequence(Qt::CTRL | Qt::Key_Y), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)}) {
        if (!keys.contains(key))
            keys.append(key);
    }
    return keys;
}

namespace {

// True while the box's text says something other than its value: the user is typing a
// value not yet committed (keyboard tracking is off, so the value waits for Enter or focus
// out).
bool typingUncommitted(const QAbstractSpinBox* box)
{
    bool ok = false;
    if (const auto* spin = qobject_cast<const QSpinBox*>(box)) {
        if (!spin->specialValueText().isEmpty() && spin->text() == spin->specialValueText())
            return spin->value() != spin->minimum();
        const int typed = spin->locale().toInt(spin->cleanText(), &ok);
        return !ok || typed != spin->value();
    }
    if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(box)) {
        const double typed = spin->locale().toDouble(spin->cleanText(), &ok);
        return !ok || std::abs(typed - spin->value()) > 0.5 * std::pow(10.0, -spin->decimals());
    }
    return false;
}

bool isUndoOrRedo(const QKeyEvent* key)
{
    const QKeySequence pressed(key->keyCombination());
    return undoKeys().contains(pressed) || redoKeys().contains(pressed);
}

class UndoKeyFilter : public QObject
{
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() != QEvent::ShortcutOverride)
            return false;
        const auto* box = qobject_cast<const QAbstractSpinBox*>(watched);
        if (!box || !isUndoOrRedo(static_cast<QKeyEvent*>(event)) || typingUncommitted(box))
            return false;
        // Declined: the key goes on to the window's Edit > Undo / Redo.
        event->ignore();
        return true;
    }
};

} // namespace

void giveUndoKeysToWindow(QWidget* panel)
{
    auto* filter = new UndoKeyFilter(panel);
    for (QAbstractSpinBox* box : panel->findChildren<QAbstractSpinBox*>())
        box->installEventFilter(filter);
}

} // namespace paraplan::ui
