// Host-side entry points of the CUDA kernels (src/cuda/*.cu), callable from code
// compiled by the host compiler (src/cuda/module.cpp): raw device pointers, sizes
// and a stream, no CUDA types in the signatures. Each returns a cudaError_t as an
// int (0 = success); the caller turns errors into Python exceptions.
//
// All launches are asynchronous on `stream` (a cudaStream_t; 0 = the legacy
// default stream, 1 = cudaStreamLegacy, 2 = cudaStreamPerThread, as in the
// __cuda_array_interface__ protocol) on the current device.
#pragma once

#include <cstdint>

namespace numfuse::cuda {

enum class UnaryOp : int { exp = 0, log = 1, erf = 2 };
enum class Real : int { f32 = 0, f64 = 1 };
enum class Normalize : int { none = 0, softmax = 1, log_softmax = 2 };

// y[i] = op(x[i]) for i < n; x and y contiguous, y may equal x.
int launch_unary(UnaryOp op, Real dt, const void* x, void* y, std::int64_t n, std::uintptr_t stream);

// x viewed as a C-contiguous (outer, n, inner) array, reduced over the middle axis.
// norm == none: out[o * inner + i] = log sum_j exp(x[o, j, i]) (outer*inner values);
// softmax / log_softmax: out has x's shape.
// Deterministic: the split of each reduction into chunks depends only on (outer,
// n, inner), partial results combine in a fixed tree / fixed order, no atomics.
// Scratch memory comes from cudaMallocAsync on the stream.
int launch_logsumexp(Normalize norm, Real dt, const void* x, void* out, std::int64_t outer, std::int64_t n,
                     std::int64_t inner, std::uintptr_t stream);

// A fused element-wise program for the device interpreter (src/cuda/evaluate.cu).
// Built on the host from a numfuse::expr::Plan by src/cuda/program.cpp.
namespace vm {

inline constexpr int max_code = 128;
inline constexpr int max_registers = 64;
inline constexpr int max_inputs = 16;

// Element types (the expression engine's letters b, i, l, f, d).
enum class Type : std::uint8_t { b = 0, i = 1, l = 2, f = 3, d = 4 };

struct Instr {
    std::uint8_t op;   // vm::Op
    std::int8_t dst, a, b, c;
};

// The whole program travels as one kernel parameter (constant bank: uniform reads).
struct Program {
    Instr code[max_code];
    double const_value[max_registers];   // constants (as double, or int64 bits for l)
    std::int64_t const_int[max_registers];
    std::int8_t reg_input[max_registers];  // >= 0: register is input k; -1 otherwise
    std::uint8_t reg_type[max_registers];
    std::uint8_t reg_is_const[max_registers];
    std::int16_t ncode = 0;
    std::int16_t nregs = 0;
    std::int16_t result = -1;
    std::int16_t ninputs = 0;
    std::uint8_t result_type = 0;
    const void* inputs[max_inputs];
    std::uint8_t input_scalar[max_inputs];  // 1: a 0-d input broadcast to every element
};

int launch_program(const Program& program, void* out, std::int64_t n, std::uintptr_t stream);

}  // namespace vm
}  // namespace numfuse::cuda
