// Instructions per element of every unary loop of one level: neon64 counted under
// qemu-aarch64 (tools/aarch64/insn_per_element.py reads qemu's translation/execution log),
// an x86 level (argument 2, e.g. avx2_fma) under valgrind's callgrind for comparison.
//
// For each op and dtype: marker(id), then one unary_loop(op, dtype, level) call on n
// contiguous elements in the op's ordinary domain (as benchmarks/cpp/bench_kernels.cpp),
// then marker(-1). Under qemu the log's executed blocks between two markers are that call;
// under callgrind (x86 builds) the markers zero the counters and dump them, one dump per
// call. Speed cannot be measured under emulation; the instruction count is the work the
// loop does per element.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <string>

#if defined(__x86_64__)
#include <valgrind/callgrind.h>
#endif

#include "levels.hpp"
#include "numfuse_core.hpp"

namespace core = numfuse::core;

extern "C" __attribute__((noinline)) void numfuse_insn_marker(int id) {
    __asm__ volatile("" ::"r"(id) : "memory");
#if defined(__x86_64__)
    if (id >= 0) {
        CALLGRIND_ZERO_STATS;
    } else {
        CALLGRIND_DUMP_STATS;
    }
#endif
}

namespace {

void domain(core::UnaryOp op, double& lo, double& hi) {
    switch (op) {
        case core::UnaryOp::exp: lo = -5.0, hi = 5.0; return;
        case core::UnaryOp::log: lo = 0.1, hi = 100.0; return;
        case core::UnaryOp::erf: lo = -3.0, hi = 3.0; return;
        case core::UnaryOp::arccosh: lo = 1.0, hi = 10.0; return;
        default: break;
    }
    lo = 0.1, hi = 0.9;
}

template <class T>
void run(core::UnaryOp op, core::DType dtype, core::Level level, std::size_t n, int id) {
    double lo, hi;
    domain(op, lo, hi);
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<T> in(n), out(n);
    for (auto& x : in) x = static_cast<T>(dist(rng));
    const core::UnaryLoop loop = core::unary_loop(op, dtype, level);
    if (loop == nullptr) return;
    const auto s = static_cast<std::ptrdiff_t>(sizeof(T));
    numfuse_insn_marker(id);
    loop(reinterpret_cast<const char*>(in.data()), s, reinterpret_cast<char*>(out.data()), s, n);
    numfuse_insn_marker(-1);
    std::printf("%d %s %s\n", id, core::unary_op_name(op), sizeof(T) == 4 ? "float32" : "float64");
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4096;
    const core::Level level = core::parse_level(argc > 2 ? argv[2] : "neon64");
    int id = 0;
#define NUMFUSE_INSN_OP(name)                                          \
    run<float>(core::UnaryOp::name, core::DType::f32, level, n, id++); \
    run<double>(core::UnaryOp::name, core::DType::f64, level, n, id++);
    NUMFUSE_UNARY_OPS(NUMFUSE_INSN_OP)
#undef NUMFUSE_INSN_OP
    return 0;
}
