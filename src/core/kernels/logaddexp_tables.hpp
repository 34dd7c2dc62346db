// The tables and shared arithmetic of logaddexp's passes (kernels/logaddexp.hpp has the
// contract and the method): the constants, computed at compile time in fixed point
// (logaddexp_consts: ln2/16 split in three, 2^(j/16) and r_i, -log(r_i) as pairs, 1/n! as
// pairs and as fixed-point fractions, ln2 to N limbs), their per-lane lookup (lookup16),
// the exact floor and power-of-two scaling and the table index of base^x that every pass
// uses, a pair times a constant pair, and base 2's argument reduction (logaddexp2).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/fixed_point.hpp"
#include "kernels/hyperbolic.hpp"

namespace numfuse::kernels {
namespace detail {

// The base of the logarithm and the powers: e (logaddexp) or 2 (logaddexp2: log2(2^x +
// 2^y) = m + log(1 + 2^d) log2(e)). The passes differ only in how d is reduced to 2^k T_j
// e^t (base 2: exactly, t = (d - n/16) ln2) and in the final product by log2(e).
enum class LogBase { e, two };

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
// log2(e) = 1 / ln2 = hi + lo (to 2^-109 relative: mpmath; tests/cpp/test_logaddexp.cpp
// checks it against ln2_pair).
inline constexpr fixed::Pair log2e_pair = {0x1.71547652b82fep+0, 0x1.777d0ffda0d24p-56};
// Below this d = s - m, E = base^d < 2^-1076 and the result is m + 0.
template <LogBase Base>
inline constexpr double far_d = Base == LogBase::e ? -746.0 : -1076.0;

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

// eps = e^m + e^s - 1 = D 2^k (base 2: 2^m + 2^s - 1) of near-zero lanes as the passes
// give it (logaddexp_eps_dd, logaddexp_eps_triple); `certified` where |D| is large enough
// for Out.
template <class A>
struct LogaddexpEps {
    dd::pair<A> d;
    xsimd::batch<double, A> k;
    xsimd::batch_bool<double, A> certified;
};

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

// The reduction of e^x (Base e) or 2^x (Base two) to the 16-entry tables, |x| <= 1076:
// n = round(16 x / ln2) (base 2: round(16 x)), |n| < 2^15, k = floor(n / 16) and j = n -
// 16 k, so that base^x = 2^k 2^(j/16) e^t with |t| <= ln2/32 (each pass reduces t to its
// own precision). j is masked to [0, 16): lanes of NaN or huge x read a valid entry.
// Results through references, not a returned struct: GCC kept such a struct's batches in
// memory in pass 1's loop (1.6% more instructions per element, base 2).
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE void logaddexp_index16(const xsimd::batch<double, A>& x,
                                             xsimd::batch<double, A>& n, xsimd::batch<double, A>& k,
                                             xsimd::batch<std::int64_t, A>& j) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    const B shifter(0x1.8p52);
    const B scale(Base == LogBase::e ? 16.0 * exp_consts<double>::inv_ln2 : 16.0);
    n = dd::fmadd(x, scale, shifter) - shifter;
    k = logaddexp_floor(n, 1.0 / 16.0);
    j = (as_int((n - k * B(16.0)) + shifter) - as_int(shifter)) & I(15);
}

// (v.hi + v.lo) c for a constant pair c (ln2, log2(e)) as an unnormalised pair: v.hi c.hi
// exactly, v.hi c.lo + v.lo c.hi rounded into the low part (v.lo c.lo left out), to 2^-104
// relative where |v.lo| <= ulp(v.hi).
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> logaddexp_times(const dd::pair<A>& v,
                                                  const fixed::Pair& c) noexcept {
    using B = xsimd::batch<double, A>;
    const dd::pair<A> p = dd::two_prod(v.hi, B(c.hi));
    return {p.hi, dd::fmadd(v.hi, B(c.lo), dd::fmadd(v.lo, B(c.hi), p.lo))};
}

// x 2^k for integral k in [-2098, 2046], exact where the result is normal (two factors,
// each a normal power of two).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> logaddexp_scale(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& k) noexcept {
    const auto k1 = logaddexp_floor(k, 0.5);
    return (x * pow2i(k1)) * pow2i(k - k1);
}

// (v.hi + v.lo) 2^k rounded once, |v.lo| <= ulp(v.hi) / 2, for results of magnitude below
// 2^-60 (the scaling of v.hi by 2^(k + 1074) must not overflow), subnormal results
// included: the pair summed then scaled exactly where the result is normal; below 2^-1022
// the pair is rounded onto the subnormal grid directly, in units of 2^-1074 (|u| < 2^52,
// rounded to an integer by adding 2^52), u.lo breaking u.hi's ties (scaling a rounded sum
// would round twice: up to 0.75 ULP just below 2^-1022). No product sees a subnormal: the
// normal form's scale is 0 in the subnormal lanes, and the subnormal is built from its
// bits (the integer q + 2^52's bits less 2^52's are q 2^-1074's, q <= 2^52).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> logaddexp_round_scaled(
    const dd::pair<A>& v, const xsimd::batch<double, A>& k) noexcept {
    using B = xsimd::batch<double, A>;
    const B u_hi = logaddexp_scale(v.hi, k + B(1074.0));
    const B sign = xsimd::copysign(B(1.0), u_hi);
    const B ua = xsimd::abs(u_hi), la = logaddexp_scale(v.lo, k + B(1074.0)) * sign;
    const auto below_normal = ua < B(0x1.0p52);  // |result| < 2^-1022
    const B normal = logaddexp_scale(v.hi + v.lo, xsimd::select(below_normal, B(0.0), k));
    const B qa = (ua + B(0x1.0p52)) - B(0x1.0p52);
    const B w = ua - qa;  // exact, |w| <= 1/2
    const B step = xsimd::select((w == B(0.5)) & (la > B(0.0)), B(1.0), B(0.0)) -
                   xsimd::select((w == B(-0.5)) & (la < B(0.0)), B(1.0), B(0.0));
    const B subnormal = xsimd::copysign(
        as_float<double, A>(as_int((qa + step) + B(0x1.0p52)) - as_int(B(0x1.0p52))), u_hi);
    return xsimd::select(below_normal, subnormal, normal);
}

// Base 2's reduction of x + x_lo (|x_lo| <= ulp(x) / 2) for n = round(16 x): t = (x + x_lo
// - n/16) ln2 as a pair, to 2^-104 relative, |t| <= ln2/32 (1 + 2^-40), so that 2^(x + x_lo)
// = 2^(n/16) e^t. r = x - n/16 is exact (Sterbenz where n != 0, else r = x), and where r
// != 0, |r| >= ulp(x) >= 2 |x_lo|: r ln2's leading part dominates the rest.
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> logaddexp2_reduced(const xsimd::batch<double, A>& x,
                                                     const xsimd::batch<double, A>& n,
                                                     const xsimd::batch<double, A>& x_lo) noexcept {
    using B = xsimd::batch<double, A>;
    const B r = dd::fnmadd(n, B(1.0 / 16.0), x);
    const dd::pair<A> t = logaddexp_times(dd::pair<A>{r, x_lo}, logaddexp_consts::ln2_pair);
    return dd::fast_two_sum(t.hi, t.lo);
}
}  // namespace detail
}  // namespace numfuse::kernels
