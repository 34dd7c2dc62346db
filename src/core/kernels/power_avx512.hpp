// power(x, y) = x**y on AVX-512: float64 lanes, and float32 values in float64 lanes.
//
// Contract (as power.hpp's power_kernel, which the other levels run)
//   power_f64_avx512(x, y): x**y per float64 lane within 1 ULP of the correctly rounded
//   result (tests/test_power.py, tests/test_power_ufunc.py and the accuracy table measure
//   it against mpmath), C99's special values bit for bit (power.hpp's pow_fixup).
//   power_f32_avx512(x, y): x**y for 16 float32 lanes, within 0.5 + 2^-10 float32 ULP
//   (float64 arithmetic, one rounding to float32 at the end), special values as the float64
//   kernel's rounded to float32.
//   Both report the conditions NumPy's power raises (PowConditions) when asked.
//
// Method, float64
//   log|x| = hi + lo to ~2^-66 relative: the AVX-512 log's cell reduction (log.hpp,
//   log_f64_avx512_pair: x = z 2^k by getmant / getexp and integer operations, 16 cells,
//   t = z invc - 1 exact, -log(invc) as a pair on the 2^-42 grid, all from in-register
//   tables); log|x| = (k ln2_hi - log(invc)) + t - t^2/2 + t^3/3 + t^4 R1(t) + (k ln2_lo +
//   ...): the first four terms summed as exact fast two-sums (their errors join lo), -t^2/2
//   an exact product, t^3/3 a pair from exact products, R1 of degree 8 (tools/pow_remez.py
//   pow64_log's R(t) = 1/3 + t R1(t), degree 9: weighted error 2^-65.0 with R's leading
//   coefficient rounded, which the pair avoids). Measured: 2^-66.7 relative at worst next
//   to the cell of 1 (|t| = 0.034), so below 2^-57 of the result where |y log x| <= 746.
//   y log|x| = th + tl (an exact product plus y lo). e^(th + tl): th = kd ln2/16 + r1
//   (exp.hpp's AVX-512 reduction, r1 exact), r = r1 + (tl - kd ln2_lo/16) as rh + d (a
//   fast two-sum), e^r = 1 + p by exp.hpp's degree-5 fit at rh plus d to first order,
//   2^(j/16) (1 + p) from the 16-entry tables, scaled by vscalefpd (rounded once). Max
//   measured 0.556 ULP for normal results (docs/accuracy.md, 1e6 pairs).
//   The common batch (every x positive and finite, |th| <= 708: normal results) takes no
//   test beyond one mask; any other batch takes power_f64_avx512_rare (clamped th, results
//   below 2^-1022 scaled without assists, then power.hpp's pow_fixup).
//
// Method, float32
//   A batch of 16 whose x are all positive, normal and finite and whose y are all finite
//   (one integer compare each) takes the fast path, any other the float64 kernel per half
//   (power_f32_avx512_rare). Each half of 8 is widened once (x and y); x = z 2^k with the
//   float64 log's cells on the bits of the widened x (integer operations, k by vcvtqq2pd);
//   log2 x = k + log2(c) + t P(t) (P of degree 6, tools/pow_remez.py pow32_log: weighted
//   error 2^-42.7), T = y log2 x (|T| clamped to 152 by one vrangepd), T = n + f with n
//   on the 1/16 grid (one shifter addition; its low 4 bits index exp.hpp's 2^(j/16) table)
//   and |f| <= 1/32, 2^T = 2^floor(n) 2^(j/16) (1 + f Q(f)) (Q of degree 3, pow32_exp:
//   2^-38.5) by vscalefpd (every result lies in [2^-152, 2^152]: a normal float64, no
//   assist), one conversion to float32 (which rounds subnormal and overflowing results
//   once). Error of the float64 value below 2^-35 relative: within 0.5 + 2^-10 float32 ULP.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>

#include "kernels/common.hpp"
#include "kernels/exp.hpp"
#include "kernels/log.hpp"
#include "kernels/power.hpp"

namespace numfuse::kernels {

// The conditions NumPy's power reports, as the bits of FpFlag (numfuse_core.hpp; checked
// there by a static_assert in arch/binary_loop.hpp): divide-by-zero for 0 ** y, y < 0;
// invalid for a finite x < 0 with a finite non-integral y; overflow for an infinite result
// of finite arguments (x != 0); underflow for a result below the smallest normal (an exact
// subnormal or zero included) of finite arguments, x != 0. NaN arguments raise nothing.
enum PowConditions : unsigned {
    pow_divide_by_zero = 1u,
    pow_overflow = 2u,
    pow_underflow = 4u,
    pow_invalid = 8u,
};

namespace detail {

// The conditions of one batch from its arguments and results (T = float or double).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE unsigned pow_conditions(const xsimd::batch<T, A>& x,
                                              const xsimd::batch<T, A>& y,
                                              const xsimd::batch<T, A>& r) noexcept {
    using B = xsimd::batch<T, A>;
    const B inf(std::numeric_limits<T>::infinity());
    const B ar = xsimd::abs(r);
    // The common batch, positive x, finite y and normal finite results, reports nothing.
    if (xsimd::all((x > B(T(0))) & (xsimd::abs(y) < inf) &
                   (ar >= B(std::numeric_limits<T>::min())) & (ar < inf))) {
        return 0;
    }
    const auto finite = (xsimd::abs(x) < inf) & (xsimd::abs(y) < inf);
    const auto nonzero = finite & (x != B(T(0)));
    unsigned c = 0;
    if (xsimd::any((x == B(T(0))) & (y < B(T(0))))) c |= pow_divide_by_zero;
    if (xsimd::any(finite & (x < B(T(0))) & (xsimd::trunc(y) != y))) c |= pow_invalid;
    if (xsimd::any(nonzero & (ar == inf))) c |= pow_overflow;
    if (xsimd::any(nonzero & (ar < B(std::numeric_limits<T>::min())))) c |= pow_underflow;
    return c;
}

#if defined(__AVX512F__)

// log|x| = hi + lo for finite nonzero x (subnormals included; other lanes garbage), |lo| a
// few ulps of hi at most (method above).
struct PowLogPd {
    __m512d hi, lo;
};
NUMFUSE_ALWAYS_INLINE PowLogPd pow_log_f64_avx512(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const log_cell_pd cell = log_cell_f64_avx512(
        _mm512_castpd_si512(_mm512_getmant_pd(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero)));
    const __m512d k = _mm512_sub_pd(_mm512_getexp_pd(x), _mm512_getexp_pd(cell.z));
    const __m512d invc = log_cell_entry(log_bits_invc, cell.idx);
    const __m512d ch = log_cell_entry(log_bits_hi, cell.idx);
    const __m512d cl = log_cell_entry(log_bits_lo, cell.idx);
    const __m512d t = _mm512_fmsub_pd(cell.z, invc, one);  // exact
    const __m512d a = _mm512_fmadd_pd(k, _mm512_set1_pd(0x1.62e42fefa38p-1), ch);  // exact
    // a + t, then - t^2/2, then t^3 R(t), each an exact fast two-sum: |a| >= |t| or a = 0
    // (the cells' choice of invc), and the partial sums stay above the next term (|log x|
    // >= 2^-6 outside the cell of 1, where a = 0 and the terms decrease).
    const __m512d h1 = _mm512_add_pd(a, t);
    const __m512d e1 = _mm512_add_pd(_mm512_sub_pd(a, h1), t);
    const __m512d ht = _mm512_mul_pd(t, _mm512_set1_pd(-0.5));
    const __m512d q = _mm512_mul_pd(ht, t);
    const __m512d qe = _mm512_fmsub_pd(ht, t, q);  // -t^2/2 = q + qe exactly
    const __m512d h2 = _mm512_add_pd(h1, q);
    const __m512d e2 = _mm512_add_pd(_mm512_sub_pd(h1, h2), q);
    // t^3 R(t), R(t) ~ (log1p(t) - t + t^2/2)/t^3 (tools/pow_remez.py pow64_log) = 1/3 +
    // t R1(t): t^3/3 as a pair u + ul (t^3 from exact products, 1/3 as a pair), added to the
    // chain; t^4 R1(t) (Estrin) joins lo. A plain t^3 R(t), rounded 3-4 times at 2^-16 of
    // log x, was 2^-62.6 relative next to the cell of 1: 1.1 ULP at |y log x| ~ 700.
    const __m512d t2 = _mm512_mul_pd(t, t);
    const __m512d t2l = _mm512_fmsub_pd(t, t, t2);
    const __m512d t3 = _mm512_mul_pd(t2, t);
    const __m512d t3l = _mm512_fmadd_pd(t2l, t, _mm512_fmsub_pd(t2, t, t3));
    const __m512d third = _mm512_set1_pd(0x1.5555555555555p-2);
    const __m512d u = _mm512_mul_pd(t3, third);
    const __m512d ul = _mm512_fmadd_pd(t3, _mm512_set1_pd(0x1.5555555555555p-56),  // 1/3 - RN(1/3)
                                       _mm512_fmadd_pd(t3l, third, _mm512_fmsub_pd(t3, third, u)));
    const __m512d t4 = _mm512_mul_pd(t2, t2);
    const __m512d c12 =
        _mm512_fmadd_pd(_mm512_set1_pd(0x1.99999999992c8p-3), t,  // 0.19999999999995154987
                        _mm512_set1_pd(-0x1.fffffffffffffp-3));  // -0.24999999999999997224
    const __m512d c34 =
        _mm512_fmadd_pd(_mm512_set1_pd(0x1.2492492b442a3p-3), t,  // 0.14285714305198835006
                        _mm512_set1_pd(-0x1.55555555564e8p-3));  // -0.16666666666677731889
    const __m512d c56 =
        _mm512_fmadd_pd(_mm512_set1_pd(0x1.c71c16f427f79p-4), t,  // 0.11111077276518512014
                        _mm512_set1_pd(-0x1.fffffff6be047p-4));  // -0.12499999986528208262
    const __m512d c78 =
        _mm512_fmadd_pd(_mm512_set1_pd(0x1.75730da0eb241p-4), t,  // 0.091174176441833246209
                        _mm512_set1_pd(-0x1.99998a01ff303p-4));  // -0.099999941914529030806
    const __m512d c14 = _mm512_fmadd_pd(c34, t2, c12);
    const __m512d c58 = _mm512_fmadd_pd(c78, t2, c56);
    const __m512d c59 = _mm512_fmadd_pd(_mm512_set1_pd(-0x1.560b00f260e2ap-4), t4,
                                        c58);  // -0.083506587694551243084
    const __m512d p = _mm512_mul_pd(t4, _mm512_fmadd_pd(c59, t4, c14));
    const __m512d h3 = _mm512_add_pd(h2, u);
    const __m512d e3 = _mm512_add_pd(_mm512_sub_pd(h2, h3), u);
    const __m512d kl = _mm512_fmadd_pd(k, _mm512_set1_pd(0x1.ef35793c7673p-45), cl);
    const __m512d lo = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(e1, e2), _mm512_add_pd(e3, qe)),
                                     _mm512_add_pd(_mm512_add_pd(ul, p), kl));
    return {h3, lo};
}

