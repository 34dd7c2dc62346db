// The expression VM's kernels, instantiated once per instruction-set level: the loop of
// one opcode row (numeric_kernel, expr_kernel) and the level's table (fill_expr_table).
//
// Included only by the per-level translation units (sse2.cpp, avx2_fma.cpp,
// avx512.cpp; neon64.cpp on aarch64) after NUMFUSE_LEVEL_NAMESPACE / NUMFUSE_LEVEL_ARCH are set.
// Every opcode row of expr/opcodes.hpp becomes one expr_kernel<...>
// instantiation here; fill_expr_table() is generated from the same rows.
//
// The operations, one header per family: expr_arith.hpp (operators), expr_math.hpp
// (the function table's kernels), expr_compare.hpp (comparisons, tests, casts),
// expr_bytes.hpp (byte strings); expr_f32.hpp holds the traits the loop reads and the
// float32-via-float64 loop. Results equal NumPy evaluating the same expression.
#pragma once

#include <xsimd/xsimd.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "arch/expr_arith.hpp"
#include "arch/expr_bytes.hpp"
#include "arch/expr_compare.hpp"
#include "arch/expr_f32.hpp"
#include "arch/expr_math.hpp"
#include "expr/kernel_table.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including expr_ops.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops {

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
    } else if constexpr (has_array_f32_kernel<F>::value && std::is_same_v<R, float> && same_types &&
                         arity == 2) {
        F::template array_f32<Arch>(out, a, b, n);  // float32 array kernels: their own lanes
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
                (void)z, (void)nan_policy;  // the policy applies to unary functions only
                return F::batch(V::load_unaligned(x), V::load_unaligned(y));
            } else {
                (void)nan_policy;
                return F::batch(V::load_unaligned(x), V::load_unaligned(y), V::load_unaligned(z));
            }
        };
        std::size_t k = 0;
        if constexpr (has_fast_split<F>::value && arity == 1) {
            // exp, log, erf: the ufunc loop's fast path. compute_fast equals F::batch on
            // every lane of a batch may_raise does not flag (and such a batch holds no NaN,
            // so the NaN policy leaves it as is); flagged batches take the full kernel.
            // x is loaded before the store, so out may be a.
            using Split = typename fast_split_of<F>::type;
            for (; k + width <= n; k += width) {
                const V x = V::load_unaligned(a + k);
                V y = compute_fast_at<Split>(x, a + k);
                if (xsimd::any(Split::may_raise(x))) y = nan_policy.apply(x, F::batch(x));
                y.store_unaligned(out + k);
            }
        }
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
