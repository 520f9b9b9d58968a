#include "ranking.h"

#include "search.h"

#include "units.h"

#include <algorithm>
#include <cmath>

namespace paraplan {

double tieGroupLimit(double score)
{
    return score + kSearchTieTolerance * std::fabs(score);
}

std::vector<int> simplicityKey(const ParallelLayout& p)
{
    int dimensions = 0;
    for (int degree : {p.tp, p.pp, p.cp, p.dp, p.ep})
        dimensions += degree > 1 ? 1 : 0;
    return {dimensions,
            p.tp,
            p.pp,
            p.cp,
            p.ep,
            p.expertTp(),
            p.interleave,
            p.zero,
            p.sequence_parallel ? 1 : 0,
            static_cast<int>(p.recompute)};
}

bool zeroIsMoot(const ParallelLayout& layout)
{
    return layout.zero > 0 && layout.shardRanks() == 1;
}

std::vector<BehindPart> behindParts(const StepBreakdown& plan, const StepBreakdown& best)
{
    std::vector<BehindPart> parts;
    for (const BreakdownComponent& component : kBreakdownComponents) {
        const double delta = plan.*component.field - best.*component.field;
        if (delta != 0)
            parts.push_back({component.label, delta});
    }
    // Largest in size first; equal sizes keep the components' display order.
    std::stable_sort(parts.begin(), parts.end(), [](const BehindPart& a, const BehindPart& b) {
        return std::fabs(a.seconds) > std::fabs(b.seconds);
    });
    return parts;
}

namespace {

std::string signedSeconds(double seconds)
{
    return (seconds >= 0 ? "+" : "") + units::formatSeconds(seconds);
}

} // namespace

std::string behindText(double net, const std::vector<BehindPart>& parts, const std::string& note,
                       size_t shown)
{
    if (parts.empty())
        return "same step time" + note;
    std::string text = signedSeconds(net) + note + " =";
    const size_t listed = std::min(shown, parts.size());
    for (size_t i = 0; i < listed; ++i)
        text += (i ? ", " : " ") + parts[i].label + " " + signedSeconds(parts[i].seconds);
    // The parts left out, added up, so that the figures shown sum to the net difference.
    double rest = 0;
    for (size_t i = listed; i < parts.size(); ++i)
        rest += parts[i].seconds;
    if (listed < parts.size())
        text += ", other " + signedSeconds(rest);
    return text;
}

std::string searchRowNote(const SearchCandidate& c, int rank)
{
    std::vector<std::string> notes;
    if (c.tie_with > 0 && c.tie_with < rank)
        notes.push_back("tie with #" + std::to_string(c.tie_with));
    if (c.folded > 0)
        notes.push_back("+" + std::to_string(c.folded) + " same plan");
    if (notes.empty())
        return {};
    return " (" + notes.front() + (notes.size() > 1 ? ", " + notes.back() : "") + ")";
}

std::string searchRowNet(const SearchCandidate& c, int rank)
{
    if (rank == 1)
        return "best" + searchRowNote(c, rank);
    if (c.behind.empty())
        return "same step time" + searchRowNote(c, rank);
    return signedSeconds(c.behind_s) + searchRowNote(c, rank);
}

std::string searchRowBehind(const SearchCandidate& c, int rank)
{
    if (rank == 1)
        return "best" + searchRowNote(c, rank);
    return behindText(c.behind_s, c.behind, searchRowNote(c, rank));
}

} // namespace paraplan
