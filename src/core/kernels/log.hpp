// log(x) (natural logarithm) for float32 / float64 SIMD lanes (xsimd 8.1).
//
// Contract
//   log_kernel(batch<double>) / log_kernel(batch<float>): ln x per lane.
//   Max error <= 1 ULP against the correctly rounded result, for every level and
//   dtype (enforced by tests/cpp/test_exp_log.cpp; benchmarks/cpp/accuracy_harness.cpp
//   prints the measured maxima).
//   Valid range: all inputs; subnormal inputs are exact to the same bound.
//     log(+-0) = -inf, log(x < 0) = log(-inf) = default NaN with the sign bit
//     set (0xfff8000000000000 / 0xffc00000), log(+inf) = +inf, log(1) = +0
//     log(NaN): f64 returns the input NaN (quieted, payload and sign kept);
//     f32 returns the canonical +qNaN 0x7fc00000 (aarch64: the input quieted,
//     see detail::nan_result) -- both as NumPy 2.x does.
//   Floating-point status flags raised inside are meaningless (the caller
//   computes flags explicitly).
//   (The float32 log2 / log10 kernels are kernels/logbase_f32.hpp's; they use log_reduce
//   and, on AVX-512, log_scaled_fix_avx512 from here.)
//
// Methods
//   AVX-512 f64: x = m 2^E with m = getmant(x) in [1, 2), E = getexp(x) (both take
//     subnormal inputs as they come: no scaling, no rare path); then an integer
//     reduction on the bits of m: m = z 2^j with z in [0.640625, 1.28125), j = 0 or 1,
//     k = E + j = E - getexp(z), the cell i (top 4 fraction bits) from the bits of
//     m - OFF (subtract, shift, and, subtract), invc from a 16-entry in-register table
//     (1/c of the cell on a 1/64 grid, so t = z invc - 1 is exact in one FMA,
//     |t| <= 0.0342; invc = 1 on the cell holding z = 1), -log(invc) = T_hi + T_lo
//     (T_hi on the 2^-42 grid, so k ln2_hi + T_hi is exact). log x = (k ln2_hi + T_hi
//     + t) [exact two-sum] + (k ln2_lo + T_lo + t^2 (-1/2 + t R(t))), R minimax of
//     degree 7 (`tools/explog_remez.py log64_bits` makes the cells, tables and R);
//     specials in one vfixupimm. (Before, the reduction ran on the bits of x and
//     subnormal inputs went to a rare path that scaled them by 2^52: a multiplication
//     with a subnormal operand takes a microcode assist on x86, and ~2.5% subnormal
//     lanes made log 3x slower; getmant + 2 getexp cost 2 instructions more.)
//   AVX-512 f32: x = m 2^E with m in [0.75, 1.5) (vgetmantps; subnormals need no
//     special case), E = getexp(x) - getexp(m), t = m invc - 1 exact in one FMA,
//     invc = j/16 with j = round(16 * rcp14(m)) in 11..21 (|t| < 2^-4.4),
//     tables indexed by j & 15 (T_hi on the 2^-16 grid), R of degree 3.
//   AVX2+FMA f32: AVX-512 f32's method without getmant / getexp / rcp14 (log_f32_avx2):
//     subnormals scaled by 2^126 as below, m in [0.75, 1.5) and E from integer bit
//     arithmetic, j = round(16 rcpps(m)) (12 bits; at a cell edge either neighbouring
//     j keeps |t| <= 0.0476, inside R's fit), the same tables (two vpermps and a blend per
//     16-entry table) and R; no division. Exhaustively over the positive float32 inputs
//     (subnormals included) max 0.5252 ULP on AMD Zen 3. rcpps is not specified bit for
//     bit (Intel and AMD differ), so a result next to a cell edge may differ in its last
//     bit between CPU vendors; both are within the bound.
//   AVX2+FMA f64: AVX-512 f64's method with 128 cells instead of 16 (top 7 fraction bits
//     of bits(x) + bits(1) - bits(0.638671875); z in [0.638671875, 1.27734375), invc on
//     grids down to 2^-10, |t| <= 0.00528, `tools/explog_remez.py log64_bits128`), so R
//     is of degree 4 instead of 7, the reduction on the bits of x (subnormals scaled by
//     2^1022 as below; the ufunc loop's fast form leaves them to the rare path), the 128
//     rows {invc, T_hi, T_lo} (kernels/log_rows128.hpp) looked up by four row loads and a
//     transpose, as the 16 rows were before (log_f64_avx2); no division. The same log as a
//     pair hi + lo (log_f64_avx2_pair) is the log of kernels/logpair.hpp's AVX2+FMA float64
//     log2, log10, log1p, arcsinh, arccosh and arctanh. The rows' addresses come
//     from the lanes, or (contiguous ufunc loops, log_kernel_nofix_at) from scalar loads of the
//     input's high words, which shortens the chain the loop waits on (LogRowsFromMemory).
//   neon64 f64 (log_f64_neon): the AVX2+FMA float64 kernel's arithmetic; each lane's row by
//     one 32-byte load from its cell offset in a general register, columns by zips.
//   neon64 f32 (log_f32_neon): the AVX2+FMA float32 kernel's arithmetic, the cell from a
//     cubic J(m) ~ 16/m in place of rcpps (no estimate instruction), each 16-entry table
//     read by one TBL.
//   SSE2: x = (1 + f) 2^E with 1 + f in [1/sqrt2, sqrt2) from integer
//     bit arithmetic (subnormals scaled by 2^1022 / 2^126 with an or and a
//     subtraction: no multiplication by a subnormal); s = f / (2 + f),
//     log(1 + f) = f - f^2/2 + s (f^2/2 + s^2 P(s^2)) (the classic atanh form,
//     own minimax P of degree 6 f64 / 2 f32); f^2/2 split so that f - f^2/2
//     is exact to ~2^-80 and E ln2_hi + f - f^2/2 summed as an exact pair.
//     No table, no FMA needed.
//
// Coefficients and tables: tools/explog_remez.py (own Remez exchange in
// mpmath; the fit named beside each polynomial), as exact hex floats.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/avx512_lanes.hpp"
#include "kernels/common.hpp"
#include "kernels/generated/explog_coefficients.hpp"
#include "kernels/log_rows128.hpp"

namespace numfuse::kernels {
namespace detail {

template <class T>
struct log_consts;

template <>
struct log_consts<double> {
    static constexpr double min_normal = 0x1.0p-1022;
    // Subnormals: bits(x) | bits(1.0), minus 1, is x 2^1022 exactly (see log_reduce).
    static constexpr std::int64_t one_bits = 0x3ff0000000000000;
    static constexpr double sub_exp = 1022.0;
    static constexpr std::int64_t off = 0x00095f619980c433;  // bits(1.0) - bits(RN(1/sqrt2))
    static constexpr std::int64_t m_base = 0x3fe6a09e667f3bcd;  // bits(RN(1/sqrt2))
    static constexpr std::int64_t mant_mask = 0x000fffffffffffff;
    static constexpr std::int64_t magic_bits = 0x4330000000000000;  // bits(2^52)
    static constexpr double magic_bias = 0x1.0p52 + 1023.0;   // 2^52 + exponent bias
    static constexpr int mant_bits = 52;
    static constexpr double split_shifter = 0x1.8p26;       // rounds |f| < 1/2 to the 2^-26 grid
    static constexpr double ln2_hi = 0x1.62e42fefa38p-1;  // ln2 on the 2^-42 grid: E*ln2_hi exact
    static constexpr double ln2_lo = 0x1.ef35793c7673p-45;  // RN(ln2 - ln2_hi)
    static constexpr std::int64_t neg_nan = static_cast<std::int64_t>(0xfff8000000000000ull);
};

template <>
struct log_consts<float> {
    static constexpr float min_normal = 0x1.0p-126f;
    static constexpr std::int32_t one_bits = 0x3f800000;  // x 2^126, as for f64
    static constexpr float sub_exp = 126.0f;
    static constexpr std::int32_t off = 0x004afb0d;  // bits(1.0f) - bits(RN_f(1/sqrt2))
    static constexpr std::int32_t m_base = 0x3f3504f3;  // bits(RN_f(1/sqrt2))
    static constexpr std::int32_t mant_mask = 0x007fffff;
    static constexpr std::int32_t magic_bits = 0x4b000000;  // bits(2^23)
    static constexpr float magic_bias = 0x1.0p23f + 127.0f;
    static constexpr int mant_bits = 23;
    static constexpr float split_shifter = 0x1.8p12f;  // rounds |f| < 1/2 to the 2^-12 grid
    static constexpr float ln2_hi = 0x1.62e4p-1f;  // ln2 on the 2^-16 grid: E*ln2_hi exact
    static constexpr float ln2_lo = 0x1.7f7d1cp-20f;  // RN(ln2 - ln2_hi)
    static constexpr std::int32_t neg_nan = static_cast<std::int32_t>(0xffc00000u);
};

// P(z) ~ (2 atanh(s) - 2 s) / s^3, z = s^2 in [0, 0.0294373]
// (|s| <= (sqrt2-1)/(sqrt2+1) (1 + 2^-20)), degree 6 (f64) / 2 (f32): fits log64_gen /
// log32_gen (coefficients and fit errors in
// src/core/kernels/generated/explog_coefficients.hpp, shared with src/core/device_math).
template <class B>
inline B log_poly_gen(const B& z, double) noexcept {
    return horner(z, NUMFUSE_LOG64_GEN);
}

template <class B>
inline B log_poly_gen(const B& z, float) noexcept {
    return horner(z, NUMFUSE_LOG32_GEN);
}

// x = m 2^e with m in [1/sqrt2, sqrt2) (the bounds rounded to T), e integral, for positive
// finite x, subnormals included (scaled into the normal range first); other lanes: garbage.
template <class T, class A>
struct log_split {
    xsimd::batch<T, A> e, m;
};

template <class T, class A>
inline log_split<T, A> log_reduce(const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
    using I = xsimd::batch<int_of_t<T>, A>;
    using U = xsimd::batch<std::make_unsigned_t<int_of_t<T>>, A>;
    using C = log_consts<T>;
    // Subnormal (and <= 0, garbage) lanes are scaled into the normal range without a
    // multiplication: x = N 2^-1074 (2^-149) with the integer N in its bits, so the bits
    // of N | bits(1.0) are 1 + N 2^-52 (2^-23) and subtracting 1 leaves N 2^-52 = x 2^1022
    // (x 2^126) exactly. An arithmetic operation on a subnormal operand takes a microcode
    // assist on x86 (~100+ cycles per batch holding one): this path takes none.
    const auto sub = x < B(C::min_normal);
    const B xs = xsimd::select(sub, as_float<T, A>(as_int(x) | I(C::one_bits)) - B(T(1)), x);
    const I u = as_int(xs) + I(C::off);  // exponent field of u = E + bias
    const U eb = bit_cast<U>(u) >> C::mant_bits;
    B e = as_float<T, A>(bit_cast<I>(eb) | I(C::magic_bits)) - B(C::magic_bias);
    e = e - xsimd::select(sub, B(C::sub_exp), B(T(0)));
    return {e, as_float<T, A>((u & I(C::mant_mask)) + I(C::m_base))};
}

// log_generic's special values on a computed result (x <= 0, +inf, NaN).
template <class T, class A>
inline xsimd::batch<T, A> log_special_values(const xsimd::batch<T, A>& x,
                                             xsimd::batch<T, A> res) noexcept {
    using B = xsimd::batch<T, A>;
    const B inf(std::numeric_limits<T>::infinity());
    res = xsimd::select(x < B(T(0)), from_bits<T, A>(log_consts<T>::neg_nan), res);  // x < 0, -inf
    res = xsimd::select(x == B(T(0)), -inf, res);
    res = xsimd::select(x == inf, inf, res);
    return nan_result(x, res);
}

// Portable kernel (SSE2; any xsimd arch).
template <class T, class A>
inline xsimd::batch<T, A> log_generic(const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
    using C = log_consts<T>;
    const log_split<T, A> em = log_reduce(x);
    const B e = em.e;
    const B f = em.m - B(T(1));  // exact
    const B s = detail::divide(f, B(T(2)) + f);  // correctly rounded on neon64 too
    const B z = s * s;
    const B r = z * log_poly_gen(z, T());
    // f^2/2 = A + a exactly enough: fh = f rounded to the grid of C::split_shifter
    // (2^-26 / 2^-12), A = fh^2/2 exact, and f - A is exact too (both lie on
    // the 2^-53 / 2^-25 grid and |f - A| < 1/2).
    const B split(C::split_shifter);
    const B fh = (f + split) - split;
    const B fl = f - fh;
    const B big_a = B(T(0.5)) * (fh * fh);
    const B small_a = fl * (fh + B(T(0.5)) * fl);
    const B hfsq = big_a + small_a;
    const B fa = f - big_a;  // exact
    // log(1+f) = f - f^2/2 + s (f^2/2 + r); result = E ln2 + log(1+f), with
    // E ln2_hi + (f - A) as an exact pair (|E ln2_hi| >= |f - A| when E != 0).
    const B eh = e * B(C::ln2_hi);  // exact
    const B hi = eh + fa;
    const B err = (eh - hi) + fa;
    const B lo =
        detail::fused_madd(s, hfsq + r, detail::fused_madd(e, B(C::ln2_lo), err - small_a));
    return log_special_values(x, hi + lo);
}

// f64 cells of the integer reduction (tools/explog_remez.py log64_bits): x = z 2^k with z in
// [0.640625, 1.28125), k and the cell i from the bits of x - OFF; per cell invc (1/c on a 1/64
// grid, so that t = z invc - 1 is exact in one FMA; invc = 1 on the cell holding z = 1) and
// -log(invc) = hi + lo (hi on the 2^-42 grid, so that k ln2_hi + hi is exact).
inline constexpr std::uint64_t log_bits_off = 0x3fe4800000000000ull;  // 0.640625
alignas(64) inline constexpr double log_bits_invc[16] = {
    0x1.88p+0, 0x1.7p+0, 0x1.6p+0,  0x1.58p+0, 0x1.48p+0, 0x1.38p+0, 0x1.3p+0, 0x1.28p+0,
    0x1.18p+0, 0x1.1p+0, 0x1.08p+0, 0x1.0p+0,  0x1.ep-1,  0x1.c8p-1, 0x1.bp-1, 0x1.98p-1,
};
alignas(64) inline constexpr double log_bits_hi[16] = {
    -0x1.b44f77bcc9p-2, -0x1.739d7f6bbdp-2, -0x1.4618bc21c6p-2, -0x1.2e8e2bae12p-2,
    -0x1.fb9186d5e4p-3, -0x1.9525a9cf46p-3, -0x1.5ff3070a7ap-3, -0x1.29552f82p-3,
    -0x1.6f0d28ae58p-4, -0x1.f0a30c0118p-5, -0x1.f829b0e78p-6,  0x0p+0,
    0x1.08598b59e4p-4,  0x1.da72763844p-4,  0x1.5bf406b544p-3,  0x1.d1037f2656p-3,
};
alignas(64) inline constexpr double log_bits_lo[16] = {
    0x1.3ae68224aa2cep-47,  -0x1.a7389314feb5p-52, 0x1.3d82f484c84ccp-46,  0x1.67b1e99b72bd8p-45,
    0x1.d572aab993c87p-47,  0x1.297137d9f158fp-44, 0x1.8586f183bebf2p-44,  0x1.5b967f4471dfcp-44,
    0x1.4b4641b664613p-44,  0x1.d599e83368e91p-45, -0x1.980267c7e09e4p-45, 0x0p+0,
    -0x1.7e5dd7009902cp-46, 0x1.a89401fa71733p-46, -0x1.27023eb68981cp-46, -0x1.84a7e75b6f6e4p-47,
};

// R(t) ~ (log1p(t) - t + t^2/2)/t^3 on |t| <= 0.0342: tools/explog_remez.py log64_bits,
// error weighted by the smallest |log x| a lane with this t can have; max weighted error
// 2^-60.97. R(t) = sum r[i] t^i (the AVX-512 float64 table kernel; AVX2+FMA has its own
// cells, log64_bits128_r below).
inline constexpr double log64_bits_r[8] = {
    0x1.5555555555496p-2,  // 0.3333333333333227122
    -0x1.00000000006c7p-2,  // -0.25000000000009631185
    0x1.9999999cdfba2p-3,  // 0.20000000009528401401
    -0x1.5555554c58fe1p-3,  // -0.16666666640514818387
    0x1.249227460a67fp-3,  // 0.1428568905114850629
    -0x1.000011e272e92p-3,  // -0.12500013325039965872
    0x1.c82bf2e97e293p-4,  // 0.11137003791362536098
    -0x1.9a11ac5bea455p-4,  // -0.10011451080085127796
};

// R(t) ~ (log1p(t) - t + t^2/2)/t^3 on |t| <= 0.00528 for the AVX2+FMA float64 kernel's
// 128 cells (kernels/log_rows128.hpp): tools/explog_remez.py log64_bits128, error weighted
// as log64_bits_r's, max weighted error 2^-61.62. R(t) = sum r[i] t^i.
inline constexpr double log64_bits128_r[5] = {
    0x1.5555555555303p-2,  // 0.33333333333330034121
    -0x1.fffffffe6783ap-3,  // -0.24999999995356053661
    0x1.99999a3654bffp-3,  // 0.20000000456147401517
    -0x1.5557ff8ec5d95p-3,  // -0.1666717496343436411
    0x1.24546214d8b3cp-3,  // 0.14273907304876753965
};

// -1/2 + t R(t) (log64_bits_r) by Estrin for the AVX-512 float64 table kernel: Ops names the
// lanes (Pd8Ops: __m512d) with fma (rounded once), mul and set1; t2 = t^2.
template <class Ops>
NUMFUSE_ALWAYS_INLINE typename Ops::V log64_bits_estrin(typename Ops::V t,
                                                        typename Ops::V t2) noexcept {
    using V = typename Ops::V;
    const auto c = [](double v) NUMFUSE_ALWAYS_INLINE_LAMBDA { return Ops::set1(v); };
    const V t4 = Ops::mul(t2, t2);
    const V q0 = Ops::fma(c(log64_bits_r[0]), t, c(-0.5));
    const V q1 = Ops::fma(c(log64_bits_r[2]), t, c(log64_bits_r[1]));
    const V q2 = Ops::fma(c(log64_bits_r[4]), t, c(log64_bits_r[3]));
    const V q3 =
        Ops::fma(Ops::fma(c(log64_bits_r[7]), t, c(log64_bits_r[6])), t, c(log64_bits_r[5]));
    return Ops::fma(Ops::fma(q3, t2, q2), t4, Ops::fma(q1, t2, q0));
}
#if defined(__AVX512F__)
struct Pd8Ops {
    using V = __m512d;
    static NUMFUSE_ALWAYS_INLINE V fma(V a, V b, V c) noexcept { return _mm512_fmadd_pd(a, b, c); }
    static NUMFUSE_ALWAYS_INLINE V mul(V a, V b) noexcept { return _mm512_mul_pd(a, b); }
    static NUMFUSE_ALWAYS_INLINE V set1(double v) noexcept { return _mm512_set1_pd(v); }
};
#endif

// f32: indexed by j & 15; hi on the 2^-16 grid, lo = RN_f(-log(j/16) - hi). log's
// j = 11..21 (m in [0.75, 1.5)) use entries 11..15 and 0..5; the y >= 1 form's j = 8..16
// (m in [1, 2)) entries 8..15 and 0 (entry 8: ln2 as the kernel's ln2_hi + ln2_lo).
alignas(64) inline constexpr float log_tab16_hi_f[16] = {
    0x0p+0f,      -0x1.f0ap-5f, -0x1.e27p-4f, -0x1.5ffp-3f, -0x1.c9p-3f,  -0x1.1674p-2f,
    0x0p+0f,      0x0p+0f,      0x1.62e4p-1f, 0x1.2696p-1f, 0x1.e148p-2f, 0x1.7fbp-2f,
    0x1.2698p-2f, 0x1.a94p-3f,  0x1.1178p-3f, 0x1.086p-4f,
};
alignas(64) inline constexpr float log_tab16_lo_f[16] = {
    0x0p+0f,          -0x1.86008cp-20f, -0x1.db8abcp-22f, -0x1.83853cp-18f,
    0x1.070cacp-20f,  -0x1.cababap-18f, 0x0p+0f,          0x0p+0f,
    0x1.7f7d1cp-20f,  0x1.089a6ep-20f,  0x1.4344e4p-19f,  -0x1.7109fap-20f,
    -0x1.deecb2p-18f, -0x1.2c3752p-19f, 0x1.d044fcp-20f,  -0x1.9d2988p-18f,
};

// R(t) ~ (log1p(t) - t + t^2/2)/t^3 on |t| <= 0.0476 (the table reduction's t with j =
// round(16 rcp(m)), rcp's error included): tools/explog_remez.py log32_t16, max relative
// error 2^-33.71. Shared by the AVX-512 and AVX2+FMA float32 table kernels.
inline constexpr float log32_t16_r0 = 0x1.55554p-2f;  // 0.33333301544189453125
inline constexpr float log32_t16_r1 = -0x1.ffffdp-3f;  // -0.24999964237213134766
inline constexpr float log32_t16_r2 = 0x1.9a85e6p-3f;  // 0.20045070350170135498
inline constexpr float log32_t16_r3 = -0x1.5639e8p-3f;  // -0.16710263490676879883

// J(m) ~ 16/m on [0.75, 1.5), c0..c3 (tools/explog_remez.py recip16_32: absolute error
// 0.0270): the neon64 float32 log's cell j = round(J(m)) (log_f32_neon).
inline constexpr float log32_recip16[4] = {0x1.ea09e6p+5f, -0x1.58bb5ep+6f, 0x1.a694d6p+5f,
                                           -0x1.7d139p+3f};

// 1/ln2 and 1/ln10 as pairs hi + lo (hi = RN(c), lo = RN(c - hi)): the scale of the float64
// log2 / log10 table kernels (AVX-512 and AVX2+FMA; kernels/logpair.hpp).
inline constexpr double inv_ln2_hi = 0x1.71547652b82fep+0, inv_ln2_lo = 0x1.777d0ffda0d24p-56;
inline constexpr double inv_ln10_hi = 0x1.bcb7b1526e50ep-2, inv_ln10_lo = 0x1.95355baaafad3p-57;

#if defined(__AVX2__) && defined(__FMA__)
// The AVX2+FMA level (not AVX-512, which has its own kernels above).
template <class Arch>
inline constexpr bool is_avx2_fma =
    !is_avx512<Arch> && std::is_base_of<xsimd::fma3<xsimd::avx2>, Arch>::value;

// table[j & 15] per lane of a 16-entry float table, j in the low 4 bits of idx: one
// permute per 8-entry half (vpermps reads the low 3 bits) and a blend on bit 3 (moved to
// the sign bit in bit3).
NUMFUSE_ALWAYS_INLINE __m256 log_tab16_avx2(const float* table, __m256i idx, __m256 bit3) noexcept {
    const __m256 lo8 = _mm256_permutevar8x32_ps(_mm256_load_ps(table), idx);
    const __m256 hi8 = _mm256_permutevar8x32_ps(_mm256_load_ps(table + 8), idx);
    return _mm256_blendv_ps(lo8, hi8, bit3);
}

// f32, AVX2+FMA: the AVX-512 float32 reduction without getmant / getexp / rcp14. Subnormal
// lanes are scaled by 2^126 as in log_reduce (or with bits(1.0), minus 1: no multiplication
// with a subnormal operand); then x = m 2^E with m in [0.75, 1.5) from the bits (subtract
// bits(0.75), shift, and, subtract); j = round(16 rcpps(m)) in 11..21 (rcpps's 12 bits
// decide only near the cell edges, where either neighbour keeps |t| <= 0.0476), invc = j/16,
// t = m invc - 1 exact in one FMA (m on the 2^-24 grid times j/16 is on the 2^-28 grid and
// |t| < 2^-4), -log(invc) = T_hi + T_lo from log_tab16_hi_f / _lo_f (two permutes and a
// blend each). log x = (E ln2_hi + T_hi + t) [exact two-sum; E ln2_hi + T_hi exact on the
// 2^-16 grid] + (E ln2_lo + T_lo + t^2 (-1/2 + t R(t))). No division.
// log_f32_avx2_pair returns the two parts unsummed (hi = the rounded two-sum, lo = the
// rest), for the float32 log2 / log10 / log1p / arc*h kernels (logbase_f32.hpp,
// logpair.hpp), which scale it or add a first-order term before the last rounding:
// Subnormals = false leaves out the scaling (for arguments known to be normal: garbage on
// subnormal lanes); PlusE adds e_plus (0 or 1 per lane) to E: log(2^e_plus x) without forming
// it. Where E = 0 and j = 16 (x in about [0.9697, 1.032]) hi = t and lo = RN(t^2 (-1/2 +
// t R(t))): no cancellation next to 1.
struct log_ps8_pair {
    __m256 hi, lo;
};
template <bool Subnormals, bool PlusE = false>
NUMFUSE_ALWAYS_INLINE log_ps8_pair
log_f32_avx2_pair(__m256 x, [[maybe_unused]] __m256 e_plus = _mm256_setzero_ps()) noexcept {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 xs = x;
    __m256 sub = _mm256_setzero_ps();
    if constexpr (Subnormals) {
        sub = _mm256_cmp_ps(x, _mm256_set1_ps(0x1.0p-126f), _CMP_LT_OQ);
        xs = _mm256_blendv_ps(x, _mm256_sub_ps(_mm256_or_ps(x, one), one), sub);
    }
    const __m256i ix = _mm256_castps_si256(xs);
    const __m256i tmp = _mm256_sub_epi32(ix, _mm256_set1_epi32(0x3f400000));  // bits(0.75)
    const __m256 m = _mm256_castsi256_ps(_mm256_sub_epi32(
        ix, _mm256_and_si256(tmp, _mm256_set1_epi32(static_cast<int>(0xff800000u)))));
    __m256 e = _mm256_cvtepi32_ps(_mm256_srai_epi32(tmp, 23));
    if constexpr (Subnormals) e = _mm256_sub_ps(e, _mm256_and_ps(sub, _mm256_set1_ps(126.0f)));
    if constexpr (PlusE) e = _mm256_add_ps(e, e_plus);
    const __m256 z =
        _mm256_fmadd_ps(_mm256_rcp_ps(m), _mm256_set1_ps(16.0f), _mm256_set1_ps(0x1.8p23f));
    const __m256 invc = _mm256_fmsub_ps(z, _mm256_set1_ps(0.0625f), _mm256_set1_ps(0x1.8p19f));
    const __m256 t = _mm256_fmsub_ps(m, invc, one);  // exact
    const __m256i idx = _mm256_castps_si256(z);
    const __m256 bit3 = _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28));
    const __m256 th = log_tab16_avx2(log_tab16_hi_f, idx, bit3);
    const __m256 tl = log_tab16_avx2(log_tab16_lo_f, idx, bit3);
    const __m256 a = _mm256_fmadd_ps(e, _mm256_set1_ps(log_consts<float>::ln2_hi), th);  // exact
    const __m256 hi = _mm256_add_ps(a, t);
    const __m256 err = _mm256_add_ps(_mm256_sub_ps(a, hi), t);  // |a| >= |t| or a = 0
    const __m256 lo1 =
        _mm256_add_ps(_mm256_fmadd_ps(e, _mm256_set1_ps(log_consts<float>::ln2_lo), tl), err);
    __m256 rr = _mm256_fmadd_ps(_mm256_set1_ps(log32_t16_r3), t, _mm256_set1_ps(log32_t16_r2));
    rr = _mm256_fmadd_ps(rr, t, _mm256_set1_ps(log32_t16_r1));
    rr = _mm256_fmadd_ps(rr, t, _mm256_set1_ps(log32_t16_r0));
    const __m256 w = _mm256_fmadd_ps(rr, t, _mm256_set1_ps(-0.5f));
    return {hi, _mm256_fmadd_ps(_mm256_mul_ps(t, t), w, lo1)};
}
NUMFUSE_ALWAYS_INLINE __m256 log_f32_avx2(__m256 x) noexcept {
    const log_ps8_pair p = log_f32_avx2_pair<true>(x);
    return _mm256_add_ps(p.hi, p.lo);
}
// Where log_f64_avx2 finds the four lanes' rows in log_bits128_rows (rows of 32 bytes; the
// cell is bits 45..51 of u = bits(x) + bits(1) - bits(log_bits128_off)).
// From the lanes of u: a shift, an and and four extracts to general registers.
struct LogRowsFromLanes {
    NUMFUSE_ALWAYS_INLINE void operator()(__m256i u, const double* (&rows)[4]) const noexcept {
        // The cell's byte offset straight from u's bits 45..51: no scaling of the indices.
        const __m256i offset =
            _mm256_and_si256(_mm256_srli_epi64(u, 45 - 5), _mm256_set1_epi64x(127 << 5));
        const char* base = reinterpret_cast<const char*>(log_bits128_rows.v);
        rows[0] = reinterpret_cast<const double*>(base + _mm256_extract_epi64(offset, 0));
        rows[1] = reinterpret_cast<const double*>(base + _mm256_extract_epi64(offset, 1));
        rows[2] = reinterpret_cast<const double*>(base + _mm256_extract_epi64(offset, 2));
        rows[3] = reinterpret_cast<const double*>(base + _mm256_extract_epi64(offset, 3));
    }
};
// From the memory x was loaded from (x = the four doubles at src; subnormal lanes not scaled,
// so for log_f64_avx2<false> only): each lane's high 32 bits by a scalar load, plus the high
// word of bits(1) - bits(log_bits128_off) (its low word is 0: no carry to add), shifted and
// masked on the integer units. Same rows as LogRowsFromLanes, but they arrive earlier: no
// trip from the vector unit to the general registers, whose latency the loop waits on (the
// lookup heads the kernel's dependency chain, and a chain that long fills the vector
// scheduler).
struct LogRowsFromMemory {
    const double* src;
    NUMFUSE_ALWAYS_INLINE void operator()(__m256i, const double* (&rows)[4]) const noexcept {
        constexpr std::uint32_t u_hi =
            static_cast<std::uint32_t>((0x3ff0000000000000ull - log_bits128_off) >> 32);
        static_assert(((0x3ff0000000000000ull - log_bits128_off) & 0xffffffffull) == 0,
                      "no carry from the low word");
        const char* base = reinterpret_cast<const char*>(log_bits128_rows.v);
        for (int j = 0; j < 4; ++j) {
            std::uint32_t hi;
            std::memcpy(&hi, reinterpret_cast<const char*>(src + j) + 4, sizeof hi);
            rows[j] = reinterpret_cast<const double*>(
                base + (((hi + u_hi) >> (45 - 32 - 5)) & (127u << 5)));
        }
    }
};

// log x = hi + lo on AVX2+FMA float64 lanes (|lo| <= ~2^-52 |hi|: hi is the rounded sum of
// the exact k ln2_hi - log(invc) and t, lo the rest), split so that log2 / log10 can scale the
// pair and log1p / arcsinh / arccosh / arctanh (kernels/logpair.hpp) can add a first-order term
// to lo before the one rounding.
struct log_pd4_pair {
    __m256d hi, lo;
};

// f64, AVX2+FMA: 128 cells (kernels/log_rows128.hpp) on the bits of x (with Subnormals,
// subnormal lanes scaled by 2^1022 first, as in log_reduce: no multiplication with a
// subnormal operand; without, such lanes hold garbage). u = bits(x) + bits(1) - bits(OFF):
// the exponent field of u is k + 1023 and its top 7 fraction bits the cell, z = bits(OFF) +
// (u's fraction bits) in [0.638671875, 1.27734375), x = z 2^k; t = z invc - 1 exact in one
// FMA (|t| <= 0.00528). log x = (k ln2_hi + hi + t) [exact two-sum] + (k ln2_lo + lo + t^2
// (-1/2 + t R(t))), R of degree 4 (log64_bits128_r). No division. For positive finite
// lanes; others hold garbage (log_special_values repairs). Rows: where the cells' rows come
// from (LogRowsFromLanes, or LogRowsFromMemory without Subnormals; the same bits).
// PlusLn2: lanes set in plus_ln2 (all bits set, or clear) get log x + ln2 (k plus one:
// log(2x) without forming 2x, for arcsinh / arccosh of huge x).
// The cell reduction of the kernel above, alone (also power_avx2.hpp's log, which sums the same
// terms in more precision): k, t = z invc - 1 (exact) and the row's -log(invc) = T_hi + T_lo.
struct log_pd4_cell {
    __m256d k, t, log_hi, log_lo;
};
template <bool Subnormals, bool PlusLn2 = false, class Rows = LogRowsFromLanes>
NUMFUSE_ALWAYS_INLINE log_pd4_cell
log_f64_avx2_cell(__m256d x, Rows rows_of = {},
                  [[maybe_unused]] __m256d plus_ln2 = _mm256_setzero_pd()) noexcept {
    static_assert(!(Subnormals && std::is_same<Rows, LogRowsFromMemory>::value),
                  "the memory copy of x holds the unscaled subnormals");
    const __m256d one = _mm256_set1_pd(1.0);
    __m256d xs = x;
    __m256d sub = _mm256_setzero_pd();
    if constexpr (Subnormals) {
        sub = _mm256_cmp_pd(x, _mm256_set1_pd(0x1.0p-1022), _CMP_LT_OQ);
        xs = _mm256_blendv_pd(x, _mm256_sub_pd(_mm256_or_pd(x, one), one), sub);
    }
    const __m256i u = _mm256_add_epi64(
        _mm256_castpd_si256(xs),
        _mm256_set1_epi64x(static_cast<long long>(0x3ff0000000000000ull - log_bits128_off)));
    const __m256d z = _mm256_castsi256_pd(
        _mm256_add_epi64(_mm256_and_si256(u, _mm256_set1_epi64x(0x000fffffffffffffll)),
                         _mm256_set1_epi64x(static_cast<long long>(log_bits128_off))));
    // k = (u >> 52) - 1023 through the 2^52 magic number; minus 1022 on subnormal lanes
    __m256d k =
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(
                          _mm256_srli_epi64(u, 52), _mm256_set1_epi64x(0x4330000000000000ll))),
                      _mm256_set1_pd(0x1.0p52 + 1023.0));
    if constexpr (Subnormals) k = _mm256_sub_pd(k, _mm256_and_pd(sub, _mm256_set1_pd(1022.0)));
    if constexpr (PlusLn2) k = _mm256_add_pd(k, _mm256_and_pd(plus_ln2, one));
    const double* rows[4];
    rows_of(u, rows);
    using B4 = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
    B4 col[4];
    rows_to_columns_avx2<4>(rows, col);
    return {k, _mm256_fmsub_pd(z, col[0], one), col[1], col[2]};  // t exact
}

