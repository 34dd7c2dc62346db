// logaddexp(x, y) = log(e^x + e^y) for float64 values, and for float32 values held in
// float64 (rounded once by the caller).
//
// Contract
//   logaddexp_array<Out, A>(out, a, b, n): out[k] = logaddexp(a[k], b[k]), k < n, float64
//   values; Out (double or float) is the type the caller rounds the results to. out may be
//   a or b (the same elements) but must not overlap them otherwise; a call must not depend
//   on its own results (the near-zero lanes are written after later ones). A result does
//   not depend on n, on its neighbours or on how the array is split: the ufunc loop
//   (arch/binary_loop.hpp) and the VM (arch/expr_ops.hpp) give the same bits.
//   Max error <= 1 ULP of Out for every input at every level (enforced against mpmath,
//   next to zero included, by tests/test_logaddexp.py; measured maxima in
//   docs/accuracy.md).
//   Special values as NumPy's npy_logaddexp: a NaN argument gives x + y; +inf with
//   anything but NaN gives +inf; -inf with y gives y + 0 (-0 becomes +0); equal
//   infinities give that infinity; arguments more than 746 apart give max + 0.
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
//      arithmetic; its error is below 2^-97 (measured: 2^-101.7), so |D| >= 2^-38 (2^-64
//      for float32) certifies eps to 2^-59 (2^-33) relative. result = log1p(eps): eps
//      rounded once where |eps| < 2^-60 (onto the subnormal grid directly below 2^-1022),
//      eps - eps^2/2 + eps^3/3 below 2^-20, else the log core (logpair.hpp) of 1 + eps.
//   3. The lanes pass 2 cannot certify (e^x + e^y agrees with 1 to more than ~38 bits
//      beyond |m|'s scale: random inputs essentially never, but the nearest double s to
//      log(1 - e^m) typically does) compute D in 128-bit fixed point (logaddexp_eps_fixed,
//      fixed_point.hpp: e^x by Taylor on x/64 and six doublings, 1 - e^-mu by its series
//      and doublings; certified when |D| >= 2^(72 - 64 N) = 2^-56), else at 192 bits
//      (2^-120), else at 384 (2^-312). A double pair's cancellation is heuristically at
//      most ~120 bits (2^62 candidate pairs near e^x + e^y = 1, each missing it by ~2^-53
//      |m| u, u uniform), so the 384-bit result is used as is beyond that. Scalar: 0.24 us
//      a lane at 128 bits, 0.55 at 192 (AVX-512 machine).
//   Every pass computes lane by lane, so gathering the near-zero lanes changes no bits.
//   The tables and constants (ln2/16 split, 2^(j/16), r_i and -log(r_i), 1/n!) are
//   computed at compile time in fixed point (logaddexp_consts), not typed in.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/fixed_point.hpp"
#include "kernels/hyperbolic.hpp"
#include "kernels/logpair.hpp"

// The near-zero passes stay out of line: the first pass's loop keeps its registers.
#if defined(__GNUC__)
#define NUMFUSE_NOINLINE __attribute__((noinline))
#else
#define NUMFUSE_NOINLINE
#endif

namespace numfuse::kernels {
namespace detail {
namespace logaddexp_consts {

// ln2/16 = c1 + c2 + c3 + (< 2^-148): c1 has 38 bits, so n c1 is exact for |n| < 2^15.
struct Ln2Over16 {
    double c1, c2, c3;
};
constexpr Ln2Over16 split_ln2_over_16() noexcept {
    const auto x = fixed::shift_right(fixed::ln2<3>(), 4);
    const auto a = fixed::split_top(x, 38);
    const auto b = fixed::split_top(a.remainder, 53);
    const auto c = fixed::split_top(b.remainder, 53);
    return {a.top, b.top, c.top};
}
inline constexpr Ln2Over16 ln2_over_16 = split_ln2_over_16();

// A 16-entry table of K columns, stored both ways: by column (on AVX-512 an entry is one
// permute per column) and by row (elsewhere each lane loads its whole row and the rows are
// transposed in registers: a fraction of the per-column scalar loads, which made the first
// pass 40% slower on AVX2). 16 entries, not 32: one permute, not two and a blend.
template <int K>
struct Table16 {
    static constexpr int stride = K <= 2 ? 2 : 4;
    alignas(64) double column[K][16];
    alignas(64) double row[16][stride];
    constexpr void set(int entry, int col, double value) noexcept {
        column[col][entry] = value;
        row[entry][col] = value;
    }
};

// 2^(j/16) = hi + lo (columns 0, 1; to 2^-105 relative), j = 0..15.
constexpr Table16<2> make_exp2_table() noexcept {
    Table16<2> t{};
    const auto step = fixed::shift_right(fixed::ln2<3>(), 4);
    for (int j = 0; j < 16; ++j) {
        std::uint64_t whole = 0;
        const auto x = fixed::mul_small(step, static_cast<std::uint64_t>(j), whole);
        // 2^(j/16) / 2 = 1/2 + (e^x - 1) / 2, in [1/2, 1)
        auto half = fixed::shift_right(fixed::expm1_series(x), 1);
        half.w[0] |= std::uint64_t(1) << 63;
        const auto p = fixed::to_pair(half);
        t.set(j, 0, 2.0 * p.hi);
        t.set(j, 1, 2.0 * p.lo);
    }
    return t;
}
inline constexpr Table16<2> exp2_table = make_exp2_table();

// The first pass's log: r_i = RN(1 / (1 + i/16)) (column 0) and -log(r_i) = hi + lo
// (columns 1, 2; to 2^-105), i = 0..15 (r_0 = 1, -log(r_0) = 0).
constexpr Table16<3> make_log_table() noexcept {
    Table16<3> t{};
    for (int i = 0; i < 16; ++i) {
        const double r = 1.0 / (1.0 + i / 16.0);
        // -log(r) = sum_k (1 - r)^k / k, 1 - r in [0, 1/2) exact.
        const auto w = fixed::from_double<3>(1.0 - r);
        fixed::Fraction<3> sum, power = w;
        for (std::uint64_t k = 1; !fixed::is_zero(power); ++k) {
            sum = fixed::add(sum, fixed::div_small(power, k));
            power = fixed::mul(power, w);
        }
        const auto p = fixed::to_pair(sum);
        t.set(i, 0, r);
        t.set(i, 1, p.hi);
        t.set(i, 2, p.lo);
    }
    return t;
}
inline constexpr Table16<3> log_table = make_log_table();
// ln2 = hi + lo (to 2^-106).
inline constexpr fixed::Pair ln2_pair = fixed::to_pair(fixed::ln2<3>());

// 1/n! as pairs (n = 3..7, where the Taylor terms need them) and as doubles (n = 8..14).
constexpr fixed::Pair inverse_factorial_pair(int n) noexcept {
    return fixed::to_pair(fixed::inverse_factorial<3>(n));
}
inline constexpr fixed::Pair inv_fact[8] = {
    {0, 0},
    {0, 0},
    {0.5, 0},
    inverse_factorial_pair(3),
    inverse_factorial_pair(4),
    inverse_factorial_pair(5),
    inverse_factorial_pair(6),
    inverse_factorial_pair(7),
};
inline constexpr double inv_fact_8 = inverse_factorial_pair(8).hi;
inline constexpr double inv_fact_9 = inverse_factorial_pair(9).hi;
inline constexpr double inv_fact_10 = inverse_factorial_pair(10).hi;
inline constexpr double inv_fact_11 = inverse_factorial_pair(11).hi;
inline constexpr double inv_fact_12 = inverse_factorial_pair(12).hi;
inline constexpr double inv_fact_13 = inverse_factorial_pair(13).hi;
inline constexpr double inv_fact_14 = inverse_factorial_pair(14).hi;

// The exact pass: 1/n! as N-limb fractions, n < 48 (entries 0 and 1 unused).
template <int N>
struct InverseFactorials {
    fixed::Fraction<N> f[48];
};
template <int N>
constexpr InverseFactorials<N> make_inverse_factorials() noexcept {
    InverseFactorials<N> t{};
    fixed::Fraction<N + 1> f;
    f.w[0] = std::uint64_t(1) << 63;  // 1/2!
    for (int n = 2; n < 48; ++n) {
        if (n > 2) f = fixed::div_small(f, static_cast<std::uint64_t>(n));
        for (int i = 0; i < N; ++i) t.f[n].w[i] = f.w[i];
    }
    return t;
}
template <int N>
inline constexpr InverseFactorials<N> inverse_factorials = make_inverse_factorials<N>();
template <int N>
inline constexpr fixed::Fraction<N> ln2_fraction = fixed::ln2<N>();

// Terms a Taylor series sum_{n <= J} z^n / n! (times 1 / offset!) needs so that what it
// drops, below 2^(-b (J + 1)) / (J + 1 + offset)!, stays under 2^-bits, for |z| < 2^-b.
constexpr int series_terms(int b, int bits, int offset) noexcept {
    int log2_factorial = 0;  // a lower bound: sum of floor(log2 k)
    for (int k = 2; k <= offset; ++k) {
        for (int v = k; v > 1; v >>= 1) ++log2_factorial;
    }
    for (int j = 0;; ++j) {
        const int k = j + 1 + offset;
        for (int v = k; v > 1; v >>= 1) ++log2_factorial;
        if (b * (j + 1) + log2_factorial >= bits) return j;
    }
}

}  // namespace logaddexp_consts

// The K columns of entry j (j in [0, 16)) of a Table16, per lane.
template <class A, int K>
struct Table16Entry {
    xsimd::batch<double, A> v[K];
};
template <class A, int K>
NUMFUSE_ALWAYS_INLINE Table16Entry<A, K> lookup16(const logaddexp_consts::Table16<K>& t,
                                                  const xsimd::batch<std::int64_t, A>& j) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t n = B::size;
    Table16Entry<A, K> e;
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        for (int c = 0; c < K; ++c) e.v[c] = dd::lookup16(t.column[c], j);
        return e;
    } else
#endif
    {
        alignas(64) std::int64_t js[n];
        j.store_aligned(js);
#if defined(__AVX__)
        if constexpr (n == 4 && K == 2) {
            const __m256d a = _mm256_insertf128_pd(
                _mm256_castpd128_pd256(_mm_load_pd(t.row[js[0]])), _mm_load_pd(t.row[js[2]]), 1);
            const __m256d b = _mm256_insertf128_pd(
                _mm256_castpd128_pd256(_mm_load_pd(t.row[js[1]])), _mm_load_pd(t.row[js[3]]), 1);
            e.v[0] = B(_mm256_unpacklo_pd(a, b));
            e.v[1] = B(_mm256_unpackhi_pd(a, b));
            return e;
        } else if constexpr (n == 4 && K == 3) {
            const __m256d r0 = _mm256_load_pd(t.row[js[0]]), r1 = _mm256_load_pd(t.row[js[1]]);
            const __m256d r2 = _mm256_load_pd(t.row[js[2]]), r3 = _mm256_load_pd(t.row[js[3]]);
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
            const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            e.v[0] = B(_mm256_permute2f128_pd(t0, t2, 0x20));
            e.v[1] = B(_mm256_permute2f128_pd(t1, t3, 0x20));
            e.v[2] = B(_mm256_permute2f128_pd(t0, t2, 0x31));
            return e;
        } else
#endif
#if defined(__SSE2__)
            if constexpr (n == 2) {
            for (int c = 0; c < K; c += 2) {
                const __m128d a = _mm_load_pd(t.row[js[0]] + c), b = _mm_load_pd(t.row[js[1]] + c);
                e.v[c] = B(_mm_unpacklo_pd(a, b));
                if (c + 1 < K) e.v[c + 1] = B(_mm_unpackhi_pd(a, b));
            }
            return e;
        } else
#endif
        {
            for (int c = 0; c < K; ++c) {
                alignas(64) double out[n];
                for (std::size_t k = 0; k < n; ++k) out[k] = t.row[js[k]][c];
                e.v[c] = B::load_aligned(out);
            }
            return e;
        }
    }
}

// Lanes whose first-pass result needs the near-zero passes: m < 0 and |result| < |m|
// 2^-near_bits (see the contract for near_bits).
template <class Out>
inline constexpr double logaddexp_near_fraction =
    std::is_same<Out, float>::value ? 0x1.0p-34 : 0x1.0p-6;
// Pass 2 certifies |D| >= this (D's error is below 2^-96.3).
template <class Out>
inline constexpr double logaddexp_certified_d =
    std::is_same<Out, float>::value ? 0x1.0p-64 : 0x1.0p-38;

// floor(n 2^-b) for integral n, |n| < 2^50, b >= 1, without a floor instruction (SSE2 has
// none): n 2^-b - (1 - 2^-b)/2 is exact and lies within 1/2 - 2^-(b+1) of the floor, so
// rounding it to an integer (the 1.5 2^52 shifter) gives the floor.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> logaddexp_floor(const xsimd::batch<double, A>& n,
                                                              double two_to_minus_b) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(0x1.8p52);
    return (dd::fmadd(n, B(two_to_minus_b), B(-0.5 * (1.0 - two_to_minus_b))) + shifter) - shifter;
}

// x 2^k for integral k in [-2098, 2046], exact where the result is normal (two factors,
// each a normal power of two).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> logaddexp_scale(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& k) noexcept {
    const auto k1 = logaddexp_floor(k, 0.5);
    return (x * pow2i(k1)) * pow2i(k - k1);
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
template <class Out, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpFirst<A> logaddexp_first(const xsimd::batch<double, A>& x,
                                                        const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    namespace c = logaddexp_consts;
    const B m = xsimd::max(x, y), s = xsimd::min(x, y);
    const dd::pair<A> d = dd::two_sum(s, -m);  // <= 0, exact
    const B dc = xsimd::max(d.hi, B(-746.0));   // e^d below 2^-1076: E = 0

    // t = (d - n c1) + (d.lo - n c2): the first exact (as in pass 2), the second below
    // 2^-30, rounded (n c3 < 2^-84 is left out). Indices are masked to the tables: lanes of
    // NaN or huge arguments read a valid entry.
    const B shifter(0x1.8p52);
    const B n = dd::fmadd(dc, B(16.0 * exp_consts<double>::inv_ln2), shifter) - shifter;
    const B k = logaddexp_floor(n, 1.0 / 16.0);
    const I j = (as_int((n - k * B(16.0)) + shifter) - as_int(shifter)) & I(15);
    const dd::pair<A> t = dd::two_sum(dd::fnmadd(n, B(c::ln2_over_16.c1), dc),
                                      dd::fnmadd(n, B(c::ln2_over_16.c2), d.lo));
    const B poly = dd::horner(t.hi, 0.5, c::inv_fact[3].hi, c::inv_fact[4].hi, c::inv_fact[5].hi,
                              c::inv_fact[6].hi, c::inv_fact[7].hi, c::inv_fact_8);
    const B p_lo = dd::fmadd(t.hi * t.hi, poly, t.lo);  // p = t.hi + p_lo
    const Table16Entry<A, 2> tj = lookup16(c::exp2_table, j);
    const B tj_hi = tj.v[0], tj_lo = tj.v[1];
    const dd::pair<A> tp = dd::two_prod(tj_hi, t.hi);
    const dd::pair<A> e0 = dd::fast_two_sum(tj_hi, tp.hi);  // |T_j p| < T_j / 45
    const dd::pair<A> e1 =
        dd::fast_two_sum(e0.hi, e0.lo + (tp.lo + dd::fmadd(tj_hi, p_lo, tj_lo * (B(1.0) + t.hi))));
    const B e_hi = logaddexp_scale(e1.hi, k), e_lo = logaddexp_scale(e1.lo, k);

    // L = log(1 + E).
    const dd::pair<A> u0 = dd::fast_two_sum(B(1.0), e_hi);
    const auto top = u0.hi >= B(1.0 + 31.0 / 32.0);  // 1 + E = 2 u', u' in [0.98, 1]
    const B half = xsimd::select(top, B(0.5), B(1.0));
    const B uh = u0.hi * half;
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
    // m + L = m + base + lead + the low parts, the three leading terms as exact sums.
    const dd::pair<A> r0 = dd::two_sum(m, base_hi);
    const dd::pair<A> r1 = dd::two_sum(r0.hi, lead.hi);
    const B r = r1.hi + (r1.lo + (r0.lo + (base_lo + l1p_lo)));
    // Special values as NumPy: d < -746 (s = -inf included, and m = +inf with s finite)
    // gives m + log1p(0) = m + 0 (-0 becomes +0); a NaN argument (which max and min may
    // drop) gives x + y, NumPy's NaN, and so do equal infinities (d is NaN): the infinity,
    // NumPy's x + ln2.
    const auto nan = xsimd::isnan(x) | xsimd::isnan(y) | xsimd::isnan(d.hi);
    const B res = xsimd::select(nan, x + y, xsimd::select(d.hi < B(-746.0), m + B(0.0), r));
    // m < 0 and |res| < |m| 2^-near_bits (false for m >= 0 and NaN).
    return {res, xsimd::abs(res) < m * B(-logaddexp_near_fraction<Out>), m, s};
}

// e^t - 1 to 2^-104 relative for a pair t, |t| <= ln2/32 (1 + 2^-20): Taylor to t^14
// (what it drops is below 2^-108 relative), evaluated at t.hi with 1/3! .. 1/7! as pairs
// and the terms from t^8 on in plain doubles (each below 2^-54 relative to the sum), plus
// t.lo e^t.hi for t.lo (second order: below 2^-115).
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> logaddexp_expm1_dd(const dd::pair<A>& t) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    const B x = t.hi;
    const B tail = dd::horner(x, c::inv_fact_8, c::inv_fact_9, c::inv_fact_10, c::inv_fact_11,
                              c::inv_fact_12, c::inv_fact_13, c::inv_fact_14);
    // h = 1/7! + x tail, then h = 1/n! + x h for n = 6 .. 2: h = (e^x - 1 - x) / x^2.
    dd::pair<A> h = dd::fast_two_sum(B(c::inv_fact[7].hi), x * tail);
    h.lo = h.lo + B(c::inv_fact[7].lo);
    for (int n = 6; n >= 2; --n) {
        const dd::pair<A> xh = dd::mul(h, x);
        const dd::pair<A> sum = dd::fast_two_sum(B(c::inv_fact[n].hi), xh.hi);
        h = {sum.hi, sum.lo + (B(c::inv_fact[n].lo) + xh.lo)};
    }
    const dd::pair<A> q = dd::mul(dd::two_prod(x, x), h);  // x^2 h <= |x| 2^-6.5
    const dd::pair<A> p = dd::fast_two_sum(x, q.hi);
    const B lo = p.lo + q.lo;
    return dd::fast_two_sum(p.hi, lo + dd::fmadd(t.lo, p.hi, t.lo));
}

template <class A>
struct LogaddexpExpParts {
    xsimd::batch<double, A> k;   // e^x = 2^k v
    xsimd::batch<double, A> n;   // 16 k + j
    dd::pair<A> p;               // e^t - 1
    dd::pair<A> v;               // T_j (1 + p), in [2^-(1/32), 2^(1 + 1/32)]
};

// e^x for |x| <= 746 as 2^k v (see the contract, pass 2).
template <class A>
NUMFUSE_ALWAYS_INLINE LogaddexpExpParts<A> logaddexp_exp_dd(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    namespace c = logaddexp_consts;
    const B shifter(0x1.8p52);
    const B ns = dd::fmadd(x, B(16.0 * exp_consts<double>::inv_ln2), shifter);
    const B n = ns - shifter;  // round(16 x / ln2), |n| < 2^15
    const B k = logaddexp_floor(n, 1.0 / 16.0);
    const I j = (as_int((n - k * B(16.0)) + shifter) - as_int(shifter)) & I(15);  // n - 16 k
    // x - n c1 is exact: n c1 is (15 + 38 bits), and x - n c1 is a multiple of ulp(x)
    // below 2^-5 in magnitude (ulp(x) >= 2^-58 where n != 0).
    const B t1 = dd::fnmadd(n, B(c::ln2_over_16.c1), x);
    const dd::pair<A> nc2 = dd::two_prod(n, B(c::ln2_over_16.c2));
    const dd::pair<A> t0 = dd::two_sum(t1, -nc2.hi);
    const dd::pair<A> t = {t0.hi, t0.lo - dd::fmadd(n, B(c::ln2_over_16.c3), nc2.lo)};
    const dd::pair<A> p = logaddexp_expm1_dd(t);
    const Table16Entry<A, 2> te = lookup16(c::exp2_table, j);
    const dd::pair<A> tj = {te.v[0], te.v[1]};
    const dd::pair<A> tp = dd::mul(tj, p);  // |T_j p| < T_j / 45
    const dd::pair<A> v0 = dd::fast_two_sum(tj.hi, tp.hi);
    const dd::pair<A> v = dd::fast_two_sum(v0.hi, v0.lo + (tj.lo + tp.lo));
    return {k, n, p, v};
}

// eps = e^m + e^s - 1 = D 2^k (pass 2) for the near-zero lanes (m in (-1.4, 0), s <= m);
// `certified` where |D| is large enough for Out.
template <class A>
struct LogaddexpEps {
    dd::pair<A> d;
    xsimd::batch<double, A> k;
    xsimd::batch_bool<double, A> certified;
};
template <class Out, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpEps<A> logaddexp_eps_dd(const xsimd::batch<double, A>& m,
                                                       const xsimd::batch<double, A>& s) noexcept {
    using B = xsimd::batch<double, A>;
    const LogaddexpExpParts<A> es = logaddexp_exp_dd(xsimd::max(s, B(-746.0)));
    const LogaddexpExpParts<A> em = logaddexp_exp_dd(m);
    // 1 - e^m: -p where n = 0 (e^m = 1 + p), else 1 - 2^k v (k in {-2, -1, 0}).
    const B sk = pow2i(em.k);
    const dd::pair<A> far = dd::two_sum(B(1.0), -(sk * em.v.hi));
    const dd::pair<A> from_v = dd::fast_two_sum(far.hi, far.lo - sk * em.v.lo);
    const auto small = em.n == B(0.0);
    const dd::pair<A> a = {xsimd::select(small, -em.p.hi, from_v.hi),
                           xsimd::select(small, -em.p.lo, from_v.lo)};
    // D = v_s - a 2^-k_s: exact scaling, then the cancellation in pair arithmetic.
    const dd::pair<A> v2 = {logaddexp_scale(a.hi, -es.k), logaddexp_scale(a.lo, -es.k)};
    const dd::pair<A> diff = dd::two_sum(es.v.hi, -v2.hi);
    const dd::pair<A> d = dd::fast_two_sum(diff.hi, diff.lo + (es.v.lo - v2.lo));
    return {d, es.k, xsimd::abs(d.hi) >= B(logaddexp_certified_d<Out>)};
}

// log1p(eps) for eps = (d.hi + d.lo) 2^k, |eps| < 1 (passes 2 and 3), to 2^-60 relative
// before the final rounding.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> logaddexp_log1p_eps(
    const dd::pair<A>& d0, const xsimd::batch<double, A>& k) noexcept {
    using B = xsimd::batch<double, A>;
    const dd::pair<A> d = dd::fast_two_sum(d0.hi, d0.lo);  // |lo| <= ulp(hi) / 2
    const B e_hi = logaddexp_scale(d.hi, k), e_lo = logaddexp_scale(d.lo, k);
    // |eps| < 2^-60: log1p(eps) = eps (1 - eps/2 + ...) is eps to 2^-61, rounded once: the
    // pair summed then scaled exactly where eps is normal; below 2^-1022 the pair is rounded
    // onto the subnormal grid directly, in units of 2^-1074 (|u| < 2^52, rounded to an
    // integer by adding 2^52), u.lo breaking u.hi's ties (a second rounding would be off by
    // up to 0.75 ULP just below 2^-1022).
    const B normal_tiny = logaddexp_scale(d.hi + d.lo, k);
    const B u_hi = logaddexp_scale(d.hi, k + B(1074.0));
    const B sign = xsimd::copysign(B(1.0), u_hi);
    const B ua = xsimd::abs(u_hi), la = logaddexp_scale(d.lo, k + B(1074.0)) * sign;
    const B qa = (ua + B(0x1.0p52)) - B(0x1.0p52);
    const B w = ua - qa;  // exact, |w| <= 1/2
    const B step = xsimd::select((w == B(0.5)) & (la > B(0.0)), B(1.0), B(0.0)) -
                   xsimd::select((w == B(-0.5)) & (la < B(0.0)), B(1.0), B(0.0));
    const B subnormal = xsimd::copysign((qa + step) * B(0x1.0p-1074), u_hi);
    const B tiny = xsimd::select(xsimd::abs(e_hi) < B(0x1.0p-1022), subnormal, normal_tiny);
    // |eps| < 2^-20: eps - eps^2/2 + eps^3/3 (drops eps^4/4 < 2^-60 eps). The log core of
    // 1 + eps would lose the second-order term of its low part here (1 + eps's rounding
    // error, up to 2^-53, squared: 2^-55 relative where eps ~ 2^-52).
    const B small = e_hi + (e_lo + (e_hi * e_hi) * dd::fmadd(e_hi, B(1.0 / 3.0), B(-0.5)));
    // Else the log core of the pair 1 + eps (in (1/2, 2)).
    const dd::pair<A> u = dd::two_sum(B(1.0), e_hi);
    const dd::pair<A> l = log_pair(log_core(u.hi, u.lo + e_lo));
    const B a = xsimd::abs(e_hi);
    return xsimd::select(a < B(0x1.0p-60), tiny,
                         xsimd::select(a < B(0x1.0p-20), small, l.hi + l.lo));
}

// Pass 3 (scalar): eps = e^m + e^s - 1 in N-limb fixed point, as (hi + lo) 2^exponent;
// `certified` unless |eps| < 2^(72 - 64 N) 2^(exponent - 2) (see the contract). Templated on
// the architecture so that each level keeps its own copy (fixed_point.hpp says why).
struct LogaddexpExactEps {
    double hi, lo;
    int exponent;
    bool certified;
};
template <class A, int N>
LogaddexpExactEps logaddexp_eps_fixed(double m, double s) noexcept {
    using F = fixed::Fraction<N>;
    namespace c = logaddexp_consts;
    constexpr int bits = 64 * N + 4;
    const F& ln2 = c::ln2_fraction<N>;
    const auto& inv = c::inverse_factorials<N>;

    // x = q ln2 - |s| in [0, ln2) (q ln2 is below ln2 by at most q < 2^11 units).
    const double as = -s;
    const auto bi = static_cast<std::uint64_t>(as);
    const F bf = fixed::from_double<N>(as - static_cast<double>(bi));
    auto q = static_cast<std::uint64_t>(as * 1.4426950408889634) + 1;
    F x;
    for (;;) {
        std::uint64_t ai = 0;
        const F af = fixed::mul_small(ln2, q, ai);
        const bool borrow = fixed::compare(af, bf) < 0;
        if (ai < bi + (borrow ? 1 : 0)) {
            ++q;
            continue;
        }
        x = fixed::sub(af, bf);  // the fraction of the difference, modulo 1
        if (ai > bi + (borrow ? 1 : 0) || fixed::compare(x, ln2) >= 0) {
            --q;
            continue;
        }
        break;
    }
    // e^x - 1 in [0, 1): Taylor on u = x / 64 < 2^-6, then six doublings g -> 2 g + g^2.
    // V1 = e^x / 4 = 1/4 + g / 4 = e^s 2^(q - 2).
    constexpr int taylor_terms = c::series_terms(6, bits, 0);
    static_assert(taylor_terms < 48 && c::series_terms(7, bits, 2) + 2 < 48,
                  "the inverse factorial table is too short for N limbs");
    const F u = fixed::shift_right(x, 6);
    F h = inv.f[taylor_terms];
    for (int n = taylor_terms - 1; n >= 2; --n) h = fixed::add(inv.f[n], fixed::mul(u, h));
    F g = fixed::add(u, fixed::mul(u, fixed::mul(u, h)));
    for (int r = 0; r < 6; ++r) g = fixed::add(fixed::shift_left(g, 1), fixed::mul(g, g));
    F v1 = fixed::shift_right(g, 2);
    v1.w[0] |= std::uint64_t(1) << 62;

    // 1 - e^m = 1 - e^-mu = mu (1 - mu C(mu)), C(mu) = sum_j (-mu)^j / (j + 2)!, as a_s 2^ea.
    const double mu = -m;
    fixed::Decomposed dm = fixed::decompose(mu);
    while (dm.mantissa < (std::uint64_t(1) << 52)) dm.mantissa <<= 1, --dm.exponent;
    const int e1 = dm.exponent + 53;  // mu = M 2^e1, M in [1/2, 1)
    F mfrac;
    mfrac.w[0] = dm.mantissa << 11;
    const auto one_minus_exp = [&](const F& z, double zd, int b) {
        // z (1 - z C(z)) for z = zd < 2^-b, given as a fraction (z) and a double (zd).
        const int terms = c::series_terms(b, bits, 2);
        const fixed::Decomposed zx = fixed::decompose(zd);
        F cz = inv.f[terms + 2];
        for (int j = terms - 1; j >= 0; --j) {
            cz = fixed::sub(inv.f[j + 2], fixed::mul_decomposed(cz, zx));
        }
        return fixed::sub(z, fixed::mul(z, fixed::mul_decomposed(cz, zx)));
    };
    F a_s;
    int ea = 0;
    if (e1 <= -7) {
        a_s = one_minus_exp(mfrac, mu, -e1);  // = (1 - e^-mu) 2^-e1
        ea = e1;
    } else {
        // u = mu 2^-r in [2^-8, 2^-7), then r doublings a -> 2 a - a^2 (1 - e^-2z).
        const int r = e1 + 7;
        F a = one_minus_exp(fixed::shift_right(mfrac, 7), mu * fixed::pow2(-r), 7);
        for (int k = 0; k < r; ++k) a = fixed::sub(fixed::shift_left(a, 1), fixed::mul(a, a));
        a_s = a;
    }
    // V2 = (1 - e^m) 2^(q - 2) = a_s 2^(ea + q - 2), next to V1 < 1/2 for a near-zero lane.
    const long shift = ea + static_cast<long>(q) - 2;
    if (shift > 0 && (shift >= 64 || (a_s.w[0] >> (64 - shift)) != 0)) {
        return {0.0, 0.0, 0, false};  // not a near-zero lane: leave it to pass 2's value
    }
    const F v2 = shift >= 0 ? fixed::shift_left(a_s, static_cast<unsigned>(shift))
                            : fixed::shift_right(a_s, static_cast<unsigned>(-shift));
    // eps 2^(q - 2) = V1 - V2. Error below 2^14 units (V1: q ln2's 2^11 units times
    // e^x <= 2; V2: 2^7 (J + 3) units from the doublings); certified at |V1 - V2| >=
    // 2^(14 + 58) units, 2^-58 relative.
    const bool negative = fixed::compare(v1, v2) < 0;
    const F diff = negative ? fixed::sub(v2, v1) : fixed::sub(v1, v2);
    F threshold;
    threshold.w[N - 2] = std::uint64_t(1) << 8;  // 2^(72 - 64 N)
    const fixed::Pair p = fixed::to_pair(diff);
    return {negative ? -p.hi : p.hi, negative ? -p.lo : p.lo, 2 - static_cast<int>(q),
            fixed::compare(diff, threshold) >= 0};
}

// Pass 3 for one lane: 128 bits (enough for 2 in 3 nearest pairs, 0.24 us), 192 (0.55 us),
// then 384.
template <class A>
LogaddexpExactEps logaddexp_eps_exact(double m, double s) noexcept {
    const LogaddexpExactEps narrow = logaddexp_eps_fixed<A, 2>(m, s);
    if (narrow.certified) return narrow;
    const LogaddexpExactEps e = logaddexp_eps_fixed<A, 3>(m, s);
    if (e.certified) return e;
    const LogaddexpExactEps wide = logaddexp_eps_fixed<A, 6>(m, s);
    return wide.hi != 0.0 ? wide : e;
}

// Near-zero lanes gathered from consecutive batches and recomputed (passes 2 and 3) a
// full batch at a time; results go straight to their place in `out`. Gathering is
// branch-free: a mispredicted branch per lane would drain the first pass's long dependency
// chains of the batches in flight (measured: ~40 ns per near-zero lane).
template <class Out, class A>
class LogaddexpNearZeroLanes {
    using B = xsimd::batch<double, A>;
    static constexpr std::size_t width = B::size;

public:
    explicit LogaddexpNearZeroLanes(double* out) noexcept : out_(out) {}

    // The lanes of `near` of a batch: max and min of its arguments m and s, its results at
    // out[base].
    NUMFUSE_NOINLINE void add(const B& m, const B& s, const xsimd::batch_bool<double, A>& near,
                              std::size_t base) noexcept {
        alignas(64) double ms[width], ss[width], flags[width];
        m.store_aligned(ms);
        s.store_aligned(ss);
        xsimd::select(near, B(1.0), B(0.0)).store_aligned(flags);
        for (std::size_t k = 0; k < width; ++k) {
            m_[count_] = ms[k];
            s_[count_] = ss[k];
            at_[count_] = base + k;
            count_ += flags[k] != 0.0 ? 1 : 0;
        }
        if (count_ >= width) {
            run(width);
            for (std::size_t k = width; k < count_; ++k) {
                m_[k - width] = m_[k], s_[k - width] = s_[k], at_[k - width] = at_[k];
            }
            count_ -= width;
        }
    }

    void finish() noexcept {
        if (count_ != 0) run(count_);
    }

private:
    // The first `count` lanes (the rest of the batch repeats lane 0).
    void run(std::size_t count) noexcept {
        alignas(64) double m[width], s[width];
        for (std::size_t k = 0; k < width; ++k) {
            m[k] = m_[k < count ? k : 0];
            s[k] = s_[k < count ? k : 0];
        }
        LogaddexpEps<A> e = logaddexp_eps_dd<Out>(B::load_aligned(m), B::load_aligned(s));
        if (!xsimd::all(e.certified)) {
            alignas(64) double hi[width], lo[width], k2[width];
            bool certified[width];
            e.d.hi.store_aligned(hi);
            e.d.lo.store_aligned(lo);
            e.k.store_aligned(k2);
            e.certified.store_unaligned(certified);
            for (std::size_t k = 0; k < count; ++k) {
                if (certified[k]) continue;
                const LogaddexpExactEps x = logaddexp_eps_exact<A>(m[k], s[k]);
                if (x.hi == 0.0) continue;
                hi[k] = x.hi, lo[k] = x.lo, k2[k] = static_cast<double>(x.exponent);
            }
            e.d = {B::load_aligned(hi), B::load_aligned(lo)};
            e.k = B::load_aligned(k2);
        }
        alignas(64) double r[width];
        logaddexp_log1p_eps(e.d, e.k).store_aligned(r);
        for (std::size_t k = 0; k < count; ++k) out_[at_[k]] = r[k];
    }

    double* out_;
    // Up to 2 width - 1 lanes between runs (one batch may complete a run and start the next).
    double m_[2 * width];
    double s_[2 * width];
    std::size_t at_[2 * width];
    std::size_t count_ = 0;
};

}  // namespace detail

namespace detail {

// One block of the first pass (count <= block elements): results to out, and whether any
// lane is near zero. KeepArguments (out is a or b): each batch's max and min go to ms, ss,
// since the arguments are overwritten.
template <class Out, class A, bool KeepArguments>
NUMFUSE_ALWAYS_INLINE bool logaddexp_block(double* out, const double* a, const double* b,
                                           std::size_t count, double* ms, double* ss) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    auto any_near = xsimd::batch_bool<double, A>(false);
    std::size_t k = 0;
    for (; k + width <= count; k += width) {
        const LogaddexpFirst<A> first =
            logaddexp_first<Out>(B::load_unaligned(a + k), B::load_unaligned(b + k));
        first.result.store_unaligned(out + k);
        if constexpr (KeepArguments) {
            first.m.store_aligned(ms + k);
            first.s.store_aligned(ss + k);
        }
        any_near = any_near | first.near_zero;
    }
    if (k < count) {
        // The tail through buffers padded with 1 (never a near-zero lane).
        alignas(64) double xa[width], xb[width], xo[width];
        for (std::size_t j = 0; j < width; ++j) xa[j] = xb[j] = 1.0;
        const std::size_t rest = count - k;
        std::memcpy(xa, a + k, rest * sizeof(double));
        std::memcpy(xb, b + k, rest * sizeof(double));
        const LogaddexpFirst<A> first =
            logaddexp_first<Out>(B::load_aligned(xa), B::load_aligned(xb));
        first.result.store_aligned(xo);
        std::memcpy(out + k, xo, rest * sizeof(double));
        if constexpr (KeepArguments) {
            first.m.store_aligned(ms + k);
            first.s.store_aligned(ss + k);
        }
        any_near = any_near | first.near_zero;
    }
    return xsimd::any(any_near);
}

}  // namespace detail

// logaddexp(a, b) of one pair: bit for bit logaddexp_array's result for it (a lane's result
// depends on that lane alone). For in-order chains (accumulate: each result an argument of
// the next call), where logaddexp_array's set-up for one element costs more than the
// element. The pair is broadcast to every lane (no store to reload on the chain); a
// near-zero pair is then recomputed in every lane, which costs the same as in one.
template <class Out, class A>
double logaddexp_one(double a, double b) noexcept {
    using B = xsimd::batch<double, A>;
    alignas(64) double r[B::size];
    const detail::LogaddexpFirst<A> first = detail::logaddexp_first<Out>(B(a), B(b));
    if (!xsimd::any(first.near_zero)) return first.result.get(0);
    detail::LogaddexpNearZeroLanes<Out, A> lanes(r);
    lanes.add(first.m, first.s, first.near_zero, 0);
    lanes.finish();
    return r[0];
}

// out[k] = logaddexp(a[k], b[k]) for k < n (see the contract). The first pass runs over
// blocks and only notes whether a block has near-zero lanes; those blocks are scanned
// again afterwards (the near-zero test recomputed from the results, bit for bit the
// first pass's) and their near-zero lanes gathered. A branch per batch inside the first
// pass's loop would be mispredicted where such lanes are scattered, each time draining the
// long dependency chains of the batches in flight (measured: ~60 ns per near-zero batch);
// every extra instruction in that loop costs too (it is latency-bound, overlapping the few
// batches the reorder buffer holds).
template <class Out, class A>
void logaddexp_array(double* out, const double* a, const double* b, std::size_t n) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    constexpr std::size_t block = 32 * width;
    const bool in_place = out == a || out == b;
    alignas(64) double ms[block], ss[block];
    detail::LogaddexpNearZeroLanes<Out, A> lanes(out);
    for (std::size_t start = 0; start < n; start += block) {
        const std::size_t count = n - start < block ? n - start : block;
        const double* pa = a + start;
        const double* pb = b + start;
        double* po = out + start;
        const bool any_near =
            in_place ? detail::logaddexp_block<Out, A, true>(po, pa, pb, count, ms, ss)
                     : detail::logaddexp_block<Out, A, false>(po, pa, pb, count, ms, ss);
        if (!any_near) continue;
        for (std::size_t k = 0; k < count; k += width) {
            B x, y, r;
            if (k + width <= count) {
                x = B::load_unaligned(pa + k), y = B::load_unaligned(pb + k);
                r = B::load_unaligned(po + k);
            } else {
                // The tail, padded with 1 as in the first pass.
                alignas(64) double xa[width], xb[width], xr[width];
                for (std::size_t j = 0; j < width; ++j) xa[j] = xb[j] = xr[j] = 1.0;
                const std::size_t rest = count - k;
                std::memcpy(xa, pa + k, rest * sizeof(double));
                std::memcpy(xb, pb + k, rest * sizeof(double));
                std::memcpy(xr, po + k, rest * sizeof(double));
                x = B::load_aligned(xa), y = B::load_aligned(xb), r = B::load_aligned(xr);
            }
            B m = xsimd::max(x, y), s = xsimd::min(x, y);
            if (in_place) m = B::load_aligned(ms + k), s = B::load_aligned(ss + k);
            const auto near = xsimd::abs(r) < m * B(-detail::logaddexp_near_fraction<Out>);
            if (xsimd::any(near)) lanes.add(m, s, near, start + k);
        }
    }
    lanes.finish();
}

}  // namespace numfuse::kernels
