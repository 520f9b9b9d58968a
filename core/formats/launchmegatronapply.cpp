// The Megatron-LM flags read by launchmegatronimport.cpp, applied to a plan. Megatron's own
// defaults (arguments.py at launch::kMegatronRelease) stand for flags a complete script leaves
// out: learned positions, biases, tied embeddings, GeLU, dropout 0.1.
#include "cnumeric.h"
#include "launchconfigdetail.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace paraplan::launch {
namespace {

class FlagReader
{
public:
    FlagReader(const MegatronFlags& flags, LaunchImport* result) : m_flags(flags), m_result(result)
    {
    }
    bool has(const std::string& name) const { return m_flags.count(name) > 0; }
    std::string text(const std::string& name) const
    {
        const auto it = m_flags.find(name);
        return it == m_flags.end() || it->second.empty() ? std::string() : it->second.front();
    }
    /// Every value of a flag that takes a list (nargs='+').
    std::vector<std::string> texts(const std::string& name) const
    {
        const auto it = m_flags.find(name);
        return it == m_flags.end() ? std::vector<std::string>() : it->second;
    }
    /// A whole number >= `min`, or nothing (and an error when it is given but bad).
    std::optional<long long> integer(const std::string& name, long long min) const
    {
        if (!has(name))
            return std::nullopt;
        const std::string value = text(name);
        char* end = nullptr;
        const long long n = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || n < min || n > 2000000000000LL) {
            m_result->errors.push_back(name + ": '" + value +
                                       "' is not a whole number >= " + std::to_string(min));
            return std::nullopt;
        }
        return n;
    }
    /// Sets *target when the flag is given and valid.
    void set(const std::string& name, long long min, int* target) const
    {
        if (const std::optional<long long> n = integer(name, min))
            *target = static_cast<int>(*n);
    }
    void error(const std::string& message) const { m_result->errors.push_back(message); }
    void warn(const std::string& message) const { m_result->warnings.push_back(message); }

private:
    const MegatronFlags& m_flags;
    LaunchImport* m_result;
};

// Megatron's layer-pattern expressions (arguments.py moe_freq_type: an int N, or a Python
// list expression such as "([0]*3+[1]*58)" or "([1]*3+[0]*1)*3"): lists of 0 and 1, '+' to
// join, '*' with a count to repeat, parentheses. False on anything else.
class PatternParser
{
public:
    explicit PatternParser(const std::string& text) : m_s(text) {}
    bool parse(std::vector<unsigned char>* out)
    {
        if (!expr(out))
            return false;
        skip();
        return m_i == m_s.size() && out->size() <= 100000;
    }

private:
    void skip()
    {
        while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i])))
            ++m_i;
    }
    bool eat(char c)
    {
        skip();
        if (m_i < m_s.size() && m_s[m_i] == c) {
            ++m_i;
            return true;
        }
        return false;
    }
    bool count(long long* n)
    {
        skip();
        const size_t start = m_i;
        *n = 0;
        while (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i])) &&
               *n < 100000)
            *n = *n * 10 + (m_s[m_i++] - '0');
        return m_i > start && *n <= 100000;
    }
    bool factor(std::vector<unsigned char>* out)
    {
        if (eat('(')) {
            if (++m_depth > 32 || !expr(out) || !eat(')'))
                return false;
            --m_depth;
            return true;
        }
        if (!eat('['))
            return false;
        if (eat(']'))
            return true;
        do {
            long long v = 0;
            if (!count(&v) || v > 1)
                return false;
            out->push_back(static_cast<unsigned char>(v));
        } while (eat(','));
        return eat(']');
    }
    bool term(std::vector<unsigned char>* out)
    {
        std::vector<unsigned char> part;
        if (!factor(&part))
            return false;
        while (eat('*')) {
            long long n = 0;
            if (!count(&n) || double(part.size()) * n > 100000)
                return false;
            std::vector<unsigned char> repeated;
            for (long long k = 0; k < n; ++k)
                repeated.insert(repeated.end(), part.begin(), part.end());
            part.swap(repeated);
        }
        out->insert(out->end(), part.begin(), part.end());
        return true;
    }
    bool expr(std::vector<unsigned char>* out)
    {
        if (!term(out))
            return false;
        while (eat('+'))
            if (!term(out))
                return false;
        return true;
    }

    const std::string& m_s;
    size_t m_i = 0;
    int m_depth = 0;
};

