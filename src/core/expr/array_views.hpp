// Geometry of caller arrays (ArrayView) that the bindings need before a run:
// memory overlap between an input and the output, and the size of the
// iteration space (for deciding whether a run is worth making interruptible).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "expr/expr.hpp"

namespace numfuse::expr {

// Byte range [low, high) the elements of `v` (of `item` bytes) occupy; empty
// (low == high) when it has no elements.
struct ByteRange {
    const char* low;
    const char* high;
};

inline ByteRange byte_range(const ArrayView& v, std::size_t item) noexcept {
    const char* low = v.data;
    const char* high = v.data + item;
    for (std::size_t k = 0; k < v.shape.size(); ++k) {
        if (v.shape[k] == 0) return {v.data, v.data};
        const std::ptrdiff_t span = (v.shape[k] - 1) * v.strides[k];
        if (span < 0) low += span;
        else high += span;
    }
    return {low, high};
}

// True when writing `out` block by block could change an element of `in`
// that is still to be read: their memory overlaps and they are not the same
// view element for element.
inline bool overlaps_other_than_elementwise(const ArrayView& in, const ArrayView& out) noexcept {
    const ByteRange o = byte_range(out, view_item(out));
    const ByteRange i = byte_range(in, view_item(in));
    if (i.high <= o.low || o.high <= i.low) return false;
    const bool same = in.data == out.data && in.shape == out.shape && in.strides == out.strides;
    return !same;
}

// Elements of the iteration space: the broadcast of the output's and the
// inputs' shapes (for a reduction, its inputs' shape).
inline std::size_t iteration_elements(const std::vector<std::ptrdiff_t>& out_shape,
                                      const std::vector<ArrayView>& inputs) {
    std::vector<std::ptrdiff_t> iteration = out_shape;
    for (const auto& in : inputs) {
        const auto& s = in.shape;
        if (s.size() > iteration.size())
            iteration.insert(iteration.begin(), s.size() - iteration.size(), 1);
        for (std::size_t k = 0; k < s.size(); ++k) {
            auto& extent = iteration[iteration.size() - s.size() + k];
            extent = std::max(extent, s[k]);
        }
    }
    std::size_t count = 1;
    for (const auto extent : iteration) count *= static_cast<std::size_t>(extent);
    return count;
}

}  // namespace numfuse::expr
