// numfuse.ExpressionError, numfuse.UnsupportedDtypeError (expr_exceptions.hpp) and
// numfuse.UnsupportedOperationError (expr_error.hpp).
#include "expr_exceptions.hpp"

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace numfuse::python {
namespace {

// A new exception class deriving from `bases` (a new reference, consumed), alive as long as
// the process, like the module.
PyObject* new_exception_type(const char* name, const char* doc, PyObject* bases) {
    if (bases == nullptr) throw py::error_already_set();
    PyObject* created = PyErr_NewExceptionWithDoc(name, doc, bases, nullptr);
    Py_DECREF(bases);
    if (created == nullptr) throw py::error_already_set();
    return created;
}

}  // namespace

// numfuse.ExpressionError: what every syntax error of the expression language raises. It
// derives from SyntaxError (numfuse's documented type: column, caret) and from ValueError and
// TypeError, the types numexpr raises for some of the same texts (its sanitizer's ValueError
// for `__names`, `;`, `[`, `:`, attribute access; TypeError for `and`/`or`/`not`, calls of
// unknown names, tuples), so code written `except ValueError:` for numexpr still catches it.
PyObject* expression_error_type() {
    static PyObject* type = new_exception_type(
        "numfuse.ExpressionError",
        "A syntax error in a numfuse.evaluate expression: a SyntaxError (offset is the "
        "column) that is also a ValueError and a TypeError, the types numexpr raises for "
        "some malformed expressions.",
        PyTuple_Pack(3, PyExc_SyntaxError, PyExc_ValueError, PyExc_TypeError));
    return type;
}

// numfuse.UnsupportedDtypeError: an array whose dtype evaluate cannot compute with (str,
// uint64, long double, ...). A TypeError, numfuse's documented type, and a ValueError, the
// type numexpr raises for the same arrays ("does not support Unicode", "unknown type"), so
// code written for either catches it.
PyObject* unsupported_dtype_error_type() {
    static PyObject* type = new_exception_type(
        "numfuse.UnsupportedDtypeError",
        "An array dtype numfuse.evaluate does not compute with (str, uint64, long "
        "double, ...): a TypeError that is also a ValueError, the type numexpr raises "
        "for such arrays. The message says how to convert.",
        PyTuple_Pack(2, PyExc_TypeError, PyExc_ValueError));
    return type;
}

// numfuse.UnsupportedOperationError: an operation evaluate has no instruction for on its
// operands' types (arithmetic on bytes, bytes compared with a number). A TypeError,
// numfuse's documented type, and a NotImplementedError, the type numexpr raises for the
// same expressions ("couldn't find matching opcode for 'add_sss'").
PyObject* unsupported_operation_error_type() {
    static PyObject* type = new_exception_type(
        "numfuse.UnsupportedOperationError",
        "An operation numfuse.evaluate does not support for its operands' types (arithmetic "
        "on bytes, bytes compared with a number): a TypeError that is also a "
        "NotImplementedError, the type numexpr raises for an operation it lacks.",
        PyTuple_Pack(2, PyExc_NotImplementedError, PyExc_TypeError));
    return type;
}

[[noreturn]] void raise_dtype_error(const std::string& message) {
    PyErr_SetString(unsupported_dtype_error_type(), message.c_str());
    throw py::error_already_set();
}

}  // namespace numfuse::python
