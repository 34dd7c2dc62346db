// log1p, log2, log10, arcsinh, arccosh, arctanh for float64 SIMD lanes.
//
// Contract
//   log1p_kernel / log2_kernel / log10_kernel / asinh_kernel /
//   acosh_kernel / atanh_kernel (batch<double>): per lane. (logaddexp, built on the
//   log core here, is kernels/logaddexp.hpp.)
//   Max error <= 1 ULP over the whole domain at every level (enforced against
//   mpmath by tests/test_evaluate_accuracy.py, which prints the measured maxima).
//   Valid range: all inputs; special values as NumPy (glibc):
//     log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(+-0 / subnormal) = x;
//     log2/log10(+-0) = -inf, (x < 0) = NaN, (+inf) = +inf, exact at powers
//     of 2 (log2) and of 10 (log10) that are doubles; subnormals exact to
//     the same bound; asinh(+-0, +-inf) = x; acosh(1) = +0, acosh(x < 1) =
//     NaN, acosh(+inf) = +inf; atanh(+-1) = +-inf, atanh(|x| > 1) = NaN.
//   float32: log1p_f32_kernel / asinh_f32_kernel / acosh_f32_kernel / atanh_f32_kernel
//   (batch<float>): on
//   AVX-512 float32 lanes in float32 arithmetic (kernels/logpair_avx512.hpp, within 1 ULP);
//   AVX2+FMA and neon64 float32 lanes too (log1p_f32_lanes / asinh / acosh / atanh below:
//   the AVX-512 methods on log.hpp's float32 log pair, within 0.5 + 2^-2.4 ULP, measured:
//   docs/accuracy.md); elsewhere (SSE2) float64 lanes rounded once (xsimd's log1p /
//   asinh / atanh; acosh_f32_in_f64 below: relative error below 2^-40 before the rounding,
//   special values as acosh_kernel's).
//
// Method
//   One core: for x = xh + xl > 0 (a pair, xh normal), x = 2^E m with m in
//   [1/sqrt2, sqrt2) from the bits; f = m - 1 exact, s = f / (2 + f),
//   log m = f - f^2/2 + s (f^2/2 + z P(z)), z = s^2 (the classic atanh
//   form; P is log.hpp's degree-6 minimax, relative error 2^-59.3), with
//   f^2/2 an exact product and f - f^2/2 an exact two-sum, so log m (+ the
//   first-order term xl / xh) comes out as a hi + lo pair (~2^-60
//   relative). Each function then works in pair arithmetic (dd.hpp):
//     log1p(x) = core(1 + x as an exact two-sum)  (AVX-512: log.hpp's table log of the
//                pair, float32 in float32 lanes: log1p_f64_avx512 / log1p_f32_avx512 below)
//     log2(x)  = E + lm / ln2,  log10(x) = E log10(2) + lm / ln10
//                (AVX-512: log.hpp's table kernel's pair times 1/ln2, 1/ln10 as pairs)
//     asinh(x) = core(|x| + sqrt(x^2 + 1))     (|x| > 2^28: (E+1) ln2 + lm)
//     acosh(x) = core(x + sqrt(x^2 - 1))       (x > 2^28: as asinh)
//     atanh(x) = core((1 + |x|) / (1 - |x|)) / 2
//   and rounds once. On AVX-512, asinh / acosh / atanh are kernels/logpair_avx512.hpp's
//   (the pair built with FMAs, log.hpp's table log of it, no division or square root).
//   On AVX2+FMA all six take log.hpp's 128-cell table log as a pair instead of the core
//   (log_f64_avx2_pair; the AVX-512 methods with divisions for rcp14: "float64 on
//   AVX2+FMA" below).
//   acosh_f32_in_f64 (float32 values in float64 lanes, SSE2 / AVX2 / NEON), in plain
//   float64 (no pairs): y = x + sqrt(d (2 + d)),
//   d = x - 1 exact, log y = E ln2 + 2s + s z P(z) with the core's reduction and P.
//   The rounding of y is the largest error: 2^-53 against log y >= 2^-11 (at
//   x = 1 + 2^-23, the smallest float32 above 1), so 2^-42 relative.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/log.hpp"
#include "kernels/logbase_f32.hpp"
#include "kernels/logpair_avx512.hpp"