/// A --moe-layer-freq or --window-attn-skip-freq value as one 0/1 per layer: N gives
/// `nth(i)` for layer i (0-based), a list expression its entries. False when it is neither,
/// or a list of another length.
bool megatronLayerPattern(const std::string& text, int layers, bool moe,
                          std::vector<unsigned char>* pattern)
{
    pattern->clear();
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0') {
        if (n < 1 || layers < 1)
            return false;
        // MoE: layer i has experts when i % N == 0; windows: layer number i + 1 keeps the
        // window unless (i + 1) % N == 0 (megatron/core/transformer/utils.py).
        for (int i = 0; i < layers; ++i)
            pattern->push_back(moe ? (i % n == 0) : ((i + 1) % n != 0));
        return true;
    }
    PatternParser parser(text);
    return parser.parse(pattern) && int(pattern->size()) == layers;
}

// --moe-layer-freq: which layers have experts (leading dense layers stay a count).
void readMoePattern(const FlagReader& f, ModelSpec* m)
{
    m->moe_layer_pattern.clear();
    if (!f.has("--moe-layer-freq"))
        return;
    std::vector<unsigned char> pattern;
    if (!megatronLayerPattern(f.text("--moe-layer-freq"), m->layers, true, &pattern)) {
        f.warn("--moe-layer-freq '" + f.text("--moe-layer-freq") + "' is not N or a 0/1 list of " +
               std::to_string(m->layers) + " layers: every layer counted as MoE");
        return;
    }
    size_t leading = 0;
    while (leading < pattern.size() && !pattern[leading])
        ++leading;
    m->dense_layers = patternZeros(pattern);
    if (size_t(m->dense_layers) != leading)
        m->moe_layer_pattern = std::move(pattern);
}

// --window-size "(W,0)" with --window-attn-skip-freq, and --mtp-num-layers.
void readWindowAndMtp(const FlagReader& f, ModelSpec* m)
{
    m->sliding_window = 0;
    m->sliding_pattern.clear();
    if (f.has("--window-size")) {
        int left = 0;
        int right = 0;
        if (std::sscanf(f.text("--window-size").c_str(), " ( %d , %d )", &left, &right) != 2 ||
            left < 1 || right != 0) {
            f.warn("--window-size '" + f.text("--window-size") +
                   "' is not a causal window (W,0): full attention assumed");
        } else {
            m->sliding_window = left;
            std::vector<unsigned char> pattern;
            if (f.has("--window-attn-skip-freq") &&
                !megatronLayerPattern(f.text("--window-attn-skip-freq"), m->layers, false,
                                      &pattern))
                f.warn("--window-attn-skip-freq '" + f.text("--window-attn-skip-freq") +
                       "' is not N or a 0/1 list: every layer on the window");
            bool all = true;
            for (unsigned char b : pattern)
                all = all && b;
            if (!all)
                m->sliding_pattern = std::move(pattern);
        }
    }
    m->mtp_layers = 0;
    f.set("--mtp-num-layers", 0, &m->mtp_layers);
}

void applyModel(const FlagReader& f, Plan* plan)
{
    if (!f.has("--num-layers"))
        return; // no model shape: the base plan's model stands
    ModelSpec m = plan->model;
    f.set("--num-layers", 1, &m.layers);
    f.set("--hidden-size", 1, &m.hidden);
    f.set("--num-attention-heads", 1, &m.heads);
    // validate_args' default: 4h, or with --swiglu int((4h x 2/3) / 64) x 64.
    m.ffn_hidden =
        f.has("--swiglu") ? static_cast<int>(4.0 * m.hidden * 2 / 3 / 64) * 64 : 4 * m.hidden;
    f.set("--ffn-hidden-size", 1, &m.ffn_hidden);
    m.kv_heads = m.heads;
    if (f.has("--group-query-attention")) {
        m.kv_heads = 1; // Megatron's default for --num-query-groups
        f.set("--num-query-groups", 1, &m.kv_heads);
    }
    m.head_dim = 0;
    f.set("--kv-channels", 1, &m.head_dim);
    if (m.head_dim * m.heads == m.hidden)
        m.head_dim = 0;
    f.set("--max-position-embeddings", 1, &m.max_positions);
    const std::string position = f.has("--position-embedding-type")
                                     ? f.text("--position-embedding-type")
                                     : "learned_absolute";
    if (position != "learned_absolute" && position != "rope")
        f.warn("--position-embedding-type " + position +
               " is not modelled: counted as rope (no position parameters)");
    m.learned_positions = position == "learned_absolute";
    m.mlp = f.has("--swiglu") ? MlpKind::SwiGLU : MlpKind::GeLU;
    m.tied_embeddings = !f.has("--untie-embeddings-and-output-weights");
    m.biases = !f.has("--disable-bias-linear");
    const std::string norm = f.has("--normalization") ? f.text("--normalization") : "LayerNorm";
    if (norm != "LayerNorm" && norm != "RMSNorm")
        f.error("--normalization: '" + norm + "' is not LayerNorm or RMSNorm");
    else if ((norm == "LayerNorm") != m.biases)
        f.warn("--normalization " + norm + (m.biases ? " with" : " without") +
               " linear biases is not modelled: the norms are counted " +
               (m.biases ? "with biases (LayerNorm)" : "without biases (RMSNorm)"));
    const auto zero = [&](const char* flag) {
        return f.has(flag) && cStrtod(f.text(flag).c_str(), nullptr) == 0;
    };
    m.dropout = !(zero("--attention-dropout") && zero("--hidden-dropout"));
    f.set("--vocab-size", 1, &m.vocab);
    if (f.has("--padded-vocab-size")) {
        f.set("--padded-vocab-size", 1, &m.vocab);
    } else if (f.has("--vocab-size") && f.text("--tokenizer-type") == "NullTokenizer") {
        // NullTokenizer adds its end-of-document token; Megatron pads the vocabulary to a
        // multiple of --make-vocab-size-divisible-by (128) x TP (training/tokenizer).
        const long long tp =
            std::max(1LL, std::atoll(f.text("--tensor-model-parallel-size").c_str()));
        const long long multiple = 128 * tp;
        m.vocab = static_cast<int>((m.vocab + 1 + multiple - 1) / multiple * multiple);
    }
    m.experts = 0;
    m.experts_per_token = 0;
    m.expert_ffn_hidden = 0;
    m.shared_expert_ffn_hidden = 0;
    m.dense_layers = 0;
    if (f.has("--num-experts")) {
        f.set("--num-experts", 1, &m.experts);
        m.experts_per_token = 2; // Megatron's default --moe-router-topk
        f.set("--moe-router-topk", 1, &m.experts_per_token);
        m.expert_ffn_hidden = m.ffn_hidden;
        f.set("--moe-ffn-hidden-size", 1, &m.expert_ffn_hidden);
        f.set("--moe-shared-expert-intermediate-size", 1, &m.shared_expert_ffn_hidden);
        m.capacity_factor = 0; // Megatron's default: dropless
        if (f.has("--moe-expert-capacity-factor")) {
            const std::string value = f.text("--moe-expert-capacity-factor");
            char* end = nullptr;
            const double cf = cStrtod(value.c_str(), &end);
            if (value.empty() || *end != '\0' || !(cf >= 1 && cf <= 64))
                f.error("--moe-expert-capacity-factor: '" + value +
                        "' is not a capacity factor between 1 and 64");
            else
                m.capacity_factor = cf;
        }
        readMoePattern(f, &m);
    }
    readWindowAndMtp(f, &m);
    const ModelSpec& old = plan->model;
    const bool same =
        m.layers == old.layers && m.hidden == old.hidden && m.heads == old.heads &&
        m.kv_heads == old.kv_heads && m.headDim() == old.headDim() &&
        m.ffn_hidden == old.ffn_hidden && m.vocab == old.vocab && m.mlp == old.mlp &&
        m.tied_embeddings == old.tied_embeddings && m.learned_positions == old.learned_positions &&
        m.biases == old.biases && m.experts == old.experts &&
        m.experts_per_token == old.experts_per_token &&
        m.expert_ffn_hidden == old.expert_ffn_hidden && m.dense_layers == old.dense_layers &&
        m.moe_layer_pattern == old.moe_layer_pattern && m.sliding_window == old.sliding_window &&
        m.sliding_pattern == old.sliding_pattern && m.mtp_layers == old.mtp_layers &&
        m.shared_expert_ffn_hidden == old.shared_expert_ffn_hidden;
    if (!same) {
        m.preset.clear();
        m.name = "model of the Megatron-LM launch file";
        m.source = "Megatron-LM launch file (import-launch)";
        m.q_lora_rank = m.kv_lora_rank = m.rope_head_dim = m.v_head_dim = 0;
    }
    plan->model = m;
}

/// Rank r's layers and the virtual stages per rank of a --pipeline-model-parallel-layout
/// (Megatron Core's PipelineParallelLayerLayout: stages split by '|', "(...)*n" and "x*n"
/// repeat, commas are cosmetic, E the embedding, L the loss, t a decoder layer; stage
/// v * pp + r is rank r's v-th). False, with an error, when the layout is not one Paraplan
/// can count.
bool readLayout(const std::string& text, int pp, int layers, std::vector<int>* ranks, int* vp,
                const FlagReader& f)
{
    std::string s;
    for (char c : text) {
        if (c != ',')
            s += c;
    }
    // Unroll "(...)*n" groups, then "x*n", as parse_str_to_list does.
    const auto repeat = [&](size_t begin, size_t unitBegin, size_t unitEnd, size_t star) {
        size_t end = star + 1;
        while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])))
            ++end;
        if (end == star + 1 || end - star > 7 || unitEnd <= unitBegin)
            return false;
        const int n = std::atoi(s.substr(star + 1, end - star - 1).c_str());
        const std::string unit = s.substr(unitBegin, unitEnd - unitBegin);
        std::string repeated;
        for (int i = 0; i < n && repeated.size() < 1000000; ++i)
            repeated += unit;
        s = s.substr(0, begin) + repeated + s.substr(end);
        return true;
    };
    bool ok = true;
    for (size_t close; ok && (close = s.find(")*")) != std::string::npos;) {
        const size_t open = s.rfind('(', close);
        ok = open != std::string::npos && repeat(open, open + 1, close, close + 1);
    }
    for (size_t star; ok && (star = s.find('*')) != std::string::npos;)
        ok = star > 0 && repeat(star - 1, star - 1, star, star);
    if (!ok || s.find_first_of("()") != std::string::npos) {
        f.error("--pipeline-model-parallel-layout '" + text + "' cannot be read");
        return false;
    }
    std::vector<int> stages(1, 0);
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '|') {
            stages.push_back(0);
        } else if (c == 't') {
            ++stages.back();
        } else if ((c == 'E' && i != 0) || (c == 'L' && i + 1 != s.size())) {
            f.error("--pipeline-model-parallel-layout '" + text +
                    "': E must come first and L last (Megatron asserts it)");
            return false;
        } else if (c != 'E' && c != 'L') {
            f.error("--pipeline-model-parallel-layout '" + text + "': '" + std::string(1, c) +
                    "' is not a layer Paraplan counts (E, t, L)");
            return false;
        }
    }
    if (s.empty() || s.front() != 'E' || s.back() != 'L' || stages.size() % pp != 0) {
        f.error("--pipeline-model-parallel-layout '" + text + "' needs E first, L last and a " +
                "multiple of pp = " + std::to_string(pp) + " stages (it has " +
                std::to_string(stages.size()) + ")");
        return false;
    }
    *vp = static_cast<int>(stages.size()) / pp;
    ranks->assign(static_cast<size_t>(pp), 0);
    long long total = 0;
    for (size_t i = 0; i < stages.size(); ++i) {
        (*ranks)[i % static_cast<size_t>(pp)] += stages[i];
        total += stages[i];
    }
    if (total != layers) {
        f.error("--pipeline-model-parallel-layout '" + text + "' holds " + std::to_string(total) +
                " decoder layers; --num-layers is " + std::to_string(layers));
        return false;
    }
    return true;
}

