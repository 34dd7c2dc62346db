// The body of every per-level translation unit (src/core/arch/<level>.cpp):
// it instantiates the level's loops and defines the level's row of the level
// table (level_tables.hpp). The including file defines NUMFUSE_LEVEL (the
// name in NUMFUSE_LEVELS) and NUMFUSE_LEVEL_ARCH (the xsimd architecture);
// everything lands in namespace level_<name> (see unary_loop.hpp for why).
#pragma once

#if !defined(NUMFUSE_LEVEL) || !defined(NUMFUSE_LEVEL_ARCH)
#error "define NUMFUSE_LEVEL and NUMFUSE_LEVEL_ARCH before including level_unit.hpp"
#endif

#define NUMFUSE_LEVEL_CONCAT_(a, b) a##b
#define NUMFUSE_LEVEL_CONCAT(a, b) NUMFUSE_LEVEL_CONCAT_(a, b)
#define NUMFUSE_LEVEL_NAMESPACE NUMFUSE_LEVEL_CONCAT(level_, NUMFUSE_LEVEL)

#include "arch/binary_loop.hpp"
#include "arch/expr_ops.hpp"
#include "arch/level_tables.hpp"
#include "arch/softmax_loops.hpp"
#include "arch/unary_loop.hpp"

namespace numfuse::core {

const LevelKernelFill NUMFUSE_LEVEL_CONCAT(level_fill_, NUMFUSE_LEVEL) = {
    &NUMFUSE_LEVEL_NAMESPACE::fill_unary_table,
    &NUMFUSE_LEVEL_NAMESPACE::fill_binary_table,
    &NUMFUSE_LEVEL_NAMESPACE::reduce_loops::fill_reduce_table,
    &NUMFUSE_LEVEL_NAMESPACE::expr_ops::fill_expr_table,
};

}  // namespace numfuse::core
