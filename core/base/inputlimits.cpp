#include "inputlimits.h"
#include "cnumeric.h"

#include <cmath>
#include <cstdio>

namespace paraplan::limits {

namespace {

// 4194304 -> "4,194,304"; large or fractional values in %g form (1e+17, 0.5).
std::string plain(double value)
{
    if (!std::isfinite(value))
        return std::isnan(value) ? "not a number" : (value > 0 ? "infinity" : "-infinity");
    if (value != std::floor(value) || std::fabs(value) >= 1e15) {
        char buffer[32];
        cSnprintf(buffer, sizeof buffer, "%.6g", value);
        std::string text = buffer; // 1e+17 -> 1e17
        if (const size_t plus = text.find("e+"); plus != std::string::npos)
            text.erase(plus + 1, 1);
        return text;
    }
    const long long whole = static_cast<long long>(std::fabs(value));
    std::string digits = std::to_string(whole);
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(static_cast<size_t>(i), ",");
    return (value < 0 ? "-" : "") + digits;
}

} // namespace

const std::vector<Range>& all()
{
    static const std::vector<Range> ranges = {
        kNodes,
        kGpusPerNode,
        kNics,
        kNvSwitchChips,
        kLinksPerChip,
        kLinksPerPair,
        kNodesPerRack,
        kOversubscription,
        kTorusDim,
        kLinkGBps,
        kLatencyUs,
        kLayers,
        kHidden,
        kHeads,
        kHeadDim,
        kFfnHidden,
        kVocab,
        kExperts,
        kMaxPositions,
        kDegree,
        kInterleave,
        kMicroBatch,
        kGlobalBatch,
        kSeqLen,
        kTrainTokens,
        kGpuHourUsd,
        kMeasuredSeconds,
        kRanks,
        kBytes,
        kParams,
    };
    return ranges;
}

std::string describe(const Range& range)
{
    std::string text = range.min_exclusive
                           ? "above " + plain(range.min) + " up to " + plain(range.max)
                           : plain(range.min) + " to " + plain(range.max);
    if (range.unit[0] != '\0')
        text += std::string(" ") + range.unit;
    return text;
}

std::string outsideMessage(const Range& range, double value, const char* field)
{
    return std::string(field ? field : range.field) + " must be " +
           (range.whole ? "a whole number from " : "a number ") +
           (range.whole ? "" : (range.min_exclusive ? "" : "from ")) + describe(range) + " (got " +
           plain(value) + ")";
}

std::optional<long long> product(long long a, long long b, long long limit)
{
    long long result = 0;
    if (__builtin_mul_overflow(a, b, &result) || result > limit || result < -limit)
        return std::nullopt;
    return result;
}

} // namespace paraplan::limits
