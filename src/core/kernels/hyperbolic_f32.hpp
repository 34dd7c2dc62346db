// sinh, cosh, tanh, expm1 for float32 lanes (xsimd 8.1): float32 arithmetic on AVX-512, the
// float64 kernels of the float32 values elsewhere. Split from hyperbolic.hpp (whose reduction
// helpers and exp.hpp's float32 table reduction sinh and cosh use).
//
// Contract (per lane, <= 1 float32 ULP at every level; tests/test_exp_family_paths.py sweeps
// float32 tanh densely, tests/test_evaluate_accuracy.py all three against mpmath)
//     sinh_f32_kernel / cosh_f32_kernel(batch<float>): float32 lanes in float32 arithmetic
//     on AVX-512 (relative error below 2^-26.5 before the final rounding, <= 0.5 + 2^-2.5
//     float32 ULP), on neon64 detail::sinh_cosh_f32_neon (one reduction for e^a and e^-a),
//     on AVX2+FMA detail::sinh_cosh_f32_fma (the same method on xsimd batches),
//     elsewhere detail::sinh_f32_in_f64 / cosh_f32_in_f64, both on the widened lanes
//     (relative error below 2^-41, see there); sinh: |x| < 2^-12 returns x,
//     overflow to +-inf from 89.4159851 on, as cosh; NaN -> NaN (x + x).
//     tanh_f32_kernel(batch<float>): float32 lanes in float32 arithmetic on AVX-512
//     (a polynomial per cell of a table, max 0.728 ULP over every float32) and on AVX2+FMA
//     (the same form on an 8-cell table, max 0.750 ULP over every float32), elsewhere
//     detail::tanh_f32_in_f64 on the widened lanes (~2^-30 relative, <= 0.5 + 2^-6 float32 ULP
//     after the one rounding); +-0 and |x| < 2^-12 return x, +-inf -> +-1, NaN -> NaN (x + x).
//     expm1_f32_kernel(batch<float>): float32 lanes in float32 arithmetic on AVX-512
//     (max 0.630 ULP over every float32 input, against glibc's float64 expm1), elsewhere
//     expm1_kernel on the widened lanes, rounded once (AVX2+FMA: detail::expm1_f32_t8, relative
//     error below 2^-49 before the one rounding, <= 0.5 + 2^-25 float32 ULP); +-0 and |x| <
//     2^-25 return x, -inf -> -1, overflow to +inf from 88.7228394 on, NaN -> the input
//     quieted.
//
// Method
//     expm1 for float32 lanes, AVX-512: x = kd ln2/16 + r1 + r_lo (r1 = x - kd C_hi exact,
//             r_lo = -kd C_lo rounded), kd = 0 below |x| = 0x1.0cp-4 (every lane with kd =
//             +-1 lies there, and from there on x 16/ln2 >= 1.51 rounds to |kd| >= 2); e^x =
//             2^k (hi + lo) from exp.hpp's 16-entry table (hi, tl = 2^(j/16)'s leading and
//             trailing floats), lo = RN(hi r1 + RN(hi RN(r1^2 Q(r1) + r_lo) + RN(tl (1 +
//             r1)))), Q the Taylor polynomial of degree 3 of (e^r - 1 - r) / r^2; e^x - 1 =
//             2^k (hi - 2^-k + lo) with hi - 2^-k an exact two-sum (b, c), b + (c + lo)
//             rounded once, for every lane, formed scaled (exact: below, as 2 (H - 1/2 + L),
//             H = 2^(k-1) hi, L = 2^(k-1) lo); |x| < 2^-25 returns x (computed at 2^-25). Errors
//             besides the last rounding, in hi's units (hi in [1, 2)): the terms left out (r_lo r1
//             below 2^-30 for |x| < 16, 2^-27.5 at x = 89; tl r1^2 / 2, r_lo^2, tl r_lo, r_lo r1^2
//             / 2 below 2^-36), Q's remainder (r1^6 / 720 < 2^-43 where kd != 0) and the roundings
//             of r1^2, in Q, of r1^2 Q + r_lo (below 2^-11), of tl (1 + r1) and of the middle sum
//             (below 2^-10): below 2^-33 in all; then lo's rounding (|lo| < 2^-4: at most 2^-29).
//             kd = 0: hi = 1, tl = 0, r1 = x, r_lo = 0 and b = c = 0, so the result is RN(x +
//             RN(RN(x^2) Q(x))); x^2 Q is below 2^-4.9 |x|, its three roundings cost below
//             2^-22.4 of it, Q's remainder (x^4 / 720 of Q's x^2) below 2^-29.2 of the result:
//             below 2^-26.9 of the result, at most 0.5 + 2^-2.9 ULP. k = 0 or -1 and |kd| >=
//             2: c = 0 (Sterbenz) and the result is RN(b + lo) scaled: |e^x - 1| >= 2^-4
//             (e^0x1.0cp-4 - 1 = 0.0676, 1 - e^-0x1.0cp-4 = 0.0633), |2^k lo| < 2^-5 where 2
//             <= kd <= 8 (hi <= 2^(1/2)) or k = -1, so lo's rounding costs at most 2^-3 ULP and
//             the rest 2^-6 ULP; kd >= 9: e^x - 1 >= 0.445, less. |k| >= 1 otherwise: relative
//             errors below 2^-27.5 (with c + lo's rounding, 2^-29) scaled by e^x / |e^x - 1|
//             <= 2.05 (x >= 0.67) or <= 1 (x <= -0.69): at most 2^-2.5 ULP where x < 16,
//             2^-2.7 ULP beyond. At most 0.5 + 2^-2.5 ULP in all. The general form (x held
//             in [-18, 89]): H - 1/2 as a fast two-sum of the two ordered by magnitude
//             (vrangeps), RN(B + RN(C + L)) doubled. Batches with every lane in [2^-25, 16) in
//             magnitude (-24 <= k <= 23): H = 2^k hi, L = 2^k lo, B = RN(H - 1), C = H - (B +
//             1) an exact fast two-sum (H - 1 is exact for -1 <= k <= 23, |H| < 1 below),
//             RN(B + RN(C + L)): the same bits without clamps, ordering or special values.
//     expm1 for float32 values in f64 lanes, AVX2+FMA and neon64: exp.hpp's float64 table
//             reduction (exp_f64_t8_parts, neon64's exp_f64_t8_neon_parts the same
//             operations: x = kd ln2/8 + r0, e^x = S (1 + p), S = 2^k T_j, S (1 + p)
//             within 2^-56.4 S of e^x), e^x - 1 = RN(S p + RN(S - 1)). S - 1 is exact for S
//             in [1/2, 2^53] (k >= -1: Sterbenz below 1, S's ulp <= 1 above), within 2^-54
//             below, where |e^x - 1| > 0.52. |x| < ln2/16 (kd = 0): S = 1, r = x exactly, the
//             result is RN(p), p = RN(r + r^2 Q(r)) with Q within 2^-44.9 of (e^r - 1 - r)/r^2
//             on the interval (exp64_t8's c0 is 1/2 + 2^-44.9; checked with mpmath), an error
//             |r| 2^-44.9 < 2^-49.4 of p, the roundings about 2^-52; |kd| = 1 (|e^x - 1| >=
//             0.042): 2^-56.4 S is below 2^-51.6 of the result. Relative error below 2^-49
//             in all before the one float32 rounding (cvtpd2ps, also to inf): <= 0.5 + 2^-25
//             float32 ULP.
//     tanh for float32 lanes, AVX-512, in float32 arithmetic: one polynomial per cell, 32
//             cells read with vpermt2ps (tools/tanh_f32_table.py): a = |x| clamped to
//             [2^-12, 9.25], four cells per binade from 2^-4 to 8 picked by the bits of a
//             (exponent and top two mantissa bits, shifted), all of a < 5/64 in one cell;
//             tanh(a) = c0 + delta t + t A(t), t = a - m exact, A of degree 4. The small
//             cell has m = 0, delta = 1 (t + t A: one rounding, t A below 2^-8 t); the others
//             delta = 0 and an m whose tanh is within 2^-14 ulp of the float32 c0, so the
//             stored c0 adds no error and t A is below 1/8 of the result. Fit errors below
//             2^-26.1 (most below 2^-28), max 0.728 ULP after the roundings. Below 2^-12
//             min(a, result) returns a; the sign bit is put back with one bitwise op.
//             21 vector operations, no division, no subnormal operand.
//     tanh for float32 lanes, AVX2+FMA, in float32 arithmetic: the AVX-512 form on 8 cells,
//             each entry read with one vpermps (tools/tanh_f32_table.py --avx2): a clamped
//             as there; the entry is the low 3 bits of bits(RN(a + 3/4)) >> 22, the half
//             binades of a + 3/4: a in [0, 1/4) (m = 0, delta = 1), [1/4, 3/4), [3/4, 5/4),
//             [5/4, 9/4), [9/4, 13/4), [13/4, 21/4), [21/4, 29/4), [29/4, 9.25] (the tool
//             takes the cells from the same float32 sums, so a lane that RN(a + 3/4) moves
//             across a boundary is in the cell fitted for it); A of degree 7 (Horner, seven
//             FMAs), m of each cell placed where the largest |t A| / ulp(tanh a) over the
//             cell is smallest, then moved to a float32 whose tanh is within 2^-14 ulp of c0.
//             t = a - m is exact: a and m are multiples of 2^(e - 23), e the smaller of
//             their exponents, and |t| < 2^(e + 1) (the tool checks both ends of each cell).
//             Error before the last rounding of RN(t p + c) (c = c0 + delta t exact), in
//             ulps of the result: the fit (at most 0.04 on the tool's grid), c0's (below
//             2^-14) and p's roundings, p_k = RN(c_k + t p_(k+1)) within 2^-24 |p_k|, reaching
//             the result as 2^-24 |t^k p_k|: these are largest in [1/4, 3/4) (|t| up to 0.41
//             against a result from 0.245), where the tool's sum per entry (its output)
//             reaches 0.403; the other entries below 0.18. With the last rounding: at most
//             0.91 ULP; measured 0.750 over every float32 (a = 0.7329). 29 vector operations
//             per 8 lanes (11 vpermps, 9 FMAs), no division, no subnormal operand. NEON can
//             read the same rows with TBL over two registers (byte indices 4i + 0..3).
//     sinh, cosh for float32 lanes, AVX-512, in float32 arithmetic: e^a / 2 = H + L and
//             e^-a / 2 = MH + ML (a = |x| in [2^-12, 90], e^-a at most at 20) from
//             exp_f32_avx512_pair (2^-27.9 each) scaled by 2^(s-1) (vscalefps: H is inf
//             exactly where the result overflows), H -+ MH as an exact fast two-sum, the
//             rest added, one rounding. cosh: relative error below 2^-27.5; sinh for
//             a >= 0.5: the pairs' errors scaled by coth(a) <= 2.17, below 2^-26.5; a < 0.5:
//             a + a u G(u), G of degree 3 (2^-29.6; the correction is below 0.043 a).
//     tanh for float32 values in f64 lanes (other levels): -E / (2 + E), E = e^y - 1 =
//             2^k (1 + p) - 1 for y = -2 min(|x|, 10) = k ln2 + r, p = e^r - 1 = r + r^2 Q(r)
//             (degree-5 minimax, relative 2^-32: no cancellation, as e^y - 1 is formed
//             from p and the exact 2^k - 1 in one fused multiply-add); relative error
//             below 2^-30 before the caller's rounding (|x| < 2^-12: x, which is what
//             tanh rounds to in float32).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/hyperbolic.hpp"

namespace numfuse::kernels {

// sinh and cosh for float32 values held in f64 lanes (the levels without AVX-512): (e^a -+ e^-a) /
// 2 with a = min(|x|, 100) (from 89.42 on both round to inf in float32), each exponential from
// exp's core (<= 0.65 float64 ULP at every level). sinh's difference keeps a relative error below
// 2^-51 / (2a): below 2^-41 for a >= 2^-12, and |x| < 2^-12 returns x, which is what sinh rounds to
// in float32. So the relative error before the caller's one float32 rounding is below 2^-41
// (<= 0.5 + 2^-17 float32 ULP); no division, no subnormal operand.
namespace detail {
// The odd functions' last selects: |x| below `tiny` (where the function rounds to x) returns
// x, NaN returns x + x (the input quieted).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> odd_tiny_nan_fixup(const xsimd::batch<T, A>& x,
                                                            const xsimd::batch<T, A>& res,
                                                            T tiny) noexcept {
    using B = xsimd::batch<T, A>;
    return xsimd::select(xsimd::isnan(x), x + x, xsimd::select(xsimd::abs(x) < B(tiny), x, res));
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sinh_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::min(xsimd::abs(x), B(100.0));  // NaN: garbage, replaced below
    const B d = exp_kernel_nofix(a) - exp_kernel_nofix(-a);
    return odd_tiny_nan_fixup(x, xsimd::copysign(B(0.5) * d, x), 0x1.0p-12);
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> cosh_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B a = xsimd::min(xsimd::abs(x), B(100.0));
    const B res = B(0.5) * (exp_kernel_nofix(a) + exp_kernel_nofix(-a));
    return xsimd::select(xsimd::isnan(x), x + x, res);
}

#if defined(__aarch64__)
// sinh (Sinh) or cosh of a = |x| for float32 values held in f64 lanes, neon64: e^a and e^-a
// from one reduction and one pair of polynomials (sinh_f32_in_f64 runs two exp kernels).
// a = min(|x|, 90) (from 89.42 on both round to inf in float32) = k ln2 + r, k = round(a/ln2)
// <= 130 (in the low bits of z = a/ln2 + 1.5 2^52), r = RN(a - k L), L = RN(ln2), |r| <=
// ln2/2 (1 + 2^-12), u = r^2 <= 0.1202; with E = cosh r, O = sinh r:
//   e^a / 2 = 2^k (Eh + Oh),  e^-a / 2 = 2^-k (Eh - Oh),  Eh = E/2, Oh = O/2,
// Eh = 1/2 + u/4 + ... + u^6/(2 12!) and Oh = r (1/2 + u/12 + ... + u^5/(2 11!)) (Taylor;
// the halves exact scalings of the coefficients), 2^k and 2^-k in the exponent field (k from
// z's bits; 2^-k's bits 2 bias - 2^k's), then
//   sinh = 2^k (Eh + Oh) - 2^-k (Eh - Oh),  cosh = 2^k (Eh + Oh) + 2^-k (Eh - Oh)  (an FMA).
// Relative error before the caller's one float32 rounding:
//   k = 0 (a < ln2/2: r = a exactly): Eh + Oh and Eh - Oh (below 0.6) are rounded to 2^-54
//   each, Oh's Horner and product roundings stay below 2^-52 of O, the truncation of O
//   (u^6/13!) is below 2^-61 of it, the final FMA's rounding 2^-53 (Eh's truncation and
//   roundings cancel in the difference): sinh below 2^-53 / a + 2^-51, i.e. 2^-41 for a >=
//   2^-12 (sinh's lanes below return x); cosh below 2^-51.
//   k >= 1: r's error |k| |L - ln2| <= 130 2^-54 < 2^-47 (the same for e^a and e^-a, in
//   opposite directions), the truncations (E: u^7/14! < 2^-56.2, O: less), about eight
//   roundings of 2^-53: each exponential within 2^-46.5, so cosh within 2^-46.5 and sinh
//   within 2^-46.5 coth(a) <= 2^-44.9 (coth(ln2/2) = 3.0).
// So below 2^-41 relative, <= 0.5 + 2^-17 float32 ULP after the rounding, as sinh_f32_in_f64.
template <bool Sinh>
NUMFUSE_ALWAYS_INLINE float64x2_t sinh_cosh_f32_neon_half(float64x2_t x) noexcept {
    const float64x2_t a = vminq_f64(vabsq_f64(x), vdupq_n_f64(90.0));  // NaN: garbage
    const float64x2_t shifter = vdupq_n_f64(0x1.8p52);
    const float64x2_t z = vfmaq_f64(shifter, a, vdupq_n_f64(0x1.71547652b82fep+0));  // 1/ln2
    const float64x2_t r = vfmsq_f64(a, vsubq_f64(z, shifter), vdupq_n_f64(0x1.62e42fefa39efp-1));
    const float64x2_t u = vmulq_f64(r, r);
    const float64x2_t eh = vfmaq_f64(
        vdupq_n_f64(0.5), u,
        vfmaq_f64(
            vdupq_n_f64(0.25), u,
            vfmaq_f64(
                vdupq_n_f64(0x1.5555555555555p-6), u,  // 1/(2 4!)
                vfmaq_f64(vdupq_n_f64(0x1.6c16c16c16c17p-11), u,  // 1/(2 6!)
                          vfmaq_f64(vdupq_n_f64(0x1.a01a01a01a01ap-17), u,  // 1/(2 8!)
                                    vfmaq_f64(vdupq_n_f64(0x1.27e4fb7789f5cp-23), u,  // 10!
                                              vdupq_n_f64(0x1.1eed8eff8d898p-30)))))));  // 12!
    const float64x2_t oh = vmulq_f64(
        r, vfmaq_f64(
               vdupq_n_f64(0.5), u,
               vfmaq_f64(
                   vdupq_n_f64(0x1.5555555555555p-4), u,  // 1/(2 3!)
                   vfmaq_f64(vdupq_n_f64(0x1.1111111111111p-8), u,  // 1/(2 5!)
                             vfmaq_f64(vdupq_n_f64(0x1.a01a01a01a01ap-14), u,  // 1/(2 7!)
                                       vfmaq_f64(vdupq_n_f64(0x1.71de3a556c734p-20), u,  // 9!
                                                 vdupq_n_f64(0x1.ae64567f544e4p-27)))))));  // 11!
    // 2^k: k << 52 from z's bits (the shifter's shift out) plus the bias; 2^-k: 2 bias - that
    const int64x2_t sk = vaddq_s64(vshlq_n_s64(vreinterpretq_s64_f64(z), 52),
                                   vdupq_n_s64(std::int64_t{0x3ff} << 52));
    const int64x2_t smk = vsubq_s64(vdupq_n_s64(std::int64_t{0x7fe} << 52), sk);
    const float64x2_t ep = vmulq_f64(vreinterpretq_f64_s64(sk), vaddq_f64(eh, oh));
    const float64x2_t sm = vreinterpretq_f64_s64(smk), m = vsubq_f64(eh, oh);
    return Sinh ? vfmsq_f64(ep, sm, m) : vfmaq_f64(ep, sm, m);
}

// sinh (Sinh) or cosh of |x| for float32 lanes (the caller puts sinh's sign back and selects
// the tiny and NaN lanes): the two halves widened, rounded once each.
template <bool Sinh>
NUMFUSE_ALWAYS_INLINE float32x4_t sinh_cosh_f32_neon(float32x4_t x) noexcept {
    return vcvt_high_f32_f64(
        vcvt_f32_f64(sinh_cosh_f32_neon_half<Sinh>(vcvt_f64_f32(vget_low_f32(x)))),
        sinh_cosh_f32_neon_half<Sinh>(vcvt_high_f64_f32(x)));
}
#endif  // __aarch64__

// The levels with FMA but not AVX-512 nor neon64 (AVX2+FMA): sinh and cosh by
// sinh_cosh_f32_fma_half below.
template <class A>
inline constexpr bool sinh_cosh_f32_fma_arch = has_fma<A> && !is_avx512<A> && !is_neon64<A>;

// sinh (Sinh) or cosh of a for float32 values held in f64 lanes, a = min(|x|, 90) >= 0 (NaN
// lanes: garbage): sinh_cosh_f32_neon_half's method and arithmetic, operation for operation,
// on xsimd batches (e^a and e^-a from one reduction, E = cosh r and O = sinh r as Taylor
// polynomials in u = r^2, 2^k and 2^-k in the exponent field; the error analysis there:
// relative error below 2^-41 before the caller's one float32 rounding).
template <bool Sinh, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sinh_cosh_f32_fma_half(
    const xsimd::batch<double, A>& a) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const B shifter(0x1.8p52);
    const B z = fused_madd(a, B(0x1.71547652b82fep+0), shifter);  // 1/ln2
    const B r = fused_nmadd(z - shifter, B(0x1.62e42fefa39efp-1), a);  // a - k RN(ln2)
    const B u = r * r;
    const B eh = horner(u, 0.5, 0.25,
                        0x1.5555555555555p-6,  // 1/(2 4!)
                        0x1.6c16c16c16c17p-11,  // 1/(2 6!)
                        0x1.a01a01a01a01ap-17,  // 1/(2 8!)
                        0x1.27e4fb7789f5cp-23,  // 1/(2 10!)
                        0x1.1eed8eff8d898p-30);  // 1/(2 12!)
    const B oh = r * horner(u, 0.5,
                            0x1.5555555555555p-4,  // 1/(2 3!)
                            0x1.1111111111111p-8,  // 1/(2 5!)
                            0x1.a01a01a01a01ap-14,  // 1/(2 7!)
                            0x1.71de3a556c734p-20,  // 1/(2 9!)
                            0x1.ae64567f544e4p-27);  // 1/(2 11!)
    // 2^k: k << 52 from z's bits (the shifter's shift out) plus the bias; 2^-k: 2 bias - that
    const I sk = (as_int(z) << 52) + I(std::int64_t{0x3ff} << 52);
    const I smk = I(std::int64_t{0x7fe} << 52) - sk;
    const B ep = as_float<double, A>(sk) * (eh + oh);
    const B sm = as_float<double, A>(smk), m = eh - oh;
    return Sinh ? fused_nmadd(sm, m, ep) : fused_madd(sm, m, ep);
}

// sinh (Sinh) or cosh of |x| for float32 lanes (the caller puts sinh's sign back and selects
// the tiny and NaN lanes): a = min(|x|, 90) in float32, the two halves widened, rounded once
// each.
template <bool Sinh, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> sinh_cosh_f32_fma(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    xsimd::batch<double, A> lo, hi;
    widen(xsimd::min(xsimd::abs(x), F(90.0f)), lo, hi);
    return narrow(sinh_cosh_f32_fma_half<Sinh>(lo), sinh_cosh_f32_fma_half<Sinh>(hi));
}

#if defined(__AVX512F__)
// e^y 2^shift = h + l, a normalised pair (|l| <= ulp(h) / 2) scaled exactly by vscalefps (h is
// inf exactly where e^y 2^shift overflows), from exp_f32_avx512_pair's unrounded pair for
// |y| <= 89: the e^a of sinh / cosh (shift -1).
struct ScaledF32Pair {
    __m512 h, l;
};
inline ScaledF32Pair exp_f32_scaled_pair(__m512 y, float shift) noexcept {
    const ExpF32Pair e = exp_f32_avx512_pair(y);
    const __m512 s = shift == 0.0f ? e.s : _mm512_add_ps(e.s, _mm512_set1_ps(shift));
    const __m512 m = _mm512_add_ps(e.hi, e.lo);
    return {_mm512_scalef_ps(m, s),
            _mm512_scalef_ps(_mm512_add_ps(_mm512_sub_ps(e.hi, m), e.lo), s)};
}

