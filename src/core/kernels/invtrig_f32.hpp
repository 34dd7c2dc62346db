// arctan, arcsin, arccos of float32 lanes in float32 arithmetic (xsimd 8.1), for the
// levels with fused multiply-add; the others compute float32 in float64 lanes
// (arch/expr_math.hpp). arctan2's float32 kernel (kernels/atan2.hpp) shares the
// polynomial (atan32_poly) and the helpers.
//
// Contract
//   atan_f32_lanes / asin_f32_lanes / acos_f32_lanes(batch<float>):
//   per lane, FMA levels only (detail::has_fma). Max error < 1 float32 ULP against the
//   correctly rounded result, checked over all 2^32 inputs at avx2_fma and avx512
//   (benchmarks/cpp/accuracy_harness.cpp --f32-stride 1; the measured maxima are in
//   docs/accuracy.md). Special values as NumPy: f(+-0) = +-0 (arcsin, arctan), subnormal
//   inputs kept, arctan(+-inf) = +-pi/2 rounded, arcsin(+-1) = +-pi/2, arccos(1) = +0,
//   arccos(-1) = pi, |x| > 1 -> NaN (arcsin, arccos), a NaN input -> that NaN quieted (sign
//   and payload kept). The loops' NaN policy and
//   floating-point conditions are applied by the callers, as for every kernel.
//
// Method (t, s, z below are float32 values; "pair" = hi + lo float32 values)
//   arctan: a = |x|; t = a (a <= 1) or t = 1/a as a pair (a > 1: th from a reciprocal,
//   tl = th (1 - th a) with the exact residual of one fused multiply-add). atan t =
//   t + t u, u = z P(z), z = t^2, P of degree 8 (tools/trig_f32_remez.py atan32,
//   relative error 2^-28.1 on [0, 1]); a <= 1: fma(t, u, t), one rounding; a > 1:
//   pi/2 - atan t = (pi/2_hi - th) (exact pair) + (pi/2_lo - tl (1 - z/2) - th u), the
//   first-order effect of tl taken with the slope 1/(1 + z) ~ 1 - z/2 (error <= 0.09 tl).
//   Worst case of the bound: |t u| <= 0.215 next to a = 1, where u's three roundings and
//   the fit give at most 0.31 ULP and the final rounding 0.5.
//   arcsin / arccos: a <= 1/2: s = a; a > 1/2: asin a = pi/2 - 2 asin s with
//   s = sqrt(z), z = (1 - a)/2 exact, s as a pair (the exact residual z - s^2 of one
//   fused multiply-add); asin s = s + s u, u = z P(z), P of degree 4 on [0, 1/4]
//   (asin32, 2^-27.6); |s u| <= 0.024, so u's roundings cost little. arccos = pi/2 - asin
//   x (|x| <= 1/2), 2 asin s (x > 1/2), pi - 2 asin s (x < -1/2): base + m (s + s u + slo)
//   with the base as a pair and m in {+-1, +-2}, one rounding at the end.
//   AVX-512 arctan (atan_f32_avx512): a clamped to [2^-12, 2^30]; a >= 1/16 takes c from a
//   32-point table, one float32 point near the midpoint of each quarter octave of [1/16,
//   16) (a >= 16: the last, c ~ 15) whose atan is a float32 to 2^-36 (Gal's accurate
//   tables), a < 1/16 takes c = 0; atan a = atan c + atan u, u = (a - c) / (1 + c a),
//   |u| < 1/15, for every a > 0; num = a - c exact, den = 1 + c a rounded once, u = uh + ul
//   from rcp14 (no Newton step: ul carries the rest), atan u = u + u^3 (p0 + p1 u^2)
//   (atan32_oct); result atan c + (uh + tail): |u| / result <= 0.13, so den's rounding and
//   the inner sum's cost 0.13 ulp each (bound 0.77 ulp with the final rounding).
//   AVX-512 arcsin (asin_f32_nofix_avx512): as above with the root from vsqrtps rounded to a
//   multiple of 2^-24 (pi/2 - 2 root then exact) and twice its correction from rsqrt14 and
//   the residual, carried through pi/2 - 2 asin s (bound there).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>

