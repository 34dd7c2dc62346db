// The level-independent machinery logsumexp (reduce.cpp) and softmax /
// log_softmax (softmax.cpp) share: the active level's kernel table, layout
// planning (outer / inner dimensions, fixed chunks, strips), threads over
// work items, the scalar merge rules and the argument checks.
//
// Internal to src/core/reduce: compiled with the baseline flags; the level
// loops are only called through the table of the active level, which
// levels.cpp checked the CPU can run.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "arch/level_tables.hpp"
#include "interrupt.hpp"
#include "levels.hpp"
#include "lse_accumulator.hpp"
#include "parallel.hpp"
#include "reduce/reduce.hpp"
#include "strided.hpp"

namespace numfuse::core::reduce_driver {

// ------------------------------------------------------------ level tables

inline const ReduceKernelTable& active_table() noexcept {
    static const PerLevelTables<ReduceKernelTable> tables(
        [](const LevelKernelFill& fill, ReduceKernelTable& table) { fill.reduce(table); });
    return tables[active_level()];
}

template <class T>
const ReduceKernels<T>& active_kernels() noexcept {
    const ReduceKernelTable& table = active_table();
    if constexpr (std::is_same<T, float>::value) {
        return table.f32;
    } else {
        return table.f64;
    }
}

// FpStatusGuard around the kernels: no condition is reported, since SciPy's
// own answers for these functions are computed under np.errstate(ignore)
// where they matter.

// ------------------------------------------------------------ geometry

// Operand slots: 0 = a / x, 1 = b, 2 = result / out, 3 = sign.
constexpr int slot_a = 0;
constexpr int slot_b = 1;
constexpr int slot_out = 2;
constexpr int slot_sign = 3;
constexpr int slot_count = 4;

using Dims = StridedDims<std::array<std::vector<std::ptrdiff_t>, slot_count>>;

// Orders the dimensions by decreasing |stride of a| (the innermost,
// fastest-moving dimension last) and coalesces them (strided.hpp). An empty
// result becomes one dimension of extent 1, so loops never special-case
// rank 0.
inline Dims simplify(const Dims& in) {
    std::vector<std::size_t> order(in.rank());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        const auto sx = in.stride[slot_a][x] < 0 ? -in.stride[slot_a][x] : in.stride[slot_a][x];
        const auto sy = in.stride[slot_a][y] < 0 ? -in.stride[slot_a][y] : in.stride[slot_a][y];
        return sx > sy;
    });
    Dims out = coalesce_dims(in, order);
    if (out.rank() == 0) {
        out.extent.push_back(1);
        for (int k = 0; k < slot_count; ++k) out.stride[k].push_back(0);
    }
    return out;
}

// Byte offsets of flat index `index` (C order over extent) for each slot.
inline void offsets_of(const Dims& dims, std::size_t index,
                       std::ptrdiff_t (&offset)[slot_count]) noexcept {
    for (int k = 0; k < slot_count; ++k) offset[k] = 0;
    for (std::size_t d = dims.rank(); d-- > 0;) {
        const std::size_t i = index % dims.extent[d];
        index /= dims.extent[d];
        for (int k = 0; k < slot_count; ++k) {
            offset[k] += static_cast<std::ptrdiff_t>(i) * dims.stride[k][d];
        }
    }
}

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

// Outputs folded together by one strip item. Wide strips read long
// contiguous pieces of each row (axis 0 of a C array: one strip per thread
// streams its half of every row; narrow strips would touch a new page per
// row and defeat the prefetchers); the lane state (3 arrays) then lives in
// L2. The width only groups independent outputs, each folded the same way
// whatever strip it is in, so it may follow the thread count without
// changing a single bit of the results.
constexpr std::size_t strip_lanes_min = 512;
constexpr std::size_t strip_lanes_max = 8192;
// Padding after per-output arrays: kernels load whole batches.
constexpr std::size_t lane_padding = 16;
// Below this many elements per thread, threads cost more than they save.
constexpr std::size_t min_elements_per_thread = std::size_t{1} << 15;

// strip_bytes_max (0: no limit) caps a strip's bytes per chunk, for the
// softmax passes that read a strip more than once.
inline Plan plan(const Dims& outer_in, const Dims& inner_in, std::size_t elem,
                 std::size_t batch_lanes, std::size_t strip_bytes_max = 0) {
    Plan p;
    p.outer = simplify(outer_in);
    p.inner = simplify(inner_in);
    p.outputs = p.outer.size();
    p.reduced = p.inner.size();
    const std::size_t inner_length = p.inner.extent.back();
    const bool run_contiguous =
        p.inner.stride[slot_a].back() == static_cast<std::ptrdiff_t>(elem) && inner_length >= 64;
    const std::size_t outer_length = p.outer.extent.back();
    // Lanes along the reduced axis when it is contiguous and long enough to
    // fill them; otherwise (axis 0 of a C array, short or strided reduced
    // axes) one lane per output, stepping through the reduced elements.
    p.lanes_across_outputs = !run_contiguous && outer_length >= batch_lanes;
    if (p.lanes_across_outputs) {
        const auto threads = static_cast<std::size_t>(parallel::thread_count());
        std::size_t width = (outer_length + threads - 1) / threads;
        width = (width + lane_padding - 1) / lane_padding * lane_padding;
        p.strip_lanes = std::min(outer_length, std::clamp(width, strip_lanes_min, strip_lanes_max));
        if (strip_bytes_max != 0) {
            const std::size_t step_bytes = std::min(p.reduced, kReduceChunk) * elem;
            const std::size_t fit = strip_bytes_max / std::max<std::size_t>(step_bytes, 1);
            p.strip_lanes =
                std::min(p.strip_lanes, std::max(fit / lane_padding * lane_padding, lane_padding));
        }
        p.strips_per_row = (outer_length + p.strip_lanes - 1) / p.strip_lanes;
        p.rows = p.outputs / outer_length;
        // Chunks count steps here: strips already give one work item per
        // strip_lanes outputs, and short chunks would cost merges.
        p.chunk = kReduceChunk;
    } else {
        p.chunk = kReduceChunk;
    }
    p.chunks = p.reduced == 0 ? 0 : (p.reduced + p.chunk - 1) / p.chunk;
    const std::size_t chunk_elements = std::min(p.chunk, p.reduced);
    if (p.lanes_across_outputs) {
        p.items = p.rows * p.strips_per_row * p.chunks;
        p.elements_per_item = chunk_elements * p.strip_lanes;
    } else {
        p.items = p.outputs * p.chunks;
        p.elements_per_item = chunk_elements;
    }
    return p;
}

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

// ------------------------------------------------------------ scalar merging

// The merge rules are the shared ones (lse_accumulator.hpp).
template <class T>
ReducePartial<T> merge(const ReducePartial<T>& p, const ReducePartial<T>& q) noexcept {
    return lse::merge_compensated<lse::StdMath>(p, q);
}

// The compensated sum s + c as a normalised double word (hi, lo) in double
// (f32 results are then rounded once).
struct Normalised {
    double hi;
    double lo;
};

template <class T>
Normalised normalise(const ReducePartial<T>& p) noexcept {
    double hi, lo;
    lse::two_sum(static_cast<double>(p.s), static_cast<double>(p.c), hi, lo);
    return {hi, lo};
}

// Strip item -> (row, strip, chunk) and the outputs it covers.
struct StripItem {
    std::size_t first_output;  // flat outer index of lane 0
    std::size_t lanes;
    std::size_t chunk;
};

inline StripItem strip_item(const Plan& p, std::size_t item) noexcept {
    const std::size_t chunk = item % p.chunks;
    const std::size_t strip = (item / p.chunks) % p.strips_per_row;
    const std::size_t row = item / p.chunks / p.strips_per_row;
    const std::size_t outer_length = p.outer.extent.back();
    const std::size_t first_lane = strip * p.strip_lanes;
    return {row * outer_length + first_lane, std::min(p.strip_lanes, outer_length - first_lane),
            chunk};
}

// ------------------------------------------------------------ checking

inline std::size_t element_size(DType dtype) {
    if (dtype == DType::f32) return sizeof(float);
    if (dtype == DType::f64) return sizeof(double);
    throw std::invalid_argument("reduce: dtype must be f32 or f64");
}

inline void check_strides(const char* what, const std::vector<std::ptrdiff_t>& strides,
                          std::size_t rank) {
    if (strides.size() != rank) {
        throw std::invalid_argument(std::string("reduce: ") + what + " has " +
                                    std::to_string(strides.size()) + " strides, expected " +
                                    std::to_string(rank));
    }
}

// Outer and inner dimensions with the strides of every slot (absent slots
// get zero strides).
inline void build_dims(const ReduceShape& shape, const ReduceOperand* const (&in)[2],
                       const ReduceOutput* const (&out)[2], bool out_has_inner, Dims& outer,
                       Dims& inner) {
    outer.extent = shape.outer;
    inner.extent = shape.inner;
    for (int k = 0; k < slot_count; ++k) {
        outer.stride[k].assign(shape.outer.size(), 0);
        inner.stride[k].assign(shape.inner.size(), 0);
    }
    for (int k = 0; k < 2; ++k) {
        if (in[k] == nullptr || in[k]->data == nullptr) continue;
        check_strides(k == 0 ? "a" : "b", in[k]->outer, shape.outer.size());
        check_strides(k == 0 ? "a (inner)" : "b (inner)", in[k]->inner, shape.inner.size());
        outer.stride[k] = in[k]->outer;
        inner.stride[k] = in[k]->inner;
    }
    for (int k = 0; k < 2; ++k) {
        if (out[k] == nullptr || out[k]->data == nullptr) continue;
        check_strides("output", out[k]->outer, shape.outer.size());
        outer.stride[slot_out + k] = out[k]->outer;
        if (out_has_inner) {
            check_strides("output (inner)", out[k]->inner, shape.inner.size());
            inner.stride[slot_out + k] = out[k]->inner;
        }
    }
}

// ------------------------------------------------------------ folding

// Folds chunk `chunk` of output `o` (run mode).
template <class T>
ReducePartial<T> fold_run_chunk(const ReduceKernels<T>& kernels, const Plan& p, const char* a,
                                const char* b, std::size_t o, std::size_t chunk) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    RunLaneState<T> state;
    kernels.run_init(state);
    const std::size_t lo = chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    const std::ptrdiff_t a_step = p.inner.stride[slot_a].back();
    const std::ptrdiff_t b_step = p.inner.stride[slot_b].back();
    for_each_run(p.inner, lo, hi,
                 [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                     kernels.run_accumulate(a + base[slot_a] + offset[slot_a], a_step,
                                            b ? b + base[slot_b] + offset[slot_b] : nullptr, b_step,
                                            count, state);
                 });
    return kernels.run_finish(state);
}

// Folds chunk item.chunk of a strip with the online accumulator into the
// lane states m, s, c of its first output (padded arrays: strip_accumulate
// loads and stores whole batches).
template <class T>
void fold_strip_chunk(const ReduceKernels<T>& kernels, const Plan& p, const char* a, const char* b,
                      const StripItem& item, T* m, T* s, T* c) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, item.first_output, base);
    const std::ptrdiff_t a_lane = p.outer.stride[slot_a].back();
    const std::ptrdiff_t b_lane = p.outer.stride[slot_b].back();
    const std::ptrdiff_t a_step = p.inner.stride[slot_a].back();
    const std::ptrdiff_t b_step = p.inner.stride[slot_b].back();
    const std::size_t lo = item.chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    for_each_run(p.inner, lo, hi,
                 [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                     kernels.strip_accumulate(a + base[slot_a] + offset[slot_a], a_lane, a_step,
                                              b ? b + base[slot_b] + offset[slot_b] : nullptr,
                                              b_lane, b_step, item.lanes, count, m, s, c);
                 });
}

}  // namespace numfuse::core::reduce_driver
