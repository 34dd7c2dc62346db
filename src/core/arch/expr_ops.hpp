// The expression VM's kernels, instantiated once per instruction-set level.
//
// Included only by the per-level translation units (sse2.cpp, avx2_fma.cpp,
// avx512.cpp; neon64.cpp on aarch64) after NUMFUSE_LEVEL_NAMESPACE / NUMFUSE_LEVEL_ARCH are set.
// Every opcode row of expr/opcodes.hpp becomes one expr_kernel<...>
// instantiation here; fill_expr_table() is generated from the same rows.
//
// Semantics follow NumPy's loops element for element (integer wrap-around,
// Python-style floor division and remainder, NaN-propagating maximum, Smith's
// complex division, ...), so results equal NumPy evaluating the same
// expression. Operations with a `batch` member run on xsimd batches: exp,
// log and erf through numfuse's ufunc kernels, the other transcendental
// functions through the float64 kernels of kernels/{trig,invtrig,hyperbolic,
// logpair}.hpp (<= 1 ULP; float32 lanes are computed in float64 and rounded
// once, see f32_through_f64), sqrt/floor/ceil/trunc/round/copysign/min/max
// through xsimd. The others are scalar loops: complex types (complex64
// transcendental functions in complex128, rounded once), integer ops, and
// arctan2, hypot, nextafter (C library, <= 1 ULP measured; float32
// through float64); real pow is kernels/power.hpp's array kernel. The
// functions that are ufuncs return the ufunc's NaNs for invalid and NaN
// inputs (NumPy's on this machine: nan_fixup.hpp).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "arch/nan_fixup.hpp"
#include "expr/kernel_table.hpp"
#include "kernels/erf.hpp"
#include "kernels/exp.hpp"
#include "kernels/hyperbolic.hpp"
#include "kernels/invtrig.hpp"
#include "kernels/log.hpp"
#include "kernels/logaddexp.hpp"
#include "kernels/logpair.hpp"
#include "kernels/power.hpp"
#include "kernels/trig.hpp"
#include "scalar_libm.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including expr_ops.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;

// Integer arithmetic wraps modulo 2^bits like NumPy's (done in unsigned
// arithmetic because signed overflow is undefined in C++).
template <class T>
T wrap_add(T a, T b) noexcept {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
T wrap_sub(T a, T b) noexcept {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
T wrap_mul(T a, T b) noexcept {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// ------------------------------------------------------------------ arithmetic
struct Add {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_add(a, b);
        else return a + b;
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return a + b;
    }
};

struct Sub {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_sub(a, b);
        else return a - b;
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return a - b;
    }
};

struct Mul {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            return wrap_mul(a, b);
        } else if constexpr (is_complex_v<T>) {
            // The textbook product, as NumPy computes it (std::complex's
            // operator* adds C99 Annex G inf/nan recovery NumPy does not do).
            return T(a.real() * b.real() - a.imag() * b.imag(),
                     a.real() * b.imag() + a.imag() * b.real());
        } else {
            return a * b;
        }
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return a * b;
    }
};

// Smith's algorithm, as NumPy divides complex numbers.
template <class T>
std::complex<T> complex_divide(std::complex<T> a, std::complex<T> b) noexcept {
    const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    const T abs_br = std::fabs(br), abs_bi = std::fabs(bi);
    if (abs_br >= abs_bi) {
        if (abs_br == 0 && abs_bi == 0) return {ar / abs_br, ai / abs_bi};
        const T rat = bi / br;
        const T scl = T(1) / (br + bi * rat);
        return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
    }
    const T rat = br / bi;
    const T scl = T(1) / (bi + br * rat);
    return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}

struct Div {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (is_complex_v<T>) return complex_divide(a, b);
        else return a / b;
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return kernels::detail::divide(a, b);
    }
};

// NumPy's npy_divmod for floating point: the quotient is floor((a-mod)/b)
// corrected so that a == b*q + mod holds as closely as rounding allows.
template <class T>
T float_floor_divide(T a, T b, T* remainder) noexcept {
    T mod = std::fmod(a, b);
    if (b == 0) {
        *remainder = mod;
        return a / b;
    }
    T div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= T(1);
        }
    } else {
        mod = std::copysign(T(0), b);
    }
    T floordiv;
    if (div != 0) {
        floordiv = std::floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
    } else {
        floordiv = std::copysign(T(0), a / b);
    }
    *remainder = mod;
    return floordiv;
}

struct FloorDiv {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            // NumPy: division by zero gives 0; MIN // -1 wraps to MIN.
            if (b == 0) return 0;
            if (b == -1) return wrap_sub(T(0), a);
            T q = a / b;
            if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
            return q;
        } else {
            T mod;
            return float_floor_divide(a, b, &mod);
        }
    }
};

struct Mod {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0 || b == -1) return 0;  // NumPy: x % 0 == 0; avoids MIN % -1
            T r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) r += b;
            return r;
        } else {
            if (b == 0) return std::fmod(a, b);
            T mod;
            float_floor_divide(a, b, &mod);
            return mod;
        }
    }
};

struct Fmod {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0 || b == -1) return 0;
            return a % b;
        } else {
            return std::fmod(a, b);
        }
    }
};

// Complex power as NumPy does it: exact repeated multiplication for small
// integral real exponents, the library's cpow otherwise.
template <class T>
std::complex<T> complex_power(std::complex<T> a, std::complex<T> b) noexcept {
    using C = std::complex<T>;
    if (b.real() == 0 && b.imag() == 0) return C(1, 0);
    if (a.real() == 0 && a.imag() == 0) {
        if (b.real() > 0 && b.imag() == 0) return C(0, 0);
        const T nan = std::numeric_limits<T>::quiet_NaN();
        return C(nan, nan);
    }
    if (b.imag() == 0 && b.real() == std::trunc(b.real()) && std::fabs(b.real()) < 100) {
        long n = static_cast<long>(b.real());
        const bool negative = n < 0;
        if (negative) n = -n;
        C result(1, 0), base = a;
        while (n) {
            if (n & 1) result = Mul::apply<C>(result, base);
            base = Mul::apply<C>(base, base);
            n >>= 1;
        }
        return negative ? complex_divide(C(1, 0), result) : result;
    }
    return std::pow(a, b);
}

// Real x**y through kernels/power.hpp's array kernel (<= 1 ULP, C99's special values; an
// array whose exponents are all one small half-integer takes its exact product path),
// float32 widened to float64 and rounded once; integers and complex numbers element by
// element below.
struct Pow {
    static constexpr bool array_kernel = true;
    static constexpr bool f32_via_f64 = true;
    template <class Arch, class Out>
    static void array(double* out, const double* a, const double* b, std::size_t n) noexcept {
        kernels::power_array<Out, Arch>(out, a, b, n);
    }
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            // Negative exponents were rejected before the loop (see numeric_kernel).
            T result = 1;
            T base = a;
            auto e = static_cast<std::make_unsigned_t<T>>(b);
            while (e) {
                if (e & 1u) result = wrap_mul(result, base);
                base = wrap_mul(base, base);
                e >>= 1;
            }
            return result;
        } else if constexpr (is_complex_v<T>) {
            return complex_power(a, b);
        } else {
            return std::pow(a, b);
        }
    }
};

// NaN-propagating, as np.maximum / np.minimum. Complex numbers order
// lexicographically with NumPy's rule: the first operand wins when it has a
// NaN part or compares >= (<=); the real parts decide unless an imaginary
// part is NaN, equal real parts fall to the imaginary parts.
template <class T>
bool complex_ge(const T& a, const T& b) noexcept {
    return (a.real() > b.real() && !std::isnan(a.imag()) && !std::isnan(b.imag())) ||
           (a.real() == b.real() && a.imag() >= b.imag());
}
template <class T>
bool complex_le(const T& a, const T& b) noexcept {
    return (a.real() < b.real() && !std::isnan(a.imag()) && !std::isnan(b.imag())) ||
           (a.real() == b.real() && a.imag() <= b.imag());
}

struct Maximum {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (is_complex_v<T>) {
            return (std::isnan(a.real()) || std::isnan(a.imag()) || complex_ge(a, b)) ? a : b;
        } else if constexpr (std::is_floating_point_v<T>) {
            return (a >= b || std::isnan(a)) ? a : b;
        } else {
            return a >= b ? a : b;
        }
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return xsimd::select((a >= b) | xsimd::isnan(a), a, b);
    }
};

struct Minimum {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (is_complex_v<T>) {
            return (std::isnan(a.real()) || std::isnan(a.imag()) || complex_le(a, b)) ? a : b;
        } else if constexpr (std::is_floating_point_v<T>) {
            return (a <= b || std::isnan(a)) ? a : b;
        } else {
            return a <= b ? a : b;
        }
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return xsimd::select((a <= b) | xsimd::isnan(a), a, b);
    }
};

struct Arctan2 {
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        return std::atan2(a, b);
    }
};
struct Hypot {
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        return std::hypot(a, b);
    }
};
struct Nextafter {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        return std::nextafter(a, b);
    }
};
struct Copysign {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        return std::copysign(a, b);
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return xsimd::copysign(a, b);
    }
};

// logaddexp over arrays (kernels/logaddexp.hpp): float64 directly, float32 widened to
// float64 (f32_through_f64) and rounded once. An array kernel, not a batch one: the lanes
// whose result lies next to zero are gathered across batches and recomputed in higher
// precision. The ufunc loop (binary_loop.hpp) calls the same function: the same bits.
struct Logaddexp {
    static constexpr bool array_kernel = true;
    static constexpr bool f32_via_f64 = true;
    template <class Arch, class Out>
    static void array(double* out, const double* a, const double* b, std::size_t n) noexcept {
        kernels::logaddexp_array<Out, Arch>(out, a, b, n);
    }
};

// NumPy's shifts: counts at or beyond the width give 0 (or -1 for a
// negative value shifted right) instead of C's undefined behaviour.
struct Lshift {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        using U = std::make_unsigned_t<T>;
        if (static_cast<U>(b) >= sizeof(T) * 8) return 0;
        return static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
    }
};
struct Rshift {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        using U = std::make_unsigned_t<T>;
        if (static_cast<U>(b) >= sizeof(T) * 8) return a < 0 ? T(-1) : T(0);
        return static_cast<T>(a >> b);
    }
};

struct BitAnd {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_same_v<T, bool>) return a && b;
        else return a & b;
    }
};
struct BitOr {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_same_v<T, bool>) return a || b;
        else return a | b;
    }
};
struct BitXor {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_same_v<T, bool>) return a != b;
        else return a ^ b;
    }
};

struct Neg {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (std::is_integral_v<T>) return wrap_sub(T(0), a);
        else return -a;
    }
    template <class B>
    static B batch(const B& a) noexcept {
        return -a;
    }
};

struct Invert {
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (std::is_same_v<T, bool>) return !a;
        else return ~a;
    }
};

// ------------------------------------------------------------ real functions
// One macro per family of "scalar_libm:: for scalars and complex (the C++ library's, or
// scalar_libm.hpp's where it lacks one), a SIMD kernel for batches". NUMFUSE_EXPR_MATH's kernels
// take float32 and float64 batches; NUMFUSE_EXPR_MATH64's are float64-only (numfuse's accurate
// kernels in kernels/{trig,invtrig,hyperbolic,logpair}.hpp, <= 1 ULP with special values as NumPy):
// float32 lanes are widened, computed in float64 and rounded once (f32_via_f64, see
// numeric_kernel), which keeps float32 within 0.5 + 2^-28 ULP.
#define NUMFUSE_EXPR_MATH(Name, std_fn, batch_fn) \
    struct Name {                                 \
        static constexpr bool vectorized = true;  \
        template <class R, class T>               \
        static R apply(T a) noexcept {            \
            return scalar_libm::std_fn(a);        \
        }                                         \
        template <class B>                        \
        static B batch(const B& a) noexcept {     \
            return batch_fn(a);                   \
        }                                         \
    };
// The float32 kernel f32_fn takes F32Lane batches: double (float32 values widened to float64
// lanes, rounded once by the caller; batch_for_f32) or float (f32_native: a float32 kernel of
// its own, which batch runs on float32 lanes; batch_for_f32, unused there, is batch_fn).
#define NUMFUSE_EXPR_MATH64(Name, std_fn, batch_fn, f32_fn, F32Lane)                     \
    struct Name {                                                                        \
        static constexpr bool vectorized = true;                                         \
        static constexpr bool f32_via_f64 = true;                                        \
        static constexpr bool f32_native = std::is_same_v<F32Lane, float>;               \
        template <class R, class T>                                                      \
        static R apply(T a) noexcept {                                                   \
            return scalar_libm::std_fn(a);                                               \
        }                                                                                \
        template <class B>                                                               \
        static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {                      \
            if constexpr (f32_native && std::is_same_v<typename B::value_type, float>) { \
                return f32_fn(a);                                                        \
            } else {                                                                     \
                return batch_fn(a);                                                      \
            }                                                                            \
        }                                                                                \
        template <class B>                                                               \
        static NUMFUSE_ALWAYS_INLINE B batch_for_f32(const B& a) noexcept {              \
            if constexpr (f32_native) {                                                  \
                return batch_fn(a);                                                      \
            } else {                                                                     \
                return f32_fn(a);                                                        \
            }                                                                            \
        }                                                                                \
    };
// float32 through float64 needs only ~2^-40 relative accuracy in float64: the
// second kernel of each row is what float32 uses -- xsimd's float64 functions
// (2-3 float64 ULP, far below a float32 half-ulp; the accuracy test checks
// every float32 op, huge trig arguments included) where those are right for
// every float32 input, numfuse's own otherwise.
NUMFUSE_EXPR_MATH(Sqrt, sqrt, kernels::detail::square_root)
NUMFUSE_EXPR_MATH64(Sin, sin, kernels::sin_kernel, kernels::sin_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Cos, cos, kernels::cos_kernel, kernels::cos_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Tan, tan, kernels::tan_kernel, xsimd::tan, double)
NUMFUSE_EXPR_MATH64(Arcsin, asin, kernels::asin_kernel, xsimd::asin, double)
NUMFUSE_EXPR_MATH64(Arccos, acos, kernels::acos_kernel, xsimd::acos, double)
NUMFUSE_EXPR_MATH64(Arctan, atan, kernels::atan_kernel, xsimd::atan, double)
NUMFUSE_EXPR_MATH64(Sinh, sinh, kernels::sinh_kernel, xsimd::sinh, double)
NUMFUSE_EXPR_MATH64(Cosh, cosh, kernels::cosh_kernel, xsimd::cosh, double)
NUMFUSE_EXPR_MATH64(Tanh, tanh, kernels::tanh_kernel, kernels::tanh_f32_kernel, double)
NUMFUSE_EXPR_MATH64(Arcsinh, asinh, kernels::asinh_kernel, xsimd::asinh, double)
NUMFUSE_EXPR_MATH64(Arccosh, acosh, kernels::acosh_kernel, kernels::acosh_f32_kernel, double)
NUMFUSE_EXPR_MATH64(Arctanh, atanh, kernels::atanh_kernel, xsimd::atanh, double)
NUMFUSE_EXPR_MATH(Exp, exp, kernels::exp_kernel)
NUMFUSE_EXPR_MATH(Log, log, kernels::log_kernel)
NUMFUSE_EXPR_MATH(Ceil, ceil, xsimd::ceil)
NUMFUSE_EXPR_MATH(Floor, floor, xsimd::floor)
NUMFUSE_EXPR_MATH(Trunc, trunc, xsimd::trunc)
#undef NUMFUSE_EXPR_MATH
#undef NUMFUSE_EXPR_MATH64

