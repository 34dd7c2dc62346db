// sinh, cosh, tanh, expm1, expit for float64 SIMD lanes (xsimd 8.1).
//
// Contract
//   sinh_kernel / cosh_kernel / tanh_kernel / expm1_kernel / expit_kernel
//   (batch<double>): per lane. Max error <= 1 ULP over the whole domain at
//   every level (enforced against mpmath by tests/test_evaluate_accuracy.py,
//   which prints the measured maxima). Valid range: all inputs.
//     sinh, tanh, expm1: +-0 and subnormals return x; sinh(+-inf) = +-inf,
//     cosh(+-inf) = +inf, tanh(+-inf) = +-1, expm1(-inf) = -1,
//     expit(+inf) = 1, expit(-inf) = +0; sinh/cosh overflow to inf exactly
//     where the true value exceeds DBL_MAX (|x| > 710.4758600739439);
//     expit(x) underflows gradually (subnormals) for x < -708.4. NaN -> NaN.
//   float32 uses these in float64 (expr_ops.hpp) and rounds once; tanh, expit, sinh and
//   cosh have their own float32 kernels:
//     sinh_f32_kernel / cosh_f32_kernel / tanh_f32_kernel(batch<float>): in
//     kernels/hyperbolic_f32.hpp (contract and method there).
//     expit_f32_kernel(batch<double>): relative error below 2^-39.6 before the
//     caller's one rounding (<= 0.5 + 2^-15 float32 ULP, subnormal results included),
//     +-inf -> 1 / +0, NaN -> NaN.
//
// Method
//   One core: e^r - 1 for x = k ln2 + r, |r| <= ln2/2 (1 + 2^-12), as a
//   hi + lo pair p (relative error ~2^-60: Cody-Waite reduction with a
//   42-bit ln2_hi so k ln2_hi and x - k ln2_hi are exact, the degree-10
//   minimax Q(r) = (e^r - 1 - r) / r^2 of exp.hpp's portable kernel, r^2 as
//   an exact product). Then, in pair arithmetic (dd.hpp), rounding once:
//     expm1 = (2^k - 1) + 2^k p           (|x| <= 40; beyond, 2^k (1 + p) / -1)
//             (2^k and -1 kept apart as an exact pair)
//     expm1 on AVX-512 (expm1_f64_avx512): x = kd ln2/16 + r1 + r_lo (r1 = x - kd C_hi exact,
//             r_lo = -kd C_lo rounded), e^x = 2^k (hi + lo) from exp.hpp's 16-entry table (hi, tl
//             = 2^(j/16)'s leading and trailing doubles), lo = RN(hi r1 + RN(hi p_lo + RN(tl
//             (1 + r1)))), p_lo = RN(RN(r1^2) Q(r1) + RN(r_lo (1 + r1))); e^x - 1 = 2^k (hi - 2^-k
//             + lo) with hi - 2^-k an exact two-sum (s, c), s + (c + lo) rounded once and scaled by
//             vscalefpd, for every lane; x held in [-40, 710] (-1 and inf come out of the same
//             arithmetic), |x| < 2^-54 returns x (computed at 2^-54 with x's sign: no subnormal
//             operand). Errors besides the last rounding, relative to e^x: the roundings of
//             p_lo, of hi p_lo + tl (1 + r1), of r1^2 and in Q (|p_lo| <= 2^-12, |hi p_lo +
//             tl (1 + r1)| <= 2^-11) below 2^-61.5, Q's fit 2^-65.3, the terms left out (tl
//             p_lo below 2^-65, r_lo r1^2 / 2, r_lo^2) below 2^-66 where k is 0 or -1 (|kd| <=
//             16), 2^-61.5 for x <= 40, 2^-57.3 at most (x <= 710); then lo's rounding, at most
//             ulp(lo) / 2, and c + lo's where |k| >= 1. kd = 0 (|x| < ln2/32): hi = 1, tl = 0,
//             r1 = x and r_lo = 0, so s = c = 0 and the result is RN(x + RN(RN(x^2) Q(x))): Q's
//             fit (2^-59.15 of e^x - 1, tools/explog_remez.py exp64_t16, measured against
//             mpmath), Q's roundings, x^2's and x^2 Q's (each 2^-53 of x^2 Q, below 2^-59.4 of
//             the result: |x Q| <= 2^-6.5): 0.5 + 2^-4 ULP. k = 0 or -1 and |kd| >= 2: c = 0
//             (Sterbenz) and 2^k lo lies two binades below the result (|2^k lo| <= 2^k hi
//             (e^(ln2/32) - 1) + 2^-53 < 2^-5 where 2 <= kd <= 8 or k = -1, against |e^x - 1| >=
//             2^-4 from |kd| = 2 on (e^(1.5 ln2/16) - 1 = 0.0672, 1 - e^(-1.5 ln2/16) =
//             0.0629); < 2^-4 where kd >= 9, against e^x - 1 >= 0.445), so its rounding costs
//             at most 2^-3 ULP. |k| >= 1 otherwise: relative errors below 2^-56 scaled by e^x /
//             |e^x - 1| <= 2.05: at most 2^-2 ULP. kd = +-1 (lo as large as the result, its
//             rounding up to half an ulp): the lanes in [0x1.6p-6, 0x1.1p-4), which hold every
//             such lane, take expm1_reduced at r = x instead (the core above at k = 0, ~2^-60:
//             the portable path's bits there), only for the batches holding one; each lane's
//             bits depend on its own x alone. At most 0.5 + 2^-2 ULP in all (measured 0.626:
//             tests/test_expm1_paths.py prints its maxima).
//     sinh, cosh (|x| <= 18, AVX-512 |x| <= 3): |x| = k ln2 + r, sinh = A cosh r + B sinh r,
//             cosh = B cosh r + A sinh r with A, B = sinh, cosh(k ln2) exact
//             doubles and Taylor polynomials for cosh r - 1, sinh r - r (no
//             division, no cancellation: see sinh_cosh_core)
//     sinh, cosh = 2^(k-1) (E +- e^-a 2^-k), e^a = E 2^k as exp_pair's unrounded pair
//             (|x| > 18; exp.hpp's reduction and polynomial); on AVX-512 from |x| > 3, the
//             e^-a 2^-k term as 2^-2k / RN(E) from rcp14 and two Newton steps (its error
//             scaled by e^-2a <= e^-6: see sinh_cosh_large_avx512)
//     tanh, |x| = a >= 1/4: N / D with N = e^y - 1, D = e^y + 1, y = 2 min(a, 19.5) (from
//             19.07 on tanh rounds to 1), e^y = 2^k (hi + lo) as exp_pair's unrounded pair
//             (relative error 2^-60), renormalised to eh + el (eh >= 1.6, so N and D are
//             exact fast two-sums of eh +- 1 plus el); a relative error of e^y reaches
//             tanh scaled by 1 / sinh(y) <= 1.92. q = N_hi / D_hi from a reciprocal to 2^-40 (rcp14
//             and a cubic step on AVX-512, a division elsewhere), the remainder N - q D (its
//             leading part exact: fused, or Dekker's product on SSE2), one correction by
//             the same reciprocal (2^-80), rounded once: about 0.5 + 2^-5 ULP. No
//             division on AVX-512 and no cancellation.
//           a < 1/4: a + a u G(u), u = a^2, G of degree 8 (relative error 2^-59.5); the
//             correction a u G is below 2^-5.6 a, so its roundings cost below 2^-4 ULP.
//             Each of the two parts runs only for batches holding a lane that needs it.
//     tanh on AVX-512 and AVX2+FMA (tanh_f64_table, one implementation; the levels differ in
//             the table reduction, tanh_scaled_exp_of, and in the first quotient): one path for
//             every lane. AVX-512: a = |x| held in
//             [2^-30, 19.5] (below 2^-27 tanh rounds to x, which is returned). y = 2a =
//             kd ln2/16 + r1 + r_lo from exp.hpp's table reduction: kd = 16k + j >= 0, r1 exact,
//             r_lo = -kd C_lo (|r1 + r_lo| <= ln2/32 (1 + 2^-12)), T = 2^(j/16) = th + tl.
//             In units of 2^k, with c = 2^-k: M = e^y 2^-k = mh + ml, mh = RN(th (1 + r1)),
//             ml = [th (1 + r1) - mh] (exact: th - mh is exact, one fused step) + th p_lo +
//             tl (1 + r1), p_lo = r1^2 Q(r1) + r_lo (exp.hpp's Q, relative error of e^r 2^-65.3, in
//             Estrin's form: its roundings, at Q's 1/2 level, enter scaled by r1^2 <= 2^-11).
//             N = M - c and D = M + c as exact fast two-sums of mh and c (mh's exponent is at
//             least c's: mh >= 1 where k = 0, mh >= 0.97 and c <= 1/2 elsewhere) plus ml, so
//             e^y - 1 carries no cancellation. tanh = N / D: q0 = RN(RN(N) / RN(D)) (vdivpd,
//             relative error below 3 2^-53), the remainder N - q0 D from two fused steps,
//             one correction by rcp14(RN(D)) (2^-14), rounded once by the last fused step.
//             Bound: an absolute error e of M reaches tanh as e (1/N - 1/D) <= e / N. Left out:
//             r_lo r1 (at most kd 2^-64.8, below 2^-59.3 of N: N >= (kd - 1/2) 0.043 where
//             k = 0, and it reaches tanh scaled by 2c / (N D) where k >= 1) and tl (r1^2 Q + r_lo)
//             (2^-63); Q's fit 2^-64.2, the roundings of Q (2^-64 after r1^2), p_lo (2^-64.5),
//             th p_lo + tl (1 + r1) (2^-66) and ml (2^-64): in all below 2^-61.4, and N >= 2^-5.53
//             where kd >= 1 (where kd = 0, T = 1 and every term carries r1^2: relative 2^-59),
//             so N is within 2^-55.87 + 2^-59.3 (r_lo r1) + 2^-58.5 (nl's rounding) < 2^-55.5 of
//             its value. In the remainder |nl| <= 2^-5 |nh| (p_lo <= 2^-11.1, N >= 2^-5.53; kd = 0:
//             r1 / 2), so its two fused steps round at 2^-53 |nl| each: below 2^-56 of N; rcp14's
//             error meets a remainder below 3 2^-53: 2^-64. Before the last rounding the relative
//             error is below 2^-55.5 + 2^-56 (0.31 ULP): at most 0.81 ULP in all
//             (tests/test_accuracy.py measures about 0.53). No cancellation, one division.
//     tanh on AVX2+FMA and neon64 (tanh_f64_table): the same single path with exp.hpp's 8-entry
//             reduction (exp_f64_t8_reduce; neon64 exp_f64_t8_neon_reduce, the same operations
//             and bits): y = 2a = kd ln2/8 + r1 + c - tail_j, kd = 8k + j >= 0, r1
//             exact, c = RN(tail_j - kd C_lo) (|c| < 2^-43), T_j = RN(2^(j/8)) one double, so
//             e^y = 2^k T_j e^(r1 + c) (the table's and ln2's errors below 2^-75). e^(r1 + c) - 1
//             = r1 + p_lo, p_lo = c + r^2 Q(r) with r = RN(r1 + c) (|r| <= ln2/16 (1 + 2^-12) <
//             2^-4.5; r's rounding, 2^-58, enters only r^2 Q, whose slope e^r - 1 is below
//             2^-4.5: 2^-62.5) and Q Taylor's to r^7 (1/n!, n = 2..9, rounded: truncation
//             r^10/10! < 2^-67, coefficients below 2^-68). In units of T_j: Q's last rounding
//             (Q in [0.49, 0.51]: 2^-54) and its other roundings (2^-60.5) after r^2 <=
//             2^-9.05: 2^-62.9; r^2's rounding 2^-63; p_lo's (|p_lo| < 2^-10) 2^-64; in all with
//             the above below 2^-61. M = 2^-k e^y = mh + ml as on AVX-512 (ml = T_j p_lo +
//             [T_j (1 + r1) - mh], one rounding of |ml| < 2^-9.1: 2^-63), so M's absolute
//             error is below T_j 2^-61 + 2^-63: 2^-60.5 where kd = 1 (T_1 = 2^(1/8)), 2^-59.9
//             at most. N >= e^(ln2/16) - 1 > 2^-4.5 where kd >= 1 and k = 0 (relative error
//             below 2^-56.0 there, smaller for larger kd: N grows faster than T_j), N >= 0.45
//             where k >= 1 (2^-58.8); where kd = 0 (T = 1, c = 0, r = r1 = y) every term
//             carries y^2 and N >= y: below y 2^-52.3 <= 2^-56.8. Fast two-sums as on AVX-512
//             (mh >= 1 where k = 0, mh >= 0.957 and c <= 1/2 elsewhere); |nl| <= 2^-5.4 N, its
//             rounding 2^-58.4. inv = RN(1 / RN(D)), q0 = RN(RN(N) inv) (relative error below
//             2^-51), the remainder N - q0 D by two fused steps (2^-52 |nl| <= 2^-57.4 of N),
//             res = RN(q0 + rem inv) (inv's error meets a remainder below 2^-51: 2^-103). Before
//             the last rounding the relative error is below 2^-56.0 + 2^-58.4 + 2^-57.4 <
//             2^-55.3 (0.2 ULP): at most 0.7 ULP (measured 0.547 against long double on
//             1.6e7 points). One division, no cancellation; SSE2 keeps the two-part path.
//     expit = 1 / (1 + E), E = e^-x = 2^k (h + t) for -700 <= x <= 708: -x = k ln2 + r as
//             in expm1_core (r = rh + rl), e^r = h + t with h = 1 + rh (exact) and
//             t = rh^2 Q(rh) + rl (1 + rh) (the same Q; t's rounding, below 2^-57
//             relative to e^r, is the largest error), d = 1 + E as an exact two-sum
//             plus the rest, then q = 1/d_hi, q + q (1 - q d_hi - q d_lo) rounded once
//             (1 - q d_hi exact). E's relative error reaches the result scaled by
//             E / (1 + E) <= 1: about 0.5 + 2^-3.5 ULP in all (the accuracy harness
//             measures 0.585). x < -700: expit = e^x (1 - e^x) rounds like e^x (exp_kernel;
//             subnormal results below -708.4; the core's correction term would be
//             subnormal there); x > 708: 1.
//     expit for float32 values: the same 1 / (1 + E) in plain float64: -x = k ln2 + r
//             with one multiply-add by RN(ln2) (error below 2^-46 for |x| <= 105, with
//             or without FMA),
//             e^r = P(w) = 1 - w + w^2 Q(-w), w = -r, Q of degree 6 (relative error
//             2^-39.67 of e^r) by Horner's scheme (its last two steps round: 2^-53 +
//             2^-54.5), 1 + E = 1 + 2^k P(w) in one fused multiply-add, the division:
//             with w's rounding below 5 roundings of 2^-53, so the relative error
//             before the float32 rounding is below 2^-39.67 + 2^-46 + 2^-50.6 < 2^-39.6
//             (w's rounding included), and E's
//             error again reaches the result scaled by E / (1 + E) <= 1. Rounded once to
//             float32 the result is the correctly rounded one unless the exact value lies
//             within 2^-39.6 (relative) of a midpoint between two floats.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <limits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/fixed_point.hpp"

