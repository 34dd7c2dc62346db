// log(x) (natural logarithm), scalar, float32 and float64, for the CPU and the GPU.
//
// Contract
//   log_scalar(double) / log_scalar(float): ln x.
//   Max error <= 1 ULP against the correctly rounded result (enforced by
//   tests/cpp/test_device_math.cpp; benchmarks/cpp/accuracy_harness.cpp prints the
//   measured maxima as the level device_math), subnormal inputs included.
//   Specials (as NumPy 2.x): log(+-0) = -inf; log(x < 0) = log(-inf) = default
//   NaN with the sign bit set (0xfff8000000000000 / 0xffc00000); log(+inf) = +inf;
//   log(1) = +0; log(NaN): f64 the input quieted (payload and sign kept), f32 the
//   canonical +qNaN 0x7fc00000.
//
// Method: the portable variant of src/core/kernels/log.hpp, same coefficients,
// multiply-adds fused. x = (1 + f) 2^E with 1 + f in [1/sqrt2, sqrt2) by integer
// bit arithmetic (subnormals pre-scaled by 2^54 / 2^25); s = f / (2 + f);
// log(1 + f) = f - f^2/2 + s (f^2/2 + s^2 P(s^2)) (minimax P, degree 6 f64 /
// 2 f32, tools/explog_remez.py); f^2/2 split so that f - f^2/2 is exact and
// E ln2_hi + (f - f^2/2) is summed as an exact pair. No table.
#pragma once

#include "device_math/common.hpp"
#include "kernels/generated/explog_coefficients.hpp"

namespace numfuse::device_math {
namespace log_detail {

template <class T>
struct consts;

template <>
struct consts<double> {
    using I = std::int64_t;
    using U = std::uint64_t;
    static constexpr double min_normal = 0x1.0p-1022;
    static constexpr double sub_scale = 0x1.0p54;
    static constexpr double sub_exp = 54.0;
    static constexpr U off = 0x00095f619980c433ull;     // bits(1.0) - bits(RN(1/sqrt2))
    static constexpr U m_base = 0x3fe6a09e667f3bcdull;  // bits(RN(1/sqrt2))
    static constexpr U mant_mask = 0x000fffffffffffffull;
    static constexpr int mant_bits = 52;
    static constexpr int bias = 1023;
    static constexpr double split_shifter = 0x1.8p26;   // rounds |f| < 1/2 to the 2^-26 grid
    static constexpr double ln2_hi = 0x1.62e42fefa38p-1;
    static constexpr double ln2_lo = 0x1.ef35793c7673p-45;
    static constexpr U neg_nan = 0xfff8000000000000ull;
    static constexpr U pos_inf = 0x7ff0000000000000ull;
    static constexpr U neg_inf = 0xfff0000000000000ull;
};

template <>
struct consts<float> {
    using I = std::int32_t;
    using U = std::uint32_t;
    static constexpr float min_normal = 0x1.0p-126f;
    static constexpr float sub_scale = 0x1.0p25f;
    static constexpr float sub_exp = 25.0f;
    static constexpr U off = 0x004afb0du;
    static constexpr U m_base = 0x3f3504f3u;
    static constexpr U mant_mask = 0x007fffffu;
    static constexpr int mant_bits = 23;
    static constexpr int bias = 127;
    static constexpr float split_shifter = 0x1.8p12f;
    static constexpr float ln2_hi = 0x1.62e4p-1f;
    static constexpr float ln2_lo = 0x1.7f7d1cp-20f;
    static constexpr U neg_nan = 0xffc00000u;
    static constexpr U pos_inf = 0x7f800000u;
    static constexpr U neg_inf = 0xff800000u;
};

NUMFUSE_HD inline double from_bits_(std::uint64_t u, double) noexcept {
    return double_from_bits(u);
}
NUMFUSE_HD inline float from_bits_(std::uint32_t u, float) noexcept { return float_from_bits(u); }

// P(z) ~ (2 atanh(s) - 2 s) / s^3, z = s^2: the fits log64_gen / log32_gen of
// src/core/kernels/generated/explog_coefficients.hpp (also used by detail::log_poly_gen
// in src/core/kernels/log.hpp), by Horner.
NUMFUSE_HD inline double poly(double z) noexcept {
    double p = NUMFUSE_LOG64_GEN_C6;
    p = fma_(p, z, NUMFUSE_LOG64_GEN_C5);
    p = fma_(p, z, NUMFUSE_LOG64_GEN_C4);
    p = fma_(p, z, NUMFUSE_LOG64_GEN_C3);
    p = fma_(p, z, NUMFUSE_LOG64_GEN_C2);
    p = fma_(p, z, NUMFUSE_LOG64_GEN_C1);
    return fma_(p, z, NUMFUSE_LOG64_GEN_C0);
}

NUMFUSE_HD inline float poly(float z) noexcept {
    float p = NUMFUSE_LOG32_GEN_C2;
    p = fma_(p, z, NUMFUSE_LOG32_GEN_C1);
    return fma_(p, z, NUMFUSE_LOG32_GEN_C0);
}

// ln x for positive, finite x (normal or subnormal).
template <class T>
NUMFUSE_HD inline T log_positive(T x) noexcept {
    using C = consts<T>;
    using I = typename C::I;
    using U = typename C::U;
    const bool sub = x < C::min_normal;
    const T xs = sub ? x * C::sub_scale : x;
    const U u = bits_of(xs) + C::off;  // exponent field of u = E + bias
    T e = static_cast<T>(static_cast<I>(u >> C::mant_bits) - C::bias);
    if (sub) e -= C::sub_exp;
    const T m =
        from_bits_(static_cast<U>((u & C::mant_mask) + C::m_base), T());  // [1/sqrt2, sqrt2)
    const T f = m - T(1);  // exact
    const T s = f / (T(2) + f);
    const T z = s * s;
    const T r = z * poly(z);
    // f^2/2 = big_a + small_a with big_a = fh^2/2 exact and f - big_a exact.
    const T fh = (f + C::split_shifter) - C::split_shifter;
    const T fl = f - fh;
    const T big_a = T(0.5) * (fh * fh);
    const T small_a = fl * fma_(T(0.5), fl, fh);
    const T hfsq = big_a + small_a;
    const T fa = f - big_a;  // exact
    const T eh = e * C::ln2_hi;  // exact
    const T hi = eh + fa;
    const T err = (eh - hi) + fa;
    const T lo = fma_(s, hfsq + r, fma_(e, C::ln2_lo, err - small_a));
    return hi + lo;
}

template <class T>
NUMFUSE_HD inline T log_special_or(T x, T nan_result) noexcept {
    using C = consts<T>;
    if (is_nan(x)) return nan_result;
    if (x == T(0)) return from_bits_(C::neg_inf, T());
    if (x < T(0)) return from_bits_(C::neg_nan, T());
    if (bits_of(x) == C::pos_inf) return x;
    return log_positive(x);
}

}  // namespace log_detail

// log(x), f64. Max error <= 1 ULP; all inputs; specials as NumPy.
NUMFUSE_HD inline double log_scalar(double x) noexcept {
    return log_detail::log_special_or(x, quieted(x));
}

// log(x), f32. Max error <= 1 ULP; all inputs; specials as NumPy.
NUMFUSE_HD inline float log_scalar(float x) noexcept {
    return log_detail::log_special_or(x, canonical_nan_f32());
}

}  // namespace numfuse::device_math
