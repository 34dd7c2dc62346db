// The sse2 level: compiled with this level's instruction-set flags (see
// CMakeLists.txt) and reached only through dispatch.cpp after a CPU check.
#define NUMFUSE_LEVEL_NAMESPACE level_sse2
#define NUMFUSE_LEVEL_ARCH xsimd::sse2
#include "arch/unary_loop.hpp"
#include "arch/reduce_loops.hpp"
#include "arch/expr_ops.hpp"
#include "arch/level_tables.hpp"

void numfuse::core::fill_unary_table_sse2(UnaryTable& table) noexcept {
    level_sse2::fill_unary_table(table);
}

void numfuse::core::fill_expr_table_sse2(expr::OpKernel* table) noexcept {
    level_sse2::expr_ops::fill_expr_table(table);
}

void numfuse::core::fill_reduce_table_sse2(ReduceKernelTable& table) noexcept {
    level_sse2::reduce_loops::fill_reduce_table(table);
}
