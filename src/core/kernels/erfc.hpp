// erfc(x) for float64 SIMD lanes (float32 callers widen to float64 and round once).
//
// Contract
//   template <class Arch> batch<double, Arch> erfc_kernel(batch<double, Arch> x) noexcept;
//   * Max error <= 1 ULP against the correctly rounded erfc, at every level, on the whole
//     line: the measured maximum is kMaxUlpErfcF64 in tests/cpp/test_erf.cpp (also swept by
//     benchmarks/cpp/accuracy_harness.cpp). Subnormal results (x in ~[26.55, 27.23]) are
//     rounded once onto the subnormal grid, +0 above; scipy.special.erfc flushes some of
//     them to 0.
//   * erfc(+inf) = +0, erfc(-inf) = 2, erfc(+-0) = 1, erfc(NaN) = +qNaN 0x7ff8000000000000
//     for every NaN input (sign and payload dropped), as scipy.special.erfc.
//   * Hardware floating-point flags are don't-care (the caller masks them).
//   * Each lane's result depends on that lane's input only (the one branch, for subnormal
//     results, recomputes lanes selected by their own value): contiguous, strided and
//     threaded calls agree bit for bit.
//
// Method. a = min(|x|, 27.5), erfc(a) = exp(-a^2) * erfcx(a):
//   * a^2 = h + l exactly (two_prod); -h - l = k ln2 + r, |r| <= ln2/2, with k*ln2_hi
//     exact and r = rh + rl kept as a pair (exp_generic's reduction, exp.hpp);
//     e^r = 1 + rh + s, s = rh^2 Q(rh) + rl (1 + rh) (exp.hpp's degree-10 Q).
//   * erfcx(a) = c0 + t P(t) on one of 64 intervals (eighths of binades of a, interval 0 =
//     [0, 1/8); tools/erfc_coeffs.py, relative fit error <= 0.035 * 2^-53), t = a - m;
//     the last step keeps its rounding error: R = s0 + e0 (c0 = c0hi + c0lo).
//   * y = R (1 + rh + s) = S + small with S + Se = s0 + s0*rh exactly (two_prod and
//     fast_two_sum), so the only rounding of order 0.5 ulp is y = RN(S + small); then
//     y * 2^k1 * 2^k2 (k1 + k2 = k, both factors normal) is exact for normal results;
//     subnormal ones (rare) are rounded once from S + small onto the subnormal grid
//     (erfc_subnormal).
//   * x < 0: erfc(x) = 2 - erfc(|x|), formed as 2 - S*2^k - small*2^k with the exact
//     difference 2 - S*2^k, rounded once.
// Coefficient rows: 16 doubles per interval (src/core/kernels/generated/erfc_coefficients.hpp,
// make regen), loaded per lane: pairs of scalar loads at the point of use on 2-lane
// levels, row loads + 4x4 transposes on AVX2, one gather per coefficient on AVX-512.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/common.hpp"
#include "kernels/dd.hpp"
#include "kernels/erf.hpp"
#include "kernels/exp.hpp"
#include "kernels/generated/erfc_coefficients.hpp"

namespace numfuse::kernels {

namespace erfc_detail {

struct erfc_table {
    static constexpr int degree = NUMFUSE_ERFC_F64_DEGREE;  // c1..cD
    static constexpr int entries = NUMFUSE_ERFC_F64_ENTRIES;
    static constexpr int width = NUMFUSE_ERFC_F64_WIDTH;
    static constexpr std::int64_t key0 = NUMFUSE_ERFC_F64_KEY0;
    static constexpr double amax = NUMFUSE_ERFC_F64_AMAX;
    alignas(64) static constexpr double rows[entries * width] = NUMFUSE_ERFC_F64_ROWS;
};
static_assert(erfc_table::degree + 3 <= erfc_table::width, "row: m, c0hi, c0lo, c1..cD");

// Row j (0 = m, 1 = c0hi, 2 = c0lo, 2 + i = c_i) of each lane's interval.
template <class Arch>
struct erfc_coefs {
    using B = xsimd::batch<double, Arch>;
    static constexpr int width = erfc_table::width;
    static constexpr bool gather = std::is_base_of<xsimd::avx512f, Arch>::value;
    static constexpr bool avx2 = !gather && std::is_base_of<xsimd::avx2, Arch>::value;
    static constexpr bool lane_pairs = !gather && !avx2 && B::size == 2;

    NUMFUSE_ALWAYS_INLINE B operator[](int j) const noexcept {
        if constexpr (gather) {
#if defined(__AVX512F__)
            return _mm512_i64gather_pd(offsets, erfc_table::rows + j, 8);
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

    // a: |x| clamped to [0, amax] (NaN lanes may hold anything: their index is clamped).
    NUMFUSE_ALWAYS_INLINE explicit erfc_coefs(B a) noexcept {
        constexpr std::size_t N = B::size;
        constexpr std::int64_t last = erfc_table::entries - 1;
        if constexpr (gather) {
#if defined(__AVX512F__)
            __m512i key = _mm512_srli_epi64(_mm512_castpd_si512(a), 49);
            key = _mm512_sub_epi64(key, _mm512_set1_epi64(erfc_table::key0));
            key = _mm512_min_epi64(_mm512_max_epi64(key, _mm512_setzero_si512()),
                                   _mm512_set1_epi64(last));
            offsets = _mm512_slli_epi64(key, 4);  // * width
#endif
        } else {
            alignas(64) std::uint64_t bits[N];
            a.store_aligned(reinterpret_cast<double*>(bits));
            const double* p[N];
            for (std::size_t l = 0; l < N; ++l) {
                std::int64_t k = static_cast<std::int64_t>(bits[l] >> 49) - erfc_table::key0;
                k = k < 0 ? 0 : (k > last ? last : k);
                p[l] = erfc_table::rows + k * width;
            }
            if constexpr (avx2) {
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
    __m512i offsets;
#endif
    const double* p2[2];
    B c[gather || lane_pairs ? 1 : width];
};

// P(t) = c1 + t*(c2 + ... + t*cD) by Horner, unrolled (coefficient J is row entry 2 + J).
template <class Arch, int J>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erfc_horner(
    const erfc_coefs<Arch>& k, xsimd::batch<double, Arch> t) noexcept {
    if constexpr (J == erfc_table::degree) {
        return k[2 + J];
    } else {
        return dd::fmadd(erfc_horner<Arch, J + 1>(k, t), t, k[2 + J]);
    }
}

// (hi + lo) * sc1 * sc2 rounded once onto the subnormal grid, for lanes whose result is below
// the smallest normal (other lanes: garbage). u = hi*sc1 and v = lo*sc1 are exact (normal);
// in their domain the subnormal grid is G = 2^-1074 / sc2 and M = 2^52 G has ulp G on
// [M, 2M), where u + M lies (0 <= u < M there): u + M rounds u onto the grid with error
// e = u - ((u + M) - M) exact, and adding RN(e + v) rounds the whole sum onto the grid once
// (RN(e + v) is off by ~2^-53 G at most: only a sum that close to a tie could change).
template <class Arch>
NUMFUSE_NOINLINE xsimd::batch<double, Arch> erfc_subnormal(
    xsimd::batch<double, Arch> hi, xsimd::batch<double, Arch> lo, xsimd::batch<double, Arch> sc1,
    xsimd::batch<double, Arch> sc2) noexcept {
    using B = xsimd::batch<double, Arch>;
    const B u = hi * sc1, v = lo * sc1;
    const B shift = B(0x1p-1022) / sc2;  // M, exact: sc2 is a power of two >= 2^-550
    const B t1 = u + shift;
    const B e = u - (t1 - shift);
    const B t2 = t1 + (e + v);
    return (t2 - shift) * sc2;  // exact
}

}  // namespace erfc_detail

// erfc(x) for float64 lanes. Max error: kMaxUlpErfcF64 in tests/cpp/test_erf.cpp (contract
// and method above).
template <class Arch>
NUMFUSE_ALWAYS_INLINE xsimd::batch<double, Arch> erfc_kernel(
    xsimd::batch<double, Arch> x) noexcept {
    using B = xsimd::batch<double, Arch>;
    using C = detail::exp_consts<double>;
    using T = erfc_detail::erfc_table;
    const B shifter(C::shifter);
    const B a = xsimd::min(x & B(erf_detail::abs_mask<Arch>()), B(T::amax));

    // exp(-a^2) = 2^k (1 + rh + s).
    const dd::pair<Arch> sq = dd::two_prod(a, a);
    const B z = dd::fnmadd(sq.hi, B(C::inv_ln2), shifter);  // k = round(-h/ln2) in the low bits
    const B kd = z - shifter;
    const B r1 = erf_detail::opaque<Arch>(dd::fnmadd(kd, B(C::ln2_hi), B(0.0) - sq.hi));  // exact
    const B cr = dd::fmadd(kd, B(C::ln2_lo), sq.lo);
    const B rh = r1 - cr;
    const B rl = (r1 - rh) - cr;
    const B q = detail::exp_poly_gen(rh, 0.0);
    const B s = dd::fmadd(rh * rh, q, dd::fmadd(rl, rh, rl));

    // erfcx(a) = s0 + e0.
    const erfc_detail::erfc_coefs<Arch> k(a);
    const B t = a - k[0];
    const B p = erfc_detail::erfc_horner<Arch, 1>(k, t);
    const B c0hi = k[1];
    const B s0 = dd::fmadd(t, p, c0hi);
    const B e0 = dd::fmadd(t, p, c0hi - s0) + k[2];

    // R (1 + rh + s) = S + small (S + Se = s0 + s0*rh exactly, |s0*rh| < s0/2).
    const dd::pair<Arch> prod = dd::two_prod(s0, rh);
    const dd::pair<Arch> lead = dd::fast_two_sum(s0, prod.hi);
    const B small = (lead.lo + prod.lo) + dd::fmadd(s0, s, dd::fmadd(e0, rh, e0));

    // 2^k = 2^k1 * 2^k2, k1 = round(k/2): both normal for k >= -1100.
    const B z1 = dd::fmadd(kd, B(0.5), shifter);
    const B z2 = (kd - (z1 - shifter)) + shifter;
    const auto bias = xsimd::batch<std::int64_t, Arch>(std::int64_t(1023) << 52);
    const B sc1 = detail::as_float<double, Arch>((detail::as_int(z1) << 52) + bias);
    const B sc2 = detail::as_float<double, Arch>((detail::as_int(z2) << 52) + bias);
    B pos = ((lead.hi + small) * sc1) * sc2;
    // Subnormal results (a > ~26.5, rare): rounded once from lead + small instead (the
    // line above rounds twice, up to 0.75 ulp). pos < DBL_MIN keeps the exact value below
    // DBL_MIN, as erfc_subnormal requires.
    const auto below_normal = pos < B(std::numeric_limits<double>::min());
    if (xsimd::any(below_normal)) {
        pos = xsimd::select(below_normal,
                            erfc_detail::erfc_subnormal<Arch>(lead.hi, small, sc1, sc2), pos);
    }

    // x < 0: 2 - erfc(a); erfc(a) <= 1 here, so 2 - S' is exact as a pair.
    const B lead_scaled = (lead.hi * sc1) * sc2;
    const B small_scaled = (small * sc1) * sc2;
    const B two(2.0);
    const B d = two - lead_scaled;
    const B neg = d + (((two - d) - lead_scaled) - small_scaled);

    const B y = xsimd::select(x < B(0.0), neg, pos);
    return xsimd::select(xsimd::isnan(x), B(std::numeric_limits<double>::quiet_NaN()), y);
}

}  // namespace numfuse::kernels
