// The avx2_fma level: compiled with this level's instruction-set flags (see
// CMakeLists.txt) and reached only through dispatch.cpp after a CPU check.
#define NUMFUSE_LEVEL_NAMESPACE level_avx2_fma
#define NUMFUSE_LEVEL_ARCH xsimd::fma3<xsimd::avx2>
#include "arch/unary_loop.hpp"
#include "arch/reduce_loops.hpp"
#include "arch/expr_ops.hpp"
#include "arch/level_tables.hpp"

void numfuse::core::fill_unary_table_avx2_fma(UnaryTable& table) noexcept {
    level_avx2_fma::fill_unary_table(table);
}

void numfuse::core::fill_expr_table_avx2_fma(expr::OpKernel* table) noexcept {
    level_avx2_fma::expr_ops::fill_expr_table(table);
}

void numfuse::core::fill_reduce_table_avx2_fma(ReduceKernelTable& table) noexcept {
    level_avx2_fma::reduce_loops::fill_reduce_table(table);
}
