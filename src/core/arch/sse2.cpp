// The sse2 level: compiled with this level's instruction-set flags (see
// CMakeLists.txt) and reached only through the level table after a CPU check.
#define NUMFUSE_LEVEL sse2
#define NUMFUSE_LEVEL_ARCH xsimd::sse2
#include "arch/level_unit.hpp"