// sinh (Sinh) or cosh of a = |x| for float32 lanes, AVX-512, in float32 arithmetic (method at
// the top); sinh's lanes below 2^-12 return a. The caller puts the sign back and selects NaN
// lanes.
template <bool Sinh>
inline __m512 sinh_cosh_f32_avx512(__m512 a) noexcept {
    // e^a / 2 = H + L and e^-a / 2 = MH + ML from exp's unrounded pairs, a in [2^-12, 90]
    // (from 89.42 on both overflow: H is inf) and e^-a at most at 20 (beyond, below 2^-57
    // of e^a; e^-20 is normal, so no subnormal operand anywhere)
    const __m512 ac =
        _mm512_min_ps(_mm512_max_ps(a, _mm512_set1_ps(0x1.0p-12f)), _mm512_set1_ps(90.0f));
    // e^a renormalised first (hi + lo rounded), so that H overflows only where e^a / 2 does
    const ScaledF32Pair ep = exp_f32_scaled_pair(ac, -1.0f);
    const __m512 h = ep.h, l = ep.l;
    const ExpF32Pair em = exp_f32_avx512_pair(
        _mm512_sub_ps(_mm512_setzero_ps(), _mm512_min_ps(ac, _mm512_set1_ps(20.0f))));
    const __m512 sm = _mm512_sub_ps(em.s, _mm512_set1_ps(1.0f));
    const __m512 mh = _mm512_scalef_ps(em.hi, sm), ml = _mm512_scalef_ps(em.lo, sm);
    // h -+ mh as an exact fast two-sum (h > mh), the rest added once, one rounding
    __m512 res;
    if constexpr (Sinh) {
        const __m512 d = _mm512_sub_ps(h, mh);
        const __m512 t = _mm512_sub_ps(_mm512_sub_ps(h, d), mh);
        res = _mm512_add_ps(d, _mm512_add_ps(t, _mm512_sub_ps(l, ml)));
    } else {
        const __m512 d = _mm512_add_ps(h, mh);
        const __m512 t = _mm512_add_ps(_mm512_sub_ps(h, d), mh);
        res = _mm512_add_ps(d, _mm512_add_ps(t, _mm512_add_ps(l, ml)));
    }
    // h = inf (a >= 89.42): inf, not inf - inf
    res = _mm512_mask_mov_ps(res,
                             _mm512_cmp_ps_mask(h, _mm512_set1_ps(0x1.fffffep127f), _CMP_GT_OQ), h);
    if constexpr (Sinh) {
        const __mmask16 small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.5f), _CMP_LT_OQ);
        if (small != 0) {
            // a + a u G(u), u = a^2 <= 1/4: tools/explog_remez.py sinh32_small, degree 3,
            // relative error of sinh 2^-29.63 (the correction is below 0.043 a)
            const __m512 u = _mm512_mul_ps(ac, ac);
            __m512 g =
                _mm512_fmadd_ps(_mm512_set1_ps(0x1.73eb2ep-19f), u,  // 2.7710100312106078491e-6
                                _mm512_set1_ps(0x1.a0184ap-13f));  // 0.00019840949971694499254
            g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(0x1.111112p-7f));  // 0.0083333337679505348206
            g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(0x1.555556p-3f));  // 0.16666667163372039795
            res = _mm512_mask_mov_ps(res, small, _mm512_fmadd_ps(ac, _mm512_mul_ps(u, g), ac));
            // |x| < 2^-12 (computed at 2^-12: no subnormal operand) returns |x|: sinh rounds
            // to x there (only batches with a small lane can hold such a lane)
            res = _mm512_mask_mov_ps(
                res, _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1.0p-12f), _CMP_LT_OQ), a);
        }
    }
    return res;
}

// expm1 on x (vfixupimm): NaN -> x quieted, +-0 -> x, -inf -> -1, +inf -> +inf, others computed.
inline constexpr int expm1_f32_fixup = 0x00590122;

// expm1's float32 reduction, AVX-512 (method at the top): e^x = 2^(kd/16) (hi + lo) before the last
// rounding, for xc in [-18, 89] held at 2^-25 in magnitude or above (no subnormal operand:
// r1^2 >= 2^-50). x = kd ln2/16 + r1 + r_lo, kd = 0 in the lanes outside m (the caller's
// |x| < 0x1.0cp-4, which holds every lane with kd = +-1), r1 = x - kd C_hi exact, r_lo = -kd
// C_lo rounded; lo = RN(hi r1 + RN(hi RN(r1^2 Q(r1) + r_lo) + RN(tl (1 + r1)))), Q the Taylor
// polynomial of degree 3 of (e^r - 1 - r) / r^2: no rounding of r or of e^r - 1 alone.
struct Expm1F32Parts {
    __m512 hi, lo, kd;
};
inline Expm1F32Parts expm1_f32_avx512_parts(__m512 xc, __mmask16 m) noexcept {
    const __m512 shifter = _mm512_set1_ps(0x1.8p23f);
    const __m512 z = _mm512_mask3_fmadd_ps(xc, _mm512_set1_ps(0x1.715476p+4f), shifter, m);
    const __m512 kd = _mm512_sub_ps(z, shifter);  // 16k + j, 0 outside m
    // C_hi = RN_f(ln2)/16 (20 bits: kd C_hi is a multiple of 2^-25 and r1 one of 2^-28 below
    // 2^-5, so r1 is exact), C_lo = (ln2 - RN_f(ln2))/16 = -0x1.05c61p-33
    const __m512 r1 = _mm512_fnmadd_ps(kd, _mm512_set1_ps(0x1.62e43p-5f), xc);
    const __m512 r_lo = _mm512_mul_ps(kd, _mm512_set1_ps(0x1.05c61p-33f));
    const __m512 th = avx512::permute_table(z, exp_tab16_hi_f);
    const __m512 tl = avx512::permute_table(z, exp_tab16_lo_f);
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.111112p-7f), r1,  // 1/120
                               _mm512_set1_ps(0x1.555556p-5f));  // 1/24
    q = _mm512_fmadd_ps(q, r1, _mm512_set1_ps(0x1.555556p-3f));  // 1/6
    q = _mm512_fmadd_ps(q, r1, _mm512_set1_ps(0.5f));
    const __m512 a = _mm512_fmadd_ps(_mm512_mul_ps(r1, r1), q, r_lo);
    const __m512 lo = _mm512_fmadd_ps(th, r1, _mm512_fmadd_ps(th, a, _mm512_fmadd_ps(tl, r1, tl)));
    return {th, lo, kd};
}

// expm1 for float32 lanes, AVX-512, any x held at 2^-25 in magnitude or above (method at the
// top; m as for expm1_f32_avx512_parts): x held in [-18, 89] (from -17.33 down e^x - 1 rounds
// to -1, from 88.73 up to inf), e^x - 1 = 2 (H - 1/2 + L) with H = 2^(k-1) hi and L = 2^(k-1) lo
// (vscalefps takes floor(kd/16 - 1) = k - 1: exact, normal and finite, k in [-26, 128]); H and
// -1/2 ordered by magnitude (vrangeps: equal magnitudes, kd = 0, give +1/2 and -1/2) make an exact
// fast two-sum (B, C), RN(B + RN(C + L)) doubled (exact, or inf where e^x - 1 rounds to inf): the
// same bits as expm1_f32_avx512_fast, scaled by 2^k, where that applies.
inline __m512 expm1_f32_avx512_general(__m512 xl, __mmask16 m) noexcept {
    // NaN lanes stay NaN (vminps / vmaxps return their second operand where one is NaN), and
    // the arithmetic below returns them quieted: expm1's NaN
    const __m512 xt =
        _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-18.0f), xl));
    const Expm1F32Parts e = expm1_f32_avx512_parts(xt, m);
    const __m512 s = _mm512_fmadd_ps(e.kd, _mm512_set1_ps(0.0625f), _mm512_set1_ps(-1.0f));
    const __m512 h = _mm512_scalef_ps(e.hi, s);
    const __m512 l = _mm512_scalef_ps(e.lo, s);
    const __m512 half = _mm512_set1_ps(-0.5f);
    const __m512 big = _mm512_range_ps(h, half, 0x07);  // the larger magnitude, its sign
    const __m512 small = _mm512_range_ps(h, half, 0x06);  // the smaller magnitude, its sign
    const __m512 b = _mm512_add_ps(big, small);
    const __m512 c = _mm512_add_ps(_mm512_sub_ps(big, b), small);
    const __m512 res = _mm512_add_ps(b, _mm512_add_ps(c, l));
    return _mm512_add_ps(res, res);
}

// expm1 for float32 lanes, AVX-512, every lane with 2^-25 <= |x| < 16 (so -24 <= k <= 23):
// the bits of expm1_f32_avx512_general, scaled by 2^k instead of 2^(k-1). H = 2^k hi and L =
// 2^k lo are exact (normal), H - 1 is exact for -1 <= k <= 23 and for k <= -2 |H| < 1, so B =
// RN(H - 1), C = H - (B + 1) is an exact fast two-sum (B = 2^k b, C = 2^k c), and RN(B + RN(C +
// L)) = 2^k RN(b + RN(c + lo)): no clamp, no ordering, no doubling, no special value.
inline __m512 expm1_f32_avx512_fast(__m512 x, __mmask16 m) noexcept {
    const Expm1F32Parts e = expm1_f32_avx512_parts(x, m);
    const __m512 s = _mm512_mul_ps(e.kd, _mm512_set1_ps(0.0625f));
    const __m512 h = _mm512_scalef_ps(e.hi, s);
    const __m512 l = _mm512_scalef_ps(e.lo, s);
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 b = _mm512_sub_ps(h, one);
    const __m512 c = _mm512_sub_ps(h, _mm512_add_ps(b, one));
    return _mm512_add_ps(b, _mm512_add_ps(c, l));
}

// expm1 for float32 lanes, AVX-512, in float32 arithmetic (method at the top); every lane's
// bits are those of expm1_f32_avx512_general at x (x below 2^-25 in magnitude: x), whichever
// branch its batch takes: batches with every lane in [2^-25, 16) in magnitude take the fast
// form, those with no lane below 1/4 the general one alone (its special values are expm1's),
// the others the general one on x held at 2^-25 (vrangeps, x's sign), x for the lanes below
// 2^-25 and vfixupimm (+-0).
inline __m512 expm1_f32_avx512(__m512 x) noexcept {
    const __m512 ax = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), x);
    const __mmask16 big = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(16.0f), _CMP_NLT_UQ);
    if (big == 0) {
        const __mmask16 m = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0x1.0cp-4f), _CMP_GE_OQ);
        if (_mm512_cmp_ps_mask(ax, _mm512_set1_ps(0x1.0p-25f), _CMP_LT_OQ) == 0)
            return expm1_f32_avx512_fast(x, m);
    } else if (_mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.25f), _CMP_LT_OQ) == 0) {
        return expm1_f32_avx512_general(x, 0xFFFF);  // -inf -> -1, inf -> inf, NaN -> NaN
    }
    const __mmask16 m = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0x1.0cp-4f), _CMP_GE_OQ);
    const __m512 xs = _mm512_range_ps(x, _mm512_set1_ps(0x1.0p-25f), 0x03);
    __m512 res = expm1_f32_avx512_general(xs, m);
    res =
        _mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0x1.0p-25f), _CMP_LT_OQ), x);
    return avx512::fixup<expm1_f32_fixup>(res, x);
}
#endif  // __AVX512F__

#if defined(__AVX2__) && defined(__FMA__)
// e^x - 1 for float32 values held in f64 lanes, AVX2+FMA, |x| <= 104 (method at the top).
NUMFUSE_ALWAYS_INLINE __m256d expm1_f32_t8_half(__m256d x) noexcept {
    const ExpT8Parts e = exp_f64_t8_parts(x);
    const __m256d s = exp_f64_t8_scale(e);  // 2^k T_j
    return _mm256_fmadd_pd(s, e.p, _mm256_sub_pd(s, _mm256_set1_pd(1.0)));
}

// expm1 for float32 lanes, AVX2+FMA: x clamped to [-104, 89] (from 88.7228394 on the float64
// result rounds to inf in float32, below -17.4 to -1), widened, each half by
// expm1_f32_t8_half, rounded once; |x| < 2^-25 and NaN by odd_tiny_nan_fixup.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> expm1_f32_t8(
    const xsimd::batch<float, A>& x) noexcept {
    const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)),
                                    _mm256_set1_ps(89.0f));  // NaN: garbage, replaced below
    const __m128 lo =
        _mm256_cvtpd_ps(expm1_f32_t8_half(_mm256_cvtps_pd(_mm256_castps256_ps128(xc))));
    const __m128 hi =
        _mm256_cvtpd_ps(expm1_f32_t8_half(_mm256_cvtps_pd(_mm256_extractf128_ps(xc, 1))));
    const xsimd::batch<float, A> res(_mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1));
    return odd_tiny_nan_fixup(x, res, 0x1.0p-25f);
}
#endif  // __AVX2__ && __FMA__

#if defined(__aarch64__)
// expm1_f32_t8_half and expm1_f32_t8 on neon64: the same operations on exp.hpp's neon64
// float64 table reduction (exp_f64_t8_neon_parts, avx2_fma's exp_f64_t8_parts operation for
// operation, tables by TBL), so the same bits as avx2_fma's kernel and the same bound.
NUMFUSE_ALWAYS_INLINE float64x2_t expm1_f32_t8_neon_half(float64x2_t x) noexcept {
    const ExpT8NeonParts e = exp_f64_t8_neon_parts(x);
    const float64x2_t s = exp_f64_t8_neon_scale(e);  // 2^k T_j
    return vfmaq_f64(vsubq_f64(s, vdupq_n_f64(1.0)), s, e.p);
}
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> expm1_f32_t8_neon(
    const xsimd::batch<float, A>& x) noexcept {
    const float32x4_t xc = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-104.0f)),
                                     vdupq_n_f32(89.0f));  // NaN: garbage, replaced below
    const float32x2_t lo = vcvt_f32_f64(expm1_f32_t8_neon_half(vcvt_f64_f32(vget_low_f32(xc))));
    const xsimd::batch<float, A> res(
        vcvt_high_f32_f64(lo, expm1_f32_t8_neon_half(vcvt_high_f64_f32(xc))));
    return odd_tiny_nan_fixup(x, res, 0x1.0p-25f);
}
#endif  // __aarch64__
}  // namespace detail

