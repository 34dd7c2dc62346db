// cbrt(x), the real cube root, for float64 and float32 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   cbrt_kernel(batch<double>) / cbrt_kernel(batch<float>): the real cube root per lane.
//   Max error <= 1 ULP against the correctly rounded result, every level and dtype (the
//   method's bound is 0.5 + 2^-12 ULP in float64, 0.5 + 2^-6 ULP in float32 below AVX-512,
//   0.535 and 0.52 ULP at AVX-512; tests/test_accuracy.py and tests/test_evaluate_accuracy.py
//   check it against mpmath, tests/test_log_family_fast_paths.py every float32 in [1, 8) and
//   a sweep of all binades against float64, and float64 in [1, 8) against mpmath). NumPy's float64
//   cbrt is 2.75 ULP off on x86-64 (SVML), numfuse's is not. Valid range: all inputs. Subnormal
//   inputs are reduced exactly (AVX-512: vgetmant / vgetexp; elsewhere an exact scaling by bit
//   operations), so their roots are as accurate as the others' (xsimd's cbrt(5e-324) is 1.35e-108,
//   exact 1.71e-108). cbrt(+-0) = +-0, cbrt(+-inf) = +-inf, cbrt(-x) = -cbrt(x) bit for bit.
//   cbrt(NaN) is the input quieted (payload and sign kept), as np.cbrt returns it for
//   float32 and float64. No floating-point condition is meaningful here: cbrt raises none
//   (NumPy's raises none either), the loops report none.
//   float32 lanes are computed in float32 arithmetic where the level has fused
//   multiply-add (AVX2+FMA, AVX-512, NEON: every product that must be exact is one FMA);
//   on SSE2 they are widened, computed by the float64 kernel and rounded once.
//
// Method (below AVX-512; division-free)
//   |x| = m 2^e, m in [1, 2) (from the bits, subnormals scaled by 2^1022 (2^126) first by
//   bit operations), e = 3q + r with r in {-1, 0, 1} (q = nearest(e/3) through the 1.5*2^52
//   (2^23) shifter: e/3 is never within 1/6 of a half-integer), v = m 2^r in [1/2, 4)
//   exactly, cbrt(|x|) = cbrt(v) 2^q.
//   1. u ~ v^(-1/3) = P(m) 2^(-r/3): P a degree-5 fit of m^(-1/3) on [1, 2) in powers of
//      m (relative error 2^-17.4 with float64 coefficients, 2^-17.27 with them rounded to
//      float32 and evaluated in float32; a least-squares fit weighted towards minimax
//      relative error, made with numpy.polynomial for this kernel), times 2^(1/3), 1 or
//      2^(-1/3) picked by r.
//   2. float64 only: one Newton step for the inverse cube root, u += u (1 - v u^3) / 3:
//      relative error 2 (2^-17.4)^2 + rounding, below 2^-33.
//   3. y0 = v u^2 ~ cbrt(v) (relative error below 2^-33 in float64, 2^-16.2 in float32);
//      its residual y0^3 - v is computed accurately (cbrt_residual: y0^2 as an exact pair,
//      then two FMAs; Dekker's split for float64 on SSE2), and one Newton step
//      for y^3 = v, y = y0 - (y0^3 - v) u^2 / 3 (u^2/3 ~ 1/(3 y0^2)), leaves a relative
//      error below 2^-64 (float64) / 2^-31 (float32: e^2 from the step, 2^-32.4, and
//      2^-32.4 from u^2/3's own error 2^-16.2 times the correction) before the final
//      addition rounds once.
//   4. y 2^q (exact: 2^q and y 2^q are normal for every q here), the sign of x put back;
//      +-0, +-inf and NaN from x itself (x + x).
//
// Method, AVX-512 float64 lanes (cbrt_avx512_f64: fewer and shorter dependent steps; the
// loop's time follows the kernel's instruction count and the length of its dependency
// chain, and this one has no Newton step for the inverse root and no residual)
//   1. m = vgetmant(x) in [1, 2), e = vgetexp(x) (subnormals exact); q' = nearest(e/3) + 1
//      in zq's low bits (the shifter 1.5 2^52 + 1), r' = e - 3q' in {-4, -3, -2} in the low
//      bits of bits(e + 1.5 2^52) - 3 bits(zq) (integer lanes: the shifters' bits cancel
//      below bit 52), v8 = m 2^r' = |x| 2^(-3q') in [1/16, 1/2) exactly (r' added to m's
//      exponent field), so cbrt(|x|) = 2 cbrt(v8) 2^q'.
//   2. u = 2 v^(-1/3) rounded to 2^-15 (vrndscale), v = 8 v8: u0 = P(m) s(r'), P a degree-5
//      minimax fit of m^(-1/3) on [1, 2] (relative error 2^-17.41; Remez exchange on the
//      relative error, made for this kernel, evaluated by Estrin's scheme), s(r') = 2
//      2^(-(r' + 3)/3) from an 8-entry vpermpd table; u0 in (1.26, 2.52], so u has at most
//      17 significant bits and its relative error is |eps| <= 2^-17.40 + 2^-16/1.26 <=
//      2^-15.78.
//   3. u^2 (34 bits) and u^3 (51 bits) are exact products; hi + lo = v8 u^2 exactly (one
//      product and its FMA remainder); t = 1 - v8 u^3 = 1 - (1 + eps)^3 in one FMA, |t| <=
//      2^-14.19, rounded once relative to t (2^-67).
//   4. cbrt(v8) = (hi + lo) (1 - t)^(-2/3) exactly (v8 u^2 (v8 u^3)^(-2/3) = v8^(1/3)), and
//      (1 - t)^(-2/3) = 1 + t Q(t), Q = 2/3 + 5/9 t + 40/81 t^2 (binomial series; the
//      remainder is at most 110/243 |t|^4 (1 + 2^-12) <= 2^-57.9). y = hi + (lo + hi t Q):
//      the bracket is about 2^-14.8 y and carries relative errors of a few 2^-53 (2^-67 of
//      y), the omitted lo t Q is below 2^-67 y; the final addition rounds once. Total
//      before that rounding: 2^-57.85 relative, so max error 0.5 + 2^53 2^-57.85 = 0.535
//      ULP (measured 0.524 on 3.2e7 random arguments; the tests check <= 1 ULP).
//   5. y 2^q' by an integer add to y's exponent field (y in [0.39, 0.8), every result
//      normal), x's sign or-ed in, +-0, +-inf and NaN from x (one vfixupimm).
//
// Method, AVX-512 float32 lanes (cbrt_avx512_f32: the same scheme in float32 arithmetic,
// where an exact u^2 allows only 12 bits of u)
//   1. m, e, q = nearest(e/3) and r = e - 3q in {-1, 0, 1} as in the float64 method (no
//      bias: shifter 1.5 2^23), v = m 2^r in [1/2, 4) exactly.
//   2. u = P(m) 2^(-r/3) rounded to 2^-11 (vrndscale): P a degree-3 minimax fit of
//      m^(-1/3) on [1, 2] with float32 coefficients (relative error 2^-11.95, Estrin),
//      2^(-r/3) by one in-lane vpermilps; u in (0.63, 1.26] has at most 12 significant
//      bits, its relative error is at most 2^-11.9 + 2^-12/0.63 <= 2^-10.6.
//   3. u^2 exact (24 bits); hi + lo = v u^2 exactly (24 x 24 bits); t = 1 - (hi + lo) u by
//      two FMAs (error about 2^-24 |t|); |t| <= 2^-9.05 (its maximum over every reduced
//      argument, the float32 values of [1, 8)).
//   4. cbrt(v) = (hi + lo) (1 - t)^(-2/3) ~ hi + (lo + hi t (c1 + c2 t)), c1, c2 the
//      minimax pair for (1 - t)^(-2/3) = 1 + c1 t + c2 t^2 on |t| <= 2^-9.04, rounded to
//      float32 (error 2^-30.1; the Taylor pair 2/3, 5/9 leaves 40/81 |t|^3 = 2^-28.1). With
//      the roundings of t and of the bracket (2^-33 each) the relative error before the
//      final rounding is at most 2^-29.7: 0.5 + 2^-5.7 ULP by the method, and 0.5152 ULP
//      measured on every float32 in [1, 8), which is every reduced argument (every other
//      input is one of them times 2^(3q): tests/test_log_family_fast_paths.py checks them
//      all against 0.5 + 2^-6).
//   5. y 2^q (y in (0.79, 1.59)), the sign and the special values as in the float64 method.
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
// The AVX-512 float64 method's s(r') = 2 2^(-(r' + 3)/3), indexed by r' = -4, -3, -2 in
// two's complement (vpermpd reads the index's low 3 bits: entries 4, 5, 6).
alignas(64) inline constexpr double cbrt_twice_scale_f64[8] = {
    0.0, 0.0, 0.0, 0.0, 2.0 * cbrt_scale_m1, 2.0, 2.0 * cbrt_scale_p1, 0.0};

