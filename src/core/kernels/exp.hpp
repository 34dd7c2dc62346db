// exp(x) for float32 / float64 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   exp_kernel(batch<double>) / exp_kernel(batch<float>): e^x per lane.
//   Max error <= 1 ULP against the correctly rounded result, for every level and
//   dtype (enforced by tests/cpp/test_exp_log.cpp; benchmarks/cpp/accuracy_harness.cpp
//   prints the measured maxima).
//   Valid range: all inputs.
//     x > 709.782712893384 (f64) / 88.72283935546875 (f32) -> +inf
//     results below the smallest normal are correctly scaled subnormals
//     (single rounding), +0 below -745.1332 (f64) / -103.972 (f32)
//     exp(+inf) = +inf, exp(-inf) = +0, exp(+-0) = 1
//     exp(NaN): f64 returns the input NaN (quieted, payload and sign kept);
//     f32 returns the canonical +qNaN 0x7fc00000 (aarch64: the input quieted,
//     see detail::nan_result) -- both as NumPy 2.x does.
//   Floating-point status flags raised inside are meaningless (the caller
//   computes flags explicitly).
//
// Methods
//   AVX-512 (f64 and f32): x = (16 k + j) ln2/16 + r, |r| <= ln2/32, with
//     k, j from one round-to-integer via the 1.5*2^52 (2^23) shifter;
//     r by Cody-Waite with FMA (ln2/16 = C_hi + C_lo, C_hi = RN(ln2/16):
//     x - kd*C_hi is exact with a fused multiply-add since |r| < 2^-5).
//     2^(j/16) = T_hi + T_lo from two 16-entry in-register tables
//     (vpermt2pd / vpermps), e^r - 1 = r + r^2 Q(r) (minimax, degree 7 f64 /
//     4 f32 overall), result = scalef(T_hi + (T_hi p + T_lo), k): vscalefpd
//     rounds once, so subnormal results are right, and overflows to inf /
//     underflows to 0 on its own. Inputs are clamped to [-746, 710]
//     ([-104, 89]) first so that +-inf and huge values need no extra path.
//     Batches holding x < -708 (-87) scale without a subnormal or zero result
//     from vscalef (scalef_no_assist_pd / _ps below).
//   AVX2+FMA f64 (exp_f64_t8): x = (8 k + j) ln2/8 + r, |r| <= ln2/16, 2^(j/8) = T_j
//     (1 + tail_j) from 32-bit words of 8-entry tables held in registers and picked by
//     vpermd (no gather: gathers are slow on Zen 3), tail_j folded into r, e^r - 1 =
//     r + r^2 Q(r) (degree 7 overall), 2^k T_j formed in the exponent field and the result
//     rounded once by an FMA; wide lanes (|x| > 708) by scale_wide as below.
//   neon64 f64 (exp_f64_t8_neon): the AVX2+FMA kernel's arithmetic, the tables read by TBL.
//   AVX2+FMA f32 (exp_f32_t8): x = (8 k + j) ln2/8 + r in float32 lanes, 2^(j/8) = hi + lo
//     from two 8-entry float tables picked by vpermps, e^r - 1 = r + r^2 Q(r) (Q of degree
//     2), y = RN(hi + (hi p + lo)) and 2^k added in the exponent field (0.654 ULP proved for
//     normal results); batches with |x| > 87 scale y by scale_wide as below.
//   neon64 f32 (exp_f32_t8_neon): the AVX2+FMA kernel's arithmetic, the tables read by TBL.
//   SSE2 float32, and exp_pair (no table): x = k ln2 + r, |r| <= ln2/2,
//     Cody-Waite with a 42-bit (16-bit for f32) ln2_hi so k*ln2_hi is exact without FMA (SSE2
//     xsimd::fma is mul+add); r = r_hi + r_lo kept as a pair; e^r = 1 + r +
//     r^2 Q(r) (minimax degree 12 f64 / 6 f32 overall) summed with 1 + r_hi
//     as an exact two-sum. Scaling by 2^k: k added to y's exponent field (an
//     integer add, exact: y 2^k is normal) when every |x| <= 708 (87), else
//     two multiplies by 2^k1 * 2^k2
//     (k1 + k2 = k, both normal) so the result is rounded once; subnormal
//     results come from t = y 2^(k + 1022) (normal) as the bits of t + 1
//     (scale_wide), with no floating-point operation on a subnormal value.
//
// Subnormal values and speed: on Intel cores a vector multiply, fused multiply-add,
// vscalef, division or square root whose input or result is subnormal (and vscalef
// whose result underflows to zero) takes a microcode assist: 250-480 ns per vector
// instruction on issue 29's Xeon (1000+ cycles), against 0.3 ns. Additions, compares,
// min/max and conversions do not. The kernels here form subnormal results with
// additions and integer operations only, so a batch holding them costs a few
// instructions more, not an assist.
//
// Coefficients: tools/explog_remez.py (own Remez exchange in mpmath; the fit named
// beside each polynomial), as exact hex floats; tables are 2^(j/16) rounded to nearest.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <type_traits>

#include "kernels/avx512_lanes.hpp"
#include "kernels/common.hpp"
#include "kernels/exp_reduction.hpp"
#include "kernels/generated/explog_coefficients.hpp"

namespace numfuse::kernels {
namespace detail {

// The reduction constants and clamps: exp_consts<T> (kernels/exp_reduction.hpp, shared with
// device_math/exp.hpp).

// Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 * (1 + 2^-12), degree 10 (f64) / 4 (f32):
// fits exp64_gen / exp32_gen (coefficients and fit errors in
// src/core/kernels/generated/explog_coefficients.hpp, shared with src/core/device_math).
// The f64 Q: c0 + r (c1 + r T(r)) with the tail T (c2..c10) in Estrin's form (pairs, then
// r^2 and r^4): a dependency chain of about 6 operations instead of Horner's 10. The kernel
// is latency-bound with Horner (the out-of-order window holds too few batches to hide ten
// dependent FMAs). The two leading steps stay Horner's: T's extra roundings enter Q scaled by
// r^2 <= 0.121 (a full Estrin form, rounding at the 1/2 level three times, measured 0.64
// instead of 0.60 ULP at most).
template <class B>
inline B exp_poly_gen(const B& r, double) noexcept {
    const B r2 = r * r;
    const B r4 = r2 * r2;
    const B p23 = detail::fused_madd(B(NUMFUSE_EXP64_GEN_C3), r, B(NUMFUSE_EXP64_GEN_C2));
    const B p45 = detail::fused_madd(B(NUMFUSE_EXP64_GEN_C5), r, B(NUMFUSE_EXP64_GEN_C4));
    const B p67 = detail::fused_madd(B(NUMFUSE_EXP64_GEN_C7), r, B(NUMFUSE_EXP64_GEN_C6));
    const B p89 = detail::fused_madd(B(NUMFUSE_EXP64_GEN_C9), r, B(NUMFUSE_EXP64_GEN_C8));
    const B p25 = detail::fused_madd(p45, r2, p23);
    const B p69 = detail::fused_madd(p89, r2, p67);
    const B tail =
        detail::fused_madd(detail::fused_madd(B(NUMFUSE_EXP64_GEN_C10), r4, p69), r4, p25);
    return detail::fused_madd(detail::fused_madd(tail, r, B(NUMFUSE_EXP64_GEN_C1)), r,
                              B(NUMFUSE_EXP64_GEN_C0));
}

template <class B>
inline B exp_poly_gen(const B& r, float) noexcept {
    return horner(r, NUMFUSE_EXP32_GEN);
}

// The portable kernel's fast form in two parts (exp_generic below is the full kernel, the same
// arithmetic). exp_generic_reduce: for lanes with |x| <= hi_clamp, e^x = y * 2^k with y = e^r in
// [0.7, 1.42] and k in the low bits of z (z - shifter = kd = k); NaN lanes give garbage.
template <class T, class A>
struct ExpGenericParts {
    xsimd::batch<T, A> y, z, kd;
};

// e^x = (hi + lo) 2^kd before the rounding of hi + lo: exp_generic_reduce's arithmetic
// (exp_pair below uses it).
template <class T, class A>
struct ExpGenericPair {
    xsimd::batch<T, A> hi, lo, z, kd;
};

template <class T, class A>
NUMFUSE_ALWAYS_INLINE ExpGenericPair<T, A> exp_generic_pair(const xsimd::batch<T, A>& xc) noexcept {
    using B = xsimd::batch<T, A>;
    using C = exp_consts<T>;
    const B shifter(C::shifter);
    const B z = detail::fused_madd(xc, B(C::inv_ln2), shifter);  // k = round(x/ln2) in the low bits
    const B kd = z - shifter;
    const B r1 = detail::fused_nmadd(kd, B(C::ln2_hi), xc);  // exact: k*ln2_hi exact, Sterbenz
    const B kc = kd * B(C::ln2_lo);
    const B rh = r1 - kc;  // r = rh + rl exactly (to ~2^-100)
    const B rl = (r1 - rh) - kc;
    const B q = exp_poly_gen(rh, T());
    const B s = detail::fused_madd(
        rh * rh, q, detail::fused_madd(rl, rh, rl));  // e^r - 1 - rh, e^rh rl ~ rl (1 + rh)
    const B h = B(T(1)) + rh;  // 1 + rh as an exact pair (|rh| < 1)
    const B hl = (B(T(1)) - h) + rh;
    return {h, hl + s, z, kd};
}

template <class T, class A>
NUMFUSE_ALWAYS_INLINE ExpGenericParts<T, A> exp_generic_reduce(
    const xsimd::batch<T, A>& xc) noexcept {
    const ExpGenericPair<T, A> p = exp_generic_pair(xc);
    return {p.hi + p.lo, p.z, p.kd};
}

// y 2^k rounded once, for y in [0.7, 1.42] and an integral kd = k in [-1080, 1100] (float64)
// / [-155, 135] (float32), without a floating-point operation on a subnormal value (see the
// top). Results below 2^emin (emin = -1022 / -126), possible only for k <= emin: t =
// y 2^(k - emin) is exact and normal (>= 2^-60), and t + 1 rounds t to a multiple of 2^-52
// (2^-23) once, as y 2^k rounds to the subnormal grid; t + 1's low bits are then the
// subnormal's bits (t rounding up to 1 gives 2^emin's). Other results: 2^k as two normal
// factors 2^k1 2^k2 (k1 = round(k/2)), the first product exact, so one rounding, also to
// inf; the subnormal lanes take k = 0 there.
template <class T, class A>
inline xsimd::batch<T, A> scale_wide(const xsimd::batch<T, A>& y,
                                     const xsimd::batch<T, A>& kd) noexcept {
    using B = xsimd::batch<T, A>;
    using C = exp_consts<T>;
    const B shifter(C::shifter);
    const B one(T(1));
    const xsimd::batch<int_of_t<T>, A> bias_bits(static_cast<int_of_t<T>>(C::bias) << C::mant_bits);
    const auto pow2 = [&](const B& k) {  // 2^k for integral k in the normal range
        return as_float<T, A>((as_int(k + shifter) << C::mant_bits) + bias_bits);
    };
    const T emin = T(1 - C::bias);  // -1022 / -126
    const B t = y * pow2(xsimd::min(kd - B(emin), B(T(0))));
    const auto sub = (kd <= B(emin)) & (t < one);
    const B sub_res = as_float<T, A>(as_int(t + one) - as_int(one));
    const B kn = xsimd::select(sub, B(T(0)), kd);
    const B z1 = detail::fused_madd(kn, B(T(0.5)), shifter);
    const B k1 = z1 - shifter;
    return xsimd::select(sub, sub_res, (y * pow2(k1)) * pow2(kn - k1));
}

// y * 2^k for y in [0.7, 1.42] and a result that is normal (|x| <= fast_lim): k, the low bits
// of z, added to y's exponent field. The same bits as the product y * 2^k (both exact there)
// without a multiply: the kernel's fused-multiply-add pipes are its bottleneck. Outside that
// range the bits are garbage (the exponent field wraps), as the product's were.
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> exp_scale_normal(const xsimd::batch<T, A>& y,
                                                          const xsimd::batch<T, A>& z) noexcept {
    using C = exp_consts<T>;
    // z's bits are the shifter's plus k, the shifter's below bit mant_bits - 1 clear: shifted
    // left by mant_bits they are k << mant_bits (mod 2^width), the old bias-built 2^k's
    // exponent field less the bias.
    return as_float<T, A>(as_int(y) + (as_int(z) << C::mant_bits));
}

template <class T, class A>
inline xsimd::batch<T, A> exp_generic_scale_normal(const ExpGenericParts<T, A>& p) noexcept {
    return exp_scale_normal(p.y, p.z);
}

// exp_generic for lanes with |x| <= fast_lim only (bit for bit equal there); other lanes
// (huge, inf, NaN) hold garbage. No clamp, no NaN fixup, no test for a wide k: see
// exp_kernel_nofix. Always inlined (with its parts above): the ufunc loops call it per
// batch, and out of line (GCC's choice in the neon64 unit) each call reloaded the
// polynomial's eleven constants.
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> exp_generic_core(const xsimd::batch<T, A>& x) noexcept {
    return exp_generic_scale_normal(exp_generic_reduce(x));
}

// Portable kernel (SSE2, AVX2+FMA; any xsimd arch). Its arithmetic is exp_generic_reduce +
// exp_generic_scale_normal written out, not called: through the parts struct GCC allocates the
// logsumexp loops (reduce_loops.hpp), which inline this kernel several times, worse.
template <class T, class A>
inline xsimd::batch<T, A> exp_generic(const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
    using C = exp_consts<T>;
    const B shifter(C::shifter);
    // NaN lanes become garbage here and are replaced at the end.
    const B xc = xsimd::min(xsimd::max(x, B(C::lo_clamp)), B(C::hi_clamp));
    const B z = detail::fused_madd(xc, B(C::inv_ln2), shifter);  // k = round(x/ln2) in the low bits
    const B kd = z - shifter;
    const B r1 = detail::fused_nmadd(kd, B(C::ln2_hi), xc);  // exact: k*ln2_hi exact, Sterbenz
    const B kc = kd * B(C::ln2_lo);
    const B rh = r1 - kc;  // r = rh + rl exactly (to ~2^-100)
    const B rl = (r1 - rh) - kc;
    const B q = exp_poly_gen(rh, T());
    const B s = detail::fused_madd(
        rh * rh, q, detail::fused_madd(rl, rh, rl));  // e^r - 1 - rh, e^rh rl ~ rl (1 + rh)
    const B h = B(T(1)) + rh;  // 1 + rh as an exact pair (|rh| < 1)
    const B hl = (B(T(1)) - h) + rh;
    const B y = h + (hl + s);  // e^r in [0.7, 1.42]
    B res;
    if (xsimd::any(xsimd::abs(x) > B(C::fast_lim))) {
        res = scale_wide(y, kd);  // subnormal results, overflow: rounded once
    } else {
        res = exp_scale_normal(y, z);
    }
    return nan_result(x, res);
}

// 2^(j/8), j = 0..7, as 32-bit words picked by vpermd at avx2_fma and by TBL at neon64 (no
// gather, no memory access per lane):
// T_j = RN(2^(j/8)); exp_t8_lo[j] = T_j's low word, exp_t8_hi[j] = T_j's high word less
// j << 17 (so that adding kd << 49 = (8k + j) << 49 to the bits gives T_j 2^k's bits);
// exp_t8_tail[j] = the high word of RN((2^(j/8) - T_j) / T_j) (|tail| < 2^-53.8), used as
// the double whose both words are that word: within 2^-75.9 of the exact tail.
alignas(32) inline constexpr std::uint32_t exp_t8_lo[8] = {
    0x00000000, 0x3c7d517b, 0x0a31b715, 0xd5362a27, 0x667f3bcd, 0x422aa0db, 0x995ad3ad, 0xdcfba487,
};
alignas(32) inline constexpr std::uint32_t exp_t8_hi[8] = {
    0x3ff00000, 0x3fef72b8, 0x3fef06fe, 0x3feebfda, 0x3feea09e, 0x3feeace5, 0x3feee89f, 0x3fef5818,
};
alignas(32) inline constexpr std::uint32_t exp_t8_tail[8] = {
    0x00000000, 0xbc801b15, 0x3c834d75, 0x3c7690ce, 0xbc93b3ef, 0x3c8db72f, 0x3c8c1a77, 0x3c74a385,
};

#if defined(__AVX2__) && defined(__FMA__)
// float64 at AVX2+FMA (not AVX-512): exp_f64_t8 below. SSE2, float32 and exp_pair keep
// exp_generic's arithmetic.
template <class Arch>
inline constexpr bool exp_f64_t8_arch =
    !is_avx512<Arch> && std::is_base_of<xsimd::fma3<xsimd::avx2>, Arch>::value;

// e^x = 2^k T_j (1 + tail_j) e^r0 for x = kd ln2/8 + r0, kd = 8k + j (z = kd + 1.5*2^52 holds
// kd in its low bits), |r0| <= ln2/16 (1 + 2^-12) for |x| <= 711. Returns t (T_j's bits less
// j << 49) and p ~ e^r - 1 with r = r0 + tail_j (1 + tail_j = e^tail_j to 2^-107), so that
// e^x = 2^k T_j (1 + p).
//   r1 = x - kd C_hi exactly (C_hi = RN(ln2)/8: kd C_hi lies on the 2^-56 grid, x on it or
//   finer (2^-57 for |x| < 2^-4, where |kd| <= 1), |r1| < 2^-4: 53 bits); c = RN(tail_j - kd
//   C_lo) (C_lo = (ln2 - RN(ln2))/8; |c| < 2^-43, its rounding < 2^-97); r = RN(r1 + c):
//   the one rounding of r, |r - (r0 + tail_j)| <= 2^-58 (|r| < 2^-4). The error of C_hi + C_lo
//   against ln2/8, times |kd| < 2^13.1, is below 2^-97.
//   p = RN(r + r^2 Q(r)), Q of degree 5 in Estrin's form (tools/explog_remez.py exp64_t8:
//   relative error of 1 + r + r^2 Q against e^r 2^-58.28 with the rounded coefficients); its
//   own rounding <= 2^-58 (|p| < 2^-4.47); r^2's and Q's roundings enter scaled by r^2 <
//   2^-9: below 2^-62.
// The caller rounds once: RN(S + S p), S = 2^k T_j (an FMA). Error of S (1 + p) against e^x,
// in units of S: r's rounding 2^-58 (times e^r <= 1.045), the fit 2^-58.28 (times 1.045),
// p's rounding 2^-58, r^2's and Q's below 2^-61.4: in all below 2^-56.4. The result's ulp
// is S 2^-53 at the smallest (j = 0, p < 0: the result just below 2^k) and S 2^-52 / 1.834
// for j = 7, so the error is below 0.5 + 2^-3.4 = 0.595 ULP (measured: 0.5845 on 1e7
// points in [-708, 708] against long double; the polynomial kernel below: 0.5933).
// exp_f64_t8_reduce: the reduction and table alone (kd, r1 exact, c, r = RN(r1 + c), t, z as
// above), for callers that keep r1 and c apart (tanh_f64_table, hyperbolic.hpp).
struct ExpT8Reduced {
    __m256d kd, r1, c, r;
    __m256i t, z;
};
NUMFUSE_ALWAYS_INLINE ExpT8Reduced exp_f64_t8_reduce(__m256d x) noexcept {
    const __m256d shifter = _mm256_set1_pd(0x1.8p52);
    const __m256d z = _mm256_fmadd_pd(x, _mm256_set1_pd(0x1.71547652b82fep+3), shifter);  // 8/ln2
    const __m256d kd = _mm256_sub_pd(z, shifter);
    const __m256d r1 = _mm256_fnmadd_pd(kd, _mm256_set1_pd(0x1.62e42fefa39efp-4), x);
    const __m256i zi = _mm256_castpd_si256(z);
    // Each 64-bit lane's low word of z (kd mod 2^32; vpermd reads its low 3 bits, j) in
    // both of its 32-bit halves.
    const __m256i idx = _mm256_shuffle_epi32(zi, _MM_SHUFFLE(2, 2, 0, 0));
    const __m256i lo = _mm256_permutevar8x32_epi32(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(exp_t8_lo)), idx);
    const __m256i hi = _mm256_permutevar8x32_epi32(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(exp_t8_hi)), idx);
    const __m256i t = _mm256_blend_epi32(lo, hi, 0xaa);
    const __m256d tail = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(exp_t8_tail)), idx));
    const __m256d c = _mm256_fnmadd_pd(kd, _mm256_set1_pd(0x1.abc9e3b39803fp-59), tail);
    return {kd, r1, c, _mm256_add_pd(r1, c), t, zi};
}

struct ExpT8Parts {
    __m256d p;
    __m256i t, z;
};
// exp_f64_t8_parts_of: the polynomial on a reduction's r (power_avx2.hpp forms r with its
// low part of the argument added to c first).
NUMFUSE_ALWAYS_INLINE ExpT8Parts exp_f64_t8_parts_of(const ExpT8Reduced& e) noexcept {
    const __m256d r = e.r;
    const __m256d r2 = _mm256_mul_pd(r, r);
    // Q(r) ~ (e^r - 1 - r)/r^2 on |r| <= ln2/16 (1 + 2^-12): tools/explog_remez.py exp64_t8.
    const __m256d q01 = _mm256_fmadd_pd(_mm256_set1_pd(0x1.555555555513p-3), r,  // c1
                                        _mm256_set1_pd(0x1.000000000010bp-1));  // c0
    const __m256d q23 = _mm256_fmadd_pd(_mm256_set1_pd(0x1.11111125dba19p-7), r,  // c3
                                        _mm256_set1_pd(0x1.555555480ccf5p-5));  // c2
    const __m256d q45 = _mm256_fmadd_pd(_mm256_set1_pd(0x1.a0163983de4f5p-13), r,  // c5
                                        _mm256_set1_pd(0x1.6c1cbdefbbf7cp-10));  // c4
    const __m256d q = _mm256_fmadd_pd(_mm256_fmadd_pd(q45, r2, q23), r2, q01);
    return {_mm256_fmadd_pd(r2, q, r), e.t, e.z};
}
NUMFUSE_ALWAYS_INLINE ExpT8Parts exp_f64_t8_parts(__m256d x) noexcept {
    return exp_f64_t8_parts_of(exp_f64_t8_reduce(x));
}

// e^x for |x| <= fast_lim (708): 2^k T_j built in the exponent field (t + kd << 49, an
// integer add: 2^k T_j is normal there), one FMA. Other lanes (huge, inf, NaN): garbage.
// 2^k T_j's bits from the parts (t + kd << 49), for |x| <= 708 (also expm1's float32 kernel,
// hyperbolic_f32.hpp).
NUMFUSE_ALWAYS_INLINE __m256d exp_f64_t8_scale(const ExpT8Parts& e) noexcept {
    return _mm256_castsi256_pd(_mm256_add_epi64(e.t, _mm256_slli_epi64(e.z, 49)));
}
NUMFUSE_ALWAYS_INLINE __m256d exp_f64_t8_core(__m256d x) noexcept {
    const ExpT8Parts e = exp_f64_t8_parts(x);
    const __m256d sc = exp_f64_t8_scale(e);
    return _mm256_fmadd_pd(sc, e.p, sc);
}
#endif  // __AVX2__ && __FMA__

// 2^(j/8), j = 0..7: hi = RN_float(2^(j/8)), lo = RN_float(2^(j/8) - hi) (tools/explog_remez.py
// tables; the even entries of exp_tab16_hi_f / exp_tab16_lo_f), picked by vpermps (neon64: TBL)
// from the low 3 bits of z. Also the table of softmax's AVX2 float32 exp of x - max
// (arch/softmax_exp.hpp).
alignas(32) inline constexpr float exp_t8_hi_f[8] = {
    0x1.0p+0f,      0x1.172b84p+0f, 0x1.306fep+0f,  0x1.4bfdaep+0f,
    0x1.6a09e6p+0f, 0x1.8ace54p+0f, 0x1.ae89fap+0f, 0x1.d5818ep+0f,
};
alignas(32) inline constexpr float exp_t8_lo_f[8] = {
    0x0p+0f,         -0x1.c15742p-27f, 0x1.4636e2p-25f,  -0x1.593abcp-25f,
    0x1.9fcef4p-26f, 0x1.15506ep-27f,  -0x1.a94b14p-26f, -0x1.822dbcp-27f,
};

#if defined(__AVX2__) && defined(__FMA__)
// float64 AVX2+FMA, all inputs: exp_f64_t8_core's bits where |x| <= 708; batches holding
// larger |x| scale 2^k T_j (1 + p), rounded once with k = 0, by scale_wide (overflow to inf,
// subnormal results rounded once from it, as exp_generic does); NaN as exp_generic.
template <class A>
inline xsimd::batch<double, A> exp_f64_t8(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using C = exp_consts<double>;
    if (!xsimd::any(xsimd::abs(x) > B(C::fast_lim))) {
        return nan_result(x, B(exp_f64_t8_core(x)));
    }
    const B xc = xsimd::min(xsimd::max(x, B(C::lo_clamp)), B(C::hi_clamp));
    const ExpT8Parts e = exp_f64_t8_parts(xc);
    // T_j's bits: t + j << 49 (j = z's low 3 bits); k = floor(kd / 8), exact.
    const __m256d tj = _mm256_castsi256_pd(
        _mm256_add_epi64(e.t, _mm256_slli_epi64(_mm256_and_si256(e.z, _mm256_set1_epi64x(7)), 49)));
    const B y(_mm256_fmadd_pd(tj, e.p, tj));
    const B kd = B(_mm256_castsi256_pd(e.z)) - B(C::shifter);
    const B k = xsimd::floor(kd * B(0.125));
    return nan_result(x, scale_wide(y, k));
}

// float32 at AVX2+FMA (the level of exp_f64_t8; not AVX-512, whose float32 kernel is
// exp_f32_avx512, nor SSE2, which keeps exp_generic): exp_f32_t8 below (neon64: the same
// arithmetic, exp_f32_t8_neon).
template <class Arch>
inline constexpr bool exp_f32_t8_arch = exp_f64_t8_arch<Arch>;

// e^x = 2^k y for |x| <= 89: x = kd ln2/8 + r, kd = 8k + j (z = kd + 1.5*2^23 holds kd in its
// low bits), y = RN(hi + lo) in [2^(-1/16), 2^(15/16)), hi + lo = 2^(j/8) (1 + p) unrounded.
//   r1 = x - kd C_hi exactly (C_hi = RN_float(ln2)/8, on the 2^-27 grid; |kd| <= 1200 so kd C_hi
//   has at most 35 bits; x is on the 2^-27 grid or finer only where |x| < 2^-4, there |kd| <=
//   1 and r1 lies on x's grid; |r1| <= ln2/16 (1 + 2^-12) < 2^-4.5: at most 24 bits), r =
//   RN(r1 - kd C_lo) (C_lo = RN_float(ln2/8 - C_hi), |kd C_lo - kd (ln2/8 - C_hi)| < 2^-45):
//   r's rounding below 2^-28.5 (|r| < 2^-4.5).
//   p = RN(r + RN(r^2) Q(r)), Q of degree 2 (tools/explog_remez.py exp32_t8: relative error of
//   1 + r + r^2 Q against e^r 2^-32.30 with these float coefficients): p's rounding below
//   2^-28.5 (|p| < 2^-4.4), r^2's and Q's roundings (scaled by r^2 < 2^-9) below 2^-33.
//   lo = RN(hi p + lo_j): its rounding below 2^-28.4 of hi; hi + lo_j is 2^(j/8) to 2^-48.
// So hi + lo is e^x 2^-k within 2^-26.7 relative, and y = RN(hi + lo) has ulp(y) >= 2^-24 y
// (y < 2 and y >= 2^-1/16 with ulp 2^-24 below 1): the result, 2^k y, is within 0.5 + 2^-2.7
// = 0.654 ULP where it is normal (measured: docs/accuracy.md).
struct ExpF32T8Parts {
    __m256 y;
    __m256i z;
};
NUMFUSE_ALWAYS_INLINE ExpF32T8Parts exp_f32_t8_parts(__m256 x) noexcept {
    const __m256 shifter = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+3f), shifter);  // 8/ln2
    const __m256 kd = _mm256_sub_ps(z, shifter);
    const __m256 r1 = _mm256_fnmadd_ps(kd, _mm256_set1_ps(0x1.62e43p-4f), x);  // C_hi, exact
    const __m256 r = _mm256_fnmadd_ps(kd, _mm256_set1_ps(-0x1.05c61p-32f), r1);  // C_lo
    const __m256i zi = _mm256_castps_si256(z);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_load_ps(exp_t8_hi_f), zi);
    const __m256 tl = _mm256_permutevar8x32_ps(_mm256_load_ps(exp_t8_lo_f), zi);
    // Q(r) ~ (e^r - 1 - r)/r^2 on |r| <= ln2/16 (1 + 2^-12): tools/explog_remez.py exp32_t8.
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.55484p-5f), r,  // c2 = 0.041660428047180175781
                               _mm256_set1_ps(0x1.555c76p-3f));  // c1 = 0.16668026149272918701
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.0p-1f));  // c0 = 0.5
    const __m256 p = _mm256_fmadd_ps(_mm256_mul_ps(r, r), q, r);
    return {_mm256_add_ps(hi, _mm256_fmadd_ps(hi, p, tl)), zi};
}

// e^x for |x| <= fast_lim (87): 2^k y built in the exponent field, an integer add (2^k y is
// normal there). z's bits are 1.5*2^23's plus kd, the shifter's a multiple of 8 whose bits
// shifted right by 3 lie below bit 9: (z >> 3) << 23 is k << 23 (mod 2^32). Other lanes (huge,
// inf, NaN): garbage.
NUMFUSE_ALWAYS_INLINE __m256 exp_f32_t8_core(__m256 x) noexcept {
    const ExpF32T8Parts e = exp_f32_t8_parts(x);
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(e.y),
                                                _mm256_slli_epi32(_mm256_srli_epi32(e.z, 3), 23)));
}

// float32 AVX2+FMA, all inputs: exp_f32_t8_core's bits where |x| <= 87; batches holding larger
// |x| clamp x to [-104, 89] and scale y by scale_wide with k = floor(kd / 8): overflow to inf;
// results below 2^-126 (k <= -126) round y 2^k once more, to the 2^-149 grid: y is within
// 2^-24 + 2^-25.7 of e^x 2^-k for y in [1, 2) (half of y's ulp, 2^-23, and the 2^-26.7 y
// above; 2^-25 + 2^-26.7 below 1), i.e. within 0.33 of the grid's unit once scaled by 2^k <=
// 2^-126, so those results are within 0.5 + 0.33 ULP. NaN as exp_generic.
template <class A>
inline xsimd::batch<float, A> exp_f32_t8(const xsimd::batch<float, A>& x) noexcept {
    using B = xsimd::batch<float, A>;
    using C = exp_consts<float>;
    if (!xsimd::any(xsimd::abs(x) > B(C::fast_lim))) {
        return nan_result(x, B(exp_f32_t8_core(x)));
    }
    const B xc = xsimd::min(xsimd::max(x, B(C::lo_clamp)), B(C::hi_clamp));
    const ExpF32T8Parts e = exp_f32_t8_parts(xc);
    const B kd = B(_mm256_castsi256_ps(e.z)) - B(C::shifter);
    return nan_result(x, scale_wide(B(e.y), xsimd::floor(kd * B(0.125f))));
}
#endif  // __AVX2__ && __FMA__

#if defined(__aarch64__)
// float64 at neon64: exp_f64_t8's arithmetic above, operation for operation (z, kd, r1, c,
// r, Q in Estrin's form, p, 2^k T_j in the exponent field and the one FMA rounding), so the
// same bits as avx2_fma's kernel and the same bound (0.595 ULP). NEON has no vpermd: the
// tables are read by TBL, a byte lookup over 2-4 registers (the lanes' 8 bytes each at once).
// exp_t8_neon_bytes.t: byte b of T_j's bits (less j << 49) at 8 b + j, 64 bytes for a
// 4-register TBL; .tail: byte b of the tail word at 8 b + j (b < 4), 32 bytes, 2 registers.
// A lane's index bytes are then j + 8 b (b the result byte: 0..7 for t, 0..3 twice for the
// tail, the double whose both words are the tail word), j the low byte of z less its bits
// above 7.
struct ExpT8NeonBytes {
    std::uint8_t t[64];
    std::uint8_t tail[32];
};
constexpr ExpT8NeonBytes exp_t8_neon_make() noexcept {
    ExpT8NeonBytes b{};
    for (int j = 0; j < 8; ++j) {
        const std::uint64_t bits = (std::uint64_t{exp_t8_hi[j]} << 32) | exp_t8_lo[j];
        for (int k = 0; k < 8; ++k) b.t[8 * k + j] = static_cast<std::uint8_t>(bits >> (8 * k));
        for (int k = 0; k < 4; ++k) {
            b.tail[8 * k + j] = static_cast<std::uint8_t>(exp_t8_tail[j] >> (8 * k));
        }
    }
    return b;
}
alignas(16) inline constexpr ExpT8NeonBytes exp_t8_neon_bytes = exp_t8_neon_make();
alignas(16) inline constexpr std::uint8_t exp_t8_neon_index[3][16] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8},  // each lane's low byte (z's: kd mod 256)
    {0, 8, 16, 24, 32, 40, 48, 56, 0, 8, 16, 24, 32, 40, 48, 56},  // t: 8 b
    {0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24},  // tail: 8 (b mod 4)
};

// exp_f64_t8_reduce on two lanes: kd, r1 (exact), c, r = RN(r1 + c), t and z (as integer
// lanes), for exp_f64_t8_neon_parts and for callers that keep r1 and c apart (tanh_f64_table,
// hyperbolic.hpp).
struct ExpT8NeonReduced {
    float64x2_t kd, r1, c, r;
    int64x2_t t, z;
};
NUMFUSE_ALWAYS_INLINE ExpT8NeonReduced exp_f64_t8_neon_reduce(float64x2_t x) noexcept {
    const float64x2_t shifter = vdupq_n_f64(0x1.8p52);
    const float64x2_t z = vfmaq_f64(shifter, x, vdupq_n_f64(0x1.71547652b82fep+3));  // 8/ln2
    const float64x2_t kd = vsubq_f64(z, shifter);
    const float64x2_t r1 = vfmsq_f64(x, kd, vdupq_n_f64(0x1.62e42fefa39efp-4));  // x - kd C_hi
    const uint8x16_t zb = vreinterpretq_u8_f64(z);
    const uint8x16_t j = vandq_u8(vqtbl1q_u8(zb, vld1q_u8(exp_t8_neon_index[0])), vdupq_n_u8(7));
    const uint8x16x4_t tt = vld1q_u8_x4(exp_t8_neon_bytes.t);
    const uint8x16x2_t tl = vld1q_u8_x2(exp_t8_neon_bytes.tail);
    const uint8x16_t t = vqtbl4q_u8(tt, vorrq_u8(j, vld1q_u8(exp_t8_neon_index[1])));
    const float64x2_t tail =
        vreinterpretq_f64_u8(vqtbl2q_u8(tl, vorrq_u8(j, vld1q_u8(exp_t8_neon_index[2]))));
    const float64x2_t c = vfmsq_f64(tail, kd, vdupq_n_f64(0x1.abc9e3b39803fp-59));  // - kd C_lo
    return {kd, r1, c, vaddq_f64(r1, c), vreinterpretq_s64_u8(t), vreinterpretq_s64_f64(z)};
}

// exp_f64_t8_parts's p, t and z (as integer lanes) on two lanes.
struct ExpT8NeonParts {
    float64x2_t p;
    int64x2_t t, z;
};
NUMFUSE_ALWAYS_INLINE ExpT8NeonParts exp_f64_t8_neon_parts(float64x2_t x) noexcept {
    const ExpT8NeonReduced e = exp_f64_t8_neon_reduce(x);
    const float64x2_t r = e.r;
    const float64x2_t r2 = vmulq_f64(r, r);
    // Q(r): exp_f64_t8_parts's coefficients (tools/explog_remez.py exp64_t8), c0 first.
    const float64x2_t q01 =
        vfmaq_f64(vdupq_n_f64(0x1.000000000010bp-1), vdupq_n_f64(0x1.555555555513p-3), r);
    const float64x2_t q23 =
        vfmaq_f64(vdupq_n_f64(0x1.555555480ccf5p-5), vdupq_n_f64(0x1.11111125dba19p-7), r);
    const float64x2_t q45 =
        vfmaq_f64(vdupq_n_f64(0x1.6c1cbdefbbf7cp-10), vdupq_n_f64(0x1.a0163983de4f5p-13), r);
    const float64x2_t q = vfmaq_f64(q01, vfmaq_f64(q23, q45, r2), r2);
    return {vfmaq_f64(r, r2, q), e.t, e.z};
}

// 2^k T_j's bits from the parts (t + kd << 49), for |x| <= 708, as exp_f64_t8_scale (also
// expm1's float32 kernel, hyperbolic_f32.hpp).
NUMFUSE_ALWAYS_INLINE float64x2_t exp_f64_t8_neon_scale(const ExpT8NeonParts& e) noexcept {
    return vreinterpretq_f64_s64(vaddq_s64(e.t, vshlq_n_s64(e.z, 49)));
}
// e^x for |x| <= fast_lim (708), as exp_f64_t8_core; other lanes garbage.
NUMFUSE_ALWAYS_INLINE float64x2_t exp_f64_t8_neon_core(float64x2_t x) noexcept {
    const ExpT8NeonParts e = exp_f64_t8_neon_parts(x);
    const float64x2_t sc = exp_f64_t8_neon_scale(e);
    return vfmaq_f64(sc, sc, e.p);
}

// float64 neon64, all inputs: exp_f64_t8's rare path (scale_wide) on exp_f64_t8_neon_parts.
template <class A>
inline xsimd::batch<double, A> exp_f64_t8_neon(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using C = exp_consts<double>;
    if (!xsimd::any(xsimd::abs(x) > B(C::fast_lim))) {
        return nan_result(x, B(exp_f64_t8_neon_core(x)));
    }
    const B xc = xsimd::min(xsimd::max(x, B(C::lo_clamp)), B(C::hi_clamp));
    const ExpT8NeonParts e = exp_f64_t8_neon_parts(xc);
    // T_j's bits: t + j << 49 (j = z's low 3 bits); k = floor(kd / 8), exact.
    const float64x2_t tj =
        vreinterpretq_f64_s64(vaddq_s64(e.t, vshlq_n_s64(vandq_s64(e.z, vdupq_n_s64(7)), 49)));
    const B y(vfmaq_f64(tj, tj, e.p));
    const B kd = B(vreinterpretq_f64_s64(e.z)) - B(C::shifter);
    const B k = xsimd::floor(kd * B(0.125));
    return nan_result(x, scale_wide(y, k));
}

// float32 at neon64: exp_f32_t8's arithmetic below (its tables, reduction, Q and operation
// order), so the same bits as avx2_fma's kernel and the same bound (0.654 ULP for normal
// results; 0.5 + 0.33 ULP for subnormal ones). The two 8-entry tables, hi then lo, make one
// 64-byte table read by one LD1 and two TBLs (neon_tbl64_pair; byte indices 4 j + {0, 1, 2, 3}
// and 32 more for lo, j = z's low 3 bits), where avx2_fma takes two vpermps.
struct ExpF32T8NeonTable {
    float v[16];
};
constexpr ExpF32T8NeonTable exp_f32_t8_neon_make() noexcept {
    ExpF32T8NeonTable t{};
    for (int j = 0; j < 8; ++j) {
        t.v[j] = exp_t8_hi_f[j];
        t.v[8 + j] = exp_t8_lo_f[j];
    }
    return t;
}
alignas(16) inline constexpr ExpF32T8NeonTable exp_f32_t8_neon_table = exp_f32_t8_neon_make();

// exp_f32_t8_parts on four lanes: y = RN(hi + lo) and z's bits (kd in the low bits).
struct ExpF32T8NeonParts {
    float32x4_t y;
    uint32x4_t z;
};
NUMFUSE_ALWAYS_INLINE ExpF32T8NeonParts exp_f32_t8_neon_parts(float32x4_t x) noexcept {
    const float32x4_t shifter = vdupq_n_f32(0x1.8p23f);
    const float32x4_t z = vfmaq_f32(shifter, x, vdupq_n_f32(0x1.715476p+3f));  // 8/ln2
    const float32x4_t kd = vsubq_f32(z, shifter);
    const float32x4_t r1 = vfmsq_f32(x, kd, vdupq_n_f32(0x1.62e43p-4f));  // C_hi, exact
    const float32x4_t r = vfmsq_f32(r1, kd, vdupq_n_f32(-0x1.05c61p-32f));  // C_lo
    const uint32x4_t zi = vreinterpretq_u32_f32(z);
    const uint32x4_t j = vandq_u32(zi, vdupq_n_u32(7));
    const uint32x4_t bytes = vmlaq_u32(vdupq_n_u32(0x03020100u), j, vdupq_n_u32(0x04040404u));
    uint8x16_t hb, lb;
    neon_tbl64_pair(exp_f32_t8_neon_table.v, vreinterpretq_u8_u32(bytes),
                    vreinterpretq_u8_u32(vaddq_u32(bytes, vdupq_n_u32(0x20202020u))), hb, lb);
    const float32x4_t hi = vreinterpretq_f32_u8(hb);
    const float32x4_t tl = vreinterpretq_f32_u8(lb);
    // Q(r): exp_f32_t8_parts's coefficients (tools/explog_remez.py exp32_t8), c0 first.
    float32x4_t q = vfmaq_f32(vdupq_n_f32(0x1.555c76p-3f), vdupq_n_f32(0x1.55484p-5f), r);
    q = vfmaq_f32(vdupq_n_f32(0x1.0p-1f), q, r);
    const float32x4_t p = vfmaq_f32(r, vmulq_f32(r, r), q);
    return {vaddq_f32(hi, vfmaq_f32(tl, hi, p)), zi};
}
// exp_f32_t8_core on four lanes: 2^k y in the exponent field, for |x| <= 87.
NUMFUSE_ALWAYS_INLINE float32x4_t exp_f32_t8_neon_core(float32x4_t x) noexcept {
    const ExpF32T8NeonParts e = exp_f32_t8_neon_parts(x);
    return vreinterpretq_f32_u32(
        vaddq_u32(vreinterpretq_u32_f32(e.y), vshlq_n_u32(vshrq_n_u32(e.z, 3), 23)));
}
// float32 neon64, all inputs: exp_f32_t8's rare path (scale_wide) on exp_f32_t8_neon_parts.
template <class A>
inline xsimd::batch<float, A> exp_f32_t8_neon(const xsimd::batch<float, A>& x) noexcept {
    using B = xsimd::batch<float, A>;
    using C = exp_consts<float>;
    if (!xsimd::any(xsimd::abs(x) > B(C::fast_lim))) {
        return nan_result(x, B(exp_f32_t8_neon_core(x)));
    }
    const B xc = xsimd::min(xsimd::max(x, B(C::lo_clamp)), B(C::hi_clamp));
    const ExpF32T8NeonParts e = exp_f32_t8_neon_parts(xc);
    const B kd = B(vreinterpretq_f32_u32(e.z)) - B(C::shifter);
    return nan_result(x, scale_wide(B(e.y), xsimd::floor(kd * B(0.125f))));
}
#endif  // __aarch64__

#if defined(__AVX512F__)
// 2^(j/16) = hi + lo, j = 0..15: hi = RN(2^(j/16)), lo = RN(2^(j/16) - hi).
// tools/explog_remez.py tables.
alignas(64) inline constexpr double exp_tab16_hi[16] = {
    0x1.0p+0,
    0x1.0b5586cf9890fp+0,
    0x1.172b83c7d517bp+0,
    0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0,
    0x1.3dea64c123422p+0,
    0x1.4bfdad5362a27p+0,
    0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0,
    0x1.7a11473eb0187p+0,
    0x1.8ace5422aa0dbp+0,
    0x1.9c49182a3f09p+0,
    0x1.ae89f995ad3adp+0,
    0x1.c199bdd85529cp+0,
    0x1.d5818dcfba487p+0,
    0x1.ea4afa2a490dap+0,
};
alignas(64) inline constexpr double exp_tab16_lo[16] = {
    0x0p+0,
    0x1.8a62e4adc610bp-54,
    -0x1.19041b9d78a76p-55,
    0x1.9b07eb6c70573p-54,
    0x1.6f46ad23182e4p-55,
    0x1.ada0911f09ebcp-55,
    0x1.d4397afec42e2p-56,
    0x1.6324c054647adp-54,
    -0x1.bdd3413b26456p-54,
    -0x1.41577ee04992fp-55,
    0x1.6e9f156864b27p-54,
    0x1.c7c46b071f2bep-56,
    0x1.7a1cd345dcc81p-54,
    0x1.11065895048ddp-55,
    0x1.2ed02d75b3707p-55,
    -0x1.e9c23179c2893p-54,
};
alignas(64) inline constexpr float exp_tab16_hi_f[16] = {
    0x1.0p+0f,      0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f, 0x1.306fep+0f,  0x1.3dea64p+0f,
    0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f, 0x1.9c4918p+0f,
    0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f,
};
alignas(64) inline constexpr float exp_tab16_lo_f[16] = {
    0x0p+0f,          0x1.9f3122p-25f,  -0x1.c15742p-27f, 0x1.ceac48p-25f,
    0x1.4636e2p-25f,  0x1.824684p-25f,  -0x1.593abcp-25f, -0x1.5bd5ecp-27f,
    0x1.9fcef4p-26f,  -0x1.829fdp-25f,  0x1.15506ep-27f,  0x1.51f848p-27f,
    -0x1.a94b14p-26f, -0x1.3d56b2p-27f, -0x1.822dbcp-27f, 0x1.52486cp-27f,
};

// RN(y 2^floor(s)) as vscalefpd computes it, for y in [0.5, 2) and floor(s) in [-1080, 1100],
// without a subnormal or zero result from vscalefpd (its assist: see the top). Results below
// 2^-1022: t = y 2^(floor(s) + 1022) is normal (>= 2^-60) and exact, t + 1 rounds it once to
// a multiple of 2^-52 as the subnormal result rounds, and its low bits are the subnormal's
// bits (t rounding up to 1 gives 2^-1022's). The other lanes run vscalefpd under a mask (a
// masked-off lane takes no assist).
inline __m512d scalef_no_assist_pd(__m512d y, __m512d s) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d t = _mm512_scalef_pd(y, _mm512_add_pd(s, _mm512_set1_pd(1022.0)));
    const __mmask8 sub = _mm512_cmp_pd_mask(t, one, _CMP_LT_OQ);
    const __m512i bits =
        _mm512_sub_epi64(_mm512_castpd_si512(_mm512_add_pd(t, one)), _mm512_castpd_si512(one));
    return _mm512_mask_scalef_pd(_mm512_castsi512_pd(bits), static_cast<__mmask8>(~sub), y, s);
}

// As scalef_no_assist_pd for float32 lanes: floor(s) in [-160, 140], 2^-126, 2^-23.
inline __m512 scalef_no_assist_ps(__m512 y, __m512 s) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 t = _mm512_scalef_ps(y, _mm512_add_ps(s, _mm512_set1_ps(126.0f)));
    const __mmask16 sub = _mm512_cmp_ps_mask(t, one, _CMP_LT_OQ);
    const __m512i bits =
        _mm512_sub_epi32(_mm512_castps_si512(_mm512_add_ps(t, one)), _mm512_castps_si512(one));
    return _mm512_mask_scalef_ps(_mm512_castsi512_ps(bits), static_cast<__mmask16>(~sub), y, s);
}

// 2^(kd/16) e^r, f64, AVX-512: kd = 16k + j an integer (z = kd + 1.5*2^52 holds j in its low
// 4 bits), |r| <= ln2/32 (1 + 2^-12). The table, the polynomial and the scaling that exp (r
// from x - kd ln2/16) and exp2 (kernels/exp2.hpp: r from (x - kd/16) ln2) share. `tiny`: the
// batch may hold results below 2^-1022 (scaled by scalef_no_assist_pd then).
// 2^(j/16) e^r = hi + lo before their one rounding (exp_f64_avx512_t16 below, exp_pair).
struct ExpT16Pair {
    __m512d hi, lo;
};
// 2^(j/16) = hi + lo from the two tables (j = the low 4 bits of z).
inline ExpT16Pair exp_f64_avx512_t16_table(__m512d z) noexcept {
    const __m512i idx = _mm512_castpd_si512(z);  // j = low 4 bits
    const __m512d th =
        _mm512_permutex2var_pd(_mm512_load_pd(exp_tab16_hi), idx, _mm512_load_pd(exp_tab16_hi + 8));
    const __m512d tl =
        _mm512_permutex2var_pd(_mm512_load_pd(exp_tab16_lo), idx, _mm512_load_pd(exp_tab16_lo + 8));
    return {th, tl};
}

// Q(r) ~ (e^r - 1 - r)/r^2 on |r| <= ln2/32 (1 + 2^-12): tools/explog_remez.py exp64_t16,
// max relative error of e^r with these rounded coefficients 2^-65.30 (degree 5: a
// degree-4 fit, 2^-56.25, would cost about 0.1 ulp of the final maximum). c0 first.
alignas(64) inline constexpr double exp_t16_q[6] = {
    0x1.0000000000004p-1,  // 0.50000000000000044409
    0x1.5555555555545p-3,  // 0.16666666666666621333
    0x1.5555555480012p-5,  // 0.041666666660603493555
    0x1.111111125c4fep-7,  // 0.0083333333356869730701
    0x1.6c184117c233cp-10,  // 0.0013889112214561924116
    0x1.a01911d9b8885p-13,  // 0.00019841095382050838122
};

// Q(r) by Horner's scheme (exp's bits).
inline __m512d exp_f64_avx512_t16_q(__m512d r) noexcept {
    __m512d q = _mm512_fmadd_pd(_mm512_set1_pd(exp_t16_q[5]), r, _mm512_set1_pd(exp_t16_q[4]));
    for (int i = 3; i >= 0; --i) q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(exp_t16_q[i]));
    return q;
}

// Q(r) in Estrin's form from r and r2 = RN(r^2): three dependent steps instead of five, for
// callers whose Q enters scaled by r^2 <= 2^-11 (its extra roundings, at Q's 1/2 level, are
// then below 2^-65 of e^r).
inline __m512d exp_f64_avx512_t16_q_estrin(__m512d r, __m512d r2) noexcept {
    const auto c = [](int i) { return _mm512_set1_pd(exp_t16_q[i]); };
    const __m512d q01 = _mm512_fmadd_pd(c(1), r, c(0));
    const __m512d q23 = _mm512_fmadd_pd(c(3), r, c(2));
    const __m512d q45 = _mm512_fmadd_pd(c(5), r, c(4));
    return _mm512_fmadd_pd(_mm512_fmadd_pd(q45, r2, q23), r2, q01);
}

inline ExpT16Pair exp_f64_avx512_t16_pair(__m512d z, __m512d r) noexcept {
    const ExpT16Pair t = exp_f64_avx512_t16_table(z);
    const __m512d p = _mm512_fmadd_pd(_mm512_mul_pd(r, r), exp_f64_avx512_t16_q(r), r);  // e^r - 1
    return {t.hi, _mm512_fmadd_pd(t.hi, p, t.lo)};
}

inline __m512d exp_f64_avx512_t16(__m512d z, __m512d kd, __m512d r, bool tiny = false) noexcept {
    const ExpT16Pair t = exp_f64_avx512_t16_pair(z, r);
    const __m512d y = _mm512_add_pd(t.hi, t.lo);  // 2^(j/16) e^r
    const __m512d s = _mm512_mul_pd(kd, _mm512_set1_pd(0.0625));  // floor(kd/16) = k
    return tiny ? scalef_no_assist_pd(y, s) : _mm512_scalef_pd(y, s);
}

// f64, AVX-512, core: valid (bit for bit equal to exp_f64_avx512) for |x| <= 708 only;
// other lanes (huge, inf, NaN) hold garbage. The unary loop runs this and recomputes the
// rare batches with such lanes with the full kernel (exp_special finds them), which saves
// the clamp and the NaN fixup (3 of ~21 vector instructions; this loop's speed is its
// instruction count where 512-bit operations issue on two ports).
// x = kd ln2/16 + r (z = kd + 1.5*2^52), the reduction of exp_f64_avx512_core and exp_pair;
// also r = r1 + r_lo unrounded, r1 = x - kd C_hi (exact) and r_lo = -kd C_lo (one rounding,
// relative), for callers that need e^x - 1 without r's rounding (tanh, hyperbolic.hpp).
struct ExpT16Reduced {
    __m512d z, kd, r, r1, r_lo;
};
inline ExpT16Reduced exp_f64_avx512_reduce(__m512d xc) noexcept {
    const __m512d shifter = _mm512_set1_pd(0x1.8p52);
    const __m512d z = _mm512_fmadd_pd(xc, _mm512_set1_pd(0x1.71547652b82fep+4), shifter);  // 16/ln2
    const __m512d kd = _mm512_sub_pd(z, shifter);  // 16k + j
    const double c_lo = 0x1.abc9e3b39803fp-60;  // C_lo = (ln2 - RN(ln2))/16
    const __m512d r1 =
        _mm512_fnmadd_pd(kd, _mm512_set1_pd(0x1.62e42fefa39efp-5), xc);  // C_hi = RN(ln2)/16, exact
    const __m512d r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(c_lo), r1);
    return {z, kd, r, r1, _mm512_mul_pd(kd, _mm512_set1_pd(-c_lo))};
}

inline __m512d exp_f64_avx512_core(__m512d xc, bool tiny = false) noexcept {
    const ExpT16Reduced e = exp_f64_avx512_reduce(xc);
    return exp_f64_avx512_t16(e.z, e.kd, e.r, tiny);
}

// f64, AVX-512, all inputs. Measured max error: see the contract at the top.
inline __m512d exp_f64_avx512(__m512d x) noexcept {
    // Clamped so that the shifter trick stays valid; scalef then overflows to inf /
    // underflows to 0 on its own.
    const __m512d xc =
        _mm512_min_pd(_mm512_max_pd(x, _mm512_set1_pd(-746.0)), _mm512_set1_pd(710.0));
    // Results below 2^-1022 (x < -708.39) or +0: scaled without vscalefpd's assist.
    const bool tiny = _mm512_cmp_pd_mask(xc, _mm512_set1_pd(-708.0), _CMP_LT_OQ) != 0;
    // NaN (quiet or signalling) -> the input quieted; everything else kept.
    return _mm512_fixupimm_pd(exp_f64_avx512_core(xc, tiny), x, _mm512_set1_epi64(0x22), 0);
}

// f32, AVX-512: e^x = 2^s (hi + lo) before its one rounding, for |x| <= 89 (other lanes
// garbage): x = kd ln2/16 + r, s = kd/16 (vscalefps takes floor(s) = k), hi = 2^(j/16)'s
// leading float (exact), lo = hi p + its trailing part (|lo| < 2^-5 hi). Relative error of
// hi + lo below 2^-27.9 (the fit's 2^-37.4 and the roundings of r, p and lo, each below
// 2^-29.5 of the result): the float32 tanh (hyperbolic.hpp) takes the pair unrounded.
struct ExpF32Pair {
    __m512 hi, lo, s;
};
inline ExpF32Pair exp_f32_avx512_pair(__m512 xc) noexcept {
    const __m512 shifter = _mm512_set1_ps(0x1.8p23f);
    const __m512 z = _mm512_fmadd_ps(xc, _mm512_set1_ps(0x1.715476p+4f), shifter);  // 16/ln2
    const __m512 kd = _mm512_sub_ps(z, shifter);
    __m512 r =
        _mm512_fnmadd_ps(kd, _mm512_set1_ps(0x1.62e43p-5f), xc);  // RN_f(ln2)/16, exact with FMA
    r = _mm512_fnmadd_ps(kd, _mm512_set1_ps(-0x1.05c61p-33f), r);  // (ln2 - RN_f(ln2))/16
    const __m512 th = avx512::permute_table(z, exp_tab16_hi_f);
    const __m512 tl = avx512::permute_table(z, exp_tab16_lo_f);
    // Q(r) ~ (e^r - 1 - r)/r^2 on |r| <= ln2/32 (1 + 2^-12): tools/explog_remez.py exp32_t16,
    // max relative error 2^-37.39.
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.55521p-5f), r,  // 0.041665107011795043945
                               _mm512_set1_ps(0x1.55571ep-3f));  // 0.16667006909847259521
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.0p-1f));  // 0.5
    const __m512 p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
    return {th, _mm512_fmadd_ps(th, p, tl), _mm512_mul_ps(kd, _mm512_set1_ps(0.0625f))};
}

// f32, AVX-512, core: as exp_f64_avx512_core, valid for |x| <= 87 only.
inline __m512 exp_f32_avx512_core(__m512 xc, bool tiny = false) noexcept {
    const ExpF32Pair e = exp_f32_avx512_pair(xc);
    const __m512 y = _mm512_add_ps(e.hi, e.lo);
    return tiny ? scalef_no_assist_ps(y, e.s) : _mm512_scalef_ps(y, e.s);
}

// f32, AVX-512, all inputs. Max error: see the contract at the top.
inline __m512 exp_f32_avx512(__m512 x) noexcept {
    const __m512 xc =
        _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
    // Results below 2^-126 (x < -87.34) or +0: scaled without vscalefps's assist.
    const bool tiny = _mm512_cmp_ps_mask(xc, _mm512_set1_ps(-87.0f), _CMP_LT_OQ) != 0;
    const __m512 res = exp_f32_avx512_core(xc, tiny);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_mov_ps(res, nan, _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
}
#endif  // __AVX512F__

}  // namespace detail

// e^x = (hi + lo) 2^k for |x| <= 711, f64 lanes, before exp_kernel's one rounding of hi + lo
// (hi in [0.7, 2], |lo| < 2^-4 hi, relative error of hi + lo below 2^-60; k integral): for
// callers that add a small term first (sinh and cosh of large arguments, hyperbolic.hpp).
// NaN lanes give garbage.
template <class A>
struct ExpPair {
    xsimd::batch<double, A> hi, lo, k;
};

template <class Arch>
inline ExpPair<Arch> exp_pair(const xsimd::batch<double, Arch>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        const detail::ExpT16Reduced e = detail::exp_f64_avx512_reduce(x);
        const detail::ExpT16Pair t = detail::exp_f64_avx512_t16_pair(e.z, e.r);
        const __m512d k = _mm512_roundscale_pd(_mm512_mul_pd(e.kd, _mm512_set1_pd(0.0625)),
                                               _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        return {t.hi, t.lo, k};
    } else
#endif
    {
        const detail::ExpGenericPair<double, Arch> p = detail::exp_generic_pair(x);
        return {p.hi, p.lo, p.kd};
    }
}

// exp(x), f64 lanes. Max error <= 1 ULP (contract at the top), all inputs valid;
// overflow +inf, gradual underflow, NaN as NumPy.
template <class Arch>
inline xsimd::batch<double, Arch> exp_kernel(xsimd::batch<double, Arch> x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::exp_f64_avx512(x);
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::exp_f64_t8_arch<Arch>) {
        return detail::exp_f64_t8(x);
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        return detail::exp_f64_t8_neon(x);
    } else
#endif
    {
        return detail::exp_generic(x);
    }
}

// exp(x), f32 lanes. Max error <= 1 ULP (contract at the top).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> exp_kernel(xsimd::batch<float, Arch> x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::exp_f32_avx512(x);
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::exp_f32_t8_arch<Arch>) {
        return detail::exp_f32_t8(x);
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        return detail::exp_f32_t8_neon(x);
    } else
#endif
    {
        return detail::exp_generic(x);
    }
}

// Split form for loops that branch on rare lanes anyway (as log_kernel_nofix):
//   y = exp_kernel_nofix(x);
//   if (xsimd::any(exp_special(x))) y = exp_kernel(x);  // the flagged batch, recomputed
// equals exp_kernel(x) bit for bit. exp_special is true where |x| > 708 (87 for float)
// or x is NaN: there exp_kernel_nofix may give garbage (no clamp, no NaN fixup, and on SSE2/AVX2
// no test for a 2^k that needs two factors);
// below the limit e^x is a finite normal number, so no floating-point condition arises.
template <class Arch, class T>
inline xsimd::batch<T, Arch> exp_kernel_nofix(xsimd::batch<T, Arch> x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        if constexpr (std::is_same<T, double>::value) {
            return detail::exp_f64_avx512_core(x);
        } else {
            return detail::exp_f32_avx512_core(x);
        }
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::exp_f64_t8_arch<Arch> && std::is_same<T, double>::value) {
        return xsimd::batch<T, Arch>(detail::exp_f64_t8_core(x));
    } else if constexpr (detail::exp_f32_t8_arch<Arch>) {
        return xsimd::batch<T, Arch>(detail::exp_f32_t8_core(x));
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch> && std::is_same<T, double>::value) {
        return xsimd::batch<T, Arch>(detail::exp_f64_t8_neon_core(x));
    } else if constexpr (detail::is_neon64<Arch>) {
        return xsimd::batch<T, Arch>(detail::exp_f32_t8_neon_core(x));
    } else
#endif
    {
        return detail::exp_generic_core(x);
    }
}

// The deferred ufunc loop's batches per iteration (ExpOp::single_for): one for the AVX2+FMA
// float64 kernel, whose 3 tables and 12 constants leave two batches' work too few of the 16
// registers (two per iteration: 0.946 against 0.891 ns/element in cache, standalone loop,
// AMD EPYC Zen 3); elsewhere two.
template <class T, class Arch>
inline constexpr bool exp_loop_single =
#if defined(__AVX2__) && defined(__FMA__)
    detail::exp_f64_t8_arch<Arch> && std::is_same<T, double>::value;
#else
    false;
#endif

template <class Arch, class T>
inline auto exp_special(xsimd::batch<T, Arch> x) noexcept {
    using B = xsimd::batch<T, Arch>;
    const B ax = xsimd::abs(x);
    const B lim(detail::exp_consts<T>::fast_lim);
#if defined(__AVX__)
    // One unordered not-less-or-equal compare instead of xsimd's compare and negation.
    if constexpr (!detail::is_avx512<Arch> && std::is_base_of<xsimd::avx, Arch>::value) {
        if constexpr (std::is_same<T, double>::value) {
#if defined(__AVX2__)
            // The same lanes as an integer compare of the bits (|x|'s bits, sign clear, order
            // as |x| does, NaN's above inf's): any vector pipe, where the floating-point
            // compare takes one of the two that the kernel's fused multiply-adds load.
            return xsimd::batch_bool<T, Arch>(_mm256_castsi256_pd(
                _mm256_cmpgt_epi64(_mm256_castpd_si256(ax), _mm256_castpd_si256(lim))));
#else
            return xsimd::batch_bool<T, Arch>(_mm256_cmp_pd(ax, lim, _CMP_NLE_UQ));
#endif
        } else {
            return xsimd::batch_bool<T, Arch>(_mm256_cmp_ps(ax, lim, _CMP_NLE_UQ));
        }
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        // |x|'s bits against lim's as signed integers (NaN's above inf's): one compare,
        // where the ordered <= needs a compare and a not.
        if constexpr (std::is_same<T, double>::value) {
            return xsimd::batch_bool<T, Arch>(
                vcgtq_s64(vreinterpretq_s64_f64(ax), vreinterpretq_s64_f64(lim)));
        } else {
            return xsimd::batch_bool<T, Arch>(
                vcgtq_s32(vreinterpretq_s32_f32(ax), vreinterpretq_s32_f32(lim)));
        }
    } else
#endif
    {
        return ~(ax <= lim);  // ordered <=: true for NaN
    }
}

}  // namespace numfuse::kernels
