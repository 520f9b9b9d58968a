// The window's files: open, save, recent files, the recovery copy, imports, report and
// table export, drag and drop, and closing with unsaved changes.

#include "mainwindow.h"

#include "dialogfolders.h"

#include "clusterio.h"
#include "modelio.h"
#include "planio.h"
#include "recoverystore.h"
#include "reportwriter.h"
#include "searchpanel.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>

namespace paraplan::ui {

bool MainWindow::openFile(const QString& path, QString* reason)
{
    QString error;
    if (!m_document->open(path, &error)) {
        if (reason)
            *reason = error;
        const QString shown = m_document->path().isEmpty()
                                  ? tr("the untitled plan")
                                  : QFileInfo(m_document->path()).fileName();
        // The status label is rewritten by the next results (the first ones come after a
        // file named at the start): the message stays above them for a while.
        statusBar()->showMessage(tr("%1 was not opened: %2 (still showing %3)")
                                     .arg(path, error.split('\n').join("; "), shown),
                                 60000);
        reportError(tr("Cannot open plan"), tr("%1 was not opened:\n%2").arg(path, error));
        return false;
    }
    statusBar()->clearMessage();
    addRecent(path);
    // The window's unsaved work was saved or discarded (maybeSave) before a file was opened.
    m_recovery->discard();
    return true;
}

bool MainWindow::exportReport(const QString& path, bool letter)
{
    const auto latest = m_evaluator->latest();
    if (!latest) {
        reportError(tr("Cannot export report"),
                    tr("The plan has no results yet; fix the issues shown first."));
        return false;
    }
    QApplication::setOverrideCursor(Qt::WaitCursor);
    ReportOptions options;
    options.paper = letter ? QPageSize::Letter : QPageSize::A4;
    options.comparison = m_search->pinned();
    QString error;
    int pages = 0;
    const bool ok = ReportWriter::writePdf(*latest, path, options, &error, &pages);
    QApplication::restoreOverrideCursor();
    if (!ok) {
        reportError(tr("Cannot export report"), error);
        return false;
    }
    m_status->setText(tr("Report written to %1 (%2 pages)").arg(path).arg(pages));
    return true;
}

bool MainWindow::exportTableCsv(const QString& table, const QString& path)
{
    const auto latest = m_evaluator->latest();
    if (!latest) {
        reportError(tr("Cannot export tables"),
                    tr("The plan has no results yet; fix the issues shown first."));
        return false;
    }
    const QString text = table == "memory" ? ReportWriter::memoryCsv(latest->cost)
                                           : ReportWriter::collectivesCsv(latest->cost);
    QString error;
    if (!writeFileSafely(path, text.toUtf8(), &error)) {
        reportError(tr("Cannot export tables"), error);
        return false;
    }
    m_status->setText(tr("Table written to %1").arg(path));
    return true;
}

bool MainWindow::saveTo(const QString& path)
{
    // Replacing a version someone else saved (another window, an editor) since this window
    // read or wrote the file is never silent.
    const QString bound = m_document->path();
    if (!bound.isEmpty() &&
        QFileInfo(path).absoluteFilePath() == QFileInfo(bound).absoluteFilePath() &&
        m_document->changedOnDisk()) {
        DiskConflict conflict;
        conflict.path = bound;
        conflict.saving = true;
        conflict.modified = m_document->isModified();
        conflict.removed = !QFileInfo::exists(bound);
        switch (chooseDiskConflict(conflict)) {
        case DiskChoice::Overwrite:
            break;
        case DiskChoice::SaveAs:
            return saveAs();
        case DiskChoice::Reload:
            openFile(bound);
            return false;
        case DiskChoice::Keep:
            m_status->setText(tr("Not saved: %1 was changed by someone else since it was opened; "
                                 "save under another name, or reload it")
                                  .arg(QFileInfo(bound).fileName()));
            emit errorReported(tr("%1 changed on disk: not saved").arg(bound));
            return false;
        }
    }
    return writePlan(path);
}

bool MainWindow::writePlan(const QString& path)
{
    QString error;
    // The document is marked saved, and the recovery copies go, only once every byte is on
    // disk; on failure the old file is intact, the window stays unsaved and the copy stays.
    if (!m_document->save(path, &error)) {
        reportError(tr("Cannot save plan"),
                    tr("The plan was not saved (the previous file is unchanged):\n%1").arg(error));
        return false;
    }
    addRecent(path);
    m_recovery->discard();
    return true;
}

void MainWindow::setDiskConflictChooser(std::function<DiskChoice(const DiskConflict&)> chooser)
{
    m_diskChooser = std::move(chooser);
}

DiskChoice MainWindow::chooseDiskConflict(const DiskConflict& conflict)
{
    if (m_diskChooser)
        return m_diskChooser(conflict);
    if (!m_interactive)
        return DiskChoice::Keep;
    const QString name = QFileInfo(conflict.path).fileName();
    const QString what = conflict.removed ? tr("“%1” was removed since this window opened it.")
                                          : tr("“%1” was changed by someone else (another "
                                               "window or program) since this window opened "
                                               "it.");
    QMessageBox box(this);
    box.setIcon(QMessageBox::Warning);
    box.setWindowTitle(tr("Plan changed on disk"));
    QPushButton* overwrite = nullptr;
    QPushButton* saveAs = nullptr;
    QPushButton* reload = nullptr;
    if (conflict.saving) {
        box.setText(what.arg(name) + "\n\n" +
                    tr("Saving would replace that version with this window's plan."));
        overwrite = box.addButton(conflict.removed ? tr("Save") : tr("Overwrite"),
                                  QMessageBox::DestructiveRole);
        saveAs = box.addButton(tr("Save As…"), QMessageBox::AcceptRole);
    } else {
        box.setText(what.arg(name) + "\n\n" +
                    (conflict.modified ? tr("This window has unsaved changes: reloading "
                                            "discards them; keeping them, a save will ask "
                                            "before it replaces the other version.")
                                       : tr("Reload it to see that version?")));
    }
    if (!conflict.removed)
        reload = box.addButton(conflict.modified ? tr("Reload (discard my changes)") : tr("Reload"),
                               QMessageBox::ResetRole);
    QPushButton* keep =
        box.addButton(conflict.saving ? tr("Cancel") : tr("Keep editing"), QMessageBox::RejectRole);
    box.setDefaultButton(saveAs ? saveAs : keep);
    box.exec();
    if (box.clickedButton() == overwrite && overwrite)
        return DiskChoice::Overwrite;
    if (box.clickedButton() == saveAs && saveAs)
        return DiskChoice::SaveAs;
    if (box.clickedButton() == reload && reload)
        return DiskChoice::Reload;
    return DiskChoice::Keep;
}

void MainWindow::fileChangedOnDisk()
{
    if (m_askingAboutDisk)
        return;
    m_askingAboutDisk = true;
    DiskConflict conflict;
    conflict.path = m_document->path();
    conflict.modified = m_document->isModified();
    conflict.removed = !QFileInfo::exists(conflict.path);
    const DiskChoice choice = chooseDiskConflict(conflict);
    m_askingAboutDisk = false;
    if (choice == DiskChoice::Reload)
        openFile(conflict.path);
    else if (choice == DiskChoice::Overwrite)
        writePlan(conflict.path);
    else if (choice == DiskChoice::SaveAs)
        saveAs();
    else
        m_status->setText(tr("%1 changed on disk; a save will ask before it replaces that "
                             "version")
                              .arg(QFileInfo(conflict.path).fileName()));
}

bool MainWindow::maybeSave()
{
    if (!m_document->isModified() || !m_interactive)
        return true;
    const auto answer = QMessageBox::question(
        this, tr("Unsaved changes"), tr("The plan has unsaved changes. Save them first?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Save)
        return save();
    return true;
}

void MainWindow::newPlan()
{
    if (!maybeSave())
        return;
    m_recovery->discard(); // the unsaved work was saved or discarded
    m_document->reset(examplePlan(), QString());
}

void MainWindow::openDialog()
{
    if (!maybeSave())
        return;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open plan"), dialogStart("plan"), tr("Paraplan plans (*.paraplan.json *.json)"));
    rememberDialog("plan", path);
    if (!path.isEmpty())
        openFile(path);
}

bool MainWindow::save()
{
    if (m_document->path().isEmpty())
        return saveAs();
    return saveTo(m_document->path());
}

bool MainWindow::saveAs()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save plan"),
        m_document->path().isEmpty() ? dialogStart("plan", "plan.paraplan.json")
                                     : m_document->path(),
        tr("Paraplan plans (*.paraplan.json *.json)"));
    rememberDialog("plan", path);
    return !path.isEmpty() && saveTo(path);
}

void MainWindow::importModel()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import Hugging Face config"), dialogStart("model"), tr("config.json (*.json)"));
    rememberDialog("model", path);
    if (path.isEmpty())
        return;
    ModelSpec model;
    std::string error;
    if (!loadHuggingFaceConfig(path.toStdString(), &model, &error)) {
        reportError(tr("Cannot import model"), QString::fromStdString(error));
        return;
    }
    // The plan names the file (saved as a reference while the model is what it gave).
    const std::string absolute = QFileInfo(path).absoluteFilePath().toStdString();
    m_document->edit(tr("Import %1").arg(QFileInfo(path).fileName()), Field::Whole,
                     [model, absolute](Plan& plan) {
                         plan.model = model;
                         plan.hf_config = PlanFileRef{absolute, absolute, {}};
                         plan.model_read = std::make_shared<const ModelSpec>(model);
                     });
}

