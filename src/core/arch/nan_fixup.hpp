// The NaN a one-argument function returns where NumPy's differs from the kernels'.
//
// IEEE 754 leaves the sign and payload of a NaN open; NumPy's depends on its loop and
// the CPU (src/python/nan_policy.hpp), so the Python bindings ask NumPy at import and
// set the answer in the core (numfuse_core.hpp: invalid_nan_bits, nan_input_bits). This
// header applies it to a batch of results: the one implementation for the ufunc loops
// (arch/unary_loop.hpp, on their rare path) and the expression VM's kernels of the same
// functions (arch/expr_ops.hpp), so that numfuse.log(x) and evaluate('log(x)') return the
// same NaN, bit for bit, at every level.
//
// Included only by the per-level translation units (see unary_loop.hpp for why the
// level's namespace).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "numfuse_core.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including nan_fixup.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE {

// The policy of one ufunc for lanes of type T (float or double), read once per call.
template <class T>
struct NanPolicy {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    // 0 keeps the kernel's NaN where a non-NaN input gives a NaN (an invalid operation,
    // log(-1)); else the bits of the NaN to return there.
    Bits invalid_nan = 0;
    // 0 keeps the kernel's result for NaN inputs; else nan_input_propagates,
    // nan_input_negated or the bits of the NaN to return (numfuse_core.hpp).
    Bits nan_input = 0;

    static NanPolicy of(UnaryOp op) noexcept {
        const DType dtype = sizeof(T) == 4 ? DType::f32 : DType::f64;
        NanPolicy policy;
        policy.invalid_nan = static_cast<Bits>(invalid_nan_bits(op, dtype));
        policy.nan_input = static_cast<Bits>(nan_input_bits(op, dtype));
        return policy;
    }

    bool active() const noexcept { return invalid_nan != 0 || nan_input != 0; }

    // The policy for float32 values computed in float64 lanes and rounded to float32
    // afterwards (expr_f32.hpp's f32_through_f64): a float32 NaN widened to float64 and
    // rounded back is the same NaN (sign and payload), and so is x + x of a widened NaN.
    template <class U = T, class = std::enable_if_t<std::is_same_v<U, float>>>
    NanPolicy<double> widened() const noexcept {
        const auto widen = [](std::uint32_t bits) -> std::uint64_t {
            if (bits == 0 || bits == nan_input_propagates || bits == nan_input_negated) {
                return bits;
            }
            float f;
            std::memcpy(&f, &bits, sizeof f);
            const double d = static_cast<double>(f);
            std::uint64_t wide;
            std::memcpy(&wide, &d, sizeof wide);
            return wide;
        };
        NanPolicy<double> policy;
        policy.invalid_nan = widen(invalid_nan);
        policy.nan_input = widen(nan_input);
        return policy;
    }

    // The results r of inputs x with the policy's NaNs. The functions that use it return
    // a NaN for every NaN input, so batches without a NaN result pass unchanged (one
    // test and branch per batch).
    template <class B>
    B apply(const B& x, const B& r) const noexcept {
        static_assert(std::is_same_v<typename B::value_type, T>);
        if (!active()) return r;
        // isnan, not r != r: xsimd's AVX != is an ordered compare (false for NaN).
        const auto nan_result = xsimd::isnan(r);
        if (!xsimd::any(nan_result)) return r;
        B fixed = r;
        if (invalid_nan != 0) {
            T nan;
            std::memcpy(&nan, &invalid_nan, sizeof nan);
            fixed = xsimd::select(nan_result & (x == x), B(nan), r);
        }
        if (nan_input == 0) return fixed;
        T input_nan;
        std::memcpy(&input_nan, &nan_input, sizeof input_nan);
        const B for_nan = nan_input == nan_input_propagates ? x + x  // quieted
                          : nan_input == nan_input_negated
                              // (x + x) quiets; the sign is flipped by xor (xsimd 8.1's
                              // AVX-512 negation is 0 - x, which keeps a NaN's sign).
                              ? xsimd::bitwise_xor(x + x, B(T(-0.0)))
                              : B(input_nan);
        return xsimd::select(xsimd::isnan(x), for_nan, fixed);
    }
};

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE
