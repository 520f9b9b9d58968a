// The Practice tab (offscreen): a generated question answered by typing into the answer box
// and pressing Enter or Check, the verdict read back against the derivation's own figure,
// the derivation revealed one step at a time, the next question, and new questions when the
// plan changes.
#include "mainwindow.h"
#include "plandocument.h"
#include "practicepanel.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QTextBrowser>

using namespace paraplan;
using namespace paraplan::ui;

namespace {

const char* kExample = PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-dgx-h100.paraplan.json";

bool openExample(MainWindow& window)
{
    QSignalSpy shown(&window, &MainWindow::resultsShown);
    return window.openFile(kExample) && (window.evaluator()->latest() || shown.wait(5000));
}

int findQuestion(PracticePanel* panel, const std::string& prefix)
{
    const std::vector<PracticeQuestion>& questions = panel->questions();
    for (size_t i = 0; i < questions.size(); ++i) {
        if (questions[i].key.rfind(prefix, 0) == 0)
            return static_cast<int>(i);
    }
    return -1;
}

} // namespace

class TestPracticePanel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void answerCheckAndReveal()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QVERIFY(openExample(window));
        auto* tabs = window.findChild<QTabWidget*>();
        PracticePanel* panel = window.practicePanel();
        QVERIFY(panel);
        QCOMPARE(tabs->tabText(tabs->count() - 1).remove('&'), QString("Practice"));
        tabs->setCurrentWidget(panel);
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        const int k = findQuestion(panel, "collective-time:dp:");
        QVERIFY(k >= 0);
        panel->showQuestion(k);
        const PracticeQuestion q = panel->questions()[static_cast<size_t>(k)];
        const double figure = q.derivation.steps.at(static_cast<size_t>(q.answer_step)).value;
        auto* prompt = panel->findChild<QLabel*>("practicePrompt");
        QCOMPARE(prompt->text(), QString::fromStdString(q.prompt));
        auto* answer = panel->findChild<QLineEdit*>("practiceAnswer");
        auto* check = panel->findChild<QPushButton*>("practiceCheck");
        auto* verdict = panel->findChild<QLabel*>("practiceVerdict");
        QVERIFY(answer && check && verdict);

        // Right, typed in milliseconds and checked with Enter.
        answer->setFocus();
        QTest::keyClicks(answer, QString::number(figure * 1e3, 'g', 12) + " ms");
        QTest::keyClick(answer, Qt::Key_Return);
        QVERIFY2(verdict->text().startsWith("right"), qPrintable(verdict->text()));
        // Twice the figure, in seconds, with the Check button.
        answer->clear();
        QTest::keyClicks(answer, QString::number(2 * figure, 'g', 12) + " s");
        QTest::mouseClick(check, Qt::LeftButton);
        QVERIFY2(verdict->text().startsWith("off by 2.0x (too high)"), qPrintable(verdict->text()));
        // 10% over: close.
        answer->clear();
        QTest::keyClicks(answer, QString::number(1.1 * figure * 1e3, 'g', 12) + "ms");
        QTest::mouseClick(check, Qt::LeftButton);
        QVERIFY2(verdict->text().startsWith("close"), qPrintable(verdict->text()));
        // Unreadable: said so, nothing graded.
        answer->clear();
        QTest::keyClicks(answer, "soon");
        QTest::mouseClick(check, Qt::LeftButton);
        QVERIFY2(verdict->text().startsWith("cannot read"), qPrintable(verdict->text()));

        // The derivation, one step at a time, then the answer with its source.
        auto* steps = panel->findChild<QTextBrowser*>("practiceSteps");
        auto* next = panel->findChild<QPushButton*>("practiceRevealNext");
        const int total = static_cast<int>(q.derivation.steps.size());
        QVERIFY(total >= 2);
        QCOMPARE(panel->revealedSteps(), 0);
        QVERIFY(
            !steps->toPlainText().contains(QString::fromStdString(q.derivation.steps[0].label)));
        for (int i = 1; i <= total; ++i) {
            QTest::mouseClick(next, Qt::LeftButton);
            QCOMPARE(panel->revealedSteps(), i);
            const QString text = steps->toPlainText();
            QVERIFY(text.contains(QString::fromStdString(q.derivation.steps[size_t(i - 1)].label)));
            QVERIFY(text.contains(QString("%1 of %2 steps shown").arg(i).arg(total)) ||
                    i > q.answer_step);
            QCOMPARE(text.contains("Answer: "), i > q.answer_step);
        }
        QVERIFY(!next->isEnabled());
        QVERIFY(steps->toPlainText().contains(QString::fromStdString(practiceExpectedText(q))));

        // Next question: a fresh one, nothing revealed, the answer box empty.
        QTest::mouseClick(panel->findChild<QPushButton*>("practiceNext"), Qt::LeftButton);
        QCOMPARE(panel->currentIndex(), (k + 1) % int(panel->questions().size()));
        QCOMPARE(panel->revealedSteps(), 0);
        QVERIFY(answer->text().isEmpty() && verdict->text().isEmpty());
        QTest::mouseClick(panel->findChild<QPushButton*>("practiceRevealAll"), Qt::LeftButton);
        QCOMPARE(panel->revealedSteps(),
                 int(panel->questions()[size_t(panel->currentIndex())].derivation.steps.size()));
    }

    void newPlanNewQuestions()
    {
        MainWindow window(false);
        window.resize(1280, 800);
        window.show();
        QVERIFY(openExample(window));
        auto* tabs = window.findChild<QTabWidget*>();
        PracticePanel* panel = window.practicePanel();
        tabs->setCurrentWidget(panel);
        const int k = findQuestion(panel, "memory:planned");
        QVERIFY(k >= 0);
        panel->showQuestion(k);
        const double before = panel->questions()[size_t(k)].expected;

        QSignalSpy shown(&window, &MainWindow::resultsShown);
        window.document()->edit("ZeRO-2", Field::Whole, [](Plan& plan) { plan.parallel.zero = 2; });
        QVERIFY(shown.count() > 0 || shown.wait(5000));
        // Still on the memory question, now for the new plan's figure.
        const PracticeQuestion& now = panel->questions()[size_t(panel->currentIndex())];
        QCOMPARE(now.key, std::string("memory:planned"));
        QVERIFY(now.expected < before);
        QCOMPARE(now.expected, window.evaluator()->latest()->cost.max_stage_total_bytes);
        QVERIFY(findQuestion(panel, "memory:zero2") < 0); // asked as the plan itself now
    }
};

QTEST_MAIN(TestPracticePanel)
#include "tst_practicepanel.moc"
