// The integer shifts and bit casts of xsimd batches that the kernels use (kernels/common.hpp):
// on aarch64 common.hpp ends xsimd 8.1's neon shift recursion with one SSHL / USHL by a
// duplicated count and casts by reinterpreting the register. Every count in [0, width) for
// 32- and 64-bit lanes, signed (arithmetic right shift) and unsigned (logical), by a count
// known only at run time (the out-of-line path) and by constants (the folded one), against
// the scalar shifts; bit_cast round trips keep every bit. The default architecture of the
// build (neon64 on aarch64, SSE2 on x86-64) runs the same checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/common.hpp"

namespace {

namespace kd = numfuse::kernels::detail;
using Arch = xsimd::default_arch;

// A count the compiler cannot see (the shift stays a run-time shift).
volatile int opaque_count = 0;

template <class T>
std::vector<T> lane_values() {
    std::mt19937_64 rng(29);
    std::vector<T> v = {
        T(0),         T(1), T(-1), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
        T(0x5a5a5a5a)};
    for (int i = 0; i < 64; ++i) v.push_back(static_cast<T>(rng()));
    while (v.size() % xsimd::batch<T, Arch>::size != 0) v.push_back(static_cast<T>(rng()));
    return v;
}

template <class T>
void check_shifts() {
    using B = xsimd::batch<T, Arch>;
    using U = std::make_unsigned_t<T>;
    constexpr int width = 8 * sizeof(T);
    const std::vector<T> v = lane_values<T>();
    for (int n = 0; n < width; ++n) {
        opaque_count = n;
        const int m = opaque_count;
        for (std::size_t i = 0; i < v.size(); i += B::size) {
            const B x = B::load_unaligned(v.data() + i);
            alignas(64) T left[B::size], right[B::size];
            (x << m).store_aligned(left);
            (x >> m).store_aligned(right);
            for (std::size_t l = 0; l < B::size; ++l) {
                const T want_left = static_cast<T>(static_cast<U>(v[i + l]) << n);
                // >> of a negative signed value is arithmetic in C++20 and in GCC and Clang.
                const T want_right = static_cast<T>(v[i + l] >> n);
                ASSERT_EQ(left[l], want_left) << "lane value " << v[i + l] << " << " << n;
                ASSERT_EQ(right[l], want_right) << "lane value " << v[i + l] << " >> " << n;
            }
        }
    }
    // Constant counts, as the kernels shift (mantissa widths, exponent positions).
    const B x = B::load_unaligned(v.data());
    alignas(64) T a[B::size], b[B::size];
    (x << (width == 64 ? 52 : 23)).store_aligned(a);
    (x >> (width == 64 ? 52 : 23)).store_aligned(b);
    for (std::size_t l = 0; l < B::size; ++l) {
        EXPECT_EQ(a[l], static_cast<T>(static_cast<U>(v[l]) << (width == 64 ? 52 : 23)));
        EXPECT_EQ(b[l], static_cast<T>(v[l] >> (width == 64 ? 52 : 23)));
    }
}

TEST(BatchBits, ShiftsEveryCountEveryLaneType) {
    check_shifts<std::int32_t>();
    check_shifts<std::uint32_t>();
    check_shifts<std::int64_t>();
    check_shifts<std::uint64_t>();
}

template <class F>
void check_bit_cast() {
    using I = kd::int_of_t<F>;
    using BF = xsimd::batch<F, Arch>;
    const std::vector<I> v = lane_values<I>();
    for (std::size_t i = 0; i < v.size(); i += BF::size) {
        const auto xi = xsimd::batch<I, Arch>::load_unaligned(v.data() + i);
        const BF f = kd::as_float<F, Arch>(xi);
        alignas(64) F lanes[BF::size];
        f.store_aligned(lanes);
        alignas(64) I back[BF::size];
        kd::as_int(f).store_aligned(back);
        for (std::size_t l = 0; l < BF::size; ++l) {
            I bits;
            std::memcpy(&bits, &lanes[l], sizeof bits);
            ASSERT_EQ(bits, v[i + l]);  // NaN patterns included: no floating-point operation
            ASSERT_EQ(back[l], v[i + l]);
        }
    }
}

TEST(BatchBits, BitCastKeepsEveryBit) {
    check_bit_cast<float>();
    check_bit_cast<double>();
}

}  // namespace
