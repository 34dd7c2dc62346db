// The instruction-set levels: which exist, which the CPU runs, which one is active.
//
// The one place that knows the levels (the levels unit, levels.cpp): the ufuncs
// (dispatch.cpp), the reductions (reduce/reduce.cpp) and the expression VM (expr/vm.cpp)
// each fill their own kernel tables per level (arch/level_tables.hpp's PerLevelTables)
// and ask active_level() which to run; none of them goes through another's entry point.
#pragma once

#include <string>
#include <vector>

namespace numfuse::core {

// Instruction-set levels of the target architecture, lowest first: the one
// list of levels. A row is X(name, alias, cpu_test): `name` is the level's enum
// value, its name in level_name() and the suffix of its translation unit
// (src/core/arch/<name>.cpp, compiled with that level's flags); `alias` is what
// users write (parse_level accepts both); `cpu_test` is a bool expression over
// `cpu`, the running CPU's xsimd::available_architectures(), true when the CPU
// (and OS) run the level. The level table (arch/level_tables.hpp) and
// everything that lists levels are generated from these rows, so a new level
// is one row here plus its translation unit and flags in CMakeLists.txt, whose
// list per architecture matches this one. A build holds the levels of one
// architecture only: levels of another are unknown names to it.
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#define NUMFUSE_LEVELS(X)              \
    X(sse2, "sse2", cpu.sse2)          \
    X(avx2_fma, "avx2", cpu.fma3_avx2) \
    X(avx512, "avx512", cpu.avx512bw&& cpu.avx512dq&& cpu.avx512cd&& cpu.fma3_avx2)
#elif defined(__aarch64__)
// Advanced SIMD is part of every aarch64 CPU (the baseline): xsimd sets
// cpu.neon64 on every aarch64 target without asking the CPU.
#define NUMFUSE_LEVELS(X) X(neon64, "neon64", cpu.neon64)
#else
#error "numfuse has instruction-set levels for x86-64 and aarch64 only"
#endif

enum class Level : int {
#define NUMFUSE_LEVEL_ENUM(name, alias, cpu_test) name,
    NUMFUSE_LEVELS(NUMFUSE_LEVEL_ENUM)
#undef NUMFUSE_LEVEL_ENUM
};
#define NUMFUSE_LEVEL_ONE(name, alias, cpu_test) +1
inline constexpr int level_count = 0 NUMFUSE_LEVELS(NUMFUSE_LEVEL_ONE);
#undef NUMFUSE_LEVEL_ONE

const char* level_name(Level level) noexcept;

// True when the level's translation unit was compiled into this build: every
// level of NUMFUSE_LEVELS is (CMakeLists.txt builds all of the target
// architecture's), so false only for values outside the enum.
bool level_compiled(Level level) noexcept;
// True when the running CPU (and OS) can execute the level's instructions.
bool level_supported(Level level) noexcept;
// Compiled and supported levels, lowest first.
std::vector<Level> usable_levels();
// The best usable level.
Level best_level() noexcept;
// The level every area runs (the ufuncs, the reductions, the expression VM). Starts as
// best_level(), lowered by the NUMFUSE_ARCH environment variable (a level's name or
// alias) at first use; an unknown or unusable request keeps best_level().
Level active_level() noexcept;
// Throws std::invalid_argument if the level is not usable.
void set_active_level(Level level);
// Parses a level's name or alias (x86-64: "sse2", "avx2", "avx2_fma",
// "avx512"; aarch64: "neon64"); throws std::invalid_argument, also for the
// levels of the other architecture.
Level parse_level(const std::string& name);

// The running CPU's SIMD features that bear on the levels, as names: x86-64
// "sse2", "avx2", "fma", "avx512f", "avx512cd", "avx512dq", "avx512bw" (each
// only where the OS enables it, as xsimd reports); aarch64 "asimd" (NEON, the
// baseline) and, where Linux reports them, "fp16", "sve", "sve2".
std::vector<std::string> cpu_features();

}  // namespace numfuse::core
