// The per-level reduction kernels behind logsumexp / softmax / log_softmax.
//
// Each instruction-set level (src/core/arch/<level>.cpp) fills one
// ReduceKernelTable with loops from src/core/arch/reduce_loops.hpp and
// softmax_loops.hpp; the level-independent driver (reduce.cpp) plans the
// layout, chunks the work, runs the threads and merges partial results in a
// fixed order.
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

    // --- lanes across outputs (one output per lane) ---------------------
    // Lane j, step k reads a + j*a_lane + k*a_step. State arrays m, s, c
    // hold one triple per lane and are padded to a multiple of batch_lanes.
    void (*strip_accumulate)(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step,
                             const char* b, std::ptrdiff_t b_lane, std::ptrdiff_t b_step,
                             std::size_t lanes, std::size_t steps, T* m, T* s,
                             T* c) noexcept = nullptr;

    // --- softmax / log_softmax (arch/softmax_loops.hpp) -------------------
    // A group is reduced in two passes: fold (its maximum m, then
    // sum exp(a - m) into s + c; softmax also stores each exp(a - m) into
    // out, so exp runs once per element) and write (softmax: out *= factor,
    // log_softmax: out = a - m - param). Groups longer than one chunk fold
    // each chunk with the chunk's own maximum; the driver merges the chunks
    // (log_softmax too: logsumexp's online fold would take x - m rounded).
    //
    // The largest of `start` and a[i*a_stride], i < n; NaN elements are
    // ignored (the sum pass turns them into a NaN sum).
    T (*run_max)(const char* a, std::ptrdiff_t a_stride, std::size_t n, T start) noexcept = nullptr;
    // (s, c) += sum of exp(a[i] - m), i < n, compensated (each addition's exact error
    // kept: Fast2Sum on lanes biased by 1, see softmax_loops.hpp), in an order
    // that depends only on n, each term from x - m as a double word (see
    // exp_difference; no rounding of the argument, which would reach log_softmax at a
    // dominant maximum, -log(1 + the other terms)); with out != nullptr each
    // exp(a[i] - m) is also stored at out[i*out_stride].
    // m is the maximum of the elements, or lowest() when all are -inf.
    void (*run_exp_sum)(const char* a, std::ptrdiff_t a_stride, char* out,
                        std::ptrdiff_t out_stride, std::size_t n, T m, T& s,
                        T& c) noexcept = nullptr;
    // out[i] *= factor, i < n.
    void (*run_scale)(char* out, std::ptrdiff_t out_stride, std::size_t n,
                      T factor) noexcept = nullptr;
    // out[i] = (a[i] - m) - param (log_softmax; two roundings, see log_softmax_value). out
    // may be a itself (same strides), never a partial overlap.
    void (*run_log_write)(const char* a, std::ptrdiff_t a_stride, char* out,
                          std::ptrdiff_t out_stride, std::size_t n, T m,
                          T param) noexcept = nullptr;
    // The same four over strips (lane j, step k at a + j*a_lane + k*a_step),
    // with one m / s / c / factor / param per lane. Only the first `lanes`
    // entries of the per-lane arrays are read or written. strip_exp_sum keeps a third
    // word d per lane (the sum is s + c + d: c's own additions compensated, since a lane
    // may take a chunk of tiny terms beside its maximum's 1, all of them in c); d starts
    // at 0 with s and c. With out (softmax) c's additions are plain and d is left as it is.
    void (*strip_max)(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step,
                      std::size_t lanes, std::size_t steps, T* m) noexcept = nullptr;
    void (*strip_exp_sum)(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step, char* out,
                          std::ptrdiff_t out_lane, std::ptrdiff_t out_step, std::size_t lanes,
                          std::size_t steps, const T* m, T* s, T* c, T* d) noexcept = nullptr;
    void (*strip_scale)(char* out, std::ptrdiff_t out_lane, std::ptrdiff_t out_step,
                        std::size_t lanes, std::size_t steps, const T* factor) noexcept = nullptr;
    void (*strip_log_write)(const char* a, std::ptrdiff_t a_lane, std::ptrdiff_t a_step, char* out,
                            std::ptrdiff_t out_lane, std::ptrdiff_t out_step, std::size_t lanes,
                            std::size_t steps, const T* m, const T* param) noexcept = nullptr;
    // softmax / log_softmax of groups of at most short_group_max elements,
    // one group per lane, folded and written in registers (no state arrays,
    // no per-output scalar work): lane j, element k at a + j*a_lane + k*a_step.
    void (*short_softmax)(SoftmaxKind kind, const char* a, std::ptrdiff_t a_lane,
                          std::ptrdiff_t a_step, char* out, std::ptrdiff_t out_lane,
                          std::ptrdiff_t out_step, std::size_t lanes,
                          std::size_t steps) noexcept = nullptr;
    // softmax / log_softmax of `rows` groups of n contiguous elements each (row r at
    // x + r*x_row and out + r*out_row; 1 <= n <= kReduceChunk), each row folded,
    // finished and written while it is in cache (its maximum, exp(x - m) summed and,
    // for softmax, stored, then the scaling / log pass; parameters and special values
    // from lse::softmax_parameters). out may be x itself (same row stride).
    void (*softmax_rows)(SoftmaxKind kind, const char* x, std::ptrdiff_t x_row, char* out,
                         std::ptrdiff_t out_row, std::size_t rows,
                         std::size_t n) noexcept = nullptr;
    // softmax / log_softmax of `lanes` groups across contiguous lanes (group j, element
    // k at x + j*sizeof(T) + k*x_step; out likewise; 1 <= steps <= kReduceChunk), as
    // softmax_rows: axis 0 of a C array, in strips that stay in L2 through the three
    // passes. nullptr on levels without it (the driver then takes the strip kernels).
    void (*softmax_columns)(SoftmaxKind kind, const char* x, std::ptrdiff_t x_step, char* out,
                            std::ptrdiff_t out_step, std::size_t lanes,
                            std::size_t steps) noexcept = nullptr;
};

struct ReduceKernelTable {
    ReduceKernels<float> f32;
    ReduceKernels<double> f64;
};

}  // namespace numfuse::core
