// The array forms of power (x**y) for float64 and float32 (xsimd 8.1).
//
// Contract
//   power_array<Out, Arch>(out, x, y, n): out[k] = x[k]**y[k], k < n, float64 values (out
//   may be x or y); Out = float: float32 values widened by the caller, to be rounded once
//   by it (evaluate's float32 path where no float32 kernel exists). Accuracy and special
//   values: power.hpp's contract (AVX-512: power_avx512.hpp's kernels; AVX2+FMA float64:
//   power_avx2.hpp's kernel; the same bounds).
//   power_array_conditions<Arch>(out, x, y, n): power_array<double> plus NumPy's conditions
//   (PowConditions bits) of these elements, in the same pass (the numfuse.power ufunc).
//   power_array_f32<Arch, Conditions>(out, x, y, n): float32 in and out (out may be x or
//   y): AVX-512 on float32 loads and stores (power_avx512.hpp; constant half-integer
//   exponents through float64 chunks), other levels on float32 loads and stores as well,
//   each batch widened to float64 lanes (power_kernel_f32, or power_halves for a constant
//   half-integer exponent) and rounded once; the conditions when Conditions, else 0.
//   An array whose exponents all equal one half-integer m/2, |m| <= 33 (evaluate's
//   constant exponents: x**3, x**-2, x**2.5) takes power.hpp's exact product path.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/power.hpp"
#include "kernels/power_avx2.hpp"
#include "kernels/power_avx512.hpp"

namespace numfuse::kernels {
namespace detail {

// power_array's body; with Conditions (Out = double only) the conditions of each batch
// from its arguments and results.
template <class Out, class A, bool Conditions>
inline unsigned power_array_impl(double* out, const double* x, const double* y,
                                 std::size_t n) noexcept {
    static_assert(!Conditions || std::is_same<Out, double>::value,
                  "float32 conditions come from the float32 results");
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = B::size;
    if (n == 0) return 0;
    bool constant_half = false;
    int m = 0;
    if (all_equal<A>(y, n)) m = half_integer(y[0], &constant_half);
#if defined(__AVX512F__)
    if constexpr (is_avx512<A> && std::is_same<Out, double>::value) {
        if (!constant_half) return power_f64_avx512_array<A, Conditions>(out, x, y, n);
    }
#endif
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (power_f64_avx2_arch<A> && std::is_same<Out, double>::value) {
        if (!constant_half) return power_f64_avx2_array<A, Conditions>(out, x, y, n);
    }
#endif
    const halves_range range = direct_range(m == 0 ? 1 : m);
    unsigned conditions = 0;
    const auto compute = [&](const double* xs, const double* ys) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        const B xv = B::load_unaligned(xs);
        B r;
        if (constant_half) {
            r = power_halves<Out, A>(xv, m, range);
        } else if constexpr (std::is_same<Out, float>::value) {
            r = power_kernel_f32(xv, B::load_unaligned(ys));
        } else {
            r = power_kernel(xv, B::load_unaligned(ys));
        }
        if constexpr (Conditions) conditions |= pow_conditions(xv, B::load_unaligned(ys), r);
        return r;
    };
    std::size_t k = 0;
    if (!constant_half && !std::is_same<Out, float>::value && !Conditions) {
        // Two independent batches per step: the kernel is one long dependent chain, and
        // the two chains overlap.
        for (; k + 2 * width <= n; k += 2 * width) {
            const B r0 = power_kernel(B::load_unaligned(x + k), B::load_unaligned(y + k));
            const B r1 =
                power_kernel(B::load_unaligned(x + k + width), B::load_unaligned(y + k + width));
            r0.store_unaligned(out + k);
            r1.store_unaligned(out + k + width);
        }
    }
    for (; k + width <= n; k += width) compute(x + k, y + k).store_unaligned(out + k);
    if (k < n) {
        alignas(64) double xa[width], ya[width], oa[width];
        for (std::size_t j = 0; j < width; ++j) xa[j] = ya[j] = 1.0;  // 1 ** 1: no condition
        std::memcpy(xa, x + k, (n - k) * sizeof(double));
        std::memcpy(ya, y + k, (n - k) * sizeof(double));
        compute(xa, ya).store_aligned(oa);
        std::memcpy(out + k, oa, (n - k) * sizeof(double));
    }
    return conditions;
}

// power_array_f32 below AVX-512: float32 batches loaded and stored as such, each widened
// to two float64 batches (two independent chains) for kernel(x, y), rounded once; the
// conditions from the float32 batch. The tail goes through a buffer padded with 1 ** 1 (no
// condition).
template <class A, bool Conditions, class Kernel>
inline unsigned power_f32_widened_loop(float* out, const float* x, const float* y, std::size_t n,
                                       const Kernel& kernel) noexcept {
    using F = xsimd::batch<float, A>;
    using B = xsimd::batch<double, A>;
    constexpr std::size_t width = F::size;
    unsigned conditions = 0;
    const auto compute = [&](const float* xs, const float* ys, float* os)
                             NUMFUSE_ALWAYS_INLINE_LAMBDA {
                                 const F xf = F::load_unaligned(xs), yf = F::load_unaligned(ys);
                                 B xl, xh, yl, yh;
                                 widen(xf, xl, xh);
                                 widen(yf, yl, yh);
                                 const F r = narrow(kernel(xl, yl), kernel(xh, yh));
                                 if constexpr (Conditions) {
                                     conditions |= pow_conditions(xf, yf, r);
                                 }
                                 r.store_unaligned(os);
                             };
    std::size_t k = 0;
    for (; k + width <= n; k += width) compute(x + k, y + k, out + k);
    if (k < n) {
        alignas(64) float xa[width], ya[width], oa[width];
        for (std::size_t j = 0; j < width; ++j) xa[j] = ya[j] = 1.0f;
        std::memcpy(xa, x + k, (n - k) * sizeof(float));
        std::memcpy(ya, y + k, (n - k) * sizeof(float));
        compute(xa, ya, oa);
        std::memcpy(out + k, oa, (n - k) * sizeof(float));
    }
    return conditions;
}

// power_array_f32 below AVX-512: power_kernel_f32, or power_halves where every exponent is
// the half-integer m/2 (constant_half).
template <class A, bool Conditions>
inline unsigned power_f32_widened_array(float* out, const float* x, const float* y, std::size_t n,
                                        bool constant_half, int m) noexcept {
    using B = xsimd::batch<double, A>;
    if (constant_half) {
        const halves_range range = direct_range(m == 0 ? 1 : m);
        return power_f32_widened_loop<A, Conditions>(
            out, x, y, n, [&](const B& xv, const B&) NUMFUSE_ALWAYS_INLINE_LAMBDA {
                return power_halves<float, A>(xv, m, range);
            });
    }
    return power_f32_widened_loop<A, Conditions>(
        out, x, y, n, [](const B& xv, const B& yv) NUMFUSE_ALWAYS_INLINE_LAMBDA {
            return power_kernel_f32(xv, yv);
        });
}

}  // namespace detail

// out[k] = x[k]**y[k] for k < n (contract above).
template <class Out, class A>
inline void power_array(double* out, const double* x, const double* y, std::size_t n) noexcept {
    detail::power_array_impl<Out, A, false>(out, x, y, n);
}

// power_array<double> and the PowConditions of its elements (contract above).
template <class A>
inline unsigned power_array_conditions(double* out, const double* x, const double* y,
                                       std::size_t n) noexcept {
    return detail::power_array_impl<double, A, true>(out, x, y, n);
}

// float32 x**y (contract above).
template <class A, bool Conditions>
inline unsigned power_array_f32(float* out, const float* x, const float* y,
                                std::size_t n) noexcept {
    if (n == 0) return 0;
    bool constant_half = false;
    int m = 0;
    if (detail::all_equal<A>(y, n)) {
        m = detail::half_integer(static_cast<double>(y[0]), &constant_half);
    }
    if constexpr (!detail::is_avx512<A>) {
        return detail::power_f32_widened_array<A, Conditions>(out, x, y, n, constant_half, m);
    }
#if defined(__AVX512F__)
    // AVX-512: a constant half-integer exponent keeps the product path below
    if (!constant_half) return detail::power_f32_avx512_array<A, Conditions>(out, x, y, n);
#endif
    using F = xsimd::batch<float, A>;
    constexpr std::size_t chunk = 256;
    alignas(64) double xa[chunk], ya[chunk];
    alignas(64) float xf[chunk], yf[chunk];
    unsigned conditions = 0;
    for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t count = n - start < chunk ? n - start : chunk;
        if constexpr (Conditions) {  // the arguments, kept where out overlaps them
            std::memcpy(xf, x + start, count * sizeof(float));
            std::memcpy(yf, y + start, count * sizeof(float));
        }
        for (std::size_t k = 0; k < count; ++k) {
            xa[k] = static_cast<double>(x[start + k]);
            ya[k] = static_cast<double>(y[start + k]);
        }
        power_array<float, A>(xa, xa, ya, count);
        for (std::size_t k = 0; k < count; ++k) out[start + k] = static_cast<float>(xa[k]);
        if constexpr (Conditions) {
            for (std::size_t k = 0; k < count; k += F::size) {
                alignas(64) float xb[F::size], yb[F::size], rb[F::size];
                for (std::size_t j = 0; j < F::size; ++j) xb[j] = yb[j] = rb[j] = 1.0f;
                const std::size_t c = count - k < F::size ? count - k : F::size;
                std::memcpy(xb, xf + k, c * sizeof(float));
                std::memcpy(yb, yf + k, c * sizeof(float));
                std::memcpy(rb, out + start + k, c * sizeof(float));
                conditions |= detail::pow_conditions(F::load_aligned(xb), F::load_aligned(yb),
                                                     F::load_aligned(rb));
            }
        }
    }
    return conditions;
}

}  // namespace numfuse::kernels
