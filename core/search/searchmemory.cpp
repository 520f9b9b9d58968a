#include "searchmemory.h"

#include "stagememory.h"
#include "units.h"

namespace paraplan {

LayoutMemory::LayoutMemory(const Plan& base, const GpuSpec& gpu)
    : m_count(countParameters(base.model)), m_hbmBytes(units::bytesFromGiB(gpu.hbm_GiB)),
      m_runtimeReserve(base.figures.runtime_reserve_bytes.value)
{
}

double LayoutMemory::fullestStageBytes(const Plan& plan) const
{
    return paraplan::fullestStageBytes(plan, m_count); // core/engine/stagememory.h
}

} // namespace paraplan