// expm1(x), float32 lanes (contract at the top): AVX-512 in float32 arithmetic, AVX2+FMA
// detail::expm1_f32_t8 (neon64: expm1_f32_t8_neon, the same bits), the other levels through
// expm1_kernel on the widened lanes, rounded once.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> expm1_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return detail::expm1_f32_avx512(x);
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::exp_f64_t8_arch<A>) return detail::expm1_f32_t8(x);
#endif
#if defined(__aarch64__)
    if constexpr (detail::is_neon64<A>) return detail::expm1_f32_t8_neon(x);
#endif
    xsimd::batch<double, A> lo, hi;
    detail::widen(x, lo, hi);
    return detail::narrow(expm1_kernel(lo), expm1_kernel(hi));
}

// sinh(x) and cosh(x), float32 lanes (contract at the top): AVX-512 in float32 arithmetic,
// neon64 and AVX2+FMA from one reduction for e^a and e^-a on the widened lanes, the other
// levels through sinh_f32_in_f64 / cosh_f32_in_f64 on the widened lanes.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> sinh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        using F = xsimd::batch<float, A>;
        const F res = xsimd::copysign(F(detail::sinh_cosh_f32_avx512<true>(xsimd::abs(x))), x);
        return xsimd::select(xsimd::isnan(x), x + x, res);  // tiny lanes: |x| with x's sign
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<A>) {
        using F = xsimd::batch<float, A>;
        const F res(detail::sinh_cosh_f32_neon<true>(x));
        return detail::odd_tiny_nan_fixup(x, xsimd::copysign(res, x), 0x1.0p-12f);
    } else
#endif
        if constexpr (detail::sinh_cosh_f32_fma_arch<A>) {
        using F = xsimd::batch<float, A>;
        const F res = detail::sinh_cosh_f32_fma<true>(x);
        return detail::odd_tiny_nan_fixup(x, xsimd::copysign(res, x), 0x1.0p-12f);
    } else {
        xsimd::batch<double, A> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::sinh_f32_in_f64(lo), detail::sinh_f32_in_f64(hi));
    }
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> cosh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        using F = xsimd::batch<float, A>;
        const F res = detail::sinh_cosh_f32_avx512<false>(xsimd::abs(x));
        return xsimd::select(xsimd::isnan(x), x + x, res);
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<A>) {
        using F = xsimd::batch<float, A>;
        const F res(detail::sinh_cosh_f32_neon<false>(x));
        return xsimd::select(xsimd::isnan(x), x + x, res);
    } else
#endif
        if constexpr (detail::sinh_cosh_f32_fma_arch<A>) {
        using F = xsimd::batch<float, A>;
        const F res = detail::sinh_cosh_f32_fma<false>(x);
        return xsimd::select(xsimd::isnan(x), x + x, res);
    } else {
        xsimd::batch<double, A> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::cosh_f32_in_f64(lo), detail::cosh_f32_in_f64(hi));
    }
}

namespace detail {
// tanh(x) for float32 values held in f64 lanes (see the contract above): the float32 tanh
// of the levels without AVX-512.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tanh_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // y = -2|x| = k ln2 + r; beyond |x| = 10, tanh rounds to +-1 in float32 (above 9.02)
    const B y = B(-2.0) * xsimd::min(xsimd::abs(x), B(10.0));
    const B shifter(0x1.8p52);
    const B kd = dd::fmadd(y, B(0x1.71547652b82fep+0), shifter) - shifter;  // in [-29, 0]
    const B r = (y - kd * B(0x1.62e42fefa38p-1)) - kd * B(0x1.ef35793c7673p-45);  // first exact
    // Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12): tools/explog_remez.py
    // expm1_f32, degree 5, relative error of r + r^2 Q(r) vs e^r - 1: 2^-31.96.
    const B q = detail::horner(r, 0x1.00000025f7f99p-1,  // 0.50000000442013281532
                               0x1.555554ef79b2ep-3,  // 0.16666666370221022708
                               0x1.5554b1170079dp-5,  // 0.04166636073934102541
                               0x1.111189770d58ep-7,  // 0.0083333893981983007959
                               0x1.6d7210c54fa5cp-10,  // 0.0013940642105151534666
                               0x1.a032c2cfb41dp-13);  // 0.00019845880750902914272
    const B p = dd::fmadd(r * r, q, r);  // e^r - 1
    const B s = detail::pow2i(kd);
    const B em1 = dd::fmadd(s, p, s - B(1.0));  // e^y - 1 (s - 1 exact)
    return odd_tiny_nan_fixup(x, xsimd::copysign(detail::divide(-em1, em1 + B(2.0)), x), 0x1.0p-12);
}

