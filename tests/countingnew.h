#pragma once

// Counts every heap allocation of the process: the replaceable global operator new and
// new[] (and their deletes) are defined here, so include this header in exactly one source
// file of an executable. Read the count around the code under test:
//     const long long before = paraplan::test::allocations();
//     ...;
//     const long long made = paraplan::test::allocations() - before;

#include <atomic>
#include <cstdlib>
#include <new>

namespace paraplan::test {

inline std::atomic<long long> g_allocationCount{0};

inline long long allocations()
{
    return g_allocationCount.load(std::memory_order_relaxed);
}

inline void* countedAllocation(std::size_t size)
{
    g_allocationCount.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}

} // namespace paraplan::test

void* operator new(std::size_t size)
{
    return paraplan::test::countedAllocation(size);
}
void* operator new[](std::size_t size)
{
    return paraplan::test::countedAllocation(size);
}
// The nothrow forms too: left to the runtime (a sanitizer's allocator among them), memory
// they hand out would come back through the deletes below.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept
{
    paraplan::test::g_allocationCount.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(size ? size : 1);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept
{
    paraplan::test::g_allocationCount.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(size ? size : 1);
}
void operator delete(void* p, const std::nothrow_t&) noexcept
{
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept
{
    std::free(p);
}
void operator delete(void* p) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}
void operator delete[](void* p) noexcept
{
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept
{
    std::free(p);
}
