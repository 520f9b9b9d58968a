#pragma once

#include "collectivemodel.h"
#include "derivation.h"

#include <string>

namespace paraplan {

/// Where the request's own numbers came from, for the derivation's input list.
struct CollectiveInputSources
{
    std::string bytes = "user entry";
    std::string ranks = "user entry";
    std::string link = "user entry";    ///< flat link only
    std::string latency = "user entry"; ///< flat link only
};

/// The worked derivation of `result`: placement, link figures with their sources, bytes per
/// rank, the bandwidth and latency terms, algbw and busbw, the regime; and, for all_reduce,
/// reduce_scatter and all_gather, the large-n approximation (2S for 2(n-1)/n S), named. Every
/// symbol of its formulas is defined in its symbol table.
Derivation deriveCollective(const CollectiveModel& model, const CollectiveRequest& request,
                            const CollectiveResult& result,
                            const CollectiveInputSources& sources = {});

/// algbw and busbw from a measured time, with nccl-tests' definitions, and what S means for
/// the operation.
Derivation deriveMeasuredBandwidth(CollectiveOp op, double bytes, int ranks, double time_s);

/// "7/8" for (n-1)/n and similar, in lowest terms.
std::string fractionText(long long numerator, long long denominator);

/// Replaces the symbols n, g, k, S, dx, dy, dz of a phase formula by their values.
std::string substituteSymbols(const std::string& formula, const CollectiveResult& result,
                              const CollectiveRequest& request);

} // namespace paraplan
