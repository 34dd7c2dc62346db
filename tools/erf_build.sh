#!/bin/sh
# Builds the standalone erf harness (tools/erf_check.cpp) into ${OUT:-/tmp/erfb}.
set -e
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/erfb}
mkdir -p "$O"
F="-O2 -std=c++17 -Isrc/core -Wall -Wextra $EXTRA"
g++ $F -msse2 -DERF_ARCH=xsimd::sse2 -DERF_NAME=sse2 -c tools/erf_check.cpp -o "$O/sse2.o"
g++ $F -mavx2 -mfma '-DERF_ARCH=xsimd::fma3<xsimd::avx2>' -DERF_NAME=avx2 -c tools/erf_check.cpp -o "$O/avx2.o"
g++ $F -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx512vl -mfma -DERF_ARCH=xsimd::avx512bw \
    -DERF_NAME=avx512 -c tools/erf_check.cpp -o "$O/avx512.o"
g++ $F tools/erf_check.cpp "$O/sse2.o" "$O/avx2.o" "$O/avx512.o" -o "$O/erf_check"
