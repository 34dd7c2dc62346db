// erf through the core API (numfuse_core.hpp), for every usable instruction-set
// level: accuracy against a correctly rounded reference (<= 1 ULP is the contract;
// the bounds below are the measured maxima of src/core/kernels/erf.hpp plus a small
// margin, so a regression shows up before the contract breaks), special values bit
// for bit as scipy.special.erf, exact odd symmetry, correctly rounded subnormals, and
// the strided loop (sizes 0..70, strides -3..3, misaligned pointers, guard values
// around the output). Wider sweeps: benchmarks/cpp/accuracy_harness.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/erf.hpp"   // the avx2_fma float64 table (interval edges)
#include "kernels/erfc.hpp"  // the erfc table (interval edges)
#include "numfuse_core.hpp"

namespace {

using numfuse::core::DType;
using numfuse::core::Level;
using numfuse::core::UnaryLoop;
using numfuse::core::UnaryOp;

// The error bounds of src/core/kernels/erf.hpp, per dtype and level: the maxima measured
// by benchmarks/cpp/accuracy_harness.cpp (float64: 8 regions of 1e6 and of 2.5e6 random
// inputs, both signs; float32 through double: every 257th bit pattern; float32 lanes:
// all 2^32 bit patterns against glibc's double erf, mpmath at the worst), rounded up:
//   float64 sse2 (c1 kept as an exact pair):   0.663 ulp  (this test's sample: 0.642)
//   float64 avx512 (16 intervals, degree 11):   0.704 ulp  (this test's sample: 0.686)
//   float64 avx2_fma (760 intervals, degree 5): 0.734 ulp  (the harness, 8 regions of 1e6 at
//                                               x ~ -0.1049; of 1.25e7: 0.730; interpolation
//                                               error 0.16 at x ~ 0.1-0.2)
//   float32 through double (sse2, avx512):     0.517 ulp  (this test's sample: 0.520)
//   float32 lanes (avx2_fma, neon64):          0.635 ulp  (every float32, at +-0x1.009cdap-1)
constexpr double kMaxUlpF64Sse2 = 0.67;
constexpr double kMaxUlpF64Fma = 0.71;
constexpr double kMaxUlpF64Avx2 = 0.74;
constexpr double kMaxUlpF32 = 0.55;
constexpr double kMaxUlpF32Lanes = 0.64;

// Every level but x86's sse2 has a fused multiply-add (neon64 included).
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
bool level_has_fma(Level level) { return level != Level::sse2; }
// The level whose float32 erf runs in float32 lanes (erf_detail::f32_lanes).
bool level_f32_lanes(Level level) { return level == Level::avx2_fma; }
// The level whose float64 erf runs its own table (erf_detail::erf_abs_avx2).
bool level_f64_avx2(Level level) { return level == Level::avx2_fma; }
#else
bool level_has_fma(Level) { return true; }
// neon64 runs avx2_fma's float32-lane kernel (the same arithmetic, the same bits).
bool level_f32_lanes(Level) { return true; }
// neon64 runs avx2_fma's float64 row table (erf_detail::erf_abs_avx2, the same bits).
bool level_f64_avx2(Level) { return true; }
#endif

double max_ulp_f32(Level level) { return level_f32_lanes(level) ? kMaxUlpF32Lanes : kMaxUlpF32; }
double max_ulp_f64(Level level) {
    return level_f64_avx2(level)  ? kMaxUlpF64Avx2
           : level_has_fma(level) ? kMaxUlpF64Fma
                                  : kMaxUlpF64Sse2;
}

template <class T>
using erf_bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
erf_bits_t<T> bits_of(T v) {
    erf_bits_t<T> b;
    std::memcpy(&b, &v, sizeof v);
    return b;
}

template <class T>
T value_of(erf_bits_t<T> b) {
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

template <class T>
constexpr DType erf_dtype() {
    return sizeof(T) == 4 ? DType::f32 : DType::f64;
}

// x * 2/sqrt(pi) correctly rounded, for tiny x (where erf(x) is that product to far
// below an ulp and erfl is not correctly rounded in the subnormal range).
template <class T>
T tiny_reference(T x) {
#if defined(__SIZEOF_FLOAT128__)
    const __float128 c = static_cast<__float128>(0x1.20dd750429b6dp+0) +
                         static_cast<__float128>(0x1.1ae3a914fed80p-56) +
                         static_cast<__float128>(-0x1.3cbbebf65f145p-111);
    return static_cast<T>(static_cast<__float128>(x) * c);
#else
    return static_cast<T>(static_cast<long double>(x) * 1.12837916709551257389615890312154517L);
#endif
}

// |y - ref| in ulps of the format at ref (subnormal spacing below the normals).
template <class T>
double erf_ulp_error(T y, long double ref) {
    if (std::isnan(y)) return 1e9;
    int e = 0;
    std::frexp(std::fabs(ref), &e);
    if (ref == 0 || e < std::numeric_limits<T>::min_exponent)
        e = std::numeric_limits<T>::min_exponent;
    const long double ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
    return static_cast<double>(std::fabs(static_cast<long double>(y) - ref) / ulp);
}

class Erf : public ::testing::TestWithParam<Level> {
protected:
    template <class T>
    UnaryLoop loop() const {
        UnaryLoop f = numfuse::core::unary_loop(UnaryOp::erf, erf_dtype<T>(), GetParam());
        EXPECT_NE(f, nullptr);
        return f;
    }
    // Runs the contiguous loop; also checks that erf reports no floating-point flags.
    template <class T>
    std::vector<T> run(const std::vector<T>& x) const {
        std::vector<T> y(x.size());
        const unsigned flags = loop<T>()(reinterpret_cast<const char*>(x.data()), sizeof(T),
                                         reinterpret_cast<char*>(y.data()), sizeof(T), x.size());
        EXPECT_EQ(flags, 0u) << "erf raises no floating-point conditions";
        return y;
    }
    // Accuracy of y = erf(x) and bitwise odd symmetry erf(-x) == -erf(x).
    template <class T>
    void check_accuracy(const std::vector<T>& x, double bound, const char* what) const {
        std::vector<T> neg(x.size());
        for (size_t i = 0; i < x.size(); ++i) neg[i] = -x[i];
        const std::vector<T> y = run(x), yn = run(neg);
        double worst = 0;
        T worst_x = 0;
        size_t asym = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            if (std::isnan(x[i])) continue;
            if (bits_of(yn[i]) != bits_of(static_cast<T>(-y[i]))) ++asym;
            // erfl below 2^-100 is x*2/sqrt(pi) anyway; the long double product keeps 64
            // bits even where the double / float result is subnormal
            const long double ref =
                std::fabs(x[i]) < T(0x1p-100)
                    ? static_cast<long double>(x[i]) * 1.12837916709551257389615890312154517L
                    : erfl(static_cast<long double>(x[i]));
            const double err = erf_ulp_error(y[i], ref);
            if (err > worst) {
                worst = err;
                worst_x = x[i];
            }
        }
        EXPECT_LE(worst, bound) << what << ": worst input " << std::hexfloat << worst_x;
        EXPECT_LE(worst, 1.0) << what << ": the 1 ULP contract";
        EXPECT_EQ(asym, 0u) << what << ": erf(-x) != -erf(x) bitwise";
    }
};

TEST_P(Erf, Float32StridedBitPatternsWithinBound) {
    // every 4099th positive bit pattern (~520k inputs, all exponents), and their negatives
    std::vector<float> x;
    for (std::uint64_t u = 0; u < 0x80000000ull; u += 4099)
        x.push_back(value_of<float>(static_cast<std::uint32_t>(u)));
    // plus a dense run where erf bends most and around the saturation point
    for (float v = 0.25f; v < 1.5f; v = std::nextafter(v, 2.0f) + 2e-6f) x.push_back(v);
    for (float v = 3.85f; v < 4.0f; v = std::nextafter(v, 5.0f)) x.push_back(v);
    check_accuracy(x, max_ulp_f32(GetParam()), "f32");
}

// Around every interval edge of the float32-lane kernel (k/2 for k = 1..7, where the
// table row changes; xmax, where the clamp starts; 2^-126 and tiny = 2^-32, below which
// the repair path computes x * 2/sqrt(pi)) and of the float64 one's float32 table: the 200 floats
// on each side, both signs. A wrong edge (a lane taking its neighbour's row or centre) shows as a
// large error.
TEST_P(Erf, Float32IntervalEdgesBothSigns) {
    using Tab = numfuse::kernels::erf_detail::erf_table_f32_lanes;
    std::vector<float> edges = {Tab::xmax, 0x1p-126f, Tab::tiny};
    for (int k = 1; k < 8; ++k) edges.push_back(static_cast<float>(k) / Tab::scale);
    std::vector<float> x;
    for (const float e : edges) {
        const std::uint32_t b = bits_of(e);
        for (std::uint32_t d = 0; d <= 400; ++d) x.push_back(value_of<float>(b - 200 + d));
    }
    check_accuracy(x, max_ulp_f32(GetParam()), "f32 edges");  // negatives included
    // and beyond xmax everything is exactly 1
    std::vector<float> big;
    for (std::uint32_t d = 1; d <= 4096; ++d)
        big.push_back(value_of<float>(bits_of(Tab::xmax) + d));
    const std::vector<float> yb = run(big);
    for (size_t i = 0; i < big.size(); ++i) ASSERT_EQ(yb[i], 1.0f) << std::hexfloat << big[i];
}

// Every NaN bit pattern class (quiet / signalling, both signs, payloads) gives the
// canonical +qNaN 0x7fc00000, in every lane position of a batch and its tail, next to
// ordinary lanes that keep their own values.
TEST_P(Erf, Float32NanPayloadsInEveryLane) {
    const std::uint32_t nans[] = {0x7f800001u, 0x7fbfffffu, 0x7fc00000u, 0x7fc00001u, 0x7fffffffu,
                                  0xff800001u, 0xffc00000u, 0xffffffffu, 0x7fd23456u, 0xffa5a5a5u};
    for (size_t n = 1; n <= 40; ++n) {
        std::vector<float> base(n);
        for (size_t i = 0; i < n; ++i) base[i] = 0.37f * static_cast<float>(i) - 3.1f;
        const std::vector<float> want = run(base);
        for (size_t pos = 0; pos < n; ++pos) {
            std::vector<float> x = base;
            x[pos] = value_of<float>(nans[(n + pos) % 10]);
            const std::vector<float> y = run(x);
            for (size_t i = 0; i < n; ++i) {
                const std::uint32_t w = i == pos ? 0x7fc00000u : bits_of(want[i]);
                ASSERT_EQ(bits_of(y[i]), w) << "n=" << n << " nan at " << pos << " lane " << i;
            }
        }
    }
}

// A long array with sparse subnormal, zero and NaN lanes (the rescan path of the deferred
// loop) gives the results of the elements one at a time.
TEST_P(Erf, Float32SparseSpecialsMatchOneAtATime) {
    std::mt19937 rng(29);
    std::uniform_real_distribution<float> u(-4.5f, 4.5f);
    std::vector<float> x(20011);
    for (auto& v : x) v = u(rng);
    for (int i = 0; i < 60; ++i) {
        const size_t at = rng() % x.size();
        switch (i % 4) {
            case 0:
                x[at] = value_of<float>(static_cast<std::uint32_t>(1u + rng() % 0x007fffffu));
                break;
            case 1:
                x[at] = -value_of<float>(static_cast<std::uint32_t>(1u + rng() % 0x007fffffu));
                break;
            case 2:
                x[at] =
                    value_of<float>(static_cast<std::uint32_t>(0xffc00000u | (rng() & 0x3fffffu)));
                break;
            default: x[at] = (rng() & 1) ? 0.0f : -0.0f; break;
        }
    }
    const std::vector<float> y = run(x);
    for (size_t i = 0; i < x.size(); ++i) {
        const std::vector<float> one = run(std::vector<float>{x[i]});
        ASSERT_EQ(bits_of(y[i]), bits_of(one[0])) << std::hexfloat << "x=" << x[i] << " at " << i;
    }
}

TEST_P(Erf, Float64RandomWithinBound) {
    std::mt19937_64 rng(2024);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    std::vector<double> x(1 << 20);
    for (size_t i = 0; i < x.size(); ++i) {
        switch (i % 7) {
            case 0: x[i] = 6.0 * u01(rng); break;                            // whole range
            case 1: x[i] = 1.5 * u01(rng); break;                            // steepest part
            case 2: x[i] = std::exp2(-1074.0 + 1077.0 * u01(rng)); break;  // every binade
            case 3: x[i] = value_of<double>(rng()); break;                  // any bit pattern
            case 4: x[i] = 5.5 + u01(rng); break;                            // saturation
            case 5: x[i] = 0.07 + 0.18 * u01(rng); break;  // avx2_fma's worst fitted rows
            default: x[i] = 0.3 + 0.3 * u01(rng); break;                     // first intervals
        }
    }
    check_accuracy(x, max_ulp_f64(GetParam()), "f64");
}

// scipy.special.erf: erf(+-0) = +-0, erf(+-inf) = +-1, every NaN -> +qNaN (positive,
// canonical payload), |x| beyond the saturation point -> +-1 exactly.
TEST_P(Erf, SpecialValuesBitIdenticalToScipy) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> x64 = {0.0,
                                     -0.0,
                                     inf,
                                     -inf,
                                     value_of<double>(0x7ff8000000000000ull),
                                     value_of<double>(0xfff8000000000000ull),
                                     value_of<double>(0x7ff0000000000001ull),  // signalling
                                     value_of<double>(0xfff4000000000123ull),  // negative, payload
                                     5.921875,
                                     6.0,
                                     -27.5,
                                     1e300,
                                     std::numeric_limits<double>::max()};
    const std::vector<double> y64 = run(x64);
    for (size_t i = 0; i < x64.size(); ++i) {
        const double x = x64[i];
        const double want = std::isnan(x) ? value_of<double>(0x7ff8000000000000ull)
                            : x == 0      ? x
                                          : std::copysign(1.0, x);
        EXPECT_EQ(bits_of(y64[i]), bits_of(want))
            << std::hexfloat << "f64 x=" << x << " got " << y64[i];
    }
    const float finf = std::numeric_limits<float>::infinity();
    const std::vector<float> x32 = {0.0f,
                                    -0.0f,
                                    finf,
                                    -finf,
                                    value_of<float>(0x7fc00000u),
                                    value_of<float>(0xffc00000u),
                                    value_of<float>(0x7f800001u),
                                    value_of<float>(0xff812345u),
                                    3.92f,
                                    4.0f,
                                    -100.0f,
                                    std::numeric_limits<float>::max()};
    const std::vector<float> y32 = run(x32);
    for (size_t i = 0; i < x32.size(); ++i) {
        const float x = x32[i];
        const float want = std::isnan(x) ? value_of<float>(0x7fc00000u)
                           : x == 0      ? x
                                         : std::copysign(1.0f, x);
        EXPECT_EQ(bits_of(y32[i]), bits_of(want))
            << std::hexfloat << "f32 x=" << x << " got " << y32[i];
    }
    // the last float64 / float32 below 1 are reached, and 1 - ulp/2 is never exceeded
    EXPECT_EQ(run(std::vector<double>{5.9})[0], std::nextafter(1.0, 0.0));
    EXPECT_EQ(run(std::vector<float>{3.8f})[0], std::nextafter(1.0f, 0.0f));
}

// Subnormal (and tiny normal) inputs give x * 2/sqrt(pi) correctly rounded, both signs.
TEST_P(Erf, SubnormalsCorrectlyRounded) {
    std::mt19937_64 rng(11);
    std::vector<double> x64;
    for (int i = 0; i < 52; ++i) x64.push_back(value_of<double>(1ull << i));
    for (int i = 0; i < 20000; ++i) {
        x64.push_back(value_of<double>((rng() & 0x000fffffffffffffull) >> (rng() % 52)));
        x64.push_back(value_of<double>(rng() & 0x0fffffffffffffffull) * 0x1p-900);  // tiny normals
    }
    for (size_t i = 0, n = x64.size(); i < n; ++i) x64.push_back(-x64[i]);
    const std::vector<double> y64 = run(x64);
    size_t bad = 0;
    for (size_t i = 0; i < x64.size(); ++i) {
        if (std::fabs(x64[i]) >= 0x1p-1000) continue;  // tiny normals: accuracy test covers them
        const double want = tiny_reference(x64[i]);
        if (bits_of(y64[i]) != bits_of(want)) {
            if (++bad < 10)
                ADD_FAILURE() << std::hexfloat << "f64 x=" << x64[i] << " got " << y64[i]
                              << " want " << want;
        }
    }
    EXPECT_EQ(bad, 0u);
    std::vector<float> x32;  // every float32 subnormal
    for (std::uint32_t u = 1; u < 0x00800000u; ++u) x32.push_back(value_of<float>(u));
    for (size_t i = 0, n = x32.size(); i < n; ++i) x32.push_back(-x32[i]);
    const std::vector<float> y32 = run(x32);
    bad = 0;
    for (size_t i = 0; i < x32.size(); ++i) {
        const float want = tiny_reference(x32[i]);
        if (bits_of(y32[i]) != bits_of(want)) {
            if (++bad < 10)
                ADD_FAILURE() << std::hexfloat << "f32 x=" << x32[i] << " got " << y32[i]
                              << " want " << want;
        }
    }
    EXPECT_EQ(bad, 0u);
}

// Any size, stride and alignment gives exactly the contiguous results, and nothing
// but the n output elements is written.
template <class T>
void erf_check_strides(UnaryLoop f) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-7.0, 7.0);
    const T pool[] = {std::numeric_limits<T>::quiet_NaN(),
                      -std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(),
                      T(0),
                      T(-0.0),
                      std::numeric_limits<T>::denorm_min(),
                      -std::numeric_limits<T>::min(),
                      T(0.5),
                      T(1e30)};
    const size_t sz = sizeof(T);
    const unsigned char guard = 0xa5;
    for (size_t n = 0; n <= 70; ++n) {
        std::vector<T> src(n);
        for (size_t i = 0; i < n; ++i)
            src[i] = (rng() % 4 == 0) ? pool[rng() % 10] : static_cast<T>(u(rng));
        std::vector<T> want(n);
        f(reinterpret_cast<const char*>(src.data()), static_cast<std::ptrdiff_t>(sz),
          reinterpret_cast<char*>(want.data()), static_cast<std::ptrdiff_t>(sz), n);
        for (int is = -3; is <= 3; ++is) {
            for (int os = -3; os <= 3; ++os) {
                if (os == 0) continue;  // every element to one place: order unspecified
                for (size_t mis : {size_t(0), size_t(1), size_t(3)}) {
                    const size_t pad = 2 * sz;  // guard bytes on each side
                    const size_t span_in = (n ? (n - 1) * size_t(std::abs(is)) + 1 : 0) * sz;
                    const size_t span_out = (n ? (n - 1) * size_t(std::abs(os)) + 1 : 0) * sz;
                    std::vector<char> inbuf(span_in + 2 * pad + mis, 0);
                    std::vector<unsigned char> outbuf(span_out + 2 * pad + mis, guard);
                    // element i lives at p0 + i*stride; a negative stride starts at the far end
                    char* in0 = inbuf.data() + pad + mis + (is < 0 ? span_in - sz : 0);
                    unsigned char* out0 = outbuf.data() + pad + mis + (os < 0 ? span_out - sz : 0);
                    const std::ptrdiff_t ins = is * static_cast<std::ptrdiff_t>(sz);
                    const std::ptrdiff_t outs = os * static_cast<std::ptrdiff_t>(sz);
                    for (size_t i = 0; i < n; ++i)  // stride 0: every element reads src[0]
                        std::memcpy(in0 + static_cast<std::ptrdiff_t>(i) * ins,
                                    &src[is == 0 ? 0 : i], sz);
                    std::vector<unsigned char> expect(outbuf);
                    const std::ptrdiff_t out_off = out0 - outbuf.data();
                    for (size_t i = 0; i < n; ++i)
                        std::memcpy(&expect[static_cast<size_t>(
                                        out_off + static_cast<std::ptrdiff_t>(i) * outs)],
                                    &want[is == 0 ? 0 : i], sz);
                    const unsigned flags = f(in0, ins, reinterpret_cast<char*>(out0), outs, n);
                    ASSERT_EQ(0, std::memcmp(outbuf.data(), expect.data(), outbuf.size()))
                        << (sz == 4 ? "f32" : "f64") << " n=" << n << " in_stride=" << is
                        << " out_stride=" << os << " misaligned=" << mis;
                    ASSERT_EQ(flags, 0u);
                }
            }
        }
    }
}

