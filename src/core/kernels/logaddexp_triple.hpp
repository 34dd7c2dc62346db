// logaddexp's vectorised deep pass (kernels/logaddexp.hpp has the contract and the method):
// eps = e^m + e^s - 1 (base 2: 2^m + 2^s - 1) in triple-double arithmetic for the near-zero
// lanes the double-double pass cannot certify (logaddexp_eps_triple), a batch at a time.
//
// Values are unevaluated sums hi + mi + lo of three doubles (|mi| <= ~2^-52 |hi|, |lo| <=
// ~2^-52 |mi|). The operations below are exact transformations (two_sum, two_prod) plus
// roundings of terms below 2^-104 of the result, so each has a relative error below about
// 2^-155; the Taylor series and the constants are kept to 2^-150. D (as in pass 2: eps =
// D 2^k_s) comes out with an absolute error below 2^-140 (measured against the 384-bit
// fixed-point pass by tests/cpp/test_logaddexp.cpp: see docs/accuracy.md), so |D| >= 2^-81
// certifies eps to 2^-59 relative (float32 results: |D| >= 2^-107, 2^-33). The lanes below
// that (pairs that cancel to more than ~81 bits, about 2^-28 of nearest pairs) go to the
// scalar fixed-point pass. No operand or result of a product is subnormal: tiny maxima
// (|m| < 2^-150, where 1 - e^m = -m to 2^-151) take a branch-free closed form, and the
// general path runs on a harmless m there.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/fixed_point.hpp"
#include "kernels/logaddexp_tables.hpp"

namespace numfuse::kernels {
namespace detail {

namespace logaddexp_consts {

// A value to 159 bits as three doubles (each the next 53 significant bits, truncated).
struct Triple {
    double hi, mi, lo;
};
template <int N>
constexpr Triple to_triple(const fixed::Fraction<N>& a) noexcept {
    const auto h = fixed::split_top(a, 53);
    const auto m = fixed::split_top(h.remainder, 53);
    const auto l = fixed::split_top(m.remainder, 53);
    return {h.top, m.top, l.top};
}

// ln2/16 = c1 + c2 + c3 + c4 + (< 2^-200): c1 has 38 bits (n c1 exact for |n| < 2^15), the
// others 53.
struct Ln2Over16Four {
    double c1, c2, c3, c4;
};
constexpr Ln2Over16Four split_ln2_over_16_four() noexcept {
    const auto x = fixed::shift_right(fixed::ln2<5>(), 4);
    const auto a = fixed::split_top(x, 38);
    const auto b = fixed::split_top(a.remainder, 53);
    const auto c = fixed::split_top(b.remainder, 53);
    const auto d = fixed::split_top(c.remainder, 53);
    return {a.top, b.top, c.top, d.top};
}
inline constexpr Ln2Over16Four ln2_over_16_four = split_ln2_over_16_four();
inline constexpr Triple ln2_triple = to_triple(fixed::ln2<4>());

// 2^(j/16) as triples (columns 0..2), j = 0..15.
constexpr Table16<3> make_exp2_triple_table() noexcept {
    Table16<3> t{};
    const auto step = fixed::shift_right(fixed::ln2<4>(), 4);
    for (int j = 0; j < 16; ++j) {
        std::uint64_t whole = 0;
        const auto x = fixed::mul_small(step, static_cast<std::uint64_t>(j), whole);
        auto half = fixed::shift_right(fixed::expm1_series(x), 1);  // 2^(j/16) / 2
        half.w[0] |= std::uint64_t(1) << 63;
        const Triple v = to_triple(half);
        t.set(j, 0, 2.0 * v.hi);
        t.set(j, 1, 2.0 * v.mi);
        t.set(j, 2, 2.0 * v.lo);
    }
    return t;
}
inline constexpr Table16<3> exp2_triple_table = make_exp2_triple_table();

// 1/n! as triples for n = 2..6, as pairs for n = 7..11 and as doubles for n = 12..17 (see
// logaddexp_expm1_triple).
inline constexpr Triple inv_fact_triple[7] = {
    {0, 0, 0},
    {0, 0, 0},
    to_triple(fixed::inverse_factorial<4>(2)),
    to_triple(fixed::inverse_factorial<4>(3)),
    to_triple(fixed::inverse_factorial<4>(4)),
    to_triple(fixed::inverse_factorial<4>(5)),
    to_triple(fixed::inverse_factorial<4>(6)),
};
inline constexpr fixed::Pair inv_fact_pair_7_11[5] = {
    fixed::to_pair(fixed::inverse_factorial<4>(7)),
    fixed::to_pair(fixed::inverse_factorial<4>(8)),
    fixed::to_pair(fixed::inverse_factorial<4>(9)),
    fixed::to_pair(fixed::inverse_factorial<4>(10)),
    fixed::to_pair(fixed::inverse_factorial<4>(11)),
};
inline constexpr double inv_fact_double_12_17[6] = {
    fixed::to_pair(fixed::inverse_factorial<4>(12)).hi,
    fixed::to_pair(fixed::inverse_factorial<4>(13)).hi,
    fixed::to_pair(fixed::inverse_factorial<4>(14)).hi,
    fixed::to_pair(fixed::inverse_factorial<4>(15)).hi,
    fixed::to_pair(fixed::inverse_factorial<4>(16)).hi,
    fixed::to_pair(fixed::inverse_factorial<4>(17)).hi,
};

}  // namespace logaddexp_consts

template <class A>
struct triple {
    xsimd::batch<double, A> hi, mi, lo;
};

// x0 + x1 + x2 as a triple, exactly (three two-sums), for any magnitudes.
template <class A>
NUMFUSE_ALWAYS_INLINE triple<A> tri_from_sum(const xsimd::batch<double, A>& x0,
                                             const xsimd::batch<double, A>& x1,
                                             const xsimd::batch<double, A>& x2) noexcept {
    const dd::pair<A> a = dd::two_sum(x1, x2);
    const dd::pair<A> b = dd::two_sum(x0, a.hi);
    const dd::pair<A> c = dd::two_sum(b.lo, a.lo);
    return {b.hi, c.hi, c.lo};
}

// x * y for triples: the products of parts above 2^-106 of the result exactly, the rest
// (x.hi y.lo, x.mi y.mi, x.lo y.hi and the low parts) rounded, x.mi y.lo and smaller left
// out: relative error below 2^-155.
template <class A>
NUMFUSE_ALWAYS_INLINE triple<A> tri_mul(const triple<A>& x, const triple<A>& y) noexcept {
    const dd::pair<A> p0 = dd::two_prod(x.hi, y.hi);
    const dd::pair<A> p1 = dd::two_prod(x.hi, y.mi);
    const dd::pair<A> p2 = dd::two_prod(x.mi, y.hi);
    const dd::pair<A> s1 = dd::two_sum(p1.hi, p2.hi);
    const dd::pair<A> s2 = dd::two_sum(p0.lo, s1.hi);
    const xsimd::batch<double, A> rest =
        (s1.lo + s2.lo) +
        ((p1.lo + p2.lo) + dd::fmadd(x.hi, y.lo, dd::fmadd(x.mi, y.mi, x.lo * y.hi)));
    const dd::pair<A> r0 = dd::fast_two_sum(p0.hi, s2.hi);
    const dd::pair<A> r1 = dd::two_sum(r0.lo, rest);
    return {r0.hi, r1.hi, r1.lo};
}

// x + y for triples with |y| <= |x| / 2 (no cancellation): relative error below 2^-155.
template <class A>
NUMFUSE_ALWAYS_INLINE triple<A> tri_add(const triple<A>& x, const triple<A>& y) noexcept {
    const dd::pair<A> s0 = dd::fast_two_sum(x.hi, y.hi);
    const dd::pair<A> s1 = dd::two_sum(x.mi, y.mi);
    const dd::pair<A> u = dd::two_sum(s0.lo, s1.hi);
    const xsimd::batch<double, A> rest = u.lo + (s1.lo + (x.lo + y.lo));
    const dd::pair<A> r0 = dd::fast_two_sum(s0.hi, u.hi);
    const dd::pair<A> r1 = dd::two_sum(r0.lo, rest);
    return {r0.hi, r1.hi, r1.lo};
}

template <class A>
NUMFUSE_ALWAYS_INLINE triple<A> tri_const(const logaddexp_consts::Triple& c) noexcept {
    using B = xsimd::batch<double, A>;
    return {B(c.hi), B(c.mi), B(c.lo)};
}

// e^t - 1 for a triple t, |t| <= ln2/32 (1 + 2^-20), to 2^-150 absolute and to 2^-150
// relative where |t| >= 2^-150: t + t^2 h(t), h = sum_{n >= 2} t^(n - 2) / n! to t^15
// (what it drops is below 2^-140 h). Horner's steps carry the precision each needs (an
// error in the step of 1/n! reaches h times t^(n - 2)): doubles from 1/17! to 1/12! (at t.hi),
// pairs from 1/11! to 1/7!, triples from 1/6! to 1/2!.
template <class A>
NUMFUSE_ALWAYS_INLINE triple<A> logaddexp_expm1_triple(const triple<A>& t) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    const auto& d = c::inv_fact_double_12_17;
    const B g = dd::horner(t.hi, d[0], d[1], d[2], d[3], d[4], d[5]);
    const dd::pair<A> tp = {t.hi, t.mi};
    dd::pair<A> h2 = dd::fast_two_sum(B(c::inv_fact_pair_7_11[4].hi), t.hi * g);
    h2.lo = h2.lo + B(c::inv_fact_pair_7_11[4].lo);
    for (int n = 3; n >= 0; --n) {
        const dd::pair<A> th = dd::mul(h2, tp);
        const dd::pair<A> s = dd::fast_two_sum(B(c::inv_fact_pair_7_11[n].hi), th.hi);
        h2 = {s.hi, s.lo + (B(c::inv_fact_pair_7_11[n].lo) + th.lo)};
    }
    triple<A> h = {h2.hi, h2.lo, B(0.0)};
    for (int n = 6; n >= 2; --n) h = tri_add(tri_const<A>(c::inv_fact_triple[n]), tri_mul(t, h));
    const triple<A> q = tri_mul(tri_mul(t, t), h);  // |q| <= |t| 2^-6.5
    return tri_add(t, q);
}

// e^x = 2^k v (base 2: 2^x), v = T_j (1 + p) as a triple, for a double x, |x| <= 1076.
template <class A>
struct LogaddexpExpTriple {
    xsimd::batch<double, A> k, n;  // n = 16 k + j
    triple<A> p;                   // e^t - 1
    triple<A> v;
};
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpExpTriple<A> logaddexp_exp_triple(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    B n, k;
    xsimd::batch<std::int64_t, A> j;
    logaddexp_index16<Base>(x, n, k, j);
    triple<A> t;
    if constexpr (Base == LogBase::e) {
        // t = x - n ln2/16: x - n c1 exact (as in pass 2), n c2 and n c3 exact products, n c4
        // rounded (below 2^-134, its error below 2^-187).
        const auto& l = c::ln2_over_16_four;
        const B t1 = dd::fnmadd(n, B(l.c1), x);
        const dd::pair<A> q2 = dd::two_prod(n, B(l.c2));
        const dd::pair<A> q3 = dd::two_prod(n, B(l.c3));
        const dd::pair<A> a = dd::two_sum(t1, -q2.hi);
        const dd::pair<A> b = dd::two_sum(q2.lo, q3.hi);
        const B rest = q3.lo + dd::fmadd(n, B(l.c4), b.lo);
        const dd::pair<A> mid = dd::two_sum(a.lo, -b.hi);
        t = tri_from_sum(a.hi, mid.hi, mid.lo - rest);
    } else {
        // t = (x - n/16) ln2, x - n/16 exact; r ln2 with ln2 as a triple (r l3 rounded).
        const B r = dd::fnmadd(n, B(1.0 / 16.0), x);
        const dd::pair<A> p0 = dd::two_prod(r, B(c::ln2_triple.hi));
        const dd::pair<A> p1 = dd::two_prod(r, B(c::ln2_triple.mi));
        const dd::pair<A> a = dd::two_sum(p0.lo, p1.hi);
        t = tri_from_sum(p0.hi, a.hi, a.lo + dd::fmadd(r, B(c::ln2_triple.lo), p1.lo));
    }
    const triple<A> p = logaddexp_expm1_triple(t);
    const Table16Entry<A, 3> te = lookup16(c::exp2_triple_table, j);
    const triple<A> tj = {te.v[0], te.v[1], te.v[2]};
    return {k, n, p, tri_add(tj, tri_mul(tj, p))};  // |T_j p| < T_j / 45
}

// x 2^k for each part (exact where the parts are normal).
template <class A>
NUMFUSE_ALWAYS_INLINE triple<A> tri_scale(const triple<A>& x,
                                          const xsimd::batch<double, A>& k) noexcept {
    return {logaddexp_scale(x.hi, k), logaddexp_scale(x.mi, k), logaddexp_scale(x.lo, k)};
}

// eps = e^m + e^s - 1 = D 2^k (base 2: 2^m + 2^s - 1) for near-zero lanes (m in (-1, 0),
// far_d <= s <= m), D as a pair; `certified` where |D| is large enough for Out (see the
// header).
template <class Out>
inline constexpr double logaddexp_triple_certified_d =
    std::is_same<Out, float>::value ? 0x1.0p-107 : 0x1.0p-81;

// Below this |m|, 1 - e^m is -m (base 2: -m ln2) to the triple's precision (m^2/2 is
// below 2^-150 |m|): logaddexp_eps_triple takes it so, and pass 3's lanes with |m| below it
// go through logaddexp_eps_triple_tiny_max, which leaves out e^m.
inline constexpr double logaddexp_triple_tiny_max = 0x1.0p-150;

// 1 - e^m (base 2: 1 - 2^m) for |m| < logaddexp_triple_tiny_max, scaled by 2^nk: -m (base
// 2: -m ln2), m scaled first (exactly).
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE triple<A> logaddexp_triple_tiny_one_minus(
    const xsimd::batch<double, A>& m, const xsimd::batch<double, A>& nk) noexcept {
    using B = xsimd::batch<double, A>;
    const B ms = logaddexp_scale(m, nk);
    triple<A> at = {-ms, B(0.0), B(0.0)};
    if constexpr (Base == LogBase::two)
        at = tri_mul(at, tri_const<A>(logaddexp_consts::ln2_triple));
    return at;
}

// D = v_s - a (e^s = 2^k_s v_s, a = (1 - e^m) 2^-k_s), summed exactly but for the roundings
// of the parts below 2^-104.
template <class Out, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpEps<A> logaddexp_eps_triple_from(const LogaddexpExpTriple<A>& es,
                                                                const triple<A>& a) noexcept {
    using B = xsimd::batch<double, A>;
    const dd::pair<A> d0 = dd::two_sum(es.v.hi, -a.hi);
    const dd::pair<A> d1 = dd::two_sum(es.v.mi, -a.mi);
    const dd::pair<A> s0 = dd::two_sum(d0.hi, d1.hi);
    const dd::pair<A> s1 = dd::two_sum(d0.lo, d1.lo);
    const dd::pair<A> u = dd::two_sum(s0.lo, s1.hi);
    const B rest = u.lo + (s1.lo + (es.v.lo - a.lo));
    const dd::pair<A> w = dd::two_sum(s0.hi, u.hi);
    const dd::pair<A> d = dd::two_sum(w.hi, w.lo + rest);
    return {d, es.k, xsimd::abs(d.hi) >= B(logaddexp_triple_certified_d<Out>)};
}

template <class Out, LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpEps<A> logaddexp_eps_triple(
    const xsimd::batch<double, A>& m, const xsimd::batch<double, A>& s) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    const LogaddexpExpTriple<A> es = logaddexp_exp_triple<Base>(xsimd::max(s, B(c::far_d<Base>)));
    const B nk = -es.k;
    // 1 - e^m, scaled by 2^-k_s. Tiny m: logaddexp_triple_tiny_one_minus.
    const auto tiny_m = xsimd::abs(m) < B(logaddexp_triple_tiny_max);
    const LogaddexpExpTriple<A> em = logaddexp_exp_triple<Base>(xsimd::select(tiny_m, B(-0.25), m));
    // -p where n = 0 (e^m = 1 + p), else 1 - 2^k v, k in {-1, 0} (2^k v in [0.48, 1]: 1 -
    // 2^k v.hi as an exact two-sum, not Sterbenz, which fails below 1/2).
    const B sk = pow2i(em.k);
    const dd::pair<A> f0 = dd::two_sum(B(1.0), -(sk * em.v.hi));
    const dd::pair<A> f1 = dd::two_sum(f0.lo, -(sk * em.v.mi));
    const triple<A> from_v = tri_from_sum(f0.hi, f1.hi, f1.lo - sk * em.v.lo);
    const auto small = em.n == B(0.0);
    triple<A> a = {xsimd::select(small, -em.p.hi, from_v.hi),
                   xsimd::select(small, -em.p.mi, from_v.mi),
                   xsimd::select(small, -em.p.lo, from_v.lo)};
    a = tri_scale(a, xsimd::select(tiny_m, B(0.0), nk));  // tiny m: no overflow
    const triple<A> at =
        logaddexp_triple_tiny_one_minus<Base>(xsimd::select(tiny_m, m, B(0.0)), nk);
    a = {xsimd::select(tiny_m, at.hi, a.hi), xsimd::select(tiny_m, at.mi, a.mi),
         xsimd::select(tiny_m, at.lo, a.lo)};
    return logaddexp_eps_triple_from<Out>(es, a);
}

// logaddexp_eps_triple, bit for bit, for lanes with |m| < logaddexp_triple_tiny_max: e^m is
// not computed (logaddexp_eps_triple only selects it away there).
template <class Out, LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpEps<A> logaddexp_eps_triple_tiny_max(
    const xsimd::batch<double, A>& m, const xsimd::batch<double, A>& s) noexcept {
    using B = xsimd::batch<double, A>;
    const LogaddexpExpTriple<A> es =
        logaddexp_exp_triple<Base>(xsimd::max(s, B(logaddexp_consts::far_d<Base>)));
    return logaddexp_eps_triple_from<Out>(es, logaddexp_triple_tiny_one_minus<Base>(m, -es.k));
}

}  // namespace detail
}  // namespace numfuse::kernels
