// sin, cos, tan for float32 lanes (xsimd 8.1 batches).
//
// Contract
//   sin_f32_kernel / cos_f32_kernel / tan_f32_kernel(batch<float>): per lane, <= 1 float32
//   ULP over all 2^32 inputs at every level (benchmarks/cpp/accuracy_harness.cpp
//   --f32-stride 1 checks every one; docs/accuracy.md has the measured maxima).
//   |x| < 2^-12: sin and tan return x (so +-0 and subnormals are kept; x^3/3 is below a third
//   of an ulp there), cos returns 1 (the correctly rounded value). +-inf and NaN -> NaN (x - x).
//   Arithmetic never sees a subnormal operand or result: tiny and huge lanes are computed
//   as 0 on the float32-lane path and replaced (Intel cores take a microcode assist, ~100x
//   an instruction, for a subnormal operand or result of a multiply or FMA); AVX-512 tan
//   widens a subnormal float32 to a normal float64 (one conversion) and computes on that.
//   On FMA levels a batch whose lanes all have 2^-12 <= |x| < 2^17 (tan on AVX-512: |x| <
//   2^17) pays one range test for all of that; any other batch goes through the out-of-line
//   sincos_f32_rare (sin, cos) or trig_f32_rare (tan).
//
// Method
//   tan on AVX-512, |x| < 2^17 (tan_f32_rational): float32 values in float64 lanes, one
//   reduction, a rational function and one division. k = round(2x/pi) from the shifter, r =
//   (x - k C1) - k C2 (trig.hpp's pieces of pi/2; the first step exact, the second rounded
//   once: relative error 2^-53, and the neglected k C3 < 2^-89 is below 2^-60 of |r| >= 2^-29
//   here). tan r ~ r P(z) / Q(z) with z = r^2, P = 1 + p1 z, Q = 1 + q1 z + q2 z^2, whose
//   relative error is 2^-25.84 on |r| <= pi/4 (tools/tan_f32_rational.py), evaluated as
//   n / d = r w / D(w) with w = c - r^2 (one fused operation), c = -1/p1 ~ 10.44 and D(w) =
//   c Q(c - w) = d0 + d1 w + d2 w^2 (Horner, two fused operations): the same function in one
//   operation less; odd k gives tan x = -1 / tan r = -d / n, the same relative error. Bound:
//   the approximation's 2^-25.84 (the coefficients' roundings move it by ~2^-50), r's 2^-53
//   (tan's relative condition |r (1 + tan^2 r) / tan r| <= pi/2 on |r| <= pi/4), w's rounding
//   (2^-53, its weight in n 1, in d |w D'(w) / D(w)| < 6 on w in [9.8, 10.45]), w taken as
//   c - r1^2 with the exact r1 = x - k C1 = r + k C2 (|k C2| <= 83443 C2 < 2^-37.5, so
//   |r1^2 - r^2| < 2 (pi/4) 2^-37.5 = 2^-36.9, weighted by |d ln(w / D(w)) / dw| = |1/w -
//   D'(w)/D(w)| < 0.49 on w in [9.8, 10.45]: below 2^-37.9 relative), D's two roundings (d2 w
//   + d1 ~ 3.4 and D ~ 7.6..10.45 against terms up to 25.3: below 2^-50 relative), n's and the
//   correctly rounded division's (2^-53 each): together below 2^-25.82 relative, i.e.
//   2^-25.82 2^24 < 0.29 float32 ULP, plus 0.5 for the final rounding to float32: <= 0.79
//   ULP (measured over all float32 inputs: docs/accuracy.md). x - k C1
//   computed as c - a b keeps +-0, and w > 0 keeps r's sign in n; a tiny x comes back
//   unchanged: r = x, n / d = x c / D(c) with D(c) = c up to ~2^-50 (P(0) = Q(0) = 1), far
//   inside half an ulp of float32 together with x^2/3 < 2^-25.58 for |x| < 2^-12 (and the
//   float64 lanes never see a subnormal: the smallest r^2 is 2^-298).
//   Other FMA levels, and sin and cos, |x| < 2^17 (|k| < 2^17): float32 lanes. k from the
//   1.5*2^23 shifter, pi/2 = P1 + P2 + P3 in float32 pieces; x - k P1 exact in one FMA, k P2 an
//   exact product, so r = h + rl to ~2^-56 absolute (float32 inputs below 2^17 stay above
//   ~2^-26 from a multiple of pi/2, as the exhaustive check confirms). sin(r) = h + (h z S(z) +
//   rl (1 - z/2)), cos(r) = (1 - z/2 as an exact pair) + (z^2 C(z) - zl/2 - h rl) with z = h^2
//   (zl its rounding error), S and C degree-2 minimax in z (tools/trig_f32_remez.py's method);
//   each an unrounded head + tail pair. sin and cos: the pair rounded once, the quadrant from
//   the bits of k (swap, sign flip). tan: n / d with (n, d) = (sin, cos) for even k, (cos,
//   sin) for odd k (negated), each pair renormalized to n + nl, d + dl: q0 = n y with y = 1/d
//   (a division), the residual e = (n - q0 d) + (nl - q0 dl) in fused operations, and q = q0 +
//   e y rounded once: ~2^-27 relative from the pairs before that rounding.
//   sin and cos on FMA levels, |x| >= 2^17: r to ~2^-47 relative in float64 lanes
//   (trig_f32_reduce_wide_half: Cody-Waite below 1.5e6, else two 53-bit windows of 2/pi picked
//   by x's exponent), rounded to the pair h + rl, then the float32-lane polynomials above, on
//   every lane of the batch at once (sincos_f32_rare).
//   tan's other lanes (|x| >= 2^17, inf, NaN), and every lane without FMA: float32 values in
//   float64 lanes. r and k: for |x| < 1.5e6 as in trig.hpp (x - k C1 exact in one FMA, or the
//   exact P1 step without FMA; then one rounded step with the rest of pi/2).
//   Where a lane is larger, x 2/pi mod 4 for the whole batch from three products with a window of
//   the bits of 2/pi picked by x's exponent (trig_f32_windows, 105 rows): with x = m 2^E (m <
//   2^24), the bits of weight >= 4 / 2^E only add multiples of 4 and are skipped; the next
//   28 (A) and 28 (B) bits give exact products x A (< 2^26) and x B (< 1/4), the next 53 (C)
//   a rounded one (< 2^-30); the integer parts are taken off by rounding (the shifter), f =
//   ((x A - ka) - kb + x B) + x C is in [-1/2, 1/2] with an absolute error ~2^-82 (far below
//   the closest approach of a float32 to a multiple of pi/2), r = f pi/2, k = ka + kb. sin,
//   cos: Taylor polynomials in z = r^2, sin to r^11 (< 2^-37 relative), cos to r^10 (< 2^-32);
//   tan: their quotient with a reciprocal good to 2^-40 (rcp14 and a cubic Newton step on
//   AVX-512, a division elsewhere); one rounding to float32 at the end.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/trig.hpp"

namespace numfuse::kernels {
namespace detail {

// ------------------------------------------------------------------ float64 lanes

// The rows of the float32 large-argument reduction: row j serves float32 values whose
// float64 biased exponent is 1046 + j (the lsb of m has weight 2^E, E = j; rows clamp to
// [0, 104], which every float32 reaches: smaller exponents take row 0, whose window starts
// at weight 2 and so drops nothing, inf/NaN take row 104). a, b, c: the bits of 2/pi of
// weights 2^(1 - j) .. 2^(-26 - j), 2^(-27 - j) .. 2^(-54 - j), 2^(-55 - j) .. 2^(-107 - j).
inline constexpr int trig_f32_window_rows = 105;
struct trig_f32_window_table {
    double a[trig_f32_window_rows], b[trig_f32_window_rows], c[trig_f32_window_rows];
};

// n <= 53 bits of two_over_pi_bits from stream position p (bit 0: the top bit of limb 0), as
// an integer.
constexpr std::uint64_t two_over_pi_window(int p, int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) {
        const int q = p + i;
        v = (v << 1) | ((two_over_pi_bits[q >> 6] >> (63 - (q & 63))) & 1u);
    }
    return v;
}

constexpr double power_of_two(int e) {
    double v = 1.0;
    for (; e > 0; --e) v *= 2.0;
    for (; e < 0; ++e) v *= 0.5;
    return v;
}

// Stream position p holds the bit of weight 2^(63 - p) (see two_over_pi_bits).
constexpr trig_f32_window_table make_trig_f32_windows() {
    trig_f32_window_table t{};
    for (int j = 0; j < trig_f32_window_rows; ++j) {
        t.a[j] = static_cast<double>(two_over_pi_window(j + 62, 28)) * power_of_two(-(j + 26));
        t.b[j] = static_cast<double>(two_over_pi_window(j + 90, 28)) * power_of_two(-(j + 54));
        t.c[j] = static_cast<double>(two_over_pi_window(j + 118, 53)) * power_of_two(-(j + 107));
    }
    return t;
}
inline constexpr trig_f32_window_table trig_f32_windows = make_trig_f32_windows();

// The rows of sin / cos float32's reduction of |x| >= 1.5e6 (trig_f32_reduce_wide_half): row
// j serves the float64 biased exponent 1046 + j as trig_f32_windows does (the same clamp to
// [0, 104]); hi[j] and lo[j] hold the 53 bits of 2/pi of weights 2^(1 - j) .. 2^(-51 - j)
// and 2^(-52 - j) .. 2^(-104 - j).
struct trig_f32_wide_table {
    double hi[trig_f32_window_rows], lo[trig_f32_window_rows];
};

constexpr trig_f32_wide_table make_trig_f32_wide() {
    trig_f32_wide_table t{};
    for (int j = 0; j < trig_f32_window_rows; ++j) {
        t.hi[j] = static_cast<double>(two_over_pi_window(j + 62, 53)) * power_of_two(-(j + 51));
        t.lo[j] = static_cast<double>(two_over_pi_window(j + 115, 53)) * power_of_two(-(j + 104));
    }
    return t;
}
inline constexpr trig_f32_wide_table trig_f32_wide = make_trig_f32_wide();

// table[row] per lane: the level's gather instruction (xsimd 8.1's batch::gather falls back
// to a lane-by-lane loop on AVX-512), else lane by lane.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> gather_rows(
    const double* table, const xsimd::batch<std::int64_t, A>& row) noexcept {
    using B = xsimd::batch<double, A>;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) return B(_mm512_i64gather_pd(row, table, 8));
    else
#endif
#if defined(__AVX2__)
        if constexpr (std::is_base_of<xsimd::avx2, A>::value) {
        return B(_mm256_i64gather_pd(table, row, 8));
    } else
#endif
    {
        alignas(64) std::int64_t index[B::size];
        alignas(64) double value[B::size];
        row.store_aligned(index);
        for (std::size_t l = 0; l < B::size; ++l) value[l] = table[index[l]];
        return B::load_aligned(value);
    }
}

// x = k pi/2 + r for float32 values x in float64 lanes: r to ~2^-50 relative, k integral in
// kd. Finite lanes only (inf / NaN lanes get garbage; the callers return NaN for them).
template <class A>
struct trig_f32_f64_reduced {
    xsimd::batch<double, A> r, kd;
};

template <class A>
NUMFUSE_ALWAYS_INLINE trig_f32_f64_reduced<A> trig_f32_reduce_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(trig_shifter);
    if (xsimd::any(~(xsimd::abs(x) < B(trig_fast_limit)))) {  // inf and NaN too
        using I = xsimd::batch<std::int64_t, A>;
        using U = xsimd::batch<std::uint64_t, A>;
        const I field = bit_cast<I>(bit_cast<U>(xsimd::abs(x)) >> 52);
        const I row = xsimd::min(xsimd::max(field - I(1046), I(0)), I(trig_f32_window_rows - 1));
        const B pa = x * gather_rows(trig_f32_windows.a, row);  // exact: 24 x 28 bits, < 2^26
        const B pb = x * gather_rows(trig_f32_windows.b, row);  // exact, < 1/4
        const B pc = x * gather_rows(trig_f32_windows.c, row);  // < 2^-30, rounded
        const B ka = (pa + shifter) - shifter;
        const B fa = pa - ka;  // exact, in [-1/2, 1/2]
        const B kb = ((fa + pb) + shifter) - shifter;
        // (fa - kb) + pb is exact below 1/2 in magnitude (53 bits at most); above, its
        // rounding error (2^-54) is negligible against f.
        const B f = ((fa - kb) + pb) + pc;
        return {f * B(trig_pio2_c1), ka + kb};
    }
    const B kd = dd::fmadd(x, B(trig_two_over_pi), shifter) - shifter;
    B r;
    if constexpr (has_fma<A>) {
        r = dd::fmadd(-kd, B(trig_pio2_c1), x);  // exact
        r = dd::fmadd(-kd, B(trig_pio2_c2), r);
    } else {
        r = x - kd * B(trig_pio2_p1);  // exact (Sterbenz, k P1 exact)
        r = r - kd * B(trig_pio2_p2);  // k P2 exact; one rounding
        r = r - kd * B(trig_pio2_p3 + trig_pio2_p4);
    }
    return {r, kd};
}

// sin(x), cos(x) or tan(x) (Fn 0, 1, 2) for float32 values held in float64 lanes, to ~2^-31
// relative (see the contract above), NaN for inf / NaN lanes.
template <int Fn, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> trig_f32_in_f64(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const trig_f32_f64_reduced<A> red = trig_f32_reduce_f64(x);
    const B r = red.r;
    const B z = r * r;
    // Taylor coefficients 1/n! with alternating signs.
    const B sp =
        dd::horner(z, -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0, -1.0 / 39916800.0);
    const B cp = dd::horner(z, -0.5, 1.0 / 24.0, -1.0 / 720.0, 1.0 / 40320.0, -1.0 / 3628800.0);
    const B s = dd::fmadd(r * z, sp, r);
    const B c = dd::fmadd(z, cp, B(1.0));
    const trig_quadrant<A> q = trig_quadrant_of(red.kd);
    B res;
    if constexpr (Fn == 1) {
        res = negate_if(q.cos_negative, xsimd::select(q.odd, s, c));
    } else {
        if constexpr (Fn == 0) {
            res = negate_if(q.second, xsimd::select(q.odd, c, s));
        } else {
            const B n = xsimd::select(q.odd, c, s), d = xsimd::select(q.odd, s, c);
            res = negate_if(q.odd, n * dd::reciprocal_approx(d));
        }
        res = xsimd::select(xsimd::abs(x) < B(0x1.0p-12), x, res);  // keeps +-0
    }
    return xsimd::select(xsimd::isfinite(x), res, x - x);
}

// ------------------------------------------------------------------ float32 lanes

// Native float32 lanes take |x| below this (|k| < 2^17); larger, inf and NaN lanes go
// through trig_f32_in_f64.
inline constexpr float trig_f32_lane_limit = 0x1.0p17f;
inline constexpr float trig_f32_tiny = 0x1.0p-12f;

// sin(r) = sh + st and cos(r) = ch + ct (unrounded pairs) and the bits of k, for float32
// lanes with |x| < trig_f32_lane_limit, FMA levels only (see the contract above).
template <class A>
struct trig_f32_parts {
    xsimd::batch<float, A> sh, st, ch, ct;
    xsimd::batch<std::int32_t, A> kb;  // k in the low bits
};

// x = k pi/2 + (h + rl) for float32 lanes with |x| < trig_f32_lane_limit, FMA levels only.
template <class A>
struct trig_f32_reduced {
    xsimd::batch<float, A> h, rl;
    xsimd::batch<std::int32_t, A> kb;  // k in the low bits
};

template <class A>
NUMFUSE_ALWAYS_INLINE trig_f32_reduced<A> trig_f32_reduce(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F shifter(0x1.8p23f);
    const F zk = fused_madd(x, F(0x1.45f306p-1f), shifter);  // k = round(2x/pi) in the low bits
    const F kd = zk - shifter;
    // pi/2 = P1 + P2 + P3 (float32 pieces, |rest| < 2^-76). x - k P1 is exact in one fused
    // multiply-add (both on the 2^-23 grid, or k = 0, and the difference below 1); k P2 as
    // an exact product, the sum with it exact: r = h + rl to ~2^-56 absolute.
    const F r1 = fused_madd(-kd, F(0x1.921fb6p+0f), x);
    const F th = kd * F(-0x1.777a5cp-25f);
    const F tl = fused_msub(kd, F(-0x1.777a5cp-25f), th);
    // r1 - th = h + hl exactly by Fast2Sum even where |r1| < |th|: r1 lies on 2^-24 Z (x
    // does for |x| >= 1/2, k P1 on 2^-23 Z; k = 0 makes th = 0) with |r1| < 1, a grid at
    // least as coarse as th's (|th| < 2^-7, so ulp(th) <= 2^-31)
    const F h = r1 - th;
    const F hl = (r1 - h) - th;
    const F rl = fused_madd(-kd, F(-0x1.ee59dap-50f), hl - tl);
    return {h, rl, as_int(zk)};
}

// The low 32 bits of each 64-bit lane of lo and hi (lanes in order) as int32 lanes.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<std::int32_t, A> low_words(
    const xsimd::batch<double, A>& lo, const xsimd::batch<double, A>& hi) noexcept {
    using I = xsimd::batch<std::int32_t, A>;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        const __m512i even =
            _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        return I(_mm512_permutex2var_epi32(_mm512_castpd_si512(lo), even, _mm512_castpd_si512(hi)));
    } else
#endif
#if defined(__AVX2__)
        if constexpr (std::is_base_of<xsimd::avx2, A>::value) {
        // per 128-bit half: lo's words 0 and 2, then hi's; then the 64-bit pieces in order
        const __m256 w = _mm256_shuffle_ps(_mm256_castpd_ps(lo), _mm256_castpd_ps(hi), 0x88);
        return I(_mm256_castpd_si256(_mm256_permute4x64_pd(_mm256_castps_pd(w), 0xD8)));
    } else
#endif
    {
        constexpr std::size_t n = xsimd::batch<double, A>::size;
        alignas(64) std::int64_t q[2 * n];
        alignas(64) std::int32_t w[2 * n];
        bit_cast<xsimd::batch<std::int64_t, A>>(lo).store_aligned(q);
        bit_cast<xsimd::batch<std::int64_t, A>>(hi).store_aligned(q + n);
        for (std::size_t l = 0; l < 2 * n; ++l) w[l] = static_cast<std::int32_t>(q[l]);
        return I::load_aligned(w);
    }
}

// x 2/pi = k + f (|f| <= 1/2 + 2^-27) for float32 values v in float64 lanes with 2^17 <= |v|
// < 2^128 or v = 0, FMA levels: r = f pi/2 and zk (k in the low 32 bits). A half whose lanes
// are all below trig_fast_limit: k from the shifter, r = (v - k C1) - k C2 (the first step
// exact in one fused operation, the second rounded once; the neglected k C3 < 2^-89). Other
// halves: with v = m 2^j (m < 2^24 an integer, j >= -6 here) the bits of 2/pi of weight >=
// 2^(2 - j) add multiples of 4 to v 2/pi and are skipped: w1 and w2 hold the next 53 + 53
// bits (trig_f32_wide's row of j, rows clamped as trig_f32_windows': j < 0 takes row 0,
// whose window starts at weight 2, where 2/pi has no bits). v w1 = ph + pl exactly (|v w1|
// < 2^26; pl from one fused operation), k = round(ph) by the shifter and ph - k exact (both
// on ulp(ph)'s grid, the difference <= 1/2); f = ((ph - k) + pl) + v w2 in one rounded
// addition and one fused operation: absolute error < 2^-79 (the bits of 2/pi below w2: <
// 2^-80 in v times them; v w2 < 2^-27 rounded once) plus two roundings of 2^-53 relative,
// then r = f C1 (2^-53 more). Far below the closest approach of a float32 to a multiple of
// pi/2, this r is good to ~2^-47 relative, well inside what the float32-lane path's
// reduction (2^-56 absolute for |r| >= ~2^-26) promises, so the polynomials' bound holds
// unchanged (every float32 of 2^17 <= |x| <= FLT_MAX checked against float64 sin, cos).
template <class A>
NUMFUSE_ALWAYS_INLINE void trig_f32_reduce_wide_half(const xsimd::batch<double, A>& v,
                                                     xsimd::batch<double, A>& r,
                                                     xsimd::batch<double, A>& zk) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(trig_shifter);
    if (xsimd::all(xsimd::abs(v) < B(trig_fast_limit))) {
        zk = fused_madd(v, B(trig_two_over_pi), shifter);
        const B kd = zk - shifter;
        r = fused_nmadd(kd, B(trig_pio2_c2), fused_nmadd(kd, B(trig_pio2_c1), v));
        return;
    }
    using I = xsimd::batch<std::int64_t, A>;
    using U = xsimd::batch<std::uint64_t, A>;
    const I field = bit_cast<I>(bit_cast<U>(xsimd::abs(v)) >> 52);
    const I row = xsimd::min(xsimd::max(field - I(1046), I(0)), I(trig_f32_window_rows - 1));
    const B w1 = gather_rows(trig_f32_wide.hi, row);
    const B w2 = gather_rows(trig_f32_wide.lo, row);
    const B ph = v * w1;
    const B pl = fused_msub(v, w1, ph);  // v w1 - ph, exact
    zk = ph + shifter;
    const B fa = ph - (zk - shifter);  // exact
    r = fused_madd(v, w2, fa + pl) * B(trig_pio2_c1);
}

// x = k pi/2 + (h + rl) for float32 lanes with 2^17 <= |x| <= FLT_MAX or x = 0 (others:
// garbage), FMA levels, through trig_f32_reduce_wide_half on both halves: r in float64
// rounded to h, and rl the rounded r - h (exact in float64: h is r to float32 precision),
// so h + rl is r to 2^-48 relative.
template <class A>
NUMFUSE_ALWAYS_INLINE trig_f32_reduced<A> trig_f32_reduce_wide(
    const xsimd::batch<float, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    B lo, hi, rlo, rhi, zlo, zhi;
    widen(x, lo, hi);
    trig_f32_reduce_wide_half(lo, rlo, zlo);
    trig_f32_reduce_wide_half(hi, rhi, zhi);
    const xsimd::batch<float, A> h = narrow(rlo, rhi);
    B hlo, hhi;
    widen(h, hlo, hhi);
    return {h, narrow(rlo - hlo, rhi - hhi), low_words(zlo, zhi)};
}

// sin(r) and cos(r) as pairs for r = h + rl from either reduction (see the contract above).
template <class A>
NUMFUSE_ALWAYS_INLINE trig_f32_parts<A> trig_f32_parts_of(const trig_f32_reduced<A>& red) noexcept {
    using F = xsimd::batch<float, A>;
    const F h = red.h, rl = red.rl;
    const F z = h * h;
    // S(z) ~ (sin r - r) / r^3, C(z) ~ (cos r - 1 + z/2) / z^2 on r^2 <= (1.01 pi/4)^2:
    // minimax of degree 2 (weighted errors of the results 2^-27.7 and 2^-30.2;
    // tools/trig_f32_remez.py's method). One degree more for S (2^-32.5) takes tan's
    // maximum from 0.906 to 0.843 ULP (the roundings dominate) for 15% of its time.
    const F sp = fused_horner(z, -0x1.555544p-3f,  // -0.16666653752326965332
                              0x1.1106d4p-7f,  // 0.0083321128040552139282
                              -0x1.9920c2p-13f);  // -0.00019508741388563066721
    const F cp = fused_horner(z, 0x1.55554ap-5f,  // 0.041666645556688308716
                              -0x1.6c0bc4p-10f,  // -0.0013887251261621713638
                              0x1.99cb8p-16f);  // 0.000024425680749118328094
    // cos(h + rl) = (1 - z/2) + (z^2 C - zl/2 - h rl): z = h^2 - zl exactly, 1 - z/2 as
    // wh + we exactly ((1 - wh) is exact and so is its difference with z/2: 1 >= z/2)
    const F zl = fused_msub(h, h, z);
    const F wh = fused_nmadd(F(0.5f), z, F(1.0f));
    const F we = fused_nmadd(F(0.5f), z, F(1.0f) - wh);
    const F ct = fused_madd(z * z, cp, fused_nmadd(h, rl, fused_nmadd(F(0.5f), zl, we)));
    // sin(h + rl) = h + (h z S + rl (1 - z/2)) (wh for 1 - z/2: rl is below 2^-20 h)
    const F st = fused_madd(h * z, sp, rl * wh);
    return {h, st, wh, ct, red.kb};
}

template <class A>
NUMFUSE_ALWAYS_INLINE trig_f32_parts<A> trig_f32_lanes(const xsimd::batch<float, A>& x) noexcept {
    return trig_f32_parts_of(trig_f32_reduce(x));
}

// sin (Fn 0) or cos (Fn 1) from the parts: odd k swaps sin and cos; the sign from bit 1 of k
// (sin) or k + 1 (cos); each pair rounded once.
template <int Fn, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> sincos_f32_of_parts(
    const trig_f32_parts<A>& p) noexcept {
    using F = xsimd::batch<float, A>;
    using I = xsimd::batch<std::int32_t, A>;
    const auto odd = (p.kb & I(1)) == I(1);  // the select on the integer mask
    const F s = p.sh + p.st, c = p.ch + p.ct;
    const I v = Fn == 1 ? xsimd::select(odd, as_int(s), as_int(c))
                        : xsimd::select(odd, as_int(c), as_int(s));
    const I sign = ((Fn == 1 ? p.kb + I(1) : p.kb) & I(2)) << 30;
    return as_float<float, A>(v ^ sign);
}

#if defined(__AVX512F__)
// tan_f32_rational in two steps, for a loop that overlaps one batch's second step with the next
// batch's first (tan_f32_common_run): what waits on x (the reduction, w, the parity of k) and
// what waits on those (D(w), the quotient).
template <class A>
struct tan_f32_rational_reduced {
    __m512d r, w;  // raw registers: with batches the pipelined loop kept w on the stack
    __mmask8 odd;  // k odd: tan x = -1 / tan r
};

template <class A>
NUMFUSE_ALWAYS_INLINE tan_f32_rational_reduced<A> tan_f32_rational_reduce(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(trig_shifter);
    const B zk = fused_madd(x, B(trig_two_over_pi), shifter);  // k = round(2x/pi), low bits
    const B kd = zk - shifter;
    // r1 = x - k C1 exact, then one rounding; c - a b keeps the sign of x = -0 (k = +0)
    const B r1 = fused_nmadd(kd, B(trig_pio2_c1), x);
    const B r = fused_nmadd(kd, B(trig_pio2_c2), r1);
    // tan r ~ r P(z) / Q(z) = r w / D(w), w = c - r^2 (tools/tan_f32_rational.py), with r1
    // for r in w: w and D(w) do not wait for r's rounding step (the loop is bound by how long
    // its operations wait in the scheduler, not by their number)
    const B w = fused_nmadd(r1, r1, B(0x1.4e19229722181p+3));  // c = 10.440568251783363
    return {r, w, _mm512_test_epi64_mask(_mm512_castpd_si512(zk), _mm512_set1_epi64(1))};
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tan_f32_rational_finish(
    const tan_f32_rational_reduced<A>& red) noexcept {
    using B = xsimd::batch<double, A>;
    const B w(red.w);
    const B n = B(red.r) * w;  // r w keeps the sign of r = +-0 (w > 0)
    const B d = fused_madd(w,
                           fused_madd(w, B(0x1.9f34b708efd83p-4),  // d2 = 0.10136863229762665
                                      B(0x1.2e873ea32d372p+1)),  // d1 = 2.363502340007863
                           B(-0x1.94914d6101ad6p+4));  // d0 = -25.28547418492493
    // odd k: tan x = -1 / tan r = -d / n
    const B num = _mm512_mask_xor_pd(n, red.odd, d, _mm512_set1_pd(-0.0));
    const B den = _mm512_mask_mov_pd(d, red.odd, n);
    return num / den;
}

// tan of float32 values held in float64 lanes, AVX-512, for |x| < trig_f32_lane_limit (other
// lanes: garbage): one reduction, a rational function and one division (the contract above
// has the method and the proof of the bound). +-0 and subnormals come back unchanged.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> tan_f32_rational(
    const xsimd::batch<double, A>& x) noexcept {
    return tan_f32_rational_finish(tan_f32_rational_reduce(x));
}

// tan_f32_rational on both halves of float32 lanes.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> tan_f32_rational_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    xsimd::batch<double, A> lo, hi;
    widen(x, lo, hi);
    return narrow(tan_f32_rational(lo), tan_f32_rational(hi));
}
#endif

// sin(x), cos(x) or tan(x) (Fn 0, 1, 2) of float32 lanes with trig_f32_lane_limit > |x| >=
// trig_f32_tiny or x == 0 (others: garbage), FMA levels.
template <int Fn, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> trig_f32_lanes_result(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    using I = xsimd::batch<std::int32_t, A>;
#if defined(__AVX512F__)
    if constexpr (Fn == 2 && is_avx512<A>) return tan_f32_rational_lanes(x);
#endif
    const trig_f32_parts<A> p = trig_f32_lanes(x);
    if constexpr (Fn == 2) {
        const auto odd = (p.kb & I(1)) == I(1);
        const auto pick = [&odd](const F& if_odd, const F& if_even) {  // on the integer mask
            return as_float<float, A>(xsimd::select(odd, as_int(if_odd), as_int(if_even)));
        };
        const F nh = pick(p.ch, p.sh), nt = pick(p.ct, p.st);
        const F dh = pick(p.sh, p.ch), dt = pick(p.st, p.ct);
        // the pairs renormalized (|tail| < |head|: exact errors in two operations), so that
        // y approximates 1 / (dh + dt) and the residual is small
        const F n = nh + nt, nl = (nh - n) + nt;
        const F d = dh + dt, dl = (dh - d) + dt;
        const F y = divide(F(1.0f), d);
        const F q0 = n * y;
        const F e = fused_nmadd(q0, d, n) + fused_nmadd(q0, dl, nl);
        const F q = fused_madd(e, y, q0);
        return as_float<float, A>(as_int(q) ^ ((p.kb & I(1)) << 31));  // odd k: -cos / sin
    } else {
        return sincos_f32_of_parts<Fn>(p);
    }
}

// sin, cos or tan of float32 values in float64 lanes (trig_f32_in_f64 on both halves), for
// v without tiny lanes (those are 0: no subnormal float32 widened or narrowed).
template <int Fn, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> trig_f32_via_f64(
    const xsimd::batch<float, A>& v) noexcept {
    xsimd::batch<double, A> lo, hi;
    widen(v, lo, hi);
    return narrow(trig_f32_in_f64<Fn>(lo), trig_f32_in_f64<Fn>(hi));
}

// sin, cos or tan of any float32 lanes on an FMA level: float32 arithmetic for the lanes with
// trig_f32_tiny <= |x| < trig_f32_lane_limit, float64 (trig_f32_in_f64) for |x| >= 2^17, inf
// and NaN; tiny lanes computed as 0 (no subnormal operand anywhere) and replaced by x (sin,
// tan) or 1 (cos, from the 0 lane). Out of line: the rare path of trig_f32_kernel, kept out of
// the float32-lane loop so that it does not take that loop's registers. trig_f32_kernel
// sends only tan here (sin and cos: sincos_f32_rare).
template <int Fn, class A>
NUMFUSE_NOINLINE xsimd::batch<float, A> trig_f32_rare(const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F ax = xsimd::abs(x);
    const auto tiny = ax < F(trig_f32_tiny);
    const auto slow = ~(ax < F(trig_f32_lane_limit));  // inf and NaN too
    F res = trig_f32_lanes_result<Fn>(xsimd::select(tiny | slow, F(0.0f), x));
    if (xsimd::any(slow)) {
        res = xsimd::select(slow, trig_f32_via_f64<Fn>(xsimd::select(tiny, F(0.0f), x)), res);
    }
    if constexpr (Fn != 1) res = xsimd::select(tiny, x, res);  // keeps +-0; cos(0) = 1
    return res;
}

// sin (Fn 0) or cos (Fn 1) of any float32 lanes on an FMA level, the rare path of
// trig_f32_kernel: one set of polynomials for every lane, on h + rl from the float32-lane
// reduction (trig_f32_tiny <= |x| < trig_f32_lane_limit) or from trig_f32_reduce_wide
// (finite |x| >= trig_f32_lane_limit); tiny, inf and NaN lanes reduced as 0, then tiny lanes
// replaced by x (sin) or left at cos(0) = 1, inf and NaN lanes by x - x.
template <int Fn, class A>
NUMFUSE_NOINLINE xsimd::batch<float, A> sincos_f32_rare(const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F ax = xsimd::abs(x);
    const auto tiny = ax < F(trig_f32_tiny);
    const auto slow = ~(ax < F(trig_f32_lane_limit));  // inf and NaN too
    const auto finite = ax <= F(0x1.fffffep127f);
    trig_f32_reduced<A> red = trig_f32_reduce(xsimd::select(tiny | slow, F(0.0f), x));
    if (xsimd::any(slow)) {
        const auto wide = slow & finite;
        const trig_f32_reduced<A> w = trig_f32_reduce_wide(xsimd::select(wide, x, F(0.0f)));
        red.h = xsimd::select(wide, w.h, red.h);
        red.rl = xsimd::select(wide, w.rl, red.rl);
        red.kb = as_int(xsimd::select(wide, as_float<float, A>(w.kb), as_float<float, A>(red.kb)));
    }
    F res = xsimd::select(finite, sincos_f32_of_parts<Fn>(trig_f32_parts_of(red)), x - x);
    if constexpr (Fn == 0) res = xsimd::select(tiny, x, res);  // keeps +-0
    return res;
}

// sin, cos or tan of float32 lanes: float32 arithmetic where the level has FMA, float64
// (trig_f32_in_f64) for the lanes it leaves (and for all lanes without FMA). The common
// batch (every lane ordinary) pays one range test and nothing else; any other batch goes
// to sincos_f32_rare or trig_f32_rare (a test for tiny lanes on every batch cost ~10% of the
// ordinary time).
template <int Fn, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> trig_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    if constexpr (has_fma<A>) {
        const F ax = xsimd::abs(x);
#if defined(__AVX512F__)
        if constexpr (Fn == 2 && is_avx512<A>) {  // tiny lanes too (tan_f32_rational)
            if (xsimd::all(ax < F(trig_f32_lane_limit))) return tan_f32_rational_lanes(x);
            return trig_f32_rare<Fn>(x);
        }
#endif
        if (xsimd::all((ax >= F(trig_f32_tiny)) & (ax < F(trig_f32_lane_limit)))) {  // no NaN
            return trig_f32_lanes_result<Fn>(x);
        }
        if constexpr (Fn == 2) return trig_f32_rare<Fn>(x);
        else return sincos_f32_rare<Fn>(x);
    } else {
        const auto tiny = xsimd::abs(x) < F(trig_f32_tiny);
        const F res = trig_f32_via_f64<Fn>(xsimd::select(tiny, F(0.0f), x));
        if constexpr (Fn != 1) return xsimd::select(tiny, x, res);  // keeps +-0; cos(0) = 1
        return res;
    }
}

}  // namespace detail

// sin(x), cos(x), tan(x) for float32 lanes (contract above).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> sin_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    return detail::trig_f32_kernel<0>(x);
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> cos_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    return detail::trig_f32_kernel<1>(x);
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> tan_f32_kernel(
    const xsimd::batch<float, A>& x) noexcept {
    return detail::trig_f32_kernel<2>(x);
}

// sin (Fn 0) or cos (Fn 1) of float32 lanes on an FMA level, trig_f32_kernel's common path
// alone: its bits on lanes with 2^-12 <= |x| < 2^17 (those sincos_f32_common_lanes accepts),
// garbage on others. For loops that screen their batches themselves (sincos_f32_screen_*) and
// recompute the others with sin_f32_kernel / cos_f32_kernel.
template <int Fn, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> sincos_f32_kernel_common(
    const xsimd::batch<float, A>& x) noexcept {
    static_assert(Fn == 0 || Fn == 1, "sin or cos");
    return detail::trig_f32_lanes_result<Fn>(x);
}

// True where sincos_f32_kernel_common gives the whole kernel's bits and the ufunc raises
// nothing: 2^-12 <= |x| < 2^17 (false for tiny lanes, whose results are x or 1, subnormals,
// which raise underflow, inf and NaN).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<float, A> sincos_f32_common_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F ax = xsimd::abs(x);
    return (ax >= F(detail::trig_f32_tiny)) & (ax < F(detail::trig_f32_lane_limit));
}

// sincos_f32_common_lanes' test deferred over many batches: the least and the greatest bit
// pattern of |x| so far, as int32 (NaN's patterns are above inf's), three operations a batch.
template <class A>
struct sincos_f32_screen {
    xsimd::batch<std::int32_t, A> lo, hi;
};

template <class A>
NUMFUSE_ALWAYS_INLINE sincos_f32_screen<A> sincos_f32_screen_init() noexcept {
    using I = xsimd::batch<std::int32_t, A>;
    return {I(std::numeric_limits<std::int32_t>::max()), I(0)};
}

template <class A>
NUMFUSE_ALWAYS_INLINE sincos_f32_screen<A> sincos_f32_screen_add(
    const sincos_f32_screen<A>& s, const xsimd::batch<float, A>& x) noexcept {
    using I = xsimd::batch<std::int32_t, A>;
    const I b = detail::as_int(x) & I(0x7fffffff);
    return {xsimd::min(s.lo, b), xsimd::max(s.hi, b)};
}

template <class A>
NUMFUSE_ALWAYS_INLINE bool sincos_f32_screen_outside(const sincos_f32_screen<A>& s) noexcept {
    using I = xsimd::batch<std::int32_t, A>;
    // 0x39800000 = 2^-12, 0x48000000 = 2^17 (trig_f32_tiny, trig_f32_lane_limit)
    static_assert(detail::trig_f32_tiny == 0x1.0p-12f && detail::trig_f32_lane_limit == 0x1.0p17f);
    return xsimd::any((s.lo < I(0x39800000)) | (s.hi >= I(0x48000000)));
}

#if defined(__AVX512F__)
// tan_f32_kernel's common path alone, AVX-512: its bits on lanes with |x| < 2^17 (the lanes
// tan_f32_common_lanes accepts), garbage on others. For loops that test their batches with
// tan_f32_common_lanes themselves and recompute the others with tan_f32_kernel.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> tan_f32_kernel_common(
    const xsimd::batch<float, A>& x) noexcept {
    return detail::tan_f32_rational_lanes(x);
}

// The same for x loaded from src (16 contiguous floats): each half converted to float64
// straight from memory, with no extract of the upper half from x's register.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> tan_f32_kernel_common_at(const xsimd::batch<float, A>&,
                                                                      const float* src) noexcept {
    const xsimd::batch<double, A> lo = _mm512_cvtps_pd(_mm256_loadu_ps(src));
    const xsimd::batch<double, A> hi = _mm512_cvtps_pd(_mm256_loadu_ps(src + 8));
    return detail::narrow(detail::tan_f32_rational(lo), detail::tan_f32_rational(hi));
}

// True where tan_f32_kernel_common gives tan_f32_kernel's bits and the ufunc raises nothing:
// FLT_MIN <= |x| < 2^17 (false for +-0 and subnormals, which raise underflow; inf; NaN).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<float, A> tan_f32_common_lanes(
    const xsimd::batch<float, A>& x) noexcept {
    using F = xsimd::batch<float, A>;
    const F ax = xsimd::abs(x);
    return (ax >= F(0x1.0p-126f)) & (ax < F(detail::trig_f32_lane_limit));
}

// tan_f32_common_lanes' test deferred over many batches: the largest |x| so far (vrangeps,
// which skips quiet NaNs) and the lanes that are +-0, subnormal or NaN (vfpclassps), two
// operations a batch where the abs and two compares took three. Some batch seen had a lane
// outside the common path exactly when tan_f32_screen_outside says so.
template <class A>
struct tan_f32_screen {
    xsimd::batch<float, A> top;
    __mmask16 special;
};

template <class A>
NUMFUSE_ALWAYS_INLINE tan_f32_screen<A> tan_f32_screen_init() noexcept {
    return {xsimd::batch<float, A>(0.0f), 0};
}

template <class A>
NUMFUSE_ALWAYS_INLINE tan_f32_screen<A> tan_f32_screen_add(
    const tan_f32_screen<A>& s, const xsimd::batch<float, A>& x) noexcept {
    // 0xA7: quiet NaN, +0, -0, subnormal, signalling NaN; 11: absolute maximum, sign cleared
    return {_mm512_range_ps(s.top, x, 11),
            static_cast<__mmask16>(s.special | _mm512_fpclass_ps_mask(x, 0xA7))};
}

template <class A>
NUMFUSE_ALWAYS_INLINE bool tan_f32_screen_outside(const tan_f32_screen<A>& s) noexcept {
    using F = xsimd::batch<float, A>;
    return s.special != 0 || xsimd::any(s.top >= F(detail::trig_f32_lane_limit));
}

// tan_f32_kernel_common_at's bits for src[0, n) stored at dst (n > 0 a multiple of 32), each
// narrowed float64 half stored as it is, and every batch of 16 added to the screen s:
// software pipelined, the reduction of each 32 floats (tan_f32_rational_reduce) beside the
// rational and division of the 32 before (tan_f32_rational_finish). Each half is a chain of
// ~50 cycles (two conversions of ~6, the reduction, D(w), a division of ~13) and the loop was
// bound by how many of its operations the core holds waiting on their inputs: in the plain
// loop the second step's operations issue while their inputs are still tens of cycles away.
template <class A>
NUMFUSE_ALWAYS_INLINE tan_f32_screen<A> tan_f32_common_run(tan_f32_screen<A> s, const float* src,
                                                           float* dst, std::size_t n) noexcept {
    using D = xsimd::batch<double, A>;
    using F = xsimd::batch<float, A>;
    using Reduced = detail::tan_f32_rational_reduced<A>;
    const auto reduce = [](const float* p) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        return detail::tan_f32_rational_reduce(D(_mm512_cvtps_pd(_mm256_loadu_ps(p))));
    };
    const auto finish = [](float* p, const Reduced& red) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        _mm256_storeu_ps(p, _mm512_cvtpd_ps(detail::tan_f32_rational_finish(red)));
    };
    // the four float64 halves of 32 floats in named values (an array of them went through the
    // stack every iteration)
    Reduced a0 = reduce(src), a1 = reduce(src + 8), a2 = reduce(src + 16), a3 = reduce(src + 24);
    std::size_t i = 0;
    for (; i + 32 < n; i += 32) {
        s = tan_f32_screen_add(tan_f32_screen_add(s, F::load_unaligned(src + i)),
                               F::load_unaligned(src + i + 16));
        const float* next = src + i + 32;
        const Reduced b0 = reduce(next), b1 = reduce(next + 8);
        const Reduced b2 = reduce(next + 16), b3 = reduce(next + 24);
        finish(dst + i, a0), finish(dst + i + 8, a1);
        finish(dst + i + 16, a2), finish(dst + i + 24, a3);
        a0 = b0, a1 = b1, a2 = b2, a3 = b3;
    }
    s = tan_f32_screen_add(tan_f32_screen_add(s, F::load_unaligned(src + i)),
                           F::load_unaligned(src + i + 16));
    finish(dst + i, a0), finish(dst + i + 8, a1);
    finish(dst + i + 16, a2), finish(dst + i + 24, a3);
    return s;
}
#endif

}  // namespace numfuse::kernels
