// sin, cos, tan for float64 SIMD lanes (xsimd 8.1 batches).
//
// Contract
//   sin_kernel / cos_kernel / tan_kernel(batch<double>): per lane.
//   Max error: <= 1 ULP over the whole domain, every level (enforced against
//   mpmath by tests/test_evaluate_accuracy.py, which prints the measured maxima).
//   Valid range: all inputs.
//     |x| < 2^-27: sin and tan return x (so +-0 and subnormals are kept), cos 1,
//     computed as 0 (no arithmetic on subnormal operands);
//     +-inf -> NaN, NaN -> NaN; huge arguments (sin(1e22), tan(1e300)) are
//     reduced exactly (Payne-Hanek) and stay within 1 ULP, where glibc (and
//     so NumPy) is 8-14 ULP off at the worst case 6381956970095103 * 2^797.
//   The float32 kernels (sin_f32_kernel, cos_f32_kernel, tan_f32_kernel) are in
//   kernels/trig_f32.hpp; they share this file's constants and quadrant logic.
//
// Method
//   x = k pi/2 + r, |r| <= pi/4 (1 + 2^-40): k from the 1.5*2^52 shifter.
//   With FMA: pi/2 = C1 + C2 + C3 (53-bit pieces); x - k C1 is exact in one
//   fused multiply-add (both on the grid of ulp(min(|x|,1)), difference
//   below 1), k C2 an exact product, the rest exact two-sums. Without FMA
//   (SSE2): pi/2 = P1 + P2 + P3 (32-bit pieces: k Pi exact for |k| < 2^21)
//   + P4. Either way r = rh + rl to ~2^-105 absolute, far below the closest
//   approach of a double under 1.5e6 to a multiple of pi/2. tan on AVX-512 takes pi/2 = C1 +
//   M2 + M3 with a 33-bit M2 instead (k M2 exact for |k| < 2^20: no exact product needed, two
//   operations fewer), to the same accuracy. Lanes with
//   |x| >= 1.5e6 (rare) are reduced one by one with Payne-Hanek (190 bits
//   of x 2/pi mod 4 from integer products with the bits of 2/pi, the fraction
//   turned into a pair by exact 64-bit conversions and two-sums).
//   sin(r) = rh + (rh z S(z) + rl (1 - z/2)), cos(r) = (1 - z/2) +
//   (z^2 C(z) - rh rl) with z = rh^2 as an exact product, both as hi + lo
//   pairs (relative error ~2^-57), chosen and signed by quadrant.
//   S: degree 6, C: degree 5 minimax on z <= (pi/4)^2 * 1.02 (Remez with
//   tools/explog_remez.py's exchange; weighted error 2^-57.3 / 2^-59.3).
//   tan(r) = rh + r^3 T0 + r^5 U(z) + rl tan'(r) as a pair th + tl (r^3 T0 exact); odd
//   quadrants -1/tan(r) from the correctly rounded reciprocal of th (one division, every
//   level) and one fused Newton step that folds in tl. One rounding at the end in every case.
//   AVX-512: U = 2/15 + z P(z) / Q(z), the Pade approximant of degree (2, 3) of (U - 2/15) / z
//   (a second division instead of 14 fused operations), T0 = 1/3 as t0 + t0l, tan'(r) as 1 +
//   h^2 with h = RN(rh + r^3 t0). Bound, in u = 2^-53 |tan r| (below one ulp of tan r): the
//   approximation's 2^-58.29 relative (mpmath, 4000 points of |r| <= pi/4 (1 + 2^-40), the
//   coefficients as rounded): 0.026 u; rl tan'(r): |rl| <= 2^-53 |rh| + 2^-86 and |tan'(r) -
//   (1 + h^2)| <= 0.082 |tan r / r| (and <= r^4): 0.082 u; v = z U: P (1.08 2^-53 relative),
//   Q (1.79), the quotient (1), the sum with 2/15 (|z P / Q| <= U / 4) and 2/15's rounding,
//   the product with z.hi and z.hi's own rounding: below 5.3 2^-53, weighted by |r^5 U / tan
//   r| <= 0.0532: 0.282 u; the rounding of r3.hi v + early (|.| <= 0.054 |tan r|): 0.054 u;
//   the exact pairs and early's roundings (below 2^-100 relative): the pair th + tl is within
//   0.45 u of tan r. Even k: th = RN(th + tl), <= 0.5 + 0.45 = 0.95 ULP; odd k: -1/(th + tl)
//   has the same relative error to first order, the Newton step's own errors are below
//   2^-100, one rounding: <= 0.95 ULP. Measured against long double on 2.5e7 points (uniform,
//   log-uniform, next to k pi/2 and (k + 1/2) pi/2; tests/test_tan_paths.py holds the last
//   kind): 0.773 ULP. Other levels: U degree 13 (T = T0 + z U degree 14, minimax, 2^-57.8; T0
//   fitted), tan'(r) as 1 + z: 0.931 on the same points.
//   A batch whose lanes all have 2^-27 <= |x| < 1.5e6 pays one range test; any other
//   batch goes through trig_rare (tiny, huge, inf and NaN lanes).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"

namespace numfuse::kernels {
namespace detail {

inline constexpr double trig_fast_limit = 1.5e6;  // |k| < 2^20: k * Pi exact

// The reduction's constants, shared by the float64 and float32-in-float64 kernels.
inline constexpr double trig_shifter = 0x1.8p52;  // x + shifter rounds x to an integer
inline constexpr double trig_two_over_pi = 0x1.45f306dc9c883p-1;
// pi/2 = C1 + C2 + C3 (53 bits each; FMA levels)
inline constexpr double trig_pio2_c1 = 0x1.921fb54442d18p+0;
inline constexpr double trig_pio2_c2 = 0x1.1a62633145c07p-54;
inline constexpr double trig_pio2_c3 = 0x1.f1976b7ed8fbcp-110;
// pi/2 = C1 + M2 + M3 (tan on AVX-512): M2 is C2's top 33 bits, so that k M2 is an exact
// product for |k| < 2^20 (below trig_fast_limit), and M3 = RN(pi/2 - C1 - M2) (|pi/2 - C1 -
// M2 - M3| < 2^-142)
inline constexpr double trig_pio2_m2 = 0x1.1a626331p-54;
inline constexpr double trig_pio2_m3 = 0x1.1701b839a252p-88;
// pi/2 = P1 + P2 + P3 (32 bits each: k Pi exact for |k| < 2^21) + P4 (no FMA)
inline constexpr double trig_pio2_p1 = 0x1.921fb544p+0;
inline constexpr double trig_pio2_p2 = 0x1.0b4611a6p-34;
inline constexpr double trig_pio2_p3 = 0x1.3198a2ep-69;
inline constexpr double trig_pio2_p4 = 0x1.b839a252049c1p-104;

// The bits of 2/pi (mpmath), 64 per limb, most significant first, after one
// zero limb: bit i of 2/pi (weight 2^-i) is bit i + 63 of this stream.
inline constexpr std::uint64_t two_over_pi_bits[] = {
    0x0000000000000000ull, 0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
    0xfe5163abdebbc561ull, 0xb7246e3a424dd2e0ull, 0x06492eea09d1921cull, 0xfe1deb1cb129a73eull,
    0xe88235f52ebb4484ull, 0xe99c7026b45f7e41ull, 0x3991d639835339f4ull, 0x9c845f8bbdf9283bull,
    0x1ff897ffde05980full, 0xef2f118b5a0a6d1full, 0x6d367ecf27cb09b7ull, 0x4f463f669e5fea2dull,
    0x7527bac7ebe5f17bull, 0x3d0739f78a5292eaull, 0x6bfb5fb11f8d5d08ull, 0x56033046fc7b6babull,
    0xf0cfbc209af4361dull, 0xa9e391615ee61b08ull, 0x6599855f14a06840ull,
};

// Payne-Hanek reduction of one finite |x| >= 2^-32 (used for |x| >= 1.5e6):
// x = m 2^e with the 53-bit integer m; bits of 2/pi of weight >= 4 / 2^e
// only add multiples of 4 to x 2/pi and are skipped, the next 192 bits
// times m give x 2/pi mod 4 with 190 fraction bits -- far beyond the ~61-bit
// worst-case cancellation of a double against a multiple of pi/2. Returns
// r = rh + rl in [-pi/4, pi/4] and k mod 4.
struct trig_reduced_scalar {
    double hi, lo;
    int quadrant;
};

inline trig_reduced_scalar trig_reduce_large(double x) noexcept {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1075;
    const std::uint64_t m = (bits & 0x000fffffffffffffull) | (1ull << 52);
    const int start = e + 62;  // stream position of the 2/pi bit of weight 2 / 2^e
    const int w = start >> 6, s = start & 63;
    const auto window = [&](int k) {
        const std::uint64_t a = two_over_pi_bits[w + k], b = two_over_pi_bits[w + k + 1];
        return s ? (a << s) | (b >> (64 - s)) : a;
    };
    using u128 = unsigned __int128;
    u128 c = static_cast<u128>(m) * window(2);
    const std::uint64_t l0 = static_cast<std::uint64_t>(c);
    c = static_cast<u128>(m) * window(1) + static_cast<std::uint64_t>(c >> 64);
    const std::uint64_t l1 = static_cast<std::uint64_t>(c);
    const std::uint64_t l2 = m * window(0) + static_cast<std::uint64_t>(c >> 64);
    // x 2/pi mod 4 = (l2:l1:l0) 2^-190: the top 2 bits are the integer part
    int k = static_cast<int>(l2 >> 62);
    const std::uint64_t f = (l2 << 2) | (l1 >> 62), g = (l1 << 2) | (l0 >> 62);
    if (f >> 63) ++k;  // fraction >= 1/2: round k up; as a signed number f is the fraction - 1
    // The fraction (f:g as a signed 128-bit number, times 2^-128) as a pair, from exact
    // conversions of 32-, 53- and 11-bit pieces and two exact two-sums (no 128-bit
    // conversions: those are library calls, a third of this path's time): f = x1 + x2
    // exactly as fs1 + fe, then fs1 + x3 exactly as hs + l; fe + x4 and the sum with l round
    // far below hs's last bit (and are exact where hs is small).
    const auto fs = static_cast<std::int64_t>(f);  // two's complement
    const double x1 = static_cast<double>(fs >> 32) * 0x1.0p32;
    const double x2 = static_cast<double>(static_cast<std::uint32_t>(f));
    const double x3 = static_cast<double>(g >> 11) * 0x1.0p-53;
    const double x4 = static_cast<double>(g & 0x7ff) * 0x1.0p-64;
    const double fs1 = x1 + x2;
    const double fe = (x1 - (fs1 - (fs1 - x1))) + (x2 - (fs1 - x1));
    const double hs = fs1 + x3;
    const double hb = hs - fs1;
    const double hl = ((fs1 - (hs - hb)) + (x3 - hb)) + (fe + x4);
    const double q = hs + hl;
    const double fh = q * 0x1.0p-64;  // fraction in [-1/2, 1/2]
    const double fl = (hl - (q - hs)) * 0x1.0p-64;
    // r = fraction * pi/2 as a pair
    const double pio2_hi = 0x1.921fb54442d18p+0, pio2_lo = 0x1.1a62633145c07p-54;
    const double rh = fh * pio2_hi;
    const double rl = std::fma(fh, pio2_hi, -rh) + (fh * pio2_lo + fl * pio2_hi);
    const double h = rh + rl;
    const double l = rl - (h - rh);
    if (x < 0) return {-h, -l, (-k) & 3};
    return {h, l, k & 3};
}

// The lanes in `lanes` (bit j: lane j; those with |x| >= trig_fast_limit), kept out of line
// (rare, and the SIMD loop keeps its registers): r and k replaced; inf / NaN lanes get
// r = 0 (the callers return NaN for them). One iteration per such lane and no branch on
// each lane's size: on inputs spanning many magnitudes that branch was unpredictable (a
// per-lane test was a visible share of sin's and tan's time there).
#if defined(__GNUC__)
__attribute__((noinline))
#endif
inline void trig_reduce_slow_lanes(const double* x, double* rh, double* rl, double* k,
                                   unsigned lanes) noexcept {
    for (; lanes != 0; lanes &= lanes - 1) {
        const auto j = static_cast<std::size_t>(__builtin_ctz(lanes));
        if (!std::isfinite(x[j])) {
            rh[j] = rl[j] = k[j] = 0.0;
            continue;
        }
        const trig_reduced_scalar t = trig_reduce_large(x[j]);
        rh[j] = t.hi;
        rl[j] = t.lo;
        k[j] = t.quadrant;
    }
}

// x = k pi/2 + (rh + rl), |rh| <= pi/4 (1 + 2^-40), for |x| < trig_fast_limit.
template <class A>
struct trig_reduced {
    dd::pair<A> r;
    xsimd::batch_bool<double, A> odd, second;  // bits 0 and 1 of k
    xsimd::batch_bool<double, A> cos_negative;  // bit 1 of k + 1: k mod 4 in {1, 2}
};

// k mod 4 as three masks, from k (integral, |k| < 2^51): bits 0 and 1 of k, and bit 1
// of k + 1.
template <class A>
struct trig_quadrant {
    xsimd::batch_bool<double, A> odd, second;  // bits 0 and 1 of k
    xsimd::batch_bool<double, A> cos_negative;  // bit 1 of k + 1: k mod 4 in {1, 2}
};

template <class A>
NUMFUSE_ALWAYS_INLINE trig_quadrant<A> trig_quadrant_of(
    const xsimd::batch<double, A>& kd) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(trig_shifter);
    const B q = kd - (dd::fmadd(kd, B(0.25), shifter) - shifter) * B(4.0);  // in {-2, ..., 2}
    return {xsimd::abs(q) == B(1.0), (q < B(0.0)) | (q == B(2.0)), (q > B(0.5)) | (q < B(-1.5))};
}

// Checked = false: the caller guarantees |x| < trig_fast_limit on every lane (no test).
// ShortMiddle (tan on AVX-512): pi/2 = C1 + M2 + M3, k M2 exact, so r = h + (hl - k M3) with
// two operations fewer than the exact product of k C2 needs.
template <bool Checked, bool ShortMiddle = false, class A>
NUMFUSE_ALWAYS_INLINE trig_reduced<A> trig_reduce(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(trig_shifter);
    B zk = dd::fmadd(x, B(trig_two_over_pi), shifter);  // k = round(2x/pi) in the low bits
    B kd = zk - shifter;
    dd::pair<A> r;
    if constexpr (detail::has_fma<A>) {
        // x - k C1 is exact in one fused multiply-add: both lie on the grid of
        // ulp(min(|x|, 1)) and the difference is below 1 in magnitude.
        const B r1 = dd::fmadd(-kd, B(trig_pio2_c1), x);
        if constexpr (ShortMiddle && detail::is_avx512<A>) {
            // k M2 exact (|k| < 2^20, M2 33 bits, on 2^-86 Z, below 2^-33); r1 - k M2 = h + hl
            // exactly by Fast2Sum, as below; hl - k M3 (|k M3| < 2^-67) rounded once and the
            // neglected k (pi/2 - C1 - M2 - M3) (< 2^-122): r = h + rl to ~2^-105 absolute,
            // as with C1 + C2 + C3
            const B th = kd * B(trig_pio2_m2);
            const B h = r1 - th;
            const B hl = (r1 - h) - th;
            r = {h, dd::fnmadd(kd, B(trig_pio2_m3), hl)};
        } else {
            const dd::pair<A> t = dd::two_prod(kd, B(trig_pio2_c2));
            // r1 - t.hi = h + hl exactly by Fast2Sum even where |r1| < |t.hi|: r1 lies on
            // 2^-53 Z (x does for |x| >= 1/2, k C1 on 2^-49 Z; k = 0 makes t = 0) with |r1| <
            // 1, a grid at least as coarse as t.hi's (|t.hi| < 2^-33)
            const B h = r1 - t.hi;
            const B hl = (r1 - h) - t.hi;
            // left unnormalized (|lo| << |hi| still): saves the renormalization's latency
            r = {h, dd::fmadd(kd, B(trig_pio2_c3), hl - t.lo)};
        }
    } else {
        const B t1 = x - kd * B(trig_pio2_p1);  // exact (Sterbenz)
        const dd::pair<A> h1 = dd::two_sum(t1, -(kd * B(trig_pio2_p2)));
        const dd::pair<A> h2 = dd::two_sum(h1.hi, -(kd * B(trig_pio2_p3)));
        const B lo = (h1.lo + h2.lo) - kd * B(trig_pio2_p4);
        r = dd::fast_two_sum(h2.hi, lo);
    }
    const auto slow =
        ~(xsimd::abs(x) < B(trig_fast_limit));  // also inf / NaN (fixed by the callers)
    if (Checked && xsimd::any(slow)) {
        constexpr std::size_t n = B::size;
        alignas(64) double xs[n], rh[n], rl[n], kq[n];
        x.store_aligned(xs);
        r.hi.store_aligned(rh);
        r.lo.store_aligned(rl);
        kd.store_aligned(kq);
        unsigned lanes = 0;
#if defined(__AVX512F__)
        if constexpr (detail::is_avx512<A>) {
            lanes = static_cast<unsigned>(slow.data);
        } else
#endif
        {
            for (std::size_t j = 0; j < n; ++j) {
                lanes |= static_cast<unsigned>(!(std::fabs(xs[j]) < trig_fast_limit)) << j;
            }
        }
        trig_reduce_slow_lanes(xs, rh, rl, kq, lanes);
        r = {B::load_aligned(rh), B::load_aligned(rl)};
        kd = B::load_aligned(kq);
        zk = kd + shifter;
    }
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        const __m512i bits = _mm512_castpd_si512(zk);
        return {r, _mm512_test_epi64_mask(bits, _mm512_set1_epi64(1)),
                _mm512_test_epi64_mask(bits, _mm512_set1_epi64(2)),
                _mm512_test_epi64_mask(_mm512_add_epi64(bits, _mm512_set1_epi64(1)),
                                       _mm512_set1_epi64(2))};
    } else
#endif
    {
        const trig_quadrant<A> q = trig_quadrant_of(kd);
        return {r, q.odd, q.second, q.cos_negative};
    }
}

template <class A>
struct trig_parts {
    dd::pair<A> s, c;  // sin(r), cos(r)
    xsimd::batch_bool<double, A> odd, second, cos_negative;
};

template <bool Checked, class A>
NUMFUSE_ALWAYS_INLINE trig_parts<A> trig_core(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const trig_reduced<A> red = trig_reduce<Checked>(x);
    const dd::pair<A> r = red.r;
    const dd::pair<A> z = dd::two_prod(r.hi, r.hi);
    const B zh = z.hi;
    const B sp = dd::horner(zh, -0x1.5555555555555p-3,  // -0.16666666666666665741
                            0x1.111111111110ap-7,  // 0.0083333333333333210746
                            -0x1.a01a01a0188b5p-13,  // -0.00019841269841253608036
                            0x1.71de3a530b9acp-19,  // 2.7557319213424103166e-6
                            -0x1.ae64525be4614p-26,  // -2.5052104709780520915e-8
                            0x1.61206bda6800fp-33,  // 1.6058340666334401618e-10
                            -0x1.aa91d6c65bd5ep-41);  // -7.5773997468424373963e-13
    const B cp = dd::horner(zh, 0x1.5555555555549p-5,  // 0.041666666666666581087
                            -0x1.6c16c16c14c8ep-10,  // -0.0013888888888871383891
                            0x1.a01a019c37a99p-16,  // 0.000024801587287788006607
                            -0x1.27e4f7b282838p-22,  // -2.7557313866998328804e-7
                            0x1.1ee9b0e8e4f18p-29,  // 2.0875657768807840884e-9
                            -0x1.8f903f5d0c51p-37);  // -1.1356276753810179184e-11
    const B half(0.5), one(1.0);
    const B s_tail = dd::fmadd(r.hi * zh, sp, r.lo * (one - half * zh));
    const dd::pair<A> s = dd::fast_two_sum(r.hi, s_tail);
    const B hz = half * zh;
    const B wh = one - hz;
    const B we = (one - wh) - hz;  // exact: 1 >= hz
    const B c_tail = dd::fmadd(zh * zh, cp, we - half * z.lo) - r.hi * r.lo;
    const dd::pair<A> c = dd::fast_two_sum(wh, c_tail);
    return {s, c, red.odd, red.second, red.cos_negative};
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> negate_if(const xsimd::batch_bool<double, A>& m,
                                                        const xsimd::batch<double, A>& v) noexcept {
    return xsimd::select(m, -v, v);
}

// x with the tiny lanes (whose results the callers take from x itself) replaced by 0: no
// arithmetic sees a subnormal operand or result there (an Intel core takes a microcode
// assist, ~100x an instruction, for a multiply or FMA with one).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> without_tiny(
    const xsimd::batch_bool<double, A>& tiny, const xsimd::batch<double, A>& x) noexcept {
    return xsimd::select(tiny, xsimd::batch<double, A>(0.0), x);
}

// sin(x) (Checked: any lanes; else 2^-27 <= |x| < trig_fast_limit on every lane).
template <bool Checked, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sin_lanes(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const auto tiny = xsimd::abs(x) < B(0x1.0p-27);
    const auto p = trig_core<Checked>(Checked ? without_tiny(tiny, x) : x);
    const B hi = xsimd::select(p.odd, p.c.hi, p.s.hi);
    const B lo = xsimd::select(p.odd, p.c.lo, p.s.lo);
    B res = negate_if(p.second, hi + lo);  // k mod 4 in {2, 3}
    if constexpr (!Checked) return res;
    res = xsimd::select(tiny, x, res);
    return xsimd::select(xsimd::isfinite(x), res, x - x);  // inf -> NaN, NaN kept
}

// cos(x), the same lanes.
template <bool Checked, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> cos_lanes(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    // |x| < 2^-27: cos(0) = 1 is the correctly rounded value (1 - x^2/2 > 1 - 2^-55)
    const auto p = trig_core<Checked>(Checked ? without_tiny(xsimd::abs(x) < B(0x1.0p-27), x) : x);
    const B hi = xsimd::select(p.odd, p.s.hi, p.c.hi);
    const B lo = xsimd::select(p.odd, p.s.lo, p.c.lo);
    const B res = negate_if(p.cos_negative, hi + lo);
    if constexpr (!Checked) return res;
    return xsimd::select(xsimd::isfinite(x), res, x - x);
}

// tan(x), the same lanes.
template <bool Checked, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tan_lanes(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const auto tiny = xsimd::abs(x) < B(0x1.0p-27);
    const trig_reduced<A> red = trig_reduce<Checked, true>(Checked ? without_tiny(tiny, x) : x);
    const dd::pair<A> r = red.r;
    // tan r = rh + r^3 T0 + r^3 z U(z) + rl tan'(r): r^3 T0 (up to 0.16 at pi/4) is carried
    // as an exact pair, the rest (below 0.06) in plain doubles; v = z U(z) arrives last, so
    // everything else is summed first (the method and the bounds: the header comment).
    const dd::pair<A> z = dd::two_prod(r.hi, r.hi);
    const dd::pair<A> r3 = dd::two_prod(r.hi, z.hi);
    const B r3l = dd::fmadd(r.hi, z.lo, r3.lo);  // r^3 = r3.hi + r3l
    B v, early;
    dd::pair<A> h;
    if constexpr (is_avx512<A>) {
        // U(z) = 2/15 + z P(z) / Q(z): the Pade approximant of degree (2, 3) at 0 of (U(z) -
        // 2/15) / z from tan's Taylor series (mpmath.pade), coefficients rounded to double.
        // T0 = 1/3 = t0 + t0l (t0l folded into the small terms); tan'(r) = 1 + tan^2 r taken
        // as 1 + h.hi^2 (h.hi = rh + r^3 / 3 rounded).
        const B p = dd::horner(z.hi, 0x1.ba1ba1ba1ba1cp-5,  // 17/315 = 0.053968253968253968254
                               -0x1.aa27006d8da62p-9,  // -0.0032512844107047005598
                               0x1.35750d406447dp-15);  // 0.000036890176946199355163
        const B q = dd::horner(z.hi, 1.0,  //
                               -0x1.dca4fe092a8ecp-2,  // -0.4654731457800511509
                               0x1.9ad8dc0a26c5cp-6,  // 0.025076117403483132383
                               -0x1.221deadf5591dp-12);  // -0.00027667700301971401716
        v = z.hi * dd::fmadd(z.hi, p / q, B(0x1.1111111111111p-3));  // 2/15
        const B t0(0x1.5555555555555p-2), t0l(0x1.5555555555555p-56);  // 1/3 = t0 + t0l
        const dd::pair<A> c = dd::two_prod(r3.hi, t0);  // r3.hi t0 exactly
        h = dd::fast_two_sum(r.hi, c.hi);
        const B tail = dd::fmadd(r.lo, h.hi * h.hi, dd::fmadd(r3.hi, t0l, r.lo));
        early = h.lo + (dd::fmadd(r3l, t0, tail) + c.lo);
    } else {
        // T(z) = T0 + z U(z) ~ (tan(r) - r) / r^3 on z <= (pi/4)^2 * 1.01: Remez
        // (tools/explog_remez.py's exchange), degree 14, relative error of r + r^3 T vs tan:
        // 2^-57.78; U evaluated as E(z^2) + z O(z^2) (two short chains); tan'(r) taken as 1 + z.
        const B w = z.hi * z.hi;
        const B ue = dd::horner(w, 0x1.111111111049ap-3,  // 0.13333333333324476344
                                0x1.664f4859959b6p-6,  // 0.021869488386380551981
                                0x1.d6d2d4cd61a15p-9,  // 0.0035920986908337762013
                                0x1.34b19b3d793dcp-11,  // 0.00058878664975436532589
                                0x1.5b77a5c2c3df7p-14,  // 0.0000828426773689035391
                                -0x1.ca00663f11bbcp-16,  // -0.000027299020299655549194
                                -0x1.a2e9151353b89p-16);  // -0.000024969010224136791543
        const B uo = dd::horner(w, 0x1.ba1ba1bacfd0fp-5,  // 0.053968253973375117372
                                0x1.226e3af4e513fp-7,  // 0.0088632381319163604932
                                0x1.7db29bbb403f7p-10,  // 0.00145606112965901229
                                0x1.ffc488d8aa1eep-13,  // 0.00024402986197925808981
                                0x1.1f71e9b7479d2p-14,  // 0.000068532221906703814614
                                0x1.a3b465c872b1p-15,  // 0.000050032696495691292467
                                0x1.4e03eaa4143c8p-17);  // 9.9544316257987620076e-6
        v = z.hi * dd::even_odd(z.hi, ue, uo);  // z U(z)
        const B t0(0x1.555555555555fp-2);  // T0 = 0.33333333333333386994
        const dd::pair<A> c = dd::two_prod(r3.hi, t0);  // r3.hi T0 exactly
        h = dd::fast_two_sum(r.hi, c.hi);
        early = h.lo + (dd::fmadd(r3l, t0, dd::fmadd(r.lo, z.hi, r.lo)) + c.lo);
    }
    const dd::pair<A> t = dd::fast_two_sum(h.hi, dd::fmadd(r3.hi, v, early));
    // t.hi + t.lo would round to t.hi: t is a Fast2Sum pair, |t.lo| at most half an ulp of
    // t.hi (and a tie only where t.hi is already the even neighbour)
    B res = t.hi;
    if (xsimd::any(red.odd)) {
        // -1 / (th + tl): y = 1/th correctly rounded (one division: on AVX-512 cheaper
        // than rcp14 and a cubic Newton step, whose four operations it replaces), rho =
        // 1 - y th (small: rounded relative to itself only), then one Newton step that
        // takes tl in: 1 / (th + tl) ~ y + y (rho - y tl), rounded once.
        const B y = B(1.0) / t.hi;
        B rho;
        if constexpr (has_fma<A>) {
            rho = dd::fnmadd(y, t.hi, B(1.0));
        } else {
            const dd::pair<A> yt = dd::two_prod(y, t.hi);
            rho = (B(1.0) - yt.hi) - yt.lo;  // 1 - yt.hi exact (yt.hi ~ 1)
        }
        res = xsimd::select(red.odd, -dd::fmadd(y, dd::fnmadd(y, t.lo, rho), y), res);
    }
    if constexpr (!Checked) return res;
    res = xsimd::select(tiny, x, res);
    return xsimd::select(xsimd::isfinite(x), res, x - x);
}

// Sin, cos or tan (Fn 0, 1, 2) of any lanes: the rare path of the kernels below. Inline (its
// huge lanes' scalar reduction is out of line): as a call it made inputs spanning many
// magnitudes, where most batches take it, 3-5% slower.
template <int Fn, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> trig_rare(const xsimd::batch<double, A>& x) noexcept {
    if constexpr (Fn == 0) return sin_lanes<true>(x);
    else if constexpr (Fn == 1) return cos_lanes<true>(x);
    else return tan_lanes<true>(x);
}

// True where 2^-27 <= |x| < trig_fast_limit (false for inf and NaN): a batch with every lane
// so pays this one test and nothing else for tiny, huge or non-finite lanes (trig_rare).
template <class A>
NUMFUSE_ALWAYS_INLINE bool trig_all_ordinary(const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B ax = xsimd::abs(x);
    return xsimd::all((ax >= B(0x1.0p-27)) & (ax < B(trig_fast_limit)));
}

}  // namespace detail

// sin(x), f64 lanes. Max error <= 1 ULP (see the contract above).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> sin_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    if (detail::trig_all_ordinary(x)) return detail::sin_lanes<false>(x);
    return detail::trig_rare<0>(x);
}

// cos(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> cos_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    if (detail::trig_all_ordinary(x)) return detail::cos_lanes<false>(x);
    return detail::trig_rare<1>(x);
}

// tan(x), f64 lanes. Max error <= 1 ULP.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tan_kernel(
    const xsimd::batch<double, A>& x) noexcept {
    if (detail::trig_all_ordinary(x)) return detail::tan_lanes<false>(x);
    return detail::trig_rare<2>(x);
}

}  // namespace numfuse::kernels
