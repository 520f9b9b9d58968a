#include "topologydelta.h"

#include <cstdint>
#include <map>
#include <unordered_set>

namespace paraplan {
namespace {

// A node's own fields, its spec left out (specs are compared and kept as runs).
bool sameExceptSpec(const TopoNode& a, const TopoNode& b)
{
    return a.id == b.id && a.rack == b.rack && a.x == b.x && a.y == b.y &&
           a.nvlink_factor == b.nvlink_factor && a.nic_factor == b.nic_factor && a.name == b.name &&
           a.switch_in_service == b.switch_in_service;
}

bool sameForDiff(const TopoNode& a, const TopoNode& b)
{
    return sameExceptSpec(a, b);
}
bool sameForDiff(const TopoRack& a, const TopoRack& b)
{
    return a == b;
}

TopologyGraph headOf(const TopologyGraph& graph)
{
    TopologyGraph head;
    head.name = graph.name;
    head.gpu_id = graph.gpu_id;
    head.source = graph.source;
    head.spine_switches = graph.spine_switches;
    head.spine_oversubscription = graph.spine_oversubscription;
    head.sharp = graph.sharp;
    head.is_torus = graph.is_torus;
    head.torus = graph.torus;
    head.next_id = graph.next_id;
    head.base = graph.base;
    return head;
}

void setHead(TopologyGraph* graph, const TopologyGraph& head)
{
    std::vector<TopoRack> racks = std::move(graph->racks);
    std::vector<TopoNode> nodes = std::move(graph->nodes);
    *graph = head;
    graph->racks = std::move(racks);
    graph->nodes = std::move(nodes);
}

// Walks both lists by ID: equal items are skipped, changed ones replaced, items whose ID the
// other list lacks removed or inserted. Anything else (a reordering) is removed and inserted,
// which is still exact, only larger.
template <class T>
std::vector<GraphDelta::Hunk<T>> diff(const std::vector<T>& before, const std::vector<T>& after)
{
    std::vector<GraphDelta::Hunk<T>> hunks;
    auto hunkAt = [&hunks](size_t at) -> GraphDelta::Hunk<T>& {
        if (hunks.empty() || hunks.back().at + hunks.back().removed.size() != at)
            hunks.push_back({at, {}, {}});
        return hunks.back();
    };
    std::unordered_set<int> beforeIds;
    std::unordered_set<int> afterIds;
    bool idsRead = false;
    size_t i = 0;
    size_t j = 0;
    while (i < before.size() || j < after.size()) {
        if (i < before.size() && j < after.size() && before[i].id == after[j].id) {
            if (!sameForDiff(before[i], after[j])) {
                GraphDelta::Hunk<T>& hunk = hunkAt(i);
                hunk.removed.push_back(before[i]);
                hunk.inserted.push_back(after[j]);
            }
            ++i;
            ++j;
            continue;
        }
        if (!idsRead) { // only edits that add or remove items pay for the ID sets
            for (const T& item : before)
                beforeIds.insert(item.id);
            for (const T& item : after)
                afterIds.insert(item.id);
            idsRead = true;
        }
        const bool insert =
            j < after.size() &&
            (i >= before.size() || (afterIds.count(before[i].id) && !beforeIds.count(after[j].id)));
        GraphDelta::Hunk<T>& hunk = hunkAt(i);
        if (insert)
            hunk.inserted.push_back(after[j++]);
        else
            hunk.removed.push_back(before[i++]);
    }
    return hunks;
}

// Rebuilds a list from its other side and the hunks; `forward` reads the hunks as
// before -> after, else after -> before.
template <class T>
void patch(std::vector<T>* list, const std::vector<GraphDelta::Hunk<T>>& hunks, bool forward)
{
    if (hunks.empty())
        return;
    std::vector<T> from = std::move(*list);
    std::vector<T> to;
    long long sizeChange = 0;
    for (const auto& hunk : hunks)
        sizeChange += static_cast<long long>(hunk.inserted.size()) -
                      static_cast<long long>(hunk.removed.size());
    to.reserve(static_cast<size_t>(static_cast<long long>(from.size()) +
                                   (forward ? sizeChange : -sizeChange)));
    size_t read = 0;
    long long offset = 0; // after position - before position, up to the current hunk
    for (const auto& hunk : hunks) {
        const size_t at = forward ? hunk.at : static_cast<size_t>(hunk.at + offset);
        const std::vector<T>& drop = forward ? hunk.removed : hunk.inserted;
        const std::vector<T>& put = forward ? hunk.inserted : hunk.removed;
        to.insert(to.end(), std::make_move_iterator(from.begin() + static_cast<long>(read)),
                  std::make_move_iterator(from.begin() + static_cast<long>(at)));
        to.insert(to.end(), put.begin(), put.end());
        read = at + drop.size();
        offset += static_cast<long long>(hunk.inserted.size()) -
                  static_cast<long long>(hunk.removed.size());
    }
    to.insert(to.end(), std::make_move_iterator(from.begin() + static_cast<long>(read)),
              std::make_move_iterator(from.end()));
    *list = std::move(to);
}

// A run of a list described by a delta: items kept from the first list (`from`, `count` of
// them; the last run is open, the rest of the list) or items of a hunk's own.
template <class T> struct Piece
{
    size_t from = 0;
    size_t count = 0;
    const T* items = nullptr; ///< null: kept from the first list
};

constexpr size_t kOpen = SIZE_MAX; // the count of the open run at the end

// The second list of `hunks` as runs over the first list and the hunks' inserted items.
template <class T> std::vector<Piece<T>> piecesOf(const std::vector<GraphDelta::Hunk<T>>& hunks)
{
    std::vector<Piece<T>> pieces;
    size_t read = 0;
    for (const auto& hunk : hunks) {
        if (hunk.at > read)
            pieces.push_back({read, hunk.at - read, nullptr});
        if (!hunk.inserted.empty())
            pieces.push_back({0, hunk.inserted.size(), hunk.inserted.data()});
        read = hunk.at + hunk.removed.size();
    }
    pieces.push_back({read, kOpen, nullptr});
    return pieces;
}

// `first` then `second` (hunks over the list `first` produced) as hunks over `first`'s own
// list: the second's hunks are laid over the runs the first one leaves, then the runs of the
// first list that are no longer kept become removed items.
template <class T>
std::vector<GraphDelta::Hunk<T>> compose(const std::vector<GraphDelta::Hunk<T>>& first,
                                         const std::vector<GraphDelta::Hunk<T>>& second)
{
    if (second.empty())
        return first;
    if (first.empty())
        return second;
    std::map<size_t, const T*> removed; // first-list position -> the item it held
    for (const auto& hunk : first)
        for (size_t k = 0; k < hunk.removed.size(); ++k)
            removed[hunk.at + k] = &hunk.removed[k];
    const std::vector<Piece<T>> middle = piecesOf(first);
    std::vector<Piece<T>> last;
    size_t p = 0;      // the piece of `middle` being read
    size_t offset = 0; // items of it already read
    // Copies (keep) or drops `n` items of the middle list from the current piece on; a kept
    // item dropped is removed from the first list, and `dropped` holds what it was.
    auto take = [&](size_t n, bool keep, const T* dropped) {
        while (n > 0) {
            const Piece<T>& piece = middle[p];
            const size_t count = std::min(n, piece.count - offset);
            if (keep)
                last.push_back({piece.from + (piece.items ? 0 : offset), count,
                                piece.items ? piece.items + offset : nullptr});
            else if (!piece.items)
                for (size_t k = 0; k < count; ++k)
                    removed[piece.from + offset + k] = dropped++;
            else
                dropped += count;
            n -= count;
            offset += count;
            if (offset == piece.count) {
                ++p;
                offset = 0;
            }
        }
    };
    size_t read = 0; // middle-list position
    for (const auto& hunk : second) {
        take(hunk.at - read, true, nullptr);
        take(hunk.removed.size(), false, hunk.removed.data());
        if (!hunk.inserted.empty())
            last.push_back({0, hunk.inserted.size(), hunk.inserted.data()});
        read = hunk.at + hunk.removed.size();
    }
    for (; p < middle.size(); ++p, offset = 0) { // the rest as it is
        const Piece<T>& piece = middle[p];
        last.push_back({piece.from + (piece.items ? 0 : offset),
                        piece.count == kOpen ? kOpen : piece.count - offset,
                        piece.items ? piece.items + offset : nullptr});
    }
    // Back to hunks over the first list: what lies between two kept runs was removed.
    std::vector<GraphDelta::Hunk<T>> hunks;
    auto hunkAt = [&hunks](size_t at) -> GraphDelta::Hunk<T>& {
        if (hunks.empty() || hunks.back().at + hunks.back().removed.size() != at)
            hunks.push_back({at, {}, {}});
        return hunks.back();
    };
    size_t kept = 0; // first-list position up to which every item is placed
    for (const Piece<T>& piece : last) {
        if (piece.count == 0)
            continue;
        if (piece.items) {
            GraphDelta::Hunk<T>& hunk = hunkAt(kept);
            hunk.inserted.insert(hunk.inserted.end(), piece.items, piece.items + piece.count);
            continue;
        }
        for (; kept < piece.from; ++kept)
            hunkAt(kept).removed.push_back(*removed.at(kept));
        kept = piece.count == kOpen ? kOpen : piece.from + piece.count;
    }
    return hunks;
}

std::vector<GraphDelta::SpecRun> specRuns(const std::vector<TopoNode>& nodes)
{
    std::vector<GraphDelta::SpecRun> runs;
    for (const TopoNode& node : nodes) {
        if (runs.empty() || !runs.back().spec.sharedWith(node.spec))
            runs.push_back({0, node.spec});
        ++runs.back().count;
    }
    return runs;
}

void setSpecs(std::vector<TopoNode>* nodes, const std::vector<GraphDelta::SpecRun>& runs)
{
    size_t n = 0;
    for (const GraphDelta::SpecRun& run : runs)
        for (size_t k = 0; k < run.count && n < nodes->size(); ++k)
            (*nodes)[n++].spec = run.spec;
}

size_t stringBytes(const std::string& text)
{
    return text.capacity() > 15 ? text.capacity() + 1 : 0; // beyond the short-string buffer
}

size_t itemBytes(const TopoRack& rack)
{
    return sizeof(rack) + stringBytes(rack.name);
}
size_t itemBytes(const TopoNode& node)
{
    return sizeof(node) + stringBytes(node.name) + node.switch_in_service.capacity() / 8;
}

size_t headBytes(const TopologyGraph& head)
{
    const ClusterSpec& b = head.base;
    return sizeof(head) + stringBytes(head.name) + stringBytes(head.gpu_id) +
           stringBytes(head.source) + stringBytes(head.spine_oversubscription.source) +
           stringBytes(b.preset) + stringBytes(b.name) + stringBytes(b.gpu_id) +
           stringBytes(b.source) + b.node.switch_links_per_gpu.capacity() * sizeof(int) +
           b.node.nvlink_pairs.capacity() * sizeof(NVLinkPair) +
           b.what_if.nvswitch_chips_out.capacity() * sizeof(int);
}

template <class T> size_t hunkBytes(const std::vector<GraphDelta::Hunk<T>>& hunks)
{
    size_t bytes = hunks.capacity() * sizeof(GraphDelta::Hunk<T>);
    for (const auto& hunk : hunks) {
        for (const T& item : hunk.removed)
            bytes += itemBytes(item);
        for (const T& item : hunk.inserted)
            bytes += itemBytes(item);
    }
    return bytes;
}

} // namespace

bool operator==(const TopoNode& a, const TopoNode& b)
{
    return sameExceptSpec(a, b) && (a.spec.sharedWith(b.spec) || *a.spec == *b.spec);
}

bool operator==(const TopoRack& a, const TopoRack& b)
{
    return a.id == b.id && a.x == b.x && a.y == b.y && a.uplink_factor == b.uplink_factor &&
           a.name == b.name;
}

bool operator==(const TopologyGraph& a, const TopologyGraph& b)
{
    return a.name == b.name && a.gpu_id == b.gpu_id && a.source == b.source &&
           a.spine_switches == b.spine_switches &&
           a.spine_oversubscription == b.spine_oversubscription && a.sharp == b.sharp &&
           a.is_torus == b.is_torus && a.torus == b.torus && a.next_id == b.next_id &&
           a.base == b.base && a.racks == b.racks && a.nodes == b.nodes;
}

GraphDelta GraphDelta::between(const TopologyGraph& before, const TopologyGraph& after)
{
    GraphDelta delta;
    delta.m_headBefore = headOf(before);
    delta.m_headAfter = headOf(after);
    delta.m_racks = diff(before.racks, after.racks);
    delta.m_nodes = diff(before.nodes, after.nodes);
    // Spec runs are laid by index over the patched nodes: they may be left out only when
    // every index holds the same node (by ID) with the same shared spec before and after.
    bool specsSame = before.nodes.size() == after.nodes.size();
    for (size_t n = 0; specsSame && n < before.nodes.size(); ++n)
        specsSame = before.nodes[n].id == after.nodes[n].id &&
                    before.nodes[n].spec.sharedWith(after.nodes[n].spec);
    if (!specsSame) {
        delta.m_specsChanged = true;
        delta.m_specsBefore = specRuns(before.nodes);
        delta.m_specsAfter = specRuns(after.nodes);
    }
    return delta;
}

GraphDelta GraphDelta::then(const GraphDelta& next) const
{
    GraphDelta delta;
    delta.m_headBefore = m_headBefore;
    delta.m_headAfter = next.m_headAfter;
    delta.m_racks = compose(m_racks, next.m_racks);
    delta.m_nodes = compose(m_nodes, next.m_nodes);
    // Without a change of its own, a delta's lists hold the same nodes with the same specs at
    // every index before and after: the other delta's runs describe that list too.
    delta.m_specsChanged = m_specsChanged || next.m_specsChanged;
    if (delta.m_specsChanged) {
        delta.m_specsBefore = m_specsChanged ? m_specsBefore : next.m_specsBefore;
        delta.m_specsAfter = next.m_specsChanged ? next.m_specsAfter : m_specsAfter;
    }
    return delta;
}

void GraphDelta::apply(TopologyGraph* graph) const
{
    setHead(graph, m_headAfter);
    patch(&graph->racks, m_racks, true);
    patch(&graph->nodes, m_nodes, true);
    if (m_specsChanged)
        setSpecs(&graph->nodes, m_specsAfter);
}

void GraphDelta::revert(TopologyGraph* graph) const
{
    setHead(graph, m_headBefore);
    patch(&graph->racks, m_racks, false);
    patch(&graph->nodes, m_nodes, false);
    if (m_specsChanged)
        setSpecs(&graph->nodes, m_specsBefore);
}

bool GraphDelta::changedNodesOnly(std::vector<int>* ids) const
{
    if (m_specsChanged || !m_racks.empty() || m_headBefore != m_headAfter)
        return false;
    for (const Hunk<TopoNode>& hunk : m_nodes) {
        if (hunk.removed.size() != hunk.inserted.size())
            return false;
        for (size_t k = 0; k < hunk.removed.size(); ++k) {
            const TopoNode& a = hunk.removed[k];
            const TopoNode& b = hunk.inserted[k];
            if (a.id != b.id || a.rack != b.rack || !a.spec.sharedWith(b.spec))
                return false;
            ids->push_back(b.id);
        }
    }
    return true;
}

size_t GraphDelta::bytes() const
{
    return sizeof(*this) + headBytes(m_headBefore) + headBytes(m_headAfter) + hunkBytes(m_racks) +
           hunkBytes(m_nodes) +
           (m_specsBefore.capacity() + m_specsAfter.capacity()) * sizeof(SpecRun);
}

} // namespace paraplan
