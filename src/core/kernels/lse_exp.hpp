// exp(d) for the terms of the logsumexp reduction's unchecked blocks: d = x - m with
// d in [-708, 0] (reduce_loops.hpp sends a block here only when its maximum and minimum
// put every x - m there: needs_fold), the result summed, never stored.
//
// Contract
//   lse_term_exp(batch<double>): e^d for d in [-708, 0] with a relative error below
//   1.75 u (u = 2^-53; measured 1.46 u = 1.05 ULP at most over 3e7 points against
//   exp_kernel's 0.60 ULP, tests/cpp/test_reduce.cpp), a normal number; e^0 = 1 exactly;
//   NaN lanes give NaN. Other lanes (d > 0, d < -708, inf) give garbage: no clamp, no test.
//   float32 lanes and AVX-512 take exp_kernel_nofix, which is already lean there (AVX-512:
//   a 16-entry table, degree 7).
//
// Method (SSE2, AVX2, NEON: no table)
//   d = k ln2 + r, |r| <= ln2/2 (1 + 2^-40): z = RN(d/ln2 + 1.5*2^52 + 1023) holds k + 1023
//   in its low bits, so z << 52 is the bit pattern of 2^k (k in [-1021, 0]: normal).
//   r1 = d - k C_hi is exact (C_hi = exp_consts::ln2_hi has 42 bits, so k C_hi is exact with
//   or without FMA, and Sterbenz's lemma covers the subtraction, as in exp_kernel); then
//   r = RN(r1 - k C_lo) is one word where exp_kernel keeps two (r_hi + r_lo). e^r =
//   1 + (r + r^2 Q(r)) with Q of degree 9 (one below exp_kernel's) as E(r^2) + r O(r^2), each
//   half by Horner's rule: 10 multiply-adds, and few enough live values that the loops keep
//   their state in registers (Estrin's form over r^2 and r^4 keeps more values live, and the
//   run loop spilled them), fitted by tools/lse_exp_remez.py (relative fit error 2^-56.42 with the
//   rounded coefficients). The scaling by 2^k is exact (normal results); a product, not an integer
//   add to the exponent field, so that a NaN's payload bits cannot turn it into a number.
//
// Error of one term, relative, in u (p = e^r in [0.70, 1.42]): before the last rounding,
//   r's rounding (ulp(r)/2 <= 2^-55: 0.25 u), the fit (0.09 u), Q's roundings scaled by
//   r^2 <= 0.121 (< 0.15 u) and r + r^2 Q's rounding (ulp/2 of a value below 1/2: 0.25 u),
//   at most 0.74 u of p; then 1 + v rounded once: at most u relative (p just above 1).
//   Total below 1.75 u. exp_kernel carries 1 + r_hi as an exact pair and rounds once at
//   the end (0.51 ULP, 1.02 u): it spends 11 more instructions per batch on that. The sum
//   these terms enter, and the bound of the result, are stated at needs_fold in
//   arch/reduce_loops.hpp.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstdint>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/exp.hpp"
#include "kernels/exp_reduction.hpp"
#include "kernels/generated/explog_coefficients.hpp"

namespace numfuse::kernels {
namespace detail {

// Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (1 + 2^-12), degree 9, relative error of e^r
// 2^-56.42 with the rounded coefficients: NUMFUSE_LSE_EXP64_C<i> (kernels/generated/
// explog_coefficients.hpp, from tools/data/explog_coefficients.json, fitted by
// tools/lse_exp_remez.py).
inline constexpr double lse_exp_q[10] = {NUMFUSE_LSE_EXP64};

// 1.5 * 2^52 + 1023: RN(d/ln2 + this) holds k + 1023 in its low mantissa bits.
inline constexpr double lse_exp_shifter = 0x1.8p52 + 1023.0;

template <class A>
inline xsimd::batch<double, A> lse_term_exp_generic(const xsimd::batch<double, A>& d) noexcept {
    using B = xsimd::batch<double, A>;
    using C = exp_consts<double>;
    const B shifter(lse_exp_shifter);
    const B z = detail::fused_madd(d, B(C::inv_ln2), shifter);
    const B kd = z - shifter;  // k, exactly
    const B r1 = detail::fused_nmadd(kd, B(C::ln2_hi), d);  // exact (see the top)
    const B r = detail::fused_nmadd(kd, B(C::ln2_lo), r1);
    const B r2 = r * r;
    const B even = detail::fused_madd(
        detail::fused_madd(
            detail::fused_madd(detail::fused_madd(B(lse_exp_q[8]), r2, B(lse_exp_q[6])), r2,
                               B(lse_exp_q[4])),
            r2, B(lse_exp_q[2])),
        r2, B(lse_exp_q[0]));
    const B odd = detail::fused_madd(
        detail::fused_madd(
            detail::fused_madd(detail::fused_madd(B(lse_exp_q[9]), r2, B(lse_exp_q[7])), r2,
                               B(lse_exp_q[5])),
            r2, B(lse_exp_q[3])),
        r2, B(lse_exp_q[1]));
    const B q = detail::fused_madd(odd, r, even);
    const B p = B(1.0) + detail::fused_madd(r2, q, r);  // e^r in [0.70, 1.42]
    // 2^k from z's low bits (k + 1023 in [2, 1023]); a NaN lane stays NaN through the product.
    return p * as_float<double, A>(as_int(z) << 52);
}

}  // namespace detail

// e^d for d in [-708, 0], f64 lanes: see the contract at the top.
template <class Arch>
inline xsimd::batch<double, Arch> lse_term_exp(const xsimd::batch<double, Arch>& d) noexcept {
    if constexpr (detail::is_avx512<Arch>) {
        return exp_kernel_nofix(d);
    } else {
        return detail::lse_term_exp_generic(d);
    }
}

// f32 lanes: exp_kernel_nofix (valid for |d| <= 87; the float32 blocks' range).
template <class Arch>
inline xsimd::batch<float, Arch> lse_term_exp(const xsimd::batch<float, Arch>& d) noexcept {
    return exp_kernel_nofix(d);
}

}  // namespace numfuse::kernels
