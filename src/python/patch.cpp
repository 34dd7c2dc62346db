// Putting numfuse's inner loops into other ufunc objects (numpy.exp, scipy.special.erf, ...)
// and taking them out again, through NumPy's documented PyUFunc_ReplaceLoopBySignature.
// numfuse/_patch.py owns the policy (which functions, counting, locking); this file only
// swaps one loop at a time, under the GIL.
//
// A swap replaces the target's loop whose every operand has the given type (e.g. "dd->d"
// for a float64 logaddexp) with the source's loop of the same signature. NumPy keeps the
// target's own `data` pointer next to the replaced function; numfuse's loops ignore theirs
// (ufuncs.cpp), so they run correctly with whatever the target stored there. The returned
// handle holds the function that was there; restoring puts exactly that one back.
#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

// The saved loop of one target and signature, as a capsule: Python code cannot forge one,
// so _restore_loop only ever writes back a function NumPy itself had registered.
struct SavedLoop {
    PyUFuncGenericFunction function;
    int type;
};
constexpr const char* saved_loop_name = "numfuse._core.SavedLoop";

PyUFuncObject* as_ufunc(const py::handle& object, const char* role) {
    if (!PyObject_TypeCheck(object.ptr(), &PyUFunc_Type)) {
        throw py::type_error(std::string(role) + " must be a numpy.ufunc, not " +
                             py::str(py::type::of(object).attr("__name__")).cast<std::string>());
    }
    return reinterpret_cast<PyUFuncObject*>(object.ptr());
}

std::string ufunc_name(const PyUFuncObject* ufunc) {
    return ufunc->name != nullptr ? ufunc->name : "<unnamed ufunc>";
}

int type_number(const std::string& type) {
    if (type == "f") return NPY_FLOAT;
    if (type == "d") return NPY_DOUBLE;
    throw py::value_error("only the float32 ('f') and float64 ('d') loops can be swapped, not '" +
                          type + "'");
}

// The loop of `ufunc` whose nargs operands all have type `type`, or nullptr.
PyUFuncGenericFunction find_loop(const PyUFuncObject* ufunc, int type) {
    for (int i = 0; i < ufunc->ntypes; ++i) {
        bool match = true;
        for (int j = 0; j < ufunc->nargs; ++j) {
            match = match && ufunc->types[i * ufunc->nargs + j] == type;
        }
        if (match) return ufunc->functions[i];
    }
    return nullptr;
}

std::string signature_text(const PyUFuncObject* ufunc, const std::string& type) {
    std::string text;
    for (int j = 0; j < ufunc->nin; ++j) text += type;
    text += "->";
    for (int j = 0; j < ufunc->nout; ++j) text += type;
    return text;
}

void replace(PyUFuncObject* target, PyUFuncGenericFunction function, int type,
             PyUFuncGenericFunction* previous, const std::string& what) {
    std::vector<int> signature(static_cast<std::size_t>(target->nargs), type);
    if (PyUFunc_ReplaceLoopBySignature(target, function, signature.data(), previous) != 0) {
        if (PyErr_Occurred()) throw py::error_already_set();
        throw std::runtime_error(what);
    }
}

py::capsule swap_loop(const py::handle& target_object, const py::handle& source_object,
                      const std::string& type) {
    PyUFuncObject* target = as_ufunc(target_object, "target");
    const PyUFuncObject* source = as_ufunc(source_object, "source");
    const int type_num = type_number(type);
    if (target->nin != source->nin || target->nout != source->nout) {
        throw py::value_error(ufunc_name(target) + " and numfuse." + ufunc_name(source) +
                              " take different numbers of arguments");
    }
    const PyUFuncGenericFunction ours = find_loop(source, type_num);
    if (ours == nullptr) {
        throw py::value_error("numfuse." + ufunc_name(source) + " has no " +
                              signature_text(source, type) + " loop");
    }
    if (find_loop(target, type_num) == nullptr) {
        throw std::runtime_error(ufunc_name(target) + " has no " + signature_text(target, type) +
                                 " loop to replace: this NumPy/SciPy is not one numfuse can patch");
    }
    auto* saved = new SavedLoop{nullptr, type_num};
    try {
        replace(target, ours, type_num, &saved->function,
                "PyUFunc_ReplaceLoopBySignature failed for " + ufunc_name(target));
    } catch (...) {
        delete saved;
        throw;
    }
    return py::capsule(saved, saved_loop_name,
                       [](void* pointer) { delete static_cast<SavedLoop*>(pointer); });
}

void restore_loop(const py::handle& target_object, const py::capsule& handle) {
    PyUFuncObject* target = as_ufunc(target_object, "target");
    if (std::string(handle.name() != nullptr ? handle.name() : "") != saved_loop_name) {
        throw py::type_error("not a handle returned by _swap_loop");
    }
    const auto* saved = handle.get_pointer<SavedLoop>();
    replace(target, saved->function, saved->type, nullptr,
            "PyUFunc_ReplaceLoopBySignature could not restore " + ufunc_name(target));
}

// The function currently in `ufunc`'s all-`type` loop equals `source`'s: True when the
// target runs numfuse's loop now.
bool runs_loop_of(const py::handle& target_object, const py::handle& source_object,
                  const std::string& type) {
    const PyUFuncObject* target = as_ufunc(target_object, "target");
    const PyUFuncObject* source = as_ufunc(source_object, "source");
    const int type_num = type_number(type);
    const PyUFuncGenericFunction ours = find_loop(source, type_num);
    return ours != nullptr && find_loop(target, type_num) == ours;
}

}  // namespace

void register_patch(py::module_& m) {
    if (_import_array() < 0) throw py::error_already_set();
    if (_import_umath() < 0) throw py::error_already_set();
    m.def("_swap_loop", &swap_loop, py::arg("target"), py::arg("source"), py::arg("type"),
          "Put source's all-`type` loop ('f' or 'd') into target (a numpy.ufunc with the same "
          "arity); returns a handle to the loop that was there, for _restore_loop.");
    m.def("_restore_loop", &restore_loop, py::arg("target"), py::arg("handle"),
          "Put back the loop a _swap_loop handle saved.");
    m.def("_runs_loop_of", &runs_loop_of, py::arg("target"), py::arg("source"), py::arg("type"),
          "True when target's all-`type` loop is source's.");
}

}  // namespace numfuse::python
