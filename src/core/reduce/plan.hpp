// The layout half of logsumexp / softmax / log_softmax (internal to src/core/reduce):
// operand slots and dimensions, how a problem is cut into work items (Plan) and run on
// threads, the active level's kernels, and the checks of the caller's description.
// Defined in plan.cpp; folding and merging are in fold.hpp, the functions in reduce.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "interrupt.hpp"
#include "numfuse_core.hpp"
#include "parallel.hpp"
#include "reduce/kernel_table.hpp"
#include "reduce/reduce.hpp"
#include "strided.hpp"

namespace numfuse::core::reduce_detail {

// ------------------------------------------------------------ geometry

// Operand slots: 0 = a / x, 1 = b, 2 = result / out, 3 = sign.
constexpr int slot_a = 0;
constexpr int slot_b = 1;
constexpr int slot_out = 2;
constexpr int slot_sign = 3;
constexpr int slot_count = 4;

using Dims = StridedDims<std::array<std::vector<std::ptrdiff_t>, slot_count>>;

// Byte offsets of flat index `index` (C order over extent) for each slot.
void offsets_of(const Dims& dims, std::size_t index, std::ptrdiff_t (&offset)[slot_count]) noexcept;

// Calls run(offset, count) for the pieces of the flat inner range [lo, hi)
// that lie along the innermost inner dimension.
template <class Run>
void for_each_run(const Dims& inner, std::size_t lo, std::size_t hi, Run&& run) {
    const std::size_t length = inner.extent.back();
    std::size_t index = lo;
    while (index < hi) {
        const std::size_t position = index % length;
        const std::size_t count = std::min(length - position, hi - index);
        std::ptrdiff_t offset[slot_count];
        offsets_of(inner, index, offset);
        run(offset, count);
        index += count;
    }
}

// How a problem is cut into work items (see plan()).
struct Plan {
    Dims outer;
    Dims inner;
    bool lanes_across_outputs = false;  // strip kernels, else run kernels
    std::size_t outputs = 0;            // product of outer extents
    std::size_t reduced = 0;            // product of inner extents
    std::size_t chunk = 0;              // inner elements per chunk
    std::size_t chunks = 0;             // per output
    std::size_t strip_lanes = 0;        // outputs per strip (strip mode)
    std::size_t strips_per_row = 0;     // strips along the innermost outer dim
    std::size_t rows = 0;               // outputs / innermost outer extent
    std::size_t items = 0;              // work items
    std::size_t elements_per_item = 0;
};

// Padding after per-output arrays: kernels load whole batches.
constexpr std::size_t lane_padding = 16;
// Below this many elements per thread, threads cost more than they save.
constexpr std::size_t min_elements_per_thread = std::size_t{1} << 15;

// The plan of a problem whose kernels take `batch_lanes` elements of `elem` bytes.
Plan plan(const Dims& outer_in, const Dims& inner_in, std::size_t elem, std::size_t batch_lanes);

template <class Body>
void parallel_items(const Plan& p, Body&& body) {
    const std::size_t per_item = std::max<std::size_t>(p.elements_per_item, 1);
    const std::size_t min_items = std::max<std::size_t>(min_elements_per_thread / per_item, 1);
    // Interruptible between items (see interrupt.hpp); a stopped scope makes
    // every later phase a no-op until the entry point throws.
    interrupt::Scope* const scope = interrupt::current();
    parallel::for_ranges_or(p.items, min_items, 1, [&](std::size_t begin, std::size_t end) {
        for (std::size_t item = begin; item < end; ++item) {
            if (interrupt::should_stop(scope)) break;
            body(item);
        }
        return 0u;
    });
}

template <class Body>
void parallel_outputs(std::size_t outputs, std::size_t cost_per_output, Body&& body) {
    const std::size_t min_outputs = std::max<std::size_t>(
        min_elements_per_thread / std::max<std::size_t>(cost_per_output, 1), 1);
    interrupt::Scope* const scope = interrupt::current();
    parallel::for_ranges_or(outputs, min_outputs, 1, [&](std::size_t begin, std::size_t end) {
        for (std::size_t o = begin; o < end; ++o) {
            if (interrupt::should_stop(scope)) break;
            body(o);
        }
        return 0u;
    });
}

// ------------------------------------------------------------ level tables

// The reduction kernels of the active level (levels.hpp).
const ReduceKernelTable& active_table() noexcept;

template <class T>
const ReduceKernels<T>& active_kernels() noexcept {
    const ReduceKernelTable& table = active_table();
    if constexpr (std::is_same<T, float>::value) {
        return table.f32;
    } else {
        return table.f64;
    }
}

// ------------------------------------------------------------ checking

// sizeof(float) or sizeof(double); std::invalid_argument for another dtype.
std::size_t element_size(DType dtype);

// Outer and inner dimensions with the strides of every slot (absent slots
// get zero strides).
// std::invalid_argument where a stride list does not match its dimensions.
void build_dims(const ReduceShape& shape, const ReduceOperand* const (&in)[2],
                const ReduceOutput* const (&out)[2], bool out_has_inner, Dims& outer, Dims& inner);

}  // namespace numfuse::core::reduce_detail
