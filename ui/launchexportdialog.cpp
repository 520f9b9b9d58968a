#include "launchexportdialog.h"

#include "datapaths.h"
#include "dialogfolders.h"

#include "hardware.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace paraplan::ui {

LaunchExportDialog::LaunchExportDialog(const Plan& plan, const QString& planPath, QWidget* parent)
    : QDialog(parent), m_plan(plan), m_planPath(planPath)
{
    setWindowTitle(tr("Export launch configuration"));
    m_target = new QComboBox(this);
    for (const EnumName<LaunchTarget>& entry : kLaunchTargetNames)
        m_target->addItem(QString::fromUtf8(entry.description), static_cast<int>(entry.value));
    m_release = new QLabel(this);
    m_release->setWordWrap(true);
    m_release->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_launcher = new QLabel(this);
    m_launcher->setWordWrap(true);
    m_launcher->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_warnings = new QListWidget(this);
    m_warnings->setWordWrap(true);
    m_warnings->setMaximumHeight(fontMetrics().height() * 7);

    auto* form = new QFormLayout;
    form->addRow(tr("Framework:"), m_target);
    form->addRow(tr("Option names of:"), m_release);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    m_save = buttons->addButton(tr("&Save..."), QDialogButtonBox::AcceptRole);
    m_copy = buttons->addButton(tr("&Copy"), QDialogButtonBox::ActionRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_save, &QPushButton::clicked, this, &LaunchExportDialog::saveInteractively);
    connect(m_copy, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(QString::fromStdString(m_config.text)); });

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_launcher);
    layout->addWidget(new QLabel(tr("Not expressed exactly by this framework:"), this));
    layout->addWidget(m_warnings);
    layout->addWidget(buttons);
    resize(860, 640);

    connect(m_target, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    setTarget(defaultTarget(plan));
}

LaunchTarget LaunchExportDialog::defaultTarget(const Plan& plan)
{
    // The plan's framework; FSDP1 loops have no target of their own, so torchtitan's.
    switch (plan.training.framework) {
    case TrainingFramework::Megatron:
        return LaunchTarget::Megatron;
    case TrainingFramework::DeepSpeed:
        return LaunchTarget::DeepSpeed;
    case TrainingFramework::Torchtitan:
    case TrainingFramework::PytorchFsdp:
        break;
    }
    return LaunchTarget::Torchtitan;
}

void LaunchExportDialog::setTarget(LaunchTarget target)
{
    const int index = m_target->findData(static_cast<int>(target));
    if (index == m_target->currentIndex())
        refresh();
    else
        m_target->setCurrentIndex(index);
}

LaunchTarget LaunchExportDialog::target() const
{
    return static_cast<LaunchTarget>(m_target->currentData().toInt());
}

void LaunchExportDialog::refresh(const QString& fileName)
{
    // Unsaved, the file is named as it will be suggested: the plan file's stem and the target.
    const QString stem = datapaths::planFileStem(m_planPath);
    const QString name = !fileName.isEmpty() || stem.isEmpty()
                             ? fileName
                             : stem + "-" + launchTargetName(target()) + launchSuffix(target());
    m_config = exportLaunchConfig(m_plan, target(), HardwareCatalog::bundled(), name.toStdString());
    const bool ok = m_config.error.empty();
    m_text->setPlainText(
        ok ? QString::fromStdString(m_config.text)
           : tr("Nothing to export: %1").arg(QString::fromStdString(m_config.error)));
    m_release->setText(QString::fromStdString(m_config.release));
    m_launcher->setText(m_config.launcher.empty()
                            ? QString()
                            : tr("Launch with: %1").arg(QString::fromStdString(m_config.launcher)));
    m_launcher->setVisible(!m_config.launcher.empty());
    m_warnings->clear();
    for (const std::string& warning : m_config.warnings)
        m_warnings->addItem(QString::fromStdString(warning));
    if (m_config.warnings.empty() && ok)
        m_warnings->addItem(tr("Every setting of the plan is in the file."));
    m_save->setEnabled(ok);
    m_copy->setEnabled(ok);
}

bool LaunchExportDialog::saveTo(const QString& path, QString* error)
{
    // The launch line names the file as saved: exported again under its name (and back to the
    // shown name when the file cannot be written).
    const QString shown = QString::fromStdString(m_config.file_name);
    refresh(QFileInfo(path).fileName());
    std::string reason;
    if (saveLaunchConfig(m_config, path.toStdString(), &reason))
        return true;
    refresh(shown);
    if (error)
        *error = QString::fromStdString(reason);
    return false;
}

void LaunchExportDialog::saveInteractively()
{
    // The suggested name is the one the shown launch line uses.
    const QString suffix = QString::fromStdString(m_config.suffix);
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save launch configuration"),
        dialogStart("launch", QString::fromStdString(m_config.file_name)),
        tr("%1 (*%2);;All files (*)").arg(m_target->currentText(), suffix));
    rememberDialog("launch", path);
    if (path.isEmpty())
        return;
    QString error;
    if (!saveTo(path, &error)) {
        QMessageBox::warning(this, tr("Cannot save launch configuration"), error);
        return;
    }
    accept();
}

} // namespace paraplan::ui
