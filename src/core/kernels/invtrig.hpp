// arctan, arcsin, arccos for float64 SIMD lanes (xsimd 8.1).
//
// Contract
//   atan_kernel / asin_kernel / acos_kernel (batch<double>): per lane.
//   Max error <= 1 ULP over the whole domain at every level (enforced against
//   mpmath by tests/test_evaluate_accuracy.py, which prints the measured maxima).
//   Slower than xsimd's (pair arithmetic throughout): the price of the bound.
//   Valid range: all inputs; special values as NumPy (glibc):
//     atan(+-0, subnormal) = x, atan(+-inf) = +-pi/2 (rounded);
//     asin(+-0, subnormal) = x, asin(+-1) = +-pi/2, |x| > 1 -> NaN;
//     acos(1) = +0, acos(-1) = pi, acos(0) = pi/2, |x| > 1 -> NaN.
//   float32 uses these in float64 (expr_ops.hpp) and rounds once.
//
// Method
//   atan: t = |x| or 1/|x| in [0, 1] (approximate: it only picks c); c = j/16
//   near t; atan t = atan c + atan u, u = (t - c) / (1 + t c) written in |x| and c
//   so that one division (a pair quotient of an exact numerator) gives it,
//   |u| <= 1/32 + 2^-40;
//   atan u = u + u^3 P(u^2) with P the Taylor series to u^11 (truncation
//   u^12/13 < 2^-63 relative); atan(j/16) from a 17-entry hi/lo table
//   (in-register permutes on AVX-512); |x| > 1: pi/2 - that.
//   asin / acos: no division. s = |x| (|x| <= 1/2) or s = sqrt((1 - |x|)/2)
//   as a pair (1 - |x| exact; rsqrt14 + Newton + exact residual on AVX-512),
//   asin s = s + s^3 P(s^2) with P a degree-13 minimax on [0, 1/4] (Remez,
//   2^-59.9); asin x = asin s or pi/2 - 2 asin s, acos x = pi/2 - asin x,
//   2 asin s or pi - 2 asin s, in pair arithmetic, one rounding at the end.
//   Out-of-domain lanes are kept away from subnormal intermediates (which
//   cost microcode assists).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"

namespace numfuse::kernels {
namespace detail {

// atan(j/16) = hi + lo, j = 0..16 (mpmath, rounded to nearest), padded to 32.
alignas(64) inline constexpr double atan_tab_hi[32] = {
    0x0p+0,
    0x1.ff55bb72cfdeap-5,
    0x1.fd5ba9aac2f6ep-4,
    0x1.7b97b4bce5b02p-3,
    0x1.f5b75f92c80ddp-3,
    0x1.362773707ebccp-2,
    0x1.6f61941e4def1p-2,
    0x1.a64eec3cc23fdp-2,
    0x1.dac670561bb4fp-2,
    0x1.0657e94db30dp-1,
    0x1.1e00babdefeb4p-1,
    0x1.345f01cce37bbp-1,
    0x1.4978fa3269ee1p-1,
    0x1.5d58987169b18p-1,
    0x1.700a7c5784634p-1,
    0x1.819d0b7158a4dp-1,
    0x1.921fb54442d18p-1,
};
alignas(64) inline constexpr double atan_tab_lo[32] = {
    0x0p+0,
    -0x1.c934d86d23f1dp-60,
    -0x1.cd37686760c17p-59,
    0x1.347b0b4f881cap-58,
    0x1.8ab6e3cf7afbdp-57,
    -0x1.963a544b672d8p-57,
    -0x1.c63aae6f6e918p-56,
    -0x1.24dec1b50b7ffp-56,
    0x1.a2b7f222f65e2p-56,
    -0x1.d5b495f6349e6p-56,
    -0x1.928df287a668fp-58,
    0x1.1021137c71102p-55,
    0x1.2419a87f2a458p-56,
    0x1.0028e4bc5e7cap-57,
    -0x1.8c34d25aadef6p-56,
    -0x1.bf76229d3b917p-56,
    0x1.1a62633145c07p-55,
};

inline constexpr double pio2_hi = 0x1.921fb54442d18p+0, pio2_lo = 0x1.1a62633145c07p-54;

// asin for a in [0, 1] without a division: s = a (a <= 1/2) or
// s = sqrt((1 - a) / 2) as a pair (a > 1/2, where asin a = pi/2 - 2 asin s);
// asin s = s + s^3 P(s^2), P degree-13 minimax on [0, 1/4] (Remez with
// tools/explog_remez.py's exchange, weighted relative error 2^-59.88),
// evaluated as two chains in s^4. Returns the pair asin s and the mask.
template <class A>
struct asin_parts {
    dd::pair<A> v;                  // asin(s)
    xsimd::batch_bool<double, A> big;  // a > 1/2
};

template <class A>
NUMFUSE_ALWAYS_INLINE asin_parts<A> asin_core(const xsimd::batch<double, A>& a) noexcept {
    using B = xsimd::batch<double, A>;
    const auto big = a > B(0.5);
    const B q = (B(1.0) - a) * B(0.5);  // exact for a in [1/2, 1]
    const dd::pair<A> sq = dd::sqrt(dd::pair<A>{xsimd::max(q, B(0x1.0p-60)), B(0.0)});
    const dd::pair<A> s{xsimd::select(big, sq.hi, a), xsimd::select(big, sq.lo, B(0.0))};
    const B z = s.hi * s.hi;
    const B w = z * z;
    const B pe = dd::horner(w, 0x1.5555555555553p-3,   // 0.1666666666666666019
                            0x1.6db6db6d48986p-5,      // 0.044642857139723310378
                            0x1.6e8b9af0e587bp-6,      // 0.022372151670048339572
                            0x1.c980e0434f36fp-7,      // 0.013961896422751000554
                            0x1.36c3042725ac7p-7,      // 0.0094836969640658252273
                            0x1.63d143d127e0fp-11,     // 0.0006786679097280939486
                            -0x1.ac981358fa565p-6);    // -0.026159304517851995203
    const B po = dd::horner(w, 0x1.3333333333a3dp-4,   // 0.075000000000025004998
                            0x1.f1c71ca843fabp-6,      // 0.03038194464266978298
                            0x1.1c4f8583ef484p-6,      // 0.017352943788627075983
                            0x1.7ba4361ff0fb8p-7,      // 0.011585737636671797346
                            0x1.480910772a595p-7,      // 0.010010846175947199846
                            0x1.96e139b9029acp-6,      // 0.024833971376247696017
                            0x1.13a828dcd7fd4p-5);     // 0.033649520692733553284
    const B poly = dd::even_odd(z, pe, po);
    return {dd::fast_two_sum(s.hi, dd::fmadd(s.hi * z, poly, s.lo)), big};
}

}  // namespace detail

// atan(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const B a = xsimd::abs(x);
    const auto inf = a > B(0x1.0p60);  // atan = pi/2 - 1/|x| rounds to pi/2 (inf too)
    const B ac = xsimd::select(inf, B(1.0), a);
    const auto big = ac > B(1.0);
    // t = a (a <= 1) or 1/a (a > 1), only to pick c = j/16 near t: any c within
    // 1/32 + 2^-40 of t keeps |u| in the polynomial's range, so an approximate 1/a does.
    const B t = xsimd::select(big, dd::reciprocal_approx(ac), ac);
    const B shifter(0x1.8p52);
    const B zj = dd::fmadd(t, B(16.0), shifter);
    const B c = (zj - shifter) * B(0.0625);
    const I j = detail::as_int(zj) & I(31);
    // atan t = atan c + atan u with u = (t - c) / (1 + t c): for a <= 1
    // u = (a - c) / (1 + a c), for a > 1 u = (1 - c a) / (a + c). With (X, Y) = (1, a)
    // or (a, 1) both are (Y - c X) / (X + c Y). The numerator is exact: a - c by
    // Sterbenz (c = 0 or a in [c/2, 2c]); 1 - c a has at most 52 significant bits
    // (a <= 32 where c != 0, c on the 1/16 grid, |1 - c a| <= a/32).
    const B big_x = xsimd::select(big, ac, B(1.0)), big_y = xsimd::select(big, B(1.0), ac);
    B num;
    if constexpr (detail::has_fma<A>) {
        num = dd::fnmadd(c, big_x, big_y);
    } else {
        const dd::pair<A> cx = dd::two_prod(c, big_x);
        num = (big_y - cx.hi) - cx.lo;
    }
    const dd::pair<A> cy = dd::two_prod(c, big_y);
    const dd::pair<A> dx = dd::fast_two_sum(big_x, cy.hi);  // X >= c Y
    const dd::pair<A> u = dd::div(dd::pair<A>{num, B(0.0)}, dd::pair<A>{dx.hi, dx.lo + cy.lo});
    // atan u = u + u^3 P(u^2), P the Taylor series to u^11: |u| <= 1/32 + 2^-40, so the
    // truncation u^12/13 is below 2^-63 relative.
    const B z = u.hi * u.hi;
    const B poly = dd::horner(z, -0x1.5555555555555p-2,  // -1/3
                              0x1.999999999999ap-3,      // 1/5
                              -0x1.2492492492492p-3,     // -1/7
                              0x1.c71c71c71c71cp-4,      // 1/9
                              -0x1.745d1745d1746p-4);    // -1/11
    const B au_lo = dd::fmadd(u.hi * z, poly, u.lo);
    // atan c + atan u: atan c >= atan(1/16) > |u| or atan c = 0 (j = 0).
    const dd::pair<A> s = dd::fast_two_sum(dd::lookup32(detail::atan_tab_hi, j), u.hi);
    const B s_lo = s.lo + (dd::lookup32(detail::atan_tab_lo, j) + au_lo);
    // a > 1: pi/2 - atan t (atan t <= pi/4 + 2^-5).
    const dd::pair<A> cp = dd::fast_two_sum(B(detail::pio2_hi), -s.hi);
    const B hi = xsimd::select(big, cp.hi, s.hi);
    const B lo = xsimd::select(big, cp.lo + (B(detail::pio2_lo) - s_lo), s_lo);
    B res = xsimd::select(inf, B(detail::pio2_hi), hi + lo);
    res = xsimd::copysign(res, x);
    res = xsimd::select(a < B(0x1.0p-27), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

// asin(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> asin_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::abs(x);
    const auto p = detail::asin_core(xsimd::min(a, B(1.0)));
    // a > 1/2: pi/2 - 2 asin(s) as a pair
    const dd::pair<A> far = dd::add(dd::pair<A>{B(detail::pio2_hi), B(detail::pio2_lo)},
                                    dd::pair<A>{B(-2.0) * p.v.hi, B(-2.0) * p.v.lo});
    B res = xsimd::select(p.big, far.hi + far.lo, p.v.hi + p.v.lo);
    res = xsimd::select(a == B(1.0), B(detail::pio2_hi), res);
    res = xsimd::select(a > B(1.0), B(std::numeric_limits<double>::quiet_NaN()), res);
    res = xsimd::copysign(res, x);
    res = xsimd::select(a < B(0x1.0p-27), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

// acos(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> acos_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::abs(x);
    const auto p = detail::asin_core(xsimd::min(a, B(1.0)));
    const auto neg = x < B(0.0);
    // |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(s); x < -1/2: pi - 2 asin(s)
    const B sgn = xsimd::select(neg, B(1.0), B(-1.0));
    const B base_hi = xsimd::select(p.big, xsimd::select(neg, B(2.0 * detail::pio2_hi), B(0.0)),
                                    B(detail::pio2_hi));
    const B base_lo = xsimd::select(p.big, xsimd::select(neg, B(2.0 * detail::pio2_lo), B(0.0)),
                                    B(detail::pio2_lo));
    const B scale = xsimd::select(p.big, B(2.0) * -sgn, sgn);  // sign and factor of asin(s)
    const dd::pair<A> r =
        dd::add(dd::pair<A>{base_hi, base_lo}, dd::pair<A>{scale * p.v.hi, scale * p.v.lo});
    B res = r.hi + r.lo;
    res = xsimd::select(x == B(1.0), B(0.0), res);
    res = xsimd::select(x == B(-1.0), B(2.0 * detail::pio2_hi), res);
    res = xsimd::select(a > B(1.0), B(std::numeric_limits<double>::quiet_NaN()), res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

}  // namespace numfuse::kernels
