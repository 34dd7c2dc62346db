// Double-double ("pair") arithmetic on float64 SIMD lanes (xsimd 8.1).
//
// The accurate kernels (trig.hpp, hyperbolic.hpp, logpair.hpp, invtrig.hpp)
// carry intermediate values as unevaluated sums hi + lo with |lo| <=
// ulp(hi)/2, about 106 bits, and round once at the end; that is what keeps
// their results within 1 ULP (typically ~0.5x) where a plain float64 chain
// of roundings would drift to 2-3 ULP.
//
// Contract: valid for finite operands whose products neither overflow nor
// underflow (the callers route extreme arguments around these helpers).
// two_prod is exact on every level: a fused multiply-subtract where the
// architecture has FMA (named as an intrinsic on AVX-512, where xsimd 8.1's
// fms is an unfused multiply and subtract), Dekker's split product
// (Veltkamp split) on SSE2.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>

#include "kernels/common.hpp"

namespace numfuse::kernels::dd {

template <class A>
using bd = xsimd::batch<double, A>;

template <class A>
struct pair {
    bd<A> hi, lo;
};

// s + e == a + b exactly (Knuth's two-sum, any magnitudes).
template <class A>
inline pair<A> two_sum(const bd<A>& a, const bd<A>& b) noexcept {
    const bd<A> s = a + b;
    const bd<A> bb = s - a;
    const bd<A> e = (a - (s - bb)) + (b - bb);
    return {s, e};
}

// s + e == a + b exactly, given |a| >= |b| (or a == 0).
template <class A>
inline pair<A> fast_two_sum(const bd<A>& a, const bd<A>& b) noexcept {
    const bd<A> s = a + b;
    return {s, b - (s - a)};
}

// p + e == a * b exactly (barring overflow / underflow).
template <class A>
inline pair<A> two_prod(const bd<A>& a, const bd<A>& b) noexcept {
    const bd<A> p = a * b;
#if defined(__AVX512F__)
    // xsimd 8.1 has no avx512 fma/fms of its own (its generic fallback is an
    // unfused multiply and add), so the instruction is named here.
    if constexpr (detail::is_avx512<A>) {
        return {p, bd<A>(_mm512_fmsub_pd(a, b, p))};
    } else
#endif
    if constexpr (detail::has_fma<A>) {
        return {p, xsimd::fms(a, b, p)};
    } else {
        const bd<A> split(134217729.0);  // 2^27 + 1
        const bd<A> ta = split * a, tb = split * b;
        const bd<A> ah = ta - (ta - a), al = a - ah;
        const bd<A> bh = tb - (tb - b), bl = b - bh;
        return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
    }
}

template <class A>
inline pair<A> add(const pair<A>& x, const pair<A>& y) noexcept {
    const pair<A> s = two_sum(x.hi, y.hi);
    return fast_two_sum(s.hi, s.lo + (x.lo + y.lo));
}

template <class A>
inline pair<A> add(const pair<A>& x, const bd<A>& y) noexcept {
    const pair<A> s = two_sum(x.hi, y);
    return fast_two_sum(s.hi, s.lo + x.lo);
}

template <class A>
inline pair<A> mul(const pair<A>& x, const pair<A>& y) noexcept {
    const pair<A> p = two_prod(x.hi, y.hi);
    return fast_two_sum(p.hi, p.lo + (x.hi * y.lo + x.lo * y.hi));
}

template <class A>
inline pair<A> mul(const pair<A>& x, const bd<A>& y) noexcept {
    const pair<A> p = two_prod(x.hi, y);
    return fast_two_sum(p.hi, xsimd::fma(x.lo, y, p.lo));
}

// x / y: one quotient, the exact remainder, one correction.
template <class A>
inline pair<A> div(const pair<A>& x, const pair<A>& y) noexcept {
    const bd<A> q = x.hi / y.hi;
    const pair<A> p = two_prod(q, y.hi);
    const bd<A> r = ((x.hi - p.hi) - p.lo + x.lo) - q * y.lo;  // x.hi - p.hi is exact
    return fast_two_sum(q, r / y.hi);
}

// sqrt(x) for x.hi > 0 (the caller selects the x == 0 lanes away).
template <class A>
inline pair<A> sqrt(const pair<A>& x) noexcept {
    const bd<A> s = xsimd::sqrt(x.hi);
    const pair<A> p = two_prod(s, s);
    const bd<A> r = ((x.hi - p.hi) - p.lo + x.lo) / (s + s);
    return fast_two_sum(s, r);
}

// Lanes where `use` is set get scalar_fn(x[k]) instead of result[k]: the
// rare-argument fallback of the SIMD kernels (huge trig arguments, ...).
template <class A, class F>
inline bd<A> scalar_lanes(const xsimd::batch_bool<double, A>& use, const bd<A>& x, const bd<A>& result,
                          F scalar_fn) noexcept {
    constexpr std::size_t n = bd<A>::size;
    alignas(64) double xs[n], rs[n];
    bool flags[n];
    x.store_aligned(xs);
    result.store_aligned(rs);
    use.store_unaligned(flags);
    for (std::size_t k = 0; k < n; ++k) {
        if (flags[k]) rs[k] = scalar_fn(xs[k]);
    }
    return bd<A>::load_aligned(rs);
}

}  // namespace numfuse::kernels::dd
