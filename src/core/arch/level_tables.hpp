// Entry points of the per-level translation units (sse2.cpp, avx2_fma.cpp,
// avx512.cpp). Only dispatch.cpp calls them, and only for levels the CPU runs.
#pragma once

#include "expr/kernel_table.hpp"
#include "numfuse_core.hpp"
#include "reduce/kernel_table.hpp"

namespace numfuse::core {

// [operation][dtype: f32, f64][streaming stores: no, yes]
using UnaryTable = UnaryLoop[unary_op_count][simd_dtype_count][2];

#define NUMFUSE_DECLARE_LEVEL_TABLE(name) void fill_unary_table_##name(UnaryTable& table) noexcept;
NUMFUSE_LEVELS(NUMFUSE_DECLARE_LEVEL_TABLE)
#undef NUMFUSE_DECLARE_LEVEL_TABLE

// logsumexp / softmax loops (reduce/kernel_table.hpp); reduce/reduce.cpp
// calls these, again only for levels the CPU runs.
#define NUMFUSE_DECLARE_REDUCE_TABLE(name) \
    void fill_reduce_table_##name(ReduceKernelTable& table) noexcept;
NUMFUSE_LEVELS(NUMFUSE_DECLARE_REDUCE_TABLE)
#undef NUMFUSE_DECLARE_REDUCE_TABLE

// The expression VM's kernels, one per opcode (arch/expr_ops.hpp).
#define NUMFUSE_DECLARE_EXPR_TABLE(name) \
    void fill_expr_table_##name(expr::OpKernel* table) noexcept;
NUMFUSE_LEVELS(NUMFUSE_DECLARE_EXPR_TABLE)
#undef NUMFUSE_DECLARE_EXPR_TABLE

}  // namespace numfuse::core
