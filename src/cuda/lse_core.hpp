// logsumexp's per-element and combining steps, and how a reduction is split into
// chunks: NUMFUSE_HD, so the GPU kernels (kernels.cu) and the CPU emulation of their
// exact reduction order (reduce_host.cpp, used by the tests) share one source.
#pragma once

#include <cstdint>

#include "device_math/device_math.hpp"
#include "lse_accumulator.hpp"

namespace numfuse::cuda::lse {

namespace dm = numfuse::device_math;

inline constexpr int block_threads = 256;  // threads of a row block: the tree has 8 levels

// The running log-sum-exp (m, k, s) and its rules are the shared ones
// (src/core/lse_accumulator.hpp: the elements at the maximum counted apart from the
// other terms' sum), here bound to the device_math kernels so the GPU and its CPU
// emulation (reduce_host.cpp) compute the same bits.
using core::lse::lse_empty;
using core::lse::LseState;
using core::lse::neg_inf;
using core::lse::pos_inf;

// exp(d) for the reductions' arguments, which are all d = x - m <= 0 (an element or
// a partial maximum minus a larger maximum), or NaN. The argument reduction is
// exp_scalar's (d = k ln2 + r, |r| <= ln2/2, src/core/device_math/exp.hpp) with one
// exact scaling by 2^k; d < -700 (results near the subnormal range), -inf and NaN
// go to exp_scalar itself.
//   float inputs (TermExp<float>): e^r = 1 + (r + r^2 Q(r)) with r^2 Q(r) (<= 0.07) in
//     float, Q the float fit of exp_scalar(float): relative error ~ 2^-27, far below
//     the float result's rounding, for a fraction of the double pipe's work.
//   double inputs (TermExp<double>): exp_scalar's own evaluation (<= 1 ULP; the same
//     bits as exp_scalar for d in [-700, 0]).
namespace term_detail {

// 2^k, k in [-1022, 1023].
NUMFUSE_HD inline double pow2(std::int32_t k) {
    return dm::double_from_bits(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k + 1023))
                                << 52);
}

// k = round(d / ln2) from the shifted sum z = d / ln2 + 1.5 * 2^52: its low 32 bits.
NUMFUSE_HD inline std::int32_t low_int(double z) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(dm::bits_of(z)));
}

}  // namespace term_detail

template <class T>
struct TermExp;

template <>
struct TermExp<double> {
    NUMFUSE_HD static double exp(double d) {
        if (!(d >= -700.0)) return dm::exp_scalar(d);
        using C = dm::exp_detail::consts<double>;
        const double z = dm::fma_(d, C::inv_ln2, C::shifter);
        const double kd = z - C::shifter;
        const double r1 = dm::fma_(-kd, C::ln2_hi, d);  // exact
        const double kc = kd * C::ln2_lo;
        const double rh = r1 - kc;
        const double rl = (r1 - rh) - kc;
        const double q = dm::exp_detail::poly(rh);
        const double s = dm::fma_(rh * rh, q, dm::fma_(rl, rh, rl));
        const double h = 1.0 + rh;
        const double hl = (1.0 - h) + rh;
        const double y = h + (hl + s);
        return y * term_detail::pow2(term_detail::low_int(z));
    }
    // exp(x - m) for x < m with x - m carried as a double word d + lo (lo the rounding
    // error of d: up to |d| 2^-53, as large a relative error of the term): e + e lo.
    NUMFUSE_HD static double shifted(double x, double m) {
        const double d = x - m;
        const double e = exp(d);
        if (!(d - d == 0.0)) return e;  // -inf or NaN
        return dm::fma_(e, core::lse::difference_error(x, m, d), e);
    }
    NUMFUSE_HD static double log(double x) { return dm::log_scalar(x); }
};

template <>
struct TermExp<float> {
    NUMFUSE_HD static double exp(double d) {
        if (!(d >= -700.0)) return dm::exp_scalar(d);
        using C = dm::exp_detail::consts<double>;
        const double z = dm::fma_(d, C::inv_ln2, C::shifter);
        const double kd = z - C::shifter;
        const double r = dm::fma_(-kd, C::ln2_lo, dm::fma_(-kd, C::ln2_hi, d));
        const float rf = static_cast<float>(r);
        const float tail = (rf * rf) * dm::exp_detail::poly(rf);  // r^2 Q(r)
        const double y = 1.0 + (r + static_cast<double>(tail));
        return y * term_detail::pow2(term_detail::low_int(z));
    }
    // exp(x - m) for x < m: for float x and m, x - m is exact in double unless their
    // magnitudes differ by more than 2^29, where its relative rounding error (below
    // 2^-53 |x - m|, |x - m| <= 745 where the term is not 0) stays far below 2^-27.
    NUMFUSE_HD static double shifted(double x, double m) { return exp(x - m); }
    NUMFUSE_HD static double log(double x) { return dm::log_scalar(x); }
};

template <class T>
NUMFUSE_HD inline LseState combine(LseState a, LseState b) {
    return core::lse::lse_combine<TermExp<T>>(a, b);
}

template <class T>
NUMFUSE_HD inline T lse_result(LseState st) {
    return core::lse::lse_result<T, TermExp<T>>(st);
}

// softmax / log_softmax of one element from its line's final state:
// exp(x - m) * (1 / s) and (x - m) - log(s), in double and rounded once to T, with
// s = k + s of the state (log(s) from the exact pair: lse_log_sum) and exp(x - m)
// TermExp's shifted. (Not exp(x - lse): x - m is exact for the elements near the
// maximum, which carry the probability mass, so softmax([1, 1]) is exactly [0.5, 0.5].)
struct NormState {
    double m;
    double s;
    double log_s;
    double inv_s;
};

NUMFUSE_HD inline NormState norm_state(LseState st) {
    const double s = st.k + st.s;
    return {st.m, s, core::lse::lse_log_sum<TermExp<double>>(st), 1.0 / s};
}

template <class T, bool Log>
NUMFUSE_HD inline T normalized(T x, const NormState& ns) {
    const double d = static_cast<double>(x) - ns.m;
    if (Log) return static_cast<T>(d - ns.log_s);
    return static_cast<T>(TermExp<T>::shifted(static_cast<double>(x), ns.m) * ns.inv_s);
}

// softmax of an element from its term (lse_add_below's) when the line's maximum m is
// finite: the term is then exp(x - m), exactly as normalized() computes it.
NUMFUSE_HD inline bool finite_max(const NormState& ns) { return ns.m - ns.m == 0.0; }

template <class T>
NUMFUSE_HD inline T softmax_of_term(double term, const NormState& ns) {
    return static_cast<T>(term * ns.inv_s);
}

// ------------------------------------------------------ per-lane accumulation
// Each lane (GPU thread) folds its elements into its state `batch` at a time: the
// batch's maximum first, then one rescale of the running sum if the maximum grew,
// then the batch's terms exp(v - m) added in order (lse_add_below). The terms of a batch do not
// depend on each other, so a GPU thread has `batch` exps (and loads) in flight
// instead of one serial chain. The rules are lse_add's: -inf elements count 1 while
// m = -inf and vanish (exp(-inf) = 0) when m grows, NaN elements make s NaN, +inf
// elements make m = +inf.
inline constexpr int batch = 8;

template <class T>
NUMFUSE_HD inline void lse_add_batch(LseState& st, const double (&v)[batch], int count) {
    double m = st.m;
    for (int b = 0; b < batch; ++b) {
        if (b < count && v[b] > m) m = v[b];
    }
    if (m > st.m) core::lse::lse_raise<TermExp<T>>(st, m);
    for (int b = 0; b < batch; ++b) {
        if (b < count) core::lse::lse_add_below<TermExp<T>>(st, v[b]);
    }
}

// Folds x[0], x[step], ..., x[(count - 1) * step] into st.
template <class T>
NUMFUSE_HD inline void lse_fold(LseState& st, const T* x, std::int64_t count, std::int64_t step) {
    for (std::int64_t k = 0; k < count; k += batch) {
        const int c = count - k < batch ? static_cast<int>(count - k) : batch;
        double v[batch];
        for (int b = 0; b < batch; ++b) {
            v[b] = b < c ? static_cast<double>(x[(k + b) * step]) : 0.0;
        }
        lse_add_batch<T>(st, v, c);
    }
}

// How many of len elements lane `lane` of `lanes` gets (elements lane, lane + lanes, ...).
NUMFUSE_HD inline std::int64_t lane_count(std::int64_t len, std::int64_t lane, std::int64_t lanes) {
    return len > lane ? (len - lane + lanes - 1) / lanes : 0;
}

