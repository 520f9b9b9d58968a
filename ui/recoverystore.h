#pragma once

#include <QString>
#include <QStringList>

#include <map>
#include <memory>

class QLockFile;

namespace paraplan::ui {

/// The recovery copies of unsaved plans, one per window: recovery-<id>.json in the app data
/// directory, guarded by recovery-<id>.lock held while its window lives. A copy whose lock is
/// missing or stale (its process is gone) was left by a window that did not close cleanly;
/// a live window's copy is never offered to, or removed by, another.
class RecoveryStore
{
public:
    /// `directory` empty: the app's data directory (QStandardPaths::AppLocalDataLocation).
    explicit RecoveryStore(const QString& directory = QString());
    ~RecoveryStore();
    RecoveryStore(const RecoveryStore&) = delete;
    RecoveryStore& operator=(const RecoveryStore&) = delete;

    static QString defaultDirectory();
    QString directory() const { return m_dir; }
    /// This window's copy (written by the window; removed by discard()).
    QString path() const;
    /// Copies left by windows that are gone, newest first; each is claimed (its lock held
    /// here) so no other window offers it, until adopted, released or discarded.
    QStringList claimOrphans();
    /// Keeps a claimed copy, claimed, until discard() (the window now holds its plan).
    void adopt(const QString& orphan);
    /// Leaves a claimed copy on disk, unclaimed, for a later start.
    void release(const QString& orphan);
    /// Removes a claimed copy (the user discarded it).
    void discardOrphan(const QString& orphan);
    /// Moves an unreadable copy aside (recovery-<id>.unreadable-<time>.json) and returns
    /// its new path; empty when it could not be moved (then it stays where it was).
    QString setAside(const QString& orphan);
    /// The window's plan is saved or discarded: its copy and any adopted ones go.
    void discard();
    /// Notes beside a copy (recovery-<id>.source) the file its plan came from, so that the
    /// offer after a crash can name it; an empty `planFile` removes the note.
    static bool recordSource(const QString& recoveryPath, const QString& planFile);
    /// The file noted for a copy; empty when none was (a new plan, or an older copy).
    static QString sourceOf(const QString& recoveryPath);

private:
    static QString lockPathFor(const QString& recoveryPath);
    static QString sourcePathFor(const QString& recoveryPath);

    QString m_dir;
    QString m_id;
    std::unique_ptr<QLockFile> m_lock;
    std::map<QString, std::unique_ptr<QLockFile>> m_claimed;
    QStringList m_adopted;
};

} // namespace paraplan::ui
