// The ufunc loop operation of exp2 (arch/unary_loop.hpp's operation interface: see ExpOp
// there), in a header of its own. Included by unary_loop.hpp only, inside no namespace; it
// opens the level's namespace itself (NUMFUSE_LEVEL_NAMESPACE, defined by the per-level unit).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <limits>

#include "kernels/exp2.hpp"
#include "numfuse_core.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including exp2_op.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE {

// exp2 as exp: batches holding |x| > 1022 (float32 126) or NaN are recomputed by the full
// kernel (clamp, two-factor scaling, NaN); below that the result is a finite normal number
// and no floating-point condition arises.
struct Exp2Op {
    static constexpr bool deferrable = false;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute(const B& x) noexcept {
        return kernels::exp2_kernel(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return kernels::exp2_kernel_nofix(x);
    }
    // Where compute_fast is the whole kernel (kernels::exp2_nofix_complete: float32 below
    // AVX-512), its result stands; else the batch is recomputed.
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        if constexpr (kernels::exp2_nofix_complete<typename B::arch_type, typename B::value_type>) {
            return y;
        } else {
            return compute(x);
        }
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return kernels::exp2_special(x);
    }
    // IEEE 754's conditions, as glibc's exp2 and NumPy's float64 loop report them: overflow
    // for an infinite result of a finite x; underflow for a result below the smallest
    // normal that is inexact (0, or a subnormal 2^x with x not an integer; 2^-1074 is
    // exact and raises nothing). NumPy's float32 loop (SVML on AVX-512 machines) also
    // reports underflow for most exact subnormal powers of two and skips it for a few
    // inexact ones between 2^-150 and 2^-126; numfuse keeps IEEE's rule there.
    // flags (below) of a flagged batch at once, from vector compares.
    template <class B>
    NUMFUSE_ALWAYS_INLINE static unsigned batch_flags(const B& x, const B& y) noexcept {
        using T = typename B::value_type;
        const B inf(std::numeric_limits<T>::infinity());
        const auto finite = xsimd::abs(x) < inf;  // false for NaN
        unsigned bits = fp_none;
        if (xsimd::any(finite & (y == inf))) bits |= fp_overflow;
        const auto tiny = finite & (y < B(std::numeric_limits<T>::min()));
        if (xsimd::any(tiny & ((y == B(T(0))) | (xsimd::nearbyint(x) != x)))) bits |= fp_underflow;
        return bits;
    }
    template <class T>
    static unsigned flags(T x, T y) noexcept {
        if (!(x - x == T(0))) return fp_none;  // exp2(+-inf), exp2(NaN) are exact
        if (y == std::numeric_limits<T>::infinity()) return fp_overflow;
        if (y < std::numeric_limits<T>::min() && (y == T(0) || std::nearbyint(x) != x)) {
            return fp_underflow;
        }
        return fp_none;
    }
};

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE
