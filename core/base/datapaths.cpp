#include "datapaths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace paraplan::datapaths {

QString dataDir()
{
    QStringList candidates;
    // applicationDirPath() needs a Q(Core)Application; tests and tools without one fall back
    // to the source tree.
    if (QCoreApplication::instance())
        candidates << QCoreApplication::applicationDirPath() + "/../share/paraplan";
    candidates << QStringLiteral(PARAPLAN_SOURCE_DATA_DIR);
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
