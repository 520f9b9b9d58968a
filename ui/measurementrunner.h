#pragma once

#include "measurement.h"

#include <QObject>
#include <QProcess>
#include <QStringList>

class QTimer;

namespace paraplan::ui {

/// Owns the paraplan-probe process: finds it, starts it, parses its stdout as it streams,
/// maps its exit codes to messages, and stops it on cancel, on a crash or when it goes silent.
class MeasurementRunner : public QObject
{
    Q_OBJECT

public:
    /// Why the last run failed, as far as the panel treats it differently.
    enum class Failure
    {
        None,
        ProbeMissing, ///< no paraplan-probe where it was looked for, or it could not start
        NoDevice,     ///< the probe saw no CUDA device, or the driver is too old (exit 3)
        Other,
    };

    explicit MeasurementRunner(QObject* parent = nullptr);
    ~MeasurementRunner() override;

    /// $PARAPLAN_PROBE first, then paraplan-probe next to the application, then on PATH;
    /// when none is found, the path next to the application (for the message).
    static QString probePath();
    /// Where probePath() looks, in order, for a user who has none.
    static QStringList probeLocations();
    /// True when probePath() names an executable file.
    static bool probeFound();
    /// What is wrong with the probe at probePath() when it cannot run: Missing (nothing
    /// there), Folder, NotExecutable; Runnable otherwise.
    enum class ProbeFile
    {
        Runnable,
        Missing,
        Folder,
        NotExecutable
    };
    static ProbeFile probeFile();
    Failure failure() const { return m_failure; }
    /// A run with no output for this long counts as hung (default 120 s).
    void setSilenceTimeout(int milliseconds);
    bool isRunning() const;
    const MeasurementRun& run() const { return m_parser.run(); }

    void start(const QStringList& arguments = {});
    /// Cancels a run in progress; the results so far stay.
    void stop();

signals:
    void started();
    void progressChanged(int done, int total);
    void resultAvailable(const paraplan::MeasuredPoint& point);
    void warningReported(const QString& message);
    /// The run ended well (a "done" line and exit code 0).
    void finished(const paraplan::MeasurementRun& run);
    /// The run ended badly; `run` keeps every valid result that came.
    void failed(const QString& message, const paraplan::MeasurementRun& run);

private:
    void readOutput();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void fail(const QString& message);

    QProcess* m_process = nullptr;
    QTimer* m_silence;
    ProbeStreamParser m_parser;
    QString m_stderrTail;
    QString m_pendingFailure;
    Failure m_failure = Failure::None;
    bool m_cancelled = false;
    bool m_done = false;
};

} // namespace paraplan::ui

Q_DECLARE_METATYPE(paraplan::MeasuredPoint)
Q_DECLARE_METATYPE(paraplan::MeasurementRun)
