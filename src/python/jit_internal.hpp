// What numfuse.jit's C++ files share: the tracer's templates read as engine operations
// (jit_formula.cpp) and plans described for tests (jit_verdict.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "expr/expr.hpp"
#include "expr/operation.hpp"

namespace numfuse::python {

// `text` with each {k} (one digit: a template has at most three operands) written as vk;
// the engine's language has no braces, so a text without them is itself.
std::string formula_of(const std::string& text);

// The one operation a template applies to its operands in order, as the tracer writes
// them (_ops.py): "({0} + {1})", "({0} < {1})", "(-{0})", "exp({0})", "arctan2({0}, {1})",
// "where({0}, {1}, {2})". Anything else (a constant in it, a reduction's keywords, a
// formula of several operations) is not one: false.
struct Operation {
    expr::OperationForm form = expr::OperationForm::call;
    std::string op;
};
bool operation_of(const std::string& text, Operation* operation);

// Everything a plan holds but its text, as nested tuples (tests compare the plans of one
// formula compiled two ways): per stage its inputs, registers (kind, type, input, slot, a
// constant's bytes), instructions and reduction; then the result type, value keying, the
// reused stage and the input names.
pybind11::tuple describe_plan(const expr::Plan& plan);

}  // namespace numfuse::python
