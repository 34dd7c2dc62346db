// Python values -> engine inputs (expr_conversion.hpp).
#include "expr_conversion.hpp"

#include <string>
#include <vector>

#include "dtype_rules.hpp"
#include "expr_exceptions.hpp"
#include "weak_scalar.hpp"

namespace py = pybind11;

namespace numfuse::python {

using expr::ExprError;
using expr::Type;

namespace {

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

}  // namespace

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

Type type_for_descr(PyArray_Descr* descr, int* target) {
    Type type;
    if (!engine_type_of(descr->kind, PyDataType_ELSIZE(descr), &type)) {
        raise_unsupported_dtype(descr);
    }
    *target = npy_type_of(type);
    return type;
}

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

Input convert_input(const std::string& name, py::handle value, const Type* forced) {
    PyObject* obj = value.ptr();
    if (forced == nullptr && is_weak_python_scalar(obj)) return convert_python_scalar(name, obj);
    return convert_array(name, obj, forced);
}

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

expr::ArrayView view_of(const py::object& array, Type type) {
    auto* arr = reinterpret_cast<PyArrayObject*>(array.ptr());
    expr::ArrayView view;
    view.data = static_cast<char*>(PyArray_DATA(arr));
    view.type = type;
    if (type == Type::s) view.item = static_cast<std::size_t>(PyArray_ITEMSIZE(arr));
    view.shape.assign(PyArray_DIMS(arr), PyArray_DIMS(arr) + PyArray_NDIM(arr));
    view.strides.assign(PyArray_STRIDES(arr), PyArray_STRIDES(arr) + PyArray_NDIM(arr));
    return view;
}

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

}  // namespace numfuse::python
