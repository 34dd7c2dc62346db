// log2(x) and log10(x) for float32 SIMD lanes (the float32 log2 / log10 ufuncs and evaluate).
//
// Contract
//   log2_f32_kernel / log10_f32_kernel (batch<float>): per lane, within 1 ULP at every level
//   (measured: docs/accuracy.md), log2(2^k) = k and log10(10^k) = k exactly (k = 0..10);
//   +-0 -> -inf, x < 0 and -inf -> 0xffc00000, +inf -> +inf, NaN -> the input quieted
//   (as glibc's log2f / log10f, NumPy's float32 loops on x86-64).
//   detail::log_base_f32_avx512_core<Base> is the AVX-512 kernel without the special-value
//   fixup (garbage for x <= 0, +inf, NaN; log.hpp's log_scaled_fix_avx512 repairs them), for
//   the ufunc loop's deferred screen (logpair.hpp's log_base_nofix).
//
// Method
//   AVX-512, float32 lanes in float32 arithmetic, no pair arithmetic beyond a table split:
//   x = m 2^e with m = getmant(x) in [1, 2) and e = getexp(x) (subnormal inputs as they come:
//   no scaling, no multiplication by a subnormal); the cell i = the top 5 fraction bits of m
//   (one shift: vpermt2ps reads the low 5 bits of each index), invc = j/64 per cell, so
//   t = m invc - 1 is exact in one FMA (23 + 6 fraction bits, |t| < 2^-5);
//   log_b x = e log_b(2) + T + log_b(1 + t), T = -log_b(invc) = T_hi + T_lo with T_hi on the
//   2^-16 grid, so that hi = e + T_hi (log10: e log10(2)_hi + T_hi, log10(2)_hi on the 2^-18
//   grid) is exact; lo = T_lo (log10: + e log10(2)_lo, one FMA). log_b(1 + t) = c t + t R(t)
//   with c = RN_f(1/ln b) and R of degree 4 (R(0) = 1/ln b - c): the result is
//   hi + (c t + (lo + t R(t))), two roundings, each at most half an ULP of what it rounds:
//   where hi = 0 (x next to 1 on either side: cell 0 has invc = 1, cell 31 has invc = 1/2
//   with T exactly log_b(2), which e = -1 cancels exactly) the result is the last FMA's
//   rounding alone (+ ~2^-30 relative); elsewhere |hi| >= 0.044 (log2) is well above the
//   inner sum, whose rounding costs at most ~1/4 ULP of the result. 14 operations (log10:
//   15) against 23 for the former form (log.hpp's float32 log pair scaled by 1/ln b as a
//   pair). Tables and R: tools/logbase_f32_remez.py.
//   AVX2+FMA and neon64, float32 lanes in float32 arithmetic, one kernel on batches
//   (log_base_f32_pair_core): log.hpp's float32 log as its unsummed pair, log x = hi + lo
//   (log_f32_pair: 16 cells; avx2_fma's tables by two permutes and a blend and its cell from
//   rcpps, neon64's by TBL and its cell from a cubic, so a result next to a cell edge may
//   differ in its last bit between the two, both within the bound below; subnormals scaled by
//   2^126 without a multiplication), times 1/ln b = C + c (C = RN_f(1/ln b),
//   c = RN_f(1/ln b - C)) in pair form: P = RN(hi C), hi C - P exact in one FMA, the result
//   RN(P + RN(hi c + RN(lo C + (hi C - P)))); 5 operations on top of the log's. Error: the pair
//   hi + lo is log x within 2^-27 relative (three roundings of lo-sized terms, |lo| <= 2^-4.8
//   |hi| where E != 0 or j != 16 (|log x| >= 0.031 there) and |lo| <= 0.024 |hi| where E = 0,
//   j = 16 (hi = t exact there), R's 2^-33.7), the two inner roundings add below 2^-28 of the
//   result and c's truncation 2^-48: below 2^-26.4 relative before the last rounding, at most
//   0.5 + 2^-2.4 ULP (measured: docs/accuracy.md). At x = 2^k (log2) and x = 10^k (log10) the
//   reduction gives m = 1, j = 16, t = 0 (10^k, k <= 10, is exact and m = 10^k 2^-E), so the
//   error before the last rounding is far below half an ULP of the integer k: exact results.
//   Special lanes (x <= 0, +inf, NaN) by selects on the batches that hold one. The ufunc loop
//   takes the compute half alone (log_base_f32_pair_core; its screen flags x <= 0, +inf and
//   NaN) and applies those selects to the flagged batches only (logpair.hpp's log_base_nofix
//   / log_scaled_fix). The half keeps the subnormal scaling: float32 data made by narrowing
//   float64 holds subnormal lanes in most batches, and flagging them recomputed those batches.
//   Other levels (SSE2): log2 has a float32 reduction (log.hpp's log_reduce) and a float64
//   polynomial (degree 11, relative error 2^-33.2) rounded once; log10 rounds xsimd's float64
//   log10 of the widened input once.
#pragma once

#include <xsimd/xsimd.hpp>

#include <limits>

#include "kernels/common.hpp"
#include "kernels/log.hpp"

namespace numfuse::kernels {
namespace detail {

#if defined(__AVX512F__)
// tools/logbase_f32_remez.py: invc per cell (j/64; 1 on cell 0, 1/2 on cell 31), t in
// [-0.0205, 0.03125).
alignas(64) inline constexpr float logb_f32_invc[32] = {
    0x1.0p+0f,  0x1.e8p-1f, 0x1.d8p-1f, 0x1.dp-1f,  0x1.cp-1f,  0x1.b8p-1f, 0x1.a8p-1f, 0x1.ap-1f,
    0x1.98p-1f, 0x1.88p-1f, 0x1.8p-1f,  0x1.78p-1f, 0x1.7p-1f,  0x1.68p-1f, 0x1.6p-1f,  0x1.58p-1f,
    0x1.5p-1f,  0x1.48p-1f, 0x1.48p-1f, 0x1.4p-1f,  0x1.38p-1f, 0x1.3p-1f,  0x1.3p-1f,  0x1.28p-1f,
    0x1.2p-1f,  0x1.2p-1f,  0x1.18p-1f, 0x1.1p-1f,  0x1.1p-1f,  0x1.08p-1f, 0x1.08p-1f, 0x1.0p-1f,
};
// -log2(invc) = hi (2^-16 grid) + lo.
alignas(64) inline constexpr float log2_f32_thi[32] = {
    0x0p+0f,      0x1.1bbp-4f,  0x1.e0bp-4f,  0x1.22d8p-3f, 0x1.8a88p-3f, 0x1.bfc8p-3f,
    0x1.169cp-2f, 0x1.32cp-2f,  0x1.4f7p-2f,  0x1.8a88p-2f, 0x1.a9p-2f,   0x1.c818p-2f,
    0x1.e7ep-2f,  0x1.042cp-1f, 0x1.14c6p-1f, 0x1.25cp-1f,  0x1.3722p-1f, 0x1.48eep-1f,
    0x1.48eep-1f, 0x1.5b2cp-1f, 0x1.6dep-1f,  0x1.811p-1f,  0x1.811p-1f,  0x1.94c2p-1f,
    0x1.a9p-1f,   0x1.a9p-1f,   0x1.bdcep-1f, 0x1.d338p-1f, 0x1.d338p-1f, 0x1.e946p-1f,
    0x1.e946p-1f, 0x1.0p+0f,
};
alignas(64) inline constexpr float log2_f32_tlo[32] = {
    0x0p+0f,          0x1.953002p-19f,  0x1.ae8f3p-20f,   0x1.6e155ap-18f,  0x1.80abfcp-19f,
    -0x1.858p-19f,    0x1.4d8fc6p-24f,  -0x1.1c8f12p-22f, -0x1.134c4ep-20f, 0x1.80abfcp-18f,
    -0x1.a39fbep-20f, 0x1.dc2d46p-18f,  -0x1.40358ep-19f, -0x1.5a32c2p-20f, -0x1.3e032ep-18f,
    0x1.408c78p-18f,  0x1.5db83ap-20f,  0x1.e3263p-18f,   0x1.e3263p-18f,   0x1.ed0cbap-20f,
    -0x1.eac382p-20f, -0x1.6b9026p-19f, -0x1.6b9026p-19f, 0x1.0e9258p-18f,  -0x1.a39fbep-19f,
    -0x1.a39fbep-19f, 0x1.3b992cp-18f,  0x1.20a6dep-21f,  0x1.20a6dep-21f,  -0x1.a6eb1ep-18f,
    -0x1.a6eb1ep-18f, 0x0p+0f,
};
// -log10(invc) = hi (2^-16 grid) + lo; cell 31 (invc = 1/2): log10(2) as l2_hi + l2_lo below.
alignas(64) inline constexpr float log10_f32_thi[32] = {
    0x0p+0f,      0x1.558p-6f,  0x1.216p-5f,  0x1.5e4p-5f,  0x1.db2p-5f,  0x1.0d9p-4f,
    0x1.4f8p-4f,  0x1.716p-4f,  0x1.93ep-4f,  0x1.db1p-4f,  0x1.ffcp-4f,  0x1.1298p-3f,
    0x1.25b8p-3f, 0x1.3948p-3f, 0x1.4d4p-3f,  0x1.61b8p-3f, 0x1.76a8p-3f, 0x1.8c1p-3f,
    0x1.8c1p-3f,  0x1.a208p-3f, 0x1.b89p-3f,  0x1.cfa8p-3f, 0x1.cfa8p-3f, 0x1.e76p-3f,
    0x1.ffcp-3f,  0x1.ffcp-3f,  0x1.0c68p-2f, 0x1.194cp-2f, 0x1.194cp-2f, 0x1.269p-2f,
    0x1.269p-2f,  0x1.3441p-2f,
};
alignas(64) inline constexpr float log10_f32_tlo[32] = {
    0x0p+0f,          0x1.bd2406p-18f,  0x1.036b92p-18f,  -0x1.a65206p-19f, -0x1.c25132p-18f,
    0x1.9b3194p-18f,  -0x1.54991p-18f,  -0x1.798e4cp-19f, 0x1.f783fp-18f,   0x1.ed766ap-20f,
    -0x1.ea21c4p-23f, 0x1.a4fb3ep-19f,  0x1.410ad8p-18f,  -0x1.fe10d6p-20f, 0x1.fc13aep-18f,
    -0x1.6c667cp-19f, -0x1.d1a24p-18f,  0x1.a1bb4ap-18f,  0x1.a1bb4ap-18f,  0x1.a84fbcp-19f,
    -0x1.983068p-19f, 0x1.cecb98p-20f,  0x1.cecb98p-20f,  0x1.24046cp-19f,  -0x1.ea21c4p-22f,
    -0x1.ea21c4p-22f, -0x1.dc52a8p-19f, -0x1.884212p-19f, -0x1.884212p-19f, 0x1.ecc2ap-18f,
    0x1.ecc2ap-18f,   0x1.a84fbcp-21f,
};

NUMFUSE_ALWAYS_INLINE __m512 logb_f32_entry(const float* table, __m512i idx) noexcept {
    return _mm512_permutex2var_ps(_mm512_load_ps(table), idx, _mm512_load_ps(table + 16));
}

// log2 (Base 2) or log10 (Base 10) of positive finite lanes, subnormals included; other
// lanes hold garbage (see the contract).
template <int Base>
NUMFUSE_ALWAYS_INLINE __m512 log_base_f32_avx512_core(__m512 x) noexcept {
    static_assert(Base == 2 || Base == 10, "log2 or log10");
    const __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    const __m512 e = _mm512_getexp_ps(x);
    const __m512i idx = _mm512_srli_epi32(_mm512_castps_si512(m), 18);
    const __m512 t = _mm512_fmsub_ps(m, logb_f32_entry(logb_f32_invc, idx),
                                     _mm512_set1_ps(1.0f));  // exact
    __m512 hi, lo, r;
    float c;
    if constexpr (Base == 2) {
        hi = _mm512_add_ps(e, logb_f32_entry(log2_f32_thi, idx));  // exact
        lo = logb_f32_entry(log2_f32_tlo, idx);
        // R(t) ~ (log2(1 + t) - c t)/t on [-0.0205, 0.03125]: tools/logbase_f32_remez.py,
        // max error 2^-31.8 relative to 1/ln2.
        c = 0x1.715476p+0f;  // RN_f(1/ln2)
        r = _mm512_fmadd_ps(_mm512_set1_ps(0x1.2036a2p-2f), t,  // 0.28145840764
                            _mm512_set1_ps(-0x1.716dbap-2f));  // -0.360770136118
        r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(0x1.ec7168p-2f));  // 0.480901360512
        r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(-0x1.715476p-1f));  // -0.721347510815
        r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(0x1.4862cp-26f));  // 1.91145659301e-8
    } else {
        // e log10(2) = e l2_hi (2^-18 grid: e l2_hi + T_hi exact) + e l2_lo; on cell 31 with
        // e = -1 both sums are exactly 0 (T_hi = l2_hi, T_lo = l2_lo there).
        hi = _mm512_fmadd_ps(e, _mm512_set1_ps(0x1.3441p-2f), logb_f32_entry(log10_f32_thi, idx));
        lo =
            _mm512_fmadd_ps(e, _mm512_set1_ps(0x1.a84fbcp-21f), logb_f32_entry(log10_f32_tlo, idx));
        // R(t) ~ (log10(1 + t) - c t)/t, as for log2: max error 2^-32.6 relative to 1/ln10.
        c = 0x1.bcb7b2p-2f;  // RN_f(1/ln10)
        r = _mm512_fmadd_ps(_mm512_set1_ps(0x1.5e68d2p-4f), t,  // 0.0855491831899
                            _mm512_set1_ps(-0x1.bcf3cp-4f));  // -0.108630895615
        r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(0x1.287ad6p-3f));  // 0.144765540957
        r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(-0x1.bcb7bp-3f));  // -0.217147231102
        r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(-0x1.5ca37cp-27f));  // -1.01467190206e-8
    }
    const __m512 p = _mm512_fmadd_ps(t, _mm512_set1_ps(c), _mm512_fmadd_ps(t, r, lo));
    return _mm512_add_ps(hi, p);
}
#endif  // __AVX512F__

