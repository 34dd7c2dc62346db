// exp2(x) = 2^x for float64 and float32 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   exp2_kernel(batch<double>) / exp2_kernel(batch<float>): 2^x per lane.
//   Max error <= 1 ULP against the correctly rounded result, every level and dtype
//   (tests/test_accuracy.py and tests/test_evaluate_accuracy.py check it against mpmath).
//   Valid range: all inputs.
//     x >= 1024 (f64) / 128 (f32) -> +inf; 2^x just below, e.g. 2^1023.9, is finite
//     results below the smallest normal are correctly scaled subnormals (rounded once),
//     +0 at and below -1075 (f64) / -150 (f32)
//     exp2(+inf) = +inf, exp2(-inf) = +0, exp2(+-0) = 1, exp2(integer n) = 2^n exactly
//     exp2(NaN) = the input quieted (payload and sign kept), as np.exp2 returns it for
//     float32 and float64 (unlike np.exp's float32 loop).
//   Floating-point status flags raised inside are meaningless (the ufunc loop computes
//   them: overflow, underflow where the result is below the smallest normal and inexact).
//   float32 lanes are widened, computed by the float64 kernel and rounded once
//   (<= 0.5 + 2^-28 float32 ULP; float32 subnormal results rounded once); below AVX-512
//   clamped to [-160, 160] first and taken through the float64 core alone, with no branch
//   (the same bits: exp2_f32_widened).
//   xsimd's exp2 is no such kernel: it flushes float64 results below 2^-1022 to zero and
//   gives exp2(1023.9) = inf.
//
// Methods (float64)
//   AVX-512: x = (16 k + j)/16 + f, 16k + j = round(16 x) by the 1.5*2^52 shifter (16 x is
//     exact), f = x - (16k + j)/16 exact, |f| <= 1/32; r = RN(f ln2), |r| <= ln2/32 (its
//     rounding, 2^-58.5 relative, costs 0.02 ULP); then exp's table path
//     (kernels/exp.hpp exp_f64_avx512_t16: 2^(j/16) from two 16-entry tables, e^r - 1 by a
//     degree-7 fit, vscalefpd rounding once; subnormal results without its assist).
//   SSE2 / AVX2 / NEON: x = k + f, k = round(x), |f| <= 1/2 exact; r = f ln2 as an exact
//     pair (dd::two_prod with RN(ln2), plus f (ln2 - RN(ln2))), |r| <= ln2/2, and exp's
//     portable polynomial and pair summation (kernels/exp.hpp exp_poly_gen); 2^k as one
//     factor while |x| <= 1022, else as two normal factors so that a subnormal result is
//     rounded once.
//   Inputs are clamped to [-1080, 1025] first, so huge arguments and infinities need no
//   path of their own.
#pragma once

#include <xsimd/xsimd.hpp>

#include <complex>
#include <cstdint>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"

