// sinh, cosh, tanh for float32 lanes (xsimd 8.1): float32 arithmetic on AVX-512, the
// float64 kernels of the float32 values elsewhere. Split from hyperbolic.hpp (whose reduction
// helpers and exp.hpp's float32 table reduction they use).
//
// Contract (per lane, <= 1 float32 ULP at every level; tests/test_exp_family_paths.py sweeps
// float32 tanh densely, tests/test_evaluate_accuracy.py all three against mpmath)
//     sinh_f32_kernel / cosh_f32_kernel(batch<float>): float32 lanes in float32 arithmetic
//     on AVX-512 (relative error below 2^-26.5 before the final rounding, <= 0.5 + 2^-2.5
//     float32 ULP), elsewhere detail::sinh_f32_in_f64 / cosh_f32_in_f64 on the widened
//     lanes (relative error below 2^-41, see there); sinh: |x| < 2^-12 returns x,
//     overflow to +-inf from 89.4159851 on, as cosh; NaN -> NaN (x + x).
//     tanh_f32_kernel(batch<float>): float32 lanes in float32 arithmetic on AVX-512
//     (relative error below 2^-26 before the one rounding, so <= 0.5 + 2^-2 float32 ULP;
//     the accuracy harness prints the measured maximum), elsewhere detail::tanh_f32_in_f64
//     on the widened lanes (~2^-30 relative, <= 0.5 + 2^-6 float32 ULP after the one
//     rounding); +-0 and |x| < 2^-12 return x, +-inf -> +-1, NaN -> NaN (x + x).
//
// Method
//     tanh for float32 lanes, AVX-512, in float32 arithmetic: as the float64 tanh, with
//             the threshold at 0.375 and y = 2 min(a, 9.125): e^y = 2^s (hi + lo) from
//             exp.hpp's float32 table reduction (exp_f32_avx512_pair, relative error below
//             2^-27.9, renormalised; eh >= 2), N / D with q from rcp14 (2^-14) and one
//             correction by the same rcp14 (2^-28); a < 0.375: a + a u G(u), G of degree
//             4 (2^-28.7; the correction is below 0.05 a). Relative error below 2^-26
//             before the final rounding, 16 lanes a vector and no division.
//     sinh, cosh for float32 lanes, AVX-512, in float32 arithmetic: e^a / 2 = H + L and
//             e^-a / 2 = MH + ML (a = |x| in [2^-12, 90], e^-a at most at 20) from
//             exp_f32_avx512_pair (2^-27.9 each) scaled by 2^(s-1) (vscalefps: H is inf
//             exactly where the result overflows), H -+ MH as an exact fast two-sum, the
//             rest added, one rounding. cosh: relative error below 2^-27.5; sinh for
//             a >= 0.5: the pairs' errors scaled by coth(a) <= 2.17, below 2^-26.5; a < 0.5:
//             a + a u G(u), G of degree 3 (2^-29.6; the correction is below 0.043 a).
//     tanh for float32 values in f64 lanes (other levels): -E / (2 + E), E = e^y - 1 =
//             2^k (1 + p) - 1 for y = -2 min(|x|, 10) = k ln2 + r, p = e^r - 1 = r + r^2 Q(r)
//             (degree-5 minimax, relative 2^-32: no cancellation, as e^y - 1 is formed
//             from p and the exact 2^k - 1 in one fused multiply-add); relative error
//             below 2^-30 before the caller's rounding (|x| < 2^-12: x, which is what
//             tanh rounds to in float32).
#pragma once

#include <xsimd/xsimd.hpp>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/hyperbolic.hpp"

namespace numfuse::kernels {

// sinh and cosh for float32 values held in f64 lanes (the levels without AVX-512): (e^a -+ e^-a) /
// 2 with a = min(|x|, 100) (from 89.42 on both round to inf in float32), each exponential from
// exp's core (<= 0.65 float64 ULP at every level). sinh's difference keeps a relative error below
// 2^-51 / (2a): below 2^-41 for a >= 2^-12, and |x| < 2^-12 returns x, which is what sinh rounds to
// in float32. So the relative error before the caller's one float32 rounding is below 2^-41
// (<= 0.5 + 2^-17 float32 ULP); no division, no subnormal operand.
namespace detail {
// The odd functions' last selects: |x| below `tiny` (where the function rounds to x) returns
// x, NaN returns x + x (the input quieted).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> odd_tiny_nan_fixup(const xsimd::batch<T, A>& x,
                                                            const xsimd::batch<T, A>& res,
                                                            T tiny) noexcept {
    using B = xsimd::batch<T, A>;
    return xsimd::select(xsimd::isnan(x), x + x, xsimd::select(xsimd::abs(x) < B(tiny), x, res));
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sinh_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::min(xsimd::abs(x), B(100.0));  // NaN: garbage, replaced below
    const B d = exp_kernel_nofix(a) - exp_kernel_nofix(-a);
    return odd_tiny_nan_fixup(x, xsimd::copysign(B(0.5) * d, x), 0x1.0p-12);
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> cosh_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::min(xsimd::abs(x), B(100.0));
    const B res = B(0.5) * (exp_kernel_nofix(a) + exp_kernel_nofix(-a));
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

#if defined(__AVX512F__)
// e^y 2^shift = h + l, a normalised pair (|l| <= ulp(h) / 2) scaled exactly by vscalefps (h is
// inf exactly where e^y 2^shift overflows), from exp_f32_avx512_pair's unrounded pair for
// |y| <= 89: the e^a of sinh / cosh (shift -1) and the e^y of tanh (shift 0).
struct ScaledF32Pair {
    __m512 h, l;
};
inline ScaledF32Pair exp_f32_scaled_pair(__m512 y, float shift) noexcept {
    const ExpF32Pair e = exp_f32_avx512_pair(y);
    const __m512 s = shift == 0.0f ? e.s : _mm512_add_ps(e.s, _mm512_set1_ps(shift));
    const __m512 m = _mm512_add_ps(e.hi, e.lo);
    return {_mm512_scalef_ps(m, s),
            _mm512_scalef_ps(_mm512_add_ps(_mm512_sub_ps(e.hi, m), e.lo), s)};
}

// sinh (Sinh) or cosh of a = |x| for float32 lanes, AVX-512, in float32 arithmetic (method at
// the top); sinh's lanes below 2^-12 return a. The caller puts the sign back and selects NaN
// lanes.
template <bool Sinh>
inline __m512 sinh_cosh_f32_avx512(__m512 a) noexcept {
    // e^a / 2 = H + L and e^-a / 2 = MH + ML from exp's unrounded pairs, a in [2^-12, 90]
    // (from 89.42 on both overflow: H is inf) and e^-a at most at 20 (beyond, below 2^-57
    // of e^a; e^-20 is normal, so no subnormal operand anywhere)
    const __m512 ac =
        _mm512_min_ps(_mm512_max_ps(a, _mm512_set1_ps(0x1.0p-12f)), _mm512_set1_ps(90.0f));
    // e^a renormalised first (hi + lo rounded), so that H overflows only where e^a / 2 does
    const ScaledF32Pair ep = exp_f32_scaled_pair(ac, -1.0f);
    const __m512 h = ep.h, l = ep.l;
    const ExpF32Pair em = exp_f32_avx512_pair(
        _mm512_sub_ps(_mm512_setzero_ps(), _mm512_min_ps(ac, _mm512_set1_ps(20.0f))));
    const __m512 sm = _mm512_sub_ps(em.s, _mm512_set1_ps(1.0f));
    const __m512 mh = _mm512_scalef_ps(em.hi, sm), ml = _mm512_scalef_ps(em.lo, sm);
    // h -+ mh as an exact fast two-sum (h > mh), the rest added once, one rounding
    __m512 res;
    if constexpr (Sinh) {
        const __m512 d = _mm512_sub_ps(h, mh);
        const __m512 t = _mm512_sub_ps(_mm512_sub_ps(h, d), mh);
        res = _mm512_add_ps(d, _mm512_add_ps(t, _mm512_sub_ps(l, ml)));
    } else {
        const __m512 d = _mm512_add_ps(h, mh);
        const __m512 t = _mm512_add_ps(_mm512_sub_ps(h, d), mh);
        res = _mm512_add_ps(d, _mm512_add_ps(t, _mm512_add_ps(l, ml)));
    }
    // h = inf (a >= 89.42): inf, not inf - inf
    res = _mm512_mask_mov_ps(res,
                             _mm512_cmp_ps_mask(h, _mm512_set1_ps(0x1.fffffep127f), _CMP_GT_OQ), h);
    if constexpr (Sinh) {
        const __mmask16 small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.5f), _CMP_LT_OQ);
        if (small != 0) {
            // a + a u G(u), u = a^2 <= 1/4: tools/explog_remez.py sinh32_small, degree 3,
            // relative error of sinh 2^-29.63 (the correction is below 0.043 a)
            const __m512 u = _mm512_mul_ps(ac, ac);
            __m512 g =
                _mm512_fmadd_ps(_mm512_set1_ps(0x1.73eb2ep-19f), u,  // 2.7710100312106078491e-6
                                _mm512_set1_ps(0x1.a0184ap-13f));  // 0.00019840949971694499254
            g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(0x1.111112p-7f));  // 0.0083333337679505348206
            g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(0x1.555556p-3f));  // 0.16666667163372039795
            res = _mm512_mask_mov_ps(res, small, _mm512_fmadd_ps(ac, _mm512_mul_ps(u, g), ac));
            // |x| < 2^-12 (computed at 2^-12: no subnormal operand) returns |x|: sinh rounds
            // to x there (only batches with a small lane can hold such a lane)
            res = _mm512_mask_mov_ps(
                res, _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_LT_OQ), a);
        }
    }
    return res;
}
#endif  // __AVX512F__
}  // namespace detail

// sinh(x) and cosh(x), float32 lanes (contract at the top): AVX-512 in float32 arithmetic,
// the other levels through sinh_f32_in_f64 / cosh_f32_in_f64 on the widened lanes.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> sinh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        using F = xsimd::batch<float, A>;
        const F res = xsimd::copysign(F(detail::sinh_cosh_f32_avx512<true>(xsimd::abs(x))), x);
        return xsimd::select(xsimd::isnan(x), x + x, res);  // tiny lanes: |x| with x's sign
    } else
#endif
    {
        xsimd::batch<double, A> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::sinh_f32_in_f64(lo), detail::sinh_f32_in_f64(hi));
    }
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> cosh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        using F = xsimd::batch<float, A>;
        const F res = detail::sinh_cosh_f32_avx512<false>(xsimd::abs(x));
        return xsimd::select(xsimd::isnan(x), x + x, res);
    } else
#endif
    {
        xsimd::batch<double, A> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::cosh_f32_in_f64(lo), detail::cosh_f32_in_f64(hi));
    }
}

namespace detail {
// tanh(x) for float32 values held in f64 lanes (see the contract above): the float32 tanh
// of the levels without AVX-512.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tanh_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // y = -2|x| = k ln2 + r; beyond |x| = 10, tanh rounds to +-1 in float32 (above 9.02)
    const B y = B(-2.0) * xsimd::min(xsimd::abs(x), B(10.0));
    const B shifter(0x1.8p52);
    const B kd = dd::fmadd(y, B(0x1.71547652b82fep+0), shifter) - shifter;  // in [-29, 0]
    const B r = (y - kd * B(0x1.62e42fefa38p-1)) - kd * B(0x1.ef35793c7673p-45);  // first exact
    // Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12): tools/explog_remez.py
    // expm1_f32, degree 5, relative error of r + r^2 Q(r) vs e^r - 1: 2^-31.96.
    const B q = detail::horner(r, 0x1.00000025f7f99p-1,  // 0.50000000442013281532
                               0x1.555554ef79b2ep-3,  // 0.16666666370221022708
                               0x1.5554b1170079dp-5,  // 0.04166636073934102541
                               0x1.111189770d58ep-7,  // 0.0083333893981983007959
                               0x1.6d7210c54fa5cp-10,  // 0.0013940642105151534666
                               0x1.a032c2cfb41dp-13);  // 0.00019845880750902914272
    const B p = dd::fmadd(r * r, q, r);  // e^r - 1
    const B s = detail::pow2i(kd);
    const B em1 = dd::fmadd(s, p, s - B(1.0));  // e^y - 1 (s - 1 exact)
    return odd_tiny_nan_fixup(x, xsimd::copysign(detail::divide(-em1, em1 + B(2.0)), x), 0x1.0p-12);
}

