// The error of one float32 unary loop against the float64 loop of the same function at the
// same level (within 1 float64 ULP, so a reference to ~2^-52 relative), in float32 ULPs of
// the float64 result, over a stratified set of float32 inputs: every STRIDE-th bit pattern
// (both signs), every float32 within 2^16 patterns of 1.0 and -1.0 and of the EDGES below,
// and every 16th subnormal. Non-finite results must match the float64 loop's rounded to
// float32 in kind (NaN / +-inf) and finite ones in sign, so special values are counted too.
// Built natively and run at an x86 level, and cross-built and run under qemu-aarch64 at
// neon64 (the same command as bits_f32.cpp), it gives the accuracy of a neon64 kernel where
// every float32 input under qemu would be too slow.
//
// Usage: ulp_f32 OP LEVEL [STRIDE]; prints "OP LEVEL points max_ulp at_input bad_kind"
// (bad_kind: results whose kind or sign differs from the reference's; the first 8 on stderr).
//   aarch64-linux-gnu-g++ -O2 -std=c++17 -no-pie -I src/core -I build/aarch64/xsimd-include \
//       tools/aarch64/ulp_f32.cpp build/aarch64/build/libnumfuse_core.a -fopenmp \
//       -o build/aarch64/ulp_f32
//   qemu-aarch64 -L build/aarch64/sysroot build/aarch64/ulp_f32 log1p neon64 64
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "levels.hpp"
#include "numfuse_core.hpp"

namespace core = numfuse::core;

namespace {

// Inputs next to which a float32 kernel of the log and exp families changes path.
constexpr float kEdges[] = {
    0x1.0p-25f, 0x1.0p-12f, 0x1.0p-7f, 0x1.0p12f, 0.75f,   1.5f,        2.0f,  0.5f,
    88.72f,     -87.3f,     -103.9f,   87.0f,     -17.33f, 0x1.0p-126f, 16.0f, 0.25f,
};

float as_float(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
std::uint32_t as_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// float32 ULP at |r| (the spacing of float32 numbers of r's binade; 2^-149 below 2^-126).
double ulp32(double r) {
    const double a = std::fabs(r);
    if (a < 0x1.0p-126) return 0x1.0p-149;
    int e;
    std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
    return std::ldexp(1.0, e - 24);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s OP LEVEL [STRIDE]\n", argv[0]);
        return 2;
    }
    const std::string name = argv[1];
    const core::Level level = core::parse_level(argv[2]);
    const std::uint64_t stride = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64;
    core::UnaryLoop loop32 = nullptr, loop64 = nullptr;
#define NUMFUSE_ULP_OP(op)                                                     \
    if (name == core::unary_op_name(core::UnaryOp::op)) {                      \
        loop32 = core::unary_loop(core::UnaryOp::op, core::DType::f32, level); \
        loop64 = core::unary_loop(core::UnaryOp::op, core::DType::f64, level); \
    }
    NUMFUSE_UNARY_OPS(NUMFUSE_ULP_OP)
#undef NUMFUSE_ULP_OP
    if (loop32 == nullptr || loop64 == nullptr) {
        std::fprintf(stderr, "no float32 / float64 loop %s at %s\n", argv[1], argv[2]);
        return 2;
    }
    std::vector<std::uint32_t> in;
    for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += stride) {
        in.push_back(static_cast<std::uint32_t>(u));
    }
    const auto around = [&in](float c) {
        const std::uint32_t b = as_bits(c);
        for (std::uint32_t d = 0; d < (1u << 16); ++d) {
            in.push_back(b + d);
            in.push_back(b - d);
            in.push_back((b + d) ^ 0x80000000u);
            in.push_back((b - d) ^ 0x80000000u);
        }
    };
    around(1.0f);
    for (const float c : kEdges) around(c);
    for (std::uint32_t u = 0; u < 0x00800000u; u += 16) {
        in.push_back(u);
        in.push_back(u | 0x80000000u);
    }
    const std::size_t n = in.size();
    std::vector<double> x64(n), y64(n);
    std::vector<std::uint32_t> y32(n);
    for (std::size_t i = 0; i < n; ++i) x64[i] = static_cast<double>(as_float(in[i]));
    loop32(reinterpret_cast<const char*>(in.data()), 4, reinterpret_cast<char*>(y32.data()), 4, n);
    loop64(reinterpret_cast<const char*>(x64.data()), 8, reinterpret_cast<char*>(y64.data()), 8, n);
    double worst = 0.0;
    std::uint32_t worst_at = 0;
    std::size_t bad_kind = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double r = y64[i];
        const float y = as_float(y32[i]);
        const float rf = static_cast<float>(r);  // the reference's kind in float32
        if (std::isnan(rf) || std::isnan(y)) {
            if (std::isnan(rf) != std::isnan(y)) {
                if (bad_kind++ < 8) {
                    std::fprintf(stderr, "kind: x=%08x y=%08x ref=%a\n", in[i], y32[i], r);
                }
            }
            continue;
        }
        if (std::isinf(rf) || std::isinf(y)) {
            // an overflowing float32 result: both inf, or the reference rounds to inf
            if (y != rf && bad_kind++ < 8) {
                std::fprintf(stderr, "kind: x=%08x y=%08x ref=%a\n", in[i], y32[i], r);
            }
            continue;
        }
        if (std::signbit(y) != std::signbit(rf)) {
            if (bad_kind++ < 8)
                std::fprintf(stderr, "sign: x=%08x y=%08x ref=%a\n", in[i], y32[i], r);
            continue;
        }
        const double err = std::fabs(static_cast<double>(y) - r) / ulp32(r);
        if (err > worst) {
            worst = err;
            worst_at = in[i];
        }
    }
    std::printf("%s %s %zu %.4f %08x %zu\n", argv[1], argv[2], n, worst, worst_at, bad_kind);
    return 0;
}