namespace numfuse::kernels {
namespace detail {

struct exp2_consts {
    static constexpr double ln2_hi = 0x1.62e42fefa39efp-1;   // RN(ln2)
    static constexpr double ln2_lo = 0x1.abc9e3b39803fp-56;  // RN(ln2 - ln2_hi)
    static constexpr double lo_clamp = -1080.0;              // 2^x rounds to +0 below -1075
    static constexpr double hi_clamp = 1025.0;               // 2^x overflows from 1024
    static constexpr double fast_lim = 1022.0;               // |x| <= 1022: 2^k normal
    static constexpr float fast_lim_f32 = 126.0f;            // float32: normal, finite results
};

// Portable core: 2^x = y 2^k with y = 2^f in [0.7, 1.42] and k in the low bits of z.
template <class A>
struct Exp2Parts {
    xsimd::batch<double, A> y, z, kd;
};

template <class A>
NUMFUSE_ALWAYS_INLINE Exp2Parts<A> exp2_generic_reduce(const xsimd::batch<double, A>& xc) noexcept {
    using B = xsimd::batch<double, A>;
    using C = exp2_consts;
    const B shifter(0x1.8p52);
    const B z = xc + shifter;  // k = round(x) in the low bits (|x| <= 1080)
    const B kd = z - shifter;
    const B f = xc - kd;  // exact, |f| <= 1/2
    const dd::pair<A> p = dd::two_prod(f, B(C::ln2_hi));
    const B rh = p.hi;
    const B rl = detail::fused_madd(f, B(C::ln2_lo), p.lo);  // r = rh + rl to ~2^-105 relative
    const B q = exp_poly_gen(rh, double());
    const B s = detail::fused_madd(rh * rh, q, detail::fused_madd(rl, rh, rl));  // e^r - 1 - rh
    const B h = B(1.0) + rh;                                    // 1 + rh as an exact pair
    const B hl = (B(1.0) - h) + rh;
    return {h + (hl + s), z, kd};
}

// y 2^k while 2^k is normal (|x| <= fast_lim): one exact factor.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> exp2_generic_scale_normal(
    const Exp2Parts<A>& p) noexcept {
    using I = xsimd::batch<std::int64_t, A>;
    return p.y * as_float<double, A>((as_int(p.z) << 52) + I(std::int64_t(1023) << 52));
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> exp2_generic(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using C = exp2_consts;
    const B xc = xsimd::min(xsimd::max(x, B(C::lo_clamp)), B(C::hi_clamp));  // NaN: garbage
    const Exp2Parts<A> p = exp2_generic_reduce(xc);
    B res;
    if (xsimd::any(xsimd::abs(x) > B(C::fast_lim))) {
        res = scale_wide(p.y, p.kd);  // exp.hpp: subnormal results, overflow, rounded once
    } else {
        res = exp2_generic_scale_normal(p);
    }
    return xsimd::select(xsimd::isnan(x), x + x, res);  // x + x: the NaN quieted
}

#if defined(__AVX512F__)
// f64, AVX-512, core: valid for |x| <= 1022 only (other lanes hold garbage), bit for bit
// equal to exp2_f64_avx512 there.
inline __m512d exp2_f64_avx512_core(__m512d xc, bool tiny = false) noexcept {
    const __m512d shifter = _mm512_set1_pd(0x1.8p52);
    const __m512d z = _mm512_fmadd_pd(xc, _mm512_set1_pd(16.0), shifter);  // round(16 x)
    const __m512d kd = _mm512_sub_pd(z, shifter);
    const __m512d f = _mm512_fnmadd_pd(kd, _mm512_set1_pd(0.0625), xc);  // exact, |f| <= 1/32
    const __m512d r = _mm512_mul_pd(f, _mm512_set1_pd(exp2_consts::ln2_hi));
    return exp_f64_avx512_t16(z, kd, r, tiny);
}

inline __m512d exp2_f64_avx512(__m512d x) noexcept {
    const __m512d xc = _mm512_min_pd(_mm512_max_pd(x, _mm512_set1_pd(exp2_consts::lo_clamp)),
                                     _mm512_set1_pd(exp2_consts::hi_clamp));
    // Results below 2^-1022 or +0: scaled without vscalefpd's assist (exp.hpp).
    const bool tiny = _mm512_cmp_pd_mask(xc, _mm512_set1_pd(-1022.0), _CMP_LT_OQ) != 0;
    // NaN (quiet or signalling) -> the input quieted; everything else kept.
    return _mm512_fixupimm_pd(exp2_f64_avx512_core(xc, tiny), x, _mm512_set1_epi64(0x22), 0);
}
#endif  // __AVX512F__

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> exp2_f64(const xsimd::batch<double, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        return exp2_f64_avx512(x);
    } else
#endif
    {
        return exp2_generic(x);
    }
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> exp2_f64_core(
    const xsimd::batch<double, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        return exp2_f64_avx512_core(x);
    } else
#endif
    {
        return exp2_generic_scale_normal(exp2_generic_reduce(x));
    }
}

}  // namespace detail

// 2^x, float64 lanes: <= 1 ULP, all inputs (contract at the top).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> exp2_kernel(
    const xsimd::batch<double, Arch>& x) noexcept {
    return detail::exp2_f64(x);
}

