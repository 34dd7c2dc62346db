// logsumexp's per-element and combining steps, and how a reduction is split into
// chunks: NUMFUSE_HD, so the GPU kernels (kernels.cu) and the CPU emulation of their
// exact reduction order (reduce_host.cpp, used by the tests) share one source.
#pragma once

#include <cstdint>

#include "device_math/device_math.hpp"
#include "lse_accumulator.hpp"

namespace numfuse::cuda::lse {

namespace dm = numfuse::device_math;

inline constexpr int block_threads = 256;  // threads of a row block: the tree has 8 levels

// The running log-sum-exp (m, s) and its rules are the shared ones
// (src/core/lse_accumulator.hpp), here bound to the device_math kernels so the
// GPU and its CPU emulation (reduce_host.cpp) compute the same bits.
using core::lse::lse_empty;
using core::lse::LseState;
using core::lse::neg_inf;
using core::lse::pos_inf;

struct DeviceMath {
    NUMFUSE_HD static double exp(double x) { return dm::exp_scalar(x); }
    NUMFUSE_HD static double log(double x) { return dm::log_scalar(x); }
};

template <class T>
NUMFUSE_HD inline void lse_add(LseState& st, T x) {
    core::lse::lse_add<DeviceMath>(st, static_cast<double>(x));
}

NUMFUSE_HD inline LseState lse_combine(LseState a, LseState b) {
    return core::lse::lse_combine<DeviceMath>(a, b);
}

template <class T>
NUMFUSE_HD inline T lse_result(LseState st) {
    return core::lse::lse_result<T, DeviceMath>(st);
}

// softmax / log_softmax of one element from its line's final state:
// exp(x - m) / s and (x - m) - log(s), in double and rounded once to T. (Not
// exp(x - lse): x - m is exact for the elements near the maximum, which carry the
// probability mass, so softmax([1, 1]) is exactly [0.5, 0.5].)
struct NormState {
    double m;
    double s;
    double log_s;
};

NUMFUSE_HD inline NormState norm_state(LseState st) { return {st.m, st.s, dm::log_scalar(st.s)}; }

template <class T, bool Log>
NUMFUSE_HD inline T normalized(T x, const NormState& ns) {
    const double d = static_cast<double>(x) - ns.m;
    return static_cast<T>(Log ? d - ns.log_s : dm::exp_scalar(d) / ns.s);
}

// How the GPU splits the reduction of x viewed as (outer, n, inner) over its middle
// axis. A function of the shape only, so the order of operations (and the bits of
// the result) do not depend on the GPU.
struct Plan {
    bool rows;               // row kernel (inner == 1): one block per (row, chunk), tree inside
    std::int64_t chunks;     // chunks per reduced line
    std::int64_t chunk_len;  // elements per chunk (the last may be shorter or empty)
};

NUMFUSE_HD inline Plan plan_for(std::int64_t outer, std::int64_t n, std::int64_t inner) {
    const std::int64_t columns = outer * inner;
    Plan p{};
    if (inner == 1 && outer <= 65535) {  // grid.y limit
        p.rows = true;
        p.chunk_len = 1 << 14;  // 16384 elements per block
        p.chunks = n > 0 ? (n + p.chunk_len - 1) / p.chunk_len : 1;
        if (p.chunks > 65535) {  // grid.x: longer chunks instead
            p.chunks = 65535;
            p.chunk_len = (n + p.chunks - 1) / p.chunks;
        }
    } else if (inner == 1) {
        p.rows = false;  // very many short rows: one thread per row
        p.chunks = 1;
        p.chunk_len = n > 0 ? n : 1;
    } else {
        // One thread per (column, chunk); aim for >= 2^18 threads, each with >= 64 elements.
        p.rows = false;
        p.chunks = (std::int64_t{1} << 18) / (columns > 0 ? columns : 1);
        const std::int64_t by_len = n / 64;
        if (p.chunks > by_len) p.chunks = by_len;
        if (p.chunks < 1) p.chunks = 1;
        p.chunk_len = n > 0 ? (n + p.chunks - 1) / p.chunks : 1;
    }
    return p;
}

}  // namespace numfuse::cuda::lse
