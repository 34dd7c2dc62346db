// Google Benchmark timings of numfuse's kernels through the core C++ API only.
//
//   <op>/<dtype>/<level>/<n>     one unary_loop(op, dtype, level) call on a
//                                contiguous buffer of n elements, one thread
//   apply/<op>/<dtype>/<n>       apply_unary (active level, threaded path)
//   copy/<dtype>/<n>             memcpy of the same bytes, for reference
//
// Counters: time/elem = time per element (e.g. "1.23ns"); bytes = bytes read +
// written per second, decimal prefixes (e.g. "12.3G/s" = 12.3 GB/s). The
// one-thread loops and copy/ use CPU time; apply/ uses wall time (suffix
// /real_time in its names). --benchmark_format=json gives raw values
// (seconds per element, bytes per second).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "numfuse_core.hpp"

namespace core = numfuse::core;

namespace {

constexpr core::UnaryOp kOps[] = {
#define NUMFUSE_BENCH_OP(name) core::UnaryOp::name,
    NUMFUSE_UNARY_OPS(NUMFUSE_BENCH_OP)
#undef NUMFUSE_BENCH_OP
};

// Inputs in each function's ordinary domain: the lo and hi columns of its row
// (functions.hpp), the same as numfuse-bench's.
void domain(core::UnaryOp op, double& lo, double& hi) {
    const core::FunctionInfo& info = *core::ufunc_info(op);
    lo = info.lo, hi = info.hi;
}

template <class T>
std::vector<T> make_input(core::UnaryOp op, std::size_t n) {
    double lo, hi;
    domain(op, lo, hi);
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(dist(rng));
    return v;
}

void set_counters(benchmark::State& state, std::size_t n, std::size_t elem_size) {
    using C = benchmark::Counter;
    // Rates divide by the benchmark's time (CPU time for the one-thread loops,
    // wall time for apply/ and copy/): time/elem prints e.g. "1.23ns".
    state.counters["time/elem"] =
        C(static_cast<double>(n), C::kIsIterationInvariantRate | C::kInvert);
    state.counters["bytes"] =
        C(2.0 * static_cast<double>(n * elem_size), C::kIsIterationInvariantRate, C::kIs1000);
}

template <class T>
void bench_loop(benchmark::State& state, core::UnaryLoop loop, core::UnaryOp op) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto in = make_input<T>(op, n);
    std::vector<T> out(n);
    const auto s = static_cast<std::ptrdiff_t>(sizeof(T));
    for (auto _ : state) {
        unsigned flags = loop(reinterpret_cast<const char*>(in.data()), s,
                              reinterpret_cast<char*>(out.data()), s, n);
        benchmark::DoNotOptimize(flags);
        benchmark::ClobberMemory();
    }
    set_counters(state, n, sizeof(T));
}

template <class T>
void bench_apply(benchmark::State& state, core::UnaryOp op, core::DType dtype) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto in = make_input<T>(op, n);
    std::vector<T> out(n);
    const auto s = static_cast<std::ptrdiff_t>(sizeof(T));
    for (auto _ : state) {
        unsigned flags = core::apply_unary(op, dtype, reinterpret_cast<const char*>(in.data()), s,
                                           reinterpret_cast<char*>(out.data()), s, n);
        benchmark::DoNotOptimize(flags);
        benchmark::ClobberMemory();
    }
    state.SetLabel(std::string("level ") + core::level_name(core::active_level()));
    set_counters(state, n, sizeof(T));
}

template <class T>
void bench_copy(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::vector<T> in(n, T(1));
    std::vector<T> out(n);
    for (auto _ : state) {
        std::memcpy(out.data(), in.data(), n * sizeof(T));
        benchmark::ClobberMemory();
    }
    set_counters(state, n, sizeof(T));
}

constexpr std::int64_t kLoopSizes[] = {1000, 100000};
constexpr std::int64_t kApplySize = 10000000;

template <class T>
void register_dtype(core::DType dtype, const char* dname) {
    for (core::UnaryOp op : kOps) {
        const std::string opname = core::unary_op_name(op);
        for (core::Level level : core::usable_levels()) {
            core::UnaryLoop loop = core::unary_loop(op, dtype, level);
            if (loop == nullptr) continue;
            auto* b = benchmark::RegisterBenchmark(
                (opname + "/" + dname + "/" + core::level_name(level)).c_str(),
                [loop, op](benchmark::State& st) { bench_loop<T>(st, loop, op); });
            for (auto n : kLoopSizes) b->Arg(n);
        }
        benchmark::RegisterBenchmark(
            ("apply/" + opname + "/" + dname).c_str(),
            [op, dtype](benchmark::State& st) { bench_apply<T>(st, op, dtype); })
            ->Arg(kApplySize)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark((std::string("copy/") + dname).c_str(), bench_copy<T>)
        ->Arg(kLoopSizes[0])
        ->Arg(kLoopSizes[1])
        ->Arg(kApplySize);
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("numfuse best level", core::level_name(core::best_level()));
    benchmark::AddCustomContext("numfuse active level", core::level_name(core::active_level()));
    register_dtype<float>(core::DType::f32, "f32");
    register_dtype<double>(core::DType::f64, "f64");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
