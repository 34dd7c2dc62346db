// sin, cos, tan for float64 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   sin_kernel / cos_kernel / tan_kernel(batch<double>): per lane.
//   Max error: <= 1 ULP over the whole domain, every level (measured about
//   0.52 ULP against mpmath by tests/test_evaluate_accuracy.py).
//   Valid range: all inputs.
//     |x| < 2^-27: sin and tan return x (so +-0 and subnormals are kept);
//     |x| >= 1.5e6, +-inf, NaN: those lanes go to the C library (glibc's
//     correctly reduced sin/cos/tan, as NumPy's results for them), which
//     returns NaN for +-inf and NaN.
//   float32 uses these in float64 (expr_ops.hpp) and rounds once.
//
// Method
//   x = k pi/2 + r, |r| <= pi/4 (1 + 2^-40): k from the 1.5*2^52 shifter,
//   pi/2 = P1 + P2 + P3 + P4 (three 32-bit pieces, so k*Pi is exact for
//   |k| < 2^21, and a 53-bit tail); x - k P1 is exact (Sterbenz), the rest
//   is accumulated with exact two-sums, so r = rh + rl to ~2^-120 absolute,
//   far below the closest approach of a double under 1.5e6 to a multiple
//   of pi/2. sin(r) = rh + (rh z S(z) + rl (1 - z/2)), cos(r) = (1 - z/2) +
//   (z^2 C(z) - rh rl) with z = rh^2 as an exact product, both as hi + lo
//   pairs (relative error ~2^-57); tan is the pair quotient sin/cos or
//   -cos/sin with one correction step. One rounding at the end.
//   S: degree 6, C: degree 5 minimax on z <= (pi/4)^2 * 1.02 (Remez with
//   tools/explog_remez.py's exchange; weighted error 2^-57.3 / 2^-59.3).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"

namespace numfuse::kernels {
namespace detail {

inline constexpr double trig_fast_limit = 1.5e6;  // |k| < 2^20: k * Pi exact

template <class A>
struct trig_parts {
    dd::pair<A> s, c;          // sin(r), cos(r)
    xsimd::batch<double, A> q;  // k reduced to {-2, -1, 0, 1, 2} (k mod 4, centred)
};

template <class A>
inline trig_parts<A> trig_core(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(0x1.8p52);
    const B kd = xsimd::fma(x, B(0x1.45f306dc9c883p-1), shifter) - shifter;  // round(2x/pi)
    const B t1 = xsimd::fnma(kd, B(0x1.921fb544p+0), x);                     // exact
    const dd::pair<A> h1 = dd::two_sum(t1, -(kd * B(0x1.0b4611a6p-34)));    // product exact
    const dd::pair<A> h2 = dd::two_sum(h1.hi, -(kd * B(0x1.3198a2ep-69)));  // product exact
    const B lo = (h1.lo + h2.lo) - kd * B(0x1.b839a252049c1p-104);
    const dd::pair<A> r = dd::fast_two_sum(h2.hi, lo);

    const dd::pair<A> z = dd::two_prod(r.hi, r.hi);
    const B zh = z.hi;
    const B sp = horner(zh, -0x1.5555555555555p-3,  // -0.16666666666666665741
                        0x1.111111111110ap-7,       // 0.0083333333333333210746
                        -0x1.a01a01a0188b5p-13,     // -0.00019841269841253608036
                        0x1.71de3a530b9acp-19,      // 2.7557319213424103166e-6
                        -0x1.ae64525be4614p-26,     // -2.5052104709780520915e-8
                        0x1.61206bda6800fp-33,      // 1.6058340666334401618e-10
                        -0x1.aa91d6c65bd5ep-41);    // -7.5773997468424373963e-13
    const B cp = horner(zh, 0x1.5555555555549p-5,   // 0.041666666666666581087
                        -0x1.6c16c16c14c8ep-10,     // -0.0013888888888871383891
                        0x1.a01a019c37a99p-16,      // 0.000024801587287788006607
                        -0x1.27e4f7b282838p-22,     // -2.7557313866998328804e-7
                        0x1.1ee9b0e8e4f18p-29,      // 2.0875657768807840884e-9
                        -0x1.8f903f5d0c51p-37);     // -1.1356276753810179184e-11
    const B half(0.5), one(1.0);
    const B s_tail = xsimd::fma(r.hi * zh, sp, r.lo * xsimd::fnma(half, zh, one));
    const dd::pair<A> s = dd::fast_two_sum(r.hi, s_tail);
    const B hz = half * zh;
    const B wh = one - hz;
    const B we = (one - wh) - hz;  // exact: 1 >= hz
    const B c_tail = xsimd::fma(zh * zh, cp, we - half * z.lo) - r.hi * r.lo;
    const dd::pair<A> c = dd::fast_two_sum(wh, c_tail);

    const B four_k = (xsimd::fma(kd, B(0.25), shifter) - shifter) * B(4.0);
    return {s, c, kd - four_k};
}

template <class A>
inline xsimd::batch<double, A> negate_if(const xsimd::batch_bool<double, A>& m,
                                         const xsimd::batch<double, A>& v) noexcept {
    return xsimd::select(m, -v, v);
}

}  // namespace detail

// sin(x), f64 lanes. Max error <= 1 ULP (see the contract above).
template <class A>
inline xsimd::batch<double, A> sin_kernel(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const auto p = detail::trig_core(x);
    const auto odd = xsimd::abs(p.q) == B(1.0);
    const B hi = xsimd::select(odd, p.c.hi, p.s.hi);
    const B lo = xsimd::select(odd, p.c.lo, p.s.lo);
    B res = detail::negate_if((p.q < B(0.0)) | (p.q == B(2.0)), hi + lo);
    const B ax = xsimd::abs(x);
    res = xsimd::select(ax < B(0x1.0p-27), x, res);
    const auto slow = !(ax < B(detail::trig_fast_limit));  // also NaN
    if (xsimd::any(slow)) res = dd::scalar_lanes(slow, x, res, [](double v) { return std::sin(v); });
    return res;
}

// cos(x), f64 lanes. Max error <= 1 ULP.
template <class A>
inline xsimd::batch<double, A> cos_kernel(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const auto p = detail::trig_core(x);
    const auto odd = xsimd::abs(p.q) == B(1.0);
    const B hi = xsimd::select(odd, p.s.hi, p.c.hi);
    const B lo = xsimd::select(odd, p.s.lo, p.c.lo);
    B res = detail::negate_if((p.q > B(0.5)) | (p.q < B(-1.5)), hi + lo);
    const auto slow = !(xsimd::abs(x) < B(detail::trig_fast_limit));
    if (xsimd::any(slow)) res = dd::scalar_lanes(slow, x, res, [](double v) { return std::cos(v); });
    return res;
}

// tan(x), f64 lanes. Max error <= 1 ULP.
template <class A>
inline xsimd::batch<double, A> tan_kernel(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const auto p = detail::trig_core(x);
    const auto odd = xsimd::abs(p.q) == B(1.0);
    const dd::pair<A> num{xsimd::select(odd, p.c.hi, p.s.hi), xsimd::select(odd, p.c.lo, p.s.lo)};
    const dd::pair<A> den{xsimd::select(odd, p.s.hi, p.c.hi), xsimd::select(odd, p.s.lo, p.c.lo)};
    const dd::pair<A> t = dd::div(num, den);
    B res = detail::negate_if(odd, t.hi + t.lo);
    const B ax = xsimd::abs(x);
    res = xsimd::select(ax < B(0x1.0p-27), x, res);
    const auto slow = !(ax < B(detail::trig_fast_limit));
    if (xsimd::any(slow)) res = dd::scalar_lanes(slow, x, res, [](double v) { return std::tan(v); });
    return res;
}

}  // namespace numfuse::kernels
