// The expression VM's arithmetic operators (+ - * / // % **, maximum/minimum, shifts,
// bitwise and unary operators), and the helpers the other families share (complex types,
// wrap-around integer arithmetic). Part of arch/expr_ops.hpp: included only by the
// per-level translation units, after NUMFUSE_LEVEL_NAMESPACE / NUMFUSE_LEVEL_ARCH are set.
//
// Semantics follow NumPy's loops element for element (integer wrap-around, Python-style
// floor division and remainder, NaN-propagating maximum, Smith's complex division, ...).
// Real ** is kernels/power_arrays.hpp's array kernels.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/power_arrays.hpp"
#include "kernels/power_scalar.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including expr_arith.hpp"
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

// The complex product a * b as NumPy's x86 SIMD multiply loops compute it: on the x86 levels
// with FMA (avx2_fma, avx512) re = fma(ar, br, -(ai bi)), im = fma(ar, bi, ai br), each
// product inside an FMA unrounded; elsewhere (sse2, neon64) the textbook product
// (kernels::complex_multiply). Named here rather than left to the compiler, which fused
// the vectorized part of the loop and not its tail (the x86 units are built with
// -ffp-contract=off, but GCC's complex-multiply pattern formed fmaddsub anyway), so that
// every element gets the same formula. In this level's namespace: std::fma is one
// instruction only in the FMA units.
template <class T>
std::complex<T> multiply_complex(std::complex<T> a, std::complex<T> b) noexcept {
    if constexpr (kernels::detail::has_fma<NUMFUSE_LEVEL_ARCH> &&
                  !kernels::detail::is_neon64<NUMFUSE_LEVEL_ARCH>) {
        const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
        const T ai_bi = ai * bi, ai_br = ai * br;
        return std::complex<T>(std::fma(ar, br, -ai_bi), std::fma(ar, bi, ai_br));
    } else {
        return kernels::complex_multiply(a, b);
    }
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
            return multiply_complex(a, b);
        } else {
            return a * b;
        }
    }
    template <class B>
    static B batch(const B& a, const B& b) noexcept {
        return a * b;
    }
};

// Smith's algorithm, as NumPy divides complex numbers (kernels/power_scalar.hpp).
using kernels::complex_divide;

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

// Complex power as NumPy does it (kernels/power_scalar.hpp, shared with the ufunc's loops).
using kernels::complex_power;

// Real x**y through kernels/power_arrays.hpp's array kernels (<= 1 ULP, C99's special
// values; an array whose exponents are all one small half-integer takes the exact product
// path): float64, and float32 on its own loads and stores (array_f32; complex64 is widened
// to complex128); integers and complex numbers element by element below.
struct Pow {
    static constexpr bool array_kernel = true;
    static constexpr bool array_f32_kernel = true;
    static constexpr bool f32_via_f64 = true;
    template <class Arch, class Out>
    static void array(double* out, const double* a, const double* b, std::size_t n) noexcept {
        kernels::power_array<Out, Arch>(out, a, b, n);
    }
    template <class Arch>
    static void array_f32(float* out, const float* a, const float* b, std::size_t n) noexcept {
        kernels::power_array_f32<Arch, false>(out, a, b, n);
    }
    template <class R, class T>
    static R apply(T a, T b) noexcept {
        if constexpr (std::is_integral_v<T>) {
            // Negative exponents were rejected before the loop (see numeric_kernel).
            return kernels::integer_power(a, b);
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
}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops
