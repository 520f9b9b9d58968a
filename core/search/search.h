#pragma once

#include "plan.h"
#include "ranking.h"
#include "stepmodel.h"

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace paraplan {

/// What the search minimises. With the cluster's GPU count and the global batch fixed,
/// step time, time to train and tokens/s per GPU rank alike; cost differs from them only in
/// needing a price. All are offered so that the score shown is the figure the user asked for.
enum class SearchObjective
{
    StepTime,     ///< seconds per step, lower is better
    TimeToTrain,  ///< seconds to train the plan's token budget, lower is better
    Cost,         ///< dollars to train the token budget at the plan's GPU-hour price
    TokensPerGpu, ///< tokens/s per GPU, higher is better
};
inline constexpr EnumName<SearchObjective> kSearchObjectiveNames[] = {
    {SearchObjective::StepTime, "step-time", "Step time"},
    {SearchObjective::TimeToTrain, "time-to-train", "Time to train the token budget"},
    {SearchObjective::Cost, "cost", "Cost to train"},
    {SearchObjective::TokensPerGpu, "tokens-per-gpu", "Tokens/s per GPU"},
};
const char* searchObjectiveName(SearchObjective objective);
bool searchObjectiveFromName(const std::string& name, SearchObjective* objective);

/// A layout is kept when the fullest stage leaves at least min_headroom x HBM +
/// reserve_bytes free; by default 5% of HBM plus the CUDA context and one NCCL
/// communicator (see kDefaultSearchReserveBytes). Set both to 0 for the bare memory verdict.
struct SearchConstraints
{
    int max_tp = 0;               ///< 0: no limit
    bool pp_across_nodes = false; ///< every pipeline stage of a group on a different node
    double min_headroom = kDefaultSearchHeadroomShare; ///< share of HBM left free, [0, 1)
    double reserve_bytes = kDefaultSearchReserveBytes; ///< and these bytes on top, >= 0
    int fixed_micro_batch = 0;                         ///< 0: searched
};

/// The space: every tp x pp x cp x dp (x ep for mixture-of-experts models) that multiplies to
/// the cluster's GPU count, each with ZeRO 0-3, sequence parallelism on and off (tp > 1),
/// recompute none / selective / full, interleave 1..max_interleave (pp > 1) and micro-batch
/// 1, 2, 4, ... up to max_micro_batch. The global batch, sequence length, dtype and model are
/// the plan's.
struct SearchOptions
{
    SearchObjective objective = SearchObjective::StepTime;
    SearchConstraints constraints;
    int max_interleave = 4;
    int max_micro_batch = 16;
    int top = 10;
    int threads = 1;
    /// Off: every layout goes to the engine, none is judged from another's verdict (the
    /// reference the tests hold the search to; results and counts are the same either way).
    bool shortcuts = true;
    /// Branch and bound on step time (on by default, for every objective: each is monotone
    /// in step time): a layout whose step-time lower bound, taken from a costed sibling,
    /// scores worse than the current top N and than the given plan gets its memory verdict
    /// alone (LayoutMemory, no timing) unless it could be on the Pareto front, which costs it.
    /// Nothing the search reports changes: the top N (rows, ties, folds, parts), the plan's
    /// own rank, the Pareto front and every count (scored, did not fit, excluded, duplicates,
    /// rejected) are the exhaustive search's; only SearchResult::evaluated (costed) and
    /// bounded (judged by memory alone) split the valid layouts differently. How they split
    /// depends on the order layouts are met in, so with several threads it may differ from
    /// run to run. Off: every valid layout is costed (the reference the tests hold the bound
    /// to; paraplan-cli search --exhaustive).
    bool bound = true;
    /// MoE: try each of searchDispatchers() where EP x expert TP > 1 (the default); off, every
    /// layout runs the plan's training.moe_dispatcher (paraplan-cli search --keep-dispatcher).
    bool dispatchers = true;
};

struct SearchCandidate
{
    ParallelLayout layout;
    /// The MoE token dispatcher the row runs (training.moe_dispatcher): the search tries each
    /// of searchDispatchers() where EP x expert TP > 1; else the plan's own.
    MoeDispatcher moe_dispatcher = MoeDispatcher::Auto;
    double score = 0;
    double step_time_s = 0;
    double memory_bytes = 0; ///< fullest stage, per GPU
    double tokens_per_s = 0;
    StepCost cost; ///< filled for the ranked top N and the Pareto front
    /// Against the best (the first of the top N): the step-time difference (signed, it may
    /// be negative inside a tie group) and the components that make it up, largest first;
    /// they add up to behind_s. Empty for the best.
    double behind_s = 0;
    std::vector<BehindPart> behind;
    bool tied = false; ///< in the best's tie group (within kSearchTieTolerance)
    int tie_with = 0;  ///< rank (1-based) of the first row of its tie group; its own if first
    int folded = 0;    ///< other layouts that are the same plan, folded into this row
};

/// One way the plan's own layout lies outside the space a search walked.
struct SearchSpaceMiss
{
    std::string setting; ///< "interleave", "micro-batch", "max-tp", "pp-across-nodes", ...
    /// "this plan uses interleave 5, outside the searched 1-4"
    std::string text;
    /// The command-line option that would take it in ("--max-interleave 5"), "" when none can.
    std::string option;
};

struct SearchResult
{
    bool ok = false;
    std::string error;                            ///< why the search could not run
    long long space = 0;                          ///< layouts enumerated
    std::map<std::string, long long> rejected;    ///< invalid, by the first rule each broke
    long long did_not_fit = 0;                    ///< valid but over the GPU's memory
    std::map<std::string, long long> constrained; ///< fit but excluded by a constraint
    long long duplicates = 0; ///< ZeRO above 0 at a shard group of one: not scored again
    long long scored = 0;
    /// Valid layouts the engine fully costed (whatever their memory); with bounded, every
    /// valid layout that is not a duplicate.
    long long evaluated = 0;
    /// Valid layouts the step-time bound (SearchOptions::bound) judged by their memory alone,
    /// never costed: already counted in scored, did_not_fit or constrained["headroom"].
    long long bounded = 0;
    long long folded = 0;             ///< scored layouts folded into a top-N row as the same plan
    std::vector<SearchCandidate> top; ///< best first
    std::vector<SearchCandidate> pareto; ///< memory per GPU vs step time, least memory first
    bool cancelled = false;
    bool over_budget = false; ///< refused: over kMaxSearchLayouts or kMaxSearchStages
    double seconds = 0;

    /// The plan the search started from, scored the same way and set against the best:
    /// its rank among the scored layouts (1 = best) and the components it loses most on.
    bool given_ok = false;
    std::string given_problem; ///< why it could not be scored (rule or memory)
    SearchCandidate given;
    long long given_rank = 0;
    bool given_within_headroom = true; ///< leaves the headroom the search asked for free
    std::vector<std::pair<std::string, double>> given_behind; ///< largest deltas first
    std::vector<BehindPart> given_parts; ///< every signed delta, largest in size first
    /// How the plan's own layout lies outside the searched space (searchSpaceMisses(),
    /// searchwording.h): then its rank is where it would fall among the searched layouts, not
    /// a row of the table. Empty when the space holds it.
    std::vector<SearchSpaceMiss> given_outside;

    long long invalidCount() const;  ///< all of `rejected`
    long long excludedCount() const; ///< all of `constrained`
};

/// What a ranked row says after its difference: " (tie with #1, +3 same plan)": the row that
/// starts its tie group when an earlier one does, and how many other layouts are the same
/// plan and folded into it; "" when neither. `rank` is 1-based.
std::string searchRowNote(const SearchCandidate& candidate, int rank);
/// A row's "behind the best by", as the CLI and the window show it: "best" for rank 1, else
/// behindText() with the row's note: "+22.1 ms (tie with #5) = pipeline bubble +68.5 ms, ...".
std::string searchRowBehind(const SearchCandidate& candidate, int rank);
/// The same without its parts, for a narrow column: "best", "+22.1 ms (tie with #5)".
std::string searchRowNet(const SearchCandidate& candidate, int rank);

/// Every layout in the space of `base` (its model, cluster and training settings), in a fixed
/// order, each once (a mixture of experts' layouts are searched under each of their
/// dispatchers as well); the search and its tests share this enumeration, not the scoring. It
/// lists the whole space: for tests over small spaces (the search itself walks a LayoutSpace).
/// With `dispatchers`, every point of the space instead, a layout once per dispatcher it is
/// searched with, and each point's dispatcher in `dispatchers` (as many as layouts).
std::vector<ParallelLayout> enumerateLayouts(const Plan& base, const SearchOptions& options,
                                             std::vector<MoeDispatcher>* dispatchers = nullptr);

/// The MoE token dispatchers a search tries for `framework` where EP x expert TP > 1:
/// Megatron-Core's alltoall, allgather (at EP x expert TP within one NVLink domain: "small
/// EP", Megatron-Core's MoE README) and flex with DeepEP; torchtitan's all-to-all and DeepEP
/// (expert_parallel_comm_backend); the all-to-all alone for FSDP1 and DeepSpeed.
std::vector<MoeDispatcher> searchDispatchers(TrainingFramework framework);
/// A row's layout as the CLI and the window label it: layoutLabel() and, where the search
/// chose it, the dispatcher ("tp2 pp8 dp32 cp1 ep64 etp1 z1 sp selective v1 mb1 deepep").
std::string candidateLabel(const SearchCandidate& candidate);
std::string candidateLabel(const ParallelLayout& layout, MoeDispatcher dispatcher);

/// The most layouts one search evaluates with the engine (those left after the constraints
/// on the layout alone: largest TP, fixed micro-batch, stages across nodes), and the most
/// pipeline stages they may hold in all (an evaluation costs each stage; layouts a rule
/// refuses for their depth are not counted). Both are set from measured throughput so that
/// a search ends within about 10 s on one core; a larger search is refused before it
/// starts, never cut short. See docs/limits.md.
inline constexpr long long kMaxSearchLayouts = 4'000'000;
inline constexpr long long kMaxSearchStages = 16'000'000;
/// The most memory the ranked top N may hold: each keeps its full step cost, per stage.
inline constexpr double kMaxSearchTopBytes = 250e6;

/// Why `base` cannot be searched with `options` ("" when it can): an objective without its
/// inputs, a bad constraint, more layouts or stages to evaluate than kMaxSearchLayouts or
/// kMaxSearchStages (then `*overBudget` is set), or a top N too large to hold. Counts the space
/// without evaluating or listing it.
std::string searchProblem(const Plan& base, const SearchOptions& options,
                          bool* overBudget = nullptr);

/// The score of a cost under an objective (lower is better; tokens/s per GPU is negated).
double searchScore(const StepCost& cost, int gpus, SearchObjective objective);

/// Searches the space with the training-step engine and ranks by the rule in ranking.h (tie
/// groups, memory, simplicity, duplicates folded). Deterministic: the same inputs give the
/// same ranking for any thread count. `cancel` may
/// be set from another thread; `progress` receives the share done (from one thread).
SearchResult searchPlans(const Plan& base, const HardwareCatalog& catalog,
                         const SearchOptions& options, const std::atomic<bool>* cancel = nullptr,
                         const std::function<void(double)>& progress = {});

} // namespace paraplan