// P(m) ~ m^(-1/3) on [1, 2], degree 5, minimax relative error 2^-17.41, by Estrin's
// scheme (its dependent chain is three operations long, Horner's five).
template <class B>
NUMFUSE_ALWAYS_INLINE B cbrt_avx512_seed(const B& m) noexcept {
    const B m2 = m * m;
    const B p01 =
        fused_madd(m, B(-0x1.90e741fc92936p+0), B(0x1.c7f365bd2c676p+0));  // -1.566, 1.781
    const B p23 =
        fused_madd(m, B(-0x1.321c5eb44fd6cp-1), B(0x1.3e68b9b43650dp+0));  // -0.598, 1.244
    const B p45 =
        fused_madd(m, B(-0x1.16d6f13b67658p-6), B(0x1.3fa269bb6dc17p-3));  // -0.017, 0.156
    return fused_madd(m2, fused_madd(m2, p45, p23), p01);
}

// cbrt of float64 lanes at AVX-512 (the second method of the header).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> cbrt_avx512_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    using C = cbrt_consts<double>;
    const B m = avx512::mant_1_2(x);
    const B e = avx512::exponent_of(x);
    const B zq = fused_madd(e, B(1.0 / 3.0), B(C::shifter + 1.0));  // q' = q + 1 in the low bits
    const I zq_bits = as_int(zq);
    const I zr = as_int(e + B(C::shifter)) - zq_bits - zq_bits - zq_bits;  // r' = e - 3q'
    const B scale = avx512::permute_table(as_float<double, A>(zr), cbrt_twice_scale_f64);
    const B v8 = as_float<double, A>(as_int(m) + (zr << C::mant_bits));  // m 2^r', exact
    // u = 2 v^(-1/3) to 2^-15 (17 significant bits), so that u^2 and u^3 are exact.
    const B u(_mm512_roundscale_pd(cbrt_avx512_seed(m) * scale,
                                   (15 << 4) | _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const B uu = u * u;
    const B hi = v8 * uu;
    const B lo = fused_msub(v8, uu, hi);          // hi + lo = v8 u^2
    const B t = fused_nmadd(v8, uu * u, B(1.0));  // 1 - v8 u^3
    const B series = fused_madd(fused_madd(t, B(40.0 / 81.0), B(5.0 / 9.0)), t, B(2.0 / 3.0));
    const B y = hi + fused_madd(hi * t, series, lo);  // cbrt(v8), rounded once
    const B res = as_float<double, A>(as_int(y) + (zq_bits << C::mant_bits));  // y 2^q'
    return avx512::fixup<cbrt_fixup>(avx512::sign_from(res, x), x);
}

// The AVX-512 float32 method's 2^(-r/3) by vpermilps (index bits 0-1 within each 128-bit
// lane: r = 1 is entry 1, r = -1 entry 3).
alignas(64) inline constexpr float cbrt_scale_lanes_f32[16] = {
    1.0f, static_cast<float>(cbrt_scale_p1), 0.0f, static_cast<float>(cbrt_scale_m1),
    1.0f, static_cast<float>(cbrt_scale_p1), 0.0f, static_cast<float>(cbrt_scale_m1),
    1.0f, static_cast<float>(cbrt_scale_p1), 0.0f, static_cast<float>(cbrt_scale_m1),
    1.0f, static_cast<float>(cbrt_scale_p1), 0.0f, static_cast<float>(cbrt_scale_m1)};

// cbrt of float32 lanes at AVX-512 (the third method of the header).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> cbrt_avx512_f32(
    const xsimd::batch<float, A>& x) noexcept {
    using B = xsimd::batch<float, A>;
    using I = xsimd::batch<std::int32_t, A>;
    using C = cbrt_consts<float>;
    const B m = avx512::mant_1_2(x);
    const B e = avx512::exponent_of(x);
    const B zq = fused_madd(e, B(1.0f / 3.0f), B(C::shifter));  // q in the low bits
    const I zq_bits = as_int(zq);
    const I zr = as_int(e + B(C::shifter)) - zq_bits - zq_bits - zq_bits;  // r = e - 3q
    const B scale(_mm512_permutevar_ps(_mm512_load_ps(cbrt_scale_lanes_f32), zr));
    const B v = as_float<float, A>(as_int(m) + (zr << C::mant_bits));  // m 2^r, exact
    // P(m) ~ m^(-1/3), degree 3 by Estrin's scheme.
    const B p01 = fused_madd(m, B(-0x1.9eb31ep-1f), B(0x1.8ab91cp+0f));  // -0.80996, 1.541887
    const B p23 = fused_madd(m, B(-0x1.991546p-5f), B(0x1.45622p-2f));   // -0.049937, 0.317757
    const B seed = fused_madd(m * m, p23, p01);
    // u ~ v^(-1/3) to 2^-11 (12 significant bits), so that u^2 is exact.
    const B u(_mm512_roundscale_ps(seed * scale,
                                   (11 << 4) | _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const B uu = u * u;
    const B hi = v * uu;
    const B lo = fused_msub(v, uu, hi);                                      // hi + lo = v u^2
    const B t = fused_nmadd(lo, u, fused_nmadd(hi, u, B(1.0f)));            // 1 - v u^3
    const B series = fused_madd(t, B(0x1.1c71fep-1f), B(0x1.555582p-1f));  // 0.5548162, 0.6666681
    const B y = hi + fused_madd(hi * t, series, lo);  // cbrt(v), rounded once
    const B res = as_float<float, A>(as_int(y) + (zq_bits << C::mant_bits));  // y 2^q
    return avx512::fixup<cbrt_fixup>(avx512::sign_from(res, x), x);
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
    using U = xsimd::batch<std::make_unsigned_t<int_of_t<T>>, A>;
    const B ax = xsimd::abs(x);
    // Subnormals (and zeros, replaced at the end) scaled by 2^1022 (2^126) exactly and
    // without a multiplication (a subnormal operand takes a microcode assist on x86):
    // ax = N 2^-1074, bits(ax) | bits(1.0) is 1 + N 2^-52, minus 1 is N 2^-52 = ax 2^1022.
    const auto sub = ax < B(C::min_normal);
    const B xs = xsimd::select(sub, as_float<T, A>(as_int(ax) | I(C::one_bits)) - B(T(1)), ax);
    const I bits = as_int(xs);
    const U eb = bit_cast<U>(bits) >> C::mant_bits;  // biased exponent (sign bit clear)
    const B e = (as_float<T, A>(bit_cast<I>(eb) | I(C::magic_bits)) - B(C::exp_bias)) -
                xsimd::select(sub, B(C::sub_exp), B(T(0)));
    const B m = as_float<T, A>((bits & I(C::mant_mask)) | I(C::one_bits));
    const B zq = fused_madd(e, B(T(1) / T(3)), shifter);  // q in the low bits
    const B q = zq - shifter;
    const B r = fused_nmadd(q, B(T(3)), e);  // -1, 0 or 1, exact
    const B zr = r + shifter;  // r in the low bits
    // v = m 2^r: r's integer from the shifter's low bits, shifted into the exponent field
    // (the shifter's own bits leave the word).
    const B v = as_float<T, A>(as_int(m) + (as_int(zr) << C::mant_bits));
    const B scale_r =
        xsimd::select(r == B(T(1)), B(static_cast<T>(cbrt_scale_p1)),
                      xsimd::select(r == B(T(-1)), B(static_cast<T>(cbrt_scale_m1)), B(T(1))));
    B u = cbrt_inv_seed(m) * scale_r;
    if constexpr (sizeof(T) == 8) {
        const B u3 = (u * u) * u;
        u = fused_madd(u * B(1.0 / 3.0), fused_nmadd(v, u3, B(1.0)), u);
    }
    const B uu = u * u;
    const B y0 = v * uu;
    const B residual = cbrt_residual(y0, v);
    const B y = fused_nmadd(residual, uu * B(T(1) / T(3)), y0);
    const B pow2q = as_float<T, A>((as_int(zq) << C::mant_bits) + I(C::one_bits));  // 2^q
    const B res = xsimd::bitwise_or(y * pow2q, xsimd::bitwise_and(x, B(T(-0.0))));
    // +-0, +-inf and NaN: x + x is the same zero or infinity, or the input NaN quieted.
    return xsimd::select((ax == B(T(0))) | ~(ax < B(std::numeric_limits<T>::infinity())), x + x,
                         res);
}

}  // namespace detail

// cbrt(x), float64 lanes: <= 1 ULP (0.5 + 2^-12 by the method; AVX-512: 0.535 by its own),
// all inputs.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> cbrt_kernel(
    const xsimd::batch<double, Arch>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::cbrt_avx512_f64(x);
    } else
#endif
    {
        return detail::cbrt_any(x);
    }
}

// cbrt(x), float32 lanes: <= 1 ULP (0.5 + 2^-6 by the method; AVX-512: 0.5152 measured on
// every reduced argument) in float32 arithmetic on FMA levels; on SSE2 the float64 kernel on
// the widened lanes, rounded once.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> cbrt_kernel(
    const xsimd::batch<float, Arch>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::cbrt_avx512_f32(x);
    } else
#endif
        if constexpr (detail::has_fma<Arch>) {
        return detail::cbrt_any(x);
    } else {
        xsimd::batch<double, Arch> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::cbrt_any(lo), detail::cbrt_any(hi));
    }
}

}  // namespace numfuse::kernels
