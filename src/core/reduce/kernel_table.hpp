// The per-level reduction kernels behind logsumexp / softmax / log_softmax.
//
// Each instruction-set level (src/core/arch/<level>.cpp) fills one
// ReduceKernelTable with loops from src/core/arch/reduce_loops.hpp; the
// level-independent driver (reduce.cpp) plans the layout, chunks the work,
// runs the threads and merges partial results in a fixed order.
//
// The streaming state is the online max-and-rescale accumulator: per SIMD
// lane a running maximum m and a compensated scaled sum (s, c) with
//   sum over the lane's elements of b_i * exp(a_i - m)  ==  s + c
// (c holds the rounding errors of the additions: Knuth's TwoSum). When a
// lane sees a larger element, s and c are multiplied by exp(m_old - m_new).
//
// Conventions every kernel keeps:
//   * m starts at the lowest finite value (not -inf), so -inf elements give
//     exp(-inf - m) = 0 and never the NaN of (-inf) - (-inf);
//   * NaN never enters m (comparisons are false); a NaN element, or a +inf
//     one (exp(inf - inf)), makes s NaN: the driver then falls back to the
//     plain formula for that output, which is what SciPy does too;
//   * with weights b, elements whose weight is 0 are skipped entirely, even
//     when they are NaN or infinite (SciPy's masking rule).
#pragma once

#include <cstddef>

namespace numfuse::core {

enum class SoftmaxKind : int { softmax = 0, log_softmax = 1 };

// A merged (m, s, c) triple: the sum it stands for is (s + c) * exp(m).
template <class T>
struct ReducePartial {
    T m;
    T s;
    T c;
};

// The register state of one 1-d run accumulator, spilled between calls so a
// reduction over several runs (a multi-dimensional inner block) continues.
template <class T>
struct RunLaneState {
    static constexpr std::size_t capacity = 64;  // 4 batches of 16 floats
    std::size_t lanes = 0;                       // set by run_init
    alignas(64) T m[capacity];
    alignas(64) T s[capacity];
    alignas(64) T c[capacity];
};

// Longest reduced axis short_softmax handles.
inline constexpr std::size_t short_group_max = 16;

template <class T>
struct ReduceKernels {
    // Lanes of one SIMD batch; strip state arrays are padded to a multiple.
    std::size_t batch_lanes = 0;

    // --- lanes along the reduced axis (one output per run) ---------------
    void (*run_init)(RunLaneState<T>& state) noexcept = nullptr;
    // Folds a[i*a_stride] (weighted by b[i*b_stride] when b != nullptr),
    // i < n, into the state. Strides in bytes, any value.
    void (*run_accumulate)(const char* a, std::ptrdiff_t a_stride, const char* b,
                           std::ptrdiff_t b_stride, std::size_t n,
                           RunLaneState<T>& state) noexcept = nullptr;
    // Merges the lanes into one triple, in a fixed order.
    ReducePartial<T> (*run_finish)(const RunLaneState<T>& state) noexcept = nullptr;
    // out[i] = softmax: exp(a[i] - m) / param, log_softmax: a[i] - m - param.
    void (*run_write)(SoftmaxKind kind, const char* a, std::ptrdiff_t a_stride, char* out,
                      std::ptrdiff_t out_stride, std::size_t n, T m, T param) noexcept = nullptr;

    // --- lanes across outputs (one output per lane) ---------------------
    // Lane j, step k reads a + j*a_lane + k*a_step. State arrays m, s, c
    // hold one triple per lane and are padded to a multiple of batch_lanes.
    void (*strip_accumulate)(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step,
                             const char* b, std::ptrdiff_t b_lane, std::ptrdiff_t b_step,
                             std::size_t lanes, std::size_t steps, T* m, T* s,
                             T* c) noexcept = nullptr;
    // The softmax write of strip_accumulate's layout, with per-lane m, param.
    void (*strip_write)(SoftmaxKind kind, const char* a, std::ptrdiff_t a_lane,
                        std::ptrdiff_t a_step, char* out, std::ptrdiff_t out_lane,
                        std::ptrdiff_t out_step, std::size_t lanes, std::size_t steps, const T* m,
                        const T* param) noexcept = nullptr;
    // softmax / log_softmax of groups of at most short_group_max elements,
    // one group per lane, folded and written in registers (no state arrays,
    // no per-output scalar work): lane j, element k at a + j*a_lane + k*a_step.
    void (*short_softmax)(SoftmaxKind kind, const char* a, std::ptrdiff_t a_lane,
                          std::ptrdiff_t a_step, char* out, std::ptrdiff_t out_lane,
                          std::ptrdiff_t out_step, std::size_t lanes,
                          std::size_t steps) noexcept = nullptr;
};

struct ReduceKernelTable {
    ReduceKernels<float> f32;
    ReduceKernels<double> f64;
};

}  // namespace numfuse::core
