// Python scalars as the expression engine's weak inputs (NumPy's NEP 50): the one
// reading of them, shared by evaluate/compile/validate (expr_conversion.cpp,
// expr_compiled.cpp) and the plan stages of the Dask back end (plan_info.cpp), so both
// compile the same plan for the same values. The dtype rule of arrays: dtype_rules.hpp.
//
// A Python int carries its range (InputSpec::int_range, int_value), which the compiler's
// NumPy range checks read; one beyond int64 enters as float64 holding its value rounded
// (Python's float(); +-inf where that raises).
#pragma once

#include <Python.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>

#include "expr/expr.hpp"

namespace numfuse::python {

// True for the Python scalars evaluate treats as weak. np.float64 / np.complex128
// subclass float / complex but are NumPy scalars (strong): hence the exact checks.
inline bool is_weak_python_scalar(PyObject* obj) noexcept {
    return PyBool_Check(obj) || PyLong_Check(obj) || PyFloat_CheckExact(obj) ||
           PyComplex_CheckExact(obj);
}

// The engine type, value and (ints) range of a weak Python scalar: spec->type, weak,
// int_range, int_value and *value. Returns false, with a Python error set, only if
// Python fails (comparing an int subclass with 0).
inline bool read_weak_scalar(PyObject* obj, expr::InputSpec* spec, expr::Scalar* value) {
    spec->weak = true;
    spec->int_range = expr::PyIntRange::unknown;
    spec->int_value = 0;
    if (PyBool_Check(obj)) {
        const bool v = obj == Py_True;
        std::memcpy(value->bytes, &v, sizeof v);
        spec->type = expr::Type::b;
    } else if (PyLong_Check(obj)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (v == -1 && PyErr_Occurred()) return false;
        if (overflow == 0) {
            const std::int64_t w = v;
            std::memcpy(value->bytes, &w, sizeof w);
            spec->type = expr::Type::l;
            spec->int_range = expr::PyIntRange::int64;
            spec->int_value = w;
            return true;
        }
        double rounded = PyLong_AsDouble(obj);
        const bool beyond_float64 = rounded == -1.0 && PyErr_Occurred();
        if (beyond_float64) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return false;
            PyErr_Clear();
            rounded = overflow > 0 ? std::numeric_limits<double>::infinity()
                                   : -std::numeric_limits<double>::infinity();
        }
        std::memcpy(value->bytes, &rounded, sizeof rounded);
        spec->type = expr::Type::d;
        spec->int_range = overflow > 0 ? (beyond_float64 ? expr::PyIntRange::above_float64
                                                         : expr::PyIntRange::above_int64)
                                       : (beyond_float64 ? expr::PyIntRange::below_float64
                                                         : expr::PyIntRange::below_int64);
    } else if (PyFloat_Check(obj)) {
        const double v = PyFloat_AS_DOUBLE(obj);
        std::memcpy(value->bytes, &v, sizeof v);
        spec->type = expr::Type::d;
    } else {
        const std::complex<double> v(PyComplex_RealAsDouble(obj), PyComplex_ImagAsDouble(obj));
        std::memcpy(value->bytes, &v, sizeof v);
        spec->type = expr::Type::z;
    }
    return true;
}

}  // namespace numfuse::python
