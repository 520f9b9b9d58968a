#include "searchwording.h"
#include "cnumeric.h"

#include "summary.h"

#include "stepmodel.h"
#include "units.h"

#include <cmath>
#include <cstdio>

namespace paraplan {

namespace {

bool searchedMicroBatch(int microBatch, int maxMicroBatch)
{
    for (long long mb = 1; mb <= std::max(1, maxMicroBatch); mb *= 2)
        if (mb == microBatch)
            return true;
    return false;
}

bool powerOfTwo(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

} // namespace

std::vector<SearchSpaceMiss> searchSpaceMisses(const Plan& plan, const SearchOptions& options)
{
    std::vector<SearchSpaceMiss> misses;
    const ParallelLayout& p = plan.parallel;
    const std::string maxMb = std::to_string(std::max(1, options.max_micro_batch));
    const int maxInterleave = std::max(1, options.max_interleave);
    if (p.pp > 1 && p.interleave > maxInterleave)
        misses.push_back({"interleave",
                          "this plan uses interleave " + std::to_string(p.interleave) +
                              ", outside the searched 1-" + std::to_string(maxInterleave),
                          p.interleave <= 64 ? "--max-interleave " + std::to_string(p.interleave)
                                             : std::string()});
    const int fixed = options.constraints.fixed_micro_batch;
    if (fixed > 0 && p.micro_batch != fixed)
        misses.push_back({"micro-batch",
                          "this plan uses micro-batch " + std::to_string(p.micro_batch) +
                              ", not the fixed micro-batch " + std::to_string(fixed),
                          "--micro-batch " + std::to_string(p.micro_batch)});
    else if (!searchedMicroBatch(p.micro_batch, options.max_micro_batch))
        misses.push_back(
            {"micro-batch",
             "this plan uses micro-batch " + std::to_string(p.micro_batch) +
                 (powerOfTwo(p.micro_batch) ? ", outside the searched 1, 2, 4, ... " + maxMb
                                            : ", not one of the searched sizes 1, 2, 4, ... " +
                                                  maxMb + " (powers of two)"),
             powerOfTwo(p.micro_batch) ? "--max-micro-batch " + std::to_string(p.micro_batch)
                                       : std::string()});
    const int maxTp = options.constraints.max_tp;
    if (maxTp > 0 && p.tp > maxTp)
        misses.push_back({"max-tp",
                          "this plan uses TP " + std::to_string(p.tp) +
                              ", above the largest TP allowed, " + std::to_string(maxTp),
                          "--max-tp " + std::to_string(p.tp)});
    if (options.constraints.pp_across_nodes && p.pp > 1 &&
        groupStrides(p).pp < plan.cluster.gpusPerNode())
        misses.push_back({"pp-across-nodes",
                          "this plan puts pipeline stages of a group on the same node, which "
                          "the constraint of stages on different nodes excludes",
                          "no --pp-across-nodes"});
    if (!p.stage_layers.empty() || p.first_stage_layers > 0 || p.last_stage_layers > 0)
        misses.push_back({"stage-layers",
                          "this plan splits its layers over the stages its own way; the searched "
                          "layouts split them evenly",
                          ""});
    if (p.dp_shard > 0 && p.dp_shard != p.dp * p.cp)
        misses.push_back({"dp-shard",
                          "this plan shards over groups of " + std::to_string(p.dp_shard) +
                              " (HSDP); the searched layouts shard over every data-parallel rank",
                          ""});
    return misses;
}

std::string searchSpaceMissText(const SearchSpaceMiss& miss)
{
    return miss.text + (miss.option.empty() ? "" : "; search with " + miss.option);
}

std::string againstBestText(double givenSeconds, double bestSeconds, const std::string& bestName)
{
    const double delta = givenSeconds - bestSeconds;
    if (delta == 0)
        return "as fast as " + bestName;
    const std::string size = units::formatSeconds(std::fabs(delta));
    return delta > 0 ? size + " behind " + bestName : size + " faster than " + bestName;
}

std::string groupedCount(long long count)
{
    return groupedNumber(static_cast<double>(count));
}

std::string plainPercent(double share)
{
    std::string text = units::formatNumber(100 * share, 3);
    if (text.find('.') != std::string::npos && text.find('e') == std::string::npos) {
        while (text.back() == '0')
            text.pop_back();
        if (text.back() == '.')
            text.pop_back();
    }
    return text + "%";
}

std::string searchTimingSentence(const SearchResult& result, const SearchOptions& options)
{
    const long long valid = result.evaluated + result.bounded;
    if (!options.bound)
        return "Timed every valid layout (" + groupedCount(valid) + ").";
    if (result.bounded == 0)
        return {};
    long long layoutExcluded = 0; // by a constraint on the layout alone: never judged
    for (const auto& [rule, count] : result.constrained)
        layoutExcluded += rule == "headroom" ? 0 : count;
    std::string text = "Timed " + groupedCount(result.evaluated) + " of the " +
                       groupedCount(valid) + " valid layouts" +
                       (layoutExcluded > 0 ? " the constraints on the layout leave" : "") +
                       "; the other " + groupedCount(result.bounded) +
                       " were checked for memory only, because a lower bound on their step time "
                       "shows they cannot reach the top " +
                       std::to_string(options.top) +
                       ", beat this plan or join the Pareto front. The results are those of "
                       "timing every layout (--exhaustive).";
    if (options.threads > 1)
        text += " How many are timed depends on the threads' timing; the results do not.";
    return text;
}

std::string searchTimingBrief(const SearchResult& result, const SearchOptions& options)
{
    const long long valid = result.evaluated + result.bounded;
    if (!options.bound || result.bounded == 0)
        return searchTimingSentence(result, options);
    return "Timed " + groupedCount(result.evaluated) + " of " + groupedCount(valid) +
           " valid layouts; the other " + groupedCount(result.bounded) +
           " could not place (memory checked only; the results are those of timing every "
           "one).";
}

std::string reserveText(double bytes)
{
    char text[64];
    cSnprintf(text, sizeof text, "%.2f GiB", units::toGiB(bytes));
    return text;
}

double reserveBytesFromGiB(double gib)
{
    const double shownDefault = std::round(units::toGiB(kDefaultSearchReserveBytes) * 100) / 100;
    if (std::fabs(gib - shownDefault) < 1e-9)
        return kDefaultSearchReserveBytes;
    return gib * units::kGiB;
}

} // namespace paraplan
