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
#include <cstdint>

#include "kernels/common.hpp"

// The pair helpers and the kernels built on them are small functions on registers;
// left to its heuristics GCC calls them out of line, passing the pairs through memory:
// they are NUMFUSE_ALWAYS_INLINE (common.hpp).

namespace numfuse::kernels::dd {

template <class A>
using bd = xsimd::batch<double, A>;

template <class A>
struct pair {
    bd<A> hi, lo;
};

// a * b + c, fused where the level has FMA (xsimd 8.1's avx512 fma is an
// unfused multiply and add, so the instruction is named there).
template <class A>
NUMFUSE_ALWAYS_INLINE bd<A> fmadd(const bd<A>& a, const bd<A>& b, const bd<A>& c) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return bd<A>(_mm512_fmadd_pd(a, b, c));
    else
#endif
        return xsimd::fma(a, b, c);
}

// c - a * b, fused where the level has FMA.
template <class A>
NUMFUSE_ALWAYS_INLINE bd<A> fnmadd(const bd<A>& a, const bd<A>& b, const bd<A>& c) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) return bd<A>(_mm512_fnmadd_pd(a, b, c));
    else
#endif
#if defined(__aarch64__)
        // xsimd 8.1's neon64 fnma is the generic -a * b + c, fused only if the
        // compiler contracts it; the instruction is named so that it always is.
        if constexpr (detail::is_neon64<A>) return bd<A>(vfmsq_f64(c, a, b));
        else
#endif
            return xsimd::fnma(a, b, c);
}

// Horner's scheme with fmadd: horner(x, c0, c1, ..., cn) = c0 + x (c1 + ...).
template <class A, class C>
NUMFUSE_ALWAYS_INLINE bd<A> horner(const bd<A>&, C c0) noexcept {
    return bd<A>(c0);
}
template <class A, class C, class... Cs>
NUMFUSE_ALWAYS_INLINE bd<A> horner(const bd<A>& x, C c0, Cs... cs) noexcept {
    return fmadd(horner(x, cs...), x, bd<A>(c0));
}

// Combines E(z^2) + z O(z^2): a polynomial split into two independent
// Horner chains (in z^2) of half the length -- the kernels are
// latency-bound, and this halves the chain.
template <class A>
NUMFUSE_ALWAYS_INLINE bd<A> even_odd(const bd<A>& z, const bd<A>& even, const bd<A>& odd) noexcept {
    return fmadd(odd, z, even);
}

// table[j] per lane for a 32-entry table (j in [0, 32)): in-register
// permutes on AVX-512 (vgatherqpd is slow on CPUs with the gather-data-
// sampling microcode fix), scalar loads put together in registers elsewhere.
template <class A>
NUMFUSE_ALWAYS_INLINE bd<A> lookup32(const double* table,
                                     const xsimd::batch<std::int64_t, A>& j) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        const __m512i idx = j;
        const __m512d lo =
            _mm512_permutex2var_pd(_mm512_load_pd(table), idx, _mm512_load_pd(table + 8));
        const __m512d hi =
            _mm512_permutex2var_pd(_mm512_load_pd(table + 16), idx, _mm512_load_pd(table + 24));
        const __mmask8 upper = _mm512_test_epi64_mask(idx, _mm512_set1_epi64(16));
        return bd<A>(_mm512_mask_blend_pd(upper, lo, hi));
    } else
#endif
    {
        constexpr std::size_t n = bd<A>::size;
        alignas(64) std::int64_t js[n];
        j.store_aligned(js);
#if defined(__AVX__)
        // The lanes are assembled in registers: storing them to memory and reloading the
        // vector fails store-to-load forwarding (a stall of ~10 cycles per lookup).
        if constexpr (n == 4) {
            return bd<A>(_mm256_set_pd(table[js[3]], table[js[2]], table[js[1]], table[js[0]]));
        } else
#endif
#if defined(__SSE2__)
            if constexpr (n == 2) {
            return bd<A>(_mm_set_pd(table[js[1]], table[js[0]]));
        } else
#elif defined(__aarch64__)
        if constexpr (n == 2) {
            return bd<A>(vsetq_lane_f64(table[js[1]], vdupq_n_f64(table[js[0]]), 1));
        } else
#endif
        {
            alignas(64) double out[n];
            for (std::size_t k = 0; k < n; ++k) out[k] = table[js[k]];
            return bd<A>::load_aligned(out);
        }
    }
}

// table[j] per lane for a 16-entry table (j in [0, 16)): one in-register permute of its
// two halves on AVX-512 (half of lookup32's work), lookup32's scalar loads elsewhere.
template <class A>
NUMFUSE_ALWAYS_INLINE bd<A> lookup16(const double* table,
                                     const xsimd::batch<std::int64_t, A>& j) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        return bd<A>(_mm512_permutex2var_pd(_mm512_load_pd(table), j, _mm512_load_pd(table + 8)));
    } else
#endif
        return lookup32(table, j);
}

// s + e == a + b exactly (Knuth's two-sum, any magnitudes).
template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> two_sum(const bd<A>& a, const bd<A>& b) noexcept {
    const bd<A> s = a + b;
    const bd<A> bb = s - a;
    const bd<A> e = (a - (s - bb)) + (b - bb);
    return {s, e};
}

// s + e == a + b exactly, given |a| >= |b| (or a == 0).
template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> fast_two_sum(const bd<A>& a, const bd<A>& b) noexcept {
    const bd<A> s = a + b;
    return {s, b - (s - a)};
}

// p + e == a * b exactly (barring overflow / underflow).
template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> two_prod(const bd<A>& a, const bd<A>& b) noexcept {
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
NUMFUSE_ALWAYS_INLINE pair<A> add(const pair<A>& x, const pair<A>& y) noexcept {
    const pair<A> s = two_sum(x.hi, y.hi);
    return fast_two_sum(s.hi, s.lo + (x.lo + y.lo));
}

template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> add(const pair<A>& x, const bd<A>& y) noexcept {
    const pair<A> s = two_sum(x.hi, y);
    return fast_two_sum(s.hi, s.lo + x.lo);
}

template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> mul(const pair<A>& x, const pair<A>& y) noexcept {
    const pair<A> p = two_prod(x.hi, y.hi);
    return fast_two_sum(p.hi, p.lo + (x.hi * y.lo + x.lo * y.hi));
}

template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> mul(const pair<A>& x, const bd<A>& y) noexcept {
    const pair<A> p = two_prod(x.hi, y);
    return fast_two_sum(p.hi, fmadd(x.lo, y, p.lo));
}

// 1 / y to about 1 ulp (callers correct with the exact residual): rcp14
// and two Newton steps on AVX-512 (far cheaper than vdivpd), a division
// elsewhere.
template <class A>
NUMFUSE_ALWAYS_INLINE bd<A> reciprocal(const bd<A>& y) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        const __m512d one = _mm512_set1_pd(1.0);
        __m512d r = _mm512_rcp14_pd(y);
        r = _mm512_fmadd_pd(r, _mm512_fnmadd_pd(r, y, one), r);
        r = _mm512_fmadd_pd(r, _mm512_fnmadd_pd(r, y, one), r);
        return bd<A>(r);
    } else
#endif
        return bd<A>(1.0) / y;
}

// 1 / y to 2^-40 or better (callers finish with a Newton step): rcp14 and one
// cubic Newton step r (1 + e + e^2) on AVX-512, a division elsewhere.
template <class A>
NUMFUSE_ALWAYS_INLINE bd<A> reciprocal_approx(const bd<A>& y) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        const __m512d r = _mm512_rcp14_pd(y);
        const __m512d e = _mm512_fnmadd_pd(r, y, _mm512_set1_pd(1.0));
        return bd<A>(_mm512_fmadd_pd(_mm512_fmadd_pd(e, e, e), r, r));
    } else
#endif
        return bd<A>(1.0) / y;
}

// x / y: one division (1 / y.hi), q = x.hi / y.hi to ~1 ulp, the exact
// remainder x - q y, one correction.
template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> div(const pair<A>& x, const pair<A>& y) noexcept {
    const bd<A> inv = reciprocal(y.hi);
    const bd<A> q = x.hi * inv;
    const pair<A> p = two_prod(q, y.hi);
    const bd<A> r = ((x.hi - p.hi) - p.lo + x.lo) - q * y.lo;  // x.hi - p.hi is exact
    return fast_two_sum(q, r * inv);
}

// sqrt(x) for x.hi > 0 (the caller selects the x == 0 lanes away).
template <class A>
NUMFUSE_ALWAYS_INLINE pair<A> sqrt(const pair<A>& x) noexcept {
#if defined(__AVX512F__)
    if constexpr (detail::is_avx512<A>) {
        // No vsqrtpd / vdivpd (slow): y ~ 1/sqrt(x) from rsqrt14 and two Newton
        // steps (~2^-50), s = x y, then the exact residual x - s^2 corrects s
        // to a pair (the correction is first order in s's error).
        const __m512d xh = x.hi, half = _mm512_set1_pd(0.5), three_halves = _mm512_set1_pd(1.5);
        __m512d y = _mm512_rsqrt14_pd(xh);
        const __m512d hx = _mm512_mul_pd(half, xh);
        y = _mm512_mul_pd(y, _mm512_fnmadd_pd(hx, _mm512_mul_pd(y, y), three_halves));
        y = _mm512_mul_pd(y, _mm512_fnmadd_pd(hx, _mm512_mul_pd(y, y), three_halves));
        const __m512d s = _mm512_mul_pd(xh, y);
        const __m512d e = _mm512_add_pd(_mm512_fnmadd_pd(s, s, xh), x.lo);  // x - s^2
        return fast_two_sum(bd<A>(s), bd<A>(_mm512_mul_pd(_mm512_mul_pd(e, half), y)));
    } else
#endif
    {
        const bd<A> s = xsimd::sqrt(x.hi);
        const pair<A> p = two_prod(s, s);
        const bd<A> r = ((x.hi - p.hi) - p.lo + x.lo) / (s + s);
        return fast_two_sum(s, r);
    }
}

// Lanes where `use` is set get scalar_fn(x[k]) instead of result[k]: the
// rare-argument fallback of the SIMD kernels (huge trig arguments, ...).
template <class A, class F>
NUMFUSE_ALWAYS_INLINE bd<A> scalar_lanes(const xsimd::batch_bool<double, A>& use, const bd<A>& x,
                                         const bd<A>& result, F scalar_fn) noexcept {
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
