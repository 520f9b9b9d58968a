#pragma once

#include "stepmodel.h"

#include <memory>
#include <utility>
#include <vector>

namespace paraplan {

/// Engines by cluster, compared member by member (ClusterSpec's operator==), so that
/// evaluations on a cluster already seen skip building its collective model. A few clusters
/// are live at once (a plan's, its what-ifs', a calibration set's), so the cache is a short
/// list, emptied when it grows past `capacity`; an engine handed out stays valid (shared).
class EngineCache
{
public:
    /// `catalog` must outlive the cache and the engines it hands out.
    explicit EngineCache(size_t capacity, const HardwareCatalog& catalog);
    std::shared_ptr<const StepEngine> engineFor(const ClusterSpec& cluster);

private:
    size_t m_capacity;
    const HardwareCatalog* m_catalog;
    std::vector<std::pair<ClusterSpec, std::shared_ptr<const StepEngine>>> m_engines;
};

} // namespace paraplan
