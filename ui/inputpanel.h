#pragma once

#include "plandocument.h"

#include <QHash>
#include <QWidget>

class QComboBox;
class QToolButton;
class QSpinBox;
class QDoubleSpinBox;
class QCheckBox;
class QLabel;
class QGroupBox;
class QFormLayout;

namespace paraplan::ui {

/// Every input of a plan as fields: model, cluster, parallel layout, training. Edits go to
/// the document as undoable steps; the fields follow the document (undo, open).
class InputPanel : public QWidget
{
    Q_OBJECT

public:
    explicit InputPanel(PlanDocument* document, QWidget* parent = nullptr);

    /// Marks the fields a rule names; clears the others.
    void markIssues(const std::vector<PlanIssue>& issues);
    /// The widget that edits `field` (a PlanIssue field such as "parallel.tp"), if any.
    QWidget* widgetFor(const QString& field) const;

signals:
    void importModelRequested();
    void openClusterRequested();

private:
    // The four boxes, built once by the constructor.
    QGroupBox* buildModelBox();
    QGroupBox* buildClusterBox();
    QGroupBox* buildParallelBox();
    void addParallelOptions(QGroupBox* parallelBox, QFormLayout* parallelForm);
    QGroupBox* buildTrainingBox();
    void syncFromPlan();
    void showRecomputeModules(const Plan& plan); // the modules button from the plan
    QSpinBox* spin(int min, int max, Field field, const QString& name,
                   std::function<void(Plan&, int)> apply);

    PlanDocument* m_document;
    QComboBox* m_modelPreset;
    QSpinBox* m_layers;
    QSpinBox* m_hidden;
    QSpinBox* m_heads;
    QSpinBox* m_kvHeads;
    QSpinBox* m_ffn;
    QSpinBox* m_vocab;
    QLabel* m_modelSummary;
    QComboBox* m_clusterPreset;
    QSpinBox* m_nodes;
    QSpinBox* m_perRack;
    QDoubleSpinBox* m_spine;
    QSpinBox* m_switchOut;
    QSpinBox* m_nicRate;
    QLabel* m_clusterSummary;
    QSpinBox* m_tp;
    QSpinBox* m_pp;
    QSpinBox* m_dp;
    QSpinBox* m_cp;
    QSpinBox* m_ep;
    QComboBox* m_zero;
    QCheckBox* m_sp;
    QComboBox* m_recompute;
    QToolButton* m_recomputeModules; ///< parallel.recompute_modules, a menu of checkable modules
    QSpinBox* m_interleave;
    QSpinBox* m_micro;
    QSpinBox* m_global;
    QLabel* m_gpuSummary;
    QSpinBox* m_seq;
    QComboBox* m_dtype;
    QDoubleSpinBox* m_tokens;
    QDoubleSpinBox* m_price;
    QComboBox* m_framework;
    QComboBox* m_attention;
    QComboBox* m_kernels;
    QComboBox* m_gradDtype;      ///< training.grad_reduce_dtype: auto, fp32, bf16 (bytes 0, 4, 2)
    QComboBox* m_optimizerDtype; ///< training.optimizer_dtype: auto, fp32, bf16
    QComboBox* m_tpOverlap;
    QSpinBox* m_firstStage;
    QSpinBox* m_lastStage;
    QSpinBox* m_dpShard;
    QHash<QString, QList<QWidget*>> m_fieldWidgets;
};

} // namespace paraplan::ui
