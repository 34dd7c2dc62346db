// numfuse.evaluate / compile / disassemble: registration of the expression engine's
// bindings. The work is split by job, the boost-histogram way:
//
//   expr_exceptions.{hpp,cpp}  numfuse.ExpressionError, numfuse.UnsupportedDtypeError
//   expr_conversion.{hpp,cpp}  Python values -> engine inputs (dtype_rules.hpp,
//                              weak_scalar.hpp), engine types -> NumPy types
//   expr_evaluate.cpp          evaluate's path (out=, order=, casting=), validate,
//                              disassemble, the fast name lookup
//   expr_compiled.cpp          CompiledExpression, its fast path and plan memo
//   expr_internal.hpp          what these files share
//
// Parsing, typing, compiling and running are in src/core/expr.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

// This translation unit defines the NumPy C-API table the expression bindings share.
#define NUMFUSE_EXPR_DEFINE_NUMPY_API
#include "expr_conversion.hpp"
#include "expr_exceptions.hpp"
#include "expr_internal.hpp"
#include "expr/expr.hpp"

namespace py = pybind11;

namespace numfuse::python {

void register_expr(py::module_& m) {
    // The NumPy C-API table of the expression bindings (expr_conversion.hpp).
    if (_import_array() < 0) throw py::error_already_set();
    m.add_object("ExpressionError", py::reinterpret_borrow<py::object>(expression_error_type()));
    m.add_object("UnsupportedDtypeError",
                 py::reinterpret_borrow<py::object>(unsupported_dtype_error_type()));
    m.add_object("UnsupportedOperationError",
                 py::reinterpret_borrow<py::object>(unsupported_operation_error_type()));
    m.def("_plain_values", &plain_values, py::arg("names"), py::arg("locals"), py::arg("globals"),
          "evaluate()'s fast lookup: a tuple of the names' values when all are found and are "
          "NumPy arrays or scalars, else None.");
    m.def("_expr_names", &names_of, py::arg("ex"),
          "Variable names an expression uses, in order of first appearance (parses, never evals).");
    m.def(
        "_evaluate",
        [](const std::string& ex, const std::vector<std::string>& names, const py::sequence& values,
           py::object out, const std::string& order, const std::string& casting) {
            return run_plan(ex, names, values, std::move(out), order, casting, nullptr, nullptr);
        },
        py::arg("ex"), py::arg("names"), py::arg("values"), py::arg("out") = py::none(),
        py::arg("order") = "K", py::arg("casting") = "same_kind");
    m.def("_validate", &validate_expression, py::arg("ex"), py::arg("names"), py::arg("values"));
    m.def("_disassemble", &disassemble_expression, py::arg("ex"), py::arg("names"),
          py::arg("values"));
    m.def("_expr_cache_size", &expr::cache_size);
    m.def("_expr_clear_cache", &expr::clear_cache);
    m.def("_expr_set_cache_capacity", &expr::set_cache_capacity, py::arg("entries"));
    m.def("_expr_opcode_names", [] {
        std::vector<std::string> names;
        for (int k = 0; k < expr::opcode_count; ++k) {
            names.emplace_back(expr::opcode_name(static_cast<expr::Opcode>(k)));
        }
        return names;
    });
    register_compiled_expression(m);
}

}  // namespace numfuse::python
