// arcsinh, arccosh, arctanh on AVX-512: float32 lanes in float32 arithmetic and float64
// lanes.
//
// Contract
//   asinh_f32_avx512 / acosh_f32_avx512 / atanh_f32_avx512 (__m512) and the _f64_ forms
//   (__m512d): per lane, within 1 ULP (measured: docs/accuracy.md; float32 over every
//   input), special values as logpair.hpp's kernels (asinh(+-0, +-inf) = x, acosh(1) =
//   +0, acosh(x < 1) = NaN, acosh(+inf) = +inf, atanh(+-1) = +-inf, atanh(|x| > 1) = NaN;
//   a NaN x gives x quieted; the NaN of an invalid x is a default NaN, which the callers'
//   NaN policy rewrites to NumPy's). logpair.hpp's asinh/acosh/atanh kernels (float64)
//   and their _f32_ forms call them on AVX-512; the other levels keep logpair.hpp's.
//   acosh_f32 and atanh_f32 / atanh_f64 are also split as _nofix (garbage where x <= 1 /
//   |x| >= 1 or NaN) and _fix (the special-value fixup, on any lane): the kernel is
//   _fix(x, _nofix(x)), and the ufunc loops run _fix only on the batches they flag.
//
// Method
//   Each function is the log of a value y >= 1 carried as a pair yh + yl, the log taken of yh
//   plus the first-order term yl / yh (from a reciprocal of the precision each needs, below),
//   rounded once more:
//     asinh: y = a + sqrt(1 + a^2), a = |x|, 1 + a^2 as qh + ql (two FMAs: 1 - qh is exact
//       for 1 <= qh < 2^53; beyond, a > 2^26.5, its rounding moves y by below 2^-56 of itself,
//       2^-8 ULP of results >= 18.7), sqrt(q) = s0 + sl, yh + yl = s0 + a exactly (fast two-sum,
//       s0 > a) plus sl. The sign of x is put back.
//       float32: s0 = RN(sqrt(qh)) (vsqrtps), qh - s0^2 exact in one FMA, sl = (qh - s0^2
//       + ql) h with h ~ 1 / (2 sqrt(qh)) taken from qh beside the square root: for a < 2^-4
//       (qh < 1 + 2^-8), h = 3/4 - qh / 4 (relative error below (3/8) a^4 + 2^-24), else
//       rsqrt14(qh) / 2 (2^-14). |sl| <= min(ulp(s0) / 2, a^2 / 2) + ~2^-48, so h costs
//       below ((3/8) a^4 + 2^-24) 2^-24 <= 2^-36 a for a < 2^-4 (results >= 0.99 a) and
//       below 2^-14 2^-24 s0 <= 2^-38 y from 2^-4 on (results >= 0.062): 2^-10 ULP at most.
//       float64: s0 = RN(sqrt(qh)) (vsqrtpd), so qh - s0^2 is exact in one FMA, and
//       sl = (qh - s0^2 + ql) / (2 s0) from h ~ 1 / (2 s0): for a < 1/4, h = 1 - s0 / 2
//       (exact; s0 - 1 <= a^2 / 2, so its relative error (s0 - 1)^2 <= a^4 / 4), else
//       rcp14(2 s0) (2^-14). |sl| <= min(ulp(s0) / 2, a^2 / 2) + ~2^-105, so h's error costs
//       below 2^-14 |sl| <= 2^-67 y for a >= 1/4 (results >= 0.247) and below
//       a^4 / 4 * a^2 / 2 <= 2^-60 a for a < 1/4 (results >= 0.99 a). The first-order
//       term yl / yh takes 1 / y = sqrt(1 + a^2) - a = (s0 - a) + sl for a < 1/4 (s0 - a
//       >= 0.78, one rounding: 2^-52), rcp14(yh) elsewhere (|yl| <= ~ulp(yh), so its
//       2^-14 costs below 2^-65 against results >= 0.247). No Newton step.
//     acosh: y = x + sqrt(p), p = x^2 - 1 = d (d + 2) with d = x - 1 exact (float32: p as
//       ph + pl in two FMAs; float64: x + 1 as a pair, d (x + 1) as a pair), the square root
//       and y as for asinh. float32: r = rsqrt14(ph) unrefined (the error is relative to
//       sqrt(2 (x - 1)), which is about the result near 1). float64: s0 = vsqrtpd(qh), sl
//       with rcp14(2 s0) alone (|sl| <= ~2^-52 s0: 2^-66 s0, below 2^-65 of the result,
//       since log y >= (y - 1) / y >= s / y); 1 / y = x - sqrt(x^2 - 1) = (x - s0) - sl for
//       x < 1.25 (x - s0 >= 1/2: two roundings), rcp14(yh) from 1.25 on (results >= 0.69,
//       |yl / yh| <= 2^-51: 2^-65).
//     atanh: log(q) / 2, q = (1 + a) / (1 - a) = 2 / (1 - a) - 1, a = |x| < 1, with
//       1 - a = dh + dl an exact pair: g = RN(2 / dh) (vdivps: no Newton
//       steps), qh = g - 1 (exact: 2 <= g < 2^p; for a = 1 - 2^-p, g = 2^(p+1) and the
//       rounding of g - 1 is 2^-p relative, below 2^-5 ULP of a result near p ln2 / 2),
//       the residual rho = 2 - g dh - g dl (2 - g dh exact: the remainder of a
//       correctly rounded quotient; then one FMA), so q = qh + rho / (1 - a) and
//       log q = log qh + rho / (1 + a) to first order (rho / (1 + a) <= ~2^-p+2; the
//       second-order term is below 2^(-2p+4), far below results >= 2^-27 (float32
//       2^-12) times eps). 1 / (1 + a) from rcp14(2 + 2a) and one Newton step (relative
//       error below 2^-23.4, within 2^-8 a for a >= 2^-12), so rho rn is within 2^(-p-6) a
//       of rho / (1 + a), below 2^-6 ULP of the result (>= a). The float32 kernel takes
//       log q / 2 with every term of log_f32_ge1 halved (Half: the tables' T_hi / 2, T_lo / 2,
//       ln2 / 2, W / 2, the last sum t / 2 + X / 2 as one FMA), which are exact scalings of
//       the same roundings: the bits of RN(log q) / 2 with no multiplication by 1/2.
//       (float64 below.)
//     atanh float64 (atanh_f64_avx512_nofix): the same quotient at half scale, with a log of
//       its own: g = RN(0.5 / dh) (vdivpd; g = RN(1 / dh) / 2 exactly), h = RN(2g - 1/2) = qh / 2
//       (exact: g < 2^51; from there its rounding is below 2^-52 of h, 2^-58 of the result),
//       rho = 1/2 - g dh - g dl (the first step exact, then one FMA: rho is half the
//       float32 form's residual, |rho| <= 2^-53 for a < 1/2, 2^-54 from 1/2 on, where dl = 0),
//       and atanh = log(2h) / 2 + rho / (1 + a) to first order (the second-order term is
//       below 2^-104). 1 / (1 + a) = 1/2 + (dh / 2) / (1 + a), so from u = 1 - a + a^2 =
//       dh + a^2 (one FMA, relative error a^3), v = 1/2 + (dh / 2) u is 1 / (1 + a) within
//       (dh / 2) a^3 relative and rn = 1 + dh v is 2 / (1 + a) within (dh / 2)^2 a^3: rho rn
//       is within |rho| dh^2 a^3 / (2 (1 + a)) of its value, below 2^-58.6 of atanh(a) over
//       [0, 1) (dh^2 a^3 / (2 (1 + a) atanh(a)) is at most 0.0197, next to a = 0.43, where
//       |rho| <= 2^-53; from 1/2 on |rho| <= 2^-54). The log of h >= 1/2 (normal: no
//       getmant / getexp) is log.hpp's 16-cell table reduction on h's bits (z = h 2^-k in
//       [0.640625, 1.28125), k = the exponent field as an integer, vcvtqq2pd) with every term
//       halved: the cells' invc / 2 (t / 2 = z invc / 2 - 1/2 exact in one FMA), (-log(invc) + ln2)
//       / 2 as hi + lo (hi on the 2^-43 grid, so that k ln2_hi / 2 + hi is exact; ln2 for the 2 of
//       2h), and log64_bits_r's polynomial in t / 2 with each coefficient scaled by its power
//       of two (the same roundings as log.hpp's at half scale), so the result is
//       (log.hpp's log pair of 2h) / 2 with no multiplication by 1/2, with the log pair's
//       error. rho rn's error and h's rounding add below 2^-58 to it before the last rounding
//       (the measured maximum, 0.587 ULP next to |x| = 1/65 where the log's cells 11 and 12
//       meet, is the log pair's, the same as the float32 form's quotient with log.hpp's kernel
//       gave; tests/test_inverse_hyperbolic.py enforces 1 ULP).
//   The log: float64 log.hpp's table kernel (a hi + lo pair); float32 its own, log_f32_ge1
//   (32 cells, a degree-3 polynomial, two roundings: within 0.75 ULP + the pair's 2^-28,
//   tools/logpair_f32_remez.py).
//   The pair keeps results near 0 accurate: y - 1 is about |x| (asinh, atanh) or
//   sqrt(2 (x - 1)) (acosh). Lanes below the cut-off (2^-12 float32, 2^-27 float64) return
//   x (x -+ x^3/6 is within half an ULP of x there); those lanes, like every other lane,
//   are computed on a value clamped into [cut-off / 2 or so, 2^12 (2^28)] (no multiplication
//   sees a subnormal: on x86 that costs a microcode assist per batch). Above 2^12 (2^28)
//   asinh and acosh are log(2 |x|) (the neglected 1 / (4 x^2) is below 2^-26 (2^-56) of
//   the result). Special lanes are repaired by one vfixupimm.
#pragma once

#include <cstdint>

#include "kernels/avx512_lanes.hpp"
#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/log.hpp"
#include "kernels/logbase_f32.hpp"

#if defined(__AVX512F__)
namespace numfuse::kernels::detail {

// sqrt(qh + ql) = s0 + sl for qh in [1, 2^24 + 1] and |ql| <= ulp(qh) / 2 (see the method
// above).
struct sqrt_ps_pair {
    __m512 s0, sl;
};
NUMFUSE_ALWAYS_INLINE sqrt_ps_pair sqrt_f32_pair(__m512 qh, __m512 ql) noexcept {
    const __m512 s0 = _mm512_sqrt_ps(qh);  // correctly rounded: qh - s0^2 is exact
    const __m512 d = _mm512_add_ps(_mm512_fnmadd_ps(s0, s0, qh), ql);
    // h ~ 1 / (2 sqrt(qh)) from qh alone (beside the square root, not after it): below
    // qh = 1 + 2^-8, 3/4 - qh / 4 (relative error below (3/8)(qh - 1)^2), else rsqrt14 / 2.
    const __mmask16 near1 = _mm512_cmp_ps_mask(qh, _mm512_set1_ps(0x1.01p0f), _CMP_LT_OQ);
    const __m512 h =
        _mm512_mask_mov_ps(_mm512_mul_ps(_mm512_rsqrt14_ps(qh), _mm512_set1_ps(0.5f)), near1,
                           _mm512_fnmadd_ps(qh, _mm512_set1_ps(0.25f), _mm512_set1_ps(0.75f)));
    return {s0, _mm512_mul_ps(d, h)};
}

// The pair steps that the float32 and float64 kernels share, written once for both
// register types (each operation is the one intrinsic of its lane width).
// lane_ops<T>::V is the register of element type T.
template <class T>
struct lane_ops;
template <>
struct lane_ops<float> {
    using V = __m512;
    static __m512 set1(float v) noexcept { return _mm512_set1_ps(v); }
    static __m512 add(__m512 a, __m512 b) noexcept { return _mm512_add_ps(a, b); }
    static __m512 sub(__m512 a, __m512 b) noexcept { return _mm512_sub_ps(a, b); }
    static __m512 mul(__m512 a, __m512 b) noexcept { return _mm512_mul_ps(a, b); }
    static __m512 fmadd(__m512 a, __m512 b, __m512 c) noexcept { return _mm512_fmadd_ps(a, b, c); }
    static __m512 fnmadd(__m512 a, __m512 b, __m512 c) noexcept {
        return _mm512_fnmadd_ps(a, b, c);
    }
    static __m512 rcp14(__m512 a) noexcept { return _mm512_rcp14_ps(a); }
    static __m512 div(__m512 a, __m512 b) noexcept { return _mm512_div_ps(a, b); }
    // where a < t: if_less, else otherwise
    static __m512 select_less(__m512 a, float t, __m512 if_less, __m512 otherwise) noexcept {
        return _mm512_mask_mov_ps(otherwise, _mm512_cmp_ps_mask(a, set1(t), _CMP_LT_OQ), if_less);
    }
};
template <>
struct lane_ops<double> {
    using V = __m512d;
    static __m512d set1(double v) noexcept { return _mm512_set1_pd(v); }
    static __m512d add(__m512d a, __m512d b) noexcept { return _mm512_add_pd(a, b); }
    static __m512d sub(__m512d a, __m512d b) noexcept { return _mm512_sub_pd(a, b); }
    static __m512d mul(__m512d a, __m512d b) noexcept { return _mm512_mul_pd(a, b); }
    static __m512d fmadd(__m512d a, __m512d b, __m512d c) noexcept {
        return _mm512_fmadd_pd(a, b, c);
    }
    static __m512d fnmadd(__m512d a, __m512d b, __m512d c) noexcept {
        return _mm512_fnmadd_pd(a, b, c);
    }
    static __m512d rcp14(__m512d a) noexcept { return _mm512_rcp14_pd(a); }
    static __m512d div(__m512d a, __m512d b) noexcept { return _mm512_div_pd(a, b); }
    static __m512d select_less(__m512d a, double t, __m512d if_less, __m512d otherwise) noexcept {
        return _mm512_mask_mov_pd(otherwise, _mm512_cmp_pd_mask(a, set1(t), _CMP_LT_OQ), if_less);
    }
};

template <class T>
struct lane_pair {
    typename lane_ops<T>::V hi, lo;
};

// big + small + tail as hi + lo: hi = big + small rounded, lo = its rounding error (exact:
// a fast two-sum, |big| >= |small|) plus tail (y = x + sqrt(...) of asinh and acosh).
template <class T, class V = typename lane_ops<T>::V>
NUMFUSE_ALWAYS_INLINE lane_pair<T> sum_plus(V big, V small, V tail) noexcept {
    using O = lane_ops<T>;
    const V hi = O::add(big, small);
    return {hi, O::add(O::sub(small, O::sub(hi, big)), tail)};
}

// atanh's quotient (1 + a) / (1 - a) = qh + rho / (1 - a) for a in [0, 1) (method at the
// top): g = RN(2 / dh), qh = g - 1, rho = 2 - g (dh + dl); rn ~ 1 / (2 (1 + a)) within
// 2^-23.4 for the first-order term rho / (1 + a) ~ 2 rho rn, halved for atanh's halved log.
// Lanes with a >= 1 give garbage (1 - a = 0: infinities and NaNs, no trap).
template <class T>
struct atanh_quotient {
    typename lane_ops<T>::V qh, rho, rn;
};
template <class T, class V = typename lane_ops<T>::V>
NUMFUSE_ALWAYS_INLINE atanh_quotient<T> atanh_quotient_of(V a) noexcept {
    using O = lane_ops<T>;
    const V one = O::set1(1), two = O::set1(2);
    const V dh = O::sub(one, a);
    const V dl = O::sub(O::sub(one, dh), a);  // 1 - a = dh + dl
    const V g = O::div(two, dh);
    const V rho = O::fnmadd(g, dl, O::fnmadd(g, dh, two));  // 2 - g dh exact
    // 2 (1 + a) rounded once (2^-24), rcp14 (2^-14) and one Newton step: rn = r0 (1 + e),
    // e = 1 - r0 2 (1 + a) rounded (2^-38), within 2^-28 + 2^-38 + 2^-24 (rn's rounding)
    const V twice = O::fmadd(a, two, two);
    const V r0 = O::rcp14(twice);
    const V rn = O::fmadd(r0, O::fnmadd(r0, twice, one), r0);
    return {O::sub(g, one), rho, rn};
}

// vfixupimm tables, float32 and float64 (one nibble per class of the classified operand:
// QNaN, SNaN, 0, +1, -inf, +inf, negative, positive; 0 keeps the computed value, 1 the
// operand, 2 the operand quieted, 3 the default NaN, 5 +inf, 8 +0).
// asinh on x: NaN -> x quieted, +-0 and +-inf -> x.
inline constexpr int asinh_fixup = 0x00110121;
// acosh on z = x - 1: NaN -> the operand quieted (x's NaN), -inf and negative (x < 1) ->
// NaN, 0 (x = 1) -> +0, +inf -> +inf, positive -> computed.
inline constexpr int acosh_fixup = 0x03530822;
// atanh on z = |x| - 1 (the sign of x is put back after): NaN -> the operand quieted,
// 0 (|x| = 1) -> +inf, positive and +inf (|x| > 1) -> NaN, negative -> computed.
inline constexpr int atanh_fixup = 0x30303522;

// float32 ------------------------------------------------------------------------------

// The float32 natural log of y >= 1 (tools/logpair_f32_remez.py): y = m 2^e, m = getmant(y) in
// [1, 2), e = getexp(y) >= 0, the cell i = the top 5 fraction bits of m, invc = j/64 per cell
// (t = m invc - 1 exact in one FMA, t in [-0.0205, 0.03125)), T = -log(invc) = T_hi (2^-16
// grid, so e ln2_hi + T_hi is exact) + T_lo.
alignas(64) inline constexpr float logn_f32_invc[32] = {
    0x1.0p+0f,  0x1.fp-1f,  0x1.ep-1f,  0x1.dp-1f,  0x1.c8p-1f, 0x1.b8p-1f, 0x1.a8p-1f, 0x1.ap-1f,
    0x1.98p-1f, 0x1.9p-1f,  0x1.8p-1f,  0x1.78p-1f, 0x1.7p-1f,  0x1.68p-1f, 0x1.6p-1f,  0x1.58p-1f,
    0x1.5p-1f,  0x1.48p-1f, 0x1.48p-1f, 0x1.4p-1f,  0x1.38p-1f, 0x1.3p-1f,  0x1.3p-1f,  0x1.28p-1f,
    0x1.2p-1f,  0x1.2p-1f,  0x1.18p-1f, 0x1.1p-1f,  0x1.1p-1f,  0x1.08p-1f, 0x1.08p-1f, 0x1.0p-1f,
};
alignas(64) inline constexpr float logn_f32_thi[32] = {
    0x0p+0f,      0x1.042p-5f,  0x1.086p-4f,  0x1.933p-4f,  0x1.da7p-4f,  0x1.366p-3f,
    0x1.824p-3f,  0x1.a94p-3f,  0x1.d1p-3f,   0x1.f99p-3f,  0x1.2698p-2f, 0x1.3c24p-2f,
    0x1.522cp-2f, 0x1.68acp-2f, 0x1.7fbp-2f,  0x1.973cp-2f, 0x1.af54p-2f, 0x1.c8p-2f,
    0x1.c8p-2f,   0x1.e148p-2f, 0x1.fb34p-2f, 0x1.0ae8p-1f, 0x1.0ae8p-1f, 0x1.188ep-1f,
    0x1.2696p-1f, 0x1.2696p-1f, 0x1.3502p-1f, 0x1.43dap-1f, 0x1.43dap-1f, 0x1.5322p-1f,
    0x1.5322p-1f, 0x1.62e4p-1f,
};
alignas(64) inline constexpr float logn_f32_tlo[32] = {
    0x0p+0f,          -0x1.44ec32p-18f, -0x1.9d2988p-18f, 0x1.797566p-18f,  0x1.3b1c22p-19f,
    -0x1.a7f538p-22f, -0x1.f4d572p-18f, -0x1.2c3752p-19f, 0x1.bf932ap-18f,  0x1.c6cb3cp-19f,
    -0x1.deecb2p-18f, 0x1.277334p-18f,  -0x1.1f8c76p-18f, 0x1.07d38ep-19f,  -0x1.7109fap-20f,
    -0x1.cbcecap-18f, -0x1.6adb74p-18f, -0x1.8e2eaap-20f, -0x1.8e2eaap-20f, 0x1.4344e4p-19f,
    0x1.8af7a4p-18f,  -0x1.23a5f6p-18f, -0x1.23a5f6p-18f, 0x1.c81e48p-18f,  0x1.089a6ep-20f,
    0x1.089a6ep-20f,  0x1.15b3b2p-18f,  -0x1.a0db88p-26f, -0x1.a0db88p-26f, 0x1.c4d0dp-18f,
    0x1.c4d0dp-18f,   0x1.7f7d1cp-20f,
};

// T_hi / 2 and T_lo / 2 (exact) for log_f32_ge1<..., true>.
struct logn_f32_half_tables {
    alignas(64) float thi[32];
    alignas(64) float tlo[32];
};
constexpr logn_f32_half_tables logn_f32_halved() noexcept {
    logn_f32_half_tables h{};
    for (int i = 0; i < 32; ++i) {
        h.thi[i] = logn_f32_thi[i] * 0.5f;
        h.tlo[i] = logn_f32_tlo[i] * 0.5f;
    }
    return h;
}
alignas(64) inline constexpr logn_f32_half_tables logn_f32_half = logn_f32_halved();

// log(y) + num * rcp for y >= 1 finite (+inf gives +inf) and num * rcp the first-order term
// of the caller's low part (|num * rcp| <= ~2^-14 y, in error by at most 2^-14 of itself);
// lanes in plus_ln2: log(y) + ln2 (e plus one: log(2y) without forming 2y). log y = (e ln2_hi
// + T_hi) + (t + (t^2 W(t) + e ln2_lo + T_lo + num rcp)): the first sum exact, then two
// roundings; j per cell keeps the inner sum's binade below the result's where the first sum
// is not 0 (tools/logpair_f32_remez.py), so the inner rounding costs at most 1/4 ULP (cell 1;
// 1/8 or less elsewhere), and where e = 0 in cell 0 (invc = 1, T = 0) the result is the last
// rounding alone. W: degree 3, weighted error 2^-32.6.
// Half: (log(y) + num * rcp) / 2, every term halved (exact), the same roundings: the bits of
// the full form times 1/2.
template <bool PlusLn2, bool Half = false>
NUMFUSE_ALWAYS_INLINE __m512 log_f32_ge1(__m512 y, __m512 num, __m512 rcp,
                                         [[maybe_unused]] __mmask16 plus_ln2) noexcept {
    constexpr float s = Half ? 0.5f : 1.0f;
    const __m512 m = _mm512_getmant_ps(y, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    __m512 e = _mm512_getexp_ps(y);
    if constexpr (PlusLn2) e = _mm512_mask_add_ps(e, plus_ln2, e, _mm512_set1_ps(1.0f));
    // The cell from y's own bits (vpermt2ps reads the low 5 bits of each index).
    const __m512i idx = _mm512_srli_epi32(_mm512_castps_si512(y), 18);
    const __m512 t = _mm512_fmsub_ps(m, logb_f32_entry(logn_f32_invc, idx),
                                     _mm512_set1_ps(1.0f));  // exact
    const __m512 hi = _mm512_fmadd_ps(e, _mm512_set1_ps(0x1.62e4p-1f * s),
                                      logb_f32_entry(Half ? logn_f32_half.thi : logn_f32_thi, idx));
    __m512 lo = _mm512_fmadd_ps(e, _mm512_set1_ps(0x1.7f7d1cp-20f * s),
                                logb_f32_entry(Half ? logn_f32_half.tlo : logn_f32_tlo, idx));
    lo = _mm512_fmadd_ps(num, rcp, lo);
    __m512 w = _mm512_fmadd_ps(_mm512_set1_ps(0x1.8bd0dp-3f * s), t,  // 0.193269371986
                               _mm512_set1_ps(-0x1.000b9ap-2f * s));  // -0.250044256449
    w = _mm512_fmadd_ps(w, t, _mm512_set1_ps(0x1.555614p-2f * s));  // 0.333336174488
    w = _mm512_fmadd_ps(w, t, _mm512_set1_ps(-0.5f * s));
    const __m512 x = _mm512_fmadd_ps(_mm512_mul_ps(t, t), w, lo);
    const __m512 p = Half ? _mm512_fmadd_ps(t, _mm512_set1_ps(0.5f), x) : _mm512_add_ps(t, x);
    return _mm512_add_ps(hi, p);
}

// Without the special-value fixup (the _fix forms below repair the lanes the ufunc loops
// flag: arccosh x <= 1 and NaN; arctanh |x| >= 1 and NaN).
inline __m512 acosh_f32_avx512_nofix(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    // x > 2^12 (+inf included: getmant(+inf) = 1, getexp(+inf) = +inf give +inf): log(x) + ln2.
    const __mmask16 huge = _mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1.0p12f), _CMP_GT_OQ);
    const __m512 xc = _mm512_min_ps(x, _mm512_set1_ps(0x1.0p12f));  // NaN lanes: 2^12
    const __m512 d = _mm512_sub_ps(xc, one);  // exact
    const __m512 d2 = _mm512_add_ps(d, d);
    // x^2 - 1 = d (d + 2) = ph + pl: d2 - ph is exact for d <= 2 (Sterbenz), beyond that
    // within 2^-25 of p (results above 1.76 there, 1/8 ULP at most).
    const __m512 ph = _mm512_fmadd_ps(d, d, d2);
    const __m512 pl = _mm512_fmadd_ps(d, d, _mm512_sub_ps(d2, ph));
    // sqrt(p) = s0 + sl, s0 = ph r, sl = (r / 2)(p - s0^2) with r = rsqrt14(ph) unrefined:
    // error (3/2) 2^-28 s.
    const __m512 r = _mm512_rsqrt14_ps(ph);
    const __m512 s0 = _mm512_mul_ps(ph, r);
    const __m512 sl = _mm512_mul_ps(_mm512_mul_ps(r, _mm512_set1_ps(0.5f)),
                                    _mm512_add_ps(_mm512_fnmadd_ps(s0, s0, ph), pl));
    const lane_pair<float> y = sum_plus<float>(xc, s0, sl);
    return log_f32_ge1<true>(_mm512_mask_mov_ps(y.hi, huge, x), _mm512_maskz_mov_ps(~huge, y.lo),
                             _mm512_rcp14_ps(y.hi), huge);
}
inline __m512 acosh_f32_avx512_fix(__m512 x, __m512 y) noexcept {
    return avx512::fixup<acosh_fixup>(y, _mm512_sub_ps(x, _mm512_set1_ps(1.0f)));
}

inline __m512 atanh_f32_avx512_nofix(__m512 x) noexcept {
    // a = |x| clamped into [2^-12, 2] (vrangeps: the larger magnitude, sign cleared; |x| >= 1
    // lanes give garbage that the fixup replaces, and no operation sees a subnormal on the
    // way: 1 / (1 - |x|) for |x| >= 2^126 would be one); lanes with |x| <= 2^-12 return x.
    const __m512 a =
        _mm512_min_ps(_mm512_range_ps(x, _mm512_set1_ps(0x1.0p-12f), 0x0B), _mm512_set1_ps(2.0f));
    const __mmask16 tiny = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_EQ_OQ);
    const atanh_quotient<float> q = atanh_quotient_of<float>(a);
    const __m512 res = log_f32_ge1<false, true>(q.qh, q.rho, q.rn, 0);  // log(q) / 2
    return _mm512_mask_mov_ps(avx512::sign_from(res, x), tiny, x);
}
inline __m512 atanh_f32_avx512_fix(__m512 x, __m512 y) noexcept {
    const __m512 a = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
    return avx512::sign_from(avx512::fixup<atanh_fixup>(y, _mm512_sub_ps(a, _mm512_set1_ps(1.0f))),
                             x);
}

inline __m512 asinh_f32_avx512(__m512 x) noexcept {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 a = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
    const __mmask16 huge = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p12f), _CMP_GT_OQ);
    const __mmask16 tiny = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_LT_OQ);
    // NaN lanes: min / max return their second operand.
    const __m512 ac =
        _mm512_max_ps(_mm512_min_ps(a, _mm512_set1_ps(0x1.0p12f)), _mm512_set1_ps(0x1.0p-12f));
    const __m512 qh = _mm512_fmadd_ps(ac, ac, one);
    const __m512 ql = _mm512_fmadd_ps(ac, ac, _mm512_sub_ps(one, qh));  // exact, rounded once
    const sqrt_ps_pair s = sqrt_f32_pair(qh, ql);
    const lane_pair<float> y = sum_plus<float>(s.s0, ac, s.sl);
    // Huge lanes: log(a) + ln2 (yl = 0 there; yh's rcp14 from the clamped lane).
    __m512 res = log_f32_ge1<true>(_mm512_mask_mov_ps(y.hi, huge, a),
                                   _mm512_maskz_mov_ps(~huge, y.lo), _mm512_rcp14_ps(y.hi), huge);
    res = _mm512_mask_mov_ps(avx512::sign_from(res, x), tiny, x);
    return avx512::fixup<asinh_fixup>(res, x);
}

inline __m512 acosh_f32_avx512(__m512 x) noexcept {
    return acosh_f32_avx512_fix(x, acosh_f32_avx512_nofix(x));
}
inline __m512 atanh_f32_avx512(__m512 x) noexcept {
    return atanh_f32_avx512_fix(x, atanh_f32_avx512_nofix(x));
}

// float64 ------------------------------------------------------------------------------

// log(xh + xl) + c_hi + c_lo, rounded once, for xh positive, normal or subnormal and
// finite, |xl| <= ulp(xh), and c = 0 or ln2 (|c_hi| <= |log xh| where c != 0); other lanes:
// garbage. No division: log.hpp's table pair of xh (relative error ~2^-61), the
// first-order term xl / xh from rcp14 (2^-40) and one correction (2^-80; the second-order
// term (xl / xh)^2 / 2 <= 2^-105 is left out, as log_core does).
// log(xh + xl) as hi + lo (lo = the table pair's low part plus xl / xh), unrounded: the part
// of log_sum_avx512 before c, shared with log1p (logpair.hpp), which has no c.
inline log_pd_pair log_pair_sum_avx512(__m512d xh, __m512d xl) noexcept {
    const log_pd_pair p = log_f64_avx512_pair(xh);
    const __m512d r = dd::reciprocal_approx(xsimd::batch<double, xsimd::avx512f>(xh));
    const __m512d q0 = _mm512_mul_pd(xl, r);
    const __m512d q = _mm512_fmadd_pd(r, _mm512_fnmadd_pd(q0, xh, xl), q0);
    return {p.hi, _mm512_add_pd(p.lo, q)};
}
inline __m512d log_sum_avx512(__m512d xh, __m512d xl, __m512d c_hi, __m512d c_lo) noexcept {
    const log_pd_pair p = log_pair_sum_avx512(xh, xl);
    const __m512d sh = _mm512_add_pd(p.hi, c_hi);
    const __m512d sl = _mm512_add_pd(_mm512_sub_pd(p.hi, sh), c_hi);  // exact: |p.hi| >= |c_hi|
    return _mm512_add_pd(sh, _mm512_add_pd(sl, _mm512_add_pd(p.lo, c_lo)));
}
inline constexpr double ln2_pair_hi = 0x1.62e42fefa39efp-1, ln2_pair_lo = 0x1.abc9e3b39803fp-56;

// log(yh + yl) for yh >= 1 finite, |yl| <= ~2 ulp(yh); lanes in huge: log(big) + ln2 (the
// table kernel's k plus one), yl = 0 there. yl / yh as yl r, r ~ 1 / yh from the caller
// (its precision per function: the method at the top).
NUMFUSE_ALWAYS_INLINE __m512d log_f64_pair_arg(__m512d yh, __m512d yl, __m512d r, __m512d big,
                                               __mmask8 huge) noexcept {
    const log_pd_pair p = log_f64_avx512_pair_impl<true>(_mm512_mask_mov_pd(yh, huge, big), huge);
    const __m512d q = _mm512_mul_pd(_mm512_maskz_mov_pd(~huge, yl), r);
    return _mm512_add_pd(p.hi, _mm512_add_pd(p.lo, q));
}

inline __m512d asinh_f64_avx512(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d a = _mm512_andnot_pd(_mm512_set1_pd(-0.0), x);
    const __mmask8 huge = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.0p28), _CMP_GT_OQ);
    const __mmask8 tiny = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.0p-27), _CMP_LT_OQ);
    const __m512d ac =
        _mm512_max_pd(_mm512_min_pd(a, _mm512_set1_pd(0x1.0p28)), _mm512_set1_pd(0x1.0p-28));
    const __mmask8 small = _mm512_cmp_pd_mask(ac, _mm512_set1_pd(0.25), _CMP_LT_OQ);
    const __m512d qh = _mm512_fmadd_pd(ac, ac, one);
    const __m512d ql = _mm512_fmadd_pd(ac, ac, _mm512_sub_pd(one, qh));
    // sqrt(qh + ql) = s0 + sl (method at the top)
    const __m512d s0 = _mm512_sqrt_pd(qh);
    const __m512d d = _mm512_add_pd(_mm512_fnmadd_pd(s0, s0, qh), ql);
    const __m512d h = _mm512_mask_mov_pd(_mm512_rcp14_pd(_mm512_add_pd(s0, s0)), small,
                                         _mm512_fnmadd_pd(s0, _mm512_set1_pd(0.5), one));
    const __m512d sl = _mm512_mul_pd(d, h);
    const lane_pair<double> y = sum_plus<double>(s0, ac, sl);
    const __m512d r =
        _mm512_mask_mov_pd(_mm512_rcp14_pd(y.hi), small, _mm512_add_pd(_mm512_sub_pd(s0, ac), sl));
    __m512d res = avx512::sign_from(log_f64_pair_arg(y.hi, y.lo, r, a, huge), x);
    res = _mm512_mask_mov_pd(res, tiny, x);
    return avx512::fixup<asinh_fixup>(res, x);
}

inline __m512d acosh_f64_avx512(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0);
    const __mmask8 huge = _mm512_cmp_pd_mask(x, _mm512_set1_pd(0x1.0p28), _CMP_GT_OQ);
    const __m512d xc = _mm512_max_pd(_mm512_min_pd(x, _mm512_set1_pd(0x1.0p28)),
                                     _mm512_set1_pd(0x1.0000000000001p0));
    const __mmask8 near1 = _mm512_cmp_pd_mask(xc, _mm512_set1_pd(1.25), _CMP_LT_OQ);
    const __m512d d = _mm512_sub_pd(xc, one);  // exact
    const __m512d wh = _mm512_add_pd(xc, one);
    const __m512d wl = _mm512_sub_pd(one, _mm512_sub_pd(wh, xc));
    const __m512d qh = _mm512_mul_pd(d, wh);
    const __m512d ql = _mm512_fmadd_pd(d, wl, _mm512_fmsub_pd(d, wh, qh));
    // sqrt(qh + ql) = s0 + sl (method at the top)
    const __m512d s0 = _mm512_sqrt_pd(qh);
    const __m512d sl = _mm512_mul_pd(_mm512_add_pd(_mm512_fnmadd_pd(s0, s0, qh), ql),
                                     _mm512_rcp14_pd(_mm512_add_pd(s0, s0)));
    const lane_pair<double> y = sum_plus<double>(xc, s0, sl);
    const __m512d r =
        _mm512_mask_mov_pd(_mm512_rcp14_pd(y.hi), near1, _mm512_sub_pd(_mm512_sub_pd(xc, s0), sl));
    const __m512d res = log_f64_pair_arg(y.hi, y.lo, r, x, huge);
    return avx512::fixup<acosh_fixup>(res, _mm512_sub_pd(x, one));
}

