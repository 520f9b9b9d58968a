// Every tab of the planner window, on every bundled example plan, drawn at 1280x800 (logical
// pixels; CTest runs this suite once at 1x and once with QT_SCALE_FACTOR=2, i.e. 2560x1600
// device pixels) with nothing clipped: every visible label, button, check box, group title,
// spin box and combo box text fits its widget (QFontMetrics), no widget reaches past its
// parent's visible rect unless a scroll bar can bring it into view, no tab is behind the tab
// bar's scroll arrows, every plot keeps a readable axis rect whose tick labels neither overlap
// nor leave the plot, and the Search table shows its required columns without scrolling.
// Also: the default window fits the screen (1x, 2x and 1.5x on a 1920x1080 screen), the
// binary answers --help without a display, and a --screenshot run prints nothing on stderr.
//
// Plot internals (legends, labels on bars) belong to the plots; their findings say
// "[plot-internal]" so that they are told apart from the window's layout.
#include "dialogfolders.h"
#include "mainwindow.h"
#include "plots.h"
#include "searchpanel.h"

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyleOptionComboBox>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace paraplan::ui;

namespace {

const QSize kWindow(1280, 800);

QStringList examplePlans()
{
    QStringList plans;
    const QDir dir(PARAPLAN_SOURCE_DIR "/resources/examples");
    for (const QString& name : dir.entryList({"*.json"}, QDir::Files, QDir::Name))
        plans << dir.filePath(name);
    return plans;
}

QString describe(const QWidget* w)
{
    QString text;
    if (const auto* label = qobject_cast<const QLabel*>(w))
        text = label->text();
    else if (const auto* button = qobject_cast<const QAbstractButton*>(w))
        text = button->text();
    else if (const auto* spin = qobject_cast<const QAbstractSpinBox*>(w))
        text = spin->text();
    else if (const auto* combo = qobject_cast<const QComboBox*>(w))
        text = combo->currentText();
    else if (const auto* group = qobject_cast<const QGroupBox*>(w))
        text = group->title();
    text.remove(QRegularExpression("<[^>]*>"));
    if (text.size() > 60)
        text = text.left(57) + "...";
    const QString name = w->objectName().isEmpty() ? QString() : "#" + w->objectName();
    return QString("%1%2 '%3'").arg(w->metaObject()->className(), name, text.simplified());
}

// Qt's own parts of a composite widget (a spin box's line edit, a combo's view, a scroll
// bar's container) are judged through the composite.
bool internalPart(const QWidget* w)
{
    for (const QWidget* p = w->parentWidget(); p; p = p->parentWidget()) {
        if (qobject_cast<const QAbstractSpinBox*>(p) || qobject_cast<const QComboBox*>(p) ||
            qobject_cast<const QTabBar*>(p) || qobject_cast<const QScrollBar*>(p) ||
            qobject_cast<const QHeaderView*>(p) || qobject_cast<const QCustomPlot*>(p))
            return true;
    }
    return w->objectName().startsWith("qt_") || qobject_cast<const QScrollBar*>(w);
}

// Whether the text of `w` fits it; empty when it does, else what is cut.
QString textClip(QWidget* w)
{
    const QFontMetrics fm(w->font());
    if (auto* label = qobject_cast<QLabel*>(w)) {
        if (label->text().isEmpty() || label->pixmap().isNull() == false)
            return {};
        const QRect cr = label->contentsRect();
        if (label->wordWrap()) {
            const int need = label->heightForWidth(label->width());
            if (need > label->height() + 1)
                return QString("wraps to %1 px high in %2").arg(need).arg(label->height());
            return {};
        }
        const QSize need = label->minimumSizeHint();
        if (need.width() > label->width() + 1 || fm.height() > cr.height() + 1)
            return QString("needs %1x%2, has %3x%4")
                .arg(need.width())
                .arg(fm.height())
                .arg(label->width())
                .arg(cr.height());
        return {};
    }
    if (auto* button = qobject_cast<QAbstractButton*>(w)) {
        if (button->text().isEmpty())
            return {};
        const QSize need = button->minimumSizeHint();
        if (need.width() > button->width() + 1)
            return QString("needs %1 px, has %2").arg(need.width()).arg(button->width());
        return {};
    }
    if (auto* spin = qobject_cast<QAbstractSpinBox*>(w)) {
        const QLineEdit* edit = spin->findChild<QLineEdit*>();
        if (!edit)
            return {};
        // QLineEdit keeps 2 px of margin each side of its text.
        const int room = edit->contentsRect().width() - 4;
        const int need = QFontMetrics(edit->font()).horizontalAdvance(edit->text());
        if (need > room)
            return QString("text needs %1 px, has %2").arg(need).arg(room);
        return {};
    }
    if (auto* combo = qobject_cast<QComboBox*>(w)) {
        QStyleOptionComboBox option;
        option.initFrom(combo);
        option.editable = combo->isEditable();
        option.currentText = combo->currentText();
        const QRect field = combo->style()->subControlRect(QStyle::CC_ComboBox, &option,
                                                           QStyle::SC_ComboBoxEditField, combo);
        const int need = fm.horizontalAdvance(combo->currentText());
        if (need > field.width())
            return QString("text needs %1 px, has %2").arg(need).arg(field.width());
        return {};
    }
    if (auto* group = qobject_cast<QGroupBox*>(w)) {
        const int need = fm.horizontalAdvance(group->title()) + 16;
        if (!group->title().isEmpty() && need > group->width())
            return QString("title needs %1 px, has %2").arg(need).arg(group->width());
    }
    return {};
}

// Whether `w` reaches past what its parent shows; a scroll area's content may, along an axis
// its scroll bar can scroll.
QString boundsClip(QWidget* w)
{
    QWidget* parent = w->parentWidget();
    if (!parent || w->isWindow())
        return {};
    const QRect g = w->geometry();
    bool scrollsX = false;
    bool scrollsY = false;
    if (auto* area = qobject_cast<QAbstractScrollArea*>(parent->parentWidget());
        area && area->viewport() == parent) {
        scrollsX = area->horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff;
        scrollsY = area->verticalScrollBarPolicy() != Qt::ScrollBarAlwaysOff;
    }
    const QRect r = parent->rect();
    const bool outX = g.left() < r.left() - 1 || g.right() > r.right() + 1;
    const bool outY = g.top() < r.top() - 1 || g.bottom() > r.bottom() + 1;
    if ((outX && !scrollsX) || (outY && !scrollsY))
        return QString("at %1,%2 %3x%4 past its parent's %5x%6")
            .arg(g.x())
            .arg(g.y())
            .arg(g.width())
            .arg(g.height())
            .arg(r.width())
            .arg(r.height());
    return {};
}

// Tick labels of one axis, in pixels along the axis, must not overlap nor leave the plot.
void checkAxis(QCPAxis* axis, const QString& where, QStringList* problems)
{
    if (!axis->visible() || !axis->tickLabels())
        return;
    const QFontMetrics fm(axis->tickLabelFont());
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const QVector<double> ticks = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    struct Span
    {
        double from, to;
        QString text;
    };
    std::vector<Span> spans;
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
        if (!axis->range().contains(ticks[i]) || labels[i].isEmpty())
            continue;
        const QRect box = fm.boundingRect(QRect(), Qt::TextDontClip, labels[i]);
        const double at = axis->coordToPixel(ticks[i]);
        const double half = (horizontal ? box.width() : box.height()) / 2.0;
        spans.push_back({at - half, at + half, labels[i]});
    }
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.from < b.from; });
    // Rotated labels (QCPAxis::setTickLabelRotation) lie side by side as slanted strips: they
    // overlap when the ticks are closer than a line height over the sine of the angle.
    const double angle = std::abs(axis->tickLabelRotation()) * M_PI / 180.0;
    for (size_t i = 1; i < spans.size(); ++i) {
        const double gap = (spans[i].from + spans[i].to - spans[i - 1].from - spans[i - 1].to) / 2;
        const bool overlap = angle > 0.02 ? gap * std::sin(angle) < fm.height() * 0.9
                                          : spans[i].from < spans[i - 1].to;
        if (overlap)
            *problems << QString("[plot-internal] %1: %2 tick labels '%3' and '%4' overlap")
                             .arg(where, axis->label(), spans[i - 1].text, spans[i].text);
    }
    const QCustomPlot* plot = axis->parentPlot();
    const double extent = horizontal ? plot->width() : plot->height();
    if (!spans.empty() && (spans.front().from < -1 || spans.back().to > extent + 1))
        *problems << QString("[plot-internal] %1: %2 tick labels leave the plot")
                         .arg(where, axis->label());
    if (!axis->label().isEmpty()) {
        const int need = QFontMetrics(axis->labelFont()).horizontalAdvance(axis->label());
        if (need > extent)
            *problems << QString("[plot-internal] %1: axis label '%2' needs %3 px, the plot has %4")
                             .arg(where, axis->label())
                             .arg(need)
                             .arg(extent);
    }
}

