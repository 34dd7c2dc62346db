// logsumexp / softmax / log_softmax through the core API (reduce/reduce.hpp),
// at every usable instruction-set level: values against a long double
// reference, both layouts (lanes along a contiguous reduced axis, lanes
// across outputs) and strided/broadcast operands, SciPy's special values,
// and bit-identical results for any thread count. SciPy-facing semantics are
// tested from Python (tests/test_logsumexp.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/lse_exp.hpp"
#include "lse_accumulator.hpp"
#include "numfuse_core.hpp"
#include "parallel.hpp"
#include "reduce/kernel_table.hpp"
#include "reduce/reduce.hpp"

namespace {

using numfuse::core::DType;
using numfuse::core::Level;
using numfuse::core::ReduceOperand;
using numfuse::core::ReduceOutput;
using numfuse::core::ReduceShape;
using numfuse::core::SoftmaxKind;

class LevelGuard {
public:
    explicit LevelGuard(Level level) : previous_(numfuse::core::active_level()) {
        numfuse::core::set_active_level(level);
    }
    ~LevelGuard() { numfuse::core::set_active_level(previous_); }

private:
    Level previous_;
};

class ThreadGuard {
public:
    explicit ThreadGuard(int n) : previous_(numfuse::parallel::set_thread_count(n)) {}
    ~ThreadGuard() { numfuse::parallel::set_thread_count(previous_); }

private:
    int previous_;
};

long double reference_logsumexp(const std::vector<double>& x) {
    long double m = -std::numeric_limits<long double>::infinity();
    for (const double v : x) m = std::max<long double>(m, v);
    long double s = 0;
    for (const double v : x) s += std::exp(static_cast<long double>(v) - m);
    return m + std::log(s);
}

// Row-major rows x cols matrix, reduced along `axis` (0 or 1).
std::vector<double> logsumexp_matrix(const std::vector<double>& a, std::size_t rows,
                                     std::size_t cols, int axis) {
    const auto row_stride = static_cast<std::ptrdiff_t>(cols * sizeof(double));
    const auto col_stride = static_cast<std::ptrdiff_t>(sizeof(double));
    ReduceShape shape;
    ReduceOperand in;
    in.data = reinterpret_cast<const char*>(a.data());
    std::vector<double> result(axis == 0 ? cols : rows);
    ReduceOutput out;
    out.data = reinterpret_cast<char*>(result.data());
    out.outer = {static_cast<std::ptrdiff_t>(sizeof(double))};
    if (axis == 0) {
        shape = {{cols}, {rows}};
        in.outer = {col_stride};
        in.inner = {row_stride};
    } else {
        shape = {{rows}, {cols}};
        in.outer = {row_stride};
        in.inner = {col_stride};
    }
    numfuse::core::logsumexp(DType::f64, shape, in, ReduceOperand{}, out, ReduceOutput{});
    return result;
}

std::vector<double> random_values(std::size_t n, double scale, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, scale);
    std::vector<double> x(n);
    for (auto& v : x) v = normal(rng);
    return x;
}

TEST(Reduce, LogSumExpBothLayoutsEveryLevel) {
    const std::size_t rows = 257, cols = 131;
    const auto a = random_values(rows * cols, 5.0, 1);
    for (const Level level : numfuse::core::usable_levels()) {
        LevelGuard guard(level);
        const auto by_column = logsumexp_matrix(a, rows, cols, 0);
        const auto by_row = logsumexp_matrix(a, rows, cols, 1);
        for (std::size_t j = 0; j < cols; ++j) {
            std::vector<double> column(rows);
            for (std::size_t i = 0; i < rows; ++i) column[i] = a[i * cols + j];
            const double expected = static_cast<double>(reference_logsumexp(column));
            EXPECT_NEAR(by_column[j], expected, 4e-16 * std::fabs(expected))
                << numfuse::core::level_name(level) << " column " << j;
        }
        for (std::size_t i = 0; i < rows; ++i) {
            std::vector<double> row(a.begin() + static_cast<std::ptrdiff_t>(i * cols),
                                    a.begin() + static_cast<std::ptrdiff_t>((i + 1) * cols));
            const double expected = static_cast<double>(reference_logsumexp(row));
            EXPECT_NEAR(by_row[i], expected, 4e-16 * std::fabs(expected))
                << numfuse::core::level_name(level) << " row " << i;
        }
    }
}

