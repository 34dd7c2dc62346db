// Shared helpers for the hand-written SIMD kernels (every family in kernels/).
//
// Header-only, no state. Everything lives in numfuse::kernels::detail and is
// meant to stay small and stable: other kernels may include this file.
//
//   is_avx512<Arch>       Arch derives from xsimd::avx512f (raw _mm512_* allowed)
//   is_neon64<Arch>       Arch derives from xsimd::neon64 (raw arm_neon.h allowed)
//   has_fma<Arch>         Arch has fused multiply-add instructions: fused_madd and friends
//                         round once there (so do xsimd::fma and xsimd::fms, except xsimd
//                         8.1's AVX-512 ones: a multiply and an add)
//   int_of_t<T>           same-width signed integer (int32_t / int64_t)
//   as_int(b), as_float(b)  bit casts between batch<T> and batch<int_of_t<T>>
//   fused_madd, fused_msub, fused_nmadd  a*b+c, a*b-c, c-a*b rounded once on every FMA
//                         level (AVX-512 too)
//   horner(x, c0, c1, ...)  c0 + x*(c1 + x*(c2 + ...)) with fused_madd (one rounding a
//                         step on every FMA level); fused_horner is another name for it
//   widen(x, lo, hi), narrow(lo, hi)  a float batch <-> two double batches (lanes in order;
//                         narrow rounds to nearest)
//   nan_result(x)         what a kernel returns for a NaN input, as NumPy does:
//                         f64: the input quieted, payload and sign kept;
//                         f32: on x86-64 the canonical +qNaN 0x7fc00000
//                         (NumPy 2.x's SIMD float32 exp/log loops return it
//                         for every NaN); on aarch64, where NumPy's float32
//                         exp/log are the C library's, the input quieted.
//   rows_to_columns_avx2<width>(p, c)  four lanes' table rows as columns (AVX2)
//   neon_tbl64(table, idx), neon_tbl64_pair(table, idx, idx2, a, b)  TBL over a 64-byte
//                         constant table (neon64), in asm (below)
//   NUMFUSE_ALWAYS_INLINE, NUMFUSE_ALWAYS_INLINE_LAMBDA, NUMFUSE_NOINLINE  (below)
//
// Masks (batch_bool) are negated with ~, never !: xsimd 8.1 defines !m as m == false, which
// on AVX goes through 128-bit integer compares (five instructions); ~m is one xor.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// For kernels that run inside the loops' hot paths: left to its heuristics GCC keeps a
// function out of line once its translation unit is large (each per-level unit holds
// every kernel), and a call per batch spills the tables the kernel keeps in registers.
// NUMFUSE_ALWAYS_INLINE_LAMBDA is the bare attribute, for a lambda (after its parameter
// list, where `inline` cannot go). NUMFUSE_NOINLINE keeps a rarely taken path (a fix-up of
// special lanes, a recomputation in higher precision) out of the loop that calls it, so
// that the loop keeps its registers.
#if defined(__GNUC__)
#define NUMFUSE_ALWAYS_INLINE inline __attribute__((always_inline))
#define NUMFUSE_ALWAYS_INLINE_LAMBDA __attribute__((always_inline))
#define NUMFUSE_NOINLINE __attribute__((noinline))
#else
#define NUMFUSE_ALWAYS_INLINE inline
#define NUMFUSE_ALWAYS_INLINE_LAMBDA
#define NUMFUSE_NOINLINE
#endif

#if defined(__aarch64__) && XSIMD_VERSION_MAJOR == 8
// xsimd 8.1's neon shifts by an int n (batch << n, batch >> n) pick the immediate-operand
// instruction by a recursion over every count 0..width-1 (detail::bitwise_lshift_impl
// calling detail::bitwise_lshift(x, n, int_sequence<I, Is...>) down the sequence). Folded
// when inlined with a constant n, but in the per-level unit (every kernel in one function
// set) GCC's unit-growth limit leaves the recursion out of line: about 70 instructions
// per float64 batch shifted by 52. These overloads, found by argument-dependent lookup
// from that unqualified recursive call and more specialized than xsimd's (the
// architecture fixed), end it at its first step with one register shift (SSHL / USHL by
// a duplicated count; a negative count shifts right: arithmetic for signed lanes,
// logical for unsigned ones, as xsimd's vshrq_n). 32- and 64-bit lanes; n is in [1,
// width) there (n == 0 returns before the recursion).
namespace xsimd {
// x shifted left by n (right by -n) in every lane: one SSHL / USHL.
template <class T>
inline batch<T, neon64> numfuse_neon_shift(const batch<T, neon64>& x, int n) noexcept {
    if constexpr (sizeof(T) == 8 && std::is_signed<T>::value) {
        return vshlq_s64(x, vdupq_n_s64(n));
    } else if constexpr (sizeof(T) == 8) {
        return vshlq_u64(x, vdupq_n_s64(n));
    } else if constexpr (std::is_signed<T>::value) {
        return vshlq_s32(x, vdupq_n_s32(n));
    } else {
        return vshlq_u32(x, vdupq_n_s32(n));
    }
}
template <
    class T, int I, int... Is,
    std::enable_if_t<std::is_integral<T>::value && (sizeof(T) == 4 || sizeof(T) == 8), int> = 0>
inline batch<T, neon64> bitwise_lshift(const batch<T, neon64>& x, int n,
                                       detail::int_sequence<I, Is...>) noexcept {
    return numfuse_neon_shift(x, n);
}
template <
    class T, int I, int... Is,
    std::enable_if_t<std::is_integral<T>::value && (sizeof(T) == 4 || sizeof(T) == 8), int> = 0>
inline batch<T, neon64> bitwise_rshift(const batch<T, neon64>& x, int n,
                                       detail::int_sequence<I, Is...>) noexcept {
    return numfuse_neon_shift(x, -n);
}
}  // namespace xsimd
#endif

namespace numfuse::kernels::detail {

template <class Arch>
inline constexpr bool is_avx512 = std::is_base_of<xsimd::avx512f, Arch>::value;

template <class Arch>
inline constexpr bool is_neon64 = std::is_base_of<xsimd::neon64, Arch>::value;

// neon64: xsimd's fma/fms are vfmaq_f32/vfmaq_f64 (one rounding) wherever the
// compiler defines __ARM_FEATURE_FMA, which every aarch64 compiler does.
template <class Arch>
inline constexpr bool has_fma =
    is_avx512<Arch> || std::is_base_of<xsimd::fma3<xsimd::avx2>, Arch>::value || is_neon64<Arch>;

#if defined(__aarch64__) && !defined(__ARM_FEATURE_FMA)
#error "aarch64 without __ARM_FEATURE_FMA: the neon64 kernels need fused multiply-add"
#endif

template <class T>
using int_of_t = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;

// bit_cast<To>(x): the bits of batch x as batch type To (same architecture, same
// width). xsimd 8 spells this bitwise_cast<batch<U, A>>(x), xsimd 9 and later
// bitwise_cast<U>(x); both reinterpret the register, no instruction.
// neon64: xsimd 8.1 casts through a tuple of function pointers (one wrapper per NEON type),
// which GCC leaves as calls in the large per-level unit; the register is reinterpreted
// directly there.
template <class To, class T, class A>
inline To bit_cast(const xsimd::batch<T, A>& x) noexcept {
#if defined(__aarch64__)
    if constexpr (std::is_base_of<xsimd::neon64, A>::value) {
        using R = typename To::register_type;
        return To(
            __builtin_bit_cast(R, static_cast<typename xsimd::batch<T, A>::register_type>(x)));
    } else
#endif
#if XSIMD_VERSION_MAJOR >= 9
        return xsimd::bitwise_cast<typename To::value_type>(x);
#else
    return xsimd::bitwise_cast<To>(x);
#endif
}

template <class T, class A>
inline xsimd::batch<int_of_t<T>, A> as_int(const xsimd::batch<T, A>& x) noexcept {
    return bit_cast<xsimd::batch<int_of_t<T>, A>>(x);
}

template <class T, class A>
inline xsimd::batch<T, A> as_float(const xsimd::batch<int_of_t<T>, A>& x) noexcept {
    return bit_cast<xsimd::batch<T, A>>(x);
}

// A batch with every lane holding the given bit pattern.
template <class T, class A>
inline xsimd::batch<T, A> from_bits(int_of_t<T> bits) noexcept {
    return as_float<T, A>(xsimd::batch<int_of_t<T>, A>(bits));
}

// a * b + c and a * b - c with one rounding on every level with FMA (has_fma). xsimd
// 8.1's AVX-512 fma/fms are the generic unfused a * b +- c, so the instructions are named
// there. Kernels whose exactness rests on a fused operation use these.
template <class T, class A>
inline xsimd::batch<T, A> fused_madd(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& b,
                                     const xsimd::batch<T, A>& c) noexcept {
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        if constexpr (sizeof(T) == 8) {
            return _mm512_fmadd_pd(a, b, c);
        } else {
            return _mm512_fmadd_ps(a, b, c);
        }
    } else
#endif
        return xsimd::fma(a, b, c);
}
template <class T, class A>
inline xsimd::batch<T, A> fused_msub(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& b,
                                     const xsimd::batch<T, A>& c) noexcept {
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        if constexpr (sizeof(T) == 8) {
            return _mm512_fmsub_pd(a, b, c);
        } else {
            return _mm512_fmsub_ps(a, b, c);
        }
    } else