namespace numfuse::kernels {
namespace detail {

template <class A>
struct expm1_parts {
    dd::pair<A> p;  // e^r - 1
    xsimd::batch<double, A> k;  // x = k ln2 + r
};

// e^(rh + rl) - 1 as a pair for |rh| <= ln2/2 (1 + 2^-12) and |rl| <= 2^-53 (relative
// error ~2^-60; rl enters to first order; power.hpp's exp of a pair uses it too).
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> expm1_reduced(const dd::pair<A>& r) noexcept {
    using B = xsimd::batch<double, A>;
    // Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12): the same Remez
    // fit as exp.hpp's portable kernel (tools/explog_remez.py exp64_gen,
    // relative error of 1 + r + r^2 Q: 2^-60.27).
    const B q = dd::horner(r.hi, 0x1.0p-1, 0x1.555555555555bp-3, 0x1.5555555555503p-5,
                           0x1.111111110ec52p-7, 0x1.6c16c16c30505p-10, 0x1.a01a01b38282fp-13,
                           0x1.a01a0136781a6p-16, 0x1.71ddf015d97f9p-19, 0x1.27e5b4618c3a5p-22,
                           0x1.af6bfb5af8bbcp-26, 0x1.1e3d20147f8afp-29);
    const dd::pair<A> z = dd::two_prod(r.hi, r.hi);
    // e^(rh + rl) - 1 = rh + rh^2 Q(rh) + rl (1 + rh) + O(rl^2)
    const B tail = dd::fmadd(z.hi, q, dd::fmadd(z.lo, B(0.5), r.lo * (B(1.0) + r.hi)));
    return dd::fast_two_sum(r.hi, tail);
}

// x must be finite with |x| <= 746 (callers clamp); NaN lanes give garbage.
template <class A>
NUMFUSE_ALWAYS_INLINE expm1_parts<A> expm1_core(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(0x1.8p52);
    const B kd = dd::fmadd(x, B(0x1.71547652b82fep+0), shifter) - shifter;  // round(x / ln2)
    const B r1 = detail::fused_nmadd(kd, B(0x1.62e42fefa38p-1), x);  // exact (ln2_hi: 42 bits)
    // r = rh + rl = r1 - k ln2_lo: rh rounded, r1 - rh exact, rl its error (k = 0: exact;
    // otherwise to ~2^-105 of e^x - 1, which is then at least 0.29)
    const B kc = kd * B(0x1.ef35793c7673p-45);  // ln2_lo
    const B rh = r1 - kc;
    return {expm1_reduced(dd::pair<A>{rh, (r1 - rh) - kc}), kd};
}

// 2^k for integral k in [-1022, 1023].
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> pow2i(const xsimd::batch<double, A>& kd) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const B z = kd + B(0x1.8p52);  // k in the low mantissa bits
    return as_float<double, A>((as_int(z) + I(1023)) << 52);
}

// e^x - 1 = (2^k - 1) + 2^k p as a pair from expm1_core(x), for |x| <= 40: 2^k - 1 rounded
// (exact for k <= 53; c, its error, exact: s - sm1 is exact) has an exponent at least 2^k
// p's (|p| < 0.42; |2^k - 1| >= 2^k / 2 for k >= 1, >= 1/2 for k <= -1, 0 for k = 0), so
// their sum is an exact fast two-sum; c and 2^k p.lo join its error term (products by 2^k
// exact).
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> expm1_pair_of(const expm1_parts<A>& e) noexcept {
    using B = xsimd::batch<double, A>;
    const B s = pow2i(e.k);
    const B sm1 = s - B(1.0);
    const B c = (s - sm1) - B(1.0);
    const B ph = s * e.p.hi;
    const B hi = sm1 + ph;
    return {hi, ((sm1 - hi) + ph) + (dd::fmadd(s, e.p.lo, c))};
}

// 2^(k + adjust) (1 + p) rounded once, for the overflow end (k up to 1026).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> scaled_one_plus(const expm1_parts<A>& e,
                                                              double adjust) noexcept {
    using B = xsimd::batch<double, A>;
    const dd::pair<A> y = dd::fast_two_sum(B(1.0), e.p.hi);
    const B m = y.hi + (y.lo + e.p.lo);
    const B k = e.k + B(adjust);
    const B k1 = xsimd::floor(k * B(0.5));
    return (m * pow2i(k1)) * pow2i(k - k1);  // first product exact: one rounding
}

// sinh and cosh for 0 <= a <= 18 without a division: a = k ln2 + r,
// |r| <= ln2/2, and with A = sinh(k ln2) = (2^k - 2^-k)/2, B = cosh(k ln2)
// (both exact doubles for k <= 26),
//   sinh a = A cosh r + B sinh r,  cosh a = B cosh r + A sinh r,
// cosh r = 1 + Cm, sinh r = r + Sm (Taylor to r^15 / r^14: truncation
// below 2^-60). The leading A + B rh (or B + A rh) is an exact pair, the
// small rest is added once, then one rounding.
template <class A>
struct hyperbolic_parts {
    xsimd::batch<double, A> sinh_a, cosh_a;
};

template <class A>
NUMFUSE_ALWAYS_INLINE hyperbolic_parts<A> sinh_cosh_core(
    const xsimd::batch<double, A>& a) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(0x1.8p52);
    const B kd = dd::fmadd(a, B(0x1.71547652b82fep+0), shifter) - shifter;  // round(a / ln2)
    const B r1 = a - kd * B(0x1.62e42fefa38p-1);  // exact (ln2_hi: 42 bits)
    const dd::pair<A> r = dd::two_sum(r1, -(kd * B(0x1.ef35793c7673p-45)));  // ln2_lo
    const B z = r.hi * r.hi;
    const B sm = (r.hi * z) * dd::horner(z, 0x1.5555555555555p-3,  // 1/3!
                                         0x1.1111111111111p-7,  // 1/5!
                                         0x1.a01a01a01a01ap-13,  // 1/7!
                                         0x1.71de3a556c734p-19,  // 1/9!
                                         0x1.ae64567f544e4p-26,  // 1/11!
                                         0x1.6124613a86d09p-33,  // 1/13!
                                         0x1.ae7f3e733b81fp-41);  // 1/15!
    const B cm = z * dd::horner(z, 0x1.0p-1,  // 1/2!
                                0x1.5555555555555p-5,  // 1/4!
                                0x1.6c16c16c16c17p-10,  // 1/6!
                                0x1.a01a01a01a01ap-16,  // 1/8!
                                0x1.27e4fb7789f5cp-22,  // 1/10!
                                0x1.1eed8eff8d898p-29,  // 1/12!
                                0x1.93974a8c07c9dp-37);  // 1/14!
    const B up = pow2i(kd) * B(0.5), down = pow2i(-kd) * B(0.5);
    const B sk = up - down, ck = up + down;  // exact for k <= 26
    const B srest = sm + r.lo;  // sinh r = rh + srest
    // sinh a = (sk + ck rh) + (sk cm + ck srest)
    const dd::pair<A> ps = dd::two_prod(ck, r.hi);
    const dd::pair<A> hs = dd::fast_two_sum(sk, ps.hi);  // |sk| >= |ck rh| or sk == 0
    const B ls = hs.lo + ps.lo + dd::fmadd(sk, cm, ck * srest);
    // cosh a = (ck + sk rh) + (ck cm + sk srest)
    const dd::pair<A> pc = dd::two_prod(sk, r.hi);
    const dd::pair<A> hc = dd::fast_two_sum(ck, pc.hi);
    const B lc = hc.lo + pc.lo + dd::fmadd(ck, cm, sk * srest);
    return {hs.hi + ls, hc.hi + lc};
}

// sinh / cosh for a > 18: e^a / 2 +- e^-a / 2 = 2^(k-1) (hi + lo +- e^-a 2^-k) with e^a =
// (hi + lo) 2^k from exp's own reduction and polynomial (exp_pair, relative error 2^-60),
// rounded once. The e^-a term, below 2^-51 of the result, comes from exp's core at -a
// (relative error 2^-52 of a term that small costs nothing), for a < 40 only (computed only
// for the batches holding such a lane); from 40 on it is below 2^-115 of the result and
// left out. Arguments are held in [18, 711] first, so no lane sees a subnormal operand
// (exp.hpp), and 711 overflows to inf as every a > 710.476 does.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sinh_cosh_large(const xsimd::batch<double, A>& a,
                                                              double sign) noexcept {
    using B = xsimd::batch<double, A>;
    const B ac = xsimd::min(xsimd::max(a, B(18.0)), B(711.0));
    const ExpPair<A> e = exp_pair(ac);
    B lo = e.lo;
    const auto near = ac < B(40.0);
    if (xsimd::any(near)) {
        const B em = exp_kernel_nofix(-xsimd::min(ac, B(40.0)));  // e^-a >= e^-40: normal
        const B small = em * pow2i(-xsimd::min(e.k, B(60.0)));  // e^-a / 2^k
        lo = xsimd::select(near, dd::fmadd(B(sign), small, e.lo), e.lo);
    }
    const B m = e.hi + lo;
    const B k = e.k - B(1.0);
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        return _mm512_scalef_pd(m, k);  // normal or inf: one rounding, m's
    } else
#endif
    {
        const B k1 = xsimd::floor(k * B(0.5));
        return (m * pow2i(k1)) * pow2i(k - k1);  // first product exact: m's rounding only
    }
}

#if defined(__AVX512F__)
// sinh / cosh for 3 <= a <= 711, AVX-512 (method at the top): 2^(k-1) (hi + lo +- e^-a 2^-k),
// e^a = 2^k (hi + lo) from exp.hpp's table reduction (relative error 2^-65 before the sum),
// rounded once by vscalefpd (inf exactly where a > 710.476). The e^-a term is 2^-2k / m,
// m = RN(hi + lo), from rcp14 and two Newton steps (relative error below 2^-51.9), for the
// lanes with a < 22 of the batches that hold one (from 22 on it is below 2^-63.5 of the
// result and left out); its error reaches the result scaled by e^-2a <= e^-6, below
// 2^-60.5. No division, no second exponential, no subnormal operand (the scaling of the
// term runs under the mask of those lanes).
template <bool Sinh>
inline __m512d sinh_cosh_large_avx512(__m512d a) noexcept {
    const __m512d ac = _mm512_min_pd(_mm512_max_pd(a, _mm512_set1_pd(3.0)), _mm512_set1_pd(711.0));
    const ExpT16Reduced e = exp_f64_avx512_reduce(ac);
    const ExpT16Pair t = exp_f64_avx512_t16_pair(e.z, e.r);
    __m512d lo = t.lo;
    const __mmask8 near = _mm512_cmp_pd_mask(a, _mm512_set1_pd(22.0), _CMP_LT_OQ);
    if (near != 0) {
        const __m512d one = _mm512_set1_pd(1.0);
        const __m512d m = _mm512_add_pd(t.hi, t.lo);
        __m512d inv = _mm512_rcp14_pd(m);
        inv = _mm512_fmadd_pd(inv, _mm512_fnmadd_pd(m, inv, one), inv);  // 2^-28
        inv = _mm512_fmadd_pd(inv, _mm512_fnmadd_pd(m, inv, one), inv);  // 2^-53 (rounding)
        const __m512d k = _mm512_roundscale_pd(_mm512_mul_pd(e.kd, _mm512_set1_pd(0.0625)),
                                               _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        // 2^-2k / m (k <= 31 in these lanes; the others get +0 and keep lo's bits)
        const __m512d small =
            _mm512_maskz_scalef_pd(near, inv, _mm512_mul_pd(k, _mm512_set1_pd(-2.0)));
        lo = Sinh ? _mm512_sub_pd(lo, small) : _mm512_add_pd(lo, small);
    }
    // scalef takes floor(kd/16 - 1) = k - 1
    return _mm512_scalef_pd(_mm512_add_pd(t.hi, lo),
                            _mm512_fmadd_pd(e.kd, _mm512_set1_pd(0.0625), _mm512_set1_pd(-1.0)));
}

// expm1 for f64 lanes, AVX-512 (method at the top); NaN lanes give garbage (the caller
// replaces them).
inline __m512d expm1_f64_avx512(__m512d x) noexcept {
    // Table path for every lane: x held in [-40, 710] (from -37.43 down e^x - 1 rounds to -1,
    // and -40 gives -1 exactly; from 709.79 on inf) and at 2^-54 in magnitude or above
    // (vrangepd, x's sign: no subnormal operand, r^2 >= 2^-108; below, x is returned).
    const __m512d xt = _mm512_min_pd(
        _mm512_max_pd(_mm512_range_pd(x, _mm512_set1_pd(0x1.0p-54), 0x03), _mm512_set1_pd(-40.0)),
        _mm512_set1_pd(710.0));
    const ExpT16Reduced e = exp_f64_avx512_reduce(xt);
    const ExpT16Pair t = exp_f64_avx512_t16_table(e.z);
    // e^(r1 + r_lo) - 1 = r1 + p_lo, p_lo = r1^2 Q(r1) + r_lo (1 + r1) (r1 exact; r_lo r1^2 / 2
    // and r_lo^2 left out), and lo = hi (r1 + p_lo) + tl (1 + r1) (tl p_lo left out) with one
    // rounding of hi r1 + RN(hi p_lo + RN(tl (1 + r1))): no rounding of r or of e^r - 1 alone
    const __m512d p_lo = _mm512_fmadd_pd(_mm512_mul_pd(e.r1, e.r1), exp_f64_avx512_t16_q(e.r1),
                                         _mm512_fmadd_pd(e.r_lo, e.r1, e.r_lo));
    const __m512d lo =
        _mm512_fmadd_pd(t.hi, e.r1, _mm512_fmadd_pd(t.hi, p_lo, _mm512_fmadd_pd(t.lo, e.r1, t.lo)));
    // u = -2^-k, k = floor(kd/16): scalef takes floor((15 - kd)/16) = -k, held at -100 or
    // above (from k = 100 on u is far below ulp(hi), and no lane forms a subnormal)
    const __m512d u = _mm512_scalef_pd(
        _mm512_set1_pd(-1.0),
        _mm512_max_pd(_mm512_fmadd_pd(e.kd, _mm512_set1_pd(-0.0625), _mm512_set1_pd(0.9375)),
                      _mm512_set1_pd(-100.0)));
    // hi + u = s + c exactly (two-sum), then s + (c + lo) rounded once and scaled by 2^k
    const __m512d s = _mm512_add_pd(t.hi, u);
    const __m512d bv = _mm512_sub_pd(s, t.hi);
    const __m512d c =
        _mm512_add_pd(_mm512_sub_pd(t.hi, _mm512_sub_pd(s, bv)), _mm512_sub_pd(u, bv));
    __m512d res = _mm512_scalef_pd(_mm512_add_pd(s, _mm512_add_pd(c, lo)),
                                   _mm512_mul_pd(e.kd, _mm512_set1_pd(0.0625)));
    const __m512d ax = _mm512_abs_pd(x);
    const __mmask8 small = _mm512_cmp_pd_mask(ax, _mm512_set1_pd(0x1.1p-4), _CMP_LT_OQ);
    if (small != 0) {
        // [0x1.6p-6, 0x1.1p-4) (every lane with kd = +-1, where lo is as large as the result):
        // expm1_reduced at r = x (the portable path's bits there, where its k is 0), only for
        // the batches holding such a lane, the other lanes computed at 0 (no subnormal operand)
        const __mmask8 mid =
            _mm512_mask_cmp_pd_mask(small, ax, _mm512_set1_pd(0x1.6p-6), _CMP_GE_OQ);
        if (mid != 0) {
            using B = xsimd::batch<double, xsimd::avx512f>;
            const B xs(_mm512_maskz_mov_pd(mid, x));
            const dd::pair<xsimd::avx512f> p = expm1_reduced(dd::pair<xsimd::avx512f>{xs, B(0.0)});
            res = _mm512_mask_mov_pd(res, mid, _mm512_add_pd(p.hi, p.lo));
        }
        // |x| < 2^-54 (subnormals and zeros included) returns x
        res = _mm512_mask_mov_pd(res, _mm512_cmp_pd_mask(ax, _mm512_set1_pd(0x1.0p-54), _CMP_LT_OQ),
                                 x);
    }
    return res;
}

#endif  // __AVX512F__

#if (defined(__AVX2__) && defined(__FMA__)) || defined(__aarch64__)
// 1/n!, n = 2..9, rounded to nearest (from fixed_point.hpp's exact fractions): the Taylor
// coefficients of Q(r) = (e^r - 1 - r) / r^2 for tanh_f64_table's AVX2+FMA reduction.
constexpr double tanh_t8_inverse_factorial(int n) noexcept {
    const fixed::Pair p = fixed::to_pair(fixed::inverse_factorial<2>(n));
    return p.hi + p.lo;
}
inline constexpr double tanh_t8_q[8] = {
    tanh_t8_inverse_factorial(2), tanh_t8_inverse_factorial(3), tanh_t8_inverse_factorial(4),
    tanh_t8_inverse_factorial(5), tanh_t8_inverse_factorial(6), tanh_t8_inverse_factorial(7),
    tanh_t8_inverse_factorial(8), tanh_t8_inverse_factorial(9),
};

// tanh_f64_table's level part: for y = 2a in [2^-29, 39], M = 2^-k e^y = mh + ml (mh =
// RN(T (1 + r1)), ml the rest, unevaluated) and c = 2^-k, from exp.hpp's table reduction of
// the level (method and error bounds at the top): AVX-512 the 16-entry pair table
// (exp_f64_avx512_reduce, T = th + tl), AVX2+FMA the 8-entry one (exp_f64_t8_reduce, T one
// double, its tail in the reduced argument).
template <class A>
struct tanh_scaled_exp {
    xsimd::batch<double, A> mh, ml, c;
};
template <class A>
NUMFUSE_ALWAYS_INLINE tanh_scaled_exp<A> tanh_scaled_exp_of(
    const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        // y = kd ln2/16 + r1 + r_lo, kd = 16k + j >= 0, r1 exact; 2^(j/16) = th + tl
        const ExpT16Reduced e = exp_f64_avx512_reduce(y);
        const ExpT16Pair t = exp_f64_avx512_t16_table(e.z);
        const B th(t.hi), tl(t.lo), r1(e.r1);
        // e^(r1 + r_lo) - 1 = r1 + p_lo, p_lo = r1^2 Q(r1) + r_lo (r_lo r1 left out)
        const B r2 = r1 * r1;
        const B p_lo = fused_madd(r2, B(exp_f64_avx512_t16_q_estrin(r1, r2)), B(e.r_lo));
        // M = th (1 + r1) + (th p_lo + tl (1 + r1)): mh = RN(th + th r1), its error exactly
        // (th - mh is exact) up to a rounding of 2^-105
        const B mh = fused_madd(th, r1, th);
        const B ml = fused_madd(th, r1, th - mh) + fused_madd(th, p_lo, fused_madd(tl, r1, tl));
        // c = 2^-k: scalef takes floor((15 - kd)/16) = -k
        const B c(_mm512_scalef_pd(
            _mm512_set1_pd(1.0),
            _mm512_fmadd_pd(e.kd, _mm512_set1_pd(-0.0625), _mm512_set1_pd(0.9375))));
        return {mh, ml, c};
    } else
#endif
    {
        // y = kd ln2/8 + r1 + c - tail_j, kd = 8k + j >= 0, r1 exact; T_j = RN(2^(j/8)) (its
        // bits: t + j << 49), e^y = 2^k T_j e^(r1 + c); c = 2^-k, k = kd >> 3 (z's low bits
        // hold kd >= 0; the shifter's bits leave by the shift). neon64: the same reduction
        // operation for operation (exp_f64_t8_neon_reduce, its tables read by TBL), so the
        // same bits as AVX2+FMA.
#if defined(__aarch64__)
        const ExpT8NeonReduced e = exp_f64_t8_neon_reduce(y);
        const B th(
            vreinterpretq_f64_s64(vaddq_s64(e.t, vshlq_n_s64(vandq_s64(e.z, vdupq_n_s64(7)), 49))));
        const B c(vreinterpretq_f64_u64(
            vsubq_u64(vdupq_n_u64(0x3ff0000000000000),
                      vshlq_n_u64(vshrq_n_u64(vreinterpretq_u64_s64(e.z), 3), 52))));
#else
        const ExpT8Reduced e = exp_f64_t8_reduce(y);
        const B th(_mm256_castsi256_pd(_mm256_add_epi64(
            e.t, _mm256_slli_epi64(_mm256_and_si256(e.z, _mm256_set1_epi64x(7)), 49))));
        const B c(_mm256_castsi256_pd(
            _mm256_sub_epi64(_mm256_set1_epi64x(0x3ff0000000000000),
                             _mm256_slli_epi64(_mm256_srli_epi64(e.z, 3), 52))));
#endif
        // e^(r1 + c) - 1 = r1 + p_lo, p_lo = c + r^2 Q(r), r = RN(r1 + c), Q by Taylor to
        // r^9: the tail q2 .. q7 in Estrin's form, the two leading steps Horner's (their
        // roundings are at Q's 1/2 level once)
        const B r(e.r), r1(e.r1);
        const B r2 = r * r;
        const B r4 = r2 * r2;
        const auto q = [](int n) NUMFUSE_ALWAYS_INLINE_LAMBDA { return B(tanh_t8_q[n]); };
        const B p23 = fused_madd(q(3), r, q(2));
        const B p45 = fused_madd(q(5), r, q(4));
        const B p67 = fused_madd(q(7), r, q(6));
        const B tail = fused_madd(p67, r4, fused_madd(p45, r2, p23));
        const B qr = fused_madd(fused_madd(tail, r, q(1)), r, q(0));
        const B p_lo = fused_madd(r2, qr, B(e.c));
        // M = T_j (1 + r1) + T_j p_lo: mh = RN(T_j + T_j r1), its error exactly (T_j - mh is
        // exact) up to a rounding of 2^-105
        const B mh = fused_madd(th, r1, th);
        const B ml = fused_madd(th, p_lo, fused_madd(th, r1, th - mh));
        return {mh, ml, c};
    }
}

