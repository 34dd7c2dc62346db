// IEEE binary16 (NumPy float16) <-> binary32 conversions on the bit patterns.
//
// Where the compiler has the _Float16 type (NUMFUSE_HAVE_FLOAT16) the float16
// loops convert with it; elsewhere (Clang before 15 on x86, for one) with the
// functions below. Both give the same bits for every input:
//   half_to_float: exact; a signaling NaN comes back quiet (quiet bit set),
//     sign and payload kept.
//   float_to_half: round to nearest, ties to even, with half subnormals and
//     overflow to infinity; a NaN keeps its sign and the leading 10 payload
//     bits and is made quiet.
// tests/cpp/test_half.cpp checks them against _Float16 (all 65536 halves, a
// sweep of floats), tests/test_accuracy.py the float16 loops against NumPy.
#pragma once

#include <cstdint>
#include <cstring>

// GCC defines __FLT16_MANT_DIG__ on aarch64 from version 12 on but accepts _Float16 in C++
// only from GCC 13: older GCC on aarch64 takes the bit conversions below.
#if defined(__FLT16_MANT_DIG__) && \
    !(defined(__aarch64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13)
#define NUMFUSE_HAVE_FLOAT16 1
#endif

namespace numfuse::core {

inline float half_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x03ffu;
    std::uint32_t bits;
    if (exponent == 0x1fu) {  // inf, NaN (quieted)
        bits = sign | 0x7f800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);
    } else if (exponent != 0) {  // normal: rebias 15 -> 127
        bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else {  // zero or subnormal: mantissa * 2^-24, exact in float
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        std::memcpy(&bits, &magnitude, sizeof bits);
        bits |= sign;
    }
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

inline std::uint16_t float_to_half(float value) noexcept {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    std::uint32_t h;
    if (magnitude > 0x7f800000u) {  // NaN: quiet, leading payload
        h = 0x7e00u | ((magnitude >> 13) & 0x03ffu);
    } else if (magnitude >= 0x477ff000u) {  // >= 65520 (halfway above 65504, ties up): inf
        h = 0x7c00u;
    } else if (magnitude >= 0x38800000u) {  // >= 2^-14: a normal half (or rounds to 2^-14 up)
        h = (magnitude - 0x38000000u) >> 13;  // exponent rebias 127 -> 15, mantissa truncated
        const std::uint32_t rest = magnitude & 0x1fffu;
        h += (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ? 1u : 0u;
    } else if (magnitude > 0x33000000u) {  // (2^-25, 2^-14): a subnormal half (or 2^-14)
        const std::uint32_t shift = 126u - (magnitude >> 23);  // 14..24
        const std::uint32_t significand = (magnitude & 0x007fffffu) | 0x00800000u;
        const std::uint32_t halfway = 1u << (shift - 1);
        const std::uint32_t rest = significand & ((halfway << 1) - 1u);
        h = significand >> shift;
        h += (rest > halfway || (rest == halfway && (h & 1u) != 0)) ? 1u : 0u;
    } else {  // <= 2^-25 (halfway to the smallest subnormal, ties to 0): zero
        h = 0;
    }
    return static_cast<std::uint16_t>(sign | h);
}

}  // namespace numfuse::core
