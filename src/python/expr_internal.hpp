// Declarations shared by the expression bindings' translation units: expr.cpp
// (registration), expr_evaluate.cpp (evaluate / validate / disassemble) and
// expr_compiled.cpp (numfuse.CompiledExpression). Conversions are in expr_conversion.hpp.
//
// The GIL: released around the engine's compute (run_engine). The engine touches no
// Python object; every array it reads or writes is kept alive by py::object handles held
// by the caller's frame for the duration of the call.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "expr_error.hpp"
#include "interruptible.hpp"
#include "expr/expr.hpp"
#include "expr/parser.hpp"

namespace numfuse::python {

// Runs `compute` (which calls the engine) and turns its errors into Python
// exceptions. With `release_gil`, it runs without the GIL and can be stopped
// by Ctrl-C (interruptible.hpp); `elements` sizes the interrupt check.
template <class Compute>
void run_engine(const std::string& text, bool release_gil, std::size_t elements,
                Compute&& compute) {
    bool failed = false, interrupted = false;
    expr::ExprError failure(expr::ErrorKind::value, "");
    if (release_gil) {
        const InterruptibleCall interruptible(elements);
        pybind11::gil_scoped_release release;
        const TsanComputeSection tsan_section;
        try {
            compute();
        } catch (const expr::ExprError& error) {
            failed = true;
            failure = error;
        } catch (const interrupt::Interrupted&) {
            interrupted = true;
        }
    } else {
        try {
            compute();
        } catch (const expr::ExprError& error) {
            failed = true;
            failure = error;
        }
    }
    if (interrupted) raise_interrupted();
    if (failed) raise_expr_error(failure, text);
}

// The whole evaluate path after names were looked up: `signature` (a compiled
// object's types) casts the values, `plan` (when not null) is used as it is.
pybind11::object run_plan(const std::string& text, const std::vector<std::string>& names,
                          const pybind11::sequence& values, pybind11::object out,
                          const std::string& order, const std::string& casting,
                          const std::vector<expr::Type>* signature,
                          std::shared_ptr<const expr::Plan> plan);

// The variable names of an expression, in order of first appearance.
std::vector<std::string> names_of(const std::string& text);

// A plan's program as (opcode, dst, a, b, c) tuples, None for unused operands.
pybind11::list disassembly(const expr::Plan& plan);

// numfuse.CompiledExpression (expr_compiled.cpp).
void register_compiled_expression(pybind11::module_& m);
// A numfuse.CompiledExpression of `text` whose plans are compiled from `ast`, the caller's
// AST of `text` (expr::cached_plan_of_tree's contract), instead of the text's parse:
// numfuse.jit's fused formulas (jit_formula.cpp).
pybind11::object compiled_expression_of_tree(std::string text,
                                             std::shared_ptr<const expr::detail::Ast> ast);

// evaluate()'s lookup, validate() and disassemble() (expr_evaluate.cpp).
pybind11::object plain_values(const pybind11::tuple& names, const pybind11::handle& locals,
                              const pybind11::handle& globals);
void validate_expression(const std::string& ex, const std::vector<std::string>& names,
                         const pybind11::sequence& values);
pybind11::list disassemble_expression(const std::string& ex, const std::vector<std::string>& names,
                                      const pybind11::sequence& values);

}  // namespace numfuse::python
