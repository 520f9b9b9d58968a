#pragma once

#include "topologygraph.h"

#include <cstddef>
#include <vector>

namespace paraplan {

/// Value equality of drawings: every field, node specs by value (shared or not).
bool operator==(const TopoNode& a, const TopoNode& b);
bool operator==(const TopoRack& a, const TopoRack& b);
bool operator==(const TopologyGraph& a, const TopologyGraph& b);
inline bool operator!=(const TopoNode& a, const TopoNode& b)
{
    return !(a == b);
}
inline bool operator!=(const TopoRack& a, const TopoRack& b)
{
    return !(a == b);
}
inline bool operator!=(const TopologyGraph& a, const TopologyGraph& b)
{
    return !(a == b);
}

/// What one edit changed in a drawing, kept small: the racks and nodes that changed (runs of
/// removed and inserted ones, found by walking both lists by ID), the node specs as runs of
/// shared specs when any changed, and the graph's own fields. An undo step holds this instead
/// of a copy of the drawing, so its size follows the edit, not the cluster.
class GraphDelta
{
public:
    GraphDelta() = default;
    /// The change that turns `before` into `after`.
    static GraphDelta between(const TopologyGraph& before, const TopologyGraph& after);

    /// The change of this delta followed by `next` (a delta from this one's `after` drawing),
    /// composed from the two deltas alone, without the drawings: a merged step (a drag, a
    /// slider) costs what the two edits touched, not a pass over the cluster. Exact: applying
    /// it turns this one's `before` into `next`'s `after`, and reverting it turns that back.
    /// It may keep an item that ends as it began (moved there and back) as a change.
    GraphDelta then(const GraphDelta& next) const;

    /// Turns the `before` drawing into `after` in place (exactly: every field, shared specs).
    void apply(TopologyGraph* graph) const;
    /// Turns the `after` drawing back into `before` in place.
    void revert(TopologyGraph* graph) const;

    /// When this delta changes nothing but some nodes' own fields (the same racks and graph
    /// fields, the same node IDs, racks and specs at every index), the IDs of those nodes;
    /// else false.
    bool changedNodesOnly(std::vector<int>* ids) const;

    /// The bytes this delta holds (its own size, the racks, nodes, names and specs' runs it
    /// keeps; the specs themselves are shared with the drawings).
    size_t bytes() const;

    template <class T> struct Hunk
    {
        size_t at = 0; ///< position in the `before` list
        std::vector<T> removed;
        std::vector<T> inserted;
    };
    struct SpecRun
    {
        size_t count = 0;
        SharedNodeSpec spec;
    };

private:
    TopologyGraph m_headBefore; ///< the graph's fields, without racks and nodes
    TopologyGraph m_headAfter;
    std::vector<Hunk<TopoRack>> m_racks;
    std::vector<Hunk<TopoNode>> m_nodes;
    bool m_specsChanged = false;
    std::vector<SpecRun> m_specsBefore; ///< every node's spec, in runs
    std::vector<SpecRun> m_specsAfter;
};

} // namespace paraplan
