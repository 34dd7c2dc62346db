// The VM's per-level kernel table: one function per opcode, filled by each
// instruction-set level's translation unit (arch/expr_ops.hpp) and chosen at
// run time with the level numfuse uses for its ufuncs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "expr/expr.hpp"
#include "numfuse_core.hpp"

namespace numfuse::expr {

// out[k] = op(a[k], b[k], c[k]) for k < n over contiguous registers (unused
// operands are nullptr). `out` may equal an operand of the same element size
// (element k is read before it is written). Returns RuntimeFlag bits.
using OpKernel = unsigned (*)(char* out, const char* a, const char* b, const char* c,
                              std::size_t n);
using OpKernelTable = OpKernel[opcode_count];

// The third operand of the bytes comparisons and contains() (a constant of
// Type::w): the element sizes of their two bytes operands, whose registers
// hold n elements of `a` and `b` bytes each.
struct BytesWidths {
    std::uint64_t a;
    std::uint64_t b;
};

// Conditions the VM turns into exceptions after a run (NumPy raises them).
enum RuntimeFlag : unsigned {
    runtime_ok = 0u,
    runtime_negative_int_power = 1u,  // ValueError: integers to negative integer powers
};

// The table of an instruction-set level the CPU runs (core::usable_levels()).
const OpKernelTable& level_kernels(core::Level level) noexcept;
// The table of the active instruction-set level (numfuse.set_level).
const OpKernelTable& active_kernels() noexcept;

}  // namespace numfuse::expr
