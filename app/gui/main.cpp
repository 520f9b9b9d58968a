// paraplan: the planner window. Usage: paraplan [PLAN.json] [--screenshot FILE.png --size WxH]
#include "mainwindow.h"
#include "measurepanel.h"
#include "paraplan_version.h"
#include "searchpanel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QTimer>

#include <csignal>

int main(int argc, char** argv)
{
#ifdef SIGXFSZ
    // A save past the file-size limit fails with EFBIG and is reported (the plan kept),
    // instead of the window being killed with the user's work.
    std::signal(SIGXFSZ, SIG_IGN);
#endif
    QApplication app(argc, argv);
    QApplication::setOrganizationName("Paraplan");
    QApplication::setApplicationName("Paraplan");
    QApplication::setApplicationVersion(PARAPLAN_VERSION);

    QCommandLineParser parser;
    parser.setApplicationDescription("Parallelism planner for distributed training");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("plan", "A plan file to open (JSON).");
    QCommandLineOption screenshot("screenshot", "Save a PNG of the window and quit.", "file");
    QCommandLineOption size("size", "Window size for --screenshot, e.g. 1280x800.", "WxH");
    QCommandLineOption tab("tab", "Tab to show for --screenshot.", "index");
    QCommandLineOption measurements("import-measurements",
                                    "Import a probe run or nccl-tests log into the Measure tab.",
                                    "file");
    QCommandLineOption search("search",
                              "Open on the Search tab and search the plan's layouts, pinning "
                              "the current plan and the best for comparison.");
    parser.addOptions({screenshot, size, tab, measurements, search});
    parser.process(app);

    paraplan::ui::MainWindow window(!parser.isSet(screenshot));
    const QStringList files = parser.positionalArguments();
    const QString file = files.isEmpty() ? QString() : files.front();
    if (parser.isSet(screenshot)) {
        if (!file.isEmpty())
            window.openFile(file);
    } else {
        // Offers what a window that did not close cleanly left (never a running window's),
        // and asks before the named file would take the recovered plan's place.
        window.start(file);
    }
    if (parser.isSet(measurements)) {
        QString error;
        if (!window.measurePanel()->importFile(parser.value(measurements), &error))
            qWarning("%s", qPrintable(error));
    }
    if (parser.isSet(size)) {
        const QStringList parts = parser.value(size).split('x');
        if (parts.size() == 2)
            window.resize(parts[0].toInt(), parts[1].toInt());
    }
    window.show();
    if (parser.isSet(search)) {
        paraplan::ui::SearchPanel* panel = window.searchPanel();
        window.findChild<QTabWidget*>()->setCurrentWidget(panel);
        QObject::connect(panel, &paraplan::ui::SearchPanel::finished, panel, [panel] {
            panel->pin(-1);
            panel->pin(0);
        });
        // The search starts from the plan as evaluated: once, when its first results show.
        auto* once = new QObject(&window);
        QObject::connect(&window, &paraplan::ui::MainWindow::resultsShown, once, [panel, once] {
            panel->start();
            once->deleteLater();
        });
    }
    if (parser.isSet(screenshot)) {
        if (parser.isSet(tab))
            window.findChild<QTabWidget*>()->setCurrentIndex(parser.value(tab).toInt());
        QTimer::singleShot(800, &window, [&] {
            const bool ok = window.grab().save(parser.value(screenshot));
            QApplication::exit(ok ? 0 : 1);
        });
    }
    return app.exec();
}
