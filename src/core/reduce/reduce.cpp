// The level-independent half of logsumexp / softmax / log_softmax: layout
// planning, fixed chunking, threads, merging and SciPy's special values.
// The per-level loops are in src/core/arch/reduce_loops.hpp.
//
// Compiled with the baseline flags: it only calls the level loops through
// the table of the active level, which levels.cpp checked the CPU can run.
#include "reduce/reduce.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "arch/level_tables.hpp"
#include "fp_status.hpp"
#include "interrupt.hpp"
#include "levels.hpp"
#include "lse_accumulator.hpp"
#include "parallel.hpp"
#include "strided.hpp"

namespace numfuse::core {
namespace {

// ------------------------------------------------------------ level tables

const ReduceKernelTable& active_table() noexcept {
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

template <class T>
ReducePartial<T> empty_partial() noexcept {
    return {std::numeric_limits<T>::lowest(), T(0), T(0)};
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

// Strip item -> (row, strip, chunk) and the outputs it covers.
struct StripItem {
    std::size_t first_output;  // flat outer index of lane 0
    std::size_t lanes;
    std::size_t chunk;
};

StripItem strip_item(const Plan& p, std::size_t item) noexcept {
    const std::size_t chunk = item % p.chunks;
    const std::size_t strip = (item / p.chunks) % p.strips_per_row;
    const std::size_t row = item / p.chunks / p.strips_per_row;
    const std::size_t outer_length = p.outer.extent.back();
    const std::size_t first_lane = strip * p.strip_lanes;
    return {row * outer_length + first_lane, std::min(p.strip_lanes, outer_length - first_lane),
            chunk};
}

// Lane states of every output for one chunk, as the strip kernels want
// them (structure of arrays, padded to whole batches).
template <class T>
struct StripStates {
    std::vector<T> m, s, c;
    explicit StripStates(std::size_t outputs)
        : m(outputs + lane_padding, std::numeric_limits<T>::lowest()),
          s(outputs + lane_padding, T(0)),
          c(outputs + lane_padding, T(0)) {}
};

template <class T>
void fold_strip_chunk(const ReduceKernels<T>& kernels, const Plan& p, const char* a, const char* b,
                      const StripItem& item, StripStates<T>& state) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, item.first_output, base);
    const std::ptrdiff_t a_lane = p.outer.stride[slot_a].back();
    const std::ptrdiff_t b_lane = p.outer.stride[slot_b].back();
    const std::ptrdiff_t a_step = p.inner.stride[slot_a].back();
    const std::ptrdiff_t b_step = p.inner.stride[slot_b].back();
    const std::size_t lo = item.chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    T* m = state.m.data() + item.first_output;
    T* s = state.s.data() + item.first_output;
    T* c = state.c.data() + item.first_output;
    for_each_run(p.inner, lo, hi,
                 [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                     kernels.strip_accumulate(a + base[slot_a] + offset[slot_a], a_lane, a_step,
                                              b ? b + base[slot_b] + offset[slot_b] : nullptr,
                                              b_lane, b_step, item.lanes, count, m, s, c);
                 });
}

// partials[o * chunks + chunk] for every output and chunk (phase 1).
template <class T>
std::vector<ReducePartial<T>> fold_all(const ReduceKernels<T>& kernels, const Plan& p,
                                       const char* a, const char* b) {
    std::vector<ReducePartial<T>> partials(p.outputs * p.chunks);
    if (p.lanes_across_outputs) {
        std::vector<StripStates<T>> states;
        states.reserve(p.chunks);
        for (std::size_t chunk = 0; chunk < p.chunks; ++chunk) states.emplace_back(p.outputs);
        parallel_items(p, [&](std::size_t index) {
            const StripItem item = strip_item(p, index);
            fold_strip_chunk(kernels, p, a, b, item, states[item.chunk]);
        });
        for (std::size_t chunk = 0; chunk < p.chunks; ++chunk) {
            const auto& st = states[chunk];
            for (std::size_t o = 0; o < p.outputs; ++o) {
                partials[o * p.chunks + chunk] = {st.m[o], st.s[o], st.c[o]};
            }
        }
    } else {
        parallel_items(p, [&](std::size_t index) {
            const std::size_t o = index / p.chunks;
            const std::size_t chunk = index % p.chunks;
            partials[index] = fold_run_chunk(kernels, p, a, b, o, chunk);
        });
    }
    return partials;
}

template <class T>
ReducePartial<T> merged(const std::vector<ReducePartial<T>>& partials, const Plan& p,
                        std::size_t o) noexcept {
    ReducePartial<T> total = partials[o * p.chunks];
    for (std::size_t chunk = 1; chunk < p.chunks; ++chunk) {
        total = merge(total, partials[o * p.chunks + chunk]);
    }
    return total;
}

// ------------------------------------------------------------ logsumexp

// sum(b * exp(a)) in element order with the plain formula: only for outputs
// whose accurate value is not finite, where SciPy also falls back to it
// (its value decides between inf, -inf and NaN, e.g. 0 * inf = NaN for a
// masked infinite entry when nothing else is finite).
template <class T>
T plain_sum(const Plan& p, const char* a, const char* b, std::size_t o) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const std::ptrdiff_t a_step = p.inner.stride[slot_a].back();
    const std::ptrdiff_t b_step = p.inner.stride[slot_b].back();
    T sum = T(0);
    bool first = true;
    for_each_run(
        p.inner, 0, p.reduced, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            for (std::size_t i = 0; i < count; ++i) {
                const auto step = static_cast<std::ptrdiff_t>(i);
                T x;
                std::memcpy(&x, a + base[slot_a] + offset[slot_a] + step * a_step, sizeof x);
                T term = std::exp(x);
                if (b) {
                    T w;
                    std::memcpy(&w, b + base[slot_b] + offset[slot_b] + step * b_step, sizeof w);
                    term = w * term;
                }
                sum = first ? term : sum + term;
                first = false;
            }
        });
    return sum;
}

