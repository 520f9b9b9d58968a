#include "searchspace.h"

#include "search.h"
#include "stepmodel.h"

#include <algorithm>

namespace paraplan {

LayoutSpace::LayoutSpace(const Plan& base, const SearchOptions& options)
{
    m_gpus = base.cluster.totalGpus();
    if (m_gpus < 1)
        return;
    m_moe = base.model.isMoe();
    m_experts = std::max(1, base.model.experts);
    m_planDispatcher = base.training.moe_dispatcher;
    if (m_moe && options.dispatchers)
        m_dispatchers = searchDispatchers(base.training.framework);
    m_nvlinkDomain = std::max(1, base.cluster.nvlinkDomainGpus());
    m_layers = base.model.layers;
    m_gpusPerNode = base.cluster.gpusPerNode();
    for (long long mb = 1; mb <= std::max(1, options.max_micro_batch); mb *= 2)
        m_microBatches.push_back(static_cast<int>(mb));
    m_maxInterleave = std::max(1, options.max_interleave);
    m_maxTp = options.constraints.max_tp;
    m_ppAcrossNodes = options.constraints.pp_across_nodes;
    const int fixed = options.constraints.fixed_micro_batch;
    if (fixed > 0) {
        const auto at = std::find(m_microBatches.begin(), m_microBatches.end(), fixed);
        m_fixedColumn =
            at == m_microBatches.end() ? -2 : static_cast<int>(at - m_microBatches.begin());
    }
    // Candidates split their layers evenly and shard over all their data-parallel ranks; the
    // base plan's own split (stage_layers, first/last) and HSDP groups fit its degrees only.
    m_template = base.parallel;
    m_template.stage_layers.clear();
    m_template.first_stage_layers = 0;
    m_template.last_stage_layers = 0;
    m_template.dp_shard = 0;
    // The GPU count's divisors, by trial division up to its square root.
    std::vector<int> large;
    for (long long d = 1; d * d <= m_gpus; ++d) {
        if (m_gpus % d != 0)
            continue;
        m_divisors.push_back(static_cast<int>(d));
        if (d * d != m_gpus)
            large.push_back(static_cast<int>(m_gpus / d));
    }
    m_divisors.insert(m_divisors.end(), large.rbegin(), large.rend());

    forEachBlock([this](const Block& b) {
        m_size += b.size();
        if (*blockExclusion(b) == '\0' && m_fixedColumn != -2) {
            const long long layouts = m_fixedColumn >= 0 ? b.rows : b.size();
            m_toEvaluate += layouts;
            // Pipelines deeper than the layers, or interleaved past the layers per stage,
            // are refused by a rule before any stage is costed.
            if (b.pp <= m_layers) {
                const int interleaves = b.pp > 1 ? m_maxInterleave : 1;
                const long long costed =
                    layouts / interleaves * std::min(interleaves, std::max(1, m_layers / b.pp));
                m_stagesToEvaluate += costed * b.pp;
                m_deepestCosted = std::max(m_deepestCosted, b.pp);
            }
        }
        return true;
    });
}

int LayoutSpace::rowsOf(int tp, int pp) const
{
    const int zeroStages = 4;
    const int sequenceParallel = tp > 1 ? 2 : 1;
    const int recompute = 3;
    const int interleave = pp > 1 ? m_maxInterleave : 1;
    return zeroStages * sequenceParallel * recompute * interleave;
}

void LayoutSpace::divisorsOf(long long n, std::vector<int>* out) const
{
    out->clear();
    for (int d : m_divisors) {
        if (d > n)
            break;
        if (n % d == 0)
            out->push_back(d);
    }
}

const char* LayoutSpace::blockExclusion(const Block& block) const
{
    if (m_maxTp > 0 && block.tp > m_maxTp)
        return "max-tp";
    if (m_ppAcrossNodes && block.pp > 1) {
        ParallelLayout p = m_template;
        p.tp = block.tp;
        p.pp = block.pp;
        p.cp = block.cp;
        p.dp = block.dp;
        if (groupStrides(p).pp < m_gpusPerNode)
            return "pp-across-nodes";
    }
    return "";
}

ParallelLayout LayoutSpace::layout(const Block& block, long long index) const
{
    // Row-major: ZeRO outermost, then sequence parallelism, recompute, interleave; the
    // micro-batch is the column.
    const int column = static_cast<int>(index % block.columns);
    long long row = index / block.columns;
    const int interleaves = block.pp > 1 ? m_maxInterleave : 1;
    const int interleave = static_cast<int>(row % interleaves) + 1;
    row /= interleaves;
    const int recompute = static_cast<int>(row % 3);
    row /= 3;
    const int sequenceParallels = block.tp > 1 ? 2 : 1;
    const int sequenceParallel = static_cast<int>(row % sequenceParallels);
    row /= sequenceParallels;
    static constexpr Recompute kRecompute[] = {Recompute::None, Recompute::Selective,
                                               Recompute::Full};
    ParallelLayout p = m_template;
    p.tp = block.tp;
    p.pp = block.pp;
    p.cp = block.cp;
    p.dp = block.dp;
    p.ep = block.ep;
    if (m_moe)
        p.expert_tp = block.expert_tp;
    p.zero = static_cast<int>(row);
    p.sequence_parallel = sequenceParallel == 1;
    p.recompute = kRecompute[recompute];
    p.interleave = interleave;
    p.micro_batch = m_microBatches[static_cast<size_t>(column)];
    return p;
}

} // namespace paraplan
