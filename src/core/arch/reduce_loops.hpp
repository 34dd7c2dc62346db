// The streaming logsumexp loops (the online max-and-rescale accumulator) and
// the helpers the softmax loops share, instantiated once per level.
//
// Included only by arch/softmax_loops.hpp (which fills the level's
// ReduceKernelTable), in the per-level translation units in this folder,
// after NUMFUSE_LEVEL_NAMESPACE / NUMFUSE_LEVEL_ARCH are defined (see
// unary_loop.hpp for why everything lives in a per-level namespace). The
// accumulator and its conventions are described in reduce/kernel_table.hpp.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/exp.hpp"
#include "kernels/lse_exp.hpp"
#include "kernels/log.hpp"
#include "lse_accumulator.hpp"
#include "reduce/kernel_table.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including reduce_loops.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops {

using Arch = NUMFUSE_LEVEL_ARCH;

template <class T>
using Batch = xsimd::batch<T, Arch>;

// The loops below must have the exp kernel inlined: a call would clobber
// every vector register (none are callee-saved) and push the accumulators
// to the stack. GCC stops inlining in functions this large, so the loop
// functions are flattened.
#if defined(__GNUC__)
#define NUMFUSE_REDUCE_FLATTEN __attribute__((flatten))
#else
#define NUMFUSE_REDUCE_FLATTEN
#endif

// Independent accumulators per run: enough to hide the latency of the
// exp -> add chain, few enough to stay in registers with AVX-512.
constexpr std::size_t run_unroll = 4;
// Rows of run_unroll batches per block of the contiguous unweighted run loop:
// 8 rows are 32 batches (1 KiB of float64 at AVX2), read twice while in L1.
constexpr std::size_t run_block_rows = 8;
// Runs of fewer blocks than this (a row of a 2-d logsumexp: they fit in L1) first find each
// lane's maximum over the whole run: while each lane has seen few elements almost every
// block holds a new maximum somewhere (uniform data: no new maximum in any of 16 lanes in
// block j has probability about ((j - 1) / j)^16), which would send it to the compensated
// sum. With the run's maximum taken first, only the blocks holding a lane's maximum are
// summed term by term. Longer runs skip that pass: their blocks rarely raise a maximum.
constexpr std::size_t run_block_min = 32;
// Steps (rows) folded per visit of a strip's state: the state is loaded and
// stored once per block, and the block's maximum is found before any exp,
// so a block costs at most one rescale per lane.
constexpr std::size_t strip_block = 8;

template <class T>
constexpr T lowest() noexcept {
    return std::numeric_limits<T>::lowest();
}
template <class T>
constexpr T minus_infinity() noexcept {
    return -std::numeric_limits<T>::infinity();
}

// W lanes at p, p + stride, ...; lanes >= count (and all lanes, when
// count == 0) read `pad`. Contiguous full batches are one unaligned load;
// everything else goes through a stack buffer, so no byte outside the
// elements themselves is touched.
template <class T>
inline Batch<T> load_lanes(const char* p, std::ptrdiff_t stride, std::size_t count,
                           T pad) noexcept {
    constexpr std::size_t width = Batch<T>::size;
    if (count == width && stride == static_cast<std::ptrdiff_t>(sizeof(T))) {
        return Batch<T>::load_unaligned(reinterpret_cast<const T*>(p));
    }
    alignas(64) T buffer[width];
    for (std::size_t k = 0; k < width; ++k) buffer[k] = pad;
    for (std::size_t k = 0; k < count; ++k) {
        std::memcpy(&buffer[k], p + static_cast<std::ptrdiff_t>(k) * stride, sizeof(T));
    }
    return Batch<T>::load_aligned(buffer);
}

template <class T>
inline void store_lanes(const Batch<T>& value, char* p, std::ptrdiff_t stride,
                        std::size_t count) noexcept {
    constexpr std::size_t width = Batch<T>::size;
    if (count == width && stride == static_cast<std::ptrdiff_t>(sizeof(T))) {
        value.store_unaligned(reinterpret_cast<T*>(p));
        return;
    }
    alignas(64) T buffer[width];
    value.store_aligned(buffer);
    for (std::size_t k = 0; k < count; ++k) {
        std::memcpy(p + static_cast<std::ptrdiff_t>(k) * stride, &buffer[k], sizeof(T));
    }
}

