// arctan, arcsin, arccos for float64 SIMD lanes (xsimd 8.1).
//
// Contract
//   atan_kernel / asin_kernel / acos_kernel (batch<double>): per lane.
//   Max error <= 1 ULP over the whole domain at every level (measured maxima in
//   docs/accuracy.md; tests/test_evaluate_accuracy.py and tests/test_invtrig.py check them
//   against mpmath).
//   Valid range: all inputs; special values as NumPy:
//     atan(+-0, subnormal) = x, atan(+-inf) = +-pi/2 (rounded);
//     asin(+-0, subnormal) = x, asin(+-1) = +-pi/2, |x| > 1 -> NaN;
//     acos(1) = +0, acos(-1) = pi, acos(0) = pi/2, |x| > 1 -> NaN;
//     |x| > 1 gives the x86 default NaN (sign set, as NumPy's loops), a NaN x gives x + x.
//   No floating-point operation sees a subnormal operand or result (x86 microcode assists):
//   magnitudes below 2^-200 are computed at 2^-200 (arctan) or at 0 (arcsin, arccos) and
//   take x at the end, arctan's above 2^60 at 2^60 (pi/2 either way).
//   float32 uses these in float64 only on SSE2 (expr_math.hpp) and rounds once.
//
// Method
//   asin / acos: no division. s = |x| (|x| <= 1/2) or s = sqrt((1 - |x|)/2) as a pair
//   (|x| > 1/2; 1 - |x| exact, sqrt rounded, the exact residual q - s^2 times 1/(2 s) from
//   rsqrt14 on AVX-512); asin s = s + s^3 P(s^2) with P a degree-12 minimax on [0, 1/4]
//   (tools/invtrig_remez.py asin64). Every result is B + m asin s with (B, m) = (0, 1),
//   (pi/2, -2) for asin, (pi/2, -+1), (0, 2), (pi, -2) for acos: B + m s.hi split exactly
//   (|B| >= |m s| or B = 0), the rest added to its low part, one rounding at the end.
//   atan: a = |x|; a <= 7.625: c = k/4 the nearest quarter (k <= 30), atan a = atan c +
//   atan u with u = (a - c) / (1 + c a), |u| <= 1/8; else atan a = pi/2 + atan u with u =
//   -1/a, |u| < 0.1312. u = num / den as a pair: num exact (Sterbenz), den = 1 + c a with
//   its rounding error (exact residual), 1/den from rcp14 and two Newton steps on AVX-512
//   (a division elsewhere), the quotient's error from two fused residuals. atan u = u +
//   u^3 P(u^2), P a degree-5 minimax (tools/invtrig_remez.py atan64); atan c as a hi/lo
//   pair from a 32-entry table (two in-register permutes on AVX-512), pi/2 in its last
//   slot. kernels/atan2.hpp uses the same quotient and polynomial.
//   atan on AVX-512 (atan_kernel_avx512): no -1/a branch and one permute a table. a is
//   clamped to [2^-200, 2^60]; a >= 1/16 takes c from a 16-point table, one point near the
//   midpoint of each half octave of [1/16, 16) (a >= 16: the last, c ~ 14) whose atan is
//   a double to 2^-63 (Gal's accurate tables), a < 1/16 takes c = 0; atan a = atan c +
//   atan u, u = (a - c) / (1 + c a) (|u| <= 0.1116), for every a > 0. num = a - c is exact,
//   den = 1 + c a rounded once (u's one error, at most 0.26 ulp of the result), u = uh + ul
//   from rcp14 and two Newton steps, atan u = u + u^3 P(u^2) with atan's P above; atan c +
//   uh split exactly, one rounding at the end (bound below 0.8 ulp; measured maxima in
//   docs/accuracy.md).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"

namespace numfuse::kernels {
namespace detail {

inline constexpr double pio2_hi = 0x1.921fb54442d18p+0, pio2_lo = 0x1.1a62633145c07p-54;

// Magnitudes below this are computed at it (arctan) or at 0 (arcsin, arccos) and take x at
// the end: a^4 >= 2^-800 (arcsin's polynomial in z^2) and u^3 stay normal (no assists).
inline constexpr double invtrig_floor = 0x1p-200;

// atan(k/4) = hi + lo for k = 0..30 (mpmath, rounded to nearest), pi/2 in slot 31.
alignas(64) inline constexpr double atan_quarter_hi[32] = {
    0x0.0p+0,
    0x1.f5b75f92c80ddp-3,
    0x1.dac670561bb4fp-2,
    0x1.4978fa3269ee1p-1,
    0x1.921fb54442d18p-1,
    0x1.cac7c57846f9ep-1,
    0x1.f730bd281f69bp-1,
    0x1.0d38f2c5ba09fp+0,
    0x1.1b6e192ebbe44p+0,
    0x1.270ef55a53a25p+0,
    0x1.30b6d796a4da8p+0,
    0x1.38d6a6ce13353p+0,
    0x1.3fc176b7a8560p+0,
    0x1.45b54837351a0p+0,
    0x1.4ae10fc6589a5p+0,
    0x1.4f68dea672617p+0,
    0x1.5368c951e9cfdp+0,
    0x1.56f6f33a3e6a7p+0,
    0x1.5a25052114e60p+0,
    0x1.5d013c41adabdp+0,
    0x1.5f97315254857p+0,
    0x1.61f06c6a92b89p+0,
    0x1.6414d44094c7cp+0,
    0x1.660b02c736a06p+0,
    0x1.67d8863bc99bdp+0,
    0x1.698213a9d5053p+0,
    0x1.6b0bae830c070p+0,
    0x1.6c78c7edeb195p+0,
    0x1.6dcc57bb565fdp+0,
    0x1.6f08f07435fecp+0,
    0x1.7030cf9403197p+0,
    0x1.921fb54442d18p+0,
};
alignas(64) inline constexpr double atan_quarter_lo[32] = {
    0x0.0p+0,
    0x1.8ab6e3cf7afbdp-57,
    0x1.a2b7f222f65e2p-56,
    0x1.2419a87f2a458p-56,
    0x1.1a62633145c07p-55,
    0x1.0dae13ad18a6bp-55,
    0x1.007887af0cbbdp-56,
    -0x1.bd0dc231bfd70p-54,
    0x1.b1b466a88828ep-54,
    -0x1.a66b1af5f84fbp-54,
    0x1.6254cb03bb199p-54,
    -0x1.12c77e8a80f5cp-55,
    -0x1.441a3bd3f1083p-59,
    0x1.9e4a72eedacc4p-56,
    -0x1.3b03e8a27f555p-54,
    0x1.934f9f2b0020ep-54,
    -0x1.96f47948a99f1p-54,
    -0x1.df6edd6f1ec3bp-56,
    0x1.8c2d0c89de218p-56,
    0x1.f82bba194dd5dp-54,
    -0x1.31151a43b51cap-55,
    -0x1.487d50bceb1a5p-55,
    -0x1.c5f60a65c7397p-54,
    -0x1.acb6afb332a0fp-56,
    -0x1.9b7bd2e1e8c9cp-54,
    -0x1.b9839085189e3p-54,
    -0x1.7d1ab82ffb70bp-54,
    0x1.9239ad620ffe2p-54,
    -0x1.29c86447928e7p-54,
    -0x1.957a7170df016p-55,
    -0x1.cbe1896221608p-56,
    0x1.1a62633145c07p-54,
};

// AVX-512 arctan's reduction (atan_kernel_avx512): for each half octave [2^e (1 + j/2),
// 2^e (1 + (j + 1)/2)), e in [-4, 3], j in {0, 1}, a point c within 2^e/64 of its midpoint
// (the last one at least 14) whose atan, rounded to nearest, is within 2^-63 of atan c
// relative (Gal's accurate tables; tools/invtrig_gal_tables.py f64), and that atan. Slot
// (2 (e + 1023) + j) mod 16: the low four bits of the top 13 bits of a in the interval.
alignas(64) inline constexpr double atan_half_octave_c[16] = {
    0x1.3f8f39e9e529dp+1,  // 2.496558417517305
    0x1.bdad17f196d04p+1,  // 3.481844895327983
    0x1.3fac7b70d1d69p+2,  // 4.9949024774317445
    0x1.c20fdfbbde1f3p+2,  // 7.0322188696522856
    0x1.3f54ef9d3eca1p+3,  // 9.9791181632229513
    0x1.c05f7ebf05922p+3,  // 14.01165711697519
    0x1.41262dc6eba68p-4,  // 0.078405550781761257
    0x1.c2dd3f9b1e5edp-4,  // 0.1100742802244878
    0x1.3e9c7dd71b925p-3,  // 0.15557192146975143
    0x1.bffd489448998p-3,  // 0.21874481871152507
    0x1.3f39215a1d1ddp-2,  // 0.31174137222776982
    0x1.c02f24d7e5398p-2,  // 0.43767983978005409
    0x1.41d97f1bcb822p-1,  // 0.62861249174398304
    0x1.bfeb14d2604c4p-1,  // 0.87484040325230028
    0x1.403871e1bde4ep+0,  // 1.2508612800719621
    0x1.bd5e3a5c8ab17p+0,  // 1.7397190547878318
};
alignas(64) inline constexpr double atan_half_octave_t[16] = {
    0x1.3097b1f6eee98p+0,  // atan c to 2^-65.7
    0x1.4a86d4ee34eb5p+0,  // atan c to 2^-63.88
    0x1.5f8a54c6f4b9dp+0,  // atan c to 2^-64.27
    0x1.6df6620b48a68p+0,  // atan c to 2^-63.39
    0x1.788e3edd7b7d3p+0,  // atan c to 2^-63.59
    0x1.7fe2607790694p+0,  // atan c to 2^-66.99
    0x1.407e542f13cb5p-4,  // atan c to 2^-63.84
    0x1.c10e726ec4ffcp-4,  // atan c to 2^-63.41
    0x1.3c13dc2fc546cp-3,  // atan c to 2^-63.25
    0x1.b90add7f20205p-3,  // atan c to 2^-63.79
    0x1.35723c3244599p-2,  // atan c to 2^-64.06
    0x1.a6767d7b95067p-2,  // atan c to 2^-63.8
    0x1.1f54ab2cd4bccp-1,  // atan c to 2^-64.31
    0x1.6ffea314a6fe9p-1,  // atan c to 2^-64.11
    0x1.caf3ceb08ca3fp-1,  // atan c to 2^-63.78
    0x1.0c925bfd7425ep+0,  // atan c to 2^-64.82
};

// (asin s - s) / s^3 as a polynomial in z = s^2 on [0, 1/4] (tools/invtrig_remez.py asin64),
// two Horner chains in z^2.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> asin_poly(const xsimd::batch<double, A>& z) noexcept {
    using B = xsimd::batch<double, A>;
    const B w = z * z;
    const B pe = dd::horner(w, 0x1.555555555557fp-3,   // c0 = 0.16666666666666782315
                            0x1.6db6db72ec7ddp-5,      // c2 = 0.044642857180761309766
                            0x1.6e8be8474ccafp-6,      // c4 = 0.022372223696220213535
                            0x1.ca2fbe2fa4127p-7,      // c6 = 0.013982742180161778986
                            0x1.642b985fb7bfcp-7,      // c8 = 0.010869454766575963045
                            0x1.712fe3d60a607p-6,      // c10 = 0.022533390518367137773
                            0x1.115395505c65p-5);      // c12 = 0.033365050915460714442
    const B po = dd::horner(w, 0x1.333333332cf7cp-4,   // c1 = 0.074999999999645738935
                            0x1.f1c71a411d4fdp-6,      // c3 = 0.030381942404763318671
                            0x1.1c494524ca1b3p-6,      // c5 = 0.017351453326371401448
                            0x1.75002da9e3f94p-7,      // c7 = 0.011383077904411988135
                            0x1.b977e2446af2cp-9,      // c9 = 0.0033681358056209167312
                            -0x1.6b445785d5073p-6);    // c11 = -0.022172055694071390181
    return dd::fmadd(po, z, pe);
}

// (atan u - u) / u^3 as a polynomial in z = u^2 on [0, 0.0173] (tools/invtrig_remez.py
// atan64).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan_poly(const xsimd::batch<double, A>& z) noexcept {
    return dd::horner(z, -0x1.5555555555459p-2,  // -0.33333333333331932602
                      0x1.999999990ee74p-3,       // 0.19999999998423201308
                      -0x1.24924859638e8p-3,      // -0.14285713694375279381
                      0x1.c71b5fce56588p-4,       // 0.11111009048672404464
                      -0x1.73ff81fa2e4e1p-4,      // -0.090819843028743033053
                      0x1.2b4493e828bb7p-4);      // 0.073063447724549188123
}

// 1/y within 2^-14 relative: rcp14 on AVX-512, a division elsewhere.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> reciprocal_14(
    const xsimd::batch<double, A>& y) noexcept {
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) return xsimd::batch<double, A>(_mm512_rcp14_pd(y));
    else
#endif
        return xsimd::batch<double, A>(1.0) / y;
}

// u = num / (den + den_lo) as a pair uh + ul (about 2^-100 relative), num and den exact,
// |den_lo| <= ulp(den). AVX-512: 1/den from rcp14 and two Newton steps (2^-56 or better);
// num / den = (num inv) / (inv den) with num inv = uh + e1 exactly and inv den = 1 - e2, so
// u = uh + e1 + uh (e2 - den_lo inv) to 2^-104. Other FMA levels: the same with a rounded
// division for inv; SSE2: the exact remainder of uh den (Dekker's product) over den.
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> atan_quotient(const xsimd::batch<double, A>& num,
                                                const xsimd::batch<double, A>& den,
                                                const xsimd::batch<double, A>& den_lo) noexcept {
    using B = xsimd::batch<double, A>;
    const B inv = dd::reciprocal(den);
    const B uh = num * inv;
    if constexpr (has_fma<A>) {
        const B e1 = fused_msub(inv, num, uh);
        const B e2 = dd::fnmadd(inv, den, B(1.0));
        return {uh, dd::fmadd(uh, dd::fnmadd(den_lo, inv, e2), e1)};
    } else {
        const dd::pair<A> p = dd::two_prod(uh, den);
        return {uh, (((num - p.hi) - p.lo) - uh * den_lo) * inv};
    }
}

// atan(uh + ul) - uh for |uh| <= 0.1312: ul + uh z P(z), z = uh^2 (ul / (1 + z) taken as ul:
// z ul < 2^-58.8 |uh|).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan_tail(const dd::pair<A>& u) noexcept {
    const xsimd::batch<double, A> z = u.hi * u.hi;
    return dd::fmadd(u.hi * z, atan_poly(z), u.lo);
}

// sqrt(q) as a pair hi + lo (about 2^-100 relative) for q in [2^-54, 1/2] and q = 0 (0, 0);
// q < 0 or NaN give a NaN hi. hi is the rounded root, lo = (q - hi^2) / (2 hi) with the
// residual exact; 1/(2 hi) needs only 2^-14 (the residual is below ulp(q)): rsqrt14 of 4q on
// AVX-512 (+2^-600 keeps q = 0 finite), a division elsewhere.
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> sqrt_pair(const xsimd::batch<double, A>& q) noexcept {
    using B = xsimd::batch<double, A>;
    const B hi = xsimd::sqrt(q);
    B r;
    if constexpr (has_fma<A>) {
        r = dd::fnmadd(hi, hi, q);
    } else {
        const dd::pair<A> p = dd::two_prod(hi, hi);
        r = (q - p.hi) - p.lo;
    }
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        const B half_inv(_mm512_rsqrt14_pd(dd::fmadd(q, B(4.0), B(0x1p-600))));
        return {hi, r * half_inv};
    } else
