// power(x, y) = x**y for float64 SIMD lanes (xsimd 8.1): the kernels of the SSE2 and NEON
// levels, float32 at AVX2+FMA, and the constant-exponent paths of every level (the general
// float64 kernels of AVX-512 and AVX2+FMA: power_avx512.hpp and power_avx2.hpp; the array
// forms: power_arrays.hpp).
//
// Contract
//   power_kernel(x, y) (batch<double>): x**y per lane. Max error <= 1 ULP against the
//   correctly rounded result at every level (enforced against mpmath by
//   tests/test_power.py, which also prints the measured maxima); float32 values are
//   computed in float64 lanes and rounded once (within 0.5 + 2^-28 ULP).
//   Special values as C99 / glibc pow (NumPy's np.power), bit for bit:
//     x**(+-0) = 1 (x NaN included), 1**y = 1 (y NaN included), (-1)**(+-inf) = 1;
//     otherwise a NaN argument gives glibc's x + y (x's NaN if x is one, else y's, quieted);
//     x < 0 finite, y finite and not an integer: the invalid NaN of the CPU (x86: the
//     negative quiet NaN, as glibc's (x - x) / (x - x));
//     (+-0)**y: y < 0 -> +inf (-inf for -0 and odd y), y > 0 -> +0 (-0 for -0, odd y);
//     (+-inf)**y: the reciprocal rule (y > 0 -> inf, y < 0 -> 0, signed for -inf, odd y);
//     y = +-inf: |x| < 1 -> 0 / inf, |x| > 1 -> inf / 0;
//     overflow -> +-inf, underflow -> subnormals (rounded at most twice: within 1 ULP) / 0.
//   Floating-point status flags raised inside are meaningless (callers that report
//   conditions compute them; evaluate does not report them).
//   power_halves (power_arrays.hpp's power_array runs it): a faster exact path for arrays
//   whose every y is one half-integer m/2, |m| <= 33 (evaluate's
//   constant exponents: x**3, x**-2, x**2.5): the product x^(|m|/2) in pair arithmetic
//   (dd.hpp: binary powering, sqrt as a pair for odd m, a pair reciprocal for m < 0),
//   rounded once (0.5 ULP + 2^-100; subnormal results rounded twice, within 1 ULP). A batch
//   whose lanes all lie where every partial product is a normal number multiplies x
//   itself; any other batch multiplies the significands and adds the exponent afterwards,
//   so that no operation sees a subnormal or underflowing operand (a microcode assist of
//   ~100 cycles per instruction on Intel cores). Zero, infinite or NaN x and negative x
//   with odd m take power_kernel. y == -1 is 1 / x (NumPy's x**-1, np.reciprocal:
//   correctly rounded, the same bits), y == 1 is x, y == 2 is x * x.
//   With Out = float (float32 values in float64 lanes, rounded once by the caller) the
//   products are plain float64 ones (within 0.5 + 2^-20 float32 ULP) and x**y is
//   power_kernel_f32 (below: within 0.5 + 2^-12 float32 ULP on AVX2, 2^-20 elsewhere).
//
// Method (power_kernel)
//   log|x| as a pair hi + lo to about 2^-68 relative: |x| = 2^k m (subnormals scaled by
//   2^54 first), m in [RN(1/sqrt2), 2 RN(1/sqrt2)); the top 7 mantissa bits of
//   bits(x) - bits(RN(1/sqrt2)) pick a table row {invc, -log(invc) as a pair}
//   (generated/pow_log_table.hpp, tools/gen_pow_log_table.py): invc has 8 significant
//   bits, so r = m invc - 1 is exact (|r| < 2^-7.5); log|x| = k ln2 + (-log invc) + r -
//   r^2/2 + r^3 P(r) with k ln2 (42-bit ln2_hi: exact), the table's pair, r and the exact
//   product -r^2/2 summed as exact two-sums, P the Taylor tail (degree 10: truncation
//   below 2^-72 relative to r). y log|x| = t_hi + t_lo (an exact product plus y lo).
//   Then e^(t_hi + t_lo): t_hi = k ln2 + r (Cody-Waite, as hyperbolic.hpp's expm1_core),
//   e^r - 1 = p as a pair (detail::expm1_reduced, relative 2^-60), p + t_lo (1 + p),
//   2^k (1 + p) rounded once (two exact scalings where 2^k is not normal). The error of
//   t reaches the result as a relative error of |t| 2^-68 <= 2^-58.5, so about
//   0.5 + 2^-5 ULP in all. Special lanes are fixed with selects after the general path
//   (negative x: sign and invalid; zeros, infinities and NaNs: one rare branch).
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/generated/explog_coefficients.hpp"
#include "kernels/generated/pow_log_table.hpp"
#include "kernels/exp.hpp"
#include "kernels/hyperbolic.hpp"
#include "kernels/log.hpp"

