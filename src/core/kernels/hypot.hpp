// hypot(a, b) = sqrt(a^2 + b^2) for float64 SIMD lanes (xsimd 8.1), and over arrays; and
// sqrt_kernel, the square root ufunc's kernel.
//
// Contract
//   sqrt_kernel(batch<T>), float32 and float64: the hardware's correctly rounded square
//   root, bit for bit (sqrt(-0) = -0, x < 0 -> the default NaN, NaN -> x quieted), with
//   positive subnormal inputs first scaled by 2^1022 (float32: 2^126) with integer
//   operations, the root scaled back by 2^-511 (2^-63), which is exact (the roots of
//   subnormals are normal): a square root with a subnormal operand takes a microcode assist
//   on x86 (~100x a plain one), and inputs spanning the whole range (2.6% subnormal lanes,
//   a fifth of the 8-lane batches) made the ufunc twice as slow as the bare instruction.
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

// sqrt(x) per lane (contract above).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> sqrt_kernel(const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
    using I = xsimd::batch<detail::int_of_t<T>, A>;
    using Int = detail::int_of_t<T>;
    constexpr bool f64 = sizeof(T) == 8;
    // Subnormal lanes (AVX-512: one vfpclass; both signs there: a negative subnormal gives
    // (bits | bits(1)) - 1 <= -2 and so NaN, as it should); elsewhere the positive ones.
    typename B::batch_bool_type sub;
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    if constexpr (detail::is_avx512<A>) {
        if constexpr (f64) {
            sub = _mm512_fpclass_pd_mask(x, 0x20);
        } else {
            sub = _mm512_fpclass_ps_mask(x, 0x20);
        }
    } else
#endif
    {
        sub =
            (x < detail::from_bits<T, A>(static_cast<Int>(f64 ? 0x0010000000000000 : 0x00800000))) &
            (x > B(T(0)));  // below the smallest normal number, above 0
    }
    // x = N 2^-1074 (2^-149): bits(x) | bits(1.0) is 1 + N 2^-52 (2^-23), minus 1 is x 2^1022
    // (x 2^126) exactly, without a multiplication by a subnormal.
    const I one_bits(static_cast<Int>(f64 ? 0x3ff0000000000000 : 0x3f800000));  // bits(1)
    const B scaled = detail::as_float<T, A>(detail::as_int(x) | one_bits) - B(T(1));
    const B root = detail::square_root(xsimd::select(sub, scaled, x));
    // 2^-511 (2^-63): exponent field 1023 - 511 (127 - 63).
    const B unscale =
        detail::from_bits<T, A>(static_cast<Int>(f64 ? 0x2000000000000000 : 0x20000000));
    return xsimd::select(sub, root * unscale, root);
}

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
    const B y = detail::square_root(detail::fused_madd(a, a, b * b));
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
