// Element-wise exp/log/erf and the logsumexp / softmax / log_softmax reductions on
// the GPU. The per-element math is src/core/device_math (the code the CPU tests
// check); this file only maps it onto threads.
//
// Compiled with -fmad=false (CMakeLists.txt): every fused multiply-add in the math
// is written out, so device and host results agree bit for bit.
#include <cuda_runtime.h>

#include <cstdint>

#include "device_math/device_math.hpp"
#include "launch.hpp"

namespace numfuse::cuda {
namespace {

namespace dm = numfuse::device_math;

constexpr int block_threads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill any current GPU
// (a few blocks per SM on 150+ SMs), few enough that each thread loops.
unsigned grid_for(std::int64_t n) {
    const std::int64_t blocks = (n + block_threads - 1) / block_threads;
    return static_cast<unsigned>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

template <class T, UnaryOp Op>
__device__ __forceinline__ T apply(T x) {
    if constexpr (Op == UnaryOp::exp) {
        return dm::exp_scalar(x);
    } else if constexpr (Op == UnaryOp::log) {
        return dm::log_scalar(x);
    } else {
        return dm::erf_scalar(x);
    }
}

template <class T, UnaryOp Op>
__global__ void __launch_bounds__(block_threads) unary_kernel(const T* __restrict__ x, T* y, std::int64_t n) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * block_threads;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x; i < n; i += stride) {
        y[i] = apply<T, Op>(x[i]);
    }
}

template <class T>
int unary_typed(UnaryOp op, const void* x, void* y, std::int64_t n, cudaStream_t stream) {
    const T* xs = static_cast<const T*>(x);
    T* ys = static_cast<T*>(y);
    const unsigned grid = grid_for(n);
    switch (op) {
        case UnaryOp::exp: unary_kernel<T, UnaryOp::exp><<<grid, block_threads, 0, stream>>>(xs, ys, n); break;
        case UnaryOp::log: unary_kernel<T, UnaryOp::log><<<grid, block_threads, 0, stream>>>(xs, ys, n); break;
        case UnaryOp::erf: unary_kernel<T, UnaryOp::erf><<<grid, block_threads, 0, stream>>>(xs, ys, n); break;
        default: return static_cast<int>(cudaErrorInvalidValue);
    }
    return static_cast<int>(cudaGetLastError());
}

// ---------------------------------------------------------------- logsumexp

// A running log-sum-exp: the maximum m and s = sum exp(x - m), s in double for
// both input types (float32 rows of 1e8 elements would lose digits in float).
// m = -inf with s = 0 is the empty state. NaN inputs make s NaN (the result is
// NaN); +inf inputs make m = +inf (the result is +inf unless a NaN is present).
struct LseState {
    double m;
    double s;
};

__device__ __forceinline__ double pos_inf() { return __longlong_as_double(0x7ff0000000000000ll); }
__device__ __forceinline__ double neg_inf() { return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull)); }
__device__ __forceinline__ LseState lse_empty() { return {neg_inf(), 0.0}; }

template <class T>
__device__ __forceinline__ void lse_add(LseState& st, T x) {
    const double xd = static_cast<double>(x);
    if (xd > st.m) {
        // exp(m - x) in T's own precision would do; double keeps s consistent.
        st.s = st.s * dm::exp_scalar(st.m - xd) + 1.0;
        st.m = xd;
    } else {
        st.s += (xd == st.m) ? 1.0 : dm::exp_scalar(xd - st.m);
    }
}

__device__ __forceinline__ LseState lse_combine(LseState a, LseState b) {
    if (b.m > a.m) {
        const LseState t = a;
        a = b;
        b = t;
    }
    // a.m >= b.m, or a NaN-free pair of -inf.
    const double w = (b.m == a.m) ? 1.0 : dm::exp_scalar(b.m - a.m);
    return {a.m, a.s + b.s * w};
}

template <class T>
__device__ __forceinline__ T lse_result(LseState st) {
    // m + log(s); m = -inf (empty or all -inf) gives -inf; m = +inf gives +inf.
    if (st.m == neg_inf() || st.m == pos_inf()) {
        return static_cast<T>(st.s != st.s ? st.s : st.m);
    }
    return static_cast<T>(st.m + dm::log_scalar(st.s));
}

// Contiguous rows (inner == 1): grid (chunks, outer); each block reduces elements
// [chunk * chunk_len, ...) of one row with a fixed shared-memory tree.
template <class T>
__global__ void __launch_bounds__(block_threads)
    lse_rows_partial(const T* __restrict__ x, LseState* partial, std::int64_t n, std::int64_t chunk_len) {
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
            const LseState c = lse_combine({sm[threadIdx.x], ss[threadIdx.x]}, {sm[threadIdx.x + half], ss[threadIdx.x + half]});
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

// Same, keeping the log-sum-exp in double for the normalisation pass.
__global__ void __launch_bounds__(block_threads)
    lse_finish_double(const LseState* partial, double* out, std::int64_t columns, std::int64_t chunks) {
    const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
    if (col >= columns) return;
    LseState st = partial[col * chunks];
    for (std::int64_t c = 1; c < chunks; ++c) st = lse_combine(st, partial[col * chunks + c]);
    out[col] = lse_result<double>(st);
}

// y = exp(x - lse) (softmax) or x - lse (log_softmax), element-wise.
template <class T, bool Log>
__global__ void __launch_bounds__(block_threads)
    normalize(const T* __restrict__ x, const double* __restrict__ lse, T* y, std::int64_t total, std::int64_t n,
              std::int64_t inner) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * block_threads;
    for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x; k < total; k += stride) {
        const std::int64_t col = (k / (n * inner)) * inner + k % inner;
        const T l = static_cast<T>(lse[col]);
        const T d = x[k] - l;
        y[k] = Log ? d : dm::exp_scalar(d);
    }
}

template <class T>
int lse_typed(Normalize norm, const void* xv, void* outv, std::int64_t outer, std::int64_t n, std::int64_t inner,
              cudaStream_t stream) {
    const T* x = static_cast<const T*>(xv);
    const std::int64_t columns = outer * inner;
    if (columns == 0) return 0;
    // Chunking is a function of the shape only, so results do not depend on the GPU.
    std::int64_t chunks, chunk_len;
    if (inner == 1) {
        chunk_len = 1 << 14;  // 16384 elements per block
        chunks = n > 0 ? (n + chunk_len - 1) / chunk_len : 1;
        if (chunks > 65535) {  // grid.x limit for clarity; longer chunks instead
            chunks = 65535;
            chunk_len = (n + chunks - 1) / chunks;
        }
    } else {
        // Aim for >= 2^18 threads overall, each with >= 64 elements.
        chunks = (std::int64_t{1} << 18) / columns;
        const std::int64_t by_len = n / 64;
        if (chunks > by_len) chunks = by_len;
        if (chunks < 1) chunks = 1;
        chunk_len = n > 0 ? (n + chunks - 1) / chunks : 1;
    }
    if (outer > 65535 && inner == 1) {
        // grid.y limit: fall back to the column kernel (one thread per row chunk).
        chunks = 1;
        chunk_len = n > 0 ? n : 1;
    }
    LseState* partial = nullptr;
    cudaError_t err = cudaMallocAsync(reinterpret_cast<void**>(&partial),
                                      static_cast<std::size_t>(columns * chunks) * sizeof(LseState), stream);
    if (err != cudaSuccess) return static_cast<int>(err);
    if (inner == 1 && outer <= 65535) {
        const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(outer));
        lse_rows_partial<T><<<grid, block_threads, 0, stream>>>(x, partial, n, chunk_len);
    } else {
        const std::int64_t threads = columns * chunks;
        const std::int64_t blocks = (threads + block_threads - 1) / block_threads;
        lse_cols_partial<T><<<static_cast<unsigned>(blocks), block_threads, 0, stream>>>(x, partial, n, inner, columns,
                                                                                        chunks, chunk_len);
    }
    const unsigned finish_blocks = static_cast<unsigned>((columns + block_threads - 1) / block_threads);
    if (norm == Normalize::none) {
        lse_finish<T><<<finish_blocks, block_threads, 0, stream>>>(partial, static_cast<T*>(outv), columns, chunks);
    } else {
        double* lse = nullptr;
        err = cudaMallocAsync(reinterpret_cast<void**>(&lse), static_cast<std::size_t>(columns) * sizeof(double), stream);
        if (err != cudaSuccess) {
            cudaFreeAsync(partial, stream);
            return static_cast<int>(err);
        }
        lse_finish_double<<<finish_blocks, block_threads, 0, stream>>>(partial, lse, columns, chunks);
        const std::int64_t total = columns * n;
        if (norm == Normalize::softmax) {
            normalize<T, false><<<grid_for(total), block_threads, 0, stream>>>(x, lse, static_cast<T*>(outv), total, n, inner);
        } else {
            normalize<T, true><<<grid_for(total), block_threads, 0, stream>>>(x, lse, static_cast<T*>(outv), total, n, inner);
        }
        cudaFreeAsync(lse, stream);
    }
    cudaFreeAsync(partial, stream);
    return static_cast<int>(cudaGetLastError());
}

}  // namespace

int launch_unary(UnaryOp op, Real dt, const void* x, void* y, std::int64_t n, std::uintptr_t stream) {
    if (n <= 0) return 0;
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    return dt == Real::f32 ? unary_typed<float>(op, x, y, n, s) : unary_typed<double>(op, x, y, n, s);
}

int launch_logsumexp(Normalize norm, Real dt, const void* x, void* out, std::int64_t outer, std::int64_t n,
                     std::int64_t inner, std::uintptr_t stream) {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    return dt == Real::f32 ? lse_typed<float>(norm, x, out, outer, n, inner, s)
                           : lse_typed<double>(norm, x, out, outer, n, inner, s);
}

}  // namespace numfuse::cuda
