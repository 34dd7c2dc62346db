// The exp of a shifted element, exp(x - m) with m the group's (or chunk's)
// maximum, for the softmax loops (arch/softmax_loops.hpp), and the sum and
// scale helpers those loops share.
//
// Included only by arch/softmax_loops.hpp, after arch/reduce_loops.hpp.
//
// Why a kernel of its own: x <= m bounds the argument (x - m <= 0, so no
// overflow, no clamp above, and every term is at most 1), and the double word
// x - m = hi + lo can be folded into the reduced argument (r + lo) instead of
// a multiply after the exp. On AVX-512 that is the kernel of kernels/exp.hpp
// (the same reduction, tables, polynomials and scaling, so the same <= 1 ULP
// bound for the same argument) without its clamps, NaN fixup and the
// correction product: 16 vector operations instead of 31 per batch. float32 at
// the avx2_fma level takes its own kernel of that shape (shifted_exp_f32_lanes:
// eight table entries looked up by vpermps); float64 there and SSE2 / NEON use
// exp_difference / exp_kernel (arch/reduce_loops.hpp).
//
// Subnormal results (x - m below -87.3 for float32, -708.4 for float64): on
// Intel cores a multiply, FMA or vscalef with a subnormal operand or result
// takes a microcode assist (~100x slower, see kernels/exp.hpp). Batches with
// such lanes are flagged by one compare and recomputed on a rare path that
// forms the subnormal results with additions and integer operations
// (scalef_no_assist_*); the scaling pass multiplies float32 numerators whose
// product may be subnormal in float64 (scale_float_rare).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "arch/reduce_loops.hpp"
#include "lse_accumulator.hpp"

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops {

// Below this x - m the numerator exp(x - m) may be subnormal (ln 2^-126 =
// -87.34, ln 2^-1022 = -708.40), rounded up to a whole number: such lanes take
// the rare path (store) or add 0 (sum).
template <class T>
constexpr T shifted_exp_tiny() noexcept {
    return std::is_same<T, float>::value ? T(-87) : T(-708);
}

// The level has the AVX-512 kernel below (float32 and float64).
#if defined(__AVX512F__)
constexpr bool shifted_exp_native = kernels::detail::is_avx512<Arch>;
#else
constexpr bool shifted_exp_native = false;
#endif

#if defined(__AVX512F__)
// e^(h + lo) = y 2^floor(s) before the scaling, for |h| <= 104 (float32) /
// 746 (float64) and |lo| <= ulp(h) / 2: kernels/exp.hpp's AVX-512 reduction,
// r = h - kd ln2/16 (exact with FMA, then the low part of ln2/16), plus lo,
// which stays inside the polynomials' fitted range |r| <= ln2/32 (1 + 2^-12)
// (|lo| <= 2^-18 / 2^-44 there). Lanes outside the range give garbage
// (NaN lanes NaN), never a subnormal operation.
// float32: the reduction in units of 1/16 (every constant of kernels/exp.hpp's scaled by a
// power of 2, so the same roundings): z = RN(h RN_f(16/ln2)/16 + 1.5 2^19) is exp.hpp's
// z / 16 exactly (the same mantissa bits: k = round(16 h / ln2) in its low bits, which index
// the table), kd = k / 16, kd (16 RN_f(ln2)/16) the same exact product as exp.hpp's, and
// vscalef's floor(kd) = floor(k / 16) needs no multiply by 1/16.
struct ShiftedExpParts512 {
    __m512 y, s;
};
template <bool WithLo>
inline ShiftedExpParts512 shifted_exp_parts(__m512 h, __m512 lo) noexcept {
    using namespace kernels::detail;
    const __m512 shifter = _mm512_set1_ps(0x1.8p19f);
    const __m512 z = _mm512_fmadd_ps(h, _mm512_set1_ps(0x1.715476p+0f), shifter);  // (16/ln2)/16
    const __m512 kd = _mm512_sub_ps(z, shifter);
    __m512 r = _mm512_fnmadd_ps(kd, _mm512_set1_ps(0x1.62e43p-1f), h);  // RN_f(ln2), exact
    r = _mm512_fnmadd_ps(kd, _mm512_set1_ps(-0x1.05c61p-29f), r);      // ln2 - RN_f(ln2)
    if constexpr (WithLo) r = _mm512_add_ps(r, lo);
    const __m512i idx = _mm512_castps_si512(z);
    const __m512 th = _mm512_permutexvar_ps(idx, _mm512_load_ps(exp_tab16_hi_f));
    const __m512 tl = _mm512_permutexvar_ps(idx, _mm512_load_ps(exp_tab16_lo_f));
    // kernels/exp.hpp's exp32_t16 polynomial (tools/explog_remez.py), the same coefficients.
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(0x1.55521p-5f), r,  // 0.041665107011795043945
                               _mm512_set1_ps(0x1.55571ep-3f));  // 0.16667006909847259521
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0x1.0p-1f));
    const __m512 p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
    const __m512 y = _mm512_add_ps(th, _mm512_fmadd_ps(th, p, tl));
    return {y, kd};
}

