// The avx512 level: compiled with this level's instruction-set flags (see
// CMakeLists.txt) and reached only through the level table after a CPU check.
#define NUMFUSE_LEVEL avx512
#define NUMFUSE_LEVEL_ARCH xsimd::avx512bw
#include "arch/level_unit.hpp"
