#include "recoverystore.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QStandardPaths>
#include <QUuid>

#include <algorithm>

namespace paraplan::ui {

RecoveryStore::RecoveryStore(const QString& directory)
    : m_dir(directory.isEmpty() ? defaultDirectory() : directory),
      m_id(QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    QDir().mkpath(m_dir);
    m_lock = std::make_unique<QLockFile>(lockPathFor(path()));
    // Only a dead owner makes a lock stale: never its age (a window may run for weeks).
    m_lock->setStaleLockTime(0);
    m_lock->tryLock(0); // a fresh id: nobody else holds it
}

RecoveryStore::~RecoveryStore() = default;

QString RecoveryStore::defaultDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
}

QString RecoveryStore::path() const
{
    return QDir(m_dir).filePath("recovery-" + m_id + ".json");
}

QString RecoveryStore::lockPathFor(const QString& recoveryPath)
{
    QString base = recoveryPath;
    base.chop(5); // ".json"
    return base + ".lock";
}

QString RecoveryStore::sourcePathFor(const QString& recoveryPath)
{
    QString base = recoveryPath;
    base.chop(5); // ".json"
    return base + ".source";
}

bool RecoveryStore::recordSource(const QString& recoveryPath, const QString& planFile)
{
    const QString note = sourcePathFor(recoveryPath);
    if (planFile.isEmpty())
        return !QFile::exists(note) || QFile::remove(note);
    if (sourceOf(recoveryPath) == planFile)
        return true; // written after every edit: the note only when the file changes
    QFile file(note);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
           file.write(planFile.toUtf8()) >= 0;
}

QString RecoveryStore::sourceOf(const QString& recoveryPath)
{
    QFile file(sourcePathFor(recoveryPath));
    if (!file.open(QIODevice::ReadOnly))
        return QString();
    return QString::fromUtf8(file.read(4096)).trimmed();
}

QStringList RecoveryStore::claimOrphans()
{
    QFileInfoList found = QDir(m_dir).entryInfoList({"recovery-*.json"}, QDir::Files);
    std::sort(found.begin(), found.end(), [](const QFileInfo& a, const QFileInfo& b) {
        return a.lastModified() > b.lastModified();
    });
    QStringList orphans;
    for (const QFileInfo& info : found) {
        const QString candidate = info.absoluteFilePath();
        if (candidate == QFileInfo(path()).absoluteFilePath() ||
            candidate.contains(".unreadable-") || m_claimed.count(candidate))
            continue;
        auto lock = std::make_unique<QLockFile>(lockPathFor(candidate));
        lock->setStaleLockTime(0);
        // Taken only when no lock exists or its process is gone: a live window keeps its own.
        if (!lock->tryLock(0))
            continue;
        m_claimed[candidate] = std::move(lock);
        orphans << candidate;
    }
    return orphans;
}

void RecoveryStore::adopt(const QString& orphan)
{
    if (m_claimed.count(orphan) && !m_adopted.contains(orphan))
        m_adopted << orphan;
}

void RecoveryStore::release(const QString& orphan)
{
    m_adopted.removeAll(orphan);
    m_claimed.erase(orphan); // unlocks: the lock file goes, the copy stays
}

void RecoveryStore::discardOrphan(const QString& orphan)
{
    if (!m_claimed.count(orphan))
        return;
    QFile::remove(orphan);
    QFile::remove(sourcePathFor(orphan));
    release(orphan);
}

QString RecoveryStore::setAside(const QString& orphan)
{
    QString aside = orphan;
    aside.chop(5);
    aside += ".unreadable-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + ".json";
    const bool moved = QFile::rename(orphan, aside);
    if (moved)
        QFile::remove(sourcePathFor(orphan));
    release(orphan);
    return moved ? aside : QString();
}

void RecoveryStore::discard()
{
    QFile::remove(path());
    QFile::remove(sourcePathFor(path()));
    for (const QString& orphan : QStringList(m_adopted))
        discardOrphan(orphan);
}

} // namespace paraplan::ui
