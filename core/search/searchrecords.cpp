#include "searchrecords.h"

namespace paraplan::searchdetail {

// A lower bound on the step time of every layout that differs from the costed `cost` only in
// its ZeRO stage and recompute: m x max_i fb_i + (sum_i fb_i - max_i fb_i) / interleave, with
// fb_i the forward + backward seconds of one micro-batch on stage i and m the micro-batches.
//
// Proof, against the engine (core/engine/stepmodel.cpp, stepcomm.cpp): the step time is the
// sum of the breakdown's components, each >= 0: compute + recompute + TP/CP/EP/PP exposed =
// m x mb_c, with mb_i = fb_i + recompute_i + tp_i + cp_i + ep_i + pp_i >= fb_i the stage's
// micro-batch time and c the stage of largest mb_i, so m x mb_c >= m x max_i fb_i; the
// bubble is (sum_i mb_i - mb_c) / interleave >= (sum_{i != c} fb_i) / interleave >=
// (sum_i fb_i - max_i fb_i) / interleave; DP sync and the optimizer add >= 0. m = global
// batch / (dp x micro-batch) and each fb_i depend only on the model, the degrees, the
// interleave, the micro-batch and sequence parallelism (the layer costs read ZeRO nowhere,
// recompute only for recompute_i), so the bound holds for every such sibling. Checked by
// tst_search boundChangesNoRanking against the search without the bound.
double stepTimeLowerBound(const StepCost& cost, int interleave)
{
    double largest = 0;
    double sum = 0;
    for (const StageCost& stage : cost.stages) {
        const double x = stage.forward_s + stage.backward_s + stage.tp_comm_s +
                         stage.cp_comm_exposed_s + stage.ep_comm_s + stage.pp_comm_s;
        largest = std::max(largest, x);
        sum += x;
    }
    return cost.microbatches * largest + (sum - largest) / std::max(1, interleave);
}

// How many of the indices [from, to) fall in `column` of rows `columns` wide.
long long inColumn(long long from, long long to, int columns, int column)
{
    auto below = [&](long long x) { return x > column ? (x - column - 1) / columns + 1 : 0; };
    return below(to) - below(from);
}

// Records sorted by better() put in ranking order: a tie group runs from the best score not
// yet ranked up to tieGroupLimit() of it, and is ordered by tieOrder().
void rankingOrder(std::vector<Kept>* kept)
{
    std::vector<Kept>& k = *kept;
    size_t start = 0;
    for (size_t group = 0; start < k.size(); ++group) {
        const double limit = tieGroupLimit(k[start].record.score);
        size_t end = start;
        while (end < k.size() && (end == start || k[end].record.score <= limit))
            k[end++].group = group;
        std::sort(k.begin() + static_cast<long>(start), k.begin() + static_cast<long>(end),
                  [](const Kept& a, const Kept& b) { return tieOrder(a.record, b.record); });
        start = end;
    }
}

} // namespace paraplan::searchdetail
