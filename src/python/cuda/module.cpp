// numfuse._cuda: the optional GPU extension (built only where CMake finds nvcc).
//
// The bindings half of it: it lives with the other bindings in src/python (the only code
// that includes pybind11), while the kernels, the device programs and the NVRTC compiler
// it drives stay in src/cuda, which knows nothing of Python.
//
// Thin: raw device pointers, sizes and streams in, kernel launches out. The
// Python layer (python/numfuse/cuda/_arrays.py, _api.py) reads __cuda_array_interface__ /
// DLPack, checks dtypes and shapes, allocates results and picks the stream.
//
// The CUDA runtime is linked statically (cudart_static): the module imports on a
// machine without an NVIDIA driver, and every call then reports "no device"
// (cudaGetDeviceCount fails cleanly) instead of failing to load.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

// The CPU module's ExprError -> Python exception mapping (src/python, shared by both).
#include "../expr_error.hpp"
#include "device_math/device_math.hpp"
#include "jit.hpp"
#include "launch.hpp"
#include "program.hpp"
#include "reduce_host.hpp"

namespace py = pybind11;

namespace numfuse::python {

// numfuse._core's numfuse.ExpressionError (expr_error.hpp): one class for CPU and GPU errors.
// Looked up on each (error) call, not cached: the class lives as long as numfuse._core, which
// holds it, and no static needs the GIL to initialise.
PyObject* expression_error_type() {
    return py::module_::import("numfuse._core").attr("ExpressionError").ptr();
}

// numfuse._core's numfuse.UnsupportedOperationError, looked up as ExpressionError is.
PyObject* unsupported_operation_error_type() {
    return py::module_::import("numfuse._core").attr("UnsupportedOperationError").ptr();
}

}  // namespace numfuse::python

namespace numfuse::cuda {
namespace {

[[noreturn]] void raise_cuda(int code, const std::string& what) {
    const auto err = static_cast<cudaError_t>(code);
    cudaGetLastError();  // clear a sticky-free error so the next call starts clean
    throw std::runtime_error("numfuse.cuda: " + what + " failed: " + cudaGetErrorName(err) + " (" +
                             cudaGetErrorString(err) + ")");
}

void check(int code, const std::string& what) {
    if (code != 0) raise_cuda(code, what);
}

int device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;  // no driver, no device, or a driver too old: the CPU package still works
    }
    return n;
}

std::string device_count_error() {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    cudaGetLastError();
    if (err == cudaSuccess) return "";
    return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

py::dict device_info(int device) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device),
          "cudaGetDeviceProperties(" + std::to_string(device) + ")");
    py::dict d;
    d["index"] = device;
    d["name"] = std::string(prop.name);
    d["compute_capability"] = py::make_tuple(prop.major, prop.minor);
    d["total_memory"] = static_cast<std::uint64_t>(prop.totalGlobalMem);
    d["multiprocessors"] = prop.multiProcessorCount;
    return d;
}

// The device that owns a pointer; raises ValueError for host memory.
int pointer_device(std::uintptr_t ptr) {
    cudaPointerAttributes attr{};
    const cudaError_t err = cudaPointerGetAttributes(&attr, reinterpret_cast<const void*>(ptr));
    if (err != cudaSuccess) raise_cuda(static_cast<int>(err), "cudaPointerGetAttributes");
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) {
        throw py::value_error("numfuse.cuda: the array's data pointer is not GPU memory");
    }
    return attr.device;
}

void set_device(int device) {
    check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
}

// Makes `device` current for one call and restores the caller's current device
// afterwards (torch and CuPy keep their own notion of it; we must not move it).
class DeviceGuard {
public:
    explicit DeviceGuard(int device) {
        if (cudaGetDevice(&previous_) != cudaSuccess) {
            cudaGetLastError();
            previous_ = -1;
        }
        if (previous_ != device) set_device(device);
    }
    ~DeviceGuard() {
        int now = -1;
        if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_)
            cudaSetDevice(previous_);
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = -1;
};

Real real_of(const std::string& dtype) {
    if (dtype == "float32") return Real::f32;
    if (dtype == "float64") return Real::f64;
    throw py::type_error("numfuse.cuda: unsupported dtype " + dtype +
                         " (float32 or float64 expected)");
}

UnaryOp unary_of(const std::string& name) {
#define NUMFUSE_CUDA_UNARY_NAME(fn) \
    if (name == #fn) return UnaryOp::fn;
    NUMFUSE_GPU_UNARY_OPS(NUMFUSE_CUDA_UNARY_NAME)
#undef NUMFUSE_CUDA_UNARY_NAME
    throw py::value_error("numfuse.cuda: unknown function " + name);
}

Normalize normalize_of(const std::string& name) {
    if (name == "logsumexp") return Normalize::none;
    if (name == "softmax") return Normalize::softmax;
    if (name == "log_softmax") return Normalize::log_softmax;
    throw py::value_error("numfuse.cuda: unknown reduction " + name);
}

// Device memory owned by Python (numfuse.cuda.DeviceArray holds one).
class DeviceBuffer {
public:
    DeviceBuffer(std::size_t nbytes, int device) : nbytes_(nbytes), device_(device) {
        const DeviceGuard guard(device);
        if (nbytes > 0)
            check(cudaMalloc(&ptr_, nbytes), "cudaMalloc(" + std::to_string(nbytes) + " bytes)");
    }
    ~DeviceBuffer() {
        if (ptr_ != nullptr) {
            int current = 0;
            cudaGetDevice(&current);
            cudaSetDevice(device_);
            cudaFree(ptr_);
            cudaSetDevice(current);
        }
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    std::uintptr_t ptr() const { return reinterpret_cast<std::uintptr_t>(ptr_); }
    std::size_t nbytes() const { return nbytes_; }
    int device() const { return device_; }

    // Synchronous copies (the stream-ordered work before them is finished first).
    void copy_from_host(const py::buffer& src) {
        const py::buffer_info info = src.request();
        const auto bytes = static_cast<std::size_t>(info.size * info.itemsize);
        if (bytes != nbytes_)
            throw py::value_error(
                "numfuse.cuda: host buffer size does not match the device buffer");
        const DeviceGuard guard(device_);
        py::gil_scoped_release release;  // the copy touches no Python object
        check(cudaMemcpy(ptr_, info.ptr, bytes, cudaMemcpyHostToDevice), "cudaMemcpy host->device");
    }
    void copy_to_host(const py::buffer& dst) const {
        const py::buffer_info info = dst.request(true);
        const auto bytes = static_cast<std::size_t>(info.size * info.itemsize);
        if (bytes != nbytes_)
            throw py::value_error(
                "numfuse.cuda: host buffer size does not match the device buffer");
        const DeviceGuard guard(device_);
        py::gil_scoped_release release;
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        check(cudaMemcpy(info.ptr, ptr_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device->host");
    }

private:
    void* ptr_ = nullptr;
    std::size_t nbytes_ = 0;
    int device_ = 0;
};

// The device math on the CPU (the exact source the GPU runs): for tests against
// mpmath from Python.
template <class T>
py::array_t<T> host_math_typed(UnaryOp op,
                               const py::array_t<T, py::array::c_style | py::array::forcecast>& x) {
    py::array_t<T> y(x.request().shape);
    const T* xs = x.data();
    T* ys = y.mutable_data();
    const auto n = static_cast<std::size_t>(x.size());
    for (std::size_t i = 0; i < n; ++i) {
        switch (op) {
#define NUMFUSE_CUDA_HOST_CASE(name) \
    case UnaryOp::name: ys[i] = device_math::name##_scalar(xs[i]); break;
            NUMFUSE_GPU_UNARY_OPS(NUMFUSE_CUDA_HOST_CASE)
#undef NUMFUSE_CUDA_HOST_CASE
            default: ys[i] = xs[i]; break;  // unary_of admits only the cases above
        }
    }
    return y;
}

// ---------------------------------------------------------------- evaluate

expr::Type expr_type_of(const std::string& letter) {
    static const std::string letters = "bilfdcz";
    const auto k = letters.find(letter);
    if (letter.size() != 1 || k == std::string::npos)
        throw py::value_error("numfuse.cuda: bad type letter " + letter);
    return static_cast<expr::Type>(k);
}

std::shared_ptr<const expr::Plan> plan_for(const std::string& text,
                                           const std::vector<std::string>& names,
                                           const std::vector<std::string>& types,
                                           const std::vector<bool>& weak) {
    if (names.size() != types.size() || names.size() != weak.size()) {
        throw py::value_error("numfuse.cuda: names, types and weak flags differ in length");
    }
    std::vector<expr::InputSpec> specs;
    for (std::size_t k = 0; k < names.size(); ++k) {
        expr::InputSpec spec;
        spec.name = names[k];
        spec.type = expr_type_of(types[k]);
        spec.weak = weak[k];
        specs.push_back(spec);
    }
    try {
        auto plan = expr::cached_plan(text, specs);
        vm::check_plan(*plan);
        return plan;
    } catch (const expr::ExprError& error) {
        python::raise_expr_error(error, text, "numfuse.cuda.evaluate");
    } catch (const vm::Unsupported& error) {
        PyErr_SetString(PyExc_NotImplementedError, error.what());
        throw py::error_already_set();
    }
}

// The device program of an expression with every input an array (dummy pointers):
// what the run-time compiler sees, for jit_source and jit_compile_check.
vm::Program placeholder_program(const std::string& text, const std::vector<std::string>& names,
                                const std::vector<std::string>& types,
                                const std::vector<bool>& weak) {
    const auto plan = plan_for(text, names, types, weak);
    const std::vector<std::uintptr_t> arrays(names.size(), 1);
    const std::vector<std::uint64_t> bits(names.size(), 0);
    return vm::build_program(*plan, arrays, bits);
}

}  // namespace
}  // namespace numfuse::cuda

PYBIND11_MODULE(_cuda, m) {
    using namespace numfuse::cuda;
    m.doc() = "numfuse's optional CUDA kernels (raw-pointer API; use numfuse.cuda)";

    m.def("device_count", &device_count,
          "Number of usable CUDA devices (0 without a driver or a GPU).");
    m.def("device_count_error", &device_count_error,
          "Why device_count() is 0 ('' when it is not).");
    m.def("device_info", &device_info, py::arg("device"));
    m.def("pointer_device", &pointer_device, py::arg("ptr"));
    m.def("runtime_version", [] {
        int v = 0;
        cudaRuntimeGetVersion(&v);
        return v;
    });
    m.def("driver_version", [] {
        int v = 0;
        if (cudaDriverGetVersion(&v) != cudaSuccess) v = 0;
        return v;
    });
    m.def(
        "architectures", [] { return std::string(NUMFUSE_CUDA_ARCHITECTURES); },
        "The CMAKE_CUDA_ARCHITECTURES this module was compiled for.");

    m.def(
        "unary",
        [](const std::string& fn, const std::string& dtype, std::uintptr_t x, std::uintptr_t y,
           std::int64_t n, std::uintptr_t stream, int device) {
            const UnaryOp op = unary_of(fn);
            const Real dt = real_of(dtype);
            const DeviceGuard guard(device);
            check(launch_unary(op, dt, reinterpret_cast<const void*>(x), reinterpret_cast<void*>(y),
                               n, stream),
                  fn + " kernel launch");
        },
        py::arg("fn"), py::arg("dtype"), py::arg("x"), py::arg("y"), py::arg("n"),
        py::arg("stream"), py::arg("device"));

    m.def(
        "reduce",
        [](const std::string& fn, const std::string& dtype, std::uintptr_t x, std::uintptr_t out,
           std::int64_t outer, std::int64_t n, std::int64_t inner, std::uintptr_t stream,
           int device) {
            const Normalize norm = normalize_of(fn);
            const Real dt = real_of(dtype);
            if (outer < 0 || n < 0 || inner < 0)
                throw py::value_error("numfuse.cuda: negative extent");
            const DeviceGuard guard(device);
            check(launch_logsumexp(norm, dt, reinterpret_cast<const void*>(x),
                                   reinterpret_cast<void*>(out), outer, n, inner, stream),
                  fn + " kernel launch");
        },
        py::arg("fn"), py::arg("dtype"), py::arg("x"), py::arg("out"), py::arg("outer"),
        py::arg("n"), py::arg("inner"), py::arg("stream"), py::arg("device"));

    m.def(
        "reduce_host",
        [](const std::string& fn, const std::string& dtype, std::uintptr_t x, std::uintptr_t out,
           std::int64_t outer, std::int64_t n, std::int64_t inner) {
            const Normalize norm = normalize_of(fn);
            const Real dt = real_of(dtype);
            if (outer < 0 || n < 0 || inner < 0)
                throw py::value_error("numfuse.cuda: negative extent");
            py::gil_scoped_release release;  // host memory owned by the caller's NumPy arrays
            logsumexp_host(norm, dt, reinterpret_cast<const void*>(x), reinterpret_cast<void*>(out),
                           outer, n, inner);
        },
        py::arg("fn"), py::arg("dtype"), py::arg("x"), py::arg("out"), py::arg("outer"),
        py::arg("n"), py::arg("inner"),
        "The GPU reduction in its exact order of operations, run on the CPU (for tests).");

    m.def(
        "stream_synchronize",
        [](std::uintptr_t stream, int device) {
            const DeviceGuard guard(device);
            py::gil_scoped_release release;
            check(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)),
                  "cudaStreamSynchronize");
        },
        py::arg("stream"), py::arg("device"));

    m.def(
        "device_synchronize",
        [](int device) {
            const DeviceGuard guard(device);
            py::gil_scoped_release release;
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        },
        py::arg("device"));

    m.def(
        "copy_device",
        [](std::uintptr_t dst, std::uintptr_t src, std::size_t nbytes, std::uintptr_t stream,
           int device) {
            const DeviceGuard guard(device);
            check(cudaMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src),
                                  nbytes, cudaMemcpyDeviceToDevice,
                                  reinterpret_cast<cudaStream_t>(stream)),
                  "cudaMemcpyAsync device->device");
        },
        py::arg("dst"), py::arg("src"), py::arg("nbytes"), py::arg("stream"), py::arg("device"),
        "Device-to-device copy (benchmarks use it to measure the copy bandwidth).");

    m.def(
        "host_math",
        [](const std::string& fn, const py::array& x) -> py::array {
            const UnaryOp op = unary_of(fn);
            if (x.dtype().is(py::dtype::of<float>())) return host_math_typed<float>(op, x);
            if (x.dtype().is(py::dtype::of<double>())) return host_math_typed<double>(op, x);
            throw py::type_error("numfuse.cuda.host_math: float32 or float64 expected");
        },
        py::arg("fn"), py::arg("x"),
        "The device kernels' scalar math run on the CPU (same source as the GPU code).");

    m.def(
        "evaluate_result_type",
        [](const std::string& text, const std::vector<std::string>& names,
           const std::vector<std::string>& types, const std::vector<bool>& weak) {
            const auto plan = plan_for(text, names, types, weak);
            return std::string(1, numfuse::expr::type_letter(plan->result_type));
        },
        py::arg("ex"), py::arg("names"), py::arg("types"), py::arg("weak"),
        "Compiles (cached) and checks that the GPU interpreter runs it; returns the result type "
        "letter.");

    m.def(
        "evaluate",
        [](const std::string& text, const std::vector<std::string>& names,
           const std::vector<std::string>& types, const std::vector<bool>& weak,
           const std::vector<std::uintptr_t>& arrays, const std::vector<std::uint64_t>& scalar_bits,
           std::uintptr_t out, std::int64_t n, std::uintptr_t stream, int device,
           const std::string& engine) -> std::string {
            const auto plan = plan_for(text, names, types, weak);
            if (arrays.size() != names.size() || scalar_bits.size() != names.size()) {
                throw py::value_error(
                    "numfuse.cuda: one array pointer and one scalar per input expected");
            }
            if (engine != "auto" && engine != "compiled" && engine != "interpreter") {
                throw py::value_error(
                    "numfuse.cuda.evaluate: engine must be 'auto', 'compiled' or 'interpreter'");
            }
            const vm::Program program = vm::build_program(*plan, arrays, scalar_bits);
            const DeviceGuard guard(device);
            if (engine != "interpreter") {
                int error = 0;
                bool ran = false;
                {
                    py::gil_scoped_release release;  // a first call compiles (NVRTC, ~0.1-1 s)
                    ran = jit::launch(program, reinterpret_cast<void*>(out), n, stream, &error);
                }
                if (ran) {
                    check(error, "evaluate kernel launch (compiled)");
                    return "compiled";
                }
                if (engine == "compiled") {
                    const jit::Status st = jit::status();
                    throw std::runtime_error(
                        "numfuse.cuda.evaluate: the program could not be compiled: " +
                        (st.loaded ? st.last_error : st.load_error));
                }
            }
            check(vm::launch_program(program, reinterpret_cast<void*>(out), n, stream),
                  "evaluate kernel launch");
            return "interpreter";
        },
        py::arg("ex"), py::arg("names"), py::arg("types"), py::arg("weak"), py::arg("arrays"),
        py::arg("scalar_bits"), py::arg("out"), py::arg("n"), py::arg("stream"), py::arg("device"),
        py::arg("engine") = "auto",
        "Runs the program on the device; returns which engine ran it ('compiled' or "
        "'interpreter').");

    m.def(
        "jit_source",
        [](const std::string& text, const std::vector<std::string>& names,
           const std::vector<std::string>& types, const std::vector<bool>& weak) {
            return jit::source_for(placeholder_program(text, names, types, weak));
        },
        py::arg("ex"), py::arg("names"), py::arg("types"), py::arg("weak"),
        "The CUDA C++ source that the run-time compiler gets for this expression (all inputs "
        "arrays).");

    m.def(
        "jit_compile_check",
        [](const std::string& text, const std::vector<std::string>& names,
           const std::vector<std::string>& types, const std::vector<bool>& weak, int arch,
           bool cubin) {
            const vm::Program program = placeholder_program(text, names, types, weak);
            std::string error;
            std::size_t size = 0;
            {
                py::gil_scoped_release release;
                size = jit::compile_check(program, arch, cubin, &error);
            }
            return py::make_tuple(size, error);
        },
        py::arg("ex"), py::arg("names"), py::arg("types"), py::arg("weak"), py::arg("arch"),
        py::arg("cubin") = true,
        "Compiles the expression's kernel with NVRTC for compute capability `arch` without a GPU: "
        "(image size, error).");

    m.def("set_nvrtc_candidates", &jit::set_nvrtc_candidates, py::arg("paths"),
          "NVRTC libraries to try (before libnvrtc.so.13/.12) when the first program is compiled.");

    m.def(
        "jit_status",
        [] {
            const jit::Status st = jit::status();
            py::dict d;
            d["enabled"] = st.enabled;
            d["loaded"] = st.loaded;
            d["library"] = st.library;
            d["nvrtc_version"] = py::make_tuple(st.version_major, st.version_minor);
            d["load_error"] = st.load_error;
            d["kernels"] = st.kernels;
            d["failures"] = st.failures;
            d["last_error"] = st.last_error;
            d["compile_seconds"] = st.compile_seconds;
            return d;
        },
        "The run-time compiler of evaluate programs: whether NVRTC is loaded, cache size, errors.");

    m.def(
        "evaluate_host",
        [](const std::string& text, const std::vector<std::string>& names,
           const std::vector<std::string>& types, const std::vector<bool>& weak,
           const std::vector<std::uintptr_t>& arrays, const std::vector<std::uint64_t>& scalar_bits,
           std::uintptr_t out, std::int64_t n) {
            const auto plan = plan_for(text, names, types, weak);
            if (arrays.size() != names.size() || scalar_bits.size() != names.size()) {
                throw py::value_error(
                    "numfuse.cuda: one array pointer and one scalar per input expected");
            }
            const vm::Program program = vm::build_program(*plan, arrays, scalar_bits);
            py::gil_scoped_release release;  // host memory owned by the caller's NumPy arrays
            vm::run_program_host(program, reinterpret_cast<void*>(out), n);
        },
        py::arg("ex"), py::arg("names"), py::arg("types"), py::arg("weak"), py::arg("arrays"),
        py::arg("scalar_bits"), py::arg("out"), py::arg("n"),
        "The GPU interpreter's per-element code run on the CPU over host pointers (for tests).");

    py::class_<DeviceBuffer>(m, "DeviceBuffer", "cudaMalloc'd memory, freed when the object dies.")
        .def(py::init<std::size_t, int>(), py::arg("nbytes"), py::arg("device"))
        .def_property_readonly("ptr", &DeviceBuffer::ptr)
        .def_property_readonly("nbytes", &DeviceBuffer::nbytes)
        .def_property_readonly("device", &DeviceBuffer::device)
        .def("copy_from_host", &DeviceBuffer::copy_from_host, py::arg("src"))
        .def("copy_to_host", &DeviceBuffer::copy_to_host, py::arg("dst"));
}
