// Runtime controls: threads and instruction-set levels.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "numfuse_core.hpp"
#include "parallel.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

std::vector<std::string> level_names(const std::vector<core::Level>& levels) {
    std::vector<std::string> names;
    for (const auto level : levels) names.emplace_back(core::level_name(level));
    return names;
}

std::string compiler_description() {
#if defined(__clang__)
    return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    return "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
           std::to_string(__GNUC_PATCHLEVEL__);
#else
    return "unknown";
#endif
}

}  // namespace

void register_runtime(py::module_& m) {
    m.def(
        "set_num_threads",
        [](int n) {
            if (n < 1) throw py::value_error("set_num_threads: n must be >= 1, got " + std::to_string(n));
            return parallel::set_thread_count(n);
        },
        py::arg("n"),
        "Set the number of threads numfuse uses; returns the previous setting.");
    m.def("get_num_threads", &parallel::thread_count,
          "The number of threads numfuse uses for large arrays.");
    m.def("_processor_count", &parallel::processor_count);
    m.def("_has_openmp", &parallel::has_openmp);
    m.def("_compiler", &compiler_description);
    m.def("compiled_levels", [] {
        std::vector<core::Level> levels;
        for (int i = 0; i < core::level_count; ++i) {
            if (core::level_compiled(static_cast<core::Level>(i))) levels.push_back(static_cast<core::Level>(i));
        }
        return level_names(levels);
    }, "Instruction-set levels compiled into this build, lowest first.");
    m.def("usable_levels", [] { return level_names(core::usable_levels()); },
          "Compiled levels this CPU can run, lowest first.");
    m.def("get_level", [] { return std::string(core::level_name(core::active_level())); },
          "The instruction-set level in use.");
    m.def(
        "set_level",
        [](const std::string& name) {
            const auto previous = std::string(core::level_name(core::active_level()));
            try {
                core::set_active_level(core::parse_level(name));
            } catch (const std::invalid_argument& error) {
                throw py::value_error(error.what());
            }
            return previous;
        },
        py::arg("name"),
        "Use instruction-set level 'sse2', 'avx2' or 'avx512' (must be usable); returns the previous one.");
}

}  // namespace numfuse::python
