// The GPU ufuncs (exp, log, erf: functions.hpp) and the logsumexp / softmax / log_softmax
// reductions on the GPU. The per-element math is src/core/device_math (the code the CPU tests
// check); this file only maps it onto threads.
//
// Compiled with -fmad=false (CMakeLists.txt): every fused multiply-add in the math
// is written out, so device and host results agree bit for bit.
#include <cuda_runtime.h>

#include <cstdint>

// erf's coefficient rows come from a per-block shared-memory copy (see
// device_math/erf.hpp): unary_kernel<erf> fills it first.
#define NUMFUSE_DM_ERF_SHARED 1
#include "device_math/device_math.hpp"
#include "launch.hpp"
#include "lse_core.hpp"

namespace numfuse::cuda {
namespace {

namespace dm = numfuse::device_math;
using lse::lse_add;
using lse::lse_combine;
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

// Contiguous rows (inner == 1): grid (chunks, outer); each block reduces elements
// [chunk * chunk_len, ...) of one row with a fixed shared-memory tree.
template <class T>
__global__ void __launch_bounds__(block_threads)
    lse_rows_partial(const T* __restrict__ x, LseState* partial, std::int64_t n,
                     std::int64_t chunk_len) {
    __shared__ double sm[block_threads];
    __shared__ double ss[block_threads];
    const std::int64_t row = blockIdx.y;
    const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * chunk_len;
    const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
    const T* xr = x + row * n;
    LseState st = lse_empty();
    for (std::int64_t j = begin + threadIdx.x; j < end; j += block_threads) lse_add(st, xr[j]);
    sm[threadIdx.x] = st.m;
    ss[threadIdx.x] = st.s;
    __syncthreads();
    for (int half = block_threads / 2; half > 0; half /= 2) {
        if (static_cast<int>(threadIdx.x) < half) {
            const LseState c = lse_combine({sm[threadIdx.x], ss[threadIdx.x]},
                                           {sm[threadIdx.x + half], ss[threadIdx.x + half]});
            sm[threadIdx.x] = c.m;
            ss[threadIdx.x] = c.s;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[row * gridDim.x + blockIdx.x] = {sm[0], ss[0]};
}

// Strided columns (inner > 1): one thread per (column, chunk), sequential over its
// chunk of the reduced axis; neighbouring threads read neighbouring columns.
template <class T>
__global__ void __launch_bounds__(block_threads)
    lse_cols_partial(const T* __restrict__ x, LseState* partial, std::int64_t n, std::int64_t inner,
                     std::int64_t columns, std::int64_t chunks, std::int64_t chunk_len) {
    const std::int64_t id = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
    if (id >= columns * chunks) return;
    const std::int64_t col = id % columns;  // fastest: coalesced
    const std::int64_t chunk = id / columns;
    const std::int64_t o = col / inner, i = col % inner;
    const std::int64_t begin = chunk * chunk_len;
    const std::int64_t end = begin + chunk_len < n ? begin + chunk_len : n;
    const T* xc = x + o * n * inner + i;
    LseState st = lse_empty();
    for (std::int64_t j = begin; j < end; ++j) lse_add(st, xc[j * inner]);
    partial[col * chunks + chunk] = st;
}

// One thread per column: combine its chunks in index order, write the result.
template <class T>
__global__ void __launch_bounds__(block_threads)
    lse_finish(const LseState* partial, T* out, std::int64_t columns, std::int64_t chunks) {
    const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
    if (col >= columns) return;
    LseState st = partial[col * chunks];
    for (std::int64_t c = 1; c < chunks; ++c) st = lse_combine(st, partial[col * chunks + c]);
    out[col] = lse_result<T>(st);
}

// Same, keeping each line's (max, sum, log sum) for the normalisation pass.
__global__ void __launch_bounds__(block_threads)
    lse_finish_norm(const LseState* partial, lse::NormState* out, std::int64_t columns,
                    std::int64_t chunks) {
    const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
    if (col >= columns) return;
    LseState st = partial[col * chunks];
    for (std::int64_t c = 1; c < chunks; ++c) st = lse_combine(st, partial[col * chunks + c]);
    out[col] = lse::norm_state(st);
}

// y = exp(x - m) / s (softmax) or (x - m) - log s (log_softmax), element-wise;
// y may be x (in place).
template <class T, bool Log>
__global__ void __launch_bounds__(block_threads)
    normalize(const T* x, const lse::NormState* __restrict__ state, T* y, std::int64_t total,
              std::int64_t n, std::int64_t inner) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * block_threads;
    for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
         k < total; k += stride) {
        const std::int64_t col = (k / (n * inner)) * inner + k % inner;
        y[k] = lse::normalized<T, Log>(x[k], state[col]);
    }
}

template <class T>
int lse_typed(Normalize norm, const void* xv, void* outv, std::int64_t outer, std::int64_t n,
              std::int64_t inner, cudaStream_t stream) {
    const T* x = static_cast<const T*>(xv);
    const std::int64_t columns = outer * inner;
    if (columns == 0) return 0;
    const lse::Plan plan = lse::plan_for(outer, n, inner);
    const std::int64_t chunks = plan.chunks, chunk_len = plan.chunk_len;
    LseState* partial = nullptr;
    cudaError_t err =
        cudaMallocAsync(reinterpret_cast<void**>(&partial),
                        static_cast<std::size_t>(columns * chunks) * sizeof(LseState), stream);
    if (err != cudaSuccess) return static_cast<int>(err);
    if (plan.rows) {
        const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(outer));
        lse_rows_partial<T><<<grid, block_threads, 0, stream>>>(x, partial, n, chunk_len);
    } else {
        const std::int64_t threads = columns * chunks;
        const std::int64_t blocks = (threads + block_threads - 1) / block_threads;
        lse_cols_partial<T><<<static_cast<unsigned>(blocks), block_threads, 0, stream>>>(
            x, partial, n, inner, columns, chunks, chunk_len);
    }
    const unsigned finish_blocks =
        static_cast<unsigned>((columns + block_threads - 1) / block_threads);
    if (norm == Normalize::none) {
        lse_finish<T><<<finish_blocks, block_threads, 0, stream>>>(partial, static_cast<T*>(outv),
                                                                   columns, chunks);
    } else {
        lse::NormState* norm_states = nullptr;
        err = cudaMallocAsync(reinterpret_cast<void**>(&norm_states),
                              static_cast<std::size_t>(columns) * sizeof(lse::NormState), stream);
        if (err != cudaSuccess) {
            cudaFreeAsync(partial, stream);
            return static_cast<int>(err);
        }
        lse_finish_norm<<<finish_blocks, block_threads, 0, stream>>>(partial, norm_states, columns,
                                                                     chunks);
        const std::int64_t total = columns * n;
        if (norm == Normalize::softmax) {
            normalize<T, false><<<grid_for(total), block_threads, 0, stream>>>(
                x, norm_states, static_cast<T*>(outv), total, n, inner);
        } else {
            normalize<T, true><<<grid_for(total), block_threads, 0, stream>>>(
                x, norm_states, static_cast<T*>(outv), total, n, inner);
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
