// The window's Help menu (the user guide, the keyboard shortcuts, About) and its first size.

#include "mainwindow.h"

#include "datapaths.h"

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QToolBar>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>

namespace paraplan::ui {
namespace {

// Where the user guide is: installed (share/doc/paraplan beside bin/), or in the source tree
// this binary was built from (run from the build folder).
QString userGuideFile()
{
    const QString app = QCoreApplication::applicationDirPath();
    QStringList candidates = {app + "/../share/doc/paraplan/user-guide.md"};
    if (const QString tree = datapaths::sourceTree(); !tree.isEmpty())
        candidates << tree + "/docs/user-guide.md";
    for (const QString& path : candidates) {
        if (QFileInfo(path).isFile())
            return QFileInfo(path).canonicalFilePath();
    }
    return {};
}

// A dialog with one text browser and a Close button, at most most of the screen.
QDialog* textDialog(QWidget* parent, const QString& title, QTextBrowser** browser)
{
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(title);
    auto* layout = new QVBoxLayout(dialog);
    *browser = new QTextBrowser(dialog);
    (*browser)->setOpenExternalLinks(true);
    layout->addWidget(*browser);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    QSize size(820, 760);
    if (const QScreen* screen = parent->screen())
        size = size.boundedTo(screen->availableGeometry().size() * 0.9);
    dialog->resize(size);
    return dialog;
}

QString row(const QString& what, const QList<QKeySequence>& keys)
{
    QStringList names;
    for (const QKeySequence& key : keys)
        names << key.toString(QKeySequence::NativeText);
    return QString("<tr><td>%1</td><td><b>%2</b></td></tr>")
        .arg(what.toHtmlEscaped(), names.join(", ").toHtmlEscaped());
}

void collectShortcuts(const QMenu* menu, const QString& path, QStringList* rows)
{
    for (QAction* action : menu->actions()) {
        const QString name = path + action->text().remove('&').remove("...");
        if (action->menu())
            collectShortcuts(action->menu(), name + " > ", rows);
        else if (!action->shortcut().isEmpty())
            rows->append(row(name, action->shortcuts()));
    }
}

void showUserGuide(QMainWindow* window)
{
    const QString path = userGuideFile();
    QFile file(path);
    if (path.isEmpty() || !file.open(QIODevice::ReadOnly)) {
        QMessageBox::warning(
            window, QObject::tr("User guide"),
            QObject::tr("The user guide (user-guide.md) is not installed beside this program "
                        "(looked in %1).")
                .arg(QDir::cleanPath(QCoreApplication::applicationDirPath() +
                                     "/../share/doc/paraplan")));
        return;
    }
    QTextBrowser* browser = nullptr;
    QDialog* dialog = textDialog(window, QObject::tr("Paraplan User Guide"), &browser);
    browser->setObjectName("userGuide");
    // Relative links and images (screenshots) resolve beside the guide.
    browser->setSearchPaths({QFileInfo(path).absolutePath()});
    browser->setMarkdown(QString::fromUtf8(file.readAll()));
    // Screenshots at half their size (1280 px wide: the dialog is narrower).
    for (QTextBlock block = browser->document()->begin(); block.isValid(); block = block.next()) {
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            if (!fragment.charFormat().isImageFormat())
                continue;
            QTextImageFormat image = fragment.charFormat().toImageFormat();
            image.setWidth(640);
            QTextCursor cursor(browser->document());
            cursor.setPosition(fragment.position());
            cursor.setPosition(fragment.position() + fragment.length(), QTextCursor::KeepAnchor);
            cursor.setCharFormat(image);
        }
    }
    dialog->show();
}

void showShortcuts(QMainWindow* window)
{
    QStringList rows;
    for (QAction* action : window->menuBar()->actions()) {
        if (action->menu())
            collectShortcuts(action->menu(), action->text().remove('&') + " > ", &rows);
    }
    // The tabs' own tools (the topology editor's toolbar, ...), named after their tab.
    const auto* tabs = window->findChild<QTabWidget*>();
    for (int i = 0; tabs && i < tabs->count(); ++i) {
        const QString tab = tabs->tabText(i).remove('&');
        for (const QToolBar* toolbar : tabs->widget(i)->findChildren<QToolBar*>()) {
            for (const QAction* action : toolbar->actions()) {
                if (!action->shortcut().isEmpty())
                    rows << row(tab + ": " + action->text().remove('&'), action->shortcuts());
            }
        }
    }
    rows << QString("<tr><td>%1</td><td><b>%2</b></td></tr>")
                .arg(QObject::tr("Plots: zoom, pan"), QObject::tr("mouse wheel, drag"));
    QTextBrowser* browser = nullptr;
    QDialog* dialog = textDialog(window, QObject::tr("Keyboard Shortcuts"), &browser);
    browser->setObjectName("shortcuts");
    browser->setHtml("<table cellpadding='4'>" + rows.join("") + "</table>");
    dialog->resize(dialog->size().boundedTo(QSize(560, 600)));
    dialog->show();
}

void showAbout(QMainWindow* window)
{
    const QString probe =
#ifdef PARAPLAN_PROBE_CUDA_VERSION
        QObject::tr("CUDA %1, NCCL %2")
            .arg(PARAPLAN_PROBE_CUDA_VERSION, PARAPLAN_PROBE_NCCL_VERSION);
#else
        QObject::tr("not built (no CUDA or NCCL where this was built)");
#endif
    QMessageBox::about(
        window, QObject::tr("About Paraplan"),
        QObject::tr(
            "<p><b>Paraplan</b> %1<br>A parallelism planner for distributed training. Every "
            "figure can show its derivation: click a headline number, or double-click a "
            "collective.</p><table>"
            "<tr><td>Qt</td><td>%2 (built with %3)</td></tr>"
            "<tr><td>QCustomPlot</td><td>%4</td></tr>"
            "<tr><td>paraplan-probe</td><td>%5</td></tr></table>")
            .arg(QCoreApplication::applicationVersion(), qVersion(), QT_VERSION_STR,
                 QCUSTOMPLOT_VERSION_STR, probe));
}

} // namespace

void MainWindow::buildHelpMenu()
{
    m_helpMenu = menuBar()->addMenu(tr("&Help"));
    m_helpMenu->addAction(tr("&User Guide"), QKeySequence::HelpContents, this,
                          [this] { showUserGuide(this); });
    m_helpMenu->addAction(tr("&Keyboard Shortcuts"), this, [this] { showShortcuts(this); });
    m_helpMenu->addSeparator();
    m_helpMenu->addAction(tr("&About Paraplan"), this, [this] { showAbout(this); });
    m_helpMenu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::fitToScreen()
{
    // Room for the inputs, the headline, a plot and a table side by side; on a smaller
    // screen (a laptop, or 1920x1080 at 150 %) the screen's free area less the frame.
    QSize size(1440, 900);
    if (const QScreen* s = screen()) {
        const QRect free = s->availableGeometry();
        const QSize frame(16, 48); // room for the window manager's frame and title bar
        size = size.boundedTo(free.size() - frame);
        resize(size);
        // move() places the frame: centred, the frame included.
        move(free.topLeft() +
             QPoint(std::max(0, free.width() - size.width() - frame.width()) / 2,
                    std::max(0, free.height() - size.height() - frame.height()) / 2));
        return;
    }
    resize(size);
}

} // namespace paraplan::ui
