// The softmax / log_softmax loops, and the level's ReduceKernelTable.
//
// Included only by level_unit.hpp, in the per-level translation units of this
// folder (see reduce_loops.hpp, whose helpers these loops share). The
// contracts of the table entries are in reduce/kernel_table.hpp.
//
// Why two passes with the maximum first, rather than the online accumulator of
// logsumexp: softmax needs exp(x - m) for the sum and again for the output. With
// the group's maximum known before any exp, the fold pass stores each
// exp(x - m) into the output while summing it, and the write pass only scales
// (one exp per element instead of two, and no rescale tests in the sum). The
// maximum pass is a plain read the group then keeps in cache for the fold.
// log_softmax stores nothing in the fold (run_exp_sum / strip_exp_sum with
// out == nullptr), but its terms take x - m as a double word as well: at a dominant
// maximum its result is -log(1 + the other terms), which would inherit each term's
// rounding of x - m (|x - m| u relative: 350 eps at 700).
#pragma once

#include "arch/softmax_exp.hpp"

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops {

// (x - m) - param, two roundings: x <= m and param = log(sum) >= 0 (the sum
// holds the maximum's exp(0) = 1), so both terms are <= 0, |x - m| and param
// are at most |result|, and each rounding costs at most 1/2 ULP of the result:
// within 1 ULP of (x - m) - param (param's own rounding comes on top). Special
// values as SciPy's x - m - param: -inf for x = -inf, NaN for NaN or m = +inf.
template <class B>
inline B log_softmax_value(const B& x, const B& m, const B& param) noexcept {
    return (x - m) - param;
}

// The larger of m and x, NaN in x ignored (comparisons with NaN are false). On x86 one
// max instruction: maxps(x, m) is x > m ? x : m (m for a NaN x and for tied zeros), the
// same select, where the compiler emitted a compare into a mask and a masked move (two
// instructions and their latency on each accumulator's chain).
template <class B>
inline B max_ignoring_nan(const B& m, const B& x) noexcept {
    [[maybe_unused]] constexpr bool single = std::is_same_v<typename B::value_type, float>;
    [[maybe_unused]] constexpr std::size_t bytes = sizeof(typename B::register_type);
#if defined(__AVX512F__)
    if constexpr (bytes == 64) {
        if constexpr (single) return _mm512_max_ps(x, m);
        else return _mm512_max_pd(x, m);
    }
#endif
#if defined(__AVX__)
    if constexpr (bytes == 32) {
        if constexpr (single) return _mm256_max_ps(x, m);
        else return _mm256_max_pd(x, m);
    }
#endif
#if defined(__SSE2__)
    if constexpr (bytes == 16) {
        if constexpr (single) return _mm_max_ps(x, m);
        else return _mm_max_pd(x, m);
    }
#endif
    return xsimd::select(x > m, x, m);
}

// --------------------------------------------------------------- runs

// Contract: see ReduceKernels::run_max.
template <class T>
NUMFUSE_REDUCE_FLATTEN T run_max(const char* a, std::ptrdiff_t a_stride, std::size_t n,
                                 T start) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    B m0(start), m1(start), m2(start), m3(start);
    std::size_t i = 0;
    if (a_stride == elem) {
        const T* pa = reinterpret_cast<const T*>(a);
        for (; i + 4 * width <= n; i += 4 * width) {
            m0 = max_ignoring_nan(m0, B::load_unaligned(pa + i));
            m1 = max_ignoring_nan(m1, B::load_unaligned(pa + i + width));
            m2 = max_ignoring_nan(m2, B::load_unaligned(pa + i + 2 * width));
            m3 = max_ignoring_nan(m3, B::load_unaligned(pa + i + 3 * width));
        }
    }
    while (i < n) {
        const std::size_t count = n - i < width ? n - i : width;
        const auto offset = static_cast<std::ptrdiff_t>(i);
        m0 = max_ignoring_nan(
            m0, load_lanes<T>(a + offset * a_stride, a_stride, count, minus_infinity<T>()));
        i += count;
    }
    m0 = max_ignoring_nan(max_ignoring_nan(m0, m1), max_ignoring_nan(m2, m3));
    alignas(64) T lanes[width];
    m0.store_aligned(lanes);
    T m = start;
    for (std::size_t k = 0; k < width; ++k) m = lanes[k] > m ? lanes[k] : m;
    return m;
}

// 0, 1, ..., width - 1.
template <class B>
inline B lane_index() noexcept {
    using T = typename B::value_type;
    alignas(64) T index[B::size];
    for (std::size_t k = 0; k < B::size; ++k) index[k] = static_cast<T>(k);
    return B::load_aligned(index);
}

// Contract: see ReduceKernels::run_exp_sum. Every term is y = exp(x - m) <= 1
// (x <= m): each lane's sum starts at 1, so s >= 1 >= y and Fast2Sum's three
// operations give the exact error (add_biased); the four errors of an iteration are
// summed as a tree and added to c, whose own additions keep their errors in d (add_error:
// the lane's terms to about 2 u of their sum however many there are); the bias is taken
// off each lane exactly (s - 1: both multiples of ulp(s) while s < 2^24) before the
// lanes are summed pairwise (add_lane_tree). Two accumulators: the exp, not the sum's
// latency, bounds the loop. The strided loop renormalises (c, d) every batch (its lanes
// may take a whole chunk's terms). Store (softmax): c's additions plain (add_plain: d is
// the second accumulator's c).
template <class T, bool Store>
NUMFUSE_REDUCE_FLATTEN void run_exp_sum_impl(const char* a, std::ptrdiff_t a_stride, char* out,
                                             std::ptrdiff_t out_stride, std::size_t n, T m, T& s,
                                             T& c) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    const B mv(m);
    // x - m as a double word, stored or not: a rounded difference of 100 would cost a
    // numerator 50 eps, and log_softmax's sum too where its result is small (at a
    // dominant maximum it is -log(1 + the other terms), each off by its rounding).
    const auto term = [&mv](const B& x) { return shifted_exp_store(x, mv); };
    // Pairs of batches whose x - m all lie above this take shifted_exp_pair's common path
    // (the same bits as term's, see there).
    const T limit = shifted_exp_tiny<T>();
    const B one(T(1));
    B s0 = one, s1 = one;
    B c0(T(0)), d0(T(0));
    std::size_t i = 0;
    if (a_stride == elem && (!Store || out_stride == elem)) {
        const T* pa = reinterpret_cast<const T*>(a);
        T* po = reinterpret_cast<T*>(out);
        // The lines of the n elements after the run, into L2 as the run's own are read:
        // in a group longer than a chunk they are the next chunk, whose maximum pass
        // otherwise waits on L3 or memory with no arithmetic to hide it (the exp here
        // has plenty). A prefetch never faults: past the array's end it costs only itself.
        const char* next = a + static_cast<std::ptrdiff_t>(n) * elem;
        for (; i + 4 * width <= n; i += 4 * width) {
            for (std::size_t b = 0; b < 4 * width * sizeof(T); b += 64) {
                __builtin_prefetch(next + static_cast<std::ptrdiff_t>(i) * elem + b, 0, 2);
            }
            const B x0 = B::load_unaligned(pa + i);
            const B x1 = B::load_unaligned(pa + i + width);
            const B x2 = B::load_unaligned(pa + i + 2 * width);
            const B x3 = B::load_unaligned(pa + i + 3 * width);
            B y0, y1, y2, y3;
            if (!shifted_exp_pair(x0, x1, mv, limit, y0, y1)) {
                y0 = term(x0);
                y1 = term(x1);
            }
            if (!shifted_exp_pair(x2, x3, mv, limit, y2, y3)) {
                y2 = term(x2);
                y3 = term(x3);
            }
            if constexpr (Store) {
                y0.store_unaligned(po + i);
                y1.store_unaligned(po + i + width);
                y2.store_unaligned(po + i + 2 * width);
                y3.store_unaligned(po + i + 3 * width);
            }
            add_quad_errors<Store>(s0, s1, c0, d0, y0, y1, y2, y3);
        }
    }
    // Strided runs and the tail, into lanes 0: padding lanes read m (a term of 1
    // on the fast path; -inf would send the batch to the rare one) and are zeroed.
    while (i < n) {
        const std::size_t count = n - i < width ? n - i : width;
        const auto offset = static_cast<std::ptrdiff_t>(i);
        B y = term(load_lanes<T>(a + offset * a_stride, a_stride, count, m));
        if (count < width)
            y = xsimd::select(lane_index<B>() < B(static_cast<T>(count)), y, B(T(0)));
        if constexpr (Store) {
            store_lanes<T>(y, out + offset * out_stride, out_stride, count);
            c0 += add_biased(s0, y);
        } else {
            add_error(c0, d0, add_biased(s0, y));
            renormalise(c0, d0);
        }
        i += count;
    }
    // Unbias (exact), then s0 + s1 with TwoSum, lane by lane; the second word joins the
    // first (one rounding of c: u of it).
    s0 = s0 - one;
    s1 = s1 - one;
    const B t = s0 + s1;
    const B s1_part = t - s0;
    c0 += d0 + ((s0 - (t - s1_part)) + (s1 - s1_part));
    add_lane_tree(t, c0, s, c);
}

template <class T>
void run_exp_sum(const char* a, std::ptrdiff_t a_stride, char* out, std::ptrdiff_t out_stride,
                 std::size_t n, T m, T& s, T& c) noexcept {
    if (out != nullptr) {
        run_exp_sum_impl<T, true>(a, a_stride, out, out_stride, n, m, s, c);
    } else {
        run_exp_sum_impl<T, false>(a, a_stride, out, out_stride, n, m, s, c);
    }
}

// Contract: see ReduceKernels::run_scale. float32 numerators below
// 2^-125 / factor (their product or they themselves may be subnormal) send
// their batch to scale_float_rare (no assist; the same bits).
template <class T>
NUMFUSE_REDUCE_FLATTEN void run_scale(char* out, std::ptrdiff_t out_stride, std::size_t n,
                                      T factor) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr bool guard = std::is_same<T, float>::value;
    const B fv(factor);
    // +inf for factor 0 (every lane rare), NaN for a NaN factor (no lane).
    const B limit(guard ? static_cast<T>(0x1p-125 / static_cast<double>(factor)) : T(0));
    std::size_t i = 0;
    if (out_stride == static_cast<std::ptrdiff_t>(sizeof(T))) {
        T* po = reinterpret_cast<T*>(out);
        for (; i + width <= n; i += width) {
            const B v = B::load_unaligned(po + i);
            if constexpr (guard) {
                if (xsimd::any(v < limit)) {
                    scale_float_rare(v, fv).store_unaligned(po + i);
                    continue;
                }
            }
            (v * fv).store_unaligned(po + i);
        }
    }
    while (i < n) {
        const std::size_t count = n - i < width ? n - i : width;
        char* p = out + static_cast<std::ptrdiff_t>(i) * out_stride;
        const B v = load_lanes<T>(p, out_stride, count, T(1));
        store_lanes<T>(guard && xsimd::any(v < limit) ? scale_float_rare(v, fv) : v * fv, p,
                       out_stride, count);
        i += count;
    }
}

// Contract: see ReduceKernels::run_log_write.
template <class T>
NUMFUSE_REDUCE_FLATTEN void run_log_write(const char* a, std::ptrdiff_t a_stride, char* out,
                                          std::ptrdiff_t out_stride, std::size_t n, T m,
                                          T param) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    const B mv(m);
    const B pv(param);
    std::size_t i = 0;
    if (a_stride == elem && out_stride == elem) {
        const T* pa = reinterpret_cast<const T*>(a);
        T* po = reinterpret_cast<T*>(out);
        for (; i + width <= n; i += width) {
            log_softmax_value(B::load_unaligned(pa + i), mv, pv).store_unaligned(po + i);
        }
    }
    while (i < n) {
        const std::size_t count = n - i < width ? n - i : width;
        const auto offset = static_cast<std::ptrdiff_t>(i);
        const B x = load_lanes<T>(a + offset * a_stride, a_stride, count, T(0));
        store_lanes<T>(log_softmax_value(x, mv, pv), out + offset * out_stride, out_stride, count);
        i += count;
    }
}

// --------------------------------------------------------------- strips
//
// Rows outside, lanes inside, as strip_accumulate: memory is read row by row.
// Per-lane state goes through load_lanes / store_lanes with the lane count, so
// a partial last batch never touches the entries of a neighbouring strip
// (another thread's).

// The element at row r of a strip whose rows lie `step` bytes apart (contiguous lanes).
template <class T>
inline const T* strip_row(const T* row0, std::ptrdiff_t step, std::size_t r) noexcept {
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(row0) +
                                      static_cast<std::ptrdiff_t>(r) * step);
}
template <class T>
inline T* strip_row(T* row0, std::ptrdiff_t step, std::size_t r) noexcept {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(row0) +
                                static_cast<std::ptrdiff_t>(r) * step);
}

// Contract: see ReduceKernels::strip_max.
template <class T>
NUMFUSE_REDUCE_FLATTEN void strip_max(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step,
                                      std::size_t lanes, std::size_t steps, T* m_lane) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    for (std::size_t r0 = 0; r0 < steps; r0 += strip_block) {
        const std::size_t rows = steps - r0 < strip_block ? steps - r0 : strip_block;
        std::size_t j = 0;
        if (a_lane == elem) {
            // Contiguous lanes (axis 0 of a C array), two full batches at a time: the
            // same comparisons in the same order as below, without load_lanes' tests.
            const T* row0 =
                reinterpret_cast<const T*>(a + static_cast<std::ptrdiff_t>(r0) * a_step);
            for (; j + 2 * width <= lanes; j += 2 * width) {
                B m0 = B::load_unaligned(m_lane + j);
                B m1 = B::load_unaligned(m_lane + j + width);
                for (std::size_t r = 0; r < rows; ++r) {
                    const T* pa = strip_row(row0, a_step, r) + j;
                    m0 = max_ignoring_nan(m0, B::load_unaligned(pa));
                    m1 = max_ignoring_nan(m1, B::load_unaligned(pa + width));
                }
                m0.store_unaligned(m_lane + j);
                m1.store_unaligned(m_lane + j + width);
            }
        }
        for (; j < lanes; j += width) {
            const std::size_t count = lanes - j < width ? lanes - j : width;
            const char* pa = a + static_cast<std::ptrdiff_t>(r0) * a_step +
                             static_cast<std::ptrdiff_t>(j) * a_lane;
            char* pm = reinterpret_cast<char*>(m_lane + j);
            B m = load_lanes<T>(pm, elem, count, lowest<T>());
            for (std::size_t r = 0; r < rows; ++r) {
                m = max_ignoring_nan(m, load_lanes<T>(pa + static_cast<std::ptrdiff_t>(r) * a_step,
                                                      a_lane, count, minus_infinity<T>()));
            }
            store_lanes<T>(m, pm, elem, count);
        }
    }
}

// Contract: see ReduceKernels::strip_exp_sum (each lane's terms added in step order, c's
// additions compensated in d, (c, d) renormalised at the end of every block; Store
// (softmax): c's additions plain, d left as it is, add_plain's reason).
template <class T, bool Store>
NUMFUSE_REDUCE_FLATTEN void strip_exp_sum_impl(const char* a, std::ptrdiff_t a_lane,
                                               std::ptrdiff_t a_step, char* out,
                                               std::ptrdiff_t out_lane, std::ptrdiff_t out_step,
                                               std::size_t lanes, std::size_t steps,
                                               const T* m_lane, T* s_lane, T* c_lane,
                                               T* d_lane) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    for (std::size_t r0 = 0; r0 < steps; r0 += strip_block) {
        const std::size_t rows = steps - r0 < strip_block ? steps - r0 : strip_block;
        const auto row0 = static_cast<std::ptrdiff_t>(r0);
        std::size_t j = 0;
        if (a_lane == elem && (!Store || out_lane == elem)) {
            // Contiguous lanes, two full batches at a time: each lane's terms as below (the
            // same functions, the same order), the state in registers through the block.
            const T* xa = reinterpret_cast<const T*>(a + row0 * a_step);
            T* xo = Store ? reinterpret_cast<T*>(out + row0 * out_step) : nullptr;
            const T limit = shifted_exp_tiny<T>();
            for (; j + 2 * width <= lanes; j += 2 * width) {
                const B m0 = B::load_unaligned(m_lane + j);
                const B m1 = B::load_unaligned(m_lane + j + width);
                B s0 = B::load_unaligned(s_lane + j);
                B s1 = B::load_unaligned(s_lane + j + width);
                B c0 = B::load_unaligned(c_lane + j);
                B c1 = B::load_unaligned(c_lane + j + width);
                B d0 = B::load_unaligned(d_lane + j);
                B d1 = B::load_unaligned(d_lane + j + width);
                for (std::size_t r = 0; r < rows; ++r) {
                    const T* px = strip_row(xa, a_step, r) + j;
                    const B x0 = B::load_unaligned(px);
                    const B x1 = B::load_unaligned(px + width);
                    B y0, y1;
                    if (!shifted_exp_common(x0, m0, limit, y0)) {
                        y0 = shifted_exp_store(x0, m0);
                    }
                    if (!shifted_exp_common(x1, m1, limit, y1)) {
                        y1 = shifted_exp_store(x1, m1);
                    }
                    if constexpr (Store) {
                        T* po = strip_row(xo, out_step, r) + j;
                        y0.store_unaligned(po);
                        y1.store_unaligned(po + width);
                    }
                    if constexpr (Store) {
                        add_compensated(s0, c0, y0);
                        add_compensated(s1, c1, y1);
                    } else {
                        add_compensated(s0, c0, d0, y0);
                        add_compensated(s1, c1, d1, y1);
                    }
                }
                if constexpr (!Store) {
                    renormalise(c0, d0);
                    renormalise(c1, d1);
                }
                s0.store_unaligned(s_lane + j);
                s1.store_unaligned(s_lane + j + width);
                c0.store_unaligned(c_lane + j);
                c1.store_unaligned(c_lane + j + width);
                d0.store_unaligned(d_lane + j);
                d1.store_unaligned(d_lane + j + width);
            }
        }
        for (; j < lanes; j += width) {
            const std::size_t count = lanes - j < width ? lanes - j : width;
            const auto lane0 = static_cast<std::ptrdiff_t>(j);
            const char* pa = a + row0 * a_step + lane0 * a_lane;
            char* po = Store ? out + row0 * out_step + lane0 * out_lane : nullptr;
            const B m = load_lanes<T>(reinterpret_cast<const char*>(m_lane + j), elem, count, T(0));
            B s = load_lanes<T>(reinterpret_cast<const char*>(s_lane + j), elem, count, T(0));
            B c = load_lanes<T>(reinterpret_cast<const char*>(c_lane + j), elem, count, T(0));
            B d = load_lanes<T>(reinterpret_cast<const char*>(d_lane + j), elem, count, T(0));
            for (std::size_t r = 0; r < rows; ++r) {
                const auto row = static_cast<std::ptrdiff_t>(r);
                const B x = load_lanes<T>(pa + row * a_step, a_lane, count, minus_infinity<T>());
                // The common path where it applies (the same bits as the full one).
                B y;
                if (!shifted_exp_common(x, m, shifted_exp_tiny<T>(), y)) {
                    y = shifted_exp_store(x, m);
                }
                if constexpr (Store) store_lanes<T>(y, po + row * out_step, out_lane, count);
                if constexpr (Store) {
                    add_compensated(s, c, y);
                } else {
                    add_compensated(s, c, d, y);
                }
            }
            if constexpr (!Store) renormalise(c, d);
            store_lanes<T>(s, reinterpret_cast<char*>(s_lane + j), elem, count);
            store_lanes<T>(c, reinterpret_cast<char*>(c_lane + j), elem, count);
            store_lanes<T>(d, reinterpret_cast<char*>(d_lane + j), elem, count);
        }
    }
}

template <class T>
void strip_exp_sum(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step, char* out,
                   std::ptrdiff_t out_lane, std::ptrdiff_t out_step, std::size_t lanes,
                   std::size_t steps, const T* m, T* s, T* c, T* d) noexcept {
    if (out != nullptr) {
        strip_exp_sum_impl<T, true>(a, a_lane, a_step, out, out_lane, out_step, lanes, steps, m, s,
                                    c, d);
    } else {
        strip_exp_sum_impl<T, false>(a, a_lane, a_step, out, out_lane, out_step, lanes, steps, m, s,
                                     c, d);
    }
}

// Contract: see ReduceKernels::strip_scale.
template <class T>
NUMFUSE_REDUCE_FLATTEN void strip_scale(char* out, std::ptrdiff_t out_lane, std::ptrdiff_t out_step,
                                        std::size_t lanes, std::size_t steps,
                                        const T* factor) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    const B limit(scale_rare_limit<T>());
    // Contiguous lanes: the pairs of full batches in blocks of strip_block rows, their
    // factors loaded once a block (a strip's rows are short: per-row work would cost as
    // much as the products); the same product per element as below.
    const std::size_t paired = out_lane == elem ? lanes / (2 * width) * (2 * width) : 0;
    for (std::size_t r0 = 0; paired != 0 && r0 < steps; r0 += strip_block) {
        const std::size_t rows = steps - r0 < strip_block ? steps - r0 : strip_block;
        T* block = reinterpret_cast<T*>(out + static_cast<std::ptrdiff_t>(r0) * out_step);
        for (std::size_t j = 0; j < paired; j += 2 * width) {
            const B f0 = B::load_unaligned(factor + j);
            const B f1 = B::load_unaligned(factor + j + width);
            for (std::size_t r = 0; r < rows; ++r) {
                T* po = strip_row(block, out_step, r) + j;
                const B v0 = B::load_unaligned(po);
                const B v1 = B::load_unaligned(po + width);
                if (std::is_same<T, float>::value && xsimd::any((v0 < limit) | (v1 < limit))) {
                    scale_float_rare(v0, f0).store_unaligned(po);
                    scale_float_rare(v1, f1).store_unaligned(po + width);
                    continue;
                }
                (v0 * f0).store_unaligned(po);
                (v1 * f1).store_unaligned(po + width);
            }
        }
    }
    for (std::size_t r = 0; paired != lanes && r < steps; ++r) {
        char* row = out + static_cast<std::ptrdiff_t>(r) * out_step;
        for (std::size_t j = paired; j < lanes; j += width) {
            const std::size_t count = lanes - j < width ? lanes - j : width;
            char* p = row + static_cast<std::ptrdiff_t>(j) * out_lane;
            const B f = load_lanes<T>(reinterpret_cast<const char*>(factor + j), elem, count, T(0));
            const B v = load_lanes<T>(p, out_lane, count, T(1));
            const bool rare = std::is_same<T, float>::value && xsimd::any(v < limit);
            store_lanes<T>(rare ? scale_float_rare(v, f) : v * f, p, out_lane, count);
        }
    }
}

// Contract: see ReduceKernels::strip_log_write.
template <class T>
NUMFUSE_REDUCE_FLATTEN void strip_log_write(const char* a, std::ptrdiff_t a_lane,
                                            std::ptrdiff_t a_step, char* out,
                                            std::ptrdiff_t out_lane, std::ptrdiff_t out_step,
                                            std::size_t lanes, std::size_t steps, const T* m_lane,
                                            const T* param_lane) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    for (std::size_t r = 0; r < steps; ++r) {
        const auto row = static_cast<std::ptrdiff_t>(r);
        std::size_t j = 0;
        if (a_lane == elem && out_lane == elem) {
            // Contiguous lanes, two full batches at a time (the same values as below).
            const T* px = reinterpret_cast<const T*>(a + row * a_step);
            T* po = reinterpret_cast<T*>(out + row * out_step);
            for (; j + 2 * width <= lanes; j += 2 * width) {
                log_softmax_value(B::load_unaligned(px + j), B::load_unaligned(m_lane + j),
                                  B::load_unaligned(param_lane + j))
                    .store_unaligned(po + j);
                log_softmax_value(B::load_unaligned(px + j + width),
                                  B::load_unaligned(m_lane + j + width),
                                  B::load_unaligned(param_lane + j + width))
                    .store_unaligned(po + j + width);
            }
        }
        for (; j < lanes; j += width) {
            const std::size_t count = lanes - j < width ? lanes - j : width;
            const auto lane0 = static_cast<std::ptrdiff_t>(j);
            const B x = load_lanes<T>(a + row * a_step + lane0 * a_lane, a_lane, count, T(0));
            const B m = load_lanes<T>(reinterpret_cast<const char*>(m_lane + j), elem, count, T(0));
            const B param =
                load_lanes<T>(reinterpret_cast<const char*>(param_lane + j), elem, count, T(0));
            store_lanes<T>(log_softmax_value(x, m, param), out + row * out_step + lane0 * out_lane,
                           out_lane, count);
        }
    }
}

// --------------------------------------------------------------- short groups

template <class T, SoftmaxKind Kind>
NUMFUSE_REDUCE_FLATTEN void short_softmax_impl(const char* a, std::ptrdiff_t a_lane,
                                               std::ptrdiff_t a_step, char* out,
                                               std::ptrdiff_t out_lane, std::ptrdiff_t out_step,
                                               std::size_t lanes, std::size_t steps) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    const B nan(std::numeric_limits<T>::quiet_NaN());
    const B inf(std::numeric_limits<T>::infinity());
    const StridedLanes<T> groups(a_lane);
    for (std::size_t j = 0; j < lanes; j += width) {
        const std::size_t count = lanes - j < width ? lanes - j : width;
        const char* pa = a + static_cast<std::ptrdiff_t>(j) * a_lane;
        char* po = out + static_cast<std::ptrdiff_t>(j) * out_lane;
        B x[short_group_max];
        B m(lowest<T>());
        auto nan_seen = xsimd::isnan(m);  // all false (m is finite)
        for (std::size_t r = 0; r < steps; ++r) {
            x[r] = groups.load(pa + static_cast<std::ptrdiff_t>(r) * a_step, count, T(0));
            m = max_ignoring_nan(m, x[r]);
            // Not x != x: xsimd 8.1 compiles != to an ordered compare on AVX/AVX-512 (false for
            // NaN).
            nan_seen = nan_seen || xsimd::isnan(x[r]);
        }
        B s(T(0));
        B c(T(0));
        if constexpr (Kind == SoftmaxKind::softmax) {
            // The numerators, kept in x: exp once per element (see the top).
            for (std::size_t r = 0; r < steps; ++r) {
                x[r] = shifted_exp_store(x[r], m);
                add_compensated(s, c, x[r]);
            }
        } else {
            for (std::size_t r = 0; r < steps; ++r) {
                add_compensated(s, c, shifted_exp_store(x[r], m));
            }
        }
        // SciPy's special values (see softmax_parameters in reduce.cpp): a
        // NaN or zero sum (NaN / +inf entries, all -inf) makes the group NaN,
        // except log_softmax with +inf and no NaN: m = +inf, param = 0.
        const B total = s + c;
        const auto normal = (total > B(T(0))) && (total < inf);
        if constexpr (Kind == SoftmaxKind::softmax) {
            const B factor = xsimd::select(normal, kernels::detail::divide(B(T(1)), total), nan);
            for (std::size_t r = 0; r < steps; ++r) {
                store_lanes<T>(x[r] * factor, po + static_cast<std::ptrdiff_t>(r) * out_step,
                               out_lane, count);
            }
        } else {
            const B hi = s + c;
            const B lo = c - (hi - s);
            B param = kernels::log_kernel(hi) + kernels::detail::divide(lo, hi);
            const auto infinite = (m == inf) && !nan_seen;
            m = xsimd::select(normal, m, xsimd::select(infinite, inf, nan));
            param = xsimd::select(normal, param, B(T(0)));
            for (std::size_t r = 0; r < steps; ++r) {
                store_lanes<T>(log_softmax_value(x[r], m, param),
                               po + static_cast<std::ptrdiff_t>(r) * out_step, out_lane, count);
            }
        }
    }
}

// Contract: see ReduceKernels::short_softmax (steps <= short_group_max).
template <class T>
void short_softmax(SoftmaxKind kind, const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step,
                   char* out, std::ptrdiff_t out_lane, std::ptrdiff_t out_step, std::size_t lanes,
                   std::size_t steps) noexcept {
    if (kind == SoftmaxKind::softmax) {
        short_softmax_impl<T, SoftmaxKind::softmax>(a, a_lane, a_step, out, out_lane, out_step,
                                                    lanes, steps);
    } else {
        short_softmax_impl<T, SoftmaxKind::log_softmax>(a, a_lane, a_step, out, out_lane, out_step,
                                                        lanes, steps);
    }
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops

// softmax_rows and softmax_columns, which use the run kernels above.
#include "arch/softmax_blocks.hpp"

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops {

// --------------------------------------------------------------- the table

template <class T>
void fill_kernels(ReduceKernels<T>& kernels) noexcept {
    kernels.batch_lanes = Batch<T>::size;
    kernels.run_init = &run_init<T>;
    kernels.run_accumulate = &run_accumulate<T>;
    kernels.run_finish = &run_finish<T>;
    kernels.strip_accumulate = &strip_accumulate<T>;
    kernels.run_max = &run_max<T>;
    kernels.run_exp_sum = &run_exp_sum<T>;
    kernels.run_scale = &run_scale<T>;
    kernels.run_log_write = &run_log_write<T>;
    kernels.strip_max = &strip_max<T>;
    kernels.strip_exp_sum = &strip_exp_sum<T>;
    kernels.strip_scale = &strip_scale<T>;
    kernels.strip_log_write = &strip_log_write<T>;
    kernels.short_softmax = &short_softmax<T>;
    kernels.softmax_rows = &softmax_rows<T>;
    // Only where the exp is the AVX-512 kernel: on this Xeon at the avx2_fma level the
    // strips of strip_exp_sum were faster for float64 (four lanes a batch: the narrow
    // walks down the steps reread L2 more than they save); the driver then takes those.
    kernels.softmax_columns = shifted_exp_native ? &softmax_columns<T> : nullptr;
}

inline void fill_reduce_table(ReduceKernelTable& table) noexcept {
    fill_kernels(table.f32);
    fill_kernels(table.f64);
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops
