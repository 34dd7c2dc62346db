// exp(x), scalar, float32 and float64, for the CPU and the GPU (NUMFUSE_HD).
//
// Contract
//   exp_scalar(double) / exp_scalar(float): e^x.
//   Max error <= 1 ULP against the correctly rounded result (enforced by
//   tests/cpp/test_device_math.cpp; benchmarks/cpp/accuracy_harness.cpp prints the
//   measured maxima as the level device_math).
//   Valid range: all inputs.
//     x > 709.782712893384 (f64) / 88.72283935546875 (f32) -> +inf
//     subnormal results are correctly scaled (single rounding); +0 far below
//     exp(+inf) = +inf, exp(-inf) = +0, exp(+-0) = 1
//     exp(NaN): f64 the input quieted (payload and sign kept), f32 the canonical
//     +qNaN 0x7fc00000 -- as NumPy 2.x.
//
// Method: the portable (SSE2 / AVX2) variant of src/core/kernels/exp.hpp, same
// coefficients, with every multiply-add fused (GPUs and FMA CPUs have it):
// x = k ln2 + r, |r| <= ln2/2, Cody-Waite with a short ln2_hi (k ln2_hi exact),
// r = rh + rl kept as a pair, e^r = 1 + r + r^2 Q(r) (minimax, degree 12 f64 /
// 6 f32 overall, tools/explog_remez.py) summed with 1 + rh as an exact two-sum,
// then scaled by 2^k1 * 2^k2 (k1 + k2 = k, both normal): the first product is
// exact, so a subnormal result is rounded once. No table: on a GPU a few more
// FMAs are cheaper than divergent table loads.
#pragma once

#include "device_math/common.hpp"
#include "kernels/exp_reduction.hpp"
#include "kernels/generated/explog_coefficients.hpp"

namespace numfuse::device_math {
namespace exp_detail {

// The reduction constants and clamps, shared with the SIMD kernel (kernels/exp.hpp).
template <class T>
using consts = kernels::detail::exp_consts<T>;

// Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12): the fits exp64_gen / exp32_gen
// of src/core/kernels/generated/explog_coefficients.hpp (also used by
// detail::exp_poly_gen in src/core/kernels/exp.hpp), by Horner.
NUMFUSE_HD inline double poly(double r) noexcept {
    double q = NUMFUSE_EXP64_GEN_C10;
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C9);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C8);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C7);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C6);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C5);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C4);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C3);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C2);
    q = fma_(q, r, NUMFUSE_EXP64_GEN_C1);
    return fma_(q, r, NUMFUSE_EXP64_GEN_C0);
}

NUMFUSE_HD inline float poly(float r) noexcept {
    float q = NUMFUSE_EXP32_GEN_C4;
    q = fma_(q, r, NUMFUSE_EXP32_GEN_C3);
    q = fma_(q, r, NUMFUSE_EXP32_GEN_C2);
    q = fma_(q, r, NUMFUSE_EXP32_GEN_C1);
    return fma_(q, r, NUMFUSE_EXP32_GEN_C0);
}

template <class T>
NUMFUSE_HD inline T exp_finite(T x) noexcept {
    using C = consts<T>;
    using I = typename C::I;
    const T xc = clamp_(x, C::lo_clamp, C::hi_clamp);
    const T z = fma_(xc, C::inv_ln2, C::shifter);  // k = round(x/ln2)
    const T kd = z - C::shifter;
    const T r1 = fma_(-kd, C::ln2_hi, xc);         // exact
    const T kc = kd * C::ln2_lo;
    const T rh = r1 - kc;
    const T rl = (r1 - rh) - kc;
    const T q = poly(rh);
    const T s = fma_(rh * rh, q, fma_(rl, rh, rl));
    const T h = T(1) + rh;
    const T hl = (T(1) - h) + rh;
    const T y = h + (hl + s);
    const I k = static_cast<I>(kd);
    const I k1 = k >> 1;  // floor(k/2): k1, k - k1 both in the normal exponent range
    return (y * pow2_normal(k1)) * pow2_normal(static_cast<I>(k - k1));
}

}  // namespace exp_detail

// exp(x), f64. Max error <= 1 ULP; all inputs; specials as NumPy.
NUMFUSE_HD inline double exp_scalar(double x) noexcept {
    if (is_nan(x)) return quieted(x);
    return exp_detail::exp_finite(x);
}

// exp(x), f32. Max error <= 1 ULP; all inputs; specials as NumPy.
NUMFUSE_HD inline float exp_scalar(float x) noexcept {
    if (is_nan(x)) return canonical_nan_f32();
    return exp_detail::exp_finite(x);
}

}  // namespace numfuse::device_math
