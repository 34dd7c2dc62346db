// The levels unit: the level rows, the CPU's features, the active level (levels.hpp).
//
// Compiled with the baseline flags only: it must run on any CPU of the target
// architecture, since it is what decides whether the wider levels may be
// called at all.
#include "levels.hpp"

#include <xsimd/xsimd.hpp>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "arch/level_tables.hpp"

namespace numfuse::core {
namespace {

using CpuFeatures = decltype(xsimd::available_architectures());

// A level's row of the level table: its kernel fill functions and CPU test.
struct LevelRow {
    const char* name;
    const char* alias;
    bool (*cpu_runs)(const CpuFeatures& cpu) noexcept;
    const LevelKernelFill* fill;
};

// CMakeLists.txt defines NUMFUSE_HAVE_LEVEL_<name> for each level unit it
// compiles; a row of NUMFUSE_LEVELS without its unit stops the build here.
#define NUMFUSE_CHECK_LEVEL_COMPILED(name, alias, cpu_test) \
    static_assert(NUMFUSE_HAVE_LEVEL_##name, "CMakeLists.txt does not compile level " #name);
NUMFUSE_LEVELS(NUMFUSE_CHECK_LEVEL_COMPILED)
#undef NUMFUSE_CHECK_LEVEL_COMPILED

const LevelRow level_rows[level_count] = {
#define NUMFUSE_LEVEL_ROW(name, alias, cpu_test)                                   \
    {#name, alias, [](const CpuFeatures& cpu) noexcept { return bool(cpu_test); }, \
     &level_fill_##name},
    NUMFUSE_LEVELS(NUMFUSE_LEVEL_ROW)
#undef NUMFUSE_LEVEL_ROW
};

// Which levels the running CPU (and OS) runs: asked once.
struct SupportedLevels {
    bool supported[level_count] = {};

    SupportedLevels() noexcept {
        const auto cpu = xsimd::available_architectures();
        for (int i = 0; i < level_count; ++i) supported[i] = level_rows[i].cpu_runs(cpu);
    }
};

const SupportedLevels& supported_levels() noexcept {
    static const SupportedLevels levels;
    return levels;
}

Level initial_level() noexcept {
    Level level = best_level();
    if (const char* env = std::getenv("NUMFUSE_ARCH")) {
        // An unknown or unusable request keeps the best level; the Python
        // layer reports it (see numfuse/__init__.py).
        try {
            const Level wanted = parse_level(env);
            if (level_compiled(wanted) && level_supported(wanted)) level = wanted;
        } catch (const std::invalid_argument&) {
        }
    }
    return level;
}

std::atomic<int>& active_level_setting() noexcept {
    static std::atomic<int> setting{static_cast<int>(initial_level())};
    return setting;
}

}  // namespace

const char* level_name(Level level) noexcept {
    const int i = static_cast<int>(level);
    return i >= 0 && i < level_count ? level_rows[i].name : "unknown";
}

const LevelKernelFill& level_kernel_fill(Level level) noexcept {
    return *level_rows[static_cast<int>(level)].fill;
}

bool level_compiled(Level level) noexcept {
    const int i = static_cast<int>(level);
    return i >= 0 && i < level_count;
}

bool level_supported(Level level) noexcept {
    return level_compiled(level) && supported_levels().supported[static_cast<int>(level)];
}

std::vector<Level> usable_levels() {
    std::vector<Level> levels;
    for (int i = 0; i < level_count; ++i) {
        const auto level = static_cast<Level>(i);
        if (level_compiled(level) && level_supported(level)) levels.push_back(level);
    }
    return levels;
}

Level best_level() noexcept {
    Level best = static_cast<Level>(0);
    for (int i = 0; i < level_count; ++i) {
        const auto level = static_cast<Level>(i);
        if (level_compiled(level) && level_supported(level)) best = level;
    }
    return best;
}

Level active_level() noexcept { return static_cast<Level>(active_level_setting().load()); }

void set_active_level(Level level) {
    if (!level_compiled(level)) {
        throw std::invalid_argument(std::string("instruction-set level '") + level_name(level) +
                                    "' was not compiled into this build");
    }
    if (!level_supported(level)) {
        throw std::invalid_argument(std::string("this CPU cannot run instruction-set level '") +
                                    level_name(level) + "'");
    }
    active_level_setting().store(static_cast<int>(level));
}

Level parse_level(const std::string& name) {
    std::string expected;
    for (int i = 0; i < level_count; ++i) {
        const LevelRow& row = level_rows[i];
        if (name == row.name || name == row.alias) return static_cast<Level>(i);
        if (i > 0) expected += i + 1 == level_count ? " or " : ", ";
        expected += row.alias;
    }
    throw std::invalid_argument("unknown instruction-set level '" + name + "' (expected " +
                                expected + ")");
}

std::vector<std::string> cpu_features() {
    std::vector<std::string> names;
    const auto cpu = xsimd::available_architectures();
    const auto add = [&](bool present, const char* name) {
        if (present) names.emplace_back(name);
    };
#if defined(__aarch64__)
    add(cpu.neon64, "asimd");
#if defined(__linux__)
    // xsimd asks the CPU nothing on aarch64 (NEON is the baseline): the kernel's HWCAP
    // bits tell the optional extensions.
    const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
    add((hwcap & HWCAP_ASIMDHP) != 0, "fp16");
    add((hwcap & HWCAP_SVE) != 0, "sve");
    add((hwcap2 & HWCAP2_SVE2) != 0, "sve2");
#endif
#else
    add(cpu.sse2, "sse2");
    add(cpu.avx2, "avx2");
    add(cpu.fma3_avx2, "fma");
    add(cpu.avx512f, "avx512f");
    add(cpu.avx512cd, "avx512cd");
    add(cpu.avx512dq, "avx512dq");
    add(cpu.avx512bw, "avx512bw");
#endif
    return names;
}

}  // namespace numfuse::core
