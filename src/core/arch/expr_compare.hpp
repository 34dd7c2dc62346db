// The expression VM's comparisons, value tests (isnan, isinf, isfinite, signbit), where()
// and casts, with NumPy's rules (complex order, NaN, out-of-range float -> int).
// Part of arch/expr_ops.hpp: included only by the per-level translation units.
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "arch/expr_arith.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including expr_compare.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops {

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
}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops
