// power(x, y) = x**y on AVX2+FMA float64 lanes (the avx2_fma level; AVX-512 keeps
// power_avx512.hpp's kernel, SSE2 and neon64 power.hpp's power_kernel).
//
// Contract (as power.hpp's power_kernel)
//   power_f64_avx2(x, y): x**y per float64 lane within 1 ULP of the correctly rounded result
//   (bound below: 0.67 ULP for normal results; tests/test_power.py, tests/test_power_ufunc.py
//   and the accuracy table measure it against mpmath), C99's special values bit for bit
//   (power.hpp's pow_fixup); subnormal results rounded twice (within 1 ULP). A lane's bits
//   depend on its own x and y only. The conditions NumPy's power raises (PowConditions)
//   when asked.
//
// Method: power_avx512.hpp's plan (log|x| as a pair, y log|x| from an exact product, a table
//   exp of the pair, a common batch and an out-of-line rare one) with the AVX2 tables.
//   log|x| = hi + lo to ~2^-66.5 relative: log.hpp's AVX2+FMA cell reduction
//   (log_f64_avx2_cell: 128 cells on the bits of x, the rows {invc, -log(invc) as T_hi +
//   T_lo} by four row loads and a transpose, t = z invc - 1 exact, |t| <= 0.00528 =
//   2^-7.56). log|x| = A + t - t^2/2 + t^3 R(t) + (k ln2_lo + T_lo), A = k ln2_hi + T_hi
//   exact (T_hi on the 2^-42 grid): h1 = A + t and h2 = h1 + q (q + qe = -t^2/2 exactly,
//   one product and one FMA) as exact fast two-sums (|A| >= |t| or A = 0, log.hpp; |h1| >
//   t^2/2), their errors, qe, k ln2_lo + T_lo and t^3 R(t) summed into lo; hi + lo
//   renormalized by a fast two-sum (|lo| <= ~t^3/3 < |h2| 2^-15), so that y lo stays below
//   ulp(y hi). R is log1p's Taylor tail 1/3 - t/4 + ... + t^6/9 (Estrin). The cell of 1 is
//   z in [0.99805, 1.0039) (invc = 1, A = 0, |log x| >= 0.99 |t|, |t|^3/3 <= 2^-25.5 |t|);
//   every other cell has |t|^3/3 <= 2^-16.3 |log x| (|t| <= 0.00528 and |log x| >= 2^-8
//   above 1; below 1 the cells are half as wide, |t| <= 0.0036 and |log x| >= 2^-9).
//   Relative to log x then: R's truncation t^7/10 <= 2^-56.2 times t^3: below 2^-70.9; R's
//   own roundings (~2^-54.6 of t^3): 2^-69.3; the three roundings of p = t^2 t R (2^-51.4
//   of p): 2^-67.7; the two additions of lo at p's scale (2^-53 of |p| each: k ln2_lo +
//   T_lo is below 2^-31 |log x|, e1, e2 and qe below 2^-52 |log x|): 2^-68.3; in all below
//   2^-66.5 |log x|.
//   y log|x| = th + tl: th = RN(y hi), tl = RN(y lo + (y hi - th)) (an exact product, the
//   FMA's rounding 2^-53 |tl| <= 2^-95). The error of t = th + tl against y log|x| is then
//   below |t| 2^-66.5 <= 2^-57 (|t| <= 746 where the result is neither 0 nor inf).
//   e^(th + tl): exp.hpp's AVX2+FMA reduction (exp_f64_t8_reduce: th = kd ln2/8 + r1, r1
//   exact, c = tail_j - kd C_lo, 2^(j/8) from in-register 32-bit word tables by vpermd) with
//   tl added to c (|c + tl| < 2^-41: r = RN(r1 + (c + tl)) keeps |r| <= ln2/16 (1 + 2^-12),
//   inside Q's fit; the extra rounding of c + tl is below 2^-94), then exp_f64_t8_parts_of's
//   polynomial and S = 2^k T_j, rounded once by an FMA: exp.hpp proves 2^-56.4 relative of
//   S before that rounding. With t's 2^-57: below 2^-55.6 of S, and the result's ulp is at
//   least S 2^-53 (exp.hpp's argument): within 0.5 + 2^-2.6 < 0.67 ULP.
//   The common batch (every |x| normal and finite, |th| <= 708: normal results) takes no
//   test beyond one mask, and power.hpp's pow_sign_rules (pow_fixup's sign and invalid rules)
//   where an x is negative;
//   any other batch (power_f64_avx2_rare, out of line) recomputes the log with subnormal
//   |x| scaled (log.hpp) where it has one, clamps th to [-746, 710] (e^-746 rounds to 0,
//   e^710 overflows: tl dropped there), scales by exp.hpp's scale_wide (overflow to inf,
//   subnormal results from the rounded 2^(j/8) (1 + p): a second rounding) and applies
//   pow_fixup, unless every x is positive, normal and finite and every y finite.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstring>

#include "kernels/common.hpp"
#include "kernels/exp.hpp"
#include "kernels/log.hpp"
#include "kernels/power.hpp"
#include "kernels/power_avx512.hpp"

namespace numfuse::kernels {
namespace detail {

#if defined(__AVX2__) && defined(__FMA__)

// The level of power_f64_avx2: AVX2+FMA below AVX-512.
template <class A>
inline constexpr bool power_f64_avx2_arch = is_avx2_fma<A>;

// log|x| = hi + lo, |lo| <= ulp(hi), for positive finite normal x (Subnormals: subnormal x
// too); other lanes garbage (method above).
struct PowLogPd4 {
    __m256d hi, lo;
};
template <bool Subnormals>
NUMFUSE_ALWAYS_INLINE PowLogPd4 pow_log_f64_avx2(__m256d x) noexcept {
    const log_pd4_cell cell = log_f64_avx2_cell<Subnormals>(x);
    const __m256d k = cell.k, t = cell.t;
    const __m256d a = _mm256_fmadd_pd(k, _mm256_set1_pd(log_consts<double>::ln2_hi), cell.log_hi);
    const __m256d h1 = _mm256_add_pd(a, t);
    const __m256d e1 = _mm256_add_pd(_mm256_sub_pd(a, h1), t);
    const __m256d ht = _mm256_mul_pd(t, _mm256_set1_pd(-0.5));
    const __m256d q = _mm256_mul_pd(ht, t);
    const __m256d qe = _mm256_fmsub_pd(ht, t, q);  // -t^2/2 = q + qe exactly
    const __m256d h2 = _mm256_add_pd(h1, q);
    const __m256d e2 = _mm256_add_pd(_mm256_sub_pd(h1, h2), q);
    // R(t) = 1/3 - t/4 + t^2/5 - t^3/6 + t^4/7 - t^5/8 + t^6/9 (Estrin)
    const auto c = [](double v) NUMFUSE_ALWAYS_INLINE_LAMBDA { return _mm256_set1_pd(v); };
    const __m256d t2 = _mm256_mul_pd(t, t);
    const __m256d t4 = _mm256_mul_pd(t2, t2);
    const __m256d r01 = _mm256_fmadd_pd(c(-0.25), t, c(1.0 / 3.0));
    const __m256d r23 = _mm256_fmadd_pd(c(-1.0 / 6.0), t, c(0.2));
    const __m256d r45 = _mm256_fmadd_pd(c(-0.125), t, c(1.0 / 7.0));
    const __m256d r =
        _mm256_fmadd_pd(_mm256_fmadd_pd(c(1.0 / 9.0), t2, r45), t4, _mm256_fmadd_pd(r23, t2, r01));
    const __m256d p = _mm256_mul_pd(_mm256_mul_pd(t2, t), r);
    const __m256d kl = _mm256_fmadd_pd(k, _mm256_set1_pd(log_consts<double>::ln2_lo), cell.log_lo);
    const __m256d lo =
        _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(e1, e2), qe), _mm256_add_pd(kl, p));
    const __m256d hi = _mm256_add_pd(h2, lo);
    return {hi, _mm256_add_pd(_mm256_sub_pd(h2, hi), lo)};
}

// y log|x| = th + tl (an exact product plus y lo).
struct PowTPd4 {
    __m256d hi, lo;
};
NUMFUSE_ALWAYS_INLINE PowTPd4 pow_t_f64_avx2(__m256d y, const PowLogPd4& l) noexcept {
    const __m256d th = _mm256_mul_pd(y, l.hi);
    return {th, _mm256_fmadd_pd(y, l.lo, _mm256_fmsub_pd(y, l.hi, th))};
}

// exp.hpp's AVX2+FMA reduction of th with tl added to its c, and the polynomial.
NUMFUSE_ALWAYS_INLINE ExpT8Parts pow_exp_parts_f64_avx2(__m256d th, __m256d tl) noexcept {
    ExpT8Reduced e = exp_f64_t8_reduce(th);
    e.r = _mm256_add_pd(e.r1, _mm256_add_pd(e.c, tl));
    return exp_f64_t8_parts_of(e);
}

// x**y for 4 lanes with a lane outside the common batch (method above). Out of line: the
// common path keeps its registers (arguments by value: in registers).
template <class A, bool Conditions>
[[gnu::noinline]] __m256d power_f64_avx2_rare(__m256d x, __m256d y, PowTPd4 t,
                                              unsigned& conditions) noexcept {
    using B = xsimd::batch<double, A>;
    using C = exp_consts<double>;
    const __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    if (_mm256_movemask_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-1022), _CMP_LT_OQ)) != 0) {
        t = pow_t_f64_avx2(y, pow_log_f64_avx2<true>(ax));
    }
    // NaN th: max gives its second operand (-746), and pow_fixup decides the lane
    const __m256d thc = _mm256_min_pd(_mm256_max_pd(t.hi, _mm256_set1_pd(C::lo_clamp)),
                                      _mm256_set1_pd(C::hi_clamp));
    const __m256d tlc = _mm256_and_pd(_mm256_cmp_pd(t.hi, thc, _CMP_EQ_OQ), t.lo);
    const ExpT8Parts e = pow_exp_parts_f64_avx2(thc, tlc);
    // T_j's bits: t + j << 49 (j = z's low 3 bits); k = floor(kd / 8), exact (exp_f64_t8)
    const __m256d tj = _mm256_castsi256_pd(
        _mm256_add_epi64(e.t, _mm256_slli_epi64(_mm256_and_si256(e.z, _mm256_set1_epi64x(7)), 49)));
    const B v(_mm256_fmadd_pd(tj, e.p, tj));
    const B kd = B(_mm256_castsi256_pd(e.z)) - B(C::shifter);
    const __m256d wide = scale_wide(v, xsimd::floor(kd * B(0.125)));
    // Every x positive, normal and finite and every y finite (th alone out of range: results
    // 0, inf, subnormal or normal): no special value and no sign rule (pow_fixup would
    // return wide as it is; x = 1 gives th = 0 and exactly 1), and of the conditions only
    // overflow (an inf) and underflow (below the smallest normal, 0 included) can arise.
    const __m256d dmax = _mm256_set1_pd(0x1.fffffffffffffp1023);
    const __m256d plain =
        _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(x, _mm256_set1_pd(0x1p-1022), _CMP_GE_OQ),
                                    _mm256_cmp_pd(x, dmax, _CMP_LE_OQ)),
                      _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), y), dmax, _CMP_LE_OQ));
    if (_mm256_movemask_pd(plain) == 0xf) {
        if constexpr (Conditions) {
            if (_mm256_movemask_pd(_mm256_cmp_pd(wide, dmax, _CMP_GT_OQ)) != 0) {
                conditions |= pow_overflow;
            }
            if (_mm256_movemask_pd(_mm256_cmp_pd(wide, _mm256_set1_pd(0x1p-1022), _CMP_LT_OQ)) !=
                0) {
                conditions |= pow_underflow;
            }
        }
        return wide;
    }
    const B res = pow_fixup<A>(B(x), B(y), B(wide));
    if constexpr (Conditions) conditions |= pow_conditions<double, A>(B(x), B(y), res);
    return res;
}

// x**y for 4 float64 lanes (contract and method at the top).
template <class A, bool Conditions>
NUMFUSE_ALWAYS_INLINE __m256d power_f64_avx2(__m256d x, __m256d y, unsigned& conditions) noexcept {
    using B = xsimd::batch<double, A>;
    const __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    const PowTPd4 t = pow_t_f64_avx2(y, pow_log_f64_avx2<false>(ax));
    // |x| normal and finite (not NaN), |th| <= 708 (not NaN): normal results
    const __m256d ok = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-1022), _CMP_GE_OQ),
                      _mm256_cmp_pd(ax, _mm256_set1_pd(0x1.fffffffffffffp1023), _CMP_LE_OQ)),
        _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), t.hi), _mm256_set1_pd(708.0),
                      _CMP_LE_OQ));
    if (_mm256_movemask_pd(ok) != 0xf)
        return power_f64_avx2_rare<A, Conditions>(x, y, t, conditions);
    const ExpT8Parts e = pow_exp_parts_f64_avx2(t.hi, t.lo);
    const __m256d s = exp_f64_t8_scale(e);
    const __m256d res = _mm256_fmadd_pd(s, e.p, s);
    if (_mm256_movemask_pd(x) == 0) return res;  // every x positive: nothing to report
    // a negative x: its sign rules (pow_fixup's only ones here); of the conditions only
    // invalid can arise
    const pow_signed<A> sr = pow_sign_rules<A>(B(x), B(y), B(res));
    if constexpr (Conditions) {
        if (xsimd::any(sr.invalid)) conditions |= pow_invalid;
    }
    return sr.res;
}

// out[k] = x[k]**y[k], k < n (out may be x or y); the conditions when asked, else 0. The tail
// padded with 1 ** 1 (no condition).
template <class A, bool Conditions>
inline unsigned power_f64_avx2_array(double* out, const double* x, const double* y,
                                     std::size_t n) noexcept {
    unsigned conditions = 0;
    std::size_t k = 0;
    for (; k + 4 <= n; k += 4) {
        _mm256_storeu_pd(out + k, power_f64_avx2<A, Conditions>(
                                      _mm256_loadu_pd(x + k), _mm256_loadu_pd(y + k), conditions));
    }
    if (k < n) {
        alignas(32) double xa[4] = {1.0, 1.0, 1.0, 1.0}, ya[4] = {1.0, 1.0, 1.0, 1.0}, oa[4];
        std::memcpy(xa, x + k, (n - k) * sizeof(double));
        std::memcpy(ya, y + k, (n - k) * sizeof(double));
        _mm256_store_pd(
            oa, power_f64_avx2<A, Conditions>(_mm256_load_pd(xa), _mm256_load_pd(ya), conditions));
        std::memcpy(out + k, oa, (n - k) * sizeof(double));
    }
    return conditions;
}

#endif  // __AVX2__ && __FMA__

}  // namespace detail
}  // namespace numfuse::kernels
