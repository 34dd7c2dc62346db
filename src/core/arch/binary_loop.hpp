// The strided two-argument ufunc loops (logaddexp, logaddexp2, hypot, arctan2, power),
// instantiated once per instruction-set level; included by level_unit.hpp after expr_ops.hpp and
// unary_loop.hpp, in the level's namespace for the reason unary_loop.hpp gives.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "arch/expr_ops.hpp"
#include "lse_accumulator.hpp"
#include "numfuse_core.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including binary_loop.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE {

// Each operation: compute<Arch, Out>(out, a, b, n), the evaluate functor's array kernel on
// float64 values (float32 ones widened; Out is the type the results are rounded to),
// one<Arch, Out>(a, b), the same kernel on one pair with the same bits (binary_fold's
// in-order chains) -- both from ArrayKernelOp --, a cheap per-batch test that is true
// wherever a floating-point condition may arise, and the exact per-element rule for the
// conditions NumPy reports.
template <class F>
struct ArrayKernelOp {
    template <class Arch, class Out>
    static void compute(double* out, const double* a, const double* b, std::size_t n) noexcept {
        F::template array<Arch, Out>(out, a, b, n);
    }
    template <class Arch, class Out>
    static double one(double a, double b) noexcept {
        return F::template one<Arch, Out>(a, b);
    }
};

// float32 logaddexp and logaddexp2 (has_f32_conditions): the conditions of a chunk from its
// inputs (binary_flags), then the float32 array kernel on it (kernels/logaddexp.hpp: widened
// and narrowed in vector registers).
template <class Arch, class Op, class T>
unsigned binary_flags(const T* a, const T* b, std::size_t n) noexcept;  // below

template <class Arch, class Op, class Kernel>
unsigned logaddexp_conditions_f32(float* out, const float* a, const float* b, std::size_t n,
                                  Kernel kernel) noexcept {
    constexpr std::size_t chunk = 1024;
    unsigned flags = fp_none;
    for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t count = n - start < chunk ? n - start : chunk;
        flags |= binary_flags<Arch, Op, float>(a + start, b + start, count);
        kernel(out + start, a + start, b + start, count);
    }
    return flags;
}

struct LogaddexpOp : ArrayKernelOp<expr_ops::Logaddexp> {
    // Reduce and accumulate are a log-sum-exp (binary_fold).
    static constexpr bool folds_as_log_sum_exp = true;
    static constexpr bool f32_conditions = true;
    template <class Arch>
    static unsigned compute_conditions_f32(float* out, const float* a, const float* b,
                                           std::size_t n) noexcept {
        return logaddexp_conditions_f32<Arch, LogaddexpOp>(out, a, b, n,
                                                           &kernels::logaddexp_array_f32<Arch>);
    }
    // NumPy's npy_logaddexp computes d = a - b, then log1p(exp(-|d|)): conditions arise
    // only where |d| exceeds exp's underflow limit, d overflows, or an input is NaN.
    template <class B>
    static inline auto may_raise(const B& a, const B& b) noexcept {
        using T = typename B::value_type;
        return ~(xsimd::abs(a - b) <= B(sizeof(T) == 4 ? T(87) : T(708)));
    }
    template <class T>
    static unsigned flags(T a, T b) noexcept {
        if (a != a || b != b) return fp_invalid;  // NumPy's compares raise it
        if (a == b) return fp_none;               // a + log(2), infinities included
        const bool finite = a - a == T(0) && b - b == T(0);
        if (!finite) return fp_none;  // exp(-inf) is an exact 0
        const T d = a - b;
        if (d - d != T(0)) return fp_overflow;
        const T tail = std::exp(-(d < T(0) ? -d : d));
        return tail < std::numeric_limits<T>::min() ? fp_underflow : fp_none;
    }
};

// logaddexp2: NumPy's npy_logaddexp2 as npy_logaddexp, with exp2 (underflow beyond |d| of
// 1022, 126 for float32). reduce and accumulate go element by element (binary_fold).
struct Logaddexp2Op : ArrayKernelOp<expr_ops::Logaddexp2> {
    static constexpr bool f32_conditions = true;
    template <class Arch>
    static unsigned compute_conditions_f32(float* out, const float* a, const float* b,
                                           std::size_t n) noexcept {
        return logaddexp_conditions_f32<Arch, Logaddexp2Op>(out, a, b, n,
                                                            &kernels::logaddexp2_array_f32<Arch>);
    }
    template <class B>
    static inline auto may_raise(const B& a, const B& b) noexcept {
        using T = typename B::value_type;
        return ~(xsimd::abs(a - b) <= B(sizeof(T) == 4 ? T(125) : T(1021)));
    }
    template <class T>
    static unsigned flags(T a, T b) noexcept {
        if (a != a || b != b) return fp_invalid;  // NumPy's compares raise it
        if (a == b) return fp_none;               // a + 1, infinities included
        const bool finite = a - a == T(0) && b - b == T(0);
        if (!finite) return fp_none;  // exp2(-inf) is an exact 0
        const T d = a - b;
        if (d - d != T(0)) return fp_overflow;
        const T tail = std::exp2(-(d < T(0) ? -d : d));
        return tail < std::numeric_limits<T>::min() ? fp_underflow : fp_none;
    }
};

// hypot: conditions only where the result may overflow (max(|a|, |b|) above 2^1023, 2^127
// for float32) or be subnormal (below 2^-1021, 2^-125), as glibc's hypot and NumPy report
// them: overflow for an infinite result of finite arguments, underflow for a subnormal (or
// zero) result of two nonzero arguments (the rule takes the C library's hypot of the pair
// for the result); infinities and NaNs raise nothing.
struct HypotOp : ArrayKernelOp<expr_ops::Hypot> {
    template <class B>
    static inline auto may_raise(const B& a, const B& b) noexcept {
        using T = typename B::value_type;
        const B big = xsimd::max(xsimd::abs(a), xsimd::abs(b));
        const T huge = sizeof(T) == 4 ? T(0x1p127) : T(0x1p1023);
        const T tiny = sizeof(T) == 4 ? T(0x1p-125) : T(0x1p-1021);
        return ~((big <= B(huge)) & (big >= B(tiny)));
    }
    template <class T>
    static unsigned flags(T a, T b) noexcept {
        if (!(a - a == T(0)) || !(b - b == T(0))) return fp_none;
        const T y = std::hypot(a, b);
        if (y == std::numeric_limits<T>::infinity()) return fp_overflow;
        const T small = std::fabs(a) < std::fabs(b) ? std::fabs(a) : std::fabs(b);
        if (y < std::numeric_limits<T>::min() && small != T(0)) return fp_underflow;
        return fp_none;
    }
};