#if defined(__AVX512F__)
// The 32 entries of tanh_f32_avx512 (tools/tanh_f32_table.py writes the rows; method at the
// top): per entry m, delta, c0..c5 with tanh(a) ~ c0 + delta t + t (c1 + c2 t + ... + c5 t^4),
// t = a - m. Max weighted error of an entry's fit 2^-26.1 ([4, 5)), most below 2^-28.
struct TanhF32Table {
    alignas(64) float row[8][32];
};
inline constexpr TanhF32Table tanh_f32_table = {{
    {0x1.202ec8p+1f, 0x1.5f9268p+1f, 0x1.a0499p+1f,  0x1.e002cep+1f, 0x1.1fe142p+2f, 0x1.5fe8bep+2f,
     0x1.9fef28p+2f, 0x1.e0d5b8p+2f, 0x1.154206p+3f, 0x1.6p+3f,      0x1.6p+3f,      0x1.6p+3f,
     0.0f,           0x1.5fe34p-4f,  0x1.9fd63ap-4f, 0x1.dfe2e6p-4f, 0x1.1ff20ep-3f, 0x1.6006ap-3f,
     0x1.a01724p-3f, 0x1.dff0bcp-3f, 0x1.1ff652p-2f, 0x1.602b4ap-2f, 0x1.9fefaap-2f, 0x1.dff4c6p-2f,
     0x1.2018bp-1f,  0x1.5ffc7cp-1f, 0x1.a01cfcp-1f, 0x1.dff95ap-1f, 0x1.20155cp+0f, 0x1.5fef1ep+0f,
     0x1.a01248p+0f, 0x1.dfee32p+0f},  // m
    {0.0f, 0.0f,    0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
     0.0f, 0x1p+0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
     0.0f, 0.0f,    0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},  // delta
    {0x1.f4c7f6p-1f, 0x1.fbcde8p-1f, 0x1.fe783cp-1f, 0x1.ff6f1ep-1f, 0x1.ffdf88p-1f, 0x1.fffb9cp-1f,
     0x1.ffff68p-1f, 0x1.ffffecp-1f, 0x1.fffffep-1f, 0x1p+0f,        0x1p+0f,        0x1p+0f,
     0.0f,           0x1.5f0648p-4f, 0x1.9e69fep-4f, 0x1.ddb3dep-4f, 0x1.1e1024p-3f, 0x1.5c9976p-3f,
     0x1.9a7552p-3f, 0x1.d757e8p-3f, 0x1.189aa6p-2f, 0x1.52e952p-2f, 0x1.8a79f8p-2f, 0x1.bfa556p-2f,
     0x1.051ab4p-1f, 0x1.31559cp-1f, 0x1.5798eep-1f, 0x1.77d528p-1f, 0x1.9e6b72p-1f, 0x1.c27104p-1f,
     0x1.d9cc3cp-1f, 0x1.e8756cp-1f},  // c0
    {0x1.631258p-5f,
     0x1.0b6c54p-6f,
     0x1.872e3p-8f,
     0x1.219b08p-9f,
     0x1.03b96p-11f,
     0x1.1900a6p-14f,
     0x1.3001eap-17f,
     0x1.400562p-20f,
     0x1.001a16p-23f,
     0.0f,
     0.0f,
     0.0f,
     -0x1.6684e6p-34f,
     0x1.fc3d5cp-1f,
     0x1.fac24ap-1f,
     0x1.f9093p-1f,
     0x1.f602cp-1f,
     0x1.f12a74p-1f,
     0x1.eb6f2p-1f,
     0x1.e4e15cp-1f,
     0x1.d98daap-1f,
     0x1.c7ea62p-1f,
     0x1.b4048ap-1f,
     0x1.9e27a6p-1f,
     0x1.7ad846p-1f,
     0x1.49e972p-1f,
     0x1.196a6cp-1f,
     0x1.d83dd4p-2f,
     0x1.61204ep-2f,
     0x1.cedcf8p-3f,
     0x1.26374ep-3f,
     0x1.70007ap-4f},  // c1
    {-0x1.5b480ap-5f,
     -0x1.09377cp-6f,
     -0x1.85fbfap-8f,
     -0x1.2143aep-9f,
     -0x1.035648p-11f,
     -0x1.18a414p-14f,
     -0x1.2f9fd8p-17f,
     -0x1.3fa042p-20f,
     -0x1.feba36p-24f,
     0.0f,
     0.0f,
     0.0f,
     0x1.7d1d5ep-25f,
     -0x1.5c7238p-4f,
     -0x1.9a2c04p-4f,
     -0x1.d73492p-4f,
     -0x1.187b56p-3f,
     -0x1.527fd2p-3f,
     -0x1.89f894p-3f,
     -0x1.be608ap-3f,
     -0x1.038888p-2f,
     -0x1.2dc97ep-2f,
     -0x1.4fef6p-2f,
     -0x1.6a195ap-2f,
     -0x1.8265fep-2f,
     -0x1.897d76p-2f,
     -0x1.79b5b2p-2f,
     -0x1.5aa5e4p-2f,
     -0x1.1dd3bap-2f,
     -0x1.9736fap-3f,
     -0x1.1043acp-3f,
     -0x1.5f14e8p-4f},  // c2
    {0x1.baa5e4p-6f,
     0x1.5bd75ap-7f,
     0x1.026bf6p-8f,
     0x1.80d502p-10f,
     0x1.59a63ep-12f,
     0x1.762f3ap-15f,
     0x1.94d606p-18f,
     0x1.a99266p-21f,
     0x1.522b18p-24f,
     0.0f,
     0.0f,
     0.0f,
     -0x1.555668p-2f,
     -0x1.4c3cecp-2f,
     -0x1.476cd2p-2f,
     -0x1.4216bep-2f,
     -0x1.3b5942p-2f,
     -0x1.2ef2a2p-2f,
     -0x1.202606p-2f,
     -0x1.1038f4p-2f,
     -0x1.e8f20cp-3f,
     -0x1.9828d4p-3f,
     -0x1.4255e8p-3f,
     -0x1.d7105p-4f,
     -0x1.bc4bc4p-5f,
     0x1.d7c1f6p-7f,
     0x1.07667cp-4f,
     0x1.84231p-4f,
     0x1.c69344p-4f,
     0x1.97ef12p-4f,
     0x1.33c282p-4f,
     0x1.a88af2p-5f},  // c3
    {-0x1.94ea3ap-7f,
     -0x1.5370f6p-8f,
     -0x1.021b7cp-9f,
     -0x1.837ffep-11f,
     -0x1.69f352p-13f,
     -0x1.884adap-16f,
     -0x1.a88262p-19f,
     -0x1.be9098p-22f,
     -0x1.6d3688p-25f,
     0.0f,
     0.0f,
     0.0f,
     0x1.0b7662p-13f,
     0x1.b350aap-5f,
     0x1.0e0d76p-4f,
     0x1.3efbc2p-4f,
     0x1.69039p-4f,
     0x1.acc4a2p-4f,
     0x1.ed007p-4f,
     0x1.111642p-3f,
     0x1.3347ap-3f,
     0x1.502b28p-3f,
     0x1.5c49a4p-3f,
     0x1.584c2ep-3f,
     0x1.39eedcp-3f,
     0x1.e96e9p-4f,
     0x1.46de34p-4f,
     0x1.630552p-5f,
     0x1.d9c032p-9f,
     -0x1.59beb4p-6f,
     -0x1.9bb116p-6f,
     -0x1.55b9e4p-6f},  // c4
    {0x1.04a4c2p-8f,
     0x1.f63db2p-10f,
     0x1.94621ap-11f,
     0x1.33246p-12f,
     0x1.1fafbep-14f,
     0x1.38b174p-17f,
     0x1.52bb5ap-20f,
     0x1.6eb1f6p-23f,
     0x1.3d135ap-26f,
     0.0f,
     0.0f,
     0.0f,
     0x1.0e3ddap-3f,
     0x1.62413cp+3f,
     -0x1.7af9a6p-2f,
     -0x1.56fd4ap+3f,
     0x1.daec8ap-1f,
     0x1.10bbe6p+0f,
     0x1.b26be8p-4f,
     0x1.21cae8p+0f,
     -0x1.93ddccp-6f,
     0x1.773d54p-5f,
     -0x1.1e4488p-4f,
     -0x1.a7d024p-5f,
     -0x1.3fce58p-5f,
     -0x1.0e2206p-4f,
     -0x1.e945ap-5f,
     -0x1.a7639p-5f,
     -0x1.06dfe6p-5f,
     -0x1.385b78p-7f,
     0x1.64de5p-10f,
     0x1.2e51cep-8f},  // c5
}};

// Entry `r` of tanh_f32_table for each lane's index (its low 5 bits).
inline __m512 tanh_f32_lookup(int r, __m512i index) noexcept {
    return _mm512_permutex2var_ps(_mm512_load_ps(tanh_f32_table.row[r]), index,
                                  _mm512_load_ps(tanh_f32_table.row[r] + 16));
}

