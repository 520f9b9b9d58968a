#pragma once

#include <string>
#include <vector>

namespace paraplan {

/// One shown part of a step's result: a step whose result is the sum of its terms lists
/// them here (tst_sources checks that the shown result is their sum).
struct DerivationTerm
{
    std::string name; ///< "compute", "memory above the compute"
    double value = 0; ///< in the step's unit
};

/// One line of a worked derivation: what is computed, the formula, the numbers put into it,
/// the result, and where the formula or the inputs came from.
struct DerivationStep
{
    std::string label;
    std::string formula;
    std::string substitution;
    std::string result;
    double value = 0; ///< the result as a number, in `unit`
    std::string unit; ///< "s", "B", "B/s", "" for ratios
    std::string source;
    std::vector<DerivationTerm> terms; ///< when the result is their sum; else empty
    std::string anchor;                ///< a stable link target ("" : made from the label)
};

/// A symbol a formula uses and what it stands for: "g" = "KV heads (grouped-query attention)".
struct DerivationSymbol
{
    std::string symbol;
    std::string meaning;
};

/// A figure explained the way a textbook's worked example reads: inputs with their sources,
/// the symbols the formulas use, numbered steps, notes, and the derivations it rests on.
struct Derivation
{
    std::string title;
    std::vector<std::string> inputs; ///< "S = 141 GB (user entry: --bytes)"
    std::vector<DerivationStep> steps;
    std::vector<std::string> notes;        ///< approximations named, alternatives, caveats
    std::vector<DerivationSymbol> symbols; ///< every symbol of every formula, defined
    std::vector<Derivation> parts;         ///< sub-derivations (a plan's collectives)
    std::string anchor;                    ///< link target of a part ("" for none)

    DerivationStep& add(std::string label, std::string formula, std::string substitution,
                        std::string result, double value, std::string unit,
                        std::string source = {});
    /// Defines `symbol` (once: a second definition of the same symbol is ignored).
    void define(const std::string& symbol, const std::string& meaning);
    const DerivationSymbol* symbol(const std::string& symbol) const;

    std::string toText() const;
    std::string toJson() const;
};

/// The link target of a step: its anchor, or its label in lower case with every run of
/// other characters replaced by '-' ("Time to train" -> "time-to-train").
std::string stepAnchor(const DerivationStep& step);

/// The symbols a formula uses: single letters and subscripted names ("d_v", "L_moe") and the
/// Greek letters written out (alpha, sigma), each once, in order of appearance.
std::vector<std::string> formulaSymbols(const std::string& formula);

} // namespace paraplan