void applyLayout(const FlagReader& f, long long world, Plan* plan)
{
    ParallelLayout p = plan->parallel;
    p.tp = p.pp = p.cp = p.ep = 1; // Megatron's defaults
    f.set("--tensor-model-parallel-size", 1, &p.tp);
    f.set("--pipeline-model-parallel-size", 1, &p.pp);
    f.set("--context-parallel-size", 1, &p.cp);
    f.set("--expert-model-parallel-size", 1, &p.ep);
    p.expert_tp = 0; // Megatron's default: the TP size
    f.set("--expert-tensor-parallel-size", 1, &p.expert_tp);
    p.ep_overlap = f.has("--overlap-moe-expert-parallel-comm") ? EpOverlap::A2a : EpOverlap::None;
    const long long gpus = plan->cluster.totalGpus();
    const long long model = static_cast<long long>(p.tp) * p.pp * p.cp;
    if (world > 0 && world != gpus)
        f.warn("the launcher starts " + std::to_string(world) +
               " processes; the base plan's "
               "cluster has " +
               std::to_string(gpus) + " GPUs, which the plan keeps");
    if (model <= 0 || gpus % model != 0) {
        f.error("TP x PP x CP = " + std::to_string(model) + " does not divide the cluster's " +
                std::to_string(gpus) + " GPUs");
        return;
    }
    p.dp = static_cast<int>(gpus / model);
    p.stage_layers.clear();
    p.first_stage_layers = p.last_stage_layers = 0;
    f.set("--decoder-first-pipeline-num-layers", 1, &p.first_stage_layers);
    f.set("--decoder-last-pipeline-num-layers", 1, &p.last_stage_layers);
    p.interleave = 1;
    f.set("--num-virtual-stages-per-pipeline-rank", 1, &p.interleave);
    if (f.has("--pipeline-model-parallel-layout")) {
        std::vector<int> ranks;
        if (readLayout(f.text("--pipeline-model-parallel-layout"), p.pp, plan->model.layers, &ranks,
                       &p.interleave, f)) {
            bool even = true;
            for (int n : ranks)
                even = even && n == ranks.front();
            if (!even)
                p.stage_layers = ranks;
        }
    }
    if (const std::optional<long long> per =
            f.integer("--num-layers-per-virtual-pipeline-stage", 1)) {
        const long long layers = plan->model.layers;
        if (layers % (static_cast<long long>(p.pp) * *per) != 0)
            f.error("--num-layers-per-virtual-pipeline-stage " + std::to_string(*per) +
                    " does not divide the " + std::to_string(layers) + " layers over " +
                    std::to_string(p.pp) + " pipeline stages");
        else
            p.interleave = static_cast<int>(layers / (p.pp * *per));
    }
    // Megatron-LM turns sequence parallelism off at tp 1 (arguments.py, validate_args:
    // "Disabling sequence parallelism because tensor model parallelism is disabled").
    p.sequence_parallel = f.has("--sequence-parallel") && p.tp > 1;
    if (f.has("--sequence-parallel") && p.tp == 1)
        f.warn("--sequence-parallel at tensor-model-parallel-size 1: Megatron-LM turns it off, "
               "and so does the plan");
    p.recompute = Recompute::None;
    const std::string granularity = f.text("--recompute-granularity");
    if (granularity == "selective" || f.has("--recompute-activations"))
        p.recompute = Recompute::Selective;
    else if (granularity == "full")
        p.recompute = Recompute::Full;
    else if (!granularity.empty())
        f.error("--recompute-granularity: '" + granularity + "' is not full or selective");
    p.recompute_modules = 0;
    for (const std::string& name : f.texts("--recompute-modules")) {
        unsigned bit = 0;
        if (p.recompute == Recompute::Selective && enumFromName(kRecomputeModuleNames, name, &bit))
            p.recompute_modules = static_cast<unsigned char>(p.recompute_modules | bit);
        else
            f.warn("--recompute-modules " + name +
                   (p.recompute == Recompute::Selective
                        ? " is not a module Megatron-Core recomputes (" +
                              enumChoices(kRecomputeModuleNames) + "): not in the plan"
                        : " without --recompute-granularity selective: Megatron ignores it"));
    }
    if (p.recompute_modules == kRecomputeCoreAttn) // Megatron-Core's default, as the plan says it
        p.recompute_modules = 0;
    if (p.recompute == Recompute::Full &&
        (f.text("--recompute-method") != "uniform" || f.text("--recompute-num-layers") != "1"))
        f.warn("full recompute of only some layers (--recompute-method " +
               f.text("--recompute-method") + ", --recompute-num-layers " +
               f.text("--recompute-num-layers") + ") is counted as every layer recomputed");
    p.micro_batch = 1;
    f.set("--micro-batch-size", 1, &p.micro_batch);
    p.global_batch = p.micro_batch * p.dp; // Megatron's default: one micro-batch
    f.set("--global-batch-size", 1, &p.global_batch);
    p.zero = f.has("--use-distributed-optimizer") ? 1 : 0;
    if (f.has("--use-megatron-fsdp")) {
        const std::string s = f.text("--data-parallel-sharding-strategy");
        p.zero = s == "optim_grads_params" ? 3 : s == "optim_grads" ? 2 : s == "optim" ? 1 : 0;
    }
    p.dp_shard = 0;
    if (const std::optional<long long> instances =
            f.integer("--num-distributed-optimizer-instances", 1)) {
        const long long ranks = static_cast<long long>(p.dp) * p.cp;
        if (ranks % *instances != 0)
            f.error("--num-distributed-optimizer-instances " + std::to_string(*instances) +
                    " does not divide the " + std::to_string(ranks) + " DP x CP ranks");
        else if (*instances > 1)
            p.dp_shard = static_cast<int>(ranks / *instances);
    }
    if (plan->parallel.dp_shard > 0 && p.dp_shard == 0)
        f.warn("the base plan's dp_shard " + std::to_string(plan->parallel.dp_shard) +
               " (HSDP) is not in the file: the plan shards over all " +
               std::to_string(p.dp * p.cp) + " DP x CP ranks, as the file's flags do");
    p.dp_overlap = f.has("--overlap-grad-reduce");
    p.tp_overlap = f.has("--tp-comm-overlap") ? TpOverlap::AgGemm : TpOverlap::None;
    using D = ParallelDim;
    p.rank_order = f.has("--use-tp-pp-dp-mapping") ? std::array<D, 4>{D::TP, D::CP, D::PP, D::DP}
                                                   : std::array<D, 4>{D::TP, D::CP, D::DP, D::PP};
    plan->parallel = p;
}

// Megatron-Core's CUDA graphs: --cuda-graph-impl (none, local, transformer_engine, or
// full_iteration on newer releases) with --cuda-graph-scope (--cuda-graph-modules since the
// rename): full_iteration captures the whole step, a per-layer impl each layer or the scopes.
void applyCudaGraphs(const FlagReader& f, TrainingSettings* t)
{
    // The deprecated switches stand for the per-layer implementations (arguments.py:
    // --enable-cuda-graph is local, --external-cuda-graph transformer_engine).
    std::string impl = f.has("--cuda-graph-impl")       ? f.text("--cuda-graph-impl")
                       : f.has("--enable-cuda-graph")   ? "local"
                       : f.has("--external-cuda-graph") ? "transformer_engine"
                                                        : "none";
    const char* scopeFlag =
        f.has("--cuda-graph-modules") ? "--cuda-graph-modules" : "--cuda-graph-scope";
    const std::vector<std::string> scopes = f.texts(scopeFlag);
    t->cuda_graphs = CudaGraphs::None;
    t->cuda_graph_scope = 0;
    if (impl == "none") {
        if (!scopes.empty())
            f.warn(std::string(scopeFlag) +
                   " without --cuda-graph-impl: Megatron captures nothing, and neither does "
                   "the plan");
        return;
    }
    if (impl != "local" && impl != "transformer_engine" && impl != "full_iteration") {
        f.error("--cuda-graph-impl: '" + impl +
                "' is not none, local, transformer_engine or full_iteration");
        return;
    }
    const bool full = impl == "full_iteration" ||
                      std::find(scopes.begin(), scopes.end(), "full_iteration") != scopes.end();
    t->cuda_graphs = full ? CudaGraphs::Full : CudaGraphs::Layers;
    if (full)
        return;
    for (const std::string& scope : scopes) {
        unsigned bit = 0;
        if (enumFromName(kCudaGraphScopeNames, scope, &bit))
            t->cuda_graph_scope |= bit;
        else
            f.warn(std::string(scopeFlag) + " " + scope + " is not a scope Paraplan models (" +
                   enumChoices(kCudaGraphScopeNames) + "): not captured in the plan");
    }
}

