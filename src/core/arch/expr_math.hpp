// The expression VM's functions: the kernels of the function table's rows
// (functions.hpp's Functor column), and abs, sign, conj, real, imag, complex, copy.
// Part of arch/expr_ops.hpp: included only by the per-level translation units.
//
// Operations with a `batch` member run on xsimd batches: exp, log and erf through
// numfuse's ufunc kernels, the other transcendental functions through the float64
// kernels of kernels/{trig,invtrig,hyperbolic,logpair}.hpp (<= 1 ULP; float32 lanes are
// computed in float64 and rounded once, see expr_f32.hpp), sqrt/floor/ceil/trunc/round/
// copysign through xsimd. arctan2, hypot, logaddexp and logaddexp2 run array kernels
// (NUMFUSE_EXPR_ARRAY_KERNEL, below; float32 through float64). The others are scalar
// loops: complex types (complex64 transcendental functions in complex128, rounded once),
// and nextafter (C library). The functions that are ufuncs return the ufunc's NaNs for
// invalid and NaN inputs (nan_fixup.hpp).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "arch/expr_arith.hpp"
#include "arch/unary_fast_ops.hpp"
#include "functions.hpp"
#include "kernels/atan2.hpp"
#include "kernels/cbrt.hpp"
#include "kernels/common.hpp"
#include "kernels/erf.hpp"
#include "kernels/erfc.hpp"
#include "kernels/exp.hpp"
#include "kernels/exp2.hpp"
#include "kernels/hyperbolic.hpp"
#include "kernels/hyperbolic_f32.hpp"
#include "kernels/hypot.hpp"
#include "kernels/invtrig.hpp"
#include "kernels/invtrig_f32.hpp"
#include "kernels/log.hpp"
#include "kernels/logaddexp.hpp"
#include "kernels/logpair.hpp"
#include "kernels/trig.hpp"
#include "kernels/trig_f32.hpp"
#include "scalar_libm.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including expr_math.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops {

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
// sqrt: correctly rounded in hardware for both types (f32_native: float32 lanes stay float32),
// subnormal inputs scaled first (kernels/hypot.hpp: sqrt_kernel).
NUMFUSE_EXPR_MATH64(Sqrt, sqrt, kernels::sqrt_kernel, kernels::sqrt_kernel, float)
NUMFUSE_EXPR_MATH64(Sin, sin, kernels::sin_kernel, kernels::sin_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Cos, cos, kernels::cos_kernel, kernels::cos_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Tan, tan, kernels::tan_kernel, kernels::tan_f32_kernel, float)
// arcsin, arccos, arctan: float32 lanes in float32 arithmetic on FMA levels
// (kernels/invtrig_f32.hpp), xsimd's float64 functions elsewhere.
NUMFUSE_EXPR_MATH64(Arcsin, asin, kernels::asin_kernel, kernels::asin_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Arccos, acos, kernels::acos_kernel, kernels::acos_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Arctan, atan, kernels::atan_kernel, kernels::atan_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Sinh, sinh, kernels::sinh_kernel, kernels::sinh_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Cosh, cosh, kernels::cosh_kernel, kernels::cosh_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Tanh, tanh, kernels::tanh_kernel, kernels::tanh_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Arcsinh, asinh, kernels::asinh_kernel, kernels::asinh_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Arccosh, acosh, kernels::acosh_kernel, kernels::acosh_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Arctanh, atanh, kernels::atanh_kernel, kernels::atanh_f32_kernel, float)
// kernels/exp2.hpp, kernels/cbrt.hpp: float64 kernels that take float32 batches too
// (widened, rounded once inside: f32_native), <= 1 ULP with special values as NumPy;
// complex64 exp2 runs in complex128 (f32_via_f64) and is rounded once.
NUMFUSE_EXPR_MATH64(Exp2, exp2, kernels::exp2_kernel, kernels::exp2_kernel, float)
NUMFUSE_EXPR_MATH64(Cbrt, cbrt, kernels::cbrt_kernel, kernels::cbrt_kernel, float)
NUMFUSE_EXPR_MATH(Exp, exp, kernels::exp_kernel)
NUMFUSE_EXPR_MATH(Log, log, kernels::log_kernel)
NUMFUSE_EXPR_MATH(Ceil, ceil, xsimd::ceil)
NUMFUSE_EXPR_MATH(Floor, floor, xsimd::floor)
NUMFUSE_EXPR_MATH(Trunc, trunc, xsimd::trunc)
// Scalars and complex values through scalar_libm.hpp (NumPy's complex log1p / expm1 / log2 /
// log10 formulas, as the ufuncs' complex loops; complex log10 is NumPy's log(z) log10(e));
// real batches through numfuse's float64 kernels. float32 lanes: expm1, log1p, log2 and
// log10 through their float32 kernels (kernels/hyperbolic_f32.hpp, logpair.hpp,
// logbase_f32.hpp; AVX-512: float32 lanes, elsewhere the float64 kernels on the widened lanes,
// rounded once).
NUMFUSE_EXPR_MATH64(Expm1, expm1, kernels::expm1_kernel, kernels::expm1_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Log1p, log1p, kernels::log1p_kernel, kernels::log1p_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Log2, log2, kernels::log2_kernel, kernels::log2_f32_kernel, float)
NUMFUSE_EXPR_MATH64(Log10, log10, kernels::log10_kernel, kernels::log10_f32_kernel, float)

