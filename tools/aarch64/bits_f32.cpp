// The bits of one float32 unary loop over every float32 bit pattern (or every STRIDE-th),
// hashed per chunk of 2^24 patterns. Built natively and run at an x86 level, and cross-built
// and run under qemu-aarch64 at neon64, the two listings compare a neon64 kernel with the x86
// kernel of the same method bit for bit, chunk by chunk (diff the outputs); with a chunk number
// as fourth argument it prints that chunk's inputs and outputs as hex words instead, to find
// the differing elements.
//
// Usage: bits_f32 OP LEVEL [STRIDE [CHUNK]], e.g.
//   g++ -O2 -std=c++17 -I src/core tools/aarch64/bits_f32.cpp build/cpp/libnumfuse_core.a \
//       -fopenmp -o build/cpp/bits_f32 && build/cpp/bits_f32 erf avx2_fma > x86.txt
//   aarch64-linux-gnu-g++ (the same, -no-pie, build/aarch64/build/libnumfuse_core.a) and
//   qemu-aarch64 -L build/aarch64/sysroot build/aarch64/bits_f32 erf neon64 > neon.txt
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "levels.hpp"
#include "numfuse_core.hpp"

namespace core = numfuse::core;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s OP LEVEL [STRIDE [CHUNK]]\n", argv[0]);
        return 2;
    }
    const std::string name = argv[1];
    const core::Level level = core::parse_level(argv[2]);
    const std::uint64_t stride = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
    const long only = argc > 4 ? std::strtol(argv[4], nullptr, 10) : -1;
    core::UnaryLoop loop = nullptr;
#define NUMFUSE_BITS_OP(op)                             \
    if (name == core::unary_op_name(core::UnaryOp::op)) \
        loop = core::unary_loop(core::UnaryOp::op, core::DType::f32, level);
    NUMFUSE_UNARY_OPS(NUMFUSE_BITS_OP)
#undef NUMFUSE_BITS_OP
    if (loop == nullptr) {
        std::fprintf(stderr, "no float32 loop %s at %s\n", argv[1], argv[2]);
        return 2;
    }
    constexpr std::uint64_t chunk = std::uint64_t{1} << 24;
    std::vector<std::uint32_t> in, out;
    for (std::uint64_t c = 0; c < (std::uint64_t{1} << 32) / chunk; ++c) {
        if (only >= 0 && c != static_cast<std::uint64_t>(only)) continue;
        in.clear();
        for (std::uint64_t u = c * chunk; u < (c + 1) * chunk; u += stride) {
            in.push_back(static_cast<std::uint32_t>(u));
        }
        out.assign(in.size(), 0);
        loop(reinterpret_cast<const char*>(in.data()), 4, reinterpret_cast<char*>(out.data()), 4,
             in.size());
        if (only >= 0) {
            for (std::size_t i = 0; i < in.size(); ++i) std::printf("%08x %08x\n", in[i], out[i]);
            continue;
        }
        std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the output words
        for (const std::uint32_t w : out) h = (h ^ w) * 0x100000001b3ull;
        std::printf("%llu %016llx\n", static_cast<unsigned long long>(c),
                    static_cast<unsigned long long>(h));
    }
    return 0;
}
