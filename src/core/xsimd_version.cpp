// Build check: the xsimd headers this compiler sees are the ones CMake chose
// (NUMFUSE_XSIMD_EXPECT_* come with the numfuse_xsimd target). Another xsimd
// earlier on the include path would otherwise be compiled in silently.
#include <xsimd/xsimd.hpp>

#if !defined(NUMFUSE_XSIMD_EXPECT_MAJOR) || XSIMD_VERSION_MAJOR != NUMFUSE_XSIMD_EXPECT_MAJOR || \
    XSIMD_VERSION_MINOR != NUMFUSE_XSIMD_EXPECT_MINOR ||                                         \
    XSIMD_VERSION_PATCH != NUMFUSE_XSIMD_EXPECT_PATCH
#error \
    "the xsimd headers found by the compiler are not the version CMake chose (see its numfuse: xsimd message)"
#endif

// Nothing else: the check above is the whole unit (no symbol of it is used).
