// arcsinh, arccosh, arctanh on float32 lanes in float32 arithmetic (AVX-512).
//
// Contract
//   asinh_f32_avx512 / acosh_f32_avx512 / atanh_f32_avx512 (__m512): per lane, within
//   1 float32 ULP (measured over every float32 input: docs/accuracy.md), special values as
//   logpair.hpp's float64 kernels rounded (asinh(+-0, +-inf) = x, acosh(1) = +0,
//   acosh(x < 1) = NaN, acosh(+inf) = +inf, atanh(+-1) = +-inf, atanh(|x| > 1) = NaN;
//   a NaN x gives x quieted; the NaN of an invalid x is the default NaN, which the
//   callers' NaN policy rewrites to NumPy's). logpair.hpp's asinh_f32_kernel,
//   acosh_f32_kernel and atanh_f32_kernel call them on AVX-512; the other levels keep
//   their float64-lane kernels.
//
// Method
//   Each function is the log of a value y >= 1 carried as a float32 pair yh + yl (relative
//   error ~2^-44), taken by log.hpp's float32 table kernel (log_f32_avx512_pair: hi + lo,
//   relative error ~2^-33) plus the first-order term yl / yh (rcp14 and one Newton step),
//   rounded once:
//     asinh: y = a + sqrt(1 + a^2), a = |x|, 1 + a^2 as qh + ql (two FMAs: 1 - qh is exact
//       for qh >= 1), sqrt(q) = s0 + sl (rsqrt14, one Newton step, s0 = qh r, then the
//       residual q - s0^2 in one FMA: sl = (q - s0^2) / (2 s0), error ~2^-44), yh + yl =
//       s0 + a exactly (fast two-sum, s0 > a) plus sl. The sign of x is put back.
//     acosh: y = x + sqrt(d (x + 1)), d = x - 1 exact, x + 1 as a pair (fast two-sum),
//       d (x + 1) as a pair (one FMA), the square root and y as for asinh.
//     atanh: log(q) / 2, q = (1 + a) / (1 - a) with 1 + a and 1 - a as exact pairs,
//       qh = (1 + a) r (r: rcp14 and one Newton step), the exact residual
//       rho = (1 + a) - qh (1 - a) in FMAs, so log q = log qh + rho / (1 + a) to first
//       order (1 / (1 + a) by rcp14 and one Newton step).
//   The pair keeps results near 0 accurate: y - 1 is about |x| (asinh, atanh) or
//   sqrt(2 (x - 1)) (acosh), and the pair's absolute error ~2^-44 is below 2^-30 of it
//   for |x| >= 2^-12 (x - 1 >= 2^-23). |x| < 2^-12 returns x (asinh, atanh: x -+ x^3/6 is
//   within x 2^-25.5 of x, below half an ULP); those lanes, like every other lane, are
//   computed on a value clamped into [2^-12, 2^12] (no operation sees a subnormal: on
//   x86 that costs a microcode assist per batch). |x| > 2^12 (asinh, acosh): log(2 |x|)
//   (the exponent plus one in the table kernel; the neglected 1 / (4 x^2) is below 2^-26
//   against log(2^13) > 9). Special lanes are repaired by one vfixupimm.
#pragma once

#include <cstdint>

#include "kernels/common.hpp"
#include "kernels/log.hpp"

#if defined(__AVX512F__)
namespace numfuse::kernels::detail {

// log(yh + yl) for yh >= 1 finite and |yl| <= ~ulp(yh) (lanes in plus_ln2: + ln2), rounded
// once; ryh = rcp14 of the lanes' yh where the caller has a safer value at hand (yl = 0
// there).
// Newton: yl / yh from rcp14 (2^-14) and one Newton step (2^-28) where results may be as
// small as 2^-12 against |yl / yh| <= 2^-23 (asinh); rcp14 alone (acosh: results >= 2^-11
// where yl / yh is that large, sqrt(2 (x - 1)) against x - 1 >= 2^-23).
template <bool Newton>
NUMFUSE_ALWAYS_INLINE __m512 log_f32_pair_arg(__m512 yh, __m512 yl, __m512 yh_rcp_src,
                                              __mmask16 plus_ln2) noexcept {
    const log_ps_pair p = log_f32_avx512_pair_impl<true, true>(yh, plus_ln2);
    const __m512 r = _mm512_rcp14_ps(yh_rcp_src);
    __m512 q = _mm512_mul_ps(yl, r);
    if constexpr (Newton) q = _mm512_fmadd_ps(r, _mm512_fnmadd_ps(q, yh_rcp_src, yl), q);
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

inline constexpr std::int32_t f32_sign_bits = static_cast<std::int32_t>(0x80000000u);

// r | (x & sign): the sign of x on a non-negative r (vpternlogd: A | (B & C)).
NUMFUSE_ALWAYS_INLINE __m512 with_sign_of(__m512 r, __m512 x) noexcept {
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(r), _mm512_castps_si512(x), _mm512_set1_epi32(f32_sign_bits), 0xF8));
}

// vfixupimm tables (one nibble per class of the classified operand: QNaN, SNaN, 0, +1,
// -inf, +inf, negative, positive; 0 keeps the computed value, 1 the operand, 2 the operand
// quieted, 3 the default NaN, 5 +inf, 8 +0).
// asinh on x: NaN -> x quieted, +-0 and +-inf -> x.
inline constexpr int asinh_fixup_f32 = 0x00110121;
// acosh on x: NaN -> x quieted, 0, -inf, negative -> NaN, 1 -> +0, +inf -> +inf.
inline constexpr int acosh_fixup_f32 = 0x03138321;
// atanh on z = |x| - 1 (the sign of x is put back after): NaN -> the operand quieted,
// 0 (|x| = 1) -> +inf, positive and +inf (|x| > 1) -> NaN, negative -> computed.
inline constexpr int atanh_fixup_f32 = 0x30303522;

inline __m512 asinh_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 a = _mm512_andnot_ps(_mm512_castsi512_ps(_mm512_set1_epi32(f32_sign_bits)), x);
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
    __m512 res = log_f32_pair_arg<true>(_mm512_mask_mov_ps(yh, huge, a),
                                        _mm512_maskz_mov_ps(~huge, yl), yh, huge);
    res = _mm512_mask_mov_ps(with_sign_of(res, x), tiny, x);
    return _mm512_fixupimm_ps(res, x, _mm512_set1_epi32(asinh_fixup_f32), 0);
}

inline __m512 acosh_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __mmask16 huge = _mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1.0p12f), _CMP_GT_OQ);
    const __mmask16 below = _mm512_cmp_ps_mask(x, one, _CMP_LT_OQ);  // -> NaN
    // Clamped into [1 + 2^-23, 2^12] (NaN lanes: 2^12); x = 1 is repaired by the fixup.
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
    __m512 res = log_f32_pair_arg<false>(_mm512_mask_mov_ps(yh, huge, x),
                                         _mm512_maskz_mov_ps(~huge, yl), yh, huge);
    res = _mm512_mask_mov_ps(res, below, _mm512_set1_ps(__builtin_nanf("")));
    return _mm512_fixupimm_ps(res, x, _mm512_set1_epi32(acosh_fixup_f32), 0);
}

inline __m512 atanh_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 a = _mm512_andnot_ps(_mm512_castsi512_ps(_mm512_set1_epi32(f32_sign_bits)), x);
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
    res = _mm512_fixupimm_ps(res, _mm512_sub_ps(a, one), _mm512_set1_epi32(atanh_fixup_f32), 0);
    return _mm512_mask_mov_ps(with_sign_of(res, x), tiny, x);
}

}  // namespace numfuse::kernels::detail
#endif  // __AVX512F__