void applyTraining(const FlagReader& f, Plan* plan)
{
    TrainingSettings& t = plan->training;
    f.set("--seq-length", 1, &t.seq_len);
    t.dtype = f.has("--fp8-format") ? Dtype::FP8
              : f.has("--bf16")     ? Dtype::BF16
              : f.has("--fp16")     ? Dtype::FP16
                                    : Dtype::FP32;
    if (f.has("--fp8-recipe")) {
        // Megatron's names are the plan's but for tensorwise (the plan's current); its own
        // default, delayed, is written as such.
        const std::string recipe = f.text("--fp8-recipe");
        Fp8Recipe parsed = Fp8Recipe::Auto;
        const bool known =
            recipe != "auto" && recipe != "current" &&
            enumFromName(kFp8RecipeNames, recipe == "tensorwise" ? "current" : recipe, &parsed);
        if (known)
            t.fp8_recipe = parsed;
        else
            f.warn(
                "--fp8-recipe '" + recipe +
                "' is none of the recipes Paraplan models (delayed, tensorwise, mxfp8, blockwise): "
                "the plan keeps fp8_recipe auto");
    }
    t.fp8_param_gather = t.dtype == Dtype::FP8 && f.has("--fp8-param-gather");
    t.grad_reduce_bytes = f.has("--grad-reduce-in-bf16") ? 2 : 0;
    // The moments' dtype, read only with the precision-aware optimizer (as Megatron-LM does).
    t.optimizer_state_bytes = 0;
    if (f.has("--use-precision-aware-optimizer")) {
        const std::string avg = f.has("--exp-avg-dtype") ? f.text("--exp-avg-dtype") : "fp32";
        const std::string sq = f.has("--exp-avg-sq-dtype") ? f.text("--exp-avg-sq-dtype") : "fp32";
        if (avg == sq && (avg == "bf16" || avg == "fp32"))
            t.optimizer_state_bytes = avg == "bf16" ? 2 : 0;
        else
            f.warn("--exp-avg-dtype " + avg + " with --exp-avg-sq-dtype " + sq +
                   " is not modelled (optimizer_dtype is fp32 or bf16 for both): the plan keeps "
                   "fp32 moments");
    }
    const std::string optimizer = f.has("--optimizer") ? f.text("--optimizer") : "adam";
    if (optimizer == "adam" || optimizer == "sgd")
        t.optimizer = optimizer == "adam" ? Optimizer::Adam : Optimizer::SGD;
    else
        f.warn("--optimizer " + optimizer + " is not modelled: the base plan's optimizer kept");
    const std::string backend = f.text("--attention-backend");
    if (backend == "flash") {
        if (t.attention != AttentionKernel::Flash3)
            t.attention = AttentionKernel::Flash2;
    } else if (backend == "fused") {
        t.attention = AttentionKernel::Cudnn;
    } else if (backend == "unfused") {
        t.attention = AttentionKernel::Unfused;
    } else if (backend == "auto" || backend.empty()) {
        t.attention = AttentionKernel::Auto;
    } else {
        f.warn("--attention-backend " + backend + " is not modelled: counted as auto");
        t.attention = AttentionKernel::Auto;
    }
    if (const std::optional<long long> samples = f.integer("--train-samples", 1))
        t.train_tokens = static_cast<double>(*samples) * t.seq_len;
    else if (const std::optional<long long> iters = f.integer("--train-iters", 1))
        t.train_tokens = static_cast<double>(*iters) * plan->parallel.global_batch * t.seq_len;
    t.moe_router_fusion = f.has("--moe-router-fusion");
    applyCudaGraphs(f, &t);
    // The same rule as the torchtitan import: the file's framework is the plan's framework.
    if (pytorchFramework(*plan))
        f.warn("the plan would be costed on a PyTorch FSDP-style stack; a Megatron-LM file "
               "runs on Megatron, so the imported plan is costed as Megatron runs it (its "
               "attention kernel, fused kernels and overlap)");
    t.framework = TrainingFramework::Megatron;
}

} // namespace

