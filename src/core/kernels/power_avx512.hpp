// power(x, y) = x**y on AVX-512: float64 lanes, and float32 lanes.
//
// Contract (as power.hpp's power_kernel, which the other levels run)
//   power_f64_avx512(x, y): x**y per float64 lane within 1 ULP of the correctly rounded
//   result (tests/test_power.py, tests/test_power_ufunc.py and the accuracy table measure
//   it against mpmath), C99's special values bit for bit (power.hpp's pow_fixup).
//   power_f32_avx512(x, y): x**y for 16 float32 lanes within 0.6 float32 ULP (measured
//   0.58: tools/pow32_check.cpp, every float32 x in [0.5, 2) and dense grids over the
//   fast lanes' domain), special values as the float64 kernel's rounded to float32. A
//   lane's bits depend on its own x and y only (not on the other lanes of its batch).
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
//   (exp.hpp's AVX-512 reduction, r1 exact), r = RN(r1 + (tl - kd ln2_lo/16)) (its
//   rounding: under 0.01 ULP), e^r = 1 + p by exp.hpp's degree-5 fit, 2^(j/16) (1 + p)
//   from the 16-entry tables, scaled by vscalefpd (rounded once). Max measured 0.564 ULP
//   for normal results (docs/accuracy.md, 1e6 pairs).
//   The common batch (every x positive and finite, |th| <= 708: normal results) takes no
//   test beyond one mask; any other batch takes power_f64_avx512_rare (clamped th, results
//   below 2^-1022 scaled without assists, then power.hpp's pow_fixup).
//
// Method, float32
//   Fast lanes (x positive, normal and finite; |y| < 256; |y log2 x| <= 125: normal
//   results) on float32 lanes, 16 per vector, screened by float compares; the other lanes
//   are gathered (compressed) over a block of 512 elements and run through the float64
//   kernel 8 at a time, their results expanded back into their batches (a batch's fast
//   lanes as in a batch of their own). y log2 x = th + tl to 2^-26 absolute:
//   x = z 2^k, z in [0.707, 1.414) (integer operations on the bits), c = 1/z rounded to
//   the 1/32 grid (vrcp14ps, vrndscaleps), r = z c - 1 exact (|r| <= 0.0222, 24 bits),
//   log2 x = (k - log2 c) + A r + r P(r) with A = RN(1/ln2), k - log2(c)'s high part exact
//   (a 2^-16 grid table; the low part joins the tail), the first sum's error recovered
//   exactly, P of degree 4 (tools/pow_remez.py pow32_log: 2^-37.5 absolute): the
//   sum lh + ll to ~2^-35 absolute, times |y| < 256; th + tl = y (lh + ll) from an exact
//   product. 2^(th + tl): th = n + f with n on the 1/16 grid (a shifter addition; its low
//   4 bits index exp.hpp's float32 2^(j/16) hi/lo tables), f += tl (|f| <= 1/32 + 2^-8),
//   2^(j/16) 2^f = eh + (el + eh f Q(f)) (Q of degree 3, pow32_exp: 2^-34.9 relative) rounded
//   once, times 2^floor(n) by vscalefps (exact: a normal result). Error before the last
//   rounding ~0.1 ULP at |y| near 256, less below: within 0.6 ULP.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>

#include "kernels/avx512_lanes.hpp"
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
    const __m512d pu = _mm512_fmadd_pd(t4, _mm512_fmadd_pd(c59, t4, c14), ul);  // t^4 R1 + ul
    const __m512d h3 = _mm512_add_pd(h2, u);
    const __m512d e3 = _mm512_add_pd(_mm512_sub_pd(h2, h3), u);
    const __m512d kl = _mm512_fmadd_pd(k, _mm512_set1_pd(0x1.ef35793c7673p-45), cl);
    const __m512d lo = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(e1, e2), _mm512_add_pd(e3, qe)),
                                     _mm512_add_pd(pu, kl));
    return {h3, lo};
}

