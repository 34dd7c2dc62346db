// numfuse._core._jit_key(*args): the signature key of a numfuse.jit call whose arguments are
// all plain arrays, in one allocation (python/numfuse/_jit/_function.py, JitFunction.__call__).
//
// The key the Python code builds, a tuple of (type, dtype, shape) per argument, costs more
// than a small fused call: hashing a NumPy dtype builds and hashes a tuple on every call.
// Here each argument that is exactly a numpy.ndarray with a built-in, native-byte-order
// dtype contributes its type number, dimension count and dimensions to one bytes object
// (hashed and compared as bytes). Any other argument makes the result None, and the
// caller keys that call the general way; bytes keys and tuple keys never compare equal, so
// the two kinds of key cannot be confused in one cache.
#include <Python.h>

#include <cstdint>
#include <vector>

#include "expr_conversion.hpp"  // the NumPy C API table of the expression bindings

namespace numfuse::python {
namespace {

PyObject* jit_key(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    std::vector<std::int64_t> words;
    words.reserve(static_cast<std::size_t>(4 * nargs));
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        PyObject* a = args[i];
        if (!PyArray_CheckExact(a)) Py_RETURN_NONE;
        auto* array = reinterpret_cast<PyArrayObject*>(a);
        const PyArray_Descr* descr = PyArray_DESCR(array);
        // built-in, fixed-size, native-order types without fields: the type number then
        // says what dtype equality would (metadata aside, which equality ignores too)
        if (descr->type_num >= NPY_NTYPES_LEGACY || PyDataType_ISFLEXIBLE(descr) ||
            PyDataType_ISDATETIME(descr) || PyDataType_HASFIELDS(descr) ||
            !PyArray_ISNBO(descr->byteorder))
            Py_RETURN_NONE;
        const int ndim = PyArray_NDIM(array);
        words.push_back(descr->type_num);
        words.push_back(ndim);
        const npy_intp* dims = PyArray_DIMS(array);
        words.insert(words.end(), dims, dims + ndim);
    }
    return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(words.data()),
                                     static_cast<Py_ssize_t>(words.size() * sizeof(std::int64_t)));
}

PyMethodDef jit_key_def = {
    "_jit_key", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&jit_key)),
    METH_FASTCALL,
    "_jit_key(*arrays) -> bytes | None: numfuse.jit's signature key of plain-array "
    "arguments (None when any argument is not a plain ndarray of a built-in dtype)."};

}  // namespace

void register_jit_key(pybind11::module_& m) {
    PyObject* function = PyCFunction_NewEx(&jit_key_def, nullptr, m.ptr());
    if (function == nullptr) throw pybind11::error_already_set();
    m.add_object("_jit_key", pybind11::reinterpret_steal<pybind11::object>(function));
}

}  // namespace numfuse::python