namespace numfuse::kernels {
namespace detail {

template <class A>
struct log_parts {
    xsimd::batch<double, A> e;  // exponent E
    dd::pair<A> lm;             // log(m) + xl / xh
};

// z P(z) for z = s^2, s = f / (2 + f): log(1 + f) = 2s + s z P(z) (P: log.hpp's degree-6
// minimax, relative error 2^-59.3), P by Estrin (the kernels are latency-bound: 4 dependent
// FMAs instead of 7).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log_atanh_tail(
    const xsimd::batch<double, A>& z) noexcept {
    using B = xsimd::batch<double, A>;
    const B z2 = z * z;
    const B p01 = dd::fmadd(B(0x1.999999997fee8p-2), z, B(0x1.5555555555592p-1));
    const B p23 = dd::fmadd(B(0x1.c71c52163c669p-3), z, B(0x1.24924941e0d52p-2));
    const B p45 = dd::fmadd(B(0x1.39a1fb3d036f1p-3), z, B(0x1.74663c5701af1p-3));
    const B p46 = dd::fmadd(B(0x1.2f02e9a30b8bap-3), z2, p45);
    return z * dd::fmadd(dd::fmadd(p46, z2, p23), z2, p01);
}

// x = 2^E (1 + f) with 1 + f in [1/sqrt2, sqrt2), f exact, for x positive, normal and
// finite (other lanes give garbage), from the bits.
template <class A>
struct log_reduced {
    xsimd::batch<double, A> e, f;
};
template <class A>
NUMFUSE_ALWAYS_INLINE log_reduced<A> log_reduce_normal(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    using U = xsimd::batch<std::uint64_t, A>;
    const I u = as_int(x) + I(0x00095f619980c433);  // bits(1.0) - bits(RN(1/sqrt2))
    const I eb = bit_cast<I>(bit_cast<U>(u) >> 52);  // E + 1023
    const B e = as_float<double, A>(eb | I(0x4330000000000000)) - B(0x1.0p52 + 1023.0);
    const B m = as_float<double, A>((u & I(0x000fffffffffffff)) + I(0x3fe6a09e667f3bcd));
    return {e, m - B(1.0)};
}

// x = xh + xl: xh positive, normal and finite (other lanes give garbage). Without
// Tail, xl is taken as 0 and its first-order term xl / xh (a division) is skipped.
template <bool Tail, class A>
NUMFUSE_ALWAYS_INLINE log_parts<A> log_core_impl(
    const xsimd::batch<double, A>& xh,
    [[maybe_unused]] const xsimd::batch<double, A>& xl) noexcept {
    using B = xsimd::batch<double, A>;
    const auto [e, f] = log_reduce_normal(xh);
    const B s = f / (B(2.0) + f);
    const B r = log_atanh_tail(s * s);
    const dd::pair<A> f2 = dd::two_prod(f, f);
    const B hh = B(0.5) * f2.hi, hl = B(0.5) * f2.lo;  // f^2/2 exactly
    const dd::pair<A> a = dd::fast_two_sum(f, -hh);      // |f| > f^2/2
    B lo = a.lo - hl;
    if constexpr (Tail) lo = lo + xl / xh;
    const B tail = dd::fmadd(s, hh + r, lo);
    return {e, dd::fast_two_sum(a.hi, tail)};
}

// log_parts of the pair xh + xl.
template <class A>
NUMFUSE_ALWAYS_INLINE log_parts<A> log_core(const xsimd::batch<double, A>& xh,
                                            const xsimd::batch<double, A>& xl) noexcept {
    return log_core_impl<true>(xh, xl);
}

// log_parts of one double.
template <class A>
NUMFUSE_ALWAYS_INLINE log_parts<A> log_core(const xsimd::batch<double, A>& x) noexcept {
    return log_core_impl<false>(x, x);
}

// log(x) as a pair: E ln2 + lm (E ln2_hi exact: 42-bit ln2_hi).
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> log_pair(const log_parts<A>& p) noexcept {
    using B = xsimd::batch<double, A>;
    const dd::pair<A> h = dd::two_sum(p.e * B(0x1.62e42fefa38p-1), p.lm.hi);
    return dd::fast_two_sum(h.hi, h.lo + dd::fmadd(p.e, B(0x1.ef35793c7673p-45), p.lm.lo));
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> inf_of() noexcept {
    return xsimd::batch<double, A>(std::numeric_limits<double>::infinity());
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> nan_of() noexcept {
    return xsimd::batch<double, A>(std::numeric_limits<double>::quiet_NaN());
}

// log_parts of x > 0 with subnormals scaled up first, by 2^1022 without a multiplication
// (log.hpp's log_reduce: bits(x) | bits(1.0), minus 1; a subnormal operand would cost a
// microcode assist per batch).
template <class A>
NUMFUSE_ALWAYS_INLINE log_parts<A> log_core_any(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const auto sub = x < B(0x1.0p-1022);
    const B scaled = as_float<double, A>(as_int(x) | I(0x3ff0000000000000)) - B(1.0);
    log_parts<A> p = log_core(xsimd::select(sub, scaled, x));
    p.e = p.e - xsimd::select(sub, B(1022.0), B(0.0));
    return p;
}

// Special values shared by log2 / log10: 0 -> -inf, < 0 -> NaN, +inf, NaN.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log_specials(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& res) noexcept {
    using B = xsimd::batch<double, A>;
    B out = xsimd::select(x < B(0.0), nan_of<A>(), res);
    out = xsimd::select(x == B(0.0), -inf_of<A>(), out);
    out = xsimd::select(x == inf_of<A>(), x, out);
    return xsimd::select(xsimd::isnan(x), x + x, out);
}

#if defined(__AVX512F__)
// log1p on AVX-512, float64 and float32 lanes, without a division: 1 + x as an exact pair
// yh + yl (a fast two-sum of max(1, x) and min(1, x)), then the table log of the pair, as
// the inverse hyperbolics of logpair_avx512.hpp take it:
//   float64: as log_sum_avx512 (log.hpp's table pair of yh, relative error ~2^-61, plus
//     yl / yh from reciprocal_approx and one correction, 2^-80 of a term <= 2^-53 yh), one
//     rounding: within 0.5 + 2^-7 ULP. |x| < 2^-54 returns x (x^2 / 2 is below a quarter
//     ULP of x), which keeps -0 and makes subnormals exact.
//   float32: log_f32_ge1 of yh with num * rcp = yl * rcp14(yh) (yl <= 2^-24 yh, rcp14 within
//     2^-14: an error below 2^-38, a quarter ULP of log1p(x) at |x| = 2^-12, less above). For
//     y = yh < 1 (x < 0) the same cells: where y is next to 1 below, cell 31 (invc = 1/2,
//     T = ln2 to the last bit of T_hi and T_lo) with e = -1 gives hi = lo = 0, so the result
//     is the last rounding alone, as for cell 0 with e = 0 above 1. |x| < 2^-12 takes
//     x + x^2 (x/3 - 1/2) instead, rounded once by its last FMA (the neglected x^4 / 4 and
//     the roundings inside are below 2^-13 ULP); |x| < 2^-25 returns x (-0 kept).
//     Measured over every float32 input against glibc's float64 log1p: max 0.754 ULP.
// Special lanes by one vfixupimm on 1 + x (yh where x is not tiny; from x itself, as vrangep
// turns a NaN x into the bound): NaN -> the operand quieted (x's NaN), 0 (x = -1) ->
// -inf, -inf and negative (x < -1) -> the default NaN (the callers' NaN policy makes it
// NumPy's), +inf -> +inf, +1 and positive -> the computed value.
inline constexpr int log1p_fixup = 0x03530422;

// Tiny lanes (float64 |x| < 2^-54, float32 |x| < 2^-25, where log1p rounds to x) are computed
// on x held at that magnitude, sign kept (vrangep: the larger magnitude, the sign of x), and
// return x: no operation sees a subnormal operand (a microcode assist per batch on x86); a
// masked move that zeroes those lanes is slower than vrangep here.
inline __m512d log1p_f64_avx512(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const __mmask8 tiny = _mm512_cmp_pd_mask(_mm512_andnot_pd(_mm512_set1_pd(-0.0), x),
                                             _mm512_set1_pd(0x1.0p-54), _CMP_LT_OQ);
    const __m512d xk = _mm512_range_pd(x, _mm512_set1_pd(0x1.0p-54), 0x03);
    const __m512d big = _mm512_max_pd(one, xk);
    const __m512d small = _mm512_min_pd(one, xk);
    const __m512d yh = _mm512_add_pd(big, small);
    const __m512d yl = _mm512_sub_pd(small, _mm512_sub_pd(yh, big));  // exact
    // log_sum_avx512 without its constant c (= 0 here: four operations fewer, the same bits).
    const log_pd_pair p = log_pair_sum_avx512(yh, yl);
    const __m512d res = _mm512_add_pd(p.hi, p.lo);
    return avx512::fixup<log1p_fixup>(_mm512_mask_mov_pd(res, tiny, x), _mm512_add_pd(x, one));
}

inline __m512 log1p_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 ax = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
    const __mmask16 tiny = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0x1.0p-25f), _CMP_LT_OQ);
    const __m512 xk = _mm512_range_ps(x, _mm512_set1_ps(0x1.0p-25f), 0x03);
    const __m512 big = _mm512_max_ps(one, xk);
    const __m512 small = _mm512_min_ps(one, xk);
    const __m512 yh = _mm512_add_ps(big, small);
    const __m512 yl = _mm512_sub_ps(small, _mm512_sub_ps(yh, big));  // exact
    const __m512 res = log_f32_ge1<false>(yh, yl, _mm512_rcp14_ps(yh), 0);
    const __m512 p = _mm512_fmadd_ps(xk, _mm512_set1_ps(0x1.555556p-2f), _mm512_set1_ps(-0.5f));
    const __m512 near0 = _mm512_fmadd_ps(_mm512_mul_ps(xk, xk), p, xk);
    const __mmask16 small_x = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0x1.0p-12f), _CMP_LT_OQ);
    return avx512::fixup<log1p_fixup>(
        _mm512_mask_mov_ps(_mm512_mask_mov_ps(res, small_x, near0), tiny, x),
        _mm512_add_ps(x, one));
}
#endif  // __AVX512F__

