// arcsinh, arccosh, arctanh on AVX-512: float32 lanes in float32 arithmetic and float64
// lanes, without a division or a square root instruction.
//
// Contract
//   asinh_f32_avx512 / acosh_f32_avx512 / atanh_f32_avx512 (__m512) and the _f64_ forms
//   (__m512d): per lane, within 1 ULP (measured: docs/accuracy.md; float32 over every
//   input), special values as logpair.hpp's kernels (asinh(+-0, +-inf) = x, acosh(1) =
//   +0, acosh(x < 1) = NaN, acosh(+inf) = +inf, atanh(+-1) = +-inf, atanh(|x| > 1) = NaN;
//   a NaN x gives x quieted; the NaN of an invalid x is a default NaN, which the callers'
//   NaN policy rewrites to NumPy's). logpair.hpp's asinh/acosh/atanh kernels (float64)
//   and their _f32_ forms call them on AVX-512; the other levels keep logpair.hpp's.
//
// Method
//   Each function is the log of a value y >= 1 carried as a pair yh + yl (relative error
//   ~2^-44 float32, ~2^-100 float64), taken by log.hpp's table kernel (a hi + lo pair) plus
//   the first-order term yl / yh (rcp14 in float32, reciprocal_approx's 2^-40 in float64),
//   rounded once:
//     asinh: y = a + sqrt(1 + a^2), a = |x|, 1 + a^2 as qh + ql (two FMAs: 1 - qh is exact
//       for qh >= 1), sqrt(q) = s0 + sl (rsqrt14, Newton steps for 1/sqrt(q) to about the
//       working precision, s0 = qh r, then the residual q - s0^2 in one FMA:
//       sl = (r / 2)(q - s0^2), error ~(3/2) eps^2), yh + yl = s0 + a exactly (fast
//       two-sum, s0 > a) plus sl. The sign of x is put back.
//     acosh: y = x + sqrt(d (x + 1)), d = x - 1 exact, x + 1 as a pair (fast two-sum),
//       d (x + 1) as a pair (one FMA), the square root (error relative to sqrt(2 (x - 1)),
//       which is about the result near 1: one Newton step fewer) and y as for asinh.
//     atanh: log(q) / 2, q = (1 + a) / (1 - a) with 1 + a and 1 - a as exact pairs,
//       qh = (1 + a) r (r: rcp14 and Newton steps), the exact residual
//       rho = (1 + a) - qh (1 - a) in FMAs, so log q = log qh + rho / (1 + a) to first
//       order.
//   The pair keeps results near 0 accurate: y - 1 is about |x| (asinh, atanh) or
//   sqrt(2 (x - 1)) (acosh). Lanes below the cut-off (2^-12 float32, 2^-27 float64) return
//   x (x -+ x^3/6 is within half an ULP of x there); those lanes, like every other lane,
//   are computed on a value clamped into [cut-off / 2 or so, 2^12 (2^28)] (no operation
//   sees a subnormal: on x86 that costs a microcode assist per batch). Above 2^12 (2^28)
//   asinh and acosh are log(2 |x|) (the neglected 1 / (4 x^2) is below 2^-26 (2^-56) of
//   the result). Special lanes are repaired by one vfixupimm.
#pragma once

#include <cstdint>

#include "kernels/avx512_lanes.hpp"
#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/log.hpp"

#if defined(__AVX512F__)
namespace numfuse::kernels::detail {

// log(yh + yl) for yh >= 1 finite and |yl| <= ~2 ulp(yh) (lanes in plus_ln2: + ln2),
// rounded once; yh_rcp_src: the lanes' yh where the caller has a safer value at hand (yl = 0
// there). yl / yh by rcp14 alone: |yl / yh| <= 2^-23, so its error is 2^-37, below 1/4 ULP
// of the smallest results that come here (2^-12 asinh, 2^-11 acosh).
NUMFUSE_ALWAYS_INLINE __m512 log_f32_pair_arg(__m512 yh, __m512 yl, __m512 yh_rcp_src,
                                              __mmask16 plus_ln2) noexcept {
    const log_ps_pair p = log_f32_avx512_pair_impl<true, true>(yh, plus_ln2);
    const __m512 q = _mm512_mul_ps(yl, _mm512_rcp14_ps(yh_rcp_src));
    return _mm512_add_ps(p.hi, _mm512_add_ps(p.lo, q));
}

// sqrt(qh + ql) = s0 + sl for qh in [2^-24, 2^26] (see the method above).
struct sqrt_ps_pair {
    __m512 s0, sl;
};
NUMFUSE_ALWAYS_INLINE sqrt_ps_pair sqrt_f32_pair(__m512 qh, __m512 ql) noexcept {
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512 r = _mm512_rsqrt14_ps(qh);
    // One Newton step, r1 = r + r (1 - q r^2) / 2: 1 / sqrt(q) to ~2^-24.
    const __m512 e = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_mul_ps(qh, half), r), r, half);
    const __m512 r1 = _mm512_fmadd_ps(r, e, r);
    const __m512 s0 = _mm512_mul_ps(qh, r1);
    const __m512 d = _mm512_add_ps(_mm512_fnmadd_ps(s0, s0, qh), ql);  // q - s0^2
    return {s0, _mm512_mul_ps(_mm512_mul_ps(r1, half), d)};
}

// vfixupimm tables, float32 and float64 (one nibble per class of the classified operand:
// QNaN, SNaN, 0, +1, -inf, +inf, negative, positive; 0 keeps the computed value, 1 the
// operand, 2 the operand quieted, 3 the default NaN, 5 +inf, 8 +0).
// asinh on x: NaN -> x quieted, +-0 and +-inf -> x.
inline constexpr int asinh_fixup = 0x00110121;
// acosh on z = x - 1: NaN -> the operand quieted (x's NaN), -inf and negative (x < 1) ->
// NaN, 0 (x = 1) -> +0, +inf -> +inf, positive -> computed.
inline constexpr int acosh_fixup = 0x03530822;
// atanh on z = |x| - 1 (the sign of x is put back after): NaN -> the operand quieted,
// 0 (|x| = 1) -> +inf, positive and +inf (|x| > 1) -> NaN, negative -> computed.
inline constexpr int atanh_fixup = 0x30303522;

// float32 ------------------------------------------------------------------------------

inline __m512 asinh_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 a = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
    const __mmask16 huge = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p12f), _CMP_GT_OQ);
    const __mmask16 tiny = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_LT_OQ);
    // NaN lanes: min / max return their second operand.
    const __m512 ac =
        _mm512_max_ps(_mm512_min_ps(a, _mm512_set1_ps(0x1.0p12f)), _mm512_set1_ps(0x1.0p-12f));
    const __m512 qh = _mm512_fmadd_ps(ac, ac, one);
    const __m512 ql = _mm512_fmadd_ps(ac, ac, _mm512_sub_ps(one, qh));  // exact, rounded once
    const sqrt_ps_pair s = sqrt_f32_pair(qh, ql);
    const __m512 yh = _mm512_add_ps(s.s0, ac);
    const __m512 yl = _mm512_add_ps(_mm512_sub_ps(ac, _mm512_sub_ps(yh, s.s0)), s.sl);
    // Huge lanes: log(a) + ln2 (yl = 0 there; yh's rcp14 from the clamped lane).
    __m512 res =
        log_f32_pair_arg(_mm512_mask_mov_ps(yh, huge, a), _mm512_maskz_mov_ps(~huge, yl), yh, huge);
    res = _mm512_mask_mov_ps(avx512::sign_from(res, x), tiny, x);
    return avx512::fixup<asinh_fixup>(res, x);
}