// erfc: numfuse's float64 erfc kernel (kernels/erf.hpp, <= 1 ULP on the whole line,
// subnormal tail included, NaN -> +qNaN as scipy.special.erfc); float32 lanes go through
// the same kernel and are rounded once. apply() (one value) runs the same kernel, so that
// no path of the loops gives other bits.
struct Erfc {
    static constexpr bool vectorized = true;
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        using B = xsimd::batch<double, NUMFUSE_LEVEL_ARCH>;
        alignas(64) double lanes[B::size];
        kernels::erfc_kernel(B(static_cast<double>(a))).store_aligned(lanes);
        return static_cast<R>(lanes[0]);
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch_for_f32(const B& a) noexcept {
        return kernels::erfc_kernel(a);
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {
        return kernels::erfc_kernel(a);
    }
};

struct Erf {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        return std::erf(a);
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {
        return kernels::erf_kernel(a);
    }
};

// Scalars and complex values through scalar_libm.hpp (NumPy's complex log1p / expm1 /
// log2 / log10 formulas, the ufuncs' complex loops too); real batches through numfuse's
// float64 kernels.
struct Log1p {
    static constexpr bool vectorized = true;
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        return scalar_libm::log1p(a);
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {
        return kernels::log1p_kernel(a);
    }
    template <class B>
    static B batch_for_f32(const B& a) noexcept {  // xsimd's log1p(-0) is +0
        return xsimd::select(a == B(0.0), a, xsimd::log1p(a));
    }
};

struct Expm1 {
    static constexpr bool vectorized = true;
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        return scalar_libm::expm1(a);
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {
        return kernels::expm1_kernel(a);
    }
};

struct Log2 {
    static constexpr bool vectorized = true;
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        return scalar_libm::log2(a);
    }
    static constexpr bool f32_native = true;
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {
        if constexpr (std::is_same_v<typename B::value_type, float>) {
            return kernels::log2_f32_kernel(a);
        } else {
            return kernels::log2_kernel(a);
        }
    }
};

struct Log10 {
    static constexpr bool vectorized = true;
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        return scalar_libm::log10(a);  // complex: NumPy's log(z) log10(e), as the ufunc
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {
        return kernels::log10_kernel(a);
    }
    template <class B>
    static B batch_for_f32(const B& a) noexcept {
        return xsimd::log10(a);
    }
};

// scipy.special.expit (kernels/hyperbolic.hpp: 1 / (1 + e^-x), and e^x below -708, so
// large negative x gives subnormals, not 0); float32 through its own kernel in float64 lanes.
struct Expit {
    static constexpr bool vectorized = true;
    static constexpr bool f32_via_f64 = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        return scalar_libm::expit(a);
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch(const B& a) noexcept {
        return scipy_nan(a, kernels::expit_kernel(a));
    }
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B batch_for_f32(const B& a) noexcept {
        return scipy_nan(a, kernels::expit_f32_kernel(a));
    }
    // scipy.special.expit computes 1 / (1 + exp(-x)): a NaN input comes back quieted with
    // its sign flipped (payload kept), on x86 and aarch64 alike, float32 and float64. The
    // sign is flipped by xor: xsimd 8.1's AVX-512 negation is 0 - x, which keeps a NaN's sign.
    template <class B>
    static NUMFUSE_ALWAYS_INLINE B scipy_nan(const B& a, const B& y) noexcept {
        using T = typename B::value_type;
        return xsimd::select(xsimd::isnan(a), xsimd::bitwise_xor(a + a, B(T(-0.0))), y);
    }
};

// np.round(x) with decimals=0: round half to even.
struct Round {
    static constexpr bool vectorized = true;
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (is_complex_v<T>) return T(std::nearbyint(a.real()), std::nearbyint(a.imag()));
        else return std::nearbyint(a);
    }
    template <class B>
    static B batch(const B& a) noexcept {
        return xsimd::nearbyint(a);
    }
};