TEST_P(Erf, StridesSizesAlignmentAndGuards) {
    erf_check_strides<float>(loop<float>());
    erf_check_strides<double>(loop<double>());
}

// Both sides of every interval boundary of the avx2_fma float64 table (its 759 edges at
// (k + n0 - 1/2) / scale; the kernel's index rounds there, so either neighbour's
// polynomial may serve an input), within 64 ulps and 2^-30 of each edge, on every level.
TEST_P(Erf, Float64Avx2TableEdgesWithinBound) {
    using A = numfuse::kernels::erf_detail::erf_table_f64_avx2;
    std::mt19937_64 rng(5);
    std::vector<double> x;
    for (int k = 1; k < A::count; ++k) {
        const double edge = (k + A::n0 - 0.5) / A::scale;
        const double ulp = std::nextafter(edge, 7.0) - edge;
        for (int d = -64; d <= 64; ++d) x.push_back(edge + d * ulp);
        std::uniform_real_distribution<double> near(edge - 0x1p-30, edge + 0x1p-30);
        for (int i = 0; i < 64; ++i) x.push_back(near(rng));
    }
    check_accuracy(x, max_ulp_f64(GetParam()), "f64 avx2 table edges");
}

INSTANTIATE_TEST_SUITE_P(Levels, Erf, ::testing::ValuesIn(numfuse::core::usable_levels()),
                         [](const ::testing::TestParamInfo<Level>& info) {
                             return std::string(numfuse::core::level_name(info.param));
                         });

// ---------------------------------------------------------------------------- erfc
// erfc_kernel (src/core/kernels/erfc.hpp) through the erfc ufunc loop, against erfcl (x87
// long double / binary128: ~2^-11 float64 ulp or better, subnormal float64 tail included,
// where erfcl is still normal). Bounds: the maxima measured by
// benchmarks/cpp/accuracy_harness.cpp (10 regions of 5e5 float64 inputs, both signs, the
// subnormal tail and the interval edges; float32: every 257th bit pattern), rounded up:
//   float64 sse2:      0.800 ulp  (this test's sample: 0.668)
//   float64 avx2_fma:  0.740 ulp  (this test's sample: 0.647)
//   float32:           0.500 ulp  (float64 kernel, rounded once)
constexpr double kMaxUlpErfcF64 = 0.81;
constexpr double kMaxUlpErfcF32 = 0.51;

class Erfc : public ::testing::TestWithParam<Level> {
protected:
    template <class T>
    UnaryLoop loop() const {
        UnaryLoop f = numfuse::core::unary_loop(UnaryOp::erfc, erf_dtype<T>(), GetParam());
        EXPECT_NE(f, nullptr);
        return f;
    }
    template <class T>
    std::vector<T> run(const std::vector<T>& x) const {
        std::vector<T> y(x.size());
        const unsigned flags = loop<T>()(reinterpret_cast<const char*>(x.data()), sizeof(T),
                                         reinterpret_cast<char*>(y.data()), sizeof(T), x.size());
        EXPECT_EQ(flags, 0u) << "erfc raises no floating-point conditions (as scipy.special)";
        return y;
    }
    template <class T>
    void check_accuracy(const std::vector<T>& x, double bound, const char* what) const {
        const std::vector<T> y = run(x);
        double worst = 0;
        T worst_x = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            if (std::isnan(x[i])) continue;
            const double err = erf_ulp_error(y[i], erfcl(static_cast<long double>(x[i])));
            if (err > worst) {
                worst = err;
                worst_x = x[i];
            }
        }
        EXPECT_LE(worst, bound) << what << ": worst input " << std::hexfloat << worst_x;
        EXPECT_LE(worst, 1.0) << what << ": the 1 ULP contract";
    }
};

TEST_P(Erfc, Float64RegionsWithinBound) {
    using Tab = numfuse::kernels::erfc_detail::erfc_table;
    std::mt19937_64 rng(77);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    std::vector<double> x(1 << 19);
    for (size_t i = 0; i < x.size(); ++i) {
        switch (i % 8) {
            case 0: x[i] = -6.0 + 12.0 * u01(rng); break;  // both signs
            case 1: x[i] = 0.4 + 1.6 * u01(rng); break;  // where erfc < 1/2
            case 2: x[i] = 2.0 + 25.3 * u01(rng); break;  // the long tail
            case 3: x[i] = 26.5 + 0.8 * u01(rng); break;  // subnormal results
            case 4: x[i] = -(0.4 + 5.6 * u01(rng)); break;  // 2 - erfc(|x|)
            case 5: x[i] = std::exp2(-1074.0 + 1079.0 * u01(rng)); break;  // every binade
            case 6: x[i] = value_of<double>(rng()); break;  // any bit pattern
            default: {  // interval edges
                const std::uint64_t k = 1 + rng() % (Tab::entries - 2);
                const std::uint64_t edge = static_cast<std::uint64_t>(Tab::key0) + k;
                x[i] = value_of<double>((edge << 49) - 16 + rng() % 32);
                break;
            }
        }
    }
    check_accuracy(x, kMaxUlpErfcF64, "f64");
}

TEST_P(Erfc, Float32StridedBitPatternsWithinBound) {
    std::vector<float> x;
    for (std::uint64_t u = 0; u < 0x100000000ull; u += 4099)
        x.push_back(value_of<float>(static_cast<std::uint32_t>(u)));
    // every float where erfc is a float32 subnormal or the last normals
    for (float v = 9.0f; v < 10.1f; v = std::nextafter(v, 11.0f)) x.push_back(v);
    check_accuracy(x, kMaxUlpErfcF32, "f32");
}

// scipy.special.erfc: erfc(+-0) = 1, erfc(+inf) = +0, erfc(-inf) = 2, every NaN -> +qNaN
// (sign and payload dropped); +0 beyond the subnormal tail, 2 far left; subnormal results
// are the exact value rounded (scipy flushes some of them to 0).
TEST_P(Erfc, SpecialValuesAsScipy) {
    const double inf = std::numeric_limits<double>::infinity();
    const double qnan = value_of<double>(0x7ff8000000000000ull);
    const std::vector<double> x64 = {0.0,
                                     -0.0,
                                     inf,
                                     -inf,
                                     qnan,
                                     value_of<double>(0xfff8000000000000ull),
                                     value_of<double>(0x7ff0000000000001ull),
                                     value_of<double>(0xfff4000000000123ull),
                                     27.3,
                                     1e300,
                                     -6.0,
                                     -1e300,
                                     std::numeric_limits<double>::denorm_min(),
                                     -std::numeric_limits<double>::denorm_min()};
    const std::vector<double> want64 = {1.0,  1.0, 0.0, 2.0, qnan, qnan, qnan,
                                        qnan, 0.0, 0.0, 2.0, 2.0,  1.0,  1.0};
    const std::vector<double> y64 = run(x64);
    for (size_t i = 0; i < x64.size(); ++i) {
        EXPECT_EQ(bits_of(y64[i]), bits_of(want64[i]))
            << std::hexfloat << "f64 x=" << x64[i] << " got " << y64[i];
    }
    const float finf = std::numeric_limits<float>::infinity();
    const float fqnan = value_of<float>(0x7fc00000u);
    const std::vector<float> x32 = {0.0f,
                                    -0.0f,
                                    finf,
                                    -finf,
                                    fqnan,
                                    value_of<float>(0xffc00000u),
                                    value_of<float>(0x7f800001u),
                                    10.1f,
                                    -4.0f};
    const std::vector<float> want32 = {1.0f, 1.0f, 0.0f, 2.0f, fqnan, fqnan, fqnan, 0.0f, 2.0f};
    const std::vector<float> y32 = run(x32);
    for (size_t i = 0; i < x32.size(); ++i) {
        EXPECT_EQ(bits_of(y32[i]), bits_of(want32[i]))
            << std::hexfloat << "f32 x=" << x32[i] << " got " << y32[i];
    }
    // the subnormal tail: the smallest subnormal is reached and is the last nonzero result
    const std::vector<double> tail = run(std::vector<double>{26.55, 27.2, 27.22, 27.25});
    EXPECT_GT(tail[0], 0.0);
    EXPECT_LT(tail[0], std::numeric_limits<double>::min());
    EXPECT_EQ(tail[1], static_cast<double>(erfcl(27.2L)));
    EXPECT_EQ(tail[3], 0.0);
}

TEST_P(Erfc, StridesSizesAlignmentAndGuards) {
    erf_check_strides<float>(loop<float>());
    erf_check_strides<double>(loop<double>());
}

INSTANTIATE_TEST_SUITE_P(Levels, Erfc, ::testing::ValuesIn(numfuse::core::usable_levels()),
                         [](const ::testing::TestParamInfo<Level>& info) {
                             return std::string(numfuse::core::level_name(info.param));
                         });

}  // namespace