#endif
        return {hi, r / xsimd::max(hi + hi, B(0x1p-600))};
}

// asin(s) - s.hi for the reduced argument of a = |x| (a > 1 and NaN allowed: NaN results):
// s = a (a <= 1/2; a below invtrig_floor taken as 0) or sqrt((1 - a)/2) (a > 1/2).
template <class A>
struct asin_reduced {
    xsimd::batch<double, A> s_hi, tail;
    xsimd::batch_bool<double, A> big;  // a > 1/2
};

template <class A>
NUMFUSE_ALWAYS_INLINE asin_reduced<A> asin_reduce(const xsimd::batch<double, A>& a) noexcept {
    using B = xsimd::batch<double, A>;
    const auto big = a > B(0.5);
    const B a0 = xsimd::select(a < B(invtrig_floor), B(0.0), a);  // NaN stays
    const B q = dd::fnmadd(B(0.5), a0, B(0.5));  // (1 - a)/2, exact for a in [1/2, 1]
    const B z = xsimd::min(a0 * a0, q);          // a^2 (a <= 1/2) or q (a > 1/2): s^2
    const dd::pair<A> s = sqrt_pair(q);
    const B s_hi = xsimd::select(big, s.hi, a0);
    const B s_lo = xsimd::select(big, s.lo, B(0.0));
    return {s_hi, dd::fmadd(s_hi * z, asin_poly(z), s_lo), big};
}

// B + m (s_hi + tail) with B = b_hi + b_lo, m in {+-1, +-2}, |b_hi| >= |m s_hi| or b_hi = 0:
// b_hi + m s_hi split exactly (Fast2Sum), one rounding at the end.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> asin_finish(
    const asin_reduced<A>& r, const xsimd::batch<double, A>& m, const xsimd::batch<double, A>& b_hi,
    const xsimd::batch<double, A>& b_lo) noexcept {
    using B = xsimd::batch<double, A>;
    const B h = dd::fmadd(m, r.s_hi, b_hi);
    const B e = dd::fmadd(m, r.s_hi, b_hi - h);  // exact: m s_hi is, and so is b_hi - h
    return h + dd::fmadd(m, r.tail, b_lo + e);
}

// x's sign on result (>= 0 or NaN), and x itself where |x| < invtrig_floor (its result was
// computed at the floor or at 0). On x86 a NaN x stays through every lane operation (the
// first NaN operand is returned quieted, and each NaN operand carries x's payload, sign
// bit clear; its sign comes back here): x + x. Elsewhere (aarch64 negates NaN operands of
// fused multiply-subtracts) the NaN lanes are selected.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> with_sign_or_tiny_x(
    const xsimd::batch<double, A>& x, const xsimd::batch_bool<double, A>& tiny,
    const xsimd::batch<double, A>& result) noexcept {
    using B = xsimd::batch<double, A>;
    const B signed_result = xsimd::bitwise_or(result, xsimd::bitwise_and(x, B(-0.0)));
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
    return xsimd::select(tiny, x, signed_result);
#else
    return xsimd::select(tiny, x, xsimd::select(xsimd::isnan(x), x + x, signed_result));
#endif
}

}  // namespace detail

// asin(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> asin_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::abs(x);
    const auto r = detail::asin_reduce(a);
    // a <= 1/2: asin s; a > 1/2: pi/2 - 2 asin s.
    const B m = xsimd::select(r.big, B(-2.0), B(1.0));
    const B b_hi = xsimd::select(r.big, B(detail::pio2_hi), B(0.0));
    const B b_lo = xsimd::select(r.big, B(detail::pio2_lo), B(0.0));
    return detail::with_sign_or_tiny_x(x, a < B(detail::invtrig_floor),
                                       detail::asin_finish(r, m, b_hi, b_lo));
}

// acos(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> acos_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::abs(x);
    const auto r = detail::asin_reduce(a);
    // |x| <= 1/2: pi/2 - asin x; x > 1/2: 2 asin s; x < -1/2: pi - 2 asin s.
    const B sign = xsimd::bitwise_and(x, B(-0.0));
    const B m = xsimd::bitwise_xor(xsimd::select(r.big, B(2.0), B(-1.0)), sign);
    const auto neg_big = r.big & (x < B(0.0));
    const B b_hi = xsimd::select(r.big, xsimd::select(neg_big, B(2 * detail::pio2_hi), B(0.0)),
                                 B(detail::pio2_hi));
    const B b_lo = xsimd::select(r.big, xsimd::select(neg_big, B(2 * detail::pio2_lo), B(0.0)),
                                 B(detail::pio2_lo));
    const B res = detail::asin_finish(r, m, b_hi, b_lo);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

#if defined(__AVX512F__)
namespace detail {

// atan(x) on AVX-512 (the Method's second paragraph): no -1/a branch, one permute a table.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan_kernel_avx512(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const __m512d a = _mm512_abs_pd(x);
    // a clamped to [2^-200, 2^60] as in atan_kernel; vmaxpd / vminpd return their second
    // operand when either is NaN, so a NaN a stays.
    const __m512d ac =
        _mm512_min_pd(_mm512_set1_pd(0x1p60), _mm512_max_pd(_mm512_set1_pd(invtrig_floor), a));
    const __mmask8 in_table = _mm512_cmp_pd_mask(ac, _mm512_set1_pd(0x1p-4), _CMP_GE_OQ);
    // The table's slot from the bits of min(ac, 16^-); c and atan c zero below 1/16 and
    // for NaN.
    const __m512i slot = _mm512_srli_epi64(
        _mm512_castpd_si512(_mm512_min_pd(_mm512_set1_pd(0x1.fffffffffffffp+3), ac)), 51);
    const B c(_mm512_maskz_permutex2var_pd(in_table, _mm512_load_pd(atan_half_octave_c), slot,
                                           _mm512_load_pd(atan_half_octave_c + 8)));
    const B t(_mm512_maskz_permutex2var_pd(in_table, _mm512_load_pd(atan_half_octave_t), slot,
                                           _mm512_load_pd(atan_half_octave_t + 8)));
    const B acb(ac);
    // u = num / (den + den_lo): num = a - c exact (c = 0, or a and c in the same binade;
    // above 2^51 it rounds, where |u| / result < 1/21), den = 1 + c a rounded and den_lo its
    // error (1 - den is exact below 2^53; above, den_lo is off by ulp(den)/2, 2^-53 of den,
    // where again |u| / result < 1/21). uh = num / den correctly rounded (vdivpd: on Zen 5
    // cheaper than rcp14 and two Newton steps, the divider idle otherwise), ul = (num - uh
    // den - uh den_lo) / den with the remainder exact and 1/den from rcp14 (2^-14 of ul,
    // itself below 2^-52 |u|): uh + ul is u to 2^-65. The polynomial runs on uh (|uh| <=
    // 0.1116 < 0.1312, atan_poly's range): atan(uh + ul) = atan uh + ul / (1 + uh^2), and
    // ul uh^2 < 2^-58.3 |u| is left out.
    const B num = acb - c;
    const B den = dd::fmadd(c, acb, B(1.0));
    const B den_lo = dd::fmadd(c, acb, B(1.0) - den);
    const B uh = num / den;
    const B ul = dd::fnmadd(uh, den_lo, dd::fnmadd(uh, den, num)) * B(_mm512_rcp14_pd(den));
    const B z = uh * uh;
    const B tail = dd::fmadd(uh * z, atan_poly(z), ul);
    // t + uh split exactly (t = atan c > |uh|, or t = 0), one rounding at the end; t's own
    // error, 2^-63 of it, is left out.
    const B h = t + uh;
    const B e = uh - (h - t);
    const B res = h + (tail + e);
    // x's sign on res, and x itself where |x| < invtrig_floor, in one masked ternary-logic
    // operation: lanes outside the mask keep x; the others get res | (x & -0). A NaN x is
    // in the mask (not less than, unordered) and gets res, x's payload quieted, with x's sign.
    const __mmask8 keep = _mm512_cmp_pd_mask(a, _mm512_set1_pd(invtrig_floor), _CMP_NLT_UQ);
    return B(_mm512_castsi512_pd(_mm512_mask_ternarylogic_epi64(
        _mm512_castpd_si512(x), keep, _mm512_castpd_si512(res),
        _mm512_set1_epi64(std::int64_t(0x8000000000000000ull)), 0xec)));  // B | (A & C)
}

}  // namespace detail
#endif

// atan(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> atan_kernel(
    const xsimd::batch<double, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::atan_kernel_avx512(x);
#endif
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const B a = xsimd::abs(x);
    // [2^-200, 2^60]: atan of the clamped value rounds to the same pi/2 above; below, x is
    // taken at the end (the clamped result is larger than |x|). NaN stays NaN (operand order).
    const B ac = xsimd::min(B(0x1p60), xsimd::max(B(detail::invtrig_floor), a));
    // k = round(4 a) in the low bits of the shifted value, a clamped so that k <= 31.
    const B shifter(0x1.8p50);
    const B sh = xsimd::min(ac, B(7.75)) + shifter;
    const auto big = sh >= shifter + B(7.75);  // k = 31: a > 7.625
    const B c = sh - shifter;
    // u = num / (den + den_lo): (a - c) / (1 + c a) (a - c exact: c = 0, or a within 1/8
    // of c >= 1/4), or -1 / a.
    const B num = xsimd::select(big, B(-1.0), ac - c);
    const B den_c = dd::fmadd(c, ac, B(1.0));
    const B den = xsimd::select(big, ac, den_c);
    B den_lo;  // c a - (den - 1): den_c - 1 is exact (den_c in [1, 2] or a multiple of 2^-51)
    if constexpr (detail::has_fma<A>) {
        den_lo = dd::fmadd(c, ac, B(1.0) - den_c);
    } else {
        const dd::pair<A> p = dd::two_prod(c, ac);
        den_lo = (p.hi - (den_c - B(1.0))) + p.lo;
    }
    den_lo = xsimd::select(~big, den_lo, B(0.0));
    const dd::pair<A> u = detail::atan_quotient(num, den, den_lo);
    const B tail = detail::atan_tail(u);
    const I k = detail::as_int(sh);
    // AVX-512's permutes read only k's low 5 bits; the scalar loads elsewhere need k & 31.
    const I j = detail::is_avx512<A> ? k : k & I(31);
    const B t_hi = dd::lookup32(detail::atan_quarter_hi, j);
    const B t_lo = dd::lookup32(detail::atan_quarter_lo, j);
    // t_hi + uh split exactly: t_hi >= atan(1/4) > 1/8 >= |uh|, or t_hi = 0.
    const B h = t_hi + u.hi;
    const B e = u.hi - (h - t_hi);
    const B res = h + (tail + (t_lo + e));
    return detail::with_sign_or_tiny_x(x, a < B(detail::invtrig_floor), res);
}

}  // namespace numfuse::kernels
