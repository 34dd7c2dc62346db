// logaddexp(x, y) = log(e^x + e^y) and logaddexp2(x, y) = log2(2^x + 2^y) for float64
// values, and for float32 values held in float64 (rounded once by the caller).
//
// Contract
//   logaddexp_array<Out, A>(out, a, b, n): out[k] = logaddexp(a[k], b[k]), k < n, float64
//   values; logaddexp2_array likewise (all below holds for both, with base 2's powers and
//   log2). Out (double or float) is the type the caller rounds the results to. out may be
//   a or b (the same elements) but must not overlap them otherwise; a call must not depend
//   on its own results (the near-zero lanes are written after later ones). A result does
//   not depend on n, on its neighbours or on how the array is split: the ufunc loop
//   (arch/binary_loop.hpp) and the VM (arch/expr_ops.hpp) give the same bits.
//   Max error <= 1 ULP of Out for every input at every level (enforced against mpmath,
//   next to zero included, by tests/test_logaddexp.py; measured maxima in
//   docs/accuracy.md).
//   Special values as NumPy's npy_logaddexp: a NaN argument gives x + y; +inf with
//   anything but NaN gives +inf; -inf with y gives y + 0 (-0 becomes +0); equal
//   infinities give that infinity; arguments more than 746 apart give max + 0. logaddexp2
//   as NumPy's npy_logaddexp2: the same, but equal arguments give x + 1 (rounded once, bit
//   for bit) and arguments more than 1076 apart max + 0.
//
// Method: three passes of increasing precision, each run only where the one before cannot
// vouch for its result. m = max(x, y), s = min(x, y), d = s - m <= 0 (an exact pair).
//   1. Every lane (logaddexp_first): E = e^d = 2^k T_j (1 + p), d = (16 k + j) ln2/16 +
//      t, T_j = 2^(j/16) as a pair, p by Taylor; L = log(1 + E) = e ln2 - log(r_i) +
//      log1p(f), with r_i ~ 1 / (1 + i/16), f = (1 + E) 2^-e r_i - 1 an exact product,
//      log1p by Taylor; m + L rounded once. No division. Error below 2^-62.4 |m| (E
//      2^-65 relative, L 2^-62.5 |m|: measured against mpmath at every level), so where
//      |result| >= |m| 2^-near_bits the result is within 0.5 + 2^(near_bits - 9.4) ULP:
//      near_bits = 6 for float64 (0.59 ULP), 34 for float32 (0.5 + 2^-4.4 before the
//      float32 rounding). The other lanes have m < 0 and e^x + e^y within about
//      2^-near_bits |m| of 1, where m + L cancels; logaddexp_array gathers them across
//      batches (2% of uniform(-1, 0) pairs, 0.05% of uniform(-5, 5) ones) and:
//   2. computes eps = e^x + e^y - 1 in double-double (logaddexp_eps_dd): e^s = 2^k T_j
//      (1 + p) and e^m likewise, Cody-Waite with a three-part ln2/16, |t| <= ln2/32, p by
//      Taylor to t^14 (pair Horner where the terms need it), both to ~2^-104 relative;
//      1 - e^m is -p itself where |m| <= ln2/32 (relative precision kept for tiny and
//      subnormal m). D = eps 2^-k = T_j (1 + p) - (1 - e^m) 2^-k cancels in exact pair
//      arithmetic; its error is below 2^-96.3 (measured: 2^-101.7), so |D| >= 2^-42
//      (2^-64 for float32) certifies eps to 2^-54.3 (2^-32.3) relative: float64 results
//      within 0.92 ULP (logaddexp_certified_d; pass 3's lanes 0.52). result = log1p(eps): eps
//      rounded once where |eps| < 2^-60 (onto the subnormal grid directly below 2^-1022),
//      eps - eps^2/2 + eps^3/3 below 2^-20, else the log core (logpair.hpp) of 1 + eps.
//   3. The lanes pass 2 cannot certify (e^x + e^y agrees with 1 to more than ~42 bits
//      beyond |m|'s scale: random inputs essentially never, but the nearest double s to
//      log(1 - e^m) typically does), gathered again: D in triple-double arithmetic
//      (logaddexp_eps_triple, logaddexp_triple.hpp: e^s and 1 - e^m as sums of three
//      doubles, 2^(j/16) and Taylor to t^17 with each step at the precision it needs; D's
//      error below 2^-140, measured 2^-143.2), certified where |D| >= 2^-81 (float32:
//      2^-107). The rest (about 2^-28 of nearest pairs) compute D in fixed point, scalar
//      (logaddexp_eps_fixed, fixed_point.hpp: e^x by Taylor on x/64 and six doublings,
//      1 - e^-mu by its series and doublings; certified when |D| >= 2^(72 - 64 N)): 192
//      bits (2^-120), else 384 (2^-312). A double pair's cancellation is heuristically at
//      most ~120 bits (2^62 candidate pairs near e^x + e^y = 1, each missing it by ~2^-53
//      |m| u, u uniform), so the 384-bit result is used as is beyond that. Scalar: 0.55 us
//      a lane at 192 bits (AVX-512 machine).
//   Base 2 (logaddexp_base_array<Out, LogBase::two, A>): the same passes on 2^x + 2^y, d =
//   n/16 + t/ln2 reduced exactly (n = round(16 d), t = (d - n/16) ln2 as a pair to 2^-104,
//   logaddexp2_reduced), L (pass 1) and log1p(eps) (passes 2, 3) times log2(e) as pairs
//   (2^-104) before the one rounding; pass 3 reduces as pass 1 with ln2 as three doubles,
//   and its fixed point takes e^x on x = (ceil|s| - |s|) ln2 and 1 - 2^m = 1 - e^-(mu ln2)
//   with mu ln2 as a fraction. Error bounds as base e's (measured in
//   docs/accuracy.md).
//   Every pass computes lane by lane, so gathering the near-zero lanes changes no bits.
//   Lanes of tiny max (|m| < 2^-110 for pass 2, 2^-150 for pass 3: 1 - e^m is -m there to
//   the pass's precision, 2^-110.9 and 2^-151 relative) are gathered apart and skip e^m
//   and the log core (logaddexp_eps_dd_tiny_max, logaddexp_eps_triple_tiny_max): bit for
//   bit the general code's values below 2^-400 (pass 2) and 2^-150 (pass 3), and within
//   pass 2's bound on D above (2^-109.8 more into D: logaddexp_eps_dd_tiny_max).
//   The tables and constants (ln2/16 split, 2^(j/16), r_i and -log(r_i), 1/n!) are
//   computed at compile time in fixed point (logaddexp_consts), not typed in.
//
// Results rounded to float32 (Out = float) first take a screened pass in plain float64
// (logaddexp_f32.hpp: no pairs, no tables, its error bound proved there), which certifies
// the float32 rounding of every lane further than its bound from a float32 rounding
// boundary (those lanes are correctly rounded); only the others take the passes above,
// packed a batch at a time (logaddexp_flagged_f32). float32 arrays are widened and narrowed
// in vector registers (logaddexp_base_array_f32).
//
// Files: this header holds pass 1 and the array and one-pair entry points;
// logaddexp_near.hpp passes 2 and 3 and the gathering of near-zero lanes;
// logaddexp_triple.hpp pass 3's triple-double arithmetic;
// logaddexp_tables.hpp the constants, their per-lane lookup and the exact scaling the
// passes share; logaddexp_f32.hpp float32's screened pass.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/logaddexp_f32.hpp"
#include "kernels/logaddexp_near.hpp"
#include "kernels/logaddexp_tables.hpp"

namespace numfuse::kernels {
namespace detail {

// Lanes whose first-pass result needs the near-zero passes: m < 0 and |result| < |m|
// 2^-near_bits (see the contract for near_bits).
template <class Out>
inline constexpr double logaddexp_near_fraction =
    std::is_same<Out, float>::value ? 0x1.0p-34 : 0x1.0p-6;

// The near-zero test of a result: m < 0 and |res| < |m| 2^-near_bits (false for m >= 0 and
// NaN), pass 1's. Base 2 leaves out equal arguments: their x + 1 is exact (-1 and -1
// give 0, an eps pass 3 could not certify).
template <class Out, LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<double, A> logaddexp_near_zero(
    const xsimd::batch<double, A>& res, const xsimd::batch<double, A>& m,
    const xsimd::batch<double, A>& s) noexcept {
    using B = xsimd::batch<double, A>;
    const auto near = xsimd::abs(res) < m * B(-logaddexp_near_fraction<Out>);
    if constexpr (Base == LogBase::two) return near & (m != s);
    return near;
}

template <class A>
struct LogaddexpFirst {
    xsimd::batch<double, A> result;
    xsimd::batch_bool<double, A> near_zero;
    xsimd::batch<double, A> m, s;  // max(x, y), min(x, y)
};

// Pass 1 on a batch: E = e^d = 2^k T_j (1 + p), d = (16 k + j) ln2/16 + t, |t| <= ln2/32,
// p = t + t^2 P(t) (Taylor to t^8); 1 + E = 2^e c_i (1 + f), c_i = 1 + i/16, f = (1 + E)
// 2^-e r_i - 1 (an exact product), |f| <= 2^-5, log(1 + E) = e ln2 - log(r_i) + log1p(f)
// (Taylor to f^15); m + L rounded once. No division; the tables are logaddexp_consts'.
// Errors (measured against mpmath): E 2^-65 relative, L 2^-62.5 |m| absolute.
template <class Out, LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpFirst<A> logaddexp_first(const xsimd::batch<double, A>& x,
                                                        const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    namespace c = logaddexp_consts;
    const B m = xsimd::max(x, y), s = xsimd::min(x, y);
    const dd::pair<A> d = dd::two_sum(s, -m);          // <= 0, exact
    const B dc = xsimd::max(d.hi, B(c::far_d<Base>));  // base^d below 2^-1076: E = 0

    // Base e: t = (d - n c1) + (d.lo - n c2): the first exact (as in pass 2), the second
    // below 2^-30, rounded (n c3 < 2^-84 is left out). Base 2: n = round(16 d), t = (d - n/16)
    // ln2 (logaddexp2_reduced). n, k and j: logaddexp_index16.
    B n, k;
    xsimd::batch<std::int64_t, A> j;
    logaddexp_index16<Base>(dc, n, k, j);
    dd::pair<A> t;
    if constexpr (Base == LogBase::e) {
        t = dd::two_sum(dd::fnmadd(n, B(c::ln2_over_16.c1), dc),
                        dd::fnmadd(n, B(c::ln2_over_16.c2), d.lo));
    } else {
        t = logaddexp2_reduced(dc, n, d.lo);
    }
    const B poly = dd::horner(t.hi, 0.5, c::inv_fact[3].hi, c::inv_fact[4].hi, c::inv_fact[5].hi,
                              c::inv_fact[6].hi, c::inv_fact[7].hi, c::inv_fact_8);
    const B p_lo = dd::fmadd(t.hi * t.hi, poly, t.lo);  // p = t.hi + p_lo
    const Table16Entry<A, 2> tj = lookup16(c::exp2_table, j);
    const B tj_hi = tj.v[0], tj_lo = tj.v[1];
    const dd::pair<A> tp = dd::two_prod(tj_hi, t.hi);
    const dd::pair<A> e0 = dd::fast_two_sum(tj_hi, tp.hi);  // |T_j p| < T_j / 45
    const dd::pair<A> e1 =
        dd::fast_two_sum(e0.hi, e0.lo + (tp.lo + dd::fmadd(tj_hi, p_lo, tj_lo * (B(1.0) + t.hi))));
    // d < -40 (far lanes): log(1 + E) = E - E^2/2 to 2^-170 relative, added to m below; the
    // log part runs on E = 0 there, so that no product sees a tiny value (a subnormal operand
    // or result takes a microcode assist, exp.hpp). E is scaled with k held at -960 or above
    // (e_lo normal too). Below (deep: d < -665, E < 2^-968 < ulp(m) 2^-16 where |m| >=
    // 2^-900) the result is m itself; the rare lanes with k < -960 and |m| < 2^-900 add
    // their true E (E^2 is below 2^-1920), the value the log part would give them, in a
    // domain scaled by 2^600 (E's low part and base 2's product by log2(e) stay exact
    // there) and rounded once onto the final grid, subnormal results included.
    const auto deep = k < B(-960.0);
    const auto deep_tiny_m = deep & (xsimd::abs(m) < B(0x1.0p-900));
    const auto far = d.hi < B(-40.0);
    const B kc = xsimd::max(k, B(-960.0));
    const B es_hi = logaddexp_scale(e1.hi, kc), es_lo = logaddexp_scale(e1.lo, kc);
    const B e_hi = xsimd::select(far, B(0.0), es_hi), e_lo = xsimd::select(far, B(0.0), es_lo);

    // The far lanes' result, from E's parts alone, before the log part: then only it stays
    // live across that part, not E's parts, k and the masks (fewer spills on AVX2's 16
    // registers); the same operations as where it is selected below.
    B far_result = m;
    if (xsimd::any(far)) {
        // m + E - E^2/2 (E^2/2 left out below E = 2^-400, where it is below 2^-401 E), m + E
        // as an exact two-sum: E's pair error (2^-65) alone, as in the main path; deep: m.
        // Base 2: (E - E^2/2) log2(e), E log2(e) as a pair.
        const B eq = xsimd::max(es_hi, B(0x1.0p-400));
        const B half_sq = xsimd::select(es_hi > B(0x1.0p-400), B(0.5) * eq * eq, B(0.0));
        dd::pair<A> ef = {es_hi, es_lo - half_sq};
        if constexpr (Base == LogBase::two) ef = logaddexp_times(ef, c::log2e_pair);
        const dd::pair<A> rf0 = dd::two_sum(m, ef.hi);
        B rf = xsimd::select(deep, m, rf0.hi + (rf0.lo + ef.lo));
        if (xsimd::any(deep_tiny_m)) {
            // m + E (base 2: m + E log2(e)) with m and E scaled by 2^600 (exact: k + 600 >=
            // -477, m >= 2^-1074), rounded once at 2^-600.
            const B ts_hi = logaddexp_scale(e1.hi, k + B(600.0));
            const B ts_lo = logaddexp_scale(e1.lo, k + B(600.0));
            dd::pair<A> et = {ts_hi, ts_lo};
            if constexpr (Base == LogBase::two) et = logaddexp_times(et, c::log2e_pair);
            const dd::pair<A> t0 = dd::two_sum(logaddexp_scale(m, B(600.0)), et.hi);
            const dd::pair<A> t1 = dd::two_sum(t0.hi, t0.lo + et.lo);
            rf = xsimd::select(deep_tiny_m, logaddexp_round_scaled(t1, B(-600.0)), rf);
        }
        far_result = rf;
    }
    // L = log(1 + E).
    const dd::pair<A> u0 = dd::fast_two_sum(B(1.0), e_hi);
    const auto top = u0.hi >= B(1.0 + 31.0 / 32.0);  // 1 + E = 2 u', u' in [0.98, 1]
    const B half = xsimd::select(top, B(0.5), B(1.0));
    const B uh = u0.hi * half;
    const B shifter(0x1.8p52);
    const I i = (as_int(dd::fmadd(uh - B(1.0), B(16.0), shifter)) - as_int(shifter)) & I(15);
    const Table16Entry<A, 3> li = lookup16(c::log_table, i);
    const B ri = li.v[0];
    // f = (1 + E) 2^-e r_i - 1 = (uh r_i - 1) + u0.lo 2^-e r_i + E.lo 2^-e r_i, each part
    // kept apart from E.lo (where E is tiny, uh = 1 and f is E as a pair).
    const dd::pair<A> ur = dd::two_prod(uh, ri);
    const dd::pair<A> f0 = dd::two_sum(ur.hi - B(1.0), dd::fmadd(u0.lo * half, ri, ur.lo));
    const dd::pair<A> f = {f0.hi, dd::fmadd(e_lo * half, ri, f0.lo)};  // ur.hi - 1 exact
    // log1p(f) = (f - f^2/2, exact as a pair) + f^3 q(f) + f.lo (1 - f), q to f^12: what it
    // drops is below 2^-74 relative (f^15 / 16).
    const B q = dd::horner(f.hi, 1.0 / 3.0, -0.25, 0.2, -1.0 / 6.0, 1.0 / 7.0, -0.125, 1.0 / 9.0,
                           -0.1, 1.0 / 11.0, -1.0 / 12.0, 1.0 / 13.0, -1.0 / 14.0, 1.0 / 15.0);
    const dd::pair<A> fz = dd::two_prod(f.hi, f.hi);
    const dd::pair<A> lead = dd::fast_two_sum(f.hi, B(-0.5) * fz.hi);
    const B l1p_lo =
        lead.lo + dd::fmadd(fz.hi * f.hi, q, dd::fnmadd(f.hi, f.lo, f.lo) - B(0.5) * fz.lo);
    // e ln2 - log(r_i): one of the two is 0 (e = 1 has i = 0).
    const B base_hi = xsimd::select(top, B(c::ln2_pair.hi), li.v[1]);
    const B base_lo = xsimd::select(top, B(c::ln2_pair.lo), li.v[2]);
    B r;
    if constexpr (Base == LogBase::e) {
        // m + L = m + base + lead + the low parts, the three leading terms as exact sums.
        const dd::pair<A> r0 = dd::two_sum(m, base_hi);
        const dd::pair<A> r1 = dd::two_sum(r0.hi, lead.hi);
        r = r1.hi + (r1.lo + (r0.lo + (base_lo + l1p_lo)));
    } else {
        // m + L log2(e): L as a pair (base + lead exact), times log2(e) as pairs (2^-104).
        const dd::pair<A> l0 = dd::two_sum(base_hi, lead.hi);
        const dd::pair<A> l2 = dd::mul(dd::pair<A>{l0.hi, l0.lo + (base_lo + l1p_lo)},
                                       dd::pair<A>{B(c::log2e_pair.hi), B(c::log2e_pair.lo)});
        const dd::pair<A> r0 = dd::two_sum(m, l2.hi);
        r = r0.hi + (r0.lo + l2.lo);
    }
    r = xsimd::select(far, far_result, r);
    // Special values as NumPy: d below far_d (s = -inf included, and m = +inf with s finite)
    // gives m + log1p(0) = m + 0 (-0 becomes +0); a NaN argument (which max and min may
    // drop) gives x + y, NumPy's NaN, and so do equal infinities (d is NaN): the infinity,
    // NumPy's x + ln2 (x + 1). Base 2, x == y: x + 1, NumPy's, rounded once (m + L log2(e)
    // would round a tie by the sign of L's error).
    const auto nan = xsimd::isnan(x) | xsimd::isnan(y) | xsimd::isnan(d.hi);
    B finite = xsimd::select(d.hi < B(c::far_d<Base>), m + B(0.0), r);
    if constexpr (Base == LogBase::two) finite = xsimd::select(d.hi == B(0.0), m + B(1.0), finite);
    const B res = xsimd::select(nan, x + y, finite);
    return {res, logaddexp_near_zero<Out, Base>(res, m, s), m, s};
}

// What a pass gives for one batch: results, the lanes it leaves to the next pass, and the
// two batches kept for that pass where the call overwrites its arguments.
template <class A>
struct LogaddexpBatchStep {
    xsimd::batch<double, A> result;
    xsimd::batch_bool<double, A> flagged;
    xsimd::batch<double, A> keep0, keep1;
};

// One block of a pass over count <= block elements, step(x, y) -> LogaddexpBatchStep per
// batch: results to out, each batch's flagged lanes as a bit mask, flags[k / width] (bit j:
// lane k + j), and, KeepArguments (out is a or b, which it overwrites), keep0 and keep1 to
// k0 and k1. The tail goes through buffers padded with 1 (its padding lanes never flagged).
// Returns whether any lane is flagged.
template <class A, bool KeepArguments, class Step>
NUMFUSE_ALWAYS_INLINE bool logaddexp_block_by(double* out, const double* a, const double* b,
                                              std::size_t count, double* k0, double* k1,
                                              std::uint8_t* flags, Step step) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    std::uint64_t any = 0;
    const auto one = [&](const B& x, const B& y, std::size_t k, double* dst, std::uint64_t lanes)
                         NUMFUSE_ALWAYS_INLINE_LAMBDA {
                             const LogaddexpBatchStep<A> r = step(x, y);
                             r.result.store_unaligned(dst);
                             if constexpr (KeepArguments) {
                                 r.keep0.store_aligned(k0 + k);
                                 r.keep1.store_aligned(k1 + k);
                             }
                             const std::uint64_t bits = logaddexp_lane_bits(r.flagged) & lanes;
                             flags[k / width] = static_cast<std::uint8_t>(bits);
                             any |= bits;
                         };
    std::size_t k = 0;
    for (; k + width <= count; k += width) {
        one(B::load_unaligned(a + k), B::load_unaligned(b + k), k, out + k, ~std::uint64_t(0));
    }
    if (k < count) {
        alignas(64) double xa[width], xb[width], xo[width];
        for (std::size_t j = 0; j < width; ++j) xa[j] = xb[j] = 1.0;
        const std::size_t rest = count - k;
        std::memcpy(xa, a + k, rest * sizeof(double));
        std::memcpy(xb, b + k, rest * sizeof(double));
        one(B::load_aligned(xa), B::load_aligned(xb), k, xo, (std::uint64_t(1) << rest) - 1);
        std::memcpy(out + k, xo, rest * sizeof(double));
    }
    return any != 0;
}

// One block of the first pass: flagged are the near-zero lanes; kept are each batch's max
// and min (ms, ss).
template <class Out, LogBase Base, class A, bool KeepArguments>
NUMFUSE_ALWAYS_INLINE bool logaddexp_block(double* out, const double* a, const double* b,
                                           std::size_t count, double* ms, double* ss,
                                           std::uint8_t* near) noexcept {
    using B = xsimd::batch<double, A>;
    return logaddexp_block_by<A, KeepArguments>(
        out, a, b, count, ms, ss, near, [](const B& x, const B& y) NUMFUSE_ALWAYS_INLINE_LAMBDA {
            const LogaddexpFirst<A> first = logaddexp_first<Out, Base>(x, y);
            return LogaddexpBatchStep<A>{first.result, first.near_zero, first.m, first.s};
        });
}

// One block of the screened first pass (Out = float, logaddexp_f32.hpp): flagged are the
// uncertified lanes; kept are the arguments themselves (xs, ys).
template <LogBase Base, class A, bool KeepArguments>
NUMFUSE_ALWAYS_INLINE bool logaddexp_block_f32(double* out, const double* a, const double* b,
                                               std::size_t count, double* xs, double* ys,
                                               std::uint8_t* flagged) noexcept {
    using B = xsimd::batch<double, A>;
    return logaddexp_block_by<A, KeepArguments>(
        out, a, b, count, xs, ys, flagged, [](const B& x, const B& y) NUMFUSE_ALWAYS_INLINE_LAMBDA {
            const LogaddexpScreened<A> first = logaddexp_screened_f32<Base>(x, y);
            return LogaddexpBatchStep<A>{first.result, ~first.certified, x, y};
        });
}

// The flagged lanes (bit q of `bits`) of a batch of x, y and their places `at` (as
// doubles, exact) stored at the front of gx, gy, ga, in order; returns how many. AVX-512:
// a compress in registers (the store form is microcoded on AMD); AVX2: a permute from a
// 16-entry table of lane orders; elsewhere lane by lane, the place advanced by the flag.
// Stores a full batch each (the buffers have a batch of room past the lanes kept).
template <class A>
NUMFUSE_ALWAYS_INLINE std::size_t logaddexp_pack_lanes(const xsimd::batch<double, A>& x,
                                                       const xsimd::batch<double, A>& y,
                                                       const xsimd::batch<double, A>& at,
                                                       std::uint64_t bits, double* gx, double* gy,
                                                       double* ga) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        const auto mask = static_cast<__mmask8>(bits);
        _mm512_storeu_pd(gx, _mm512_maskz_compress_pd(mask, x));
        _mm512_storeu_pd(gy, _mm512_maskz_compress_pd(mask, y));
        _mm512_storeu_pd(ga, _mm512_maskz_compress_pd(mask, at));
        return static_cast<std::size_t>(__builtin_popcountll(bits));
    } else
#endif
#if defined(__AVX2__)
        if constexpr (width == 4 && std::is_base_of<xsimd::avx2, A>::value) {
        // Entry m: the 32-bit halves of m's set lanes first, in order.
        alignas(32) static constexpr std::int32_t order[16][8] = {
            {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}, {2, 3, 0, 1, 4, 5, 6, 7},
            {0, 1, 2, 3, 4, 5, 6, 7}, {4, 5, 0, 1, 2, 3, 6, 7}, {0, 1, 4, 5, 2, 3, 6, 7},
            {2, 3, 4, 5, 0, 1, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}, {6, 7, 0, 1, 2, 3, 4, 5},
            {0, 1, 6, 7, 2, 3, 4, 5}, {2, 3, 6, 7, 0, 1, 4, 5}, {0, 1, 2, 3, 6, 7, 4, 5},
            {4, 5, 6, 7, 0, 1, 2, 3}, {0, 1, 4, 5, 6, 7, 2, 3}, {2, 3, 4, 5, 6, 7, 0, 1},
            {0, 1, 2, 3, 4, 5, 6, 7}};
        const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(order[bits & 15]));
        const auto pack = [&](const B& v, double* to) {
            _mm256_storeu_pd(to,
                             _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(v), idx)));
        };
        pack(x, gx), pack(y, gy), pack(at, ga);
        return static_cast<std::size_t>(__builtin_popcountll(bits & 15));
    } else
#endif
    {
        alignas(64) double xs[width], ys[width], as[width];
        x.store_aligned(xs), y.store_aligned(ys), at.store_aligned(as);
        std::size_t g = 0;
        for (std::size_t q = 0; q < width; ++q) {
            gx[g] = xs[q], gy[g] = ys[q], ga[g] = as[q];
            g += (bits >> q) & 1u;
        }
        return g;
    }
}

// The lanes a block's screened pass did not certify (Out = float): packed batch by batch
// (logaddexp_pack_lanes: no branch per lane or batch, where a branch on scattered flags
// was mispredicted about once a batch), then a batch at a time through pass 1
// (logaddexp_first), its results written to out, its near-zero lanes on to the near-zero
// passes (lanes). x, y: the block's arguments; out and place `start`: the block's;
// flagged: logaddexp_block_f32's masks.
template <LogBase Base, class A>
NUMFUSE_NOINLINE void logaddexp_flagged_f32(
    double* out, const double* x, const double* y, std::size_t count, std::size_t start,
    const std::uint8_t* flagged, LogaddexpNearZeroLanes<float, Base, A>& lanes) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    constexpr std::size_t block = LogaddexpNearZeroLanes<float, Base, A>::block;
    alignas(64) double gx[block + width], gy[block + width], ga[block + width];
    alignas(64) double iota[width];
    for (std::size_t q = 0; q < width; ++q) iota[q] = static_cast<double>(q);
    const B lane_at = B::load_aligned(iota);
    std::size_t g = 0, k = 0;
    for (; k + width <= count; k += width) {
        g += logaddexp_pack_lanes<A>(B::load_unaligned(x + k), B::load_unaligned(y + k),
                                     lane_at + B(static_cast<double>(k)), flagged[k / width],
                                     gx + g, gy + g, ga + g);
    }
    for (; k < count; ++k) {  // the tail's flags cover only its lanes
        gx[g] = x[k], gy[g] = y[k], ga[g] = static_cast<double>(k);
        g += (flagged[k / width] >> (k % width)) & 1u;
    }
    for (std::size_t q = g; q % width != 0; ++q) gx[q] = gy[q] = 1.0;
    alignas(64) double rs[width], ms[width], ss[width];
    for (std::size_t b0 = 0; b0 < g; b0 += width) {
        const LogaddexpFirst<A> first =
            logaddexp_first<float, Base>(B::load_aligned(gx + b0), B::load_aligned(gy + b0));
        first.result.store_aligned(rs);
        const std::size_t used = g - b0 < width ? g - b0 : width;
        for (std::size_t q = 0; q < used; ++q) out[static_cast<std::size_t>(ga[b0 + q])] = rs[q];
        std::uint64_t near = logaddexp_lane_bits(first.near_zero);
        if (used < width) near &= (std::uint64_t(1) << used) - 1;
        if (near == 0) continue;
        first.m.store_aligned(ms);
        first.s.store_aligned(ss);
        for (; near != 0; near &= near - 1) {
            const auto q = static_cast<std::size_t>(__builtin_ctzll(near));
            lanes.add_lane(ms[q], ss[q], rs[q], start + static_cast<std::size_t>(ga[b0 + q]));
        }
    }
}

}  // namespace detail

// logaddexp(a, b) (Base e) or logaddexp2(a, b) (Base two) of one pair: bit for bit
// logaddexp_base_array's result for it (a lane's result depends on that lane alone). For
// in-order chains (accumulate: each result an argument of the next call), where the array
// function's set-up for one element costs more than the element. The pair is broadcast to
// every lane (no store to reload on the chain); a near-zero pair is then recomputed in
// every lane, which costs the same as in one.
template <class Out, detail::LogBase Base, class A>
double logaddexp_base_one(double a, double b) noexcept {
    using B = xsimd::batch<double, A>;
    alignas(64) double r[B::size];
    if constexpr (std::is_same<Out, float>::value) {
        const detail::LogaddexpScreened<A> screened =
            detail::logaddexp_screened_f32<Base>(B(a), B(b));
        if (xsimd::all(screened.certified)) return screened.result.get(0);
    }
    const detail::LogaddexpFirst<A> first = detail::logaddexp_first<Out, Base>(B(a), B(b));
    if (!xsimd::any(first.near_zero)) return first.result.get(0);
    detail::LogaddexpNearZeroLanes<Out, Base, A> lanes(r);
    lanes.add(first.m, first.s, first.result, first.near_zero, 0);
    lanes.finish();
    return r[0];
}

// out[k] = logaddexp(a[k], b[k]) (Base e) or logaddexp2(a[k], b[k]) (Base two) for k < n
// (see the contract). The first pass runs over blocks and notes each batch's near-zero
// lanes as a bit mask; after a block, the lanes of those masks join their passes' queues
// one by one (max and min from the arguments, or from ms and ss where out is an argument;
// the first-pass result from out), and then the queues run, each while it holds a full
// run: one visit of the queues per block, not per batch (each visit's tests are branches
// the data decides). A branch per batch inside the first pass's loop would
// be mispredicted where such lanes are scattered, each time draining the long dependency
// chains of the batches in flight (measured: ~60 ns per near-zero batch); every extra
// instruction in that loop costs too (it is latency-bound, overlapping the few batches the
// reorder buffer holds): the mask is one instruction and one byte stored.
template <class Out, detail::LogBase Base, class A>
void logaddexp_base_array(double* out, const double* a, const double* b, std::size_t n) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    static_assert(width <= 8, "a batch's near-zero mask is one byte");
    constexpr std::size_t block = detail::LogaddexpNearZeroLanes<Out, Base, A>::block;
    const bool in_place = out == a || out == b;
    alignas(64) double ms[block], ss[block];
    std::uint8_t near[block / width];
    detail::LogaddexpNearZeroLanes<Out, Base, A> lanes(out);
    if constexpr (std::is_same<Out, float>::value) {
        // The screened pass (logaddexp_f32.hpp), pass 1 only on the lanes it leaves.
        for (std::size_t start = 0; start < n; start += block) {
            const std::size_t count = n - start < block ? n - start : block;
            const double* pa = a + start;
            const double* pb = b + start;
            double* po = out + start;
            const bool any_flagged =
                in_place
                    ? detail::logaddexp_block_f32<Base, A, true>(po, pa, pb, count, ms, ss, near)
                    : detail::logaddexp_block_f32<Base, A, false>(po, pa, pb, count, ms, ss, near);
            if (!any_flagged) continue;
            detail::logaddexp_flagged_f32<Base, A>(po, in_place ? ms : pa, in_place ? ss : pb,
                                                   count, start, near, lanes);
            lanes.after_block();
        }
        lanes.finish();
        return;
    }
    for (std::size_t start = 0; start < n; start += block) {
        const std::size_t count = n - start < block ? n - start : block;
        const double* pa = a + start;
        const double* pb = b + start;
        double* po = out + start;
        const bool any_near =
            in_place
                ? detail::logaddexp_block<Out, Base, A, true>(po, pa, pb, count, ms, ss, near)
                : detail::logaddexp_block<Out, Base, A, false>(po, pa, pb, count, ms, ss, near);
        if (!any_near) continue;
        for (std::size_t batch = 0; batch * width < count; ++batch) {
            std::uint64_t bits = near[batch];
            if (bits == 0) continue;
            for (; bits != 0; bits &= bits - 1) {
                const std::size_t k =
                    batch * width + static_cast<std::size_t>(__builtin_ctzll(bits));
                // A near-zero lane has m < 0 and no NaN: max and min as the first pass's.
                const double m = in_place ? ms[k] : (pa[k] > pb[k] ? pa[k] : pb[k]);
                const double s = in_place ? ss[k] : (pa[k] > pb[k] ? pb[k] : pa[k]);
                lanes.add_lane(m, s, po[k], start + k);
            }
        }
        lanes.after_block();
    }
    lanes.finish();
}

// out[k] = logaddexp(a[k], b[k]) (Base e) or logaddexp2 for float32 arrays, k < n: the
// float64 kernel with Out = float (logaddexp_base_array's bits, rounded once to float32),
// the values widened and the results narrowed in vector registers a chunk at a time. out
// may be a or b (the same elements) but must not overlap them otherwise.
template <detail::LogBase Base, class A>
void logaddexp_base_array_f32(float* out, const float* a, const float* b, std::size_t n) noexcept {
    using F = xsimd::batch<float, A>;
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = F::size;
    constexpr std::size_t chunk = 1024;
    alignas(64) double wa[chunk], wb[chunk], wo[chunk];
    for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t count = n - start < chunk ? n - start : chunk;
        std::size_t k = 0;
        for (; k + width <= count; k += width) {
            B lo, hi;
            detail::widen(F::load_unaligned(a + start + k), lo, hi);
            lo.store_aligned(wa + k), hi.store_aligned(wa + k + B::size);
            detail::widen(F::load_unaligned(b + start + k), lo, hi);
            lo.store_aligned(wb + k), hi.store_aligned(wb + k + B::size);
        }
        for (; k < count; ++k) wa[k] = a[start + k], wb[k] = b[start + k];
        logaddexp_base_array<float, Base, A>(wo, wa, wb, count);
        k = 0;
        for (; k + width <= count; k += width) {
            detail::narrow(B::load_aligned(wo + k), B::load_aligned(wo + k + B::size))
                .store_unaligned(out + start + k);
        }
        for (; k < count; ++k) out[start + k] = static_cast<float>(wo[k]);
    }
}

// The two functions' entry points (the contract's names).
template <class Out, class A>
void logaddexp_array(double* out, const double* a, const double* b, std::size_t n) noexcept {
    logaddexp_base_array<Out, detail::LogBase::e, A>(out, a, b, n);
}
template <class Out, class A>
double logaddexp_one(double a, double b) noexcept {
    return logaddexp_base_one<Out, detail::LogBase::e, A>(a, b);
}
template <class Out, class A>
void logaddexp2_array(double* out, const double* a, const double* b, std::size_t n) noexcept {
    logaddexp_base_array<Out, detail::LogBase::two, A>(out, a, b, n);
}
template <class Out, class A>
double logaddexp2_one(double a, double b) noexcept {
    return logaddexp_base_one<Out, detail::LogBase::two, A>(a, b);
}
template <class A>
void logaddexp_array_f32(float* out, const float* a, const float* b, std::size_t n) noexcept {
    logaddexp_base_array_f32<detail::LogBase::e, A>(out, a, b, n);
}
template <class A>
void logaddexp2_array_f32(float* out, const float* a, const float* b, std::size_t n) noexcept {
    logaddexp_base_array_f32<detail::LogBase::two, A>(out, a, b, n);
}

}  // namespace numfuse::kernels
