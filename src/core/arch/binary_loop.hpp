// The strided two-argument ufunc loop (logaddexp), instantiated once per
// instruction-set level; included by level_unit.hpp after expr_ops.hpp and
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

// Each operation: compute(a, b) (the evaluate functor's kernel: float64 lanes directly,
// float32 lanes widened, computed in float64 and rounded once), a cheap per-batch test
// that is true wherever a floating-point condition may arise, and the exact per-element
// rule for the conditions NumPy reports.
struct LogaddexpOp {
    // Reduce and accumulate are a log-sum-exp (binary_fold).
    static constexpr bool folds_as_log_sum_exp = true;
    template <class B>
    static inline B compute(const B& a, const B& b) noexcept {
        if constexpr (std::is_same<typename B::value_type, double>::value) {
            return expr_ops::Logaddexp::batch(a, b);
        } else {
            using D = xsimd::batch<double, typename B::arch_type>;
            constexpr std::size_t width = B::size;
            alignas(64) float fa[width], fb[width];
            alignas(64) double wa[width], wb[width];
            a.store_aligned(fa);
            b.store_aligned(fb);
            for (std::size_t k = 0; k < width; ++k) {
                wa[k] = static_cast<double>(fa[k]);
                wb[k] = static_cast<double>(fb[k]);
            }
            for (std::size_t k = 0; k < width; k += D::size) {
                expr_ops::Logaddexp::batch(D::load_aligned(wa + k), D::load_aligned(wb + k))
                    .store_aligned(wa + k);
            }
            for (std::size_t k = 0; k < width; ++k) fa[k] = static_cast<float>(wa[k]);
            return B::load_aligned(fa);
        }
    }
    // NumPy's npy_logaddexp computes d = a - b, then log1p(exp(-|d|)): conditions arise
    // only where |d| exceeds exp's underflow limit, d overflows, or an input is NaN.
    template <class B>
    static inline auto may_raise(const B& a, const B& b) noexcept {
        using T = typename B::value_type;
        return ~(xsimd::abs(a - b) <= B(sizeof(T) == 4 ? T(87) : T(708)));
    }
    template <class T>
    static unsigned flags(T a, T b, T) noexcept {
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

template <class Arch, class Op, class T>
struct BinaryBatchRunner {
    using B = xsimd::batch<T, Arch>;
    static constexpr std::size_t width = B::size;
    unsigned flags = fp_none;

    B operator()(const B& a, const B& b) noexcept {
        const B y = Op::compute(a, b);
        if (xsimd::any(Op::may_raise(a, b))) {
            alignas(64) T as[width], bs[width], ys[width];
            a.store_aligned(as);
            b.store_aligned(bs);
            y.store_aligned(ys);
            for (std::size_t k = 0; k < width; ++k) {
                flags |= Op::template flags<T>(as[k], bs[k], ys[k]);
            }
        }
        return y;
    }

    // Up to `count` (<= width) elements through stack buffers (strides of any sign, 0 for
    // a broadcast operand); unused lanes hold 1, which raises nothing.
    void buffered(const char* a, std::ptrdiff_t a_stride, const char* b, std::ptrdiff_t b_stride,
                  char* out, std::ptrdiff_t out_stride, std::size_t count) noexcept {
        alignas(64) T as[width], bs[width];
        for (std::size_t k = 0; k < width; ++k) as[k] = bs[k] = T(1);
        for (std::size_t k = 0; k < count; ++k) {
            const auto i = static_cast<std::ptrdiff_t>(k);
            std::memcpy(&as[k], a + i * a_stride, sizeof(T));
            std::memcpy(&bs[k], b + i * b_stride, sizeof(T));
        }
        const B y = (*this)(B::load_aligned(as), B::load_aligned(bs));
        y.store_aligned(as);
        for (std::size_t k = 0; k < count; ++k) {
            std::memcpy(out + static_cast<std::ptrdiff_t>(k) * out_stride, &as[k], sizeof(T));
        }
    }
};

// out[i] = Op(a[i], b[i]) for n elements; see BinaryLoop in numfuse_core.hpp. Contiguous
// operands load and store directly (out may be a or b: each batch is read before it is
// written); any other strides go through the stack buffers.
template <class Arch, class Op, class T>
unsigned binary_loop(const char* a, std::ptrdiff_t a_stride, const char* b, std::ptrdiff_t b_stride,
                     char* out, std::ptrdiff_t out_stride, std::size_t n) noexcept {
    using Runner = BinaryBatchRunner<Arch, Op, T>;
    using B = typename Runner::B;
    constexpr std::size_t width = Runner::width;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    Runner run;
    std::size_t i = 0;
    if (a_stride == elem && b_stride == elem && out_stride == elem) {
        const T* pa = reinterpret_cast<const T*>(a);
        const T* pb = reinterpret_cast<const T*>(b);
        T* po = reinterpret_cast<T*>(out);
        for (; i + width <= n; i += width) {
            run(B::load_unaligned(pa + i), B::load_unaligned(pb + i)).store_unaligned(po + i);
        }
    }
    for (; i < n; i += width) {
        const auto at = static_cast<std::ptrdiff_t>(i);
        run.buffered(a + at * a_stride, a_stride, b + at * b_stride, b_stride,
                     out + at * out_stride, out_stride, n - i < width ? n - i : width);
    }
    return run.flags;
}

template <class Op, class = void>
struct folds_as_log_sum_exp : std::false_type {};
template <class Op>
struct folds_as_log_sum_exp<Op, std::enable_if_t<Op::folds_as_log_sum_exp>> : std::true_type {};

// The fold that NumPy's reduce and accumulate ask of a loop whose first operand is its own
// output (reduce: a == out, both at stride 0; accumulate: a one element behind out):
// out[i] = Op(out[i - 1], b[i]), out[-1] = a[0], for i in [0, n). The BinaryLoop
// signature, a_stride unused.
// * logaddexp (folds_as_log_sum_exp): out[i] is log(exp(a[0]) + sum of exp(b[j]), j <= i)
//   from lse::RunningLse, within a few eps of the exact value however long the run, where
//   a chain of n logaddexp calls adds a rounding per step (as np.add.reduce sums pairwise
//   rather than in order); and each step is a few operations on the chain, where the pair
//   kernel's latency would be the whole cost. Special values are the fold's (NaN sticks,
//   +inf wins, -inf adds nothing). Conditions: invalid for a NaN element (NumPy's
//   comparisons raise it), overflow where an element minus the running maximum overflows,
//   underflow where an element lies further below the running maximum than exp reaches
//   (the fold's own partial results are at least that maximum).
// * Any other operation: element by element, each step lane 0 of a broadcast batch (the
//   bits binary_loop gives for the same two values), the accumulator in a register.
template <class Arch, class Op, class T>
unsigned binary_fold(const char* a, std::ptrdiff_t, const char* b, std::ptrdiff_t b_stride,
                     char* out, std::ptrdiff_t out_stride, std::size_t n) noexcept {
    if constexpr (folds_as_log_sum_exp<Op>::value) {
        // -log(smallest normal): exp of anything further down underflows.
        constexpr double exp_floor = sizeof(T) == 4 ? 87.33654475055310898657
                                                    : 708.39641853226410622;
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
            if (out_stride != 0 || i + 1 == n) {
                const T value = static_cast<T>(lse::running_lse_value(state));
                std::memcpy(out + k * out_stride, &value, sizeof value);
            }
        }
        return flags;
    } else {
        using B = xsimd::batch<T, Arch>;
        T acc;
        std::memcpy(&acc, a, sizeof acc);
        unsigned flags = fp_none;
        for (std::size_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::ptrdiff_t>(i);
            T x;
            std::memcpy(&x, b + k * b_stride, sizeof x);
            const B va(acc), vb(x);
            const T r = Op::compute(va, vb).get(0);
            if (xsimd::any(Op::may_raise(va, vb))) flags |= Op::template flags<T>(acc, x, r);
            acc = r;
            std::memcpy(out + k * out_stride, &acc, sizeof acc);
        }
        return flags;
    }
}

// One level's table: [op][dtype][loop, fold], a row per two-argument ufunc of the function
// table (functions.hpp), whose loop operation is <Functor>Op above.
template <class Op, class T>
void fill_binary_row(BinaryLoop (&row)[2]) noexcept {
    row[0] = &binary_loop<NUMFUSE_LEVEL_ARCH, Op, T>;
    row[1] = &binary_fold<NUMFUSE_LEVEL_ARCH, Op, T>;
}

inline void fill_binary_table(BinaryLoop (&table)[binary_op_count][simd_dtype_count][2]) noexcept {
#define NUMFUSE_FILL_BINARY(name, arity, types, Functor, libm, ufunc, gpu, summary)         \
    NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_2_##arity(                              \
        fill_binary_row<Functor##Op, float>(table[static_cast<int>(BinaryOp::name)][0]);    \
        fill_binary_row<Functor##Op, double>(table[static_cast<int>(BinaryOp::name)][1]);))
    NUMFUSE_FUNCTIONS(NUMFUSE_FILL_BINARY)
#undef NUMFUSE_FILL_BINARY
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE
