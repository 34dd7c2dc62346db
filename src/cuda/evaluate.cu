// numfuse.cuda.evaluate: a device-side interpreter of the expression engine's
// bytecode. One kernel runs the whole fused program for each element (no
// full-size temporaries in device memory): each thread loads its element of every
// input into a small register file, runs the instructions, stores the result.
// The instruction stream is a kernel parameter, so every thread of a warp reads the
// same instruction (constant-bank broadcast) and the switch never diverges.
//
// Semantics follow src/core/arch/expr_ops.hpp (NumPy's loops): integer arithmetic
// wraps, maximum/minimum propagate NaN, float -> int casts give INT_MIN out of
// range, round is half-to-even. exp, log and erf are numfuse's own (device_math,
// <= 1 ULP, the same code as the CPU tests); the other transcendental functions are
// CUDA's libdevice (within 1-4 ULP per the CUDA Programming Guide's tables), so
// they may differ from the CPU result in the last bits.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

// erf reads its coefficient rows from a per-block shared-memory copy
// (device_math/erf.hpp); program_kernel fills it first.
#define NUMFUSE_DM_ERF_SHARED 1
#include "launch.hpp"
#include "vm_exec.hpp"

namespace numfuse::cuda::vm {
namespace {

constexpr int block_threads = 256;

__global__ void __launch_bounds__(block_threads)
    program_kernel(const Program p, void* out, std::int64_t n) {
    numfuse::device_math::erf_rows_to_shared();
    Reg r[max_registers];
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * block_threads;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x;
         i < n; i += stride) {
        run_element(p, r, out, i);
    }
}

}  // namespace

int launch_program(const Program& program, void* out, std::int64_t n, std::uintptr_t stream) {
    if (n <= 0) return 0;
    const std::int64_t blocks = (n + block_threads - 1) / block_threads;
    const unsigned grid = static_cast<unsigned>(blocks < 4096 ? blocks : 4096);
    program_kernel<<<grid, block_threads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(program, out,
                                                                                       n);
    return static_cast<int>(cudaGetLastError());
}

}  // namespace numfuse::cuda::vm