// tanh for f64 lanes, AVX-512 and AVX2+FMA (method and error bounds at the top): one path for
// every lane, the same steps at both levels but for the reduction (tanh_scaled_exp_of), the
// first quotient and the argument's clamp and final select (each level's instructions).
// Returns tanh(x) for every x, NaN -> the input NaN quieted.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tanh_f64_table(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // a = |x| held in [2^-30, 19.5] (NaN -> 2^-30, replaced below): from 19.07 on tanh rounds
    // to 1, below 2^-27 it is x (no operation sees a subnormal value, which costs an assist
    // on Zen 5 too); AVX-512: vrangepd, the lesser magnitude, sign cleared
    B a;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        a = B(_mm512_max_pd(_mm512_range_pd(x, _mm512_set1_pd(19.5), 0x0A),
                            _mm512_set1_pd(0x1.0p-30)));
    } else
#endif
    {
        a = xsimd::min(xsimd::max(xsimd::abs(x), B(0x1.0p-30)), B(19.5));
    }
    const tanh_scaled_exp<A> m = tanh_scaled_exp_of(a + a);
    // tanh = N / D, N = M - c, D = M + c as pairs (fast two-sums: mh's exponent is at least
    // c's), then rounded: n1, d1
    const B nh = m.mh - m.c;
    const B nl = ((m.mh - nh) - m.c) + m.ml;
    const B dh = m.mh + m.c;
    const B dl = (m.c - (dh - m.mh)) + m.ml;
    const B n1 = nh + nl, d1 = dh + dl;
    // q0 ~ n1 / d1 (relative error below 2^-51) and inv ~ 1 / d1: AVX-512 q0 = RN(n1 / d1) and
    // rcp14(d1) (2^-14), AVX2+FMA inv = RN(1 / d1) and q0 = RN(n1 inv); the remainder N - q0 D
    // from two fused steps, one correction by inv, rounded once by the last fused step
    B q0, inv;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        q0 = n1 / d1;
        inv = B(_mm512_rcp14_pd(d1));
    } else