// tanh(|x|) for float32 lanes, AVX-512 (method at the top), from a = |x|: NaN lanes return a
// quieted (its sign is put back by the caller), lanes below 2^-12 return a.
inline __m512 tanh_f32_avx512(__m512 a) noexcept {
    // clamped to [2^-12, 9.25] (tanh rounds to 1 from 9.0109 on; below 2^-12 it rounds to a),
    // NaN kept (min/max return their second operand for a NaN)
    const __m512 ac =
        _mm512_max_ps(_mm512_set1_ps(0x1.0p-12f), _mm512_min_ps(_mm512_set1_ps(9.25f), a));
    // the entry: four per binade from the exponent and top two mantissa bits, all of
    // [2^-12, 5/64) in entry 12 (bits of 2^-4 >> 21)
    const __m512i index = _mm512_srli_epi32(
        _mm512_max_epi32(_mm512_castps_si512(ac), _mm512_set1_epi32(0x3d800000)), 21);
    const __m512 t = _mm512_sub_ps(ac, tanh_f32_lookup(0, index));  // exact
    __m512 p = tanh_f32_lookup(7, index);
    p = _mm512_fmadd_ps(p, t, tanh_f32_lookup(6, index));
    p = _mm512_fmadd_ps(p, t, tanh_f32_lookup(5, index));
    p = _mm512_fmadd_ps(p, t, tanh_f32_lookup(4, index));
    p = _mm512_fmadd_ps(p, t, tanh_f32_lookup(3, index));
    // c0 + delta t is exact (c0 = 0 where delta = 1), so entry 12's result t + t A has one
    // rounding; elsewhere c0 carries tanh(m) to 2^-14 ulp and t A is below 1/8 of the result
    const __m512 c = _mm512_fmadd_ps(t, tanh_f32_lookup(1, index), tanh_f32_lookup(2, index));
    const __m512 y = _mm512_fmadd_ps(t, p, c);
    // below 2^-12 the clamped lane gives tanh(2^-12) = 2^-12 > a: the minimum is a there and
    // the result elsewhere (tanh(a) < a); the result second, so that NaN returns it (quieted)
    return _mm512_min_ps(a, y);
}
#endif  // __AVX512F__

#if defined(__AVX2__) && defined(__FMA__)
// The 8 entries of tanh_f32_avx2 (tools/tanh_f32_table.py --avx2 writes the rows; method at
// the top): per entry m, delta, c0..c8 with tanh(a) ~ c0 + delta t + t (c1 + c2 t + ... +
// c8 t^7), t = a - m.
struct TanhF32Avx2Table {
    alignas(32) float row[11][8];
};
inline constexpr TanhF32Avx2Table tanh_f32_avx2_table = {{
    {0x1.8b9554p+0f, 0x1.447feap+1f, 0x1.cb831ep+1f, 0x1.65a13ep+2f, 0x1.e434eep+2f, 0.0f,
     0x1.5eadbap-2f, 0x1.e8f276p-1f},  // m
    {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0x1p+0f, 0.0f, 0.0f},  // delta
    {0x1.d37476p-1f, 0x1.f99be2p-1f, 0x1.ff3876p-1f, 0x1.fffc54p-1f, 0x1.ffffeep-1f, 0.0f,
     0x1.519564p-2f, 0x1.7beaf6p-1f},  // c0
    {0x1.54dbc8p-3f, 0x1.9679f6p-6f, 0x1.8ec55ep-9f, 0x1.d5fd24p-15f, 0x1.1fff8p-20f,
     -0x1.39f838p-37f, 0x1.c85aacp-1f, 0x1.cc2e74p-2f},  // c1
    {-0x1.37341p-3f, -0x1.916714p-6f, -0x1.8e2a8cp-9f, -0x1.d5fa74p-15f, -0x1.1ff22ap-20f,
     0x1.103f02p-28f, -0x1.2ce4d8p-2f, -0x1.557792p-2f},  // c2
    {0x1.55053p-4f, 0x1.04e6bcp-6f, 0x1.08b7b8p-9f, 0x1.3969ccp-15f, 0x1.7fe29p-21f,
     -0x1.55556cp-2f, -0x1.9a193p-3f, 0x1.8fef82p-4f},  // c3
    {-0x1.9f75ap-6f, -0x1.ef5caap-8f, -0x1.0748dap-10f, -0x1.39a2fp-16f, -0x1.817ab2p-22f,
     0x1.7364a8p-17f, 0x1.4fe222p-3f, 0x1.3d1244p-5f},  // c4
    {-0x1.e346a6p-11f, 0x1.62a65ep-9f, 0x1.9d2094p-12f, 0x1.f1a806p-18f, 0x1.39a658p-23f,
     0x1.10b3e6p-3f, 0x1.0e09acp-5f, -0x1.a414fcp-5f},  // c5
    {0x1.821d92p-8f, -0x1.6d548ep-11f, -0x1.f9a088p-14f, -0x1.357f7ap-19f, -0x1.a3c35p-25f,
     0x1.96f508p-10f, -0x1.3a750ep-4f, 0x1.20fb08p-6f},  // c6
    {-0x1.c01d1cp-9f, 0x1.a04712p-14f, 0x1.acf95ep-16f, 0x1.0b4438p-21f, 0x1.988414p-27f,
     -0x1.f833acp-5f, 0x1.7a3a36p-6f, 0x1.5c70a6p-8f},  // c7
    {0x1.bb130cp-11f, 0x1.0ac708p-20f, -0x1.6b6d76p-19f, -0x1.cbe1f2p-25f, -0x1.91cccep-30f,
     0x1.427974p-6f, 0x1.328f1ap-9f, -0x1.c208ep-8f},  // c8
}};

// tanh(|x|) for float32 lanes, AVX2+FMA (method at the top), from a = |x|: NaN lanes return
// a quieted (its sign is put back by the caller), lanes below 2^-12 return a.
inline __m256 tanh_f32_avx2(__m256 a) noexcept {
    // clamped to [2^-12, 9.25] as tanh_f32_avx512 (NaN kept: min/max return their second
    // operand for a NaN)
    const __m256 ac =
        _mm256_max_ps(_mm256_set1_ps(0x1.0p-12f), _mm256_min_ps(_mm256_set1_ps(9.25f), a));
    // the entry: half binades of RN(ac + 3/4), vpermps reads the low 3 bits
    const __m256i index =
        _mm256_srli_epi32(_mm256_castps_si256(_mm256_add_ps(ac, _mm256_set1_ps(0.75f))), 22);
    const auto lookup = [index](int r) {
        return _mm256_permutevar8x32_ps(_mm256_load_ps(tanh_f32_avx2_table.row[r]), index);
    };
    const __m256 t = _mm256_sub_ps(ac, lookup(0));  // exact
    __m256 p = lookup(10);
    for (int r = 9; r >= 3; --r) p = _mm256_fmadd_ps(p, t, lookup(r));
    // c0 + delta t is exact (c0 = 0 where delta = 1), so the small entry's result t + t A
    // has one rounding; elsewhere c0 carries tanh(m) to 2^-14 ulp
    const __m256 c = _mm256_fmadd_ps(t, lookup(1), lookup(2));
    const __m256 y = _mm256_fmadd_ps(t, p, c);
    // as tanh_f32_avx512: a below 2^-12 and the result elsewhere, NaN -> the result (quieted)
    return _mm256_min_ps(a, y);
}
#endif  // __AVX2__ && __FMA__
}  // namespace detail

// tanh(x), float32 lanes (contract at the top): AVX-512 and AVX2+FMA in float32 arithmetic,
// the other levels through tanh_f32_in_f64 on the widened lanes, rounded once.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> tanh_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        // tanh(|x|) with x's sign bit put back (NaN: x quieted, as x + x; tiny lanes: x)
        const __m512 a = _mm512_abs_ps(x);
        return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
            _mm512_castps_si512(detail::tanh_f32_avx512(a)), _mm512_castps_si512(x),
            _mm512_set1_epi32(INT32_MIN), 0xf8));  // y | (x & sign)
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::exp_f32_t8_arch<A>) {
        // as above: y | (x & sign)
        const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
        return _mm256_or_ps(detail::tanh_f32_avx2(a), _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
    } else
#endif
    {
        xsimd::batch<double, A> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(detail::tanh_f32_in_f64(lo), detail::tanh_f32_in_f64(hi));
    }
}

}  // namespace numfuse::kernels
