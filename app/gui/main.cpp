// paraplan: the planner window. Usage: paraplan [PLAN.json] [--screenshot FILE.png --size WxH
// --tab N]. Bad options, and with --screenshot a plan that cannot be opened, end with one
// "error: ..." line on stderr before anything is written; the exit status is paraplan-cli's
// (2 bad input, 3 a file missing, unreadable or unwritable; guioptions.h).
#include "guioptions.h"
#include "mainwindow.h"
#include "measurepanel.h"
#include "paraplan_version.h"
#include "qtnotices.h"
#include "searchpanel.h"
#include "signalquit.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTabWidget>
#include <QTimer>

#include <QLocale>

#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace {

using paraplan::gui::kExitIo;
using paraplan::gui::kExitUsage;

int fail(const QString& message, int status = kExitUsage)
{
    std::fprintf(stderr, "error: %s\n", qPrintable(paraplan::gui::oneLine(message)));
    std::fflush(stderr);
    return status;
}

struct Options
{
    QCommandLineOption screenshot{"screenshot",
                                  "Save an image of the window to <file> and quit (the suffix "
                                  "names the format; .png, or none, is PNG). The folder must "
                                  "exist; the file is replaced only once the image is written.",
                                  "file"};
    QCommandLineOption size{"size",
                            QString("Window size, each side %1 to %2 pixels, e.g. 1280x800 "
                                    "(below the window's usual smallest size it is squeezed).")
                                .arg(paraplan::gui::kMinWindowSide)
                                .arg(paraplan::gui::kMaxWindowSide),
                            "WxH"};
    QCommandLineOption tab{"tab",
                           "Tab to show: its index from 0 (0 Step time, 1 Memory, 2 Bandwidth "
                           "cliffs, 3 Cluster, 4 Topology, 5 Measure, 6 Derivation, 7 Search, "
                           "8 Practice) or its name; a tab that does not exist lists them all.",
                           "index"};
    QCommandLineOption measurements{"import-measurements",
                                    "Import a probe run or nccl-tests log into the Measure tab.",
                                    "file"};
    QCommandLineOption search{"search",
                              "Open on the Search tab and search the plan's layouts, pinning "
                              "the current plan and the best for comparison."};
};

// The search starts from the plan as evaluated: once, when its first results show.
void startSearch(paraplan::ui::MainWindow& window)
{
    paraplan::ui::SearchPanel* panel = window.searchPanel();
    window.findChild<QTabWidget*>()->setCurrentWidget(panel);
    QObject::connect(panel, &paraplan::ui::SearchPanel::finished, panel, [panel] {
        panel->pin(-1);
        panel->pin(0);
    });
    auto* once = new QObject(&window);
    QObject::connect(&window, &paraplan::ui::MainWindow::resultsShown, once, [panel, once] {
        panel->start();
        once->deleteLater();
    });
}

// Grabs the window once its first results are drawn (with --search, once the search has
// finished and its rows are drawn) and writes the image; the exit status says whether it was
// written (3 with the reason when not).
void scheduleScreenshot(paraplan::ui::MainWindow& window, const QString& path, QSize size,
                        bool afterSearch)
{
    auto grab = [&window, path, size] {
        const QImage image = window.grab().toImage();
        // --size is in the window's own (logical) pixels; at QT_SCALE_FACTOR=2 the image has
        // twice as many on each side.
        const QSize drawn = image.deviceIndependentSize().toSize();
        if (size.isValid() && drawn != size) {
            QApplication::exit(fail(QString("--size %1x%2: the window was drawn %3x%4")
                                        .arg(size.width())
                                        .arg(size.height())
                                        .arg(drawn.width())
                                        .arg(drawn.height())));
            return;
        }
        QString error;
        if (!paraplan::gui::writeScreenshot(image, path, &error)) {
            QApplication::exit(fail(error, kExitIo));
            return;
        }
        QApplication::exit(0);
    };
    if (!afterSearch) {
        QTimer::singleShot(800, &window, grab);
        return;
    }
    QObject::connect(window.searchPanel(), &paraplan::ui::SearchPanel::finished, &window,
                     [&window, grab] { QTimer::singleShot(300, &window, grab); });
}