namespace detail {

// float32 lanes below AVX-512: x clamped to [-160, 160] (as float32, before widening), then
// the float64 core, whose 2^k is normal for every such lane, and one rounding to float32
// (overflow to inf from 2^128, float32 subnormals and zeros rounded once). Bit for bit the
// float64 kernel on the widened lanes: that kernel takes this core for |x| <= 1022 and gives
// 0 / inf in float32 beyond the clamp as well. No branch: every input takes this path.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> exp2_f32_widened(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F xc = xsimd::min(xsimd::max(x, F(-160.0f)), F(160.0f));  // NaN: garbage
    xsimd::batch<double, A> lo, hi;
    widen(xc, lo, hi);
    const F res = narrow(exp2_generic_scale_normal(exp2_generic_reduce(lo)),
                         exp2_generic_scale_normal(exp2_generic_reduce(hi)));
    return xsimd::select(xsimd::isnan(x), x + x, res);  // x + x: the NaN quieted
}

}  // namespace detail

// Whether exp2_kernel_nofix(batch<T, Arch>) is the whole kernel (every lane right, no
// repair needed): float32 below AVX-512.
template <class Arch, class T>
inline constexpr bool exp2_nofix_complete =
    std::is_same<T, float>::value && !detail::is_avx512<Arch>;

namespace detail {

// float32 lanes through a float64 form `f64` (exp2_f64 or exp2_f64_core) on the widened
// lanes, rounded once; exp2_f32_widened (the whole kernel) where exp2_nofix_complete.
template <class Arch, class F64>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> exp2_f32_through(const xsimd::batch<float, Arch>& x,
                                                                 F64 f64) noexcept {
    if constexpr (exp2_nofix_complete<Arch, float>) {
        return exp2_f32_widened(x);
    } else {
        xsimd::batch<double, Arch> lo, hi;
        widen(x, lo, hi);
        return narrow(f64(lo), f64(hi));
    }
}

}  // namespace detail

// 2^x, float32 lanes: the float64 kernel on the widened lanes, rounded once.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> exp2_kernel(
    const xsimd::batch<float, Arch>& x) noexcept {
    return detail::exp2_f32_through(
        x, [](const xsimd::batch<double, Arch>& v) { return detail::exp2_f64(v); });
}

// Split form for the ufunc loop (as exp_kernel_nofix): exp2_kernel_nofix(x) equals
// exp2_kernel(x) bit for bit where exp2_special(x) is false (|x| <= 1022, float32 |x| <=
// 126: finite normal results, no floating-point condition); elsewhere it may give garbage,
// and the loop recomputes those batches with exp2_kernel, unless exp2_nofix_complete (then
// it is exp2_kernel on every lane).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> exp2_kernel_nofix(
    const xsimd::batch<double, Arch>& x) noexcept {
    return detail::exp2_f64_core(x);
}
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> exp2_kernel_nofix(
    const xsimd::batch<float, Arch>& x) noexcept {
    return detail::exp2_f32_through(
        x, [](const xsimd::batch<double, Arch>& v) { return detail::exp2_f64_core(v); });
}

template <class Arch, class T>
NUMFUSE_ALWAYS_INLINE auto exp2_special(const xsimd::batch<T, Arch>& x) noexcept {
    using B = xsimd::batch<T, Arch>;
    const T lim = std::is_same<T, double>::value ? T(detail::exp2_consts::fast_lim)
                                                 : T(detail::exp2_consts::fast_lim_f32);
    return ~(xsimd::abs(x) <= B(lim));  // ordered <=: true for NaN
}

}  // namespace numfuse::kernels

// exp2's scalar forms that the C++ library lacks (the real ones are std::exp2), for the
// ufunc's complex loops and evaluate's complex opcodes: scalar_libm::exp2
// (scalar_libm.hpp) finds them beside the C++ library's. Internal linkage, for the reason
// scalar_libm.hpp gives.
namespace numfuse::kernels::scalar_forms {
namespace {
// NumPy's complex exp2 (nc_exp2): exp(z ln2), z scaled componentwise.
template <class T>
std::complex<T> exp2(const std::complex<T>& z) {
    const T ln2 = T(0.693147180559945309417232121458176568L);
    return std::exp(std::complex<T>(z.real() * ln2, z.imag() * ln2));
}
}  // namespace
}  // namespace numfuse::kernels::scalar_forms
