// erf(x) kernels for float32 and float64 SIMD lanes (xsimd 8.1); erfc is kernels/erfc.hpp.
//
// Contract
//   template <class Arch> batch<double, Arch> erf_kernel(batch<double, Arch> x) noexcept;
//   template <class Arch> batch<float, Arch>  erf_kernel(batch<float, Arch> x) noexcept;
//   * Max error <= 1 ULP against the correctly rounded erf, at every level. The measured
//     maxima per dtype and level are the bounds kMaxUlpF64Sse2, kMaxUlpF64Fma (avx512),
//     kMaxUlpF64Avx2 (avx2_fma), kMaxUlpF32 (float32 through double) and kMaxUlpF32Lanes (float32
//     lanes, avx2_fma; measured on every float32) enforced in tests/cpp/test_erf.cpp
//     (benchmarks/cpp/accuracy_harness.cpp sweeps more inputs).
//   * Valid for all inputs. erf(+-0) = +-0, erf(+-inf) = +-1, erf(NaN) = +qNaN
//     (0x7ff8000000000000 / 0x7fc00000, also for negative NaN inputs); subnormal inputs
//     give x * 2/sqrt(pi) correctly rounded; erf(-x) == -erf(x) bitwise. These are the
//     special values of scipy.special.erf.
//   * Hardware floating-point flags are don't-care (the caller masks them).
//   * Correct with and without hardware FMA (on sse2 detail::fused_madd is a mul then an add).
//   * The same bits from GCC and clang: every multiply-add is detail::fused_madd (one
//     rounding on every FMA level), never xsimd::fma. xsimd 8.1's AVX-512 fma is the generic
//     unfused a * b + c; on x86-64 GCC contracts it into vfmadd after inlining (its default
//     -ffp-contract=fast), clang 14 does not (-ffp-contract=on fuses only within one source
//     expression), which made clang's avx512 erf differ from avx2_fma and exceed the bound.
//   * float64: avx2_fma and neon64 (the same operations and bits) run their own table
//     (erf_abs_avx2, below), avx512 the 16-interval
//     one (erf_abs_fma), sse2 the same with c1 split (erf_abs): the levels' float64 results
//     differ in the last bit at some inputs (each within its bound). float32: avx2_fma and
//     neon64 run float32 lanes (the same bits), sse2 and avx512 go through double (again
//     within the bounds).
//
// Method (sse2, avx512; float64 on avx2_fma: erf_abs_avx2, its own comment).
// ax = min(|x|, xmax) picks one of 16 intervals, k = round(qb*ax + qc*ax^2 - n)
// clamped at 0, computed as the low bits of max(fma(fma(qc, ax, qb), ax, 2^52 - n), 2^52)
// (narrow intervals near x ~ 1, wide ones where erf ~ 1). Per-interval coefficients come
// from one vpermt2pd per coefficient on AVX-512 (16-entry tables in two registers), from
// row loads + 4x4 transposes on AVX2 and from pairs of scalar loads on SSE2.
//   k = 0  ([0, 0.33] in f64): y = x + x*(c1 + u*(c2 + ...)), u = x^2 (odd polynomial,
//          relative accuracy down to the subnormals);
//   k >= 1: y = c0 + t*(c1 + u*(c2 + ...)), u = t = ax - m (exact by Sterbenz), c0 = erf(m)
//          rounded, m chosen so that erf(m) is within 2^-62 of c0.
// float64 (degree 11; 0.047 ulp approximation error) on sse2 forms s = RN(base + t*c1hi)
// together with its rounding error, so the only rounding that reaches ~0.5 ulp is the
// last addition. c1 = c1hi + c1lo exactly; the centers m of intervals k >= 1 are chosen
// (tools/erf_coeffs.py) so that c1 is a double to ~2^-62 (c1lo = 0 there), and interval
// 0's c1lo is a constant applied under the k = 0 mask: one table lookup less.
// With hardware FMA the plain fma(t, fma(q, u, c1hi), base) stays within the bound and
// is shorter, so only sse2 keeps the split (split_c1; without FMA the plain form exceeds
// 0.8 ulp). The FMA levels evaluate q = c2 + u*(c3 + ...) as E(u^2) + u*O(u^2)
// (erf_abs_fma, a shorter dependency chain), and on AVX-512 c3..c11 carry their interval
// number in their 4 lowest mantissa bits, so that each serves as the permute index of
// the next one (no index copies).
// float32 through double (sse2, avx512): converts to double, evaluates a degree-5
// set of the same form, rounds once.
// 0 < |x| < 2^-1000 (rare) takes an exact scalar path for RN(x * 2/sqrt(pi)).
//
// float32 lanes (avx2_fma: erf_f32_lanes, 8 lanes per register; neon64: erf_f32_lanes_neon,
// the same operations on 4 lanes, each table read by TBL): a = min(|x|, xmax)
// (erf(xmax) and above round to 1), k = floor(2a) from vcvttps2dq of the exact 2a picks one
// of 8 intervals [k/2, (k+1)/2], and every coefficient is one vpermps from an 8-entry table
// (src/core/kernels/generated/erf_f32_coefficients.hpp, tools/erf_f32_coeffs.py):
//   k = 0:  y = a + a*(c1 + u*(c2 + ... c7)), u = a^2 (odd; the rounding of the
//           polynomial reaches y scaled by <= 0.12);
//   k >= 1: y = c0 + t*(c1 + t*(c2 + ... c7)), t = a - m exact (Sterbenz), m a float near
//           the interval's centre with erf(m) within 2^-12 ulp of the float c0;
// Horner in float32 with FMA, one table row per lane; y gets x's sign by an OR. Interval 1
// starts at 1/2 (not lower), so that t*P stays well below y there. Zero and infinities
// come out right; lanes with |x| < 2^-32 (zeros and subnormals included) take
// RN(x * 2/sqrt(pi)) through one double product on the batches that hold one (the
// polynomial sees 2^-32 there: no subnormal arithmetic), NaN lanes are flagged
// (erf_special) and repaired out of line (erf_f32_fix: +qNaN).
// Coefficients: src/core/kernels/generated/erf_coefficients.hpp (make regen), from the
// Chebyshev-interpolation (near-minimax) fits of tools/erf_coeffs.py; shared with the
// scalar / GPU code in src/core/device_math/erf.hpp.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/generated/erf_avx2_coefficients.hpp"
#include "kernels/generated/erf_coefficients.hpp"
#include "kernels/generated/erf_f32_coefficients.hpp"