TEST(Reduce, SpecialValuesLikeScipy) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    struct Case {
        std::vector<double> a;
        double expected;
    };
    const std::vector<Case> cases = {
        {{inf, 1.0}, inf},
        {{inf, -inf}, inf},
        {{inf, nan}, nan},
        {{1.0, nan}, nan},
        {{-inf, -inf}, -inf},
        {{-inf, 0.0}, 0.0},
        {{1000.0, 1000.0}, 1000.0 + std::log(2.0)},
    };
    for (const Level level : numfuse::core::usable_levels()) {
        LevelGuard guard(level);
        for (const auto& c : cases) {
            const auto got = logsumexp_matrix(c.a, 1, c.a.size(), 1)[0];
            if (std::isnan(c.expected)) {
                EXPECT_TRUE(std::isnan(got));
            } else {
                EXPECT_EQ(got, c.expected) << numfuse::core::level_name(level);
            }
        }
    }
}

TEST(Reduce, WeightsSignAndMasking) {
    const double inf = std::numeric_limits<double>::infinity();
    // b = 0 masks +inf; the rest is log(e^1 - e^2) < 0: sign -1.
    std::vector<double> a = {inf, 1.0, 2.0};
    std::vector<double> b = {0.0, 1.0, -1.0};
    ReduceShape shape{{}, {3}};
    ReduceOperand ao{reinterpret_cast<const char*>(a.data()), {}, {8}};
    ReduceOperand bo{reinterpret_cast<const char*>(b.data()), {}, {8}};
    double result = 0, sign = 0;
    ReduceOutput ro{reinterpret_cast<char*>(&result), {}, {}};
    ReduceOutput so{reinterpret_cast<char*>(&sign), {}, {}};
    numfuse::core::logsumexp(DType::f64, shape, ao, bo, ro, so);
    EXPECT_DOUBLE_EQ(result, std::log(std::exp(2.0) - std::exp(1.0)));
    EXPECT_EQ(sign, -1.0);
    // Broadcast weight (stride 0): b = 2 everywhere adds log 2.
    double two = 2.0;
    ReduceOperand bb{reinterpret_cast<const char*>(&two), {}, {0}};
    a[0] = 0.0;
    numfuse::core::logsumexp(DType::f64, shape, ao, bb, ro, ReduceOutput{});
    EXPECT_NEAR(result, std::log(2.0 * (1.0 + std::exp(1.0) + std::exp(2.0))), 1e-15);
}

TEST(Reduce, SoftmaxRowsSumToOneAndLogMatches) {
    const std::size_t rows = 1000, cols = 5;  // short axis: lanes across outputs
    const auto x = random_values(rows * cols, 3.0, 2);
    std::vector<float> xf(x.begin(), x.end());
    for (const Level level : numfuse::core::usable_levels()) {
        LevelGuard guard(level);
        std::vector<float> soft(xf.size()), log_soft(xf.size());
        ReduceShape shape{{rows}, {cols}};
        ReduceOperand in{reinterpret_cast<const char*>(xf.data()), {20}, {4}};
        numfuse::core::softmax(SoftmaxKind::softmax, DType::f32, shape, in,
                               ReduceOutput{reinterpret_cast<char*>(soft.data()), {20}, {4}});
        numfuse::core::softmax(SoftmaxKind::log_softmax, DType::f32, shape, in,
                               ReduceOutput{reinterpret_cast<char*>(log_soft.data()), {20}, {4}});
        for (std::size_t i = 0; i < rows; ++i) {
            double total = 0;
            for (std::size_t j = 0; j < cols; ++j) {
                total += soft[i * cols + j];
                EXPECT_NEAR(std::log(soft[i * cols + j]), log_soft[i * cols + j], 1e-5);
            }
            EXPECT_NEAR(total, 1.0, 1e-6);
        }
    }
}

TEST(Reduce, EmptyReductionForSoftmaxThrows) {
    float dummy = 0;
    ReduceShape shape{{3}, {0}};
    ReduceOperand in{reinterpret_cast<const char*>(&dummy), {0}, {4}};
    EXPECT_THROW(numfuse::core::softmax(SoftmaxKind::softmax, DType::f32, shape, in,
                                        ReduceOutput{reinterpret_cast<char*>(&dummy), {0}, {4}}),
                 std::invalid_argument);
}

TEST(Reduce, BitIdenticalForAnyThreadCount) {
    const std::size_t rows = 3000, cols = 70;
    const auto a = random_values(rows * cols, 4.0, 3);
    const auto whole = random_values(300001, 4.0, 4);
    for (const Level level : numfuse::core::usable_levels()) {
        LevelGuard guard(level);
        std::vector<std::vector<double>> results;
        for (const int threads : {1, 2, 3, 5}) {
            ThreadGuard thread_guard(threads);
            auto col = logsumexp_matrix(a, rows, cols, 0);
            auto row = logsumexp_matrix(a, rows, cols, 1);
            auto all = logsumexp_matrix(whole, 1, whole.size(), 1);
            col.insert(col.end(), row.begin(), row.end());
            col.insert(col.end(), all.begin(), all.end());
            results.push_back(col);
        }
        for (std::size_t k = 1; k < results.size(); ++k) {
            ASSERT_EQ(std::memcmp(results[k].data(), results[0].data(),
                                  results[0].size() * sizeof(double)),
                      0)
                << numfuse::core::level_name(level);
        }
    }
}

// The shared accumulator rules (lse_accumulator.hpp), on the host with the
// C++ library's exp/log: the states of special inputs and the merge of
// disjoint parts.
TEST(LseAccumulator, SpecialStatesAndMerge) {
    namespace lse = numfuse::core::lse;
    using Math = lse::StdMath;
    const double inf = std::numeric_limits<double>::infinity();
    const auto fold = [](std::initializer_list<double> xs) {
        lse::LseState st = lse::lse_empty();
        for (const double x : xs) lse::lse_add<Math>(st, x);
        return st;
    };
    EXPECT_EQ((lse::lse_result<double, Math>(lse::lse_empty())), -inf);
    EXPECT_EQ((lse::lse_result<double, Math>(fold({-inf, -inf}))), -inf);
    EXPECT_EQ((lse::lse_result<double, Math>(fold({-inf, 3.0, -inf}))), 3.0);
    EXPECT_EQ((lse::lse_result<double, Math>(fold({1.0, inf, 2.0, inf}))), inf);
    EXPECT_TRUE(std::isnan(lse::lse_result<double, Math>(fold({1.0, std::nan(""), inf}))));
    EXPECT_EQ((lse::lse_result<double, Math>(fold({0.0, 0.0}))), std::log(2.0));
    // Merging the parts gives the state of the whole, in either order.
    const lse::LseState whole = fold({0.5, -2.0, 7.0, 3.0});
    const lse::LseState ab = lse::lse_combine<Math>(fold({0.5, -2.0}), fold({7.0, 3.0}));
    const lse::LseState ba = lse::lse_combine<Math>(fold({7.0, 3.0}), fold({0.5, -2.0}));
    EXPECT_EQ(ab.m, whole.m);
    EXPECT_EQ(ab.s, ba.s);
    EXPECT_EQ(ab.k, ba.k);
    EXPECT_EQ(ab.k, 1.0);
    EXPECT_NEAR(ab.s, whole.s, 1e-15 * whole.s);
    // A result that is small because one maximum dominates: log(k + s) = log1p(t) for t the
    // other terms' sum keeps its relative accuracy (the maximum counted apart, each term's
    // x - m a double word); the plain (m, s) state lost all of t below 2^-53 and |x - m|/2
    // eps of each term. Long double references: x - m is exact in its 64-bit significand.
    const double eps = std::numeric_limits<double>::epsilon();
    for (const double x2 : {-30.123, -40.1234567, -699.93, -0.75}) {
        for (const double x1 : {0.0, 0.1, 5.5}) {
            const long double t = std::exp(static_cast<long double>(x2) - x1);
            const long double want = std::log1p(t);
            const lse::LseState st = fold({x1, x2});
            EXPECT_NEAR(lse::lse_log_sum<Math>(st), static_cast<double>(want),
                        2 * eps * static_cast<double>(want))
                << x1 << " " << x2;
            const lse::LseState merged = lse::lse_combine<Math>(fold({x2}), fold({x1}));
            EXPECT_NEAR(lse::lse_log_sum<Math>(merged), static_cast<double>(want),
                        2 * eps * static_cast<double>(want))
                << x1 << " " << x2;
        }
    }
    // The compensated triple: merging with the empty part changes nothing.
    using Partial = numfuse::core::ReducePartial<double>;
    const Partial p{2.0, 1.5, 1e-17};
    const Partial empty{std::numeric_limits<double>::lowest(), 0.0, 0.0};
    const Partial q = lse::merge_compensated<Math>(p, empty);
    EXPECT_EQ(q.m, p.m);
    EXPECT_EQ(q.s, p.s);
    EXPECT_EQ(q.c, p.c);
}

