// Host-side entry points of the CUDA kernels (src/cuda/*.cu), callable from code
// compiled by the host compiler (src/python/cuda/module.cpp): raw device pointers, sizes
// and a stream, no CUDA types in the signatures. Each returns a cudaError_t as an
// int (0 = success); the caller turns errors into Python exceptions.
//
// All launches are asynchronous on `stream` (a cudaStream_t; 0 = the legacy
// default stream, 1 = cudaStreamLegacy, 2 = cudaStreamPerThread, as in the
// __cuda_array_interface__ protocol) on the current device.
#pragma once

#include <cstdint>

#include "functions.hpp"

namespace numfuse::cuda {

// The ufuncs with a device kernel: the function table's ufunc rows whose gpu
// form is device_math (NUMFUSE_GPU_UNARY_OPS, functions.hpp).
using UnaryOp = numfuse::core::UnaryOp;
enum class Real : int { f32 = 0, f64 = 1 };
enum class Normalize : int { none = 0, softmax = 1, log_softmax = 2 };

// y[i] = op(x[i]) for i < n; x and y contiguous, y may equal x.
int launch_unary(UnaryOp op, Real dt, const void* x, void* y, std::int64_t n,
                 std::uintptr_t stream);

// x viewed as a C-contiguous (outer, n, inner) array, reduced over the middle axis.
// norm == none: out[o * inner + i] = log sum_j exp(x[o, j, i]) (outer*inner values);
// softmax / log_softmax: out has x's shape.
// Deterministic: the split of each reduction into chunks depends only on (outer,
// n, inner), partial results combine in a fixed tree / fixed order, no atomics.
// Scratch memory comes from cudaMallocAsync on the stream.
int launch_logsumexp(Normalize norm, Real dt, const void* x, void* out, std::int64_t outer,
                     std::int64_t n, std::int64_t inner, std::uintptr_t stream);

// A fused element-wise program for the device interpreter (src/cuda/evaluate.cu):
// the expression engine's bytecode (numfuse::expr::Program, one stage) translated
// by src/cuda/program.cpp into families x operand types the GPU switch knows.
namespace vm {

inline constexpr int max_code = 128;
inline constexpr int max_registers = 64;
inline constexpr int max_inputs = 16;

// Element types: the expression engine's b, i, l, f, d.
enum class Type : std::uint8_t { b = 0, i = 1, l = 2, f = 3, d = 4 };

// The interpreter's operations: the language's operators here, then a family
// per function of the function table that the GPU runs (gpu column not none),
// named after its kernel functor.
// clang-format off
#define NUMFUSE_CUDA_VM_FAMILIES(X) \
    X(Add) X(Sub) X(Mul) X(Div) X(Neg) X(Abs) X(Copy) X(OnesLike) X(Maximum) X(Minimum) \
    X(Where) X(Cast) X(Less) X(LessEqual) X(Greater) X(GreaterEqual) X(Equal) X(NotEqual) \
    X(BitAnd) X(BitOr) X(BitXor) X(Invert) X(Pow) X(Isnan) X(Isinf) X(Isfinite) X(Signbit) \
    X(FloorDiv) X(Mod) X(Fmod)
// clang-format on
#define NUMFUSE_CUDA_VM_FUNCTION_FAMILY(name, arity, types, Functor, libm, ufunc, gpu, summary) \
    NUMFUSE_CUDA_VM_IF_GPU_##gpu(Functor, )
#define NUMFUSE_CUDA_VM_IF_GPU_none(...)
#define NUMFUSE_CUDA_VM_IF_GPU_device_math(...) __VA_ARGS__
#define NUMFUSE_CUDA_VM_IF_GPU_libdevice(...) __VA_ARGS__

enum class Family : std::uint8_t {
#define NUMFUSE_CUDA_VM_ENUM(name) name,
    NUMFUSE_CUDA_VM_FAMILIES(NUMFUSE_CUDA_VM_ENUM)
#undef NUMFUSE_CUDA_VM_ENUM
        NUMFUSE_FUNCTIONS(NUMFUSE_CUDA_VM_FUNCTION_FAMILY) count
};

struct Instr {
    std::uint8_t family;  // vm::Family
    std::uint8_t type;  // operand type (the second operand's for where; the source's for casts)
    std::uint8_t rtype;  // result type
    std::int8_t dst, a, b, c;
};

// The whole program travels as one kernel parameter (constant bank: every thread
// reads the same instruction, so the reads are broadcasts).
struct Program {
    Instr code[max_code];
    std::uint64_t const_bits[max_registers];  // constants (and scalar inputs): the value's bytes
    std::int8_t reg_input[max_registers];  // >= 0: loaded from array input k
    std::uint8_t reg_type[max_registers];
    const void* inputs[max_inputs];
    std::int16_t ncode = 0;
    std::int16_t nregs = 0;
    std::int16_t result = -1;
    std::uint8_t result_type = 0;
};

// out[i] = program(inputs[k][i]...) for i < n; every array input contiguous with n elements.
int launch_program(const Program& program, void* out, std::int64_t n, std::uintptr_t stream);

}  // namespace vm
}  // namespace numfuse::cuda