namespace numfuse::kernels {

namespace erf_detail {

// The coefficient tables (src/core/kernels/generated/erf_coefficients.hpp, shared with
// src/core/device_math/erf.hpp) as 16-entry columns: entry k belongs to interval k.
struct erf_table_f64 {
    static constexpr int degree = NUMFUSE_ERF_F64_DEGREE;  // c1..c11
    static constexpr double xmax = NUMFUSE_ERF_F64_XMAX;
    static constexpr double qb = NUMFUSE_ERF_F64_QB;
    static constexpr double qc = NUMFUSE_ERF_F64_QC;
    static constexpr double qn = NUMFUSE_ERF_F64_QN;
    alignas(64) static constexpr double m[16] = NUMFUSE_ERF_F64_M;
    alignas(64) static constexpr double c0[16] = NUMFUSE_ERF_F64_C0;
    alignas(64) static constexpr double c1hi[16] = NUMFUSE_ERF_F64_C1HI;
    alignas(64) static constexpr double c1lo[16] = NUMFUSE_ERF_F64_C1LO;
    static constexpr double c1lo0 = NUMFUSE_ERF_F64_C1LO0;  // c1lo of interval 0
    alignas(64) static constexpr double c[degree - 1][16] = NUMFUSE_ERF_F64_C;  // c2..c11
};

// The avx2_fma float64 table (src/core/kernels/generated/erf_avx2_coefficients.hpp,
// tools/erf_avx2_coeffs.py): row k of interval k is head[k] = c0..c3 (32 bytes) and
// tail[k] = c4, c5 (16 bytes); the origin of the interval's polynomial is implied by k.
struct erf_table_f64_avx2 {
    static constexpr int degree = NUMFUSE_ERF_AVX2_DEGREE;  // c1..c5
    static constexpr int count = NUMFUSE_ERF_AVX2_ROWS_COUNT;
    static constexpr double scale = NUMFUSE_ERF_AVX2_SCALE;
    static constexpr double n0 = NUMFUSE_ERF_AVX2_N0;
    static constexpr double shift = NUMFUSE_ERF_AVX2_SHIFT;
    static constexpr double xmax = NUMFUSE_ERF_AVX2_XMAX;
    alignas(64) static constexpr double head[count][4] = NUMFUSE_ERF_AVX2_HEAD;
    alignas(64) static constexpr double tail[count][2] = NUMFUSE_ERF_AVX2_TAIL;
};

struct erf_table_f32 {
    static constexpr int degree = NUMFUSE_ERF_F32_DEGREE;  // c1..c5
    static constexpr double xmax = NUMFUSE_ERF_F32_XMAX;
    static constexpr double qb = NUMFUSE_ERF_F32_QB;
    static constexpr double qc = NUMFUSE_ERF_F32_QC;
    static constexpr double qn = NUMFUSE_ERF_F32_QN;
    alignas(64) static constexpr double m[16] = NUMFUSE_ERF_F32_M;
    alignas(64) static constexpr double c0[16] = NUMFUSE_ERF_F32_C0;
    alignas(64) static constexpr double c1hi[16] = NUMFUSE_ERF_F32_C1HI;
    alignas(64) static constexpr double c1lo[16] = NUMFUSE_ERF_F32_C1LO;
    alignas(64) static constexpr double c[degree - 1][16] = NUMFUSE_ERF_F32_C;  // c2..c5
};

// Every function here is a template on Arch (or only instantiated per Arch): the
// per-level translation units compile this header with different -m flags, and an
// Arch-independent inline function would be merged by the linker across them (an AVX-512
// copy could end up running on an SSE2-only CPU).

// 0x7fffffffffffffff as a double (a NaN pattern; used only as a bit mask). Note that
// xsimd 8.1's bitwise_andnot has different operand order on avx512f than on sse/avx.
template <class Arch>
inline double abs_mask() noexcept {
    const std::uint64_t u = 0x7fffffffffffffffull;
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
}

// Hides a value from the optimiser. GCC 12 rewrites fma(a, b, c*d) into fma(c, d, a*b)
// (even with -ffp-contract=off), which moves the rounding to the wrong product; the
// barrier keeps the operation order written here. Costs no instruction.
// On an xsimd batch the barrier takes its register (`.data`): clang cannot tie a struct
// operand to a register.
template <class Arch, class R>
inline R opaque(R v) noexcept {
#if defined(__GNUC__)
    auto& reg = [&]() -> auto& {
        if constexpr (std::is_arithmetic<R>::value) {
            return v;
        } else {
            return v.data;
        }
    }();
#if defined(__aarch64__)
    __asm__("" : "+w"(reg));  // any FP/SIMD register
#else
    __asm__("" : "+v"(reg));  // any SSE/AVX register
#endif
#endif
    return v;
}

// The coefficients of each lane's interval k (low 4 bits of the bit pattern of r), in
// row order: m, c0, c1hi, c1lo, c2, ..., cD (then zero padding).
//   AVX-512: one vpermt2pd per coefficient from the column tables above (in registers);
//   AVX2:    four 256-bit row loads and a 4x4 transpose per 4 coefficients (gathers are slow);
//   SSE2:    two 64-bit loads per coefficient, at the point of use.
template <class Tab>
struct erf_rows {
    static constexpr int count = Tab::degree + 3;
    static constexpr int width = (count + 3) / 4 * 4;
    struct data {
        double v[16 * width];
    };
    static constexpr data make() noexcept {
        data d{};
        for (int k = 0; k < 16; ++k) {
            double* row = d.v + k * width;
            row[0] = Tab::m[k];
            row[1] = Tab::c0[k];
            row[2] = Tab::c1hi[k];
            row[3] = Tab::c1lo[k];
            for (int j = 0; j < Tab::degree - 1; ++j) row[4 + j] = Tab::c[j][k];
        }
        return d;
    }
    alignas(64) static constexpr data rows = make();
};

// The coefficient columns back to back (AVX-512 f64): m, c0, c1hi, c2, ..., cD, 16 entries
// each, so that every second permute operand is a memory operand off one base register.
template <class Tab>
struct erf_cols {
    static constexpr int count = Tab::degree + 2;
    struct data {
        double v[16 * count];
    };
    static constexpr data make() noexcept {
        data d{};
        for (int k = 0; k < 16; ++k) {
            d.v[k] = Tab::m[k];
            d.v[16 + k] = Tab::c0[k];
            d.v[32 + k] = Tab::c1hi[k];
            for (int j = 0; j < Tab::degree - 1; ++j) d.v[16 * (3 + j) + k] = Tab::c[j][k];
        }
        return d;
    }
    alignas(64) static constexpr data cols = make();
};

template <class Tab, class Arch>
struct erf_coefs {
    using B = xsimd::batch<double, Arch>;
    static constexpr int width = erf_rows<Tab>::width;
    static constexpr bool in_registers = std::is_base_of<xsimd::avx512f, Arch>::value;
    // Two-lane levels (sse2, neon64) load each coefficient's pair of lanes at the point of use.
    static constexpr bool lane_pairs = !in_registers &&
                                       !std::is_base_of<xsimd::avx2, Arch>::value &&
                                       (std::is_base_of<xsimd::sse2, Arch>::value ||
                                        std::is_base_of<xsimd::neon64, Arch>::value) &&
                                       B::size == 2;

    // Coefficient j of the row: 0 = m, 1 = c0, 2 = c1hi, 3 = c1lo, 4 + i = c_{i+2}.
    // AVX-512 permutes at the point of use (the 2 x 16 column registers per coefficient
    // are memory operands; materialising all rows up front would spill).
    NUMFUSE_ALWAYS_INLINE B operator[](int j) const noexcept {
        if constexpr (in_registers) {
#if defined(__AVX512F__)
            const double* tab = j == 0   ? Tab::m
                                : j == 1 ? Tab::c0
                                : j == 2 ? Tab::c1hi
                                : j == 3 ? Tab::c1lo
                                         : Tab::c[j - 4];
            return _mm512_permutex2var_pd(_mm512_load_pd(tab), k512, _mm512_load_pd(tab + 8));
#else
            return B(0.0);
#endif
        } else if constexpr (lane_pairs) {
#if defined(__SSE2__)
            return _mm_loadh_pd(_mm_load_sd(p2[0] + j), p2[1] + j);
#elif defined(__aarch64__)
            return vld1q_lane_f64(p2[1] + j, vld1q_dup_f64(p2[0] + j), 1);
#else
            return B(0.0);
#endif
        } else {
            return c[j];
        }
    }

    NUMFUSE_ALWAYS_INLINE explicit erf_coefs(B r) noexcept {
        constexpr std::size_t N = B::size;
        if constexpr (in_registers) {
#if defined(__AVX512F__)
            k512 = _mm512_castpd_si512(r);  // vpermt2pd reads the low 4 bits
#endif
        } else {
            alignas(64) std::uint64_t k[N];
            r.store_aligned(reinterpret_cast<double*>(k));
            const double* rows = erf_rows<Tab>::rows.v;
            const double* p[N];
            for (std::size_t l = 0; l < N; ++l) p[l] = rows + (k[l] & 15u) * width;
            if constexpr (std::is_base_of<xsimd::avx2, Arch>::value) {
                detail::rows_to_columns_avx2<width>(p, c);
            } else if constexpr (lane_pairs) {
                p2[0] = p[0];
                p2[1] = p[1];
            } else {
                for (int j = 0; j < width; ++j) {
                    alignas(64) double v[N];
                    for (std::size_t l = 0; l < N; ++l) v[l] = p[l][j];
                    c[j] = B::load_aligned(v);
                }
            }
        }
    }

private:
#if defined(__AVX512F__)
    __m512i k512;
#endif
    const double* p2[2];
    B c[in_registers || lane_pairs ? 1 : width];
};

// Horner in u over c_{J+2}, c_{J+3}, ..., c_D: c_{J+2} + u*(c_{J+3} + ...), unrolled.
template <class Tab, class Arch, int J>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> horner(const erf_coefs<Tab, Arch>& k,
                                                        xsimd::batch<double, Arch> u) noexcept {
    if constexpr (J == Tab::degree - 2) {
        return k[4 + J];
    } else {
        return detail::fused_madd(horner<Tab, Arch, J + 1>(k, u), u, k[4 + J]);
    }
}

// RN(x * 2/sqrt(pi)) for 0 < |x| < 2^-1000, correctly rounded (also into the
// subnormals), via an exact product in a scaled domain. Scalar, rarely taken.
template <class Arch>
inline double erf_tiny(double x) noexcept {
    const double chi = 0x1.20dd750429b6dp+0;   // 2/sqrt(pi) = chi + clo
    const double clo = 0x1.1ae3a914fed80p-56;
    const double up = 0x1p+128, down = 0x1p-128;
    const double ax = std::fabs(x);
    const double X = ax * up;                    // exact
    const double ph = opaque<Arch>(X * chi);
    const double q = std::fma(X, clo, std::fma(X, chi, -ph));  // X*c - ph, to ~2^-100 rel
    double y;
    if (ph >= 0x1p-894) {                        // result >= 2^-1022: normal, one rounding
        y = (ph + q) * down;
    } else {                                     // subnormal result: grid G = 2^-946 here
        const double G = 0x1p-946, M = 0x1p-894;  // ulp(M + ph) == G
        const double r = (ph + M) - M;           // ph rounded to the grid (exact ops)
        const double rho = ph - r;               // exact, |rho| <= G/2
        double corr = 0.0;
        if (rho - 0.5 * G > -q) corr = G;        // ph + q rounds up instead
        else if (rho + 0.5 * G < -q) corr = -G;  // ph + q rounds down instead
        y = (r + corr) * down;                   // exact
    }
    return std::copysign(y, x);
}

// Whether float64 keeps c1 as an exact pair (see erf_abs). Without hardware FMA
// (sse2) the plain form exceeds 0.8 ulp, so sse2 keeps the pair; with FMA the plain
// form stays within the bound of tests/cpp/test_erf.cpp and saves the error term's
// operations.
template <class Arch>
inline constexpr bool split_c1 =
    !(std::is_base_of<xsimd::avx2, Arch>::value || std::is_base_of<xsimd::avx512f, Arch>::value ||
      std::is_base_of<xsimd::neon64, Arch>::value);

// erf on ax = |x| (NaN allowed: garbage there, the caller overwrites it).
// Split: keep c1 as c1hi + c1lo (float64); otherwise c1hi only (float32 via double).
template <class Tab, bool Split, class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erf_abs(xsimd::batch<double, Arch> ax) noexcept {
    using B = xsimd::batch<double, Arch>;
    const B two52(0x1p52);
    ax = xsimd::min(ax, B(Tab::xmax));
    // k = round(qb*ax + qc*ax^2 - n) in the low mantissa bits of r; max() clamps k >= 0.
    const B r = xsimd::max(
        detail::fused_madd(detail::fused_madd(B(Tab::qc), ax, B(Tab::qb)), ax, B(Tab::qn)), two52);
    const auto k0 = (r == two52);  // interval 0
    const erf_coefs<Tab, Arch> k(r);
    const B t = ax - k[0];  // exact; t = ax on interval 0 (m = 0)
    const B u = xsimd::select(k0, t * t, t);
    const B base = xsimd::select(k0, t, k[1]);
    const B q = horner<Tab, Arch, 0>(k, u);
    if constexpr (Split) {
        // y = base + t*c1hi + t*rr, with the leading sum s = RN(base + t*c1hi) and its
        // rounding error e (exact with FMA: base - s is exact by Sterbenz, and the error
        // of an FMA is recovered by a second FMA to ~2^-53 relative of itself).
        // c1lo: zero on intervals k >= 1 (their centers make c1 a double), so it is a
        // constant under the k = 0 mask rather than a per-lane table lookup.
        const B rr = detail::fused_madd(q, u, xsimd::select(k0, B(Tab::c1lo0), B(0.0)));
        const B c1hi = k[2];
        const B sum = detail::fused_madd(t, c1hi, base);
        const B err = detail::fused_madd(t, c1hi, base - sum);
        return sum + detail::fused_madd(t, rr, err);
    } else {
        return detail::fused_madd(t, detail::fused_madd(q, u, k[2]), base);
    }
}

// float64 with hardware FMA (avx2_fma, avx512): erf(|x|) for signed x (same value as
// erf_abs<Tab, false> up to the evaluation order of q), arranged for a short dependency
// chain and few instructions (the AVX-512 loop is bound by both):
//   * ax = min(|x|, xmax): one vrangepd on AVX-512 (NaN gives xmax there; the caller
//     replaces NaN lanes anyway);
//   * u = x^2 on interval 0 comes from x*x, off the chain (there |x| < xmax and t = ax,
//     so x*x == t*t bit for bit);
//   * q = E(u^2) + u*O(u^2), two Horner chains (their rounding errors reach y scaled by
//     |t*u/y| <~ 0.03); the last two steps stay Horner: y = fma(t, fma(q, u, c1), base);
//   * AVX-512: chained lookups (see the comment in the body).
// avx512 runs it (float64 on avx2_fma: erf_abs_avx2). erf_coefs' AVX2 row path serves
// builds where the avx2 Arch has no fma3 (none of numfuse's levels today).
template <class Tab, class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erf_abs_fma(
    xsimd::batch<double, Arch> x) noexcept {
    static_assert(Tab::degree == 11, "erf_abs_fma is written for c1..c11");
    using B = xsimd::batch<double, Arch>;
    const B two52(0x1p52);
    B ax;
#if defined(__AVX512DQ__)
    if constexpr (std::is_base_of<xsimd::avx512dq, Arch>::value) {
        ax = _mm512_range_pd(x, B(Tab::xmax), 0x0A);  // min(|x|, |xmax|), sign cleared
    } else
#endif
    {
        ax = xsimd::min(x & B(abs_mask<Arch>()), B(Tab::xmax));
    }
    const B x2 = x * x;
    const B r = xsimd::max(
        detail::fused_madd(detail::fused_madd(B(Tab::qc), ax, B(Tab::qb)), ax, B(Tab::qn)), two52);
    const auto k0 = (r == two52);
    // q = E(u^2) + u O(u^2), E = c2 + c4 u^2 + ... + c10 u^8, O = c3 + c5 u^2 + ... + c11 u^8,
    // both by Horner (the same operations in the same order on every FMA level).
    const auto eval = [&](const B& t, const B& base, const B& c1, const B& c2, auto&& coef)
                          NUMFUSE_ALWAYS_INLINE_LAMBDA {
                              const B u = xsimd::select(k0, x2, t);
                              const B u2 = u * u;
                              const B c10 = coef(10, r), c11 = coef(11, r);
                              const B c8 = coef(8, c10);
                              B e = detail::fused_madd(c10, u2, c8);
                              const B c9 = coef(9, c11);
                              B o = detail::fused_madd(c11, u2, c9);
                              const B c6 = coef(6, c8);
                              e = detail::fused_madd(e, u2, c6);
                              const B c7 = coef(7, c9);
                              o = detail::fused_madd(o, u2, c7);
                              const B c4 = coef(4, c6);
                              e = detail::fused_madd(e, u2, c4);
                              const B c5 = coef(5, c7);
                              o = detail::fused_madd(o, u2, c5);
                              const B c3 = coef(3, c5);
                              o = detail::fused_madd(o, u2, c3);
                              e = detail::fused_madd(e, u2, c2);
                              const B q = detail::fused_madd(o, u, e);
                              return detail::fused_madd(t, detail::fused_madd(q, u, c1), base);
                          };
#if defined(__AVX512F__)
    if constexpr (std::is_base_of<xsimd::avx512f, Arch>::value) {
        // vpermt2pd reads the low 4 bits of each index lane: r for m, c0, c1, c2 and the
        // chain starts c10, c11; c3..c11 carry their interval number k in their own low 4
        // mantissa bits (tools/erf_coeffs.py, <= 0.002 ulp), so each of c8, c6, c4 and
        // c9, c7, c5, c3 is looked up with the previous one as index: no index copies.
        // The high halves are memory operands off one opaque base register (GCC would
        // otherwise hoist all 26 halves into registers and spill).
        const double* lo = erf_cols<Tab>::cols.v;
        const double* hi = lo;
        __asm__("" : "+r"(hi));
        const auto P = [&](int j, const B& idx) NUMFUSE_ALWAYS_INLINE_LAMBDA {
            return B(_mm512_permutex2var_pd(_mm512_load_pd(lo + 16 * j), _mm512_castpd_si512(idx),
                                            _mm512_load_pd(hi + 16 * j + 8)));
        };
        const B t = ax - P(0, r);
        const B base = xsimd::select(k0, t, P(1, r));
        return eval(t, base, P(2, r), P(3, r),
                    [&](int j, const B& idx)
                        NUMFUSE_ALWAYS_INLINE_LAMBDA { return P(j + 1, idx); });
    } else
#endif
    {
        const erf_coefs<Tab, Arch> k(r);
        const B t = ax - k[0];
        const B base = xsimd::select(k0, t, k[1]);
        return eval(t, base, k[2], k[4],
                    [&](int j, const B&) NUMFUSE_ALWAYS_INLINE_LAMBDA { return k[j + 2]; });
    }
}

// Whether float64 erf runs erf_abs_avx2 (avx2_fma and neon64); avx512 keeps erf_abs_fma (its
// 16-entry permutes), sse2 erf_abs (split c1).
template <class Arch>
inline constexpr bool f64_avx2_rows = std::is_base_of<xsimd::fma3<xsimd::avx2>, Arch>::value ||
                                      std::is_base_of<xsimd::neon64, Arch>::value;

#if defined(__AVX__)
// mask ? b : a per lane for a compare's all-ones/all-zeros mask: one vblendvpd. GCC 12
// lowers _mm256_blendv_pd to a select on (mask < 0) and rebuilds that from the mask with a
// vpcmpgtq first (one more instruction per use); the asm takes the mask as it is. A
// template on Arch like everything here (no copy shared across the per-level units).
template <class Arch>
inline __m256d blendv_avx(__m256d a, __m256d b, __m256d mask) noexcept {
#if defined(__GNUC__)
    __m256d r;
    __asm__("vblendvpd %3, %2, %1, %0" : "=x"(r) : "x"(a), "x"(b), "x"(mask));
    return r;
#else
    return _mm256_blendv_pd(a, b, mask);
#endif
}
#endif

// float64 on avx2_fma: erf(|x|) for signed x (NaN gives erf(xmax): the caller replaces NaN
// lanes). Every lane's coefficients are one row of erf_table_f64_avx2, 6 doubles (many
// narrow intervals at degree 5: the row loads and transposes cost per column, not per
// interval): ax = min(|x|, xmax), k = max(round(scale ax) - n0, 0) is the low mantissa
// bits of r = max(fma(ax, scale, 2^52 - n0), 2^52) (128 ax is exact), its offset k << 4
// taken from r's bits with two vector operations (head rows at twice that offset), then
//   k = 0:  y = x + x*(c1 + u*(c2 + ...)), u = x^2 (x*x == ax*ax there: ax < xmax);
//   k >= 1: y = c0 + t*(c1 + t*(c2 + ...)), t = ax - o, o = (k + n0 - shift)/scale =
//           r/scale - (2^52 - n0 + shift)/scale (one fma, exact: both terms are multiples
//           of 1/scale near 2^45), the grid point below the interval: t in [1/256, 3/256],
//           exact (Sterbenz: o <= ax <= 2o);
// both as y = fma(t, P, base) with P by Horner in u (o = 0, so t = ax, base = t and u = x^2
// on interval 0). The origin outside the interval lets the fit absorb the rounding of
// c0 and c1 into the higher coefficients (tools/erf_avx2_coeffs.py): no column for the
// origin and no low part of c0. 760 rows (36 KiB) cover [0, 6].
// Error bound (ulps of y; tools/erf_avx2_coeffs.py measures the first term per row):
//   k >= 1: rounded polynomial in exact arithmetic <= 0.161 (interpolation error, largest
//     at x ~ 0.1-0.2; <= 0.051 above 0.5, <= 0.005 above 2); the rounding of P (its last
//     fma: 1/2 ulp of c1 ~ 1.13, i.e. 2^-53; the earlier ones scaled by t) times
//     t <= 3/256 over ulp(y) >= 2^-56 (y >= 0.083): <= 0.094; the final fma's rounding
//     1/2: <= 0.76 (the fit's worst rows hold y < 1/8);
//   k = 0: the fit (c1's representation, up to 0.11 as x -> 0, and the interpolation
//     error) <= 0.12, the rounding of q = c1 + u*(...) (q < 1/4: 2^-56) times ax over
//     ulp(y) >= 1.128 ax 2^-53: <= 0.11, the final 1/2: <= 0.73.
// Measured: 0.734 (x ~ 0.105) and 0.726 on interval 0 (x ~ 4.8e-4, as before: interval 0
// keeps its form); the bound enforced is kMaxUlpF64Avx2 in tests/cpp/test_erf.cpp.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erf_abs_avx2(
    [[maybe_unused]] xsimd::batch<double, Arch> x) noexcept {
    using B = xsimd::batch<double, Arch>;
#if defined(__AVX2__)
    using T = erf_table_f64_avx2;
    static_assert(T::degree == 5 && T::count <= 1024, "rows of c0..c5; 10-bit index");
    const B two52(0x1p52);
    const B ax = xsimd::min(x & B(abs_mask<Arch>()), B(T::xmax));
    const B r = xsimd::max(detail::fused_madd(ax, B(T::scale), B(0x1p52 - T::n0)), two52);
    const __m256d k0 = _mm256_cmp_pd(r, two52, _CMP_EQ_OQ);  // interval 0
    // r's bits are 0x4330000000000000 + k (2^52 <= r < 2^52 + 1024): shifted left by 4 they
    // are k << 4 plus a constant that wraps modulo 2^64, subtracted from the table bases
    // beforehand (unsigned arithmetic), so that no mask isolates k.
    constexpr std::uint64_t bias = 0x4330000000000000ull << 4;
    const __m256i off = _mm256_slli_epi64(_mm256_castpd_si256(r), 4);
    const __m128i off01 = _mm256_castsi256_si128(off), off23 = _mm256_extracti128_si256(off, 1);
    const std::uint64_t o[4] = {
        static_cast<std::uint64_t>(_mm_cvtsi128_si64(off01)),
        static_cast<std::uint64_t>(_mm_extract_epi64(off01, 1)),
        static_cast<std::uint64_t>(_mm_cvtsi128_si64(off23)),
        static_cast<std::uint64_t>(_mm_extract_epi64(off23, 1)),
    };
    const std::uint64_t head = reinterpret_cast<std::uintptr_t>(&T::head[0][0]) - 2 * bias;
    const std::uint64_t tail = reinterpret_cast<std::uintptr_t>(&T::tail[0][0]) - bias;
    const auto at = [](std::uint64_t address) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        return reinterpret_cast<const double*>(static_cast<std::uintptr_t>(address));
    };
    const double* p[4] = {at(head + 2 * o[0]), at(head + 2 * o[1]), at(head + 2 * o[2]),
                          at(head + 2 * o[3])};
    B c[6];  // c0..c5
    detail::rows_to_columns_avx2<4>(p, c);
    // c4, c5: lanes 0 and 2 in one register, 1 and 3 in another, then one unpack each.
    const __m256d t02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_load_pd(at(tail + o[0]))),
                                             _mm_load_pd(at(tail + o[2])), 1);
    const __m256d t13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_load_pd(at(tail + o[1]))),
                                             _mm_load_pd(at(tail + o[3])), 1);
    c[4] = _mm256_unpacklo_pd(t02, t13);
    c[5] = _mm256_unpackhi_pd(t02, t13);
    const B origin =
        detail::fused_madd(r, B(1.0 / T::scale), B(-(0x1p52 - T::n0 + T::shift) / T::scale));
    const B t = ax - B(_mm256_andnot_pd(k0, origin));  // interval 0: t = ax
    const B u = blendv_avx<Arch>(t, x * x, k0);
    const B y0 = blendv_avx<Arch>(c[0], t, k0);
    B q = detail::fused_madd(c[5], u, c[4]);
    q = detail::fused_madd(q, u, c[3]);
    q = detail::fused_madd(q, u, c[2]);
    q = detail::fused_madd(q, u, c[1]);
    return detail::fused_madd(t, q, y0);
#elif defined(__aarch64__)
    // neon64: the same operations on 2 lanes (the same bits as avx2_fma); each lane's row is
    // one 32-byte load of c0..c3 and one 16-byte load of c4, c5, the columns by ZIP1/ZIP2.
    using T = erf_table_f64_avx2;
    static_assert(T::degree == 5 && T::count <= 1024, "rows of c0..c5; 10-bit index");
    const B two52(0x1p52);
    // FMINNM: a NaN lane gets xmax, as vminpd gives it on x86 (a NaN reaching r would index
    // past the table)
    const B ax(vminnmq_f64(x & B(abs_mask<Arch>()), B(T::xmax)));
    const B r = xsimd::max(detail::fused_madd(ax, B(T::scale), B(0x1p52 - T::n0)), two52);
    const uint64x2_t k0 = vceqq_f64(r, two52);  // interval 0
    // k = r's low mantissa bits (2^52 <= r < 2^52 + 1024), each lane's row index
    const uint64x2_t k = vandq_u64(vreinterpretq_u64_f64(r), vdupq_n_u64(1023));
    const std::uint64_t k_0 = vgetq_lane_u64(k, 0), k_1 = vgetq_lane_u64(k, 1);
    const float64x2x2_t h0 = vld1q_f64_x2(T::head[k_0]), h1 = vld1q_f64_x2(T::head[k_1]);
    const float64x2_t t0 = vld1q_f64(T::tail[k_0]), t1 = vld1q_f64(T::tail[k_1]);
    const B c0(vzip1q_f64(h0.val[0], h1.val[0])), c1(vzip2q_f64(h0.val[0], h1.val[0]));
    const B c2(vzip1q_f64(h0.val[1], h1.val[1])), c3(vzip2q_f64(h0.val[1], h1.val[1]));
    const B c4(vzip1q_f64(t0, t1)), c5(vzip2q_f64(t0, t1));
    const B origin =
        detail::fused_madd(r, B(1.0 / T::scale), B(-(0x1p52 - T::n0 + T::shift) / T::scale));
    const B t = ax - B(vreinterpretq_f64_u64(
                         vbicq_u64(vreinterpretq_u64_f64(origin), k0)));  // interval 0: t = ax
    const B u(vbslq_f64(k0, x * x, t));
    const B y0(vbslq_f64(k0, t, c0));
    B q = detail::fused_madd(c5, u, c4);
    q = detail::fused_madd(q, u, c3);
    q = detail::fused_madd(q, u, c2);
    q = detail::fused_madd(q, u, c1);
    return detail::fused_madd(t, q, y0);
#else
    return B(0.0);
#endif
}

}  // namespace erf_detail

namespace erf_detail {

// Replaces the lanes with 0 < |x| < 2^-1000 by erf_tiny (out of line: rarely taken).
template <class Arch>
NUMFUSE_NOINLINE xsimd::batch<double, Arch> erf_fix_tiny(xsimd::batch<double, Arch> x,
                                                         xsimd::batch<double, Arch> y) noexcept {
    constexpr std::size_t N = xsimd::batch<double, Arch>::size;
    alignas(64) double xs[N], ys[N];
    x.store_aligned(xs);
    y.store_aligned(ys);
    for (std::size_t l = 0; l < N; ++l) {
        const double a = std::fabs(xs[l]);
        if (a < 0x1p-1000 && a != 0.0) ys[l] = erf_tiny<Arch>(xs[l]);
    }
    return xsimd::batch<double, Arch>::load_aligned(ys);
}

}  // namespace erf_detail

// erf(x) for float64 lanes. Max error: kMaxUlpF64Sse2 / kMaxUlpF64Fma / kMaxUlpF64Avx2 in
// tests/cpp/test_erf.cpp
// (contract at the top).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erf_kernel(xsimd::batch<double, Arch> x) noexcept {
    using B = xsimd::batch<double, Arch>;
    const B sign_mask(-0.0);
    const B ax = x & B(erf_detail::abs_mask<Arch>());
    B y;
    if constexpr (erf_detail::split_c1<Arch>) {
        y = erf_detail::erf_abs<erf_detail::erf_table_f64, true, Arch>(ax);
    } else if constexpr (erf_detail::f64_avx2_rows<Arch>) {
        y = erf_detail::erf_abs_avx2<Arch>(x);
    } else {
        y = erf_detail::erf_abs_fma<erf_detail::erf_table_f64, Arch>(x);
    }
    y = y | (x & sign_mask);
    const auto tiny = (ax < B(0x1p-1000)) & (ax != B(0.0));
    if (xsimd::any(tiny)) y = erf_detail::erf_fix_tiny<Arch>(x, y);
    return xsimd::select(xsimd::isnan(x), B(std::numeric_limits<double>::quiet_NaN()), y);
}

// Split form of the float64 erf_kernel for loops that branch on rare lanes anyway:
//   y = erf_kernel_nofix(x);
//   if (xsimd::any(erf_special(x))) y = erf_fix(x, y);
// equals erf_kernel(x) bit for bit. erf_special is one test on |x|
// (true for |x| < 2^-1000, including 0, and for NaN): one compare instead of
// erf_kernel's three compares and a blend; the fixup runs out of line.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erf_kernel_nofix(
    xsimd::batch<double, Arch> x) noexcept {
    using B = xsimd::batch<double, Arch>;
    const B sign_mask(-0.0);
    B y;
    if constexpr (erf_detail::split_c1<Arch>) {
        y = erf_detail::erf_abs<erf_detail::erf_table_f64, true, Arch>(
            x & B(erf_detail::abs_mask<Arch>()));
    } else if constexpr (erf_detail::f64_avx2_rows<Arch>) {
        y = erf_detail::erf_abs_avx2<Arch>(x);
    } else {
        y = erf_detail::erf_abs_fma<erf_detail::erf_table_f64, Arch>(x);
    }
    return y | (x & sign_mask);
}

template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<double, Arch> erf_special(
    xsimd::batch<double, Arch> x) noexcept {
    using B = xsimd::batch<double, Arch>;
    const B ax = x & B(erf_detail::abs_mask<Arch>());
#if defined(__AVX__)
    if constexpr (std::is_base_of<xsimd::avx, Arch>::value && !detail::is_avx512<Arch>) {
        return _mm256_cmp_pd(ax, B(0x1p-1000), _CMP_NGE_UQ);  // one compare, true for NaN
    }
#endif
    return ~(ax >= B(0x1p-1000));  // ordered >=: false for NaN
}

template <class Arch>
NUMFUSE_NOINLINE xsimd::batch<double, Arch> erf_fix(xsimd::batch<double, Arch> x,
                                                    xsimd::batch<double, Arch> y) noexcept {
    using B = xsimd::batch<double, Arch>;
    const B ax = x & B(erf_detail::abs_mask<Arch>());
    const auto tiny = (ax < B(0x1p-1000)) & (ax != B(0.0));
    if (xsimd::any(tiny)) y = erf_detail::erf_fix_tiny<Arch>(x, y);
    return xsimd::select(xsimd::isnan(x), B(std::numeric_limits<double>::quiet_NaN()), y);
}

namespace erf_detail {

template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erf_f32_half(
    xsimd::batch<double, Arch> x) noexcept {
    using B = xsimd::batch<double, Arch>;
    const B sign_mask(-0.0);
    B y = erf_abs<erf_table_f32, false, Arch>(x & B(abs_mask<Arch>()));
    return y | (x & sign_mask);  // NaN lanes are fixed up in float
}

// float32 through double (sse2, avx512): NaN lanes fixed, nothing else to repair.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> erf_f32_via_double(
    xsimd::batch<float, Arch> x) noexcept {
    using F = xsimd::batch<float, Arch>;
    xsimd::batch<double, Arch> lo, hi;
    detail::widen(x, lo, hi);
    const F y = detail::narrow(erf_f32_half(lo), erf_f32_half(hi));
    return xsimd::select(xsimd::isnan(x), F(std::numeric_limits<float>::quiet_NaN()), y);
}

// Whether float32 erf runs in float32 lanes (erf_f32_lanes): AVX2 with FMA (8-entry
// tables, one vpermps each) and neon64 (the same tables read by TBL: erf_f32_lanes_neon).
// Other levels evaluate in double (erf_f32_via_double).
template <class Arch>
inline constexpr bool f32_lanes =
    std::is_base_of<xsimd::fma3<xsimd::avx2>, Arch>::value || detail::is_neon64<Arch>;

// The float32-lane table (src/core/kernels/generated/erf_f32_coefficients.hpp):
// entry k of each array belongs to interval k = [k/scale, (k + 1)/scale].
struct erf_table_f32_lanes {
    static constexpr int degree = NUMFUSE_ERF32_DEGREE;  // c1..c7
    static constexpr float scale = NUMFUSE_ERF32_SCALE;  // 1 / interval width (2)
    static constexpr float xmax = NUMFUSE_ERF32_XMAX;
    // Below tiny (subnormals included) erf_f32_tiny gives RN(x * 2/sqrt(pi)): erf(x) is that
    // product to 2^-65 relative there, and the lanes' polynomial, within bound but not
    // correctly rounded (c1 is a float), would differ from scipy's erf at e.g. 2^-126.
    static constexpr float tiny = 0x1p-32f;
    alignas(32) static constexpr float m[8] = NUMFUSE_ERF32_M;
    alignas(32) static constexpr float c0[8] = NUMFUSE_ERF32_C0;
    alignas(32) static constexpr float c[degree][8] = NUMFUSE_ERF32_C;  // c1..c7
};

// RN(x * 2/sqrt(pi)) per lane through one double product: x is exact in double, and RN53
// then RN24 is the correctly rounded float32 for every |x| < tiny, subnormals and signed
// zeros included (checked exhaustively, tests/test_erf_f32.py).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> erf_f32_tiny(xsimd::batch<float, Arch> x) noexcept {
    using B = xsimd::batch<double, Arch>;
    B lo, hi;
    detail::widen(x, lo, hi);
    const B c(0x1.20dd750429b6dp+0);  // RN(2/sqrt(pi))
    return detail::narrow(lo * c, hi * c);
}

#if defined(__aarch64__)
// erf_f32_lanes at neon64: avx2_fma's arithmetic there, operation for operation, so the same
// bits (and the bound measured on every float32 at avx2_fma). fminnm / fmaxnm give xmax for
// NaN as vminps does (erf_f32_fix repairs those lanes). The 8-entry tables sit two by two in
// 64-byte blocks (erf_f32_neon_data), each block four q registers from one LD1 and each table
// one TBL over them (index bytes 4k .. 4k + 3 of a lane from k by one multiply-add, + 32 for a
// block's second table). The blocks are loaded in every batch from an opaque base: GCC 12
// rematerialises loop-invariant vector constants inside the loop (an adrp and an ldr per
// register, 36 instructions for the 18 table registers) rather than hold them, and one LD1
// of four registers is the cheapest reload.
struct ErfF32NeonData {
    float bounds[8];  // xmax x 4, tiny x 4
    float block[5][16];  // {m, c0}, {c7, c6}, {c5, c4}, {c3, c2}, {c1}
};
constexpr ErfF32NeonData erf_f32_neon_make() noexcept {
    using T = erf_table_f32_lanes;
    ErfF32NeonData d{};
    for (int l = 0; l < 4; ++l) d.bounds[l] = T::xmax, d.bounds[4 + l] = T::tiny;
    const float* first[5] = {T::m, T::c[6], T::c[4], T::c[2], T::c[0]};
    const float* second[5] = {T::c0, T::c[5], T::c[3], T::c[1], nullptr};
    for (int b = 0; b < 5; ++b) {
        for (int k = 0; k < 8; ++k) {
            d.block[b][k] = first[b][k];
            d.block[b][8 + k] = second[b] != nullptr ? second[b][k] : 0.0f;
        }
    }
    return d;
}
alignas(64) inline constexpr ErfF32NeonData erf_f32_neon_data = erf_f32_neon_make();

template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> erf_f32_lanes_neon(
    xsimd::batch<float, Arch> x) noexcept {
    using F = xsimd::batch<float, Arch>;
    using T = erf_table_f32_lanes;
    const ErfF32NeonData* data = &erf_f32_neon_data;
    __asm__("" : "+r"(data));  // opaque: loads from it stay loads (see above)
    const float32x4x2_t bounds = vld1q_f32_x2(data->bounds);  // xmax, tiny
    const float32x4_t ax = vabsq_f32(x);
    const uint32x4_t sign = veorq_u32(vreinterpretq_u32_f32(x), vreinterpretq_u32_f32(ax));
    const float32x4_t a = vmaxnmq_f32(vminnmq_f32(ax, bounds.val[0]), bounds.val[1]);
    const uint32x4_t small = vcltq_f32(ax, bounds.val[1]);  // false for NaN
    // k = floor(2a) in [0, 7]: one conversion to fixed point with one fraction bit
    static_assert(T::scale == 2.0f, "k = floor(2a)");
    const uint32x4_t k = vcvtq_n_u32_f32(a, 1);
    const uint8x16_t idx =
        vreinterpretq_u8_u32(vmlaq_u32(vdupq_n_u32(0x03020100u), k, vdupq_n_u32(0x04040404u)));
    const uint8x16_t idx2 = vaddq_u8(idx, vdupq_n_u8(32));
    const uint32x4_t k0 = vcltq_f32(a, vdupq_n_f32(1.0f / T::scale));  // k == 0
    // The two tables of 64-byte block `blk` (index bytes idx, idx2): one LD1 of four
    // registers and two TBLs (detail::neon_tbl64_pair, in asm: see there).
    const auto P2 = [&](int blk, F& first, F& second) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        uint8x16_t f, g;
        detail::neon_tbl64_pair(data->block[blk], idx, idx2, f, g);
        first = vreinterpretq_f32_u8(f);
        second = vreinterpretq_f32_u8(g);
    };
    F m, c0, c[8];  // c[2] .. c[7]: c2 .. c7 (c1 below)
    P2(0, m, c0);
    const F t = F(a) - m;  // exact (Sterbenz); t = a on interval 0 (m = 0)
    const F v = vbslq_f32(k0, t * t, t);
    // Horner over c7 .. c1 as avx2_fma's loop
    static_assert(T::degree == 7, "c1..c7");
    P2(1, c[7], c[6]);
    F q = detail::fused_madd(c[7], v, c[6]);
    P2(2, c[5], c[4]);
    q = detail::fused_madd(q, v, c[5]);
    q = detail::fused_madd(q, v, c[4]);
    P2(3, c[3], c[2]);
    q = detail::fused_madd(q, v, c[3]);
    q = detail::fused_madd(q, v, c[2]);
    float32x4_t c1;
    __asm__(  // the last block holds c1 alone
        "ld1 {v28.16b, v29.16b}, [%1]\n\t"
        "tbl %0.16b, {v28.16b, v29.16b}, %2.16b"
        : "=w"(c1)
        : "r"(data->block[4]), "w"(idx)
        : "v28", "v29");
    q = detail::fused_madd(q, v, F(c1));
    const F base = vbslq_f32(k0, t, c0);
    const F y = vreinterpretq_f32_u32(
        vorrq_u32(vreinterpretq_u32_f32(detail::fused_madd(t, q, base)), sign));
    if (vmaxvq_u32(small) == 0) return y;
    return vbslq_f32(small, erf_f32_tiny(x), y);
}
#endif

// erf(x) in float32 lanes for every x except NaN (erf_f32_fix repairs those; +-0, tiny
// and subnormal x, +-inf are right here). Method in the header comment ("float32 lanes").
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> erf_f32_lanes(
    xsimd::batch<float, Arch> x) noexcept {
#if defined(__AVX2__)
    using F = xsimd::batch<float, Arch>;
    using T = erf_table_f32_lanes;
    const F ax = (x & F(-0.0f)) ^ x;  // |x|
    const F sign = x ^ ax;
    // NaN gives xmax (the second operand of min). Below tiny (zeros included) the lanes take
    // erf_f32_tiny's product instead; the polynomial sees tiny there, so that no operand or
    // result of its arithmetic is subnormal (an assist per operation on x86), whatever the
    // input: inputs spanning magnitudes run at the speed of ordinary ones.
    const F a = _mm256_max_ps(_mm256_min_ps(ax, F(T::xmax)), F(T::tiny));
    const __m256 small = _mm256_cmp_ps(ax, F(T::tiny), _CMP_LT_OQ);
    // k = floor(2a) in [0, 7] (2a exact; vpermps reads the low 3 bits of each lane).
    const __m256i k = _mm256_cvttps_epi32(a * F(T::scale));
    const __m256 k0 = _mm256_cmp_ps(a, F(1.0f / T::scale), _CMP_LT_OQ);  // k == 0
    const auto P = [&](const float* tab) NUMFUSE_ALWAYS_INLINE_LAMBDA {
        return F(_mm256_permutevar8x32_ps(_mm256_load_ps(tab), k));
    };
    const F t = a - P(T::m);  // exact (Sterbenz); t = a on interval 0 (m = 0)
    const F v = _mm256_blendv_ps(t, t * t, k0);
    F q = P(T::c[T::degree - 1]);
    for (int j = T::degree - 2; j >= 0; --j) q = detail::fused_madd(q, v, P(T::c[j]));
    const F base = _mm256_blendv_ps(P(T::c0), t, k0);
    const F y = detail::fused_madd(t, q, base) | sign;
    if (_mm256_movemask_ps(small) == 0) return y;
    return _mm256_blendv_ps(y, erf_f32_tiny(x), small);
#elif defined(__aarch64__)
    return erf_f32_lanes_neon(x);
#else
    return x;
#endif
}

// NaN lanes of erf_f32_lanes give +qNaN. Out of line: rare.
template <class Arch>
NUMFUSE_NOINLINE xsimd::batch<float, Arch> erf_f32_fix(xsimd::batch<float, Arch> x,
                                                       xsimd::batch<float, Arch> y) noexcept {
    using F = xsimd::batch<float, Arch>;
    return xsimd::select(xsimd::isnan(x), F(std::numeric_limits<float>::quiet_NaN()), y);
}

}  // namespace erf_detail

// The split form for float32 (as for float64 above: erf_kernel_nofix, then erf_fix where
// erf_special flags a lane, equals erf_kernel bit for bit). Only the float32-lane levels
// have lanes to repair: elsewhere erf_kernel_nofix is erf_kernel and nothing is flagged.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> erf_kernel_nofix(
    xsimd::batch<float, Arch> x) noexcept {
    if constexpr (erf_detail::f32_lanes<Arch>) {
        return erf_detail::erf_f32_lanes(x);
    } else {
        return erf_detail::erf_f32_via_double(x);
    }
}

// True for NaN lanes on the float32-lane levels.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch_bool<float, Arch> erf_special(
    xsimd::batch<float, Arch> x) noexcept {
    if constexpr (erf_detail::f32_lanes<Arch>) {
#if defined(__AVX2__)
        return _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
#else
        return xsimd::isnan(x);
#endif
    } else {
        (void)x;
        return xsimd::batch_bool<float, Arch>(false);
    }
}

template <class Arch>
NUMFUSE_NOINLINE xsimd::batch<float, Arch> erf_fix(xsimd::batch<float, Arch> x,
                                                   xsimd::batch<float, Arch> y) noexcept {
    if constexpr (erf_detail::f32_lanes<Arch>) {
        return erf_detail::erf_f32_fix(x, y);
    } else {
        (void)x;
        return y;
    }
}

// erf(x) for float32 lanes. Max error: kMaxUlpF32Lanes (avx2_fma) / kMaxUlpF32 (other
// levels, evaluated in double and rounded once) in tests/cpp/test_erf.cpp.
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<float, Arch> erf_kernel(xsimd::batch<float, Arch> x) noexcept {
    if constexpr (erf_detail::f32_lanes<Arch>) {
        const auto y = erf_detail::erf_f32_lanes(x);
        return xsimd::any(erf_special(x)) ? erf_detail::erf_f32_fix(x, y) : y;
    } else {
        return erf_detail::erf_f32_via_double(x);
    }
}

}  // namespace numfuse::kernels
