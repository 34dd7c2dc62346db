#!/usr/bin/env bash
# One prepared run on a lent GPU machine (docs/testing.md, "AVX-512 and GPU on a lent
# machine"): build numfuse with CUDA using the machine's own Python, run the GPU tests, the GPU
# benchmark and then the CPU suite (every level the CPU has), most important first, each step
# time-boxed so that the run fits one call with time left to rerun it. Everything is logged
# under $OUT (the device tool returns that folder).
#
# The machine reaches no network: DEPS (default .gpu, ignored by git, named in the device
# tool's carry) holds xsimd-8.1.0.tar.gz (from ../shared/deps) and wheels/ for Python packages
# the machine's image lacks (numexpr), installed without dependencies.
#   usage: bash tools/gpu/device_check.sh [--quick]   (--quick: no CPU suite)
set -uo pipefail
OUT=${OUT:-$PWD/build/device-out}
DEPS=${DEPS:-.gpu}
JOBS=$(nproc)
mkdir -p "$OUT"
exec > >(tee "$OUT/device.log") 2>&1
step() { echo "== $(date -u +%T) $*"; }

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "cpus $JOBS: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
PY=$(command -v python3)
"$PY" -c "import sys, numpy, scipy, torch; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'torch', torch.__version__)"
"$PY" -c "import cupy; print('cupy', cupy.__version__)" 2>/dev/null || echo "cupy: none"
nvcc --version | tail -1
ls "$DEPS"/wheels/*.whl >/dev/null 2>&1 && "$PY" -m pip install --quiet --no-deps --no-index "$DEPS"/wheels/*.whl
tar xzf "$DEPS/xsimd-8.1.0.tar.gz" -C /tmp

step build
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DNUMFUSE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90-real -DNUMFUSE_WERROR=ON -DNUMFUSE_XSIMD=FETCH \
    -DFETCHCONTENT_SOURCE_DIR_XSIMD=/tmp/xsimd-8.1.0 -DPython_EXECUTABLE="$PY" \
    -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)" >"$OUT/cmake.log" 2>&1 \
    || { tail -40 "$OUT/cmake.log"; exit 1; }
cmake --build build/gpu -j"$JOBS" --target _core _cuda >"$OUT/build.log" 2>&1 \
    || { grep -m3 -B2 -A12 'error' "$OUT/build.log"; exit 1; }
pkg=$PWD/build/gpu/pkg
rm -rf "$pkg" && mkdir -p "$pkg/numfuse" && cp -r python/numfuse/. "$pkg/numfuse/"
rm -f "$pkg"/numfuse/*.so && cp build/gpu/_core*.so build/gpu/_cuda*.so "$pkg/numfuse/"
export PYTHONPATH=$pkg
"$PY" -c "import numfuse; c = numfuse.show_config(print_config=False); print(c['level_in_use'], c['levels_usable'], c['cuda'])"

step GPU tests
timeout 150 "$PY" -m pytest -q -p no:cacheprovider -p no:benchmark -n 8 tests/test_cuda.py tests/test_stubs.py \
    tests/test_evaluate_strings.py >"$OUT/gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "passed|failed|error" "$OUT/gpu_tests.log" | tail -15

step GPU benchmark
timeout 150 "$PY" benchmarks/python/gpu_bench.py >"$OUT/gpu_bench.log" 2>&1
echo "gpu bench rc=$?"; tail -80 "$OUT/gpu_bench.log"

[ "${1:-}" = --quick ] && exit 0
step CPU suite "(Python $("$PY" -c 'import sys; print(sys.version.split()[0])'))"
timeout "${CPU_SUITE_S:-200}" "$PY" -m pytest -q -p no:cacheprovider -p no:benchmark -n "$((JOBS - 2))" -m "not slow" \
    tests --ignore=tests/fuzz --ignore=tests/test_build.py --ignore=tests/test_notebook.py \
    --ignore=tests/test_dask.py --ignore=tests/test_typing.py --ignore=tests/test_cuda.py \
    >"$OUT/cpu_suite.log" 2>&1
echo "cpu suite rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/cpu_suite.log" | tail -40
step done
