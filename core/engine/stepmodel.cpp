#include "stepmodel.h"

#include "gemmshapes.h"
#include "hardware.h"
#include "kernels.h"
#include "layercost.h"
#include "moecontext.h"
#include "stepevaluation.h"
#include "units.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace paraplan {

GroupStrides groupStrides(const ParallelLayout& layout)
{
    GroupStrides strides;
    int stride = 1;
    for (ParallelDim dim : layout.rank_order) {
        switch (dim) {
        case ParallelDim::TP:
            strides.tp = stride;
            stride *= layout.tp;
            break;
        case ParallelDim::CP:
            strides.cp = stride;
            stride *= layout.cp;
            break;
        case ParallelDim::DP:
            strides.dp = stride;
            stride *= layout.dp;
            break;
        case ParallelDim::PP:
            strides.pp = stride;
            stride *= layout.pp;
            break;
        }
    }
    return strides;
}

namespace {

std::atomic<unsigned long long> g_engineSerial{0};

// This thread's answers of the collective models of the engines it evaluated with: a
// two-way table keyed by the engine's serial and the request (two requests of one evaluation
// that hash to one slot would otherwise push each other out at every evaluation). The model
// is a pure function of the request, so an answer from here is the one it would compute, bit
// for bit.
struct CollectiveCache
{
    struct Entry
    {
        unsigned long long engine = 0; // 0: empty (serials start at 1)
        CollectiveOp op = CollectiveOp::AllReduce;
        double bytes = 0;
        int ranks = 0;
        int stride = 0;
        CollectiveResult result;
    };
    static constexpr size_t kPairs = 256;
    std::array<Entry, 2 * kPairs> entries;      // slots 2k and 2k + 1: the requests hashed to k
    std::array<unsigned char, kPairs> victim{}; // which of a pair the next miss replaces
};

size_t cacheSlot(unsigned long long engine, CollectiveOp op, double bytes, int ranks, int stride)
{
    uint64_t bits = 0;
    std::memcpy(&bits, &bytes, sizeof bits);
    uint64_t h = bits ^ (uint64_t(ranks) << 32) ^ (uint64_t(stride) << 8) ^ uint64_t(op) ^
                 (engine * 0x9E3779B97F4A7C15ULL);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return static_cast<size_t>(h % CollectiveCache::kPairs);
}

} // namespace

StepEngine::StepEngine(const ClusterSpec& cluster, const HardwareCatalog& catalog)
    : m_cluster(cluster), m_collectives(cluster), m_catalog(&catalog),
      m_gpu(catalog.gpu(cluster.gpu_id)), m_serial(++g_engineSerial)
{
    if (m_gpu) {
        m_gemmReference = kernels::gemmReferenceEfficiency(m_gpu->kernels);
        m_hbmText = units::formatNumber(m_gpu->hbm_GiB);
    }
}

void SpareStrings::keep(std::vector<std::string>& from)
{
    // Last first: take() hands them out again in their order.
    for (size_t i = from.size(); i-- > 0;) {
        from[i].clear();
        m_strings.push_back(std::move(from[i]));
    }
    from.clear();
}

std::string& SpareStrings::take(std::vector<std::string>& to)
{
    if (m_strings.empty()) {
        // Room for any warning but a long list of stage sizes: a reused answer keeps it.
        to.emplace_back().reserve(256);
        // And room here for every string in use, so that keep() never grows.
        m_strings.reserve(to.size());
    } else {
        to.push_back(std::move(m_strings.back()));
        m_strings.pop_back();
    }
    return to.back();
}

void StepCost::clear()
{
    // Copied from a default answer: every field back to its default (a field added later
    // too), while a vector or string assigned an empty one keeps its capacity. The warnings'
    // strings go to the spare ones first (assigning would free them).
    static const StepCost empty;
    m_spareWarnings.keep(warnings);
    *this = empty; // the spare warnings stay (SpareStrings is not assigned)
}

