// The avx512 level: compiled with this level's instruction-set flags (see
// CMakeLists.txt) and reached only through dispatch.cpp after a CPU check.
#define NUMFUSE_LEVEL_NAMESPACE level_avx512
#define NUMFUSE_LEVEL_ARCH xsimd::avx512bw
#include "arch/unary_loop.hpp"
#include "arch/reduce_loops.hpp"
#include "arch/expr_ops.hpp"
#include "arch/level_tables.hpp"

void numfuse::core::fill_unary_table_avx512(UnaryTable& table) noexcept {
    level_avx512::fill_unary_table(table);
}

void numfuse::core::fill_expr_table_avx512(expr::OpKernel* table) noexcept {
    level_avx512::expr_ops::fill_expr_table(table);
}

void numfuse::core::fill_reduce_table_avx512(ReduceKernelTable& table) noexcept {
    level_avx512::reduce_loops::fill_reduce_table(table);
}
