#pragma once

#include "planevaluator.h"
#include "practice.h"

#include <QWidget>

#include <map>
#include <memory>
#include <string>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QTextBrowser;

namespace paraplan::ui {

/// Interview practice on the current plan (core/engine/practice.h): a question with the
/// plan's numbers, an answer box, Check (how far off), the derivation revealed one step at a
/// time, and the next question. The questions regenerate when the plan changes.
class PracticePanel : public QWidget
{
    Q_OBJECT

public:
    explicit PracticePanel(QWidget* parent = nullptr);

    /// The plan's results (null: no valid plan). Questions are generated when the panel is
    /// shown, so a hidden panel costs nothing per edit.
    void setResults(std::shared_ptr<const PlanResults> results);

    const std::vector<PracticeQuestion>& questions();
    int currentIndex() const { return m_index; }
    int revealedSteps() const { return m_revealed; }
    void showQuestion(int index);

public slots:
    void check();
    void revealNext();
    void revealAll();
    void nextQuestion();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void regenerate();
    void showSteps();
    const PracticeQuestion* current() const;

    std::shared_ptr<const PlanResults> m_results;
    bool m_stale = false;
    EngineCache m_engines{8, HardwareCatalog::bundled()};
    std::vector<PracticeQuestion> m_questions;
    int m_index = 0;
    int m_revealed = 0;

    QLabel* m_context;
    QLabel* m_header;
    QLabel* m_prompt;
    QLineEdit* m_answer;
    QPushButton* m_check;
    QLabel* m_verdict;
    QPushButton* m_revealNext;
    QPushButton* m_revealAll;
    QPushButton* m_next;
    QTextBrowser* m_steps;
};

} // namespace paraplan::ui
