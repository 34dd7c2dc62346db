// logaddexp's screened first pass for results rounded to float32 (Out = float; the contract
// and the exact passes: kernels/logaddexp.hpp). float32 needs 24 bits of a result that
// float64 arithmetic carries to ~50: m + log1p(base^d) in plain float64 lanes (no pairs)
// settles the float32 rounding of every lane whose value is further than its error bound
// from a float32 rounding boundary, and a cheap test says which lanes those are. The others
// (results near zero, where m + L cancels, below 2^-126, within the bound of a boundary,
// infinities and NaNs) take the exact pass 1 and the near-zero passes as before.
//
// Method (a batch of x, y; base e, base 2 as noted), no table: m = max(x, y), a = |x - y|
// (rounded), E = base^z, z = -min(a, A) (A = 200, base 2: 290; E stays a normal double and
// the clamp moves E by less than 2^-288): z = k ln2 + t (base 2: k + t/ln2), k = round(z /
// ln2) (round(z)), t = (z - k c1) - k c2 (c1 = ln2's 38-bit head, k c1 and the difference
// exact; base 2: (z - k) ln2, z - k exact), |t| <= ln2/2 (1 + 2^-40); e^t = 1 + (t + t^2
// P(t)), Taylor to t^13; E = 2^k e^t. L = log(1 + E): 1 + E = uh + ul exactly (E <= 1),
// h = 1 where uh >= sqrt(2) (else 0), w = uh 2^-h, f = (w - 1) + ul 2^-h (w - 1 exact),
// log1p(f) = 2 atanh(v), v = f / (2 + f), |v| <= 0.1718, = 2v + v^3 R(v^2), Taylor to v^19;
// L = h ln2 + log1p(f) (ln2 as a pair), base 2 times log2(e) rounded; r = m + L rounded once.
//
// Error bound, relative to L (first order; what is left out fits in the constants' slack):
//   E: t within 2^-54 (its rounding, n c3 < 2^-83.8 left out; base 2: ln2's rounding),
//   Taylor's remainder below 2^-57.2, P's roundings (2^-55.4), t + t^2 P's (2^-54.3) and 1
//   + that's (2^-52.5) sum to 2^-51.5 absolute on e^t >= 0.707: 2^-51 relative; a's
//   rounding (2^-53 a) adds 2^-53 a. Where a > A the true E is below 2^-288.5, and so is E.
//   L: f to 2^-53 relative (one rounding), v to 2^-51.3 (f's, 2 + f's and the division's),
//   Taylor's remainder below 2^-55.2 v, the rest of R's evaluation 2^-57: log1p(f) within
//   2^-50.66 of itself; where h = 1, L >= log(sqrt(2)) >= |log1p(f)| and the two additions'
//   roundings bring it to 2^-50.2 L; base 2's product by log2(e) (with log2(e)'s own
//   rounding) to 2^-49.85 L. An error of e in E moves L by e / (1 + E) <= (e / E) L (log(1
//   + E) >= E / (1 + E)): the computed L is within L (2^-49.31 + 2^-53 a) + 2^-288 of the
//   true one, at every level (without FMA, sse2, every fused step above is a product
//   rounded then an exact or tiny addition: no step loses more than the slack below).
//   r: m is exact, m + L rounded adds 2^-53 |r|.
// Certification: in r's binade [2^e, 2^(e+1)) the float32 rounding boundaries (midpoints of
// its 2^(e-23) grid) are the doubles whose low 29 mantissa bits are 2^28, so D = |low29(r)
// - 2^28| is r's distance to the nearest in units of ulp(r) > 2^-53 |r|; the boundaries of
// the binades beside it lie at least 2^27 ulp(r) from r. The float32 rounding of the true
// value is the rounding of r where its distance from r (below 2^-53 |r| + err, err the L
// term above) is below min(D, 2^27) ulp(r): where 2^53 err < (min(D, 2^27) - 1) |r|. The
// test asks (min(D, 2^27) - 3) |r| > L (16 + 2 a) (2^53 2^-49.31 = 12.9 < 16, 2^53 2^-53 = 1
// < 2: slack for the test's own roundings, 2^-52 relative each), the two extra ulps
// covering the 2^-288 (below 2^-162 |r| where |r| >= 2^-126). Certified lanes are correctly
// rounded to float32. Lanes also need |r| >= 2^-126 (a float32 normal result, r a normal
// double) and a finite a (no NaN or infinity among x, y: those keep pass 1's special
// values).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/logaddexp_tables.hpp"

namespace numfuse::kernels {
namespace detail {

// 1/n! for n = 9..13 (the Taylor terms of e^t past pass 1's), rounded to double.
inline constexpr double logaddexp_f32_inv_fact[5] = {
    logaddexp_consts::inverse_factorial_pair(9).hi, logaddexp_consts::inverse_factorial_pair(10).hi,
    logaddexp_consts::inverse_factorial_pair(11).hi,
    logaddexp_consts::inverse_factorial_pair(12).hi,
    logaddexp_consts::inverse_factorial_pair(13).hi};

template <class A>
struct LogaddexpScreened {
    xsimd::batch<double, A> result;
    xsimd::batch_bool<double, A> certified;
};

// The screened first pass on a batch (see the top of this file): the result in float64
// (its float32 rounding is the value's where certified) and the certified lanes.
template <LogBase Base, class A>
NUMFUSE_ALWAYS_INLINE LogaddexpScreened<A> logaddexp_screened_f32(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    namespace c = logaddexp_consts;
    const B m = xsimd::max(x, y);
    const B a = xsimd::abs(x - y);
    const B z = -xsimd::min(a, B(Base == LogBase::e ? 200.0 : 290.0));
    // base^z = 2^k e^t (see the top of this file); c1, c2 = 16 times ln2/16's first two
    // parts (k c1 exact: c1 has 38 bits, |k| <= 290).
    const B shifter(0x1.8p52);
    const B kz = dd::fmadd(z, B(Base == LogBase::e ? exp_consts<double>::inv_ln2 : 1.0), shifter);
    const B k = kz - shifter;
    B t;
    if constexpr (Base == LogBase::e) {
        t = dd::fnmadd(k, B(16.0 * c::ln2_over_16.c2),
                       dd::fnmadd(k, B(16.0 * c::ln2_over_16.c1), z));
    } else {
        t = (z - k) * B(c::ln2_pair.hi);
    }
    // P(t) = P0(t) + t^6 P1(t): two short chains, not one of 12 steps.
    const B t2 = t * t;
    const B t6 = t2 * t2 * t2;
    const B p0 = dd::horner(t, 0.5, c::inv_fact[3].hi, c::inv_fact[4].hi, c::inv_fact[5].hi,
                            c::inv_fact[6].hi, c::inv_fact[7].hi);
    const B p1 =
        dd::horner(t, c::inv_fact_8, logaddexp_f32_inv_fact[0], logaddexp_f32_inv_fact[1],
                   logaddexp_f32_inv_fact[2], logaddexp_f32_inv_fact[3], logaddexp_f32_inv_fact[4]);
    const B poly = dd::fmadd(t6, p1, p0);
    const B e = (B(1.0) + dd::fmadd(t2, poly, t)) * pow2i(k);

    // log(1 + E) = h ln2 + log1p(f): 1 + E = uh + ul exactly (E <= 1), w = uh 2^-h in
    // [sqrt(1/2), sqrt(2)], f = w - 1 + ul 2^-h (w - 1 exact), log1p(f) = 2 atanh(v), v = f
    // / (2 + f), |v| <= 0.172: 2v + v^3 R(v^2), Taylor to v^19 (see the top of this file).
    const B uh = B(1.0) + e;
    const B ul = e - (uh - B(1.0));
    const auto top = uh >= B(0x1.6a09e667f3bcdp0);
    const B half = xsimd::select(top, B(0.5), B(1.0));
    const B f = dd::fmadd(ul, half, dd::fmadd(uh, half, B(-1.0)));
    const B v = f / (B(2.0) + f);
    const B v2 = v * v;
    // R(w) = R0(w) + w^4 R1(w), w = v^2: two short chains.
    const B v8 = (v2 * v2) * (v2 * v2);
    const B r_poly =
        dd::fmadd(v8, dd::horner(v2, 2.0 / 11.0, 2.0 / 13.0, 2.0 / 15.0, 2.0 / 17.0, 2.0 / 19.0),
                  dd::horner(v2, 2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0));
    const B l1p = dd::fmadd(v * v2, r_poly, v + v);
    B l = xsimd::select(top, B(c::ln2_pair.hi) + (l1p + B(c::ln2_pair.lo)), l1p);
    if constexpr (Base == LogBase::two) l = l * B(c::log2e_pair.hi);
    const B r = m + l;

    // D = |low29(r) - 2^28| as a double: the low bits put into 2^52's mantissa.
    const I low = as_int(r) & I((std::int64_t(1) << 29) - 1);
    const B two52(0x1.0p52);
    const B dist = xsimd::abs((as_float<double, A>(low | as_int(two52)) - two52) - B(0x1.0p28));
    const B ra = xsimd::abs(r);
    const B err = l * dd::fmadd(a, B(2.0), B(16.0));
    const auto certified = (a <= B(0x1.fffffffffffffp1023)) & (ra >= B(0x1.0p-126)) &
                           ((xsimd::min(dist, B(0x1.0p27)) - B(3.0)) * ra > err);
    return {r, certified};
}

}  // namespace detail
}  // namespace numfuse::kernels
