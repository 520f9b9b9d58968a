#include "enginecache.h"

namespace paraplan {

EngineCache::EngineCache(size_t capacity, const HardwareCatalog& catalog)
    : m_capacity(capacity), m_catalog(&catalog)
{
}

std::shared_ptr<const StepEngine> EngineCache::engineFor(const ClusterSpec& cluster)
{
    for (const auto& [known, engine] : m_engines)
        if (known == cluster)
            return engine;
    if (m_engines.size() >= m_capacity)
        m_engines.clear();
    auto engine = std::make_shared<const StepEngine>(cluster, *m_catalog);
    m_engines.emplace_back(cluster, engine);
    return engine;
}

} // namespace paraplan
