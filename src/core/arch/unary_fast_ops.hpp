// The fast path and rare path of the ufuncs exp, log and erf, shared by the ufunc loop
// (arch/unary_loop.hpp, which documents the operation interface) and the expression VM
// (arch/expr_ops.hpp, where a block of exp/log/erf runs compute_fast and recomputes only the
// batches may_raise flags), so both give the same bits by one definition.
//
// Included only by the per-level translation units (through unary_loop.hpp / expr_ops.hpp).
#pragma once

#include <xsimd/xsimd.hpp>

#include <limits>
#include <type_traits>
#include <utility>

#include "kernels/common.hpp"
#include "kernels/erf.hpp"
#include "kernels/exp.hpp"
#include "kernels/log.hpp"
#include "numfuse_core.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including unary_fast_ops.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE {

// Each operation: the SIMD kernel, a cheap per-batch test that is true only
// where a floating-point condition may arise, and the exact per-element rule
// (run only on flagged batches) that says which condition NumPy reports.
// compute_fast(x) may leave garbage in lanes where may_raise(x) is true; the runner
// then calls finish(x, y) (rare path), and compute_fast + finish == the kernel.
// Deferred test (see unary_loop) for ops whose may_raise is cheap: the or of
// Op::may_raise over the loop (AVX-512: one vfpclass and a mask or per batch), tested
// once at the end.
template <class Op>
struct OrScreen {
    static constexpr bool deferrable = true;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto screen_init() noexcept {
        return typename B::batch_bool_type(false);
    }
    template <class B, class M>
    NUMFUSE_ALWAYS_INLINE static M screen(const M& acc, const B& x) noexcept {
        return acc | Op::may_raise(x);
    }
    template <class M>
    NUMFUSE_ALWAYS_INLINE static bool screened_may_raise(const M& acc) noexcept {
        return xsimd::any(acc);
    }
};

struct ExpOp : OrScreen<ExpOp> {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute(const B& x) noexcept {
        return kernels::exp_kernel(x);
    }
    // Without the clamp and the NaN fixup; batches holding |x| > 708 (87) or
    // NaN, which the test for floating-point conditions flags anyway, are recomputed.
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return kernels::exp_kernel_nofix(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B&) noexcept {
        return compute(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        // Below the limit the result is a finite normal number: no flags; true for NaN.
        return kernels::exp_special(x);
    }
    // Deferred test (OrScreen: exp_special's one compare and an or per batch, checked once
    // per call, no branch in the loop) for float64 on SSE2 and AVX2+FMA, where the per-pair
    // test's compares, or, vtestpd and branch cost more (callgrind, AMD EPYC Zen 3). AVX-512
    // keeps the per-pair test (a deferred running max of |x| was measured 2% slower there;
    // this form was not measured on an AVX-512 machine). float32 keeps it too: it was
    // measured only when x86-64 builds still let GCC contract products and sums into fused
    // multiply-adds (the deferred loop then fused the float32 kernel differently); builds now
    // use -ffp-contract=off (CMakeLists.txt), and float32 has not been re-measured deferred.
    template <class B>
    static constexpr bool deferrable_for = !kernels::detail::is_avx512<typename B::arch_type> &&
                                           std::is_same<typename B::value_type, double>::value;
    // float32 at AVX-512 and AVX2+FMA (op_final in unary_loop.hpp): a flagged pair is computed
    // by the whole kernel alone, and its conditions are collected only until both are found.
    // On inputs spanning exp's range nearly every float32 batch holds a lane beyond +-87, and
    // the runner ran the core, then the whole kernel, then batch_flags's compares and branches
    // on each; the whole kernel on every batch instead costs its clamp, NaN select and test
    // for results below 2^-126 (AVX2+FMA: its test for |x| > 87 and NaN select) on the
    // ordinary batches too.
    template <class B>
    static constexpr bool final_for =
        (kernels::detail::is_avx512<typename B::arch_type> ||
         std::is_base_of<xsimd::fma3<xsimd::avx2>, typename B::arch_type>::value) &&
        std::is_same<typename B::value_type, float>::value;
    static constexpr unsigned possible_flags = fp_overflow | fp_underflow;
    // Batches per iteration of the deferred loop (kernels::exp_loop_single).
    template <class B>
    static constexpr bool single_for =
        kernels::exp_loop_single<typename B::value_type, typename B::arch_type>;
    // The conditions of a flagged batch at once (flags below, per lane, says the same): on
    // inputs spanning exp's range most float32 batches are flagged, and a per-lane loop of
    // unpredictable branches cost more than the kernel. A subnormal x gives 1: no underflow.
    template <class B>
    NUMFUSE_ALWAYS_INLINE static unsigned batch_flags(const B& x, const B& y) noexcept {
        using T = typename B::value_type;
        const auto finite = xsimd::abs(x) < B(std::numeric_limits<T>::infinity());
        unsigned bits = fp_none;
        if (xsimd::any(finite & (y == B(std::numeric_limits<T>::infinity())))) bits |= fp_overflow;
        if (xsimd::any(finite & (y < B(std::numeric_limits<T>::min())))) bits |= fp_underflow;
        return bits;
    }
    template <class T>
    static unsigned flags(T x, T y) noexcept {
        const bool finite = x - x == T(0);
        if (!finite) return fp_none;  // exp(±inf), exp(NaN) are exact
        if (y == std::numeric_limits<T>::infinity()) return fp_overflow;
        if (y < std::numeric_limits<T>::min()) return fp_underflow;
        return fp_none;
    }
};

struct LogOp : OrScreen<LogOp> {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute(const B& x) noexcept {
        return kernels::log_kernel(x);
    }
    // AVX-512: the special-value fixup (vfixupimm) runs only for batches holding
    // x <= 0, +inf or NaN, which the test for floating-point conditions finds anyway.
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return kernels::log_kernel_nofix(x);
    }
    // compute_fast(x) for x loaded from src (contiguous loops): the same bits.
    template <class B, class T>
    NUMFUSE_ALWAYS_INLINE static B compute_fast_at(const B& x, const T* src) noexcept {
        return kernels::log_kernel_nofix_at(x, src);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        return kernels::log_fix(x, y);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return kernels::log_special(x);  // true at least where x <= 0
    }
    // The deferred loop's test over many batches (kernels::log_screen: on AVX2+FMA float64
    // an unsigned minimum and maximum of x's words instead of the or of log_special), and
    // its batches per iteration (kernels::log_loop_single).
    template <class B>
    static constexpr bool single_for =
        kernels::log_loop_single<typename B::value_type, typename B::arch_type>;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto screen_init() noexcept {
        return kernels::log_screen_init<typename B::value_type, typename B::arch_type>();
    }
    template <class B, class M>
    NUMFUSE_ALWAYS_INLINE static M screen(const M& acc, const B& x) noexcept {
        return kernels::log_screen(acc, x);
    }
    template <class M>
    NUMFUSE_ALWAYS_INLINE static bool screened_may_raise(const M& acc) noexcept {
        return kernels::log_screened(acc);
    }
    template <class T>
    static unsigned flags(T x, T) noexcept {
        if (x == T(0)) return fp_divide_by_zero;
        if (x < T(0)) return fp_invalid;
        return fp_none;
    }
};