struct ShiftedExpParts512d {
    __m512d y, s;
};
template <bool WithLo>
inline ShiftedExpParts512d shifted_exp_parts(__m512d h, __m512d lo) noexcept {
    using namespace kernels::detail;
    ExpT16Reduced e = exp_f64_avx512_reduce(h);
    if constexpr (WithLo) e.r = _mm512_add_pd(e.r, lo);
    const ExpT16Pair t = exp_f64_avx512_t16_pair(e.z, e.r);
    return {_mm512_add_pd(t.hi, t.lo), _mm512_mul_pd(e.kd, _mm512_set1_pd(0.0625))};
}

// The per-width intrinsics the shifted exp needs, as overloads.
inline __m512 scalef_plain(__m512 y, __m512 s) noexcept { return _mm512_scalef_ps(y, s); }
inline __m512d scalef_plain(__m512d y, __m512d s) noexcept { return _mm512_scalef_pd(y, s); }
inline __m512 scalef_tiny(__m512 y, __m512 s) noexcept {
    return kernels::detail::scalef_no_assist_ps(y, s);
}
inline __m512d scalef_tiny(__m512d y, __m512d s) noexcept {
    return kernels::detail::scalef_no_assist_pd(y, s);
}
// Lanes with h < limit (ordered: false for NaN).
inline __mmask16 lanes_below(__m512 h, float limit) noexcept {
    return _mm512_cmp_ps_mask(h, _mm512_set1_ps(limit), _CMP_LT_OQ);
}
inline __mmask8 lanes_below(__m512d h, double limit) noexcept {
    return _mm512_cmp_pd_mask(h, _mm512_set1_pd(limit), _CMP_LT_OQ);
}
// max(limit, h), NaN h kept (vmaxps returns its second operand when one is NaN);
// lo zeroed where h < limit (lo is NaN for x = -inf).
inline __m512 clamp_below(__m512 h, float limit) noexcept {
    return _mm512_max_ps(_mm512_set1_ps(limit), h);
}
inline __m512d clamp_below(__m512d h, double limit) noexcept {
    return _mm512_max_pd(_mm512_set1_pd(limit), h);
}
inline __m512 zero_lanes(__mmask16 lanes, __m512 v) noexcept {
    return _mm512_mask_mov_ps(v, lanes, _mm512_setzero_ps());
}
inline __m512d zero_lanes(__mmask8 lanes, __m512d v) noexcept {
    return _mm512_mask_mov_pd(v, lanes, _mm512_setzero_pd());
}

// Rare path of shifted_exp_store: a batch with lanes below shifted_exp_tiny.
// h clamped to -104 / -746 (exp rounds to +0 below), lo dropped there.
template <class B>
NUMFUSE_NOINLINE B shifted_exp_store_rare(const B& h, const B& lo) noexcept {
    using T = typename B::value_type;
    using R = typename B::register_type;
    const T limit = std::is_same<T, float>::value ? T(-104) : T(-746);
    const R hr = h;
    const R hc = clamp_below(hr, limit);
    const R lc = zero_lanes(lanes_below(hr, limit), R(lo));
    const auto parts = shifted_exp_parts<true>(hc, lc);
    return B(scalef_tiny(parts.y, parts.s));
}
#endif

// float32 lanes at the AVX2 level: B is an AVX2 batch of 8 floats (never on the AVX-512
// level, whose native kernel comes first, nor on SSE2 or NEON, which lack vpermps).
#if defined(__AVX2__) && defined(__FMA__)
template <class B>
constexpr bool shifted_exp_f32_avx2 =
    std::is_same<typename B::value_type, float>::value && B::size == 8 && !shifted_exp_native;
#else
template <class B>
constexpr bool shifted_exp_f32_avx2 = false;
#endif

#if defined(__AVX2__) && defined(__FMA__)
// e^(h + lo) on float32 lanes, for -87 <= h <= 0 (the common paths' limits; no NaN) and
// |lo| <= ulp(h) / 2 (WithLo; else lo is ignored). The result is then normal
// (e^-87 > 2^-126), so its exponent is added to y's bits exactly.
// k8 = round(8 h / ln2) (the shifter leaves it in z's low bits), r = h - k8 ln2/8 with
// ln2/8 as C1 + C2 (the first fnma rounds once, |r| <= ln2/16: error <= 2^-29),
// then + lo; e^r - 1 by Taylor to r^4 (truncation r^5/120 < 2^-29.5 of 1);
// y = th + (th p + tl) in [0.95, 1.92], the only rounding above 2^-27 being the last
// addition's: within 0.5 + 0.13 ULP of e^(h + lo) (measured exhaustively by
// benchmarks/cpp/shifted_exp_check.cpp; tests/test_softmax_f32_numerators.py). 2^floor(k8 / 8) goes
// into the exponent field: (z_bits << 20) keeps k8's bits above its low three at bit 23 and up (the
// shifter's own bits shift out), the mask drops the low three (vpermps reads only those).
template <bool WithLo>
inline __m256 shifted_exp_f32_lanes(__m256 h, __m256 lo) noexcept {
    const __m256 shifter = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(h, _mm256_set1_ps(0x1.715476p+3f), shifter);  // 8/ln2
    const __m256 kd = _mm256_sub_ps(z, shifter);
    __m256 r = _mm256_fnmadd_ps(kd, _mm256_set1_ps(0x1.62e43p-4f), h);   // C1 = RN_f(ln2/8)
    r = _mm256_fnmadd_ps(kd, _mm256_set1_ps(-0x1.05c61p-32f), r);        // C2 = ln2/8 - C1
    if constexpr (WithLo) r = _mm256_add_ps(r, lo);
    const __m256i zi = _mm256_castps_si256(z);
    const __m256 th = _mm256_permutevar8x32_ps(_mm256_load_ps(kernels::detail::exp_t8_hi_f), zi);
    const __m256 tl = _mm256_permutevar8x32_ps(_mm256_load_ps(kernels::detail::exp_t8_lo_f), zi);
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.555556p-5f), r,    // 1/24
                               _mm256_set1_ps(0x1.555556p-3f));     // 1/6
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.5f));
    const __m256 p = _mm256_fmadd_ps(_mm256_mul_ps(r, r), q, r);
    const __m256 y = _mm256_add_ps(th, _mm256_fmadd_ps(th, p, tl));
    const __m256i scale = _mm256_and_si256(_mm256_slli_epi32(zi, 20),
                                           _mm256_set1_epi32(static_cast<int>(0xff800000u)));
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(y), scale));
}
#endif

// float32 AVX2 batches: exp(x - m) for every lane, the common lanes (limit <= x - m,
// limit >= -87) by shifted_exp_f32_lanes, the others (tiny, -inf, NaN, x = m = +inf)
// as `other` gives them; those lanes enter the kernel as h = lo = 0. x - m as a double
// word.
template <class B, class Other>
inline B shifted_exp_f32_select(const B& x, const B& m, typename B::value_type limit,
                                Other&& other) noexcept {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (shifted_exp_f32_avx2<B>) {
        const B h = x - m;
        const auto common = h >= B(limit);
        const B zero(0.0f);
        if (xsimd::all(common)) {
            return B(shifted_exp_f32_lanes<true>(h, lse::difference_error(x, m, h)));
        }
        const B hc = xsimd::select(common, h, zero);
        const B lo = xsimd::select(common, lse::difference_error(x, m, h), zero);
        return xsimd::select(common, B(shifted_exp_f32_lanes<true>(hc, lo)), other());
    } else
#endif
    {
        (void)x;
        (void)m;
        (void)limit;
        return other();
    }
}

// exp(x - m) for x <= m with x - m as a double word (softmax's stored numerators).
// Contract: m finite (or lowest() for a group of -inf only); x any value; within the
// exp kernel's 1 ULP plus 1/2 ULP (AVX-512, and float32 at avx2_fma for x - m >= -87:
// within 1 ULP, the double word folded into the reduced argument); +0 for x = -inf, NaN
// for NaN or x = m = +inf.
template <class B>
inline B shifted_exp_store(const B& x, const B& m) noexcept {
#if defined(__AVX512F__)
    if constexpr (shifted_exp_native) {
        using T = typename B::value_type;
        const B h = x - m;
        const B lo = lse::difference_error(x, m, h);
        using R = typename B::register_type;
        if (lanes_below(R(h), shifted_exp_tiny<T>()) != 0) return shifted_exp_store_rare(h, lo);
        const auto parts = shifted_exp_parts<true>(R(h), R(lo));
        return B(scalef_plain(parts.y, parts.s));
    } else
#endif
    {
        // float32 AVX2: the float32-lane kernel where it applies (the same bits as the
        // common path's), exp_difference on the other lanes.
        return shifted_exp_f32_select(x, m, shifted_exp_tiny<typename B::value_type>(),
                                      [&] { return exp_difference(x, m); });
    }
}

// Below this x - m a float32 numerator times a softmax factor >= 2^-16 (1 / sum with
// sum <= 65536, one chunk) may be subnormal: e^-76 > 2^-109.7, times 2^-16 is above
// 2^-126. A row whose numerators all lie above it is scaled without run_scale's test
// per batch (softmax_rows). float64: the kernel's own limit (run_scale tests no float64
// product).
template <class T>
constexpr T shifted_exp_scale_tiny() noexcept {
    return std::is_same<T, float>::value ? T(-76) : shifted_exp_tiny<T>();
}

// Levels without the AVX-512 kernel: the lanes of h = x - m that lie in [limit, 0]
// (limit >= -fast_lim: see shifted_exp_generic). Ordered >=: a NaN lane (x NaN, or
// x = m = +inf) is not one, nor is x = -inf. (h <= 0 always: m is the maximum.)
template <class B>
inline auto common_lanes(const B& h, typename B::value_type limit) noexcept {
    return h >= B(limit);
}

// The rounding error lo of h = RN(x - m), x - m = h + lo exactly, in three forms that
// give the same value where each applies (the exact error is unique), so a loop may
// change forms between batches without changing a bit:
// - TwoSumError: any x, m (lse::difference_error: TwoSum, five operations);
// - FastErrorMLarger: Fast2Sum with -m as the larger operand, lo = x - (h + m), two
//   operations; exact when the exponent of x is at most m's (Dekker: e_a >= e_b
//   suffices for a + b = s + RN(b - RN(s - a))), which holds for every x <= m where
//   m > 0 and x > -2^(e_m + 1) (fast_error_limit gives the test on h);
// - FastErrorXLarger: Fast2Sum with x as the larger operand, lo = -m - (h - x), two
//   operations; exact for every x <= m <= 0 (|x| >= |m|).
// Lanes outside a form's range get an inexact lo (NaN lanes NaN): the caller keeps
// them off it.
struct TwoSumError {
    template <class B>
    B operator()(const B& x, const B& m, const B& h) const noexcept {
        return lse::difference_error(x, m, h);
    }
};
struct FastErrorMLarger {
    template <class B>
    B operator()(const B& x, const B& m, const B& h) const noexcept {
        return x - (h + m);
    }
};
struct FastErrorXLarger {
    template <class B>
    B operator()(const B& x, const B& m, const B& h) const noexcept {
        return -m - (h - x);
    }
};

// FastErrorMLarger's range as a limit on h = RN(x - m), for a finite m > 0: every lane
// with h >= the result has x > L = -2^(e_m + 1), so |x| < 2^(e_m + 1) and e_x <= e_m
// (x <= L gives x - m <= L - m, so h <= RN(L - m) < the result: RN is monotone).
// At least `limit` (the caller's own limit).
template <class T>
T fast_error_limit(T m, T limit) noexcept {
    int e = 0;
    (void)std::frexp(m, &e);  // m = f 2^e, f in [0.5, 1): 2^(e_m + 1) = 2^e
    const T below = std::nextafter(-std::ldexp(T(1), e) - m, std::numeric_limits<T>::infinity());
    return below > limit ? below : limit;
}

// Levels without the AVX-512 kernel: exp(x - m) for lanes with limit <= h = RN(x - m)
// <= 0, limit >= -fast_lim (87 / 708): there exp_kernel_nofix equals exp_kernel bit for
// bit (kernels/exp.hpp: no clamp bites, 2^k is normal, no NaN lane), and lo is finite,
// so this gives exp_difference(x, m)'s bits, without the kernel's clamps, wide-scale
// test and NaN fixup or exp_difference's test of hi for infinity (9-12 of some 40
// operations a batch). float32 at the avx2_fma level: shifted_exp_f32_lanes, whose bits
// shifted_exp_store gives those lanes there too. `error`: a form of x - m's low word above
// that is exact on these lanes.
template <class B, class Error = TwoSumError>
inline B shifted_exp_generic(const B& x, const B& m, const B& h, Error error = {}) noexcept {
    static_assert(-shifted_exp_tiny<typename B::value_type>() <=
                      kernels::detail::exp_consts<typename B::value_type>::fast_lim,
                  "the common path's lanes must lie inside exp_kernel_nofix's range");
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (shifted_exp_f32_avx2<B>) {
        // float32 AVX2: shifted_exp_store's kernel on these lanes.
        return B(shifted_exp_f32_lanes<true>(h, error(x, m, h)));
    }
#endif
    const B e = kernels::exp_kernel_nofix(h);
    return kernels::detail::fused_madd(e, error(x, m, h), e);
}

// exp(x0 - m) and exp(x1 - m) on the common path of the row kernel (softmax_rows):
// x - m as a double word (its low word by `error`, one of the forms above, which must be exact on
// the lanes at or above `limit`), shifted_exp_store's result. Returns false, with y0 and y1 unset,
// when a lane of x - m lies below `limit` (on a level without the AVX-512 kernel also a NaN lane:
// its common path, shifted_exp_generic, has no NaN fixup): the caller then takes shifted_exp_store
// per batch (its rare path, the same bits as the common path's on the other lanes) and notes the
// row. One test for both batches, no rare path inline: the row loop keeps its accumulators in
// registers (the inlined rare path of run_exp_sum_impl spilled them to the stack in every
// iteration).
template <class B, class Error = TwoSumError>
inline bool shifted_exp_pair(const B& x0, const B& x1, const B& m, typename B::value_type limit,
                             B& y0, B& y1, Error error = {}) noexcept {
#if defined(__AVX512F__)
    if constexpr (shifted_exp_native) {
        using R = typename B::register_type;
        const B h0 = x0 - m;
        const B h1 = x1 - m;
        if ((lanes_below(R(h0), limit) | lanes_below(R(h1), limit)) != 0) return false;
        const auto p0 = shifted_exp_parts<true>(R(h0), R(error(x0, m, h0)));
        const auto p1 = shifted_exp_parts<true>(R(h1), R(error(x1, m, h1)));
        y0 = B(scalef_plain(p0.y, p0.s));
        y1 = B(scalef_plain(p1.y, p1.s));
        return true;
    } else
#endif
    {
        const B h0 = x0 - m;
        const B h1 = x1 - m;
        if (!xsimd::all(common_lanes(h0, limit) & common_lanes(h1, limit))) return false;
        y0 = shifted_exp_generic(x0, m, h0, error);
        y1 = shifted_exp_generic(x1, m, h1, error);
        return true;
    }
}

// exp(x - m) of one batch on the common path, as shifted_exp_pair (false: a lane of
// x - m below limit, or on other levels than AVX-512 NaN; y unset).
template <class B>
inline bool shifted_exp_common(const B& x, const B& m, typename B::value_type limit,
                               B& y) noexcept {
#if defined(__AVX512F__)
    if constexpr (shifted_exp_native) {
        using R = typename B::register_type;
        const B h = x - m;
        if (lanes_below(R(h), limit) != 0) return false;
        const auto p = shifted_exp_parts<true>(R(h), R(lse::difference_error(x, m, h)));
        y = B(scalef_plain(p.y, p.s));
        return true;
    } else
#endif
    {
        const B h = x - m;
        if (!xsimd::all(common_lanes(h, limit))) return false;
        y = shifted_exp_generic(x, m, h);
        return true;
    }
}

// The first `count` (< width) elements at p, the other lanes `pad`; stored back
// likewise. AVX-512: masked loads and stores (a stack buffer costs a store-forwarding
// stall per row).
template <class T>
inline Batch<T> load_first(const T* p, std::size_t count, T pad) noexcept {
#if defined(__AVX512F__)
    if constexpr (shifted_exp_native) {
        using R = typename Batch<T>::register_type;
        if constexpr (std::is_same<T, float>::value) {
            const auto lanes = static_cast<__mmask16>((1u << count) - 1u);
            return Batch<T>(R(_mm512_mask_loadu_ps(_mm512_set1_ps(pad), lanes, p)));
        } else {
            const auto lanes = static_cast<__mmask8>((1u << count) - 1u);
            return Batch<T>(R(_mm512_mask_loadu_pd(_mm512_set1_pd(pad), lanes, p)));
        }
    } else
#endif
    {
        return load_lanes<T>(reinterpret_cast<const char*>(p), sizeof(T), count, pad);
    }
}

template <class T>
inline void store_first(const Batch<T>& v, T* p, std::size_t count) noexcept {
#if defined(__AVX512F__)
    if constexpr (shifted_exp_native) {
        using R = typename Batch<T>::register_type;
        if constexpr (std::is_same<T, float>::value) {
            _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << count) - 1u), R(v));
        } else {
            _mm512_mask_storeu_pd(p, static_cast<__mmask8>((1u << count) - 1u), R(v));
        }
        return;
    }
#endif
    store_lanes<T>(v, reinterpret_cast<char*>(p), sizeof(T), count);
}

// s += y for 0 <= y <= 1 + 2^-23 (a shifted exp) and s >= 1 (lanes biased by 1, see
// run_exp_sum_impl): Fast2Sum, exact under that condition; returns the error e, s + y =
// t + e exactly, |e| <= y (s itself is a float within y of s + y).
template <class B>
inline B add_biased(B& s, const B& y) noexcept {
    const B t = s + y;
    const B e = (s - t) + y;
    s = t;
    return e;
}

// c + d += e, where e is the plain sum of the errors of K add_biased steps (K = 4 in the
// row and run kernels, 2 in the columns (a quad of steps there measured slower), fewer at
// their ends; a tree: relative error below (log2 K) u of the sum of their |e|): Fast2Sum,
// its error into d.
//
// Why: where the maximum's exp(0) = 1 holds a lane's s at 2, every term y below half an
// ulp of s is e = y itself, so the sum of the e's (c) holds all those terms; log_softmax
// at that maximum is -log(1 + that sum) and needs it to a few u of itself. Added to c
// plainly, one by one, they lost up to u |c| per term (a float32 column of 999 terms near
// e^-20: 5.3 eps; 4096 equal terms near e^-700: 226 eps). Now: an addition c + e whose
// exponents allow Fast2Sum (e_c >= e_e, or c = 0) puts its exact error into d; any other
// leaves d off by at most about u |e| (c - RN(c + e) is then -e - delta rounded once, and
// that plus e is exact). With the trees' roundings, c + d is the sum of the lane's e's to
// within (log2 K + 1) u of sum |e| <= sum y (the lane's own terms), plus d's plain
// additions: each at most u |d| with |d| <= k u max|c| after k steps, below u of sum y for
// lanes of up to 4096 steps in float32 (the longer ones renormalise (c, d): renormalise).
// Three operations per K terms more than c's plain additions (the tree's K - 1 additions
// and the one into c are the K that c took before). The lane's terms thus keep about
// 1.5 u (K = 2) to 2 u (K = 4) of their own sum whatever their number.
template <class B>
inline void add_error(B& c, B& d, const B& e) noexcept {
    const B t = c + e;
    d += (c - t) + e;
    c = t;
}

// softmax's form of add_error (the kernels' Store case): the errors of four add_biased
// steps, e0 and e2 from the first accumulator, e1 and e3 from the second, each added
// plainly to its accumulator's word (c0, c1), in batch order. softmax's outputs y / S
// need S only to a few u of itself, and S >= 1 (the maximum's term): c's roundings, each
// at most u |c|, are second order there (|c| is below the lane's half ulps of s), where
// log_softmax's -log(1 + tiny terms) needs those terms to u of themselves (add_error).
// One addition per term, as c's, no tree: softmax's bits as before add_error existed.
template <class B>
inline void add_plain(B& c0, B& c1, const B& e0, const B& e1, const B& e2, const B& e3) noexcept {
    c0 += e0;
    c1 += e1;
    c0 += e2;
    c1 += e3;
}

// One quad of batches y0..y3 into the two accumulators (y0, y2 into s0; y1, y3 into s1) and
// their errors into (c, d): add_plain for softmax (Store), add_error's tree for log_softmax.
// The row and run kernels' common step.
template <bool Store, class B>
NUMFUSE_ALWAYS_INLINE void add_quad_errors(B& s0, B& s1, B& c, B& d, const B& y0, const B& y1,
                                           const B& y2, const B& y3) noexcept {
    const B e0 = add_biased(s0, y0);
    const B e1 = add_biased(s1, y1);
    const B e2 = add_biased(s0, y2);
    const B e3 = add_biased(s1, y3);
    if constexpr (Store) {
        add_plain(c, d, e0, e1, e2, e3);
    } else {
        add_error(c, d, (e0 + e1) + (e2 + e3));
    }
}

// c + d as a renormalised pair: Fast2Sum (exact for |c| >= |d|, which holds but for a
// lane whose c has cancelled to below its own rounding errors; otherwise off by at most
// u |d|, second order). Afterwards |d| <= u |c|, so d's later plain additions start from
// a word of that size.
template <class B>
inline void renormalise(B& c, B& d) noexcept {
    const B t = c + d;
    d = (c - t) + d;
    c = t;
}

// The lanes of (s, c) summed pairwise (a fixed tree: the same bits for the
// same lanes) with TwoSum, then added into (sum, error).
template <class B>
inline void add_lane_tree(const B& s, const B& c, typename B::value_type& sum,
                          typename B::value_type& error) noexcept {
    using T = typename B::value_type;
    constexpr std::size_t width = B::size;
    alignas(64) T ls[width];
    alignas(64) T lc[width];
    s.store_aligned(ls);
    c.store_aligned(lc);
    for (std::size_t half = width / 2; half >= 1; half /= 2) {
        for (std::size_t k = 0; k < half; ++k) {
            T t, e;
            lse::two_sum(ls[k], ls[k + half], t, e);
            ls[k] = t;
            lc[k] = (lc[k] + lc[k + half]) + e;
        }
    }
    T hi = sum;
    T lo = error;
    T t, e;
    lse::two_sum(hi, ls[0], t, e);
    hi = t;
    lo += e + lc[0];
    sum = hi;
    error = lo;
}

// num * factor for float32 lanes where the product or num may be subnormal: in
// float64 (24-bit operands: the product is exact there, and the conversion rounds it
// once to float32, as the float32 multiply would; a float32 subnormal is a normal
// float64). The compiler knows that identity and would fold the float64 multiply
// back into a float32 one (with its assist): an empty asm / a volatile hides the
// float64 operands from it.
template <class B>
NUMFUSE_NOINLINE B scale_float_rare(const B& num, const B& factor) noexcept {
    using T = typename B::value_type;
#if defined(__AVX512F__)
    if constexpr (shifted_exp_native && std::is_same<T, float>::value) {
        const __m512 v = num;
        const __m512 f = factor;
        const auto upper = [](__m512 x) {
            return _mm512_castpd_ps(
                _mm512_castpd256_pd512(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
        };
        __m512d v_lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
        __m512d v_hi = _mm512_cvtps_pd(_mm512_castps512_ps256(upper(v)));
        __asm__("" : "+v"(v_lo), "+v"(v_hi));
        const __m256 p_lo =
            _mm512_cvtpd_ps(_mm512_mul_pd(v_lo, _mm512_cvtps_pd(_mm512_castps512_ps256(f))));
        const __m256 p_hi =
            _mm512_cvtpd_ps(_mm512_mul_pd(v_hi, _mm512_cvtps_pd(_mm512_castps512_ps256(upper(f)))));
        return B(_mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(p_lo)),
                                                     _mm256_castps_pd(p_hi), 1)));
    } else
#endif
    {
        constexpr std::size_t width = B::size;
        alignas(64) T lanes[width];
        alignas(64) T factors[width];
        num.store_aligned(lanes);
        factor.store_aligned(factors);
        for (std::size_t k = 0; k < width; ++k) {
            volatile double wide = static_cast<double>(lanes[k]);
            lanes[k] = static_cast<T>(wide * static_cast<double>(factors[k]));
        }
        return B::load_aligned(lanes);
    }
}

// Numerators below this may meet a subnormal when scaled by a factor >= 2^-16
// (one chunk: factor = 1 / sum, sum <= 65536): their batch takes scale_float_rare.
// Factors below 2^-16 (a chunk whose maximum lies far below the group's) are not
// covered by it: correct results, possibly slow.
template <class T>
constexpr T scale_rare_limit() noexcept {
    return T(0x1p-109);
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::reduce_loops
