// numfuse.jit's warm path in C (python/numfuse/_jit/_function.py, JitFunction).
//
// numfuse._core._jit_key(*args): the signature key of a call whose arguments are all plain
// arrays, in one allocation. The key the Python code builds, a tuple of (type, dtype,
// shape) per argument, costs more than a small fused call: hashing a NumPy dtype builds
// and hashes a tuple on every call. Here each argument that is exactly a numpy.ndarray
// with a built-in, native-byte-order dtype contributes its type number, dimension count
// and dimensions to one bytes object (hashed and compared as bytes). Any other argument
// makes the result None, and the caller keys that call the general way; bytes keys and
// tuple keys never compare equal, so the two kinds of key cannot be confused in one cache.
//
// numfuse._core._JitDispatch: the base class of JitFunction, whose call runs in C when it
// can answer for certain, and otherwise calls the Python method `_call` (the one
// implementation of the caching rules, docs/jit.md). Python publishes what C may use as
// one tuple in `_fast_state` (JitFunction._publish), replaced whole, never mutated:
//
//   (targets, global_checks, cell_checks, attribute_checks)
//   targets           (key, compiled, picks, ...): the signatures whose whole program is
//                     one fused expression of positional arrays (JitFunction's
//                     `direct`), each with its bytes key; picks None passes the
//                     arguments as they are, else a tuple of (is_argument, index or
//                     constant) per input. A call's key is built on the stack and
//                     compared with each (few: at most 64 signatures per function),
//                     and the compiled expression's __call__ is called with its
//                     arguments on the stack (no bound method, no tuple: call_compiled),
//                     so the warm path allocates nothing of its own.
//   global_checks     (globals dict, name, value, ...): dict.get(name) must be value
//   cell_checks       (cell, value, ...): the cell's contents must be value
//   attribute_checks  (globals dict, name, attribute, value, ...): getattr(dict[name],
//                     attribute) must be value, and not callable
//
// A call takes the C path only when it has no keyword arguments, its key is a bytes key
// among the targets and every check holds (identities, as Watch.unchanged compares).
// Anything else -- a miss, a changed value, an empty cell, an attribute read that raises
// -- goes to `_call`, which decides (it re-reads everything): C may send a call to Python
// that Python then serves from the cache, but never serves one Python would not. The GIL
// orders the reads of `_fast_state` against its replacement; a free-threaded build takes
// the Python path always.
#include <Python.h>
#include <structmember.h>

#include <cstdint>
#include <cstring>

#include "expr_conversion.hpp"  // the NumPy C API table of the expression bindings

namespace numfuse::python {
namespace {

// The words one argument adds to the key, or -1 when it is not a plain array of a
// built-in dtype.
Py_ssize_t key_words(PyObject* a) {
    if (!PyArray_CheckExact(a)) return -1;
    auto* array = reinterpret_cast<PyArrayObject*>(a);
    const PyArray_Descr* descr = PyArray_DESCR(array);
    // built-in, fixed-size, native-order types without fields: the type number then says
    // what dtype equality would (metadata aside, which equality ignores too)
    if (descr->type_num >= NPY_NTYPES_LEGACY || PyDataType_ISFLEXIBLE(descr) ||
        PyDataType_ISDATETIME(descr) || PyDataType_HASFIELDS(descr) ||
        !PyArray_ISNBO(descr->byteorder))
        return -1;
    return 2 + PyArray_NDIM(array);
}

// The key's length in bytes, or -1 when an argument is not a plain array of a built-in
// dtype.
Py_ssize_t key_bytes(PyObject* const* args, Py_ssize_t nargs) {
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        const Py_ssize_t words = key_words(args[i]);
        if (words < 0) return -1;
        count += words;
    }
    return count * static_cast<Py_ssize_t>(sizeof(std::int64_t));
}

// Writes the key of arguments that key_bytes accepted to `out` (key_bytes long).
void write_key(PyObject* const* args, Py_ssize_t nargs, char* out) {
    const auto put = [&out](std::int64_t word) {  // `out` need not be 8-byte aligned
        std::memcpy(out, &word, sizeof word);
        out += sizeof word;
    };
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        auto* array = reinterpret_cast<PyArrayObject*>(args[i]);
        const int ndim = PyArray_NDIM(array);
        put(PyArray_DESCR(array)->type_num);
        put(ndim);
        const npy_intp* dims = PyArray_DIMS(array);
        for (int d = 0; d < ndim; ++d) put(dims[d]);
    }
}

// A new bytes key, a new reference to None (not all plain arrays), or null (an error).
PyObject* signature_key(PyObject* const* args, Py_ssize_t nargs) {
    const Py_ssize_t size = key_bytes(args, nargs);
    if (size < 0) Py_RETURN_NONE;
    PyObject* key = PyBytes_FromStringAndSize(nullptr, size);
    if (key != nullptr) write_key(args, nargs, PyBytes_AS_STRING(key));
    return key;
}

PyObject* jit_key(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    return signature_key(args, nargs);
}

PyMethodDef jit_key_def = {
    "_jit_key", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&jit_key)),
    METH_FASTCALL,
    "_jit_key(*arrays) -> bytes | None: numfuse.jit's signature key of plain-array "
    "arguments (None when any argument is not a plain ndarray of a built-in dtype)."};

struct JitDispatch {
    PyObject_HEAD PyObject*
        fast_state;  // None, null or the tuple described at the top of this file
};

// The outcome of the C path: a result, "ask Python", or an error (set).
enum class Verdict { answered, ask_python, error };

// dict.get(name) as a borrowed reference (None when missing), or null: an error (set), or
// `dict` is not a dict (none set).
PyObject* dict_get(PyObject* dict, PyObject* name) {
    if (!PyDict_Check(dict)) return nullptr;
    PyObject* found = PyDict_GetItemWithError(dict, name);
    return found != nullptr || PyErr_Occurred() ? found : Py_None;
}

// dict.get(name) is value, for every (dict, name, value) of `checks`.
Verdict check_globals(PyObject* checks) {
    const Py_ssize_t n = PyTuple_GET_SIZE(checks);
    for (Py_ssize_t i = 0; i + 2 < n; i += 3) {
        PyObject* found = dict_get(PyTuple_GET_ITEM(checks, i), PyTuple_GET_ITEM(checks, i + 1));
        if (found == nullptr) return PyErr_Occurred() ? Verdict::error : Verdict::ask_python;
        if (found != PyTuple_GET_ITEM(checks, i + 2)) return Verdict::ask_python;
    }
    return Verdict::answered;
}

Verdict check_cells(PyObject* checks) {
    const Py_ssize_t n = PyTuple_GET_SIZE(checks);
    for (Py_ssize_t i = 0; i + 1 < n; i += 2) {
        PyObject* cell = PyTuple_GET_ITEM(checks, i);
        // an empty cell (null contents) never equals a remembered value: Python decides
        if (!PyCell_Check(cell) || PyCell_GET(cell) != PyTuple_GET_ITEM(checks, i + 1))
            return Verdict::ask_python;
    }
    return Verdict::answered;
}

// getattr(dict[name], attribute) is value and not callable (Watch's _attribute), for
// every (dict, name, attribute, value). The read may run Python code (a property); the
// caller holds the state tuple, so what it reads stays alive.
Verdict check_attributes(PyObject* checks) {
    const Py_ssize_t n = PyTuple_GET_SIZE(checks);
    for (Py_ssize_t i = 0; i + 3 < n; i += 4) {
        PyObject* base = dict_get(PyTuple_GET_ITEM(checks, i), PyTuple_GET_ITEM(checks, i + 1));
        if (base == nullptr) return PyErr_Occurred() ? Verdict::error : Verdict::ask_python;
        if (base == Py_None) return Verdict::ask_python;  // Watch's _attribute: unwatched
        Py_INCREF(base);
        PyObject* value = PyObject_GetAttr(base, PyTuple_GET_ITEM(checks, i + 2));
        Py_DECREF(base);
        if (value == nullptr) {
            // Watch reads an attribute that raises an Exception as its absence: Python
            // decides; anything else (KeyboardInterrupt) propagates as from Python
            if (!PyErr_ExceptionMatches(PyExc_Exception)) return Verdict::error;
            PyErr_Clear();
            return Verdict::ask_python;
        }
        const bool same = value == PyTuple_GET_ITEM(checks, i + 3) && !PyCallable_Check(value);
        Py_DECREF(value);
        if (!same) return Verdict::ask_python;
    }
    return Verdict::answered;
}

// The name looked up on a compiled expression's type for its call (interned once, when
// the module registers this file's objects).
PyObject* call_name = nullptr;