template <class T>
T sign_of(T x) noexcept {
    if (std::isnan(x)) return x;
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
}

template <class T>
void finish_logsumexp(const ReducePartial<T>& total, const Plan& p, const char* a, const char* b,
                      std::size_t o, const ReduceOutput& result,
                      const ReduceOutput& sign) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const bool with_sign = sign.data != nullptr;
    T value;
    T sgn;
    const Normalised sum = normalise(total);
    const double value_wide =
        static_cast<double>(total.m) + (std::log(std::fabs(sum.hi)) + sum.lo / sum.hi);
    value = static_cast<T>(value_wide);
    sgn = sign_of(static_cast<T>(sum.hi));
    if (!std::isfinite(value) || sum.hi == 0.0 || !std::isfinite(sum.hi)) {
        const T plain = plain_sum<T>(p, a, b, o);
        value = with_sign ? std::log(std::fabs(plain)) : std::log(plain);
        sgn = sign_of(plain);
    } else if (!with_sign && sgn < T(0)) {
        value = std::numeric_limits<T>::quiet_NaN();
    }
    std::memcpy(result.data + base[slot_out], &value, sizeof value);
    if (with_sign) std::memcpy(sign.data + base[slot_sign], &sgn, sizeof sgn);
}

template <class T>
void logsumexp_typed(const Plan& p, const char* a, const char* b, const ReduceOutput& result,
                     const ReduceOutput& sign) {
    const auto& kernels = active_kernels<T>();
    if (p.reduced == 0) {
        parallel_outputs(p.outputs, 1, [&](std::size_t o) {
            std::ptrdiff_t base[slot_count];
            offsets_of(p.outer, o, base);
            const T value = -std::numeric_limits<T>::infinity();
            const T sgn = T(-1);
            std::memcpy(result.data + base[slot_out], &value, sizeof value);
            if (sign.data) std::memcpy(sign.data + base[slot_sign], &sgn, sizeof sgn);
        });
        return;
    }
    const auto partials = fold_all(kernels, p, a, b);
    parallel_outputs(p.outputs, p.chunks * 8, [&](std::size_t o) {
        finish_logsumexp(merged(partials, p, o), p, a, b, o, result, sign);
    });
}

// ------------------------------------------------------------ softmax

// Does the group of output o hold a NaN? (log_softmax with +inf only.)
template <class T>
bool has_nan(const Plan& p, const char* x, std::size_t o) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const std::ptrdiff_t step = p.inner.stride[slot_a].back();
    bool found = false;
    for_each_run(
        p.inner, 0, p.reduced, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            for (std::size_t i = 0; i < count && !found; ++i) {
                T v;
                std::memcpy(
                    &v, x + base[slot_a] + offset[slot_a] + static_cast<std::ptrdiff_t>(i) * step,
                    sizeof v);
                found = std::isnan(v);
            }
        });
    return found;
}

// The (m, param) pair run_write / strip_write use for one group; SciPy's
// special values fall out of the same formula with m = NaN (everything NaN)
// or m = +inf, param = 0 (log_softmax with +inf entries: NaN there, -inf
// elsewhere).
template <class T>
void softmax_parameters(SoftmaxKind kind, const ReducePartial<T>& total, const Plan& p,
                        const char* x, std::size_t o, T& m, T& param) noexcept {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const Normalised sum = normalise(total);
    if (std::isfinite(sum.hi) && sum.hi > 0.0) {
        m = total.m;
        param = kind == SoftmaxKind::softmax ? static_cast<T>(sum.hi)
                                             : static_cast<T>(std::log(sum.hi) + sum.lo / sum.hi);
        return;
    }
    // A NaN sum comes from NaN or +inf entries; a zero sum from all -inf.
    const bool plus_infinity = total.m == std::numeric_limits<T>::infinity();
    if (kind == SoftmaxKind::log_softmax && plus_infinity && !has_nan<T>(p, x, o)) {
        m = total.m;
        param = T(0);
    } else {
        m = nan;
        param = T(1);
    }
}

template <class T>
void write_run_output(const ReduceKernels<T>& kernels, SoftmaxKind kind, const Plan& p,
                      const char* x, const ReduceOutput& out, std::size_t o, std::size_t chunk, T m,
                      T param) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const std::size_t lo = chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    for_each_run(p.inner, lo, hi,
                 [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                     kernels.run_write(kind, x + base[slot_a] + offset[slot_a],
                                       p.inner.stride[slot_a].back(),
                                       out.data + base[slot_out] + offset[slot_out],
                                       p.inner.stride[slot_out].back(), count, m, param);
                 });
}

template <class T>
void write_strip_output(const ReduceKernels<T>& kernels, SoftmaxKind kind, const Plan& p,
                        const char* x, const ReduceOutput& out, const StripItem& item, const T* m,
                        const T* param) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, item.first_output, base);
    const std::size_t lo = item.chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    for_each_run(
        p.inner, lo, hi, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            kernels.strip_write(kind, x + base[slot_a] + offset[slot_a],
                                p.outer.stride[slot_a].back(), p.inner.stride[slot_a].back(),
                                out.data + base[slot_out] + offset[slot_out],
                                p.outer.stride[slot_out].back(), p.inner.stride[slot_out].back(),
                                item.lanes, count, m, param);
        });
}

template <class T>
void softmax_typed(SoftmaxKind kind, const Plan& p, const char* x, const ReduceOutput& out) {
    const auto& kernels = active_kernels<T>();
    if (p.chunks == 1) {
        // One chunk per group: fold, finish and write in the same work item
        // while the group is still in cache.
        if (p.lanes_across_outputs && p.inner.rank() == 1 && p.reduced <= short_group_max) {
            // Short groups (e.g. the last axis of (1000, 1000, 5)): whole
            // groups per lane, in registers.
            parallel_items(p, [&](std::size_t index) {
                const StripItem item = strip_item(p, index);
                std::ptrdiff_t base[slot_count];
                offsets_of(p.outer, item.first_output, base);
                kernels.short_softmax(kind, x + base[slot_a], p.outer.stride[slot_a].back(),
                                      p.inner.stride[slot_a].back(), out.data + base[slot_out],
                                      p.outer.stride[slot_out].back(),
                                      p.inner.stride[slot_out].back(), item.lanes, p.reduced);
            });
        } else if (p.lanes_across_outputs) {
            StripStates<T> state(p.outputs);
            std::vector<T> m(p.outputs + lane_padding, T(0));
            std::vector<T> param(p.outputs + lane_padding, T(1));
            parallel_items(p, [&](std::size_t index) {
                const StripItem item = strip_item(p, index);
                fold_strip_chunk<T>(kernels, p, x, nullptr, item, state);
                for (std::size_t j = item.first_output; j < item.first_output + item.lanes; ++j) {
                    softmax_parameters<T>(kind, {state.m[j], state.s[j], state.c[j]}, p, x, j, m[j],
                                          param[j]);
                }
                write_strip_output(kernels, kind, p, x, out, item, m.data() + item.first_output,
                                   param.data() + item.first_output);
            });
        } else {
            parallel_items(p, [&](std::size_t o) {
                const ReducePartial<T> total = fold_run_chunk<T>(kernels, p, x, nullptr, o, 0);
                T m, param;
                softmax_parameters<T>(kind, total, p, x, o, m, param);
                write_run_output(kernels, kind, p, x, out, o, 0, m, param);
            });
        }
        return;
    }
    // Long groups: fold every chunk, merge per group in chunk order, then
    // write every chunk.
    const auto partials = fold_all<T>(kernels, p, x, nullptr);
    std::vector<T> m(p.outputs + lane_padding, T(0));
    std::vector<T> param(p.outputs + lane_padding, T(1));
    parallel_outputs(p.outputs, p.chunks * 8, [&](std::size_t o) {
        softmax_parameters<T>(kind, merged(partials, p, o), p, x, o, m[o], param[o]);
    });
    if (p.lanes_across_outputs) {
        parallel_items(p, [&](std::size_t index) {
            const StripItem item = strip_item(p, index);
            write_strip_output(kernels, kind, p, x, out, item, m.data() + item.first_output,
                               param.data() + item.first_output);
        });
    } else {
        parallel_items(p, [&](std::size_t index) {
            const std::size_t o = index / p.chunks;
            write_run_output(kernels, kind, p, x, out, o, index % p.chunks, m[o], param[o]);
        });
    }
}

// ------------------------------------------------------------ checking

std::size_t element_size(DType dtype) {
    if (dtype == DType::f32) return sizeof(float);
    if (dtype == DType::f64) return sizeof(double);
    throw std::invalid_argument("reduce: dtype must be f32 or f64");
}

void check_strides(const char* what, const std::vector<std::ptrdiff_t>& strides, std::size_t rank) {
    if (strides.size() != rank) {
        throw std::invalid_argument(std::string("reduce: ") + what + " has " +
                                    std::to_string(strides.size()) + " strides, expected " +
                                    std::to_string(rank));
    }
}

// Outer and inner dimensions with the strides of every slot (absent slots
// get zero strides).
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

}  // namespace

void logsumexp(DType dtype, const ReduceShape& shape, const ReduceOperand& a,
               const ReduceOperand& b, const ReduceOutput& result, const ReduceOutput& sign) {
    const std::size_t elem = element_size(dtype);
    if (a.data == nullptr || result.data == nullptr) {
        throw std::invalid_argument("reduce: logsumexp needs a and result");
    }
    Dims outer, inner;
    const ReduceOperand* const inputs[2] = {&a, &b};
    const ReduceOutput* const outputs[2] = {&result, &sign};
    build_dims(shape, inputs, outputs, false, outer, inner);
    FpStatusGuard guard;
    if (dtype == DType::f32) {
        const Plan p = plan(outer, inner, elem, active_kernels<float>().batch_lanes);
        logsumexp_typed<float>(p, a.data, b.data, result, sign);
    } else {
        const Plan p = plan(outer, inner, elem, active_kernels<double>().batch_lanes);
        logsumexp_typed<double>(p, a.data, b.data, result, sign);
    }
    interrupt::throw_if_stopped(interrupt::current());
}

void softmax(SoftmaxKind kind, DType dtype, const ReduceShape& shape, const ReduceOperand& x,
             const ReduceOutput& out) {
    const std::size_t elem = element_size(dtype);
    if (x.data == nullptr || out.data == nullptr) {
        throw std::invalid_argument("reduce: softmax needs x and out");
    }
    Dims outer, inner;
    const ReduceOperand* const inputs[2] = {&x, nullptr};
    const ReduceOutput* const outputs[2] = {&out, nullptr};
    build_dims(shape, inputs, outputs, true, outer, inner);
    std::size_t reduced = 1;
    for (const auto e : shape.inner) reduced *= e;
    std::size_t outputs_count = 1;
    for (const auto e : shape.outer) outputs_count *= e;
    if (outputs_count == 0) return;
    if (reduced == 0) {
        throw std::invalid_argument(
            "zero-size array to reduction operation maximum which has no identity");
    }
    FpStatusGuard guard;
    if (dtype == DType::f32) {
        const Plan p = plan(outer, inner, elem, active_kernels<float>().batch_lanes);
        softmax_typed<float>(kind, p, x.data, out);
    } else {
        const Plan p = plan(outer, inner, elem, active_kernels<double>().batch_lanes);
        softmax_typed<double>(kind, p, x.data, out);
    }
    interrupt::throw_if_stopped(interrupt::current());
}

}  // namespace numfuse::core
