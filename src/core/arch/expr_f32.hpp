// What the VM's loop knows about a functor: its ufunc (and so its NaN policy), whether
// it has a batch form, an array kernel, a float32 kernel of its own; and the
// float32-via-float64 loop for the functors whose accurate kernel is float64-only
// (float32 lanes widened, computed in float64, rounded once: within 0.5 + 2^-28 ULP).
// Part of arch/expr_ops.hpp: included only by the per-level translation units.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <type_traits>

#include "arch/expr_math.hpp"
#include "arch/nan_fixup.hpp"
#include "functions.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including expr_f32.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops {

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

// ------------------------------------------------------------ kernel traits
template <class F, class = void>
struct has_batch : std::false_type {};
template <class F>
struct has_batch<F, std::void_t<decltype(F::vectorized)>> : std::bool_constant<F::vectorized> {};
// Whether F's VM kernel takes a ufunc's fast path (fast_split_of, expr_math.hpp).
template <class F>
struct has_fast_split : std::bool_constant<!std::is_void_v<typename fast_split_of<F>::type>> {};
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
// F::array_f32_kernel: F::template array_f32<Arch>(out, a, b, n) computes whole float32
// arrays on float32 loads and stores, two arguments.
template <class F, class = void>
struct has_array_f32_kernel : std::false_type {};
template <class F>
struct has_array_f32_kernel<F, std::void_t<decltype(F::array_f32_kernel)>>
    : std::bool_constant<F::array_f32_kernel> {};
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
}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops
