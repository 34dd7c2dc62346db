// AVX-512 lane operations overloaded on the register type, so that a kernel templated on
// the element type writes each operation once for float64 (__m512d) and float32 (__m512)
// lanes instead of an `if constexpr (sizeof(T) == 8)` pair of intrinsic calls.
//
// Contract: each function is exactly the one named intrinsic for its lane width (same
// bits, same exceptions); xsimd batches convert to the register type implicitly, so
// `mant_1_2(x)` with an xsimd::batch<double, avx512*> picks the __m512d overload.
//
//   mant_1_2(x)              vgetmant, mantissa normalised to [1, 2), sign cleared
//   exponent_of(x)           vgetexp, floor(log2|x|) as a float (subnormals exact)
//   scale_by(x, k)           vscalef, x 2^floor(k)
//   sign_from(res, x)        res with x's sign bit or-ed in (vpternlog 0xf8)
//   fixup<Table>(res, x)     vfixupimm with the nibble table Table, imm 0
//   permute_table(idx, tab)  tab[low bits of idx's lanes] (vpermpd / vpermps), tab 64-byte
//                            aligned with 8 (float64) or 16 (float32) entries
//   load(p), store(p, v)     unaligned vmovupd / vmovups of one register from/to p
//   load_or_one(m, p)        lanes of p where m is set, 1.0 elsewhere (masked load)
//   store(p, m, v)           v's lanes where m is set (masked store)
//   lanes<T>, Mask<T>        lanes per register, the mask type, for element type T
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace numfuse::kernels::detail::avx512 {

inline __m512d mant_1_2(__m512d x) noexcept {
    return _mm512_getmant_pd(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
}
inline __m512 mant_1_2(__m512 x) noexcept {
    return _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
}

inline __m512d exponent_of(__m512d x) noexcept { return _mm512_getexp_pd(x); }
inline __m512 exponent_of(__m512 x) noexcept { return _mm512_getexp_ps(x); }

inline __m512d scale_by(__m512d x, __m512d k) noexcept { return _mm512_scalef_pd(x, k); }
inline __m512 scale_by(__m512 x, __m512 k) noexcept { return _mm512_scalef_ps(x, k); }

inline __m512d sign_from(__m512d res, __m512d x) noexcept {
    return _mm512_castsi512_pd(_mm512_ternarylogic_epi64(
        _mm512_castpd_si512(res), _mm512_castpd_si512(x),
        _mm512_set1_epi64(static_cast<long long>(0x8000000000000000ull)), 0xf8));
}
inline __m512 sign_from(__m512 res, __m512 x) noexcept {
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(res), _mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN), 0xf8));
}

template <int Table>
inline __m512d fixup(__m512d res, __m512d x) noexcept {
    return _mm512_fixupimm_pd(res, x, _mm512_set1_epi64(Table), 0);
}
template <int Table>
inline __m512 fixup(__m512 res, __m512 x) noexcept {
    return _mm512_fixupimm_ps(res, x, _mm512_set1_epi32(Table), 0);
}

inline __m512d permute_table(__m512d idx, const double* tab) noexcept {
    return _mm512_permutexvar_pd(_mm512_castpd_si512(idx), _mm512_load_pd(tab));
}
inline __m512 permute_table(__m512 idx, const float* tab) noexcept {
    return _mm512_permutexvar_ps(_mm512_castps_si512(idx), _mm512_load_ps(tab));
}

template <class T>
inline constexpr std::size_t lanes = 64 / sizeof(T);
template <class T>
using Mask = std::conditional_t<sizeof(T) == 8, __mmask8, __mmask16>;

inline __m512d load(const double* p) noexcept { return _mm512_loadu_pd(p); }
inline __m512 load(const float* p) noexcept { return _mm512_loadu_ps(p); }
inline __m512d load_or_one(__mmask8 m, const double* p) noexcept {
    return _mm512_mask_loadu_pd(_mm512_set1_pd(1.0), m, p);
}
inline __m512 load_or_one(__mmask16 m, const float* p) noexcept {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, p);
}
inline void store(double* p, __m512d v) noexcept { _mm512_storeu_pd(p, v); }
inline void store(float* p, __m512 v) noexcept { _mm512_storeu_ps(p, v); }
inline void store(double* p, __mmask8 m, __m512d v) noexcept { _mm512_mask_storeu_pd(p, m, v); }
inline void store(float* p, __mmask16 m, __m512 v) noexcept { _mm512_mask_storeu_ps(p, m, v); }

}  // namespace numfuse::kernels::detail::avx512
#endif