// The special lanes of the float32 log2 / log10 (contract at the top): x < 0 and -inf -> the
// default NaN with its sign set, +-0 -> -inf, +inf -> +inf, NaN -> the input quieted.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> log_base_f32_special_values(
    const xsimd::batch<float, Arch>& x, xsimd::batch<float, Arch> res) noexcept {
    using F = xsimd::batch<float, Arch>;
    const F inf(std::numeric_limits<float>::infinity());
    res = xsimd::select(x < F(0.0f), from_bits<float, Arch>(log_consts<float>::neg_nan), res);
    res = xsimd::select(x == F(0.0f), -inf, res);
    res = xsimd::select(x == inf, inf, res);
    return xsimd::select(xsimd::isnan(x), x + x, res);  // the input quieted, as float64 would
}

#if defined(NUMFUSE_LOG_F32_PAIR)
// log2 (Base 2) or log10 (Base 10), AVX2+FMA and neon64 (method at the top), the compute
// half: log.hpp's float32 log pair (log_f32_pair, subnormal lanes scaled) times 1/ln b as a
// pair, one rounding; garbage for x <= 0, +inf and NaN (log_base_f32_special_values repairs
// them).
template <int Base, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> log_base_f32_pair_core(
    const xsimd::batch<float, A>& x) noexcept {
    static_assert(Base == 2 || Base == 10, "log2 or log10");
    using F = xsimd::batch<float, A>;
    // 1/ln b = c_hi + c_lo: c_hi = RN_f(1/ln b), c_lo = RN_f(1/ln b - c_hi)
    const F c_hi(Base == 2 ? 0x1.715476p+0f : 0x1.bcb7b2p-2f);
    const F c_lo(Base == 2 ? 0x1.4ae0cp-26f : -0x1.5b235ep-27f);
    const log_f32_lanes_pair<A> p = log_f32_pair<true>(x);
    const F ph = p.hi * c_hi;
    const F pe = fused_msub(p.hi, c_hi, ph);  // exact
    const F tail = fused_madd(p.hi, c_lo, fused_madd(p.lo, c_hi, pe));
    return ph + tail;
}
// The whole kernel: the compute half, special lanes by a branch on the batches holding one.
template <int Base, class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> log_base_f32_pair_kernel(
    const xsimd::batch<float, Arch>& x) noexcept {
    using F = xsimd::batch<float, Arch>;
    const F res = log_base_f32_pair_core<Base>(x);
    const auto ok = (x > F(0.0f)) & (x < F(std::numeric_limits<float>::infinity()));
    return xsimd::all(ok) ? res : log_base_f32_special_values(x, res);
}
#endif

}  // namespace detail

// log2(x), f32 lanes, for the float32 log2 ufunc and evaluate (contract at the top).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> log2_f32_kernel(
    const xsimd::batch<float, Arch>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::log_scaled_fix_avx512(x, detail::log_base_f32_avx512_core<2>(x));
    }
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
    if constexpr (detail::log_f32_pair_arch<Arch>) return detail::log_base_f32_pair_kernel<2>(x);
#endif
    using F = xsimd::batch<float, Arch>;
    using D = xsimd::batch<double, Arch>;
    const detail::log_split<float, Arch> em = detail::log_reduce(x);
    const F f = em.m - F(1.0f);  // exact
    D f0, f1, e0, e1;
    detail::widen(f, f0, f1);
    detail::widen(em.e, e0, e1);
    // P(f) ~ log2(1 + f) / f on [1/sqrt2 - 1, sqrt2 - 1] (+2^-20): tools/explog_remez.py
    // log2_32_f64, degree 11, relative error 2^-33.2.
    const auto log2_half = [](const D& fd, const D& ed) {
        const D p = detail::horner(fd, 0x1.71547652ef952p+0,  // 1.4426950409393453079
                                   -0x1.7154767baf033p-1,  // -0.7213475252133377813
                                   0x1.ec709c00f0f65p-2,  // 0.48089832072968469179
                                   -0x1.715435eb405f5p-2,  // -0.36067280052529265832
                                   0x1.277732cdcdce1p-2,  // 0.28854064351203417838
                                   -0x1.ec8d73f5cbe0fp-3,  // -0.24050417512761199101
                                   0x1.a615cb9eb2d11p-3,  // 0.20609625890788454972
                                   -0x1.6eb0290279e4fp-3,  // -0.17904693640524491083
                                   0x1.45a28cbdca51bp-3,  // 0.15900144533342416842
                                   -0x1.417ff2aab4989p-3,  // -0.15698232253505420286
                                   0x1.3d261d2876e89p-3,  // 0.15485785274255572941
                                   -0x1.61ac9ab92ac67p-4);  // -0.086346248996663640951
        return detail::fused_madd(fd, p, ed);  // e + log2(m): no cancellation (e = 0 where m ~ 1)
    };
    return detail::log_base_f32_special_values(
        x, detail::narrow(log2_half(f0, e0), log2_half(f1, e1)));
}

// log10(x), f32 lanes, for the float32 log10 ufunc and evaluate (contract at the top).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> log10_f32_kernel(
    const xsimd::batch<float, Arch>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<Arch>) {
        return detail::log_scaled_fix_avx512(x, detail::log_base_f32_avx512_core<10>(x));
    } else
#endif
#if defined(NUMFUSE_LOG_F32_PAIR)
        if constexpr (detail::log_f32_pair_arch<Arch>) {
        return detail::log_base_f32_pair_kernel<10>(x);
    } else
#endif
    {
        xsimd::batch<double, Arch> lo, hi;
        detail::widen(x, lo, hi);
        return detail::narrow(xsimd::log10(lo), xsimd::log10(hi));
    }
}

}  // namespace numfuse::kernels
