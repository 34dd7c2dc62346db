// exp and log through the core API (numfuse_core.hpp), for every usable
// instruction-set level: accuracy (<= 1 ULP against a correctly rounded
// reference: the bound of src/core/kernels/exp.hpp and log.hpp), special values
// bit for bit as NumPy, and the strided loop (sizes 0..70, strides -3..3,
// misaligned pointers, no writes outside). Wider sweeps and the measured maxima:
// benchmarks/cpp/accuracy_harness.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/log.hpp"  // log32_recip16, for the neon64 float32 log's cell test
#include "numfuse_core.hpp"

namespace {

using numfuse::core::DType;
using numfuse::core::Level;
using numfuse::core::UnaryLoop;
using numfuse::core::UnaryOp;

template <class T>
constexpr DType dtype_of() {
    return sizeof(T) == 4 ? DType::f32 : DType::f64;
}

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

class ExpLog : public ::testing::TestWithParam<Level> {
protected:
    UnaryLoop loop(UnaryOp op, DType dt) const {
        UnaryLoop f = numfuse::core::unary_loop(op, dt, GetParam());
        EXPECT_NE(f, nullptr);
        return f;
    }
    template <class T>
    std::vector<T> run(UnaryOp op, const std::vector<T>& x) const {
        std::vector<T> y(x.size());
        loop(op, dtype_of<T>())(reinterpret_cast<const char*>(x.data()), sizeof(T),
                                reinterpret_cast<char*>(y.data()), sizeof(T), x.size());
        return y;
    }
};

// |y - ref| in units of the last place of the reference (subnormal spacing
// below the normal range). An infinite correctly rounded reference must be
// matched exactly. A value < 1 here means at most 1 ULP from the correctly
// rounded result.
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

struct Worst {
    double err = 0;
    long double x = 0;
    void add(double e, long double v) {
        if (e > err) err = e, x = v;
    }
};

// float32: every 1021st bit pattern (about 4.2 million inputs, all binades),
// against double libm, which is accurate to far below a float ulp.
TEST_P(ExpLog, Float32StridedSweepWithin1Ulp) {
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::log}) {
        const bool is_exp = op == UnaryOp::exp;
        std::vector<float> x;
        x.reserve((1ull << 32) / 1021 + 1);
        for (std::uint64_t u = 7; u < (1ull << 32); u += 1021) {
            const float v = from_bits<float>(static_cast<std::uint32_t>(u));
            if (std::isnan(v) || (!is_exp && v <= 0)) continue;
            x.push_back(v);
        }
        // the edges: overflow / underflow thresholds and around 1
        for (float v :
             {88.72283f, 88.72284f, -87.33654f, -103.97208f, -103.27893f, 1.0f,
              std::nextafter(1.0f, 0.0f), std::nextafter(1.0f, 2.0f), 0x1p-149f, 0x1p-126f}) {
            if (is_exp || v > 0) x.push_back(v);
        }
        const std::vector<float> y = run(op, x);
        Worst w;
        for (size_t i = 0; i < x.size(); ++i) {
            const double xd = x[i];
            w.add(ulp_error<float>(y[i], is_exp ? std::exp(xd) : std::log(xd)), x[i]);
        }
        EXPECT_LT(w.err, 1.0) << unary_op_name(op) << " f32 worst at " << static_cast<double>(w.x);
        RecordProperty(std::string(unary_op_name(op)) + "_f32_max_ulp", std::to_string(w.err));
    }
}

// The float32 log family and expm1 (kernels/logbase_f32.hpp, logpair.hpp, hyperbolic_f32.hpp:
// float32 table kernels at avx2_fma and neon64, whose neon64 forms differ from avx2_fma's in
// the log's cell choice and in divisions for reciprocal estimates): every 1021st bit pattern
// of each domain plus the edges of the kernels' paths, against double libm.
TEST_P(ExpLog, Float32LogFamilyStridedSweepWithin1Ulp) {
    struct Row {
        UnaryOp op;
        double (*ref)(double);
        float lo, hi;  // the domain's open interval
    };
    const float inf = std::numeric_limits<float>::infinity();
    const Row rows[] = {
        {UnaryOp::log2, [](double v) { return std::log2(v); }, 0.0f, inf},
        {UnaryOp::log10, [](double v) { return std::log10(v); }, 0.0f, inf},
        {UnaryOp::log1p, [](double v) { return std::log1p(v); }, -1.0f, inf},
        {UnaryOp::arcsinh, [](double v) { return std::asinh(v); }, -inf, inf},
        {UnaryOp::arccosh, [](double v) { return std::acosh(v); }, 1.0f, inf},
        {UnaryOp::arctanh, [](double v) { return std::atanh(v); }, -1.0f, 1.0f},
        {UnaryOp::expm1, [](double v) { return std::expm1(v); }, -inf, inf},
    };
    for (const Row& row : rows) {
        std::vector<float> x;
        x.reserve((1ull << 32) / 1021 + 1000);
        for (std::uint64_t u = 7; u < (1ull << 32); u += 1021) {
            x.push_back(from_bits<float>(static_cast<std::uint32_t>(u)));
        }
        for (const float e : {1.0f, 0x1.0p-25f, 0x1.0p-12f, 0x1.0p-7f, 0x1.0p12f, 0.75f, 1.5f, 0.5f,
                              2.0f, 16.0f, 88.72283f, 0x1.0p-126f, 0x1.0p-149f}) {
            for (const float s : {e, -e}) {
                float v = s;
                for (int k = 0; k < 64; ++k, v = std::nextafter(v, inf)) x.push_back(v);
                v = s;
                for (int k = 0; k < 64; ++k, v = std::nextafter(v, -inf)) x.push_back(v);
            }
        }
        std::vector<float> in;
        for (const float v : x) {
            if (v > row.lo && v < row.hi) in.push_back(v);
        }
        const std::vector<float> y = run(row.op, in);
        Worst w;
        for (size_t i = 0; i < in.size(); ++i) {
            w.add(ulp_error<float>(y[i], row.ref(in[i])), in[i]);
        }
        EXPECT_LT(w.err, 1.0) << unary_op_name(row.op) << " f32 worst at "
                              << static_cast<double>(w.x);
        RecordProperty(std::string(unary_op_name(row.op)) + "_f32_max_ulp", std::to_string(w.err));
    }
}

// float64: random bit patterns and uniform draws over the interesting ranges,
// against expl / logl (80-bit long double, ~2^-63 relative).
TEST_P(ExpLog, Float64RandomWithin1Ulp) {
    std::mt19937_64 rng(2024);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const size_t per_region = 150000;
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::log}) {
        const bool is_exp = op == UnaryOp::exp;
        std::vector<double> x;
        auto uniform = [&](double lo, double hi) {
            for (size_t i = 0; i < per_region; ++i) x.push_back(lo + (hi - lo) * unit(rng));
        };
        for (size_t i = 0; i < per_region; ++i) {
            std::uint64_t b = rng();
            if (!is_exp) b &= ~(1ull << 63);
            const double v = from_bits<double>(b);
            if (!std::isnan(v) && (is_exp || v > 0)) x.push_back(v);
        }
        if (is_exp) {
            uniform(-1.0, 1.0);
            uniform(-745.2, 709.8);
            uniform(-745.2, -708.0);  // subnormal results
            uniform(700.0, 709.8);
        } else {
            uniform(0.0, 4.0);
            uniform(1.0 - 1.0 / 16, 1.0 + 1.0 / 16);
            uniform(1.0 - 1e-7, 1.0 + 1e-7);
            for (size_t i = 0; i < per_region; ++i) {  // subnormal inputs
                const double v = from_bits<double>(rng() & 0x000fffffffffffffull);
                if (v > 0) x.push_back(v);
            }
        }
        const std::vector<double> y = run(op, x);
        Worst w;
        for (size_t i = 0; i < x.size(); ++i) {
            const long double xl = x[i];
            w.add(ulp_error<double>(y[i], is_exp ? expl(xl) : logl(xl)), xl);
        }
        EXPECT_LT(w.err, 1.0) << unary_op_name(op) << " f64 worst at " << static_cast<double>(w.x);
        RecordProperty(std::string(unary_op_name(op)) + "_f64_max_ulp", std::to_string(w.err));
    }
}

// log's reduction edges, both dtypes: every power of two (subnormal ones included), the
// float32 table kernels' cell edges (m = 32 / (2j + 1), where round(16 rcp(m)) may pick either
// neighbouring cell, on AVX2 with rcpps's 12 bits) and the float64 table's cell edges (the
// top four fraction bits of m - 0.640625 change) with a few ULPs either side in many
// binades, the region around 1 ULP by ULP, and subnormals spaced evenly and at the bottom.
template <class T>
std::vector<T> log_edge_inputs() {
    std::vector<T> x;
    const int digits = std::numeric_limits<T>::digits;
    const int emin = std::numeric_limits<T>::min_exponent - digits;  // smallest subnormal's
    const int emax = std::numeric_limits<T>::max_exponent;
    auto around = [&](T v, int n) {
        T lo = v, hi = v;
        x.push_back(v);
        for (int i = 0; i < n; ++i) {
            lo = std::nextafter(lo, T(0));
            hi = std::nextafter(hi, std::numeric_limits<T>::infinity());
            if (lo > 0) x.push_back(lo);
            if (std::isfinite(hi)) x.push_back(hi);
        }
    };
    for (int e = emin; e < emax; ++e) around(std::ldexp(T(1), e), 3);
    std::vector<T> edges;
    for (int j = 11; j <= 21; ++j) edges.push_back(T(32) / T(2 * j + 1));
    for (int i = 0; i <= 16; ++i) edges.push_back(T(0.640625) * (T(1) + T(i) / T(16)));
    for (int e : {-149, -140, -126, -125, -60, -1, 0, 1, 2, 30, 126}) {
        for (T m : edges) {
            const T v = std::ldexp(m, e);
            if (v > 0 && std::isfinite(v)) around(v, 4);
        }
    }
    around(T(1), 2000);
    for (bits_t<T> b = 1; b < 20000; ++b) x.push_back(from_bits<T>(b));
    const bits_t<T> sub_top = (bits_t<T>(1) << (digits - 1)) - 1;
    for (bits_t<T> b = 1; b <= 20000; ++b) x.push_back(from_bits<T>(b * (sub_top / 20000)));
    return x;
}

template <class T>
void check_log_edges(UnaryLoop f) {
    const std::vector<T> x = log_edge_inputs<T>();
    std::vector<T> y(x.size());
    f(reinterpret_cast<const char*>(x.data()), sizeof(T), reinterpret_cast<char*>(y.data()),
      sizeof(T), x.size());
    Worst w;
    for (size_t i = 0; i < x.size(); ++i) {
        const long double xl = x[i];
        w.add(ulp_error<T>(y[i], sizeof(T) == 4 ? std::log(static_cast<double>(x[i])) : logl(xl)),
              xl);
        if (x[i] == T(1)) {
            EXPECT_EQ(to_bits<T>(y[i]), bits_t<T>(0));  // log(1) = +0
        }
    }
    EXPECT_LT(w.err, 1.0) << (sizeof(T) == 4 ? "f32" : "f64") << " log worst at "
                          << static_cast<double>(w.x) << " of " << x.size();
}

TEST_P(ExpLog, LogReductionEdgesWithin1Ulp) {
    check_log_edges<float>(loop(UnaryOp::log, DType::f32));
    check_log_edges<double>(loop(UnaryOp::log, DType::f64));
}

template <class T>
struct Special {
    UnaryOp op;
    bits_t<T> in, out;
};

template <class T>
void check_specials(const ExpLog& t, UnaryOp op, const std::vector<Special<T>>& cases,
                    UnaryLoop f) {
    (void)t;
    std::vector<T> x, y;
    for (const auto& c : cases)
        if (c.op == op) x.push_back(from_bits<T>(c.in));
    y.resize(x.size());
    f(reinterpret_cast<const char*>(x.data()), sizeof(T), reinterpret_cast<char*>(y.data()),
      sizeof(T), x.size());
    size_t k = 0;
    for (const auto& c : cases) {
        if (c.op != op) continue;
        EXPECT_EQ(to_bits<T>(y[k]), c.out)
            << unary_op_name(op) << (sizeof(T) == 4 ? " f32" : " f64") << " of bits 0x" << std::hex
            << c.in;
        ++k;
    }
}

// Bit for bit as NumPy 2.x (checked on x86-64 and, under qemu, aarch64): f64 keeps
// a NaN's payload and sign (quieting an sNaN); f32 returns the canonical +qNaN
// for every NaN on x86-64 (NumPy's SIMD loops) and keeps it, quieted, on aarch64
// (NumPy's loops are the C library's); log of a negative number is the default
// NaN with the sign bit set (the Python bindings switch to NumPy's where it differs).
TEST_P(ExpLog, SpecialValuesBitIdenticalToNumPy) {
    const double inf = std::numeric_limits<double>::infinity();
    const float finf = std::numeric_limits<float>::infinity();
    using S8 = Special<double>;
    using S4 = Special<float>;
    const std::uint64_t dnan = 0xfff8000000000000ull;
    const std::vector<S8> d = {
        {UnaryOp::exp, 0x7ff8000000000000ull, 0x7ff8000000000000ull},
        {UnaryOp::exp, 0xfff8000000000000ull, 0xfff8000000000000ull},
        {UnaryOp::exp, 0x7ff8000000000123ull, 0x7ff8000000000123ull},
        {UnaryOp::exp, 0x7ff0000000000001ull, 0x7ff8000000000001ull},
        {UnaryOp::exp, to_bits(inf), to_bits(inf)},
        {UnaryOp::exp, to_bits(-inf), 0},
        {UnaryOp::exp, to_bits(0.0), to_bits(1.0)},
        {UnaryOp::exp, to_bits(-0.0), to_bits(1.0)},
        {UnaryOp::exp, to_bits(710.0), to_bits(inf)},
        {UnaryOp::exp, to_bits(709.7827128933841), to_bits(inf)},
        {UnaryOp::exp, to_bits(std::numeric_limits<double>::max()), to_bits(inf)},
        {UnaryOp::exp, to_bits(-std::numeric_limits<double>::max()), 0},
        {UnaryOp::exp, to_bits(-745.2), 0},
        {UnaryOp::exp, to_bits(-745.13), 1},  // smallest subnormal
        {UnaryOp::exp, to_bits(0x1p-1074), to_bits(1.0)},
        {UnaryOp::exp, to_bits(1.0), to_bits(0x1.5bf0a8b145769p+1)},
        {UnaryOp::log, 0x7ff8000000000000ull, 0x7ff8000000000000ull},
        {UnaryOp::log, 0xfff8000000000000ull, 0xfff8000000000000ull},
        {UnaryOp::log, 0xfff8000000000123ull, 0xfff8000000000123ull},
        {UnaryOp::log, 0x7ff0000000000001ull, 0x7ff8000000000001ull},
        {UnaryOp::log, to_bits(0.0), to_bits(-inf)},
        {UnaryOp::log, to_bits(-0.0), to_bits(-inf)},
        {UnaryOp::log, to_bits(-1.0), dnan},
        {UnaryOp::log, to_bits(-0x1p-1074), dnan},
        {UnaryOp::log, to_bits(-inf), dnan},
        {UnaryOp::log, to_bits(inf), to_bits(inf)},
        {UnaryOp::log, to_bits(1.0), 0},
        {UnaryOp::log, to_bits(2.0), to_bits(0x1.62e42fefa39efp-1)},
        {UnaryOp::log, to_bits(0x1p-1074), to_bits(-0x1.74385446d71c3p+9)},
        {UnaryOp::log, to_bits(std::numeric_limits<double>::max()), to_bits(0x1.62e42fefa39efp+9)},
    };
    const std::uint32_t fnan = 0xffc00000u;
#if defined(__aarch64__)
    const auto f32_nan_result = [](std::uint32_t bits) { return bits | 0x00400000u; };
#else
    const auto f32_nan_result = [](std::uint32_t) { return 0x7fc00000u; };
#endif
    const std::vector<S4> f = {
        {UnaryOp::exp, 0x7fc00000u, f32_nan_result(0x7fc00000u)},
        {UnaryOp::exp, 0xffc00000u, f32_nan_result(0xffc00000u)},
        {UnaryOp::exp, 0x7fc00123u, f32_nan_result(0x7fc00123u)},
        {UnaryOp::exp, 0x7f800001u, f32_nan_result(0x7f800001u)},
        {UnaryOp::exp, to_bits(finf), to_bits(finf)},
        {UnaryOp::exp, to_bits(-finf), 0},
        {UnaryOp::exp, to_bits(0.0f), to_bits(1.0f)},
        {UnaryOp::exp, to_bits(-0.0f), to_bits(1.0f)},
        {UnaryOp::exp, to_bits(88.72284f), to_bits(finf)},
        {UnaryOp::exp, to_bits(std::numeric_limits<float>::max()), to_bits(finf)},
        {UnaryOp::exp, to_bits(-std::numeric_limits<float>::max()), 0},
        {UnaryOp::exp, to_bits(-104.0f), 0},
        {UnaryOp::exp, to_bits(1.0f), to_bits(0x1.5bf0a8p+1f)},
        {UnaryOp::log, 0x7fc00000u, f32_nan_result(0x7fc00000u)},
        {UnaryOp::log, 0xffc00000u, f32_nan_result(0xffc00000u)},
        {UnaryOp::log, 0x7f800001u, f32_nan_result(0x7f800001u)},
        {UnaryOp::log, to_bits(0.0f), to_bits(-finf)},
        {UnaryOp::log, to_bits(-0.0f), to_bits(-finf)},
        {UnaryOp::log, to_bits(-1.0f), fnan},
        {UnaryOp::log, to_bits(-finf), fnan},
        {UnaryOp::log, to_bits(finf), to_bits(finf)},
        {UnaryOp::log, to_bits(1.0f), 0},
        {UnaryOp::log, to_bits(2.0f), to_bits(0x1.62e43p-1f)},
        {UnaryOp::log, to_bits(0x1p-149f), to_bits(-0x1.9d1da0p+6f)},
    };
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::log}) {
        check_specials<double>(*this, op, d, loop(op, DType::f64));
        check_specials<float>(*this, op, f, loop(op, DType::f32));
    }
}

// The loop at any stride, size and alignment gives exactly the contiguous
// results and writes nothing but its n output elements.
template <class T>
void check_strides(UnaryLoop f, UnaryOp op) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-30.0, 30.0);
    const T pool[] = {std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(),
                      T(0),
                      T(-0.0),
                      T(1),
                      T(-1),
                      std::numeric_limits<T>::denorm_min(),
                      T(1000),
                      T(-1000)};
    const bits_t<T> guard = static_cast<bits_t<T>>(0x5a5a5a5a5a5a5a5aull);
    const size_t sz = sizeof(T);
    for (size_t n = 0; n <= 70; ++n) {
        std::vector<T> src(n);
        for (size_t i = 0; i < n; ++i)
            src[i] = (rng() % 5 == 0) ? pool[rng() % 10] : static_cast<T>(u(rng));
        std::vector<T> want(n);
        const unsigned want_flags =
            f(reinterpret_cast<const char*>(src.data()), static_cast<std::ptrdiff_t>(sz),
              reinterpret_cast<char*>(want.data()), static_cast<std::ptrdiff_t>(sz), n);
        for (int is = -3; is <= 3; ++is) {
            for (int os = -3; os <= 3; ++os) {
                if (os == 0) continue;
                for (size_t mis : {size_t(0), size_t(1)}) {
                    const size_t span = 3 * n + 1;
                    const size_t pad = 8;
                    std::vector<char> inbuf((span + 2 * pad) * sz + 1, 0);
                    std::vector<char> outbuf((span + 2 * pad) * sz + 1);
                    for (size_t k = 0; k + sz <= outbuf.size(); k += sz)
                        std::memcpy(&outbuf[k], &guard, sz);
                    // element i lives at base + i*stride; negative strides start at the end
                    char* in0 = inbuf.data() + mis +
                                (pad + (is < 0 ? size_t(-is) * (n ? n - 1 : 0) : 0)) * sz;
                    char* out0 = outbuf.data() + mis +
                                 (pad + (os < 0 ? size_t(-os) * (n ? n - 1 : 0) : 0)) * sz;
                    const std::ptrdiff_t ins = is * static_cast<std::ptrdiff_t>(sz);
                    const std::ptrdiff_t outs = os * static_cast<std::ptrdiff_t>(sz);
                    // with stride 0 every element reads src[0]
                    for (size_t i = 0; i < n; ++i)
                        std::memcpy(in0 + static_cast<std::ptrdiff_t>(i) * ins,
                                    &src[is == 0 ? 0 : i], sz);
                    std::vector<char> expect_out(outbuf);
                    const std::vector<T>* ref = &want;
                    std::vector<T> want0;
                    if (is == 0 && n > 0) {
                        want0.assign(n, want[0]);
                        ref = &want0;
                    }
                    const std::ptrdiff_t out_off = out0 - outbuf.data();
                    for (size_t i = 0; i < n; ++i)
                        std::memcpy(&expect_out[static_cast<size_t>(
                                        out_off + static_cast<std::ptrdiff_t>(i) * outs)],
                                    &(*ref)[i], sz);
                    const unsigned flags = f(in0, ins, out0, outs, n);
                    ASSERT_EQ(0, std::memcmp(outbuf.data(), expect_out.data(), outbuf.size()))
                        << unary_op_name(op) << (sz == 4 ? " f32" : " f64") << " n=" << n
                        << " in_stride=" << is << " out_stride=" << os << " misaligned=" << mis;
                    if (is != 0) {
                        EXPECT_EQ(flags, want_flags)
                            << unary_op_name(op) << " n=" << n << " in_stride=" << is;
                    }
                }
            }
        }
    }
}