// arctan2: conditions only where the result may be subnormal or zero (|y| below 2^60 times
// the smallest normal and below |x| 2^-50, or below |x| 2^-1000, float32 2^-100): underflow
// for a result below the smallest normal where |y| is below 4 times the smallest normal,
// the result rounds to zero, or 1/|x| is subnormal -- the rule NumPy's float64 loop (SVML on
// this AVX-512 machine) follows on the tests' probes; glibc's atan2 differs for a few such
// pairs. float32: where |y| is below 2 times the smallest normal or |x| >= 2^123, as NumPy
// 2.4.6's float32 loop (SVML) on every probe (both edges to the last bit, 4000 random pairs
// of log-uniform |y| in [2^-149, 1] and |x| in [2^-20, 2^128]); it reports nothing for
// (3e-38, 100) or (1e-30, 1e20), subnormal or zero results of a normal y and an ordinary x.
// The rule takes the C library's atan2 of the pair for the result, for the pairs that pass
// the screen alone; no other condition arises. The screen's multiplies see no subnormal
// operand or result (microcode assists on x86): a subnormal |y| is flagged outright, and
// y / x < far is tested as |y| / far < |x|. float32 runs in float32 lanes with the
// conditions in the same pass (compute_conditions_f32: kernels/atan2.hpp's atan2_f32_array
// screens only the batches its fast float32 form does not take, the only ones that can
// raise), the rule of a flagged float32 batch in vector lanes (flags_batch: per element,
// the C library's atan2 cost ~40 ns).
struct Arctan2Op : ArrayKernelOp<expr_ops::Arctan2> {
    static constexpr bool f32_conditions = true;
    // The batch rule where the kernel's tiny quotients are cheap (AVX-512: no subnormal
    // operation); elsewhere a flagged batch's kernel divides into the subnormal range, and
    // the pair rule (one division for a flagged pair) is faster.
    template <class Arch>
    static constexpr bool batch_flags_f64 = kernels::detail::is_avx512<Arch>;
    template <class Arch>
    static unsigned compute_conditions_f32(float* out, const float* a, const float* b,
                                           std::size_t n) noexcept {
        unsigned flags = fp_none;
        kernels::atan2_f32_array<Arch>(
            out, a, b, n,
            [&flags](const xsimd::batch<float, Arch>& y, const xsimd::batch<float, Arch>& x)
                NUMFUSE_ALWAYS_INLINE_LAMBDA {
                    if (xsimd::any(may_raise(y, x))) flags |= flags_batch<Arch>(y, x);
                });
        return flags;
    }
    template <class B>
    static inline auto may_raise(const B& y, const B& x) noexcept {
        using T = typename B::value_type;
        if constexpr (sizeof(T) == 8) {
            // A superset of the rule below on the bit patterns (no multiply; ordinary batches
            // are all the screen costs): |y| below 2^-962 or |x| / |y| above 2^999.
            using I = xsimd::batch<std::int64_t, typename B::arch_type>;
            const I iy = kernels::detail::as_int(xsimd::abs(y));
            const I ix = kernels::detail::as_int(xsimd::abs(x));
            return (iy < I(0x03d0000000000000)) | (ix - iy > I(std::int64_t(999) << 52));
        } else {
            // The same superset for float32: |y| below 2^-66 (the rule's min 2^60) or |x| / |y|
            // above 2^99 (the rule's 2^100; a NaN or infinite |x| is flagged too, and the
            // batch rule sorts it out). Half the operations of the rule's own form, whose two
            // multiplies and three compares cost as much as the float32 kernel's screen.
            using I = xsimd::batch<std::int32_t, typename B::arch_type>;
            const I iy = kernels::detail::as_int(xsimd::abs(y));
            const I ix = kernels::detail::as_int(xsimd::abs(x));
            return (iy < I(0x1e800000)) | (ix - iy > I(99 << 23));
        }
    }
    template <class T>
    static bool may_raise_one(T ay, T ax) noexcept {
        const T mn = std::numeric_limits<T>::min();
        const T ayn = ay < mn ? mn : ay;
        const T tiny = mn * T(0x1p60);
        const T far_inv = sizeof(T) == 4 ? T(0x1p100) : T(0x1p1000);
        return ay < mn || (ay < tiny && ayn * T(0x1p50) < ax) || ayn * far_inv < ax;
    }
    // float32: the rule for a whole batch at once, in float64 lanes (float32 values are
    // normal float64 ones, so no assist): only x > 0 gives a result below the smallest
    // normal, and there atan2(y, x) rounds as y / x does (atan t = t (1 - t^2/3 ...), t <
    // 2^-125), the float64 quotient rounded to float32 (two roundings; they differ from one
    // only within 2^-29 ULP of a float32 midpoint).
    template <class Arch>
    static unsigned flags_batch(const xsimd::batch<float, Arch>& y,
                                const xsimd::batch<float, Arch>& x) noexcept {
        using F = xsimd::batch<float, Arch>;
        using D = xsimd::batch<double, Arch>;
        D ylo, yhi, xlo, xhi;
        kernels::detail::widen(y, ylo, yhi);
        kernels::detail::widen(x, xlo, xhi);
        const F r = xsimd::abs(kernels::detail::narrow(ylo / xlo, yhi / xhi));
        const F ay = xsimd::abs(y), ax = xsimd::abs(x);
        const F tiny(std::numeric_limits<float>::min()),
            inf(std::numeric_limits<float>::infinity());
        const auto under = (ay < inf) & (ax < inf) & (ay > F(0.0f)) & (x > F(0.0f)) & (r < tiny) &
                           ((ay < F(0x1p-125f)) | (ax >= F(0x1p123f)));
        return xsimd::any(under) ? fp_underflow : fp_none;
    }
    // float64: the rule for a whole flagged batch at once, on the kernel's own results (a
    // result below the smallest normal comes only from x > 0, and there it is the correctly
    // rounded quotient y / x, as below); may_raise_one holds wherever that result is below
    // the smallest normal (|y| normal: |x| > |y| 2^1022), so it is not tested again.
    template <class Arch>
    static unsigned flags_batch(const xsimd::batch<double, Arch>& y,
                                const xsimd::batch<double, Arch>& x) noexcept {
        using B = xsimd::batch<double, Arch>;
        const B r = xsimd::abs(kernels::atan2_kernel(y, x));
        const B ay = xsimd::abs(y), ax = xsimd::abs(x);
        const B tiny(std::numeric_limits<double>::min()),
            inf(std::numeric_limits<double>::infinity());
        const auto under = (ay < inf) & (ax < inf) & (ay > B(0.0)) & (r < tiny) &
                           ((ay < B(4.0) * tiny) | (r == B(0.0)) | (ax >= B(1.0) / tiny));
        return xsimd::any(under) ? fp_underflow : fp_none;
    }
    // One pair: a result below the smallest normal needs x > 0 (else it is at least pi/2 in
    // magnitude), and there atan2(y, x) rounds as the quotient y / x (atan t = t (1 - t^2/3
    // ...), t below 2^-960), which is what the kernels return.
    template <class T>
    static unsigned flags(T y, T x) noexcept {
        if (!(y - y == T(0)) || !(x - x == T(0)) || y == T(0) || !(x > T(0))) return fp_none;
        if (!may_raise_one<T>(y < T(0) ? -y : y, x)) return fp_none;
        const T r = y / x;
        const T ar = r < T(0) ? -r : r;
        const T ay = y < T(0) ? -y : y;
        const T tiny = std::numeric_limits<T>::min();
        const T ax = x < T(0) ? -x : x;
        if (!(ar < tiny)) return fp_none;
        if constexpr (sizeof(T) == 4) {
            return ay < T(2) * tiny || ax >= T(0x1p123) ? fp_underflow : fp_none;
        } else {
            return ay < T(4) * tiny || r == T(0) || ax >= T(1) / tiny ? fp_underflow : fp_none;
        }
    }
};

