// hypot(a, b) = sqrt(a^2 + b^2) for float64 SIMD lanes (xsimd 8.1), and over arrays.
//
// Contract
//   hypot_kernel(batch<double> a, b): per lane, without overflow or underflow in between.
//   Max error <= 1 ULP against the correctly rounded result, every level (the method's
//   bound is 0.5 + 2^-40 ULP for normal results; a subnormal result is rounded twice, still
//   below 1 ULP); tests/test_accuracy.py checks it against mpmath.
//   hypot_f32_kernel(batch<double> a, b): the same for float32 values in float64 lanes, as
//   sqrt(a^2 + b^2) in float64 (the squares of float32 values are exact, their sum and the
//   root are rounded in float64, far inside float32's half-ULP), rounded once by the caller.
//   Special values as C99 and NumPy: hypot(+-inf, anything) = +inf, NaN included;
//   otherwise a NaN argument gives NaN (a + b: the first NaN quieted, payload kept);
//   hypot(+-0, +-0) = +0; hypot(x, +-0) = |x| exactly.
//   Floating-point status flags raised inside are meaningless (the loops compute them).
//
// Method (float64)
//   big = max(|a|, |b|), small = min: both scaled by 2^-E, E the exponent of big (clamped
//   to [-1022, 1022], so the scale and its inverse are normal), exactly, so that big is in
//   [1, 4) (smaller for subnormal big) and
//   the squares neither overflow nor underflow wherever they matter (a small below
//   2^-1022 big does not change the rounded result). s = big^2 + small^2 as an exact pair
//   (dd::two_prod, dd::two_sum); r = sqrt(s_hi) correctly rounded, then one correction
//   r + (s - r^2) / (2 r) with the residual s - r^2 computed exactly (dd::two_prod), so the
//   sum is within about 2^-100 of the exact root before it rounds once; then times 2^E.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"

namespace numfuse::kernels {

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> hypot_kernel(
    const xsimd::batch<double, A>& a, const xsimd::batch<double, A>& b) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    constexpr std::int64_t exp_mask = 0x7ff0000000000000;
    const B ax = xsimd::abs(a), ay = xsimd::abs(b);
    const B big = xsimd::max(ax, ay), small = xsimd::min(ax, ay);  // NaN lanes: replaced
    // 2^E: big's exponent bits alone, in [2^-1022, 2^1022]; 2^-E from its bits.
    const B up =
        xsimd::min(xsimd::select(big < B(0x1p-1022), B(0x1p-1022),
                                 xsimd::bitwise_and(big, detail::from_bits<double, A>(exp_mask))),
                   B(0x1p1022));  // 2^-1023 would be subnormal: the top binade scales to [2, 4)
    const B down = detail::as_float<double, A>(I(std::int64_t(2046) << 52) - detail::as_int(up));
    const B bs = big * down, ss = small * down;
    const dd::pair<A> p = dd::two_prod(bs, bs);
    const dd::pair<A> q = dd::two_prod(ss, ss);
    const dd::pair<A> s = dd::fast_two_sum(p.hi, q.hi);  // p.hi >= q.hi
    const B s_lo = s.lo + (p.lo + q.lo);
    const B r = detail::square_root(s.hi);
    const dd::pair<A> rr = dd::two_prod(r, r);
    const B residual = ((s.hi - rr.hi) - rr.lo) + s_lo;  // s - r^2; s.hi - rr.hi is exact
    const B y = (r + residual / (r + r)) * up;
    const B inf(__builtin_inf());
    B res = xsimd::select(big == B(0.0), B(0.0), y);
    res = xsimd::select(xsimd::isnan(a) | xsimd::isnan(b), a + b, res);
    return xsimd::select((ax == inf) | (ay == inf), inf, res);
}

// float32 values in float64 lanes (see the contract): the caller rounds once to float32.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> hypot_f32_kernel(
    const xsimd::batch<double, A>& a, const xsimd::batch<double, A>& b) noexcept {
    using B = xsimd::batch<double, A>;
    const B inf(__builtin_inf());
    const B y = detail::square_root(xsimd::fma(a, a, b * b));
    const B ax = xsimd::abs(a), ay = xsimd::abs(b);
    B res = xsimd::select(xsimd::isnan(a) | xsimd::isnan(b), a + b, y);
    return xsimd::select((ax == inf) | (ay == inf), inf, res);
}

// out[k] = hypot(a[k], b[k]) for float64 values; Out (float or double) is the type the
// caller rounds the results to (float: the values are float32 ones, widened). out may be a
// or b.
template <class Out, class A>
inline void hypot_array(double* out, const double* a, const double* b, std::size_t n) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    const auto one = [](const B& x, const B& y) noexcept {
        if constexpr (std::is_same<Out, float>::value) {
            return hypot_f32_kernel(x, y);
        } else {
            return hypot_kernel(x, y);
        }
    };
    std::size_t k = 0;
    for (; k + width <= n; k += width) {
        one(B::load_unaligned(a + k), B::load_unaligned(b + k)).store_unaligned(out + k);
    }
    if (k < n) {
        alignas(64) double xa[width], xb[width];
        for (std::size_t j = 0; j < width; ++j) xa[j] = xb[j] = 1.0;
        std::memcpy(xa, a + k, (n - k) * sizeof(double));
        std::memcpy(xb, b + k, (n - k) * sizeof(double));
        one(B::load_aligned(xa), B::load_aligned(xb)).store_aligned(xa);
        std::memcpy(out + k, xa, (n - k) * sizeof(double));
    }
}

// One pair, the same bits as hypot_array.
template <class Out, class A>
inline double hypot_one(double a, double b) noexcept {
    double r = 0.0;
    hypot_array<Out, A>(&r, &a, &b, 1);
    return r;
}

}  // namespace numfuse::kernels
