// See nan_policy.hpp for the contract.
#include "nan_policy.hpp"

#include <pybind11/numpy.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace numfuse::python {
namespace {

// One entry per (ufunc, dtype f32/f64). Written once per ufunc at module
// initialisation, before any loop can run; read-only afterwards.
struct InvalidNan {
    bool active = false;       // NumPy's NaN differs from the one the kernels write
    std::uint64_t kernel = 0;  // bits the kernels write for an invalid lane
    std::uint64_t numpy = 0;   // bits NumPy returns there
};

InvalidNan invalid_nans[core::unary_op_count][2];

InvalidNan* entry(core::UnaryOp op, core::DType dtype) noexcept {
    const int d = dtype == core::DType::f32 ? 0 : dtype == core::DType::f64 ? 1 : -1;
    if (d < 0) return nullptr;
    return &invalid_nans[static_cast<int>(op)][d];
}

template <class T, class U>
bool is_nan_bits(U bits) noexcept {
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value != value;
}

// The bits of f(-1) and f(-inf) when both are the same NaN; 0 (not a NaN) otherwise.
template <class T, class U, class F>
U invalid_result_bits(F&& compute) {
    const T inputs[2] = {T(-1), -std::numeric_limits<T>::infinity()};
    U out[2] = {0, 0};
    compute(inputs, out);
    if (out[0] != out[1] || !is_nan_bits<T>(out[0])) return 0;
    return out[0];
}

template <class T, class U>
void probe_dtype(core::UnaryOp op, core::DType dtype, const py::object& numpy_ufunc,
                 const py::object& errstate) {
    // NumPy's answer from a SIMD-sized array (its vector loops run on long contiguous runs).
    constexpr std::size_t n = 64;
    const U numpy_bits = invalid_result_bits<T, U>([&](const T* inputs, U* out) {
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
                if (other != out[k]) out[k] = 0;  // not one NaN across the array: no policy
            }
        }
    });
    const U kernel_bits = invalid_result_bits<T, U>([&](const T* inputs, U* out) {
        T y[2];
        core::apply_unary(op, dtype, reinterpret_cast<const char*>(inputs), sizeof(T),
                          reinterpret_cast<char*>(y), sizeof(T), 2);
        std::memcpy(out, y, sizeof y);
    });
    InvalidNan* e = entry(op, dtype);
    if (e == nullptr || numpy_bits == 0 || kernel_bits == 0 || numpy_bits == kernel_bits) return;
    e->kernel = kernel_bits;
    e->numpy = numpy_bits;
    e->active = true;
}

// out[i] = NumPy's NaN where out[i] is a NaN and in[i] is not.
template <class T, class U>
void rewrite_from_input(const char* in, std::ptrdiff_t in_stride, char* out,
                        std::ptrdiff_t out_stride, std::size_t n, U numpy_bits) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        T x, y;
        std::memcpy(&x, in + k * in_stride, sizeof x);
        std::memcpy(&y, out + k * out_stride, sizeof y);
        if (y != y && x == x) std::memcpy(out + k * out_stride, &numpy_bits, sizeof(T));
    }
}

template <class U>
bool contains_bits(const char* p, std::ptrdiff_t stride, std::size_t n, U bits) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        U v;
        std::memcpy(&v, p + static_cast<std::ptrdiff_t>(i) * stride, sizeof v);
        if (v == bits) return true;
    }
    return false;
}

template <class U>
void replace_bits(char* p, std::ptrdiff_t stride, std::size_t n, U from, U to) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        char* q = p + static_cast<std::ptrdiff_t>(i) * stride;
        U v;
        std::memcpy(&v, q, sizeof v);
        if (v == from) std::memcpy(q, &to, sizeof to);
    }
}

bool overlaps(const char* a, std::ptrdiff_t a_stride, const char* b, std::ptrdiff_t b_stride,
              std::size_t n, std::size_t item) noexcept {
    if (n == 0) return false;
    const auto span = [&](const char* p, std::ptrdiff_t s) {
        const std::ptrdiff_t last = static_cast<std::ptrdiff_t>(n - 1) * s;
        const char* lo = s < 0 ? p + last : p;
        const char* hi = (s < 0 ? p : p + last) + item;
        return std::pair<const char*, const char*>(lo, hi);
    };
    const auto [a_lo, a_hi] = span(a, a_stride);
    const auto [b_lo, b_hi] = span(b, b_stride);
    return a_lo < b_hi && b_lo < a_hi;
}

template <class T, class U>
unsigned run_typed(core::UnaryOp op, core::DType dtype, const InvalidNan& policy, const char* in,
                   std::ptrdiff_t in_stride, char* out, std::ptrdiff_t out_stride, std::size_t n) {
    const U numpy_bits = static_cast<U>(policy.numpy);
    const U kernel_bits = static_cast<U>(policy.kernel);
    if (!overlaps(in, in_stride, out, out_stride, n, sizeof(T))) {
        const unsigned flags = core::apply_unary(op, dtype, in, in_stride, out, out_stride, n);
        if (flags & core::fp_invalid) {
            rewrite_from_input<T, U>(in, in_stride, out, out_stride, n, numpy_bits);
        }
        return flags;
    }
    // In place (NumPy hands its loops identical or disjoint operands): the inputs are
    // gone after the kernel ran. Unless an input is itself the kernels' invalid NaN, an
    // output with those bits can only come from an invalid lane.
    if (!contains_bits<U>(in, in_stride, n, kernel_bits)) {
        const unsigned flags = core::apply_unary(op, dtype, in, in_stride, out, out_stride, n);
        if (flags & core::fp_invalid) replace_bits<U>(out, out_stride, n, kernel_bits, numpy_bits);
        return flags;
    }
    // Rare: such an input is present; keep a copy of each chunk of inputs.
    constexpr std::size_t chunk = std::size_t{1} << 16;
    std::vector<T> saved(n < chunk ? n : chunk);
    unsigned flags = core::fp_none;
    for (std::size_t start = 0; start < n; start += chunk) {
        const std::size_t m = n - start < chunk ? n - start : chunk;
        const char* src = in + static_cast<std::ptrdiff_t>(start) * in_stride;
        char* dst = out + static_cast<std::ptrdiff_t>(start) * out_stride;
        for (std::size_t i = 0; i < m; ++i) {
            std::memcpy(&saved[i], src + static_cast<std::ptrdiff_t>(i) * in_stride, sizeof(T));
        }
        const char* copy = reinterpret_cast<const char*>(saved.data());
        const unsigned part = core::apply_unary(op, dtype, copy, sizeof(T), dst, out_stride, m);
        if (part & core::fp_invalid) {
            rewrite_from_input<T, U>(copy, sizeof(T), dst, out_stride, m, numpy_bits);
        }
        flags |= part;
    }
    return flags;
}

}  // namespace

void probe_numpy_invalid_nan(core::UnaryOp op, const char* numpy_name) {
    const py::module_ numpy = py::module_::import("numpy");
    if (!py::hasattr(numpy, numpy_name)) return;
    const py::object ufunc = numpy.attr(numpy_name);
    const py::object errstate = numpy.attr("errstate");
    probe_dtype<float, std::uint32_t>(op, core::DType::f32, ufunc, errstate);
    probe_dtype<double, std::uint64_t>(op, core::DType::f64, ufunc, errstate);
}

unsigned apply_unary_as_numpy(core::UnaryOp op, core::DType dtype, const char* in,
                              std::ptrdiff_t in_stride, char* out, std::ptrdiff_t out_stride,
                              std::size_t n) {
    const InvalidNan* policy = entry(op, dtype);
    if (policy == nullptr || !policy->active) {
        return core::apply_unary(op, dtype, in, in_stride, out, out_stride, n);
    }
    if (dtype == core::DType::f32) {
        return run_typed<float, std::uint32_t>(op, dtype, *policy, in, in_stride, out, out_stride,
                                               n);
    }
    return run_typed<double, std::uint64_t>(op, dtype, *policy, in, in_stride, out, out_stride, n);
}

}  // namespace numfuse::python