// Full batches of lanes at one fixed stride, read with the level's gather instruction where
// it has one (AVX2, AVX-512). load_lanes assembles a strided batch from scalar stores into a
// stack buffer, and its vector reload cannot be forwarded from those stores: a stall per
// batch, the largest single cost of softmax over a short last axis, where the lanes (one per
// group) lie a group's length apart. Partial batches, contiguous lanes, strides that are not
// a whole number of elements and levels without a gather go through load_lanes. Either way
// the batch holds the same elements.
template <class T>
class StridedLanes {
    static constexpr std::size_t width = Batch<T>::size;
    using IndexValue = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
    using Index = xsimd::batch<IndexValue, Arch>;
    static constexpr bool has_gather = std::is_base_of<xsimd::avx2, Arch>::value;

public:
    explicit StridedLanes(std::ptrdiff_t stride) noexcept : stride_(stride) {
        if constexpr (has_gather) {
            const auto element = static_cast<std::ptrdiff_t>(sizeof(T));
            const std::ptrdiff_t step = stride / element;
            const std::ptrdiff_t magnitude = step < 0 ? -step : step;
            gather_ = stride % element == 0 && step != 1 &&
                      magnitude <= static_cast<std::ptrdiff_t>(
                                       std::numeric_limits<IndexValue>::max() / width);
            if (gather_) {
                alignas(64) IndexValue offsets[width];
                for (std::size_t k = 0; k < width; ++k) {
                    offsets[k] = static_cast<IndexValue>(step * static_cast<std::ptrdiff_t>(k));
                }
                index_ = Index::load_aligned(offsets);
            }
        }
    }

    // The lanes at p, p + stride, ...: as load_lanes(p, stride, count, pad).
    Batch<T> load(const char* p, std::size_t count, T pad) const noexcept {
        if constexpr (has_gather) {
            if (gather_ && count == width) {
                return Batch<T>::gather(reinterpret_cast<const T*>(p), index_);
            }
        }
        return load_lanes<T>(p, stride_, count, pad);
    }

private:
    std::ptrdiff_t stride_;
    bool gather_ = false;
    Index index_{};
};

// s + c += y with the rounding error of the addition kept in c (TwoSum:
// exact for any magnitudes, six additions, no branch).
template <class B>
inline void add_compensated(B& s, B& c, const B& y) noexcept {
    const B t = s + y;
    const B y_part = t - s;
    c += (s - (t - y_part)) + (y - y_part);
    s = t;
}

// add_compensated with c's own addition compensated too (Fast2Sum, its error into d):
// the TwoSum error e of s + y has |e| <= |y| (s is a float within |y| of s + y), and
// c + d keeps the sum of the e's as add_biased (arch/softmax_exp.hpp) states: to about
// u of the sum of |y|, where c alone lost up to u |c| per term (the softmax strips,
// whose lanes may hold only a dominant maximum's 1 and thousands of tiny terms).
template <class B>
inline void add_compensated(B& s, B& c, B& d, const B& y) noexcept {
    const B t = s + y;
    const B y_part = t - s;
    const B e = (s - (t - y_part)) + (y - y_part);
    const B c_new = c + e;
    d += (c - c_new) + e;
    c = c_new;
    s = t;
}

// exp(x - m), with x - m carried as a double-word hi + lo so that the
// rounding of a large difference (|x - m| up to 1400 gives an error of 2^-43
// in the exponent, i.e. 256 eps in the result) does not reach the result:
// exp(hi + lo) = exp(hi) * (1 + lo) to within lo^2.
// Contract: m finite or NaN; x any value; returns exp(x - m) within the exp
// kernel's 1 ULP plus 1/2 ULP, 0 for x = -inf, NaN for NaN.
template <class B>
inline B exp_difference(const B& x, const B& m) noexcept {
    const B hi = x - m;
    B lo = lse::difference_error(x, m, hi);
    lo = xsimd::select(xsimd::abs(hi) < B(std::numeric_limits<typename B::value_type>::infinity()),
                       lo, B(typename B::value_type(0)));
    const B e = kernels::exp_kernel(hi);
    return kernels::detail::fused_madd(e, lo, e);
}

// Rescales a lane triple to the maximum m_new >= m (lanes where m_new == m scale by
// exp_difference(m, m) = 1 exactly), the one rescaling of fold, the blocks and the strips.
template <class B>
inline void rescale_to(const B& m_new, B& m, B& s, B& c) noexcept {
    const B scale = exp_difference(m, m_new);
    s *= scale;
    c *= scale;
    m = m_new;
}

// Folds one batch of elements (weights w when HasB) into one lane triple.
template <bool HasB, class B>
inline void fold(B& m, B& s, B& c, B x, const B& w) noexcept {
    using T = typename B::value_type;
    if constexpr (HasB) x = xsimd::select(w == B(T(0)), B(minus_infinity<T>()), x);
    const auto larger = x > m;
    if (xsimd::any(larger)) {
        // A new maximum: rescale the lane's sum to it. Rare after the first
        // few batches of typical data; every batch for sorted data.
        rescale_to(B(xsimd::select(larger, x, m)), m, s, c);
        B y = kernels::exp_kernel(x - m);
        if constexpr (HasB) y *= w;
        add_compensated(s, c, y);
        return;
    }
    B y = kernels::exp_kernel(x - m);
    if constexpr (HasB) {
        add_compensated(s, c, y * w);
    } else {
        // No new maximum and no weights: y = exp(x - m) <= 1 <= s (the
        // lane's maximum contributed exactly exp(0) = 1; s = 0 only before
        // any finite element, where the sum is exact anyway), so Fast2Sum's
        // three operations give the exact error.
        const B t = s + y;
        c += (s - t) + y;
        s = t;
    }
}

// The max / min passes' steps: take_larger(x, top) = xsimd::select(x > top, x, top) and
// take_smaller(x, low) = select(x < low, x, low), NaN elements skipped (the comparison is
// false, the running value kept). x86's maxpd / minpd (ps) compute exactly these selects,
// the second operand where either is NaN or both are zeros, in one instruction where
// xsimd's select is a compare and a blend; other levels keep the select. Larger picks the
// direction: one body for both.
template <bool Larger, class B>
inline B take_extreme(const B& x, const B& kept) noexcept {
    using T = typename B::value_type;
    [[maybe_unused]] constexpr bool f64 = std::is_same<T, double>::value;
#if defined(__AVX512F__)
    if constexpr (kernels::detail::is_avx512<Arch>) {
        if constexpr (f64) return B(Larger ? _mm512_max_pd(x, kept) : _mm512_min_pd(x, kept));
        else return B(Larger ? _mm512_max_ps(x, kept) : _mm512_min_ps(x, kept));
    } else
#endif
#if defined(__AVX__)
        if constexpr (std::is_base_of<xsimd::avx, Arch>::value) {
        if constexpr (f64) return B(Larger ? _mm256_max_pd(x, kept) : _mm256_min_pd(x, kept));
        else return B(Larger ? _mm256_max_ps(x, kept) : _mm256_min_ps(x, kept));
    } else
#endif
#if defined(__SSE2__)
        if constexpr (std::is_base_of<xsimd::sse2, Arch>::value) {
        if constexpr (f64) return B(Larger ? _mm_max_pd(x, kept) : _mm_min_pd(x, kept));
        else return B(Larger ? _mm_max_ps(x, kept) : _mm_min_ps(x, kept));
    } else
#endif
    {
        return xsimd::select(Larger ? x > kept : x < kept, x, kept);
    }
}

template <class B>
inline B take_larger(const B& x, const B& top) noexcept {
    return take_extreme<true>(x, top);
}

template <class B>
inline B take_smaller(const B& x, const B& low) noexcept {
    return take_extreme<false>(x, low);
}

// True in the lanes where a block whose elements have minimum `low` (NaN elements skipped)
// must take fold's per-batch path once the lane's maximum is m (the block's maximum where
// that is larger): an x - m outside the unchecked exps' range (below -fast_lim: tiny or zero
// results, -inf elements, or +inf's m), or a NaN low (a block starting with NaN). Elsewhere
// every x - m of the block is in [-fast_lim, 0] (rounding is monotone). There the contiguous
// run's blocks are rescaled once to their maximum where it is new (rescale_to) and take their
// terms from lse_term_exp (kernels/lse_exp.hpp: relative error below 1.75 u where exp_kernel
// keeps 1.02 u, u = 2^-53; no test); strip pairs take exp_kernel_nofix (exp_kernel's bits;
// see strip_fold_pair). Which blocks go which way depends only on the elements and the
// block's position in the run, so results are the same for any thread count. A NaN element
// inside such a block gives a NaN term, as in fold (the payload may differ;
// finish_logsumexp recomputes every non-finite result from the elements).
//
// Accuracy (float64): with M the maximum and S = sum exp(x - M) >= 1, the result M + log S
// takes an absolute error of at most (max|theta| + max|beta|) (S - 1) / S from relative
// errors theta of the terms and beta of the plain block sums (each lane's first maximum
// contributes exp(0) = 1 exactly in every kernel and enters (s, c) exactly: through fold, or
// through a compensated block, since a block that raises a lane's maximum sums its terms one
// by one with TwoSum; the compensated sums and rescales add nothing of first order).
// Terms: lse_term_exp's |theta| < 1.75 u against exp_kernel's 1.02 u (1.10 u for float64 at
// avx2_fma and neon64, whose exp_kernel is exp.hpp's table form: 0.04 eps (S - 1) / S more).
// Plain block sums
// (blocks that raise no lane's maximum): each accumulator's 8 terms, all in (0, 1], are
// added in a balanced tree of depth 3 and only the total goes through TwoSum. An addition's
// rounding is at most u times its (positive) sum, and each term lies under 3 additions, so
// the total is within 3 u (1 + 3 u) of the exact sum of its terms: |beta| < 3.01 u, whatever
// the magnitudes (one dominant term and tiny ones included: the bound is relative to the
// block's own total, which is part of S - 1, never holding a lane's first maximum). So
// against exp_kernel's terms compensated one by one (fold), at most (0.73 + 3.01) u
// (S - 1) / S = 1.87 eps (S - 1) / S more, which for M >= 0 is at most 1.87 eps relative to
// the result (M + log S >= log S >= (S - 1) / S); with the final rounding and log's error
// (< 1.5 eps together) the total stays below the documented 4 eps. float32 lanes (terms
// from exp_kernel_nofix, <= 1 ULP, sums in float32): the same argument gives at most
// (1.02 + 3.01) u_32 (S - 1) / S, about 2 eps of float32, before the result's rounding to
// float32 (its log is taken in double). Results that are small only through cancellation
// (M < 0 < ...) are ill-conditioned (docs/accuracy.md).
template <class B>
inline auto needs_fold(const B& low, const B& m) noexcept {
    using T = typename B::value_type;
    const B floor(-kernels::detail::exp_consts<T>::fast_lim);
    return ~((low - m) >= floor);
}

