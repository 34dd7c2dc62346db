// numfuse.jit's scan of a function's bytecode for the globals it loads
// (python/numfuse/_jit/_guards.py, _global_loads).
//
// numfuse._core._jit_global_loads(raw, names, load_global, attribute_loads, cache,
// extended_arg, global_shift, attribute_shift) -> [[name, [attribute]], ...]: for every
// LOAD_GLOBAL of `raw` (a code object's co_code: two-byte units, opcode then argument), the
// global's name, and the name of the LOAD_ATTR / LOAD_METHOD (opcodes listed in the bytes
// `attribute_loads`) that is the next instruction after it, past its inline caches
// (opcode `cache`, -1 where there are none) and EXTENDED_ARG prefixes. An argument is the
// units' argument bytes, the EXTENDED_ARG prefixes before an instruction giving its higher
// bytes; a name is names[argument >> shift] (the shifts and opcodes are the running
// Python's, given by the caller from dis: this file knows no version's numbering).
//
// Why in C++: a Python loop over the instruction units, run once per jitted function and
// mostly before the interpreter has specialized it, cost a 20-operation function's first
// call ~0.12M instructions (AMD EPYC Zen 3); tests/test_jit_dispatch.py compares this scan
// with dis on several hundred functions.
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "bindings.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

py::object name_at(const py::tuple& names, std::size_t index) {
    if (index >= names.size())
        throw py::index_error("_jit_global_loads: a name index past co_names");
    return names[index];
}

py::list global_loads(const py::bytes& raw, const py::tuple& names, int load_global,
                      const py::bytes& attribute_loads, int cache, int extended_arg,
                      int global_shift, int attribute_shift) {
    char* data = nullptr;
    Py_ssize_t length = 0;
    if (PyBytes_AsStringAndSize(raw.ptr(), &data, &length) != 0) throw py::error_already_set();
    const std::string attribute_ops = attribute_loads;
    const auto* units = reinterpret_cast<const unsigned char*>(data);
    const std::size_t count = static_cast<std::size_t>(length) / 2;
    const auto op = [&](std::size_t k) { return static_cast<int>(units[2 * k]); };
    const auto arg = [&](std::size_t k) { return static_cast<std::size_t>(units[2 * k + 1]); };
    const auto is_attribute_load = [&](int code) {
        return attribute_ops.find(static_cast<char>(code)) != std::string::npos;
    };
    py::list loads;
    for (std::size_t i = 0; i < count; ++i) {
        if (op(i) != load_global) continue;
        std::size_t argument = arg(i);
        int shift = 8;
        for (std::size_t k = i; k > 0 && op(k - 1) == extended_arg; --k, shift += 8)
            argument |= arg(k - 1) << shift;
        py::list attributes;
        std::size_t j = i + 1;
        while (j < count && op(j) == cache) ++j;
        std::size_t extended = 0;
        while (j < count && op(j) == extended_arg) extended = (extended | arg(j++)) << 8;
        if (j < count && is_attribute_load(op(j)))
            attributes.append(name_at(names, (arg(j) | extended) >> attribute_shift));
        py::list load;
        load.append(name_at(names, argument >> global_shift));
        load.append(std::move(attributes));
        loads.append(std::move(load));
    }
    return loads;
}

}  // namespace

void register_jit_guards(py::module_& m) {
    m.def("_jit_global_loads", &global_loads, py::arg("raw"), py::arg("names"),
          py::arg("load_global"), py::arg("attribute_loads"), py::arg("cache"),
          py::arg("extended_arg"), py::arg("global_shift"), py::arg("attribute_shift"),
          "[[name, [attribute]], ...] for every LOAD_GLOBAL of the bytecode `raw` with the "
          "attribute loaded right after it (numfuse.jit's guards: src/python/jit_guards.cpp).");
}

}  // namespace numfuse::python