// compiled(*values) for `n` values, as slot_tp_call would make it (type(compiled).__call__
// bound to compiled), minus the bound method it allocates per call: when the type's
// __call__ is an instancemethod (what pybind11 defines), its function is called with
// compiled in front of the values, through vectorcall. Any other __call__ takes the
// general PyObject_Call. `stack[0]` is scratch, stack[1] is free for compiled, the values
// start at stack[2] (so the callee may use stack[1] as PY_VECTORCALL_ARGUMENTS_OFFSET).
Verdict call_compiled(PyObject* compiled, PyObject** stack, Py_ssize_t n, PyObject** result) {
    PyObject* method = _PyType_Lookup(Py_TYPE(compiled), call_name);  // borrowed
    if (method != nullptr && Py_IS_TYPE(method, &PyInstanceMethod_Type)) {
        PyObject* function = PyInstanceMethod_GET_FUNCTION(method);
        Py_INCREF(function);  // held as slot_tp_call holds its bound method
        stack[1] = compiled;
        *result = PyObject_Vectorcall(
            function, stack + 1, static_cast<std::size_t>(n + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET,
            nullptr);
        Py_DECREF(function);
    } else {
        PyObject* values = PyTuple_New(n);
        if (values == nullptr) return Verdict::error;
        for (Py_ssize_t k = 0; k < n; ++k) {
            Py_INCREF(stack[2 + k]);
            PyTuple_SET_ITEM(values, k, stack[2 + k]);
        }
        *result = PyObject_Call(compiled, values, nullptr);
        Py_DECREF(values);
    }
    return *result == nullptr ? Verdict::error : Verdict::answered;
}

// The most values a call passes on the C stack; a longer call takes the Python path.
constexpr Py_ssize_t max_values = 32;

// compiled(*values), values[k] = args[index] or the constant, per (is_argument, index or
// constant) of `picks` (borrowed references: `args` and `picks` outlive the call).
Verdict call_with_picks(PyObject* compiled, PyObject* picks, PyObject* args, PyObject** result) {
    const Py_ssize_t n = PyTuple_GET_SIZE(picks);
    if (n > max_values) return Verdict::ask_python;
    PyObject* stack[max_values + 2];
    for (Py_ssize_t k = 0; k < n; ++k) {
        PyObject* pick = PyTuple_GET_ITEM(picks, k);
        if (!PyTuple_CheckExact(pick) || PyTuple_GET_SIZE(pick) != 2) return Verdict::ask_python;
        PyObject* value = PyTuple_GET_ITEM(pick, 1);
        if (PyTuple_GET_ITEM(pick, 0) == Py_True) {
            const Py_ssize_t index = PyLong_AsSsize_t(value);
            if (index < 0 || index >= PyTuple_GET_SIZE(args))
                return PyErr_Occurred() ? Verdict::error : Verdict::ask_python;
            value = PyTuple_GET_ITEM(args, index);
        }
        stack[2 + k] = value;
    }
    return call_compiled(compiled, stack, n, result);
}

// The C path of a call with positional arguments `args` (a tuple) under `state` (which
// the caller holds: everything read from it stays alive while a check runs Python code).
Verdict call_fast(PyObject* state, PyObject* args, PyObject** result) {
    PyObject* const* items = &PyTuple_GET_ITEM(args, 0);
    const Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    const Py_ssize_t size = key_bytes(items, nargs);
    constexpr Py_ssize_t stack_bytes = 512;  // 64 words: a dozen arrays of up to 3-d
    if (size < 0 || size > stack_bytes) return Verdict::ask_python;
    char key[stack_bytes];
    write_key(items, nargs, key);
    PyObject* targets = PyTuple_GET_ITEM(state, 0);
    Py_ssize_t at = 0;  // targets[at:at + 3] is (key, compiled, picks) of this signature
    for (;; at += 3) {
        if (at + 2 >= PyTuple_GET_SIZE(targets)) return Verdict::ask_python;
        PyObject* known = PyTuple_GET_ITEM(targets, at);
        if (PyBytes_CheckExact(known) && PyBytes_GET_SIZE(known) == size &&
            std::memcmp(PyBytes_AS_STRING(known), key, static_cast<std::size_t>(size)) == 0)
            break;
    }
    Verdict verdict = check_globals(PyTuple_GET_ITEM(state, 1));
    if (verdict == Verdict::answered) verdict = check_cells(PyTuple_GET_ITEM(state, 2));
    if (verdict == Verdict::answered) verdict = check_attributes(PyTuple_GET_ITEM(state, 3));
    if (verdict != Verdict::answered) return verdict;
    PyObject* compiled = PyTuple_GET_ITEM(targets, at + 1);
    PyObject* picks = PyTuple_GET_ITEM(targets, at + 2);
    if (picks == Py_None) {
        if (nargs > max_values) {
            *result = PyObject_Call(compiled, args, nullptr);
            return *result == nullptr ? Verdict::error : Verdict::answered;
        }
        PyObject* stack[max_values + 2];
        std::memcpy(stack + 2, items, static_cast<std::size_t>(nargs) * sizeof(PyObject*));
        return call_compiled(compiled, stack, nargs, result);
    }
    if (!PyTuple_CheckExact(picks)) return Verdict::ask_python;
    return call_with_picks(compiled, picks, args, result);
}

bool well_formed(PyObject* state) {
    if (state == nullptr || !PyTuple_CheckExact(state) || PyTuple_GET_SIZE(state) != 4)
        return false;
    for (Py_ssize_t i = 0; i < 4; ++i)
        if (!PyTuple_CheckExact(PyTuple_GET_ITEM(state, i))) return false;
    return true;
}

PyObject* dispatch_call(PyObject* self, PyObject* args, PyObject* kwargs) {
#if !defined(Py_GIL_DISABLED)
    PyObject* state = reinterpret_cast<JitDispatch*>(self)->fast_state;
    if ((kwargs == nullptr || PyDict_GET_SIZE(kwargs) == 0) && well_formed(state)) {
        Py_INCREF(state);  // a concurrent trace may publish a new one while this call runs
        PyObject* result = nullptr;
        const Verdict verdict = call_fast(state, args, &result);
        Py_DECREF(state);
        if (verdict == Verdict::answered) return result;
        if (verdict == Verdict::error) return nullptr;
    }
#endif
    PyObject* method = PyObject_GetAttrString(self, "_call");
    if (method == nullptr) return nullptr;
    PyObject* result = PyObject_Call(method, args, kwargs);
    Py_DECREF(method);
    return result;
}

int dispatch_traverse(PyObject* self, visitproc visit, void* arg) {
    Py_VISIT(Py_TYPE(self));  // a heap type: its instances keep it alive
    Py_VISIT(reinterpret_cast<JitDispatch*>(self)->fast_state);
    return 0;
}

int dispatch_clear(PyObject* self) {
    Py_CLEAR(reinterpret_cast<JitDispatch*>(self)->fast_state);
    return 0;
}

void dispatch_dealloc(PyObject* self) {
    PyTypeObject* type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    dispatch_clear(self);
    type->tp_free(self);
    Py_DECREF(type);
}

PyMemberDef dispatch_members[] = {
    {"_fast_state", T_OBJECT, offsetof(JitDispatch, fast_state), 0,
     "What calls may take from C: None, or (targets, global_checks, cell_checks, "
     "attribute_checks), published by JitFunction._publish (src/python/jit_dispatch.cpp)."},
    {nullptr, 0, 0, 0, nullptr}};

char dispatch_doc[] =
    "numfuse.jit's call path in C: the base class of numfuse.jit's functions "
    "(src/python/jit_dispatch.cpp).";

PyType_Slot dispatch_slots[] = {{Py_tp_doc, dispatch_doc},
                                {Py_tp_new, reinterpret_cast<void*>(&PyType_GenericNew)},
                                {Py_tp_call, reinterpret_cast<void*>(&dispatch_call)},
                                {Py_tp_traverse, reinterpret_cast<void*>(&dispatch_traverse)},
                                {Py_tp_clear, reinterpret_cast<void*>(&dispatch_clear)},
                                {Py_tp_dealloc, reinterpret_cast<void*>(&dispatch_dealloc)},
                                {Py_tp_members, dispatch_members},
                                {0, nullptr}};

PyType_Spec dispatch_spec = {"numfuse._core._JitDispatch", sizeof(JitDispatch), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                             dispatch_slots};

}  // namespace

void register_jit_dispatch(pybind11::module_& m) {
    if (call_name == nullptr) {
        call_name = PyUnicode_InternFromString("__call__");  // kept for the process
        if (call_name == nullptr) throw pybind11::error_already_set();
    }
    PyObject* function = PyCFunction_NewEx(&jit_key_def, nullptr, m.ptr());
    if (function == nullptr) throw pybind11::error_already_set();
    m.add_object("_jit_key", pybind11::reinterpret_steal<pybind11::object>(function));
    PyObject* type = PyType_FromSpec(&dispatch_spec);
    if (type == nullptr) throw pybind11::error_already_set();
    m.add_object("_JitDispatch", pybind11::reinterpret_steal<pybind11::object>(type));
}

}  // namespace numfuse::python