// --------------------------------------------------------------- runs

template <class T>
void run_init(RunLaneState<T>& state) noexcept {
    state.lanes = run_unroll * Batch<T>::size;
    for (std::size_t k = 0; k < state.lanes; ++k) {
        state.m[k] = lowest<T>();
        state.s[k] = T(0);
        state.c[k] = T(0);
    }
}

// Contract: folds n strided elements into the lanes of `state` (see
// ReduceKernels::run_accumulate). The lane an element lands in depends only
// on its index in the run, so results do not depend on threads.
template <class T, bool HasB>
NUMFUSE_REDUCE_FLATTEN void run_accumulate_impl(const char* a, std::ptrdiff_t a_stride,
                                                const char* b, std::ptrdiff_t b_stride,
                                                std::size_t n, RunLaneState<T>& state) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    constexpr std::size_t block = run_unroll * width;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    static_assert(run_unroll == 4, "the main loop below is unrolled by hand");
    // Four named accumulators, unrolled by hand: with an array indexed in a
    // loop GCC keeps the state on the stack, and the store-to-load latency
    // then bounds the loop instead of the arithmetic.
    B m0 = B::load_aligned(state.m), m1 = B::load_aligned(state.m + width),
      m2 = B::load_aligned(state.m + 2 * width), m3 = B::load_aligned(state.m + 3 * width);
    B s0 = B::load_aligned(state.s), s1 = B::load_aligned(state.s + width),
      s2 = B::load_aligned(state.s + 2 * width), s3 = B::load_aligned(state.s + 3 * width);
    B c0 = B::load_aligned(state.c), c1 = B::load_aligned(state.c + width),
      c2 = B::load_aligned(state.c + 2 * width), c3 = B::load_aligned(state.c + 3 * width);
    const B one(T(1));
    std::size_t i = 0;
    if (a_stride == elem && (!HasB || b_stride == elem || b_stride == 0)) {
        const T* pa = reinterpret_cast<const T*>(a);
        const T* pb = reinterpret_cast<const T*>(b);
        B w0 = one, w1 = one, w2 = one, w3 = one;
        if constexpr (HasB) {
            if (b_stride == 0) {
                T w;
                std::memcpy(&w, b, sizeof(T));
                w0 = w1 = w2 = w3 = B(w);
            }
        }
        constexpr std::size_t span = run_block_rows * block;
        // Short runs (fewer than run_block_min blocks): every lane takes the maximum of the
        // run's whole rows first, provided the whole rows pass needs_fold against it (else
        // they all go through the per-batch fold, as before). A block then raises no
        // maximum, and one that holds a lane's maximum (top == m) is summed compensated,
        // as a block raising it would be: each lane's first maximum still enters (s, c)
        // exactly, which is all needs_fold's error analysis asks of the blocks.
        bool premaxed = false;
        // Each accumulator's lanes' largest and smallest element over `rows` rows of
        // run_unroll batches from p (maxpd / minpd: a NaN after the first row is skipped,
        // one in the first row kept).
        const auto extremes = [](const T* p, std::size_t rows, B& top0, B& top1, B& top2, B& top3,
                                 B& low0, B& low1, B& low2, B& low3) noexcept {
            top0 = B::load_unaligned(p);
            top1 = B::load_unaligned(p + width);
            top2 = B::load_unaligned(p + 2 * width);
            top3 = B::load_unaligned(p + 3 * width);
            low0 = top0;
            low1 = top1;
            low2 = top2;
            low3 = top3;
            for (std::size_t r = 1; r < rows; ++r) {
                const T* q = p + r * block;
                const B x0 = B::load_unaligned(q), x1 = B::load_unaligned(q + width),
                        x2 = B::load_unaligned(q + 2 * width),
                        x3 = B::load_unaligned(q + 3 * width);
                top0 = take_larger(x0, top0);
                top1 = take_larger(x1, top1);
                top2 = take_larger(x2, top2);
                top3 = take_larger(x3, top3);
                low0 = take_smaller(x0, low0);
                low1 = take_smaller(x1, low1);
                low2 = take_smaller(x2, low2);
                low3 = take_smaller(x3, low3);
            }
        };
        if (!HasB && n >= span && n < run_block_min * span) {
            B top0, top1, top2, top3, low0, low1, low2, low3;
            extremes(pa, n / block, top0, top1, top2, top3, low0, low1, low2, low3);
            const B mn0 = take_larger(top0, m0), mn1 = take_larger(top1, m1),
                    mn2 = take_larger(top2, m2), mn3 = take_larger(top3, m3);
            if (!xsimd::any(needs_fold(low0, mn0) | needs_fold(low1, mn1) | needs_fold(low2, mn2) |
                            needs_fold(low3, mn3))) {
                rescale_to(mn0, m0, s0, c0);
                rescale_to(mn1, m1, s1, c1);
                rescale_to(mn2, m2, s2, c2);
                rescale_to(mn3, m3, s3, c3);
                premaxed = true;
            }
        }
        if (!HasB && (premaxed || n >= run_block_min * span)) {
            // Blocks of run_block_rows rows: a max / min pass, then, for the usual block
            // (every x - m in the unchecked exp's range once the lane takes the block's
            // maximum: needs_fold), the terms from lse_term_exp with no test at all; other
            // blocks take the per-batch loop's fold.
            static_assert(run_block_rows == 8, "fast_block's tree sums 8 terms");
            // One accumulator's batches of a block, at q, q + block, ... Plain: the terms
            // summed as a balanced tree, the block's total then added to (s, c) by TwoSum
            // (the total may exceed s, so not Fast2Sum). Compensated (blocks that raised some
            // lane's maximum, whose exp(0) = 1 must enter (s, c) exactly): each term by
            // TwoSum, as fold does. The error of either is stated at needs_fold.
            const auto fast_block = [](auto compensated, const T* q, const B& m, B& s, B& c) {
                const auto term = [&](std::size_t r) {
                    return kernels::lse_term_exp(B::load_unaligned(q + r * block) - m);
                };
                if constexpr (decltype(compensated)::value) {
                    for (std::size_t r = 0; r < run_block_rows; ++r) add_compensated(s, c, term(r));
                } else {
                    const B y01 = term(0) + term(1);
                    const B y23 = term(2) + term(3);
                    const B y45 = term(4) + term(5);
                    const B y67 = term(6) + term(7);
                    add_compensated(s, c, (y01 + y23) + (y45 + y67));
                }
            };
            for (; i + span <= n; i += span) {
                const T* p = pa + i;
                B top0, top1, top2, top3, low0, low1, low2, low3;
                extremes(p, run_block_rows, top0, top1, top2, top3, low0, low1, low2, low3);
                // Each lane's maximum after the block (maxpd: a NaN top, a block starting
                // with NaN, keeps m; its NaN low sends the block to fold).
                const B mn0 = take_larger(top0, m0), mn1 = take_larger(top1, m1),
                        mn2 = take_larger(top2, m2), mn3 = take_larger(top3, m3);
                if (xsimd::any(needs_fold(low0, mn0) | needs_fold(low1, mn1) |
                               needs_fold(low2, mn2) | needs_fold(low3, mn3))) {
                    for (std::size_t r = 0; r < run_block_rows; ++r) {
                        const T* q = p + r * block;
                        fold<false>(m0, s0, c0, B::load_unaligned(q), one);
                        fold<false>(m1, s1, c1, B::load_unaligned(q + width), one);
                        fold<false>(m2, s2, c2, B::load_unaligned(q + 2 * width), one);
                        fold<false>(m3, s3, c3, B::load_unaligned(q + 3 * width), one);
                    }
                    continue;
                }
                // A new maximum in some lane (most blocks of a chunk's first few dozen, on
                // unordered data): one rescale per lane for the whole block, as the strips
                // do, instead of fold's per-batch path. One accumulator at a time (each still
                // sees its elements in order): its state and the exp's constants fit the
                // registers, where all four states did not (AVX2: 16 registers).
                const bool raises =
                    premaxed ? xsimd::any((top0 >= m0) | (top1 >= m1) | (top2 >= m2) | (top3 >= m3))
                             : xsimd::any((top0 > m0) | (top1 > m1) | (top2 > m2) | (top3 > m3));
                if (raises) {
                    rescale_to(mn0, m0, s0, c0);
                    rescale_to(mn1, m1, s1, c1);
                    rescale_to(mn2, m2, s2, c2);
                    rescale_to(mn3, m3, s3, c3);
                    const std::true_type compensated;
                    fast_block(compensated, p, m0, s0, c0);
                    fast_block(compensated, p + width, m1, s1, c1);
                    fast_block(compensated, p + 2 * width, m2, s2, c2);
                    fast_block(compensated, p + 3 * width, m3, s3, c3);
                    continue;
                }
                const std::false_type plain;
                fast_block(plain, p, m0, s0, c0);
                fast_block(plain, p + width, m1, s1, c1);
                fast_block(plain, p + 2 * width, m2, s2, c2);
                fast_block(plain, p + 3 * width, m3, s3, c3);
            }
            // A premaxed run's whole rows after its last block passed needs_fold with
            // the blocks: their terms compensated one by one, as a compensated block's.
            if (premaxed) {
                for (; i + block <= n; i += block) {
                    const T* q = pa + i;
                    add_compensated(s0, c0, kernels::lse_term_exp(B::load_unaligned(q) - m0));
                    add_compensated(s1, c1,
                                    kernels::lse_term_exp(B::load_unaligned(q + width) - m1));
                    add_compensated(s2, c2,
                                    kernels::lse_term_exp(B::load_unaligned(q + 2 * width) - m2));
                    add_compensated(s3, c3,
                                    kernels::lse_term_exp(B::load_unaligned(q + 3 * width) - m3));
                }
            }
        }
        for (; i + block <= n; i += block) {
            if constexpr (HasB) {
                if (b_stride != 0) {
                    w0 = B::load_unaligned(pb + i);
                    w1 = B::load_unaligned(pb + i + width);
                    w2 = B::load_unaligned(pb + i + 2 * width);
                    w3 = B::load_unaligned(pb + i + 3 * width);
                }
            }
            fold<HasB>(m0, s0, c0, B::load_unaligned(pa + i), w0);
            fold<HasB>(m1, s1, c1, B::load_unaligned(pa + i + width), w1);
            fold<HasB>(m2, s2, c2, B::load_unaligned(pa + i + 2 * width), w2);
            fold<HasB>(m3, s3, c3, B::load_unaligned(pa + i + 3 * width), w3);
        }
    }
    m0.store_aligned(state.m);
    m1.store_aligned(state.m + width);
    m2.store_aligned(state.m + 2 * width);
    m3.store_aligned(state.m + 3 * width);
    s0.store_aligned(state.s);
    s1.store_aligned(state.s + width);
    s2.store_aligned(state.s + 2 * width);
    s3.store_aligned(state.s + 3 * width);
    c0.store_aligned(state.c);
    c1.store_aligned(state.c + width);
    c2.store_aligned(state.c + 2 * width);
    c3.store_aligned(state.c + 3 * width);
    // Strided runs and the tail: batch by batch through load_lanes, on the
    // state in memory (indexing the register arrays with a run-time k would
    // push them out of registers in the main loop too). Padding lanes read
    // -inf with weight 0, which adds nothing (kernel_table.hpp).
    for (std::size_t k = 0; i < n; k = (k + 1) % run_unroll) {
        const std::size_t count = n - i < width ? n - i : width;
        const auto offset = static_cast<std::ptrdiff_t>(i);
        const B x = load_lanes<T>(a + offset * a_stride, a_stride, count, minus_infinity<T>());
        B w = one;
        if constexpr (HasB) w = load_lanes<T>(b + offset * b_stride, b_stride, count, T(0));
        B mk = B::load_aligned(state.m + k * width);
        B sk = B::load_aligned(state.s + k * width);
        B ck = B::load_aligned(state.c + k * width);
        fold<HasB>(mk, sk, ck, x, w);
        mk.store_aligned(state.m + k * width);
        sk.store_aligned(state.s + k * width);
        ck.store_aligned(state.c + k * width);
        i += count;
    }
}

template <class T>
void run_accumulate(const char* a, std::ptrdiff_t a_stride, const char* b, std::ptrdiff_t b_stride,
                    std::size_t n, RunLaneState<T>& state) noexcept {
    if (b != nullptr) {
        run_accumulate_impl<T, true>(a, a_stride, b, b_stride, n, state);
    } else {
        run_accumulate_impl<T, false>(a, a_stride, b, b_stride, n, state);
    }
}

// Contract: the lanes' triples merged into one: m = the largest lane
// maximum, each lane rescaled by exp_difference, then summed lane 0, 1, ...
// with TwoSum (a fixed order: the same bits for the same state).
template <class T>
NUMFUSE_REDUCE_FLATTEN ReducePartial<T> run_finish(const RunLaneState<T>& state) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    T m_max = lowest<T>();
    for (std::size_t k = 0; k < state.lanes; ++k) {
        if (state.m[k] > m_max) m_max = state.m[k];
    }
    alignas(64) T s[RunLaneState<T>::capacity];
    alignas(64) T c[RunLaneState<T>::capacity];
    const B m_all(m_max);
    for (std::size_t k = 0; k < state.lanes; k += width) {
        const B scale = exp_difference(B::load_aligned(state.m + k), m_all);
        (B::load_aligned(state.s + k) * scale).store_aligned(s + k);
        (B::load_aligned(state.c + k) * scale).store_aligned(c + k);
    }
    // error's own additions keep their rounding errors too (in extra): where one lane's
    // exp(0) = 1 holds sum at 1, error carries every other term, and log(sum + error) ~ error
    // needs it to a few u of itself (see merged in reduce/fold.hpp).
    T sum = T(0);
    T error = T(0);
    T extra = T(0);
    for (std::size_t k = 0; k < state.lanes; ++k) {
        T t, e, partial, e_partial;
        lse::two_sum(sum, s[k], t, e);
        lse::two_sum(error, e, partial, e_partial);
        lse::two_sum(partial, c[k], error, e);
        extra += e_partial + e;
        sum = t;
    }
    return {m_max, sum, error + extra};
}

// --------------------------------------------------------------- strips

// Folds `rows` consecutive steps of one batch of lanes, finding the block's
// maximum first so the state is rescaled at most once per block.
template <class T, bool HasB, std::size_t Rows>
inline void strip_fold_block(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step,
                             const char* b, std::ptrdiff_t b_lane, std::ptrdiff_t b_step,
                             std::size_t count, Batch<T>& m, Batch<T>& s, Batch<T>& c) noexcept {
    using B = Batch<T>;
    B x[Rows];
    B w[Rows];
    for (std::size_t r = 0; r < Rows; ++r) {
        const auto row = static_cast<std::ptrdiff_t>(r);
        x[r] = load_lanes<T>(a + row * a_step, a_lane, count, minus_infinity<T>());
        if constexpr (HasB) {
            w[r] = load_lanes<T>(b + row * b_step, b_lane, count, T(0));
            x[r] = xsimd::select(w[r] == B(T(0)), B(minus_infinity<T>()), x[r]);
        } else {
            w[r] = B(T(1));
        }
    }
    B block_max = x[0];
    for (std::size_t r = 1; r < Rows; ++r)
        block_max = xsimd::select(x[r] > block_max, x[r], block_max);
    const auto larger = block_max > m;
    if (HasB || xsimd::any(larger)) {
        rescale_to(B(xsimd::select(larger, block_max, m)), m, s, c);
        for (std::size_t r = 0; r < Rows; ++r) {
            B y = kernels::exp_kernel(x[r] - m);
            if constexpr (HasB) y *= w[r];
            add_compensated(s, c, y);
        }
        return;
    }
    // No new maximum, no weights: every term is <= 1 <= s (see fold).
    for (std::size_t r = 0; r < Rows; ++r) {
        const B y = kernels::exp_kernel(x[r] - m);
        const B t = s + y;
        c += (s - t) + y;
        s = t;
    }
}

// The common case of strip_fold_block (contiguous lanes, full batches, no
// weights, a full block) for two neighbouring batches at once: two
// independent accumulation chains, and loads straight from memory (L1-hot
// on the second read) instead of an array spilled to the stack.
template <class T>
inline void strip_fold_pair(const char* a, std::ptrdiff_t a_step, Batch<T>& m0, Batch<T>& s0,
                            Batch<T>& c0, Batch<T>& m1, Batch<T>& s1, Batch<T>& c1) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    const auto row = [&](std::size_t r, std::size_t k) {
        return B::load_unaligned(
            reinterpret_cast<const T*>(a + static_cast<std::ptrdiff_t>(r) * a_step) + k * width);
    };
    B top0 = row(0, 0);
    B top1 = row(0, 1);
    B low0 = top0;
    B low1 = top1;
    for (std::size_t r = 1; r < strip_block; ++r) {
        const B x0 = row(r, 0);
        const B x1 = row(r, 1);
        top0 = take_larger(x0, top0);
        top1 = take_larger(x1, top1);
        low0 = take_smaller(x0, low0);
        low1 = take_smaller(x1, low1);
    }
    const auto larger0 = top0 > m0;
    const auto larger1 = top1 > m1;
    if (xsimd::any(larger0) || xsimd::any(larger1)) {
        // Rare: rescale both (lanes without a new maximum scale by exactly 1).
        rescale_to(B(xsimd::select(larger0, top0, m0)), m0, s0, c0);
        rescale_to(B(xsimd::select(larger1, top1, m1)), m1, s1, c1);
        for (std::size_t r = 0; r < strip_block; ++r) {
            add_compensated(s0, c0, kernels::exp_kernel(row(r, 0) - m0));
            add_compensated(s1, c1, kernels::exp_kernel(row(r, 1) - m1));
        }
        return;
    }
    // Fast2Sum: every term is <= 1 <= s (see fold). The exps need no test unless some
    // x - m lies outside exp_kernel_nofix's range (needs_fold); there it equals exp_kernel
    // bit for bit, so a lane's bits do not depend on its neighbours' path: contiguous lanes
    // (pairs) and strided ones (strip_fold_block, batch by batch) agree, which
    // lse_term_exp's terms would break (tests/test_softmax_columns.py).
    const auto add_block = [&](auto exp) {
        for (std::size_t r = 0; r < strip_block; ++r) {
            const B y0 = exp(row(r, 0) - m0);
            const B y1 = exp(row(r, 1) - m1);
            const B t0 = s0 + y0;
            const B t1 = s1 + y1;
            c0 += (s0 - t0) + y0;
            c1 += (s1 - t1) + y1;
            s0 = t0;
            s1 = t1;
        }
    };
    if (xsimd::any(needs_fold(low0, m0) | needs_fold(low1, m1))) {
        add_block([](const B& d) { return kernels::exp_kernel(d); });
    } else {
        add_block([](const B& d) { return kernels::exp_kernel_nofix(d); });
    }
}