namespace numfuse::kernels {
namespace detail {

alignas(64) inline constexpr double pow_log_table[] = {NUMFUSE_POW_LOG_TABLE};

template <class A>
struct pow_log_row {
    xsimd::batch<double, A> invc, logc_hi, logc_lo;
};

// The rows of the indices i (in [0, 128)): each lane's index taken out of the register
// (a store and reload of the index vector would make every batch wait for the previous
// one's stores to retire), its three values loaded as scalars and put together in
// registers (a gather is slow on CPUs with the gather-data-sampling fix).
template <class A>
NUMFUSE_ALWAYS_INLINE pow_log_row<A> pow_log_lookup(
    const xsimd::batch<std::int64_t, A>& i) noexcept {
    using B = xsimd::batch<double, A>;
    constexpr std::size_t n = B::size;
    const double* row[n];
#if defined(__AVX512F__)
    if constexpr (n == 8) {
        const __m512i v = i;
        const __m256i lo = _mm512_castsi512_si256(v), hi = _mm512_extracti64x4_epi64(v, 1);
        const __m128i q0 = _mm256_castsi256_si128(lo), q1 = _mm256_extracti128_si256(lo, 1);
        const __m128i q2 = _mm256_castsi256_si128(hi), q3 = _mm256_extracti128_si256(hi, 1);
        const __m128i q[4] = {q0, q1, q2, q3};
        for (std::size_t k = 0; k < 4; ++k) {
            row[2 * k] = pow_log_table + 4 * _mm_cvtsi128_si64(q[k]);
            row[2 * k + 1] = pow_log_table + 4 * _mm_extract_epi64(q[k], 1);
        }
        const auto column = [&](int c) NUMFUSE_ALWAYS_INLINE_LAMBDA {
            return B(_mm512_set_pd(row[7][c], row[6][c], row[5][c], row[4][c], row[3][c], row[2][c],
                                   row[1][c], row[0][c]));
        };
        return {column(0), column(1), column(2)};
    } else
#endif
#if defined(__AVX2__)
        if constexpr (n == 4) {
        const __m256i v = i;
        const __m128i q0 = _mm256_castsi256_si128(v), q1 = _mm256_extracti128_si256(v, 1);
        row[0] = pow_log_table + 4 * _mm_cvtsi128_si64(q0);
        row[1] = pow_log_table + 4 * _mm_extract_epi64(q0, 1);
        row[2] = pow_log_table + 4 * _mm_cvtsi128_si64(q1);
        row[3] = pow_log_table + 4 * _mm_extract_epi64(q1, 1);
        const auto column = [&](int c) NUMFUSE_ALWAYS_INLINE_LAMBDA {
            return B(_mm256_set_pd(row[3][c], row[2][c], row[1][c], row[0][c]));
        };
        return {column(0), column(1), column(2)};
    } else
#endif
#if defined(__SSE2__)
        if constexpr (n == 2) {
        const __m128i v = i;
        row[0] = pow_log_table + 4 * _mm_cvtsi128_si64(v);
        row[1] = pow_log_table + 4 * _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
        const auto column = [&](int c) NUMFUSE_ALWAYS_INLINE_LAMBDA {
            return B(_mm_set_pd(row[1][c], row[0][c]));
        };
        return {column(0), column(1), column(2)};
    } else
#endif
    {
        alignas(64) std::int64_t is[n];
        i.store_aligned(is);
        alignas(64) double c0[n], c1[n], c2[n];
        for (std::size_t k = 0; k < n; ++k) {
            row[k] = pow_log_table + 4 * is[k];
            c0[k] = row[k][0], c1[k] = row[k][1], c2[k] = row[k][2];
        }
        return {B::load_aligned(c0), B::load_aligned(c1), B::load_aligned(c2)};
    }
}

// log(x) as a pair for x positive, normal and finite, minus `scaled` ln2 (the caller's
// 2^54 scaling of subnormals): see the method above.
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> pow_log(const xsimd::batch<double, A>& x,
                                          const xsimd::batch<double, A>& scaled) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    using U = xsimd::batch<std::uint64_t, A>;
    constexpr std::int64_t off = static_cast<std::int64_t>(NUMFUSE_POW_LOG_OFF);
    // u's exponent field is k + 1023 and its mantissa bits those of bits(x) - off.
    const I u = as_int(x) + I(0x3ff0000000000000 - off);
    const I eb = bit_cast<I>(bit_cast<U>(u) >> 52);
    const B kd = (as_float<double, A>(eb | I(0x4330000000000000)) - B(0x1.0p52 + 1023.0)) - scaled;
    const I mant = u & I(0x000fffffffffffff);
    const B m = as_float<double, A>(mant + I(off));
    const pow_log_row<A> t =
        pow_log_lookup<A>(bit_cast<I>(bit_cast<U>(mant) >> (52 - NUMFUSE_POW_LOG_BITS)));
    B r;
    if constexpr (has_fma<A>) {
        r = dd::fmadd(m, t.invc, B(-1.0));  // exact: see the table's contract
    } else {
        // Without FMA: m = mh + ml, mh the top 21 bits; mh invc (29 bits) and ml invc
        // (40 bits) are exact, mh invc - 1 is exact (Sterbenz), and so is their sum (r).
        const B mh =
            as_float<double, A>(as_int(m) & I(static_cast<std::int64_t>(0xffffffff00000000)));
        r = (mh * t.invc - B(1.0)) + (m - mh) * t.invc;
    }
    const dd::pair<A> s1 =
        dd::fast_two_sum(kd * B(0x1.62e42fefa38p-1), t.logc_hi);  // k ln2 >= ln2 or 0
    const dd::pair<A> s2 = dd::two_sum(s1.hi, r);
    const dd::pair<A> q = dd::two_prod(B(-0.5) * r, r);  // -r^2/2 exactly
    // |s2.hi| >= |log m| - r^2/2 > r^2/2 (|log m| >= 2^-12.7 outside the row of 1, and
    // s2.hi = r there): a fast two-sum.
    const dd::pair<A> s3 = dd::fast_two_sum(s2.hi, q.hi);
    const B p = (r * r) * (r * dd::horner(r, NUMFUSE_POW_LOG1P_TAIL));
    const B lo = ((s1.lo + s2.lo) + (s3.lo + q.lo)) +
                 (dd::fmadd(kd, B(0x1.ef35793c7673p-45), t.logc_lo) + p);
    return dd::fast_two_sum(s3.hi, lo);
}

// e^(th + tl) for |th| <= 746 and |tl| <= ulp(th).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> pow_exp(const xsimd::batch<double, A>& th,
                                                      const xsimd::batch<double, A>& tl) noexcept {
    using B = xsimd::batch<double, A>;
    const B shifter(0x1.8p52);
    const B kd = dd::fmadd(th, B(0x1.71547652b82fep+0), shifter) - shifter;  // round(th / ln2)
    const B r1 = detail::fused_nmadd(kd, B(0x1.62e42fefa38p-1), th);  // exact (ln2_hi: 42 bits)
    const dd::pair<A> r = dd::two_sum(r1, -(kd * B(0x1.ef35793c7673p-45)));
    // e^(r + tl) - 1 = p + tl (1 + p) + O(tl^2): tl (up to 2^-44) is too large for
    // expm1_reduced's first-order tail.
    dd::pair<A> p = expm1_reduced(r);
    p.lo = p.lo + dd::fmadd(tl, p.hi, tl);
    return scaled_one_plus(expm1_parts<A>{p, kd}, 0.0);
}

// The NaN of an invalid operation on this CPU (glibc's pow returns (x - x) / (x - x)).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> pow_invalid_nan() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return as_float<double, A>(
        xsimd::batch<std::int64_t, A>(static_cast<std::int64_t>(0xfff8000000000000)));
#else
    return xsimd::batch<double, A>(std::numeric_limits<double>::quiet_NaN());
#endif
}

}  // namespace detail

namespace detail {

// A subnormal |x| as the double of its integer mantissa, exactly: |x| = mant 2^-1074, and
// bits(2^52 + mant) = bits(2^52) | mant. Integer operations and one subtraction of normal
// numbers: arithmetic on a subnormal operand (|x| * 2^54) costs a microcode assist of
// about a hundred cycles per instruction on Intel cores, which made inputs that span all
// magnitudes 3-50x slower (issue 29). Lanes that are not subnormal give garbage.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> subnormal_mantissa(
    const xsimd::batch<double, A>& ax) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    return as_float<double, A>(as_int(ax) | I(0x4330000000000000)) - B(0x1p52);
}

// The sign rules of x**y for negative x applied to res, the value of |x|**y: res's sign
// flipped where y is an odd integer, the invalid NaN where x is finite and y is not an
// integer (odd and invalid returned for pow_fixup's special lanes). Where every |x| is
// finite and nonzero, every y finite and |x| = 1 gives res = 1, these are all of pow_fixup's
// rules (power_avx2.hpp's and power_kernel_f32's common batches).
template <class A>
struct pow_signed {
    xsimd::batch<double, A> res;
    xsimd::batch_bool<double, A> odd, invalid;
};
template <class A>
NUMFUSE_ALWAYS_INLINE pow_signed<A> pow_sign_rules(const xsimd::batch<double, A>& x,
                                                   const xsimd::batch<double, A>& y,
                                                   const xsimd::batch<double, A>& res) noexcept {
    using B = xsimd::batch<double, A>;
    const auto negative = x < B(0.0);
    const auto integral = xsimd::trunc(y) == y;  // +-inf included
    const B half = y * B(0.5);
    const auto odd = integral & (xsimd::trunc(half) != half);
    // (-inf)**0.5 is inf
    const auto invalid = negative & (x > B(-std::numeric_limits<double>::infinity())) & ~integral;
    // The sign flipped with a xor: xsimd's negation is 0 - x on some levels (+0 for 0).
    const B r = xsimd::select(negative & odd, res ^ B(-0.0), res);
    return {xsimd::select(invalid, pow_invalid_nan<A>(), r), odd, invalid};
}

// The sign and special-value rules of x**y (contract above) applied to res, the value of
// |x|**|y|-ish computed for the regular lanes: negative x (sign, invalid), zeros,
// infinities, NaNs, |x| == 1.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> pow_fixup(const xsimd::batch<double, A>& x,
                                                        const xsimd::batch<double, A>& y,
                                                        xsimd::batch<double, A> res) noexcept {
    using B = xsimd::batch<double, A>;
    const B inf(std::numeric_limits<double>::infinity());
    const B ax = xsimd::abs(x);
    const auto negative = x < B(0.0);
    // |x| == 1 is a special lane too: 1**y is 1 and (-1)**y is +-1 for every finite y, where
    // SSE2's split product of a huge y and log(1) = 0 would give a NaN tail.
    const auto regular = (ax >= B(0x1p-1074)) & (ax < inf) & (xsimd::abs(y) < inf) & (ax != B(1.0));
    if (xsimd::any(negative) || !xsimd::all(regular)) {
        const pow_signed<A> signed_res = pow_sign_rules(x, y, res);
        const auto odd = signed_res.odd, invalid = signed_res.invalid;
        res = signed_res.res;
        if (!xsimd::all(regular)) {
            // Zeros, infinities, NaNs: the magnitude is inf where log|x| and y have the
            // same sign, 0 where they differ; signed by -0 or -inf with an odd y.
            const auto grows = ((ax > B(1.0)) & (y > B(0.0))) | ((ax < B(1.0)) & (y < B(0.0)));
            B special = xsimd::select(grows, inf, B(0.0));
            special = xsimd::select(ax == B(1.0), B(1.0), special);
            special = xsimd::select(odd, xsimd::copysign(special, x), special);
            special = xsimd::select(invalid, pow_invalid_nan<A>(), special);
            // glibc's x + y: x's NaN (quieted) where x is one, else y's. Spelled per operand:
            // the compiler may swap the operands of an addition, and x86 keeps the first NaN.
            const B nan = xsimd::select(xsimd::isnan(x), x + x, y + y);
            special = xsimd::select(xsimd::isnan(x) | xsimd::isnan(y), nan, special);
            const auto one =
                (y == B(0.0)) | (x == B(1.0)) | ((ax == B(1.0)) & (xsimd::abs(y) == inf));
            special = xsimd::select(one, B(1.0), special);
            res = xsimd::select(regular, res, special);
        }
    }
    return res;
}

}  // namespace detail

// x**y, f64 lanes (contract above).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> power_kernel(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
    const B inf(std::numeric_limits<double>::infinity());
    const B ax = xsimd::abs(x);
    const auto sub = ax < B(0x1p-1022);
    const dd::pair<A> lx = detail::pow_log(xsimd::select(sub, detail::subnormal_mantissa(ax), ax),
                                           xsimd::select(sub, B(1074.0), B(0.0)));
    const dd::pair<A> t = dd::two_prod(y, lx.hi);
    const B tl = dd::fmadd(y, lx.lo, t.lo);
    const auto in_range = xsimd::abs(t.hi) <= B(746.0);
    B res =
        detail::pow_exp(xsimd::select(in_range, t.hi, B(0.0)), xsimd::select(in_range, tl, B(0.0)));
    res = xsimd::select(in_range, res, xsimd::select(t.hi > B(0.0), inf, B(0.0)));
    return detail::pow_fixup(x, y, res);
}

namespace detail {

// The lean float32 kernel of power_kernel_f32 below: on x86 levels with FMA below AVX-512
// (AVX-512 keeps its own float32-lane kernel, power_avx512.hpp).
template <class A>
inline constexpr bool pow_f32_lean =
    std::is_base_of<xsimd::fma3<xsimd::avx2>, A>::value && !is_avx512<A>;

// pow_f32_lean_kernel's polynomial coefficients as whole AVX2 vectors, from the highest
// degree down: log2's P, then 2^f's (kernels/generated/explog_coefficients.hpp, fitted by
// tools/pow_remez.py), so that each FMA takes its coefficient as a memory operand: GCC
// broadcasts constants on every batch instead (17 do not fit in 16 registers), also those
// of a const table, whose values it sees; this one is not const (nothing writes it).
#define NUMFUSE_POW_LEAN_ROW(c) {c, c, c, c}
alignas(64) inline double pow_f32_lean_coefficients[17][4] = {
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C7),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C6),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C5),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C4),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C3),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C2),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C1),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_LOG2_C0),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C8),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C7),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C6),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C5),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C4),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C3),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C2),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C1),
    NUMFUSE_POW_LEAN_ROW(NUMFUSE_POW32_LEAN_EXP2_C0),
};
#undef NUMFUSE_POW_LEAN_ROW

// x**y = 2^(y log2 x) for lanes of x in [2^-149, FLT_MAX] and finite |y| <= FLT_MAX (other
// lanes: garbage), to be rounded once to float32 by the caller; no table, no special lane.
// log2 x = k + log2 z, x = 2^k z with z in [RN(1/sqrt2), 2 RN(1/sqrt2)) by integer
// operations on the bits; log2 z = (2/ln2) atanh(s), s = (z - 1)/(z + 1) (|s| <= 0.1716;
// z - 1 exact, z + 1 exact for a float32 z, the quotient rounded once), the odd Taylor
// series through s^15 (truncation 2^-44.8 relative). t = y log2 x clamped to [-160, 160]
// (2^+-160 round to float32 inf / 0); 2^t = 2^n 2^f, n = RN(t), |f| <= 1/2, 2^f by a
// degree-8 polynomial (Chebyshev fit, tools/pow_remez.py pow32_lean_exp2: 2^-39.77
// relative), 2^n added to the exponent field (exact: 2^f 2^n is a normal double). t's
// error is below |t| 2^-44 <= 2^-36.7 absolute, so the float64 value is within 2^-36
// relative of x**y and the float32 result within 0.5 + 2^-12 ULP (subnormal float32
// results: rounded once from the double, the same bound in their ULP). Exact cases stay
// exact: x = 2^k gives s = 0, t = y k, f = 0 and p(0) = 1.
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> pow_f32_lean_kernel(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    using U = xsimd::batch<std::uint64_t, A>;
    static_assert(B::size == 4, "pow_f32_lean_coefficients holds AVX2 vectors");
    constexpr std::int64_t off = 0x3fe6a09e667f3bcd;  // RN(1/sqrt2)
    // u's exponent field is k + 1023, its mantissa bits those of bits(x) - off
    const I u = as_int(x) + I(0x3ff0000000000000 - off);
    const B k = as_float<double, A>(bit_cast<I>(bit_cast<U>(u) >> 52) | I(0x4330000000000000)) -
                B(0x1p52 + 1023.0);
    const B z = as_float<double, A>((u & I(0x000fffffffffffff)) + I(off));
    const B s = (z - B(1.0)) / (z + B(1.0));
    const B w = s * s;
    // log2 z = s P(w), P's coefficients (2/ln2) / (2j + 1) from j = 7 down to 0
    const auto c = [](int i) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        return B::load_aligned(pow_f32_lean_coefficients[i]);
    };
    B p = dd::fmadd(w, c(0), c(1));
    for (int i = 2; i < 8; ++i) p = dd::fmadd(p, w, c(i));
    const B l = dd::fmadd(s, p, k);
    const B t = xsimd::max(xsimd::min(y * l, B(160.0)), B(-160.0));
    const B shifter(0x1.8p52);
    const B ts = t + shifter;
    const B f = t - (ts - shifter);  // exact
    // 2^f on [-1/2, 1/2], degree 8 down to 0
    B e = dd::fmadd(f, c(8), c(9));
    for (int i = 10; i < 17; ++i) e = dd::fmadd(e, f, c(i));
    return as_float<double, A>(as_int(e) + (as_int(ts) << 52));
}

// power_kernel_f32's lanes outside the lean kernel's domain (all lanes without it).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> pow_f32_general(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
    const B ax = xsimd::abs(x);
    const auto usable = (ax >= B(0x1p-1022)) & (ax <= B(std::numeric_limits<double>::max()));
    const B l = log_kernel_nofix(xsimd::select(usable, ax, B(1.0)));
    // NaN and infinite y (and x) are special lanes: whatever t is there, pow_fixup decides.
    const B t = xsimd::max(xsimd::min(y * l, B(120.0)), B(-120.0));
    const B res = exp_kernel_nofix(xsimd::select(t == t, t, B(0.0)));
    return pow_fixup(x, y, res);
}

// A batch with lanes on both sides of the lean kernel's domain (`lean`): each lane as in a
// batch of its own. Out of line: the common path keeps its registers (the arguments by
// value: in registers, where references made the loop store them on every batch).
template <class A>
[[gnu::noinline]] xsimd::batch<double, A> pow_f32_mixed(
    xsimd::batch<double, A> x, xsimd::batch<double, A> y,
    xsimd::batch_bool<double, A> lean) noexcept {
    using B = xsimd::batch<double, A>;
    const B r = pow_f32_lean_kernel(xsimd::select(lean, xsimd::abs(x), B(1.0)),
                                    xsimd::select(lean, y, B(0.0)));
    return xsimd::select(lean, pow_fixup(x, y, r), pow_f32_general(x, y));
}

}  // namespace detail

// x**y for float32 values held in f64 lanes, to be rounded once to float32 by the caller.
// Lanes whose |x| is a nonzero finite float32 (a normal double) and y finite take the lean kernel
// above on |x| where it exists (x86 FMA levels below AVX-512): within 0.5 + 2^-12 ULP; a batch of
// such lanes only, nothing else but pow_fixup's sign and invalid rules where one x is negative (a
// negative base is as common as a positive one in real data). The other lanes (all lanes
// elsewhere): e^(y log|x|) from the float64 log and exp kernels. The error of t = y log|x| is below
// |t| 2^-51, and |t| <= 120 wherever the float32 result is neither 0 nor inf (beyond, t is clamped:
// e^-120 rounds to float32 0 and e^120 to inf), so the float64 value is within 2^-44 relative and
// the float32 result within 0.5 + 2^-20 ULP. float32 inputs are normal float64 numbers: no
// subnormal arithmetic. Special values as power_kernel. A lane's bits depend on its own x and y
// only (the folds compute one pair at a time).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> power_kernel_f32(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& y) noexcept {
    using B = xsimd::batch<double, A>;
    if constexpr (detail::pow_f32_lean<A>) {
        const B big(static_cast<double>(std::numeric_limits<float>::max()));
        const B ax = xsimd::abs(x);
        const auto lean = (ax >= B(0x1p-149)) & (ax <= big) & (xsimd::abs(y) <= big);
        if (xsimd::all(lean)) {
            const B r = detail::pow_f32_lean_kernel(ax, y);
            return xsimd::any(x < B(0.0)) ? detail::pow_sign_rules(x, y, r).res : r;
        }
        return detail::pow_f32_mixed(x, y, lean);
    } else {
        return detail::pow_f32_general(x, y);
    }
}

namespace detail {

// power_kernel out of line, for the rare lanes of the product path: inlined there, its
// constants would crowd the loop's registers (spills on every batch of the common path).
template <class A>
[[gnu::noinline]] xsimd::batch<double, A> power_kernel_rare(
    const xsimd::batch<double, A>& x, const xsimd::batch<double, A>& y) noexcept {
    return power_kernel(x, y);
}

// x^n as a pair for an integer n >= 1 (binary powering; each pair product is within
// 2^-104 relative while no product underflows: callers check the result's range).
template <class A>
NUMFUSE_ALWAYS_INLINE dd::pair<A> pow_int_pair(const xsimd::batch<double, A>& x, int n) noexcept {
    using B = xsimd::batch<double, A>;
    dd::pair<A> base{x, B(0.0)};
    dd::pair<A> result = base;
    bool started = false;
    while (true) {
        if (n & 1) {
            result = started ? dd::mul(result, base) : base;
            started = true;
        }
        n >>= 1;
        if (n == 0) break;
        base = dd::mul(base, base);
    }
    return result;
}

// x^n for an integer n >= 1 in plain float64 products (Out = float: each product's
// rounding is 2^-53 relative, far inside float32's half ULP).
template <class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> pow_int_plain(const xsimd::batch<double, A>& x,
                                                            int n) noexcept {
    xsimd::batch<double, A> base = x, result = x;
    bool started = false;
    while (true) {
        if (n & 1) {
            result = started ? result * base : base;
            started = true;
        }
        n >>= 1;
        if (n == 0) break;
        base = base * base;
    }
    return result;
}

// x^(m/2) straight from the products of x, for batches whose every lane lies in the range
// [lo, hi] of power_halves (m odd: x itself; else |x|), and for power_halves_scaled's f: there
// every partial product, its rounding error and the square root's residual are normal numbers and
// the result's exponent is within +-950. Pairs (plain float64 for Out = float), rounded once.
template <class Out, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> power_halves_direct(const xsimd::batch<double, A>& x,
                                                                  int m) noexcept {
    using B = xsimd::batch<double, A>;
    const int a = m < 0 ? -m : m;
    const int n = a / 2;
    const bool odd = (a & 1) != 0;
    if constexpr (std::is_same<Out, float>::value) {
        B p = n > 0 ? pow_int_plain(x, n) : B(1.0);
        if (odd) p = n > 0 ? p * xsimd::sqrt(x) : xsimd::sqrt(x);
        return m < 0 ? B(1.0) / p : p;
    } else {
        dd::pair<A> p{B(1.0), B(0.0)};
        if (n > 0) p = pow_int_pair(x, n);
        if (odd) {
            const dd::pair<A> sq = dd::sqrt(dd::pair<A>{x, B(0.0)});
            p = n > 0 ? dd::mul(p, sq) : sq;
        }
        if (m < 0) p = dd::div(dd::pair<A>{B(1.0), B(0.0)}, p);
        return p.hi + p.lo;
    }
}

// x^(m/2) for an integer m in [-33, 33], |m| > 2 (power_array's product path, contract
// above), for results rounded to Out, any x: the path of batches with a lane outside
// power_halves' direct range. |x| = 2^k f with f in [1, 2) (k even and f in [1, 4) for odd m)
// by integer operations (subnormal_mantissa), so that no operation of the product ever
// sees a subnormal or underflowing operand (microcode assists on Intel, issue 29):
// f^(|m|/2) in pairs (plain float64 for Out = float) lies in [1, 2^33], its reciprocal in
// [2^-33, 1]; then the scaling by 2^E, E = k m / 2, in two exact steps. Lanes whose result
// is a subnormal take the rounding step in a rare branch; results below 2^-1075 are 0
// without arithmetic. Zeros, infinities, NaNs and negative x with odd m take power_kernel.
template <class Out, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> power_halves_scaled(const xsimd::batch<double, A>& x,
                                                                  int m) noexcept {
    using B = xsimd::batch<double, A>;
    using I = xsimd::batch<std::int64_t, A>;
    using U = xsimd::batch<std::uint64_t, A>;
    const int a = m < 0 ? -m : m;
    const int n = a / 2;
    const bool odd = (a & 1) != 0;
    const B inf(std::numeric_limits<double>::infinity());
    const B ax = xsimd::abs(x);
    auto fast = (ax > B(0.0)) & (ax < inf);  // NaN: false
    if (odd) fast = fast & (x > B(0.0));
    // |x| = 2^k f: f's bits are |x|'s mantissa under the exponent of 1; k from the
    // exponent field (that of the mantissa's double, less 1074, for subnormals).
    B xs = xsimd::select(fast, ax, B(1.0));
    B bias(1023.0);
    const auto sub = fast & (ax < B(0x1p-1022));
    if (xsimd::any(sub)) {
        xs = xsimd::select(sub, detail::subnormal_mantissa(ax), xs);
        bias = xsimd::select(sub, B(1023.0 + 1074.0), bias);
    }
    const I bits = as_int(xs);
    const I field = bit_cast<I>(bit_cast<U>(bits) >> 52);
    B k = (as_float<double, A>(field | I(0x4330000000000000)) - B(0x1p52)) - bias;  // exact
    B f = as_float<double, A>((bits & I(0x000fffffffffffff)) | I(0x3ff0000000000000));
    if (odd) {
        // k even: f^(1/2) 2^(k/2) needs no square root of 2
        const B kh = k * B(0.5);
        const auto k_odd = xsimd::floor(kh) != kh;
        f = xsimd::select(k_odd, f + f, f);
        k = xsimd::select(k_odd, k - B(1.0), k);
    }
    // f^(m/2): f in [1, 4) is within power_halves_direct's range for every m
    const B r = power_halves_direct<Out, A>(f, m);
    // r 2^E: r's exponent plus E decides normal, subnormal, zero (or overflow: inf, from
    // the product itself). E is an exact integer, |E| <= 1075 * 16.5.
    const B e = k * B(0.5 * m);
    const I rfield = bit_cast<I>(bit_cast<U>(as_int(r)) >> 52);
    const B re = (as_float<double, A>(rfield | I(0x4330000000000000)) - B(0x1p52 + 1023.0)) + e;
    const auto tiny = re < B(-1022.0);  // a subnormal result, or 0
    // below 2^-1075 the result rounds to 0; below 2^-1022 it rounds to float32's 0
    const auto zero = re < B(std::is_same<Out, float>::value ? -1022.0 : -1075.0);
    // A normal result: e added to r's exponent field (e's two's complement sits in the low
    // bits of e + 1.5 2^52), exact; past the top: inf.
    const I eb = as_int(e + B(0x1.8p52)) << 52;
    B res = xsimd::select(re > B(1023.0), B(std::numeric_limits<double>::infinity()),
                          as_float<double, A>(as_int(r) + eb));
    if (xsimd::any(tiny & ~zero & fast)) {
        // Rare: a subnormal result, S 2^-1074 with S = M 2^(re + 1022) rounded to nearest
        // even (M: r's 53-bit integer significand; shift s = -1022 - re in [1, 53]), by
        // integer operations: the floating-point scaling would take a microcode assist per
        // instruction. r is rounded already: two roundings, within 1 ULP. S = 2^52 (rounded
        // up to the smallest normal) is that number's bits too.
        const auto rare = tiny & ~zero & fast;
        const U mag = bit_cast<U>((as_int(r) & I(0x000fffffffffffff)) | I(0x0010000000000000));
        const U sh =
            bit_cast<U>(as_int(xsimd::select(rare, B(-1022.0) - re, B(1.0)) + B(0x1p52)) & I(0x3f));
        const U q = mag >> sh;
        const I rem = bit_cast<I>(mag - (q << sh));
        const I half = bit_cast<I>(U(1) << (sh - U(1)));
        const auto up = (rem > half) | ((rem == half) & ((bit_cast<I>(q) & I(1)) == I(1)));
        const I rounded = bit_cast<I>(q) + xsimd::select(up, I(1), I(0));
        res = xsimd::select(rare, as_float<double, A>(rounded), res);
    }
    res = xsimd::select(zero, B(0.0), res);
    if (!odd && (n & 1)) res = res ^ (x & B(-0.0));  // x^n for odd n keeps x's sign
    if (!xsimd::all(fast)) res = xsimd::select(fast, res, power_kernel_rare(x, B(0.5 * m)));
    return res;
}

// The range of power_halves_direct for m: |x| (x for odd m) in [lo, hi].
struct halves_range {
    double lo, hi;
};
inline halves_range direct_range(int m) noexcept {
    const double h = (m < 0 ? -m : m) * 0.5;
    const double lo = std::exp2(-950.0 / h), hi = std::exp2(950.0 / h);
    return {lo < 0x1p-960 ? 0x1p-960 : lo, hi > 0x1p960 ? 0x1p960 : hi};
}

// x^(m/2), power_array's product path (contract above).
template <class Out, class A>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, A> power_halves(const xsimd::batch<double, A>& x, int m,
                                                           const halves_range& range) noexcept {
    using B = xsimd::batch<double, A>;
    switch (m) {
        case 0: return B(1.0);
        case 2: return x;
        case 4: return x * x;
        case -2: return B(1.0) / x;
        default: break;
    }
    const B v = (m & 1) ? x : xsimd::abs(x);  // NaN: outside
    if (xsimd::all((v >= B(range.lo)) & (v <= B(range.hi)))) return power_halves_direct<Out>(x, m);
    return power_halves_scaled<Out>(x, m);
}

// m when y is m/2 for an integer |m| <= 33, else 0 with *found false.
inline int half_integer(double y, bool* found) noexcept {
    const double twice = 2.0 * y;
    *found =
        twice >= -33.0 && twice <= 33.0 && twice == static_cast<double>(static_cast<int>(twice));
    return *found ? static_cast<int>(twice) : 0;
}

// Whether y[0..n) all equal y[0] (n >= 1; T float or double).
template <class A, class T>
inline bool all_equal(const T* y, std::size_t n) noexcept {
    using B = xsimd::batch<T, A>;
    constexpr std::size_t width = B::size;
    const B first(y[0]);
    auto same = first == first;
    std::size_t k = 0;
    for (; k + width <= n; k += width) same = same & (B::load_unaligned(y + k) == first);
    bool equal = xsimd::all(same);
    for (; k < n; ++k) equal = equal && y[k] == y[0];
    return equal;
}

}  // namespace detail

}  // namespace numfuse::kernels