template <bool Subnormals, bool PlusLn2 = false, class Rows = LogRowsFromLanes>
NUMFUSE_ALWAYS_INLINE log_pd4_pair
log_f64_avx2_pair(__m256d x, Rows rows_of = {},
                  [[maybe_unused]] __m256d plus_ln2 = _mm256_setzero_pd()) noexcept {
    const log_pd4_cell cell = log_f64_avx2_cell<Subnormals, PlusLn2, Rows>(x, rows_of, plus_ln2);
    const __m256d k = cell.k, t = cell.t;
    const __m256d a = _mm256_fmadd_pd(k, _mm256_set1_pd(log_consts<double>::ln2_hi), cell.log_hi);
    const __m256d hi = _mm256_add_pd(a, t);
    const __m256d err = _mm256_add_pd(_mm256_sub_pd(a, hi), t);  // |a| >= |t| or a = 0
    const __m256d lo1 = _mm256_add_pd(
        _mm256_fmadd_pd(k, _mm256_set1_pd(log_consts<double>::ln2_lo), cell.log_lo), err);
    // -1/2 + t R(t) = q0 + t^2 (q1 + t^2 q2), pairs of coefficients by one FMA each
    const __m256d t2 = _mm256_mul_pd(t, t);
    const auto c = [](double v) NUMFUSE_ALWAYS_INLINE_LAMBDA { return _mm256_set1_pd(v); };
    const __m256d q0 = _mm256_fmadd_pd(c(log64_bits128_r[0]), t, c(-0.5));
    const __m256d q1 = _mm256_fmadd_pd(c(log64_bits128_r[2]), t, c(log64_bits128_r[1]));
    const __m256d q2 = _mm256_fmadd_pd(c(log64_bits128_r[4]), t, c(log64_bits128_r[3]));
    const __m256d w = _mm256_fmadd_pd(_mm256_fmadd_pd(q2, t2, q1), t2, q0);
    return {hi, _mm256_fmadd_pd(t2, w, lo1)};
}

// log x, f64, AVX2+FMA: log_f64_avx2_pair's hi + lo rounded once.
template <bool Subnormals, class Rows = LogRowsFromLanes>
NUMFUSE_ALWAYS_INLINE __m256d log_f64_avx2(__m256d x, Rows rows_of = {}) noexcept {
    const log_pd4_pair p = log_f64_avx2_pair<Subnormals, false, Rows>(x, rows_of);
    return _mm256_add_pd(p.hi, p.lo);
}

// log_kernel_nofix's AVX2+FMA kernel per dtype.
NUMFUSE_ALWAYS_INLINE __m256 log_avx2(__m256 x) noexcept { return log_f32_avx2(x); }
NUMFUSE_ALWAYS_INLINE __m256d log_avx2(__m256d x) noexcept { return log_f64_avx2<true>(x); }

// log_kernel on AVX2+FMA: the special values (x <= 0, +inf, NaN: not 0 < x < inf) by a
// branch on the rare batches that hold one; four selects on every batch cost more.
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> log_avx2_kernel(const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
    const B y(log_avx2(x));
    const auto ok = (x > B(T(0))) & (x < B(std::numeric_limits<T>::infinity()));
    return xsimd::all(ok) ? y : log_special_values(x, y);
}
#endif  // __AVX2__ && __FMA__

#if defined(__aarch64__)
// f64, neon64: log_f64_avx2's arithmetic (the same 128 cells and rows, R and operation
// order: the same bits as avx2_fma's kernel, the same bound), on two lanes. The rows come
// from the lanes of u: each lane's cell offset in a general register and its 32-byte row
// {invc, hi, lo, 0} by two 16-byte loads; zips turn the two rows into columns.
template <bool Subnormals>
NUMFUSE_ALWAYS_INLINE float64x2_t log_f64_neon(float64x2_t x) noexcept {
    const float64x2_t one = vdupq_n_f64(1.0);
    float64x2_t xs = x;
    uint64x2_t sub = vdupq_n_u64(0);
    if constexpr (Subnormals) {
        sub = vcltq_f64(x, vdupq_n_f64(0x1.0p-1022));
        const float64x2_t scaled = vsubq_f64(
            vreinterpretq_f64_u64(vorrq_u64(vreinterpretq_u64_f64(x), vreinterpretq_u64_f64(one))),
            one);
        xs = vbslq_f64(sub, scaled, x);
    }
    const uint64x2_t u =
        vaddq_u64(vreinterpretq_u64_f64(xs), vdupq_n_u64(0x3ff0000000000000ull - log_bits128_off));
    const float64x2_t z = vreinterpretq_f64_u64(
        vaddq_u64(vandq_u64(u, vdupq_n_u64(0x000fffffffffffffull)), vdupq_n_u64(log_bits128_off)));
    // k = (u >> 52) - 1023 through the 2^52 magic number; minus 1022 on subnormal lanes
    float64x2_t k = vsubq_f64(
        vreinterpretq_f64_u64(vorrq_u64(vshrq_n_u64(u, 52), vdupq_n_u64(0x4330000000000000ull))),
        vdupq_n_f64(0x1.0p52 + 1023.0));
    if constexpr (Subnormals) {
        k = vsubq_f64(
            k, vreinterpretq_f64_u64(vandq_u64(sub, vreinterpretq_u64_f64(vdupq_n_f64(1022.0)))));
    }
    const auto row = [](std::uint64_t ui) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        return log_bits128_rows.v[(ui >> 45) & 127u];  // the cell: bits 45..51
    };
    const float64x2x2_t r0 = vld1q_f64_x2(row(vgetq_lane_u64(u, 0)));  // {invc, hi}, {lo, 0}
    const float64x2x2_t r1 = vld1q_f64_x2(row(vgetq_lane_u64(u, 1)));
    const float64x2_t invc = vzip1q_f64(r0.val[0], r1.val[0]);
    const float64x2_t th = vzip2q_f64(r0.val[0], r1.val[0]);
    const float64x2_t tl = vzip1q_f64(r0.val[1], r1.val[1]);
    const float64x2_t t = vfmaq_f64(vdupq_n_f64(-1.0), z, invc);  // z invc - 1, exact
    const float64x2_t a = vfmaq_f64(th, k, vdupq_n_f64(log_consts<double>::ln2_hi));
    const float64x2_t hi = vaddq_f64(a, t);
    const float64x2_t err = vaddq_f64(vsubq_f64(a, hi), t);  // |a| >= |t| or a = 0
    const float64x2_t lo1 =
        vaddq_f64(vfmaq_f64(tl, k, vdupq_n_f64(log_consts<double>::ln2_lo)), err);
    // -1/2 + t R(t) = q0 + t^2 (q1 + t^2 q2), as log_f64_avx2
    const float64x2_t t2 = vmulq_f64(t, t);
    const auto c = [](double v) NUMFUSE_ALWAYS_INLINE_LAMBDA { return vdupq_n_f64(v); };
    const float64x2_t q0 = vfmaq_f64(c(-0.5), c(log64_bits128_r[0]), t);
    const float64x2_t q1 = vfmaq_f64(c(log64_bits128_r[1]), c(log64_bits128_r[2]), t);
    const float64x2_t q2 = vfmaq_f64(c(log64_bits128_r[3]), c(log64_bits128_r[4]), t);
    const float64x2_t w = vfmaq_f64(q0, vfmaq_f64(q1, q2, t2), t2);
    return vaddq_f64(hi, vfmaq_f64(lo1, t2, w));
}

