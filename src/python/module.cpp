// The numfuse._core extension module: one register_*() call per area.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "interruptible.hpp"

PYBIND11_MODULE(_core, m) {
    m.doc() = "numfuse's compiled core: SIMD + OpenMP NumPy ufuncs";
    numfuse::python::register_runtime(m);
    numfuse::python::register_interrupt(m);  // Ctrl-C in long calls (interruptible.hpp)
    numfuse::python::register_ufuncs(m);
    numfuse::python::register_expr(m);
    numfuse::python::register_reduce(m);
}
