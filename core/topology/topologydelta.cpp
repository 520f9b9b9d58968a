#include "topologydelta.h"

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

size_t GraphDelta::bytes() const
{
    return sizeof(*this) + headBytes(m_headBefore) + headBytes(m_headAfter) + hunkBytes(m_racks) +
           hunkBytes(m_nodes) +
           (m_specsBefore.capacity() + m_specsAfter.capacity()) * sizeof(SpecRun);
}

} // namespace paraplan
