// float16 conversions (src/core/half.hpp): half_to_float exact for all 65536 bit
// patterns (against the value computed from the fields in double), float_to_half
// correctly rounded (nearest, ties to even, inf above 65520) over a sweep of float bit
// patterns, NaN sign/payload/quiet bit; and, where the compiler has _Float16, the same
// bits as its conversions (all halves, the sweep of floats).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "half.hpp"

namespace {

using numfuse::core::float_to_half;
using numfuse::core::half_to_float;

std::uint32_t bits_of(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

float float_of(std::uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// The value of a finite half from its fields.
double half_value(std::uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
    return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// Every 251st float bit pattern (both signs, all exponents), plus the boundaries.
template <class Check>
void for_float_sweep(Check check) {
    for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 251) {
        check(static_cast<std::uint32_t>(u));
    }
    for (const std::uint32_t magnitude :
         {0x00000000u, 0x00000001u, 0x33000000u, 0x33000001u, 0x337fffffu, 0x33800000u, 0x387fc000u,
          0x387fe000u, 0x387fefffu, 0x387ff000u, 0x38800000u, 0x477fe000u, 0x477fefffu, 0x477ff000u,
          0x477ff001u, 0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fc00000u, 0x7fffffffu}) {
        check(magnitude);
        check(magnitude | 0x80000000u);
    }
}

TEST(Half, ToFloatIsExact) {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const auto half = static_cast<std::uint16_t>(h);
        const float got = half_to_float(half);
        if ((h & 0x7c00u) != 0x7c00u) {
            ASSERT_EQ(static_cast<double>(got), half_value(half)) << std::hex << h;
            ASSERT_EQ(std::signbit(got), (h & 0x8000u) != 0) << std::hex << h;
        } else {
            const std::uint32_t mantissa = h & 0x3ffu;
            const std::uint32_t expected = ((h & 0x8000u) << 16) | 0x7f800000u | (mantissa << 13) |
                                           (mantissa != 0 ? 0x00400000u : 0u);
            ASSERT_EQ(bits_of(got), expected) << std::hex << h;
        }
    }
}

TEST(Half, FromFloatRoundsToNearestEven) {
    for_float_sweep([](std::uint32_t bits) {
        const float value = float_of(bits);
        const std::uint16_t h = float_to_half(value);
        ASSERT_EQ((h & 0x8000u) != 0, (bits & 0x80000000u) != 0) << std::hex << bits;
        if (std::isnan(value)) {
            ASSERT_EQ(h & 0x7e00u, 0x7e00u) << std::hex << bits;  // NaN, quiet
            ASSERT_EQ(h & 0x1ffu, (bits >> 13) & 0x1ffu) << std::hex << bits;
            return;
        }
        const double x = std::fabs(static_cast<double>(value));
        const auto magnitude = static_cast<std::uint16_t>(h & 0x7fffu);
        if (x >= 65520.0) {
            ASSERT_EQ(magnitude, 0x7c00u) << std::hex << bits;
            return;
        }
        ASSERT_LT(magnitude, 0x7c00u) << std::hex << bits;
        const double error = std::fabs(x - half_value(magnitude));
        for (const int step : {-1, 1}) {
            const int neighbour = magnitude + step;
            if (neighbour < 0 || neighbour > 0x7bff) continue;
            const double other = std::fabs(x - half_value(static_cast<std::uint16_t>(neighbour)));
            ASSERT_LE(error, other) << std::hex << bits;
            if (error == other) {
                ASSERT_EQ(magnitude & 1u, 0u) << "tie not to even " << std::hex << bits;
            }
        }
    });
}

#ifdef NUMFUSE_HAVE_FLOAT16
TEST(Half, SameBitsAsFloat16Type) {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const auto bits = static_cast<std::uint16_t>(h);
        _Float16 half;
        std::memcpy(&half, &bits, sizeof half);
        ASSERT_EQ(bits_of(static_cast<float>(half)), bits_of(half_to_float(bits))) << std::hex << h;
    }
    for_float_sweep([](std::uint32_t bits) {
        const auto half = static_cast<_Float16>(float_of(bits));
        std::uint16_t expected;
        std::memcpy(&expected, &half, sizeof expected);
        ASSERT_EQ(float_to_half(float_of(bits)), expected) << std::hex << bits;
    });
}
#endif

}  // namespace