template <class T, bool HasB>
NUMFUSE_REDUCE_FLATTEN void strip_accumulate_impl(const char* a, std::ptrdiff_t a_lane,
                                                  std::ptrdiff_t a_step, const char* b,
                                                  std::ptrdiff_t b_lane, std::ptrdiff_t b_step,
                                                  std::size_t lanes, std::size_t steps, T* m_state,
                                                  T* s_state, T* c_state) noexcept {
    using B = Batch<T>;
    constexpr std::size_t width = B::size;
    // Rows outside, lanes inside: the memory is read row by row, as a
    // stream, and the lane state (a few KiB) stays in L1.
    for (std::size_t r0 = 0; r0 < steps; r0 += strip_block) {
        const std::size_t rows = steps - r0 < strip_block ? steps - r0 : strip_block;
        const auto row_offset = static_cast<std::ptrdiff_t>(r0);
        std::size_t j = 0;
        if (!HasB && rows == strip_block && a_lane == static_cast<std::ptrdiff_t>(sizeof(T))) {
            for (; j + 2 * width <= lanes; j += 2 * width) {
                B m0 = B::load_unaligned(m_state + j), m1 = B::load_unaligned(m_state + j + width);
                B s0 = B::load_unaligned(s_state + j), s1 = B::load_unaligned(s_state + j + width);
                B c0 = B::load_unaligned(c_state + j), c1 = B::load_unaligned(c_state + j + width);
                strip_fold_pair<T>(
                    a + row_offset * a_step + static_cast<std::ptrdiff_t>(j) * a_lane, a_step, m0,
                    s0, c0, m1, s1, c1);
                m0.store_unaligned(m_state + j);
                m1.store_unaligned(m_state + j + width);
                s0.store_unaligned(s_state + j);
                s1.store_unaligned(s_state + j + width);
                c0.store_unaligned(c_state + j);
                c1.store_unaligned(c_state + j + width);
            }
        }
        for (; j < lanes; j += width) {
            const std::size_t count = lanes - j < width ? lanes - j : width;
            const auto lane_offset = static_cast<std::ptrdiff_t>(j);
            const char* pa = a + row_offset * a_step + lane_offset * a_lane;
            const char* pb = HasB ? b + row_offset * b_step + lane_offset * b_lane : nullptr;
            // A last, partial batch must not load and store the state lanes past `lanes`:
            // they are other outputs' states, which another thread may be updating (their
            // stale values stored back would undo its work). It goes through a local copy.
            alignas(64) T tail_m[width], tail_s[width], tail_c[width];
            T* pm = m_state + j;
            T* ps = s_state + j;
            T* pc = c_state + j;
            if (count < width) {
                for (std::size_t k = 0; k < width; ++k) {
                    tail_m[k] = k < count ? pm[k] : std::numeric_limits<T>::lowest();
                    tail_s[k] = k < count ? ps[k] : T(0);
                    tail_c[k] = k < count ? pc[k] : T(0);
                }
                pm = tail_m;
                ps = tail_s;
                pc = tail_c;
            }
            B m = B::load_unaligned(pm);
            B s = B::load_unaligned(ps);
            B c = B::load_unaligned(pc);
            if (rows == strip_block) {
                strip_fold_block<T, HasB, strip_block>(pa, a_lane, a_step, pb, b_lane, b_step,
                                                       count, m, s, c);
            } else {
                for (std::size_t r = 0; r < rows; ++r) {
                    const auto row = static_cast<std::ptrdiff_t>(r);
                    strip_fold_block<T, HasB, 1>(pa + row * a_step, a_lane, a_step,
                                                 HasB ? pb + row * b_step : nullptr, b_lane, b_step,
                                                 count, m, s, c);
                }
            }
            m.store_unaligned(pm);
            s.store_unaligned(ps);
            c.store_unaligned(pc);
            if (count < width) {
                for (std::size_t k = 0; k < count; ++k) {
                    m_state[j + k] = tail_m[k];
                    s_state[j + k] = tail_s[k];
                    c_state[j + k] = tail_c[k];
                }
            }
        }
    }
}

// Contract: see ReduceKernels::strip_accumulate.
template <class T>
void strip_accumulate(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step, const char* b,
                      std::ptrdiff_t b_lane, std::ptrdiff_t b_step, std::size_t lanes,
                      std::size_t steps, T* m, T* s, T* c) noexcept {
    if (b != nullptr) {
        strip_accumulate_impl<T, true>(a, a_lane, a_step, b, b_lane, b_step, lanes, steps, m, s, c);
    } else {
        strip_accumulate_impl<T, false>(a, a_lane, a_step, b, b_lane, b_step, lanes, steps, m, s,
                                        c);
    }
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops
