// File > Open Example: the example plans installed with Paraplan (share/paraplan/examples
// beside bin/, or the source tree's when run from the build folder), listed from the folder.

#include "mainwindow.h"

#include "datapaths.h"
#include "plandocument.h"
#include "recoverystore.h"

#include <QFileInfo>
#include <QMenu>
#include <QStatusBar>

namespace paraplan::ui {

void addExamplesMenu(QMenu* file, MainWindow* window)
{
    QMenu* menu = file->addMenu(MainWindow::tr("Open &Example"));
    menu->setObjectName("examplesMenu");
    const QStringList paths = datapaths::examplePlans();
    for (const QString& path : paths)
        menu->addAction(datapaths::planFileStem(path), window,
                        [window, path] { window->openExample(path); })
            ->setToolTip(path);
    if (paths.isEmpty()) {
        const QString dir = datapaths::dataDir();
        menu->addAction(
                MainWindow::tr("No examples installed (%1)")
                    .arg(dir.isEmpty() ? QString("share/paraplan/examples") : dir + "/examples"))
            ->setEnabled(false);
    }
}

// Opens an installed example as an untitled plan: Save asks where, the read-only original
// stays as it is. False, the plan kept, with the reason said (openFile).
bool MainWindow::openExample(const QString& path)
{
    if (!maybeSave() || !openFile(path))
        return false;
    // The installed file is read-only and shared: the plan becomes untitled, so that Save
    // asks where to keep the user's copy. The recent list keeps the example's path.
    m_document->reset(m_document->plan(), QString());
    statusBar()->showMessage(
        tr("Opened the example %1 as an untitled plan (Save asks where to keep it)")
            .arg(QFileInfo(path).fileName()),
        15000);
    return true;
}

} // namespace paraplan::ui
