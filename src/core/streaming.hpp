// Streaming (non-temporal) stores: how numfuse writes outputs far larger than
// the caches. They cannot stay cached anyway, and bypassing the caches saves
// the read-for-ownership of every output line (a quarter of the memory
// traffic of `2*a + 3*b`). The x86 intrinsics live behind their guards with
// the plain store beside them, so other architectures compile and run the
// generic path.
//
// Everything here has internal linkage: the header is included by the
// per-level translation units (compiled with wider instruction sets) as well
// as by baseline code, and no out-of-line copy may be shared between them.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#define NUMFUSE_STREAMING_X86 1
#endif

namespace numfuse::core {
namespace {

// Outputs of at least this many bytes are written with streaming stores
// (the ufunc loops and the expression VM). Without x86's non-temporal stores
// (aarch64: STNP is only a hint, with no compiler intrinsic) the streaming
// paths would add a buffer copy and nothing else, so they are never taken.
#ifdef NUMFUSE_STREAMING_X86
constexpr std::size_t streaming_min_bytes = std::size_t{32} << 20;
#else
constexpr std::size_t streaming_min_bytes = static_cast<std::size_t>(-1);
#endif

// Stores one batch to `aligned_dst` (aligned to the batch) with a
// non-temporal store where the architecture has one.
template <class Arch, class T>
inline void store_streaming(const xsimd::batch<T, Arch>& value, T* aligned_dst) noexcept {
#if defined(__AVX512F__)
    if constexpr (std::is_base_of<xsimd::avx512f, Arch>::value) {
        if constexpr (std::is_same<T, double>::value) {
            _mm512_stream_pd(aligned_dst, value);
        } else {
            _mm512_stream_ps(aligned_dst, value);
        }
        return;
    }
#endif
#if defined(__AVX__)
    if constexpr (std::is_base_of<xsimd::avx, Arch>::value) {
        if constexpr (std::is_same<T, double>::value) {
            _mm256_stream_pd(aligned_dst, value);
        } else {
            _mm256_stream_ps(aligned_dst, value);
        }
        return;
    }
#endif
#if defined(__SSE2__)
    if constexpr (std::is_base_of<xsimd::sse2, Arch>::value) {
        if constexpr (std::is_same<T, double>::value) {
            _mm_stream_pd(aligned_dst, value);
        } else {
            _mm_stream_ps(aligned_dst, value);
        }
        return;
    }
#endif
    value.store_aligned(aligned_dst);
}

// Copies `bytes` from a (cache-resident, 16-byte-aligned) buffer to
// 16-byte-aligned `dst` with streaming stores.
inline void stream_copy(char* dst, const char* src, std::size_t bytes) noexcept {
#ifdef NUMFUSE_STREAMING_X86
    std::size_t k = 0;
    for (; k + 64 <= bytes; k += 64) {
        const __m128i v0 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + k));
        const __m128i v1 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + k + 16));
        const __m128i v2 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + k + 32));
        const __m128i v3 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + k + 48));
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k), v0);
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k + 16), v1);
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k + 32), v2);
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k + 48), v3);
    }
    for (; k + 16 <= bytes; k += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k),
                         _mm_load_si128(reinterpret_cast<const __m128i*>(src + k)));
    }
    if (k < bytes) std::memcpy(dst + k, src + k, bytes - k);
#else
    std::memcpy(dst, src, bytes);
#endif
}

// Orders a thread's streaming stores before its later stores (and before the
// join that publishes them); call once after the last streaming store.
inline void stream_fence() noexcept {
#ifdef NUMFUSE_STREAMING_X86
    _mm_sfence();
#endif
}

}  // namespace
}  // namespace numfuse::core
