#include "fileidentity.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>

namespace paraplan {

FileIdentity fileIdentity(const QString& path)
{
    FileIdentity id;
    id.known = true;
    const QFileInfo info(path);
    id.exists = info.exists();
    if (!id.exists)
        return id;
    id.size = info.size();
    id.mtime_ms = info.lastModified().toMSecsSinceEpoch();
    QFile file(path);
    if (!info.isFile() || !file.open(QIODevice::ReadOnly))
        return id;
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (hash.addData(&file))
        id.sha256 = hash.result();
    return id;
}

} // namespace paraplan