inline __m512 acosh_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __mmask16 huge = _mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1.0p12f), _CMP_GT_OQ);
    // Clamped into [1 + 2^-23, 2^12] (NaN lanes: 2^12); x <= 1 is repaired by the fixup.
    const __m512 xc =
        _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(0x1.0p12f)), _mm512_set1_ps(0x1.000002p0f));
    const __m512 d = _mm512_sub_ps(xc, one);  // exact
    const __m512 wh = _mm512_add_ps(xc, one);
    const __m512 wl = _mm512_sub_ps(one, _mm512_sub_ps(wh, xc));  // x + 1 = wh + wl exactly
    const __m512 qh = _mm512_mul_ps(d, wh);
    const __m512 ql = _mm512_fmadd_ps(d, wl, _mm512_fmsub_ps(d, wh, qh));  // x^2 - 1 = qh + ql
    // sqrt(q) = s0 + sl without refining rsqrt14: s0 = qh r, sl = (r / 2)(q - s0^2), error
    // (3/2) 2^-28 s, below 2^-28 of both y and sqrt(2 (x - 1)) ~ acosh(x).
    const __m512 r = _mm512_rsqrt14_ps(qh);
    const __m512 s0 = _mm512_mul_ps(qh, r);
    const __m512 sl = _mm512_mul_ps(_mm512_mul_ps(r, _mm512_set1_ps(0.5f)),
                                    _mm512_add_ps(_mm512_fnmadd_ps(s0, s0, qh), ql));
    const __m512 yh = _mm512_add_ps(xc, s0);
    const __m512 yl = _mm512_add_ps(_mm512_sub_ps(s0, _mm512_sub_ps(yh, xc)), sl);
    __m512 res =
        log_f32_pair_arg(_mm512_mask_mov_ps(yh, huge, x), _mm512_maskz_mov_ps(~huge, yl), yh, huge);
    return avx512::fixup<acosh_fixup>(res, _mm512_sub_ps(x, one));
}

inline __m512 atanh_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 a = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
    const __mmask16 tiny = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_LT_OQ);
    // Clamped into [2^-12, 1 - 2^-24] (|x| >= 1 and NaN lanes: repaired by the fixup).
    const __m512 ac =
        _mm512_max_ps(_mm512_min_ps(a, _mm512_set1_ps(0x1.fffffep-1f)), _mm512_set1_ps(0x1.0p-12f));
    const __m512 nh = _mm512_add_ps(one, ac);
    const __m512 nl = _mm512_sub_ps(ac, _mm512_sub_ps(nh, one));  // 1 + a = nh + nl
    const __m512 dh = _mm512_sub_ps(one, ac);
    const __m512 dl = _mm512_sub_ps(_mm512_sub_ps(one, dh), ac);  // 1 - a = dh + dl
    __m512 r = _mm512_rcp14_ps(dh);
    r = _mm512_fmadd_ps(r, _mm512_fnmadd_ps(r, dh, one), r);
    const __m512 qh = _mm512_mul_ps(nh, r);
    // rho = (1 + a) - qh (1 - a), in FMAs (the first exact, the others rounded at ~2^-48 qh).
    const __m512 rho = _mm512_fnmadd_ps(qh, dl, _mm512_add_ps(_mm512_fnmadd_ps(qh, dh, nh), nl));
    // log q = log qh + rho / (qh (1 - a)) = log qh + rho / (1 + a) to first order;
    // |rho / (1 + a)| <= 2^-24 where results are small (qh < 2), so rcp14's 2^-14 is 2^-38
    // there, 1/8 ULP of the smallest result computed, 2^-12.
    const __m512 rn = _mm512_rcp14_ps(nh);
    const log_ps_pair p = log_f32_avx512_pair_impl<true, false>(qh, 0);
    __m512 res =
        _mm512_mul_ps(_mm512_add_ps(p.hi, _mm512_fmadd_ps(rho, rn, p.lo)), _mm512_set1_ps(0.5f));
    res = avx512::fixup<atanh_fixup>(res, _mm512_sub_ps(a, one));
    return _mm512_mask_mov_ps(avx512::sign_from(res, x), tiny, x);
}

// float64 ------------------------------------------------------------------------------

// log(xh + xl) + c_hi + c_lo, rounded once, for xh positive, normal or subnormal and
// finite, |xl| <= ulp(xh), and c = 0 or ln2 (|c_hi| <= |log xh| where c != 0); other lanes:
// garbage. No division: log.hpp's table pair of xh (relative error ~2^-61), the
// first-order term xl / xh from rcp14 (2^-40) and one correction (2^-80; the second-order
// term (xl / xh)^2 / 2 <= 2^-105 is left out, as log_core does).
inline __m512d log_sum_avx512(__m512d xh, __m512d xl, __m512d c_hi, __m512d c_lo) noexcept {
    const log_pd_pair p = log_f64_avx512_pair(xh);
    const __m512d r = dd::reciprocal_approx(xsimd::batch<double, xsimd::avx512f>(xh));
    const __m512d q0 = _mm512_mul_pd(xl, r);
    const __m512d q = _mm512_fmadd_pd(r, _mm512_fnmadd_pd(q0, xh, xl), q0);
    const __m512d sh = _mm512_add_pd(p.hi, c_hi);
    const __m512d sl = _mm512_add_pd(_mm512_sub_pd(p.hi, sh), c_hi);  // exact: |p.hi| >= |c_hi|
    return _mm512_add_pd(sh, _mm512_add_pd(sl, _mm512_add_pd(_mm512_add_pd(p.lo, q), c_lo)));
}
inline constexpr double ln2_pair_hi = 0x1.62e42fefa39efp-1, ln2_pair_lo = 0x1.abc9e3b39803fp-56;

// sqrt(qh + ql) = s0 + sl for qh in [2^-60, 2^57]; Newton: 2 steps (r to 2^-53, error of the
// pair ~2^-100 s) or 1 (r to 2^-27, error (3/2) 2^-54 s).
struct sqrt_pd_pair {
    __m512d s0, sl;
};
template <int NewtonSteps>
NUMFUSE_ALWAYS_INLINE sqrt_pd_pair sqrt_f64_pair(__m512d qh, __m512d ql) noexcept {
    const __m512d half = _mm512_set1_pd(0.5);
    const __m512d hq = _mm512_mul_pd(qh, half);
    __m512d r = _mm512_rsqrt14_pd(qh);
    for (int k = 0; k < NewtonSteps; ++k) {
        r = _mm512_fmadd_pd(r, _mm512_fnmadd_pd(_mm512_mul_pd(hq, r), r, half), r);
    }
    const __m512d s0 = _mm512_mul_pd(qh, r);
    const __m512d d = _mm512_add_pd(_mm512_fnmadd_pd(s0, s0, qh), ql);  // q - s0^2
    return {s0, _mm512_mul_pd(_mm512_mul_pd(r, half), d)};
}

// log(yh + yl) for yh >= 1 finite, |yl| <= ~2 ulp(yh); lanes in huge: log(big) + ln2 (the
// table kernel's k plus one), yl = 0 there. yl / yh from reciprocal_approx (2^-40 relative:
// 2^-92 against results >= 2^-28).
NUMFUSE_ALWAYS_INLINE __m512d log_f64_pair_arg(__m512d yh, __m512d yl, __m512d big,
                                               __mmask8 huge) noexcept {
    const log_pd_pair p = log_f64_avx512_pair_impl<true>(_mm512_mask_mov_pd(yh, huge, big), huge);
    const __m512d r = dd::reciprocal_approx(xsimd::batch<double, xsimd::avx512f>(yh));
    const __m512d q = _mm512_mul_pd(_mm512_maskz_mov_pd(~huge, yl), r);
    return _mm512_add_pd(p.hi, _mm512_add_pd(p.lo, q));
}

inline __m512d asinh_f64_avx512(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d a = _mm512_andnot_pd(_mm512_set1_pd(-0.0), x);
    const __mmask8 huge = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.0p28), _CMP_GT_OQ);
    const __mmask8 tiny = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.0p-27), _CMP_LT_OQ);
    const __m512d ac =
        _mm512_max_pd(_mm512_min_pd(a, _mm512_set1_pd(0x1.0p28)), _mm512_set1_pd(0x1.0p-28));
    const __m512d qh = _mm512_fmadd_pd(ac, ac, one);
    const __m512d ql = _mm512_fmadd_pd(ac, ac, _mm512_sub_pd(one, qh));
    const sqrt_pd_pair s = sqrt_f64_pair<2>(qh, ql);
    const __m512d yh = _mm512_add_pd(s.s0, ac);
    const __m512d yl = _mm512_add_pd(_mm512_sub_pd(ac, _mm512_sub_pd(yh, s.s0)), s.sl);
    __m512d res = avx512::sign_from(log_f64_pair_arg(yh, yl, a, huge), x);
    res = _mm512_mask_mov_pd(res, tiny, x);
    return avx512::fixup<asinh_fixup>(res, x);
}