// power and float_power (np.power's float loops): kernels/power_arrays.hpp's array kernels
// compute the results and the conditions NumPy reports in one pass (fused_conditions:
// compute_conditions for float64, compute_conditions_f32 for float32 on float32 loads and
// stores), contiguous operands in place, others through stack buffers. NumPy's loops (SVML
// on AVX-512, glibc's pow elsewhere) report, for non-NaN arguments: divide-by-zero for
// 0 ** y, y < 0 (y = -inf included); invalid for a finite x < 0 and a finite non-integer
// y; overflow for an infinite result of finite arguments; underflow for a result below
// the smallest normal (exact subnormals and zeros included) of finite arguments, x != 0.
// Infinite and NaN arguments raise nothing. The folds (reduce, accumulate) take one pair
// at a time (one: the kernel with n = 1, the same bits) with the screen and rule below:
// x not above the smallest normal (zero, negative, subnormal, NaN), or |y| (|E| + 1) >=
// 1022 (float32: 126) with E x's exponent: elsewhere |y log2 x| < 1022 keeps the result
// normal and finite.
static_assert(unsigned{kernels::pow_divide_by_zero} == unsigned{fp_divide_by_zero} &&
                  unsigned{kernels::pow_overflow} == unsigned{fp_overflow} &&
                  unsigned{kernels::pow_underflow} == unsigned{fp_underflow} &&
                  unsigned{kernels::pow_invalid} == unsigned{fp_invalid},
              "kernels::PowConditions are FpFlag bits");
//
// The machine's convention (core::power_convention, NumPy's answers where C99 leaves the
// choice open: its loops are SVML's on AVX-512 machines, the C library's pow elsewhere)
// is applied after the kernels, which follow C99 and SVML: a NaN x with an odd integer y
// gives the NaN with its sign cleared (glibc: the sign of x**odd is x's, applied to |x|**y);
// 0 ** -inf raises no divide-by-zero; a subnormal result that is exact (|x| a power of two,
// y log2|x| an integer: the only exact ones glibc's pow computes exactly) raises no
// underflow. The fused loops take the kernels by chunks, their arguments kept (copied where
// the output is one of them), and fix the chunk's NaNs and conditions afterwards (the
// conditions by the exact rule, only in chunks where the kernels reported one).
struct PowOp {
    static constexpr bool fused_conditions = true;
    template <class Arch>
    static unsigned compute_conditions(double* out, const double* a, const double* b,
                                       std::size_t n) noexcept {
        return with_convention<Arch>(
            out, a, b, n, [](double* o, const double* x, const double* y, std::size_t count) {
                return kernels::power_array_conditions<Arch>(o, x, y, count);
            });
    }
    template <class Arch>
    static unsigned compute_conditions_f32(float* out, const float* a, const float* b,
                                           std::size_t n) noexcept {
        return with_convention<Arch>(
            out, a, b, n, [](float* o, const float* x, const float* y, std::size_t count) {
                return kernels::power_array_f32<Arch, true>(o, x, y, count);
            });
    }
    // (binary_loop's other paths, which the fused one replaces, still name it)
    template <class Arch, class Out>
    static void compute(double* out, const double* a, const double* b, std::size_t n) noexcept {
        kernels::power_array<Out, Arch>(out, a, b, n);
    }
    // float32 pairs through the float32 array kernel (the loop's bits: on AVX-512 it is
    // not the float64 kernel rounded), with the machine's NaN convention
    template <class Arch, class Out>
    static double one(double a, double b) noexcept {
        double r = 0.0;
        if constexpr (std::is_same_v<Out, float>) {
            float rf = 0.0f;
            const float af = static_cast<float>(a), bf = static_cast<float>(b);
            kernels::power_array_f32<Arch, false>(&rf, &af, &bf, 1);
            r = static_cast<double>(rf);
        } else {
            kernels::power_array<Out, Arch>(&r, &a, &b, 1);
        }
        if ((convention<Out>() & pow_nan_odd_unsigned) && a != a && odd_integer(b)) {
            r = std::fabs(r);
        }
        return r;
    }
    template <class B>
    static inline auto may_raise(const B& a, const B& b) noexcept {
        using T = typename B::value_type;
        using I = xsimd::batch<kernels::detail::int_of_t<T>, typename B::arch_type>;
        constexpr bool f64 = sizeof(T) == 8;
        constexpr int mantissa = f64 ? 52 : 23;
        const auto bits = kernels::detail::as_int(xsimd::abs(a));
        // The biased exponent as a float (the magic-number conversion), then |E| + 1.
        const I magic(f64 ? kernels::detail::int_of_t<T>(0x4330000000000000)
                          : kernels::detail::int_of_t<T>(0x4B000000));
        const B biased =
            kernels::detail::as_float<T, typename B::arch_type>((bits >> mantissa) | magic) -
            B(f64 ? T(0x1p52) : T(0x1p23));
        const B span = xsimd::abs(biased - B(f64 ? T(1023) : T(127))) + B(T(1));
        const B limit(f64 ? T(1022) : T(126));
        return ~(a >= B(std::numeric_limits<T>::min())) | (xsimd::abs(b) * span >= limit);
    }
    template <class T>
    static unsigned flags(T a, T b) noexcept {
        if (a != a || b != b) return fp_none;
        if (a == T(0)) return divides_by_zero(b, convention<T>()) ? fp_divide_by_zero : fp_none;
        if (!(a - a == T(0)) || !(b - b == T(0))) return fp_none;
        if (a < T(0) && b != std::trunc(b)) return fp_invalid;
        const T r = std::pow(a, b);
        if (r - r != T(0)) return fp_overflow;
        return underflows(a, b, r, convention<T>()) ? fp_underflow : fp_none;
    }

