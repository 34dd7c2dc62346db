// The layout half of logsumexp / softmax / log_softmax (plan.hpp): dimension
// simplification, work-item planning, the active level's table, input checks.
//
// Compiled with the baseline flags: it only reads the table of the active level, which
// levels.cpp checked the CPU can run.
#include "reduce/plan.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "arch/level_tables.hpp"
#include "levels.hpp"

namespace numfuse::core::reduce_detail {

const ReduceKernelTable& active_table() noexcept {
    static const PerLevelTables<ReduceKernelTable> tables(
        [](const LevelKernelFill& fill, ReduceKernelTable& table) { fill.reduce(table); });
    return tables[active_level()];
}

namespace {

// Orders the dimensions by decreasing |stride of a| (the innermost,
// fastest-moving dimension last) and coalesces them (strided.hpp). An empty
// result becomes one dimension of extent 1, so loops never special-case
// rank 0.
Dims simplify(const Dims& in) {
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

// Outputs folded together by one strip item. Wide strips read long
// contiguous pieces of each row (axis 0 of a C array: one strip per thread
// streams its half of every row; narrow strips would touch a new page per
// row and defeat the prefetchers); the lane state (3 arrays) then lives in
// L2. The width only groups independent outputs, each folded the same way
// whatever strip it is in, so it may follow the thread count without
// changing a single bit of the results.
constexpr std::size_t strip_lanes_min = 512;
constexpr std::size_t strip_lanes_max = 8192;

void check_strides(const char* what, const std::vector<std::ptrdiff_t>& strides, std::size_t rank) {
    if (strides.size() != rank) {
        throw std::invalid_argument(std::string("reduce: ") + what + " has " +
                                    std::to_string(strides.size()) + " strides, expected " +
                                    std::to_string(rank));
    }
}

}  // namespace

// Byte offsets of flat index `index` (C order over extent) for each slot.
void offsets_of(const Dims& dims, std::size_t index,
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

Plan plan(const Dims& outer_in, const Dims& inner_in, std::size_t elem, std::size_t batch_lanes) {
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

std::size_t element_size(DType dtype) {
    if (dtype == DType::f32) return sizeof(float);
    if (dtype == DType::f64) return sizeof(double);
    throw std::invalid_argument("reduce: dtype must be f32 or f64");
}

void build_dims(const ReduceShape& shape, const ReduceOperand* const (&in)[2],
                const ReduceOutput* const (&out)[2], bool out_has_inner, Dims& outer, Dims& inner) {
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

}  // namespace numfuse::core::reduce_detail
