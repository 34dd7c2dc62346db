# Cross-compiling for aarch64 Linux with Debian's g++-aarch64-linux-gnu
# (cmake -DCMAKE_TOOLCHAIN_FILE=tools/aarch64/toolchain.cmake ...). Programs
# built with it run here under qemu-aarch64 -L /usr/aarch64-linux-gnu.
# NUMFUSE_AARCH64_SYSROOT, when set (cache or environment), adds a sysroot made
# from Debian arm64 packages to the search roots (libraries such as GoogleTest).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(NUMFUSE_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${NUMFUSE_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${NUMFUSE_AARCH64_TRIPLE}-g++)

if(NOT NUMFUSE_AARCH64_SYSROOT AND DEFINED ENV{NUMFUSE_AARCH64_SYSROOT})
  set(NUMFUSE_AARCH64_SYSROOT "$ENV{NUMFUSE_AARCH64_SYSROOT}")
endif()
set(CMAKE_FIND_ROOT_PATH /usr/${NUMFUSE_AARCH64_TRIPLE} ${NUMFUSE_AARCH64_SYSROOT})
# Programs (code generators, Python) come from the build machine; libraries,
# headers and CMake packages only from the target's roots. Header-only
# packages found outside them (xsimd) are passed by path, e.g.
# -DNUMFUSE_XSIMD_INCLUDE=/usr/include.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/${NUMFUSE_AARCH64_TRIPLE})
