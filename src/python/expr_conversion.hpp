// Python values -> the expression engine's inputs: the array dtype -> engine type rule
// (dtype_rules.hpp) applied to NumPy arrays, Python scalars as weak inputs
// (weak_scalar.hpp), and the engine type -> NumPy type of results. Shared by evaluate
// (expr_evaluate.cpp) and compiled expressions (expr_compiled.cpp).
//
// The NumPy C API: the expression bindings' translation units share one table
// (PY_ARRAY_UNIQUE_SYMBOL), defined in expr.cpp and filled by register_expr before any
// of them runs; ufuncs.cpp and patch.cpp keep tables of their own.
#pragma once

#include <pybind11/pybind11.h>

#define PY_ARRAY_UNIQUE_SYMBOL numfuse_expr_numpy_api
#if !defined(NUMFUSE_EXPR_DEFINE_NUMPY_API)
#define NO_IMPORT_ARRAY
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <string>
#include <vector>

#include "expr/array_views.hpp"
#include "expr/expr.hpp"

namespace numfuse::python {

// One input as the engine sees it, plus the object that keeps its memory alive.
struct Input {
    pybind11::object owner;
    expr::ArrayView view;
    expr::InputSpec spec;
    expr::Scalar scalar;  // storage of a Python scalar
};

// The NumPy type of an engine type (NPY_FLOAT64 for Type::w, never an array's type).
int npy_type_of(expr::Type t);

// The engine type of an array dtype, with numexpr's widening (dtype_rules.hpp); `target`
// gets the NumPy type to convert to. Raises numfuse.UnsupportedDtypeError, with a message
// that says how to convert, for a dtype the engine has no type for.
expr::Type type_for_descr(PyArray_Descr* descr, int* target);

// The engine type of a dtype the engine takes without conversion (the fast
// path's test); false for any other dtype.
bool exact_type_for_descr(PyArray_Descr* descr, expr::Type* type);

// A signature's dtype: the engine type, and in *int_dtype the integer dtype it widens.
expr::Type type_from_dtype(pybind11::handle dtype_like, expr::IntDtype* int_dtype);

// Points a scalar input's view at its own storage (after the Input moved).
void pin_scalar(Input& in);

// in.view (and, for byte strings, in.spec.item) from an array of engine type `type`.
void fill_view_from_array(Input& in, PyArrayObject* array, expr::Type type);

// `forced`: the signature's type for a compiled object (values are cast to it).
Input convert_input(const std::string& name, pybind11::handle value, const expr::Type* forced);

// The values as engine inputs (reserved up front: scalar inputs point into
// their own Input, which must not move afterwards). `signature`: the compiled
// object's types, or null; engine errors are raised for expression `text`.
std::vector<Input> convert_inputs(const std::string& text, const std::vector<std::string>& names,
                                  const pybind11::sequence& values,
                                  const std::vector<expr::Type>* signature);

// An engine view of an aligned, native array of engine type `type`.
expr::ArrayView view_of(const pybind11::object& array, expr::Type type);

}  // namespace numfuse::python
