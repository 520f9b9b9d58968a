#include "clicommands.h"

#include <QCoreApplication>

#ifdef PARAPLAN_CLI_HAS_REPORT
#include "reportwriter.h"

#include <QApplication>
#endif

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv)
{
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i)
        args.emplace_back(argv[i]);
    if (!args.empty() && args[0] == "report") {
#ifdef PARAPLAN_CLI_HAS_REPORT
        // The report draws its plots with the same widgets the window uses; without a
        // display they render on Qt's offscreen platform.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
            qEnvironmentVariableIsEmpty("DISPLAY") &&
            qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        QApplication app(argc, argv);
        QCoreApplication::setApplicationName("paraplan-cli");
        return paraplan::ui::runReportCommand(args, std::cout, std::cerr);
#else
        std::cerr << "error: report needs Paraplan built with Qt Widgets (qt6-base-dev and "
                     "libqcustomplot-dev); this paraplan-cli was built without them\n";
        return 2;
#endif
    }
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("paraplan-cli");
    return paraplan::cli::run(args, std::cout, std::cerr);
}
