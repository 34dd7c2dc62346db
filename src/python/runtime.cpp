// Runtime controls: threads and instruction-set levels.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
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
    // The module is normally imported on the main thread; platforms that
    // cannot identify the main thread otherwise use this record.
    parallel::mark_main_thread();
    m.def(
        "set_num_threads",
        [](std::optional<int> n) {
            if (!n) return parallel::use_automatic_thread_count();
            if (*n < 1 || *n > parallel::max_thread_count()) {
                throw py::value_error("set_num_threads: n must be from 1 to " +
                                      std::to_string(parallel::max_thread_count()) +
                                      " (numfuse.MAX_THREADS) or None, got " + std::to_string(*n));
            }
            return parallel::set_thread_count(*n);
        },
        py::arg("n"),
        "Set how many threads numfuse uses for large arrays; returns the previous count\n"
        "(of the calling thread, as get_num_threads() gave it). n is at most\n"
        "numfuse.MAX_THREADS (64, or the processor count where larger); more raise ValueError.\n\n"
        "set_num_threads(n) makes the count explicit: every call, from any thread, uses up to\n"
        "n threads. set_num_threads(None) restores the automatic rule, which is the default\n"
        "unless NUMFUSE_NUM_THREADS is set: calls made on the process's main thread use\n"
        "omp_get_max_threads() threads (OMP_NUM_THREADS, else the processor count); calls made\n"
        "on any other thread (dask workers, concurrent.futures pools, threading.Thread) use one\n"
        "thread, so a pool of k workers never runs k * processors threads. The automatic\n"
        "count follows omp_get_max_threads() of the calling thread, so threadpoolctl\n"
        "(threadpool_limits(k, user_api='openmp')) or omp_set_num_threads limits it; an\n"
        "explicit count is capped by such a limit when it was lowered after the count was\n"
        "set (a limit already in force, e.g. torch.set_num_threads on a shared libgomp, does\n"
        "not undo a later set_num_threads). A call made inside another library's OpenMP\n"
        "parallel region uses one thread.");
    m.def("get_num_threads", &parallel::thread_count,
          "Threads a large call made now from the calling thread would use (see set_num_threads).");
    m.def(
        "_num_threads_setting",
        []() -> std::optional<int> {
            const int n = parallel::explicit_thread_count();
            return n > 0 ? std::optional<int>(n) : std::nullopt;
        },
        "The explicit thread count, or None under the automatic rule.");
    m.def("_peak_team_size", &parallel::take_peak_team_size,
          "The most threads any parallel loop started by the calling thread ran on since the\n"
          "previous _peak_team_size() call (1: serial); resets the record.");
    m.def("_processor_count", &parallel::processor_count);
    m.def("_start_thread_count", &parallel::start_thread_count,
          "The thread count the process started with on its main thread (see\n"
          "numfuse.detect_number_of_threads).");
    m.def("_max_thread_count", &parallel::max_thread_count,
          "The most threads set_num_threads and NUMFUSE_NUM_THREADS accept.");
    m.def(
        "_num_threads_environment",
        []() -> std::optional<std::pair<std::string, bool>> {
            bool accepted = false;
            const char* text = parallel::thread_count_environment(&accepted);
            if (text == nullptr) return std::nullopt;
            return std::make_pair(std::string(text), accepted);
        },
        "NUMFUSE_NUM_THREADS as found at start-up and whether it was taken, or None.");
    m.def("_has_openmp", &parallel::has_openmp);
    m.def("_compiler", &compiler_description);
    // The _OPENMP macro this module was compiled with (yyyymm of the OpenMP
    // spec the compiler implements, e.g. 201511 = 4.5), 0 without OpenMP.
    m.def("_openmp_version", [] {
#ifdef _OPENMP
        return static_cast<long>(_OPENMP);
#else
        return 0L;
#endif
    });
    m.def(
        "compiled_levels",
        [] {
            std::vector<core::Level> levels;
            for (int i = 0; i < core::level_count; ++i) {
                if (core::level_compiled(static_cast<core::Level>(i)))
                    levels.push_back(static_cast<core::Level>(i));
            }
            return level_names(levels);
        },
        "Instruction-set levels compiled into this build, lowest first.");
    m.def("_cpu_features", &core::cpu_features,
          "The running CPU's SIMD features that bear on the levels (x86-64: sse2 ... avx512bw;\n"
          "aarch64: asimd, and fp16, sve, sve2 where present).");
    m.def(
        "usable_levels", [] { return level_names(core::usable_levels()); },
        "Compiled levels this CPU can run, lowest first.");
    m.def(
        "get_level", [] { return std::string(core::level_name(core::active_level())); },
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
        "Use an instruction-set level (x86-64: 'sse2', 'avx2' or 'avx512'; aarch64: 'neon64'; "
        "must be usable); returns the previous one.");
}

}  // namespace numfuse::python
