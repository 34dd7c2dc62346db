// The neon64 level (aarch64 Advanced SIMD, the architecture's baseline): the
// only level of aarch64 builds, so it needs no CPU check before use.
#define NUMFUSE_LEVEL neon64
#define NUMFUSE_LEVEL_ARCH xsimd::neon64
#include "arch/level_unit.hpp"
