// The numfuse._core extension module: one register_*() call per area.
#include <pybind11/pybind11.h>

#include <pthread.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bindings.hpp"
#include "interruptible.hpp"

namespace {

// fork() after OpenMP threads ran: GNU libgomp keeps the parent's thread pool
// in the forking thread's state, but fork copies only that thread, so the
// child's first parallel region waits forever for pool threads that do not
// exist (tests/test_concurrency.py reproduced the hang). In the child, the
// OpenMP limit drops to one thread; numfuse follows a lowered limit
// (src/core/parallel.hpp), so the child computes serially and correctly.
// An explicit set_num_threads(n > 1) made later in the child asks for a team
// again (and hangs with libgomp): docs/api.md says so.
extern "C" void numfuse_openmp_single_in_fork_child() {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "numfuse's compiled core: SIMD + OpenMP NumPy ufuncs";
    numfuse::python::register_runtime(m);
    numfuse::python::register_interrupt(m);  // Ctrl-C in long calls (interruptible.hpp)
    numfuse::python::register_ufuncs(m);
    numfuse::python::register_expr(m);
    numfuse::python::register_reduce(m);
    numfuse::python::register_plan_info(m);
    numfuse::python::register_jit_dispatch(m);  // after register_expr: its NumPy C API table
    numfuse::python::register_jit_verdict(m);    // the same
    numfuse::python::register_jit_formula(m);
    numfuse::python::register_jit_guards(m);
    numfuse::python::register_patch(m);  // patch_numpy's loop swaps
    pthread_atfork(nullptr, nullptr, &numfuse_openmp_single_in_fork_child);
}