#if defined(__AVX512F__)
// tanh for float32 lanes, AVX-512 (method at the top); lanes below 2^-12 return a. NaN lanes:
// garbage, replaced by the caller.
inline __m512 tanh_f32_avx512(__m512 a) noexcept {
    // e^y = eh + el, y = 2 min(a, 9.125) (tanh rounds to 1 in float32 from 9.02 on),
    // normalised (|el| <= ulp(eh) / 2; the correction below is first order in el / eh), both
    // scaled exactly
    const ScaledF32Pair e = exp_f32_scaled_pair(
        _mm512_mul_ps(_mm512_set1_ps(2.0f), _mm512_min_ps(_mm512_max_ps(a, _mm512_set1_ps(0.375f)),
                                                          _mm512_set1_ps(9.125f))),
        0.0f);
    const __m512 eh = e.h, el = e.l;
    // N = e^y - 1, D = e^y + 1 as pairs (fast two-sums: eh >= 2)
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 nh = _mm512_sub_ps(eh, one);
    const __m512 nl = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(eh, nh), one), el);
    const __m512 dh = _mm512_add_ps(eh, one);
    const __m512 dl = _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(eh, dh), one), el);
    // N / D: q = nh rcp14(dh) (2^-14), the remainder N - q D (nh - q dh exact), one
    // correction by the same rcp14: 2^-28 relative
    const __m512 inv = _mm512_rcp14_ps(dh);
    const __m512 q = _mm512_mul_ps(nh, inv);
    const __m512 rem = _mm512_add_ps(_mm512_fnmadd_ps(q, dh, nh), _mm512_fnmadd_ps(q, dl, nl));
    __m512 res = _mm512_fmadd_ps(rem, inv, q);
    const __mmask16 small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.375f), _CMP_LT_OQ);
    if (small != 0) {
        // a + a u G(u), u = a^2 <= 0.375^2: tools/explog_remez.py tanh32_small, degree 4,
        // relative error of tanh 2^-28.74 (a < 2^-12 is computed at 2^-12 and replaced below)
        const __m512 as = _mm512_max_ps(a, _mm512_set1_ps(0x1.0p-12f));
        const __m512 u = _mm512_mul_ps(as, as);
        __m512 g = _mm512_fmadd_ps(_mm512_set1_ps(-0x1.ecc30ep-8f), u,  // -0.007518950384110212326
                                   _mm512_set1_ps(0x1.630702p-6f));  // 0.021669151261448860168
        g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(-0x1.b9feb2p-5f));  // -0.05395445600152015686
        g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(0x1.1110d8p-3f));  // 0.13333290815353393555
        g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(-0x1.555556p-2f));  // -0.3333333432674407959
        res = _mm512_mask_mov_ps(res, small, _mm512_fmadd_ps(as, _mm512_mul_ps(u, g), as));
        // |x| < 2^-12 returns |x| (tanh rounds to x there; only batches with a small lane can
        // hold such a lane)
        res = _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_LT_OQ),
                                 a);
    }
    return res;
}
#endif  // __AVX512F__
}  // namespace detail

// tanh(x), float32 lanes (contract at the top): AVX-512 in float32 arithmetic, the other
// levels through tanh_f32_in_f64 on the widened lanes, rounded once.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> tanh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        using F = xsimd::batch<float, A>;
        const F res = xsimd::copysign(F(detail::tanh_f32_avx512(xsimd::abs(x))), x);
        return xsimd::select(xsimd::isnan(x), x + x, res);  // tiny lanes: |x| with x's sign
    } else
#endif
    {
        xsimd::batch<double, A> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::tanh_f32_in_f64(lo), detail::tanh_f32_in_f64(hi));
    }
}

}  // namespace numfuse::kernels