// e^(th + tl) for |th| <= 746, |tl| <= 2^-40 |th| (method above); tiny: the batch may hold
// results below 2^-1022 (scaled without vscalefpd's assist then).
NUMFUSE_ALWAYS_INLINE __m512d pow_exp_f64_avx512(__m512d th, __m512d tl, bool tiny) noexcept {
    const __m512d shifter = _mm512_set1_pd(0x1.8p52);
    const __m512d z = _mm512_fmadd_pd(th, _mm512_set1_pd(0x1.71547652b82fep+4), shifter);  // 16/ln2
    const __m512d kd = _mm512_sub_pd(z, shifter);  // 16k + j
    // th - kd C_hi exact (exp.hpp's reduction); r = r1 + c, c = tl - kd C_lo, as rh + d (a
    // fast two-sum; where |r1| < |c| both lie below 2^-40 and the sum's error is far below
    // the result's ulp).
    const __m512d r1 = _mm512_fnmadd_pd(kd, _mm512_set1_pd(0x1.62e42fefa39efp-5), th);
    const __m512d c = _mm512_fnmadd_pd(kd, _mm512_set1_pd(0x1.abc9e3b39803fp-60), tl);
    const __m512d rh = _mm512_add_pd(r1, c);
    const __m512d d = _mm512_add_pd(_mm512_sub_pd(r1, rh), c);
    ExpT16Pair t = exp_f64_avx512_t16_pair(z, rh);
    // e^(rh + d) = e^rh (1 + d): 2^(j/16) e^rh d joins the low part (d <= 2^-58)
    t.lo = _mm512_fmadd_pd(t.hi, d, t.lo);
    const __m512d yv = _mm512_add_pd(t.hi, t.lo);
    const __m512d s = _mm512_mul_pd(kd, _mm512_set1_pd(0.0625));  // floor(kd/16) = k
    return tiny ? scalef_no_assist_pd(yv, s) : _mm512_scalef_pd(yv, s);
}

// x**y for 8 float64 lanes with a lane that is not positive and finite, or whose |th| >
// 708 (results that overflow, are subnormal or zero): th clamped to [-746, 710] (e^-746
// rounds to 0, e^710 overflows), then the special values and signs (pow_fixup). Out of
// line: the common path keeps its registers.
template <class A, bool Conditions>
[[gnu::noinline]] __m512d power_f64_avx512_rare(__m512d x, __m512d y, __m512d th, __m512d tl,
                                                unsigned& conditions) noexcept {
    using B = xsimd::batch<double, A>;
    const __m512d thc =
        _mm512_min_pd(_mm512_max_pd(th, _mm512_set1_pd(-746.0)), _mm512_set1_pd(710.0));
    const __mmask8 kept = _mm512_cmp_pd_mask(th, thc, _CMP_EQ_OQ);
    const __m512d tlc = _mm512_maskz_mov_pd(kept, tl);
    const bool tiny = _mm512_cmp_pd_mask(thc, _mm512_set1_pd(-708.0), _CMP_LT_OQ) != 0;
    const B res = pow_fixup<A>(B(x), B(y), B(pow_exp_f64_avx512(thc, tlc, tiny)));
    if constexpr (Conditions) conditions |= pow_conditions<double, A>(B(x), B(y), res);
    return res;
}

// x**y for 8 float64 lanes (contract and method at the top).
template <class A, bool Conditions>
NUMFUSE_ALWAYS_INLINE __m512d power_f64_avx512(__m512d x, __m512d y,
                                               unsigned& conditions) noexcept {
    const PowLogPd l = pow_log_f64_avx512(x);
    const __m512d th = _mm512_mul_pd(y, l.hi);
    const __m512d tl = _mm512_fmadd_pd(y, l.lo, _mm512_fmsub_pd(y, l.hi, th));
    // x positive and finite: bits(x) - 1 below bits(max) unsigned; |th| <= 708 (NaN: no).
    // Such lanes raise no condition: their results are normal and finite.
    const __mmask8 xok =
        _mm512_cmplt_epu64_mask(_mm512_sub_epi64(_mm512_castpd_si512(x), _mm512_set1_epi64(1)),
                                _mm512_set1_epi64(0x7fefffffffffffff));
    const __mmask8 tok =
        _mm512_mask_cmp_pd_mask(xok, _mm512_abs_pd(th), _mm512_set1_pd(708.0), _CMP_LE_OQ);
    if (tok == 0xff) return pow_exp_f64_avx512(th, tl, false);
    return power_f64_avx512_rare<A, Conditions>(x, y, th, tl, conditions);
}

// out[k] = x[k]**y[k], k < n (out may be x or y); the conditions when asked, else 0.
template <class A, bool Conditions>
inline unsigned power_f64_avx512_array(double* out, const double* x, const double* y,
                                       std::size_t n) noexcept {
    unsigned conditions = 0;
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m512d r = power_f64_avx512<A, Conditions>(_mm512_loadu_pd(x + k),
                                                          _mm512_loadu_pd(y + k), conditions);
        _mm512_storeu_pd(out + k, r);
    }
    if (k < n) {
        // the tail padded with 1 ** 1 (no condition)
        const auto mask = static_cast<__mmask8>((1u << (n - k)) - 1u);
        const __m512d one = _mm512_set1_pd(1.0);
        const __m512d r =
            power_f64_avx512<A, Conditions>(_mm512_mask_loadu_pd(one, mask, x + k),
                                            _mm512_mask_loadu_pd(one, mask, y + k), conditions);
        _mm512_mask_storeu_pd(out + k, mask, r);
    }
    return conditions;
}

// -log2(invc) of log.hpp's cells (log_bits_invc), rounded to double.
alignas(64) inline constexpr double pow_log2_c[16] = {
    -0x1.3abb3faa02167p-1, -0x1.0c10500d63aa6p-1, -0x1.d6753e032ea0fp-2, -0x1.b47ebf73882a1p-2,
    -0x1.6e221cd9d0cdep-2, -0x1.24407ab0e073ap-2, -0x1.fbc16b902680ap-3, -0x1.acf5e2db4ec94p-3,
    -0x1.08c588cda79e4p-3, -0x1.663f6fac91316p-4, -0x1.6bad3758efd87p-5, 0x0.0p+0,
    0x1.7d60496cfbb4cp-4,  0x1.563dc29ffacb2p-3,  0x1.f5fd8a9063e35p-3,  0x1.4f6fbb2cec598p-2,
};

// 2^(y log2 x) for 8 lanes of float32 values (x positive, normal and finite, y finite)
// as float64, before the rounding to float32 (method above).
NUMFUSE_ALWAYS_INLINE __m512d pow_f32_half_avx512(__m256 xf, __m256 yf) noexcept {
    const __m512d x = _mm512_cvtps_pd(xf);
    const __m512d y = _mm512_cvtps_pd(yf);
    // x = z 2^k, z in [0.640625, 1.28125): log.hpp's cells, on the bits of x
    const log_cell_pd cell = log_cell_f64_avx512(_mm512_castpd_si512(x));
    const __m512d k = _mm512_cvtepi64_pd(_mm512_srai_epi64(cell.e_bits, 52));
    const __m512d invc = log_cell_entry(log_bits_invc, cell.idx);
    const __m512d l2c = log_cell_entry(pow_log2_c, cell.idx);
    const __m512d t = _mm512_fmsub_pd(cell.z, invc, _mm512_set1_pd(1.0));  // exact
    // P(t) ~ log2(1 + t)/t (tools/pow_remez.py pow32_log: weighted error 2^-42.7)
    __m512d p = _mm512_fmadd_pd(_mm512_set1_pd(0x1.a5eb1a57b08d4p-3), t,  // 0.2060148294459113183
                                _mm512_set1_pd(-0x1.ed3352b01136bp-3));  // -0.24082054710211350801
    p = _mm512_fmadd_pd(p, t, _mm512_set1_pd(0x1.2776f54183955p-2));  // 0.28853972637525276967
    p = _mm512_fmadd_pd(p, t, _mm512_set1_pd(-0x1.715467dbea396p-2));  // -0.36067354469064960565
    p = _mm512_fmadd_pd(p, t, _mm512_set1_pd(0x1.ec709dbb32738p-2));  // 0.48089834647236129328
    p = _mm512_fmadd_pd(p, t, _mm512_set1_pd(-0x1.71547652f7831p-1));  // -0.72134752047327854729
    p = _mm512_fmadd_pd(p, t, _mm512_set1_pd(0x1.71547652b836bp+0));  // 1.4426950408889875899
    const __m512d l = _mm512_fmadd_pd(t, p, _mm512_add_pd(k, l2c));
    // T = y log2 x, |T| clamped to 152 with its sign (2^-152 rounds to float32 0, 2^152 to inf)
    const __m512d tt = _mm512_range_pd(_mm512_mul_pd(y, l), _mm512_set1_pd(152.0), 2);
    // T = n + f, n = RN(T) on the 1/16 grid (the shifter's ulp), n's low 4 bits (j) in zz
    const __m512d shifter = _mm512_set1_pd(0x1.8p48);
    const __m512d zz = _mm512_add_pd(tt, shifter);
    const __m512d n = _mm512_sub_pd(zz, shifter);
    const __m512d f = _mm512_sub_pd(tt, n);  // exact, |f| <= 1/32
    const __m512d tab = _mm512_permutex2var_pd(
        _mm512_load_pd(exp_tab16_hi), _mm512_castpd_si512(zz), _mm512_load_pd(exp_tab16_hi + 8));
    // Q(f) ~ (2^f - 1)/f (tools/pow_remez.py pow32_exp: relative error of 2^f 2^-38.5)
    __m512d q =
        _mm512_fmadd_pd(_mm512_set1_pd(0x1.3b29ba610a68cp-7), f,  // 0.0096180114797619550848
                        _mm512_set1_pd(0x1.c6b3f618c52f8p-5));  // 0.055505734117252403248
    q = _mm512_fmadd_pd(q, f, _mm512_set1_pd(0x1.ebfbdfff44e9p-3));  // 0.24022650716561999573
    q = _mm512_fmadd_pd(q, f, _mm512_set1_pd(0x1.62e42fec3e58bp-1));  // 0.69314718016464504924
    const __m512d res = _mm512_fmadd_pd(_mm512_mul_pd(tab, f), q, tab);
    return _mm512_scalef_pd(res, n);  // 2^floor(n) 2^(j/16) 2^f
}

// 16 float32 lanes with a lane that is not positive, normal and finite, or a y that is
// not finite: each half through the float64 kernel (rounded once more: within 0.5 + 2^-28
// ULP beyond its own error), special values as the float64 kernel's, rounded.
template <class A, bool Conditions>
[[gnu::noinline]] __m512 power_f32_avx512_rare(__m512 xf, __m512 yf,
                                               unsigned& conditions) noexcept {
    unsigned ignored = 0;
    const __m512d x0 = _mm512_cvtps_pd(_mm512_castps512_ps256(xf));
    const __m512d y0 = _mm512_cvtps_pd(_mm512_castps512_ps256(yf));
    const __m512d x1 =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)));
    const __m512d y1 =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(yf), 1)));
    const __m256 r0 = _mm512_cvtpd_ps(power_f64_avx512<A, false>(x0, y0, ignored));
    const __m256 r1 = _mm512_cvtpd_ps(power_f64_avx512<A, false>(x1, y1, ignored));
    const __m512 r = _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(r0)), _mm256_castps_pd(r1), 1));
    if constexpr (Conditions) {
        using F = xsimd::batch<float, A>;
        conditions |= pow_conditions<float, A>(F(xf), F(yf), F(r));
    }
    return r;
}

// x**y for 16 float32 lanes (contract and method at the top).
template <class A, bool Conditions>
NUMFUSE_ALWAYS_INLINE __m512 power_f32_avx512(__m512 xf, __m512 yf, unsigned& conditions) noexcept {
    const __m512i xi = _mm512_castps_si512(xf);
    const __m512i yi = _mm512_castps_si512(yf);
    // x positive, normal and finite; y finite
    const __mmask16 xok = _mm512_cmplt_epu32_mask(
        _mm512_sub_epi32(xi, _mm512_set1_epi32(0x00800000)), _mm512_set1_epi32(0x7f000000));
    const __mmask16 ok = _mm512_mask_cmpneq_epi32_mask(
        xok, _mm512_and_si512(yi, _mm512_set1_epi32(0x7f800000)), _mm512_set1_epi32(0x7f800000));
    if (ok != 0xffff) return power_f32_avx512_rare<A, Conditions>(xf, yf, conditions);
    const __m512d r0 = pow_f32_half_avx512(_mm512_castps512_ps256(xf), _mm512_castps512_ps256(yf));
    const __m512d r1 =
        pow_f32_half_avx512(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)),
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(yf), 1)));
    const __m512 r = _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(r0))),
                           _mm256_castps_pd(_mm512_cvtpd_ps(r1)), 1));
    if constexpr (Conditions) {
        // overflow and underflow only: the result is not normal and finite
        const __mmask16 normal = _mm512_cmplt_epu32_mask(
            _mm512_sub_epi32(_mm512_castps_si512(r), _mm512_set1_epi32(0x00800000)),
            _mm512_set1_epi32(0x7f000000));
        if (normal != 0xffff) {
            using F = xsimd::batch<float, A>;
            conditions |= pow_conditions<float, A>(F(xf), F(yf), F(r));
        }
    }
    return r;
}

// out[k] = x[k]**y[k] for float32, k < n (out may be x or y); the conditions when asked.
template <class A, bool Conditions>
inline unsigned power_f32_avx512_array(float* out, const float* x, const float* y,
                                       std::size_t n) noexcept {
    unsigned conditions = 0;
    std::size_t k = 0;
    for (; k + 16 <= n; k += 16) {
        const __m512 r = power_f32_avx512<A, Conditions>(_mm512_loadu_ps(x + k),
                                                         _mm512_loadu_ps(y + k), conditions);
        _mm512_storeu_ps(out + k, r);
    }
    if (k < n) {
        const auto mask = static_cast<__mmask16>((1u << (n - k)) - 1u);
        const __m512 one = _mm512_set1_ps(1.0f);
        const __m512 r =
            power_f32_avx512<A, Conditions>(_mm512_mask_loadu_ps(one, mask, x + k),
                                            _mm512_mask_loadu_ps(one, mask, y + k), conditions);
        _mm512_mask_storeu_ps(out + k, mask, r);
    }
    return conditions;
}

#endif  // __AVX512F__
}  // namespace detail
}  // namespace numfuse::kernels