QStringList tabNames(const paraplan::ui::MainWindow& window)
{
    QStringList names;
    const auto* tabs = window.findChild<QTabWidget*>();
    for (int i = 0; tabs && i < tabs->count(); ++i)
        names << tabs->tabText(i).remove('&');
    return names;
}

// --help and --version are answered before QApplication exists: they need no display (a
// QApplication without one ends the program with "no Qt platform plugin").
bool asksForHelp(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "-h" || arg == "--help" || arg == "-?" || arg == "--help-all" || arg == "-v" ||
            arg == "--version")
            return true;
    }
    return false;
}

void describe(QCommandLineParser& parser, const Options& options)
{
    parser.setApplicationDescription("Parallelism planner for distributed training");
    parser.addPositionalArgument("plan", "A plan file to open (JSON).", "[plan]");
    parser.addOptions(
        {options.screenshot, options.size, options.tab, options.measurements, options.search});
}

// QCommandLineParser's help and the exit statuses after it (its help has no epilogue).
[[noreturn]] void showHelp(const QCommandLineParser& parser)
{
    std::fputs(qPrintable(parser.helpText() + "\n" + paraplan::gui::exitStatusHelp()), stdout);
    std::fflush(stdout);
    std::exit(0);
}

// The options parsed on `app` (a QCoreApplication for --help/--version, else the
// QApplication); --help, --help-all and --version are answered here and exit. False with the
// message when the command line does not parse.
bool parseCommandLine(QCommandLineParser& parser, QCoreApplication& app, const Options& options,
                      QString* error)
{
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    describe(parser, options);
    if (!parser.parse(QCoreApplication::arguments())) {
        *error = parser.errorText().chopped(parser.errorText().endsWith('.') ? 1 : 0) +
                 "; paraplan --help lists the options";
        return false;
    }
    if (parser.optionNames().contains("help-all"))
        parser.process(app); // the help with Qt's own options; exits
    if (parser.isSet(help))
        showHelp(parser); // exits
    if (parser.isSet(version))
        parser.showVersion(); // exits
    return true;
}

// Without a display Qt's xcb and wayland plugins end the program with an abort ("could not
// connect to display ... Reinstalling the application may fix this problem"): told before
// QApplication exists, in one line. A --screenshot needs none (Qt's offscreen platform).
bool noDisplay(int argc, char** argv)
{
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    if (!platform.isEmpty() && !platform.startsWith("xcb") && !platform.startsWith("wayland"))
        return false;
    if (!qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        return false;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--screenshot", 12) == 0 ||
            std::strncmp(argv[i], "-screenshot", 11) == 0) {
            if (platform.isEmpty())
                qputenv("QT_QPA_PLATFORM", "offscreen");
            return !platform.isEmpty();
        }
    }
    return true;
}

// QApplication switches the C library to the user's locale; numbers stay in the C locale
// (Qt's documented remedy: setlocale(LC_NUMERIC, "C") after QApplication), and the widgets'
// numbers (spin boxes, fields) read and write as the rest of the text does, '.' decimal.
void useCNumbers()
{
    std::setlocale(LC_NUMERIC, "C");
    std::setlocale(LC_MESSAGES, "C"); // the system's error messages in English, as the rest
    QLocale::setDefault(QLocale::c());
}

void setNames()
{
    QCoreApplication::setOrganizationName("Paraplan");
    QCoreApplication::setApplicationName("Paraplan");
    QCoreApplication::setApplicationVersion(PARAPLAN_VERSION);
}

} // namespace

