// Accuracy of softmax's shifted exp (arch/softmax_exp.hpp) on AVX-512, or with
// -DSHIFTED_EXP_CHECK_AVX2 at the avx2_fma level (its float32-lane kernel; float64 there
// is exp_difference): exp(x - m) for x <= m, the numerator softmax stores and the term
// log_softmax sums (shifted_exp_store: x - m as a double word), against the float64 / long
// double exp of the exact difference.
//
//   float32, lo = 0 (m = 0): every float32 h in [-104, 0] (about 1.1e9 values, one
//            binade at a time; --f32-stride N takes every N-th), against the float64
//            libm exp (<= 0.51 ULP of float64: 2^-29 float32 ULP);
//   float32, x - m not representable (the double word folded into the reduction):
//            --pairs random (x, m) with m in +-[2^-10, 2^20] and x - m in [-110, 0],
//            against exp((double)x - (double)m) (the difference is exact in float64);
//   float64: --pairs random (x, m) likewise, x - m in [-750, 0], against the x87
//            long double expl of the exact difference (hi + lo, long double).
//
// Results below 2^-126 (2^-1022) are measured in ULP of the subnormal grid. Prints the max
// ULP per case and the count above its bound (1 ULP; avx2_fma float64 1.5); exits 1 if any
// result exceeds it, or the special values (x = -inf, NaN, x = m) differ. Skips (exit 0) on
// a CPU without the level.
//
//   build/cpp/benchmarks/shifted_exp_check [--f32-stride N] [--pairs N]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#define NUMFUSE_LEVEL_NAMESPACE level_shifted_exp_check
#if defined(SHIFTED_EXP_CHECK_AVX2)
#define NUMFUSE_LEVEL_ARCH xsimd::fma3<xsimd::avx2>
#else
#define NUMFUSE_LEVEL_ARCH xsimd::avx512bw
#endif
#include "arch/softmax_exp.hpp"

namespace {

namespace rl = numfuse::core::level_shifted_exp_check::reduce_loops;
using F = xsimd::batch<float, NUMFUSE_LEVEL_ARCH>;
using D = xsimd::batch<double, NUMFUSE_LEVEL_ARCH>;

float f32_from_bits(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

// |got - want| in ULP of want's float32 (subnormal grid below 2^-126).
double ulp_error_f32(float got, double want) {
    if (std::isnan(got) || std::isnan(want)) return std::isnan(got) == std::isnan(want) ? 0 : 1e9;
    int e = 0;
    std::frexp(want, &e);
    const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
    return std::fabs(static_cast<double>(got) - want) / ulp;
}

double ulp_error_f64(double got, long double want) {
    if (std::isnan(got) || std::isnan(static_cast<double>(want))) return 0;
    int e = 0;
    std::frexp(static_cast<double>(want), &e);
    const long double ulp = std::ldexp(1.0L, std::max(e - 53, -1074));
    return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

struct Tally {
    const char* name;
    double bound = 1.0;  // ULP
    double max = 0;
    double where = 0;
    double where_m = 0;
    unsigned long long above = 0;
    unsigned long long count = 0;
    void add(double err, double x, double m) {
        ++count;
        if (err > bound) ++above;
        if (err > max) {
            max = err;
            where = x;
            where_m = m;
        }
    }
    bool report() const {
        std::printf("%-44s max %.4f ULP at x = %.9g, m = %.9g; %llu of %llu above %g ULP\n", name,
                    max, where, where_m, above, count, bound);
        return above == 0;
    }
};

template <class B, class T>
void eval(const T* x, const T* m, T* store) {
    const B xs = B::load_unaligned(x);
    const B ms = B::load_unaligned(m);
    rl::shifted_exp_store(xs, ms).store_unaligned(store);
}

}  // namespace

int main(int argc, char** argv) {
    std::uint32_t stride = 1;
    unsigned long long pairs = 20000000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--f32-stride") == 0)
            stride = static_cast<std::uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
        if (std::strcmp(argv[i], "--pairs") == 0) pairs = std::strtoull(argv[i + 1], nullptr, 10);
    }
#if defined(SHIFTED_EXP_CHECK_AVX2)
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        std::printf("no AVX2 + FMA on this CPU: skipped\n");
        return 0;
    }
#else
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512vl")) {
        std::printf("no AVX-512 on this CPU: skipped\n");
        return 0;
    }
#endif
    bool ok = true;
    constexpr std::size_t W = F::size;
    alignas(64) float xs[W], ms[W], st[W];

    // float32, m = 0: every h in [-104, 0], binade by binade (sign bit set: -0 .. -104).
    Tally store32{"float32 store, m = 0, every h in [-104, 0]"};
    const std::uint32_t last = 0xC2D00000u;  // -104
    for (std::uint32_t bits = 0x80000000u; bits <= last;) {
        std::size_t n = 0;
        for (; n < W && bits <= last; ++n, bits += stride) {
            xs[n] = f32_from_bits(bits);
            ms[n] = 0.0f;
        }
        for (std::size_t k = n; k < W; ++k) xs[k] = ms[k] = 0.0f;
        eval<F>(xs, ms, st);
        for (std::size_t k = 0; k < n; ++k) {
            const double want = std::exp(static_cast<double>(xs[k]));
            store32.add(ulp_error_f32(st[k], want), xs[k], 0.0);
        }
    }
    ok &= store32.report();

    std::mt19937_64 rng(29);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    // float32 pairs: m of either sign over 30 binades, x = m - d rounded to float32.
#if defined(SHIFTED_EXP_CHECK_AVX2)
    // avx2_fma: the float32-lane kernel's range (below, exp_difference: subnormal results);
    // float64 is exp_difference, whose contract is 1 ULP plus 1/2.
    constexpr double span32 = 87;
    constexpr double bound64 = 1.5;
    Tally pair32{"float32 store, random (x, m), x - m in [-87, 0]"};
#else
    constexpr double span32 = 110;
    constexpr double bound64 = 1.0;
    Tally pair32{"float32 store, random (x, m), x - m in [-110, 0]"};
#endif
    for (unsigned long long done = 0; done < pairs; done += W) {
        for (std::size_t k = 0; k < W; ++k) {
            const double mag =
                std::ldexp(1.0, -10 + static_cast<int>(30 * unit(rng))) * (1 + unit(rng));
            const float m = static_cast<float>(unit(rng) < 0.5 ? -mag : mag);
            const float x = static_cast<float>(static_cast<double>(m) - span32 * unit(rng));
            ms[k] = m;
            xs[k] = x > m ? m : x;
        }
        eval<F>(xs, ms, st);
        for (std::size_t k = 0; k < W; ++k) {
            const double want = std::exp(static_cast<double>(xs[k]) - static_cast<double>(ms[k]));
            pair32.add(ulp_error_f32(st[k], want), xs[k], ms[k]);
        }
    }
    ok &= pair32.report();

    // float64 pairs.
    constexpr std::size_t V = D::size;
    alignas(64) double xd[V], md[V], std_[V];
    Tally pair64{"float64 store, random (x, m), x - m in [-750, 0]", bound64};
    for (unsigned long long done = 0; done < pairs; done += V) {
        for (std::size_t k = 0; k < V; ++k) {
            const double mag =
                std::ldexp(1.0, -10 + static_cast<int>(30 * unit(rng))) * (1 + unit(rng));
            const double m = unit(rng) < 0.5 ? -mag : mag;
            const double x = m - 750 * unit(rng) * (unit(rng) < 0.5 ? 1.0 : 0.01);
            md[k] = m;
            xd[k] = x > m ? m : x;
        }
        eval<D>(xd, md, std_);
        for (std::size_t k = 0; k < V; ++k) {
            const long double d = static_cast<long double>(xd[k]) - static_cast<long double>(md[k]);
            pair64.add(ulp_error_f64(std_[k], std::exp(d)), xd[k], md[k]);
        }
    }
    ok &= pair64.report();

    // Special values: x = -inf -> +0, NaN -> NaN, x = m -> 1 (also m = lowest(): a group of -inf).
    const float inf = std::numeric_limits<float>::infinity();
    const float specials_x[4] = {-inf, std::nanf(""), 3.5f, -inf};
    const float specials_m[4] = {2.0f, 2.0f, 3.5f, std::numeric_limits<float>::lowest()};
    const float expect[4] = {0.0f, std::nanf(""), 1.0f, 0.0f};
    for (std::size_t k = 0; k < W; ++k) {
        xs[k] = specials_x[k % 4];
        ms[k] = specials_m[k % 4];
    }
    eval<F>(xs, ms, st);
    for (std::size_t k = 0; k < W; ++k) {
        const float e = expect[k % 4];
        const bool same = std::isnan(e) ? std::isnan(st[k]) : st[k] == e && !std::signbit(st[k]);
        if (!same) {
            std::printf("special value x = %g, m = %g: %g, expected %g\n", xs[k], ms[k], st[k], e);
            ok = false;
        }
    }
    std::printf(ok ? "all within bounds\n" : "FAILED\n");
    return ok ? 0 : 1;
}