#include "kernels/common.hpp"

namespace numfuse::kernels {
namespace detail {

// pi/2 and pi as float32 hi + lo (hi rounded to nearest, lo the rest rounded).
inline constexpr float f32_pio2_hi = 0x1.921fb6p+0f, f32_pio2_lo = -0x1.777a5cp-25f;
inline constexpr float f32_pi_hi = 0x1.921fb6p+1f, f32_pi_lo = -0x1.777a5cp-24f;

// 1/a to within ~2^-23 relative (the callers take the exact residual): rcp14 and one
// Newton step on AVX-512, a division elsewhere. a > 0 finite.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> reciprocal_f32(
    const xsimd::batch<float, A>& a) noexcept {
    using F = xsimd::batch<float, A>;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        const F r = _mm512_rcp14_ps(a);
        return fused_madd(r, fused_nmadd(r, a, F(1.0f)), r);
    } else
#endif
        return divide(F(1.0f), a);
}

// sqrt(z) = hi + lo for z in [2^-60, 1/4] (lo to ~2^-24 of hi's ulp): hi the correctly
// rounded root, lo = (z - hi^2) / (2 hi) with the exact residual; AVX-512 without the
// division, (z - hi^2) rsqrt14(z) / 2 (2^-14 of lo; vsqrtps beside it is cheaper on Zen 5
// than a Newton step from rsqrt14). AVX-512 also takes z = 0 (0, 0: rsqrt14 sees z +
// 2^-100, which is z itself for z >= 2^-60) and returns NaN for z < 0.
template <class A>
struct f32_pair {
    xsimd::batch<float, A> hi, lo;
};

template <class A>
NUMFUSE_ALWAYS_INLINE f32_pair<A> sqrt_pair_f32(const xsimd::batch<float, A>& z) noexcept {
    using F = xsimd::batch<float, A>;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        const F hy = F(_mm512_rsqrt14_ps(z + F(0x1.0p-100f))) * F(0.5f);  // to 2^-14
        const F s(_mm512_sqrt_ps(z));
        return {s, fused_nmadd(s, s, z) * hy};
    } else
#endif
    {
        const F s = square_root(z);
        return {s, divide(fused_nmadd(s, s, z), s + s)};
    }
}

// asin(s) = s + s u, u = z P(z), z = s^2 in [0, 1/4] (tools/trig_f32_remez.py asin32,
// degree 4: relative error 2^-27.6 against asin s, 2^-26.6 against pi/2 - 2 asin s, which
// is at least half of 2 asin s; degree 5's 2^-31.7 cost one more fused multiply-add a
// vector for no change in the rounded results' bound).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asin_f32_u(const xsimd::batch<float, A>& z) noexcept {
    return z * fused_horner(z, 0x1.5555c8p-3f,  // 0.16666752099990844727
                            0x1.330204p-4f,     // 0.074953094124794006348
                            0x1.747bbap-5f,     // 0.045469153672456741333
                            0x1.8c3e2ap-6f,     // 0.024184742942452430725
                            0x1.595c8cp-5f);    // 0.042158387601375579834
}

// atan(t) = t + t u, u = z P(z), z = t^2 in [0, 1] (tools/trig_f32_remez.py atan32, relative
// error 2^-28.1 with these float32 coefficients): P(z) for float32 lanes, and for float64
// lanes (atan2_wide_kernel in kernels/atan2.hpp, the same coefficients widened exactly).
template <class B>
NUMFUSE_ALWAYS_INLINE B atan32_poly(const B& z) noexcept {
    return fused_horner(z, -0x1.55553ep-2f,  // -0.33333298563957214355
                        0x1.9991e4p-3f,      // 0.19998529553413391113
                        -0x1.242086p-3f,     // -0.14264015853404998779
                        0x1.c08c5p-4f,       // 0.10950881242752075195
                        -0x1.58091ep-4f,     // -0.083993069827556610107
                        0x1.da29cep-5f,      // 0.057881262153387069702
                        -0x1.fd7dbap-6f,     // -0.031096870079636573792
                        0x1.642718p-7f,      // 0.010868918150663375854
                        -0x1.d36a08p-10f);   // -0.0017830436117947101593
}

