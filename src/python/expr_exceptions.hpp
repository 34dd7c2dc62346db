// The Python exception classes numfuse._core creates for the expression language:
// numfuse.ExpressionError (declared with the one mapping of engine errors in
// expr_error.hpp, which numfuse._cuda shares) and numfuse.UnsupportedDtypeError.
// Each class is created once, on first use, and lives as long as the process.
#pragma once

#include <Python.h>

#include <string>

#include "expr_error.hpp"

namespace numfuse::python {

// numfuse.UnsupportedDtypeError: an array dtype evaluate cannot compute with.
PyObject* unsupported_dtype_error_type();

// Raises numfuse.UnsupportedDtypeError with `message`.
[[noreturn]] void raise_dtype_error(const std::string& message);

}  // namespace numfuse::python
