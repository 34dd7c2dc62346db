// The loop operation of the ufunc rows whose kernel is a functor of the VM
// (arch/expr_math.hpp): TableOp, which the hand-written operations of unary_loop.hpp
// build on, and the operations generated from the rows whose Functor column is `kernel`
// or `kernel64` (functions.hpp). Included by unary_loop.hpp (see there for the
// operations' interface and why everything lives in the level's namespace).
#pragma once

#include <xsimd/xsimd.hpp>

#include <limits>
#include <type_traits>

#include "arch/expr_ops.hpp"
#include "functions.hpp"
#include "kernels/common.hpp"
#include "numfuse_core.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including table_op.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE {

// The ufunc rows other than exp, log and erf compute what evaluate computes: the functor F
// of arch/expr_math.hpp
// (float64 through F::batch; float32 through F::batch too where F has its own float32
// kernel (F::f32_native), else widened to float64, through F::batch_for_f32 where it
// exists, else F::batch, and rounded once), so numfuse.tanh(x) and evaluate("tanh(x)") are
// the same bits. Their values need no repair (finish keeps them); Rule says which lanes may
// raise (Rule::may_raise, conservative and cheap) and which condition a finite input that
// gives an infinity raises (Rule::inf_flag: overflow for sinh, divide-by-zero for log2);
// Rule::subnormal_underflow<T> is whether NumPy reports underflow for a subnormal input
// (sin, arcsin, ... yes; cos, tanh no in float64; scipy.special's never).
template <class F, class D>
NUMFUSE_ALWAYS_INLINE D table_compute_f32_half(const D& v) noexcept {
    if constexpr (expr_ops::has_batch_for_f32<F>::value) {
        return F::batch_for_f32(v);
    } else {
        return F::batch(v);
    }
}
template <class F, class B>
NUMFUSE_ALWAYS_INLINE B table_compute(const B& x) noexcept {
    if constexpr (std::is_same<typename B::value_type, double>::value ||
                  expr_ops::has_f32_native<F>::value) {
        return F::batch(x);
    } else {
        xsimd::batch<double, typename B::arch_type> lo, hi;
        kernels::detail::widen(x, lo, hi);
        return kernels::detail::narrow(table_compute_f32_half<F>(lo),
                                       table_compute_f32_half<F>(hi));
    }
}

template <class F, class Rule>
struct TableOp {
    static constexpr bool deferrable = false;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute(const B& x) noexcept {
        return table_compute<F>(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return table_compute<F>(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B&, const B& y) noexcept {
        return y;
    }
    // NaN lanes too: the rare path gives them NumPy's NaN (nan_input_bits).
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return Rule::may_raise(x) | xsimd::isnan(x);
    }
    template <class T>
    static unsigned flags(T x, T y) noexcept {
        if (x != x) return fp_none;  // NaN in, NaN out: quiet
        if (y != y) return fp_invalid;
        const T inf = std::numeric_limits<T>::infinity();
        if ((y == inf || y == -inf) && x - x == T(0)) return Rule::inf_flag;
        const T ax = x < T(0) ? -x : x;
        if (Rule::template subnormal_underflow<T>() && ax != T(0) &&
            ax < std::numeric_limits<T>::min()) {
            return fp_underflow;
        }
        return fp_none;
    }
};

// The operation of a row with a generated functor F (Functor column `kernel` / `kernel64`):
// F's kernel as TableOp computes it; the lanes that may raise are the kernel's own test
// (kernels::<name>_special, in the derived struct) and NaN lanes (NumPy's NaN on the rare
// path). The conditions come from each lane's result, as NumPy's loops raise them for the
// functions such a kernel computes (exp2, cbrt, ...): invalid for a NaN from a non-NaN
// argument; for an infinite result of a finite argument overflow, or divide-by-zero where
// the row has an invalid domain (a pole at its edge, as log's); underflow for a nonzero
// finite argument whose result is below the smallest normal number and not the argument
// itself. A function whose NumPy loop reports otherwise (tanh of a subnormal raises
// nothing in float64) takes a hand-written functor and operation (unary_loop.hpp).
// (TableOp's Rule is unused: flags here and may_raise in the derived struct hide its.)
template <class F, InvalidArgs Invalid>
struct KernelOp : TableOp<F, void> {
    template <class T>
    static unsigned flags(T x, T y) noexcept {
        if (x != x) return fp_none;  // NaN in, NaN out: quiet
        if (y != y) return fp_invalid;
        if (x - x != T(0)) return fp_none;  // +-inf in: exact
        const T inf = std::numeric_limits<T>::infinity();
        if (y == inf || y == -inf) {
            return Invalid == InvalidArgs::none ? fp_overflow : fp_divide_by_zero;
        }
        const T ay = y < T(0) ? -y : y;
        if (x != T(0) && ay < std::numeric_limits<T>::min() && y != x) return fp_underflow;
        return fp_none;
    }
};

// <name>_fnOp for each such ufunc row (fill_unary_table reaches it as <Functor>Op).
#define NUMFUSE_KERNEL_OP(X, name, arity, types, Functor, libm, ufunc, identity, gpu, threads,  \
                          invalid, lo, hi, summary)                                             \
    NUMFUSE_FN_IF_GENERATED(Functor)(NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_1_##arity(  \
        struct name##_fnOp : KernelOp<expr_ops::name##_fn, InvalidArgs::invalid> {               \
            template <class B>                                                                   \
            NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {                   \
                return kernels::name##_special(x) | xsimd::isnan(x);                            \
    }                                                                                           \
    }                                                                                           \
    ;)))
NUMFUSE_FUNCTION_ROWS(NUMFUSE_KERNEL_OP, unused)
#undef NUMFUSE_KERNEL_OP

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE
