// ns/element of erf through numfuse::core::unary_loop (the loop the ufunc runs),
// single thread, 1e5 contiguous elements (L2-resident), every usable level.
// Build: g++ -O2 -std=c++17 -Isrc/core tools/erf_bench_core.cpp build/erf/libnumfuse_core.a
// -fopenmp
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "numfuse_core.hpp"

using namespace numfuse::core;

template <class T>
static double time_loop(UnaryLoop f, const std::vector<T>& x, std::vector<T>& y) {
    double best = 1e30;
    for (int rep = 0; rep < 30; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        for (int it = 0; it < 5; ++it)
            f(reinterpret_cast<const char*>(x.data()), sizeof(T), reinterpret_cast<char*>(y.data()),
              sizeof(T), x.size());
        auto t1 = std::chrono::steady_clock::now();
        const double ns =
            std::chrono::duration<double, std::nano>(t1 - t0).count() / (5.0 * double(x.size()));
        if (ns < best) best = ns;
    }
    return best;
}

int main() {
    const std::size_t n = 100000;
    std::mt19937_64 rng(1);
    std::normal_distribution<double> nd(0.0, 1.5);
    std::vector<double> x(n), y(n);
    std::vector<float> xf(n), yf(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = nd(rng);
        xf[i] = static_cast<float>(x[i]);
    }
    for (Level l : usable_levels()) {
        const double t64 = time_loop(unary_loop(UnaryOp::erf, DType::f64, l), x, y);
        const double t32 = time_loop(unary_loop(UnaryOp::erf, DType::f32, l), xf, yf);
        std::printf("%-8s erf f64 %.3f ns/elt   f32 %.3f ns/elt\n", level_name(l), t64, t32);
    }
}
