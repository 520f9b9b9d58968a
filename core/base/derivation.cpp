#include "derivation.h"
#include "cnumeric.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cctype>

namespace paraplan {

DerivationStep& Derivation::add(std::string label, std::string formula, std::string substitution,
                                std::string result, double value, std::string unit,
                                std::string source)
{
    DerivationStep step;
    step.label = std::move(label);
    step.formula = std::move(formula);
    step.substitution = std::move(substitution);
    step.result = std::move(result);
    step.value = value;
    step.unit = std::move(unit);
    step.source = std::move(source);
    steps.push_back(std::move(step));
    return steps.back();
}

void Derivation::define(const std::string& name, const std::string& meaning)
{
    if (!symbol(name))
        symbols.push_back({name, meaning});
}

const DerivationSymbol* Derivation::symbol(const std::string& name) const
{
    for (const DerivationSymbol& s : symbols)
        if (s.symbol == name)
            return &s;
    return nullptr;
}

std::string stepAnchor(const DerivationStep& step)
{
    if (!step.anchor.empty())
        return step.anchor;
    std::string anchor;
    bool inRun = false;
    for (char ch : step.label) {
        const unsigned char u = static_cast<unsigned char>(ch);
        const char lower = u < 128 ? asciiLower(ch) : ch;
        if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9')) {
            anchor += lower;
            inRun = false;
        } else if (!inRun) {
            anchor += '-';
            inRun = true;
        }
    }
    return anchor;
}

std::vector<std::string> formulaSymbols(const std::string& formula)
{
    static const char* const greek[] = {"alpha", "beta",  "gamma",  "delta", "epsilon",
                                        "eta",   "theta", "lambda", "mu",    "rho",
                                        "sigma", "tau",   "phi"};
    std::vector<std::string> found;
    size_t i = 0;
    while (i < formula.size()) {
        const unsigned char u = static_cast<unsigned char>(formula[i]);
        if (!std::isalnum(u) && u != '_') {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < formula.size() &&
               (std::isalnum(static_cast<unsigned char>(formula[j])) || formula[j] == '_'))
            ++j;
        const std::string word = formula.substr(i, j - i);
        i = j;
        if (std::isdigit(u))
            continue; // a number, or a name such as 1F1B
        bool isSymbol = word.size() == 1 || word.find('_') != std::string::npos;
        for (const char* g : greek)
            isSymbol |= word == g;
        if (isSymbol && std::find(found.begin(), found.end(), word) == found.end())
            found.push_back(word);
    }
    return found;
}

namespace {

void appendText(const Derivation& d, std::string& text, int depth)
{
    const char underline = depth == 0 ? '=' : '-';
    text += d.title + "\n" + std::string(d.title.size(), underline) + "\n";
    if (!d.inputs.empty()) {
        text += "\nInputs\n";
        for (const std::string& input : d.inputs)
            text += "  " + input + "\n";
    }
    if (!d.symbols.empty()) {
        text += "\nSymbols\n";
        for (const DerivationSymbol& s : d.symbols)
            text += "  " + s.symbol + ": " + s.meaning + "\n";
    }
    text += "\nDerivation\n";
    int number = 1;
    for (const DerivationStep& step : d.steps) {
        text += "  " + std::to_string(number++) + ". " + step.label + "\n";
        if (!step.formula.empty())
            text += "       " + step.formula + "\n";
        if (!step.substitution.empty())
            text += "     = " + step.substitution + "\n";
        text += "     = " + step.result + "\n";
        if (!step.source.empty())
            text += "       [" + step.source + "]\n";
    }
    if (!d.notes.empty()) {
        text += "\nNotes\n";
        for (const std::string& note : d.notes)
            text += "  - " + note + "\n";
    }
    for (const Derivation& part : d.parts) {
        text += "\n";
        appendText(part, text, depth + 1);
    }
}

QJsonObject jsonOf(const Derivation& d)
{
    QJsonObject root;
    root["title"] = QString::fromStdString(d.title);
    QJsonArray inputArray;
    for (const std::string& input : d.inputs)
        inputArray.append(QString::fromStdString(input));
    root["inputs"] = inputArray;
    QJsonArray symbolArray;
    for (const DerivationSymbol& s : d.symbols)
        symbolArray.append(QJsonObject{{"symbol", QString::fromStdString(s.symbol)},
                                       {"meaning", QString::fromStdString(s.meaning)}});
    root["symbols"] = symbolArray;
    QJsonArray stepArray;
    for (const DerivationStep& step : d.steps) {
        QJsonObject object{{"label", QString::fromStdString(step.label)},
                           {"formula", QString::fromStdString(step.formula)},
                           {"substitution", QString::fromStdString(step.substitution)},
                           {"result", QString::fromStdString(step.result)},
                           {"value", step.value},
                           {"unit", QString::fromStdString(step.unit)},
                           {"source", QString::fromStdString(step.source)},
                           {"anchor", QString::fromStdString(stepAnchor(step))}};
        if (!step.terms.empty()) {
            QJsonArray terms;
            for (const DerivationTerm& term : step.terms)
                terms.append(QJsonObject{{"name", QString::fromStdString(term.name)},
                                         {"value", term.value}});
            object["terms"] = terms;
        }
        stepArray.append(object);
    }
    root["steps"] = stepArray;
    QJsonArray noteArray;
    for (const std::string& note : d.notes)
        noteArray.append(QString::fromStdString(note));
    root["notes"] = noteArray;
    if (!d.anchor.empty())
        root["anchor"] = QString::fromStdString(d.anchor);
    if (!d.parts.empty()) {
        QJsonArray partArray;
        for (const Derivation& part : d.parts)
            partArray.append(jsonOf(part));
        root["parts"] = partArray;
    }
    return root;
}

} // namespace

std::string Derivation::toText() const
{
    std::string text;
    appendText(*this, text, 0);
    return text;
}

std::string Derivation::toJson() const
{
    return QJsonDocument(jsonOf(*this)).toJson(QJsonDocument::Indented).toStdString();
}

} // namespace paraplan
