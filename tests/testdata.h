#pragma once

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

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

} // namespace paraplan::test
