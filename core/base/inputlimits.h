#pragma once

// The ranges Paraplan accepts for every number a user gives it, in one table: plan and
// cluster files, the window's fields and the command line all check against these at the
// boundary, and docs/limits.md lists them (a test keeps the two in step). Within these
// ranges every product the engine forms fits a 64-bit integer or a finite double.

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace paraplan::limits {

/// One field's accepted range, inclusive at both ends unless `min_exclusive`.
struct Range
{
    const char* field; ///< as users meet it: "training.seq_len", "--bw-GBps"
    double min;
    double max;
    const char* unit; ///< "GPUs", "tokens", "GB/s"; "" for a plain count
    bool min_exclusive = false;
    bool whole = true; ///< a whole number
};

// Cluster.
inline constexpr long long kMaxGpus = 1LL << 20; ///< 1,048,576 GPUs or TPU chips
inline constexpr Range kNodes{"cluster.nodes", 1, kMaxGpus, "nodes"};
inline constexpr Range kGpusPerNode{"node.gpus", 1, 72, "GPUs"};
inline constexpr Range kNics{"node.nics", 0, 64, "NICs"};
inline constexpr Range kNvSwitchChips{"node.switch_links_per_gpu", 0, 64, "NVSwitch chips"};
inline constexpr Range kLinksPerChip{"node.switch_links_per_gpu[]", 0, 64, "links"};
inline constexpr Range kLinksPerPair{"node.nvlink_pairs[].links", 1, 64, "links"};
inline constexpr Range kNodesPerRack{"network.nodes_per_rack", 0, kMaxGpus, "nodes"};
inline constexpr Range kOversubscription{"network.spine_oversubscription", 1, 64, "", false, false};
inline constexpr Range kTorusDim{"torus.dims[]", 1, 64, "chips"};
/// Any link or NIC bandwidth: from 1 MB/s (below any network a GPU cluster uses) to 100 TB/s
/// per direction, over 50x NVLink 5's 1.8 TB/s per GPU.
inline constexpr Range kLinkGBps{"bandwidth", 0.001, 1e5, "GB/s", false, false};
/// Any latency: up to one second.
inline constexpr Range kLatencyUs{"latency", 0, 1e6, "us", false, false};

// Model.
inline constexpr Range kLayers{"model.layers", 1, 1 << 14, "layers"};
inline constexpr Range kHidden{"model.hidden", 1, 1 << 20, ""};
inline constexpr Range kHeads{"model.heads", 1, 1 << 16, "heads"};
inline constexpr Range kHeadDim{"model.head_dim", 0, 1 << 16, ""};
inline constexpr Range kFfnHidden{"model.ffn_hidden", 1, 1 << 22, ""};
inline constexpr Range kVocab{"model.vocab", 1, 1 << 27, "tokens"};
inline constexpr Range kExperts{"model.experts", 0, 1 << 16, "experts"};
inline constexpr Range kMaxPositions{"model.max_positions", 0, 1 << 24, "positions"};

// Layout and training.
inline constexpr Range kDegree{"parallel degree", 1, kMaxGpus, ""};
inline constexpr Range kInterleave{"parallel.interleave", 1, 1024, "virtual stages"};
inline constexpr Range kMicroBatch{"parallel.micro_batch", 1, 1 << 20, "sequences"};
inline constexpr Range kGlobalBatch{"parallel.global_batch", 1, 1 << 30, "sequences"};
inline constexpr Range kSeqLen{"training.seq_len", 1, 1 << 22, "tokens"};
/// Tokens to train on: 1e17, over 6,000x Llama 3's 15.6T tokens.
inline constexpr Range kTrainTokens{"training.train_tokens", 0, 1e17, "tokens", false, false};
/// Price per GPU-hour: up to $10,000, over 1,000x any public cloud list price.
inline constexpr Range kGpuHourUsd{"training.gpu_hour_usd", 0, 1e4, "USD", false, false};

// Measurements.
/// A measured time (a collective, a copy, a kernel): 1 ns, below any kernel's launch, to a day.
inline constexpr Range kMeasuredSeconds{"measured time", 1e-9, 86400, "s", false, false};

// Command-line quantities.
inline constexpr Range kRanks{"--ranks", 1, kMaxGpus, "ranks"};
/// A message or model-state size: up to 1 PB.
inline constexpr Range kBytes{"bytes", 1, 1e15, "bytes", false, false};
/// Parameters: up to 1e15 (a quadrillion; the largest published dense model has 1.8e12).
inline constexpr Range kParams{"--params", 1, 1e15, "parameters", false, false};

/// Every range above, in the order the user guide lists them.
const std::vector<Range>& all();

/// Empty when `value` lies in `range` (and is whole if it must be), else the message:
/// "training.seq_len must be a whole number from 1 to 4,194,304 tokens (got 2,000,000,000)".
/// `field` replaces the range's own name when given (e.g. "node.nic_GBps" for kLinkGBps).
/// Whether `value` lies in `range` (and is whole if it must be): check()'s test, inline so a
/// value in range costs a few comparisons (validation runs on every evaluation of a search).
inline bool inside(const Range& range, double value)
{
    return std::isfinite(value) && (range.min_exclusive ? value > range.min : value >= range.min) &&
           value <= range.max && (!range.whole || value == std::floor(value));
}
/// check()'s message for a value outside `range`.
std::string outsideMessage(const Range& range, double value, const char* field);
inline std::optional<std::string> check(const Range& range, double value,
                                        const char* field = nullptr)
{
    if (inside(range, value))
        return std::nullopt;
    return outsideMessage(range, value, field);
}

/// The range as the user guide writes it: "1 to 4,194,304 tokens".
std::string describe(const Range& range);

/// a x b when it fits below `limit`, else nothing: for products of user numbers.
std::optional<long long> product(long long a, long long b, long long limit = kMaxGpus * kMaxGpus);

} // namespace paraplan::limits