// AVX-512 arctan's reduction (atan_f32_avx512): for each quarter octave [2^e (1 + j/4),
// 2^e (1 + (j + 1)/4)), e in [-4, 3], j in [0, 3], a float32 c within 2^e/128 of its
// midpoint (the last one at least 15) whose atan, rounded to nearest, is within 2^-36 of
// atan c relative (Gal's accurate tables; tools/invtrig_gal_tables.py f32), and that atan.
// Slot (4 (e + 127) + j) mod 32: the low five bits of the top 11 bits of a in the interval.
alignas(64) inline constexpr float f32_atan_octant_c[32] = {
    0x1.201122p+1f,  // 2.25052285
    0x1.5ff01ap+1f,  // 2.74951482
    0x1.a00bep+1f,  // 3.2503624
    0x1.e0276ap+1f,  // 3.75120282
    0x1.201958p+2f,  // 4.50154686
    0x1.601906p+2f,  // 5.50152731
    0x1.a00d3ep+2f,  // 6.50080824
    0x1.e026d6p+2f,  // 7.50237036
    0x1.1ff4aap+3f,  // 8.99861622
    0x1.5ffc8p+3f,  // 10.9995728
    0x1.a0411p+3f,  // 13.0079422
    0x1.e0276ep+3f,  // 15.0048132
    0x1.1ffb3p-4f,  // 0.0703079104
    0x1.5fc6f2p-4f,  // 0.0858830884
    0x1.a01a7cp-4f,  // 0.101587757
    0x1.e000dep-4f,  // 0.117188327
    0x1.204b9ap-3f,  // 0.140769199
    0x1.600756p-3f,  // 0.171888992
    0x1.a025b4p-3f,  // 0.203196913
    0x1.e0190cp-3f,  // 0.234422773
    0x1.20014ap-2f,  // 0.281254917
    0x1.6026eep-2f,  // 0.343898505
    0x1.a0024ep-2f,  // 0.406258792
    0x1.e00c54p-2f,  // 0.468797028
    0x1.1fd862p-1f,  // 0.562197745
    0x1.60137ep-1f,  // 0.687648714
    0x1.9fec6p-1f,  // 0.812350273
    0x1.e02e44p-1f,  // 0.937852979
    0x1.1ff3c8p+0f,  // 1.12481356
    0x1.5fea5ep+0f,  // 1.37466991
    0x1.a06e1p+0f,  // 1.62667942
    0x1.dfe9dcp+0f,  // 1.87466216
};
alignas(64) inline constexpr float f32_atan_octant_t[32] = {
    0x1.27149cp+0f,  // atan c to 2^-38.5
    0x1.38d2fp+0f,  // atan c to 2^-37.4
    0x1.45b756p+0f,  // atan c to 2^-38.2
    0x1.4f6e1ap+0f,  // atan c to 2^-37.2
    0x1.5a29cap+0f,  // atan c to 2^-37.6
    0x1.641808p+0f,  // atan c to 2^-38.0
    0x1.6b0ce8p+0f,  // atan c to 2^-37.1
    0x1.703386p+0f,  // atan c to 2^-38.0
    0x1.75ca92p+0f,  // atan c to 2^-37.9
    0x1.7ae9fep+0f,  // atan c to 2^-37.0
    0x1.7e7b72p+0f,  // atan c to 2^-38.0
    0x1.81167ep+0f,  // atan c to 2^-37.6
    0x1.1f8212p-4f,  // atan c to 2^-38.7
    0x1.5eea82p-4f,  // atan c to 2^-37.9
    0x1.9eae4cp-4f,  // atan c to 2^-38.3
    0x1.ddd2f2p-4f,  // atan c to 2^-38.6
    0x1.1e69d2p-3f,  // atan c to 2^-38.9
    0x1.5c9f32p-3f,  // atan c to 2^-37.5
    0x1.9a8ec4p-3f,  // atan c to 2^-37.5
    0x1.d7951cp-3f,  // atan c to 2^-37.4
    0x1.18c08cp-2f,  // atan c to 2^-39.6
    0x1.532daap-2f,  // atan c to 2^-40.5
    0x1.8b26cep-2f,  // atan c to 2^-37.1
    0x1.c0e568p-2f,  // atan c to 2^-37.6
    0x1.0639dp-1f,  // atan c to 2^-37.0
    0x1.346c3ep-1f,  // atan c to 2^-37.3
    0x1.5d4cc6p-1f,  // atan c to 2^-38.1
    0x1.81b5aap-1f,  // atan c to 2^-40.0
    0x1.b02a2ap-1f,  // atan c to 2^-38.9
    0x1.e23edcp-1f,  // atan c to 2^-38.1
    0x1.0504a8p+0f,  // atan c to 2^-38.1
    0x1.14acf6p+0f,  // atan c to 2^-39.2
};

// (atan u - u) / u^3 as a polynomial in z = u^2 on [0, 1/225] (tools/invtrig_remez.py
// atan32_oct, relative error 2^-30.9 of atan u): AVX-512 arctan, |u| < 1/15.
template <class B>
NUMFUSE_ALWAYS_INLINE B atan32_oct_poly(const B& z) noexcept {
    return fused_horner(z, -0x1.555504p-2f,  // -0.33333212137222290039
                        0x1.97cb6ap-3f);     // 0.19911845028400421143
}

#if defined(__AVX512F__)
// atan(x), float32 lanes on AVX-512 (the Method's second paragraph): one permute a table,
// no division, no -1/a branch.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atan_f32_avx512(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const __m512 a = _mm512_abs_ps(x);
    // a clamped to [2^-12, 2^30] (below, x is the result; above, pi/2_hi; no subnormal
    // intermediates, no inf); vmaxps / vminps return their second operand when either is
    // NaN, so a NaN a stays.
    const __m512 ac =
        _mm512_min_ps(_mm512_set1_ps(0x1.0p30f), _mm512_max_ps(_mm512_set1_ps(0x1.0p-12f), a));
    const __mmask16 in_table = _mm512_cmp_ps_mask(ac, _mm512_set1_ps(0x1.0p-4f), _CMP_GE_OQ);
    // The table's slot from the bits of min(ac, 16^-) (the permutes read its low 5 bits);
    // c and atan c zero below 1/16 and for NaN.
    const __m512i slot = _mm512_srli_epi32(
        _mm512_castps_si512(_mm512_min_ps(_mm512_set1_ps(0x1.fffffep+3f), ac)), 21);
    const F c(_mm512_maskz_permutex2var_ps(in_table, _mm512_load_ps(f32_atan_octant_c), slot,
                                           _mm512_load_ps(f32_atan_octant_c + 16)));
    const F t(_mm512_maskz_permutex2var_ps(in_table, _mm512_load_ps(f32_atan_octant_t), slot,
                                           _mm512_load_ps(f32_atan_octant_t + 16)));
    const F acf(ac);
    // u = num / den: num = a - c exact (c = 0, or a and c in the same binade; above 2^25
    // it rounds, where |u| / result < 1/23), den = 1 + c a rounded (2^-24 relative: u's
    // one error, at most 0.13 ulp of the result, |u| / result <= 0.13 at a = 1/16).
    // r = rcp14(den) (2^-14), uh = num r, ul = (num - uh den) r (the residual rounded at
    // 2^-24 of 2^-14 num, ul off by 2^-14 of itself): uh + ul = num / den to 2^-27.9.
    // The polynomial runs on uh (|uh| < 1/15): atan(uh + ul) = atan uh + ul / (1 + uh^2),
    // and ul (1 - z) leaves out ul z^2 < 2^-29.6 |u|.
    const F num = acf - c;
    const F den = fused_madd(c, acf, F(1.0f));
    const F r(_mm512_rcp14_ps(den));
    const F uh = num * r;
    const F ul = fused_nmadd(uh, den, num) * r;
    const F z = uh * uh;
    const F tail = fused_madd(uh * z, atan32_oct_poly(z), fused_nmadd(ul, z, ul));
    // t + (uh + tail): the inner sum's rounding is at most 2^-24 of |u| + |tail| <= 0.13
    // of the result, 0.13 ulp; t's own error, 2^-36 of it, is left out. With the final
    // rounding and den's 0.13 ulp: below 0.77 ulp.
    const F res = t + (uh + tail);
    // x's sign on res, and x itself where |x| < 2^-12 (atan x rounds to x there), in one
    // masked ternary-logic operation: lanes outside the mask keep x; the others get
    // res | (x & -0). A NaN x is in the mask (not less than, unordered) and gets res, x's
    // payload quieted, with x's sign.
    const __mmask16 keep = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_NLT_UQ);
    return F(_mm512_castsi512_ps(
        _mm512_mask_ternarylogic_epi32(_mm512_castps_si512(x), keep, _mm512_castps_si512(res),
                                       _mm512_set1_epi32(int(0x80000000u)), 0xec)));
}
#endif

// The common part of arcsin and arccos: a = |x| (NaN kept), s, its pair's lo, u.
template <class A>
struct asin_f32_parts {
    xsimd::batch<float, A> s, slo, u;
    xsimd::batch_bool<float, A> big;  // a > 1/2
};

template <class A>
NUMFUSE_ALWAYS_INLINE asin_f32_parts<A> asin_f32_core(const xsimd::batch<float, A>& a) noexcept {
    using F = xsimd::batch<float, A>;
    const auto big = a > F(0.5f);
    const F zb = fused_nmadd(a, F(0.5f), F(0.5f));  // (1 - a)/2, exact for a in [1/2, 1]
    // a = 1 (zb = 0) and a > 1 (zb < 0, NaN set by the callers): AVX-512's root is 0 at 0
    // (so arccos(1) comes out +0 by itself) and NaN below; elsewhere zb is kept away from 0
    // and below (sqrt(2^-60) = 2^-30 changes no arcsin at a = 1; arccos(1) is set).
    const f32_pair<A> root = sqrt_pair_f32(is_avx512<A> ? zb : xsimd::max(zb, F(0x1.0p-60f)));
    const F s = xsimd::select(big, root.hi, a);
    const F z = xsimd::select(big, zb, a * a);
    return {s, xsimd::select(big, root.lo, F(0.0f)), asin_f32_u(z), big};
}

}  // namespace detail

// atan(x), float32 lanes, FMA levels.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atan_f32_lanes(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::atan_f32_avx512(x);
#endif
    using F = xsimd::batch<float, A>;
    using detail::fused_madd;
    using detail::fused_nmadd;
    const F ax = xsimd::abs(x);
    // |x| < 2^-12 returns x (atan x = x (1 - x^2/3 ...) rounds to x); the arithmetic runs
    // on |x| raised to 2^-12 there, which keeps subnormal intermediates (microcode assists,
    // ~100 cycles each on x86) out. A select, not max: NaN lanes must stay NaN, and which
    // operand xsimd's max returns for a NaN differs between versions (xsimd 14 returned
    // the 2^-12, so NaN came out as -+2^-12).
    const auto tiny = ax < F(0x1.0p-12f);
    const F a = xsimd::select(tiny, F(0x1.0p-12f), ax);
    const auto big = a > F(1.0f);
    // Above 2^26 atan rounds to pi/2_hi; the clamp keeps inf out of the residual.
    const F ac = xsimd::min(a, F(0x1.0p30f));
    const F th = detail::reciprocal_f32(ac);
    const F tl = fused_nmadd(th, ac, F(1.0f)) * th;  // 1/a - th (residual exact)
    const F t = xsimd::select(big, th, a);  // NaN lanes: a
    const F z = t * t;
    const F poly = detail::atan32_poly(z);
    const F u = z * poly;
    const F near = fused_madd(t, u, t);
    // a > 1: pi/2 - atan(th + tl)
    const F h = F(detail::f32_pio2_hi) - th;
    const F hl = (F(detail::f32_pio2_hi) - h) - th;  // exact: pi/2_hi > th
    const F lo = fused_nmadd(tl, fused_nmadd(z, F(0.5f), F(1.0f)), hl + F(detail::f32_pio2_lo));
    // th u with u's rounding error (exact) taken in: |th u| reaches 0.215 next to a = 1
    const F ulo = detail::fused_msub(z, poly, u);
    const F far = h + fused_nmadd(th, u, fused_nmadd(th, ulo, lo));
    const F res = xsimd::select(big, far, near);
    // res >= 0 (NaN: +)
    return xsimd::select(tiny, x, xsimd::bitwise_or(res, xsimd::bitwise_and(x, F(-0.0f))));
}

