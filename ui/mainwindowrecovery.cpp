// The window's recovery copy: written a moment after each edit, one per window, and at the
// start the copies left by windows that did not close cleanly, offered and never lost.

#include "mainwindow.h"

#include "planio.h"
#include "recoverystore.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>

namespace paraplan::ui {

QString MainWindow::recoveryPath() const
{
    return m_recovery->path();
}

QString MainWindow::recoveryDirectory()
{
    return RecoveryStore::defaultDirectory();
}

void MainWindow::setRecoveryChooser(std::function<RecoveryChoice(const RecoveryOffer&)> chooser)
{
    m_recoveryChooser = std::move(chooser);
}

bool MainWindow::writeRecovery()
{
    if (!m_document->isModified())
        return true;
    std::string error;
    if (!savePlan(recoveryPath().toStdString(), m_document->plan(), &error,
                  HardwareCatalog::bundled())) {
        m_status->setStyleSheet("color: #c0392b;");
        statusBar()->showMessage(tr("The recovery copy of unsaved work was not written: %1")
                                     .arg(QString::fromStdString(error)));
        return false;
    }
    // The file it came from, for the offer to name (a note beside the copy; not the plan).
    RecoveryStore::recordSource(recoveryPath(), m_document->path());
    return true;
}

QString describeRecoveryOffer(const RecoveryOffer& offer)
{
    const QString when = QLocale().toString(offer.saved, QLocale::ShortFormat);
    QString text =
        offer.planName.isEmpty()
            ? QString()
            : QCoreApplication::translate("MainWindow", "\u201c%1\u201d ").arg(offer.planName);
    if (offer.planFile.isEmpty())
        return text + QCoreApplication::translate("MainWindow", "(saved %1)").arg(when);
    return text + QCoreApplication::translate("MainWindow", "(edited from %1, saved %2)")
                      .arg(QFileInfo(offer.planFile).fileName(), when);
}

RecoveryChoice MainWindow::chooseRecovery(const RecoveryOffer& offer)
{
    if (m_recoveryChooser)
        return m_recoveryChooser(offer);
    if (!m_interactive)
        return RecoveryChoice::Keep; // no one to ask: touch nothing
    QMessageBox box(QMessageBox::Question, tr("Recover unsaved plan"), QString(),
                    QMessageBox::NoButton, this);
    const QString what = describeRecoveryOffer(offer);
    QPushButton* recover = box.addButton(tr("Recover"), QMessageBox::AcceptRole);
    QPushButton* open = nullptr;
    if (offer.fileToOpen.isEmpty()) {
        box.setText(tr("Paraplan did not close cleanly last time. Open the unsaved plan it "
                       "kept, %1?")
                        .arg(what));
        box.addButton(tr("Later"), QMessageBox::RejectRole);
    } else {
        box.setText(tr("Paraplan did not close cleanly last time and kept an unsaved plan, "
                       "%1. Recover it, or open %2? The one not chosen is kept: the file "
                       "on disk, the unsaved plan for the next start.")
                        .arg(what, QFileInfo(offer.fileToOpen).fileName()));
        open = box.addButton(tr("Open %1").arg(QFileInfo(offer.fileToOpen).fileName()),
                             QMessageBox::RejectRole);
    }
    QPushButton* discard = box.addButton(tr("Discard unsaved plan"), QMessageBox::DestructiveRole);
    box.setDefaultButton(recover);
    box.exec();
    if (box.clickedButton() == recover)
        return RecoveryChoice::Recover;
    if (box.clickedButton() == discard)
        return RecoveryChoice::Discard;
    return box.clickedButton() == open ? RecoveryChoice::OpenFile : RecoveryChoice::Keep;
}

bool MainWindow::recover(const QString& orphan)
{
    QString error;
    if (!m_document->open(orphan, &error)) {
        // Kept, moved aside, and said: never deleted because it did not load.
        const QString aside = m_recovery->setAside(orphan);
        reportError(tr("Cannot recover plan"),
                    tr("The unsaved plan kept in %1 could not be read:\n%2\nIt was kept as %3.")
                        .arg(orphan, error, aside.isEmpty() ? orphan : aside));
        return false;
    }
    // The recovered plan is unsaved work, not the recovery file itself.
    const Plan plan = m_document->plan();
    m_document->reset(plan, QString());
    m_document->edit(tr("Recovered plan"), Field::Whole, [](Plan&) {});
    // The old copy stays (claimed by this window) until the plan is saved or discarded, and
    // this window's own copy holds it from now on.
    m_recovery->adopt(orphan);
    writeRecovery();
    return true;
}

void MainWindow::start(const QString& file)
{
    const QStringList orphans = m_recovery->claimOrphans();
    bool recovered = false;
    for (const QString& orphan : orphans) {
        // One plan per window: the newest is offered; the rest wait for a later start.
        if (orphan != orphans.front()) {
            m_recovery->release(orphan);
            continue;
        }
        RecoveryOffer offer{orphan, QFileInfo(orphan).lastModified(), file, {}, {}};
        Plan kept;
        std::vector<std::string> errors;
        if (loadPlan(orphan.toStdString(), &kept, &errors, HardwareCatalog::bundled()))
            offer.planName = QString::fromStdString(kept.name);
        offer.planFile = RecoveryStore::sourceOf(orphan);
        switch (chooseRecovery(offer)) {
        case RecoveryChoice::Recover:
            recovered = recover(orphan);
            break;
        case RecoveryChoice::Discard:
            m_recovery->discardOrphan(orphan);
            break;
        case RecoveryChoice::OpenFile:
        case RecoveryChoice::Keep:
            m_recovery->release(orphan);
            break;
        }
    }
    // Never over the recovered plan: the named file stays on disk to open later.
    if (!file.isEmpty() && !recovered)
        openFile(file);
    else if (!file.isEmpty())
        statusBar()->showMessage(
            tr("Showing the recovered plan; %1 is unchanged on disk (File > Open "
               "opens it).")
                .arg(file),
            20000);
}

} // namespace paraplan::ui
