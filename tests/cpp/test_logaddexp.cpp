// The exact arithmetic behind logaddexp's near-zero results (src/core/kernels/
// fixed_point.hpp and the passes of kernels/logaddexp.hpp), at the baseline level: the
// fixed-point constants against their known digits, the fixed-point operations against
// identities, and the four ways logaddexp computes e^x + e^y - 1 (logaddexp2: 2^x + 2^y
// - 1) against each other. The accuracy of the results against mpmath, at every level:
// tests/test_logaddexp.py.
#include <gtest/gtest.h>

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <cstdint>
#include <random>

#include "kernels/fixed_point.hpp"
#include "kernels/logaddexp.hpp"

namespace {

namespace fx = numfuse::kernels::fixed;
namespace kd = numfuse::kernels::detail;
using Arch = xsimd::default_arch;

// ln 2 to 384 bits, from mpmath: hex(int(mpmath.ln(2) * 2**384)) at 500 bits.
constexpr std::uint64_t ln2_digits[6] = {
    0xb17217f7d1cf79abULL, 0xc9e3b39803f2f6afULL, 0x40f343267298b62dULL,
    0x8a0d175b8baafa2bULL, 0xe7b876206debac98ULL, 0x559552fb4afa1b10ULL,
};

TEST(FixedPoint, Ln2HasItsDigits) {
    constexpr auto six = fx::ln2<6>();
    for (int i = 0; i < 6; ++i) EXPECT_EQ(six.w[i], ln2_digits[i]) << i;
    constexpr auto three = fx::ln2<3>();
    for (int i = 0; i < 3; ++i) EXPECT_EQ(three.w[i], ln2_digits[i]) << i;
    constexpr fx::Pair p = fx::to_pair(three);
    EXPECT_EQ(p.hi, 0x1.62e42fefa39efp-1);  // RN(ln 2): its 54th bit is 0
    EXPECT_EQ(p.lo, 0x1.abc9e3b39803fp-56);
}

TEST(FixedPoint, ExpOfLn2IsTwo) {
    // e^ln2 - 1 = 1: the series of a 1-unit-low ln 2 comes out a few units below 1.
    const auto g = fx::expm1_series(fx::ln2<4>());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(g.w[i], ~std::uint64_t(0)) << i;
    EXPECT_GT(g.w[3], ~std::uint64_t(0) - 64);
}

TEST(FixedPoint, OperationsAgreeWithIdentities) {
    fx::Fraction<3> third = fx::div_small(fx::Fraction<3>{}, 3, 1);  // 1/3, truncated
    std::uint64_t whole = 0;
    const auto back = fx::mul_small(third, 3, whole);  // 1 - 1 unit
    EXPECT_EQ(whole, 0u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(back.w[i], ~std::uint64_t(0));
    const auto ninth = fx::mul(third, third);  // (1/3)^2 truncated twice: 1/9 - < 2 units
    const auto exact_ninth = fx::div_small(fx::Fraction<3>{}, 9, 1);
    EXPECT_LE(fx::sub(exact_ninth, ninth).w[2], 2u);
    EXPECT_EQ(fx::compare(fx::add(ninth, fx::sub(exact_ninth, ninth)), exact_ninth), 0);
    // Shifts: 3/4 >> 1 << 1, and a product with a double.
    const auto three_quarters = fx::from_double<3>(0.75);
    EXPECT_EQ(three_quarters.w[0], 0xc000000000000000ULL);
    EXPECT_EQ(fx::compare(fx::shift_left(fx::shift_right(three_quarters, 1), 1), three_quarters),
              0);
    const auto half = fx::mul_decomposed(three_quarters, fx::decompose(2.0 / 3.0));
    EXPECT_EQ(fx::to_pair(half).hi, 0.5 - 0x1p-54);  // 3/4 RN(2/3) = 1/2 - 2^-55.., truncated
}

TEST(FixedPoint, Log2eIsTheReciprocalOfLn2) {
    namespace kc = kd::logaddexp_consts;
    // (log2(e) / 2) ln2 = 1/2 to 2^-108 (the pair's 2^-109 and two truncations).
    const auto half_log2e = fx::add(fx::from_double<3>(kc::log2e_pair.hi / 2),
                                    fx::from_double<3>(kc::log2e_pair.lo / 2));
    const auto p = fx::mul(half_log2e, fx::ln2<3>());
    const auto half = fx::from_double<3>(0.5);
    const auto diff = fx::compare(p, half) < 0 ? fx::sub(half, p) : fx::sub(p, half);
    EXPECT_EQ(diff.w[0], 0u);
    EXPECT_LT(diff.w[1], std::uint64_t(1) << 21);
}

TEST(FixedPoint, DecomposeIsExact) {
    for (double d : {0.1, 1.0, 0.75, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308}) {
        const fx::Decomposed x = fx::decompose(d);
        EXPECT_EQ(std::ldexp(static_cast<double>(x.mantissa), x.exponent), d) << d;
        EXPECT_LT(x.mantissa, std::uint64_t(1) << 53);
    }
}

// Pairs (m, s), s <= m < 0, with e^m + e^s (base 2: 2^m + 2^s) within ~2^-53 |m| of 1 (the
// nearest s and its neighbours) or within a relative 10^-16 .. 10^-4 of it.
struct NearZeroPair {
    double m, s;
};
template <kd::LogBase Base>
std::vector<NearZeroPair> near_zero_pairs(std::size_t count) {
    std::mt19937_64 rng(2024);
    std::uniform_real_distribution<double> log_mag(std::log(1e-300), std::log(0.69));
    std::uniform_real_distribution<double> rel(-4.0, -16.0);
    std::vector<NearZeroPair> pairs;
    while (pairs.size() < count) {
        const double m = -std::exp(log_mag(rng));
        double s = Base == kd::LogBase::e ? std::log(-std::expm1(m))
                                          : std::log2(-std::expm1(m * 0.6931471805599453));
        switch (pairs.size() % 4) {
            case 1: s = std::nextafter(s, 0.0); break;
            case 2: s = s * (1 + std::pow(10.0, rel(rng))); break;
            default: break;
        }
        if (std::isfinite(s) && s <= m) pairs.push_back({m, s});
    }
    return pairs;
}

template <kd::LogBase Base>
void check_passes_agree() {
    // The fixed-point pass at 128, 192 and 384 bits: the same eps to the pair's precision
    // wherever the narrower certifies it; pass 2 and the triple-double pass, where they
    // certify, to their own.
    using B = xsimd::batch<double, Arch>;
    int certified_by_pass2 = 0, certified_at_128 = 0, needs_triple = 0, certified_by_triple = 0;
    for (const NearZeroPair& p : near_zero_pairs<Base>(2000)) {
        const kd::LogaddexpExactEps e128 = kd::logaddexp_eps_fixed<Arch, 2, Base>(p.m, p.s);
        const kd::LogaddexpExactEps e3 = kd::logaddexp_eps_fixed<Arch, 3, Base>(p.m, p.s);
        const kd::LogaddexpExactEps e6 = kd::logaddexp_eps_fixed<Arch, 6, Base>(p.m, p.s);
        ASSERT_TRUE(e3.certified) << p.m << " " << p.s;
        ASSERT_TRUE(e6.certified);
        ASSERT_NE(e3.hi, 0.0);
        const long double eps3 = std::ldexp(static_cast<long double>(e3.hi) + e3.lo, e3.exponent);
        const long double eps6 = std::ldexp(static_cast<long double>(e6.hi) + e6.lo, e6.exponent);
        EXPECT_LE(std::fabs(eps3 - eps6), std::fabs(eps6) * 0x1p-60L) << p.m << " " << p.s;
        if (e128.certified) {
            ++certified_at_128;
            const long double eps128 =
                std::ldexp(static_cast<long double>(e128.hi) + e128.lo, e128.exponent);
            EXPECT_LE(std::fabs(eps128 - eps6), std::fabs(eps6) * 0x1p-58L) << p.m << " " << p.s;
        }
        // The triple-double pass: D = eps 2^-k_s to 2^-140 absolute (plus the 384-bit
        // pair's own truncation, 2^-105 |D|), certified wherever pass 2 is not, but for
        // |D| < 2^-81.
        const kd::LogaddexpEps<Arch> et = kd::logaddexp_eps_triple<double, Base>(B(p.m), B(p.s));
        const int kt = static_cast<int>(et.k.get(0));
        const double h6 = std::ldexp(e6.hi, e6.exponent - kt);
        const double l6 = std::ldexp(e6.lo, e6.exponent - kt);
        const double triple_error =
            std::fabs((et.d.hi.get(0) - h6) + (et.d.lo.get(0) - l6)) - std::fabs(h6) * 0x1p-105;
        EXPECT_LE(triple_error, 0x1p-140) << p.m << " " << p.s;
        if (std::fabs(h6) < 0x1p-42) ++needs_triple;
        if (std::fabs(h6) < 0x1p-42 && et.certified.get(0)) ++certified_by_triple;
        EXPECT_EQ(et.certified.get(0), std::fabs(et.d.hi.get(0)) >= 0x1p-81);
        // Pass 2: D to 2^-96.3 absolute (its stated bound, which logaddexp_certified_d's
        // 2^-42 turns into 2^-54.3 relative), certified where |D| >= 2^-42.
        const kd::LogaddexpEps<Arch> e2 = kd::logaddexp_eps_dd<double, Base>(B(p.m), B(p.s));
        const int k2 = static_cast<int>(e2.k.get(0));
        const double pass2_error =
            std::fabs((e2.d.hi.get(0) - std::ldexp(e6.hi, e6.exponent - k2)) +
                      (e2.d.lo.get(0) - std::ldexp(e6.lo, e6.exponent - k2))) -
            std::fabs(std::ldexp(e6.hi, e6.exponent - k2)) * 0x1p-105;
        EXPECT_LE(pass2_error, 0x1.9p-97) << p.m << " " << p.s;  // 2^-96.36, under 2^-96.3
        EXPECT_EQ(e2.certified.get(0), std::fabs(e2.d.hi.get(0)) >= 0x1p-42);
        if (e2.certified.get(0)) {
            ++certified_by_pass2;
            const long double eps2 =
                std::ldexp(static_cast<long double>(e2.d.hi.get(0)) + e2.d.lo.get(0), k2);
            EXPECT_LE(std::fabs(eps2 - eps6), std::fabs(eps6) * 0x1.9p-55L) << p.m << " " << p.s;
        }
    }
    EXPECT_GT(certified_by_pass2, 200);  // the perturbed pairs
    EXPECT_GT(certified_at_128, 1000);
    EXPECT_GT(needs_triple, 1000);  // the nearest pairs and their neighbours
    EXPECT_GE(certified_by_triple, needs_triple - 2);
}

TEST(LogaddexpExact, PassesAgree) { check_passes_agree<kd::LogBase::e>(); }
TEST(LogaddexpExact, PassesAgreeInBase2) { check_passes_agree<kd::LogBase::two>(); }

}  // namespace
