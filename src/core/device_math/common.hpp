// Scalar math shared by the CPU (g++) and the GPU (nvcc): the one source of truth
// for the per-element kernels of the optional CUDA path.
//
// Every function here is `NUMFUSE_HD inline`: __host__ __device__ under nvcc, plain
// inline otherwise, so tests/cpp/test_device_math.cpp checks on the CPU exactly the
// code the GPU runs. Rules that keep host and device results bit-identical:
//   * every fused multiply-add is written as fma()/fmaf(); the CUDA sources are
//     compiled with -fmad=false so nvcc adds none of its own (g++ contracts none in
//     ISO C++ mode);
//   * NaN results are built from bit patterns: GPU arithmetic does not propagate NaN
//     payloads, x86 does;
//   * no library calls other than fma (exact on both sides); abs, clamp, copysign by hand.
// No xsimd, no <cmath> overload sets that differ between host and device.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define NUMFUSE_HD __host__ __device__
#else
#define NUMFUSE_HD
#include <cmath>
#endif

namespace numfuse::device_math {

NUMFUSE_HD inline std::uint64_t bits_of(double x) noexcept {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#endif
}

NUMFUSE_HD inline std::uint32_t bits_of(float x) noexcept {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint32_t>(__float_as_uint(x));
#else
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#endif
}

NUMFUSE_HD inline double double_from_bits(std::uint64_t u) noexcept {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(u));
#else
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
#endif
}

NUMFUSE_HD inline float float_from_bits(std::uint32_t u) noexcept {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
#endif
}

// x != x without relying on the compiler's view of NaN comparisons.
NUMFUSE_HD inline bool is_nan(double x) noexcept {
    return (bits_of(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}
NUMFUSE_HD inline bool is_nan(float x) noexcept { return (bits_of(x) & 0x7fffffffu) > 0x7f800000u; }

// What NumPy 2.x returns for exp/log of a NaN: f64 keeps the input's payload and
// sign and sets the quiet bit (x + x on x86); f32 gives the canonical +qNaN.
NUMFUSE_HD inline double quieted(double x) noexcept {
    return double_from_bits(bits_of(x) | 0x0008000000000000ull);
}
NUMFUSE_HD inline float canonical_nan_f32() noexcept { return float_from_bits(0x7fc00000u); }
NUMFUSE_HD inline double canonical_nan_f64() noexcept {
    return double_from_bits(0x7ff8000000000000ull);
}

NUMFUSE_HD inline double fma_(double a, double b, double c) noexcept {
#if defined(__CUDA_ARCH__)
    return ::fma(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}
NUMFUSE_HD inline float fma_(float a, float b, float c) noexcept {
#if defined(__CUDA_ARCH__)
    return ::fmaf(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}

NUMFUSE_HD inline double abs_(double x) noexcept {
    return double_from_bits(bits_of(x) & 0x7fffffffffffffffull);
}
NUMFUSE_HD inline float abs_(float x) noexcept { return float_from_bits(bits_of(x) & 0x7fffffffu); }

// Clamp to [lo, hi]; a NaN x gives lo or hi (callers replace NaN results anyway).
template <class T>
NUMFUSE_HD inline T clamp_(T x, T lo, T hi) noexcept {
    return x < lo ? lo : (x > hi ? hi : (x == x ? x : lo));
}

// 2^k for a normal exponent k (emin <= k <= emax), by construction of the bits.
NUMFUSE_HD inline double pow2_normal(std::int64_t k) noexcept {
    return double_from_bits(static_cast<std::uint64_t>(k + 1023) << 52);
}
NUMFUSE_HD inline float pow2_normal(std::int32_t k) noexcept {
    return float_from_bits(static_cast<std::uint32_t>(k + 127) << 23);
}

}  // namespace numfuse::device_math
