#pragma once

#include "launchconfig.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;

namespace paraplan::ui {

/// File > Export launch configuration: the plan as Megatron-LM flags, a torchtitan TOML, a
/// DeepSpeed JSON or a NeMo YAML fragment, shown before it is saved, with every setting the
/// target cannot express listed beside it.
class LaunchExportDialog : public QDialog
{
    Q_OBJECT

public:
    /// `planPath`: the plan's file (names the suggested file), empty for an untitled plan.
    LaunchExportDialog(const Plan& plan, const QString& planPath, QWidget* parent = nullptr);

    void setTarget(LaunchTarget target);
    LaunchTarget target() const;
    const LaunchConfig& config() const { return m_config; }
    /// Writes the file atomically; false with `error` naming the file and the reason.
    /// The launch line then names the saved file (the file is exported again under its name).
    bool saveTo(const QString& path, QString* error);

    /// The target a plan most likely launches with: torchtitan for FSDP-style stacks,
    /// Megatron-LM otherwise.
    static LaunchTarget defaultTarget(const Plan& plan);

private:
    /// Exports again; `fileName`: the name the launch line gives the file (empty: the plan
    /// file's stem and the target, or the plan's name for an untitled plan).
    void refresh(const QString& fileName = QString());
    void saveInteractively();

    Plan m_plan;
    QString m_planPath;
    LaunchConfig m_config;
    QComboBox* m_target;
    QLabel* m_release;
    QPlainTextEdit* m_text;
    QLabel* m_launcher;
    QListWidget* m_warnings;
    QPushButton* m_save;
    QPushButton* m_copy;
};

} // namespace paraplan::ui
