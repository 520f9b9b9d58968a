// paraplan-cli examples: the example plans, found where the package installs them
// (share/paraplan/examples beside bin/) or in the source tree for a build-tree run.
#include "common.h"

#include "datapaths.h"

#include <QJsonArray>

#include <iomanip>

namespace paraplan::cli {

Options examplesOptions()
{
    return {jsonOption()};
}

int runExamples(const Args& args, std::ostream& out)
{
    const QString dir = datapaths::dataDir();
    const QStringList paths = datapaths::examplePlans();
    if (paths.isEmpty())
        throw IoError(dir.isEmpty() ? "no example plans installed (looked for "
                                      "../share/paraplan/examples beside paraplan-cli)"
                                    : "no example plans in " + dir.toStdString() + "/examples");
    // Each example is read as a plan: its title comes from the file, and a broken one is
    // reported here rather than when the user opens it.
    std::vector<std::string> titles;
    for (const QString& path : paths)
        titles.push_back(planFromFile(path.toStdString()).name);
    if (args.flag("--json")) {
        QJsonArray list;
        for (int i = 0; i < paths.size(); ++i)
            list.append(QJsonObject{{"name", datapaths::planFileStem(paths[i])},
                                    {"title", QString::fromStdString(titles[size_t(i)])},
                                    {"path", paths[i]}});
        printJson("paraplan-examples/1",
                  QJsonObject{{"directory", dir + "/examples"}, {"examples", list}}, out);
        return kExitOk;
    }
    int width = 0;
    for (const QString& path : paths)
        width = std::max(width, int(datapaths::planFileStem(path).size()));
    out << "Example plans (open one with 'paraplan PATH' or try 'paraplan-cli evaluate PATH'):\n";
    for (int i = 0; i < paths.size(); ++i)
        out << "  " << std::left << std::setw(width + 2)
            << datapaths::planFileStem(paths[i]).toStdString() << titles[size_t(i)] << "\n    "
            << paths[i].toStdString() << "\n";
    return kExitOk;
}

} // namespace paraplan::cli