namespace detail {

std::vector<int>& stageScratch()
{
    static thread_local std::vector<int> layers;
    return layers;
}

const CollectiveResult& sharedCollective(unsigned long long engine, const CollectiveModel& model,
                                         CollectiveOp op, double bytes, int ranks, int stride)
{
    static thread_local CollectiveCache cache;
    const size_t pair = cacheSlot(engine, op, bytes, ranks, stride);
    for (size_t way = 0; way < 2; ++way) {
        const CollectiveCache::Entry& e = cache.entries[2 * pair + way];
        if (e.engine == engine && e.op == op && e.bytes == bytes && e.ranks == ranks &&
            e.stride == stride)
            return e.result;
    }
    unsigned char& victim = cache.victim[pair];
    CollectiveCache::Entry& e = cache.entries[2 * pair + victim];
    victim ^= 1;
    CollectiveRequest request;
    request.op = op;
    request.bytes = bytes;
    request.ranks = ranks;
    request.stride = stride;
    e.result = model.evaluate(request);
    e.engine = engine;
    e.op = op;
    e.bytes = bytes;
    e.ranks = ranks;
    e.stride = stride;
    return e.result;
}

using namespace layercost;

namespace {

// Every input of layercost::layerCompute: the engine (its GPU's kernel figures), the context's
// figures, the layout's degrees it reads and every number of the model (a field added to
// Context that the layer cost reads belongs here). Degrees that vary most across a search's
// layouts come first: a compare fails early.
constexpr size_t kLayerInputs = 45;
using LayerKey = std::array<double, kLayerInputs + std::tuple_size_v<ModelNumbers>>;

LayerKey layerKey(unsigned long long engine, const Context& c, bool moe)
{
    const ParallelLayout& p = c.p;
    const double values[] = {double(p.tp),
                             double(p.micro_batch),
                             double(static_cast<int>(p.recompute)),
                             double(p.cp),
                             double(p.ep),
                             double(p.expertTp()),
                             double(c.sp),
                             double(c.eager),
                             double(c.pytorch),
                             double(c.flash),
                             c.overlapSlowdown,
                             moe ? 1.0 : 0.0,
                             double(engine),
                             c.peak,
                             c.hbm,
                             c.gemmShare,
                             c.gemmReference,
                             c.attnFwd,
                             c.attnBwd,
                             c.actBytes,
                             c.seqLocal,
                             c.tokens,
                             c.headsLocal,
                             c.kvLocal,
                             c.d,
                             c.launchGap,
                             c.launchHost,
                             c.cudaGraphs,
                             double(c.fp8),
                             c.fp8Peak,
                             c.fp8Share,
                             c.fp8Reference,
                             c.fp8BwdShare,
                             c.fp8BwdReference,
                             double(static_cast<int>(c.fp8Recipe)),
                             double(c.fp8TnOnly),
                             double(c.fp8Attention),
                             c.microbatches,
                             c.moeLoad,
                             c.groupedShare,
                             c.groupedFp8Share,
                             c.groupedPairBytes,
                             c.routerHostKernels,
                             c.routerGraphKernels,
                             c.graphGap};
    static_assert(sizeof values / sizeof *values == kLayerInputs, "layer key size");
    const ModelNumbers model = modelNumbers(c.m);
    LayerKey key;
    std::copy(std::begin(values), std::end(values), key.begin());
    std::copy(model.begin(), model.end(), key.begin() + kLayerInputs);
    return key;
}

} // namespace

// countParameters through this thread's last answer (a search evaluates one model's layouts).
const ParameterCount& sharedParameterCount(const ModelSpec& m)
{
    static thread_local bool known = false;
    static thread_local ModelNumbers numbers{};
    static thread_local ParameterCount count;
    const ModelNumbers now = modelNumbers(m);
    if (!known || std::memcmp(now.data(), numbers.data(), sizeof now) != 0) {
        count = countParameters(m);
        numbers = now;
        known = true;
    }
    return count;
}

namespace {

struct LayerAnswers
{
    LayerCompute layer;
    double lmHead = 0;        // layercost::lmHeadSeconds (with the dense layer)
    double mtpProjection = 0; // layercost::mtpProjectionSeconds (with the dense layer)
};

// layercost::layerCompute (and the LM head) through this thread's table of its answers: a pure
// function of its key, which a search asks again at every layout with the same TP degree,
// micro-batch and recompute mode (the pipeline, data-parallel and ZeRO choices leave it
// alone). Bit for bit the same: a hit is a copy of what they returned for equal inputs.
const LayerAnswers& sharedLayerCompute(unsigned long long engine, const Context& c, bool moe)
{
    struct Entry
    {
        bool used = false;
        LayerKey key{};
        LayerAnswers value;
    };
    static thread_local std::array<Entry, 64> table;
    const LayerKey key = layerKey(engine, c, moe);
    uint64_t h = engine * 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < 12; ++i) { // the degrees, flags and engine
        uint64_t bits = 0;
        std::memcpy(&bits, &key[i], sizeof bits);
        h = (h ^ bits) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    // A plan's dense and MoE layers share every hashed field but the MoE flag: they take the
    // two slots of one pair, so that one never evicts the other.
    Entry& e = table[static_cast<size_t>(h % (table.size() / 2) * 2 + (moe ? 1 : 0))];
    // Compared bit for bit (a -0.0 is not a 0.0 here).
    if (!e.used || std::memcmp(e.key.data(), key.data(), sizeof key) != 0) {
        e.value.layer = layerCompute(c, moe);
        e.value.lmHead = moe ? 0 : lmHeadSeconds(c);
        e.value.mtpProjection = moe || c.m.mtp_layers <= 0 ? 0 : mtpProjectionSeconds(c);
        e.key = key;
        e.used = true;
    }
    return e.value;
}

} // namespace

void Evaluation::setup()
{
    c.gpu = gpu;
    // A synchronous step goes at the pace of its slowest GPU.
    const double slowest = kernels::slowestGpuFactor(fig.gpu_spread.value, p.gpus());
    as.slowest_gpu_factor = slowest;
    // FP8 runs the linear layers on the FP8 figures and the rest in 16 bits (bf16).
    const bool fp8 = tr.dtype == Dtype::FP8;
    c.peak = gpu->peakTflops(fp8 ? Dtype::BF16 : tr.dtype) * 1e12 / slowest;
    c.fp8 = fp8;
    if (fp8) {
        c.fp8Peak = gpu->peakTflops(Dtype::FP8) * 1e12 / slowest;
        c.fp8Share = fig.fp8_gemm_peak_fraction.value;
        c.fp8Reference = kernels::fp8GemmReferenceEfficiency(gpu->kernels);
        c.fp8BwdShare = fig.fp8_backward_gemm_peak_fraction.value;
        c.fp8BwdReference = kernels::fp8PromotedReferenceEfficiency(gpu->kernels);
        c.fp8Recipe = resolvedFp8Recipe(plan);
        c.fp8TnOnly = gpu->kernels.fp8_tn_only;
        c.fp8Attention = tr.fp8_attention;
        c.microbatches = std::max(1, p.microBatches());
    } else {
        c.fp8Peak = c.fp8Share = c.fp8Reference = c.fp8BwdShare = c.fp8BwdReference = 0;
        c.fp8Recipe = Fp8Recipe::Auto;
        c.fp8TnOnly = c.fp8Attention = false;
        c.microbatches = 1;
    }
    as.fp8_recipe = c.fp8Recipe;
    setMoeContext(plan, *gpu, gemmReference, c);
    c.hbm = units::bytesPerSecondFromGBps(gpu->hbm_GBps) * fig.hbm_fraction.value / slowest;
    c.gemmShare = fig.gemm_peak_fraction.value;
    c.gemmReference = gemmReference; // of the engine's GPU, which is this one
    as.attention = resolvedAttention(plan);
    setMemoryContext(c, as.attention); // actBytes, seqLocal, tokens, sp, flash
    c.d = m.headDim();
    c.headsLocal = double(m.heads) / p.tp;
    c.kvLocal = std::max(1.0, double(m.kv_heads) / p.tp);
    as.kernels = resolvedKernelStyle(plan);
    as.tp_overlap = tpOverlapActive(plan);
    as.grad_reduce_bytes = gradReduceBytes(plan);
    as.pytorch_framework = pytorchFramework(plan);
    c.eager = as.kernels == KernelStyle::Eager;
    c.pytorch = as.pytorch_framework;
    // A partial capture (cuda_graph_scope) leaves most of the layer's kernels launched one by
    // one: the layer costs as uncaptured but for the router block it covers.
    const bool partial = tr.partialCapture();
    c.cudaGraphs = partial ? 0 : static_cast<int>(tr.cuda_graphs);
    c.launchGap =
        (tr.cuda_graphs == CudaGraphs::None || partial ? fig.kernel_gap_s : fig.graph_kernel_gap_s)
            .value;
    c.graphGap = fig.graph_kernel_gap_s.value;
    c.launchHost = fig.host_launch_s.value;
    if (as.tp_overlap) {
        const double share = fig.comm_sm_share.value;
        c.overlapSlowdown = 1 + 0.5 * share / (1 - share);
    }
    if (c.flash) {
        // The resolved kernel's published figures, unless the plan overrides them.
        const AttentionFigures* af = kernels::attentionFigures(*gpu, as.attention);
        AttentionFigures none;
        const AttentionFigures& a = af ? *af : none;
        // The engine's GPU is the plan's (evaluate() checks the ids match).
        assignAttentionFigure(plan, false, gpu, &as.attention_fwd_figure);
        assignAttentionFigure(plan, true, gpu, &as.attention_bwd_figure);
        c.attnFwd = kernels::attentionShare(as.attention_fwd_figure.value, a, c.seqLocal, c.d);
        c.attnBwd = kernels::attentionShare(as.attention_bwd_figure.value, a, c.seqLocal, c.d);
        as.attention_fwd_share = c.attnFwd;
        as.attention_bwd_share = c.attnBwd;
    }

    slidingShare = m.sliding_window > 0 ? slidingWindowShare(tr.seq_len, m.sliding_window) : 1;
    const LayerAnswers& dense = sharedLayerCompute(engineSerial, c, false);
    cost.dense_layer = dense.layer;
    lmHead = dense.lmHead;
    mtpProjection = dense.mtpProjection;
    if (m.isMoe())
        cost.moe_layer = sharedLayerCompute(engineSerial, c, true).layer;
}

void Evaluation::stageSetup()
{
    // Stages: layers, compute and memory.
    stageLayerCounts(m, p, &layersPerStage);
    setLayoutMemoryTerms(c, count, mem);
    cost.microbatches = mem.microbatches;
    hbmBytes = units::bytesFromGiB(gpu->hbm_GiB);
    cost.hbm_bytes = hbmBytes;
    cost.runtime_reserve_bytes = fig.runtime_reserve_bytes.value;
    usableBytes = hbmBytes - cost.runtime_reserve_bytes;

    // LM head and embedding: the last and first stage carry them.
    cost.lm_head_s = lmHead; // setup()'s, with the dense layer's answers
    cost.embedding_s = c.tokens * m.hidden * (2 + 4 + 4) / c.hbm;

    bool uneven = false;
    for (int n : layersPerStage)
        uneven = uneven || n != layersPerStage.front();
    const bool explicitSplit =
        !p.stage_layers.empty() || p.first_stage_layers > 0 || p.last_stage_layers > 0;
    if (uneven && !explicitSplit) {
        // "126 layers over pp = 16 stages are split unevenly: 7 8 ... 7", built in place,
        // the counts a buffer at a time.
        std::string& text = cost.addWarning();
        text.reserve(64 + 6 * layersPerStage.size());
        appendNumber(text, m.layers);
        text += " layers over pp = ";
        appendNumber(text, p.pp);
        text += " stages are split unevenly:";
        char counts[256];
        char* end = counts;
        for (int n : layersPerStage) {
            if (end + 16 > counts + sizeof counts) {
                text.append(counts, end);
                end = counts;
            }
            *end++ = ' ';
            end = std::to_chars(end, counts + sizeof counts, n).ptr;
        }
        text.append(counts, end);
    }
    // Rotary models run past their context window only after a context extension; learned
    // position tables cannot (a rule rejects that).
    if (!m.learned_positions && m.max_positions > 0 && plan.training.seq_len > m.max_positions) {
        std::string& text = cost.addWarning();
        text += "seq_len ";
        appendNumber(text, plan.training.seq_len);
        text += " exceeds the model's context window of ";
        appendNumber(text, m.max_positions);
        text += " tokens (max_position_embeddings): train at this length only with a context "
                "extension (e.g. RoPE scaling)";
    }
}

void Evaluation::stages()
{
    cost.stages.resize(static_cast<size_t>(p.pp));
    int layerIndex = 0;
    // The last stage between the first and the last costed in full: a later one with the same
    // layers is the same but for its place in the pipeline (deep pipelines repeat one stage).
    const StageCost* like = nullptr;
    for (int i = 0; i < p.pp; ++i) {
        StageCost& st = cost.stages[static_cast<size_t>(i)];
        const int layers = layersPerStage[static_cast<size_t>(i)];
        const LayerMix mix = layerMix(m, layerIndex, layers);
        const int denseHere = mix.dense;
        layerIndex += layers;
        const bool middle = i > 0 && i < p.pp - 1;
        if (middle && like && like->layers == layers && like->moe_layers == layers - denseHere &&
            like->sliding_layers == mix.slidingDense + mix.slidingMoe &&
            like->sliding_moe_layers == mix.slidingMoe) {
            st = *like;
            st.stage = i;
        } else {
            st.stage = i;
            st.layers = layers;
            st.moe_layers = layers - denseHere;
            st.sliding_layers = mix.slidingDense + mix.slidingMoe;
            st.sliding_moe_layers = mix.slidingMoe;
            stageTimesAndStates(st, i, denseHere);
            if (middle)
                like = &st;
        }
        stageInFlight(st, i, denseHere);
        sumMicrobatch += st.microbatch_s;
        if (st.microbatch_s > maxMicrobatch) {
            maxMicrobatch = st.microbatch_s;
            cost.critical_stage = i;
        }
        if (st.total_bytes > cost.max_stage_total_bytes) {
            cost.max_stage_total_bytes = st.total_bytes;
            cost.fullest_stage = i;
        }
    }
    cost.fits = cost.max_stage_total_bytes <= usableBytes;
    cost.max_stage_reserved_bytes = cost.max_stage_total_bytes * (1 + fig.allocator_reserve.value);
    cost.tight = cost.fits && cost.max_stage_reserved_bytes > usableBytes;
}

void Evaluation::stageTimesAndStates(StageCost& st, int i, int denseHere)
{
    const LayerCompute& dl = cost.dense_layer;
    const LayerCompute& ml = cost.moe_layer;
    st.forward_s = denseHere * dl.forward_s + st.moe_layers * ml.forward_s;
    st.backward_s = denseHere * dl.backward_s + st.moe_layers * ml.backward_s;
    st.recompute_s = denseHere * dl.recompute_s + st.moe_layers * ml.recompute_s;
    if (st.sliding_layers > 0) {
        // A sliding layer's attention core does the window's share of the causal work.
        const int denseSliding = st.sliding_layers - st.sliding_moe_layers;
        const double saved = 1 - slidingShare;
        const double fwd =
            denseSliding * dl.attention_forward_s + st.sliding_moe_layers * ml.attention_forward_s;
        st.forward_s -= saved * fwd;
        st.backward_s -= saved * (denseSliding * dl.attention_backward_s +
                                  st.sliding_moe_layers * ml.attention_backward_s);
        if (p.recompute == Recompute::Full)
            st.recompute_s -= saved * fwd;
    }
    if (i == p.pp - 1) {
        st.forward_s += cost.lm_head_s / 3;
        st.backward_s += cost.lm_head_s * 2 / 3;
        mtpOnLastStage(st);
    }
    if (i == 0) {
        st.forward_s += cost.embedding_s / 3;
        st.backward_s += cost.embedding_s * 2 / 3;
    }
    st.tp_comm_s = denseHere * tpExposedPerLayer + st.moe_layers * tpMoeExposedPerLayer;
    // CP sends overlap the attention compute they feed.
    const double attention =
        denseHere * (dl.attention_forward_s * (passes - 1) + dl.attention_backward_s) +
        st.moe_layers * (ml.attention_forward_s * (passes - 1) + ml.attention_backward_s);
    st.cp_comm_exposed_s = std::max(0.0, st.layers * cpPerLayer - attention);
    st.ep_comm_s = st.moe_layers * epExposedPerLayer;
    if (i == p.pp - 1 && m.mtp_layers > 0) {
        const bool moe = m.isMoeLayer(m.layers - 1);
        st.tp_comm_s += m.mtp_layers * (moe ? tpMoeExposedPerLayer : tpExposedPerLayer);
        st.ep_comm_s += moe ? m.mtp_layers * epExposedPerLayer : 0.0;
    }
    st.pp_comm_s = ppPerMicrobatch;
    st.microbatch_s = st.forward_s + st.backward_s + st.recompute_s + st.tp_comm_s +
                      st.cp_comm_exposed_s + st.ep_comm_s + st.pp_comm_s;

    // Memory (core/engine/stagememory.h, as the search's memory-only verdict).
    setStageMemory(mem, st, i, denseHere);
}

void Evaluation::mtpOnLastStage(StageCost& st) const
{
    // Each multi-token-prediction module (Megatron-Core MultiTokenPredictionLayer): its
    // projection, a layer like the last one with its collectives, and the LM head and loss
    // again; the comm terms are added after the stage's own below.
    if (m.mtp_layers <= 0)
        return;
    const bool moe = m.isMoeLayer(m.layers - 1);
    const LayerCompute& l = moe ? cost.moe_layer : cost.dense_layer;
    const double n = m.mtp_layers;
    st.forward_s += n * (l.forward_s + (cost.lm_head_s + mtpProjection) / 3);
    st.backward_s += n * (l.backward_s + (cost.lm_head_s + mtpProjection) * 2 / 3);
    st.recompute_s += n * l.recompute_s;
}

void Evaluation::stageInFlight(StageCost& st, int i, int denseHere)
{
    // What depends on the stage's place: the micro-batches whose activations it holds.
    setStageInFlight(mem, st, i, denseHere);
    st.fits = st.total_bytes <= usableBytes;
}

void Evaluation::pipeline()
{
    // The pipeline: m micro-batches at the slowest stage's pace, plus fill and drain.
    const StageCost& critical = criticalStage();
    b.compute_s = mem.microbatches * (critical.forward_s + critical.backward_s);
    b.recompute_s = mem.microbatches * critical.recompute_s;
    b.tp_comm_exposed_s = mem.microbatches * critical.tp_comm_s;
    b.cp_comm_exposed_s = mem.microbatches * critical.cp_comm_exposed_s;
    b.ep_comm_exposed_s = mem.microbatches * critical.ep_comm_s;
    b.pp_comm_exposed_s = mem.microbatches * critical.pp_comm_s;
    b.bubble_s = (sumMicrobatch - maxMicrobatch) / p.interleave;
}

void Evaluation::optimizer()
{
    // The optimizer step: memory-bound over each GPU's (ZeRO-sharded) parameters.
    // Each GPU updates its shard: the routed experts' over the expert data-parallel group.
    double maxShard = 0;
    for (const StageCost& st : cost.stages)
        maxShard = std::max(maxShard, (st.params - st.expert_params) / mem.optimizerShard +
                                          st.expert_params / mem.expertOptimizerShard);
    b.optimizer_s = maxShard * fig.optimizer_step_bytes.value / c.hbm;
}

void Evaluation::metrics()
{
    // Metrics.
    StepMetrics& mt = cost.metrics;
    const double gpus = p.gpus();
    mt.tokens_per_step = double(p.global_batch) * tr.seq_len;
    mt.tokens_per_s = mt.tokens_per_step / cost.step_time_s;
    mt.model_flops_per_step = modelFlopsPerStep(m, p.global_batch, tr.seq_len);
    double recomputeFlops = 0;
    const double forwardFlops = mt.model_flops_per_step / 3;
    if (p.recompute == Recompute::Full) {
        recomputeFlops = forwardFlops;
    } else if (p.recompute == Recompute::Selective && !c.flash) {
        // The attention core's forward: 4 B s^2 q per layer.
        recomputeFlops = 4.0 * p.global_batch * double(tr.seq_len) * tr.seq_len * m.heads *
                         m.headDim() * m.layers;
    }
    mt.hardware_flops_per_step = mt.model_flops_per_step + recomputeFlops;
    const double peak = gpu->peakTflops(tr.dtype) * 1e12;
    mt.peak_flops_per_gpu = peak;
    mt.mfu = mt.model_flops_per_step / (cost.step_time_s * gpus * peak);
    mt.hfu = mt.hardware_flops_per_step / (cost.step_time_s * gpus * peak);
    if (tr.train_tokens > 0) {
        mt.time_to_train_s = tr.train_tokens / mt.tokens_per_s;
        mt.gpu_hours = mt.time_to_train_s * gpus / 3600.0;
        if (tr.gpu_hour_usd > 0)
            mt.cost_usd = mt.gpu_hours * tr.gpu_hour_usd;
    }
    if (!cost.fits || cost.tight)
        memoryWarning();
}

void Evaluation::memoryWarning()
{
    appendMemoryWarning(cost, p, fig, *hbmText, cost.addWarning());
}

bool allFinite(const StepCost& cost)
{
    const StepBreakdown& b = cost.breakdown;
    const StepMetrics& m = cost.metrics;
    double sum = cost.step_time_s + cost.max_stage_total_bytes + cost.hbm_bytes + cost.lm_head_s +
                 cost.embedding_s + m.tokens_per_step + m.tokens_per_s + m.model_flops_per_step +
                 m.hardware_flops_per_step + m.mfu + m.hfu + m.time_to_train_s + m.gpu_hours +
                 m.cost_usd;
    for (const BreakdownComponent& component : kBreakdownComponents)
        sum += b.*component.field;
    for (const CollectiveCost& c : cost.collectives)
        sum += c.total_s + c.exposed_s + c.call.bytes + c.call.time_s;
    for (const StageCost& st : cost.stages)
        sum += st.microbatch_s + st.total_bytes;
    for (const LinkUse& link : cost.links)
        sum += link.busy_s + link.share;
    // Every term is finite and non-negative in a sound result, so one sum tells (an infinite
    // term, a NaN, or terms that overflow together all show in it).
    return std::isfinite(sum);
}

} // namespace detail

