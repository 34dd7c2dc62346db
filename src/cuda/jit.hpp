// numfuse.cuda.evaluate, compiled: each distinct program (its instructions,
// register types and which registers are inputs; not the constants' values nor
// the pointers) becomes straight-line CUDA C++ that calls the interpreter's own
// per-instruction functions (vm_exec.hpp) with compile-time operands, compiled at
// run time by NVRTC and cached. With the instructions known to the compiler the
// switches fold away and the register file lives in registers, so a fused
// program runs at memory speed; results are those of the interpreter bit for bit
// (same functions, same -fmad=false).
//
// NVRTC is optional: it is loaded with dlopen (libnvrtc.so.13/.12, from the CUDA
// toolkit or the nvidia-cuda-nvrtc wheel that torch and CuPy install). Without it,
// or when a compile fails, evaluate runs the interpreter (evaluate.cu) instead.
// NUMFUSE_CUDA_JIT=0 in the environment turns the compiler off.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launch.hpp"

namespace numfuse::cuda::jit {

// Paths (or sonames) tried in order by dlopen before the default sonames; the
// Python layer passes the nvidia-cuda-nvrtc wheel's and CUDA_HOME's libraries.
void set_nvrtc_candidates(const std::vector<std::string>& paths);

// The CUDA C++ source generated for a program (for tests and for the curious).
std::string source_for(const vm::Program& program);

// Runs `program` compiled, on the current device. Returns false (nothing launched)
// when the compiler is off or unavailable or this program failed to compile; then
// the caller runs the interpreter. A launch error is returned in *error (0 = ok).
bool launch(const vm::Program& program, void* out, std::int64_t n, std::uintptr_t stream,
            int* error);

// Compiles `program` for compute capability `arch` (e.g. 90) without loading it:
// the image's size, or 0 with *error set. Needs NVRTC, no GPU (tests).
std::size_t compile_check(const vm::Program& program, int arch, bool cubin, std::string* error);

struct Status {
    bool enabled = false;       // not turned off by NUMFUSE_CUDA_JIT=0
    bool loaded = false;        // NVRTC found and loaded
    std::string library;        // the NVRTC library that was loaded
    int version_major = 0, version_minor = 0;
    std::string load_error;     // why NVRTC is not loaded
    std::size_t kernels = 0;    // compiled programs in the cache
    std::size_t failures = 0;   // programs that failed to compile (run by the interpreter)
    std::string last_error;     // the last compile error (with NVRTC's log)
    double compile_seconds = 0;  // total time spent in NVRTC
};
Status status();

}  // namespace numfuse::cuda::jit
