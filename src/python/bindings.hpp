// Registration functions of the numfuse._core module, one per area.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace numfuse::python {

// ThreadSanitizer builds only (make sanitize-threads): CPython and NumPy are not
// instrumented, so TSan cannot see the GIL that orders one Python thread's compute
// section before the next one's (e.g. a result buffer freed into NumPy's small-
// allocation cache by one thread and handed to another). Every compute section
// starts with an acquire and ends with a release on one token: sections that follow
// each other in time are ordered for TSan, sections that overlap are not, so real
// races between concurrent calls are still reported. A no-op in normal builds.
struct TsanComputeSection {
    TsanComputeSection() noexcept { announce(true); }
    ~TsanComputeSection() { announce(false); }
    TsanComputeSection(const TsanComputeSection&) = delete;
    TsanComputeSection& operator=(const TsanComputeSection&) = delete;

private:
    static void announce([[maybe_unused]] bool enter) noexcept {
#if defined(__SANITIZE_THREAD__)
        static char token = 0;
        if (enter) {
            __tsan_acquire(&token);
        } else {
            __tsan_release(&token);
        }
#endif
    }
};

// Thread count, instruction-set levels, build information.
void register_runtime(pybind11::module_& m);
// The function table's ufuncs (functions.hpp) as numpy.ufunc objects, and _function_table().
void register_ufuncs(pybind11::module_& m);
// evaluate / compile / disassemble: the expression engine.
void register_expr(pybind11::module_& m);
// logsumexp / softmax / log_softmax kernels (numfuse/_reduce.py wraps them).
void register_reduce(pybind11::module_& m);
// Swapping numfuse's loops into other ufuncs (numfuse/_patch.py: patch_numpy).
void register_patch(pybind11::module_& m);
// The compiled plan's stages, for back ends that schedule them (numfuse/_dask.py).
void register_plan_info(pybind11::module_& m);
// numfuse.jit's warm path: signature keys and the call dispatcher (jit_dispatch.cpp);
// after register_expr, whose NumPy C API table it uses.
void register_jit_dispatch(pybind11::module_& m);
// numfuse.jit's verdict on a new operation type in one call (jit_verdict.cpp); after
// register_expr too.
void register_jit_verdict(pybind11::module_& m);
// numfuse.jit's fused formulas compiled from the trace's nodes (jit_formula.cpp).
void register_jit_formula(pybind11::module_& m);
// numfuse.jit's scan of a function's bytecode for the globals it loads (jit_guards.cpp).
void register_jit_guards(pybind11::module_& m);

}  // namespace numfuse::python
