// Strided iteration spaces: the dimension simplifier shared by the
// reductions (reduce/reduce.cpp) and the expression VM (expr/).
//
// An iteration space is a list of dimensions (outermost first) and, for each
// operand, a byte stride per dimension (any sign; 0 broadcasts). Simplifying
// drops extent-1 dimensions (they carry no iteration) and merges neighbours
// that every operand steps through as one, so the common all-contiguous case
// becomes one flat run and every later loop does less index arithmetic.
#pragma once

#include <cstddef>
#include <vector>

namespace numfuse::core {

// `Strides` holds one std::vector<std::ptrdiff_t> per operand, indexed by
// operand: std::array for a fixed operand count, std::vector otherwise.
template <class Strides>
struct StridedDims {
    std::vector<std::size_t> extent;  // outermost first
    Strides stride;                   // [operand][dimension], bytes

    std::size_t rank() const noexcept { return extent.size(); }
    std::size_t size() const noexcept {
        std::size_t total = 1;
        for (const auto e : extent) total *= e;
        return total;
    }
};

// The dimensions `order` of `in` (indices into in, outermost first), without
// those of extent 1, with dimension d merged into the one before it when
// every operand's stride there equals its stride in d times d's extent.
// The result may have rank 0 (every extent was 1).
template <class Strides>
StridedDims<Strides> coalesce_dims(const StridedDims<Strides>& in,
                                   const std::vector<std::size_t>& order) {
    const std::size_t operands = in.stride.size();
    StridedDims<Strides> out;
    out.stride = in.stride;
    for (auto& s : out.stride) s.clear();
    for (const std::size_t d : order) {
        if (in.extent[d] == 1) continue;
        const std::size_t last = out.rank();
        bool merge = last > 0;
        for (std::size_t o = 0; merge && o < operands; ++o) {
            merge = out.stride[o][last - 1] ==
                    in.stride[o][d] * static_cast<std::ptrdiff_t>(in.extent[d]);
        }
        if (merge) {
            out.extent[last - 1] *= in.extent[d];
            for (std::size_t o = 0; o < operands; ++o) out.stride[o][last - 1] = in.stride[o][d];
        } else {
            out.extent.push_back(in.extent[d]);
            for (std::size_t o = 0; o < operands; ++o) out.stride[o].push_back(in.stride[o][d]);
        }
    }
    return out;
}

}  // namespace numfuse::core