#endif
    {
        inv = B(1.0) / d1;
        q0 = n1 * inv;
    }
    const B rem = fused_nmadd(q0, dh, nh) + fused_nmadd(q0, dl, nl);
    const B res = fused_madd(rem, inv, q0);
    // tanh(x) = copysign(res, x) (res >= 0) where |x| >= 2^-27, x elsewhere and for NaN
    // quieted (AVX-512: vpternlog's bits sign ? x : res, then vfixupimm for the NaN tokens;
    // AVX2+FMA: x + (-0), which quiets a NaN and keeps every other x's bits)
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        const __mmask8 computed = _mm512_cmp_pd_mask(a, _mm512_set1_pd(0x1.0p-27), _CMP_GE_OQ);
        const __m512d signed_res = _mm512_castsi512_pd(_mm512_mask_ternarylogic_epi64(
            _mm512_castpd_si512(x), computed, _mm512_set1_epi64(INT64_MIN),
            _mm512_castpd_si512(res), 0xE2));
        return B(_mm512_fixupimm_pd(signed_res, x, _mm512_set1_epi64(0x22), 0));
    } else
#endif
    {
        return xsimd::select(xsimd::abs(x) >= B(0x1.0p-27), res | (x & B(-0.0)), x + B(-0.0));
    }
}
#endif  // (__AVX2__ && __FMA__) || __aarch64__

// Where sinh_kernel / cosh_kernel switch from sinh_cosh_core to the exponential form: 3 on
// AVX-512 (sinh_cosh_large_avx512), 18 elsewhere (sinh_cosh_large).
template <class A>
inline constexpr double sinh_cosh_split = is_avx512<A> ? 3.0 : 18.0;

template <bool Sinh, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sinh_cosh_large_of(
    const xsimd::batch<double, A>& a) noexcept {
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        return sinh_cosh_large_avx512<Sinh>(a);
    } else
#endif
    {
        return sinh_cosh_large(a, Sinh ? -1.0 : 1.0);
    }
}

}  // namespace detail

// expm1(x) = e^x - 1, f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> expm1_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        const B res(detail::expm1_f64_avx512(x));
        return xsimd::select(xsimd::isnan(x), x + x, res);
    } else
#endif
    {
        // |x| < 2^-54 (subnormals included) returns x: those lanes compute expm1(0), so that no
        // multiply sees a subnormal (an assist of ~250 ns per vector on Intel, exp.hpp).
        const auto tiny = xsimd::abs(x) < B(0x1.0p-54);
        const B xc = xsimd::select(tiny, B(0.0), xsimd::min(xsimd::max(x, B(-40.0)), B(710.0)));
        const detail::expm1_parts<A> e = detail::expm1_core(xc);
        const dd::pair<A> em1 = detail::expm1_pair_of(e);  // garbage where x > 40
        B res = em1.hi + em1.lo;
        // x > 40: e^x - 1 rounds like e^x = 2^k (1 + p) (the 1 is below ulp(e^x) / 2^57), from
        // the same reduction, rounded once (inf from 709.79 on).
        const auto big = x > B(40.0);
        if (xsimd::any(big)) res = xsimd::select(big, detail::scaled_one_plus(e, 0.0), res);
        res = xsimd::select(x < B(-40.0), B(-1.0), res);  // e^x < 2^-57
        res = xsimd::select(tiny, x, res);
        return xsimd::select(xsimd::isnan(x), x + x, res);
    }
}

// sinh(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sinh_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::abs(x);
    // Each part only where a lane needs it (inputs spanning the range: most batches hold
    // no a <= split). a < 2^-27 returns x; those lanes compute sinh(2^-30): no subnormal
    // operand (exp.hpp).
    const B split(detail::sinh_cosh_split<A>);
    const auto large = a > split;
    B res(0.0);
    if (!xsimd::all(large)) {
        res = detail::sinh_cosh_core(xsimd::min(xsimd::max(a, B(0x1.0p-30)), split)).sinh_a;
    }
    if (xsimd::any(large)) res = xsimd::select(large, detail::sinh_cosh_large_of<true>(a), res);
    res = xsimd::copysign(res, x);
    res = xsimd::select(a < B(0x1.0p-27), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

// cosh(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> cosh_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::abs(x);
    // As sinh_kernel; cosh(a) for a < 2^-30 rounds to 1, as cosh(2^-30).
    const B split(detail::sinh_cosh_split<A>);
    const auto large = a > split;
    B res(1.0);
    if (!xsimd::all(large)) {
        res = detail::sinh_cosh_core(xsimd::min(xsimd::max(a, B(0x1.0p-30)), split)).cosh_a;
    }
    if (xsimd::any(large)) res = xsimd::select(large, detail::sinh_cosh_large_of<false>(a), res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

// tanh(x), f64 lanes. Max error <= 1 ULP (method at the top). AVX-512, AVX2+FMA and neon64:
// tanh_f64_table, one path. SSE2: each part only where a lane needs it: uniform
// arguments rarely fill a batch with |x| < 0.25, and the polynomial is skipped for the
// batches without such a lane.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tanh_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx512<A> || detail::exp_f64_t8_arch<A>) {
        return detail::tanh_f64_table(x);
    }
#elif defined(__aarch64__)
    if constexpr (detail::is_neon64<A>) {
        return detail::tanh_f64_table(x);
    }
#endif
    const B a = xsimd::abs(x);
    const auto small = a < B(0.25);
    B res(1.0);
    if (!xsimd::all(small)) {
        // e^y = 2^k (hi + lo), y = 2 min(a, 19.5) (tanh rounds to 1 from 19.07 on)
        const ExpPair<A> e = exp_pair(B(2.0) * xsimd::min(xsimd::max(a, B(0.25)), B(19.5)));
        // e^y = eh + el, a normalised pair (|el| <= ulp(eh) / 2: the correction below is
        // first order in el / eh) and eh >= 1.6
        const B m = e.hi + e.lo;
        const B s = detail::pow2i(e.k);
        const B eh = m * s, el = ((e.hi - m) + e.lo) * s;  // |lo| < hi: exact; by 2^k: exact
        // N = e^y - 1, D = e^y + 1 as pairs (fast two-sums: |eh| >= 1)
        const B nh = eh - B(1.0);
        const B nl = ((eh - nh) - B(1.0)) + el;
        const B dh = eh + B(1.0);
        const B dl = ((eh - dh) + B(1.0)) + el;
        // N / D: q = nh / dh to 2^-40 (rcp14 and a cubic step on AVX-512, a division
        // elsewhere), the remainder N - q D with nh - q dh exact, one correction
        const B inv = dd::reciprocal_approx(dh);
        const B q = nh * inv;
        B rem;
        if constexpr (detail::has_fma<A>) {
            rem = dd::fnmadd(q, dh, nh);
        } else {
            const dd::pair<A> p = dd::two_prod(q, dh);
            rem = (nh - p.hi) - p.lo;
        }
        res = dd::fmadd(rem + dd::fnmadd(q, dl, nl), inv, q);
    }
    if (xsimd::any(small)) {
        // tanh(a) = a + a u G(u), u = a^2 <= 1/16: tools/explog_remez.py tanh64_small,
        // degree 8, relative error of tanh 2^-59.53. a < 2^-30 is computed at 2^-30 (no
        // subnormal operand, exp.hpp) and replaced below.
        const B as = xsimd::min(xsimd::max(a, B(0x1.0p-30)), B(0.25));
        const B u = as * as;
        const B g = dd::horner(u, -0x1.5555555555555p-2,  // -0.33333333333333331483
                               0x1.111111111110ap-3,  // 0.13333333333333313719
                               -0x1.ba1ba1ba1a06cp-5,  // -0.053968253968208340643
                               0x1.664f488164878p-6,  // 0.021869488531202269099
                               -0x1.226e34b714099p-7,  // -0.0088632352255049607487
                               0x1.d6d36fb25068ap-9,  // 0.0035921167228998894874
                               -0x1.7d91f777455f5p-10,  // -0.001455574730987560907
                               0x1.3373e6c1d6851p-11,  // 0.00058641956295991438681
                               -0x1.bab20985629bfp-13);  // -0.000211093644036998055
        res = xsimd::select(small, dd::fmadd(as, u * g, as), res);
    }
    res = xsimd::copysign(res, x);
    res = xsimd::select(a < B(0x1.0p-27), x, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

// expit for -700 <= x <= 708 (other lanes, NaN included, give garbage): the method above.
// expit_kernel selects the others around it; the ufunc loop runs this core alone on batches
// whose every |x| is within the limit and recomputes the rest with expit_kernel.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> expit_core(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // -x = k ln2 + r: k = round(-x / ln2) with k + 1023 (2^k's exponent field) in the low bits
    const B shifter(0x1.8p52 + 1023.0);
    const B z = dd::fnmadd(x, B(0x1.71547652b82fep+0), shifter);
    const B kd = z - shifter;
    const B r1 = dd::fnmadd(kd, B(0x1.62e42fefa38p-1), -x);  // exact (ln2_hi: 42 bits)
    const B rh = dd::fnmadd(kd, B(0x1.ef35793c7673p-45), r1);  // r = rh + rl (ln2_lo)
    const B rl = dd::fnmadd(kd, B(0x1.ef35793c7673p-45), r1 - rh);
    // e^r = h + t: 1 + rh as the exact pair (h, hl), t = hl + rh^2 Q(rh) + rl (1 + rh) with
    // exp.hpp's degree-10 Q (fit exp64_gen).
    const B q = dd::horner(rh, NUMFUSE_EXP64_GEN);
    const B tail = dd::fmadd(rh * rh, q, dd::fmadd(rl, rh, rl));
    const B h = B(1.0) + rh;
    const B t = ((B(1.0) - h) + rh) + tail;
    const dd::pair<A> er = dd::fast_two_sum(h, t);
    const B s = detail::as_float<double, A>(detail::as_int(z) << 52);  // 2^k, normal for |x| <= 708
    // E = e^-x = s (er.hi + er.lo) (exact products), d = 1 + E as a pair, 1 / d: one
    // division and one correction by the residual 1 - inv d (its first part exact).
    const B eh = s * er.hi;
    const dd::pair<A> d0 = dd::fast_two_sum(xsimd::max(eh, B(1.0)), xsimd::min(eh, B(1.0)));
    const B dl = d0.lo + s * er.lo;
    const B inv = B(1.0) / d0.hi;
    // 1 - inv d0.hi is a double (inv = RN(1 / d0.hi)): one fused operation, or the exact
    // product (Dekker's) where the level has no FMA, of operands scaled by 2^+-200 (exactly)
    // where d0.hi is too large for Dekker's split
    B residual;
    if constexpr (detail::has_fma<A>) {
        residual = dd::fnmadd(inv, d0.hi, B(1.0));
    } else {
        const auto big = d0.hi > B(0x1.0p900);
        const dd::pair<A> p = dd::two_prod(inv * xsimd::select(big, B(0x1.0p200), B(1.0)),
                                           d0.hi * xsimd::select(big, B(0x1.0p-200), B(1.0)));
        residual = (B(1.0) - p.hi) - p.lo;
    }
    return dd::fmadd(dd::fnmadd(inv, dl, residual), inv, inv);
}

// expit(x) = 1 / (1 + e^-x), f64 lanes. Max error <= 1 ULP (contract at the top).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> expit_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    B res = expit_core(xsimd::min(xsimd::max(x, B(-700.0)), B(708.0)));
    const auto far = x < B(-700.0);  // e^x (1 - e^x) rounds like e^x, subnormal below -708.4
    if (xsimd::any(far)) res = xsimd::select(far, exp_kernel(x), res);
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

// expit for float32 values held in f64 lanes with |x| <= 105 (other lanes, NaN included,
// give garbage): 1 / (1 + e^-x), see the contract at the top. expit_f32_kernel clamps; the
// ufunc loop runs this core alone on batches whose every |x| is within the limit.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> expit_f32_core(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // -x = k ln2 + r, w = -r = x + k ln2, |k| <= 152: 2^k and e^-x below 2^152
    const B shifter(0x1.8p52 + 1023.0);
    const B z = dd::fnmadd(x, B(0x1.71547652b82fep+0), shifter);  // k + 1023 in the low bits
    const B kd = z - shifter;
    const B w = dd::fmadd(kd, B(0x1.62e42fefa39efp-1), x);  // RN(ln2): error below 2^-46
    // e^r = P(w) = 1 - w + w^2 Q(-w), Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12):
    // tools/explog_remez.py expit_f32 (degree 6, relative error of e^r 2^-39.67); P's
    // coefficients are Q's with the odd-degree ones negated, shifted up by two.
    const B e_r = dd::horner(w, 1.0, -1.0,
                             0x1.000000005e0a1p-1,  // 0.50000000004276412557
                             -0x1.5555557ddc0e7p-3,  // -0.16666666784613612395
                             0x1.5555541e0c621p-5,  // 0.041666664401770477089
                             -0x1.1110a24f3142cp-7,  // -0.0083332817579365378591
                             0x1.6c18d37e529fbp-10,  // 0.0013889197430950728489
                             -0x1.a1857aa150facp-13,  // -0.00019908971902726552063
                             0x1.9e8918b22193dp-16);  // 0.000024708243195914156195
    const B s = detail::as_float<double, A>(detail::as_int(z) << 52);  // 2^k
    return B(1.0) / dd::fmadd(s, e_r, B(1.0));  // 1 / (1 + E), E = 2^k e^r
}

// expit(x) for float32 values held in f64 lanes (see the contract above).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> expit_f32_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // beyond |x| = 104 expit rounds to 0 or 1 in float32; at 105 the core gives 2^-151.5 or 1
    const B res = expit_f32_core(xsimd::min(xsimd::max(x, B(-105.0)), B(105.0)));
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

}  // namespace numfuse::kernels