// The special-value tails of the float64 kernels below, shared by the pair-core form (SSE2,
// neon64) and the AVX2+FMA table form (which runs them only on the batches holding a special
// lane, so both give the same bits there). res: the computed value, garbage in special lanes.
// log1p: x < -1 -> NaN, -1 -> -inf, +inf -> +inf, |x| < 2^-54 -> x, NaN -> x quieted.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log1p_specials(const xsimd::batch<double, A>& x,
                                                             xsimd::batch<double, A> res) noexcept {
    using B = xsimd::batch<double, A>;
    res = xsimd::select(x < B(-1.0), nan_of<A>(), res);
    res = xsimd::select(x == B(-1.0), -inf_of<A>(), res);
    res = xsimd::select(x == inf_of<A>(), x, res);
    res = xsimd::select(xsimd::abs(x) < B(0x1.0p-54), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}
// asinh, on res with x's sign: |x| < 2^-27 and +-inf -> x, NaN -> x quieted.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> asinh_specials(const xsimd::batch<double, A>& x,
                                                             const xsimd::batch<double, A>& a,
                                                             xsimd::batch<double, A> res) noexcept {
    using B = xsimd::batch<double, A>;
    res = xsimd::select((a < B(0x1.0p-27)) | (a == inf_of<A>()), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}
// acosh: 1 -> +0, x < 1 -> NaN, +inf -> +inf, NaN -> x quieted.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> acosh_specials(const xsimd::batch<double, A>& x,
                                                             xsimd::batch<double, A> res) noexcept {
    using B = xsimd::batch<double, A>;
    res = xsimd::select(x == B(1.0), B(0.0), res);
    res = xsimd::select(x < B(1.0), nan_of<A>(), res);
    res = xsimd::select(x == inf_of<A>(), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}
// atanh, on res = atanh(|x|) (unsigned): |x| = 1 -> +-inf, |x| > 1 -> NaN (x's sign),
// x's sign put on, |x| < 2^-27 -> x, NaN -> x quieted.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atanh_specials(const xsimd::batch<double, A>& x,
                                                             const xsimd::batch<double, A>& a,
                                                             xsimd::batch<double, A> res) noexcept {
    using B = xsimd::batch<double, A>;
    res = xsimd::select(a == B(1.0), inf_of<A>(), res);
    res = xsimd::select(a > B(1.0), nan_of<A>(), res);
    res = xsimd::copysign(res, x);
    res = xsimd::select(a < B(0x1.0p-27), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

#if defined(__AVX2__) && defined(__FMA__)
// float64 on AVX2+FMA: log.hpp's 128-cell table log as a pair (log_f64_avx2_pair, relative
// error below 2^-61 before its one rounding, no division) in place of the pair core above
// (a division, a 7-coefficient polynomial and pair arithmetic). Each kernel computes every
// lane without a branch and repairs the special lanes (the *_specials tails above) by a
// branch on the rare batches that hold one; the bits there are the tails' as before.
//   log2 / log10 (log_base_f64_avx2): (hi + lo)(c_hi + c_lo) rounded once, c = 1/ln2, 1/ln10
//     as pairs, as AVX-512's log_pair_scaled_pd: hi c_hi as an exact product pair, the cross
//     terms added to its low part (relative error below 2^-104 on top of the log pair's), so
//     within 0.5 + 2^-8 ULP; an integer result (log2 of a power of two, log10 of a power of
//     ten) comes out exact: there t = 0 in the cell of z = 1 (invc = 1, T = 0), so the pair is
//     k ln2_hi + k ln2_lo, k ln2 to 2^-95, and k (1 + 2^-90) rounds to k.
//   log1p: 1 + x = yh + yl exactly (a fast two-sum of max(1, x) and min(1, x)), log(yh) as a
//     pair plus yl / yh (a division, correctly rounded: 2^-53 of a term below 2^-53 yh), the
//     neglected (yl / yh)^2 / 2 <= 2^-107 (at most 2^-55 of results >= 2^-54; the kernel
//     before neglected the same term); |x| < 2^-54 returns x (computed on 0: no subnormal
//     operand). yh >= 2^-53 is normal for x > -1, so no subnormal scaling.
//   arcsinh / arccosh: AVX-512's pair y = yh + yl (kernels/logpair_avx512.hpp's method) with
//     its reciprocals as divisions (correctly rounded, where AVX-512 takes rcp14 and its error
//     analysis): sl = (qh - s0^2 + ql) / (2 s0), the first-order term yl / yh; log(yh) as a
//     pair, huge lanes (|x| > 2^28) log(|x|) + ln2 by the pair's k plus one (the neglected
//     1 / (4 x^2) is below 2^-56 of a result above 20); lanes below 2^-27 (arcsinh) return x
//     and are computed at 2^-28 (no subnormal operand).
//   arctanh: log(q) / 2, q = (1 + a) / (1 - a), a = |x| in [2^-28, 1), as AVX-512's float64
//     quotient: 1 - a = dh + dl exactly, g = RN(0.5 / dh) (one division; = RN(2 / dh) / 4),
//     rho = 1/2 - g dh - g dl (first step exact), qh = RN(4g - 1) (exact below 2^53; above,
//     2^-53 relative against a result near 18.7), and log q = log qh + 4 rho / (1 + a) to
//     first order (the second-order term is below 2^-103, against results >= 2^-28). rn4 =
//     2 + dh (1 + dh (dh + a^2)) is 4 / (1 + a) within dh^2 a^3 / 4 relative (1 - a + a^2 is
//     1 / (1 + a) within a^3 / (1 + a)), so rho rn4 is within 2^-53 dh^2 a^3 / (1 + a) of
//     its value, below 2^-58.6 of atanh(a) over [0, 1) (dh^2 a^2 / (2 (1 + a)) <= 0.0197);
//     then (hi + (lo + rho rn4)) / 2, the halving exact. Lanes below 2^-27 return x.
// The divisions (and arcsinh / arccosh's square root) are correctly rounded, so the bits do not
// depend on the CPU (no rcpps), and the kernels carry over to NEON's fdiv / fsqrt as written.

// log2 / log10 of positive finite lanes (Subnormals: subnormal lanes scaled by the pair;
// without, they hold garbage, as do x <= 0, +inf and NaN). Rows: where the pair's table rows
// come from (log_f64_avx2_pair; LogRowsFromMemory for the contiguous ufunc loop, the same
// bits).
template <int Base, bool Subnormals, class Rows = LogRowsFromLanes>
NUMFUSE_ALWAYS_INLINE __m256d log_base_f64_avx2_core(__m256d x, Rows rows_of = {}) noexcept {
    const log_pd4_pair p = log_f64_avx2_pair<Subnormals, false, Rows>(x, rows_of);
    const __m256d ch = _mm256_set1_pd(Base == 2 ? inv_ln2_hi : inv_ln10_hi);
    const __m256d cl = _mm256_set1_pd(Base == 2 ? inv_ln2_lo : inv_ln10_lo);
    const __m256d ph = _mm256_mul_pd(p.hi, ch);
    const __m256d pe = _mm256_fmsub_pd(p.hi, ch, ph);  // exact
    const __m256d tail = _mm256_fmadd_pd(p.hi, cl, _mm256_fmadd_pd(p.lo, ch, pe));
    return _mm256_add_pd(ph, tail);
}

// log2 / log10, special lanes included (log_specials on the batches holding x <= 0, +inf or
// NaN; subnormal x by the pair's own scaling).
template <int Base>
NUMFUSE_ALWAYS_INLINE __m256d log_base_f64_avx2(__m256d x) noexcept {
    const __m256d res = log_base_f64_avx2_core<Base, true>(x);
    const __m256d ok = _mm256_and_pd(
        _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_GT_OQ),
        _mm256_cmp_pd(x, _mm256_set1_pd(std::numeric_limits<double>::infinity()), _CMP_LT_OQ));
    using B = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
    return _mm256_movemask_pd(ok) == 0xf ? res : __m256d(log_specials(B(x), B(res)));
}

inline __m256d log1p_f64_avx2(__m256d x) noexcept {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d tiny = _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x),
                                       _mm256_set1_pd(0x1.0p-54), _CMP_LT_OQ);
    const __m256d xk = _mm256_andnot_pd(tiny, x);
    const __m256d big = _mm256_max_pd(one, xk);
    const __m256d small = _mm256_min_pd(one, xk);
    const __m256d yh = _mm256_add_pd(big, small);
    const __m256d yl = _mm256_sub_pd(small, _mm256_sub_pd(yh, big));  // exact
    const log_pd4_pair p = log_f64_avx2_pair<false>(yh);
    const __m256d q = _mm256_div_pd(yl, yh);
    const __m256d res = _mm256_blendv_pd(_mm256_add_pd(p.hi, _mm256_add_pd(p.lo, q)), x, tiny);
    const __m256d ok = _mm256_and_pd(
        _mm256_cmp_pd(x, _mm256_set1_pd(-1.0), _CMP_GT_OQ),
        _mm256_cmp_pd(x, _mm256_set1_pd(std::numeric_limits<double>::infinity()), _CMP_LT_OQ));
    using B = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
    return _mm256_movemask_pd(ok) == 0xf ? res : __m256d(log1p_specials(B(x), B(res)));
}

// log(yh + yl) for the pair of arcsinh / arccosh (yh >= 1 finite, |yl| <= ~ulp(yh)); lanes in
// huge (all bits set): log(big) + ln2, yl ignored there.
NUMFUSE_ALWAYS_INLINE __m256d log_f64_pair_arg_avx2(__m256d yh, __m256d yl, __m256d big,
                                                    __m256d huge) noexcept {
    const log_pd4_pair p =
        log_f64_avx2_pair<false, true>(_mm256_blendv_pd(yh, big, huge), LogRowsFromLanes{}, huge);
    const __m256d q = _mm256_andnot_pd(huge, _mm256_div_pd(yl, yh));
    return _mm256_add_pd(p.hi, _mm256_add_pd(p.lo, q));
}

inline __m256d asinh_f64_avx2(__m256d x) noexcept {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256d a = _mm256_andnot_pd(sign, x);
    const __m256d huge = _mm256_cmp_pd(a, _mm256_set1_pd(0x1.0p28), _CMP_GT_OQ);
    const __m256d tiny = _mm256_cmp_pd(a, _mm256_set1_pd(0x1.0p-27), _CMP_LT_OQ);
    // NaN lanes: min / max return their second operand.
    const __m256d ac =
        _mm256_max_pd(_mm256_min_pd(a, _mm256_set1_pd(0x1.0p28)), _mm256_set1_pd(0x1.0p-28));
    // 1 + a^2 = qh + ql (1 - qh exact for qh < 2^53), sqrt(q) = s0 + sl (s0 correctly rounded:
    // qh - s0^2 exact in one FMA)
    const __m256d qh = _mm256_fmadd_pd(ac, ac, one);
    const __m256d ql = _mm256_fmadd_pd(ac, ac, _mm256_sub_pd(one, qh));
    const __m256d s0 = _mm256_sqrt_pd(qh);
    const __m256d sl =
        _mm256_div_pd(_mm256_add_pd(_mm256_fnmadd_pd(s0, s0, qh), ql), _mm256_add_pd(s0, s0));
    // y = s0 + a + sl = yh + yl (fast two-sum: s0 > a)
    const __m256d yh = _mm256_add_pd(s0, ac);
    const __m256d yl = _mm256_add_pd(_mm256_sub_pd(ac, _mm256_sub_pd(yh, s0)), sl);
    const __m256d r = log_f64_pair_arg_avx2(yh, yl, a, huge);  // >= 0
    const __m256d res = _mm256_blendv_pd(_mm256_or_pd(r, _mm256_and_pd(x, sign)), x, tiny);
    const __m256d ok =
        _mm256_cmp_pd(a, _mm256_set1_pd(std::numeric_limits<double>::infinity()), _CMP_LT_OQ);
    using B = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
    return _mm256_movemask_pd(ok) == 0xf ? res : __m256d(asinh_specials(B(x), B(a), B(res)));
}

inline __m256d acosh_f64_avx2(__m256d x) noexcept {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d huge = _mm256_cmp_pd(x, _mm256_set1_pd(0x1.0p28), _CMP_GT_OQ);
    const __m256d xc = _mm256_max_pd(_mm256_min_pd(x, _mm256_set1_pd(0x1.0p28)),
                                     _mm256_set1_pd(0x1.0000000000001p0));
    // x^2 - 1 = d (x + 1) = qh + ql: d = x - 1 exact, x + 1 = wh + wl exact
    const __m256d d = _mm256_sub_pd(xc, one);
    const __m256d wh = _mm256_add_pd(xc, one);
    const __m256d wl = _mm256_sub_pd(one, _mm256_sub_pd(wh, xc));
    const __m256d qh = _mm256_mul_pd(d, wh);
    const __m256d ql = _mm256_fmadd_pd(d, wl, _mm256_fmsub_pd(d, wh, qh));
    const __m256d s0 = _mm256_sqrt_pd(qh);
    const __m256d sl =
        _mm256_div_pd(_mm256_add_pd(_mm256_fnmadd_pd(s0, s0, qh), ql), _mm256_add_pd(s0, s0));
    // y = x + s0 + sl = yh + yl (fast two-sum: x > s0)
    const __m256d yh = _mm256_add_pd(xc, s0);
    const __m256d yl = _mm256_add_pd(_mm256_sub_pd(s0, _mm256_sub_pd(yh, xc)), sl);
    const __m256d res = log_f64_pair_arg_avx2(yh, yl, x, huge);
    const __m256d ok = _mm256_and_pd(
        _mm256_cmp_pd(x, one, _CMP_GT_OQ),
        _mm256_cmp_pd(x, _mm256_set1_pd(std::numeric_limits<double>::infinity()), _CMP_LT_OQ));
    using B = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
    return _mm256_movemask_pd(ok) == 0xf ? res : __m256d(acosh_specials(B(x), B(res)));
}

inline __m256d atanh_f64_avx2(__m256d x) noexcept {
    const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5);
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256d ax = _mm256_andnot_pd(sign, x);
    const __m256d tiny = _mm256_cmp_pd(ax, _mm256_set1_pd(0x1.0p-27), _CMP_LT_OQ);
    // a in [2^-28, 2]: |x| >= 1 lanes give garbage (repaired below), no subnormal operand
    const __m256d a =
        _mm256_min_pd(_mm256_max_pd(ax, _mm256_set1_pd(0x1.0p-28)), _mm256_set1_pd(2.0));
    const __m256d dh = _mm256_sub_pd(one, a);
    const __m256d dl = _mm256_sub_pd(_mm256_sub_pd(one, dh), a);  // 1 - a = dh + dl
    const __m256d g = _mm256_div_pd(half, dh);
    const __m256d rho = _mm256_fnmadd_pd(g, dl, _mm256_fnmadd_pd(g, dh, half));  // first exact
    const __m256d qh = _mm256_fmsub_pd(g, _mm256_set1_pd(4.0), one);
    // rn4 = 2 + dh (1 + dh (dh + a^2)) ~ 4 / (1 + a)
    const __m256d rn4 = _mm256_fmadd_pd(dh, _mm256_fmadd_pd(dh, _mm256_fmadd_pd(a, a, dh), one),
                                        _mm256_set1_pd(2.0));
    const log_pd4_pair p = log_f64_avx2_pair<false>(qh);
    const __m256d r =
        _mm256_mul_pd(_mm256_add_pd(p.hi, _mm256_fmadd_pd(rho, rn4, p.lo)), half);  // >= 0
    const __m256d res = _mm256_blendv_pd(_mm256_or_pd(r, _mm256_and_pd(x, sign)), x, tiny);
    const __m256d ok = _mm256_cmp_pd(ax, one, _CMP_LT_OQ);
    using B = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
    return _mm256_movemask_pd(ok) == 0xf ? res : __m256d(atanh_specials(B(x), B(ax), B(r)));
}
#endif  // __AVX2__ && __FMA__

#if defined(NUMFUSE_LOG_F32_PAIR)
// float32 log1p / asinh / acosh / atanh on AVX2+FMA and neon64, float32 lanes in float32
// arithmetic, written once on batches (the AVX-512 kernels' methods, logpair_avx512.hpp, with
// log.hpp's float32 log pair, log_f32_pair: avx2_fma's or neon64's, in
// place of log_f32_ge1: its 16 cells cost two permutes and a blend per table where 32 cells
// would cost four permutes and three blends, and AVX2 has no getmant / getexp; rcpps and
// rsqrtps (1.5 2^-12) in place of rcp14 / rsqrt14 (2^-14), so each reciprocal is either
// refined or replaced where its error would show, as each kernel says). Each is the log of a
// value y carried as a pair yh + yl, log_f32_avx2_pair(yh) = hi + lo, plus the first-order
// term q ~ yl / yh: RN(hi + RN(lo + q)). The pair is log yh within 2^-27 relative, and where
// yh is next to 1 (E = 0, j = 16) hi = yh - 1 exactly and lo = RN(t^2 (-1/2 + t R(t))) with
// |lo| <= 0.024 |hi|: relative error 2^-29 there (logbase_f32.hpp's bound). No lane is
// computed on a subnormal operand: tiny lanes are held at a normal value and replaced after.
// Special lanes (NaN, +-inf, outside the domain, the poles) by selects on the batches that
// hold one; invalid lanes give the default NaN with its sign set (0xffc00000), NaN lanes the
// input quieted.
// neon64 has no reciprocal estimate the build allows (tools/aarch64/check_no_estimates.sh):
// where avx2_fma takes rcpps / rsqrtps, neon64 divides (FDIV, correctly rounded: relative
// error 2^-24 against the estimates' 1.5 2^-12, each bound below holds with room), through
// the three hooks below; the rest is the same operations, so the results are avx2_fma's
// except where a reciprocal or the log pair's cell (log.hpp: the cubic cell choice) differs.
// yl / yh, |yl| <= 2^-24 yh (log1p's first-order term): avx2_fma yl rcpps(yh), neon64 a
// division.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log_f32_ratio(
    const xsimd::batch<float, A>& yl, const xsimd::batch<float, A>& yh) noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (is_avx2_fma<A>) return yl * xsimd::batch<float, A>(_mm256_rcp_ps(yh));
#endif
    return divide(yl, yh);
}
// ~ 1 / (2 sqrt(v)) for s0 = RN(sqrt(v)) (the square-root correction of asinh / acosh):
// avx2_fma rsqrtps(v) / 2 (1.5 2^-12), neon64 0.5 / s0 (within 2^-23).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log_f32_half_rsqrt(
    [[maybe_unused]] const xsimd::batch<float, A>& v,
    [[maybe_unused]] const xsimd::batch<float, A>& s0) noexcept {
    using F = xsimd::batch<float, A>;
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (is_avx2_fma<A>) return F(_mm256_rsqrt_ps(v)) * F(0.5f);
#endif
    return divide(F(0.5f), s0);
}
// ~ 1 / v, within 2^-21.6 (atanh's 1 / (1 + a)): avx2_fma rcpps(v) and one Newton step,
// neon64 a division (2^-24).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log_f32_recip(
    const xsimd::batch<float, A>& v) noexcept {
    using F = xsimd::batch<float, A>;
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (is_avx2_fma<A>) {
        const F r0(_mm256_rcp_ps(v));
        return fused_madd(r0, fused_nmadd(r0, v, F(1.0f)), r0);
    }
#endif
    return divide(F(1.0f), v);
}

// v with the lanes of m cleared to +0 (log_f32_clear) or kept where m holds, +0 elsewhere
// (log_f32_keep): one vandnps / vandps on avx2_fma, where a select would take a blend and a
// zero register; a select elsewhere.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log_f32_clear(
    const xsimd::batch_bool<float, A>& m, const xsimd::batch<float, A>& v) noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (is_avx2_fma<A>) return _mm256_andnot_ps(m, v);
#endif
    return xsimd::select(m, xsimd::batch<float, A>(0.0f), v);
}
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log_f32_keep(
    const xsimd::batch_bool<float, A>& m, const xsimd::batch<float, A>& v) noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (is_avx2_fma<A>) return _mm256_and_ps(m, v);
#endif
    return xsimd::select(m, v, xsimd::batch<float, A>(0.0f));
}

// log1p: for |x| >= 2^-7, 1 + x as an exact pair (yh = RN(max(1, x) + min(1, x)), yl by a
// fast two-sum; yh >= 2^-24 is normal), q = yl rcpps(yh) (neon64: yl / yh, within 2^-48 yh): |yl|
// <= 2^-24 yh, so q is within 2^-35.4 yh of yl / yh, and log1p(x) >= 2^-7 (1 - 2^-8) there: below
// 2^-4.4 ULP (relative 2^-28.4 where yh >= 1.5, further from 0); with the pair's 2^-27 and two
// roundings of terms below 2^-4.8 of the result, at most 0.5 + 2^-2.4 ULP. |x| < 2^-7: x + x^2
// (-1/2 + x (1/3 + x (-1/4 + x/5))), Taylor, rounded once by its last FMA: the dropped x^6/6 is
// below 2^-37.6 of the result, the coefficients' and inner roundings below 2^-30 of it. |x| < 2^-25
// returns x (-0 kept; the Taylor form would too, but x^2 would be subnormal): those lanes are
// computed on 2^-7. Below 2^-7 the pair form would lose: yl rcpps's error against a result
// that small.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log1p_f32_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F one(1.0f);
    const F ax = xsimd::abs(x);
    const auto tiny = ax < F(0x1.0p-25f);
    const auto small = ax < F(0x1.0p-7f);
    const F xc = xsimd::select(tiny, F(0x1.0p-7f), x);
    const F big = xsimd::max(one, xc);
    const F sm = xsimd::min(one, xc);
    const F yh = big + sm;
    const F yl = sm - (yh - big);  // exact
    const log_f32_lanes_pair<A> p = log_f32_pair<false>(yh);
    const F q = log_f32_ratio(yl, yh);
    const F res = p.hi + (p.lo + q);
    F c = fused_madd(xc, F(0x1.99999ap-3f), F(-0.25f));  // 1/5
    c = fused_madd(c, xc, F(0x1.555556p-2f));  // 1/3
    c = fused_madd(c, xc, F(-0.5f));
    const F near0 = fused_madd(xc * xc, c, xc);
    return xsimd::select(tiny, x, xsimd::select(small, near0, res));
}

// asinh: a = |x| held in [2^-12, 2^12]; y = a + sqrt(1 + a^2) as logpair_avx512.hpp's float32
// asinh builds it: 1 + a^2 = qh + ql (two FMAs), s0 = RN(sqrt(qh)), sl = (qh - s0^2 + ql) h
// with h ~ 1 / (2 sqrt(qh)): below qh = 1 + 2^-8 (a < 2^-4), h = 3/4 - qh / 4 (relative error
// below (3/8) a^4 + 2^-24: sl is within 2^-41 of its value, against results >= 2^-12), else
// rsqrtps(qh) / 2 (1.5 2^-12; neon64 0.5 / s0 from a = 0 on, 2^-23: |sl| <= 2^-24 s0, so within
// 2^-35.4 s0 <= 2^-35.3 y, against results >= 0.0624 near y = 1.06: below 2^-7 ULP); yh + yl = s0 +
// a + sl (fast two-sum, s0 > a). q = yl r with r = (s0 - a) + sl = sqrt(1 + a^2) - a = 1 / y,
// within 2^-22 relative for a <= 1 and within 2^-34.4 a^2 for a up to 2^12 (s0 - a exact from a =
// 0.58 on, the error s0 + sl's), while |yl| <= 2^-23 yh: q within 2^-45 of yl / yh for a <= 1,
// 2^-10.4 |q| <= 2^-33.4 yh at 2^12 (results >= 0.88 for a >= 1: far below an ULP). Above 2^12:
// log(a) + ln2 (E + 1 in the log pair; the dropped 1 / (4 a^2) is below 2^-26 of the result), yl =
// 0. |x| < 2^-12 returns x. The sign of x is put back.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asinh_f32_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F one(1.0f);
    const F a = xsimd::abs(x);
    const auto tiny = a < F(0x1.0p-12f);
    const auto huge = a > F(0x1.0p12f);
    const F ac = xsimd::max(xsimd::min(a, F(0x1.0p12f)), F(0x1.0p-12f));
    const F qh = fused_madd(ac, ac, one);
    const F ql = fused_madd(ac, ac, one - qh);  // exact, rounded once
    const F s0 = square_root(qh);  // correctly rounded: qh - s0^2 is exact
    const F d = fused_nmadd(s0, s0, qh) + ql;
    F h = log_f32_half_rsqrt(qh, s0);
    if constexpr (!is_neon64<A>) {
        h = xsimd::select(qh < F(0x1.01p0f), fused_nmadd(qh, F(0.25f), F(0.75f)), h);
    }
    const F sl = d * h;
    const F yh = s0 + ac;
    const F yl = (ac - (yh - s0)) + sl;
    const F r = (s0 - ac) + sl;
    const F q = log_f32_clear(huge, yl * r);
    const log_f32_lanes_pair<A> p =
        log_f32_pair<false, true>(xsimd::select(huge, a, yh), log_f32_keep(huge, one));
    const F res = p.hi + (p.lo + q);
    return xsimd::select(tiny, x, res | (x & F(-0.0f)));
}

// acosh: x held at 2^12 or below; y = x + sqrt(p), p = x^2 - 1 = d (d + 2) = ph + pl (d = x - 1
// exact, two FMAs, as logpair_avx512.hpp's float32 acosh; beyond d = 2 within 2^-25 of p),
// s0 = RN(sqrt(ph)), sl = (ph - s0^2 + pl) rsqrtps(ph) / 2 (neon64: / (2 s0), 2^-23): |sl| <=
// 2^-23.4 s0, in error by 1.5 2^-12 of itself, so y is within 2^-34.8 s0 and log y within 2^-34.8
// s0 / y <= 2^-34.8 acosh(x) (s0 / y = (1 - 1/y^2) / 2 <= log y): below 2^-10 ULP. (The AVX-512
// kernel's unrefined s0 = ph rsqrt14(ph) would be 2^-22 off with rsqrtps.) yh + yl = x + s0 +
// sl (fast two-sum, x > s0); q = yl r with r = (x - s0) - sl = x - sqrt(x^2 - 1) = 1 / y:
// relative error below 2^-22 up to x = 3, below 2^-25 x^2 above (p's 2^-25), and |yl| <=
// 2^-22.7 yh, so q is within 2^-44.7 of yl / yh up to x = 3 (results >= 2^-11.5: ULPs >=
// 2^-34.5) and within 2^-47.7 x^2 <= 2^-23.7 above (results >= 1.76 there, ULPs >= 2^-23
// and growing with log x faster than x^2 / 2^24 shrinks them: at most 2^-4 ULP at 2^12).
// Above 2^12: log(x) + ln2 (E + 1 in the log pair; 1 / (4 x^2) is below 2^-26 of it), yl = 0.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> acosh_f32_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F one(1.0f);
    const auto huge = x > F(0x1.0p12f);
    const F xc = xsimd::min(x, F(0x1.0p12f));  // NaN lanes: 2^12 (neon64: NaN, repaired after)
    const F d = xc - one;  // exact
    const F d2 = d + d;
    // d2 - ph is exact for d <= 2 (Sterbenz); beyond, within 2^-25 of p (results above 1.76)
    const F ph = fused_madd(d, d, d2);
    const F pl = fused_madd(d, d, d2 - ph);
    const F s0 = square_root(ph);  // correctly rounded: ph - s0^2 is exact
    const F sl = (fused_nmadd(s0, s0, ph) + pl) * log_f32_half_rsqrt(ph, s0);
    const F yh = xc + s0;
    const F yl = (s0 - (yh - xc)) + sl;
    const F r = (xc - s0) - sl;
    const F q = log_f32_clear(huge, yl * r);
    const log_f32_lanes_pair<A> p =
        log_f32_pair<false, true>(xsimd::select(huge, x, yh), log_f32_keep(huge, one));
    return p.hi + (p.lo + q);
}

// atanh: a = |x| held at 2^-12 or above; logpair_avx512.hpp's quotient (atanh_quotient_of):
// q = (1 + a) / (1 - a) = qh + rho / (1 - a), 1 - a = dh + dl exactly, g = RN(2 / dh), qh = g -
// 1, rho = 2 - g dh - g dl (the first step exact); log q = log qh + rho / (1 + a) to first
// order, 1 / (1 + a) from rcpps(1 + a) and one Newton step (relative error below 2^-21.6; neon64
// a division, 2^-24;
// with 1 + a's rounding: |rho| <= 2^-21.5, so within 2^-43 against log q >= 2a >= 2^-11, ULPs
// >= 2^-34), atanh = RN(hi + RN(lo + rho rn)) / 2 (exact: no subnormal). |x| < 2^-12 returns
// x (x^3/3 is below half an ULP there). The sign of x is put back.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atanh_f32_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F one(1.0f), two(2.0f);
    const F a0 = xsimd::abs(x);
    const auto tiny = a0 < F(0x1.0p-12f);
    const F a = xsimd::max(a0, F(0x1.0p-12f));  // NaN lanes: 2^-12 (neon64: NaN)
    const F dh = one - a;
    const F dl = (one - dh) - a;  // 1 - a = dh + dl
    const F g = divide(two, dh);
    const F rho = fused_nmadd(g, dl, fused_nmadd(g, dh, two));  // 2 - g dh exact
    const F rn = log_f32_recip(a + one);
    const log_f32_lanes_pair<A> p = log_f32_pair<false>(g - one);
    const F lq = p.hi + fused_madd(rho, rn, p.lo);
    const F res = lq * F(0.5f);
    return xsimd::select(tiny, x, res | (x & F(-0.0f)));
}

// The kernels above with their special lanes, by a branch on the batches that hold one
// (ok: the lanes the kernel computes).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> default_nan_f32() noexcept {
    return from_bits<float, A>(log_consts<float>::neg_nan);
}
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log1p_f32_pair_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F inf(std::numeric_limits<float>::infinity());
    const F res = log1p_f32_lanes(x);
    if (xsimd::all((x > F(-1.0f)) & (x < inf))) return res;
    F out = xsimd::select(x < F(-1.0f), default_nan_f32<A>(), res);  // -inf too
    out = xsimd::select(x == F(-1.0f), -inf, out);
    out = xsimd::select(x == inf, inf, out);
    return xsimd::select(xsimd::isnan(x), x + x, out);
}
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asinh_f32_pair_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F res = asinh_f32_lanes(x);
    const auto ok = xsimd::abs(x) < F(std::numeric_limits<float>::infinity());
    return xsimd::all(ok) ? res : xsimd::select(ok, res, x + x);  // +-inf -> x, NaN quieted
}
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> acosh_f32_pair_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F inf(std::numeric_limits<float>::infinity());
    const F res = acosh_f32_lanes(x);
    if (xsimd::all((x > F(1.0f)) & (x < inf))) return res;
    F out = xsimd::select(x < F(1.0f), default_nan_f32<A>(), res);  // -inf too
    out = xsimd::select(x == F(1.0f), F(0.0f), out);
    out = xsimd::select(x == inf, inf, out);
    return xsimd::select(xsimd::isnan(x), x + x, out);
}
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atanh_f32_pair_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F res = atanh_f32_lanes(x);
    const F a = xsimd::abs(x);
    if (xsimd::all(a < F(1.0f))) return res;
    F out = xsimd::select(a > F(1.0f), default_nan_f32<A>(), res);  // +-inf too
    out = xsimd::select(a == F(1.0f), xsimd::copysign(F(std::numeric_limits<float>::infinity()), x),
                        out);
    return xsimd::select(xsimd::isnan(x), x + x, out);
}
#endif  // NUMFUSE_LOG_F32_PAIR

}  // namespace detail

// log1p(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log1p_kernel(
    const xsimd::batch<double, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::log1p_f64_avx512(x);
#endif
    using B = xsimd::batch<double, A>;
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<A>) return B(detail::log1p_f64_avx2(x));
#endif
    const auto valid = (x > B(-1.0)) & (x < detail::inf_of<A>());
    const dd::pair<A> u = dd::two_sum(B(1.0), xsimd::select(valid, x, B(0.0)));
    const dd::pair<A> l = detail::log_pair(detail::log_core(u.hi, u.lo));
    return detail::log1p_specials(x, l.hi + l.lo);
}

namespace detail {

// log2 / log10 through the pair core above (SSE2, AVX2, NEON): E + lm / ln2,
// E log10(2) + lm / ln10 in pair arithmetic, special values included.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log2_generic(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const auto p = log_core_any(x);
    const dd::pair<A> t =
        dd::mul(p.lm, dd::pair<A>{B(0x1.71547652b82fep+0), B(0x1.777d0ffda0d24p-56)});
    // |t| < 1/2 <= |E| unless E = 0: E + t.hi is an exact fast two-sum.
    const dd::pair<A> r = dd::fast_two_sum(p.e, t.hi);
    return log_specials(x, r.hi + (r.lo + t.lo));
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log10_generic(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const auto p = log_core_any(x);
    const dd::pair<A> t =
        dd::mul(p.lm, dd::pair<A>{B(0x1.bcb7b1526e50ep-2), B(0x1.95355baaafad3p-57)});
    // E log10(2) as a pair: log10(2) = 0x1.34413509f79ffp-2 - 0x1.9dc1da994fd21p-59.
    const dd::pair<A> el = dd::two_prod(p.e, B(0x1.34413509f79ffp-2));
    const dd::pair<A> e10{el.hi, dd::fmadd(p.e, B(-0x1.9dc1da994fd21p-59), el.lo)};
    // |t| <= 0.151 < log10(2) <= |E log10(2)| unless E = 0: an exact fast two-sum.
    const dd::pair<A> r = dd::fast_two_sum(e10.hi, t.hi);
    return log_specials(x, r.hi + (r.lo + (e10.lo + t.lo)));
}

}  // namespace detail

// Split forms of log2 / log10 (float32 and float64 lanes) for the ufunc loops, as
// log_kernel_nofix / log_fix (log.hpp): log_base_nofix<Base>(x) may leave garbage where
// log_base_special(x) is true, and log_scaled_fix<Base>(x, log_base_nofix<Base>(x)) is the
// kernel, bit for bit. AVX-512: garbage for x <= 0, +inf, NaN, which the fixup repairs.
// AVX2+FMA: the compute half alone, without the test for special lanes. float64 also without
// the subnormal scaling (garbage for x <= 0, subnormal x, +inf, NaN: on positive normal lanes
// the scaling's blend keeps x and its exponent correction subtracts 0, so those lanes hold
// the kernel's bits), and log_scaled_fix recomputes a batch holding such a lane with the
// whole kernel; float32 (garbage for x <= 0, +inf, NaN) repairs those lanes by the kernel's
// selects. neon64 float32: as AVX2+FMA float32 (the same kernel, logbase_f32.hpp). Elsewhere
// the kernels handle every input themselves and log_scaled_fix is the identity.
template <int Base, class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> log_base_nofix(const xsimd::batch<T, A>& x) noexcept {
    static_assert(Base == 2 || Base == 10, "log2 or log10");
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        if constexpr (sizeof(T) == 8) {
            return detail::log_pair_scaled_pd(detail::log_f64_avx512_pair(x),
                                              Base == 2 ? detail::inv_ln2_hi : detail::inv_ln10_hi,
                                              Base == 2 ? detail::inv_ln2_lo : detail::inv_ln10_lo);
        } else {
            return detail::log_base_f32_avx512_core<Base>(x);
        }
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::is_avx2_fma<A> && sizeof(T) == 8) {
        return xsimd::batch<T, A>(detail::log_base_f64_avx2_core<Base, false>(x));
    } else
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
        if constexpr (detail::log_f32_pair_arch<A> && sizeof(T) == 4) {
        return detail::log_base_f32_pair_core<Base>(x);
    } else
#endif
    {
        if constexpr (sizeof(T) == 8) {
            return Base == 2 ? detail::log2_generic(x) : detail::log10_generic(x);
        } else if constexpr (Base == 2) {
            return log2_f32_kernel(x);
        } else {
            return log10_f32_kernel(x);
        }
    }
}

// log_base_nofix<Base>(x) for x = the batch at src (contiguous loops): the same bits. AVX2+FMA
// float64 reads the table rows from src's copy (log.hpp's LogRowsFromMemory, as
// log_kernel_nofix_at).
template <int Base, class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> log_base_nofix_at(const xsimd::batch<T, A>& x,
                                                           [[maybe_unused]] const T* src) noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<A> && sizeof(T) == 8) {
        return xsimd::batch<T, A>(
            detail::log_base_f64_avx2_core<Base, false>(x, detail::LogRowsFromMemory{src}));
    } else
#endif
    {
        return log_base_nofix<Base>(x);
    }
}

// The lanes log_base_nofix may leave wrong, plus every lane that raises (x <= 0): AVX-512
// log_special (x <= 0, +inf, NaN); AVX2+FMA float64 not min normal <= x < inf (x <= 0,
// subnormal x, +inf, NaN), AVX2+FMA and neon64 float32 not 0 < x < inf; elsewhere not x > 0
// (x <= 0, NaN: the loops' flags and NaN policy).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<T, A> log_base_special(
    const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        return log_special(x);
    } else
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
        if constexpr (detail::log_f32_pair_arch<A> && (sizeof(T) == 4 || !detail::is_neon64<A>)) {
        const auto low = sizeof(T) == 8 ? x >= B(std::numeric_limits<T>::min()) : x > B(T(0));
        return ~(low & (x < B(std::numeric_limits<T>::infinity())));
    } else
#endif
    {
        return ~(x > B(T(0)));
    }
}

template <int Base, class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> log_scaled_fix(const xsimd::batch<T, A>& x,
                                                        const xsimd::batch<T, A>& y) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        return detail::log_scaled_fix_avx512(x, y);
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::is_avx2_fma<A> && sizeof(T) == 8) {
        if (!xsimd::any(log_base_special(x))) return y;
        return xsimd::batch<T, A>(detail::log_base_f64_avx2<Base>(x));
    } else
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
        if constexpr (detail::log_f32_pair_arch<A> && sizeof(T) == 4) {
        if (!xsimd::any(log_base_special(x))) return y;
        return detail::log_base_f32_special_values(x, y);
    } else
#endif
    {
        (void)x;
        return y;
    }
}

// The deferred contiguous loop's test for log2 / log10 (LogScaledOp's screen): acc =
// log_base_screen_init<T, A>(), acc = log_base_screen(acc, x) per batch, then
// log_base_screened(acc) is true iff log_base_special(x) held in a lane of some batch.
// AVX2+FMA: x is ordinary iff the high word of bits(x) lies in [0x00100000, 0x7ff00000)
// (float64, min normal <= x < inf: log.hpp's log_screen, the odd words) or bits(x) in
// [1, 0x7f800000) (float32, 0 < x < inf: every word), as unsigned integers, so an unsigned
// minimum and maximum (vpminud, vpmaxud) over the batches decide it once at the end: two
// instructions a batch on x's register. Elsewhere the or of log_base_special.
namespace detail {
#if defined(__AVX2__) && defined(__FMA__)
struct LogBaseScreenF32Avx2 {
    __m256i min, max;  // unsigned minimum / maximum of bits(x)
};
#endif
}  // namespace detail
template <class T, class A>
NUMFUSE_ALWAYS_INLINE auto log_base_screen_init() noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<A> && sizeof(T) == 8) {
        return log_screen_init<T, A>();
    } else if constexpr (detail::is_avx2_fma<A>) {
        return detail::LogBaseScreenF32Avx2{_mm256_set1_epi32(-1), _mm256_setzero_si256()};
    } else
#endif
    {
        return xsimd::batch_bool<T, A>(false);
    }
}
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<T, A> log_base_screen(
    const xsimd::batch_bool<T, A>& acc, const xsimd::batch<T, A>& x) noexcept {
    return acc | log_base_special(x);
}
template <class T, class A>
inline bool log_base_screened(const xsimd::batch_bool<T, A>& acc) noexcept {
    return xsimd::any(acc);
}
#if defined(__AVX2__) && defined(__FMA__)
template <class A>
NUMFUSE_ALWAYS_INLINE detail::LogScreenF64Avx2 log_base_screen(
    const detail::LogScreenF64Avx2& acc, const xsimd::batch<double, A>& x) noexcept {
    return log_screen(acc, x);
}
inline bool log_base_screened(const detail::LogScreenF64Avx2& acc) noexcept {
    return log_screened(acc);
}
template <class A>
NUMFUSE_ALWAYS_INLINE detail::LogBaseScreenF32Avx2 log_base_screen(
    const detail::LogBaseScreenF32Avx2& acc, const xsimd::batch<float, A>& x) noexcept {
    const __m256i bits = _mm256_castps_si256(x);
    return {_mm256_min_epu32(acc.min, bits), _mm256_max_epu32(acc.max, bits)};
}
inline bool log_base_screened(const detail::LogBaseScreenF32Avx2& acc) noexcept {
    alignas(32) std::uint32_t lo[8], hi[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lo), acc.min);
    _mm256_store_si256(reinterpret_cast<__m256i*>(hi), acc.max);
    bool outside = false;
    for (int j = 0; j < 8; ++j) outside |= lo[j] == 0u || hi[j] >= 0x7f800000u;
    return outside;
}
#endif

// log2(x), f64 lanes. Max error <= 1 ULP; exact at powers of two.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log2_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    return log_scaled_fix<2>(x, log_base_nofix<2>(x));
}

// log10(x), f64 lanes. Max error <= 1 ULP; exact at powers of ten.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> log10_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    return log_scaled_fix<10>(x, log_base_nofix<10>(x));
}

// asinh(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> asinh_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return B(detail::asinh_f64_avx512(x));
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<A>) return B(detail::asinh_f64_avx2(x));
#endif
    const B a = xsimd::abs(x);
    const auto huge = a > B(0x1.0p28);
    // Clamped below too: lanes under 2^-27 return x, and a^2 of a tiny or subnormal a
    // would take a microcode assist (subnormal operand or result) per batch.
    const B am = xsimd::min(xsimd::max(a, B(0x1.0p-28)), B(0x1.0p28));
    const dd::pair<A> q = dd::add(dd::two_prod(am, am), B(1.0));
    const dd::pair<A> w = dd::add(dd::sqrt(q), am);
    dd::pair<A> l = detail::log_pair(detail::log_core(w.hi, w.lo));
    B res = l.hi + l.lo;
    if (xsimd::any(huge)) {
        auto p = detail::log_core(xsimd::select(huge, a, B(1.0)));
        p.e = p.e + B(1.0);
        l = detail::log_pair(p);
        res = xsimd::select(huge, l.hi + l.lo, res);
    }
    return detail::asinh_specials(x, a, xsimd::copysign(res, x));
}

// acosh(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> acosh_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return B(detail::acosh_f64_avx512(x));
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<A>) return B(detail::acosh_f64_avx2(x));
#endif
    const auto huge = x > B(0x1.0p28);
    const B xm = xsimd::min(xsimd::max(x, B(1.0)), B(0x1.0p28));
    const dd::pair<A> q = dd::add(dd::two_prod(xm, xm), B(-1.0));
    const dd::pair<A> sq = dd::sqrt(dd::pair<A>{xsimd::max(q.hi, B(0x1.0p-60)), q.lo});
    const dd::pair<A> w = dd::add(sq, xm);
    dd::pair<A> l = detail::log_pair(detail::log_core(w.hi, w.lo));
    B res = l.hi + l.lo;
    if (xsimd::any(huge)) {
        auto p = detail::log_core(xsimd::select(huge & (x < detail::inf_of<A>()), x, B(1.0)));
        p.e = p.e + B(1.0);
        l = detail::log_pair(p);
        res = xsimd::select(huge, l.hi + l.lo, res);
    }
    return detail::acosh_specials(x, res);
}

namespace detail {
// acosh(x) for float32 values held in f64 lanes (the levels without AVX-512; see the
// contract above).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> acosh_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // y = x + sqrt(x^2 - 1) with x^2 - 1 = d (2 + d), d = x - 1 (exact below 2^53; above,
    // its rounding moves the result by ~2^-52 of ln(2x) > 37): y in [1, 2^130) for float32
    // x >= 1, one rounding off its value.
    const B d = x - B(1.0);
    const B y = x + square_root(dd::fmadd(d, d, d + d));
    // log y = E ln2 + log m, y = 2^E m with m in [1/sqrt2, sqrt2) from the bits (E >= 0 and
    // log m >= -ln2/2: the sum cancels at most one bit), log m = 2s + s z P(z).
    const log_reduced<A> p = log_reduce_normal(y);
    const B s = p.f / (B(2.0) + p.f);
    const B lm = dd::fmadd(s, log_atanh_tail(s * s), s + s);
    B res = dd::fmadd(p.e, B(0x1.62e42fefa39efp-1), lm);
    res = xsimd::select(x == inf_of<A>(), x, res);
    res = xsimd::select(x < B(1.0), nan_of<A>(), res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}
}  // namespace detail

// atanh(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atanh_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return B(detail::atanh_f64_avx512(x));
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<A>) return B(detail::atanh_f64_avx2(x));
#endif
    const B a = xsimd::abs(x);
    // |x| >= 1 lanes get a garbage-free placeholder (0.75); lanes under 2^-27 return x and
    // are computed at 2^-28 (a subnormal |x| in the division and the log tail would take
    // microcode assists).
    const B ac = xsimd::select(a < B(1.0), xsimd::max(a, B(0x1.0p-28)), B(0.75));
    const dd::pair<A> num = dd::two_sum(B(1.0), ac);
    const dd::pair<A> den = dd::two_sum(B(1.0), -ac);
    const dd::pair<A> r = dd::div(num, den);
    const dd::pair<A> l = detail::log_pair(detail::log_core(r.hi, r.lo));
    return detail::atanh_specials(x, a, B(0.5) * (l.hi + l.lo));
}

// log1p(x), float32 lanes (the float32 ufunc and evaluate), within 1 ULP: on AVX-512 and
// AVX2+FMA float32 lanes in float32 arithmetic (detail::log1p_f32_avx512 / _avx2_kernel);
// elsewhere the lanes widened to float64 (xsimd's log1p, 2-3 float64 ULP, whose log1p(-0) is
// +0: -0 kept) and rounded once.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log1p_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::log1p_f32_avx512(x);
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
    if constexpr (detail::log_f32_pair_arch<A>) return detail::log1p_f32_pair_kernel(x);
#endif
    using D = xsimd::batch<double, A>;
    const auto log1p_keeping_minus_zero = [](const D& a) {
        return xsimd::select(a == D(0.0), a, xsimd::log1p(a));
    };
    D lo, hi;
    detail::widen(x, lo, hi);
    return detail::narrow(log1p_keeping_minus_zero(lo), log1p_keeping_minus_zero(hi));
}

// asinh(x), acosh(x), atanh(x), float32 lanes (the float32 ufuncs and evaluate): on
// AVX-512 float32 lanes in float32 arithmetic (kernels/logpair_avx512.hpp), on AVX2+FMA too
// (detail::asinh_f32_avx2_kernel etc. above); elsewhere the
// lanes widened to float64 (xsimd's asinh / atanh, 2-3 float64 ULP, far below a float32
// half-ulp; acosh_f32_in_f64) and rounded once.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> asinh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::asinh_f32_avx512(x);
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
    if constexpr (detail::log_f32_pair_arch<A>) return detail::asinh_f32_pair_kernel(x);
#endif
    xsimd::batch<double, A> lo, hi;
    detail::widen(x, lo, hi);
    return detail::narrow(xsimd::asinh(lo), xsimd::asinh(hi));
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> acosh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::acosh_f32_avx512(x);
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
    if constexpr (detail::log_f32_pair_arch<A>) return detail::acosh_f32_pair_kernel(x);
#endif
    xsimd::batch<double, A> lo, hi;
    detail::widen(x, lo, hi);
    return detail::narrow(detail::acosh_f32_in_f64(lo), detail::acosh_f32_in_f64(hi));
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> atanh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::atanh_f32_avx512(x);
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
    if constexpr (detail::log_f32_pair_arch<A>) return detail::atanh_f32_pair_kernel(x);
#endif
    xsimd::batch<double, A> lo, hi;
    detail::widen(x, lo, hi);
    return detail::narrow(xsimd::atanh(lo), xsimd::atanh(hi));
}

// Split forms of acosh and atanh (float32 and float64 lanes) for the ufunc loops, as
// log_base_nofix / log_scaled_fix: acosh_nofix(x) may leave garbage where x <= 1 or NaN,
// atanh_nofix(x) where |x| >= 1 or NaN (AVX-512: the special-value fixup is left out), and
// acosh_fix(x, acosh_nofix(x)) / atanh_fix(x, atanh_nofix(x)) are the kernels above, bit for
// bit (the fixes may be applied to any lane). Elsewhere the nofix forms are the kernels and
// the fixes the identity. (acosh float64 keeps its kernel whole: no split.)
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> acosh_nofix(const xsimd::batch<T, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A> && sizeof(T) == 4) return detail::acosh_f32_avx512_nofix(x);
#endif
    if constexpr (sizeof(T) == 4) {
        return acosh_f32_kernel(x);
    } else {
        return acosh_kernel(x);
    }
}
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> acosh_fix(const xsimd::batch<T, A>& x,
                                                   const xsimd::batch<T, A>& y) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A> && sizeof(T) == 4) return detail::acosh_f32_avx512_fix(x, y);
#endif
    (void)x;
    return y;
}
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> atanh_nofix(const xsimd::batch<T, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        if constexpr (sizeof(T) == 4) {
            return detail::atanh_f32_avx512_nofix(x);
        } else {
            return detail::atanh_f64_avx512_nofix(x);
        }
    }
#endif
    if constexpr (sizeof(T) == 4) {
        return atanh_f32_kernel(x);
    } else {
        return atanh_kernel(x);
    }
}
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> atanh_fix(const xsimd::batch<T, A>& x,
                                                   const xsimd::batch<T, A>& y) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        if constexpr (sizeof(T) == 4) {
            return detail::atanh_f32_avx512_fix(x, y);
        } else {
            return detail::atanh_f64_avx512_fix(x, y);
        }
    }
#endif
    (void)x;
    return y;
}

}  // namespace numfuse::kernels
