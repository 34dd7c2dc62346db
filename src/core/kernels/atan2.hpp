// arctan2(y, x), the quadrant-aware arctangent of y / x, for float64 SIMD lanes (xsimd 8.1),
// and over arrays.
//
// Contract
//   atan2_kernel(batch<double> y, x): per lane. Max error <= 1 ULP (0.54 measured, docs/
//   accuracy.md; tests/test_accuracy.py and tests/test_invtrig.py check it against mpmath
//   at every level). float32 values have their own kernel below (atan2_f32_kernel: float32
//   lanes, the wide float64 form for the rest).
//   Special values as C99 and NumPy: atan2(+-0, +0 or x > 0) = +-0, atan2(+-0, -0 or x < 0)
//   = +-pi, atan2(y != 0, +-0) = +-pi/2, atan2(+-inf, +inf) = +-pi/4, atan2(+-inf, -inf) =
//   +-3pi/4, atan2(+-inf, finite) = +-pi/2, atan2(+-finite, +inf) = +-0, atan2(+-finite,
//   -inf) = +-pi; the sign of the result is y's (+-0 included). A NaN argument gives NaN
//   (y + x: y's NaN quieted if y is one, else x's).
//   Floating-point status flags raised inside are meaningless (the loops compute them).
//
// Method
//   X = max(|x|, |y|), Y = min, so that t = Y / X is in [0, 1] and
//   atan2(|y|, |x|) = atan t, pi/2 - atan t (|y| > |x|), then pi - that for negative x
//   (sign bit: -0 too), then y's sign. Infinite arguments are mapped first to finite ones
//   with the same angle (inf, inf) -> (1, 1), (inf, finite) -> (1, 0).
//   atan t with kernels/invtrig.hpp's quotient and polynomial: c = k/4 near t (k <= 4),
//   atan t = atan c + atan u with u = (Y - c X) / (X + c Y), the numerator exact and the
//   denominator an exact pair (fused residuals; Dekker's products on SSE2), |u| <= 0.1253;
//   base + m atan c (base 0, pi/2, pi; m = +-1) from one 32-entry table of pairs indexed by
//   k, swap and x's sign, one Fast2Sum and one rounding at the end. Vectors whose every lane
//   has both magnitudes in [2^-440, 2^500] and t >= 2^-60 (tested on the bit patterns) run
//   that directly; the others (atan2_general) first map infinities, scale X and Y by 2^-E
//   (E: X's exponent, clamped to [-1022, 1022]) so that nothing in between overflows or
//   underflows, and where t < 2^-60 (bit patterns again) take atan t = t to 2^-120
//   relative, the correctly rounded quotient y / x itself (subnormal results rounded once;
//   the reduction gets Y = 0 there: only that quotient and lanes with both magnitudes below
//   2^-960 see subnormals; on AVX-512 a quotient below 2^-1022 is instead rounded to the
//   subnormal grid from the significands' quotient and its exact remainder,
//   atan2_tiny_quotient, with the same bits and no subnormal operation). Every lane gets the
//   same bits on either path (exact scaling).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/invtrig.hpp"
#include "kernels/invtrig_f32.hpp"

namespace numfuse::kernels {

namespace detail {

// base + m atan(k/4) = hi + lo (mpmath, rounded to nearest) at index k + 8 swap + 16 xneg,
// k = 0..4: atan t (|y| <= |x|, x >= 0), pi/2 - atan t (|y| > |x|, x >= 0), pi - atan t
// (|y| <= |x|, x < 0), pi/2 + atan t (|y| > |x|, x < 0), t = min / max; 0 elsewhere.
alignas(64) inline constexpr double atan2_quadrant_hi[32] = {
    0x0.0p+0,
    0x1.f5b75f92c80ddp-3,
    0x1.dac670561bb4fp-2,
    0x1.4978fa3269ee1p-1,
    0x1.921fb54442d18p-1,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
    0x1.921fb54442d18p+0,
    0x1.5368c951e9cfdp+0,
    0x1.1b6e192ebbe44p+0,
    0x1.dac670561bb4fp-1,
    0x1.921fb54442d18p-1,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
    0x1.921fb54442d18p+1,
    0x1.72c43f4b1650ap+1,
    0x1.56c6e7397f5aep+1,
    0x1.3fc176b7a8560p+1,
    0x1.2d97c7f3321d2p+1,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
    0x1.921fb54442d18p+0,
    0x1.d0d6a1369bd34p+0,
    0x1.0468a8ace4df6p+1,
    0x1.1b6e192ebbe44p+1,
    0x1.2d97c7f3321d2p+1,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
};
alignas(64) inline constexpr double atan2_quadrant_lo[32] = {
    0x0.0p+0,
    0x1.8ab6e3cf7afbdp-57,
    0x1.a2b7f222f65e2p-56,
    0x1.2419a87f2a458p-56,
    0x1.1a62633145c07p-55,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
    0x1.1a62633145c07p-54,
    -0x1.96f47948a99f1p-54,
    0x1.b1b466a88828ep-54,
    0x1.a2b7f222f65e2p-55,
    0x1.1a62633145c07p-55,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
    0x1.1a62633145c07p-53,
    0x1.c1b6f4f44e10bp-53,
    0x1.660b64ece6f4bp-53,
    -0x1.441a3bd3f1083p-58,
    0x1.a79394c9e8a0ap-54,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
    0x1.1a62633145c07p-54,
    -0x1.a23602a65700cp-57,
    0x1.0620bf7406affp-55,
    0x1.b1b466a88828ep-53,
    0x1.a79394c9e8a0ap-54,
    0x0.0p+0,
    0x0.0p+0,
    0x0.0p+0,
};

}  // namespace detail

namespace detail {

// atan2(|y|, |x|) folded by x's sign, before y's sign, as t_hi + mu + rest: from X = max and
// Y = min of the magnitudes with X in [2^-1022, 4) (scaled) or [2^-440, 2^500] and Y / X >=
// 2^-61 (tiny ratios: the caller's), so that no intermediate leaves the normal range. c = k/4
// near t = Y / X, atan t = atan c + atan u with u = (Y - c X) / (X + c Y), and the quadrant's
// base + m atan c (m = +-1) from a table.
template <class A>
struct atan2_parts {
    xsimd::batch<double, A> t_hi, t_lo, m, mu, mtail;  // mu = m uh, mtail = m atan_tail
};

template <class A>
NUMFUSE_ALWAYS_INLINE atan2_parts<A> atan2_reduced(const xsimd::batch<double, A>& X,
                                                   const xsimd::batch<double, A>& Y,
                                                   const xsimd::batch_bool<double, A>& swap,
                                                   const xsimd::batch<double, A>& xsign) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    // c = k/4 near t = Y / X from an estimate t' in [t (1 - 2^-12), t] (rcp14 on AVX-512,
    // else a division; then scaled down by 2^-13): |t - c| <= 1/8 + 2^-12, so |u| <= 0.1253
    // below, and c >= 1/4 only where t >= 1/8, which keeps Y - c X exact.
    const B shifter(0x1.8p50);  // ulp 1/4: the low bits of t' + shifter count quarters
    const B sh = dd::fmadd(Y * reciprocal_14(X), B(1.0 - 0x1p-13), shifter);
    const B c = sh - shifter;
    // u = (Y - c X) / (X + c Y): Y - c X is exact (c = 0, or Y >= X/8, so that its bits reach
    // down to ulp(X)/8 and |Y - c X| < X/8 or Y >= X/4), X + c Y = den + den_lo exactly (X -
    // den is exact: den in [X, 2X]; the rounding error of den has at most 6 bits).
    B num, den, den_lo;
    if constexpr (has_fma<A>) {
        num = dd::fnmadd(c, X, Y);
        den = dd::fmadd(c, Y, X);
        den_lo = dd::fmadd(c, Y, X - den);
    } else {
        const dd::pair<A> cx = dd::two_prod(c, X), cy = dd::two_prod(c, Y);
        num = (Y - cx.hi) - cx.lo;
        const dd::pair<A> d = dd::fast_two_sum(X, cy.hi);
        den = d.hi;
        den_lo = d.lo + cy.lo;
    }
    const dd::pair<A> u = atan_quotient(num, den, den_lo);
    // m = -1 where exactly one of swap and x's sign bit (-0 too); base + m atan c from the
    // table at k + 8 swap + 16 xneg (2 and 4 added to the shifted value are 8 and 16 quarters).
    const auto xneg = xsimd::bitwise_or(xsign, B(1.0)) < B(0.0);
    const B sh_q = sh + xsimd::select(swap, B(2.0), B(0.0)) + xsimd::select(xneg, B(4.0), B(0.0));
    const I q = as_int(sh_q);
    // AVX-512's permutes read only the low 5 bits; the scalar loads elsewhere need q & 31.
    const I j = is_avx512<A> ? q : q & I(31);
    const B m = xsimd::bitwise_xor(xsimd::select(swap, B(-1.0), B(1.0)), xsign);
    return {dd::lookup32(atan2_quadrant_hi, j), dd::lookup32(atan2_quadrant_lo, j), m, m * u.hi,
            m * atan_tail(u)};
}

// t_hi + mu + mtail + t_lo rounded once: t_hi + mu split exactly (|t_hi| >= atan(1/4) > 1/8
// >= |mu|, or t_hi = 0).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan2_sum(const atan2_parts<A>& p) noexcept {
    const xsimd::batch<double, A> h = p.t_hi + p.mu;
    const xsimd::batch<double, A> e = p.mu - (h - p.t_hi);
    return h + (p.mtail + (p.t_lo + e));
}

#if defined(__AVX512F__)
// small / big rounded once to the subnormal grid (multiples of 2^-1074), for 0 <= small <= big
// with big normal (or subnormal) and finite: `value` in the lanes `sub` where the quotient
// is below 2^-1022 (garbage elsewhere). No operation sees a subnormal operand or result but
// vgetmant / vgetexp of a subnormal small (exact, no assist). The significands' quotient
// qm = RN(sm / bm), sm, bm in [1, 2), with its exact remainder rem = sm - qm bm; Qs = qm
// 2^(1074 + e), e the difference of the exponents clamped to -1076 (below, the quotient is
// under a quarter of 2^-1074 and rounds to 0 either way), is the quotient in units of
// 2^-1074, exactly. Where Qs < 2^52 its integer part and fraction d are exact; the grid's
// midpoint 1/2 is representable there, so (RN monotonic) d > 1/2 and d < 1/2 say on which
// side of it the exact quotient lies, and d = 1/2 is settled by rem's sign (rem = 0: an
// exact tie, to even). The integer Q <= 2^52 is the result's bit pattern (2^52: 2^-1022).
// Where the quotient is normal, `normal` is it: qm 2^e, exact, is RN(small / big) there.
template <class A>
struct atan2_tiny {
    xsimd::batch<double, A> value, normal;
    xsimd::batch_bool<double, A> sub;
};

template <class A>
NUMFUSE_ALWAYS_INLINE atan2_tiny<A> atan2_tiny_quotient(
    const xsimd::batch<double, A>& small, const xsimd::batch<double, A>& big) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const B sm(_mm512_getmant_pd(small, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero));  // 0: 0
    const B bm(_mm512_getmant_pd(big, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero));
    const B e = B(_mm512_getexp_pd(small)) - B(_mm512_getexp_pd(big));  // 0: -inf
    const B qm = sm / bm;
    const B rem = dd::fnmadd(qm, bm, sm);  // exact
    const B qs(_mm512_scalef_pd(qm, xsimd::max(e, B(-1076.0)) + B(1074.0)));
    const B fl = xsimd::floor(qs);
    const B d = qs - fl;
    const B two52(0x1p52);
    const B half_fl = fl * B(0.5);  // exact
    const auto odd = xsimd::floor(half_fl) != half_fl;
    const auto up = (d > B(0.5)) | ((d == B(0.5)) & ((rem > B(0.0)) | ((rem == B(0.0)) & odd)));
    // Q + 2^52 is exact (Q <= 2^52 an integer); its bits less 2^52's are Q
    const I q = as_int(fl + xsimd::select(up, B(1.0), B(0.0)) + two52) - as_int(two52);
    const auto sub = qs < two52;
    // e = 0 in the subnormal lanes: no subnormal result there
    const B normal(_mm512_scalef_pd(qm, xsimd::select(sub, B(0.0), e)));
    return {as_float<double, A>(q), normal, sub};
}
#endif

// The lanes the general form of atan2_kernel needs: zeros, infinities, NaNs, magnitudes
// outside [2^-440, 2^500], ratios below 2^-60 (scaled; tiny ratios as the quotient itself).
template <class A>
NUMFUSE_NOINLINE xsimd::batch<double, A> atan2_general(const xsimd::batch<double, A>& y,
                                                       const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    constexpr std::int64_t exp_mask = 0x7ff0000000000000;
    const B inf(__builtin_inf());
    const B ay0 = xsimd::abs(y), ax0 = xsimd::abs(x);
    const auto yinf = ay0 == inf, xinf = ax0 == inf;
    // Infinities -> finite arguments with the same angle.
    const B ax = xsimd::select(xinf, B(1.0), xsimd::select(yinf, B(0.0), ax0));
    const B ay = xsimd::select(yinf, B(1.0), xsimd::select(xinf, B(0.0), ay0));
    const auto swap = ay > ax;
    const B big = xsimd::max(ax, ay), small = xsimd::min(ax, ay);
    // 2^-E from big's exponent bits (clamped to [2^-1022, 2^1022]), exactly.
    const B up =
        xsimd::min(xsimd::select(big < B(0x1p-1022), B(0x1p-1022),
                                 xsimd::bitwise_and(big, from_bits<double, A>(exp_mask))),
                   B(0x1p1022));  // 2^-1023 would be subnormal: the top binade scales to [2, 4)
    const B down = as_float<double, A>(I(std::int64_t(2046) << 52) - as_int(up));
    // Tiny t (big / small above about 2^60): the quotient itself (no scaling: a subnormal
    // result is rounded once), and Y = 0 for the reduction, so that it stays in the normal
    // range. Tested on the bit patterns (their difference compared as a double: both are
    // non-negative), so that no multiply sees a subnormal.
    const auto tiny = as_float<double, A>(as_int(big) - as_int(small)) >
                      as_float<double, A>(I(std::int64_t(60) << 52));
    const B xsign = xsimd::bitwise_and(x, B(-0.0));
    atan2_parts<A> p =
        atan2_reduced(big * down, xsimd::select(tiny, B(0.0), small) * down, swap, xsign);
    const auto xneg = xsimd::bitwise_or(xsign, B(1.0)) < B(0.0);
    B res;
    if (xsimd::any(tiny)) {
#if defined(__AVX512F__)
        if constexpr (is_avx512<A>) {
            // Quotients below 2^-1022 without a subnormal operand or result (a division
            // that underflows, and the operations on its result, cost ~3x the whole
            // kernel): atan2_tiny_quotient's lanes (sub) take 0 here, the quotient is put
            // in at the end where the result is that quotient (x > 0, no swap); beside pi/2
            // or pi it is below half an ulp of t_lo and changes nothing. The normal tiny
            // quotients come from it too (one division for both).
            const atan2_tiny<A> q = atan2_tiny_quotient(small, big);
            const auto sub = tiny & q.sub;
            p.mu = xsimd::select(tiny, p.m * xsimd::select(sub, B(0.0), q.normal), p.mu);
            p.mtail = xsimd::select(tiny, B(0.0), p.mtail);
            res = xsimd::select(sub & ~swap & ~xneg, q.value, atan2_sum(p));
        } else
#endif
        {
            p.mu = xsimd::select(tiny, p.m * (small / big), p.mu);
            p.mtail = xsimd::select(tiny, B(0.0), p.mtail);
            res = atan2_sum(p);
        }
    } else {
        res = atan2_sum(p);
    }
    // Both zero: 0 or pi by x's sign (big == 0 gives NaNs above).
    res = xsimd::select(big == B(0.0), xsimd::select(xneg, B(2 * pio2_hi), B(0.0)), res);
    res = xsimd::bitwise_or(res, xsimd::bitwise_and(y, B(-0.0)));  // res >= 0: y's sign
    return xsimd::select(xsimd::isnan(y) | xsimd::isnan(x), y + x, res);
}

}  // namespace detail

// Batches whose every lane has both magnitudes in [2^-440, 2^500] and a ratio of at least
// 2^-60 (tested on the bit patterns: no floating-point operation, NaN and inf fail) take
// atan2_reduced directly; the others go through atan2_general, every lane the same bits.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan2_kernel(
    const xsimd::batch<double, A>& y, const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const B ay = xsimd::abs(y), ax = xsimd::abs(x);
    const I iy = detail::as_int(ay), ix = detail::as_int(ax);
    const I ibig = xsimd::max(ix, iy), ismall = xsimd::min(ix, iy);
    const auto ordinary = (ismall >= I(0x2470000000000000)) &
                          (ibig <= I(0x5f30000000000000)) &  // 2^-440, 2^500
                          (ibig - ismall <= I(std::int64_t(60) << 52));
    if (!xsimd::all(ordinary)) return detail::atan2_general(y, x);
    const B res = detail::atan2_sum(detail::atan2_reduced(xsimd::max(ax, ay), xsimd::min(ax, ay),
                                                          ay > ax, xsimd::bitwise_and(x, B(-0.0))));
    return xsimd::bitwise_or(res, xsimd::bitwise_and(y, B(-0.0)));  // res >= 0: y's sign
}

// atan2 of float32 values in float64 lanes (y, x: float32 values widened exactly; the
// result is for rounding to float32 once). Relative error below 2^-27 before that rounding
// (t = Y / X from an approximate reciprocal to 2^-42 or a division, atan t from
// invtrig_f32.hpp's atan32 polynomial, 2^-28.1, in float64 arithmetic; pi/2 and pi in
// float64), so the float32 result is within 0.52 ULP. No division on AVX-512 and no
// subnormal intermediate: float32 magnitudes are within [2^-149, 2^128], so t >= 2^-277,
// z = t^2 >= 2^-554 and t u >= 2^-832 are normal float64 values. Special values as
// atan2_kernel (the result rounds to the same float32).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan2_wide_kernel(
    const xsimd::batch<double, A>& y, const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B inf(__builtin_inf());
    const B ay0 = xsimd::abs(y), ax0 = xsimd::abs(x);
    const auto yinf = ay0 == inf, xinf = ax0 == inf;
    const B ax = xsimd::select(xinf, B(1.0), xsimd::select(yinf, B(0.0), ax0));
    const B ay = xsimd::select(yinf, B(1.0), xsimd::select(xinf, B(0.0), ay0));
    const auto swap = ay > ax;
    const B big = xsimd::max(ax, ay), small = xsimd::min(ax, ay);
    const B t = small * dd::reciprocal_approx(big);  // big = 0: NaN, replaced below
    const B z = t * t;
    const B at = detail::fused_madd(t, z * detail::atan32_poly(z), t);
    const B a = xsimd::select(swap, B(detail::pio2_hi) - at, at);
    const auto xneg = xsimd::copysign(B(1.0), x) < B(0.0);
    const B r = xsimd::select(xneg, B(2 * detail::pio2_hi) - a, a);
    B res = xsimd::select(big == B(0.0), xsimd::select(xneg, B(2 * detail::pio2_hi), B(0.0)), r);
    res = xsimd::bitwise_or(res, xsimd::bitwise_and(y, B(-0.0)));  // res >= 0: y's sign
    return xsimd::select(xsimd::isnan(y) | xsimd::isnan(x), y + x, res);
}

namespace detail {

// 3pi/4 as float32 hi + lo (hi rounded to nearest, lo the rest rounded).
inline constexpr float f32_3pio4_hi = 0x1.2d97c8p+1f, f32_3pio4_lo = -0x1.99bc5cp-28f;

// atan t = t + t z P(z), z = t^2 <= 0.2501 (|t| <= 1/2 after the reduction below;
// tools/trig_f32_remez.py atan2_32: relative error 2^-31.7 with these coefficients).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atan2_32_poly(
    const xsimd::batch<float, A>& z) noexcept {
    return fused_horner(z, -0x1.555552p-2f,  // -0.33333328366279602051
                        0x1.999742p-3f,      // 0.19999553263187408447
                        -0x1.244ff6p-3f,     // -0.14273063838481903076
                        0x1.c06dccp-4f,      // 0.10947971045970916748
                        -0x1.47f982p-4f,     // -0.080071933567523956299
                        0x1.3f98aap-5f);     // 0.039013225585222244263
}

// The float32-lanes form of atan2_f32_kernel (method there), for y, x with |y|, |x| in
// [2^-96, 2^96] and min/max >= 2^-30, FMA levels.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atan2_f32_lanes(
    const xsimd::batch<float, A>& y, const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F ay = xsimd::abs(y), ax = xsimd::abs(x);
    const F big = xsimd::max(ax, ay), small = xsimd::min(ax, ay);
    const auto swap = ay > ax;
    const auto xneg = x < F(0.0f);
    // Y >= X/2: pi/4 + atan((Y - X) / (Y + X)), the quotient in [-1/3, 0]; Y - X exact
    // (Sterbenz), Y + X = den + den_lo exactly (X >= Y).
    const auto red = small >= big * F(0.5f);
    const F num = xsimd::select(red, small - big, small);
    const F den = xsimd::select(red, small + big, big);
    const F den_lo = xsimd::select(red, (big - den) + small, F(0.0f));
    const F r = reciprocal_f32(den);
    const F th = num * r;
    const F tl = fused_nmadd(th, den_lo, fused_nmadd(th, den, num)) * r;  // residual exact
    const F z = th * th;
    const F poly = atan2_32_poly(z);
    const F u = z * poly;
    const F ulo = fused_msub(z, poly, u);  // z P - u, exact
    // m = -1 where exactly one of swap, x < 0 (x's sign bit flips it). base: pi/4 or 3pi/4
    // (x < 0) where reduced, else pi/2 (swap), pi (x < 0), 0.
    const F m =
        xsimd::bitwise_xor(xsimd::select(swap, F(-1.0f), F(1.0f)), xsimd::bitwise_and(x, F(-0.0f)));
    const F base_hi = xsimd::select(
        red, xsimd::select(xneg, F(f32_3pio4_hi), F(0.5f * f32_pio2_hi)),
        xsimd::select(swap, F(f32_pio2_hi), xsimd::select(xneg, F(f32_pi_hi), F(0.0f))));
    const F base_lo = xsimd::select(
        red, xsimd::select(xneg, F(f32_3pio4_lo), F(0.5f * f32_pio2_lo)),
        xsimd::select(swap, F(f32_pio2_lo), xsimd::select(xneg, F(f32_pi_lo), F(0.0f))));
    const F mth = m * th;
    const F h = base_hi + mth;
    const F hl = (base_hi - h) + mth;
    const F lo = fused_madd(m * tl, fused_nmadd(z, F(0.5f), F(1.0f)), hl + base_lo);
    const F res = h + fused_madd(mth, u, fused_madd(mth, ulo, lo));
    return xsimd::bitwise_or(res, xsimd::bitwise_and(y, F(-0.0f)));  // res > 0: y's sign
}

#if defined(__AVX512F__) && defined(__AVX512DQ__)
// AVX-512 float32 (atan2_f32_kernel's method on AVX-512 below): m (base + m atan(k/4)) =
// m base + atan(k/4) as a float32 pair at index k + 8 swap + 16 xneg, m = -1 where exactly
// one of swap and xneg (indices 8-23), from atan2_quadrant_hi/lo (mpmath, rounded to
// nearest; the entries with m = -1 negated, which is exact).
alignas(64) inline constexpr float atan2_quadrant_f32_hi[32] = {
    0x0p+0f,         0x1.f5b76p-3f,   0x1.dac67p-2f,   0x1.4978fap-1f,  0x1.921fb6p-1f,
    0x0p+0f,         0x0p+0f,         0x0p+0f,         -0x1.921fb6p+0f, -0x1.5368cap+0f,
    -0x1.1b6e1ap+0f, -0x1.dac67p-1f,  -0x1.921fb6p-1f, 0x0p+0f,         0x0p+0f,
    0x0p+0f,         -0x1.921fb6p+1f, -0x1.72c44p+1f,  -0x1.56c6e8p+1f, -0x1.3fc176p+1f,
    -0x1.2d97c8p+1f, 0x0p+0f,         0x0p+0f,         0x0p+0f,         0x1.921fb6p+0f,
    0x1.d0d6a2p+0f,  0x1.0468a8p+1f,  0x1.1b6e1ap+1f,  0x1.2d97c8p+1f,  0x0p+0f,
    0x0p+0f,         0x0p+0f,
};
alignas(64) inline constexpr float atan2_quadrant_f32_lo[32] = {
    0x0p+0f,          -0x1.b4dfc8p-29f, 0x1.586ed4p-28f,  0x1.934f7p-28f,   -0x1.777a5cp-26f,
    0x0p+0f,          0x0p+0f,          0x0p+0f,          0x1.777a5cp-25f,  0x1.5c2c6p-25f,
    0x1.a28838p-25f,  -0x1.586ed4p-27f, 0x1.777a5cp-26f,  0x0p+0f,          0x0p+0f,
    0x0p+0f,          0x1.777a5cp-24f,  0x1.69d35ep-24f,  0x1.8d014ap-24f,  -0x1.6f50acp-24f,
    0x1.99bc5cp-28f,  0x0p+0f,          0x0p+0f,          0x0p+0f,          -0x1.777a5cp-25f,
    -0x1.92c85ap-25f, 0x1.59c9bep-24f,  -0x1.a28838p-24f, -0x1.99bc5cp-28f, 0x0p+0f,
    0x0p+0f,          0x0p+0f,
};

// The magnitudes' bit patterns: X = max(|x|, |y|), Y = min (integer max / min of the
// patterns: NaN patterns are above every number's), swap = |y| > |x|.
struct atan2_f32_mags {
    __m512i big, small;
    __mmask16 swap;
};
NUMFUSE_ALWAYS_INLINE atan2_f32_mags atan2_f32_avx512_mags(__m512 y, __m512 x) noexcept {
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
    const __m512i ay = _mm512_and_si512(_mm512_castps_si512(y), abs_mask);
    const __m512i ax = _mm512_and_si512(_mm512_castps_si512(x), abs_mask);
    return {_mm512_max_epi32(ax, ay), _mm512_min_epi32(ax, ay),
            _mm512_cmp_epi32_mask(ay, ax, _MM_CMPINT_NLE)};
}

// Lanes the AVX-512 float32 form takes: min(|x|, |y|) >= 2^-40 and max <= 2^60, on the
// bit patterns (NaN and infinities fail): two compares. Within these no intermediate below
// is infinite or NaN, t = min / max >= 2^-100 and the result is a normal number that raises
// nothing; z is kept normal (atan2_f32_avx512), so the only subnormal intermediate is ul
// where t < 2^-80 (|ul| >= 2^-46 t or 0).
NUMFUSE_ALWAYS_INLINE __mmask16 atan2_f32_avx512_ordinary(const atan2_f32_mags& g) noexcept {
    return _mm512_mask_cmp_epi32_mask(
        _mm512_cmp_epi32_mask(g.small, _mm512_set1_epi32(0x2b800000), _MM_CMPINT_NLT),  // 2^-40
        g.big, _mm512_set1_epi32(0x5d800000), _MM_CMPINT_LE);                           // 2^60
}

// The float32 AVX-512 form for the lanes of atan2_f32_avx512_ordinary (others: garbage).
// X = max(|x|, |y|), Y = min (atan2_f32_avx512_mags), c = k/4 near t = Y / X (rcp14 estimate
// scaled down by 2^-13 so that c >= 1/4 only where t >= 1/8), u = (Y - c X) / (X + c Y) with
// the numerator exact (as in atan2_reduced) and the denominator as an exact pair (den,
// den_lo), |u| <= 0.1254; u = uh + ul with uh = RN(num / den) and ul = (num - uh den - uh
// den_lo) rcp14(den) (the residual exact from fused multiply-adds, |ul| <= 2^-23 |u|, so
// rcp14's 2^-14 costs 2^-37 |u|); atan u = uh + (ul + uh z P(z)), z = uh^2 (uh for u there
// costs 2^-23 u^3; |uh| raised to 2^-40 first, below), P of degree 2 (tools/invtrig_remez.py
// atan2_32: 2^-33.9 relative to atan u). The result before y's sign is base + m atan t = m (T +
// atan u), T = m base + atan(k/4) = T_hi + T_lo from the table at k + 8 swap + 16 xneg, m = +-1:
// T_hi + uh split exactly (|T_hi| >= atan(1/4) > |uh|, or T_hi = 0), the rest added to the low
// part, one rounding at the end, then |m (...)| with y's sign in one bit select (the result before
// y's sign is >= 0, so m only flips the sign bit). Small t (k = 0, c = 0): den = X, den_lo
// = 0, and z from |uh| raised to 2^-40. 38 vector operations with the magnitudes and the
// ordinary test, one of them a division (the float32-lanes form below: 62).
NUMFUSE_ALWAYS_INLINE __m512 atan2_f32_avx512(__m512 y, __m512 x,
                                              const atan2_f32_mags& g) noexcept {
    const __m512 X = _mm512_castsi512_ps(g.big);
    const __m512 Y = _mm512_castsi512_ps(g.small);
    const __mmask16 swap = g.swap;
    const __mmask16 xneg = _mm512_movepi32_mask(_mm512_castps_si512(x));  // sign bit, -0 too
    const __m512 shifter = _mm512_set1_ps(0x1.8p21f);  // ulp 1/4
    const __m512 sh = _mm512_fmadd_ps(_mm512_mul_ps(Y, _mm512_rcp14_ps(X)),
                                      _mm512_set1_ps(1.0f - 0x1p-13f), shifter);
    const __m512 c = _mm512_sub_ps(sh, shifter);
    const __m512 num = _mm512_fnmadd_ps(c, X, Y);
    const __m512 den = _mm512_fmadd_ps(c, Y, X);
    const __m512 den_lo = _mm512_fmadd_ps(c, Y, _mm512_sub_ps(X, den));  // exact
    const __m512 uh = _mm512_div_ps(num, den);
    const __m512 rho = _mm512_fnmadd_ps(uh, den_lo, _mm512_fnmadd_ps(uh, den, num));  // exact
    const __m512 ul = _mm512_mul_ps(rho, _mm512_rcp14_ps(den));
    // z = max(|uh|, 2^-40)^2 (vrangeps: the larger magnitude, uh's sign): no subnormal z
    // (on Zen 5 they cost a fifth more on inputs spanning many magnitudes); below 2^-40 the
    // term uh z P(z) is under 2^-80 of atan u either way.
    const __m512 uc = _mm512_range_ps(uh, _mm512_set1_ps(0x1p-40f), 0x3);
    const __m512 z = _mm512_mul_ps(uc, uc);
    __m512 pz = _mm512_fmadd_ps(_mm512_set1_ps(-0x1.1dc06ep-3f), z,  // -0.13952718675
                                _mm512_set1_ps(0x1.9989ap-3f));  // 0.19996953011
    pz = _mm512_fmadd_ps(pz, z, _mm512_set1_ps(-0x1.55555p-2f));  // -0.33333325386
    const __m512 tail = _mm512_fmadd_ps(uh, _mm512_mul_ps(z, pz), ul);
    // Index k + 8 swap + 16 xneg: 2 and 4 added to sh are 8 and 16 quarters.
    __m512 sh_q = _mm512_mask_add_ps(sh, swap, sh, _mm512_set1_ps(2.0f));
    sh_q = _mm512_mask_add_ps(sh_q, xneg, sh_q, _mm512_set1_ps(4.0f));
    const __m512i j = _mm512_castps_si512(sh_q);
    const __m512 t_hi = _mm512_permutex2var_ps(_mm512_load_ps(atan2_quadrant_f32_hi), j,
                                               _mm512_load_ps(atan2_quadrant_f32_hi + 16));
    const __m512 t_lo = _mm512_permutex2var_ps(_mm512_load_ps(atan2_quadrant_f32_lo), j,
                                               _mm512_load_ps(atan2_quadrant_f32_lo + 16));
    const __m512 h = _mm512_add_ps(t_hi, uh);
    const __m512 e = _mm512_sub_ps(uh, _mm512_sub_ps(h, t_hi));
    const __m512 res = _mm512_add_ps(h, _mm512_add_ps(_mm512_add_ps(t_lo, e), tail));
    // (res & ~sign) | (y & sign): |res| with y's sign.
    return _mm512_castsi512_ps(
        _mm512_ternarylogic_epi32(_mm512_castps_si512(res), _mm512_castps_si512(y),
                                  _mm512_set1_epi32(static_cast<int>(0x80000000u)), 0xd8));
}
// A batch with lanes outside atan2_f32_avx512_ordinary: those lanes from atan2_wide_kernel,
// the others from atan2_f32_avx512 (on 1 in the outside lanes), each lane from its own form.
// Out of line, with the batches in registers: inlined, the captures of the rare path made
// the loop store both arguments to the stack for every batch.
template <class A>
NUMFUSE_NOINLINE __m512 atan2_f32_avx512_mixed(__m512 y, __m512 x, __mmask16 ordinary) noexcept {
    using D = xsimd::batch<double, A>;
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 y1 = _mm512_mask_mov_ps(one, ordinary, y);
    const __m512 x1 = _mm512_mask_mov_ps(one, ordinary, x);
    const __m512 fast = atan2_f32_avx512(y1, x1, atan2_f32_avx512_mags(y1, x1));
    D ylo, yhi, xlo, xhi;
    widen(xsimd::batch<float, A>(y), ylo, yhi);
    widen(xsimd::batch<float, A>(x), xlo, xhi);
    const xsimd::batch<float, A> wide =
        narrow(atan2_wide_kernel(ylo, xlo), atan2_wide_kernel(yhi, xhi));
    return _mm512_mask_mov_ps(wide, ordinary, fast);
}
#endif  // __AVX512F__ && __AVX512DQ__

}  // namespace detail

// atan2_f32_kernel's on_rare when nobody screens (evaluate, the folds).
struct atan2_no_screen {
    template <class F>
    NUMFUSE_ALWAYS_INLINE void operator()(const F&, const F&) const noexcept {}
};

// atan2 of float32 lanes. FMA levels: float32 arithmetic (detail::atan2_f32_lanes) for the
// lanes where both |y| and |x| lie in [2^-96, 2^96] and min/max >= 2^-30 (no intermediate
// leaves the normal float32 range there); the other lanes -- zeros, infinities, NaNs,
// subnormals, huge values, mixed magnitudes -- from atan2_wide_kernel, a vector holding one
// computing both (the float32 form on 1 in those lanes) and taking each lane from its own
// form: a lane's result never depends on its neighbours. AVX-512: the same split with its
// own float32 form (detail::atan2_f32_avx512: the float64 kernel's c = k/4 method in float32,
// 38 vector operations against atan2_f32_lanes' 62) for min >= 2^-40 and max <= 2^60
// (detail::atan2_f32_avx512_ordinary), the mixed vectors out of line. Other
// levels: atan2_wide_kernel. Max error < 1 float32 ULP (tests/test_arctan2.py,
// tests/test_accuracy.py against mpmath, every level; AVX-512 0.546 measured, docs/
// accuracy.md); special values as atan2_kernel.
//
// on_rare(y, x) (optional, the array loops' condition screen, binary_loop.hpp) is called
// for each batch not computed entirely by the float32 form: every batch on levels without
// FMA, the mixed ones elsewhere. Only those can raise a floating-point condition: a lane
// the float32 forms take has |y|, |x| >= 2^-96 and min/max > 2^-32 (AVX-512: >= 2^-40 and
// min/max >= 2^-100), so its result is a normal number (and no zero, infinity or NaN is in
// it) for which NumPy reports nothing (binary_loop.hpp's Arctan2Op rule).
//
// Float32 method: X = max(|x|, |y|), Y = min; Y < X/2: t = Y / X, else t = (Y - X) / (Y +
// X) in [-1/3, 0] (angle pi/4 + atan t), so that |t| <= 1/2 and t u below stays small (at
// t near 1 the float32 polynomial's roundings alone cost 0.45 ULP). t = N / D = th + tl
// (th from a reciprocal, tl = (N - th D) / D with the exact residual of one fused
// multiply-add, D's own rounding error taken in); atan t = th + th u + tl / (1 + z) with u =
// z P(z), z = th^2 (P degree 5, atan2_32_poly), 1 / (1 + z) taken as 1 - z/2 (error <= 0.08
// |tl|, |tl| <= 0.6 ulp of th); the rounding error of u (exact, one fused multiply-subtract)
// is taken in as in atan_f32_lanes. The quadrant: result = base + m atan t with base in {0,
// pi/4, pi/2, 3pi/4, pi} as a float32 pair and m = +-1 (|base| >= |m th| or base = 0: base +
// m th splits exactly), one rounding at the end.
template <class A, class OnRare = atan2_no_screen>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atan2_f32_kernel(
    const xsimd::batch<float, A>& y, const xsimd::batch<float, A>& x,
    OnRare&& on_rare = OnRare{}) noexcept {
    using F = xsimd::batch<float, A>;
    using D = xsimd::batch<double, A>;
    const auto wide = [&]() {
        D ylo, yhi, xlo, xhi;
        detail::widen(y, ylo, yhi);
        detail::widen(x, xlo, xhi);
        return detail::narrow(atan2_wide_kernel(ylo, xlo), atan2_wide_kernel(yhi, xhi));
    };
    if constexpr (!detail::has_fma<A>) {
        on_rare(y, x);
        return wide();
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    } else if constexpr (detail::is_avx512<A>) {
        const detail::atan2_f32_mags g = detail::atan2_f32_avx512_mags(y, x);
        const __mmask16 ordinary = detail::atan2_f32_avx512_ordinary(g);
        if (ordinary == 0xffff) return detail::atan2_f32_avx512(y, x, g);
        on_rare(y, x);
        return detail::atan2_f32_avx512_mixed<A>(y, x, ordinary);
#endif
    } else {
        const F ay = xsimd::abs(y), ax = xsimd::abs(x);
        // Compares only (NaN fails each); the multiply sees min >= 2^-96 (no assist).
        const auto ordinary =
            (ay >= F(0x1p-96f)) & (ax >= F(0x1p-96f)) & (ay <= F(0x1p96f)) & (ax <= F(0x1p96f)) &
            (xsimd::max(xsimd::min(ax, ay), F(0x1p-96f)) * F(0x1p30f) >= xsimd::max(ax, ay));
        if (xsimd::all(ordinary)) return detail::atan2_f32_lanes(y, x);
        on_rare(y, x);
        const F one(1.0f);
        const F fast = detail::atan2_f32_lanes(xsimd::select(ordinary, y, one),
                                               xsimd::select(ordinary, x, one));
        return xsimd::select(ordinary, fast, wide());
    }
}

namespace detail {

// out[k] = Kernel::apply(y[k], x[k], screen) for n values of T by batches, the last partial
// batch padded with 1 (atan2(1, 1) raises nothing). out may be y or x (each batch is loaded
// before its results are stored).
template <class T, class A, class Kernel, class Screen>
inline void atan2_lanes(T* out, const T* y, const T* x, std::size_t n, Screen& screen) noexcept {
    using V = xsimd::batch<T, A>;
    constexpr std::size_t width = V::size;
    std::size_t k = 0;
    for (; k + width <= n; k += width) {
        Kernel::apply(V::load_unaligned(y + k), V::load_unaligned(x + k), screen)
            .store_unaligned(out + k);
    }
    if (k < n) {
        alignas(64) T ya[width], xa[width];
        for (std::size_t i = 0; i < width; ++i) ya[i] = xa[i] = T(1);
        std::memcpy(ya, y + k, (n - k) * sizeof(T));
        std::memcpy(xa, x + k, (n - k) * sizeof(T));
        Kernel::apply(V::load_aligned(ya), V::load_aligned(xa), screen).store_aligned(ya);
        std::memcpy(out + k, ya, (n - k) * sizeof(T));
    }
}

struct Atan2F32 {
    template <class F, class Screen>
    static NUMFUSE_ALWAYS_INLINE F apply(const F& y, const F& x, Screen& screen) noexcept {
        return atan2_f32_kernel(y, x, screen);
    }
};
struct Atan2F64 {
    template <class B, class Screen>
    static NUMFUSE_ALWAYS_INLINE B apply(const B& y, const B& x, Screen&) noexcept {
        return atan2_kernel(y, x);
    }
};

}  // namespace detail

// out[k] = atan2(y[k], x[k]) for float32 arrays. out may be y or x. screen(y, x) is
// atan2_f32_kernel's on_rare, called with the batches (the partial one padded with 1) that
// may raise a floating-point condition: the caller's condition screen in the same pass.
template <class A, class Screen = atan2_no_screen>
inline void atan2_f32_array(float* out, const float* y, const float* x, std::size_t n,
                            Screen&& screen = Screen{}) noexcept {
    detail::atan2_lanes<float, A, detail::Atan2F32>(out, y, x, n, screen);
}

// out[k] = atan2(y[k], x[k]) for float64 values, or for float32 values widened (Out float:
// the results are atan2_f32_kernel's, widened exactly, the same bits as atan2_f32_array).
// out may be y or x.
template <class Out, class A>
inline void atan2_array(double* out, const double* y, const double* x, std::size_t n) noexcept {
    std::size_t k = 0;
    if constexpr (std::is_same<Out, float>::value) {
        // By blocks of float32 lanes: the values narrowed exactly, the results widened.
        constexpr std::size_t block = 256;
        alignas(64) float yf[block], xf[block];
        for (; k < n; k += block) {
            const std::size_t count = n - k < block ? n - k : block;
            for (std::size_t i = 0; i < count; ++i) {
                yf[i] = static_cast<float>(y[k + i]);
                xf[i] = static_cast<float>(x[k + i]);
            }
            atan2_f32_array<A>(yf, yf, xf, count);
            for (std::size_t i = 0; i < count; ++i) out[k + i] = static_cast<double>(yf[i]);
        }
    } else {
        atan2_no_screen none;
        detail::atan2_lanes<double, A, detail::Atan2F64>(out, y, x, n, none);
    }
}

// One pair, the same bits as atan2_array.
template <class Out, class A>
inline double atan2_one(double y, double x) noexcept {
    double r = 0.0;
    atan2_array<Out, A>(&r, &y, &x, 1);
    return r;
}

}  // namespace numfuse::kernels