StepCost StepEngine::evaluate(const Plan& plan) const
{
    StepCost cost;
    evaluate(plan, cost);
    return cost;
}

void StepEngine::evaluate(const Plan& plan, StepCost& cost) const
{
    cost.clear();
    // The engine's GPU is looked up once; a plan for another GPU is refused below.
    const GpuSpec* planGpu =
        plan.cluster.gpu_id == m_cluster.gpu_id ? m_gpu : m_catalog->gpu(plan.cluster.gpu_id);
    validatePlan(plan, planGpu, &cost.issues);
    if (plan.cluster.totalGpus() != m_cluster.totalGpus() ||
        plan.cluster.gpu_id != m_cluster.gpu_id)
        cost.issues.push_back({"engine-cluster", "cluster",
                               "the plan's cluster differs from the one this engine was built "
                               "for"});
    if (!cost.issues.empty())
        return;
    if (!m_gpu) {
        cost.issues.push_back({"cluster", "cluster", "unknown GPU '" + m_cluster.gpu_id + "'"});
        return;
    }
    // At most one collective per kind (tp, cp, ep and expert TP, pp, three for dp and two
    // for the experts' DP) and one link use per tier: room for them at once rather than
    // growing as they come.
    cost.collectives.reserve(10);
    cost.links.reserve(8);
    detail::Evaluation e(plan, m_cluster, m_collectives, *m_gpu, *m_catalog, cost);
    e.engineSerial = m_serial;
    e.gemmReference = m_gemmReference;
    e.hbmText = &m_hbmText;
    e.setup();
    e.layerCollectives();
    e.stageSetup();
    e.stages();
    e.pipeline();
    e.dataParallel();
    e.optimizer();
    e.criticalCollectives();
    e.sharedLinks();
    e.metrics();
    if (!detail::allFinite(cost)) {
        // Within the stated input ranges this cannot happen; if it does, say so rather than
        // show a number that is not one.
        cost.issues.push_back({"non-finite", "plan",
                               "the step cost came out as a non-finite number for this plan; "
                               "please report it with the plan file"});
        return;
    }
    cost.ok = true;
}

} // namespace paraplan
