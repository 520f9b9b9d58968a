#include "searchrecords.h"

namespace paraplan::searchdetail {

// The bound and its proof: searchrecords.h.
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