#if defined(__AVX512F__)
namespace detail {

// asin_f32_nofix on AVX-512: the Method's arcsin with the root of z = (1 - a)/2 (a > 1/2)
// from vsqrtps, rounded to a multiple of 2^-24 so that pi/2 - 2 asin s splits exactly, and
// the root's rest carried without a division. Per far lane (a in (1/2, 1)):
//   zb = (1 - a)/2 exact, sigma = sqrt(zb) in [2^-12.5, 1/2); r = RN(RN(sigma) + 1/2) - 1/2
//   (the sum in [1/2, 1], so r is RN(sigma) rounded to a multiple of 2^-24, the subtraction
//   exact), delta = sigma - r, |delta| <= 2^-25 + 2^-26.
//   h = pi/2_hi - 2r is exact: both multiples of 2^-23 and h in (0.57, 1.58).
//   rho = RN(zb - r^2) (one fused operation, |rho| < 2^-23.4, rounded to 2^-47) and y =
//   rsqrt14(zb) = (1 + e) / sigma, |e| < 2^-14: rho y = 2 delta - delta^2 / sigma + 2 delta
//   e, within 2^-36 of 2 delta (delta^2 / sigma <= 2^-36.3, 2 delta e <= 2^-37.4).
//   asin a = pi/2 - 2 sigma (1 + u) with u = u(zb), zb exact (the polynomial's error as in
//   the Method), = h + pi/2_lo - 2 delta - 2 r u - 2 delta u; computed as h + RN(RN(pi/2_lo
//   - rho y) - 2r u), one rounding at the end. Left out: 2 delta u <= 3 2^-25 0.0472 =
//   2^-27.8, 0.071 ulp of a result above pi/6 (ulp 2^-24); the inner roundings: 2^-47 and,
//   |tail| <= 0.05, 2^-29 (0.031 ulp); u's fit and roundings as in the Method (the same u as
//   the near lanes'); the final rounding 0.5 ulp. Measured over every float32 in [-1, 1]:
//   0.719 ULP at 0x1.110ca8p-1 (next to 1/2, where u is largest).
//   a = 1: zb = 0, y = +inf and rho y is NaN; asin_f32_fix sets +-pi/2 there (the loop's
//   screens flag |x| >= 1). Near lanes: asin a = a + a u(a^2) (one fused operation; the far
//   lanes' value of it is discarded, so a is not blended with the root).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asin_f32_nofix_avx512(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const __m512 a = _mm512_abs_ps(x);
    // |x| < 2^-12 returns x; the arithmetic runs on |x| raised to 2^-12 there (vmaxps
    // returns its second operand for NaN: a NaN a stays).
    const __m512 ac = _mm512_max_ps(_mm512_set1_ps(0x1.0p-12f), a);
    const __mmask16 big = _mm512_cmp_ps_mask(ac, _mm512_set1_ps(0.5f), _CMP_GT_OQ);
    const F af(ac);
    const F zb = fused_nmadd(af, F(0.5f), F(0.5f));  // (1 - a)/2, exact for a in [1/2, 1]
    const F y(_mm512_rsqrt14_ps(zb));
    const F r = (F(_mm512_sqrt_ps(zb)) + F(0.5f)) - F(0.5f);
    const F rho = fused_nmadd(r, r, zb);
    const F z(_mm512_mask_mul_ps(zb, _knot_mask16(big), af, af));  // s^2: a^2 or zb
    const F u = asin_f32_u(z);
    const F near = fused_madd(af, u, af);
    const F h = fused_nmadd(r, F(2.0f), F(f32_pio2_hi));  // exact
    const F tail = fused_nmadd(r + r, u, fused_nmadd(rho, y, F(f32_pio2_lo)));
    const F res(_mm512_mask_add_ps(near, big, h, tail));
    // x's sign on res, and x itself where |x| < 2^-12, as in atan_f32_avx512.
    const __mmask16 keep = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_NLT_UQ);
    return F(_mm512_castsi512_ps(
        _mm512_mask_ternarylogic_epi32(_mm512_castps_si512(x), keep, _mm512_castps_si512(res),
                                       _mm512_set1_epi32(int(0x80000000u)), 0xec)));
}

}  // namespace detail
#endif

// asin(x), float32 lanes, FMA levels, without the NaN of the lanes with |x| > 1 and, on
// AVX-512, the value at |x| = 1 (garbage there; asin_f32_fix sets them; a NaN x gives the
// kernel's NaN already): the ufunc loop's fast path (arch/unary_loop.hpp, ArcsinOp), whose
// batches hold no such lane (its screens flag |x| >= 1).
// asin_f32_fix(x, asin_f32_nofix(x)) is asin_f32_lanes(x), bit for bit.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asin_f32_nofix(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::asin_f32_nofix_avx512(x);
#endif
    using F = xsimd::batch<float, A>;
    using detail::fused_madd;
    using detail::fused_nmadd;
    const F ax = xsimd::abs(x);
    // |x| < 2^-12 returns x (asin x = x (1 + x^2/6 ...) rounds to x); the arithmetic runs on
    // |x| raised to 2^-12 there (no subnormal intermediates, as in atan_f32_lanes).
    const auto tiny = ax < F(0x1.0p-12f);
    const F a = xsimd::select(tiny, F(0x1.0p-12f), ax);  // NaN kept (see atan_f32_lanes)
    const detail::asin_f32_parts<A> p = detail::asin_f32_core(a);
    const F near = fused_madd(p.s, p.u, p.s);
    // a > 1/2: pi/2 - 2 (s + slo + s u); 2s <= 1 < pi/2_hi
    const F s2 = p.s + p.s;
    const F h = F(detail::f32_pio2_hi) - s2;
    const F hl = (F(detail::f32_pio2_hi) - h) - s2;
    const F lo = fused_nmadd(F(2.0f), p.slo, hl + F(detail::f32_pio2_lo));
    const F far = h + fused_nmadd(s2, p.u, lo);
    const F res = xsimd::select(p.big, far, near);
    return xsimd::select(tiny, x, xsimd::bitwise_or(res, xsimd::bitwise_and(x, F(-0.0f))));
}

// asin_f32_nofix's result y repaired: |x| > 1: NaN, |x| = 1: pi/2 rounded (AVX-512's
// nofix gives NaN there; the other levels' give that value already), each with x's sign.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asin_f32_fix(
    const xsimd::batch<float, A>& x, const xsimd::batch<float, A>& y) noexcept {
    using F = xsimd::batch<float, A>;
    const F ax = xsimd::abs(x);
    const F edge = xsimd::select(ax > F(1.0f), F(std::numeric_limits<float>::quiet_NaN()),
                                 F(detail::f32_pio2_hi));
    return xsimd::select(ax >= F(1.0f), xsimd::bitwise_or(edge, xsimd::bitwise_and(x, F(-0.0f))),
                         y);
}

// asin(x), float32 lanes, FMA levels.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asin_f32_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    return asin_f32_fix(x, asin_f32_nofix(x));
}

