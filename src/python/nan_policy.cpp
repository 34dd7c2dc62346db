// See nan_policy.hpp for the contract.
#include "nan_policy.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace py = pybind11;

namespace numfuse::python {
namespace {

template <class T, class U>
bool is_nan_bits(U bits) noexcept {
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value != value;
}

// Two inputs outside the domain of a function: a finite one and an infinite one (the
// kernels make invalid NaNs on different paths for the two).
struct InvalidInputs {
    double finite;
    double infinite;
};

InvalidInputs invalid_inputs_of(const char* name) noexcept {
    const double inf = std::numeric_limits<double>::infinity();
    const std::string n = name;
    if (n == "log1p") return {-2.0, -inf};
    if (n == "sin" || n == "cos" || n == "tan") return {-inf, inf};
    if (n == "arcsin" || n == "arccos" || n == "arctanh") return {2.0, -inf};
    return {-1.0, -inf};  // log, log2, log10, arccosh
}

// The bits of f(finite) and f(infinite) when both are the same NaN; 0 (not a NaN) otherwise.
template <class T, class U, class F>
U invalid_result_bits(const InvalidInputs& invalid, F&& compute) {
    const T inputs[2] = {static_cast<T>(invalid.finite), static_cast<T>(invalid.infinite)};
    U out[2] = {0, 0};
    compute(inputs, out);
    if (out[0] != out[1] || !is_nan_bits<T>(out[0])) return 0;
    return out[0];
}

template <class T, class U>
void probe_dtype(core::UnaryOp op, core::DType dtype, const InvalidInputs& invalid,
                 const py::object& numpy_ufunc, const py::object& errstate) {
    // NumPy's answer on a SIMD-sized array (its vector loops run on long contiguous runs);
    // no policy unless the whole array holds one NaN.
    constexpr std::size_t n = 64;
    const U numpy_bits = invalid_result_bits<T, U>(invalid, [&](const T* inputs, U* out) {
        for (int k = 0; k < 2; ++k) {
            py::array_t<T> x(n);
            for (std::size_t i = 0; i < n; ++i) x.mutable_data()[i] = inputs[k];
            py::object ctx = errstate(py::arg("all") = "ignore");
            ctx.attr("__enter__")();
            py::array_t<T> y = numpy_ufunc(x);
            ctx.attr("__exit__")(py::none(), py::none(), py::none());
            if (y.size() != static_cast<py::ssize_t>(n)) return;
            std::memcpy(&out[k], y.data(), sizeof(T));
            for (std::size_t i = 1; i < n; ++i) {
                U other;
                std::memcpy(&other, y.data() + i, sizeof(T));
                if (other != out[k]) out[k] = 0;
            }
        }
    });
    const U kernel_bits = invalid_result_bits<T, U>(invalid, [&](const T* inputs, U* out) {
        T y[2];
        core::apply_unary(op, dtype, reinterpret_cast<const char*>(inputs), sizeof(T),
                          reinterpret_cast<char*>(y), sizeof(T), 2);
        std::memcpy(out, y, sizeof y);
    });
    if (numpy_bits == 0 || kernel_bits == 0 || numpy_bits == kernel_bits) return;
    core::set_invalid_nan_bits(op, dtype, numpy_bits);
}

}  // namespace

void probe_numpy_invalid_nan(core::UnaryOp op, const char* numpy_name) {
    const py::module_ numpy = py::module_::import("numpy");
    if (!py::hasattr(numpy, numpy_name)) return;
    const py::object ufunc = numpy.attr(numpy_name);
    const py::object errstate = numpy.attr("errstate");
    const InvalidInputs invalid = invalid_inputs_of(numpy_name);
    probe_dtype<float, std::uint32_t>(op, core::DType::f32, invalid, ufunc, errstate);
    probe_dtype<double, std::uint64_t>(op, core::DType::f64, invalid, ufunc, errstate);
}

}  // namespace numfuse::python
