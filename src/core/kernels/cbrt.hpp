// cbrt(x), the real cube root, for float64 and float32 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   cbrt_kernel(batch<double>) / cbrt_kernel(batch<float>): the real cube root per lane.
//   Max error <= 1 ULP against the correctly rounded result, every level and dtype (the
//   method's bound is 0.5 + 2^-12 ULP; tests/test_accuracy.py and
//   tests/test_evaluate_accuracy.py check it against mpmath). NumPy's float64 cbrt is 2.75
//   ULP off on x86-64 (SVML), numfuse's is not.
//   Valid range: all inputs. Subnormal inputs are exact-scaled into the normal range, so
//   their roots are as accurate as the others' (xsimd's cbrt(5e-324) is 1.35e-108, exact
//   1.71e-108). cbrt(+-0) = +-0, cbrt(+-inf) = +-inf, cbrt(-x) = -cbrt(x) bit for bit.
//   cbrt(NaN) is the input quieted (payload and sign kept), as np.cbrt returns it for
//   float32 and float64. No floating-point condition is meaningful here: cbrt raises none
//   (NumPy's raises none either), the loops report none.
//   float32 lanes are widened, computed by the float64 kernel and rounded once
//   (<= 0.5 + 2^-28 float32 ULP).
//
// Method (float64; division-free, every level the same arithmetic)
//   |x| = m 2^e, m in [1, 2) (subnormals scaled by 2^1022 first, by bit operations), e = 3q + r
//   with r in {0, 1, 2} (q = nearest((e - 1)/3) through the 1.5*2^52 shifter: (e - 1)/3 is never
//   within 1/6 of a half-integer), v = m 2^r in [1, 8) exactly, cbrt(|x|) = cbrt(v) 2^q.
//   1. u ~ v^(-1/3) = P(m - 1.5) 2^(-r/3): P a degree-5 fit of m^(-1/3) on [1, 2)
//      (relative error 2^-17.2; a Chebyshev fit weighted by 1/f, made with numpy.polynomial
//      for this kernel), times 1, 2^(-1/3) or 2^(-2/3) picked by r.
//   2. One Newton step for the inverse cube root, u += u (1 - v u^3) / 3: relative error
//      2 (2^-17.2)^2 + rounding, below 2^-33.
//   3. y0 = v u^2 ~ cbrt(v) (relative error below 2^-33); its residual y0^3 - v is
//      computed exactly enough with two exact products (dd::two_prod: FMA, or Dekker's
//      split on SSE2) and a Sterbenz subtraction, and one Newton step for y^3 = v,
//      y = y0 - (y0^3 - v) u^2 / 3 (u^2/3 ~ 1/(3 y0^2) to 2^-32), leaves an error below
//      2^-64 relative before the final addition rounds once.
//   4. y 2^q (exact: 2^q is normal for every q here), the sign of x put back.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"

namespace numfuse::kernels {
namespace detail {

// P(t) ~ (t + 1.5)^(-1/3) on t in [-0.5, 0.5], relative error 2^-17.2 (see the method).
template <class B>
NUMFUSE_ALWAYS_INLINE B cbrt_inv_seed(const B& t) noexcept {
    return horner(t, 0x1.bf46929ea3c4fp-1,    // 0.8735853022243506
                  -0x1.8d961170c8b3ap-3,      // -0.19413388848723817
                  0x1.5ffcecbffa96dp-4,       // 0.08593456726490496
                  -0x1.6c857b8a8c02fp-5,      // -0.04449724320545589
                  0x1.d195feea138a5p-6,       // 0.02841710943203481
                  -0x1.103ba49cd8355p-6);     // -0.016615782503666427
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> cbrt_f64(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    using U = xsimd::batch<std::uint64_t, A>;
    constexpr std::int64_t mant_mask = 0x000fffffffffffff;
    constexpr std::int64_t one_bits = 0x3ff0000000000000;  // bits(1.0)
    const B shifter(0x1.8p52);
    const B ax = xsimd::abs(x);
    // Subnormals (and zeros, replaced at the end) scaled by 2^1022, exactly and without a
    // multiplication (a subnormal operand takes a microcode assist on x86): ax = N 2^-1074,
    // bits(ax) | bits(1.0) is 1 + N 2^-52, minus 1 is N 2^-52 = ax 2^1022.
    const auto sub = ax < B(0x1p-1022);
    const B xs = xsimd::select(sub, as_float<double, A>(as_int(ax) | I(one_bits)) - B(1.0), ax);
    const I bits = as_int(xs);
    const U eb = bit_cast<U>(bits) >> 52;  // biased exponent (the sign bit is clear)
    const B e =
        (as_float<double, A>(bit_cast<I>(eb) | I(0x4330000000000000)) - B(0x1p52 + 1023.0)) -
        xsimd::select(sub, B(1022.0), B(0.0));
    const B zq = xsimd::fma(e - B(1.0), B(1.0 / 3.0), shifter);  // q in the low bits
    const B q = zq - shifter;
    const B r = xsimd::fnma(q, B(3.0), e);  // 0, 1 or 2, exact
    const I mant = bits & I(mant_mask);
    const B m = as_float<double, A>(mant | I(one_bits));
    // v = m 2^r: r's integer from the shifter's low bits, shifted into the exponent field.
    const B v = as_float<double, A>(mant | (I(one_bits) + (as_int(r + shifter) << 52)));
    const B scale_r = xsimd::select(r == B(1.0), B(0x1.965fea53d6e3dp-1),           // 2^(-1/3)
                                    xsimd::select(r == B(2.0), B(0x1.428a2f98d728bp-1),  // 2^(-2/3)
                                                  B(1.0)));
    B u = cbrt_inv_seed(m - B(1.5)) * scale_r;
    const B u3 = (u * u) * u;
    u = xsimd::fma(u * B(1.0 / 3.0), xsimd::fnma(v, u3, B(1.0)), u);
    const B uu = u * u;
    const B y0 = v * uu;
    const dd::pair<A> s = dd::two_prod(y0, y0);
    const dd::pair<A> p = dd::two_prod(s.hi, y0);
    const B residual = (p.hi - v) + xsimd::fma(s.lo, y0, p.lo);  // y0^3 - v; p.hi - v exact
    const B y = xsimd::fnma(residual, uu * B(1.0 / 3.0), y0);
    const B pow2q = as_float<double, A>((as_int(zq) << 52) + I(one_bits));  // 2^q, q in [-376, 341]
    const B res = xsimd::bitwise_or(y * pow2q, xsimd::bitwise_and(x, B(-0.0)));
    // +-0, +-inf and NaN: x + x is the same zero or infinity, or the input NaN quieted.
    return xsimd::select((ax == B(0.0)) | ~(ax < B(__builtin_inf())), x + x, res);
}

}  // namespace detail

// cbrt(x), float64 lanes: <= 1 ULP (0.5 + 2^-12 by the method), all inputs.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> cbrt_kernel(
    const xsimd::batch<double, Arch>& x) noexcept {
    return detail::cbrt_f64(x);
}

// cbrt(x), float32 lanes: the float64 kernel on the widened lanes, rounded once.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> cbrt_kernel(
    const xsimd::batch<float, Arch>& x) noexcept {
    xsimd::batch<double, Arch> lo, hi;
    detail::widen(x, lo, hi);
    return detail::narrow(detail::cbrt_f64(lo), detail::cbrt_f64(hi));
}

}  // namespace numfuse::kernels