// f32, neon64: log_f32_avx2's arithmetic (the same reduction, tables, R and operation order)
// on four lanes, with two differences. The cell j = round(J(m)) from a cubic J(m) ~ 16/m
// (recip16_32: absolute error 0.0270 on [0.75, 1.5), so j is round(16/m) or, within 0.027
// of a cell edge, its neighbour), where avx2_fma rounds 16 rcpps(m): no reciprocal estimate
// (FRECPE's results are not specified bit for bit; tools/aarch64/check_no_estimates.sh keeps
// them out). Over every float32 m in [0.75, 1.5) this gives j in 11..21 and |t| <= 0.04584,
// inside R's fit (|t| <= 0.0476) and avx2_fma's bound (tests/cpp/test_exp_log.cpp checks
// both): the same proof, but a result next to a cell edge may differ from avx2_fma's in its
// last bit. And the 16-entry tables are read by one LD1 and one TBL each (neon_tbl64; byte
// indices 4 (j & 15) + {0, 1, 2, 3} from one multiply-add), where avx2_fma takes two
// permutes and a blend.
// log_f32_neon_pair: the two parts unsummed, with log_f32_avx2_pair's Subnormals and PlusE
// (the same contract), for the float32 log2 / log10 / log1p / arc*h kernels (logbase_f32.hpp,
// logpair.hpp: log_f32_pair).
struct log_f32x4_pair {
    float32x4_t hi, lo;
};
template <bool Subnormals, bool PlusE = false>
NUMFUSE_ALWAYS_INLINE log_f32x4_pair
log_f32_neon_pair(float32x4_t x, [[maybe_unused]] float32x4_t e_plus = vdupq_n_f32(0.0f)) noexcept {
    const float32x4_t one = vdupq_n_f32(1.0f);
    int32x4_t ix = vreinterpretq_s32_f32(x);
    uint32x4_t sub = vdupq_n_u32(0);
    if constexpr (Subnormals) {
        sub = vcltq_f32(x, vdupq_n_f32(0x1.0p-126f));
        const float32x4_t scaled = vsubq_f32(
            vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(x), vreinterpretq_u32_f32(one))),
            one);
        ix = vreinterpretq_s32_f32(vbslq_f32(sub, scaled, x));
    }
    const int32x4_t tmp = vsubq_s32(ix, vdupq_n_s32(0x3f400000));  // bits(0.75)
    const float32x4_t m = vreinterpretq_f32_s32(
        vsubq_s32(ix, vandq_s32(tmp, vdupq_n_s32(static_cast<int>(0xff800000u)))));
    float32x4_t e = vcvtq_f32_s32(vshrq_n_s32(tmp, 23));
    if constexpr (Subnormals) {
        e = vsubq_f32(
            e, vreinterpretq_f32_u32(vandq_u32(sub, vreinterpretq_u32_f32(vdupq_n_f32(126.0f)))));
    }
    if constexpr (PlusE) e = vaddq_f32(e, e_plus);
    float32x4_t q = vfmaq_f32(vdupq_n_f32(log32_recip16[2]), vdupq_n_f32(log32_recip16[3]), m);
    q = vfmaq_f32(vdupq_n_f32(log32_recip16[1]), q, m);
    q = vfmaq_f32(vdupq_n_f32(log32_recip16[0]), q, m);
    const float32x4_t z = vaddq_f32(q, vdupq_n_f32(0x1.8p23f));  // j in the low bits
    const float32x4_t invc = vfmaq_f32(vdupq_n_f32(-0x1.8p19f), z, vdupq_n_f32(0.0625f));  // j/16
    const float32x4_t t = vfmaq_f32(vdupq_n_f32(-1.0f), m, invc);  // exact
    const uint32x4_t j = vandq_u32(vreinterpretq_u32_f32(z), vdupq_n_u32(15));
    const uint8x16_t bytes =
        vreinterpretq_u8_u32(vmlaq_u32(vdupq_n_u32(0x03020100u), j, vdupq_n_u32(0x04040404u)));
    const float32x4_t th = vreinterpretq_f32_u8(neon_tbl64(log_tab16_hi_f, bytes));
    const float32x4_t tl = vreinterpretq_f32_u8(neon_tbl64(log_tab16_lo_f, bytes));
    const float32x4_t a = vfmaq_f32(th, e, vdupq_n_f32(log_consts<float>::ln2_hi));  // exact
    const float32x4_t hi = vaddq_f32(a, t);
    const float32x4_t err = vaddq_f32(vsubq_f32(a, hi), t);  // |a| >= |t| or a = 0
    const float32x4_t lo1 =
        vaddq_f32(vfmaq_f32(tl, e, vdupq_n_f32(log_consts<float>::ln2_lo)), err);
    float32x4_t rr = vfmaq_f32(vdupq_n_f32(log32_t16_r2), vdupq_n_f32(log32_t16_r3), t);
    rr = vfmaq_f32(vdupq_n_f32(log32_t16_r1), rr, t);
    rr = vfmaq_f32(vdupq_n_f32(log32_t16_r0), rr, t);
    const float32x4_t w = vfmaq_f32(vdupq_n_f32(-0.5f), rr, t);
    return {hi, vfmaq_f32(lo1, vmulq_f32(t, t), w)};
}
NUMFUSE_ALWAYS_INLINE float32x4_t log_f32_neon(float32x4_t x) noexcept {
    const log_f32x4_pair p = log_f32_neon_pair<true>(x);
    return vaddq_f32(p.hi, p.lo);
}

// log_neon_kernel's neon64 kernel per dtype.
NUMFUSE_ALWAYS_INLINE float32x4_t log_neon(float32x4_t x) noexcept { return log_f32_neon(x); }
NUMFUSE_ALWAYS_INLINE float64x2_t log_neon(float64x2_t x) noexcept { return log_f64_neon<true>(x); }

// log_kernel on neon64: log_avx2_kernel's form (special values by a branch on the rare
// batches that hold one).
template <class T, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, A> log_neon_kernel(const xsimd::batch<T, A>& x) noexcept {
    using B = xsimd::batch<T, A>;
    const B y(log_neon(x));
    const auto ok = (x > B(T(0))) & (x < B(std::numeric_limits<T>::infinity()));
    return xsimd::all(ok) ? y : log_special_values(x, y);
}
#endif  // __aarch64__

// The float32 table log as an unsummed pair on the levels that have one, avx2_fma
// (log_f32_avx2_pair) and neon64 (log_f32_neon_pair): the log of the float32 log2 / log10 /
// log1p / arc*h kernels, written once on batches over it (logbase_f32.hpp, logpair.hpp).
// log_f32_pair_arch<Arch>: whether Arch is such a level; NUMFUSE_LOG_F32_PAIR: whether this
// unit has one.
#if (defined(__AVX2__) && defined(__FMA__)) || defined(__aarch64__)
#define NUMFUSE_LOG_F32_PAIR 1
template <class Arch>
inline constexpr bool log_f32_pair_arch =
#if defined(__AVX2__) && defined(__FMA__)
    is_avx2_fma<Arch> ||
#endif
    is_neon64<Arch>;
template <class A>
struct log_f32_lanes_pair {
    xsimd::batch<float, A> hi, lo;
};
template <bool Subnormals, bool PlusE = false, class A>
NUMFUSE_ALWAYS_INLINE log_f32_lanes_pair<A> log_f32_pair(
    const xsimd::batch<float, A>& x,
    [[maybe_unused]] const xsimd::batch<float, A>& e_plus = xsimd::batch<float, A>(0.0f)) noexcept {
    using F = xsimd::batch<float, A>;
#if defined(__aarch64__)
    const log_f32x4_pair p = log_f32_neon_pair<Subnormals, PlusE>(x, e_plus);
#else
    const log_ps8_pair p = log_f32_avx2_pair<Subnormals, PlusE>(x, e_plus);
#endif
    return {F(p.hi), F(p.lo)};
}
#else
template <class Arch>
inline constexpr bool log_f32_pair_arch = false;
#endif

#if defined(__AVX512F__)
// vfixupimm response table for log, one nibble per input class:
// QNaN, SNaN -> QNaN(x); 0 -> -inf; +1 -> +0; -inf -> default NaN (sign set);
// +inf -> +inf; negative -> default NaN; positive -> the computed value.
inline constexpr int log_fixup_f64 = 0x03538422;
// f32: NaN classes keep the computed value (replaced by 0x7fc00000 after).
inline constexpr int log_fixup_f32 = 0x03538400;

// The cell of a positive normal value v from its bits: v = z 2^e, z in [0.640625, 1.28125),
// e = e_bits >> 52 (arithmetic), idx the cell in the low 4 bits (for log_cell_entry).
struct log_cell_pd {
    __m512d z;
    __m512i idx, e_bits;
};
NUMFUSE_ALWAYS_INLINE log_cell_pd log_cell_f64_avx512(__m512i bits) noexcept {
    const __m512i tmp =
        _mm512_sub_epi64(bits, _mm512_set1_epi64(static_cast<long long>(log_bits_off)));
    const __m512d z = _mm512_castsi512_pd(_mm512_sub_epi64(
        bits,
        _mm512_and_si512(tmp, _mm512_set1_epi64(static_cast<long long>(0xfff0000000000000ull)))));
    return {z, _mm512_srli_epi64(tmp, 48), tmp};
}
// table[cell] per lane, for a 16-entry table of the cells (log_bits_invc, _hi, _lo, ...).
NUMFUSE_ALWAYS_INLINE __m512d log_cell_entry(const double* table, __m512i idx) noexcept {
    return _mm512_permutex2var_pd(_mm512_load_pd(table), idx, _mm512_load_pd(table + 8));
}

// log x = hi + lo (|lo| <= ~2^-52 |hi|: hi is the rounded sum of the exact k ln2_hi -
// log(invc) and t, lo the rest), split so that log2 / log10 can scale the pair.
struct log_pd_pair {
    __m512d hi, lo;
};

