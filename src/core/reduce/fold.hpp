// The folding half of logsumexp / softmax / log_softmax (internal to src/core/reduce):
// each output's reduced range in fixed chunks through the active level's kernels, in
// parallel, and the chunks' partial results merged in index order (so the bits do not
// depend on the thread count; see reduce.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include "lse_accumulator.hpp"
#include "reduce/kernel_table.hpp"
#include "reduce/plan.hpp"

namespace numfuse::core::reduce_detail {

// ------------------------------------------------------------ scalar merging

// One output's chunk partials merged in chunk order: merge_compensated's rule
// (lse_accumulator.hpp: the same m and s), with the rounding errors of c's own additions kept
// as well, in extra (rescaled with the total, added to c at the end). Where the maximum's
// exp(0) = 1 dominates, s stays 1 and c holds all the other terms: log(s + c) ~ c then needs c
// to a few u relative to itself, and c's plain additions (two per chunk) give up to u of c
// each, one sided in practice: a group of 5e6 terms near e^-650 beside one 0 lost 5 to 9 ULP
// over its 77 chunks. With TwoSum on both additions c + extra is the exact sum of the scaled
// parts up to one rounding of extra per chunk (u^2 of c) and the scale factors' own errors
// (each below 1 ULP of exp). logsumexp (merged below) and log_softmax / softmax
// (softmax.cpp) merge through this.
template <class T>
class ChunkMerge {
public:
    explicit ChunkMerge(const ReducePartial<T>& first) noexcept : total_(first) {}

    void add(const ReducePartial<T>& q) noexcept {
        const T m = q.m > total_.m ? q.m : total_.m;
        const T scale_p = lse::exp_difference<lse::StdMath>(total_.m, m);
        const T scale_q = lse::exp_difference<lse::StdMath>(q.m, m);
        T sum, error, c_p, error_p, c_q, error_q;
        lse::two_sum(total_.s * scale_p, q.s * scale_q, sum, error);
        lse::two_sum(error, total_.c * scale_p, c_p, error_p);
        lse::two_sum(c_p, q.c * scale_q, c_q, error_q);
        extra_ = extra_ * scale_p + (error_p + error_q);
        total_ = {m, sum, c_q};
    }

    ReducePartial<T> total() const noexcept { return {total_.m, total_.s, total_.c + extra_}; }

private:
    ReducePartial<T> total_;
    T extra_ = T(0);
};

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

// m + log|s + c| in double from the normalised s + c (sum.hi != 0; negative
// only for weighted sums): the value logsumexp rounds once to T.
template <class T>
double lse_log_value(T m, const Normalised& sum) noexcept {
    return static_cast<double>(m) + (std::log(std::fabs(sum.hi)) + sum.lo / sum.hi);
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

inline StripItem strip_item(const Plan& p, std::size_t item) noexcept {
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

// Folds chunk item.chunk of a strip with the online accumulator into the
// per-lane states m, s, c of its first output (padded arrays: strip_accumulate
// loads and stores whole batches): StripStates' arrays.
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
            StripStates<T>& st = states[item.chunk];
            fold_strip_chunk(kernels, p, a, b, item, st.m.data() + item.first_output,
                             st.s.data() + item.first_output, st.c.data() + item.first_output);
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

// A group summed again with its maximum m known: run_exp_sum's terms take x - m as a
// double word, over pieces of exact_piece elements merged with ChunkMerge. Within a
// call, where the maximum's exp(0) = 1 holds a lane's sum at 1, every smaller term goes
// into the lane's compensation word, whose additions run_exp_sum compensates in turn;
// ChunkMerge keeps the errors of its own additions. Each piece is copied to a contiguous buffer
// first, so the bits depend only on the values and where the runs are cut, not on the
// stride (numfuse.logsumexp over a column and evaluate's columns layout agree).
constexpr std::size_t exact_piece = 64;

template <class T>
class ExactSum {
public:
    explicit ExactSum(T m) noexcept : m_(m), merge_({m, T(0), T(0)}) {}

    void add_run(const ReduceKernels<T>& kernels, const char* a, std::ptrdiff_t step,
                 std::size_t n) noexcept {
        for (std::size_t i = 0; i < n; i += exact_piece) {
            const std::size_t count = std::min(exact_piece, n - i);
            alignas(64) T piece[exact_piece];
            for (std::size_t k = 0; k < count; ++k) {
                std::memcpy(&piece[k], a + static_cast<std::ptrdiff_t>(i + k) * step, sizeof(T));
            }
            T s = T(0);
            T c = T(0);
            kernels.run_exp_sum(reinterpret_cast<const char*>(piece), sizeof(T), nullptr, 0, count,
                                m_, s, c);
            merge_.add({m_, s, c});
        }
    }

    ReducePartial<T> total() const noexcept { return merge_.total(); }

private:
    T m_;
    ChunkMerge<T> merge_;
};

// logsumexp's merged total of output o, or, where the rounding of the terms'
// arguments x - m may reach the result (lse::argument_rounding_matters: a maximum near
// 0 that dominates), its group summed again from its elements (ExactSum, in element
// order: the same bits for any thread count). Unweighted groups only (a is the only
// operand).
template <class T>
ReducePartial<T> certified(const ReduceKernels<T>& kernels, const Plan& p, const char* a,
                           std::size_t o, const ReducePartial<T>& total) noexcept {
    const Normalised sum = normalise(total);
    if (!lse::argument_rounding_matters(static_cast<double>(total.m), sum.hi, p.reduced)) {
        return total;
    }
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const std::ptrdiff_t a_step = p.inner.stride[slot_a].back();
    ExactSum<T> exact(total.m);
    for_each_run(p.inner, 0, p.reduced,
                 [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                     exact.add_run(kernels, a + base[slot_a] + offset[slot_a], a_step, count);
                 });
    return exact.total();
}

template <class T>
ReducePartial<T> merged(const std::vector<ReducePartial<T>>& partials, const Plan& p,
                        std::size_t o) noexcept {
    ChunkMerge<T> total(partials[o * p.chunks]);
    for (std::size_t chunk = 1; chunk < p.chunks; ++chunk)
        total.add(partials[o * p.chunks + chunk]);
    return total.total();
}

}  // namespace numfuse::core::reduce_detail
