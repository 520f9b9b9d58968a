#include "plansession.h"

#include <QTimer>
#include <QUndoStack>

namespace paraplan::ui {

PlanSession::PlanSession(QObject* parent)
    : QObject(parent), m_document(new PlanDocument(this)), m_evaluator(new PlanEvaluator(this)),
      m_timer(new QTimer(this))
{
    m_timer->setSingleShot(true);
    m_timer->setInterval(0);
    connect(m_timer, &QTimer::timeout, this, &PlanSession::evaluateNow);
    connect(m_document, &PlanDocument::planChanged, m_timer, qOverload<>(&QTimer::start));
    connect(m_evaluator, &PlanEvaluator::resultsAvailable, this, &PlanSession::resultsAvailable);
    connect(m_evaluator, &PlanEvaluator::planRejected, this, &PlanSession::planRejected);
}

void PlanSession::evaluateNow()
{
    m_timer->stop();
    m_evaluator->evaluate(m_document->plan());
}

} // namespace paraplan::ui
