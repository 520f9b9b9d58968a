#pragma once

#include "plan.h"

#include <vector>

namespace paraplan {

struct SearchOptions;

/// The layout search's space, generated on demand rather than listed: one block per
/// tp x pp x cp x ep x expert TP x dispatcher (dp follows from the GPU count; MoE models draw
/// EP from cp x dp with expert TP = TP, or with expert TP 1 from tp x cp x dp, Megatron-Core's
/// MoE parallel folding, and where EP x expert TP > 1 try each token dispatcher the plan's
/// framework has, searchDispatchers()), each block holding the same grid of
/// rows (ZeRO stage, sequence parallelism, recompute, interleave) by columns (micro-batch
/// 1, 2, 4, ... up to the largest searched). A layout is named by its block and its index
/// in the block, row-major; the blocks and layouts come in the order enumerateLayouts()
/// lists them. Counting the space or the layouts a search would evaluate walks the blocks
/// only, never the layouts.
class LayoutSpace
{
public:
    struct Block
    {
        int tp = 1;
        int pp = 1;
        int cp = 1;
        int dp = 1;
        int ep = 1;
        int expert_tp = 0; ///< MoE: 0 (expert TP = TP, EP from cp x dp) or 1 (folded)
        /// The token dispatcher its layouts run (the plan's where the space does not vary it).
        MoeDispatcher dispatcher = MoeDispatcher::Auto;
        /// Not the first dispatcher of its layouts: enumerateLayouts() lists each layout once.
        bool repeat = false;
        int rows = 0;        ///< ZeRO x sequence parallelism x recompute x interleave
        int columns = 0;     ///< micro-batch sizes
        long long first = 0; ///< index of the block's first layout in the whole space
        long long size() const { return static_cast<long long>(rows) * columns; }
    };

    LayoutSpace(const Plan& base, const SearchOptions& options);

    /// Calls `visit(block)` for every block in order; stops early when it returns false.
    template <class Visit> void forEachBlock(Visit visit) const;

    int columns() const { return static_cast<int>(m_microBatches.size()); }
    /// Interleave settings of a block's rows: 1..max_interleave with pipelining, else 1.
    int interleaves(const Block& block) const { return block.pp > 1 ? m_maxInterleave : 1; }
    long long size() const { return m_size; }

    /// Layouts the search would evaluate with the engine: those the layout-only constraints
    /// (largest TP, fixed micro-batch, pipeline stages across nodes) leave.
    long long toEvaluate() const { return m_toEvaluate; }
    /// Their pipeline stages, all added up, over the layouts with no more stages than the
    /// model has layers (the rest are refused before any stage is costed): an evaluation
    /// costs every stage, see kMaxSearchStages.
    long long stagesToEvaluate() const { return m_stagesToEvaluate; }
    /// The most pipeline stages of a layout among those (0 when none is costed).
    int deepestCosted() const { return m_deepestCosted; }

    /// The constraint on the layout alone that excludes every layout of the block ("" none):
    /// "max-tp" or "pp-across-nodes" (checked in that order).
    const char* blockExclusion(const Block& block) const;
    /// The column of the fixed micro-batch constraint: -1 with none, -2 when it is not a
    /// searched size (every layout is excluded).
    int fixedColumn() const { return m_fixedColumn; }

    /// The layout at `index` (0 <= index < block.size()) of the block.
    ParallelLayout layout(const Block& block, long long index) const;

private:
    ParallelLayout m_template;
    std::vector<int> m_microBatches;
    int m_maxInterleave = 1;
    int m_maxTp = 0;
    bool m_ppAcrossNodes = false;
    int m_gpusPerNode = 1;
    int m_fixedColumn = -1;
    int rowsOf(int tp, int pp) const;
    /// The divisors of `n`, a divisor of the GPU count, ascending, into `out`.
    void divisorsOf(long long n, std::vector<int>* out) const;
    bool m_moe = false;
    int m_experts = 1;
    MoeDispatcher m_planDispatcher = MoeDispatcher::Auto;
    std::vector<MoeDispatcher> m_dispatchers; ///< searchDispatchers() of the plan
    int m_nvlinkDomain = 1;
    int m_layers = 0;
    long long m_gpus = 0;
    std::vector<int> m_divisors; ///< of the GPU count, ascending
    long long m_size = 0;
    long long m_toEvaluate = 0;
    long long m_stagesToEvaluate = 0;
    int m_deepestCosted = 0;
};

template <class Visit> void LayoutSpace::forEachBlock(Visit visit) const
{
    std::vector<int> pps, cps, eps;
    Block b;
    for (int tp : m_divisors) {
        divisorsOf(m_gpus / tp, &pps);
        for (int pp : pps) {
            divisorsOf(m_gpus / tp / pp, &cps);
            for (int cp : cps) {
                const int dp = static_cast<int>(m_gpus / tp / pp / cp);
                // Folded expert groups (expert TP 1) only where TP has ranks to fold.
                const int folds = m_moe && tp > 1 ? 2 : 1;
                for (int fold = 0; fold < folds; ++fold) {
                    if (m_moe)
                        divisorsOf(static_cast<long long>(dp) * cp * (fold ? tp : 1), &eps);
                    else
                        eps.assign(1, 1);
                    for (int ep : eps) {
                        if (m_moe && m_experts % ep != 0) // rule ep-experts, never valid
                            continue;
                        b.tp = tp;
                        b.pp = pp;
                        b.cp = cp;
                        b.dp = dp;
                        b.ep = ep;
                        b.expert_tp = fold;
                        b.rows = rowsOf(tp, pp);
                        b.columns = columns();
                        // The dispatchers move tokens only between EP x expert TP ranks.
                        const long long group = static_cast<long long>(ep) * (fold ? 1 : tp);
                        const size_t tries = group > 1 ? m_dispatchers.size() : 0;
                        b.repeat = false;
                        b.dispatcher = m_planDispatcher;
                        for (size_t d = 0; d < std::max<size_t>(tries, 1); ++d) {
                            if (tries > 0) {
                                b.dispatcher = m_dispatchers[d];
                                // allgather: for small EP (Megatron-Core's MoE README), one
                                // NVLink domain at most.
                                if (b.dispatcher == MoeDispatcher::AllGather &&
                                    group > m_nvlinkDomain)
                                    continue;
                            }
                            if (!visit(static_cast<const Block&>(b)))
                                return;
                            b.first += b.size();
                            b.repeat = true;
                        }
                    }
                }
            }
        }
    }
}

} // namespace paraplan