    template <class T>
    static unsigned convention() noexcept {
        return power_convention(sizeof(T) == 4 ? DType::f32 : DType::f64);
    }
    template <class T>
    static bool odd_integer(T v) noexcept {
        return v - v == T(0) && std::trunc(v) == v && std::fmod(v, T(2)) != T(0);
    }
    // Whether 0 ** b (b not NaN) raises divide-by-zero under the convention.
    template <class T>
    static bool divides_by_zero(T b, unsigned convention) noexcept {
        return b < T(0) &&
               !((convention & pow_quiet_zero_neg_inf) && b == -std::numeric_limits<T>::infinity());
    }
    // Whether the result r of finite a != 0 and finite b raises underflow under the
    // convention: r below the smallest normal, unless the convention keeps exact results
    // quiet and |a| = 2^e, b e an integer at or above the smallest subnormal's exponent.
    template <class T>
    static bool underflows(T a, T b, T r, unsigned convention) noexcept {
        if (!(std::fabs(r) < std::numeric_limits<T>::min())) return false;
        if (!(convention & pow_quiet_exact_tiny)) return true;
        int e = 0;
        if (std::frexp(std::fabs(a), &e) != T(0.5)) return true;
        const T k = static_cast<T>(e - 1);
        const T t = b * k;
        const bool exact =
            std::fma(b, k, -t) == T(0) && std::trunc(t) == t &&
            t >= T(std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits);
        return !exact;
    }

    // kernel(out, x, y, count) (the fused array kernels) with the machine's convention.
    template <class Arch, class T, class Kernel>
    static unsigned with_convention(T* out, const T* a, const T* b, std::size_t n,
                                    const Kernel& kernel) noexcept {
        const unsigned conv = convention<T>();
        if (conv == 0) return kernel(out, a, b, n);
        using B = xsimd::batch<T, Arch>;
        constexpr std::size_t width = B::size;
        constexpr std::size_t chunk = 256;
        alignas(64) T ca[chunk], cb[chunk];
        const bool aliased = out == a || out == b;
        unsigned flags = fp_none;
        for (std::size_t start = 0; start < n; start += chunk) {
            const std::size_t count = n - start < chunk ? n - start : chunk;
            const T* x = a + start;
            const T* y = b + start;
            if (aliased) {
                std::memcpy(ca, x, count * sizeof(T));
                std::memcpy(cb, y, count * sizeof(T));
                x = ca, y = cb;
            }
            T* o = out + start;
            unsigned raised = kernel(o, x, y, count);
            if (conv & pow_nan_odd_unsigned) {
                const auto fix = [&](std::size_t k) {
                    if (x[k] != x[k] && odd_integer(y[k])) o[k] = std::fabs(o[k]);
                };
                std::size_t k = 0;
                for (; k + width <= count; k += width) {
                    if (!xsimd::any(xsimd::isnan(B::load_unaligned(x + k)))) continue;
                    for (std::size_t j = k; j < k + width; ++j) fix(j);
                }
                for (; k < count; ++k) fix(k);
            }
            if ((conv & pow_quiet_zero_neg_inf) && (raised & fp_divide_by_zero)) {
                raised &= ~unsigned{fp_divide_by_zero};
                for (std::size_t k = 0; k < count; ++k) {
                    if (x[k] == T(0) && y[k] == y[k] && divides_by_zero(y[k], conv)) {
                        raised |= fp_divide_by_zero;
                        break;
                    }
                }
            }
            if ((conv & pow_quiet_exact_tiny) && (raised & fp_underflow)) {
                raised &= ~unsigned{fp_underflow};
                for (std::size_t k = 0; k < count; ++k) {
                    const bool finite = x[k] - x[k] == T(0) && y[k] - y[k] == T(0);
                    if (finite && x[k] != T(0) && underflows(x[k], y[k], o[k], conv)) {
                        raised |= fp_underflow;
                        break;
                    }
                }
            }
            flags |= raised;
        }
        return flags;
    }
};

// Operations with the rule of a whole flagged float64 batch at level Arch (flags_batch on
// float64 batches, the same conditions as flags on each pair; arctan2 on AVX-512).
template <class Op, class Arch, class = void>
struct has_batch_flags_f64 : std::false_type {};
template <class Op, class Arch>
struct has_batch_flags_f64<Op, Arch, std::enable_if_t<Op::template batch_flags_f64<Arch>>>
    : std::true_type {};

// The conditions of n contiguous elements: the batch screen (the tail padded with 1, which
// raises nothing), the exact rule only on the elements (or the batch rule) of flagged batches.
template <class Arch, class Op, class T>
unsigned binary_flags(const T* a, const T* b, std::size_t n) noexcept {
    using B = xsimd::batch<T, Arch>;
    constexpr std::size_t width = B::size;
    unsigned flags = fp_none;
    for (std::size_t i = 0; i < n; i += width) {
        const std::size_t count = n - i < width ? n - i : width;
        B x, y;
        if (count == width) {
            x = B::load_unaligned(a + i), y = B::load_unaligned(b + i);
        } else {
            alignas(64) T xa[width], xb[width];
            for (std::size_t k = 0; k < width; ++k) xa[k] = xb[k] = T(1);
            std::memcpy(xa, a + i, count * sizeof(T));
            std::memcpy(xb, b + i, count * sizeof(T));
            x = B::load_aligned(xa), y = B::load_aligned(xb);
        }
        if (xsimd::any(Op::may_raise(x, y))) {
            if constexpr (has_batch_flags_f64<Op, Arch>::value && std::is_same<T, double>::value) {
                flags |= Op::template flags_batch<Arch>(x, y);
            } else {
                for (std::size_t k = i; k < i + count; ++k) {
                    flags |= Op::template flags<T>(a[k], b[k]);
                }
            }
        }
    }
    return flags;
}

template <class Op, class = void>
struct has_fused_conditions : std::false_type {};
template <class Op>
struct has_fused_conditions<Op, std::enable_if_t<Op::fused_conditions>> : std::true_type {};

// Operations whose float32 array kernel alone returns the conditions with the results
// (compute_conditions_f32<Arch>(out, a, b, n), out may be a or b; arctan2): float32 runs
// there, in float32 lanes, instead of widened to float64.
template <class Op, class = void>
struct has_f32_conditions : std::false_type {};
template <class Op>
struct has_f32_conditions<Op, std::enable_if_t<Op::f32_conditions>> : std::true_type {};

// binary_loop of an operation whose array kernels return the conditions with the results
// (has_fused_conditions; float32 of has_f32_conditions): contiguous operands straight to
// the kernel (out may be a or b), others through stack buffers of `chunk` elements.
template <class Arch, class Op, class T>
unsigned binary_loop_fused(const char* a, std::ptrdiff_t a_stride, const char* b,
                           std::ptrdiff_t b_stride, char* out, std::ptrdiff_t out_stride,
                           std::size_t n) noexcept {
    const auto run = [](T* o, const T* x, const T* y, std::size_t count) {
        if constexpr (std::is_same<T, double>::value) {
            return Op::template compute_conditions<Arch>(o, x, y, count);
        } else {
            return Op::template compute_conditions_f32<Arch>(o, x, y, count);
        }
    };
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    if (a_stride == elem && b_stride == elem && out_stride == elem) {
        return run(reinterpret_cast<T*>(out), reinterpret_cast<const T*>(a),
                   reinterpret_cast<const T*>(b), n);
    }
    constexpr std::size_t chunk = 256;
    alignas(64) T ta[chunk], tb[chunk];
    unsigned flags = fp_none;
    for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t count = n - start < chunk ? n - start : chunk;
        const auto at = static_cast<std::ptrdiff_t>(start);
        for (std::size_t k = 0; k < count; ++k) {
            const auto i = static_cast<std::ptrdiff_t>(k) + at;
            std::memcpy(&ta[k], a + i * a_stride, sizeof(T));
            std::memcpy(&tb[k], b + i * b_stride, sizeof(T));
        }
        flags |= run(ta, ta, tb, count);
        for (std::size_t k = 0; k < count; ++k) {
            const auto i = static_cast<std::ptrdiff_t>(k) + at;
            std::memcpy(out + i * out_stride, &ta[k], sizeof(T));
        }
    }
    return flags;
}

// out[i] = Op(a[i], b[i]) for n elements; see BinaryLoop in numfuse_core.hpp. Contiguous
// float64 operands go to the array kernel directly (out may be a or b: the kernel allows
// it); any other strides, and float32 (widened to float64 and rounded once on the way
// back), through stack buffers of `chunk` elements. Conditions are taken from the inputs
// before anything is written. Kernels that return the conditions themselves
// (has_fused_conditions, float32 of has_f32_conditions) go through binary_loop_fused.
template <class Arch, class Op, class T>
unsigned binary_loop(const char* a, std::ptrdiff_t a_stride, const char* b, std::ptrdiff_t b_stride,
                     char* out, std::ptrdiff_t out_stride, std::size_t n) noexcept {
    if constexpr (has_fused_conditions<Op>::value ||
                  (std::is_same<T, float>::value && has_f32_conditions<Op>::value)) {
        return binary_loop_fused<Arch, Op, T>(a, a_stride, b, b_stride, out, out_stride, n);
    }
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    const bool contiguous = a_stride == elem && b_stride == elem && out_stride == elem;
    constexpr std::size_t chunk = 256;
    if constexpr (std::is_same<T, double>::value) {
        if (contiguous) {
            // By chunks, so that the inputs the screen reads are still in cache for the kernel.
            const auto* pa = reinterpret_cast<const double*>(a);
            const auto* pb = reinterpret_cast<const double*>(b);
            auto* po = reinterpret_cast<double*>(out);
            unsigned flags = fp_none;
            for (std::size_t start = 0; start < n; start += 4 * chunk) {
                const std::size_t count = n - start < 4 * chunk ? n - start : 4 * chunk;
                flags |= binary_flags<Arch, Op, double>(pa + start, pb + start, count);
                Op::template compute<Arch, double>(po + start, pa + start, pb + start, count);
            }
            return flags;
        }
    }
    // float64 values are gathered straight into the kernel's buffers; float32 ones next to
    // them, then widened.
    using Gathered = std::conditional_t<std::is_same<T, double>::value, char, T>;
    alignas(64) double wa[chunk], wb[chunk];
    alignas(64) Gathered ga[std::is_same<T, double>::value ? 1 : chunk];
    alignas(64) Gathered gb[std::is_same<T, double>::value ? 1 : chunk];
    T* ta = nullptr;
    T* tb = nullptr;
    if constexpr (std::is_same<T, double>::value) {
        (void)ga, (void)gb;
        ta = wa, tb = wb;
    } else {
        ta = ga, tb = gb;
    }
    unsigned flags = fp_none;
    for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t count = n - start < chunk ? n - start : chunk;
        const auto at = static_cast<std::ptrdiff_t>(start);
        const char* pa = a + at * a_stride;
        const char* pb = b + at * b_stride;
        for (std::size_t k = 0; k < count; ++k) {
            const auto i = static_cast<std::ptrdiff_t>(k);
            std::memcpy(&ta[k], pa + i * a_stride, sizeof(T));
            std::memcpy(&tb[k], pb + i * b_stride, sizeof(T));
        }
        flags |= binary_flags<Arch, Op, T>(ta, tb, count);
        if constexpr (!std::is_same<T, double>::value) {
            for (std::size_t k = 0; k < count; ++k) {
                wa[k] = static_cast<double>(ta[k]);
                wb[k] = static_cast<double>(tb[k]);
            }
        }
        Op::template compute<Arch, T>(wa, wa, wb, count);
        char* po = out + at * out_stride;
        for (std::size_t k = 0; k < count; ++k) {
            const T r = static_cast<T>(wa[k]);
            std::memcpy(po + static_cast<std::ptrdiff_t>(k) * out_stride, &r, sizeof(T));
        }
    }
    return flags;
}

template <class Op, class = void>
struct folds_as_log_sum_exp : std::false_type {};
template <class Op>
struct folds_as_log_sum_exp<Op, std::enable_if_t<Op::folds_as_log_sum_exp>> : std::true_type {};

// reduce of a log-sum-exp fold (binary_fold): the value after all n elements, at out.
template <class T>
unsigned log_sum_exp_reduce(const char* a, const char* b, std::ptrdiff_t b_stride, char* out,
                            std::size_t n) noexcept {
    // -log(smallest normal): exp of anything further down underflows.
    constexpr double exp_floor = sizeof(T) == 4 ? 87.33654475055310898657 : 708.39641853226410622;
    T first;
    std::memcpy(&first, a, sizeof first);
    unsigned flags = first != first ? fp_invalid : fp_none;
    lse::RunningLse state = lse::running_lse_start(static_cast<double>(first));
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        T x;
        std::memcpy(&x, b + k * b_stride, sizeof x);
        const T d = x - static_cast<T>(state.m);
        if (x != x) {
            flags |= fp_invalid;
        } else if (d - d != T(0)) {
            // inf - inf is NaN: an infinite element or maximum raises nothing.
            if (x - x == T(0) && state.m - state.m == 0.0) flags |= fp_overflow;
        } else if (static_cast<double>(d) < -exp_floor || static_cast<double>(d) > exp_floor) {
            flags |= fp_underflow;
        }
        lse::running_lse_add(state, static_cast<double>(x));
    }
    const T value = static_cast<T>(lse::running_lse_value(state));
    std::memcpy(out, &value, sizeof value);
    return flags;
}

// The fold that NumPy's reduce and accumulate ask of a loop whose first operand is its own
// output (reduce: a == out, both at stride 0; accumulate: a one element behind out):
// out[i] = Op(out[i - 1], b[i]), out[-1] = a[0], for i in [0, n). The BinaryLoop
// signature, a_stride unused by the reduce form.
// * reduce of logaddexp (folds_as_log_sum_exp, out_stride 0): the result is
//   log(exp(a[0]) + sum of exp(b[j])) from lse::RunningLse, within a few eps of the exact
//   value however long the run, where a chain of n logaddexp calls adds a rounding per
//   step (as np.add.reduce sums pairwise rather than in order); each step is a few
//   operations on the chain, where the kernel's latency would be the whole cost. Special
//   values are the fold's (NaN sticks, +inf wins, -inf adds nothing). Conditions: invalid
//   for a NaN element (NumPy's comparisons raise it), overflow where an element minus the
//   running maximum overflows, underflow where an element lies further below the running
//   maximum than exp reaches (the fold's own partial results are at least that maximum).
// * accumulate, and any other operation: element by element, in order, each result what
//   binary_loop gives for that pair (Op::one: the kernel on one pair, the same bits), so
//   every out[i] is the bits of the chained calls (NumPy's test_umath checks accumulate so).
//   Each step's latency is the whole cost: the conditions' screen and rule stay off the
//   chain.
template <class Arch, class Op, class T>
unsigned binary_fold(const char* a, std::ptrdiff_t a_stride, const char* b, std::ptrdiff_t b_stride,
                     char* out, std::ptrdiff_t out_stride, std::size_t n) noexcept {
    if constexpr (folds_as_log_sum_exp<Op>::value) {
        if (out_stride == 0) return log_sum_exp_reduce<T>(a, b, b_stride, out, n);
    }
    using B = xsimd::batch<T, Arch>;
    unsigned flags = fp_none;
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        T x, y;
        // Read after the previous step's store: a may be out one element back.
        std::memcpy(&x, a + k * a_stride, sizeof x);
        std::memcpy(&y, b + k * b_stride, sizeof y);
        if (xsimd::any(Op::may_raise(B(x), B(y)))) flags |= Op::template flags<T>(x, y);
        const T r = static_cast<T>(
            Op::template one<Arch, T>(static_cast<double>(x), static_cast<double>(y)));
        std::memcpy(out + k * out_stride, &r, sizeof r);
    }
    return flags;
}

// One level's table: [op][dtype][loop, fold], a row per two-argument ufunc of the function
// table (functions.hpp), whose loop operation is <Functor>Op above.
template <class Op, class T>
void fill_binary_row(BinaryLoop (&row)[2]) noexcept {
    row[0] = &binary_loop<NUMFUSE_LEVEL_ARCH, Op, T>;
    row[1] = &binary_fold<NUMFUSE_LEVEL_ARCH, Op, T>;
}

inline void fill_binary_table(BinaryLoop (&table)[binary_op_count][simd_dtype_count][2]) noexcept {
#define NUMFUSE_FILL_BINARY(name, arity, types, Functor, libm, ufunc, gpu, summary)      \
    NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_2_##arity(                           \
        fill_binary_row<Functor##Op, float>(table[static_cast<int>(BinaryOp::name)][0]); \
        fill_binary_row<Functor##Op, double>(table[static_cast<int>(BinaryOp::name)][1]);))
    NUMFUSE_FUNCTIONS(NUMFUSE_FILL_BINARY)
#undef NUMFUSE_FILL_BINARY
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE
