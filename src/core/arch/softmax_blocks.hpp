// softmax / log_softmax of whole groups in one call while they are in cache: rows
// (softmax_rows) and blocks of groups across contiguous lanes
// (softmax_columns, axis 0 of a C array). Contracts in reduce/kernel_table.hpp.
//
// Included only by arch/softmax_loops.hpp, after its run kernels (run_max, run_scale,
// log_softmax_value), which these reuse, and before its table.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "arch/softmax_exp.hpp"
#include "lse_accumulator.hpp"

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops {

// --------------------------------------------------------------- rows in cache
//
// softmax_rows: each row (at most one chunk, contiguous) folded, finished and
// written by one call while it is in L1 / L2: its maximum, exp(x - m) stored and
// summed, then one scaling pass (log_softmax: the sum, then (x - m) - log(sum)).
// Three passes over a row in cache cost less than the first read of it from L3, so
// the fold pass (the exp: the most arithmetic per line) prefetches the next row's x
// and out into L1: the next maximum pass and the next stores then find their lines
// there instead of waiting on memory. (Measured on a Xeon with AVX-512, (1000, 1000)
// float32 at one thread: the out lines prefetched in the write pass instead, or into
// L2 only, were 10-25% slower: that pass has too little work to hide them.)

// Touches every cache line of [p + offset, p + offset + bytes) ahead of its use.
template <bool Write>
inline void prefetch_lines(const char* p, std::size_t offset, std::size_t bytes) noexcept {
    for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + offset + b, Write, 3);
}

#if defined(__AVX512F__)
// max_ignoring_nan(m, x) in one instruction: vmaxps(x, m) is x > m ? x : m, m for a NaN x
// (and for tied zeros), the same select.
inline __m512 max_keeping(__m512 m, __m512 x) noexcept { return _mm512_max_ps(x, m); }
inline __m512d max_keeping(__m512d m, __m512d x) noexcept { return _mm512_max_pd(x, m); }
#endif

// The maximum of a row (n >= 1 elements at px), NaN ignored; lowest() when there is
// none above -inf. AVX-512: run_max's four accumulators, the tail's full batches and its
// masked last one into the others (run_max's tail goes through a stack buffer, whose
// reload cannot be forwarded from its stores: a stall on the path to the maximum that
// the row's exp pass waits for), and a shuffle tree instead of a scalar loop over the
// lanes; each comparison one vmaxps (max_keeping). Only the order of the comparisons
// differs from run_max's: the same value, but for which zero is kept when +0 and -0 tie,
// which changes no result (exp(x - m) is 1 for x = +-0 either way; log_softmax's
// (x - m) - log(sum) has sum >= 2 > 1 when two zeros tie, so its result is -log(sum) for
// both).
template <class T>
NUMFUSE_REDUCE_FLATTEN T row_max(const T* px, std::size_t n) noexcept {
#if defined(__AVX512F__)
    if constexpr (shifted_exp_native) {
        using B = Batch<T>;
        constexpr std::size_t width = B::size;
        B m0(lowest<T>()), m1(lowest<T>()), m2(lowest<T>()), m3(lowest<T>());
        std::size_t i = 0;
        for (; i + 4 * width <= n; i += 4 * width) {
            m0 = max_keeping(m0, B::load_unaligned(px + i));
            m1 = max_keeping(m1, B::load_unaligned(px + i + width));
            m2 = max_keeping(m2, B::load_unaligned(px + i + 2 * width));
            m3 = max_keeping(m3, B::load_unaligned(px + i + 3 * width));
        }
        if (i + width <= n) {
            m1 = max_keeping(m1, B::load_unaligned(px + i));
            i += width;
        }
        if (i + width <= n) {
            m2 = max_keeping(m2, B::load_unaligned(px + i));
            i += width;
        }
        if (i + width <= n) {
            m3 = max_keeping(m3, B::load_unaligned(px + i));
            i += width;
        }
        if (i < n) m0 = max_keeping(m0, load_first<T>(px + i, n - i, lowest<T>()));
        // No NaN lane is left (max_keeping keeps m for a NaN x), so the NaN rule of the
        // vmaxps of the tree and of _mm512_reduce_max never applies.
        using R = typename B::register_type;
        const R m = max_keeping(max_keeping(m0, m1), max_keeping(m2, m3));
        if constexpr (std::is_same<T, float>::value) {
            return _mm512_reduce_max_ps(m);
        } else {
            return _mm512_reduce_max_pd(m);
        }
    } else
#endif
    {
        return run_max<T>(reinterpret_cast<const char*>(px), sizeof(T), n, lowest<T>());
    }
}

// (s, c) += sum of exp(x[i] - m), i < n, as run_exp_sum_impl (lanes biased by 1,
// Fast2Sum, each quad's errors into c, c's additions compensated in d; Store: each error
// added plainly, add_plain, d the second accumulator's word; two accumulators, batch k
// into accumulator k % 2, the tail into the first), x - m as a double word; Store: each
// exp(x - m) also written to out. Returns true when a numerator's x - m lies below
// shifted_exp_scale_tiny (the scaling pass must then test for subnormal products).
// Prefetches the lines of the next row (next_x, next_out: n elements each).
template <class T, bool Store>
NUMFUSE_REDUCE_FLATTEN bool row_exp_sum(const T* px, T* po, std::size_t n, T m, T& s, T& c,
                                        const char* next_x, const char* next_out) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr std::size_t pair_bytes = 2 * width * sizeof(T);
    const B mv(m);
    const B one(T(1));
    const T limit = Store ? shifted_exp_scale_tiny<T>() : shifted_exp_tiny<T>();
    const auto term = [&mv](const B& x) { return shifted_exp_store(x, mv); };
    B s0 = one, s1 = one;
    B c0(T(0)), d0(T(0));
    const auto store_pair = [&](std::size_t at, const B& y0, const B& y1) {
        if constexpr (Store) {
            y0.store_unaligned(po + at);
            y1.store_unaligned(po + at + width);
        }
    };
    // Batches k into accumulator k % 2; the errors of a quad of batches (a pair where
    // fewer are left) summed as a tree into (c0, d0) (add_error).
    const auto add_quad = [&](std::size_t at, const B& y0, const B& y1, const B& y2, const B& y3) {
        store_pair(at, y0, y1);
        store_pair(at + 2 * width, y2, y3);
        add_quad_errors<Store>(s0, s1, c0, d0, y0, y1, y2, y3);
    };
    const auto add_pair = [&](std::size_t at, const B& y0, const B& y1) {
        store_pair(at, y0, y1);
        const B e0 = add_biased(s0, y0);
        const B e1 = add_biased(s1, y1);
        if constexpr (Store) {
            c0 += e0;
            d0 += e1;
        } else {
            add_error(c0, d0, e0 + e1);
        }
    };
    bool tiny = false;
    std::size_t i = 0;
    // Quads of batches on the common path with x - m's low word by Fast2Sum (two operations
    // instead of TwoSum's five; the same exact value, so the same bits) until the first pair
    // that is not: this loop makes no call, so more of its constants stay in registers (with
    // the rare path's call inside it, the compiler reloaded seven of them from memory in every
    // iteration, now two). m > 0: lanes with x <= -2^(e_m + 1) leave it too
    // (fast_error_limit); m <= 0: every x qualifies; m = +inf: none (the loops below).
    const auto fast_quads = [&](auto error, T fast_limit) {
        for (; i + 4 * width <= n; i += 4 * width) {
            prefetch_lines<false>(next_x, i * sizeof(T), 2 * pair_bytes);
            prefetch_lines<true>(next_out, i * sizeof(T), 2 * pair_bytes);
            B y0, y1, y2, y3;
            if (!shifted_exp_pair(B::load_unaligned(px + i), B::load_unaligned(px + i + width), mv,
                                  fast_limit, y0, y1, error)) {
                break;
            }
            if (!shifted_exp_pair(B::load_unaligned(px + i + 2 * width),
                                  B::load_unaligned(px + i + 3 * width), mv, fast_limit, y2, y3,
                                  error)) {
                add_pair(i, y0, y1);
                i += 2 * width;
                break;
            }
            add_quad(i, y0, y1, y2, y3);
        }
    };
    if (m <= T(0)) {
        fast_quads(FastErrorXLarger{}, limit);
    } else if (m < std::numeric_limits<T>::infinity()) {
        fast_quads(FastErrorMLarger{}, fast_error_limit(m, limit));
    }
    // From the first pair with a lane below the fast loop's limit on (the same terms, in the
    // same order; x - m's low word by TwoSum): quads, then a pair.
    const auto general_pair = [&](std::size_t at, B& y0, B& y1) {
        prefetch_lines<false>(next_x, at * sizeof(T), pair_bytes);
        prefetch_lines<true>(next_out, at * sizeof(T), pair_bytes);
        const B x0 = B::load_unaligned(px + at);
        const B x1 = B::load_unaligned(px + at + width);
        if (!shifted_exp_pair(x0, x1, mv, limit, y0, y1)) {
            y0 = term(x0);
            y1 = term(x1);
            tiny = true;
        }
    };
    for (; i + 4 * width <= n; i += 4 * width) {
        B y0, y1, y2, y3;
        general_pair(i, y0, y1);
        general_pair(i + 2 * width, y2, y3);
        add_quad(i, y0, y1, y2, y3);
    }
    if (i + 2 * width <= n) {
        B y0, y1;
        general_pair(i, y0, y1);
        add_pair(i, y0, y1);
        i += 2 * width;
    }
    // The tail, into the first accumulator: padding lanes read m (a term of 1 on the
    // common path) and are zeroed.
    for (; i < n; i += width) {
        const std::size_t count = n - i < width ? n - i : width;
        const B x = count == width ? B::load_unaligned(px + i) : load_first<T>(px + i, count, m);
        tiny = tiny || xsimd::any(x - mv < B(limit));
        B y = term(x);
        if (count < width) {
            y = xsimd::select(lane_index<B>() < B(static_cast<T>(count)), y, B(T(0)));
        }
        if constexpr (Store) {
            if (count == width) {
                y.store_unaligned(po + i);
            } else {
                store_first<T>(y, po + i, count);
            }
        }
        if constexpr (Store) {
            c0 += add_biased(s0, y);
        } else {
            add_error(c0, d0, add_biased(s0, y));
        }
    }
    s0 = s0 - one;
    s1 = s1 - one;
    const B t = s0 + s1;
    const B s1_part = t - s0;
    c0 += d0 + ((s0 - (t - s1_part)) + (s1 - s1_part));
    add_lane_tree(t, c0, s, c);
    return tiny;
}

// out[i] = out[i] * factor (softmax) or (x[i] - m) - param (log_softmax), i < n, for a
// row whose products cannot be subnormal (softmax: row_exp_sum returned false).
template <class T, SoftmaxKind Kind>
NUMFUSE_REDUCE_FLATTEN void row_write(const T* px, T* po, std::size_t n, T factor_or_m,
                                      T param) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    const B a(factor_or_m);
    const B b(param);
    const T* source = Kind == SoftmaxKind::softmax ? po : px;
    std::size_t i = 0;
    for (; i + 2 * width <= n; i += 2 * width) {
        const B v0 = B::load_unaligned(source + i);
        const B v1 = B::load_unaligned(source + i + width);
        if constexpr (Kind == SoftmaxKind::softmax) {
            (v0 * a).store_unaligned(po + i);
            (v1 * a).store_unaligned(po + i + width);
        } else {
            log_softmax_value(v0, a, b).store_unaligned(po + i);
            log_softmax_value(v1, a, b).store_unaligned(po + i + width);
        }
    }
    for (; i < n; i += width) {
        const std::size_t count = n - i < width ? n - i : width;
        const B v =
            count == width ? B::load_unaligned(source + i) : load_first<T>(source + i, count, T(0));
        const B w = Kind == SoftmaxKind::softmax ? B(v * a) : log_softmax_value(v, a, b);
        if (count == width) {
            w.store_unaligned(po + i);
        } else {
            store_first<T>(w, po + i, count);
        }
    }
}

template <class T, SoftmaxKind Kind>
void softmax_rows_impl(const char* x, std::ptrdiff_t x_row, char* out, std::ptrdiff_t out_row,
                       std::size_t rows, std::size_t n) noexcept {
    constexpr bool log = Kind == SoftmaxKind::log_softmax;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    for (std::size_t r = 0; r < rows; ++r) {
        const auto row = static_cast<std::ptrdiff_t>(r);
        const char* xr = x + row * x_row;
        char* outr = out + row * out_row;
        // The last row prefetches itself (in cache already): no test in the loops.
        const bool last = r + 1 == rows;
        const char* next_x = last ? xr : xr + x_row;
        const char* next_out = last ? outr : outr + out_row;
        const T* px = reinterpret_cast<const T*>(xr);
        T* po = reinterpret_cast<T*>(outr);
        const T m = row_max<T>(px, n);
        T s = T(0);
        T c = T(0);
        const bool tiny = row_exp_sum<T, !log>(px, po, n, m, s, c, next_x, next_out);
        const lse::SoftmaxParameters<T> g = lse::softmax_parameters<T>(log, m, s, c, [&] {
            for (std::size_t i = 0; i < n; ++i) {
                if (std::isnan(px[i])) return true;
            }
            return false;
        });
        if constexpr (log) {
            row_write<T, Kind>(px, po, n, g.shift, g.param);
        } else if (tiny) {
            run_scale<T>(outr, elem, n, static_cast<T>(g.scale));
        } else {
            row_write<T, Kind>(px, po, n, static_cast<T>(g.scale), T(0));
        }
    }
}

// Contract: see ReduceKernels::softmax_rows.
template <class T>
void softmax_rows(SoftmaxKind kind, const char* x, std::ptrdiff_t x_row, char* out,
                  std::ptrdiff_t out_row, std::size_t rows, std::size_t n) noexcept {
    if (kind == SoftmaxKind::softmax) {
        softmax_rows_impl<T, SoftmaxKind::softmax>(x, x_row, out, out_row, rows, n);
    } else {
        softmax_rows_impl<T, SoftmaxKind::log_softmax>(x, x_row, out, out_row, rows, n);
    }
}

// --------------------------------------------------------------- column blocks
//
// softmax_columns: groups across contiguous lanes (axis 0 of a C array: each row of
// the array is one step of every group), cut into strips of at most
// column_strip_bytes (x; out the same again) that stay in L2 through three passes:
// the maxima (row by row), exp(x - m) summed (softmax: and stored) a few batches of
// lanes down all the steps, their (m, s, c) in registers, then one write pass (row by
// row: softmax scales the numerators, log_softmax writes (x - m) - log(sum)).
// The exp pass prefetches the next strip's x and out into L2, so that its maximum
// pass does not wait on L3 (the first read of x is what the strided strip kernels
// spend most of their time on). log_softmax too: on a Zen 5 these three passes over
// strips in L2 measured faster than logsumexp's one-read online fold over wide strips
// and its write pass (strip_accumulate, strip_log_write), float32 and float64.

// (Measured at (1000, 1000), one thread: on a Xeon with AVX-512 256 KiB strips beat 128
// and 512 KiB ones, on a Zen 5 (1 MiB of L2 a core) 512 KiB ones beat 256 KiB; two
// batches per walk beat four, whose register state spilled. The strips' width moves
// no bits: each lane's operations are the same.)
constexpr std::size_t column_strip_bytes = std::size_t{512} << 10;
// Lanes of a strip at most (one row of a strip: 512 bytes, 8 cache lines).
template <class T>
constexpr std::size_t column_strip_lanes_max() noexcept {
    return 512 / sizeof(T);
}
// Batches of lanes whose (m, s, c) the exp pass keeps in registers.
constexpr std::size_t column_group = 2;

template <class T>
std::size_t column_strip_lanes(std::size_t steps) noexcept {
    constexpr std::size_t width = Batch<T>::size;
    const std::size_t fit = column_strip_bytes / (steps * sizeof(T)) / width * width;
    return fit < width ? width
                       : (fit > column_strip_lanes_max<T>() ? column_strip_lanes_max<T>() : fit);
}

// One batch of lanes at p: `count` lanes (width, or fewer for a strip's last batch),
// padding lanes 0.
template <class T>
inline Batch<T> load_count(const T* p, std::size_t count) noexcept {
    return count == Batch<T>::size ? Batch<T>::load_unaligned(p) : load_first<T>(p, count, T(0));
}
template <class T>
inline void store_count(const Batch<T>& v, T* p, std::size_t count) noexcept {
    if (count == Batch<T>::size) {
        v.store_unaligned(p);
    } else {
        store_first<T>(v, p, count);
    }
}

// The exp pass over G batches of lanes (the last one `count` lanes) down all steps:
// each exp(x - m) added per lane in step order (lanes biased by 1, Fast2Sum, each pair of
// steps' errors into c, c's additions compensated in d, as row_exp_sum), x - m as a double
// word; Store: also stored. Each step prefetches `prefetch_bytes`
// of the next strip's x and out (at px_next + step * x_step, po_next + step * out_step) into L2.
// Returns true when a stored numerator's x - m lies below shifted_exp_scale_tiny (Store only).
// Steps between renormalisations of column_exp_sum's (c, d) (add_error's bound on d's
// own roundings needs it past 4096 float32 steps; the driver sends at most that many).
constexpr std::size_t column_renormalise = 64;

template <class T, std::size_t G, bool Store>
NUMFUSE_REDUCE_FLATTEN bool column_exp_sum(const char* x, std::ptrdiff_t x_step, char* out,
                                           std::ptrdiff_t out_step, std::size_t steps,
                                           std::size_t count, const T* m, T* s, T* c,
                                           const char* px_next, const char* po_next,
                                           std::size_t prefetch_bytes) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    const B one(T(1));
    const T limit = Store ? shifted_exp_scale_tiny<T>() : shifted_exp_tiny<T>();
    B mv[G], sv[G], cv[G], dv[G];
    for (std::size_t k = 0; k < G; ++k) {
        mv[k] = B::load_unaligned(m + k * width);
        sv[k] = one;
        cv[k] = B(T(0));
        dv[k] = B(T(0));
    }
    bool tiny = false;
    // Step r: each batch's term added to its lane's s, the errors into e.
    const auto step_terms = [&](std::size_t r, B(&e)[G]) {
        const auto step = static_cast<std::ptrdiff_t>(r);
        for (std::size_t b = 0; b < prefetch_bytes; b += 64) {
            const auto offset = static_cast<std::ptrdiff_t>(b);
            __builtin_prefetch(px_next + step * x_step + offset, 0, 2);
            __builtin_prefetch(po_next + step * out_step + offset, 1, 2);
        }
        const T* px = reinterpret_cast<const T*>(x + step * x_step);
        for (std::size_t k = 0; k < G; ++k) {
            const std::size_t lanes = k + 1 == G ? count : width;
            const B xv = load_count<T>(px + k * width, lanes);
            B y;
            if (!shifted_exp_common(xv, mv[k], limit, y)) {
                y = shifted_exp_store(xv, mv[k]);
                tiny = true;
            }
            if constexpr (Store) {
                T* po = reinterpret_cast<T*>(out + step * out_step);
                store_count<T>(y, po + k * width, lanes);
            }
            e[k] = add_biased(sv[k], y);
        }
    };
    // Steps in pairs, each lane's two errors summed into (c, d) (add_error), renormalised
    // every column_renormalise steps; an odd last step alone.
    // Store (softmax): each error added plainly to c (add_plain's reason), d stays 0.
    std::size_t r = 0;
    if constexpr (Store) {
        for (; r < steps; ++r) {
            B e0[G];
            step_terms(r, e0);
            for (std::size_t k = 0; k < G; ++k) cv[k] += e0[k];
        }
    }
    for (; r + 2 <= steps; r += 2) {
        B e0[G], e1[G];
        step_terms(r, e0);
        step_terms(r + 1, e1);
        for (std::size_t k = 0; k < G; ++k) add_error(cv[k], dv[k], e0[k] + e1[k]);
        if (r % column_renormalise == column_renormalise - 2) {
            for (std::size_t k = 0; k < G; ++k) renormalise(cv[k], dv[k]);
        }
    }
    if (r < steps) {
        B e0[G];
        step_terms(r, e0);
        for (std::size_t k = 0; k < G; ++k) add_error(cv[k], dv[k], e0[k]);
    }
    for (std::size_t k = 0; k < G; ++k) {
        (sv[k] - one).store_unaligned(s + k * width);
        (cv[k] + dv[k]).store_unaligned(c + k * width);
    }
    return tiny;
}

template <class T, SoftmaxKind Kind>
void softmax_columns_impl(const char* x, std::ptrdiff_t x_step, char* out, std::ptrdiff_t out_step,
                          std::size_t lanes, std::size_t steps) noexcept {
    using B = Batch<T>;
    constexpr bool log = Kind == SoftmaxKind::log_softmax;
    constexpr std::size_t width = B::size;
    constexpr std::size_t lanes_max = column_strip_lanes_max<T>();
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    alignas(64) T m[lanes_max];
    alignas(64) T s[lanes_max];
    alignas(64) T c[lanes_max];
    // softmax: each lane's factor; log_softmax: its shift (m, or SciPy's special value)
    // and, in param, log(sum).
    alignas(64) T factor[lanes_max];
    alignas(64) T param[lanes_max];
    const std::size_t strip = column_strip_lanes<T>(steps);
    for (std::size_t j0 = 0; j0 < lanes; j0 += strip) {
        const std::size_t count = lanes - j0 < strip ? lanes - j0 : strip;
        const std::size_t batches = (count + width - 1) / width;
        const std::size_t last = count - (batches - 1) * width;  // lanes of the last batch
        const char* xs = x + static_cast<std::ptrdiff_t>(j0) * elem;
        char* os = out + static_cast<std::ptrdiff_t>(j0) * elem;
        // The maxima, row by row (padding lanes: max(lowest, 0) = 0, never read).
        for (std::size_t k = 0; k < batches; ++k) B(lowest<T>()).store_aligned(m + k * width);
        for (std::size_t r = 0; r < steps; ++r) {
            const T* px = reinterpret_cast<const T*>(xs + static_cast<std::ptrdiff_t>(r) * x_step);
            for (std::size_t k = 0; k < batches; ++k) {
                const B v = load_count<T>(px + k * width, k + 1 == batches ? last : width);
                max_ignoring_nan(B::load_aligned(m + k * width), v).store_aligned(m + k * width);
            }
        }
        // The exp pass, column_group batches at a time (walks down the steps); each
        // walk prefetches its share of the lines of each row of the next strip.
        const std::size_t rest = lanes - j0 - count;
        const std::size_t next_bytes = (rest < strip ? rest : strip) * sizeof(T);
        const std::size_t walks = (batches + column_group - 1) / column_group;
        const std::size_t share = (next_bytes / 64 + walks - 1) / walks * 64;
        bool tiny = false;
        for (std::size_t w = 0; w < walks; ++w) {
            const std::size_t k0 = w * column_group;
            const std::size_t group = batches - k0 < column_group ? batches - k0 : column_group;
            const std::size_t group_last = k0 + group == batches ? last : width;
            const char* xg = xs + static_cast<std::ptrdiff_t>(k0 * width) * elem;
            char* og = os + static_cast<std::ptrdiff_t>(k0 * width) * elem;
            const std::size_t first = w * share < next_bytes ? w * share : next_bytes;
            const std::size_t pf_bytes = next_bytes - first < share ? next_bytes - first : share;
            const auto pf_offset = static_cast<std::ptrdiff_t>(count * sizeof(T) + first);
            const char* pf = xs + pf_offset;
            const char* pfo = os + pf_offset;
            const T* mk = m + k0 * width;
            T* sk = s + k0 * width;
            T* ck = c + k0 * width;
            bool t = false;
            if (group == column_group) {
                t = column_exp_sum<T, column_group, !log>(
                    xg, x_step, og, out_step, steps, group_last, mk, sk, ck, pf, pfo, pf_bytes);
            } else {
                t = column_exp_sum<T, 1, !log>(xg, x_step, og, out_step, steps, group_last, mk, sk,
                                               ck, pf, pfo, pf_bytes);
            }
            tiny = tiny || t;
        }
        // Each lane's parameters (SciPy's special values: lse::softmax_parameters;
        // log_softmax scans its group for NaN only where the maximum is +inf).
        for (std::size_t j = 0; j < count; ++j) {
            const lse::SoftmaxParameters<T> g =
                lse::softmax_parameters<T>(log, m[j], s[j], c[j], [&] {
                    for (std::size_t r = 0; r < steps; ++r) {
                        T v;
                        std::memcpy(&v,
                                    xs + static_cast<std::ptrdiff_t>(r) * x_step +
                                        static_cast<std::ptrdiff_t>(j) * elem,
                                    sizeof v);
                        if (std::isnan(v)) return true;
                    }
                    return false;
                });
            if constexpr (log) {
                factor[j] = g.shift;
                param[j] = g.param;
            } else {
                factor[j] = static_cast<T>(g.scale);
            }
        }
        // The write pass, row by row: softmax scales the numerators, log_softmax
        // writes (x - m) - log(sum).
        for (std::size_t r = 0; r < steps; ++r) {
            const auto row = static_cast<std::ptrdiff_t>(r);
            T* po = reinterpret_cast<T*>(os + row * out_step);
            for (std::size_t k = 0; k < batches; ++k) {
                const std::size_t n = k + 1 == batches ? last : width;
                const B f = B::load_aligned(factor + k * width);
                if constexpr (log) {
                    const T* px = reinterpret_cast<const T*>(xs + row * x_step);
                    const B v = load_count<T>(px + k * width, n);
                    store_count<T>(log_softmax_value(v, f, B::load_aligned(param + k * width)),
                                   po + k * width, n);
                } else {
                    const B v = load_count<T>(po + k * width, n);
                    const bool rare = tiny && xsimd::any(v < B(scale_rare_limit<T>()));
                    store_count<T>(rare ? scale_float_rare(v, f) : v * f, po + k * width, n);
                }
            }
        }
    }
}

// Contract: see ReduceKernels::softmax_columns.
template <class T>
void softmax_columns(SoftmaxKind kind, const char* x, std::ptrdiff_t x_step, char* out,
                     std::ptrdiff_t out_step, std::size_t lanes, std::size_t steps) noexcept {
    if (kind == SoftmaxKind::softmax) {
        softmax_columns_impl<T, SoftmaxKind::softmax>(x, x_step, out, out_step, lanes, steps);
    } else {
        softmax_columns_impl<T, SoftmaxKind::log_softmax>(x, x_step, out, out_step, lanes, steps);
    }
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops
