#pragma once

// The number of fields of an aggregate, for tests that hold a comparison or a cache key to
// every field of a struct: a field added to the struct raises its count, and the test's
// expected count stops matching until the new field is compared (or keyed) and tested.

#include <cstddef>
#include <utility>

namespace paraplan::test {

// The most initialisers `T{...}` accepts, each of which converts to anything.
struct AnyField
{
    template <class T> operator T() const; // NOLINT: converts to any field's type
};

template <class T, class... Fields>
constexpr auto bracedFrom(int) -> decltype(T{std::declval<Fields>()...}, true)
{
    return true;
}
template <class T, class... Fields> constexpr bool bracedFrom(long)
{
    return false;
}

template <class T, class... Fields> constexpr size_t fieldCount()
{
    if constexpr (sizeof...(Fields) > 64)
        return 0; // not an aggregate this counts
    else if constexpr (bracedFrom<T, Fields..., AnyField>(0))
        return fieldCount<T, Fields..., AnyField>();
    else
        return sizeof...(Fields);
}

} // namespace paraplan::test
