// cbrt(x), the real cube root, for float64 and float32 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   cbrt_kernel(batch<double>) / cbrt_kernel(batch<float>): the real cube root per lane.
//   Max error <= 1 ULP against the correctly rounded result, every level and dtype (the
//   method's bound is 0.5 + 2^-12 ULP in float64, 0.5 + 2^-6 ULP in float32;
//   tests/test_accuracy.py and tests/test_evaluate_accuracy.py check it against mpmath,
//   tests/test_log_family_fast_paths.py every float32 in [1, 8) and a sweep of all binades
//   against float64). NumPy's float64 cbrt is 2.75 ULP off on x86-64 (SVML), numfuse's is not.
//   Valid range: all inputs. Subnormal inputs are reduced exactly (AVX-512: vgetmant /
//   vgetexp; elsewhere an exact scaling by bit operations), so their roots are as accurate
//   as the others' (xsimd's cbrt(5e-324) is 1.35e-108, exact 1.71e-108).
//   cbrt(+-0) = +-0, cbrt(+-inf) = +-inf, cbrt(-x) = -cbrt(x) bit for bit.
//   cbrt(NaN) is the input quieted (payload and sign kept), as np.cbrt returns it for
//   float32 and float64. No floating-point condition is meaningful here: cbrt raises none
//   (NumPy's raises none either), the loops report none.
//   float32 lanes are computed in float32 arithmetic where the level has fused
//   multiply-add (AVX2+FMA, AVX-512, NEON: every product that must be exact is one FMA);
//   on SSE2 they are widened, computed by the float64 kernel and rounded once.
//
// Method (one scheme for both types; division-free)
//   |x| = m 2^e, m in [1, 2) (AVX-512: vgetmant / vgetexp, which take subnormal inputs as
//   they come; elsewhere from the bits, subnormals scaled by 2^1022 (2^126) first by bit
//   operations), e = 3q + r with r in {-1, 0, 1} (q = nearest(e/3) through the 1.5*2^52
//   (2^23) shifter: e/3 is never within 1/6 of a half-integer), v = m 2^r in [1/2, 4)
//   exactly, cbrt(|x|) = cbrt(v) 2^q.
//   1. u ~ v^(-1/3) = P(m) 2^(-r/3): P a degree-5 fit of m^(-1/3) on [1, 2) in powers of
//      m (relative error 2^-17.4 with float64 coefficients, 2^-17.27 with them rounded to
//      float32 and evaluated in float32; a least-squares fit weighted towards minimax
//      relative error, made with numpy.polynomial for this kernel), times 2^(1/3), 1 or
//      2^(-1/3) picked by r (AVX-512: one permute).
//   2. float64 only: one Newton step for the inverse cube root, u += u (1 - v u^3) / 3:
//      relative error 2 (2^-17.4)^2 + rounding, below 2^-33.
//   3. y0 = v u^2 ~ cbrt(v) (relative error below 2^-33 in float64, 2^-16.2 in float32);
//      its residual y0^3 - v is computed accurately (cbrt_residual: y0^2 as an exact pair,
//      then two FMAs; Dekker's split for float64 on SSE2), and one Newton step
//      for y^3 = v, y = y0 - (y0^3 - v) u^2 / 3 (u^2/3 ~ 1/(3 y0^2)), leaves a relative
//      error below 2^-64 (float64) / 2^-31 (float32: e^2 from the step, 2^-32.4, and
//      2^-32.4 from u^2/3's own error 2^-16.2 times the correction) before the final
//      addition rounds once.
//   4. y 2^q (exact: 2^q and y 2^q are normal for every q here; AVX-512: vscalef), the
//      sign of x put back; +-0, +-inf and NaN from x itself (AVX-512: one vfixupimm).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/avx512_lanes.hpp"
#include "kernels/common.hpp"
#include "kernels/dd.hpp"

namespace numfuse::kernels {
namespace detail {

template <class T>
struct cbrt_consts;
template <>
struct cbrt_consts<double> {
    static constexpr double shifter = 0x1.8p52;
    static constexpr std::int64_t one_bits = 0x3ff0000000000000;  // bits(1.0)
    static constexpr std::int64_t mant_mask = 0x000fffffffffffff;
    static constexpr int mant_bits = 52;
    static constexpr double min_normal = 0x1p-1022;
    static constexpr double sub_exp = 1022.0;
    static constexpr double exp_bias = 0x1p52 + 1023.0;
    static constexpr std::int64_t magic_bits = 0x4330000000000000;  // bits(2^52)
};
template <>
struct cbrt_consts<float> {
    static constexpr float shifter = 0x1.8p23f;
    static constexpr std::int32_t one_bits = 0x3f800000;  // bits(1.0f)
    static constexpr std::int32_t mant_mask = 0x007fffff;
    static constexpr int mant_bits = 23;
    static constexpr float min_normal = 0x1p-126f;
    static constexpr float sub_exp = 126.0f;
    static constexpr float exp_bias = 0x1p23f + 127.0f;
    static constexpr std::int32_t magic_bits = 0x4b000000;  // bits(2^23)
};

// P(m) ~ m^(-1/3) on m in [1, 2), relative error 2^-17.4 (see the method); float32 lanes
// take the coefficients rounded to float32 (2^-17.27 evaluated in float32).
template <class B>
NUMFUSE_ALWAYS_INLINE B cbrt_inv_seed(const B& m) noexcept {
    using T = typename B::value_type;
    return fused_horner(m, static_cast<T>(0x1.c7f27427350cap+0),  // 1.7810433002205621
                        static_cast<T>(-0x1.90e44a4222525p+0),    // -1.5659834300480011
                        static_cast<T>(0x1.3e6516f589a10p+0),     // 1.243730006166178
                        static_cast<T>(-0x1.32180ad1c0bd9p-1),    // -0.5978396779104244
                        static_cast<T>(0x1.3f9d6cd91129fp-3),     // 0.15606198346553854
                        static_cast<T>(-0x1.16d2836b645b7p-6));   // -0.017017963733058496
}

// 2^(-r/3) for r = 1 and -1 (float64 values; float32 lanes take them rounded).
inline constexpr double cbrt_scale_p1 = 0x1.965fea53d6e3dp-1;  // 2^(-1/3)
inline constexpr double cbrt_scale_m1 = 0x1.428a2f98d728bp+0;  // 2^(1/3)

#if defined(__AVX512F__)
// vfixupimm response for cbrt, one nibble per input class: QNaN, SNaN -> QNaN(x);
// +-0, +-inf -> x; +1, negative, positive -> the computed value.
inline constexpr int cbrt_fixup = 0x00110122;
// 2^(-r/3) indexed by r's two's complement (the permutes read the index's low 4 / 3 bits:
// r = -1 is entry 15 / 7).
alignas(64) inline constexpr float cbrt_scale_f32[16] = {1.0f, static_cast<float>(cbrt_scale_p1),
                                                         0.0f, 0.0f,
                                                         0.0f, 0.0f,
                                                         0.0f, 0.0f,
                                                         0.0f, 0.0f,
                                                         0.0f, 0.0f,
                                                         0.0f, 0.0f,
                                                         0.0f, static_cast<float>(cbrt_scale_m1)};
alignas(64) inline constexpr double cbrt_scale_f64[8] = {1.0, cbrt_scale_p1, 0.0, 0.0,
                                                         0.0, 0.0,           0.0, cbrt_scale_m1};
template <class T>
inline const T* cbrt_scale_table() noexcept {
    if constexpr (sizeof(T) == 8) {
        return cbrt_scale_f64;
    } else {
        return cbrt_scale_f32;
    }
}
#endif

// y0^3 - v to a relative error of about one rounding of the result (|y0^3 - v| is about
// 2^-16 v in float32, 2^-31 v in float64): on FMA levels s + s_lo = y0^2 exactly, then
// RN(s y0 - v) and s_lo y0 added, each in one FMA; on SSE2 (float64 only) two exact
// products by Dekker's split (dd::two_prod) and p - v, exact by Sterbenz (p ~ v).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> cbrt_residual(const xsimd::batch<T, A>& y0,
                                                       const xsimd::batch<T, A>& v) noexcept {
    if constexpr (has_fma<A>) {
        const xsimd::batch<T, A> s = y0 * y0;
        const xsimd::batch<T, A> s_lo = fused_msub(y0, y0, s);
        return fused_madd(s_lo, y0, fused_msub(s, y0, v));
    } else {
        static_assert(std::is_same<T, double>::value, "float32 lanes run here only with FMA");
        const dd::pair<A> s = dd::two_prod(y0, y0);
        const dd::pair<A> p = dd::two_prod(s.hi, y0);
        return (p.hi - v) + dd::fmadd(s.lo, y0, p.lo);
    }
}

template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> cbrt_any(const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
    using I = xsimd::batch<int_of_t<T>, A>;
    using C = cbrt_consts<T>;
    const B shifter(C::shifter);
    B m, e;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        m = avx512::mant_1_2(x);
        e = avx512::exponent_of(x);
    } else
#endif
    {
        using U = xsimd::batch<std::make_unsigned_t<int_of_t<T>>, A>;
        const B ax = xsimd::abs(x);
        // Subnormals (and zeros, replaced at the end) scaled by 2^1022 (2^126) exactly and
        // without a multiplication (a subnormal operand takes a microcode assist on x86):
        // ax = N 2^-1074, bits(ax) | bits(1.0) is 1 + N 2^-52, minus 1 is N 2^-52 = ax 2^1022.
        const auto sub = ax < B(C::min_normal);
        const B xs = xsimd::select(sub, as_float<T, A>(as_int(ax) | I(C::one_bits)) - B(T(1)), ax);
        const I bits = as_int(xs);
        const U eb = bit_cast<U>(bits) >> C::mant_bits;  // biased exponent (sign bit clear)
        e = (as_float<T, A>(bit_cast<I>(eb) | I(C::magic_bits)) - B(C::exp_bias)) -
            xsimd::select(sub, B(C::sub_exp), B(T(0)));
        m = as_float<T, A>((bits & I(C::mant_mask)) | I(C::one_bits));
    }
    const B zq = fused_madd(e, B(T(1) / T(3)), shifter);  // q in the low bits
    const B q = zq - shifter;
    const B r = fused_nmadd(q, B(T(3)), e);  // -1, 0 or 1, exact
    const B zr = r + shifter;                 // r in the low bits
    B v, scale_r;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        v = avx512::scale_by(m, r);
        scale_r = avx512::permute_table(zr, cbrt_scale_table<T>());
    } else