struct Sign {
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (std::is_integral_v<T>) {
            return static_cast<T>((a > 0) - (a < 0));
        } else if constexpr (is_complex_v<T>) {
            // NumPy >= 2: z / |z|, and 0 for 0.
            using V = typename T::value_type;
            const V magnitude = std::hypot(a.real(), a.imag());
            if (magnitude == 0) return T(0, 0);
            if (std::isnan(magnitude)) {
                const V nan = std::numeric_limits<V>::quiet_NaN();
                return T(nan, nan);
            }
            if (std::isinf(magnitude)) {
                const V re = std::isinf(a.real()) ? std::copysign(V(1), a.real()) : V(0);
                const V im = std::isinf(a.imag()) ? std::copysign(V(1), a.imag()) : V(0);
                const V n = std::hypot(re, im);
                return T(re / n, im / n);
            }
            return T(a.real() / magnitude, a.imag() / magnitude);
        } else {
            return a > 0 ? T(1) : (a < 0 ? T(-1) : (a == 0 ? T(0) : a));
        }
    }
};

struct Abs {
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (std::is_integral_v<T>) return a < 0 ? wrap_sub(T(0), a) : a;
        else if constexpr (is_complex_v<T>) return std::hypot(a.real(), a.imag());
        else return std::fabs(a);
    }
};

struct Conj {
    template <class R, class T>
    static R apply(T a) noexcept {
        return std::conj(a);
    }
};
struct Real {
    template <class R, class T>
    static R apply(T a) noexcept {
        return a.real();
    }
};
struct Imag {
    template <class R, class T>
    static R apply(T a) noexcept {
        return a.imag();
    }
};
struct Complex {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        return R(a, b);
    }
};

struct Copy {
    template <class R, class T>
    static R apply(T a) noexcept {
        return a;
    }
};
struct OnesLike {
    template <class R, class T>
    static R apply(T) noexcept {
        return R(1);
    }
};

// ------------------------------------------------------------ comparisons
// Complex numbers order lexicographically, as NumPy's comparisons do, with NumPy's
// NaN rule: where the real parts differ, a NaN imaginary part makes the result false.
#define NUMFUSE_EXPR_COMPARE(Name, op)                                                       \
    struct Name {                                                                            \
        template <class R, class T>                                                          \
        static R apply(T a, T b) noexcept {                                                  \
            if constexpr (is_complex_v<T>) {                                                 \
                if (a.real() == b.real()) return a.imag() op b.imag();                       \
                return a.real() op b.real() && a.imag() == a.imag() && b.imag() == b.imag(); \
            } else {                                                                         \
                return a op b;                                                               \
            }                                                                                \
        }                                                                                    \
    };
NUMFUSE_EXPR_COMPARE(Less, <)
NUMFUSE_EXPR_COMPARE(LessEqual, <=)
NUMFUSE_EXPR_COMPARE(Greater, >)
NUMFUSE_EXPR_COMPARE(GreaterEqual, >=)
#undef NUMFUSE_EXPR_COMPARE

struct Equal {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        return a == b;
    }
};
struct NotEqual {
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        return a != b;
    }
};

struct Isnan {
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (is_complex_v<T>) return std::isnan(a.real()) || std::isnan(a.imag());
        else return std::isnan(a);
    }
};
struct Isinf {
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (is_complex_v<T>) return std::isinf(a.real()) || std::isinf(a.imag());
        else return std::isinf(a);
    }
};
struct Isfinite {
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (is_complex_v<T>) return std::isfinite(a.real()) && std::isfinite(a.imag());
        else return std::isfinite(a);
    }
};
struct Signbit {
    template <class R, class T>
    static R apply(T a) noexcept {
        return std::signbit(a);
    }
};

struct Where {
    template <class R, class T>
    static R apply(bool condition, T a, T b) noexcept {
        return condition ? a : b;
    }
};

// Conversions: complex -> real keeps the real part, anything -> bool is != 0.
struct Cast {
    template <class R, class T>
    static R apply(T a) noexcept {
        if constexpr (std::is_same_v<R, bool>) {
            return a != T(0);
        } else if constexpr (is_complex_v<R>) {
            if constexpr (is_complex_v<T>)
                return R(static_cast<typename R::value_type>(a.real()),
                         static_cast<typename R::value_type>(a.imag()));
            else return R(static_cast<typename R::value_type>(a), 0);
        } else if constexpr (is_complex_v<T>) {
            return static_cast<R>(a.real());
        } else if constexpr (std::is_integral_v<R> && std::is_floating_point_v<T>) {
            // Out-of-range float -> int is undefined in C++; NumPy gives INT_MIN
            // on x86 (cvttsd2si), which this reproduces without the UB.
            if (!(a >= T(-0x1p63) && a < T(0x1p63))) return std::numeric_limits<R>::min();
            return static_cast<R>(static_cast<long long>(a));
        } else {
            return static_cast<R>(a);
        }
    }
};

// The ufunc of a function-table kernel, generated from the table's rows: the VM returns
// the NaNs that ufunc returns (nan_fixup.hpp), so evaluate('log(x)') and numfuse.log(x)
// agree bit for bit on invalid and NaN inputs.
template <class F>
struct ufunc_of {
    static constexpr bool exists = false;
};
#define NUMFUSE_EXPR_UFUNC_OF(name, Functor)         \
    template <>                                      \
    struct ufunc_of<Functor> {                       \
        static constexpr bool exists = true;         \
        static constexpr UnaryOp op = UnaryOp::name; \
    };
#define NUMFUSE_EXPR_UFUNC_ROW(name, arity, types, Functor, libm, ufunc, gpu, summary) \
    NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_1_##arity(NUMFUSE_EXPR_UFUNC_OF(name, Functor)))
NUMFUSE_FUNCTIONS(NUMFUSE_EXPR_UFUNC_ROW)
#undef NUMFUSE_EXPR_UFUNC_ROW
#undef NUMFUSE_EXPR_UFUNC_OF

// The NaN policy of F's ufunc for lanes of type T; inactive (the kernel's NaNs) for the
// other kernels.
template <class F, class T>
NanPolicy<T> nan_policy_of() noexcept {
    if constexpr (ufunc_of<F>::exists) {
        return NanPolicy<T>::of(ufunc_of<F>::op);
    } else {
        return NanPolicy<T>{};
    }
}

// ------------------------------------------------------------ the loop
template <class F, class = void>
struct has_batch : std::false_type {};
template <class F>
struct has_batch<F, std::void_t<decltype(F::vectorized)>> : std::bool_constant<F::vectorized> {};
template <class F, class = void>
struct has_batch_for_f32 : std::false_type {};
template <class F>
struct has_batch_for_f32<F, std::void_t<decltype(&F::template batch_for_f32<xsimd::batch<double>>)>>
    : std::true_type {};
// F::array_kernel: F::template array<Arch, Out>(out, a, b, n) computes whole float64 arrays
// (Out: the type the results are rounded to), two arguments.
template <class F, class = void>
struct has_array_kernel : std::false_type {};
template <class F>
struct has_array_kernel<F, std::void_t<decltype(F::array_kernel)>>
    : std::bool_constant<F::array_kernel> {};
template <class F, class = void>
struct computes_f32_in_f64 : std::false_type {};
template <class F>
struct computes_f32_in_f64<F, std::void_t<decltype(F::f32_via_f64)>>
    : std::bool_constant<F::f32_via_f64> {};
// F::f32_native: F::batch takes float32 batches too (a float32 kernel of its own, which may
// widen inside): real float32 lanes go through it, not through float64 (complex64 still does).
template <class F, class = void>
struct has_f32_native : std::false_type {};
template <class F>
struct has_f32_native<F, std::void_t<decltype(F::f32_native)>> : std::bool_constant<F::f32_native> {
};

// float32 lanes of an op whose accurate kernel is float64-only: widened in
// chunks into float64 scratch, computed, rounded once on the way back (the
// conversion loops vectorize; `out` may alias an input, as each chunk is
// read completely before it is written).
template <class Arch, class F, int arity>
void f32_through_f64(float* out, const float* a, const float* b, std::size_t n) noexcept {
    using V = xsimd::batch<double, Arch>;
    constexpr std::size_t chunk = 256;
    const NanPolicy<double> nan_policy = nan_policy_of<F, float>().widened();
    alignas(64) double xa[chunk], xb[chunk];
    for (std::size_t k0 = 0; k0 < n; k0 += chunk) {
        const std::size_t m = n - k0 < chunk ? n - k0 : chunk;
        for (std::size_t j = 0; j < m; ++j) xa[j] = static_cast<double>(a[k0 + j]);
        if constexpr (arity == 2) {
            for (std::size_t j = 0; j < m; ++j) xb[j] = static_cast<double>(b[k0 + j]);
        }
        if constexpr (has_array_kernel<F>::value) {
            static_assert(arity == 2, "array kernels take two arguments");
            F::template array<Arch, float>(xa, xa, xb, m);
        } else if constexpr (has_batch<F>::value) {
            const std::size_t padded = (m + V::size - 1) / V::size * V::size;
            for (std::size_t j = m; j < padded; ++j) xa[j] = xb[j] = 1.0;
            for (std::size_t j = 0; j < padded; j += V::size) {
                if constexpr (arity == 1 && has_batch_for_f32<F>::value) {
                    const V x = V::load_aligned(xa + j);
                    nan_policy.apply(x, F::batch_for_f32(x)).store_aligned(xa + j);
                } else if constexpr (arity == 1) {
                    const V x = V::load_aligned(xa + j);
                    nan_policy.apply(x, F::batch(x)).store_aligned(xa + j);
                } else {
                    F::batch(V::load_aligned(xa + j), V::load_aligned(xb + j))
                        .store_aligned(xa + j);
                }
            }
        } else {
            for (std::size_t j = 0; j < m; ++j) {
                if constexpr (arity == 1) xa[j] = F::template apply<double>(xa[j]);
                else xa[j] = F::template apply<double>(xa[j], xb[j]);
            }
        }
        for (std::size_t j = 0; j < m; ++j) out[k0 + j] = static_cast<float>(xa[j]);
    }
}

// ------------------------------------------------------------------ byte strings
// NumPy's order of S elements: unsigned bytes, lexicographic, the shorter
// operand padded with NULs (so trailing NULs are padding: b"abc" equals
// b"abc\0"). Returns <0, 0 or >0.
inline int bytes_compare(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
    const std::size_t common = na < nb ? na : nb;
    const int r = std::memcmp(a, b, common);
    if (r != 0) return r;
    for (std::size_t k = common; k < na; ++k) {
        if (a[k] != 0) return 1;
    }
    for (std::size_t k = common; k < nb; ++k) {
        if (b[k] != 0) return -1;
    }
    return 0;
}

// Length without the trailing NULs (NumPy's value of an S element).
inline std::size_t bytes_length(const char* a, std::size_t n) noexcept {
    while (n > 0 && a[n - 1] == 0) --n;
    return n;
}

struct BytesLess {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) < 0;
    }
};
struct BytesLessEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) <= 0;
    }
};
struct BytesGreater {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) > 0;
    }
};
struct BytesGreaterEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) >= 0;
    }
};
struct BytesEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) == 0;
    }
};
struct BytesNotEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) != 0;
    }
};
// contains(haystack, needle): the needle's value occurs in the haystack's
// value (both without their trailing NULs; interior NULs are data, as in
// Python's `needle in haystack` and np.char.find). The empty needle occurs
// everywhere.
struct BytesContains {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        const std::string_view haystack(a, bytes_length(a, na));
        const std::string_view needle(b, bytes_length(b, nb));
        return haystack.find(needle) != std::string_view::npos;
    }
};

template <class F>
struct is_bytes_op : std::false_type {};
template <>
struct is_bytes_op<BytesLess> : std::true_type {};
template <>
struct is_bytes_op<BytesLessEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesGreater> : std::true_type {};
template <>
struct is_bytes_op<BytesGreaterEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesNotEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesContains> : std::true_type {};

// out[k] = F(a element k, b element k): registers of n elements of
// widths.a / widths.b bytes, `widths` the instruction's w constant.
template <class F>
unsigned bytes_kernel(char* out_bytes, const char* a, const char* b, const char* widths,
                      std::size_t n) noexcept {
    expr::BytesWidths w;
    std::memcpy(&w, widths, sizeof w);
    bool* out = reinterpret_cast<bool*>(out_bytes);
    for (std::size_t k = 0; k < n; ++k) {
        out[k] = F::apply(a + k * w.a, w.a, b + k * w.b, w.b);
    }
    return expr::runtime_ok;
}

template <class Arch, class F, class R, class A, class B, class C>
unsigned numeric_kernel(char* out_bytes, const char* a_bytes, const char* b_bytes,
                        const char* c_bytes, std::size_t n) noexcept {
    constexpr int arity = std::is_void_v<B> ? 1 : (std::is_void_v<C> ? 2 : 3);
    using BA = std::conditional_t<std::is_void_v<B>, A, B>;
    using CA = std::conditional_t<std::is_void_v<C>, A, C>;
    static_assert(!ufunc_of<F>::exists || has_batch<F>::value,
                  "a ufunc's VM kernel has a batch form: its NaN policy is applied there");
    R* out = reinterpret_cast<R*>(out_bytes);
    const A* a = reinterpret_cast<const A*>(a_bytes);
    const BA* b = reinterpret_cast<const BA*>(b_bytes);
    const CA* c = reinterpret_cast<const CA*>(c_bytes);

    if constexpr (std::is_same_v<F, Pow> && std::is_integral_v<R>) {
        // NumPy: "Integers to negative integer powers are not allowed."
        for (std::size_t k = 0; k < n; ++k) {
            if (b[k] < 0) return expr::runtime_negative_int_power;
        }
    }

    constexpr bool simd_type = std::is_same_v<R, float> || std::is_same_v<R, double>;
    constexpr bool same_types = std::is_same_v<R, A> && (arity < 2 || std::is_same_v<R, BA>) &&
                                (arity < 3 || std::is_same_v<R, CA>);
    constexpr bool complex_math = computes_f32_in_f64<F>::value || std::is_same_v<F, Exp> ||
                                  std::is_same_v<F, Log> || std::is_same_v<F, Sqrt>;
    if constexpr (has_array_kernel<F>::value && std::is_same_v<R, double> && same_types &&
                  arity == 2) {
        F::template array<Arch, double>(out, a, b, n);
    } else if constexpr (computes_f32_in_f64<F>::value && !has_f32_native<F>::value &&
                         std::is_same_v<R, float> && same_types && arity < 3) {
        f32_through_f64<Arch, F, arity>(out, a, b, n);
    } else if constexpr (complex_math && arity == 1 && std::is_same_v<R, c64> &&
                         std::is_same_v<A, c64>) {
        // complex64 transcendental functions computed in complex128 and rounded
        // once (the C library's complex float functions are 2-6 ULP off).
        for (std::size_t k = 0; k < n; ++k) {
            const c128 r = F::template apply<c128>(c128(a[k].real(), a[k].imag()));
            out[k] = c64(static_cast<float>(r.real()), static_cast<float>(r.imag()));
        }
    } else if constexpr (has_batch<F>::value && simd_type && same_types) {
        using V = xsimd::batch<R, Arch>;
        constexpr std::size_t width = V::size;
        const NanPolicy<R> nan_policy = nan_policy_of<F, R>();
        auto compute = [&nan_policy](const R* x, const R* y, const R* z) noexcept {
            if constexpr (arity == 1) {
                (void)y, (void)z;
                const V xv = V::load_unaligned(x);
                return nan_policy.apply(xv, F::batch(xv));
            } else if constexpr (arity == 2) {
                (void)z;
                return F::batch(V::load_unaligned(x), V::load_unaligned(y));
            } else {
                return F::batch(V::load_unaligned(x), V::load_unaligned(y), V::load_unaligned(z));
            }
        };
        std::size_t k = 0;
        for (; k + width <= n; k += width) {
            compute(a + k, arity > 1 ? b + k : nullptr, arity > 2 ? c + k : nullptr)
                .store_unaligned(out + k);
        }
        if (k < n) {
            // The tail through buffers padded with 1 (harmless in every op).
            alignas(64) R xa[width], xb[width], xc[width], xo[width];
            for (std::size_t j = 0; j < width; ++j) xa[j] = xb[j] = xc[j] = R(1);
            const std::size_t rest = n - k;
            std::memcpy(xa, a + k, rest * sizeof(R));
            if constexpr (arity > 1) std::memcpy(xb, b + k, rest * sizeof(R));
            if constexpr (arity > 2) std::memcpy(xc, c + k, rest * sizeof(R));
            compute(xa, xb, xc).store_aligned(xo);
            std::memcpy(out + k, xo, rest * sizeof(R));
        }
    } else {
        for (std::size_t k = 0; k < n; ++k) {
            if constexpr (arity == 1) {
                out[k] = F::template apply<R>(a[k]);
            } else if constexpr (arity == 2) {
                out[k] = F::template apply<R>(a[k], b[k]);
            } else {
                out[k] = F::template apply<R>(a[k], b[k], c[k]);
            }
        }
    }
    return expr::runtime_ok;
}

// One opcode row's kernel: the bytes rows' loop or the numeric one.
template <class Arch, class F, class R, class A, class B, class C>
unsigned expr_kernel(char* out_bytes, const char* a_bytes, const char* b_bytes, const char* c_bytes,
                     std::size_t n) noexcept {
    if constexpr (is_bytes_op<F>::value) {
        return bytes_kernel<F>(out_bytes, a_bytes, b_bytes, c_bytes, n);
    } else {
        return numeric_kernel<Arch, F, R, A, B, C>(out_bytes, a_bytes, b_bytes, c_bytes, n);
    }
}

#define NUMFUSE_EXPR_CTYPE_b bool
#define NUMFUSE_EXPR_CTYPE_i std::int32_t
#define NUMFUSE_EXPR_CTYPE_l std::int64_t
#define NUMFUSE_EXPR_CTYPE_f float
#define NUMFUSE_EXPR_CTYPE_d double
#define NUMFUSE_EXPR_CTYPE_c c64
#define NUMFUSE_EXPR_CTYPE_z c128
#define NUMFUSE_EXPR_CTYPE_s char
#define NUMFUSE_EXPR_CTYPE_w expr::BytesWidths
#define NUMFUSE_EXPR_CTYPE_n void

// One level's kernel table, generated from the opcode rows.
inline void fill_expr_table(expr::OpKernel* table) noexcept {
#define NUMFUSE_EXPR_FILL(name, Functor, R, A, B, C)                                              \
    table[static_cast<int>(expr::Opcode::name)] =                                                 \
        &expr_kernel<NUMFUSE_LEVEL_ARCH, Functor, NUMFUSE_EXPR_CTYPE_##R, NUMFUSE_EXPR_CTYPE_##A, \
                     NUMFUSE_EXPR_CTYPE_##B, NUMFUSE_EXPR_CTYPE_##C>;
    NUMFUSE_EXPR_OPCODES(NUMFUSE_EXPR_FILL)
#undef NUMFUSE_EXPR_FILL
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops
