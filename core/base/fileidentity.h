#pragma once

// What a file was when it was read or written, to tell later whether someone else changed it:
// its size, modification time and a hash of its bytes. Two identities are the same file
// content when both exist with equal size and hash (a touch that changes only the time is
// not a change; an edit that keeps the size is).

#include <QByteArray>
#include <QString>

namespace paraplan {

struct FileIdentity
{
    bool known = false;  ///< taken (a document never read or written has none)
    bool exists = false; ///< the file was there
    qint64 size = -1;
    qint64 mtime_ms = 0;
    QByteArray sha256; ///< of the bytes; empty when the file could not be read

    /// The same content: both missing, or both there with equal size and hash.
    bool sameContent(const FileIdentity& other) const
    {
        return exists == other.exists &&
               (!exists || (size == other.size && sha256 == other.sha256 && !sha256.isEmpty()));
    }
};

/// The identity of the file at `path` now (reads it to hash it).
FileIdentity fileIdentity(const QString& path);

} // namespace paraplan