int main(int argc, char** argv)
{
    paraplan::quietQtNotices();
#ifdef SIGXFSZ
    // A save past the file-size limit fails with EFBIG and is reported (the plan kept),
    // instead of the window being killed with the user's work.
    std::signal(SIGXFSZ, SIG_IGN);
#endif
    const Options options;
    QString error;
    if (asksForHelp(argc, argv)) {
        QCoreApplication core(argc, argv);
        setNames();
        QCommandLineParser parser;
        if (!parseCommandLine(parser, core, options, &error))
            return fail(error);
        showHelp(parser); // exits
    }
    if (noDisplay(argc, argv))
        return fail("no display to open the window on: DISPLAY and WAYLAND_DISPLAY are unset "
                    "(run it in a desktop session, or with --screenshot FILE for an image)");
    QApplication app(argc, argv);
    useCNumbers();
    setNames();

    QCommandLineParser parser;
    if (!parseCommandLine(parser, app, options, &error))
        return fail(error);

    const QStringList files = parser.positionalArguments();
    if (files.size() > 1)
        return fail(QString("one plan at most; got %1: %2").arg(files.size()).arg(files.join(" ")));
    const QString file = files.isEmpty() ? QString() : files.front();
    const bool headless = parser.isSet(options.screenshot);
    QSize size;
    if (parser.isSet(options.size) &&
        !paraplan::gui::parseWindowSize(parser.value(options.size), &size, &error))
        return fail(error);
    const QString shot = parser.value(options.screenshot);
    int status = kExitUsage;
    if (headless && !paraplan::gui::checkScreenshotPath(shot, &error, &status))
        return fail(error, status);

    paraplan::ui::MainWindow window(!headless);
    int tab = -1;
    if (parser.isSet(options.tab) &&
        !paraplan::gui::parseTab(parser.value(options.tab), tabNames(window), &tab, &error))
        return fail(error);
    if (headless) {
        // Scripted: a plan that cannot be opened ends here, never with a picture of the
        // example plan under its name.
        if (!file.isEmpty() && !window.openFile(file, &error))
            return fail(error.contains("'" + file + "'") ? error
                                                         : QString("%1: %2").arg(file, error),
                        paraplan::gui::inputFailureStatus(file));
    } else {
        // Offers what a window that did not close cleanly left (never a running window's),
        // and asks before the named file would take the recovered plan's place.
        window.start(file);
    }
    if (parser.isSet(options.measurements) &&
        !window.measurePanel()->importFile(parser.value(options.measurements), &error)) {
        if (headless)
            return fail(QString("--import-measurements %1: %2")
                            .arg(parser.value(options.measurements), error),
                        paraplan::gui::inputFailureStatus(parser.value(options.measurements)));
        std::fprintf(stderr, "warning: --import-measurements %s: %s\n",
                     qPrintable(parser.value(options.measurements)),
                     qPrintable(paraplan::gui::oneLine(error)));
    }
    if (size.isValid()) {
        // The size asked for, even below what the layout would like (it squeezes): a set
        // minimum overrides the layout's, which would otherwise grow the window.
        window.setMinimumSize(size.boundedTo(window.minimumSizeHint()));
        window.resize(size);
    }
    if (tab >= 0)
        window.findChild<QTabWidget*>()->setCurrentIndex(tab);
    window.show();
    if (parser.isSet(options.search))
        startSearch(window);
    if (headless)
        scheduleScreenshot(window, shot, size, parser.isSet(options.search));
    // SIGTERM, SIGINT, SIGHUP: the last edits (the recovery copy is otherwise written two
    // seconds after them) are copied now and offered at the next start, as after a crash;
    // then the window quits with status 128 + the signal, as the shell reports a killed one.
    const paraplan::ui::SignalQuit quit([&window](int sig) {
        const bool unsaved = window.document()->isModified();
        const bool kept = unsaved && window.writeRecovery();
        std::fprintf(stderr, "paraplan: %s: %s\n", paraplan::ui::signalName(sig),
                     kept      ? "quitting; the unsaved plan is kept for the next start"
                     : unsaved ? "quitting; the unsaved plan could not be copied"
                               : "quitting");
        QApplication::exit(128 + sig);
    });
    return app.exec();
}
