#pragma once

// paraplan-cli in-process, through the same entry point as the binary (suites that link
// paraplan_cli_lib).

#include "clicommands.h"

#include <QString>
#include <QStringList>

#include <sstream>

namespace paraplan::test {

struct CliRun
{
    int code = -1;
    QString out;
    QString err;
};

inline CliRun runCli(const QStringList& args)
{
    std::vector<std::string> argv;
    for (const QString& arg : args)
        argv.push_back(arg.toStdString());
    std::ostringstream out;
    std::ostringstream err;
    CliRun result;
    result.code = cli::run(argv, out, err);
    result.out = QString::fromStdString(out.str());
    result.err = QString::fromStdString(err.str());
    return result;
}

} // namespace paraplan::test
