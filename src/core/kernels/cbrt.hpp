// cbrt(x), the real cube root, for float64 and float32 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   cbrt_kernel(batch<double>) / cbrt_kernel(batch<float>): the real cube root per lane.
//   Max error <= 1 ULP against the correctly rounded result, every level and dtype (the
//   method's bound is 0.5 + 2^-12 ULP in float64, 0.5 + 2^-6 ULP in float32 below AVX-512,
//   0.535 and 0.518 ULP at AVX-512; tests/test_accuracy.py and tests/test_evaluate_accuracy.py
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
//   1. The opening, shared with the float32 method (cbrt_avx512_opening): m = vgetmant(x) in
//      [1, 2), e = vgetexp(x) (subnormals exact), e = 3q + r with r in {-1, 0, 1}. One FMA,
//      z = RN(e/3 + 1.5 2^50 + 1/4 + 1) on a grid of 1/4, is 1.5 2^50 + q' + j/4 with
//      q' = q + 1 and j = r + 1 (e/3 = q + r/3 is never within 1/12 of a midpoint of the
//      grid), so z's bits carry j in their low two bits and q' above them. j indexes the
//      exponent-offset and scale tables (vpermpd); v8 = m 2^r' = |x| 2^(-3q') in [1/16, 1/2),
//      r' = r - 3, exactly (r' added to m's exponent field), so cbrt(|x|) = 2 cbrt(v8)
//      2^q'; k = (bits(z) >> 2) << 52 is q' in the exponent field (the shifter's own bits
//      leave the word) with x's sign bit xor-ed in (one vpternlog).
//   2. u = 2 v^(-1/3) rounded to 2^-15 (vrndscale), v = 8 v8: u0 = P(m) s(r), P a degree-5
//      minimax fit of m^(-1/3) on [1, 2] (relative error 2^-17.41; Remez exchange on the
//      relative error, made for this kernel, evaluated by Estrin's scheme), s(r) = 2
//      2^(-r/3) from the table; u0 in (1.26, 2.52], so u has at most 17 significant bits
//      and its relative error is |eps| <= 2^-17.40 + 2^-16/1.26 <= 2^-15.78.
//   3. u^2 (34 bits) and u^3 (51 bits) are exact products; hi = RN(v8 u^2); t = 1 - v8 u^3
//      = 1 - (1 + eps)^3 in one FMA, |t| <= 2^-14.19, rounded once relative to t (2^-67).
//   4. cbrt(v8) = v8 u^2 (1 - t)^(-2/3) exactly (v8 u^2 (v8 u^3)^(-2/3) = v8^(1/3)), and
//      (1 - t)^(-2/3) = 1 + t Q(t), Q = 2/3 + 5/9 t + 40/81 t^2 (binomial series; the
//      remainder is at most 110/243 |t|^4 (1 + 2^-12) <= 2^-57.9). y = RN(v8 u^2 + hi t Q)
//      in one FMA (v8 u^2 exact inside it): hi t Q is about 2^-14.8 y and carries relative
//      errors of a few 2^-53 (2^-67 of y; hi's own 2^-53 among them). Total before that
//      rounding: 2^-57.85 relative, so max error 0.5 + 2^53 2^-57.85 = 0.535 ULP (measured
//      0.525 on 3.2e7 random arguments; the tests check <= 1 ULP).
//   5. y 2^q' with x's sign by one integer addition (y's bits plus k: y in [0.39, 0.8),
//      every result normal, and x's sign bit is the sum's), then +-0, +-inf and NaN from x
//      (one vfixupimm).
//
// Method, AVX-512 float32 lanes (cbrt_avx512_f32: the same scheme in float32 arithmetic,
// where an exact u^2 allows only 12 bits of u)
//   1. As in the float64 method with the bias -1 (z = RN(e/3 + 1.5 2^21 + 1/4 - 1), q' =
//      q - 1, vpermilps within 128-bit lanes): v2 = m 2^(r + 1) = 2v, v = m 2^r in
//      [1/2, 4), exactly, k = (q - 1) 2^23 with x's sign; cbrt(|x|) = (2 cbrt(v)) 2^q'.
//   2. u = P(m) 2^(-r/3) (1 + 2^-12) truncated to 12 significant bits (an and of its bits):
//      P a degree-3 minimax fit of m^(-1/3) on [1, 2] with float32 coefficients (relative
//      error 2^-11.95, Estrin), the rest one table entry; the truncation takes off a
//      fraction in [0, 2^-11) that the factor 1 + 2^-12 centres, so u = v^(-1/3) (1 + eps),
//      |eps| <= 2^-11.95 + 2^-12 + 2^-22 <= 2^-10.97, and u in (0.63, 1.26] has at most 12
//      significant bits.
//   3. u^2 exact (24 bits); hi + lo = v u^2 exactly (24 x 24 bits: one product and its FMA
//      remainder); t = RN(tau), tau = 1 - hi u (one FMA): v u^3 = (hi + lo) u, so |tau| <=
//      |1 - (1 + eps)^3| + |lo u| <= 2^-9.38. The kernel computes 2 hi, 2 lo and 2 t (from
//      v2, and 2 - 2hi u): the same roundings, scaled by powers of two.
//   4. With F(t) = (1 - t)^(-2/3): cbrt(v) = (hi + lo) F(tau - lo u) = hi F(tau) + (lo/3)
//      F(tau) up to (lo u)^2 terms (hi F'(tau) lo u = (2/3) lo F(tau), as hi u = 1 - tau),
//      so cbrt(v) ~ hi + (hi t + lo/2) (c1 + c2 t): c1, c2 the minimax pair for (F(t) - 1)/t
//      on |t| <= 2^-9.04, rounded to float32 (error 2^-30.1 of F), and (lo/2)(c1 + c2 t)
//      is lo/3 F(tau) to 2^-37 y (lo is at most 2^-24 hi). Doubled: 2 cbrt(v) ~ 2hi +
//      (2hi 2t + 2lo) (c1/2 + c2/4 2t), whose bracket is one FMA (4 (hi t + lo/2), one
//      rounding). With the roundings of t, of that bracket and of the series (2^-34 y each)
//      the relative error before the final FMA (y = RN(2hi + bracket series), one rounding)
//      is at most 2^-29.8: 0.5 + 2^-5.8 ULP by the method, and 0.5146 ULP measured on every
//      float32 in [1, 8), which is every reduced argument (every other input is one of them
//      times 2^(3q): tests/test_log_family_fast_paths.py checks them all against
//      0.5 + 2^-6; all 2^32 inputs were measured once, at 0.5146).
//   5. y 2^q' (y = 2 cbrt(v) in (1.58, 3.18)), the sign and the special values as in the
//      float64 method.
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