// acos(x), float32 lanes, FMA levels, without the repair of the lanes with |x| > 1 or NaN x
// (garbage there; acos_f32_fix sets them): the ufunc loop's fast path (arch/unary_loop.hpp,
// ArccosOp), whose batches hold no such lane. acos_f32_fix(x, acos_f32_nofix(x)) is
// acos_f32_lanes(x), bit for bit.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> acos_f32_nofix(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    using detail::fused_madd;
    // |x| raised to 2^-30 (no subnormal intermediates): acos rounds to pi/2_hi below 2^-25.9.
    // The NaN lanes are set at the end.
    const F a = xsimd::max(xsimd::abs(x), F(0x1.0p-30f));
    const detail::asin_f32_parts<A> p = detail::asin_f32_core(a);
    const auto neg = x < F(0.0f);
    // acos x = base + m (s + slo + s u): |x| <= 1/2: pi/2 and m = -sign(x); x > 1/2: 0 and
    // 2; x < -1/2: pi and -2. |base| >= |m s|, so base + m s splits exactly.
    const F m = xsimd::bitwise_xor(xsimd::select(p.big, F(2.0f), F(-1.0f)),
                                   xsimd::bitwise_and(x, F(-0.0f)));
    const F base_hi = xsimd::select(p.big, xsimd::select(neg, F(detail::f32_pi_hi), F(0.0f)),
                                    F(detail::f32_pio2_hi));
    const F base_lo = xsimd::select(p.big, xsimd::select(neg, F(detail::f32_pi_lo), F(0.0f)),
                                    F(detail::f32_pio2_lo));
    const F ms = m * p.s;
    const F h = base_hi + ms;
    const F hl = (base_hi - h) + ms;
    const F lo = fused_madd(m, p.slo, hl + base_lo);
    const F res = h + fused_madd(ms, p.u, lo);
    // acos(1) = +0: AVX-512's s is 0 there (m s = 0, base 0, u finite); elsewhere s = 2^-30,
    // from the clamp in asin_f32_core, and the result is set.
    if constexpr (detail::is_avx512<A>) return res;
    return xsimd::select(x == F(1.0f), F(0.0f), res);
}

// acos_f32_nofix's result y repaired: |x| > 1: NaN; NaN in: that NaN quieted (a lost its
// sign in acos_f32_nofix).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> acos_f32_fix(
    const xsimd::batch<float, A>& x, const xsimd::batch<float, A>& y) noexcept {
    using F = xsimd::batch<float, A>;
    const F res =
        xsimd::select(xsimd::abs(x) > F(1.0f), F(std::numeric_limits<float>::quiet_NaN()), y);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

// acos(x), float32 lanes, FMA levels.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> acos_f32_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    return acos_f32_fix(x, acos_f32_nofix(x));
}

namespace detail {

// lanes(x) where the level has FMA; elsewhere x widened to float64 lanes, wide() of each
// half (xsimd's float64 function: 2-3 float64 ULP, far below a float32 half ULP) and
// rounded once.
template <class A, class Lanes, class Wide>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> f32_lanes_or_wide(const xsimd::batch<float, A>& x,
                                                               Lanes lanes, Wide wide) noexcept {
    if constexpr (has_fma<A>) {
        return lanes(x);
    } else {
        xsimd::batch<double, A> lo, hi;
        widen(x, lo, hi);
        return narrow(wide(lo), wide(hi));
    }
}

}  // namespace detail

// The float32 kernels of arch/expr_math.hpp's rows (contract above).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atan_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    return detail::f32_lanes_or_wide(
        x, [](const auto& v) { return atan_f32_lanes(v); },
        [](const auto& v) { return xsimd::atan(v); });
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asin_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    return detail::f32_lanes_or_wide(
        x, [](const auto& v) { return asin_f32_lanes(v); },
        [](const auto& v) { return xsimd::asin(v); });
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> acos_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    return detail::f32_lanes_or_wide(
        x, [](const auto& v) { return acos_f32_lanes(v); },
        [](const auto& v) { return xsimd::acos(v); });
}

}  // namespace numfuse::kernels