// e^(th + tl) for |th| <= 746, |tl| <= 2^-40 |th| (method above); tiny: the batch may hold
// results below 2^-1022 (scaled without vscalefpd's assist then).
NUMFUSE_ALWAYS_INLINE __m512d pow_exp_f64_avx512(__m512d th, __m512d tl, bool tiny) noexcept {
    const __m512d shifter = _mm512_set1_pd(0x1.8p52);
    const __m512d z = _mm512_fmadd_pd(th, _mm512_set1_pd(0x1.71547652b82fep+4), shifter);  // 16/ln2
    const __m512d kd = _mm512_sub_pd(z, shifter);  // 16k + j
    // th - kd C_hi exact (exp.hpp's reduction); r = RN(r1 + c), c = tl - kd C_lo: |r| <=
    // ln2/32 (1 + 2^-12), so its rounding error is below 2^-59, a relative error of the
    // result under 0.01 ULP (the pair's low part that a two-sum would keep is not worth
    // its three operations).
    const __m512d r1 = _mm512_fnmadd_pd(kd, _mm512_set1_pd(0x1.62e42fefa39efp-5), th);
    const __m512d c = _mm512_fnmadd_pd(kd, _mm512_set1_pd(0x1.abc9e3b39803fp-60), tl);
    const ExpT16Pair t = exp_f64_avx512_t16_pair(z, _mm512_add_pd(r1, c));
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
    // x > 0 (not NaN) and |th| <= 708 (not NaN): x = +inf gives th = +-inf or NaN (k is
    // getexp's +inf). Such lanes raise no condition: their results are normal and finite.
    const __mmask8 xok = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_GT_OQ);
    const __mmask8 tok =
        _mm512_mask_cmp_pd_mask(xok, _mm512_abs_pd(th), _mm512_set1_pd(708.0), _CMP_LE_OQ);
    if (tok == 0xff) return pow_exp_f64_avx512(th, tl, false);
    return power_f64_avx512_rare<A, Conditions>(x, y, th, tl, conditions);
}

// -log2(c) = hi + lo for the float32 kernel's reciprocals c (below), at index bits(c) >> 18
// (its low 5 bits): c = 1 + i/32 at i = 0..13, c = (32 + i)/64 at even i = 14..30 (odd ones
// unused). hi on the 2^-16 grid (k + hi is exact for |k| <= 128), lo = RN(-log2(c) - hi).
// tools/pow_remez.py pow32_tables.
alignas(64) inline constexpr float pow32_log2c_hi[32] = {
    0x0p+0f,       -0x1.6bap-5f,  -0x1.664p-4f,  -0x1.08c8p-3f, -0x1.5cp-3f,   -0x1.acf8p-3f,
    -0x1.fbcp-3f,  -0x1.244p-2f,  -0x1.49a8p-2f, -0x1.6e24p-2f, -0x1.91bcp-2f, -0x1.b48p-2f,
    -0x1.d674p-2f, -0x1.f7a8p-2f, 0x1.e7ep-2f,   0x0p+0f,       0x1.a9p-2f,    0x0p+0f,
    0x1.6cbp-2f,   0x0p+0f,       0x1.32cp-2f,   0x0p+0f,       0x1.f6p-3f,    0x0p+0f,
    0x1.8a88p-3f,  0x0p+0f,       0x1.22d8p-3f,  0x0p+0f,       0x1.7d6p-4f,   0x0p+0f,
    0x1.774p-5f,   0x0p+0f,
};
alignas(64) inline constexpr float pow32_log2c_lo[32] = {
    0x0p+0f,          -0x1.a6eb1ep-18f, 0x1.20a6dep-21f,  0x1.3b992cp-18f,  -0x1.a39fbep-19f,
    0x1.0e9258p-18f,  -0x1.6b9026p-19f, -0x1.eac382p-20f, 0x1.ed0cbap-20f,  0x1.e3263p-18f,
    0x1.5db83ap-20f,  0x1.408c78p-18f,  -0x1.3e032ep-18f, -0x1.5a32c2p-20f, -0x1.40358ep-19f,
    0x0p+0f,          -0x1.a39fbep-20f, 0x0p+0f,          0x1.ed0cbap-19f,  0x0p+0f,
    -0x1.1c8f12p-22f, 0x0p+0f,          -0x1.3ab7cep-18f, 0x0p+0f,          0x1.80abfcp-19f,
    0x0p+0f,          0x1.6e155ap-18f,  0x0p+0f,          0x1.25b3eep-22f,  0x0p+0f,
    -0x1.acd89ap-19f, 0x0p+0f,
};

// y log2 x = th + tl for 16 float32 lanes of positive normal x and |y| < 256, y 0 or
// above 2^-40 (other lanes garbage; method at the top). |tl| <= 2^-8.
struct PowT32 {
    __m512 hi, lo;
};
NUMFUSE_ALWAYS_INLINE PowT32 pow_t_f32_avx512(__m512 x, __m512 y) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    // x = z 2^k, z in [0.70703125, 1.4140625): integer operations on the bits (one
    // constant: GCC materialises each integer constant in the loop, a port-5 broadcast)
    const __m512i ix = _mm512_castps_si512(x);
    const __m512i kb = _mm512_srai_epi32(_mm512_sub_epi32(ix, _mm512_set1_epi32(0x3f350000)), 23);
    const __m512 k = _mm512_cvtepi32_ps(kb);
    const __m512 z = _mm512_castsi512_ps(_mm512_sub_epi32(ix, _mm512_slli_epi32(kb, 23)));
    // c = 1/z rounded to the 1/32 grid (23..45 / 32): r = z c - 1 is exact (|r| <= 0.0222
    // on the 2^-29 grid below 1, the 2^-28 grid above: 24 bits)
    const __m512 c = _mm512_roundscale_ps(_mm512_rcp14_ps(z), (5 << 4) | _MM_FROUND_TO_NEAREST_INT);
    const __m512 r = _mm512_fmsub_ps(z, c, one);
    const __m512i idx = _mm512_srli_epi32(_mm512_castps_si512(c), 18);
    const __m512 ch = _mm512_permutex2var_ps(_mm512_load_ps(pow32_log2c_hi), idx,
                                             _mm512_load_ps(pow32_log2c_hi + 16));
    const __m512 cl = _mm512_permutex2var_ps(_mm512_load_ps(pow32_log2c_lo), idx,
                                             _mm512_load_ps(pow32_log2c_lo + 16));
    // log2 x = h + A r + r P(r) (A = RN(1/ln2), r P(r) ~ log2(1 + r) - A r, tools/pow_remez.py
    // pow32_log: 2^-37.5 absolute) + lo: h = k + ch exact; s = RN(h + A r) with its error e
    // (h - s exact: h is 0, or |h| >= 0.0444 >= 2 |A r|, within a factor of two of s); lh =
    // RN(s + r P) (s - lh exact: |r P| <= |s| / 64).
    const __m512 a = _mm512_set1_ps(0x1.715476p+0f);
    const __m512 h = _mm512_add_ps(k, ch);
    const __m512 s = _mm512_fmadd_ps(r, a, h);
    const __m512 e = _mm512_fmadd_ps(r, a, _mm512_sub_ps(h, s));
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(0x1.279a9ap-2f), r,  // 0.28867569566
                               _mm512_set1_ps(-0x1.719d4cp-2f));  // -0.36095160246
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.ec709cp-2f));  // 0.48089832067
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(-0x1.715474p-1f));  // -0.72134745121
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.4ae0cp-26f));  // 1.9259630335e-8
    const __m512 lh = _mm512_fmadd_ps(r, p, s);
    const __m512 ll =
        _mm512_add_ps(_mm512_fmadd_ps(r, p, _mm512_sub_ps(s, lh)), _mm512_add_ps(cl, e));
    // y log2 x: an exact product plus y ll
    const __m512 th = _mm512_mul_ps(y, lh);
    return {th, _mm512_fmadd_ps(y, ll, _mm512_fmsub_ps(y, lh, th))};
}

// 2^(th + tl) for |th| <= 125, |tl| <= 2^-8 (method at the top): a normal float32.
NUMFUSE_ALWAYS_INLINE __m512 pow_exp2_f32_avx512(PowT32 t) noexcept {
    // n = RN(th) on the 1/16 grid (the shifter's ulp), its low 4 bits (j) in zz's
    const __m512 shifter = _mm512_set1_ps(0x1.8p19f);
    const __m512 zz = _mm512_add_ps(t.hi, shifter);
    const __m512 n = _mm512_sub_ps(zz, shifter);
    const __m512 f = _mm512_add_ps(_mm512_sub_ps(t.hi, n), t.lo);  // |f| <= 1/32 + 2^-8
    const __m512 eh = avx512::permute_table(zz, exp_tab16_hi_f);
    const __m512 el = avx512::permute_table(zz, exp_tab16_lo_f);
    // Q(f) ~ (2^f - 1)/f (tools/pow_remez.py pow32_exp: relative error of 2^f 2^-34.9)
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.3b1cb4p-7f), f,  // 0.0096164587885
                               _mm512_set1_ps(0x1.c6af5cp-5f));  // 0.055503539741
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(0x1.ebfbep-3f));  // 0.24022650719
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(0x1.62e43p-1f));  // 0.69314718246
    // 2^(j/16) 2^f = eh + (el + eh f Q): the one rounding of the result, then the exact
    // scaling by 2^floor(n)
    const __m512 w = _mm512_fmadd_ps(_mm512_mul_ps(eh, f), q, el);
    return _mm512_scalef_ps(_mm512_add_ps(eh, w), n);
}

// The float32 lanes that the float32 kernel does not take, gathered over a block of
// pow32_block elements so that the float64 kernel runs on full vectors of 8 lanes (a
// batch with one such lane ran the float64 kernel on both halves: inputs with many of
// them, e.g. half the bases tiny, paid for three kernels per batch): their x and y
// (compressed in order; their results replace x), and each batch that has some (its
// index in the block and its mask). 16 floats of room past a full block: stores of whole
// vectors at the fill level.
inline constexpr std::size_t pow32_block = 512;
struct PowF32Deferred {
    alignas(64) float x[pow32_block + 16];
    alignas(64) float y[pow32_block + 16];
    std::uint16_t batch[pow32_block / 16];
    __mmask16 mask[pow32_block / 16];
    std::size_t count;  // lanes gathered
    std::size_t batches;  // batches with a gathered lane
};

// The lanes of batch `index` (of the block) outside `fast` (x not positive, normal and
// finite, |y| >= 256 or NaN, |th| > 125) gathered into d for power_f32_avx512_deferred;
// the others computed as in a batch of their own (the float32 exp2 sees th = tl = 0 in
// the gathered lanes: no subnormal operand). Out of line: the common path keeps its
// registers.
[[gnu::noinline]] inline __m512 power_f32_avx512_defer(__m512 xf, __m512 yf, __m512 th, __m512 tl,
                                                       __mmask16 fast, std::size_t index,
                                                       PowF32Deferred& d) noexcept {
    const __mmask16 slow = static_cast<__mmask16>(~fast);
    _mm512_storeu_ps(d.x + d.count, _mm512_maskz_compress_ps(slow, xf));
    _mm512_storeu_ps(d.y + d.count, _mm512_maskz_compress_ps(slow, yf));
    d.count += static_cast<std::size_t>(__builtin_popcount(slow));
    d.batch[d.batches] = static_cast<std::uint16_t>(index);
    d.mask[d.batches++] = slow;
    return pow_exp2_f32_avx512({_mm512_maskz_mov_ps(fast, th), _mm512_maskz_mov_ps(fast, tl)});
}

// The gathered lanes of a block through the float64 kernel, 8 at a time (rounded once more:
// within 0.5 + 2^-28 ULP beyond its own error; special values as the float64 kernel's,
// rounded), written over their batches' lanes of out (the block's start): each lane gets
// the bits it would get alone (the folds compute one pair at a time). The conditions of
// these lanes when asked (the others raise none). The padding is 1 ** 1: no condition.
template <class A, bool Conditions>
[[gnu::noinline]] unsigned power_f32_avx512_deferred(float* out, PowF32Deferred& d) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    _mm512_storeu_ps(d.x + d.count, one);
    _mm512_storeu_ps(d.y + d.count, one);
    unsigned conditions = 0, ignored = 0;
    for (std::size_t i = 0; i < d.count; i += 16) {
        const __m512 xf = _mm512_load_ps(d.x + i), yf = _mm512_load_ps(d.y + i);
        const __m256 r0 = _mm512_cvtpd_ps(
            power_f64_avx512<A, false>(_mm512_cvtps_pd(_mm512_castps512_ps256(xf)),
                                       _mm512_cvtps_pd(_mm512_castps512_ps256(yf)), ignored));
        __m512 r = _mm512_insertf32x8(one, r0, 0);
        if (d.count - i > 8) {
            const __m512d x1 =
                _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)));
            const __m512d y1 =
                _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(yf), 1)));
            r = _mm512_insertf32x8(r, _mm512_cvtpd_ps(power_f64_avx512<A, false>(x1, y1, ignored)),
                                   1);
        }
        if constexpr (Conditions) {
            using F = xsimd::batch<float, A>;
            conditions |= pow_conditions<float, A>(F(xf), F(yf), F(r));
        }
        _mm512_store_ps(d.x + i, r);
    }
    std::size_t position = 0;
    for (std::size_t j = 0; j < d.batches; ++j) {
        const __mmask16 m = d.mask[j];
        _mm512_mask_storeu_ps(out + 16 * std::size_t{d.batch[j]}, m,
                              _mm512_maskz_expand_ps(m, _mm512_loadu_ps(d.x + position)));
        position += static_cast<std::size_t>(__builtin_popcount(m));
    }
    return conditions;
}

// x**y for 16 float32 lanes (contract and method at the top), the lanes outside the fast
// domain gathered into d (power_f32_avx512_defer) and left to power_f32_avx512_deferred.
// index: the batch's place in the block.
NUMFUSE_ALWAYS_INLINE __m512 power_f32_avx512(__m512 xf, __m512 yf, std::size_t index,
                                              PowF32Deferred& d) noexcept {
    // x positive, normal and finite; |y| < 256 (not NaN); |th| <= 125. Lanes of |y| < 2^-40
    // compute y = 0 (their x**y rounds to 1 all the same): no subnormal operand anywhere.
    // Float compares (their constants are memory operands, integer ones cost a broadcast).
    const __m512 ay = _mm512_abs_ps(yf);
    const __mmask16 xok =
        _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(xf, _mm512_set1_ps(0x1p-126f), _CMP_GE_OQ), xf,
                                _mm512_set1_ps(0x1.fffffep127f), _CMP_LE_OQ);
    const __mmask16 yok = _mm512_mask_cmp_ps_mask(xok, ay, _mm512_set1_ps(256.0f), _CMP_LT_OQ);
    const __m512 ys =
        _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(ay, _mm512_set1_ps(0x1p-40f), _CMP_GE_OQ), yf);
    const PowT32 t = pow_t_f32_avx512(xf, ys);
    const __mmask16 fast =
        _mm512_mask_cmp_ps_mask(yok, _mm512_abs_ps(t.hi), _mm512_set1_ps(125.0f), _CMP_LE_OQ);
    // fast lanes' results are normal and finite: they raise no condition
    if (fast != 0xffff) return power_f32_avx512_defer(xf, yf, t.hi, t.lo, fast, index, d);
    return pow_exp2_f32_avx512(t);
}

// out[k] = kernel(x[k], y[k], conditions) for k < n in vectors of T's lanes (out may be x
// or y), the tail padded with 1 ** 1 (no condition); the conditions the kernel reported.
template <class T, class Kernel>
NUMFUSE_ALWAYS_INLINE unsigned power_avx512_array(T* out, const T* x, const T* y, std::size_t n,
                                                  Kernel kernel) noexcept {
    namespace v = avx512;
    unsigned conditions = 0;
    std::size_t k = 0;
    for (; k + v::lanes<T> <= n; k += v::lanes<T>) {
        v::store(out + k, kernel(v::load(x + k), v::load(y + k), conditions));
    }
    if (k < n) {
        const auto mask = static_cast<v::Mask<T>>((1u << (n - k)) - 1u);
        v::store(out + k, mask,
                 kernel(v::load_or_one(mask, x + k), v::load_or_one(mask, y + k), conditions));
    }
    return conditions;
}

// out[k] = x[k]**y[k], k < n (out may be x or y); the conditions when asked, else 0.
template <class A, bool Conditions>
inline unsigned power_f64_avx512_array(double* out, const double* x, const double* y,
                                       std::size_t n) noexcept {
    return power_avx512_array(out, x, y, n,
                              [](__m512d xv, __m512d yv, unsigned& c) NUMFUSE_ALWAYS_INLINE_LAMBDA {
                                  return power_f64_avx512<A, Conditions>(xv, yv, c);
                              });
}

// out[k] = x[k]**y[k] for float32, k < n (out may be x or y: a gathered lane's x and y
// are copied before its batch's store); the conditions when asked. Blocks of pow32_block
// elements, the tail padded with 1 ** 1.
template <class A, bool Conditions>
inline unsigned power_f32_avx512_array(float* out, const float* x, const float* y,
                                       std::size_t n) noexcept {
    namespace v = avx512;
    PowF32Deferred d;
    unsigned conditions = 0;
    for (std::size_t start = 0; start < n; start += pow32_block) {
        const std::size_t end = n - start < pow32_block ? n : start + pow32_block;
        d.count = d.batches = 0;
        std::size_t k = start;
        for (; k + 16 <= end; k += 16) {
            v::store(out + k,
                     power_f32_avx512(v::load(x + k), v::load(y + k), (k - start) / 16, d));
        }
        if (k < end) {
            const auto mask = static_cast<__mmask16>((1u << (end - k)) - 1u);
            v::store(out + k, mask,
                     power_f32_avx512(v::load_or_one(mask, x + k), v::load_or_one(mask, y + k),
                                      (k - start) / 16, d));
        }
        if (d.count != 0) conditions |= power_f32_avx512_deferred<A, Conditions>(out + start, d);
    }
    return conditions;
}

#endif  // __AVX512F__
}  // namespace detail
}  // namespace numfuse::kernels
