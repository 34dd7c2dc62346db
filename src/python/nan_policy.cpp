// See nan_policy.hpp for the contract.
#include "nan_policy.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <limits>

namespace py = pybind11;

namespace numfuse::python {
namespace {

template <class T, class U>
bool is_nan_bits(U bits) noexcept {
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value != value;
}

// Whether NumPy's ufunc, called on the arrays, reports the condition (errstate's name:
// "under", "divide").
template <class... Arrays>
bool numpy_raises(const py::object& numpy_ufunc, const py::object& errstate, const char* condition,
                  const Arrays&... arrays) {
    py::dict kwargs;
    kwargs["all"] = "ignore";
    kwargs[condition] = "raise";
    py::object ctx = errstate(**kwargs);
    ctx.attr("__enter__")();
    bool raised = false;
    try {
        numpy_ufunc(arrays...);
    } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_FloatingPointError)) {
            ctx.attr("__exit__")(py::none(), py::none(), py::none());
            throw;
        }
        raised = true;
    }
    ctx.attr("__exit__")(py::none(), py::none(), py::none());
    return raised;
}

// A SIMD-sized array (NumPy's vector loops run on long contiguous runs) of one value.
template <class T>
py::array_t<T> filled(T value, std::size_t n = 64) {
    py::array_t<T> x(static_cast<py::ssize_t>(n));
    for (std::size_t i = 0; i < n; ++i) x.mutable_data()[i] = value;
    return x;
}

// Whether NumPy's ufunc reports underflow for one subnormal element among ordinary ones.
template <class T>
bool numpy_underflows(const py::object& numpy_ufunc, const py::object& errstate, T fill, T value) {
    py::array_t<T> x = filled(fill);
    x.mutable_data()[x.size() / 2] = value;
    return numpy_raises(numpy_ufunc, errstate, "under", x);
}

// NumPy's result for arrays of one value each, as bits; 0 unless every element is the same.
template <class T, class U, class... Values>
U numpy_result(const py::object& numpy_ufunc, const py::object& errstate, Values... values) {
    constexpr std::size_t n = 64;
    py::object ctx = errstate(py::arg("all") = "ignore");
    ctx.attr("__enter__")();
    py::array_t<T> y = numpy_ufunc(filled<T>(values, n)...);
    ctx.attr("__exit__")(py::none(), py::none(), py::none());
    if (y.size() != static_cast<py::ssize_t>(n)) return 0;
    U first;
    std::memcpy(&first, y.data(), sizeof(T));
    for (std::size_t i = 1; i < n; ++i) {
        U other;
        std::memcpy(&other, y.data() + i, sizeof(T));
        if (other != first) return 0;
    }
    return first;
}

template <class T, class U>
U kernel_result(core::UnaryOp op, core::DType dtype, T value) {
    T y = value;
    core::apply_unary(op, dtype, reinterpret_cast<const char*>(&value), sizeof(T),
                      reinterpret_cast<char*>(&y), sizeof(T), 1);
    U bits;
    std::memcpy(&bits, &y, sizeof bits);
    return bits;
}

template <class T, class U>
void probe_dtype(core::UnaryOp op, core::DType dtype, const core::FunctionInfo& info,
                 const py::object& numpy_ufunc, const py::object& errstate) {
    // The policies are set whatever the kernels give at the level in use now: the levels
    // differ (float32 arctan's NaN sign at sse2/avx2_fma is not avx512's), and a user or
    // test may switch levels later.
    // Invalid operations: a policy when NumPy gives one NaN for both inputs (and the kernels
    // give a NaN there too).
    // The row's invalid column names the two arguments (none: no argument to probe).
    if (info.invalid != core::InvalidArgs::none) {
        const core::InvalidProbe invalid = core::invalid_probe(info.invalid);
        const T bad[2] = {static_cast<T>(invalid.finite), static_cast<T>(invalid.infinite)};
        const U numpy_bad = numpy_result<T, U>(numpy_ufunc, errstate, bad[0]);
        if (numpy_bad != 0 && is_nan_bits<T>(numpy_bad) &&
            numpy_result<T, U>(numpy_ufunc, errstate, bad[1]) == numpy_bad &&
            is_nan_bits<T>(kernel_result<T, U>(op, dtype, bad[0]))) {
            core::set_invalid_nan_bits(op, dtype, numpy_bad);
        }
    }
    // NaN inputs (+qNaN, -qNaN): NumPy returns them as they are, with the sign flipped, or
    // one NaN for both.
    const T plus = std::numeric_limits<T>::quiet_NaN();
    const T minus = -plus;
    const U numpy_plus = numpy_result<T, U>(numpy_ufunc, errstate, plus);
    const U numpy_minus = numpy_result<T, U>(numpy_ufunc, errstate, minus);
    U plus_bits, minus_bits;
    std::memcpy(&plus_bits, &plus, sizeof plus_bits);
    std::memcpy(&minus_bits, &minus, sizeof minus_bits);
    if (numpy_plus == plus_bits && numpy_minus == minus_bits) {
        core::set_nan_input_bits(op, dtype, core::nan_input_propagates);
    } else if (numpy_plus == minus_bits && numpy_minus == plus_bits) {
        core::set_nan_input_bits(op, dtype, core::nan_input_negated);
    } else if (numpy_plus == numpy_minus && is_nan_bits<T>(numpy_plus)) {
        core::set_nan_input_bits(op, dtype, numpy_plus);
    }
}

// power's conventions (core::PowConvention) for one dtype from np.power's answers on
// three pairs: -NaN ** 3 (+NaN: the sign cleared), 0 ** -inf (divide-by-zero or not) and
// 2 ** (the smallest subnormal's exponent), an exact subnormal (underflow or not).
template <class T, class U>
unsigned numpy_power_convention(const py::object& power, const py::object& errstate) {
    const T inf = std::numeric_limits<T>::infinity();
    const T plus = std::numeric_limits<T>::quiet_NaN();
    U plus_bits;
    std::memcpy(&plus_bits, &plus, sizeof plus_bits);
    unsigned bits = 0;
    if (numpy_result<T, U>(power, errstate, -plus, T(3)) == plus_bits) {
        bits |= core::pow_nan_odd_unsigned;
    }
    if (!numpy_raises(power, errstate, "divide", filled(T(0)), filled(-inf))) {
        bits |= core::pow_quiet_zero_neg_inf;
    }
    const T tiny_exponent =
        T(std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits);
    if (!numpy_raises(power, errstate, "under", filled(T(2)), filled(tiny_exponent))) {
        bits |= core::pow_quiet_exact_tiny;
    }
    return bits;
}

}  // namespace

void probe_numpy_power_conventions() {
    const py::module_ numpy = py::module_::import("numpy");
    const py::object power = numpy.attr("power");
    const py::object errstate = numpy.attr("errstate");
    core::set_power_convention(core::DType::f32,
                               numpy_power_convention<float, std::uint32_t>(power, errstate));
    core::set_power_convention(core::DType::f64,
                               numpy_power_convention<double, std::uint64_t>(power, errstate));
}

void probe_numpy_conventions(core::UnaryOp op) {
    const core::FunctionInfo& info = *core::ufunc_info(op);
    const py::module_ numpy = py::module_::import("numpy");
    if (!py::hasattr(numpy, info.name)) return;
    const py::object ufunc = numpy.attr(info.name);
    const py::object errstate = numpy.attr("errstate");
    probe_dtype<float, std::uint32_t>(op, core::DType::f32, info, ufunc, errstate);
    probe_dtype<double, std::uint64_t>(op, core::DType::f64, info, ufunc, errstate);
    // Subnormal inputs: the kernels' rules report underflow where the C library does;
    // NumPy's AVX-512 loops (tan, arcsin, sinh, log1p, ...) do not. Follow NumPy where it
    // is quiet. The other elements hold a value inside the function's domain.
    const double fill = core::invalid_probe(info.invalid).inside;
    core::set_subnormal_underflow(
        op, core::DType::f32,
        numpy_underflows<float>(ufunc, errstate, static_cast<float>(fill),
                                std::numeric_limits<float>::denorm_min() * 1000.0f));
    core::set_subnormal_underflow(
        op, core::DType::f64,
        numpy_underflows<double>(ufunc, errstate, fill,
                                 std::numeric_limits<double>::denorm_min() * 1000.0));
}

}  // namespace numfuse::python
