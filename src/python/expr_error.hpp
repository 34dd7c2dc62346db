// The one mapping from the expression engine's errors (expr::ExprError) to Python
// exceptions, used by numfuse._core (evaluate, compile, the plan stages of the Dask back
// end) and by numfuse._cuda (numfuse.cuda.evaluate). Header-only because the two
// extensions are separate shared objects: each compiles this same code.
//
//   ErrorKind::syntax   -> numfuse.ExpressionError (a SyntaxError, ValueError and TypeError):
//                          offset = column, and the message ends with the text and a caret
//   ErrorKind::name     -> KeyError (numexpr's type for a name it cannot find)
//   ErrorKind::type     -> TypeError, with the column when the engine knows it
//   ErrorKind::overflow -> OverflowError
//   ErrorKind::value    -> ValueError
//   ErrorKind::unsupported -> numfuse.UnsupportedOperationError (a NotImplementedError, as
//                          numexpr raises for an opcode it lacks, and a TypeError)
//
// Each extension defines expression_error_type() and unsupported_operation_error_type():
// numfuse._core creates the classes, numfuse._cuda looks up the ones numfuse._core created,
// so both raise the same classes.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "expr/expr.hpp"

namespace numfuse::python {

// numfuse.ExpressionError: the class every expression syntax error raises.
PyObject* expression_error_type();
// numfuse.UnsupportedOperationError: an operation the engine lacks for the operands' types.
PyObject* unsupported_operation_error_type();

// Raises the Python exception for an engine error in expression `text`. `where`, when
// not empty, prefixes the message ("numfuse.cuda.evaluate: ...").
[[noreturn]] inline void raise_expr_error(const expr::ExprError& error, const std::string& text,
                                          const std::string& where = {}) {
    namespace py = pybind11;
    std::string message = (where.empty() ? std::string() : where + ": ") + error.what();
    switch (error.kind) {
        case expr::ErrorKind::syntax: {
            const int column = error.column < 0 ? 0 : error.column;
            const std::string shown = text.size() > 200 ? text.substr(0, 200) + "..." : text;
            const std::string caret(static_cast<std::size_t>(std::min(column, 203)), ' ');
            message += " (column " + std::to_string(column + 1) + ")\n    " + shown + "\n    " +
                       caret + "^";
            // SyntaxError's (filename, lineno, offset, text): Python shows its caret from it.
            const py::tuple details = py::make_tuple("<expression>", 1, column + 1, shown);
            PyErr_SetObject(expression_error_type(), py::make_tuple(message, details).ptr());
            throw py::error_already_set();
        }
        case expr::ErrorKind::name:
            PyErr_SetObject(PyExc_KeyError, py::str(message).ptr());
            throw py::error_already_set();
        case expr::ErrorKind::type:
            if (error.column >= 0) message += " (column " + std::to_string(error.column + 1) + ")";
            throw py::type_error(message);
        case expr::ErrorKind::overflow:
            PyErr_SetString(PyExc_OverflowError, message.c_str());
            throw py::error_already_set();
        case expr::ErrorKind::unsupported:
            if (error.column >= 0) message += " (column " + std::to_string(error.column + 1) + ")";
            PyErr_SetString(unsupported_operation_error_type(), message.c_str());
            throw py::error_already_set();
        case expr::ErrorKind::value: break;
    }
    throw py::value_error(message);
}

}  // namespace numfuse::python