// logsumexp's term exp (kernels/lse_exp.hpp) on the build's baseline level (SSE2 without FMA
// on x86-64, NEON on aarch64; the other levels through the Python accuracy tests): relative
// error below 1.75 * 2^-53 against long double exp on [-708, 0], exp(0) = 1, NaN stays NaN.
TEST(LseTermExp, WithinBoundOnItsRange) {
    using B = xsimd::batch<double>;
    constexpr std::size_t width = B::size;
    std::mt19937_64 rng(29);
    std::uniform_real_distribution<double> wide(-708.0, 0.0);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    long double worst = 0;
    alignas(64) double in[width];
    alignas(64) double out[width];
    const auto check = [&](double d) {
        for (std::size_t k = 0; k < width; ++k) in[k] = d;
        numfuse::kernels::lse_term_exp(B::load_aligned(in)).store_aligned(out);
        const long double want = std::exp(static_cast<long double>(d));
        const long double rel = std::fabs((static_cast<long double>(out[0]) - want) / want);
        if (rel > worst) worst = rel;
    };
    for (int i = 0; i < 200000; ++i) check(wide(rng));
    for (int i = 0; i < 100000; ++i) check(-std::ldexp(unit(rng), -(i % 64)));
    // Arguments next to the reduction's switch points (k ln2 +- ln2/2) and the range's ends.
    for (int k = 0; k <= 1021; ++k) {
        const double mid = -(k + 0.5) * 0.6931471805599453;
        check(std::nextafter(mid, 0.0));
        check(std::nextafter(mid, -1.0));
    }
    check(-708.0);
    check(-0.0);
    EXPECT_LT(static_cast<double>(worst), 1.75 * 0x1p-53);
    for (std::size_t k = 0; k < width; ++k) in[k] = k % 2 ? 0.0 : std::nan("");
    numfuse::kernels::lse_term_exp(B::load_aligned(in)).store_aligned(out);
    for (std::size_t k = 0; k < width; ++k) {
        if (k % 2) {
            EXPECT_EQ(out[k], 1.0);
        } else {
            EXPECT_TRUE(std::isnan(out[k]));
        }
    }
}

}  // namespace
