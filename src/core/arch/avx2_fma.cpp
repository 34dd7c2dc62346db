// The avx2_fma level: compiled with this level's instruction-set flags (see
// CMakeLists.txt) and reached only through the level table after a CPU check.
#define NUMFUSE_LEVEL avx2_fma
#define NUMFUSE_LEVEL_ARCH xsimd::fma3<xsimd::avx2>
#include "arch/level_unit.hpp"
