// numfuse.evaluate's path through the bindings: values -> engine inputs
// (expr_conversion.hpp), the plan and its result shape, the result array (fresh, or
// out= with NumPy's casting and broadcasting rules), the run without the GIL; and
// validate / disassemble, which stop before running.
//
// This file only marshals: parsing, typing, compiling and running are in src/core/expr.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "expr_conversion.hpp"
#include "expr_internal.hpp"
#include "expr/expr.hpp"

namespace py = pybind11;

namespace numfuse::python {

using expr::ArrayView;
using expr::ExprError;
using expr::InputSpec;
using expr::Plan;
using expr::Type;

namespace {

[[noreturn]] void raise_bad_order(const std::string& order) {
    throw py::value_error("order must be one of 'C', 'F', 'A' or 'K', got '" + order + "'");
}

bool is_valid_order(const std::string& order) {
    return order == "C" || order == "F" || order == "K" || order == "A";
}

// The memory layout of a fresh result: order= as NumPy reads it ('K' and 'A'
// follow the inputs: Fortran when no input of 2+ dimensions is C-contiguous
// and one is Fortran-contiguous).
bool choose_fortran(const std::string& order, const std::vector<Input>& inputs,
                    std::size_t result_ndim) {
    if (order == "C") return false;
    if (order == "F") return true;
    if (!is_valid_order(order)) raise_bad_order(order);
    if (result_ndim < 2) return false;
    bool any_fortran = false;
    for (const auto& in : inputs) {
        if (!in.owner) continue;
        auto* arr = reinterpret_cast<PyArrayObject*>(in.owner.ptr());
        if (PyArray_NDIM(arr) < 2) continue;
        if (PyArray_IS_C_CONTIGUOUS(arr)) return false;
        if (PyArray_IS_F_CONTIGUOUS(arr)) any_fortran = true;
    }
    return any_fortran;
}

// order= and casting= are checked on every call, not only where they are
// used (a misspelt casting= with no out= would otherwise pass silently).
NPY_CASTING check_call_options(const std::string& order, const std::string& casting) {
    NPY_CASTING rule = NPY_SAME_KIND_CASTING;
    if (!PyArray_CastingConverter(py::str(casting).ptr(), &rule)) throw py::error_already_set();
    if (!is_valid_order(order)) raise_bad_order(order);
    return rule;
}

// The plan for these inputs (`plan` when the caller has one) and its result
// shape; engine errors become Python exceptions.
std::vector<std::ptrdiff_t> plan_result_shape(const std::string& text,
                                              const std::vector<Input>& inputs,
                                              std::shared_ptr<const Plan>& plan) {
    std::vector<std::vector<std::ptrdiff_t>> shapes;
    shapes.reserve(inputs.size());
    try {
        if (!plan) {
            std::vector<InputSpec> specs;
            specs.reserve(inputs.size());
            for (const auto& in : inputs) specs.push_back(in.spec);
            plan = expr::cached_plan(text, specs);
        }
        for (const auto& in : inputs) shapes.push_back(in.view.shape);
        return expr::result_shape(*plan, shapes);
    } catch (const ExprError& error) {
        raise_expr_error(error, text);
    }
}

// Where the engine writes: `result` (out= itself, or a fresh array), and
// `user_out` when out= needs a cast (the engine writes a temporary first).
struct ResultArrays {
    py::object result;
    py::object user_out;
};

// NumPy's rule for a result written into out=: trailing dimensions equal, or 1 in the result.
bool broadcasts_to(const std::vector<std::ptrdiff_t>& shape,
                   const std::vector<std::ptrdiff_t>& target) {
    if (shape.size() > target.size()) return false;
    const std::size_t offset = target.size() - shape.size();
    for (std::size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] != target[offset + k] && shape[k] != 1) return false;
    }
    return true;
}

std::string shape_text(const std::vector<std::ptrdiff_t>& shape) {
    std::string text = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) {
        text += (k ? ", " : "") + std::to_string(shape[k]);
    }
    return text + (shape.size() == 1 ? ",)" : ")");
}

// Checks out= against the result's shape and type; returns whether the engine can write
// into it directly. A result of another shape that broadcasts to out's (numexpr writes
// `evaluate('3', out=a)` into every element) is computed first and then copied in.
bool check_out_array(const py::object& out, const std::vector<std::ptrdiff_t>& shape,
                     Type result_type, NPY_CASTING rule, const std::string& casting) {
    if (!PyArray_Check(out.ptr())) throw py::type_error("out must be a numpy.ndarray");
    auto* o = reinterpret_cast<PyArrayObject*>(out.ptr());
    const std::vector<std::ptrdiff_t> out_shape(PyArray_DIMS(o), PyArray_DIMS(o) + PyArray_NDIM(o));
    const bool same_shape = out_shape == shape;
    if (!same_shape && !broadcasts_to(shape, out_shape)) {
        throw py::value_error("the result's shape " + shape_text(shape) +
                              " does not broadcast to out's shape " + shape_text(out_shape));
    }
    if (!PyArray_ISWRITEABLE(o)) throw py::value_error("out is read-only");
    const int result_npy = npy_type_of(result_type);
    PyArray_Descr* rdescr = PyArray_DescrFromType(result_npy);
    const bool castable = PyArray_CanCastTypeTo(rdescr, PyArray_DESCR(o), rule);
    Py_DECREF(rdescr);
    if (!castable) {
        throw py::type_error(std::string("cannot cast the result (") +
                             expr::type_name(result_type) + ") to out's dtype with casting='" +
                             casting + "'");
    }
    return same_shape && PyArray_TYPE(o) == result_npy && PyArray_ISALIGNED(o) &&
           PyArray_ISNOTSWAPPED(o);
}

ResultArrays result_arrays(const py::object& out, const std::vector<std::ptrdiff_t>& shape,
                           Type result_type, NPY_CASTING rule, const std::string& casting,
                           const std::string& order, const std::vector<Input>& inputs) {
    ResultArrays arrays;
    if (!out.is_none()) {
        if (check_out_array(out, shape, result_type, rule, casting)) {
            arrays.result = out;
            return arrays;
        }
        arrays.user_out = out;
    }
    const bool fortran = choose_fortran(order, inputs, shape.size());
    std::vector<npy_intp> dims(shape.begin(), shape.end());
    PyObject* fresh =
        PyArray_New(&PyArray_Type, static_cast<int>(dims.size()), dims.data(),
                    npy_type_of(result_type), nullptr, nullptr, 0, fortran ? 1 : 0, nullptr);
    if (fresh == nullptr) throw py::error_already_set();
    arrays.result = py::reinterpret_steal<py::object>(fresh);
    return arrays;
}

// An input that overlaps the output other than element for element is
// copied first, so writing a block never changes a value still to be read.
void copy_inputs_overlapping(const ArrayView& out_view, std::vector<Input>& inputs) {
    for (auto& in : inputs) {
        if (!in.owner || !expr::overlaps_other_than_elementwise(in.view, out_view)) continue;
        PyObject* copy =
            PyArray_NewCopy(reinterpret_cast<PyArrayObject*>(in.owner.ptr()), NPY_CORDER);
        if (copy == nullptr) throw py::error_already_set();
        in.owner = py::reinterpret_steal<py::object>(copy);
        fill_view_from_array(in, reinterpret_cast<PyArrayObject*>(copy), in.view.type);
    }
}

}  // namespace

// The whole evaluate path after names were looked up.
py::object run_plan(const std::string& text, const std::vector<std::string>& names,
                    const py::sequence& values, py::object out, const std::string& order,
                    const std::string& casting, const std::vector<Type>* signature,
                    std::shared_ptr<const Plan> plan) {
    const NPY_CASTING rule = check_call_options(order, casting);
    std::vector<Input> inputs = convert_inputs(text, names, values, signature);
    const std::vector<std::ptrdiff_t> shape = plan_result_shape(text, inputs, plan);
    const Type result_type = plan->result_type;
    const ResultArrays arrays =
        result_arrays(out, shape, result_type, rule, casting, order, inputs);
    const ArrayView out_view = view_of(arrays.result, result_type);
    if (arrays.result.is(out)) copy_inputs_overlapping(out_view, inputs);
    std::vector<ArrayView> views;
    views.reserve(inputs.size());
    for (const auto& in : inputs) views.push_back(in.view);
    run_engine(text, true, expr::iteration_elements(out_view.shape, views),
               [&] { expr::execute(*plan, views, out_view); });
    if (arrays.user_out) {
        if (PyArray_CopyInto(reinterpret_cast<PyArrayObject*>(arrays.user_out.ptr()),
                             reinterpret_cast<PyArrayObject*>(arrays.result.ptr())) < 0) {
            throw py::error_already_set();
        }
        return arrays.user_out;
    }
    return arrays.result;
}

std::vector<std::string> names_of(const std::string& text) {
    try {
        return expr::expression_names(text);
    } catch (const ExprError& error) {
        raise_expr_error(error, text);
    }
}

py::list disassembly(const Plan& plan) {
    py::list lines;
    for (const auto& ins : expr::disassemble(plan)) {
        auto item = [](const std::string& s) -> py::object {
            return s.empty() ? py::none() : py::object(py::str(s));
        };
        lines.append(py::make_tuple(py::str(ins.opcode), item(ins.dst), item(ins.a), item(ins.b),
                                    item(ins.c)));
    }
    return lines;
}

// evaluate()'s common case in one call: the values of `names` from the caller's locals,
// then globals (two dicts or mappings), as a tuple, when every one is a NumPy array or a
// Python/NumPy scalar; None when a name is missing or any value needs the general path
// (dask arrays, __dlpack__ objects, array-likes: numfuse/_evaluate.py handles those and
// reports missing names). Never raises for a missing name; a mapping's own error propagates.
py::object plain_values(const py::tuple& names, const py::handle& locals,
                        const py::handle& globals) {
    const Py_ssize_t count = PyTuple_GET_SIZE(names.ptr());
    py::tuple values(count);
    for (Py_ssize_t k = 0; k < count; ++k) {
        PyObject* name = PyTuple_GET_ITEM(names.ptr(), k);
        PyObject* value = nullptr;
        for (PyObject* scope : {locals.ptr(), globals.ptr()}) {
            if (PyDict_CheckExact(scope)) {
                value = PyDict_GetItemWithError(scope, name);  // borrowed
                if (value != nullptr) {
                    Py_INCREF(value);
                    break;
                }
                if (PyErr_Occurred()) throw py::error_already_set();
            } else {
                value = PyObject_GetItem(scope, name);  // new reference
                if (value != nullptr) break;
                if (!PyErr_ExceptionMatches(PyExc_KeyError)) throw py::error_already_set();
                PyErr_Clear();
            }
        }
        if (value == nullptr) return py::none();
        const bool plain = PyArray_CheckExact(value) || PyFloat_CheckExact(value) ||
                           PyLong_CheckExact(value) || PyBool_Check(value) ||
                           PyComplex_CheckExact(value) || PyArray_IsScalar(value, Generic);
        PyTuple_SET_ITEM(values.ptr(), k, value);  // steals the reference
        if (!plain) return py::none();
    }
    return values;  // moved: the implicit move applies to the converting constructor
}

// numfuse.validate: compiles for these values and checks their shapes
// broadcast, without running.
void validate_expression(const std::string& ex, const std::vector<std::string>& names,
                         const py::sequence& values) {
    std::vector<InputSpec> specs;
    std::vector<std::vector<std::ptrdiff_t>> shapes;
    std::vector<Input> inputs;
    for (std::size_t k = 0; k < names.size(); ++k) {
        inputs.push_back(convert_input(names[k], values[k], nullptr));
        specs.push_back(inputs.back().spec);
        shapes.push_back(inputs.back().view.shape);
    }
    try {
        auto plan = expr::cached_plan(ex, specs);
        expr::result_shape(*plan, shapes);
    } catch (const ExprError& error) {
        raise_expr_error(error, ex);
    }
}

// numfuse.disassemble: the program compiled for these values' types.
py::list disassemble_expression(const std::string& ex, const std::vector<std::string>& names,
                                const py::sequence& values) {
    std::vector<InputSpec> specs;
    for (std::size_t k = 0; k < names.size(); ++k) {
        specs.push_back(convert_input(names[k], values[k], nullptr).spec);
    }
    try {
        return disassembly(*expr::cached_plan(ex, specs));
    } catch (const ExprError& error) {
        raise_expr_error(error, ex);
    }
}

}  // namespace numfuse::python
