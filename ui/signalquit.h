#pragma once

// SIGTERM, SIGINT and SIGHUP (a logout, `kill`, Ctrl+C in the terminal) end the window cleanly
// instead of at once: the handler only writes the signal's number into a pipe (the self-pipe
// trick: nothing else is safe in a handler), and the event loop reads it and runs `onSignal`
// there, where the windows can write their recovery copies before the program quits.

#include <QObject>

#include <functional>

class QSocketNotifier;

namespace paraplan::ui {

class SignalQuit : public QObject
{
    Q_OBJECT

public:
    /// Installs the handlers (one SignalQuit per process); `onSignal` gets the signal number.
    explicit SignalQuit(std::function<void(int)> onSignal, QObject* parent = nullptr);
    ~SignalQuit() override; ///< the default handlers again

    /// Whether the handlers are in place (the pipe could be made).
    bool installed() const { return m_notifier != nullptr; }

private:
    std::function<void(int)> m_onSignal;
    QSocketNotifier* m_notifier = nullptr;
};

/// The name of a signal SignalQuit handles ("SIGTERM"), or "signal N".
const char* signalName(int sig);

} // namespace paraplan::ui
