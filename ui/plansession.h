#pragma once

#include "plandocument.h"
#include "planevaluator.h"

#include <QObject>

#include <memory>
#include <vector>

class QTimer;
class QUndoStack;

namespace paraplan::ui {

/// The one source of truth for an open plan: the plan document with its one undo history,
/// and the evaluator. Every panel (inputs, topology, search, measure) edits the plan through
/// the document's undo commands and redraws from this session's signals.
class PlanSession : public QObject
{
    Q_OBJECT

public:
    explicit PlanSession(QObject* parent = nullptr);

    PlanDocument* document() const { return m_document; }
    PlanEvaluator* evaluator() const { return m_evaluator; }
    QUndoStack* undoStack() const { return m_document->undoStack(); }
    const Plan& plan() const { return m_document->plan(); }
    std::shared_ptr<const PlanResults> latest() const { return m_evaluator->latest(); }

    /// Evaluates the plan now (normally one evaluation per event-loop turn, however many
    /// edits arrived).
    void evaluateNow();

signals:
    void resultsAvailable(std::shared_ptr<const paraplan::ui::PlanResults> results);
    void planRejected(const std::vector<paraplan::PlanIssue>& issues);

private:
    PlanDocument* m_document;
    PlanEvaluator* m_evaluator;
    QTimer* m_timer;
};

} // namespace paraplan::ui