void checkPlot(QCustomPlot* plot, const QString& tab, QStringList* problems)
{
    plot->replot(QCustomPlot::rpImmediateRefresh);
    const auto* view = qobject_cast<const PlotView*>(plot->parentWidget());
    const QString where = QString("%1: plot '%2'").arg(tab, view ? view->title() : QString());
    for (QCPAxisRect* rect : plot->axisRects()) {
        // Room to read a curve: at least 120 x 70 px inside the axes.
        // A small rect in a small widget is the window's layout; in a large widget, the
        // plot's own layout (a legend or labels taking the room).
        const bool roomy = plot->width() >= 320 && plot->height() >= 220;
        if (rect->width() < 120 || rect->height() < 70)
            *problems << QString("%1%2: axis rect only %3x%4 px (the plot widget %5x%6)")
                             .arg(roomy ? "[plot-internal] " : "")
                             .arg(where)
                             .arg(rect->width())
                             .arg(rect->height())
                             .arg(plot->width())
                             .arg(plot->height());
        if (!plot->rect().contains(rect->outerRect().adjusted(1, 1, -1, -1)))
            *problems << QString("%1: axes with their labels leave the plot").arg(where);
        for (QCPAxis* axis : rect->axes())
            checkAxis(axis, where, problems);
    }
    // Text on the plot (annotations, labels on bars): inside what draws it, not on another.
    QVector<QPair<QRectF, QString>> texts;
    for (int i = 0; i < plot->itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(plot->item(i));
        if (!text || !text->realVisibility() || text->text().isEmpty() ||
            std::abs(text->rotation()) > 1)
            continue;
        const QFontMetricsF fm(text->font());
        const QSizeF size =
            fm.size(0, text->text()) + QSizeF(text->padding().left() + text->padding().right(),
                                              text->padding().top() + text->padding().bottom());
        const QPointF at = text->position->pixelPosition();
        const Qt::Alignment align = text->positionAlignment();
        const double x = align & Qt::AlignLeft    ? at.x()
                         : align & Qt::AlignRight ? at.x() - size.width()
                                                  : at.x() - size.width() / 2;
        const double y = align & Qt::AlignTop      ? at.y()
                         : align & Qt::AlignBottom ? at.y() - size.height()
                                                   : at.y() - size.height() / 2;
        const QRectF box(QPointF(x, y), size);
        const QRectF room = text->clipToAxisRect() && text->clipAxisRect()
                                ? QRectF(text->clipAxisRect()->rect())
                                : QRectF(plot->rect());
        if (!room.adjusted(-1, -1, 1, 1).contains(box))
            *problems << QString("[plot-internal] %1: text '%2' is cut at the edge")
                             .arg(where, text->text());
        for (const auto& [other, name] : texts) {
            if (other.intersected(box).width() > 2 && other.intersected(box).height() > 2)
                *problems << QString("[plot-internal] %1: texts '%2' and '%3' overlap")
                                 .arg(where, name, text->text());
        }
        texts.append({box, text->text()});
    }
    // Legends: inside the plot, every entry given the width its text needs.
    for (QCPLegend* legend : plot->findChildren<QCPLegend*>()) {
        if (!legend->realVisibility() || legend->itemCount() == 0)
            continue;
        if (!plot->rect().contains(legend->outerRect()))
            *problems << QString("[plot-internal] %1: the legend leaves the plot").arg(where);
        for (int i = 0; i < legend->itemCount(); ++i) {
            auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
            if (!item || !item->realVisibility())
                continue;
            const int need = static_cast<QCPLayoutElement*>(item)->minimumOuterSizeHint().width();
            if (need > item->outerRect().width() + 1 || item->outerRect().right() > plot->width())
                *problems << QString("[plot-internal] %1: legend entry '%2' needs %3 px, has %4")
                                 .arg(where, item->plottable()->name())
                                 .arg(need)
                                 .arg(item->outerRect().width());
        }
    }
}

QStringList clipsIn(QWidget* root, const QString& tab)
{
    QStringList problems;
    QList<QWidget*> widgets = root->findChildren<QWidget*>();
    widgets.prepend(root);
    for (QWidget* w : widgets) {
        if (!w->isVisible() || internalPart(w))
            continue;
        if (const QString clip = textClip(w); !clip.isEmpty())
            problems << QString("%1: %2 %3").arg(tab, describe(w), clip);
        if (const QString clip = boundsClip(w); !clip.isEmpty())
            problems << QString("%1: %2 %3").arg(tab, describe(w), clip);
        if (auto* bar = qobject_cast<QTabBar*>(w)) {
            for (int i = 0; i < bar->count(); ++i) {
                if (!bar->rect().contains(bar->tabRect(i)))
                    problems << QString("%1: tab '%2' is behind the tab bar's scroll arrows")
                                    .arg(tab, bar->tabText(i));
            }
        }
        if (auto* toolbar = qobject_cast<QToolBar*>(w)) {
            const auto* more = toolbar->findChild<QWidget*>("qt_toolbar_ext_button");
            if (more && more->isVisible())
                problems << QString("%1: toolbar '%2' hides tools behind >>")
                                .arg(tab, toolbar->objectName());
        }
        if (auto* plot = qobject_cast<QCustomPlot*>(w))
            checkPlot(plot, tab, &problems);
    }
    return problems;
}

// Table columns named `required` are wide enough for their header and their cells, and lie
// inside the viewport with the table scrolled to its left end.
QStringList hiddenColumns(QTableView* table, const QStringList& required)
{
    QStringList problems;
    QHeaderView* header = table->horizontalHeader();
    table->horizontalScrollBar()->setValue(0);
    QAbstractItemModel* model = table->model();
    for (const QString& name : required) {
        int column = -1;
        for (int c = 0; c < model->columnCount(); ++c) {
            if (model->headerData(c, Qt::Horizontal)
                    .toString()
                    .compare(name, Qt::CaseInsensitive) == 0)
                column = c;
        }
        if (column < 0) {
            problems << QString("%1: no column '%2'").arg(table->objectName(), name);
            continue;
        }
        const int left = header->sectionViewportPosition(column);
        const int width = header->sectionSize(column);
        // The header's own hint, and the widest cell's text with the cell's margins.
        int need = header->sectionSizeHint(column);
        const QFontMetrics fm(table->font());
        const int margin = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 1);
        for (int row = 0; row < model->rowCount(); ++row)
            need = std::max(
                need, fm.horizontalAdvance(model->index(row, column).data().toString()) + margin);
        if (header->isSectionHidden(column) || left < 0 ||
            left + width > table->viewport()->width() + 1)
            problems << QString("%1: column '%2' at %3..%4 is not within the %5 px shown")
                            .arg(table->objectName(), name)
                            .arg(left)
                            .arg(left + width)
                            .arg(table->viewport()->width());
        else if (need > width + 1)
            problems << QString("%1: column '%2' needs %3 px, has %4")
                            .arg(table->objectName(), name)
                            .arg(need)
                            .arg(width);
    }
    return problems;
}

void settle()
{
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(20);
    }
}

// Lists every finding in full (a failure message is cut short) and returns them all: the
// window's layout and the plots' insides ("[plot-internal]") alike fail the test.
QStringList failuresOf(QStringList problems)
{
    problems.removeDuplicates();
    for (const QString& problem : problems)
        qInfo("clipped: %s", qPrintable(problem));
    return problems;
}

QAction* menuAction(QMainWindow& window, const QString& menu, const QString& text)
{
    for (QAction* top : window.menuBar()->actions()) {
        if (top->text().remove('&') != menu || !top->menu())
            continue;
        for (QAction* action : top->menu()->actions()) {
            if (action->text().remove('&') == text)
                return action;
        }
    }
    return nullptr;
}

} // namespace

class TestLayout : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void everyTab_data();
    void everyTab();
    void searchColumns();
    void windowFitsScreen();
    void helpMenu();
    void dialogFolders();
    void helpWithoutDisplay();
    void screenshotIsQuiet();

private:
    double m_scale = 1;
    QTemporaryDir m_home;
};

void TestLayout::initTestCase()
{
    QVERIFY(m_home.isValid());
    m_scale = qEnvironmentVariable("QT_SCALE_FACTOR", "1").toDouble();
    // The scale asked for is the one drawn (a 2x run that drew at 1x would prove nothing).
    QWidget probe;
    probe.show();
    QCOMPARE(probe.devicePixelRatioF(), m_scale);
    QVERIFY(!examplePlans().isEmpty());
}

void TestLayout::everyTab_data()
{
    QTest::addColumn<QString>("plan");
    for (const QString& plan : examplePlans())
        QTest::newRow(qPrintable(QFileInfo(plan).completeBaseName())) << plan;
}

void TestLayout::everyTab()
{
    QFETCH(QString, plan);
    MainWindow window(false);
    QSignalSpy shown(&window, &MainWindow::resultsShown);
    QString error;
    QVERIFY2(window.openFile(plan, &error), qPrintable(error));
    window.resize(kWindow);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(shown.wait(10000) || shown.count() > 0);
    QCOMPARE(window.size(), kWindow);
    auto* tabs = window.findChild<QTabWidget*>();
    QVERIFY(tabs);
    QStringList problems;
    for (int i = 0; i < tabs->count(); ++i) {
        tabs->setCurrentIndex(i);
        settle();
        const QString tab = tabs->tabText(i).remove('&');
        // The page, and the window around it (inputs, headline, tab bar) with this tab shown.
        problems << clipsIn(&window, tab);
    }
    const QStringList failures = failuresOf(problems);
    QVERIFY2(failures.isEmpty(), qPrintable(QString("%1 clipped at %2x%3@%4x (listed above)")
                                                .arg(failures.size())
                                                .arg(kWindow.width())
                                                .arg(kWindow.height())
                                                .arg(m_scale)));
}

// The issue: at 1280x800 the Search tab showed four columns and hid "behind the best by"
// behind a scroll bar.
void TestLayout::searchColumns()
{
    MainWindow window(false);
    QSignalSpy shown(&window, &MainWindow::resultsShown);
    QString error;
    QVERIFY2(window.openFile(PARAPLAN_SOURCE_DIR
                             "/resources/examples/llama3-70b-dgx-h100.paraplan.json",
                             &error),
             qPrintable(error));
    window.resize(kWindow);
    window.show();
    QVERIFY(shown.wait(10000) || shown.count() > 0);
    SearchPanel* panel = window.searchPanel();
    window.findChild<QTabWidget*>()->setCurrentWidget(panel);
    QSignalSpy finished(panel, &SearchPanel::finished);
    panel->start();
    QVERIFY(finished.wait(120000));
    settle();
    auto* table = panel->findChild<QTableView*>("searchResults");
    QVERIFY(table);
    QVERIFY(table->model()->rowCount() > 0);
    const QStringList problems =
        hiddenColumns(table, {"Layout", "Step time", "GiB/GPU", "MFU", "Behind the best by"});
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
    const QStringList clips = failuresOf(clipsIn(panel, "Search, searched"));
    QVERIFY2(clips.isEmpty(), qPrintable(clips.join("\n")));
}

// The default window lies inside the screen's available area, whatever the scale.
void TestLayout::windowFitsScreen()
{
    MainWindow window(false);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    settle();
    const QRect available = window.screen()->availableGeometry();
    QVERIFY2(available.contains(window.frameGeometry()),
             qPrintable(QString("window %1x%2 at %3,%4 on a %5x%6 screen (scale %7)")
                            .arg(window.frameGeometry().width())
                            .arg(window.frameGeometry().height())
                            .arg(window.frameGeometry().x())
                            .arg(window.frameGeometry().y())
                            .arg(available.width())
                            .arg(available.height())
                            .arg(m_scale)));
    // The layout asks for no more than the screen has.
    const QSize least = window.minimumSizeHint();
    QVERIFY2(
        least.width() <= available.width() && least.height() <= available.height(),
        qPrintable(
            QString("the window needs at least %1x%2").arg(least.width()).arg(least.height())));
}

// Help: the user guide rendered from Markdown, the shortcuts of this build, About with the
// versions; Save As has a shortcut on every platform.
void TestLayout::helpMenu()
{
    MainWindow window(false);
    window.show();
    QAction* saveAs = menuAction(window, "File", "Save As...");
    QVERIFY(saveAs);
    QCOMPARE(saveAs->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));

    QAction* guide = menuAction(window, "Help", "User Guide");
    QVERIFY(guide);
    QCOMPARE(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));
    guide->trigger();
    auto* text = window.findChild<QTextBrowser*>("userGuide");
    QVERIFY2(text, "Help > User Guide opened no guide");
    const QString plain = text->toPlainText();
    QVERIFY2(plain.contains("The topology editor") && plain.contains("Keyboard shortcuts"),
             qPrintable(plain.left(300)));
    QVERIFY2(!plain.contains("## "), "the Markdown was shown, not rendered");
    text->window()->close();

    QAction* keys = menuAction(window, "Help", "Keyboard Shortcuts");
    QVERIFY(keys);
    keys->trigger();
    auto* list = window.findChild<QTextBrowser*>("shortcuts");
    QVERIFY(list);
    const QString shortcuts = list->toPlainText();
    for (const QString& expected :
         {QString("File > Save As"), QString("Ctrl+Shift+S"), QString("File > Quit"),
          QString("Edit > Undo"), QString("Topology: Add node"), QString("Help > User Guide")})
        QVERIFY2(shortcuts.contains(expected), qPrintable(expected + " in:\n" + shortcuts));
    list->window()->close();

    QAction* about = menuAction(window, "Help", "About Paraplan");
    QVERIFY(about);
    QString aboutText;
    QTimer::singleShot(0, &window, [&aboutText] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
            aboutText = box->text();
            box->accept();
        }
    });
    about->trigger();
    QVERIFY2(aboutText.contains(QString("Qt</td><td>%1").arg(qVersion())), qPrintable(aboutText));
    QVERIFY2(aboutText.contains(QCUSTOMPLOT_VERSION_STR), qPrintable(aboutText));
    QVERIFY2(aboutText.contains("CUDA ") || aboutText.contains("not built"), qPrintable(aboutText));
}

// A file dialog starts in the folder the last one of its kind chose, while it exists.
void TestLayout::dialogFolders()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath("plans"));
    const QString plans = QDir(dir.path()).filePath("plans");
    paraplan::ui::rememberDialog("plan", plans + "/a.json");
    QCOMPARE(paraplan::ui::dialogStart("plan", "b.json"), plans + "/b.json");
    QCOMPARE(paraplan::ui::dialogStart("plan"), plans);
    paraplan::ui::rememberDialog("plan", QString()); // cancelled: nothing changes
    QCOMPARE(paraplan::ui::dialogStart("plan"), plans);
    QVERIFY(QDir(plans).removeRecursively());
    QCOMPARE(paraplan::ui::dialogStart("plan"), QDir::homePath());
}

// The issue: `paraplan --help` failed without a display ("no Qt platform plugin could be
// initialized").
void TestLayout::helpWithoutDisplay()
{
    for (const QString& option : {QString("--help"), QString("--version")}) {
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        env.insert("QT_QPA_PLATFORM", "xcb"); // what a desktop build defaults to
        env.insert("HOME", m_home.path());
        process.setProcessEnvironment(env);
        process.start(PARAPLAN_BINARY_DIR "/app/paraplan", {option});
        QVERIFY(process.waitForFinished(30000));
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QVERIFY2(process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0,
                 qPrintable(option + ": " + err));
        QVERIFY2(err.isEmpty(), qPrintable(option + ": " + err));
        QVERIFY2(out.contains(option == "--help" ? "--screenshot" : "Paraplan"), qPrintable(out));
    }
}

// A scripted screenshot of a plan prints nothing at all on the terminal, even with Qt's
// messages let through (PARAPLAN_QT_MESSAGES=1 shows what the message filter would hide).
void TestLayout::screenshotIsQuiet()
{
    for (const QString& messages : {QString("0"), QString("1")}) {
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("HOME", m_home.path());
        env.insert("XDG_CONFIG_HOME", m_home.path() + "/config");
        env.insert("XDG_RUNTIME_DIR", m_home.path() + "/runtime");
        QDir().mkpath(m_home.path() + "/runtime");
        QFile::setPermissions(m_home.path() + "/runtime",
                              QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        env.insert("PARAPLAN_QT_MESSAGES", messages);
        process.setProcessEnvironment(env);
        const QString shot = m_home.filePath("quiet.png");
        process.start(PARAPLAN_BINARY_DIR "/app/paraplan",
                      {PARAPLAN_SOURCE_DIR "/resources/examples/llama3-70b-two-racks.paraplan.json",
                       "--screenshot", shot, "--size", "1280x800", "--tab", "Search"});
        QVERIFY(process.waitForFinished(60000));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitCode(), 0);
        QVERIFY2(err.isEmpty(), qPrintable("PARAPLAN_QT_MESSAGES=" + messages + ":\n" + err));
        QVERIFY(QFile::exists(shot));
    }
}

// The offscreen screen is made the size under test before QApplication exists: 1280x800
// logical pixels at the scale CTest set (or the size PARAPLAN_TEST_SCREEN names, in device
// pixels).
int main(int argc, char** argv)
{
    const double scale = qEnvironmentVariable("QT_SCALE_FACTOR", "1").toDouble();
    QString screen = qEnvironmentVariable("PARAPLAN_TEST_SCREEN");
    if (screen.isEmpty())
        screen = QString("%1x%2").arg(qRound(1280 * scale)).arg(qRound(800 * scale));
    const QStringList sides = screen.split('x');
    QTemporaryDir config;
    const QString path = config.filePath("screen.json");
    QFile file(path);
    if (!config.isValid() || sides.size() != 2 || !file.open(QIODevice::WriteOnly))
        return 2;
    file.write(QString(R"({"screens": [{"name": "test", "x": 0, "y": 0, "width": %1,)"
                       R"( "height": %2, "logicalDpi": 96, "dpr": 1}]})")
                   .arg(sides[0], sides[1])
                   .toUtf8());
    file.close();
    qputenv("QT_QPA_PLATFORM", QString("offscreen:configfile=%1").arg(path).toUtf8());
    QStandardPaths::setTestModeEnabled(true); // recent files go to a test folder
    QApplication app(argc, argv);
    QApplication::setOrganizationName("ParaplanTest");
    QApplication::setApplicationName("tst_layout");
    TestLayout test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_layout.moc"
