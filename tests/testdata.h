#pragma once

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

#include <functional>

namespace paraplan::test {

inline QString dataPath(const QString& name)
{
    return QStringLiteral(PARAPLAN_TEST_DATA_DIR) + QLatin1Char('/') + name;
}

inline QJsonObject loadJson(const QString& name)
{
    QFile file(dataPath(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

/// The plan file `source` with `edit` applied to its JSON, written to `path`; false when either
/// file cannot be read or written.
inline bool writeEditedPlan(const QString& source, const QString& path,
                            const std::function<void(QJsonObject&)>& edit)
{
    QFile in(source);
    if (!in.open(QIODevice::ReadOnly))
        return false;
    QJsonObject json = QJsonDocument::fromJson(in.readAll()).object();
    edit(json);
    QFile out(path);
    return out.open(QIODevice::WriteOnly) && out.write(QJsonDocument(json).toJson()) > 0;
}

} // namespace paraplan::test
