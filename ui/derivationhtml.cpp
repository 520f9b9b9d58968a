#include "derivationhtml.h"

namespace paraplan::ui {
namespace {

QString html(const std::string& text)
{
    return QString::fromStdString(text).toHtmlEscaped();
}

void appendDerivation(const Derivation& d, bool withTitle, bool printable, int depth, QString& out)
{
    const QString titleTag = depth == 0 ? "h2" : "h3";
    const QString sectionTag = depth == 0 ? "h3" : "h4";
    const QString anchor =
        d.anchor.empty() ? QString() : QString("<a name='%1'></a>").arg(html(d.anchor));
    if (withTitle || !anchor.isEmpty())
        out += QString("<%1>%2%3</%1>").arg(titleTag, anchor, html(d.title));
    if (!d.inputs.empty()) {
        out += QString("<%1>Inputs</%1><ul>").arg(sectionTag);
        for (const std::string& input : d.inputs)
            out += "<li>" + html(input) + "</li>";
        out += "</ul>";
    }
    if (!d.symbols.empty()) {
        out += QString("<%1>Symbols</%1><ul>").arg(sectionTag);
        for (const DerivationSymbol& s : d.symbols)
            out += "<li><code>" + html(s.symbol) + "</code>: " + html(s.meaning) + "</li>";
        out += "</ul>";
    }
    // On screen a table aligns the step numbers; in print each step is a paragraph, so that a
    // step split by a page break is drawn line by line on each page (a table cell is drawn
    // whole on both, its hidden half still in the PDF's text).
    out += QString("<%1>Derivation</%1>").arg(sectionTag);
    if (!printable)
        out += "<table cellspacing='0' cellpadding='4'>";
    int number = 1;
    for (const DerivationStep& step : d.steps) {
        const QString stepAnchor = QString::fromStdString(paraplan::stepAnchor(step));
        if (printable)
            out += QString("<p style='margin-top:5px'><a name='%1'></a><b>%2. %3</b><br>")
                       .arg(stepAnchor)
                       .arg(number++)
                       .arg(html(step.label));
        else
            out += QString("<tr><td valign='top'><a name='%1'></a><b>%2.</b></td><td><b>%3</b><br>")
                       .arg(stepAnchor)
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
        out += QString("<%1>Notes</%1><ul>").arg(sectionTag);
        for (const std::string& note : d.notes)
            out += "<li>" + html(note) + "</li>";
        out += "</ul>";
    }
    for (const Derivation& part : d.parts)
        appendDerivation(part, true, printable, depth + 1, out);
}

} // namespace

QString derivationHtml(const Derivation& d, bool withTitle, bool printable)
{
    QString out;
    appendDerivation(d, withTitle, printable, 0, out);
    return out;
}

} // namespace paraplan::ui