void applyMegatronFlags(const MegatronFlags& flags, long long world, LaunchImport* result,
                        const HardwareCatalog& catalog)
{
    const FlagReader f(flags, result);
    const std::string tokenizer = f.text("--tokenizer-type");
    if (f.has("--tokenizer-type") && tokenizer != "NullTokenizer")
        f.warn("--tokenizer-type " + tokenizer +
               ": the vocabulary comes from --vocab-size or "
               "the base plan, not from the tokenizer's files");
    // Known flags (one value each), not applied: a plan has no learning rate.
    for (const char* flag : {"--lr", "--min-lr", "--lr-decay-style"}) {
        if (f.has(flag))
            f.warn(std::string(flag) +
                   " is not a plan setting Paraplan reads (the learning-rate schedule): ignored");
    }
    // The token dispatcher (Megatron's default: allgather); flex runs DeepEP or HybridEP.
    const std::string dispatcher =
        f.has("--moe-token-dispatcher-type") ? f.text("--moe-token-dispatcher-type") : "allgather";
    MoeDispatcher& d = result->plan.training.moe_dispatcher;
    if (!f.has("--num-experts"))
        d = MoeDispatcher::Auto;
    else if (dispatcher == "alltoall")
        d = MoeDispatcher::AllToAll;
    else if (dispatcher == "allgather")
        d = MoeDispatcher::AllGather;
    else if (dispatcher == "flex")
        d = MoeDispatcher::DeepEP;
    else
        f.error("--moe-token-dispatcher-type: '" + dispatcher +
                "' is not allgather, alltoall or flex");
    applyModel(f, &result->plan);
    applyLayout(f, world, &result->plan);
    applyTraining(f, &result->plan);
    if (!result->errors.empty())
        return;
    for (const PlanIssue& issue : validatePlan(result->plan, catalog))
        result->errors.push_back(issue.field + ": " + issue.message);
    if (result->plan.training.gpu_hour_usd > 0)
        result->warnings.push_back("gpu_hour_usd kept from the base plan (not a launch setting)");
}

} // namespace paraplan::launch
