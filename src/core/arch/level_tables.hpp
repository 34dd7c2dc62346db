// The level table: one row per instruction-set level of NUMFUSE_LEVELS
// (numfuse_core.hpp), generated from that list. A row holds the functions
// that fill the kernel tables of the three areas (ufunc loops, logsumexp /
// softmax loops, the expression VM's opcode kernels) from the level's
// translation unit; levels.cpp pairs each row with the level's CPU test.
// Consumers fill a table only for levels the CPU runs (level_supported), since
// the fill functions themselves are compiled with the level's flags.
#pragma once

#include "expr/kernel_table.hpp"
#include "numfuse_core.hpp"
#include "reduce/kernel_table.hpp"

namespace numfuse::core {

// [operation][dtype: f32, f64][streaming stores: no, yes]
using UnaryTable = UnaryLoop[unary_op_count][simd_dtype_count][2];
// [operation][dtype: f32, f64][element-wise loop, in-order fold (binary_fold)]
using BinaryTable = BinaryLoop[binary_op_count][simd_dtype_count][2];

struct LevelKernelFill {
    void (*unary)(UnaryTable& table) noexcept;
    void (*binary)(BinaryTable& table) noexcept;
    void (*reduce)(ReduceKernelTable& table) noexcept;
    void (*expr)(expr::OpKernel* table) noexcept;
};

// Defined by each level's translation unit (arch/level_unit.hpp).
#define NUMFUSE_DECLARE_LEVEL_FILL(name, alias, cpu_test) \
    extern const LevelKernelFill level_fill_##name;
NUMFUSE_LEVELS(NUMFUSE_DECLARE_LEVEL_FILL)
#undef NUMFUSE_DECLARE_LEVEL_FILL

// The row of `level` (levels.cpp). Call its functions only for levels
// where level_supported(level) is true.
const LevelKernelFill& level_kernel_fill(Level level) noexcept;

// One kernel table per level, filled for the levels the CPU runs (the others
// stay zero): Table is the area's table type and `fill` picks the area's
// member of LevelKernelFill.
template <class Table>
struct PerLevelTables {
    Table tables[level_count] = {};

    template <class Fill>
    explicit PerLevelTables(Fill fill) noexcept {
        for (int i = 0; i < level_count; ++i) {
            const auto level = static_cast<Level>(i);
            if (level_supported(level)) fill(level_kernel_fill(level), tables[i]);
        }
    }

    const Table& operator[](Level level) const noexcept { return tables[static_cast<int>(level)]; }
};

}  // namespace numfuse::core
