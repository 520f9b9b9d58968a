#include "datapaths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace paraplan::datapaths {

QString executableDir()
{
    if (QCoreApplication::instance())
        return QCoreApplication::applicationDirPath();
    return QFileInfo(QFile::symLinkTarget("/proc/self/exe")).absolutePath();
}

QString sourceTree()
{
    QDir dir(executableDir());
    for (int up = 0; up < 3; ++up) {
        QFile marker(dir.filePath("paraplan-source-tree"));
        if (marker.open(QIODevice::ReadOnly)) {
            const QString tree = QString::fromUtf8(marker.readAll()).trimmed();
            return QFileInfo(tree).isDir() ? tree : QString();
        }
        if (!dir.cdUp())
            break;
    }
    return {};
}

QString dataDir()
{
    QStringList candidates{executableDir() + "/../share/paraplan"};
    if (const QString tree = sourceTree(); !tree.isEmpty())
        candidates << tree + "/resources";
    for (const QString& path : candidates) {
        if (QFileInfo(path + "/examples").isDir())
            return QDir(path).canonicalPath();
    }
    return {};
}

QStringList examplePlans()
{
    const QString dir = dataDir();
    return dir.isEmpty() ? QStringList() : examplePlansIn(dir + "/examples");
}

QStringList examplePlansIn(const QString& folder)
{
    // *.paraplan.json is matched by *.json too; the name filter keeps the two suffixes the
    // plan MIME type and the older plans use.
    const QFileInfoList files = QDir(folder).entryInfoList(
        {"*.paraplan.json", "*.json"}, QDir::Files | QDir::Readable, QDir::Name);
    QStringList paths;
    for (const QFileInfo& file : files)
        paths << file.absoluteFilePath();
    return paths;
}

QString planFileStem(const QString& path)
{
    QString name = QFileInfo(path).fileName();
    for (const QString& suffix : {QStringLiteral(".paraplan.json"), QStringLiteral(".json")}) {
        if (name.endsWith(suffix, Qt::CaseInsensitive)) {
            name.chop(suffix.size());
            break;
        }
    }
    return name;
}

} // namespace paraplan::datapaths