struct ErfOp : OrScreen<ErfOp> {
    // Deferred test as for log (OrScreen): the rescan recomputes the flagged batches from
    // the input and repairs their values with finish (erf raises no floating-point
    // conditions).
    // One batch per iteration in the deferred loop: the float64 kernels hold many values
    // live (AVX-512: table halves in registers; avx2_fma: a batch's eight coefficient
    // columns after the row transpose), and two interleaved batches would spill them.
    static constexpr bool single = true;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute(const B& x) noexcept {
        return kernels::erf_kernel(x);
    }
    // Tiny (float64) and NaN lanes (float64; float32 on avx2_fma) are repaired on the rare
    // path (erf raises no floating-point conditions, so that path only fixes values; flags
    // stay none). float32 on the other levels flags nothing.
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return kernels::erf_kernel_nofix(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        return kernels::erf_fix(x, y);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return kernels::erf_special(x);
    }
    template <class T>
    static unsigned flags(T, T) noexcept {
        return fp_none;
    }
};

// Op::compute_fast_at(x, src) (optional): compute_fast(x) for x loaded from src, the same
// bits (a kernel may read what it needs from memory instead of x's lanes); compute_fast_at
// below picks it or compute_fast.
template <class Op, class B, class T, class = void>
struct op_compute_fast_at : std::false_type {};
template <class Op, class B, class T>
struct op_compute_fast_at<
    Op, B, T,
    std::void_t<decltype(Op::compute_fast_at(std::declval<B>(), std::declval<const T*>()))>>
    : std::true_type {};
template <class Op, class B, class T>
NUMFUSE_ALWAYS_INLINE B compute_fast_at(const B& x, const T* src) noexcept {
    if constexpr (op_compute_fast_at<Op, B, T>::value) {
        return Op::compute_fast_at(x, src);
    } else {
        return Op::compute_fast(x);
    }
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE
