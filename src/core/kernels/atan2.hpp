// arctan2(y, x), the quadrant-aware arctangent of y / x, for float64 SIMD lanes (xsimd 8.1),
// and over arrays.
//
// Contract
//   atan2_kernel(batch<double> y, x): per lane. Max error <= 1 ULP against the correctly
//   rounded result at every level (pair arithmetic to about 2^-100, one rounding at the
//   end; tests/test_accuracy.py checks it against mpmath). float32 values are computed in
//   float64 lanes by the same kernel and rounded once by the caller.
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
//   atan t as kernels/invtrig.hpp's atan_kernel computes it: c = j/16 near t, atan t =
//   atan c + atan u with u = (Y - c X) / (X + c Y), numerator and denominator as exact
//   pairs (dd::two_prod; Y - c X.hi is exact by Sterbenz) and one pair division, after X
//   and Y were scaled by 2^-E (E: X's exponent, clamped to [-1022, 1022]) so that nothing in
//   between overflows or underflows. atan u = u + u^3 P(u^2) (the same Taylor polynomial),
//   atan(j/16) from the same table. Where t < 2^-60, atan t = t to 2^-120 relative, and t is
//   the correctly rounded quotient y / x itself (subnormal results rounded once).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/invtrig.hpp"

namespace numfuse::kernels {

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan2_kernel(
    const xsimd::batch<double, A>& y, const xsimd::batch<double, A>& x) noexcept {
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
                                 xsimd::bitwise_and(big, detail::from_bits<double, A>(exp_mask))),
                   B(0x1p1022));  // 2^-1023 would be subnormal: the top binade scales to [2, 4)
    const B down = detail::as_float<double, A>(I(std::int64_t(2046) << 52) - detail::as_int(up));
    const B X = big * down, Y = small * down;
    // c = j/16 near t = Y / X (an approximate quotient only picks c).
    const B t = Y * dd::reciprocal_approx(X);
    const B shifter(0x1.8p52);
    const B zj = dd::fmadd(t, B(16.0), shifter);
    const B c = (zj - shifter) * B(0.0625);
    const I j = detail::as_int(zj) & I(31);
    const dd::pair<A> cx = dd::two_prod(c, X);
    const dd::pair<A> num{Y - cx.hi, -cx.lo};  // Y - cx.hi exact (c = 0, or c X within 2x of Y)
    const dd::pair<A> cy = dd::two_prod(c, Y);
    const dd::pair<A> dx = dd::fast_two_sum(X, cy.hi);  // X >= c Y
    const dd::pair<A> u = dd::div(num, dd::pair<A>{dx.hi, dx.lo + cy.lo});
    const B z = u.hi * u.hi;
    const B poly = dd::horner(z, -0x1.5555555555555p-2,  // -1/3
                              0x1.999999999999ap-3,      // 1/5
                              -0x1.2492492492492p-3,     // -1/7
                              0x1.c71c71c71c71cp-4,      // 1/9
                              -0x1.745d1745d1746p-4);    // -1/11
    const B au_lo = dd::fmadd(u.hi * z, poly, u.lo);
    const dd::pair<A> s = dd::fast_two_sum(dd::lookup32(detail::atan_tab_hi, j), u.hi);
    B t_hi = s.hi;
    B t_lo = s.lo + (dd::lookup32(detail::atan_tab_lo, j) + au_lo);
    // Tiny t: the quotient itself (no scaling: a subnormal result is rounded once). Y 2^60
    // may overflow to inf for huge Y, where t is not tiny anyway.
    const auto tiny = small * B(0x1p60) < big;
    if (xsimd::any(tiny)) {
        t_hi = xsimd::select(tiny, small / big, t_hi);
        t_lo = xsimd::select(tiny, B(0.0), t_lo);
    }
    // |y| > |x|: pi/2 - atan t.
    const dd::pair<A> h = dd::fast_two_sum(B(detail::pio2_hi), -t_hi);
    const B a_hi = xsimd::select(swap, h.hi, t_hi);
    const B a_lo = xsimd::select(swap, h.lo + (B(detail::pio2_lo) - t_lo), t_lo);
    // x negative (its sign bit, -0 included): pi - that.
    const auto xneg = xsimd::copysign(B(1.0), x) < B(0.0);
    const dd::pair<A> p = dd::fast_two_sum(B(2 * detail::pio2_hi), -a_hi);
    const B r_hi = xsimd::select(xneg, p.hi, a_hi);
    const B r_lo = xsimd::select(xneg, p.lo + (B(2 * detail::pio2_lo) - a_lo), a_lo);
    // Both zero: 0 or pi by x's sign (big == 0 gives NaNs above).
    B res = xsimd::select(big == B(0.0), xsimd::select(xneg, B(2 * detail::pio2_hi), B(0.0)),
                          r_hi + r_lo);
    res = xsimd::bitwise_or(res, xsimd::bitwise_and(y, B(-0.0)));  // res >= 0: y's sign
    return xsimd::select(xsimd::isnan(y) | xsimd::isnan(x), y + x, res);
}

// out[k] = atan2(y[k], x[k]) for float64 values (float32 ones widened: Out float, which
// the caller rounds to). out may be y or x.
template <class Out, class A>
inline void atan2_array(double* out, const double* y, const double* x, std::size_t n) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    std::size_t k = 0;
    for (; k + width <= n; k += width) {
        atan2_kernel(B::load_unaligned(y + k), B::load_unaligned(x + k)).store_unaligned(out + k);
    }
    if (k < n) {
        alignas(64) double ya[width], xa[width];
        for (std::size_t i = 0; i < width; ++i) ya[i] = xa[i] = 1.0;
        std::memcpy(ya, y + k, (n - k) * sizeof(double));
        std::memcpy(xa, x + k, (n - k) * sizeof(double));
        atan2_kernel(B::load_aligned(ya), B::load_aligned(xa)).store_aligned(ya);
        std::memcpy(out + k, ya, (n - k) * sizeof(double));
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
