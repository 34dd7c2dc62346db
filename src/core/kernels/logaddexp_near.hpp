// The near-zero lanes of logaddexp (kernels/logaddexp.hpp has the contract and the
// method): pass 2, eps = e^x + e^y - 1 in double-double (logaddexp_eps_dd) and its
// log1p (logaddexp_log1p_eps); pass 3, the lanes pass 2 cannot certify, in 128/192/384-bit
// fixed point (logaddexp_eps_fixed, one lane at a time); and LogaddexpNearZeroLanes, which
// gathers such lanes across batches and runs both passes on them a batch at a time.
#pragma once

#include <xsimd/xsimd.hpp>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/exp.hpp"
#include "kernels/fixed_point.hpp"
#include "kernels/hyperbolic.hpp"
#include "kernels/logaddexp_tables.hpp"
#include "kernels/logaddexp_triple.hpp"
#include "kernels/logpair.hpp"

namespace numfuse::kernels {
namespace detail {

// Pass 2 certifies |D| >= this. D's error is below 2^-96.3, so a certified eps is within
// 2^-54.3 relative for float64 (float32: 2^-32.3 before the float32 rounding); with
// log1p's 2^-60 (logaddexp_log1p_eps) the result is within 0.5 + 2^53 (2^-54.3 + 2^-60) <
// 0.92 ULP (float32: 0.5 + 2^-8). The float64 threshold trades bits for time: pass 3 costs
// more than pass 2 itself, and a spanning set's perturbed nearest pairs have |D| from
// 2^-53 up, so each binade below 2^-38 keeps about a tenth of pass 3's lanes out of it.
template <class Out>
inline constexpr double logaddexp_certified_d =
    std::is_same<Out, float>::value ? 0x1.0p-64 : 0x1.0p-42;
// Below this |t| logaddexp_expm1_dd runs its terms from t^2 on at 0.
inline constexpr double logaddexp_tiny_max = 0x1.0p-400;
// Pass 2's lanes with |m| below this go through logaddexp_eps_dd_tiny_max, which leaves
// out e^m: 1 - e^m = -m (1 + m/2 + ...) is -m to 2^-110.9 relative there (base 2: 1 - 2^m
// is -m ln2 to 2^-111.4), far below pass 2's 2^-104 (logaddexp_eps_dd_tiny_max's bound).
// Most near-zero lanes of spanning inputs have such maxima (log-uniform ones: 2^-1014 to
// 0.69), and e^m in double-double is most of the general lanes' cost.
inline constexpr double logaddexp_small_max = 0x1.0p-110;
// dd::mul without its closing fast_two_sum: the same two_prod and low part, so the same
// value (fast_two_sum is exact) and error, as an unnormalised pair (|lo| <= ~2^-51 |hi|),
// for a product that only feeds a sum which normalises (a fast_two_sum of a larger term
// and hi, lo added to its low part): one dependent two-sum less on pass 2's Horner chain.
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> logaddexp_mul_unnormalised(
    const dd::pair<A>& x, const xsimd::batch<double, A>& y) noexcept {
    const dd::pair<A> p = dd::two_prod(x.hi, y);
    return {p.hi, dd::fmadd(x.lo, y, p.lo)};
}
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> logaddexp_mul_unnormalised(const dd::pair<A>& x,
                                                             const dd::pair<A>& y) noexcept {
    const dd::pair<A> p = dd::two_prod(x.hi, y.hi);
    return {p.hi, p.lo + (x.hi * y.lo + x.lo * y.hi)};
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
    // Below |x| = 2^-400 the terms from x^2 on (and t.lo x) are below 2^-400 relative, far
    // under the pair's precision, and their products would underflow, each a microcode
    // assist (exp.hpp): they run on 0 there (the near-zero lanes of tiny max).
    const B xq = xsimd::select(xsimd::abs(x) < B(logaddexp_tiny_max), B(0.0), x);
    const B tail = dd::horner(xq, c::inv_fact_8, c::inv_fact_9, c::inv_fact_10, c::inv_fact_11,
                              c::inv_fact_12, c::inv_fact_13, c::inv_fact_14);
    // h = 1/7! + x tail, then h = 1/n! + x h for n = 6 .. 2: h = (e^x - 1 - x) / x^2. The
    // products x h and x^2 h are left unnormalised (logaddexp_mul_unnormalised): the sums
    // after them normalise, and their values are dd::mul's.
    dd::pair<A> h = dd::fast_two_sum(B(c::inv_fact[7].hi), xq * tail);
    h.lo = h.lo + B(c::inv_fact[7].lo);
    for (int n = 6; n >= 2; --n) {
        const dd::pair<A> xh = logaddexp_mul_unnormalised(h, xq);
        const dd::pair<A> sum = dd::fast_two_sum(B(c::inv_fact[n].hi), xh.hi);
        h = {sum.hi, sum.lo + (B(c::inv_fact[n].lo) + xh.lo)};
    }
    // x^2 h <= |x| 2^-6.5
    const dd::pair<A> q = logaddexp_mul_unnormalised(dd::two_prod(xq, xq), h);
    const dd::pair<A> p = dd::fast_two_sum(x, q.hi);
    const B lo = p.lo + q.lo;
    const B pq = xsimd::select(xq == B(0.0), B(0.0), p.hi);
    return dd::fast_two_sum(p.hi, lo + dd::fmadd(t.lo, pq, t.lo));
}

// t, a pair, with e^x = 2^(n/16) e^t (base 2: 2^x = 2^(n/16) e^t), n = round(16 x / ln2)
// (base 2: round(16 x)), to 2^-104 relative (pass 2's reduction).
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> logaddexp_reduce_dd(const xsimd::batch<double, A>& x,
                                                      const xsimd::batch<double, A>& n) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    if constexpr (Base == LogBase::e) {
        // x - n c1 is exact: n c1 is (15 + 38 bits), and x - n c1 is a multiple of ulp(x)
        // below 2^-5 in magnitude (ulp(x) >= 2^-58 where n != 0).
        const B t1 = dd::fnmadd(n, B(c::ln2_over_16.c1), x);
        const dd::pair<A> nc2 = dd::two_prod(n, B(c::ln2_over_16.c2));
        const dd::pair<A> t0 = dd::two_sum(t1, -nc2.hi);
        return {t0.hi, t0.lo - dd::fmadd(n, B(c::ln2_over_16.c3), nc2.lo)};
    } else {
        return logaddexp2_reduced(x, n, B(0.0));
    }
}

template <class A>
struct LogaddexpExpParts {
    xsimd::batch<double, A> k;   // e^x = 2^k v
    xsimd::batch<double, A> n;   // 16 k + j
    dd::pair<A> p;               // e^t - 1
    dd::pair<A> v;               // T_j (1 + p), in [2^-(1/32), 2^(1 + 1/32)]
};

// e^x (Base e, |x| <= 746) or 2^x (Base two, |x| <= 1076) as 2^k v (see the contract,
// pass 2).
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpExpParts<A> logaddexp_exp_dd(
    const xsimd::batch<double, A>& x) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    B n, k;
    xsimd::batch<std::int64_t, A> j;
    logaddexp_index16<Base>(x, n, k, j);
    const dd::pair<A> p = logaddexp_expm1_dd(logaddexp_reduce_dd<Base>(x, n));
    const Table16Entry<A, 2> te = lookup16(c::exp2_table, j);
    const dd::pair<A> tj = {te.v[0], te.v[1]};
    const dd::pair<A> tp = dd::mul(tj, p);  // |T_j p| < T_j / 45
    const dd::pair<A> v0 = dd::fast_two_sum(tj.hi, tp.hi);
    const dd::pair<A> v = dd::fast_two_sum(v0.hi, v0.lo + (tj.lo + tp.lo));
    return {k, n, p, v};
}

// eps from e^s's parts and a = 1 - e^m (base 2: 2^s, 1 - 2^m) as pairs: D = v_s - a 2^-k_s.
template <class Out, LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpEps<A> logaddexp_eps_from(
    const LogaddexpExpParts<A>& es, const dd::pair<A>& a,
    const xsimd::batch<double, A>& m) noexcept {
    using B = xsimd::batch<double, A>;
    // D = v_s - a 2^-k_s: exact scaling, then the cancellation in pair arithmetic.
    dd::pair<A> v2 = {logaddexp_scale(a.hi, -es.k), logaddexp_scale(a.lo, -es.k)};
    if constexpr (Base == LogBase::two) {
        // Base 2, |m| < 2^-900: t = m ln2's low part would be subnormal (rounded to 2^-1074,
        // far coarser than the pair's 2^-104 relative), so a 2^-k_s is (m 2^-k_s) ln2 there,
        // m scaled first (exactly) and multiplied as a pair; (m ln2)^2 / 2 is below 2^-900
        // relative.
        const B ms = logaddexp_scale(m, -es.k);
        const dd::pair<A> ml = dd::two_prod(ms, B(logaddexp_consts::ln2_pair.hi));
        const dd::pair<A> scaled =
            dd::fast_two_sum(ml.hi, dd::fmadd(ms, B(logaddexp_consts::ln2_pair.lo), ml.lo));
        const auto tiny_m = xsimd::abs(m) < B(0x1.0p-900);
        v2 = {xsimd::select(tiny_m, -scaled.hi, v2.hi), xsimd::select(tiny_m, -scaled.lo, v2.lo)};
    }
    const dd::pair<A> diff = dd::two_sum(es.v.hi, -v2.hi);
    const dd::pair<A> d = dd::fast_two_sum(diff.hi, diff.lo + (es.v.lo - v2.lo));
    return {d, es.k, xsimd::abs(d.hi) >= B(logaddexp_certified_d<Out>)};
}

// eps = e^m + e^s - 1 = D 2^k (pass 2; base 2: 2^m + 2^s - 1) for the near-zero lanes
// (m in (-1.4, 0), s <= m);
// `certified` where |D| is large enough for Out.
template <class Out, LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpEps<A> logaddexp_eps_dd(const xsimd::batch<double, A>& m,
                                                       const xsimd::batch<double, A>& s) noexcept {
    using B = xsimd::batch<double, A>;
    const LogaddexpExpParts<A> es =
        logaddexp_exp_dd<Base>(xsimd::max(s, B(logaddexp_consts::far_d<Base>)));
    const LogaddexpExpParts<A> em = logaddexp_exp_dd<Base>(m);
    // 1 - e^m: -p where n = 0 (e^m = 1 + p), else 1 - 2^k v (k in {-2, -1, 0}).
    const B sk = pow2i(em.k);
    const dd::pair<A> far = dd::two_sum(B(1.0), -(sk * em.v.hi));
    const dd::pair<A> from_v = dd::fast_two_sum(far.hi, far.lo - sk * em.v.lo);
    const auto small = em.n == B(0.0);
    const dd::pair<A> a = {xsimd::select(small, -em.p.hi, from_v.hi),
                           xsimd::select(small, -em.p.lo, from_v.lo)};
    return logaddexp_eps_from<Out, Base>(es, a, m);
}

// logaddexp_eps_dd for lanes with |m| < logaddexp_small_max (pass 2's tiny-max lanes): e^m
// is not computed, 1 - e^m is taken as -t, t = m reduced with n = 0 (base e: (m, +0)
// exactly; base 2: m ln2 as a pair, to 2^-104). Below |m| = 2^-400 these are
// logaddexp_eps_dd's bits: there n = 0 and logaddexp_expm1_dd runs its terms from t^2 on
// at 0 (xq = 0: q = (+0, +0), p = (t.hi, +0), pq = 0), so that e^m - 1 is exactly the
// expression below, the same operations on the same t (which n's sign does not change:
// n c1, n c2 and n/16 are zeros subtracted from a nonzero m, and t.lo's zero, if any, is
// added to +0). Above 2^-400 the terms dropped, t^2/2 (1 + t/3 + ...), are below
// 2^-110.9 |t| (base 2: |t| <= 2^-110.5), so a = 1 - e^m carries a relative error below
// 2^-104 + 2^-110.9, the general path's 2^-104 bound (logaddexp_expm1_dd's) plus at most
// 2^-110.9: a 2^-k_s ~ v_s < 2.1 takes at most 2^-109.8 more into D, whose bound (2^-96.3,
// measured 2^-101.7) keeps its margin.
template <class Out, LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpEps<A> logaddexp_eps_dd_tiny_max(
    const xsimd::batch<double, A>& m, const xsimd::batch<double, A>& s) noexcept {
    using B = xsimd::batch<double, A>;
    const LogaddexpExpParts<A> es =
        logaddexp_exp_dd<Base>(xsimd::max(s, B(logaddexp_consts::far_d<Base>)));
    const dd::pair<A> t = logaddexp_reduce_dd<Base>(m, B(0.0));
    const dd::pair<A> p = dd::fast_two_sum(t.hi, B(0.0) + dd::fmadd(t.lo, B(0.0), t.lo));
    return logaddexp_eps_from<Out, Base>(es, dd::pair<A>{-p.hi, -p.lo}, m);
}

// log1p(eps) (base 2: log1p(eps) log2(e)) for eps = (d.hi + d.lo) 2^k, |eps| < 2^-60:
// eps (1 - eps/2 + ...) is eps to 2^-61, rounded once, subnormal results included
// (logaddexp_round_scaled). logaddexp_log1p_eps's value in such lanes.
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> logaddexp_log1p_tiny_eps(
    const dd::pair<A>& d0, const xsimd::batch<double, A>& k) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    const dd::pair<A> d = dd::fast_two_sum(d0.hi, d0.lo);  // |lo| <= ulp(hi) / 2
    // D (base 2: D log2(e), |lo| <= ulp(hi) / 2).
    const dd::pair<A> log2e = {B(c::log2e_pair.hi), B(c::log2e_pair.lo)};
    const dd::pair<A> dt = Base == LogBase::e ? d : dd::mul(d, log2e);
    return logaddexp_round_scaled(dt, k);
}

// log1p(eps) (base 2: log1p(eps) log2(e)) for eps = (d.hi + d.lo) 2^k, |eps| < 1 (passes
// 2 and 3), to 2^-60 relative before the final rounding.
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> logaddexp_log1p_eps(
    const dd::pair<A>& d0, const xsimd::batch<double, A>& k) noexcept {
    using B = xsimd::batch<double, A>;
    namespace c = logaddexp_consts;
    const dd::pair<A> d = dd::fast_two_sum(d0.hi, d0.lo);  // |lo| <= ulp(hi) / 2
    // e_hi, e_lo: eps with the scale held at 2^-900 or above. Below it |eps| < 2^-898 is
    // the tiny branch's, which reads neither, and the products would be subnormal (each a
    // microcode assist, exp.hpp).
    const B kc = xsimd::max(k, B(-900.0));
    const B e_hi = logaddexp_scale(d.hi, kc), e_lo = logaddexp_scale(d.lo, kc);
    const dd::pair<A> log2e = {B(c::log2e_pair.hi), B(c::log2e_pair.lo)};
    // |eps| < 2^-60: log1p(eps) = eps (1 - eps/2 + ...) is eps to 2^-61, rounded once.
    const B tiny = logaddexp_log1p_tiny_eps<Base>(d0, k);
    // |eps| < 2^-20: eps - eps^2/2 + eps^3/3 (drops eps^4/4 < 2^-60 eps). The log core of
    // 1 + eps would lose the second-order term of its low part here (1 + eps's rounding
    // error, up to 2^-53, squared: 2^-55 relative where eps ~ 2^-52).
    // The two branches below run on 0 in the tiny branch's lanes, where their products
    // would underflow (microcode assists) and their values are not used.
    const B a = xsimd::abs(e_hi);
    const auto tiny_lane = a < B(0x1.0p-60);
    const B eh = xsimd::select(tiny_lane, B(0.0), e_hi),
            el = xsimd::select(tiny_lane, B(0.0), e_lo);
    const B small_lo = el + (eh * eh) * dd::fmadd(eh, B(1.0 / 3.0), B(-0.5));
    B small = eh + small_lo;
    if constexpr (Base == LogBase::two) small = dd::mul(dd::fast_two_sum(eh, small_lo), log2e).hi;
    const B below = xsimd::select(tiny_lane, tiny, small);
    const auto large = a >= B(0x1.0p-20);
    // Else (|eps| >= 2^-20) the log core of the pair 1 + eps (in (1/2, 2)), computed only
    // for batches that hold such a lane (the same bits: it is selected nowhere else). A
    // near-zero lane's |eps| is about its |result| < |m| / 64, so lanes of |m| below 2^-14
    // never need it, and most near-zero lanes of spanning inputs have smaller maxima.
    if (!xsimd::any(large)) return below;
    const dd::pair<A> u = dd::two_sum(B(1.0), eh);
    dd::pair<A> l = log_pair(log_core(u.hi, u.lo + el));
    if constexpr (Base == LogBase::two) l = dd::mul(l, log2e);
    return xsimd::select(large, l.hi + l.lo, below);
}

// Pass 3 (scalar): eps = e^m + e^s - 1 (base 2: 2^m + 2^s - 1) in N-limb fixed point, as
// (hi + lo) 2^exponent;
// `certified` unless |eps| < 2^(72 - 64 N) 2^(exponent - 2) (see the contract). Templated on
// the architecture so that each level keeps its own copy (fixed_point.hpp says why).
struct LogaddexpExactEps {
    double hi, lo;
    int exponent;
    bool certified;
};
template <class A, int N, LogBase Base = LogBase::e>
LogaddexpExactEps logaddexp_eps_fixed(double m, double s) noexcept {
    using F = fixed::Fraction<N>;
    namespace c = logaddexp_consts;
    constexpr int bits = 64 * N + 4;
    const F& ln2 = c::ln2_fraction<N>;
    const auto& inv = c::inverse_factorials<N>;

    // Base e: x = q ln2 - |s| in [0, ln2) (q ln2 is below ln2 by at most q < 2^11 units).
    // Base 2: x = (q - |s|) ln2, q = ceil(|s|) (q - |s| exact: 2 units of error).
    const double as = -s;
    const auto bi = static_cast<std::uint64_t>(as);
    const F bf = fixed::from_double<N>(as - static_cast<double>(bi));
    auto q = static_cast<std::uint64_t>(as * 1.4426950408889634) + 1;
    F x;
    if constexpr (Base == LogBase::two) {
        q = bi + (fixed::is_zero(bf) ? 0 : 1);
        x = fixed::mul(fixed::sub(F{}, bf), ln2);  // (1 - bf) mod 1, times ln2
    } else {
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
    // Base 2: 1 - 2^m = 1 - e^-z, z = mu ln2 = (M ln2) 2^e1, M ln2 in [0.34, 0.7): the
    // same with mfrac M ln2 (one more truncation) and z C(z) by a fraction product.
    if constexpr (Base == LogBase::two) mfrac = fixed::mul(mfrac, ln2);
    const auto one_minus_exp = [&](const F& z, double zd, int b, int scale) {
        // z (1 - z C(z)) for z = zd < 2^-b, given as a fraction (z) and a double (zd);
        // base 2: z 2^scale (scale <= 0) for a fraction z, zd unused.
        const int terms = c::series_terms(b, bits, 2);
        const auto times_z = [&](const F& v) {
            if constexpr (Base == LogBase::e) {
                return fixed::mul_decomposed(v, fixed::decompose(zd));
            } else {
                return fixed::shift_right(fixed::mul(v, z), static_cast<unsigned>(-scale));
            }
        };
        F cz = inv.f[terms + 2];
        for (int j = terms - 1; j >= 0; --j) cz = fixed::sub(inv.f[j + 2], times_z(cz));
        return fixed::sub(z, fixed::mul(z, times_z(cz)));
    };
    F a_s;
    int ea = 0;
    if (e1 <= -7) {
        a_s = one_minus_exp(mfrac, mu, -e1, e1);  // = (1 - e^-mu) 2^-e1
        ea = e1;
    } else {
        // u = mu 2^-r in [2^-8, 2^-7), then r doublings a -> 2 a - a^2 (1 - e^-2z).
        const int r = e1 + 7;
        F a = one_minus_exp(fixed::shift_right(mfrac, 7), mu * fixed::pow2(-r), 7, 0);
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

// The scalar pass for one lane, where the triple-double pass cannot certify |D| (below
// 2^-81, where 128 bits, certifying 2^-56, cannot either): 192 bits (0.55 us), then 384.
template <class A, LogBase Base>
LogaddexpExactEps logaddexp_eps_exact(double m, double s) noexcept {
    const LogaddexpExactEps e = logaddexp_eps_fixed<A, 3, Base>(m, s);
    if (e.certified) return e;
    const LogaddexpExactEps wide = logaddexp_eps_fixed<A, 6, Base>(m, s);
    return wide.hi != 0.0 ? wide : e;
}

// The lanes of `b` as bits (bit k: lane k): one movemask at sse2 and avx2_fma, the mask
// register itself at AVX-512, lane by lane elsewhere (neon64).
template <class A>
NUMFUSE_ALWAYS_INLINE std::uint64_t logaddexp_lane_bits(
    const xsimd::batch_bool<double, A>& b) noexcept {
#if defined(__AVX512F__)
    if constexpr (std::is_base_of<xsimd::avx512f, A>::value) {
        return static_cast<std::uint64_t>(b.data);
    } else
#endif
#if defined(__AVX__)
        if constexpr (std::is_base_of<xsimd::avx, A>::value) {
        return static_cast<std::uint64_t>(_mm256_movemask_pd(b.data));
    } else
#endif
#if defined(__SSE2__)
        if constexpr (std::is_base_of<xsimd::sse2, A>::value) {
        return static_cast<std::uint64_t>(_mm_movemask_pd(b.data));
    } else
#endif
    {
        using B = xsimd::batch<double, A>;
        alignas(64) double lanes[B::size];
        xsimd::select(b, B(1.0), B(0.0)).store_aligned(lanes);
        std::uint64_t bits = 0;
        for (std::size_t k = 0; k < B::size; ++k) {
            bits |= static_cast<std::uint64_t>(lanes[k] != 0.0) << k;
        }
        return bits;
    }
}

// Lanes (max, min, where the result goes) waiting for a pass that runs full batches: the
// lanes [head, count); a run takes them from head, and the lanes left are moved to the
// front once after a queue's runs (compact). Capacity: see LogaddexpNearZeroLanes.
template <std::size_t Width, std::size_t Capacity>
struct LogaddexpLaneQueue {
    double m[Capacity];
    double s[Capacity];
    std::size_t at[Capacity];
    std::size_t count = 0;
    std::size_t head = 0;

    std::size_t size() const noexcept { return count - head; }
    // The first `lanes` lanes from head as batch arrays (the rest repeats the first).
    void fill(double* ms, double* ss, std::size_t lanes) const noexcept {
        for (std::size_t k = 0; k < Width; ++k) {
            ms[k] = m[head + (k < lanes ? k : 0)];
            ss[k] = s[head + (k < lanes ? k : 0)];
        }
    }
    // One lane at the end (the queue has room: see the runs that empty it).
    void push(double max, double min, std::size_t place) noexcept {
        m[count] = max, s[count] = min, at[count] = place;
        ++count;
    }
    // After the runs that advanced head: the lanes left moved to the front, once.
    void compact() noexcept {
        for (std::size_t k = head; k < count; ++k) {
            m[k - head] = m[k], s[k - head] = s[k], at[k - head] = at[k];
        }
        count -= head;
        head = 0;
    }
};

// First-pass results below this times |m| send a near-zero lane straight to the triple-
// double pass (float64 results; float32's pass 2 certifies far deeper, 2^-64): a
// prediction that pass 2 would not certify it (see add_lane), never needed for a bound.
template <class Out>
inline constexpr double logaddexp_direct_deep = std::is_same<Out, float>::value ? 0.0 : 0x1.8p-43;

// Near-zero lanes gathered from consecutive batches and recomputed a full batch at a time
// (pass 2); the lanes pass 2 cannot certify are gathered again for the triple-double pass
// (logaddexp_triple.hpp), and the few it cannot certify computed in fixed point, one at a
// time. Results go straight to their place in `out` (a lane of the triple pass after pass
// 2 wrote its uncertified value there). A lane's route is computed branch-free, and the
// lanes are visited after a block's first pass, never inside its loop: a mispredicted
// branch there would drain the first pass's long dependency chains of the batches in
// flight (measured: ~40 ns per near-zero lane).
template <class Out, LogBase Base, class A>
class LogaddexpNearZeroLanes {
    using B = xsimd::batch<double, A>;
    static constexpr std::size_t width = B::size;

public:
    // The first pass's block (logaddexp_base_array): its near-zero lanes join the queues
    // before any runs.
    static constexpr std::size_t block = 32 * width;

private:
    using Queue = LogaddexpLaneQueue<width, block + 4 * width>;

public:
    explicit LogaddexpNearZeroLanes(double* out) noexcept : out_(out) {}

    // The lanes of `near` of a batch: max and min of its arguments m and s, its first-pass
    // results r, their places out[base] (logaddexp_base_one's batch).
    NUMFUSE_NOINLINE void add(const B& m, const B& s, const B& r,
                              const xsimd::batch_bool<double, A>& near, std::size_t base) noexcept {
        alignas(64) double ms[width], ss[width], rs[width];
        m.store_aligned(ms);
        s.store_aligned(ss);
        r.store_aligned(rs);
        for (std::uint64_t bits = logaddexp_lane_bits(near); bits != 0; bits &= bits - 1) {
            const auto k = static_cast<std::size_t>(__builtin_ctzll(bits));
            add_lane(ms[k], ss[k], rs[k], base + k);
        }
        after_batch();
    }

    // One near-zero lane (max m < 0, min s, first-pass result r, its place out[at]) to the
    // queue of its pass, branch-free. float64 lanes with |r| < 0.75 2^-42 |m| go straight
    // to the triple-double pass, which pass 2 would almost never certify: |D| = |eps|
    // 2^-k_s ~ |eps| v_s / (1 - e^m) (e^s = 2^k_s v_s ~ 1 - e^m), v_s in [0.98, 2.05], (1 -
    // e^m) / |m| in [0.72, 1] (base 2: (1 - 2^m) / (|m| ln2)) and |eps| ~ |r| (base 2: |r|
    // ln2), so |D| ~ (|r| / |m|) c, c mostly near 1 (on compare_domains' spanning set:
    // 98-99% of pass 3's lanes routed so, 1-3% of the routed ones certifiable by pass 2).
    // The route is a prediction only: pass 3 keeps every near-zero lane within its bound
    // (tighter than pass 2's), and a lane's route depends on that lane alone. At most
    // `block` lanes between two runs of the queues (after_batch, after_block: the queues'
    // room).
    NUMFUSE_ALWAYS_INLINE void add_lane(double m, double s, double r, std::size_t at) noexcept {
        const double am = -m;
        const auto deep = static_cast<std::size_t>(std::abs(r) < am * logaddexp_direct_deep<Out>);
        const auto tiny_max = static_cast<std::size_t>(am < logaddexp_small_max);
        const auto triple_tiny = static_cast<std::size_t>(am < logaddexp_triple_tiny_max);
        // general 0, tiny 1; deep_general 2, deep_tiny 3.
        const std::size_t route = deep * (deep_general + triple_tiny) + (1 - deep) * tiny_max;
        queues_[route].push(m, s, at);
    }

    // Runs the queues that hold full runs, after a batch's lanes (add) or a block's
    // (logaddexp_base_array).
    void after_batch() noexcept { run_full(); }
    void after_block() noexcept { run_full(); }

    void finish() noexcept {
        // Pass 2's queues first: their uncertified lanes join the triple pass's.
        finish_two<false>(queues_[general]);
        finish_two<true>(queues_[tiny]);
        finish_deep<false>(queues_[deep_general]);
        finish_deep<true>(queues_[deep_tiny]);
    }

private:
    // The queues: pass 2 (general), pass 2 of tiny max (|m| < logaddexp_small_max), the
    // triple pass (deep_general) and the triple pass of tiny max (|m| <
    // logaddexp_triple_tiny_max). A lane goes to queues_[its route] by index: no branch per
    // lane. Each holds below 2 width lanes after its runs; before them, at most `block`
    // more from add_lane, and a triple pass's queue at most 2 width more from one run of
    // pass 2 (run_two: it runs the triple pass's queues before it returns), so `block` + 4
    // width lanes is room enough.
    enum Route : std::size_t { general, tiny, deep_general, deep_tiny, routes_count };
    static_assert(general == 0 && tiny == 1 && deep_tiny == deep_general + 1,
                  "add_lane computes a route from these values");

    // A pass's uncertified lanes to the triple pass, the one place a lane joins it after
    // pass 1: the lanes of `uncertified` among the first `count` of (m, s) to the triple
    // pass's queue of their max (deep_tiny below logaddexp_triple_tiny_max), with their
    // places at[k], in order; the certified lanes join no queue.
    void push_deep(const B& m, const B& s, const xsimd::batch_bool<double, A>& uncertified,
                   const std::size_t* at, std::size_t count) noexcept {
        alignas(64) double ms[width], ss[width], rs[width];
        m.store_aligned(ms);
        s.store_aligned(ss);
        xsimd::select(xsimd::abs(m) < B(logaddexp_triple_tiny_max), B(double(deep_tiny)),
                      B(double(deep_general)))
            .store_aligned(rs);
        std::uint64_t bits = logaddexp_lane_bits(uncertified);
        if (count < width) bits &= (std::uint64_t(1) << count) - 1;
        for (; bits != 0; bits &= bits - 1) {
            const auto k = static_cast<std::size_t>(__builtin_ctzll(bits));
            queues_[static_cast<std::size_t>(rs[k])].push(ms[k], ss[k], at[k]);
        }
    }

    // Runs the triple pass's queues, then pass 2's, two batches at a time while they hold
    // two (the triple pass's first, so that they have room for pass 2's uncertified lanes).
    void run_full() noexcept {
        run_full_deep();
        run_pairs<false>(queues_[general]);
        run_pairs<true>(queues_[tiny]);
    }
    template <bool TinyMax>
    void run_pairs(Queue& queue) noexcept {
        while (queue.size() >= 2 * width) {
            run_two<TinyMax>(queue);
            queue.head += 2 * width;
        }
        queue.compact();
    }
    // Pass 2 on every lane left in `queue`.
    template <bool TinyMax>
    void finish_two(Queue& queue) noexcept {
        while (queue.size() >= width) {
            run<TinyMax>(queue, width);
            queue.head += width;
        }
        if (queue.size() != 0) run<TinyMax>(queue, queue.size());
        queue.head = queue.count = 0;
    }
    // run<TinyMax> on the two batches at the head of `queue`, bit for bit, side by side: pass 2
    // is one long dependency chain per batch, and two independent chains in one block of
    // code keep the floating-point units busy where one waits on latency.
    template <bool TinyMax>
    void run_two(Queue& queue) noexcept {
        const double* qm = queue.m + queue.head;
        const double* qs = queue.s + queue.head;
        const std::size_t* at = queue.at + queue.head;
        const B m0 = B::load_unaligned(qm), s0 = B::load_unaligned(qs);
        const B m1 = B::load_unaligned(qm + width), s1 = B::load_unaligned(qs + width);
        alignas(64) double r0[width], r1[width];
        LogaddexpEps<A> e0, e1;
        if constexpr (TinyMax) {
            e0 = logaddexp_eps_dd_tiny_max<Out, Base>(m0, s0);
            e1 = logaddexp_eps_dd_tiny_max<Out, Base>(m1, s1);
            logaddexp_log1p_tiny_eps<Base>(e0.d, e0.k).store_aligned(r0);
            logaddexp_log1p_tiny_eps<Base>(e1.d, e1.k).store_aligned(r1);
        } else {
            e0 = logaddexp_eps_dd<Out, Base>(m0, s0);
            e1 = logaddexp_eps_dd<Out, Base>(m1, s1);
            logaddexp_log1p_eps<Base>(e0.d, e0.k).store_aligned(r0);
            logaddexp_log1p_eps<Base>(e1.d, e1.k).store_aligned(r1);
        }
        for (std::size_t k = 0; k < width; ++k) {
            out_[at[k]] = r0[k];
            out_[at[width + k]] = r1[k];
        }
        if (xsimd::all(e0.certified) && xsimd::all(e1.certified)) return;
        push_deep(m0, s0, !e0.certified, at, width);
        push_deep(m1, s1, !e1.certified, at + width, width);
        run_full_deep();
    }
    void run_full_deep() noexcept {
        run_deep_pairs<false>(queues_[deep_general]);
        run_deep_pairs<true>(queues_[deep_tiny]);
    }
    template <bool TinyMax>
    void run_deep_pairs(Queue& queue) noexcept {
        while (queue.size() >= 2 * width) {
            run_deep_two<TinyMax>(queue);
            queue.head += 2 * width;
        }
        queue.compact();
    }

    // Pass 2 on `count` lanes from the head of `queue` (general, or tiny for TinyMax: every lane
    // has |m| < logaddexp_small_max); its uncertified lanes to the triple pass. TinyMax
    // lanes take logaddexp_eps_dd_tiny_max and logaddexp_log1p_tiny_eps, whose log1p is
    // logaddexp_log1p_eps's there: |eps| < |m| / 63 < 2^-115 (a near-zero lane's), and
    // where k < -900, |eps| 2^900 <= |D| < 4 (e^s and 1 - e^m agree to a few units of 2^k).
    template <bool TinyMax>
    void run(Queue& queue, std::size_t count) noexcept {
        alignas(64) double ms[width], ss[width];
        queue.fill(ms, ss, count);
        const B m = B::load_aligned(ms), s = B::load_aligned(ss);
        alignas(64) double r[width];
        LogaddexpEps<A> e;
        if constexpr (TinyMax) {
            e = logaddexp_eps_dd_tiny_max<Out, Base>(m, s);
            logaddexp_log1p_tiny_eps<Base>(e.d, e.k).store_aligned(r);
        } else {
            e = logaddexp_eps_dd<Out, Base>(m, s);
            logaddexp_log1p_eps<Base>(e.d, e.k).store_aligned(r);
        }
        const std::size_t* at = queue.at + queue.head;
        for (std::size_t k = 0; k < count; ++k) out_[at[k]] = r[k];
        if (xsimd::all(e.certified)) return;
        // The uncertified lanes to the triple pass (after the results above: the triple
        // pass overwrites them).
        push_deep(m, s, !e.certified, at, count);
        run_full_deep();
    }

    // The triple-double pass's eps of a batch (TinyMax: logaddexp_eps_triple_tiny_max, the
    // same bits), the scalar fixed-point pass on the first `count` lanes it cannot certify.
    template <bool TinyMax>
    NUMFUSE_ALWAYS_INLINE static LogaddexpEps<A> deep_eps(const B& m, const B& s) noexcept {
        if constexpr (TinyMax) {
            return logaddexp_eps_triple_tiny_max<Out, Base>(m, s);
        } else {
            return logaddexp_eps_triple<Out, Base>(m, s);
        }
    }
    static void deep_exact(LogaddexpEps<A>& e, const double* m, const double* s,
                           std::size_t count) noexcept {
        alignas(64) double hi[width], lo[width], k2[width];
        bool certified[width];
        e.d.hi.store_aligned(hi);
        e.d.lo.store_aligned(lo);
        e.k.store_aligned(k2);
        e.certified.store_unaligned(certified);
        for (std::size_t k = 0; k < count; ++k) {
            if (certified[k]) continue;
            const LogaddexpExactEps x = logaddexp_eps_exact<A, Base>(m[k], s[k]);
            if (x.hi == 0.0) continue;
            hi[k] = x.hi, lo[k] = x.lo, k2[k] = static_cast<double>(x.exponent);
        }
        e.d = {B::load_aligned(hi), B::load_aligned(lo)};
        e.k = B::load_aligned(k2);
    }
    // The result of a deep lane from its eps. TinyMax: |eps| < |m| / 63 < 2^-155 (a
    // near-zero lane's): logaddexp_log1p_eps's value there is logaddexp_log1p_tiny_eps's
    // (as in pass 2's tiny-max lanes).
    template <bool TinyMax>
    NUMFUSE_ALWAYS_INLINE static B deep_result(const LogaddexpEps<A>& e) noexcept {
        if constexpr (TinyMax) {
            return logaddexp_log1p_tiny_eps<Base>(e.d, e.k);
        } else {
            return logaddexp_log1p_eps<Base>(e.d, e.k);
        }
    }

    // The triple pass on every lane left in `queue` (fewer than two batches).
    template <bool TinyMax>
    void finish_deep(Queue& queue) noexcept {
        if (queue.size() >= width) {
            run_deep<TinyMax>(queue, width);
            queue.head += width;
        }
        if (queue.size() != 0) run_deep<TinyMax>(queue, queue.size());
        queue.head = queue.count = 0;
    }
    // The triple-double pass on `count` lanes from the head of `queue` (deep_general, or
    // deep_tiny for TinyMax), the scalar fixed-point pass on those it cannot certify.
    template <bool TinyMax>
    void run_deep(Queue& queue, std::size_t count) noexcept {
        alignas(64) double m[width], s[width];
        queue.fill(m, s, count);
        LogaddexpEps<A> e = deep_eps<TinyMax>(B::load_aligned(m), B::load_aligned(s));
        if (!xsimd::all(e.certified)) deep_exact(e, m, s, count);
        alignas(64) double r[width];
        deep_result<TinyMax>(e).store_aligned(r);
        const std::size_t* at = queue.at + queue.head;
        for (std::size_t k = 0; k < count; ++k) out_[at[k]] = r[k];
    }
    // run_deep on the two batches at the head of `queue`, bit for bit, side by side (as
    // run_two: the triple pass too is one long dependency chain per batch).
    template <bool TinyMax>
    void run_deep_two(Queue& queue) noexcept {
        const double* qm = queue.m + queue.head;
        const double* qs = queue.s + queue.head;
        const std::size_t* at = queue.at + queue.head;
        const B m0 = B::load_unaligned(qm), s0 = B::load_unaligned(qs);
        const B m1 = B::load_unaligned(qm + width), s1 = B::load_unaligned(qs + width);
        LogaddexpEps<A> e0 = deep_eps<TinyMax>(m0, s0);
        LogaddexpEps<A> e1 = deep_eps<TinyMax>(m1, s1);
        if (!(xsimd::all(e0.certified) && xsimd::all(e1.certified))) {
            deep_exact(e0, qm, qs, width);
            deep_exact(e1, qm + width, qs + width, width);
        }
        alignas(64) double r0[width], r1[width];
        deep_result<TinyMax>(e0).store_aligned(r0);
        deep_result<TinyMax>(e1).store_aligned(r1);
        for (std::size_t k = 0; k < width; ++k) {
            out_[at[k]] = r0[k];
            out_[at[width + k]] = r1[k];
        }
    }

    double* out_;
    Queue queues_[routes_count];
};

}  // namespace detail
}  // namespace numfuse::kernels