#endif
        return xsimd::fms(a, b, c);
}

// c - a * b rounded once on every FMA level (xsimd 8.1's AVX-512 and neon64 fnma are the
// generic -a * b + c, so the instructions are named there).
template <class T, class A>
inline xsimd::batch<T, A> fused_nmadd(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& b,
                                      const xsimd::batch<T, A>& c) noexcept {
#if defined(__AVX512F__)
    if constexpr (is_avx512<A>) {
        if constexpr (sizeof(T) == 8) {
            return _mm512_fnmadd_pd(a, b, c);
        } else {
            return _mm512_fnmadd_ps(a, b, c);
        }
    } else
#endif
#if defined(__aarch64__)
        if constexpr (is_neon64<A>) {
        if constexpr (sizeof(T) == 8) {
            return vfmsq_f64(c, a, b);
        } else {
            return vfmsq_f32(c, a, b);
        }
    } else
#endif
        return xsimd::fnma(a, b, c);
}

// Horner's scheme: horner(x, c0, c1, ..., cn) = c0 + x (c1 + x (... + x cn)), each step
// fused_madd: one instruction and one rounding wherever the level has FMA, AVX-512 included
// (xsimd 8.1's AVX-512 fma is a multiply and an add, and -ffp-contract=off keeps it so).
template <class B, class C>
inline B horner(const B&, C c0) noexcept {
    return B(c0);
}
template <class B, class C, class... Cs>
inline B horner(const B& x, C c0, Cs... cs) noexcept {
    return fused_madd(horner(x, cs...), x, B(c0));
}
// The same function under the name some kernels use.
template <class B, class... Cs>
inline B fused_horner(const B& x, Cs... cs) noexcept {
    return horner(x, cs...);
}

// a / b and sqrt(a), correctly rounded on every level. xsimd 8.1's neon64
// float32 division and square root are the ARMv7 reciprocal estimates with
// Newton steps (not correctly rounded; sqrt(inf) = NaN, sqrt(-0) = +0), so
// the aarch64 instructions are named there.
template <class T, class A>
inline xsimd::batch<T, A> divide(const xsimd::batch<T, A>& a,
                                 const xsimd::batch<T, A>& b) noexcept {
#if defined(__aarch64__)
    if constexpr (is_neon64<A> && std::is_same<T, float>::value) {
        return vdivq_f32(a, b);
    } else
#endif
        return a / b;
}
template <class T, class A>
inline xsimd::batch<T, A> square_root(const xsimd::batch<T, A>& a) noexcept {
#if defined(__aarch64__)
    if constexpr (is_neon64<A> && std::is_same<T, float>::value) {
        return vsqrtq_f32(a);
    } else
#endif
        return xsimd::sqrt(a);
}

// float <-> double lanes: a float batch is two double batches of the same architecture
// (lo: the first half of the lanes). One conversion instruction per half where the level
// has one; exact widening, narrowing rounded to nearest.
template <class A>
NUMFUSE_ALWAYS_INLINE void widen(const xsimd::batch<float, A>& x, xsimd::batch<double, A>& lo,
                                 xsimd::batch<double, A>& hi) noexcept {
    if constexpr (is_avx512<A>) {
#if defined(__AVX512F__)
        lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
        hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
#endif
    } else if constexpr (std::is_base_of<xsimd::avx, A>::value) {
#if defined(__AVX__)
        lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
        hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
#endif
    } else if constexpr (std::is_base_of<xsimd::sse2, A>::value) {
#if defined(__SSE2__)
        lo = _mm_cvtps_pd(x);
        hi = _mm_cvtps_pd(_mm_movehl_ps(x, x));
#endif
    } else if constexpr (is_neon64<A>) {
#if defined(__aarch64__)
        lo = vcvt_f64_f32(vget_low_f32(x));
        hi = vcvt_high_f64_f32(x);
#endif
    } else {
        constexpr std::size_t n = xsimd::batch<double, A>::size;
        alignas(64) float f[2 * n];
        alignas(64) double d[2 * n];
        x.store_aligned(f);
        for (std::size_t l = 0; l < 2 * n; ++l) d[l] = f[l];
        lo = xsimd::batch<double, A>::load_aligned(d);
        hi = xsimd::batch<double, A>::load_aligned(d + n);
    }
}

template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, A> narrow(const xsimd::batch<double, A>& lo,
                                                    const xsimd::batch<double, A>& hi) noexcept {
    if constexpr (is_avx512<A>) {
#if defined(__AVX512F__)
        const __m256 l = _mm512_cvtpd_ps(lo), h = _mm512_cvtpd_ps(hi);
        return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(l)),
                                                   _mm256_castps_pd(h), 1));
#endif
    } else if constexpr (std::is_base_of<xsimd::avx, A>::value) {
#if defined(__AVX__)
        return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)),
                                    _mm256_cvtpd_ps(hi), 1);
#endif
    } else if constexpr (std::is_base_of<xsimd::sse2, A>::value) {
#if defined(__SSE2__)
        return _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi));
#endif
    } else if constexpr (is_neon64<A>) {
#if defined(__aarch64__)
        return vcvt_high_f32_f64(vcvt_f32_f64(lo), hi);  // rounds to nearest (FPCR default)
#endif
    } else {
        constexpr std::size_t n = xsimd::batch<double, A>::size;
        alignas(64) float f[2 * n];
        alignas(64) double d[2 * n];
        lo.store_aligned(d);
        hi.store_aligned(d + n);
        for (std::size_t l = 0; l < 2 * n; ++l) f[l] = static_cast<float>(d[l]);
        return xsimd::batch<float, A>::load_aligned(f);
    }
}

// NaN lanes of x -> NumPy's result for exp/log of that NaN, other lanes -> y.
template <class T, class A>
inline xsimd::batch<T, A> nan_result(const xsimd::batch<T, A>& x,
                                     const xsimd::batch<T, A>& y) noexcept {
    // Not `x != x`: xsimd 8.1 compiles != to an *ordered* compare on AVX and
    // AVX-512 (_CMP_NEQ_OQ), which is false for NaN.
    const auto isnan = xsimd::isnan(x);
    if constexpr (sizeof(T) == 8) {
        return xsimd::select(isnan, x + x, y);  // x + x quiets an sNaN, keeps payload and sign
    } else {
#if defined(__aarch64__)
        return xsimd::select(isnan, x + x, y);
#else
        return xsimd::select(isnan, from_bits<T, A>(0x7fc00000), y);
#endif
    }
}

// Per-lane table rows turned into coefficient columns on AVX2 (erf's and erfc's float64
// tables): p[l] points at lane l's row of `width` doubles (32-byte aligned, width a
// multiple of 4); c[j] gets entry j of the four lanes' rows. Four 256-bit row loads and a
// 4x4 transpose per 4 entries: AVX2's gathers are slower. (logaddexp's 3-column lookup,
// logaddexp_tables.hpp, keeps its own three permutes: through this function GCC 12 kept
// the column array on the stack and logaddexp_array grew by 9 instructions.)
template <int width, class B>
NUMFUSE_ALWAYS_INLINE void rows_to_columns_avx2([[maybe_unused]] const double* const* p,
                                                [[maybe_unused]] B* c) noexcept {
    static_assert(width % 4 == 0 && B::size == 4, "rows of 4-lane groups");
#if defined(__AVX2__)
    for (int g = 0; g < width; g += 4) {
        const __m256d r0 = _mm256_load_pd(p[0] + g), r1 = _mm256_load_pd(p[1] + g);
        const __m256d r2 = _mm256_load_pd(p[2] + g), r3 = _mm256_load_pd(p[3] + g);
        const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
        const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
        c[g + 0] = _mm256_permute2f128_pd(t0, t2, 0x20);
        c[g + 1] = _mm256_permute2f128_pd(t1, t3, 0x20);
        c[g + 2] = _mm256_permute2f128_pd(t0, t2, 0x31);
        c[g + 3] = _mm256_permute2f128_pd(t1, t3, 0x31);
    }
#endif
}

#if defined(__aarch64__)
// TBL over a 64-byte constant table (four q registers): the bytes of `table` at the byte
// indices idx (an index >= 64 gives 0), for lookups of up to 16 floats or 8 doubles a lane.
// The table is loaded into v28-v31 by one LD1 and read by TBL inside one asm statement:
// GCC 12 allocates the uint8x16x4_t register tuples of vld1q_u8_x4 / vqtbl4q_u8 with a
// register copy per element and spills them to the stack on every loop pass. `table` must
// be constant data (nothing ever writes it, so the asm needs no memory operand).
NUMFUSE_ALWAYS_INLINE uint8x16_t neon_tbl64(const void* table, uint8x16_t idx) noexcept {
    uint8x16_t r;
    __asm__(
        "ld1 {v28.16b-v31.16b}, [%1]\n\t"
        "tbl %0.16b, {v28.16b-v31.16b}, %2.16b"
        : "=w"(r)
        : "r"(table), "w"(idx)
        : "v28", "v29", "v30", "v31");
    return r;
}
// Two lookups in one table (one LD1, two TBLs): a at idx, b at idx2.
NUMFUSE_ALWAYS_INLINE void neon_tbl64_pair(const void* table, uint8x16_t idx, uint8x16_t idx2,
                                           uint8x16_t& a, uint8x16_t& b) noexcept {
    __asm__(
        "ld1 {v28.16b-v31.16b}, [%2]\n\t"
        "tbl %0.16b, {v28.16b-v31.16b}, %3.16b\n\t"
        "tbl %1.16b, {v28.16b-v31.16b}, %4.16b"
        : "=&w"(a), "=w"(b)
        : "r"(table), "w"(idx), "w"(idx2)
        : "v28", "v29", "v30", "v31");
}
#endif

}  // namespace numfuse::kernels::detail
