#pragma once

// What the search says about itself, in the same words wherever it is shown (paraplan-cli
// search, the window's Search tab): where the plan's own layout stands against the searched
// space, how many layouts were timed, and the reserve in GiB. "Timed": the engine computed the
// layout's step time; "scored": it fits with the headroom kept free and is kept for ranking.

#include "search.h"

#include <string>
#include <vector>

namespace paraplan {

/// Every way the layout of `plan` lies outside the space `options` searches, in the order of
/// the settings above; empty when a search with these options meets it (or would, but for its
/// memory headroom, which SearchResult::given_within_headroom reports).
std::vector<SearchSpaceMiss> searchSpaceMisses(const Plan& plan, const SearchOptions& options);
/// "this plan uses interleave 5, outside the searched 1-4; search with --max-interleave 5"
std::string searchSpaceMissText(const SearchSpaceMiss& miss);

/// The plan's step time against the best row: "27.2 ms behind the best" or "27.2 ms faster
/// than the best" (never a negative "behind"), "as fast as the best" when equal. `best` is
/// named by `bestName` ("the best", "the best searched layout").
std::string againstBestText(double givenSeconds, double bestSeconds,
                            const std::string& bestName = "the best");

/// The plain sentence on how many layouts were timed: with the bound and layouts skipped,
/// "Timed 9,583 of the 17,775 valid layouts; the other 8,192 were checked for memory only,
/// because a lower bound on their step time shows they cannot reach the top 10, beat this plan
/// or join the Pareto front. The results are those of timing every layout (--exhaustive)."
/// (and, with more than one thread, that the split depends on their timing); exhaustive, "Timed
/// every valid layout (17,775)."; "" when bounded but nothing was skipped.
std::string searchTimingSentence(const SearchResult& result, const SearchOptions& options);

/// The same in a few words, for a status line whose tooltip holds the sentence above: "Timed
/// 9,583 of 17,775 valid layouts; the other 8,192 could not place (memory checked only; the
/// results are those of timing every one)."; exhaustive and "" as above.
std::string searchTimingBrief(const SearchResult& result, const SearchOptions& options);

/// 17775 -> "17,775".
std::string groupedCount(long long count);
/// A percentage without trailing zeros: 0.005 -> "0.5%".
std::string plainPercent(double share);

/// The reserve as shown, in GiB to two places: "1.43 GiB".
std::string reserveText(double bytes);
/// A reserve entered in GiB (two places): the default's rounded figure, 1.43, stands for the
/// default itself (1469 MiB), so that the shown default searches as the default.
double reserveBytesFromGiB(double gib);

} // namespace paraplan