inline __m512d acosh_f64_avx512(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const __mmask8 huge = _mm512_cmp_pd_mask(x, _mm512_set1_pd(0x1.0p28), _CMP_GT_OQ);
    const __m512d xc = _mm512_max_pd(_mm512_min_pd(x, _mm512_set1_pd(0x1.0p28)),
                                     _mm512_set1_pd(0x1.0000000000001p0));
    const __m512d d = _mm512_sub_pd(xc, one);  // exact
    const __m512d wh = _mm512_add_pd(xc, one);
    const __m512d wl = _mm512_sub_pd(one, _mm512_sub_pd(wh, xc));
    const __m512d qh = _mm512_mul_pd(d, wh);
    const __m512d ql = _mm512_fmadd_pd(d, wl, _mm512_fmsub_pd(d, wh, qh));
    const sqrt_pd_pair s = sqrt_f64_pair<1>(qh, ql);
    const __m512d yh = _mm512_add_pd(xc, s.s0);
    const __m512d yl = _mm512_add_pd(_mm512_sub_pd(s.s0, _mm512_sub_pd(yh, xc)), s.sl);
    const __m512d res = log_f64_pair_arg(yh, yl, x, huge);
    return avx512::fixup<acosh_fixup>(res, _mm512_sub_pd(x, one));
}

inline __m512d atanh_f64_avx512(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d a = _mm512_andnot_pd(_mm512_set1_pd(-0.0), x);
    const __mmask8 tiny = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.0p-27), _CMP_LT_OQ);
    const __m512d ac = _mm512_max_pd(_mm512_min_pd(a, _mm512_set1_pd(0x1.fffffffffffffp-1)),
                                     _mm512_set1_pd(0x1.0p-28));
    const __m512d nh = _mm512_add_pd(one, ac);
    const __m512d nl = _mm512_sub_pd(ac, _mm512_sub_pd(nh, one));
    const __m512d dh = _mm512_sub_pd(one, ac);
    const __m512d dl = _mm512_sub_pd(_mm512_sub_pd(one, dh), ac);
    __m512d r = _mm512_rcp14_pd(dh);
    r = _mm512_fmadd_pd(r, _mm512_fnmadd_pd(r, dh, one), r);
    r = _mm512_fmadd_pd(r, _mm512_fnmadd_pd(r, dh, one), r);
    const __m512d qh = _mm512_mul_pd(nh, r);
    const __m512d rho = _mm512_fnmadd_pd(qh, dl, _mm512_add_pd(_mm512_fnmadd_pd(qh, dh, nh), nl));
    // rho / (1 + a) <= 2^-52, against results down to 2^-27: 1 / (1 + a) to 2^-53 (two steps).
    __m512d rn = _mm512_rcp14_pd(nh);
    rn = _mm512_fmadd_pd(rn, _mm512_fnmadd_pd(rn, nh, one), rn);
    rn = _mm512_fmadd_pd(rn, _mm512_fnmadd_pd(rn, nh, one), rn);
    const log_pd_pair p = log_f64_avx512_pair(qh);
    __m512d res =
        _mm512_mul_pd(_mm512_add_pd(p.hi, _mm512_fmadd_pd(rho, rn, p.lo)), _mm512_set1_pd(0.5));
    res = avx512::fixup<atanh_fixup>(res, _mm512_sub_pd(a, one));
    return _mm512_mask_mov_pd(avx512::sign_from(res, x), tiny, x);
}

}  // namespace numfuse::kernels::detail
#endif  // __AVX512F__