TEST_P(ExpLog, StridesSizesAlignmentAndGuards) {
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::log}) {
        check_strides<float>(loop(op, DType::f32), op);
        check_strides<double>(loop(op, DType::f64), op);
    }
}

TEST_P(ExpLog, FloatingPointFlags) {
    using namespace numfuse::core;
    auto flags_of = [&](UnaryOp op, double v) {
        double y;
        return loop(op, DType::f64)(reinterpret_cast<const char*>(&v), 8,
                                    reinterpret_cast<char*>(&y), 8, 1);
    };
    EXPECT_EQ(flags_of(UnaryOp::exp, 1.0), unsigned(fp_none));
    EXPECT_EQ(flags_of(UnaryOp::exp, 1000.0), unsigned(fp_overflow));
    EXPECT_EQ(flags_of(UnaryOp::exp, -1000.0), unsigned(fp_underflow));
    EXPECT_EQ(flags_of(UnaryOp::exp, std::numeric_limits<double>::infinity()), unsigned(fp_none));
    EXPECT_EQ(flags_of(UnaryOp::log, 2.0), unsigned(fp_none));
    EXPECT_EQ(flags_of(UnaryOp::log, 0.0), unsigned(fp_divide_by_zero));
    EXPECT_EQ(flags_of(UnaryOp::log, -1.0), unsigned(fp_invalid));
}

// One special value at any position of a long contiguous array: the flags and the
// value must be the same whether the loop tests every batch pair (in place) or defers
// the test to the end of the unrolled loop (distinct buffers; see unary_loop.hpp). For
// log also subnormal values (float64 at avx2_fma: the fast kernel leaves them to the
// rescan, which the deferred test must ask for; its test reads the high 32 bits of x, so
// the cases include the smallest and largest subnormals, -tiny and the ordinary values
// next to the test's bounds), and, in a short array, every position of every case.
template <class T>
void check_flag_positions(UnaryLoop f, UnaryOp op) {
    using namespace numfuse::core;
    struct Case {
        T value;
        unsigned want;
    };
    using L = std::numeric_limits<T>;
    const T inf = L::infinity(), nan = L::quiet_NaN();
    const std::vector<Case> cases =
        op == UnaryOp::log
            ? std::vector<Case>{{T(0), fp_divide_by_zero},
                                {-T(0), fp_divide_by_zero},
                                {T(-2), fp_invalid},
                                {-inf, fp_invalid},
                                {nan, fp_none},
                                {-nan, fp_none},
                                {inf, fp_none},
                                {L::denorm_min(), fp_none},
                                {L::min() - L::denorm_min(), fp_none},
                                {L::min() / T(3), fp_none},
                                {-L::min(), fp_invalid},
                                {-L::denorm_min(), fp_invalid},
                                {L::min(), fp_none},
                                {L::max(), fp_none}}
            : std::vector<Case>{
                  {T(1000), fp_overflow}, {T(-1000), fp_underflow}, {nan, fp_none}, {inf, fp_none}};
    const auto positions = [](std::size_t n) {
        std::vector<std::size_t> p;
        if (n < 100) {
            for (std::size_t i = 0; i < n; ++i) p.push_back(i);
        } else {
            p = {0, 3, 17, 500, n - 9, n - 1};
        }
        return p;
    };
    for (const Case& c : cases) {
        for (const std::size_t n : {std::size_t{1000}, std::size_t{67}}) {
            for (const std::size_t pos : positions(n)) {
                std::vector<T> x(n);
                for (std::size_t i = 0; i < n; ++i) x[i] = T(0.5) + T(i) / T(n);
                x[pos] = c.value;
                std::vector<T> y(n), z = x;
                const unsigned got = f(reinterpret_cast<const char*>(x.data()), sizeof(T),
                                       reinterpret_cast<char*>(y.data()), sizeof(T), n);
                const unsigned got_inplace = f(reinterpret_cast<const char*>(z.data()), sizeof(T),
                                               reinterpret_cast<char*>(z.data()), sizeof(T), n);
                EXPECT_EQ(got, c.want)
                    << unary_op_name(op) << " value " << c.value << " at " << pos;
                EXPECT_EQ(got_inplace, c.want)
                    << unary_op_name(op) << " in place, value " << c.value << " at " << pos;
                EXPECT_EQ(0, std::memcmp(y.data(), z.data(), n * sizeof(T)))
                    << "in place differs at " << pos;
            }
        }
    }
}

TEST_P(ExpLog, FlagsAtAnyPositionOfLongArrays) {
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::log}) {
        check_flag_positions<float>(loop(op, DType::f32), op);
        check_flag_positions<double>(loop(op, DType::f64), op);
    }
}

INSTANTIATE_TEST_SUITE_P(Levels, ExpLog, ::testing::ValuesIn(numfuse::core::usable_levels()),
                         [](const ::testing::TestParamInfo<Level>& info) {
                             return std::string(numfuse::core::level_name(info.param));
                         });

// The neon64 float32 log's cell choice (log.hpp, log_f32_neon): j = round(J(m)), J the cubic
// log32_recip16 evaluated by three fused multiply-adds in float32, z = J + 1.5 2^23. Its
// proof needs, for every float32 m in [0.75, 1.5), j in 11..21 (the table's rows) and
// |t| = |m j/16 - 1| within R's fit, 0.0476, as avx2_fma's rcpps choice gives. Scalar, so it
// runs (and checks the coefficients) on every machine.
TEST(LogF32Cells, CubicCellChoiceKeepsTWithinTheFit) {
    const float* c = numfuse::kernels::detail::log32_recip16;
    double worst = 0;
    float worst_m = 0;
    for (std::uint32_t u = to_bits(0.75f); u < to_bits(1.5f); ++u) {
        const float m = from_bits<float>(u);
        float q = std::fma(c[3], m, c[2]);
        q = std::fma(q, m, c[1]);
        q = std::fma(q, m, c[0]);
        const float z = q + 0x1.8p23f;
        const int j = static_cast<int>(to_bits(z) - to_bits(0x1.8p23f));
        ASSERT_TRUE(j >= 11 && j <= 21) << "m = " << m << ", j = " << j;
        const double t = std::fabs(static_cast<double>(m) * j / 16 - 1);  // exact
        if (t > worst) worst = t, worst_m = m;
    }
    EXPECT_LE(worst, 0.0476) << "at m = " << worst_m;
    RecordProperty("max_abs_t", std::to_string(worst));
}

}  // namespace
