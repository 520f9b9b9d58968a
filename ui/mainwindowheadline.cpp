// The headline figures above the result tabs, fresh or greyed as stale while the plan is
// invalid (the last valid numbers, with the reason they were not updated).
#include "mainwindow.h"

#include "plots.h"
#include "summary.h"
#include "topologyeditor.h"

#include <QGraphicsEffect>
#include <QLabel>
#include <QTableView>

namespace paraplan::ui {

void MainWindow::showHeadline(const PlanResults& r, const QString& staleReason)
{
    const bool stale = !staleReason.isEmpty();
    const QString grey("#9a9a9a");
    auto link = [&](const QString& anchor, const QString& text) {
        return QString("<a href='%1' style='text-decoration:none; color:%2'>%3</a>")
            .arg(anchor, stale ? grey : QString("#0b3c5d"), text);
    };
    QString headline = "<table cellspacing='10'><tr>";
    for (const HeadlineFigure& figure : headlineFigures(r.plan, r.cost)) {
        // One line each ("56.0% / 56.0%" wrapped in two at 1280x800).
        const QString value =
            QString::fromStdString(figure.value).toHtmlEscaped().replace(' ', "&nbsp;");
        QString colour =
            figure.key == "memory" ? (figure.warning ? "#c0392b" : "#1a7f37") : QString("#0b3c5d");
        if (stale)
            colour = grey;
        const QString label = QString::fromStdString(figure.label).toHtmlEscaped();
        headline +=
            QString("<td>%1<br><span style='font-size:13pt;color:%2'><b>%3</b></span>"
                    "</td>")
                .arg(stale ? QString("<span style='color:%1'>%2</span>").arg(grey, label) : label,
                     colour,
                     figure.anchor.empty() ? value
                                           : link(QString::fromStdString(figure.anchor), value));
    }
    headline += "</tr></table>";
    m_headline->setText(headline);
    m_headline->setProperty("stale", stale);
    m_headline->setToolTip(stale ? staleReason : QString());
    auto* staleNote = findChild<QLabel*>("staleNote");
    staleNote->setText(staleReason);
    staleNote->setToolTip(staleReason);
    staleNote->setVisible(stale);
    // The plots and tables keep the last valid numbers too: greyed, never blank.
    for (PlotView* plot : plots()) {
        if (stale) {
            // Grey tones of the same picture: the shapes stay readable, the colours go.
            auto* effect = new QGraphicsColorizeEffect(plot);
            effect->setColor(QColor("#9a9a9a"));
            effect->setStrength(1.0);
            plot->setGraphicsEffect(effect); // replaces (and deletes) any earlier one
        } else {
            plot->setGraphicsEffect(nullptr);
        }
        plot->setProperty("stale", stale);
        plot->setToolTip(staleReason);
    }
    for (QTableView* table : {m_collectivesTable, m_memoryTable}) {
        table->setEnabled(!stale);
        table->setToolTip(staleReason);
    }
}

QString drawingStaleReason(const TopologyDocument& drawing)
{
    ClusterSpec cluster;
    QString error;
    if (drawing.cluster(&cluster, &error))
        return QString();
    return MainWindow::tr("Not updated, the drawn cluster is not one Paraplan can model: %1. "
                          "The figures are those of the last cluster it could model (see the "
                          "Topology tab).")
        .arg(error);
}

QString MainWindow::staleText() const
{
    const auto* staleNote = findChild<QLabel*>("staleNote");
    return staleNote->isVisibleTo(this) ? staleNote->text() : QString();
}

} // namespace paraplan::ui
