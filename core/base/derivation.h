#pragma once

#include <string>
#include <vector>

namespace paraplan {

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
};

/// A figure explained the way the seed chapter's worked examples read.
struct Derivation
{
    std::string title;
    std::vector<std::string> inputs; ///< "S = 141 GB (user entry: --bytes)"
    std::vector<DerivationStep> steps;
    std::vector<std::string> notes; ///< approximations named, alternatives, caveats

    DerivationStep& add(std::string label, std::string formula, std::string substitution,
                        std::string result, double value, std::string unit,
                        std::string source = {});

    std::string toText() const;
    std::string toJson() const;
};

} // namespace paraplan