// f64, AVX-512: log x as a pair for positive finite lanes, subnormal ones included; other
// lanes hold garbage (the fixup repairs them). m = getmant(x) in [1, 2) and getexp(x) take
// subnormals as they come (no scaling, no mask, no rare path); the cell reduction runs on
// the bits of m: z = m or m/2 in [0.640625, 1.28125), k = getexp(x) - getexp(z) (z's
// exponent is 0 or -1), the cell i from the bits of m - OFF (subtract, shift, and, subtract,
// three table permutes). |t| <= 0.0342, hence R of degree 7.
// PlusLn2: lanes set in plus_ln2 get log x + ln2 (k plus one: log(2x) without forming 2x).
template <bool PlusLn2>
NUMFUSE_ALWAYS_INLINE log_pd_pair
log_f64_avx512_pair_impl(__m512d x, [[maybe_unused]] __mmask8 plus_ln2) noexcept {
    const log_cell_pd cell = log_cell_f64_avx512(
        _mm512_castpd_si512(_mm512_getmant_pd(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero)));
    __m512d k = _mm512_sub_pd(_mm512_getexp_pd(x), _mm512_getexp_pd(cell.z));
    if constexpr (PlusLn2) k = _mm512_mask_add_pd(k, plus_ln2, k, _mm512_set1_pd(1.0));
    const __m512d invc = log_cell_entry(log_bits_invc, cell.idx);
    const __m512d th = log_cell_entry(log_bits_hi, cell.idx);
    const __m512d tl = log_cell_entry(log_bits_lo, cell.idx);
    const __m512d t = _mm512_fmsub_pd(cell.z, invc, _mm512_set1_pd(1.0));  // exact
    const __m512d a = _mm512_fmadd_pd(k, _mm512_set1_pd(0x1.62e42fefa38p-1), th);  // exact
    const __m512d hi = _mm512_add_pd(a, t);
    const __m512d err = _mm512_add_pd(_mm512_sub_pd(a, hi), t);  // |a| >= |t| or a = 0
    const __m512d lo1 =
        _mm512_add_pd(_mm512_fmadd_pd(k, _mm512_set1_pd(0x1.ef35793c7673p-45), tl), err);
    const __m512d t2 = _mm512_mul_pd(t, t);
    const __m512d w = log64_bits_estrin<Pd8Ops>(t, t2);
    return {hi, _mm512_fmadd_pd(t2, w, lo1)};
}
inline log_pd_pair log_f64_avx512_pair(__m512d x) noexcept {
    return log_f64_avx512_pair_impl<false>(x, 0);
}

// f64, AVX-512, without the special-value fixup: lanes with x <= 0, +inf or NaN hold
// garbage (log_f64_avx512_fix repairs them).
inline __m512d log_f64_avx512_core(__m512d x) noexcept {
    const log_pd_pair p = log_f64_avx512_pair(x);
    return _mm512_add_pd(p.hi, p.lo);
}

inline __m512d log_f64_avx512_fix(__m512d x, __m512d res) noexcept {
    return _mm512_fixupimm_pd(res, x, _mm512_set1_epi64(log_fixup_f64), 0);
}

inline __m512d log_f64_avx512(__m512d x) noexcept {
    return log_f64_avx512_fix(x, log_f64_avx512_core(x));
}

// (hi + lo) (c_hi + c_lo) rounded once, for log2 / log10 (c = 1/ln2, 1/ln10 as pairs):
// hi c_hi exactly as a product pair, the cross terms added to its low part. Relative
// error ~2^-60 before the final rounding (the pair's own), so <= 0.5 + 2^-7 ULP, and an
// integer result (log2 of a power of two, log10 of a power of ten) comes out exact.
inline __m512d log_pair_scaled_pd(const log_pd_pair& p, double c_hi, double c_lo) noexcept {
    const __m512d ch = _mm512_set1_pd(c_hi);
    const __m512d ph = _mm512_mul_pd(p.hi, ch);
    const __m512d pe = _mm512_fmsub_pd(p.hi, ch, ph);  // exact
    const __m512d tail = _mm512_fmadd_pd(p.hi, _mm512_set1_pd(c_lo), _mm512_fmadd_pd(p.lo, ch, pe));
    return _mm512_add_pd(ph, tail);
}

// f32, AVX-512: log x as a pair hi + lo for positive finite lanes (subnormals need no
// special case: getmant / getexp take them as they come); other lanes hold garbage.
struct log_ps_pair {
    __m512 hi, lo;
};
// m = getmant(x) in [0.75, 1.5), E = getexp(x) - getexp(m), j = round(16 rcp14(m)) in 11..21.
NUMFUSE_ALWAYS_INLINE log_ps_pair log_f32_avx512_pair(__m512 x) noexcept {
    const __m512 shifter = _mm512_set1_ps(0x1.8p23f);
    const __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_src);
    const __m512 e = _mm512_sub_ps(_mm512_getexp_ps(x), _mm512_getexp_ps(m));
    const __m512 z = _mm512_fmadd_ps(_mm512_rcp14_ps(m), _mm512_set1_ps(16.0f), shifter);
    const __m512 invc = _mm512_fmsub_ps(z, _mm512_set1_ps(0.0625f), _mm512_set1_ps(0x1.8p19f));
    const __m512 t = _mm512_fmsub_ps(m, invc, _mm512_set1_ps(1.0f));  // exact
    const __m512 th = avx512::permute_table(z, log_tab16_hi_f);
    const __m512 tl = avx512::permute_table(z, log_tab16_lo_f);
    const __m512 a = _mm512_fmadd_ps(e, _mm512_set1_ps(0x1.62e4p-1f), th);  // exact
    const __m512 hi = _mm512_add_ps(a, t);
    const __m512 err = _mm512_add_ps(_mm512_sub_ps(a, hi), t);
    const __m512 lo1 = _mm512_add_ps(_mm512_fmadd_ps(e, _mm512_set1_ps(0x1.7f7d1cp-20f), tl), err);
    // -1/2 + t R(t), R of degree 3 (log32_t16_r*, above).
    __m512 rr = _mm512_fmadd_ps(_mm512_set1_ps(log32_t16_r3), t, _mm512_set1_ps(log32_t16_r2));
    rr = _mm512_fmadd_ps(rr, t, _mm512_set1_ps(log32_t16_r1));
    rr = _mm512_fmadd_ps(rr, t, _mm512_set1_ps(log32_t16_r0));
    const __m512 w = _mm512_fmadd_ps(rr, t, _mm512_set1_ps(-0.5f));
    return {hi, _mm512_fmadd_ps(_mm512_mul_ps(t, t), w, lo1)};
}

// f32, AVX-512, without the special-value fixup (as log_f64_avx512_core).
inline __m512 log_f32_avx512_core(__m512 x) noexcept {
    const log_ps_pair p = log_f32_avx512_pair(x);
    return _mm512_add_ps(p.hi, p.lo);
}

inline __m512 log_f32_avx512_fix(__m512 x, __m512 res) noexcept {
    res = _mm512_fixupimm_ps(res, x, _mm512_set1_epi32(log_fixup_f32), 0);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_mov_ps(res, nan, _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
}

inline __m512 log_f32_avx512(__m512 x) noexcept {
    return log_f32_avx512_fix(x, log_f32_avx512_core(x));
}

// vfpclass categories of the inputs whose log the fixup decides: QNaN, +0, -0,
// +inf, -inf, negative finite, SNaN (everything but positive finite numbers; subnormal
// inputs are ordinary lanes for both kernels).
inline constexpr int log_special_classes = 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x40 | 0x80;

// log2 / log10 on AVX-512: f64 the table kernel's pair scaled by 1/ln2, 1/ln10 (as pairs,
// inv_ln2_* / inv_ln10_* above), f32 kernels/logbase_f32.hpp's kernel; then log's fixup: +-0
// -> -inf, x < 0 and -inf -> the default NaN (sign set), +inf -> +inf, 1 -> +0, NaN -> the
// input quieted (the NaN policy of the loops and of evaluate gives NumPy's NaNs on top).

inline __m512d log_scaled_fix_avx512(__m512d x, __m512d r) noexcept {
    return _mm512_fixupimm_pd(r, x, _mm512_set1_epi64(log_fixup_f64), 0);
}
inline __m512 log_scaled_fix_avx512(__m512 x, __m512 r) noexcept {
    return _mm512_fixupimm_ps(r, x, _mm512_set1_epi32(log_fixup_f64), 0);  // NaN: x quieted
}
#endif  // __AVX512F__

}  // namespace detail

// log(x), f64 lanes. Max error <= 1 ULP, all inputs valid, specials as NumPy.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> log_kernel(xsimd::batch<double, Arch> x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::log_f64_avx512(x);
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::is_avx2_fma<Arch>) {
        return detail::log_avx2_kernel(x);
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        return detail::log_neon_kernel(x);
    } else
#endif
    {
        return detail::log_generic(x);
    }
}

// log(x), f32 lanes. Max error <= 1 ULP (contract at the top).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> log_kernel(xsimd::batch<float, Arch> x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::log_f32_avx512(x);
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::is_avx2_fma<Arch>) {
        return detail::log_avx2_kernel(x);
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        return detail::log_neon_kernel(x);
    } else
#endif
    {
        return detail::log_generic(x);
    }
}

// Split form of log_kernel for loops that look for special inputs anyway (the ufunc
// loop does, to report floating-point conditions):
//   y = log_kernel_nofix(x);                       // special lanes may be garbage
//   if (xsimd::any(log_special(x))) y = log_fix(x, y);
// equals log_kernel(x) bit for bit. log_special(x) is true at least where x <= 0 (the
// lanes that raise divide-by-zero / invalid); on AVX-512 (one vfpclass) and on AVX2+FMA and
// neon64 (two compares) also for +inf and NaN, whose results log_fix decides, and on AVX2+FMA
// and neon64 float64 for subnormal x too: the fast kernel there skips the subnormal scaling
// (6 of ~60 instructions a batch) and log_fix recomputes the flagged batch with it. Elsewhere
// the kernel handles special values itself and log_fix is the identity.
template <class T, class Arch>
inline xsimd::batch<T, Arch> log_kernel_nofix(xsimd::batch<T, Arch> x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        if constexpr (sizeof(T) == 8) {
            return detail::log_f64_avx512_core(x);
        } else {
            return detail::log_f32_avx512_core(x);
        }
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::is_avx2_fma<Arch>) {
        if constexpr (sizeof(T) == 8) {
            return xsimd::batch<T, Arch>(detail::log_f64_avx2<false>(x));
        } else {
            return xsimd::batch<T, Arch>(detail::log_avx2(x));
        }
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        if constexpr (sizeof(T) == 8) {
            return xsimd::batch<T, Arch>(detail::log_f64_neon<false>(x));
        } else {
            return xsimd::batch<T, Arch>(detail::log_f32_neon(x));
        }
    } else
#endif
    {
        return detail::log_generic(x);
    }
}

// log_kernel_nofix(x) for x = the batch at src (x loaded from there, unaligned allowed): the
// same bits. The AVX2+FMA float64 kernel takes the cells' table rows from src's copy
// (LogRowsFromMemory); elsewhere this is log_kernel_nofix(x).
template <class T, class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<T, Arch> log_kernel_nofix_at(
    xsimd::batch<T, Arch> x, [[maybe_unused]] const T* src) noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<Arch> && sizeof(T) == 8) {
        return xsimd::batch<T, Arch>(
            detail::log_f64_avx2<false>(x, detail::LogRowsFromMemory{src}));
    } else
#endif
    {
        return log_kernel_nofix(x);
    }
}

template <class T, class Arch>
inline xsimd::batch_bool<T, Arch> log_special(xsimd::batch<T, Arch> x) noexcept {
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    if constexpr (detail::is_avx512<Arch>) {
        if constexpr (sizeof(T) == 8) {
            return xsimd::batch_bool<T, Arch>(
                _mm512_fpclass_pd_mask(x, detail::log_special_classes));
        } else {
            return xsimd::batch_bool<T, Arch>(
                _mm512_fpclass_ps_mask(x, detail::log_special_classes));
        }
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::is_avx2_fma<Arch>) {
        // f32: not 0 < x < inf (x <= 0, +inf, NaN); f64 also subnormal x (not min <= x < inf).
        using B = xsimd::batch<T, Arch>;
        const T low = sizeof(T) == 8 ? std::numeric_limits<T>::min() : T(0);
        const auto ordinary = sizeof(T) == 8 ? x >= B(low) : x > B(low);
        return ~(ordinary & (x < B(std::numeric_limits<T>::infinity())));
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        // As AVX2+FMA: f32 not 0 < x < inf; f64 not min <= x < inf (log_f64_neon<false> skips
        // the scaling).
        using B = xsimd::batch<T, Arch>;
        const T low = sizeof(T) == 8 ? std::numeric_limits<T>::min() : T(0);
        const auto ordinary = sizeof(T) == 8 ? x >= B(low) : x > B(low);
        return ~(ordinary & (x < B(std::numeric_limits<T>::infinity())));
    } else
#endif
    {
        return x <= xsimd::batch<T, Arch>(T(0));
    }
}

template <class T, class Arch>
inline xsimd::batch<T, Arch> log_fix(xsimd::batch<T, Arch> x, xsimd::batch<T, Arch> y) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        if constexpr (sizeof(T) == 8) {
            return detail::log_f64_avx512_fix(x, y);
        } else {
            return detail::log_f32_avx512_fix(x, y);
        }
    } else
#endif
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (detail::is_avx2_fma<Arch>) {
        if constexpr (sizeof(T) == 8) {
            (void)y;  // recomputed with the subnormal scaling
            return detail::log_special_values(x,
                                              xsimd::batch<T, Arch>(detail::log_f64_avx2<true>(x)));
        } else {
            return detail::log_special_values(x, y);
        }
    } else
#endif
#if defined(__aarch64__)
        if constexpr (detail::is_neon64<Arch>) {
        if constexpr (sizeof(T) == 8) {
            (void)y;  // recomputed with the subnormal scaling
            return detail::log_special_values(x,
                                              xsimd::batch<T, Arch>(detail::log_f64_neon<true>(x)));
        } else {
            return detail::log_special_values(x, y);
        }
    } else
#endif
    {
        (void)x;
        return y;
    }
}

// The deferred contiguous loop's test (unary_loop, LogOp's screen): acc =
// log_screen_init<T, Arch>(), acc = log_screen(acc, x) for every batch, then
// log_screened(acc) is true iff log_special(x) held in a lane of some batch. AVX2+FMA
// float64: x is ordinary (min normal <= x < inf, the lanes log_special leaves out) iff the
// high 32 bits of bits(x) lie in [0x00100000, 0x7ff00000) as an unsigned integer, so the
// unsigned 32-bit minimum and maximum over the batches (vpminud, vpmaxud: two instructions
// a batch, on x's register, instead of two compares, an and, a not and an or) decide it
// once at the end, from their odd (high) words; the even words take the low halves and are
// not read. Elsewhere the or of log_special.
//
// log_loop_single<T, Arch>: whether that loop should take one batch per iteration rather
// than two. AVX2+FMA float64: with two, the kernel's constants and two batches' temporaries
// outgrow the 16 registers and GCC 12 spills temporaries and reloads constants inside the
// iteration; one batch per iteration leaves the overlap of iterations to the out-of-order core.
#if defined(__AVX2__) && defined(__FMA__)
template <class T, class Arch>
inline constexpr bool log_loop_single = detail::is_avx2_fma<Arch> && sizeof(T) == 8;
#elif defined(__aarch64__)
template <class T, class Arch>
inline constexpr bool log_loop_single = detail::is_neon64<Arch> && sizeof(T) == 4;
#else
template <class T, class Arch>
inline constexpr bool log_loop_single = false;
#endif

namespace detail {
#if defined(__AVX2__) && defined(__FMA__)
struct LogScreenF64Avx2 {
    __m256i min, max;  // unsigned 32-bit minimum / maximum of the words of bits(x)
};
#endif
}  // namespace detail

template <class T, class Arch>
NUMFUSE_ALWAYS_INLINE auto log_screen_init() noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (detail::is_avx2_fma<Arch> && sizeof(T) == 8) {
        return detail::LogScreenF64Avx2{_mm256_set1_epi32(-1), _mm256_setzero_si256()};
    } else
#endif
    {
        return xsimd::batch_bool<T, Arch>(false);
    }
}

template <class T, class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<T, Arch> log_screen(const xsimd::batch_bool<T, Arch>& acc,
                                                            xsimd::batch<T, Arch> x) noexcept {
    return acc | log_special(x);
}

template <class T, class Arch>
inline bool log_screened(const xsimd::batch_bool<T, Arch>& acc) noexcept {
    return xsimd::any(acc);
}

#if defined(__AVX2__) && defined(__FMA__)
template <class Arch>
NUMFUSE_ALWAYS_INLINE detail::LogScreenF64Avx2 log_screen(const detail::LogScreenF64Avx2& acc,
                                                          xsimd::batch<double, Arch> x) noexcept {
    const __m256i bits = _mm256_castpd_si256(x);
    return {_mm256_min_epu32(acc.min, bits), _mm256_max_epu32(acc.max, bits)};
}

inline bool log_screened(const detail::LogScreenF64Avx2& acc) noexcept {
    alignas(32) std::uint32_t lo[8], hi[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lo), acc.min);
    _mm256_store_si256(reinterpret_cast<__m256i*>(hi), acc.max);
    bool special = false;
    for (int w = 1; w < 8; w += 2) special |= lo[w] < 0x00100000u || hi[w] >= 0x7ff00000u;
    return special;
}
#endif

}  // namespace numfuse::kernels
