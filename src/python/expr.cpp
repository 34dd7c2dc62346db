// numfuse.evaluate / compile / disassemble: bindings of the expression engine.
//
// This file only marshals: Python values -> ArrayView/InputSpec, the core's
// ExprError -> the Python exception numexpr or NumPy raise, and output
// allocation. Parsing, typing, compiling and running are in src/core/expr.
//
// The GIL: released around core::execute. The engine touches no Python
// object; every array it reads or writes is kept alive by the py::object
// handles held in this frame for the duration of the call.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "expr_error.hpp"
#include "interruptible.hpp"
#include "weak_scalar.hpp"
#include "expr/array_views.hpp"
#include "expr/expr.hpp"
#include "numfuse_core.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

using expr::ArrayView;
using expr::ErrorKind;
using expr::ExprError;
using expr::InputSpec;
using expr::Plan;
using expr::Type;

int npy_type_of(Type t) {
    switch (t) {
        case Type::b: return NPY_BOOL;
        case Type::i: return NPY_INT32;
        case Type::l: return NPY_INT64;
        case Type::f: return NPY_FLOAT32;
        case Type::d: return NPY_FLOAT64;
        case Type::c: return NPY_COMPLEX64;
        case Type::z: return NPY_COMPLEX128;
        case Type::s: return NPY_STRING;
        case Type::w: break;  // never an array's type
    }
    return NPY_FLOAT64;
}

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

namespace {

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

[[noreturn]] void raise_dtype_error(const std::string& message) {
    PyErr_SetString(unsupported_dtype_error_type(), message.c_str());
    throw py::error_already_set();
}

// One input as the engine sees it, plus the object that keeps its memory alive.
struct Input {
    py::object owner;
    ArrayView view;
    InputSpec spec;
    expr::Scalar scalar;  // storage of a Python scalar
};

// The TypeError for an array dtype the engine has no type for.
[[noreturn]] void raise_unsupported_dtype(PyArray_Descr* descr) {
    const char kind = descr->kind;
    const auto size = PyDataType_ELSIZE(descr);
    if (kind == 'U') {
        raise_dtype_error(
            "str arrays (dtype '" +
            py::str(reinterpret_cast<PyObject*>(descr)).cast<std::string>() +
            "') are not supported by numfuse.evaluate, which compares byte strings: convert "
            "with .astype('S') (ASCII text) or np.char.encode(a, 'utf-8')");
    }
    if (kind == 'S') raise_dtype_error("bytes arrays with elements of 0 bytes are not supported");
    const std::string name = py::str(reinterpret_cast<PyObject*>(descr)).cast<std::string>();
    if (kind == 'u' && size == 8) {
        raise_dtype_error(
            "unsupported array dtype 'uint64' for numfuse.evaluate: none of its "
            "types (bool, int32, int64, float32, float64, complex64, complex128) "
            "holds every uint64 value; convert with .astype(np.int64) or "
            ".astype(np.float64)");
    }
    if ((kind == 'f' && size > 8) || (kind == 'c' && size > 16)) {
        raise_dtype_error("unsupported array dtype '" + name +
                          "' (long double) for numfuse.evaluate: it computes in float64 / "
                          "complex128 at most; convert with .astype(np.float64) or "
                          ".astype(np.complex128)");
    }
    raise_dtype_error("unsupported array dtype '" + name + "' for numfuse.evaluate");
}

// The engine type of an array dtype, with numexpr's widening (8/16-bit ints
// -> int32, uint32 -> int64); `target` gets the NumPy type to convert to.
Type type_for_descr(PyArray_Descr* descr, int* target) {
    const char kind = descr->kind;
    const auto size = PyDataType_ELSIZE(descr);
    Type type;
    if (kind == 'b') {
        type = Type::b;
    } else if ((kind == 'i' || kind == 'u') && !(kind == 'u' && size == 8)) {
        type = size <= 2 || (kind == 'i' && size == 4) ? Type::i : Type::l;
    } else if (kind == 'f' && size <= 8) {
        type = size <= 4 ? Type::f : Type::d;
    } else if (kind == 'c' && (size == 8 || size == 16)) {
        type = size == 8 ? Type::c : Type::z;
    } else if (kind == 'S' && size > 0) {
        type = Type::s;  // byte strings: compared element by element, never converted
    } else {
        raise_unsupported_dtype(descr);
    }
    *target = npy_type_of(type);
    return type;
}

// The engine type of a dtype the engine takes without conversion (the fast
// path's test); false for any other dtype.
bool exact_type_for_descr(PyArray_Descr* descr, Type* type) {
    const auto size = PyDataType_ELSIZE(descr);
    switch (descr->kind) {
        case 'b': *type = Type::b; return true;
        case 'i':
            if (size != 4 && size != 8) return false;
            *type = size == 4 ? Type::i : Type::l;
            return true;
        case 'f':
            if (size != 4 && size != 8) return false;
            *type = size == 4 ? Type::f : Type::d;
            return true;
        case 'c':
            if (size != 8 && size != 16) return false;
            *type = size == 8 ? Type::c : Type::z;
            return true;
        default: return false;
    }
}

// Points a scalar input's view at its own storage (after the Input moved).
void pin_scalar(Input& in) {
    if (!in.owner) in.view.data = reinterpret_cast<char*>(in.scalar.bytes);
}

void fill_view_from_array(Input& in, PyArrayObject* array, Type type) {
    in.view.data = static_cast<char*>(PyArray_DATA(array));
    in.view.type = type;
    if (type == Type::s) {
        in.view.item = static_cast<std::size_t>(PyArray_ITEMSIZE(array));
        in.spec.item = in.view.item;
    }
    const int ndim = PyArray_NDIM(array);
    in.view.shape.assign(PyArray_DIMS(array), PyArray_DIMS(array) + ndim);
    in.view.strides.assign(PyArray_STRIDES(array), PyArray_STRIDES(array) + ndim);
}

// A weak Python scalar (weak_scalar.hpp), stored in Input::scalar; view.data is set by
// the caller once the Input has its final address (see pin_scalar).
Input convert_python_scalar(const std::string& name, PyObject* obj) {
    Input in;
    in.spec.name = name;
    if (!read_weak_scalar(obj, &in.spec, &in.scalar)) throw py::error_already_set();
    in.view.type = in.spec.type;
    return in;
}

// An array (or anything NumPy makes one of), converted where the engine
// cannot read it as it is; `forced` as in convert_input.
Input convert_array(const std::string& name, PyObject* obj, const Type* forced) {
    if (PyUnicode_Check(obj)) {
        raise_dtype_error("variable '" + name +
                          "' is a str; numfuse.evaluate compares byte strings: pass bytes "
                          "(e.g. " +
                          name + ".encode())");
    }
    // bytes values become 0-d S arrays (np.array(b'') is S1).
    PyObject* raw = PyArray_FROM_O(obj);
    if (raw == nullptr) throw py::error_already_set();
    py::object array = py::reinterpret_steal<py::object>(raw);
    auto* arr = reinterpret_cast<PyArrayObject*>(raw);
    int target = 0;
    Type type = type_for_descr(PyArray_DESCR(arr), &target);
    const expr::IntDtype int_dtype =
        forced == nullptr
            ? int_dtype_of(PyArray_DESCR(arr)->kind, PyDataType_ELSIZE(PyArray_DESCR(arr)))
            : expr::IntDtype::none;
    if (forced != nullptr && type == Type::s) {
        throw py::type_error("variable '" + name + "' holds bytes; the signature declares " +
                             expr::type_name(*forced));
    }
    if (forced != nullptr) {
        type = *forced;
        target = npy_type_of(type);
    }
    const bool usable =
        PyArray_TYPE(arr) == target && PyArray_ISALIGNED(arr) && PyArray_ISNOTSWAPPED(arr);
    if (!usable) {
        // Widen / byte-swap / align: the only copies numfuse makes of inputs.
        PyObject* converted = PyArray_FromAny(raw, PyArray_DescrFromType(target), 0, 0,
                                              NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, nullptr);
        if (converted == nullptr) throw py::error_already_set();
        array = py::reinterpret_steal<py::object>(converted);
        arr = reinterpret_cast<PyArrayObject*>(converted);
    }
    Input in;
    in.spec.name = name;
    in.owner = array;
    in.spec.type = type;
    in.spec.int_dtype = int_dtype;
    fill_view_from_array(in, arr, type);
    return in;
}

// `forced`: the signature's type for a compiled object (values are cast to it).
Input convert_input(const std::string& name, py::handle value, const Type* forced) {
    PyObject* obj = value.ptr();
    if (forced == nullptr && is_weak_python_scalar(obj)) return convert_python_scalar(name, obj);
    return convert_array(name, obj, forced);
}

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

// The values as engine inputs (reserved up front: scalar inputs point into
// their own Input, which must not move afterwards).
std::vector<Input> convert_inputs(const std::string& text, const std::vector<std::string>& names,
                                  const py::sequence& values, const std::vector<Type>* signature) {
    const std::size_t n = names.size();
    if (static_cast<std::size_t>(py::len(values)) != n) {
        throw py::value_error("got " + std::to_string(py::len(values)) + " values for " +
                              std::to_string(n) + " names");
    }
    std::vector<Input> inputs;
    inputs.reserve(n);
    try {
        for (std::size_t k = 0; k < n; ++k) {
            inputs.push_back(
                convert_input(names[k], values[k], signature ? &(*signature)[k] : nullptr));
            pin_scalar(inputs.back());
        }
    } catch (const ExprError& error) {
        raise_expr_error(error, text);
    }
    return inputs;
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

ArrayView view_of(const py::object& array, Type type) {
    auto* arr = reinterpret_cast<PyArrayObject*>(array.ptr());
    ArrayView view;
    view.data = static_cast<char*>(PyArray_DATA(arr));
    view.type = type;
    view.shape.assign(PyArray_DIMS(arr), PyArray_DIMS(arr) + PyArray_NDIM(arr));
    view.strides.assign(PyArray_STRIDES(arr), PyArray_STRIDES(arr) + PyArray_NDIM(arr));
    return view;
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

// Runs `compute` (which calls the engine) and turns its errors into Python
// exceptions. With `release_gil`, it runs without the GIL and can be stopped
// by Ctrl-C (interruptible.hpp); `elements` sizes the interrupt check.
template <class Compute>
void run_engine(const std::string& text, bool release_gil, std::size_t elements,
                Compute&& compute) {
    bool failed = false, interrupted = false;
    ExprError failure(ErrorKind::value, "");
    if (release_gil) {
        const InterruptibleCall interruptible(elements);
        py::gil_scoped_release release;
        const TsanComputeSection tsan_section;
        try {
            compute();
        } catch (const ExprError& error) {
            failed = true;
            failure = error;
        } catch (const interrupt::Interrupted&) {
            interrupted = true;
        }
    } else {
        try {
            compute();
        } catch (const ExprError& error) {
            failed = true;
            failure = error;
        }
    }
    if (interrupted) raise_interrupted();
    if (failed) raise_expr_error(failure, text);
}

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

// A signature's dtype: the engine type, and in *int_dtype the integer dtype it widens.
Type type_from_dtype(py::handle dtype_like, expr::IntDtype* int_dtype) {
    PyArray_Descr* descr = nullptr;
    if (!PyArray_DescrConverter(dtype_like.ptr(), &descr)) throw py::error_already_set();
    int target = 0;
    Type t;
    try {
        t = type_for_descr(descr, &target);
    } catch (...) {
        Py_DECREF(descr);
        throw;
    }
    *int_dtype = int_dtype_of(descr->kind, PyDataType_ELSIZE(descr));
    Py_DECREF(descr);
    if (t == Type::s) {
        throw py::type_error(
            "signature= takes numeric dtypes; compile expressions over bytes without a "
            "signature (their element sizes are taken at each call)");
    }
    return t;
}

std::string type_name_of(py::handle value) {
    return std::string(py::str(py::type::handle_of(value).attr("__name__")));
}

// The inputs of a compiled expression without a signature: the names it
// uses, sorted; inf / nan are constants unless the caller names them.
std::vector<std::string> sorted_variable_names(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::remove_if(names.begin(), names.end(),
                               [](const std::string& s) { return s == "inf" || s == "nan"; }),
                names.end());
    return names;
}

// signature=: a sequence of (name, dtype) pairs.
std::vector<InputSpec> parse_signature(const py::object& signature) {
    if (!PySequence_Check(signature.ptr()) || py::isinstance<py::str>(signature)) {
        throw py::type_error("signature must be a list of (name, dtype) pairs, got " +
                             type_name_of(signature));
    }
    std::vector<InputSpec> specs;
    for (py::handle entry : signature) {
        if (!PySequence_Check(entry.ptr()) || py::isinstance<py::str>(entry)) {
            throw py::type_error("signature entries are (name, dtype) pairs");
        }
        auto pair = py::reinterpret_borrow<py::sequence>(entry);
        if (py::len(pair) != 2) throw py::value_error("signature entries are (name, dtype)");
        if (!py::isinstance<py::str>(pair[0])) {
            throw py::type_error("signature names must be str, got " + type_name_of(pair[0]));
        }
        InputSpec spec;
        spec.name = pair[0].cast<std::string>();
        spec.type = type_from_dtype(pair[1], &spec.int_dtype);
        specs.push_back(spec);
    }
    return specs;
}

// KeyError (as numexpr) for a name the expression uses that the signature
// does not declare.
void check_signature_names(const std::vector<std::string>& used,
                           const std::vector<std::string>& declared) {
    for (const auto& name : used) {
        if (name != "inf" && name != "nan" &&
            std::find(declared.begin(), declared.end(), name) == declared.end()) {
            PyErr_SetObject(PyExc_KeyError, py::str(name).ptr());
            throw py::error_already_set();
        }
    }
}

// The arguments of a call of a compiled expression, by input name.
struct CallArguments {
    py::list values;  // one per input, in input order
    py::object out = py::none();
    std::string order = "K";
    std::string casting = "same_kind";
};

CallArguments parse_call_arguments(const std::vector<std::string>& names, const py::args& args,
                                   const py::kwargs& kwargs) {
    CallArguments call;
    std::vector<py::object> values(names.size());
    if (args.size() > names.size()) {
        throw py::type_error("expected at most " + std::to_string(names.size()) +
                             " positional arguments, got " + std::to_string(args.size()));
    }
    for (std::size_t k = 0; k < args.size(); ++k) values[k] = args[k];
    for (auto item : kwargs) {
        const std::string key = item.first.cast<std::string>();
        if (key == "out") {
            call.out = py::reinterpret_borrow<py::object>(item.second);
            continue;
        }
        if (key == "order" || key == "casting") {
            if (!py::isinstance<py::str>(item.second)) {
                throw py::type_error(key + " must be a str, got " + type_name_of(item.second));
            }
            (key == "order" ? call.order : call.casting) = item.second.cast<std::string>();
            continue;
        }
        // numexpr's options, accepted and ignored.
        if (key == "ex_uses_vml" || key == "optimization" || key == "truediv") continue;
        const auto found = std::find(names.begin(), names.end(), key);
        if (found == names.end()) throw py::type_error("unexpected keyword argument '" + key + "'");
        const auto k = static_cast<std::size_t>(found - names.begin());
        if (values[k]) throw py::type_error("argument '" + key + "' given twice");
        values[k] = py::reinterpret_borrow<py::object>(item.second);
    }
    for (std::size_t k = 0; k < names.size(); ++k) {
        if (!values[k]) {
            PyErr_SetObject(PyExc_KeyError, py::str(names[k]).ptr());
            throw py::error_already_set();
        }
        call.values.append(values[k]);
    }
    return call;
}

// A compiled expression: reusable, thread-safe (immutable after
// construction), runs without the GIL.
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
    return std::move(values);
}

class CompiledExpression {
public:
    CompiledExpression(const std::string& text, py::object signature) : text_(text) {
        const std::vector<std::string> used = names_of(text);
        if (signature.is_none()) {
            names_ = sorted_variable_names(used);
            return;
        }
        const std::vector<InputSpec> specs = parse_signature(signature);
        for (const auto& spec : specs) {
            names_.push_back(spec.name);
            types_.push_back(spec.type);
        }
        check_signature_names(used, names_);
        signature_ = true;
        specs_ = specs;
        fixed_ = signature_plan_for_level();
    }

    py::object call(py::args args, py::kwargs kwargs) const {
        if (kwargs.empty()) {
            py::object fast = call_contiguous(args);
            if (fast) return fast;
        } else if (args.empty()) {
            // c(x=..., y=...) with exactly the input names: the same fast path, in name order.
            py::object fast = call_contiguous_keywords(kwargs);
            if (fast) return fast;
        }
        const CallArguments call = parse_call_arguments(names_, args, kwargs);
        return run_plan(text_, names_, call.values, call.out, call.order, call.casting,
                        signature_ ? &types_ : nullptr,
                        signature_ ? signature_plan()->plan : nullptr);
    }

    const std::string& text() const { return text_; }
    const std::vector<std::string>& names() const { return names_; }
    py::object signature() const {
        if (!signature_) return py::none();
        py::list sig;
        for (std::size_t k = 0; k < names_.size(); ++k) {
            sig.append(py::make_tuple(names_[k], py::str(expr::type_name(types_[k]))));
        }
        return sig;
    }
    py::object disassemble() const {
        if (!signature_) {
            throw py::value_error(
                "this compiled expression has no signature; its types (and "
                "program) are chosen at each call");
        }
        return disassembly(*signature_plan()->plan);
    }

private:
    static constexpr std::size_t max_fast_inputs = 16;
    // What each fast-path argument is: 0 a 1-d array, else one value, weak
    // (a Python scalar, NEP 50) or strong (a NumPy scalar or 0-d array).
    static constexpr char weak_scalar = 1, strong_scalar = 2;

    py::object call_contiguous_keywords(const py::kwargs& kwargs) const {
        const std::size_t count = names_.size();
        if (count == 0 || count > max_fast_inputs ||
            static_cast<std::size_t>(PyDict_GET_SIZE(kwargs.ptr())) != count) {
            return py::object();
        }
        py::tuple ordered(count);
        for (std::size_t k = 0; k < count; ++k) {
            PyObject* value = PyDict_GetItemString(kwargs.ptr(), names_[k].c_str());
            if (value == nullptr) return py::object();
            ordered[k] = py::reinterpret_borrow<py::object>(value);
        }
        return call_contiguous(py::reinterpret_borrow<py::args>(ordered));
    }

    // The common call c(x, y, ...) with 1-d C-contiguous, aligned, native
    // arrays of one length and engine types, and (without a signature)
    // scalars: no conversions, no broadcasting, no cache key, no shape
    // bookkeeping. Returns a null object when the call is anything else (the
    // general path then handles it, errors included).
    py::object call_contiguous(const py::args& args) const {
        const std::size_t count = names_.size();
        if (count == 0 || count > max_fast_inputs || args.size() != count) return py::object();
        const char* data[max_fast_inputs];
        Type types[max_fast_inputs];
        char scalar[max_fast_inputs];
        expr::Scalar values[max_fast_inputs];
        std::int64_t ints[max_fast_inputs];  // a Python int's value, else 0
        npy_intp n = -1;
        for (std::size_t k = 0; k < count; ++k) {
            PyObject* obj = PyTuple_GET_ITEM(args.ptr(), static_cast<Py_ssize_t>(k));
            ints[k] = 0;
            if (!PyArray_CheckExact(obj)) {
                if (signature_) return py::object();  // the signature casts: the general path
                if (is_weak_python_scalar(obj)) {
                    InputSpec spec;
                    if (!read_weak_scalar(obj, &spec, &values[k])) throw py::error_already_set();
                    // Ints beyond int64 (rare) take the general path.
                    if (spec.type == Type::d && spec.int_range != expr::PyIntRange::unknown) {
                        return py::object();
                    }
                    types[k] = spec.type;
                    ints[k] = spec.int_value;
                    scalar[k] = weak_scalar;
                } else if (PyArray_IsScalar(obj, Generic)) {
                    PyArray_Descr* descr = PyArray_DescrFromScalar(obj);
                    const bool exact = exact_type_for_descr(descr, &types[k]) &&
                                       static_cast<std::size_t>(PyDataType_ELSIZE(descr)) <=
                                           sizeof values[k].bytes &&
                                       PyArray_ISNBO(descr->byteorder);
                    if (exact) PyArray_ScalarAsCtype(obj, values[k].bytes);
                    Py_DECREF(descr);
                    if (!exact) return py::object();
                    scalar[k] = strong_scalar;
                } else {
                    return py::object();
                }
                data[k] = reinterpret_cast<const char*>(values[k].bytes);
                continue;
            }
            auto* arr = reinterpret_cast<PyArrayObject*>(obj);
            const int ndim = PyArray_NDIM(arr);
            if (ndim > 1 || !PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr) ||
                !PyArray_ISNOTSWAPPED(arr)) {
                return py::object();
            }
            Type t;
            if (!exact_type_for_descr(PyArray_DESCR(arr), &t)) return py::object();
            if (signature_ && types_[k] != t) return py::object();
            types[k] = t;
            data[k] = static_cast<const char*>(PyArray_DATA(arr));
            if (ndim == 0) {  // a 0-d array: a strong scalar, as NumPy scalars are
                if (signature_) return py::object();  // (the signature's form has arrays only)
                scalar[k] = strong_scalar;
                continue;
            }
            const npy_intp length = PyArray_DIM(arr, 0);
            if (n >= 0 && length != n) return py::object();
            n = length;
            scalar[k] = 0;
        }
        if (n <= 0) return py::object();  // no array, or empty ones (execute()'s rules)
        // The plan: fixed by the signature, else the one memoised for the
        // last types seen.
        const std::shared_ptr<const FastPlan> found =
            signature_ ? signature_plan() : memoised_plan(types, scalar, ints, count);
        if (!found || found->form.kind == expr::ContiguousForm::Kind::none) return py::object();
        const std::vector<std::ptrdiff_t>& shape = found->form.result_shape;  // at most 1-d
        npy_intp dims[1] = {shape.empty() || shape[0] < 0 ? n : shape[0]};
        PyObject* fresh = PyArray_SimpleNew(static_cast<int>(shape.size()), dims,
                                            npy_type_of(found->plan->result_type));
        if (fresh == nullptr) throw py::error_already_set();
        py::object result = py::reinterpret_steal<py::object>(fresh);
        char* out = static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(fresh)));
        // The GIL is only worth releasing for work longer than its round trip.
        run_engine(text_, n >= 4096, static_cast<std::size_t>(n), [&] {
            expr::execute_contiguous(*found->plan, found->form, data, static_cast<std::size_t>(n),
                                     out);
        });
        return result;
    }

    // A plan and how the fast path runs it (shared: a call that released the
    // GIL keeps its plan while another call replaces the memo).
    struct FastPlan {
        std::shared_ptr<const Plan> plan;
        expr::ContiguousForm form;
    };

    // The signature's plan for the active level (its constants folded with that level's
    // kernels, Plan::level): compiled at construction, fetched again after set_level.
    std::shared_ptr<const FastPlan> signature_plan() const {
        {
            const std::lock_guard<std::mutex> lock(memo_mutex_);
            if (fixed_->plan->level == core::active_level()) return fixed_;
        }
        std::shared_ptr<const FastPlan> found = signature_plan_for_level();
        const std::lock_guard<std::mutex> lock(memo_mutex_);
        fixed_ = found;
        return found;
    }

    std::shared_ptr<const FastPlan> signature_plan_for_level() const {
        try {
            std::shared_ptr<const Plan> plan = expr::cached_plan(text_, specs_);
            return std::make_shared<const FastPlan>(
                FastPlan{plan, expr::contiguous_form(*plan, std::vector<char>(names_.size(), 0))});
        } catch (const ExprError& error) {
            raise_expr_error(error, text_);
        }
    }

    // The plan for these input types, `scalar` marking the single values
    // (no signature): the memoised one when they and the level are the last call's,
    // else compiled and memoised. Null when compiling fails (the general path
    // then raises the error). Called with the GIL held, which orders the
    // memo's accesses; the mutex is there too because no tool can see that
    // (ThreadSanitizer), and it costs nothing.
    std::shared_ptr<const FastPlan> memoised_plan(const Type* types, const char* scalar,
                                                  const std::int64_t* ints,
                                                  std::size_t count) const {
        // A Python int's class decides the plan (its NumPy range checks), its value too
        // where the plan is value-keyed: both are part of the memo's key.
        const auto is_python_int = [&](std::size_t k) {
            return scalar[k] == weak_scalar && types[k] == Type::l;
        };
        const auto same_ints = [&](bool value_keyed) {
            for (std::size_t k = 0; k < count; ++k) {
                if (!is_python_int(k)) continue;
                if (value_keyed
                        ? ints[k] != memo_ints_[k]
                        : expr::python_int_class(expr::PyIntRange::int64, ints[k]) !=
                              expr::python_int_class(expr::PyIntRange::int64, memo_ints_[k])) {
                    return false;
                }
            }
            return true;
        };
        {
            const std::lock_guard<std::mutex> lock(memo_mutex_);
            if (memo_ && memo_->plan->level == core::active_level() &&
                std::equal(types, types + count, memo_types_.begin()) &&
                std::equal(scalar, scalar + count, memo_scalar_.begin()) &&
                same_ints(memo_->plan->value_keyed)) {
                return memo_;
            }
        }
        std::vector<InputSpec> specs(count);
        for (std::size_t k = 0; k < count; ++k) {
            specs[k].name = names_[k];
            specs[k].type = types[k];
            specs[k].weak = scalar[k] == weak_scalar;
            if (is_python_int(k)) {
                specs[k].int_range = expr::PyIntRange::int64;
                specs[k].int_value = ints[k];
            }
        }
        std::shared_ptr<const Plan> plan;
        try {
            plan = expr::cached_plan(text_, specs);
        } catch (const ExprError&) {
            return nullptr;
        }
        std::vector<char> scalar_input(count);
        for (std::size_t k = 0; k < count; ++k) scalar_input[k] = scalar[k] != 0;
        auto found = std::make_shared<const FastPlan>(
            FastPlan{plan, expr::contiguous_form(*plan, scalar_input)});
        const std::lock_guard<std::mutex> lock(memo_mutex_);
        memo_types_.assign(types, types + count);
        memo_scalar_.assign(scalar, scalar + count);
        memo_ints_.assign(ints, ints + count);
        memo_ = found;
        return found;
    }

    std::string text_;
    std::vector<std::string> names_;
    std::vector<Type> types_;
    bool signature_ = false;
    std::vector<InputSpec> specs_;  // the signature's
    // The signature's plan and its form, for the level of the last call (signature_plan).
    mutable std::shared_ptr<const FastPlan> fixed_;
    // Memo of the last call's plan (no signature); touched only under the GIL.
    mutable std::vector<Type> memo_types_;
    mutable std::vector<char> memo_scalar_;
    mutable std::vector<std::int64_t> memo_ints_;
    mutable std::shared_ptr<const FastPlan> memo_;
    mutable std::mutex memo_mutex_;
};

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

}  // namespace

void register_expr(py::module_& m) {
    // This translation unit's own NumPy C-API table (as ufuncs.cpp has its own).
    if (_import_array() < 0) throw py::error_already_set();
    m.add_object("ExpressionError", py::reinterpret_borrow<py::object>(expression_error_type()));
    m.add_object("UnsupportedDtypeError",
                 py::reinterpret_borrow<py::object>(unsupported_dtype_error_type()));
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

    py::class_<CompiledExpression>(m, "CompiledExpression",
                                   "A compiled numfuse expression; call it with the input arrays.")
        .def(py::init<const std::string&, py::object>(), py::arg("ex"),
             py::arg("signature") = py::none())
        .def("__call__", &CompiledExpression::call)
        .def("run", &CompiledExpression::call,
             "numexpr's NumExpr.run: the same as calling the object, c.run(*args, out=None, "
             "order='K', casting='same_kind').")
        .def_property_readonly("expression", &CompiledExpression::text)
        .def_property_readonly("input_names", &CompiledExpression::names)
        .def_property_readonly("signature", &CompiledExpression::signature)
        .def("disassemble", &CompiledExpression::disassemble)
        .def("__repr__", [](const CompiledExpression& c) {
            return "numfuse.CompiledExpression(" + py::repr(py::str(c.text())).cast<std::string>() +
                   ")";
        });
}

}  // namespace numfuse::python
