// The scalar kernels of the CUDA path (src/core/device_math), run on the CPU:
// the same source nvcc compiles for the GPU. Accuracy <= 1 ULP against a long
// double reference (x87 80-bit, 11 more bits than float64), special values bit for
// bit as NumPy / SciPy, and the erf coefficient rows equal to the SIMD kernel's
// column tables (both views of src/core/kernels/generated/erf_coefficients.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "device_math/device_math.hpp"
#include "kernels/erf.hpp"

namespace {

namespace dm = numfuse::device_math;

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
T from_bits(bits_t<T> b) {
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

template <class T>
bits_t<T> to_bits(T v) {
    bits_t<T> b;
    std::memcpy(&b, &v, sizeof v);
    return b;
}

// |y - ref| in ULPs of the reference's binade (subnormal spacing below the normal
// range). An infinite correctly rounded reference must be matched exactly.
template <class T>
double ulp_error(T y, long double ref) {
    const T cr = static_cast<T>(ref);
    if (std::isinf(cr) || std::isinf(y)) return y == cr ? 0.0 : 1e9;
    if (std::isnan(y)) return 1e9;
    int e = 0;
    std::frexp(std::fabs(ref), &e);
    e = std::max(e, std::numeric_limits<T>::min_exponent);
    if (ref == 0) e = std::numeric_limits<T>::min_exponent;
    const long double ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
    return static_cast<double>(std::fabs(static_cast<long double>(y) - ref) / ulp);
}

enum class Fn { exp, log, erf };

const char* name_of(Fn f) { return f == Fn::exp ? "exp" : f == Fn::log ? "log" : "erf"; }

template <class T>
T eval(Fn f, T x) {
    switch (f) {
        case Fn::exp: return dm::exp_scalar(x);
        case Fn::log: return dm::log_scalar(x);
        default: return dm::erf_scalar(x);
    }
}

long double reference(Fn f, long double x) {
    switch (f) {
        case Fn::exp: return expl(x);
        case Fn::log: return logl(x);
        default: return erfl(x);
    }
}

struct Worst {
    double err = 0;
    double x = 0;
    void add(double e, double at) {
        if (e > err) {
            err = e;
            x = at;
        }
    }
};

template <class T>
void check_inputs(Fn f, const std::vector<T>& xs, Worst& worst) {
    for (T x : xs) {
        if (!std::isfinite(x)) continue;
        if (f == Fn::log && x <= 0) continue;
        worst.add(ulp_error(eval(f, x), reference(f, static_cast<long double>(x))),
                  static_cast<double>(x));
    }
}

// Inputs: a uniform sweep of the interesting range, every binade by random bit
// patterns, and the neighbourhoods of the algorithms' edges.
template <class T>
std::vector<T> inputs(Fn f, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<T> xs;
    const auto push_uniform = [&](double lo, double hi, std::size_t count) {
        std::uniform_real_distribution<double> u(lo, hi);
        for (std::size_t i = 0; i < count; ++i) xs.push_back(static_cast<T>(u(rng)));
    };
    const double big = sizeof(T) == 8 ? 709.8 : 88.8;
    const double tiny = sizeof(T) == 8 ? -745.2 : -104.0;
    switch (f) {
        case Fn::exp:
            push_uniform(tiny, big, n);
            push_uniform(-1.0, 1.0, n / 4);
            push_uniform(big - 2.0, big, n / 8);
            push_uniform(tiny, tiny + 40.0, n / 4);  // subnormal results
            break;
        case Fn::log:
            push_uniform(0.5, 2.0, n / 2);
            push_uniform(1.0 - 1.0 / 64, 1.0 + 1.0 / 64, n / 4);
            break;
        case Fn::erf:
            push_uniform(-6.5, 6.5, n);
            push_uniform(-0.5, 0.5, n / 4);
            break;
    }
    // Random bit patterns: every binade, both signs, subnormals included.
    for (std::size_t i = 0; i < n; ++i) {
        const bits_t<T> b = static_cast<bits_t<T>>(rng());
        xs.push_back(from_bits<T>(b));
    }
    return xs;
}

class DeviceMath : public ::testing::TestWithParam<Fn> {};

TEST_P(DeviceMath, Float64WithinOneUlp) {
    const Fn f = GetParam();
    Worst worst;
    check_inputs(f, inputs<double>(f, 400000, 1234 + static_cast<int>(f)), worst);
    std::printf("device_math %s f64: max error %.3f ulp at %a\n", name_of(f), worst.err, worst.x);
    EXPECT_LE(worst.err, 1.0) << name_of(f) << " f64 worst at " << worst.x;
}

TEST_P(DeviceMath, Float32WithinOneUlp) {
    const Fn f = GetParam();
    Worst worst;
    check_inputs(f, inputs<float>(f, 400000, 99 + static_cast<int>(f)), worst);
    // A strided sweep over every float32 bit pattern (1 in 251): all binades evenly.
    std::vector<float> sweep;
    for (std::uint64_t b = 0; b < (1ull << 32); b += 251)
        sweep.push_back(from_bits<float>(static_cast<std::uint32_t>(b)));
    check_inputs(f, sweep, worst);
    std::printf("device_math %s f32: max error %.3f ulp at %a\n", name_of(f), worst.err, worst.x);
    EXPECT_LE(worst.err, 1.0) << name_of(f) << " f32 worst at " << worst.x;
}

INSTANTIATE_TEST_SUITE_P(Functions, DeviceMath, ::testing::Values(Fn::exp, Fn::log, Fn::erf),
                         [](const auto& info) { return std::string(name_of(info.param)); });

// ---------------------------------------------------------------- special values

template <class T>
void expect_bits(T got, T want, const char* what) {
    EXPECT_EQ(to_bits(got), to_bits(want)) << what << ": got " << got << " want " << want;
}

TEST(DeviceMathSpecials, Exp) {
    const double inf = std::numeric_limits<double>::infinity();
    const float inff = std::numeric_limits<float>::infinity();
    expect_bits(dm::exp_scalar(0.0), 1.0, "exp(+0)");
    expect_bits(dm::exp_scalar(-0.0), 1.0, "exp(-0)");
    expect_bits(dm::exp_scalar(inf), inf, "exp(inf)");
    expect_bits(dm::exp_scalar(-inf), 0.0, "exp(-inf)");
    expect_bits(dm::exp_scalar(709.79), inf, "exp(709.79)");
    expect_bits(dm::exp_scalar(1e300), inf, "exp(1e300)");
    expect_bits(dm::exp_scalar(-746.0), 0.0, "exp(-746)");
    expect_bits(dm::exp_scalar(-1e300), 0.0, "exp(-1e300)");
    EXPECT_EQ(dm::exp_scalar(-745.1332), std::numeric_limits<double>::denorm_min());
    expect_bits(dm::exp_scalar(0x1p-1074), 1.0, "exp(denorm_min)");
    expect_bits(dm::exp_scalar(0.0f), 1.0f, "expf(+0)");
    expect_bits(dm::exp_scalar(-0.0f), 1.0f, "expf(-0)");
    expect_bits(dm::exp_scalar(inff), inff, "expf(inf)");
    expect_bits(dm::exp_scalar(-inff), 0.0f, "expf(-inf)");
    expect_bits(dm::exp_scalar(88.73f), inff, "expf(88.73)");
    expect_bits(dm::exp_scalar(-104.0f), 0.0f, "expf(-104)");
    EXPECT_LE(ulp_error(dm::exp_scalar(88.72283f), expl(static_cast<long double>(88.72283f))),
              1.0);  // near FLT_MAX
    // NaN: f64 keeps the payload and sign and sets the quiet bit; f32 canonical.
    expect_bits(dm::exp_scalar(from_bits<double>(0xfff4000000000123ull)),
                from_bits<double>(0xfffc000000000123ull), "exp(-sNaN payload)");
    expect_bits(dm::exp_scalar(from_bits<double>(0x7ff8000000000000ull)),
                from_bits<double>(0x7ff8000000000000ull), "exp(qNaN)");
    expect_bits(dm::exp_scalar(from_bits<float>(0xffc01234u)), from_bits<float>(0x7fc00000u),
                "expf(-NaN)");
}

TEST(DeviceMathSpecials, Log) {
    const double inf = std::numeric_limits<double>::infinity();
    const float inff = std::numeric_limits<float>::infinity();
    expect_bits(dm::log_scalar(0.0), -inf, "log(+0)");
    expect_bits(dm::log_scalar(-0.0), -inf, "log(-0)");
    expect_bits(dm::log_scalar(1.0), 0.0, "log(1)");
    expect_bits(dm::log_scalar(inf), inf, "log(inf)");
    expect_bits(dm::log_scalar(-inf), from_bits<double>(0xfff8000000000000ull), "log(-inf)");
    expect_bits(dm::log_scalar(-1.0), from_bits<double>(0xfff8000000000000ull), "log(-1)");
    expect_bits(dm::log_scalar(-0x1p-1074), from_bits<double>(0xfff8000000000000ull),
                "log(-denorm)");
    expect_bits(dm::log_scalar(from_bits<double>(0x7ff0000000000abcull)),
                from_bits<double>(0x7ff8000000000abcull), "log(sNaN payload)");
    EXPECT_LE(ulp_error(dm::log_scalar(0x1p-1074), logl(0x1p-1074L)), 1.0);
    EXPECT_LE(ulp_error(dm::log_scalar(std::numeric_limits<double>::max()),
                        logl(static_cast<long double>(std::numeric_limits<double>::max()))),
              1.0);
    expect_bits(dm::log_scalar(0.0f), -inff, "logf(+0)");
    expect_bits(dm::log_scalar(-0.0f), -inff, "logf(-0)");
    expect_bits(dm::log_scalar(1.0f), 0.0f, "logf(1)");
    expect_bits(dm::log_scalar(inff), inff, "logf(inf)");
    expect_bits(dm::log_scalar(-2.0f), from_bits<float>(0xffc00000u), "logf(-2)");
    expect_bits(dm::log_scalar(-inff), from_bits<float>(0xffc00000u), "logf(-inf)");
    expect_bits(dm::log_scalar(from_bits<float>(0x7f800001u)), from_bits<float>(0x7fc00000u),
                "logf(sNaN)");
    EXPECT_LE(ulp_error(dm::log_scalar(0x1p-149f), logl(0x1p-149L)), 1.0);
}

TEST(DeviceMathSpecials, Erf) {
    const double inf = std::numeric_limits<double>::infinity();
    const float inff = std::numeric_limits<float>::infinity();
    expect_bits(dm::erf_scalar(0.0), 0.0, "erf(+0)");
    expect_bits(dm::erf_scalar(-0.0), -0.0, "erf(-0)");
    expect_bits(dm::erf_scalar(inf), 1.0, "erf(inf)");
    expect_bits(dm::erf_scalar(-inf), -1.0, "erf(-inf)");
    expect_bits(dm::erf_scalar(from_bits<double>(0xfff4000000000123ull)),
                from_bits<double>(0x7ff8000000000000ull), "erf(-sNaN)");
    expect_bits(dm::erf_scalar(0.0f), 0.0f, "erff(+0)");
    expect_bits(dm::erf_scalar(-0.0f), -0.0f, "erff(-0)");
    expect_bits(dm::erf_scalar(inff), 1.0f, "erff(inf)");
    expect_bits(dm::erf_scalar(-inff), -1.0f, "erff(-inf)");
    expect_bits(dm::erf_scalar(from_bits<float>(0xffc01234u)), from_bits<float>(0x7fc00000u),
                "erff(-NaN)");
    // Subnormal and tiny inputs: RN(x * 2/sqrt(pi)), correctly rounded.
    const long double two_over_sqrt_pi = 1.1283791670955125738961589031215452L;
    for (double x :
         {0x1p-1074, 0x3p-1074, 0x1.234p-1030, 0x1.fffffp-1001, 0x1p-1000, 1e-300, -0x1.8p-1060}) {
        const long double ref = static_cast<long double>(x) * two_over_sqrt_pi;
        EXPECT_LE(ulp_error(dm::erf_scalar(x), ref), 0.5 + 1e-9) << "erf(" << x << ")";
        expect_bits(dm::erf_scalar(-x), -dm::erf_scalar(x), "erf odd");
    }
    for (float x : {0x1p-149f, 0x1.5p-140f, 0x1p-126f}) {
        const long double ref = static_cast<long double>(x) * two_over_sqrt_pi;
        EXPECT_LE(ulp_error(dm::erf_scalar(x), ref), 0.5 + 1e-9) << "erff(" << x << ")";
    }
}

// erf is odd bit for bit; log and exp behave across the whole float range without traps.
TEST(DeviceMathSpecials, ErfOddAndMonotoneNearOne) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0.0, 7.0);
    for (int i = 0; i < 20000; ++i) {
        const double x = u(rng);
        expect_bits(dm::erf_scalar(-x), -dm::erf_scalar(x), "erf(-x) == -erf(x)");
        const float xf = static_cast<float>(x);
        expect_bits(dm::erf_scalar(-xf), -dm::erf_scalar(xf), "erff(-x) == -erff(x)");
    }
}

// ---------------------------------------------------------------- one source of truth
// The generated header writes the erf coefficients twice, as columns for the SIMD kernels
// and as rows for the scalar / GPU code (tools/gen_erf_coefficients.py): entry by entry the
// same numbers.

template <class Tab>
void expect_rows_equal(const double (*rows)[Tab::degree + 3]) {
    for (int k = 0; k < 16; ++k) {
        EXPECT_EQ(rows[k][0], Tab::m[k]) << "m, interval " << k;
        EXPECT_EQ(rows[k][1], Tab::c0[k]) << "c0, interval " << k;
        EXPECT_EQ(rows[k][2], Tab::c1hi[k]) << "c1hi, interval " << k;
        EXPECT_EQ(rows[k][3], Tab::c1lo[k]) << "c1lo, interval " << k;
        for (int j = 0; j < Tab::degree - 1; ++j)
            EXPECT_EQ(rows[k][4 + j], Tab::c[j][k]) << "c" << j + 2 << ", interval " << k;
    }
}

TEST(DeviceMathTables, ErfRowsMatchSimdKernelTables) {
    using numfuse::kernels::erf_detail::erf_table_f32;
    using numfuse::kernels::erf_detail::erf_table_f64;
    static_assert(erf_table_f64::degree == NUMFUSE_ERF_F64_DEGREE, "run make regen");
    static_assert(erf_table_f32::degree == NUMFUSE_ERF_F32_DEGREE, "run make regen");
    expect_rows_equal<erf_table_f64>(dm::erf_detail::rows_f64_host);
    expect_rows_equal<erf_table_f32>(dm::erf_detail::rows_f32_host);
    EXPECT_EQ(erf_table_f64::xmax, NUMFUSE_ERF_F64_XMAX);
    EXPECT_EQ(erf_table_f64::qb, NUMFUSE_ERF_F64_QB);
    EXPECT_EQ(erf_table_f64::qc, NUMFUSE_ERF_F64_QC);
    EXPECT_EQ(erf_table_f64::qn, NUMFUSE_ERF_F64_QN);
    EXPECT_EQ(erf_table_f32::xmax, NUMFUSE_ERF_F32_XMAX);
    EXPECT_EQ(erf_table_f32::qb, NUMFUSE_ERF_F32_QB);
    EXPECT_EQ(erf_table_f32::qc, NUMFUSE_ERF_F32_QC);
    EXPECT_EQ(erf_table_f32::qn, NUMFUSE_ERF_F32_QN);
}

}  // namespace
