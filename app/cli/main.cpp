#include "clicommands.h"
#include "qtnotices.h"

#include <QCoreApplication>

#ifdef PARAPLAN_CLI_HAS_REPORT
#include "widgetreport.h"

#include <QApplication>
#endif

#include <clocale>
#include <csignal>
#include <iostream>

namespace paraplan::cli {

// QCoreApplication switches the C library to the user's locale: numbers stay in the C locale
// (Qt's documented remedy; core/base/cnumeric.h does the same call by call) and the system's
// error messages in English, as all the rest of the text (there are no translations).
void useCLocaleText()
{
    std::setlocale(LC_NUMERIC, "C");
    std::setlocale(LC_MESSAGES, "C");
}

} // namespace paraplan::cli

int main(int argc, char** argv)
{
    paraplan::quietQtNotices();
#ifdef SIGXFSZ
    // A write past the file-size limit (ulimit -f) fails with EFBIG and is reported, like a
    // full disk, instead of killing the process.
    std::signal(SIGXFSZ, SIG_IGN);
#endif
    // Standard output through a buffer that keeps why a write failed: run() checks it at the
    // end and exits 3 with "cannot write to standard output: REASON".
    paraplan::cli::FdOutputBuffer stdoutBuffer(1);
    std::ostream out(&stdoutBuffer);
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i)
        args.emplace_back(argv[i]);
#ifdef PARAPLAN_CLI_HAS_REPORT
    paraplan::cli::useWidgetReport();
    if (!args.empty() && paraplan::cli::commandNeedsWidgets(args[0])) {
        // The report draws its plots with the same widgets the window uses; without a
        // display they render on Qt's offscreen platform.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
            qEnvironmentVariableIsEmpty("DISPLAY") &&
            qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        QApplication app(argc, argv);
        paraplan::cli::useCLocaleText();
        QCoreApplication::setApplicationName("paraplan-cli");
        return paraplan::cli::run(args, out, std::cerr);
    }
#endif
    QCoreApplication app(argc, argv);
    paraplan::cli::useCLocaleText();
    QCoreApplication::setApplicationName("paraplan-cli");
    return paraplan::cli::run(args, out, std::cerr);
}