// atanh_f64_avx512_nofix's cells: log.hpp's log_bits_* cells at half scale (the method at the
// top): invc / 2, (-log(invc) + ln2) / 2 = hi + lo (hi exact: log_bits_hi and ln2_hi lie on
// the 2^-42 grid).
struct atanh_half_cells {
    alignas(64) double invc[16];
    alignas(64) double hi[16];
    alignas(64) double lo[16];
};
constexpr atanh_half_cells atanh_half_cells_of() noexcept {
    atanh_half_cells c{};
    for (int i = 0; i < 16; ++i) {
        c.invc[i] = log_bits_invc[i] * 0.5;
        c.hi[i] = (log_bits_hi[i] + log_consts<double>::ln2_hi) * 0.5;
        c.lo[i] = (log_bits_lo[i] + log_consts<double>::ln2_lo) * 0.5;
    }
    return c;
}
inline constexpr atanh_half_cells atanh_half_cells_tab = atanh_half_cells_of();
// log64_bits_r[i] * 2^(i + 2): -1 + Σ r[i] 2^(i+2) s^(i+1) = 2 (-1/2 + t R(t)) at t = 2s.
constexpr double atanh_half_r(int i) noexcept {
    double scale = 4.0;
    for (int j = 0; j < i; ++j) scale *= 2.0;
    return log64_bits_r[i] * scale;
}

// Without the special-value fixup (atanh_f64_avx512_fix repairs |x| >= 1 and NaN lanes).
// Method at the top. |x| >= 1 lanes give garbage without a trap or a subnormal operand in
// the batches that hold none (a = |x| >= 2^-28 everywhere).
inline __m512d atanh_f64_avx512_nofix(__m512d x) noexcept {
    const __m512d one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5);
    // a = max(|x|, 2^-28) (vrangepd: the larger magnitude, sign cleared); lanes with
    // |x| < 2^-27 return x.
    const __m512d a = _mm512_range_pd(x, _mm512_set1_pd(0x1.0p-28), 0x0B);
    const __mmask8 computed = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.0p-27), _CMP_GE_OQ);
    // 1 - a = dh + dl exactly; g = RN(0.5 / dh), rho = 1/2 - g (dh + dl), h = 2g - 1/2
    const __m512d dh = _mm512_sub_pd(one, a);
    const __m512d dl = _mm512_sub_pd(_mm512_sub_pd(one, dh), a);
    const __m512d g = _mm512_div_pd(half, dh);
    const __m512d rho = _mm512_fnmadd_pd(g, dl, _mm512_fnmadd_pd(g, dh, half));  // first exact
    // rn ~ 2 / (1 + a): 1 + dh v, v = 1/2 + (dh / 2) (dh + a^2) ~ 1 / (1 + a)
    const __m512d v = _mm512_fmadd_pd(_mm512_mul_pd(dh, half), _mm512_fmadd_pd(a, a, dh), half);
    const __m512d rn = _mm512_fmadd_pd(dh, v, one);
    const __m512d h = _mm512_fmsub_pd(g, _mm512_set1_pd(2.0), half);
    // h = z 2^k, the cell from h's bits (log_cell_f64_avx512's reduction; h is normal)
    const __m512i bits = _mm512_castpd_si512(h);
    const __m512i tmp =
        _mm512_sub_epi64(bits, _mm512_set1_epi64(static_cast<long long>(log_bits_off)));
    const __m512i k_bits =
        _mm512_and_si512(tmp, _mm512_set1_epi64(static_cast<long long>(0xfff0000000000000ull)));
    const __m512d z = _mm512_castsi512_pd(_mm512_sub_epi64(bits, k_bits));
    const __m512i idx = _mm512_srli_epi64(tmp, 48);
    const __m512d k = _mm512_cvtepi64_pd(_mm512_srai_epi64(tmp, 52));
    const __m512d invc = log_cell_entry(atanh_half_cells_tab.invc, idx);
    const __m512d th = log_cell_entry(atanh_half_cells_tab.hi, idx);
    const __m512d tl = log_cell_entry(atanh_half_cells_tab.lo, idx);
    // log(2h) / 2 = (k ln2_hi / 2 + th) + s + (k ln2_lo / 2 + tl + s^2 W(s)), s = t / 2
    const __m512d s = _mm512_fmsub_pd(z, invc, half);  // exact
    const __m512d e = _mm512_fmadd_pd(k, _mm512_set1_pd(log_consts<double>::ln2_hi * 0.5), th);
    const __m512d hi = _mm512_add_pd(e, s);
    const __m512d err = _mm512_add_pd(_mm512_sub_pd(e, hi), s);  // |e| >= |s| or e = 0
    const __m512d lo1 = _mm512_add_pd(
        _mm512_fmadd_pd(k, _mm512_set1_pd(log_consts<double>::ln2_lo * 0.5), tl), err);
    // W(s) = -1 + s R'(s) by log64_bits_estrin's steps with the scaled coefficients
    const auto c = [](int i)
                       NUMFUSE_ALWAYS_INLINE_LAMBDA { return _mm512_set1_pd(atanh_half_r(i)); };
    const __m512d s2 = _mm512_mul_pd(s, s);
    const __m512d s4 = _mm512_mul_pd(s2, s2);
    const __m512d w0 = _mm512_fmadd_pd(c(0), s, _mm512_set1_pd(-1.0));
    const __m512d w1 = _mm512_fmadd_pd(c(2), s, c(1));
    const __m512d w2 = _mm512_fmadd_pd(c(4), s, c(3));
    const __m512d w3 = _mm512_fmadd_pd(_mm512_fmadd_pd(c(7), s, c(6)), s, c(5));
    const __m512d w = _mm512_fmadd_pd(_mm512_fmadd_pd(w3, s2, w2), s4, _mm512_fmadd_pd(w1, s2, w0));
    const __m512d lo = _mm512_fmadd_pd(s2, w, lo1);
    const __m512d res = _mm512_add_pd(hi, _mm512_fmadd_pd(rho, rn, lo));
    // x's sign on res (>= 0) where computed (bits: sign ? x : res), x elsewhere
    return _mm512_castsi512_pd(_mm512_mask_ternarylogic_epi64(_mm512_castpd_si512(x), computed,
                                                              _mm512_set1_epi64(INT64_MIN),
                                                              _mm512_castpd_si512(res), 0xE2));
}
inline __m512d atanh_f64_avx512_fix(__m512d x, __m512d y) noexcept {
    const __m512d a = _mm512_andnot_pd(_mm512_set1_pd(-0.0), x);
    return avx512::sign_from(avx512::fixup<atanh_fixup>(y, _mm512_sub_pd(a, _mm512_set1_pd(1.0))),
                             x);
}
inline __m512d atanh_f64_avx512(__m512d x) noexcept {
    return atanh_f64_avx512_fix(x, atanh_f64_avx512_nofix(x));
}

}  // namespace numfuse::kernels::detail
#endif  // __AVX512F__