// The AVX-512 opening's shifters: 1.5 2^(p - 2), p the significand's bits (a grid of 1/4),
// plus 1/4, so that z = RN(e/3 + shifter) = shifter + q + j/4 with j = r + 1 (e/3 is never
// within 1/12 of a rounding boundary of the grid), plus 1 for float64 (q' = q + 1).
inline constexpr double cbrt_shifter_f64 = 0x1.8p50 + 1.25;
inline constexpr float cbrt_shifter_f32 = 0x1.8p21f + 0.25f - 1.0f;
// Entries j = r + 1 = 0, 1, 2 of the float64 method's exponent offsets r - 3 (v8 = m
// 2^(r - 3)) and s(r) = 2 2^(-r/3); vpermpd reads three index bits, the third one z's
// next bit, so entries 4-7 repeat 0-3.
alignas(64) inline constexpr std::int64_t cbrt_exponent_f64[8] = {
    -(std::int64_t{4} << 52), -(std::int64_t{3} << 52), -(std::int64_t{2} << 52), 0,
    -(std::int64_t{4} << 52), -(std::int64_t{3} << 52), -(std::int64_t{2} << 52), 0};
alignas(64) inline constexpr double cbrt_scale_f64[8] = {
    2.0 * cbrt_scale_m1, 2.0, 2.0 * cbrt_scale_p1, 0.0,
    2.0 * cbrt_scale_m1, 2.0, 2.0 * cbrt_scale_p1, 0.0};