// ------------------------------------------------------ the split
// How the GPU splits the reduction of x viewed as (outer, n, inner) over its middle
// axis. A function of the shape only, so the order of operations (and the bits of
// the result) do not depend on the GPU.
//
// A group of `lanes` threads (a warp or a whole block) reduces one chunk of one
// line: lane t folds elements t, t + lanes, ... of the chunk (lse_fold), then the
// lanes combine in a fixed tree (lanes[t] = combine(lanes[t], lanes[t + half]) for
// half = lanes/2, ..., 1). A line's chunk states are then combined by a group of
// `finish_lanes` threads in the same way (lane t takes chunks t, t + finish_lanes,
// ... in order). Combining with an empty state is exact, so lines of one chunk give
// the same bits whether or not the finishing step runs.
enum class Layout : int {
    warp_rows,   // inner == 1, short rows: 4, 8, 16 or 32 lanes of a warp per row
    block_rows,  // inner == 1: one 256-thread block per (row, chunk)
    columns,  // inner > 1: one thread (lanes == 1) per (column, chunk), coalesced across columns
};

inline constexpr std::int64_t warp_row_max = 1024;  // rows up to this length: warp_rows
inline constexpr std::int64_t row_chunk = 16384;  // block_rows chunk length
inline constexpr std::int64_t max_col_chunks = 4096;  // chunks per column, at most
inline constexpr int warp_lanes = 32;
inline constexpr int warp_regs = 32;   // elements per lane kept in registers: warp_rows
inline constexpr int block_regs = 48;  // block_rows: n <= 12288 in registers
static_assert(warp_row_max == warp_lanes * warp_regs, "every warp row fits in registers");

struct Plan {
    Layout layout;
    int lanes;  // threads per chunk
    std::int64_t chunks;  // chunks per reduced line
    std::int64_t chunk_len;  // elements per chunk (the last may be shorter or empty)
    int finish_lanes;  // threads combining a line's chunks
};

NUMFUSE_HD inline Plan plan_for(std::int64_t outer, std::int64_t n, std::int64_t inner) {
    const std::int64_t columns = outer * inner;
    Plan p{};
    if (inner == 1 && n <= warp_row_max) {
        // 4 to 32 lanes, each with at most warp_regs elements: short rows share a warp.
        p.layout = Layout::warp_rows;
        p.lanes = n <= 4 * warp_regs ? 4 : n <= 8 * warp_regs ? 8 : n <= 16 * warp_regs ? 16 : 32;
        p.chunks = 1;
        p.chunk_len = n > 0 ? n : 1;
    } else if (inner == 1) {
        p.layout = Layout::block_rows;
        p.lanes = block_threads;
        p.chunk_len = row_chunk;
        p.chunks = (n + p.chunk_len - 1) / p.chunk_len;
    } else {
        // One thread per (column, chunk); aim for >= 2^18 threads, each with >= 64 elements.
        p.layout = Layout::columns;
        p.lanes = 1;
        p.chunks = (std::int64_t{1} << 18) / (columns > 0 ? columns : 1);
        const std::int64_t by_len = n / 64;
        if (p.chunks > by_len) p.chunks = by_len;
        if (p.chunks > max_col_chunks) p.chunks = max_col_chunks;
        if (p.chunks < 1) p.chunks = 1;
        p.chunk_len = n > 0 ? (n + p.chunks - 1) / p.chunks : 1;
    }
    p.finish_lanes = p.chunks > warp_lanes ? block_threads : warp_lanes;
    return p;
}

// Rows of one chunk and at most lanes * regs elements are kept in registers (each
// lane holds its elements of the row: softmax / log_softmax read x once) and are
// reduced in two steps instead of lse_fold, for logsumexp too: the row's maximum m
// (exact, any order), then (k, s), each lane adding its elements in order
// (lse_add_below) and the lanes' counts and sums added in the fixed tree
// (k[t] += k[t + half], s[t] += s[t + half]). One exp per element and no rescaling; softmax keeps
// the terms and scales them.

NUMFUSE_HD inline bool rows_in_registers(const Plan& p, std::int64_t n) {
    return (p.layout == Layout::warp_rows && n <= warp_lanes * warp_regs) ||
           (p.layout == Layout::block_rows && n <= block_threads * block_regs);
}

}  // namespace numfuse::cuda::lse
