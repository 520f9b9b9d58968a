#include "practicepanel.h"

#include "clusterio.h"
#include "derivationhtml.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTextBrowser>
#include <QTextCursor>
#include <QVBoxLayout>

namespace paraplan::ui {

PracticePanel::PracticePanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_context = new QLabel(this);
    m_context->setObjectName("practiceContext");
    m_context->setWordWrap(true);
    m_context->setStyleSheet("color: #555;");
    m_header = new QLabel(this);
    m_header->setObjectName("practiceHeader");
    m_prompt = new QLabel(this);
    m_prompt->setObjectName("practicePrompt");
    m_prompt->setWordWrap(true);
    m_prompt->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_prompt->setStyleSheet("font-size: 12pt;");

    m_answer = new QLineEdit(this);
    m_answer->setObjectName("practiceAnswer");
    m_check = new QPushButton(tr("&Check"), this);
    m_check->setObjectName("practiceCheck");
    auto* answerRow = new QHBoxLayout;
    auto* answerLabel = new QLabel(tr("&Your answer:"), this);
    answerLabel->setBuddy(m_answer);
    answerRow->addWidget(answerLabel);
    answerRow->addWidget(m_answer, 1);
    answerRow->addWidget(m_check);

    m_verdict = new QLabel(this);
    m_verdict->setObjectName("practiceVerdict");
    m_verdict->setWordWrap(true);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_revealNext = new QPushButton(tr("Reveal next &step"), this);
    m_revealNext->setObjectName("practiceRevealNext");
    m_revealAll = new QPushButton(tr("Reveal &all"), this);
    m_revealAll->setObjectName("practiceRevealAll");
    m_next = new QPushButton(tr("&Next question"), this);
    m_next->setObjectName("practiceNext");
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_revealNext);
    buttons->addWidget(m_revealAll);
    buttons->addStretch(1);
    buttons->addWidget(m_next);

    m_steps = new QTextBrowser(this);
    m_steps->setObjectName("practiceSteps");
    m_steps->setOpenLinks(false);

    layout->addWidget(m_context);
    layout->addWidget(m_header);
    layout->addWidget(m_prompt);
    layout->addLayout(answerRow);
    layout->addWidget(m_verdict);
    layout->addLayout(buttons);
    layout->addWidget(m_steps, 1);

    connect(m_check, &QPushButton::clicked, this, &PracticePanel::check);
    connect(m_answer, &QLineEdit::returnPressed, this, &PracticePanel::check);
    connect(m_revealNext, &QPushButton::clicked, this, &PracticePanel::revealNext);
    connect(m_revealAll, &QPushButton::clicked, this, &PracticePanel::revealAll);
    connect(m_next, &QPushButton::clicked, this, &PracticePanel::nextQuestion);
    showQuestion(0);
}

void PracticePanel::setResults(std::shared_ptr<const PlanResults> results)
{
    m_results = std::move(results);
    m_stale = true;
    if (isVisible())
        regenerate();
}

const std::vector<PracticeQuestion>& PracticePanel::questions()
{
    if (m_stale)
        regenerate();
    return m_questions;
}

void PracticePanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        regenerate();
    if (m_answer->isEnabled())
        m_answer->setFocus(); // the tab opens ready for an answer
}

void PracticePanel::regenerate()
{
    m_stale = false;
    const std::string key = current() ? current()->key : std::string();
    m_questions.clear();
    if (m_results && m_results->cost.ok) {
        const std::shared_ptr<const StepEngine> engine =
            m_engines.engineFor(m_results->plan.cluster);
        m_questions = practiceQuestions(m_results->plan, m_results->cost, *engine);
    }
    // Stay on the same kind of question when the plan changes under it.
    int index = 0;
    for (size_t i = 0; i < m_questions.size(); ++i) {
        if (m_questions[i].key == key)
            index = static_cast<int>(i);
    }
    showQuestion(index);
}

const PracticeQuestion* PracticePanel::current() const
{
    return m_index >= 0 && m_index < static_cast<int>(m_questions.size())
               ? &m_questions[static_cast<size_t>(m_index)]
               : nullptr;
}

void PracticePanel::showQuestion(int index)
{
    m_index = m_questions.empty() ? 0 : index % static_cast<int>(m_questions.size());
    m_revealed = 0;
    m_answer->clear();
    m_verdict->clear();
    m_verdict->setStyleSheet({});
    const PracticeQuestion* q = current();
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_answer, m_check, m_revealNext, m_revealAll, m_next})
        w->setEnabled(q != nullptr);
    if (!q) {
        m_context->clear();
        m_header->setText(tr("Practice"));
        m_prompt->setText(tr("Practice poses interview questions on a valid plan: open one, or "
                             "fix the issues shown in the inputs."));
        m_steps->clear();
        return;
    }
    m_context->setText(tr("On %1").arg(QString::fromStdString(q->context)));
    m_header->setText(tr("<b>Question %1 of %2</b> &middot; %3")
                          .arg(m_index + 1)
                          .arg(m_questions.size())
                          .arg(QString::fromStdString(q->topic)));
    QString prompt = QString::fromStdString(q->prompt);
    for (size_t i = 0; i < q->choices.size(); ++i)
        prompt += QString("\n   %1) %2")
                      .arg(QChar('a' + int(i)))
                      .arg(QString::fromStdString(q->choices[i]));
    m_prompt->setText(prompt);
    m_answer->setPlaceholderText(q->kind == PracticeAnswerKind::Choice
                                     ? tr("a letter, a number or the choice's name")
                                     : tr("e.g. 3.2 %1, or with any unit (a bare number is in %1)")
                                           .arg(QString::fromStdString(q->answer_unit)));
    showSteps();
}

void PracticePanel::check()
{
    const PracticeQuestion* q = current();
    if (!q)
        return;
    const PracticeVerdict v = gradePracticeAnswer(*q, m_answer->text().toStdString());
    const char* colour = v.grade == PracticeGrade::Right   ? "#1a7f37"
                         : v.grade == PracticeGrade::Close ? "#b36b00"
                                                           : "#c0392b";
    m_verdict->setStyleSheet(QString("color: %1; font-weight: bold;").arg(colour));
    m_verdict->setText(QString::fromStdString(v.text));
}

void PracticePanel::revealNext()
{
    const PracticeQuestion* q = current();
    if (q && m_revealed < static_cast<int>(q->derivation.steps.size())) {
        ++m_revealed;
        showSteps();
        m_steps->moveCursor(QTextCursor::End); // the step just revealed
        m_steps->ensureCursorVisible();
    }
}

void PracticePanel::revealAll()
{
    if (const PracticeQuestion* q = current()) {
        m_revealed = static_cast<int>(q->derivation.steps.size());
        showSteps();
    }
}

void PracticePanel::nextQuestion()
{
    showQuestion(m_index + 1);
    m_answer->setFocus();
}

void PracticePanel::showSteps()
{
    const PracticeQuestion* q = current();
    if (!q)
        return;
    const int total = static_cast<int>(q->derivation.steps.size());
    m_revealNext->setEnabled(m_revealed < total);
    m_revealAll->setEnabled(m_revealed < total);
    if (m_revealed == 0) {
        m_steps->setHtml(tr("<p style='color:#555'>The derivation has %1 steps: answer first, "
                            "then reveal them one at a time (Alt+S) or all at once (Alt+A).</p>")
                             .arg(total));
        return;
    }
    Derivation shown = q->derivation;
    shown.steps.resize(static_cast<size_t>(m_revealed));
    if (m_revealed < total)
        shown.notes.clear();
    QString html = derivationHtml(shown);
    if (m_revealed > q->answer_step)
        html += tr("<p><b>Answer: %1</b> (step %2)<br>Source: %3</p>")
                    .arg(QString::fromStdString(practiceExpectedText(*q)).toHtmlEscaped())
                    .arg(q->answer_step + 1)
                    .arg(QString::fromStdString(q->source).toHtmlEscaped());
    else
        html += tr("<p style='color:#555'>%1 of %2 steps shown.</p>").arg(m_revealed).arg(total);
    m_steps->setHtml(html);
}

} // namespace paraplan::ui