// The functors generated from the one-argument rows whose Functor column is `kernel`
// (NUMFUSE_EXPR_MATH) or `kernel64` (NUMFUSE_EXPR_MATH64, float32 through the same
// float64 kernel): struct <name>_fn, the kernel kernels::<name>_kernel on batches,
// scalar_libm::<libm> on one value and on complex values.
#define NUMFUSE_EXPR_GENERATED_kernel(name, libm) \
    NUMFUSE_EXPR_MATH(name##_fn, libm, kernels::name##_kernel)
#define NUMFUSE_EXPR_GENERATED_kernel64(name, libm) \
    NUMFUSE_EXPR_MATH64(name##_fn, libm, kernels::name##_kernel, kernels::name##_kernel, double)
#define NUMFUSE_EXPR_GENERATED_ROW(X, name, arity, types, Functor, libm, ...) \
    NUMFUSE_FN_IF_GENERATED(Functor)(                                         \
        NUMFUSE_FN_IF_ARITY_1_##arity(NUMFUSE_EXPR_GENERATED_##Functor(name, libm)))
NUMFUSE_FUNCTION_ROWS(NUMFUSE_EXPR_GENERATED_ROW, unused)
#undef NUMFUSE_EXPR_GENERATED_ROW
#undef NUMFUSE_EXPR_GENERATED_kernel
#undef NUMFUSE_EXPR_GENERATED_kernel64
#undef NUMFUSE_EXPR_MATH
#undef NUMFUSE_EXPR_MATH64

// erfc: numfuse's float64 erfc kernel (kernels/erfc.hpp, <= 1 ULP on the whole line,
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

// The ufunc operation (arch/unary_fast_ops.hpp) whose fast path a functor's VM kernel takes
// (numeric_kernel: compute_fast, and F::batch on the batches may_raise flags); void: none.
template <class F>
struct fast_split_of {
    using type = void;
};
template <>
struct fast_split_of<Exp> {
    using type = ExpOp;
};
template <>
struct fast_split_of<Log> {
    using type = LogOp;
};
template <>
struct fast_split_of<Erf> {
    using type = ErfOp;
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

// ------------------------------------------------------------ two-argument functions
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

// The functions computed over whole arrays, one row each: kernels::<kernel>_array<Out,
// Arch>(out, a, b, n) on float64 values (Out: the type the results are rounded to) and
// kernels::<kernel>_one<Out, Arch>(a, b), the same bits for one pair. float64 directly,
// float32 widened to float64 (f32_through_f64) and rounded once. The ufunc loops
// (binary_loop.hpp's ArrayKernelOp) call the same functions: evaluate and the ufunc give
// the same bits. logaddexp and logaddexp2 are array kernels, not batch ones: the lanes
// whose result lies next to zero are gathered across batches and recomputed in higher
// precision.
#define NUMFUSE_EXPR_ARRAY_KERNEL(Name, kernel)                                                    \
    struct Name {                                                                                  \
        static constexpr bool array_kernel = true;                                                 \
        static constexpr bool f32_via_f64 = true;                                                  \
        template <class Arch, class Out>                                                           \
        static void array(double* out, const double* a, const double* b, std::size_t n) noexcept { \
            kernels::kernel##_array<Out, Arch>(out, a, b, n);                                      \
        }                                                                                          \
        template <class Arch, class Out>                                                           \
        static double one(double a, double b) noexcept {                                           \
            return kernels::kernel##_one<Out, Arch>(a, b);                                         \
        }                                                                                          \
    };
NUMFUSE_EXPR_ARRAY_KERNEL(Arctan2, atan2)          // kernels/atan2.hpp
NUMFUSE_EXPR_ARRAY_KERNEL(Hypot, hypot)            // kernels/hypot.hpp
NUMFUSE_EXPR_ARRAY_KERNEL(Logaddexp, logaddexp)    // kernels/logaddexp.hpp
NUMFUSE_EXPR_ARRAY_KERNEL(Logaddexp2, logaddexp2)  // kernels/logaddexp.hpp, base 2
#undef NUMFUSE_EXPR_ARRAY_KERNEL

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops
