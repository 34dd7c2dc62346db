// erf(x), scalar, float32 and float64, for the CPU and the GPU (NUMFUSE_HD).
//
// Contract
//   erf_scalar(double) / erf_scalar(float): the error function.
//   Max error <= 1 ULP against the correctly rounded result (enforced by
//   tests/cpp/test_device_math.cpp; benchmarks/cpp/accuracy_harness.cpp prints the
//   measured maxima as the level device_math).
//   Specials (as scipy.special.erf): erf(+-0) = +-0, erf(+-inf) = +-1,
//   erf(NaN) = +qNaN (0x7ff8000000000000 / 0x7fc00000, whatever the input's sign
//   or payload); subnormal inputs give RN(x * 2/sqrt(pi)); erf(-x) == -erf(x).
//
// Method: the algorithm and the coefficient tables of src/core/kernels/erf.hpp (the
// row view of src/core/kernels/generated/erf_coefficients.hpp: the same numbers). ax = min(|x|,
// xmax) picks one of 16 intervals k = round(qb ax + qc ax^2 - n) clamped at 0 (the low mantissa
// bits of max(fma(fma(qc, ax, qb), ax, 2^52 - n), 2^52));
//   k = 0: y = x + x (c1 + u (c2 + ...)), u = x^2;
//   k > 0: y = c0 + t (c1 + u (c2 + ...)), u = t = ax - m (exact).
// f64: degree 11, c1 = c1hi + c1lo and s = RN(base + t c1hi) formed with its
// rounding error, so only the last addition rounds at ~0.5 ulp.
// f32: evaluated in double (degree 5), rounded once.
// 0 < |x| < 2^-1000: exact scaled product for RN(x * 2/sqrt(pi)).
#pragma once

#include "device_math/common.hpp"
#include "kernels/generated/erf_coefficients.hpp"

namespace numfuse::device_math {
namespace erf_detail {

constexpr int f64_width = NUMFUSE_ERF_F64_DEGREE + 3;  // m, c0, c1hi, c1lo, c2..cD
constexpr int f32_width = NUMFUSE_ERF_F32_DEGREE + 3;

inline constexpr double rows_f64_host[16][f64_width] = NUMFUSE_ERF_F64_ROWS;
inline constexpr double rows_f32_host[16][f32_width] = NUMFUSE_ERF_F32_ROWS;
#if defined(__CUDACC__)
// Global memory (read-only, L1-cached), not __constant__: lanes of a warp read
// different intervals, which the constant cache would serialise.
static __device__ const double rows_f64_dev[16][f64_width] = NUMFUSE_ERF_F64_ROWS;
static __device__ const double rows_f32_dev[16][f32_width] = NUMFUSE_ERF_F32_ROWS;
#if defined(NUMFUSE_DM_ERF_SHARED)
// With NUMFUSE_DM_ERF_SHARED defined, a translation unit reads the rows from a
// per-block copy in shared memory instead: a warp's lanes hit up to 16 different
// rows, which in global memory costs one L1 wavefront per row and load (erf then runs
// well below the copy bandwidth); in shared memory the rows are
// padded to an odd number of doubles, so 16 different rows fall in 16 different
// banks. Every kernel of such a unit that calls erf must first run
// erf_rows_to_shared() with all threads of its block.
constexpr int f64_pitch = f64_width | 1;
constexpr int f32_pitch = f32_width | 1;
static __shared__ double rows_f64_sh[16 * f64_pitch];
static __shared__ double rows_f32_sh[16 * f32_pitch];
#endif
#endif

NUMFUSE_HD inline const double* row_f64(unsigned k) noexcept {
#if defined(__CUDA_ARCH__) && defined(NUMFUSE_DM_ERF_SHARED)
    return rows_f64_sh + k * f64_pitch;
#elif defined(__CUDA_ARCH__)
    return rows_f64_dev[k];
#else
    return rows_f64_host[k];
#endif
}
NUMFUSE_HD inline const double* row_f32(unsigned k) noexcept {
#if defined(__CUDA_ARCH__) && defined(NUMFUSE_DM_ERF_SHARED)
    return rows_f32_sh + k * f32_pitch;
#elif defined(__CUDA_ARCH__)
    return rows_f32_dev[k];
#else
    return rows_f32_host[k];
#endif
}

template <int Degree>
NUMFUSE_HD inline double horner_c2(const double* row, double u) noexcept {
    double q = row[4 + Degree - 2];  // c_D
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = Degree - 3; j >= 0; --j) q = fma_(q, u, row[4 + j]);
    return q;  // c2 + u (c3 + ... + u cD)
}

// erf(ax) for ax = |x| >= 0, finite or +inf. Returns the row pointer's result in double.
template <bool Split>
NUMFUSE_HD inline double erf_abs(double ax, double xmax, double qb, double qc, double qn) noexcept {
    const double a = ax < xmax ? ax : xmax;
    double r = fma_(fma_(qc, a, qb), a, qn);
    if (r < 0x1p52) r = 0x1p52;
    const bool k0 = (r == 0x1p52);
    const unsigned k = static_cast<unsigned>(bits_of(r) & 15u);
    const double* row = Split ? row_f64(k) : row_f32(k);
    const double t = a - row[0];  // exact (Sterbenz); t = a on interval 0 (m = 0)
    const double u = k0 ? t * t : t;
    const double base = k0 ? t : row[1];
    if constexpr (Split) {
        const double q = horner_c2<NUMFUSE_ERF_F64_DEGREE>(row, u);
        const double rr = fma_(q, u, row[3]);
        const double sum = fma_(t, row[2], base);
        const double err = fma_(t, row[2], base - sum);
        return sum + fma_(t, rr, err);
    } else {
        const double q = horner_c2<NUMFUSE_ERF_F32_DEGREE>(row, u);
        return fma_(t, fma_(q, u, row[2]), base);
    }
}

// RN(ax * 2/sqrt(pi)) for 0 < ax < 2^-1000, correctly rounded into the subnormals:
// an exact product in a domain scaled by 2^128, then one rounding on the target grid.
NUMFUSE_HD inline double erf_tiny_abs(double ax) noexcept {
    const double chi = 0x1.20dd750429b6dp+0;  // 2/sqrt(pi) = chi + clo
    const double clo = 0x1.1ae3a914fed80p-56;
    const double X = ax * 0x1p+128;  // exact
    const double ph = X * chi;
    const double q = fma_(X, clo, fma_(X, chi, -ph));
    if (ph >= 0x1p-894) return (ph + q) * 0x1p-128;  // normal result: one rounding
    const double G = 0x1p-946, M = 0x1p-894;          // subnormal grid, scaled
    const double rg = (ph + M) - M;                   // ph rounded to the grid
    const double rho = ph - rg;                       // exact
    double corr = 0.0;
    if (rho - 0.5 * G > -q) {
        corr = G;
    } else if (rho + 0.5 * G < -q) {
        corr = -G;
    }
    return (rg + corr) * 0x1p-128;  // exact
}

NUMFUSE_HD inline double with_sign_of(double y, double x) noexcept {
    return double_from_bits(bits_of(y) | (bits_of(x) & 0x8000000000000000ull));
}

}  // namespace erf_detail

#if defined(__CUDACC__) && defined(NUMFUSE_DM_ERF_SHARED)
// Fills the block's shared copy of the erf rows (all threads of the block must call
// it, before any erf_scalar); ends with a barrier.
__device__ inline void erf_rows_to_shared() noexcept {
    using namespace erf_detail;
    for (unsigned j = threadIdx.x; j < 16u * f64_width; j += blockDim.x) {
        rows_f64_sh[(j / f64_width) * f64_pitch + j % f64_width] =
            rows_f64_dev[j / f64_width][j % f64_width];
    }
    for (unsigned j = threadIdx.x; j < 16u * f32_width; j += blockDim.x) {
        rows_f32_sh[(j / f32_width) * f32_pitch + j % f32_width] =
            rows_f32_dev[j / f32_width][j % f32_width];
    }
    __syncthreads();
}
#endif

// erf(x), f64. Max error <= 1 ULP; all inputs; specials as SciPy.
NUMFUSE_HD inline double erf_scalar(double x) noexcept {
    if (is_nan(x)) return canonical_nan_f64();
    const double ax = abs_(x);
    double y;
    if (ax < 0x1p-1000 && ax != 0.0) {
        y = erf_detail::erf_tiny_abs(ax);
    } else {
        y = erf_detail::erf_abs<true>(ax, NUMFUSE_ERF_F64_XMAX, NUMFUSE_ERF_F64_QB,
                                      NUMFUSE_ERF_F64_QC, NUMFUSE_ERF_F64_QN);
    }
    return erf_detail::with_sign_of(y, x);
}

// erf(x), f32, evaluated in double and rounded once. Max error <= 1 ULP.
NUMFUSE_HD inline float erf_scalar(float x) noexcept {
    if (is_nan(x)) return canonical_nan_f32();
    const double xd = static_cast<double>(x);
    const double y = erf_detail::erf_abs<false>(abs_(xd), NUMFUSE_ERF_F32_XMAX, NUMFUSE_ERF_F32_QB,
                                                NUMFUSE_ERF_F32_QC, NUMFUSE_ERF_F32_QN);
    return static_cast<float>(erf_detail::with_sign_of(y, xd));
}

}  // namespace numfuse::device_math