// The float32 method's exponent offsets r and 2^(-r/3) (1 + 2^-12) (the factor centres
// the truncation of u, step 2 of the method) at j = r + 1, by the in-lane vpermilps (two
// index bits): the four entries repeated in each 128-bit lane.
#define NUMFUSE_CBRT_LANE_F32 0, 1 << 23, 2 << 23, 0
alignas(64) inline constexpr std::int32_t cbrt_exponent_f32[16] = {
    NUMFUSE_CBRT_LANE_F32, NUMFUSE_CBRT_LANE_F32, NUMFUSE_CBRT_LANE_F32, NUMFUSE_CBRT_LANE_F32};
#undef NUMFUSE_CBRT_LANE_F32
#define NUMFUSE_CBRT_LANE_F32                                             \
    static_cast<float>(cbrt_scale_m1 * (1.0 + 0x1p-12)), 1.0f + 0x1p-12f, \
        static_cast<float>(cbrt_scale_p1 * (1.0 + 0x1p-12)), 0.0f
alignas(64) inline constexpr float cbrt_scale_f32[16] = {
    NUMFUSE_CBRT_LANE_F32, NUMFUSE_CBRT_LANE_F32, NUMFUSE_CBRT_LANE_F32, NUMFUSE_CBRT_LANE_F32};
#undef NUMFUSE_CBRT_LANE_F32

// table[j], j in the low bits of each lane of idx: float64 by vpermpd (three index bits,
// tables of 8: avx512::permute_table; vpermq for the integer table), float32 by the
// in-lane vpermilps (two index bits suffice: tables of 16, the four entries repeated in
// each 128-bit lane).
inline __m512d cbrt_lookup(__m512i idx, const double* table) noexcept {
    return avx512::permute_table(_mm512_castsi512_pd(idx), table);
}
inline __m512i cbrt_lookup(__m512i idx, const std::int64_t* table) noexcept {
    return _mm512_permutexvar_epi64(idx, _mm512_load_si512(table));
}
inline __m512 cbrt_lookup(__m512i idx, const float* table) noexcept {
    return _mm512_permutevar_ps(_mm512_load_ps(table), idx);
}
inline __m512i cbrt_lookup(__m512i idx, const std::int32_t* table) noexcept {
    return _mm512_castps_si512(
        _mm512_permutevar_ps(_mm512_castsi512_ps(_mm512_load_si512(table)), idx));
}

// Step 1 of both AVX-512 methods: m = vgetmant(x) in [1, 2), z's bits (the index j in the
// low two), v = m 2^(r + offset) (the exponent table's entry added to m's bits: exact) and
// k = (z's bits >> 2) 2^p = (q + bias) 2^p (the shifter's own bits leave the word) with x's
// sign bit xor-ed in, which one integer addition applies to a positive root.
template <class T, class A>
struct CbrtOpening {
    xsimd::batch<T, A> m;
    xsimd::batch<T, A> v;
    xsimd::batch<int_of_t<T>, A> z;
    xsimd::batch<int_of_t<T>, A> k;
};

template <class T, class A>
NUMFUSE_ALWAYS_INLINE CbrtOpening<T, A> cbrt_avx512_opening(
    const xsimd::batch<T, A>& x, T shifter, const int_of_t<T>* exponent_table) noexcept {
    using B = xsimd::batch<T, A>;
    using I = xsimd::batch<int_of_t<T>, A>;
    constexpr int mant_bits = std::numeric_limits<T>::digits - 1;
    const B m = avx512::mant_1_2(x);
    const I z = as_int(fused_madd(B(avx512::exponent_of(x)), B(T(1) / T(3)), B(shifter)));
    const B v = as_float<T, A>(as_int(m) + I(cbrt_lookup(z, exponent_table)));
    // vpternlog 0x78: ((z >> 2) << p) xor (x and the sign bit).
    const I k(
        _mm512_ternarylogic_epi32((z >> 2) << mant_bits, as_int(x), as_int(B(T(-0.0))), 0x78));
    return {m, v, z, k};
}

// The last step of both AVX-512 methods: y 2^q with x's sign (y's bits plus k), then +-0,
// +-inf and NaN from x (vfixupimm).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> cbrt_avx512_finish(const xsimd::batch<T, A>& y,
                                                            const CbrtOpening<T, A>& o,
                                                            const xsimd::batch<T, A>& x) noexcept {
    return avx512::fixup<cbrt_fixup>(as_float<T, A>(as_int(y) + o.k), x);
}

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
    const CbrtOpening<double, A> o = cbrt_avx512_opening(x, cbrt_shifter_f64, cbrt_exponent_f64);
    const B v8 = o.v;
    // u = 2 v^(-1/3) to 2^-15 (17 significant bits), so that u^2 and u^3 are exact.
    const B u(_mm512_roundscale_pd(cbrt_avx512_seed(o.m) * B(cbrt_lookup(o.z, cbrt_scale_f64)),
                                   (15 << 4) | _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const B uu = u * u;
    const B hi = v8 * uu;
    const B t = fused_nmadd(v8, uu * u, B(1.0));  // 1 - v8 u^3
    const B series = fused_madd(fused_madd(t, B(40.0 / 81.0), B(5.0 / 9.0)), t, B(2.0 / 3.0));
    // cbrt(v8) = v8 u^2 + hi t Q, v8 u^2 exact within the FMA, rounded once.
    const B y = fused_madd(v8, uu, (hi * t) * series);
    return cbrt_avx512_finish(y, o, x);
}

// cbrt of float32 lanes at AVX-512 (the third method of the header).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> cbrt_avx512_f32(
    const xsimd::batch<float, A>& x) noexcept {
    using B = xsimd::batch<float, A>;
    using I = xsimd::batch<std::int32_t, A>;
    const CbrtOpening<float, A> o = cbrt_avx512_opening(x, cbrt_shifter_f32, cbrt_exponent_f32);
    const B m = o.m;
    // P(m) ~ m^(-1/3), degree 3 by Estrin's scheme.
    const B p01 = fused_madd(m, B(-0x1.9eb31ep-1f), B(0x1.8ab91cp+0f));  // -0.80996, 1.541887
    const B p23 = fused_madd(m, B(-0x1.991546p-5f), B(0x1.45622p-2f));   // -0.049937, 0.317757
    const B scaled = fused_madd(m * m, p23, p01) * B(cbrt_lookup(o.z, cbrt_scale_f32));
    // u ~ v^(-1/3) truncated to 12 significant bits, so that u^2 is exact.
    const B u = as_float<float, A>(as_int(scaled) & I(-4096));
    const B uu = u * u;
    const B hi2 = o.v * uu;                     // 2 hi (o.v = 2 v)
    const B lo2 = fused_msub(o.v, uu, hi2);     // 2 lo
    const B t2 = fused_nmadd(hi2, u, B(2.0f));  // 2 t
    // (c1 + c2 t) / 2 = 0.3333341 + 0.1387041 t2
    const B series = fused_madd(t2, B(0x1.1c71fep-3f), B(0x1.555582p-2f));
    // 2 cbrt(v) = 2 hi + 4 (hi t + lo/2) (c1 + c2 t) / 2, rounded once.
    const B y = fused_madd(fused_madd(hi2, t2, lo2), series, hi2);
    return cbrt_avx512_finish(y, o, x);
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

// cbrt(x), float32 lanes: <= 1 ULP (0.5 + 2^-6 by the method; AVX-512: 0.5146 measured on
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
