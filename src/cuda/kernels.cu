// The GPU ufuncs (exp, log, erf: functions.hpp) and the logsumexp / softmax / log_softmax
// reductions on the GPU. The per-element math is src/core/device_math (the code the CPU tests
// check); this file only maps it onto threads.
//
// Compiled with -fmad=false (CMakeLists.txt): every fused multiply-add in the math
// is written out, so device and host results agree bit for bit.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

// erf's coefficient rows come from a per-block shared-memory copy (see
// device_math/erf.hpp): unary_kernel<erf> fills it first.
#define NUMFUSE_DM_ERF_SHARED 1
#include "device_math/device_math.hpp"
#include "launch.hpp"
#include "lse_core.hpp"

namespace numfuse::cuda {
namespace {

namespace dm = numfuse::device_math;
using lse::combine;
using lse::lse_empty;
using lse::lse_result;
using lse::LseState;

constexpr int block_threads = lse::block_threads;

// Blocks for a grid-stride loop over n elements: enough to fill any current GPU
// (a few blocks per SM on 150+ SMs), few enough that each thread loops.
unsigned grid_for(std::int64_t n) {
    const std::int64_t blocks = (n + block_threads - 1) / block_threads;
    return static_cast<unsigned>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

// Each GPU ufunc (NUMFUSE_GPU_UNARY_OPS, functions.hpp) is numfuse's device code
// device_math::<name>_scalar.
template <UnaryOp Op>
struct DeviceOp;
#define NUMFUSE_CUDA_DEVICE_OP(name)                     \
    template <>                                          \
    struct DeviceOp<UnaryOp::name> {                     \
        template <class T>                               \
        __device__ __forceinline__ static T apply(T x) { \
            return dm::name##_scalar(x);                 \
        }                                                \
    };
NUMFUSE_GPU_UNARY_OPS(NUMFUSE_CUDA_DEVICE_OP)
#undef NUMFUSE_CUDA_DEVICE_OP

template <class T, UnaryOp Op>
__device__ __forceinline__ T apply(T x) {
    return DeviceOp<Op>::template apply<T>(x);
}

// x and y may be the same array (in place), so no __restrict__; every element is
// read before it is written, by the same thread.
//
// Memory access: 16-byte vectors (float4 / double2) when both pointers are 16-byte
// aligned (scalar loads reached 86-90 % of the copy bandwidth on an H100);
// misaligned arrays take the scalar kernel below.
template <class T>
struct Vec16;
template <>
struct Vec16<float> {
    using type = float4;
    static constexpr int width = 4;
};
template <>
struct Vec16<double> {
    using type = double2;
    static constexpr int width = 2;
};

template <class T, UnaryOp Op, class V>
__device__ __forceinline__ V apply_vec(V v) {
    if constexpr (Vec16<T>::width == 4) {
        return V{apply<T, Op>(v.x), apply<T, Op>(v.y), apply<T, Op>(v.z), apply<T, Op>(v.w)};
    } else {
        return V{apply<T, Op>(v.x), apply<T, Op>(v.y)};
    }
}

// Vectors per thread (a tuning choice per kernel; 1 by default): exp 1; log 2 (its float64 division
// is long: two independent ones overlap); erf 4 (amortises filling the shared rows).
__host__ __device__ constexpr int unroll_of(UnaryOp op) {
    return op == UnaryOp::erf ? 4 : (op == UnaryOp::log ? 2 : 1);
}

// Each block takes tiles of U * block_threads vectors (loads first, then results),
// one tile per block in the usual case: a grid as large as the array, as torch's
// element-wise kernels use. Measured on an H100 (1e8 elements, exp): this layout
// ran at the copy's speed (f32 0.271 ms vs a 0.273 ms cudaMemcpy, f64 0.535 vs
// 0.539) where a 4096-block grid-stride loop took 0.285 / 0.566.
template <class T, UnaryOp Op>
__global__ void __launch_bounds__(block_threads)
    unary_vec_kernel(const T* x, T* y, std::int64_t n) {
    if constexpr (Op == UnaryOp::erf) dm::erf_rows_to_shared();
    using V = typename Vec16<T>::type;
    constexpr int W = Vec16<T>::width;
    constexpr int U = unroll_of(Op);
    constexpr std::int64_t tile = std::int64_t{U} * block_threads;
    const std::int64_t nv = n / W;
    const V* xv = reinterpret_cast<const V*>(x);
    V* yv = reinterpret_cast<V*>(y);
    const std::int64_t tiles = (nv + tile - 1) / tile;
    for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const std::int64_t b = t * tile + threadIdx.x;
        if (b + (U - 1) * block_threads < nv) {
            V a[U];
#pragma unroll
            for (int u = 0; u < U; ++u) a[u] = xv[b + u * block_threads];
#pragma unroll
            for (int u = 0; u < U; ++u) yv[b + u * block_threads] = apply_vec<T, Op>(a[u]);
        } else {
            for (int u = 0; u < U; ++u) {
                if (b + u * block_threads < nv)
                    yv[b + u * block_threads] = apply_vec<T, Op>(xv[b + u * block_threads]);
            }
        }
    }
    // The last n % W elements: the first threads of block 0.
    if (blockIdx.x == 0 && threadIdx.x < n - nv * W) {
        const std::int64_t k = nv * W + threadIdx.x;
        y[k] = apply<T, Op>(x[k]);
    }
}

template <class T, UnaryOp Op>
__global__ void __launch_bounds__(block_threads) unary_kernel(const T* x, T* y, std::int64_t n) {
    if constexpr (Op == UnaryOp::erf) dm::erf_rows_to_shared();
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * block_threads;
    std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const T a0 = x[i], a1 = x[i + stride], a2 = x[i + 2 * stride], a3 = x[i + 3 * stride];
        y[i] = apply<T, Op>(a0);
        y[i + stride] = apply<T, Op>(a1);
        y[i + 2 * stride] = apply<T, Op>(a2);
        y[i + 3 * stride] = apply<T, Op>(a3);
    }
    for (; i < n; i += stride) y[i] = apply<T, Op>(x[i]);
}

template <class T, UnaryOp Op>
void unary_launch(const T* x, T* y, std::int64_t n, cudaStream_t stream) {
    const bool aligned =
        ((reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) & 15u) == 0;
    if (aligned && n >= 4 * Vec16<T>::width) {
        const std::int64_t tile = unroll_of(Op) * std::int64_t{block_threads};
        const std::int64_t tiles = (n / Vec16<T>::width + tile - 1) / tile;
        const unsigned grid = static_cast<unsigned>(tiles < 0x7fffffff ? tiles : 0x7fffffff);
        unary_vec_kernel<T, Op><<<grid, block_threads, 0, stream>>>(x, y, n);
    } else {
        unary_kernel<T, Op><<<grid_for(n), block_threads, 0, stream>>>(x, y, n);
    }
}

template <class T>
int unary_typed(UnaryOp op, const void* x, void* y, std::int64_t n, cudaStream_t stream) {
    const T* xs = static_cast<const T*>(x);
    T* ys = static_cast<T*>(y);
    switch (op) {
#define NUMFUSE_CUDA_UNARY_CASE(name) \
    case UnaryOp::name: unary_launch<T, UnaryOp::name>(xs, ys, n, stream); break;
        NUMFUSE_GPU_UNARY_OPS(NUMFUSE_CUDA_UNARY_CASE)
#undef NUMFUSE_CUDA_UNARY_CASE
        default: return static_cast<int>(cudaErrorInvalidValue);
    }
    return static_cast<int>(cudaGetLastError());
}

// ---------------------------------------------------------------- logsumexp
// The split and the per-lane order of operations are lse_core.hpp's (Plan, lse_fold,
// the combine tree); reduce_host.cpp runs the same steps on the CPU.

// The fixed combine tree over Lanes consecutive threads (at most a warp, or the whole
// block with sm/sk/ss its scratch); the result is valid in the group's first thread.
template <class T, int Lanes>
__device__ __forceinline__ LseState group_tree(LseState st, double* sm, double* sk, double* ss) {
    if constexpr (Lanes > 32) {
        sm[threadIdx.x] = st.m;
        sk[threadIdx.x] = st.k;
        ss[threadIdx.x] = st.s;
        __syncthreads();
        for (int half = Lanes / 2; half >= 32; half /= 2) {
            if (static_cast<int>(threadIdx.x) < half) {
                const int o = static_cast<int>(threadIdx.x) + half;
                const LseState c = combine<T>({sm[threadIdx.x], sk[threadIdx.x], ss[threadIdx.x]},
                                              {sm[o], sk[o], ss[o]});
                sm[threadIdx.x] = c.m;
                sk[threadIdx.x] = c.k;
                ss[threadIdx.x] = c.s;
            }
            __syncthreads();
        }
        st = {sm[threadIdx.x], sk[threadIdx.x], ss[threadIdx.x]};
    }
    constexpr int width = Lanes < 32 ? Lanes : 32;
    for (int half = width / 2; half > 0; half /= 2) {
        const LseState other{__shfl_down_sync(0xffffffffu, st.m, half, width),
                             __shfl_down_sync(0xffffffffu, st.k, half, width),
                             __shfl_down_sync(0xffffffffu, st.s, half, width)};
        st = combine<T>(st, other);
    }
    return st;
}

// Contiguous rows (inner == 1): a group of Lanes threads per (row, chunk) item,
// block_threads / Lanes items per block. Writes the row's result to `out` when
// out != nullptr (one chunk per row), else the chunk's state to partial[item].
template <class T, int Lanes>
__global__ void __launch_bounds__(block_threads)
    lse_rows(const T* __restrict__ x, LseState* partial, T* out, std::int64_t items, std::int64_t n,
             std::int64_t chunks, std::int64_t chunk_len) {
    constexpr int groups = block_threads / Lanes;
    __shared__ double sm[block_threads];
    __shared__ double ss[block_threads];
    __shared__ double sk[block_threads];
    const int lane = static_cast<int>(threadIdx.x) % Lanes;
    const std::int64_t item =
        static_cast<std::int64_t>(blockIdx.x) * groups + static_cast<int>(threadIdx.x) / Lanes;
    const bool live = item < items;
    LseState st = lse_empty();
    if (live) {
        const std::int64_t row = item / chunks, c = item % chunks;
        const std::int64_t begin = c * chunk_len;
        const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
        const std::int64_t len = end > begin ? end - begin : 0;
        lse::lse_fold(st, x + row * n + begin + lane, lse::lane_count(len, lane, Lanes), Lanes);
    }
    st = group_tree<T, Lanes>(st, sm, sk, ss);
    if (live && lane == 0) {
        if (out != nullptr) {
            out[item] = lse_result<T>(st);
        } else {
            partial[item] = st;
        }
    }
}

// The counts and sums (k, s) over Lanes consecutive threads in the fixed tree (lane
// t + half added into lane t), valid in every thread of the group.
template <int Lanes>
__device__ __forceinline__ void group_sum(double& k, double& s, double* scratch_k,
                                          double* scratch_s) {
    if constexpr (Lanes > 32) {
        scratch_k[threadIdx.x] = k;
        scratch_s[threadIdx.x] = s;
        __syncthreads();
        for (int half = Lanes / 2; half >= 32; half /= 2) {
            if (static_cast<int>(threadIdx.x) < half) {
                const int o = static_cast<int>(threadIdx.x) + half;
                scratch_k[threadIdx.x] = scratch_k[threadIdx.x] + scratch_k[o];
                scratch_s[threadIdx.x] = scratch_s[threadIdx.x] + scratch_s[o];
            }
            __syncthreads();
        }
        k = scratch_k[threadIdx.x];
        s = scratch_s[threadIdx.x];
    }
    constexpr int width = Lanes < 32 ? Lanes : 32;
    for (int half = width / 2; half > 0; half /= 2) {
        k += __shfl_down_sync(0xffffffffu, k, half, width);
        s += __shfl_down_sync(0xffffffffu, s, half, width);
    }
    if constexpr (Lanes > 32) {
        __syncthreads();
        if (threadIdx.x == 0) {
            scratch_k[0] = k;
            scratch_s[0] = s;
        }
        __syncthreads();
        k = scratch_k[0];
        s = scratch_s[0];
    } else {
        k = __shfl_sync(0xffffffffu, k, 0, Lanes);
        s = __shfl_sync(0xffffffffu, s, 0, Lanes);
    }
}

// The maximum over Lanes consecutive threads (NaN ignored), in every thread.
template <int Lanes>
__device__ __forceinline__ double group_max(double m, double* scratch) {
    constexpr int width = Lanes < 32 ? Lanes : 32;
    for (int half = width / 2; half > 0; half /= 2) {
        const double o = __shfl_xor_sync(0xffffffffu, m, half);
        if (o > m) m = o;
    }
    if constexpr (Lanes > 32) {
        if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = m;
        __syncthreads();
        m = scratch[0];
        for (int w = 1; w < Lanes / 32; ++w) {
            if (scratch[w] > m) m = scratch[w];
        }
        __syncthreads();
    }
    return m;
}

// Rows of n <= Lanes * Regs elements (one chunk), a group of Lanes threads per row,
// each lane keeping its elements in registers (lse_core.hpp, rows_in_registers, gives
// the order of operations): logsumexp (Norm none) writes out[row]; softmax /
// log_softmax write the row of y, reading x once. y may be x: every element is read by
// the thread that writes it, before it writes.
template <class T, int Lanes, int Regs, Normalize Norm>
__global__ void __launch_bounds__(block_threads)
    rows_in_registers(const T* x, T* y, std::int64_t rows, std::int64_t n) {
    constexpr int groups = block_threads / Lanes;
    __shared__ double scratch[block_threads];
    __shared__ double scratch_k[block_threads];
    const int lane = static_cast<int>(threadIdx.x) % Lanes;
    const std::int64_t row =
        static_cast<std::int64_t>(blockIdx.x) * groups + static_cast<int>(threadIdx.x) / Lanes;
    const std::int64_t count = row < rows ? lse::lane_count(n, lane, Lanes) : 0;
    const std::int64_t first = row * n + lane;
    // The elements, then (softmax) their terms: doubles only where the terms are kept,
    // so that float rows take half the registers (more blocks per SM) otherwise.
    using Slot = std::conditional_t<Norm == Normalize::softmax, double, T>;
    Slot w[Regs];
#pragma unroll
    for (int k = 0; k < Regs; ++k) {
        if (k < count) w[k] = x[first + static_cast<std::int64_t>(k) * Lanes];
    }
    double m = lse::neg_inf();
#pragma unroll
    for (int k = 0; k < Regs; ++k) {
        if (k<count&& static_cast<double>(w[k])> m) m = static_cast<double>(w[k]);
    }
    m = group_max<Lanes>(m, scratch);
    LseState st{m, 0.0, 0.0};
#pragma unroll
    for (int k = 0; k < Regs; ++k) {
        if (k < count) {
            const double term =
                core::lse::lse_add_below<lse::TermExp<T>>(st, static_cast<double>(w[k]));
            if constexpr (Norm == Normalize::softmax) w[k] = term;
        }
    }
    group_sum<Lanes>(st.k, st.s, scratch_k, scratch);
    if constexpr (Norm == Normalize::none) {
        if (lane == 0 && row < rows) y[row] = lse_result<T>(st);
    } else {
        const lse::NormState ns = lse::norm_state(st);
        const bool finite_max = lse::finite_max(ns);
#pragma unroll
        for (int k = 0; k < Regs; ++k) {
            if (k < count) {
                const std::int64_t j = first + static_cast<std::int64_t>(k) * Lanes;
                T r;
                if constexpr (Norm == Normalize::softmax) {
                    // The kept term is exp(x - m) when m is finite; else from x again.
                    r = finite_max ? lse::softmax_of_term<T>(w[k], ns)
                                   : lse::normalized<T, false>(x[j], ns);
                } else {
                    r = lse::normalized<T, true>(static_cast<T>(w[k]), ns);
                }
                y[j] = r;
            }
        }
    }
}

// Strided columns (inner > 1): one thread per (column, chunk), folding its chunk of the
// reduced axis; neighbouring threads read neighbouring columns. Writes the column's
// result to `out` when out != nullptr (one chunk per column), else partial.
template <class T>
__global__ void __launch_bounds__(block_threads)
    lse_cols(const T* __restrict__ x, LseState* partial, T* out, std::int64_t n, std::int64_t inner,
             std::int64_t columns, std::int64_t chunks, std::int64_t chunk_len) {
    const std::int64_t id = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
    if (id >= columns * chunks) return;
    const std::int64_t col = id % columns;  // fastest: coalesced
    const std::int64_t chunk = id / columns;
    const std::int64_t o = col / inner, i = col % inner;
    const std::int64_t begin = chunk * chunk_len;
    const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
    LseState st = lse_empty();
    if (end > begin) lse::lse_fold(st, x + (o * n + begin) * inner + i, end - begin, inner);
    if (out != nullptr) {
        out[col] = lse_result<T>(st);
    } else {
        partial[col * chunks + chunk] = st;
    }
}

// A group of Lanes threads per line: lane t combines the line's chunks t, t + Lanes,
// ... in order, then the group's tree. Writes the result (Norm false) or the line's
// (max, sum, log sum) for the normalisation pass (Norm true).
template <class T, int Lanes, bool Norm>
__global__ void __launch_bounds__(block_threads)
    lse_finish(const LseState* __restrict__ partial, T* out, lse::NormState* norm_out,
               std::int64_t columns, std::int64_t chunks) {
    constexpr int groups = block_threads / Lanes;
    __shared__ double sm[block_threads];
    __shared__ double ss[block_threads];
    __shared__ double sk[block_threads];
    const int lane = static_cast<int>(threadIdx.x) % Lanes;
    const std::int64_t col =
        static_cast<std::int64_t>(blockIdx.x) * groups + static_cast<int>(threadIdx.x) / Lanes;
    LseState st = lse_empty();
    if (col < columns) {
        for (std::int64_t c = lane; c < chunks; c += Lanes) {
            st = combine<T>(st, partial[col * chunks + c]);
        }
    }
    st = group_tree<T, Lanes>(st, sm, sk, ss);
    if (col < columns && lane == 0) {
        if constexpr (Norm) {
            norm_out[col] = lse::norm_state(st);
        } else {
            out[col] = lse_result<T>(st);
        }
    }
}

// y = exp(x - m) / s (softmax) or (x - m) - log s (log_softmax); y may be x.
// Rows (inner == 1): one block per (row, piece of norm_piece elements).
inline constexpr std::int64_t norm_piece = block_threads * 16;

template <class T, bool Log>
__global__ void __launch_bounds__(block_threads)
    normalize_rows(const T* x, const lse::NormState* __restrict__ state, T* y, std::int64_t n,
                   std::int64_t pieces) {
    const std::int64_t row = blockIdx.x / pieces;
    const std::int64_t begin = (blockIdx.x % pieces) * norm_piece;
    const std::int64_t end = begin + norm_piece < n ? begin + norm_piece : n;
    const lse::NormState ns = state[row];
    for (std::int64_t j = begin + threadIdx.x; j < end; j += block_threads) {
        const std::int64_t k = row * n + j;
        y[k] = lse::normalized<T, Log>(x[k], ns);
    }
}

// Columns (inner > 1): one block per (outer index, piece of 16 positions along the
// axis, 256 columns); each thread one column, its state read once.
inline constexpr std::int64_t norm_col_piece = 16;

template <class T, bool Log>
__global__ void __launch_bounds__(block_threads)
    normalize_cols(const T* x, const lse::NormState* __restrict__ state, T* y, std::int64_t n,
                   std::int64_t inner, std::int64_t col_blocks, std::int64_t pieces) {
    const std::int64_t b = blockIdx.x;
    const std::int64_t i = (b % col_blocks) * block_threads + threadIdx.x;
    const std::int64_t rest = b / col_blocks;
    const std::int64_t begin = (rest % pieces) * norm_col_piece;
    const std::int64_t o = rest / pieces;
    if (i >= inner) return;
    const std::int64_t end = begin + norm_col_piece < n ? begin + norm_col_piece : n;
    const lse::NormState ns = state[o * inner + i];
    for (std::int64_t j = begin; j < end; ++j) {
        const std::int64_t k = (o * n + j) * inner + i;
        y[k] = lse::normalized<T, Log>(x[k], ns);
    }
}

unsigned blocks_for(std::int64_t items, std::int64_t per_block) {
    return static_cast<unsigned>((items + per_block - 1) / per_block);
}

// The rows_in_registers kernel for this plan and normalisation.
template <class T, Normalize Norm>
void launch_rows_in_registers(const lse::Plan& plan, const T* x, T* y, std::int64_t rows,
                              std::int64_t n, cudaStream_t stream) {
    constexpr int regs = lse::warp_regs;
    switch (plan.lanes) {
        case 4:
            rows_in_registers<T, 4, regs, Norm>
                <<<blocks_for(rows, block_threads / 4), block_threads, 0, stream>>>(x, y, rows, n);
            break;
        case 8:
            rows_in_registers<T, 8, regs, Norm>
                <<<blocks_for(rows, block_threads / 8), block_threads, 0, stream>>>(x, y, rows, n);
            break;
        case 16:
            rows_in_registers<T, 16, regs, Norm>
                <<<blocks_for(rows, block_threads / 16), block_threads, 0, stream>>>(x, y, rows, n);
            break;
        case 32:
            rows_in_registers<T, 32, regs, Norm>
                <<<blocks_for(rows, block_threads / 32), block_threads, 0, stream>>>(x, y, rows, n);
            break;
        default:
            rows_in_registers<T, block_threads, lse::block_regs, Norm>
                <<<blocks_for(rows, 1), block_threads, 0, stream>>>(x, y, rows, n);
    }
}

template <class T>
void launch_finish(const lse::Plan& plan, const LseState* partial, T* out, lse::NormState* norm_out,
                   std::int64_t columns, cudaStream_t stream) {
    constexpr int warp = lse::warp_lanes;
    if (plan.finish_lanes == warp) {
        const unsigned blocks = blocks_for(columns, block_threads / warp);
        if (norm_out != nullptr) {
            lse_finish<T, warp, true><<<blocks, block_threads, 0, stream>>>(partial, out, norm_out,
                                                                            columns, plan.chunks);
        } else {
            lse_finish<T, warp, false><<<blocks, block_threads, 0, stream>>>(partial, out, norm_out,
                                                                             columns, plan.chunks);
        }
    } else if (norm_out != nullptr) {
        lse_finish<T, block_threads, true><<<blocks_for(columns, 1), block_threads, 0, stream>>>(
            partial, out, norm_out, columns, plan.chunks);
    } else {
        lse_finish<T, block_threads, false><<<blocks_for(columns, 1), block_threads, 0, stream>>>(
            partial, out, norm_out, columns, plan.chunks);
    }
}

template <class T>
int lse_typed(Normalize norm, const void* xv, void* outv, std::int64_t outer, std::int64_t n,
              std::int64_t inner, cudaStream_t stream) {
    const T* x = static_cast<const T*>(xv);
    T* out = static_cast<T*>(outv);
    const std::int64_t columns = outer * inner;
    if (columns == 0) return 0;
    const lse::Plan plan = lse::plan_for(outer, n, inner);
    if (lse::rows_in_registers(plan, n)) {
        if (norm == Normalize::none) {
            launch_rows_in_registers<T, Normalize::none>(plan, x, out, outer, n, stream);
        } else if (norm == Normalize::softmax) {
            launch_rows_in_registers<T, Normalize::softmax>(plan, x, out, outer, n, stream);
        } else {
            launch_rows_in_registers<T, Normalize::log_softmax>(plan, x, out, outer, n, stream);
        }
        return static_cast<int>(cudaGetLastError());
    }

    // One chunk per line and a plain logsumexp: the reducing kernel writes the result.
    const bool direct = norm == Normalize::none && plan.chunks == 1;
    LseState* partial = nullptr;
    cudaError_t err = cudaSuccess;
    if (!direct) {
        err = cudaMallocAsync(reinterpret_cast<void**>(&partial),
                              static_cast<std::size_t>(columns * plan.chunks) * sizeof(LseState),
                              stream);
        if (err != cudaSuccess) return static_cast<int>(err);
    }
    T* direct_out = direct ? out : nullptr;
    // (warp_rows always fit in registers: warp_row_max == warp_lanes * warp_regs.)
    if (plan.layout != lse::Layout::columns) {
        const std::int64_t items = outer * plan.chunks;
        lse_rows<T, block_threads><<<blocks_for(items, 1), block_threads, 0, stream>>>(
            x, partial, direct_out, items, n, plan.chunks, plan.chunk_len);
    } else {
        lse_cols<T><<<blocks_for(columns * plan.chunks, block_threads), block_threads, 0, stream>>>(
            x, partial, direct_out, n, inner, columns, plan.chunks, plan.chunk_len);
    }
    if (direct) return static_cast<int>(cudaGetLastError());
    if (norm == Normalize::none) {
        launch_finish<T>(plan, partial, out, nullptr, columns, stream);
    } else {
        lse::NormState* norm_states = nullptr;
        err = cudaMallocAsync(reinterpret_cast<void**>(&norm_states),
                              static_cast<std::size_t>(columns) * sizeof(lse::NormState), stream);
        if (err != cudaSuccess) {
            cudaFreeAsync(partial, stream);
            return static_cast<int>(err);
        }
        launch_finish<T>(plan, partial, nullptr, norm_states, columns, stream);
        const bool log = norm == Normalize::log_softmax;
        if (inner == 1) {
            const std::int64_t pieces = n > 0 ? (n + norm_piece - 1) / norm_piece : 1;
            const unsigned blocks = blocks_for(outer * pieces, 1);
            if (log) {
                normalize_rows<T, true>
                    <<<blocks, block_threads, 0, stream>>>(x, norm_states, out, n, pieces);
            } else {
                normalize_rows<T, false>
                    <<<blocks, block_threads, 0, stream>>>(x, norm_states, out, n, pieces);
            }
        } else {
            const std::int64_t col_blocks = (inner + block_threads - 1) / block_threads;
            const std::int64_t pieces = n > 0 ? (n + norm_col_piece - 1) / norm_col_piece : 1;
            const unsigned blocks = blocks_for(outer * pieces * col_blocks, 1);
            if (log) {
                normalize_cols<T, true><<<blocks, block_threads, 0, stream>>>(
                    x, norm_states, out, n, inner, col_blocks, pieces);
            } else {
                normalize_cols<T, false><<<blocks, block_threads, 0, stream>>>(
                    x, norm_states, out, n, inner, col_blocks, pieces);
            }
        }
        cudaFreeAsync(norm_states, stream);
    }
    cudaFreeAsync(partial, stream);
    return static_cast<int>(cudaGetLastError());
}

}  // namespace

int launch_unary(UnaryOp op, Real dt, const void* x, void* y, std::int64_t n,
                 std::uintptr_t stream) {
    if (n <= 0) return 0;
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    return dt == Real::f32 ? unary_typed<float>(op, x, y, n, s)
                           : unary_typed<double>(op, x, y, n, s);
}

int launch_logsumexp(Normalize norm, Real dt, const void* x, void* out, std::int64_t outer,
                     std::int64_t n, std::int64_t inner, std::uintptr_t stream) {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    return dt == Real::f32 ? lse_typed<float>(norm, x, out, outer, n, inner, s)
                           : lse_typed<double>(norm, x, out, outer, n, inner, s);
}

}  // namespace numfuse::cuda