void MainWindow::openCluster()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open cluster file"), dialogStart("cluster"), tr("Cluster files (*.json)"));
    rememberDialog("cluster", path);
    if (path.isEmpty())
        return;
    ClusterSpec cluster;
    std::string error;
    if (!loadCluster(path.toStdString(), {}, &cluster, &error, HardwareCatalog::bundled())) {
        reportError(tr("Cannot open cluster"), QString::fromStdString(error));
        return;
    }
    const std::string absolute = QFileInfo(path).absoluteFilePath().toStdString();
    m_document->edit(tr("Cluster from %1").arg(QFileInfo(path).fileName()), Field::Whole,
                     [cluster, absolute](Plan& plan) {
                         plan.cluster = cluster;
                         plan.cluster_file = PlanFileRef{absolute, absolute, {}};
                         plan.cluster_read = std::make_shared<const ClusterSpec>(cluster);
                     });
}

void MainWindow::updateTitle()
{
    const QString name = m_document->path().isEmpty() ? tr("Untitled plan")
                                                      : QFileInfo(m_document->path()).fileName();
    // Qt shows "[*]" as "*" while the window is modified (and as the platform's own mark).
    setWindowTitle(QString("%1[*] - Paraplan").arg(name));
    setWindowModified(m_document->isModified());
}

QString dialogStart(const QString& kind, const QString& fileName)
{
    // The folder the last dialog of this kind chose, while it exists; else the home folder
    // (never the folder the program happened to be started in).
    QString folder = QSettings().value("dialogFolders/" + kind).toString();
    if (folder.isEmpty() || !QFileInfo(folder).isDir())
        folder = QDir::homePath();
    return fileName.isEmpty() ? folder : QDir(folder).filePath(fileName);
}

void rememberDialog(const QString& kind, const QString& chosen)
{
    if (!chosen.isEmpty())
        QSettings().setValue("dialogFolders/" + kind, QFileInfo(chosen).absolutePath());
}

void MainWindow::addRecent(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value("recentFiles").toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > 8)
        recent.removeLast();
    settings.setValue("recentFiles", recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    for (const QString& path : recent)
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            if (maybeSave())
                                openFile(path);
                        })
            ->setToolTip(path);
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    m_recovery->discard(); // saved, or discarded by the user's choice
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile() &&
        urls.front().toLocalFile().endsWith(".json", Qt::CaseInsensitive))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString path = event->mimeData()->urls().front().toLocalFile();
    if (maybeSave())
        openFile(path);
    event->acceptProposedAction();
}

} // namespace paraplan::ui
