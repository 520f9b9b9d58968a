#include "measurementrunner.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>

namespace paraplan::ui {
namespace {

// The probe's documented exit codes (paraplan-probe --help, docs/probe-protocol.md).
QString exitMessage(int code)
{
    switch (code) {
    case 2:
        return QObject::tr("the probe rejected its arguments");
    case 3:
        return QObject::tr("no GPU is visible to the probe");
    case 4:
        return QObject::tr("a CUDA call failed");
    case 5:
        return QObject::tr("an NCCL call failed");
    case 6:
        return QObject::tr("the probe was interrupted");
    case 7:
        return QObject::tr("the probe's own watchdog stopped a hung measurement");
    default:
        return QObject::tr("the probe exited with code %1").arg(code);
    }
}

} // namespace

MeasurementRunner::MeasurementRunner(QObject* parent) : QObject(parent), m_silence(new QTimer(this))
{
    qRegisterMetaType<paraplan::MeasuredPoint>();
    qRegisterMetaType<paraplan::MeasurementRun>();
    m_silence->setSingleShot(true);
    m_silence->setInterval(120000);
    connect(m_silence, &QTimer::timeout, this, [this] {
        fail(tr("the probe hung: no output for %1 s; it was stopped")
                 .arg(m_silence->interval() / 1000.0));
        if (m_process)
            m_process->kill();
    });
}

MeasurementRunner::~MeasurementRunner()
{
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

QString MeasurementRunner::probePath()
{
    const QString fromEnvironment = qEnvironmentVariable("PARAPLAN_PROBE");
    if (!fromEnvironment.isEmpty())
        return fromEnvironment;
    const QString besideApp =
        QDir(QCoreApplication::applicationDirPath()).filePath("paraplan-probe");
    if (QFileInfo(besideApp).isExecutable())
        return besideApp;
    const QString onPath = QStandardPaths::findExecutable("paraplan-probe");
    return onPath.isEmpty() ? besideApp : onPath;
}

QStringList MeasurementRunner::probeLocations()
{
    const QString fromEnvironment = qEnvironmentVariable("PARAPLAN_PROBE");
    if (!fromEnvironment.isEmpty())
        return {tr("%1 (set by PARAPLAN_PROBE)").arg(fromEnvironment)};
    return {QDir(QCoreApplication::applicationDirPath()).filePath("paraplan-probe") +
                tr(" (next to the application)"),
            tr("paraplan-probe on PATH")};
}

MeasurementRunner::ProbeFile MeasurementRunner::probeFile()
{
    const QFileInfo info(probePath());
    return !info.exists()         ? ProbeFile::Missing
           : info.isDir()         ? ProbeFile::Folder
           : !info.isExecutable() ? ProbeFile::NotExecutable
                                  : ProbeFile::Runnable;
}

bool MeasurementRunner::probeFound()
{
    return QFileInfo(probePath()).isExecutable();
}

void MeasurementRunner::setSilenceTimeout(int milliseconds)
{
    m_silence->setInterval(milliseconds);
}

bool MeasurementRunner::isRunning() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

void MeasurementRunner::start(const QStringList& arguments)
{
    if (isRunning())
        return;
    m_parser = ProbeStreamParser();
    m_stderrTail.clear();
    m_pendingFailure.clear();
    m_cancelled = false;
    m_done = false;
    m_failure = Failure::None;
    delete m_process;
    m_process = new QProcess(this);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &MeasurementRunner::readOutput);
    connect(m_process, &QProcess::readyReadStandardError, this, [this] {
        // stderr is the probe's log: keep its tail for the failure message.
        m_stderrTail += QString::fromLocal8Bit(m_process->readAllStandardError());
        if (m_stderrTail.size() > 4000)
            m_stderrTail = m_stderrTail.right(4000);
    });
    connect(m_process, &QProcess::finished, this, &MeasurementRunner::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, &MeasurementRunner::onError);
    const QString path = probePath();
    if (const ProbeFile file = probeFile(); file != ProbeFile::Runnable) {
        m_failure = Failure::ProbeMissing;
        // What is wrong with the file, when there is one: it was found.
        const QString why =
            file == ProbeFile::Missing
                ? tr("the probe was not found at %1 (set PARAPLAN_PROBE, or build Paraplan "
                     "where CUDA and NCCL are installed)")
            : file == ProbeFile::Folder
                ? tr("the probe path %1 is a folder, not the paraplan-probe program "
                     "(set PARAPLAN_PROBE to the program)")
                : tr("the probe at %1 is not executable (chmod +x it, or set "
                     "PARAPLAN_PROBE to one that is)");
        emit failed(why.arg(path), m_parser.run());
        return;
    }
    m_process->start(path, arguments);
    m_silence->start();
    emit started();
}

void MeasurementRunner::stop()
{
    if (!isRunning())
        return;
    m_cancelled = true;
    m_process->terminate(); // the probe ends cleanly on SIGTERM (exit 6) ...
    QTimer::singleShot(3000, m_process, [process = m_process] {
        if (process->state() != QProcess::NotRunning)
            process->kill(); // ... or not at all
    });
}

void MeasurementRunner::readOutput()
{
    m_silence->start();
    const std::string chunk = m_process->readAllStandardOutput().toStdString();
    const size_t pointsBefore = m_parser.run().points.size();
    const size_t warningsBefore = m_parser.run().warnings.size();
    for (ProbeStreamParser::Event event : m_parser.feed(chunk)) {
        if (event == ProbeStreamParser::Event::Progress)
            emit progressChanged(m_parser.run().progress_done, m_parser.run().progress_total);
        if (event == ProbeStreamParser::Event::Done)
            m_done = true;
    }
    const MeasurementRun& run = m_parser.run();
    for (size_t i = pointsBefore; i < run.points.size(); ++i)
        emit resultAvailable(run.points[i]);
    for (size_t i = warningsBefore; i < run.warnings.size(); ++i)
        emit warningReported(QString::fromStdString(run.warnings[i]));
}

void MeasurementRunner::fail(const QString& message)
{
    if (m_pendingFailure.isEmpty())
        m_pendingFailure = message;
}

void MeasurementRunner::onError(QProcess::ProcessError error)
{
    if (error == QProcess::FailedToStart) {
        m_silence->stop();
        m_failure = Failure::ProbeMissing;
        emit failed(tr("the probe could not be started: %1").arg(m_process->errorString()),
                    m_parser.run());
    }
}

void MeasurementRunner::onFinished(int exitCode, QProcess::ExitStatus status)
{
    m_silence->stop();
    readOutput();
    const size_t warningsBefore = m_parser.run().warnings.size();
    m_parser.finish();
    const MeasurementRun& run = m_parser.run();
    for (size_t i = warningsBefore; i < run.warnings.size(); ++i)
        emit warningReported(QString::fromStdString(run.warnings[i]));
    const int points = static_cast<int>(run.points.size() + run.copies.size());
    QString message = m_pendingFailure;
    if (message.isEmpty() && m_cancelled)
        message = tr("cancelled");
    if (message.isEmpty() && status == QProcess::CrashExit)
        message = tr("the probe crashed");
    if (message.isEmpty() && exitCode != 0)
        message = exitMessage(exitCode);
    if (message.isEmpty() && !m_done)
        message = tr("the probe ended without its closing line (a partial run)");
    // A closing line after nothing usable is no measurement: say why, never "finished".
    if (message.isEmpty() && points == 0 && run.compute.empty())
        message = run.warnings.empty()
                      ? tr("the probe finished without a valid result")
                      : tr("the probe finished without a valid result (first problem: %1)")
                            .arg(QString::fromStdString(run.warnings.front()));
    if (message.isEmpty()) {
        emit finished(run);
        return;
    }
    const bool noDevice = !m_cancelled && m_pendingFailure.isEmpty() &&
                          status == QProcess::NormalExit && (exitCode == 3 || run.error_code == 3);
    m_failure = noDevice ? Failure::NoDevice : Failure::Other;
    if (!run.error.empty())
        message += ": " + QString::fromStdString(run.error);
    else if (!m_stderrTail.trimmed().isEmpty())
        message += ": " + m_stderrTail.trimmed().section('\n', -1);
    if (points > 0)
        message += tr(" (%1 valid result(s) kept)").arg(points);
    emit failed(message, run);
}

} // namespace paraplan::ui
