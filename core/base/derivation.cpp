#include "derivation.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace paraplan {

DerivationStep& Derivation::add(std::string label, std::string formula, std::string substitution,
                                std::string result, double value, std::string unit,
                                std::string source)
{
    steps.push_back({std::move(label), std::move(formula), std::move(substitution),
                     std::move(result), value, std::move(unit), std::move(source)});
    return steps.back();
}

std::string Derivation::toText() const
{
    std::string text = title + "\n" + std::string(title.size(), '=') + "\n";
    if (!inputs.empty()) {
        text += "\nInputs\n";
        for (const std::string& input : inputs)
            text += "  " + input + "\n";
    }
    text += "\nDerivation\n";
    int number = 1;
    for (const DerivationStep& step : steps) {
        text += "  " + std::to_string(number++) + ". " + step.label + "\n";
        if (!step.formula.empty())
            text += "       " + step.formula + "\n";
        if (!step.substitution.empty())
            text += "     = " + step.substitution + "\n";
        text += "     = " + step.result + "\n";
        if (!step.source.empty())
            text += "       [" + step.source + "]\n";
    }
    if (!notes.empty()) {
        text += "\nNotes\n";
        for (const std::string& note : notes)
            text += "  - " + note + "\n";
    }
    return text;
}

std::string Derivation::toJson() const
{
    QJsonObject root;
    root["title"] = QString::fromStdString(title);
    QJsonArray inputArray;
    for (const std::string& input : inputs)
        inputArray.append(QString::fromStdString(input));
    root["inputs"] = inputArray;
    QJsonArray stepArray;
    for (const DerivationStep& step : steps) {
        stepArray.append(QJsonObject{{"label", QString::fromStdString(step.label)},
                                     {"formula", QString::fromStdString(step.formula)},
                                     {"substitution", QString::fromStdString(step.substitution)},
                                     {"result", QString::fromStdString(step.result)},
                                     {"value", step.value},
                                     {"unit", QString::fromStdString(step.unit)},
                                     {"source", QString::fromStdString(step.source)}});
    }
    root["steps"] = stepArray;
    QJsonArray noteArray;
    for (const std::string& note : notes)
        noteArray.append(QString::fromStdString(note));
    root["notes"] = noteArray;
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

} // namespace paraplan