#endif
    {
        // v = m 2^r: r's integer from the shifter's low bits, shifted into the exponent
        // field (the shifter's own bits leave the word).
        v = as_float<T, A>(as_int(m) + (as_int(zr) << C::mant_bits));
        scale_r =
            xsimd::select(r == B(T(1)), B(static_cast<T>(cbrt_scale_p1)),
                          xsimd::select(r == B(T(-1)), B(static_cast<T>(cbrt_scale_m1)), B(T(1))));
    }
    B u = cbrt_inv_seed(m) * scale_r;
    if constexpr (sizeof(T) == 8) {
        const B u3 = (u * u) * u;
        u = fused_madd(u * B(1.0 / 3.0), fused_nmadd(v, u3, B(1.0)), u);
    }
    const B uu = u * u;
    const B y0 = v * uu;
    const B residual = cbrt_residual(y0, v);
    const B y = fused_nmadd(residual, uu * B(T(1) / T(3)), y0);
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        // y in [1, 2), q in [-358, 341] (float64) / [-50, 42] (float32): y 2^q is normal.
        const B res = avx512::sign_from(avx512::scale_by(y, q), x);
        return avx512::fixup<cbrt_fixup>(res, x);
    }
#endif
    const B pow2q = as_float<T, A>((as_int(zq) << C::mant_bits) + I(C::one_bits));  // 2^q
    const B res = xsimd::bitwise_or(y * pow2q, xsimd::bitwise_and(x, B(T(-0.0))));
    // +-0, +-inf and NaN: x + x is the same zero or infinity, or the input NaN quieted.
    const B ax = xsimd::abs(x);
    return xsimd::select((ax == B(T(0))) | ~(ax < B(std::numeric_limits<T>::infinity())), x + x,
                         res);
}

}  // namespace detail

// cbrt(x), float64 lanes: <= 1 ULP (0.5 + 2^-12 by the method), all inputs.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> cbrt_kernel(
    const xsimd::batch<double, Arch>& x) noexcept {
    return detail::cbrt_any(x);
}

// cbrt(x), float32 lanes: <= 1 ULP (0.5 + 2^-6 by the method) in float32 arithmetic on FMA
// levels; on SSE2 the float64 kernel on the widened lanes, rounded once.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> cbrt_kernel(
    const xsimd::batch<float, Arch>& x) noexcept {
    if constexpr (detail::has_fma<Arch>) {
        return detail::cbrt_any(x);
    } else {
        xsimd::batch<double, Arch> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::cbrt_any(lo), detail::cbrt_any(hi));
    }
}

}  // namespace numfuse::kernels
