#include "derivationhtml.h"

#include <QRegularExpression>

namespace paraplan::ui {
namespace {

QString html(const std::string& text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

QString derivationHtml(const Derivation& d, bool withTitle, bool printable)
{
    QString out = withTitle ? "<h2>" + html(d.title) + "</h2>" : QString();
    if (!d.inputs.empty()) {
        out += "<h3>Inputs</h3><ul>";
        for (const std::string& input : d.inputs)
            out += "<li>" + html(input) + "</li>";
        out += "</ul>";
    }
    // On screen a table aligns the step numbers; in print each step is a paragraph, so that a
    // step split by a page break is drawn line by line on each page (a table cell is drawn
    // whole on both, its hidden half still in the PDF's text).
    out += printable ? QString("<h3>Derivation</h3>")
                     : QString("<h3>Derivation</h3><table cellspacing='0' cellpadding='4'>");
    int number = 1;
    for (const DerivationStep& step : d.steps) {
        QString anchor = QString::fromStdString(step.label).toLower();
        anchor.replace(QRegularExpression("[^a-z0-9]+"), "-");
        if (printable)
            out += QString("<p style='margin-top:5px'><a name='%1'></a><b>%2. %3</b><br>")
                       .arg(anchor)
                       .arg(number++)
                       .arg(html(step.label));
        else
            out += QString("<tr><td valign='top'><a name='%1'></a><b>%2.</b></td><td><b>%3</b><br>")
                       .arg(anchor)
                       .arg(number++)
                       .arg(html(step.label));
        if (!step.formula.empty())
            out += "<code>" + html(step.formula) + "</code><br>";
        if (!step.substitution.empty())
            out += "= " + html(step.substitution) + "<br>";
        out += "= <b>" + html(step.result) + "</b>";
        if (!step.source.empty())
            out += "<br><span style='color:#666'>[" + html(step.source) + "]</span>";
        out += printable ? "</p>" : "</td></tr>";
    }
    if (!printable)
        out += "</table>";
    if (!d.notes.empty()) {
        out += "<h3>Notes</h3><ul>";
        for (const std::string& note : d.notes)
            out += "<li>" + html(note) + "</li>";
        out += "</ul>";
    }
    return out;
}

} // namespace paraplan::ui
