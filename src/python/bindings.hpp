// Registration functions of the numfuse._core module, one per area.
#pragma once

#include <pybind11/pybind11.h>

namespace numfuse::python {

// Thread count, instruction-set levels, build information.
void register_runtime(pybind11::module_& m);
// exp, log, erf as numpy.ufunc objects.
void register_ufuncs(pybind11::module_& m);
// evaluate / compile / disassemble: the expression engine.
void register_expr(pybind11::module_& m);
// logsumexp / softmax / log_softmax kernels (numfuse/_reduce.py wraps them).
void register_reduce(pybind11::module_& m);

}  // namespace numfuse::python
