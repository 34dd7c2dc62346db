// logsumexp / softmax / log_softmax: the thin binding over src/core/reduce.
//
// python/numfuse/_reduce.py does SciPy's argument handling (dtype promotion,
// b broadcasting, axis normalisation, empty inputs, complex and long double)
// and calls the private functions below with float32/float64 arrays and
// preallocated outputs. These re-check everything they rely on, so a wrong
// call raises TypeError/ValueError instead of touching memory it should not.
//
// The GIL is released around the core call: the core only reads and writes
// the arrays' buffers, which the caller keeps alive for the call's duration.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "interruptible.hpp"
#include "numfuse_core.hpp"
#include "reduce/reduce.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

core::DType simd_dtype(const py::array& a, const char* what) {
    // Equivalence, not identity: arrays that were unpickled (dask.distributed,
    // multiprocessing) carry their own native-float64 descriptor objects.
    const auto dtype = a.dtype();
    const auto& api = py::detail::npy_api::get();
    if (api.PyArray_EquivTypes_(dtype.ptr(), py::dtype::of<float>().ptr())) return core::DType::f32;
    if (api.PyArray_EquivTypes_(dtype.ptr(), py::dtype::of<double>().ptr()))
        return core::DType::f64;
    throw py::type_error(std::string(what) + ": expected a float32 or float64 array, got " +
                         std::string(py::str(dtype)));
}

// Sorted, unique, in-range axes as booleans per dimension.
std::vector<bool> reduced_axes(const std::vector<int>& axes, py::ssize_t ndim) {
    std::vector<bool> reduced(static_cast<std::size_t>(ndim), false);
    for (const int axis : axes) {
        if (axis < 0 || axis >= ndim) {
            throw py::value_error("axis " + std::to_string(axis) +
                                  " is out of bounds for array of dimension " +
                                  std::to_string(ndim));
        }
        if (reduced[static_cast<std::size_t>(axis)])
            throw py::value_error("duplicate value in 'axis'");
        reduced[static_cast<std::size_t>(axis)] = true;
    }
    return reduced;
}

void check_output(const py::array& out, const char* what, core::DType dtype, const py::array& like,
                  const std::vector<py::ssize_t>& shape) {
    if (simd_dtype(out, what) != dtype || out.dtype().not_equal(like.dtype())) {
        throw py::type_error(std::string(what) + ": dtype must be " +
                             std::string(py::str(like.dtype())));
    }
    if (!out.writeable()) throw py::value_error(std::string(what) + ": output array is read-only");
    if (out.ndim() != static_cast<py::ssize_t>(shape.size())) {
        throw py::value_error(std::string(what) + ": output has the wrong number of dimensions");
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (out.shape(static_cast<py::ssize_t>(d)) != shape[d]) {
            throw py::value_error(std::string(what) + ": output has the wrong shape");
        }
    }
}

struct Split {
    core::ReduceShape shape;
    std::vector<py::ssize_t> kept_shape;
};

Split split_shape(const py::array& a, const std::vector<bool>& reduced) {
    Split split;
    for (py::ssize_t d = 0; d < a.ndim(); ++d) {
        const auto extent = static_cast<std::size_t>(a.shape(d));
        if (reduced[static_cast<std::size_t>(d)]) {
            split.shape.inner.push_back(extent);
        } else {
            split.shape.outer.push_back(extent);
            split.kept_shape.push_back(a.shape(d));
        }
    }
    return split;
}

// Byte strides of an array with a's shape, split like a.
void split_strides(const py::array& x, const std::vector<bool>& reduced,
                   std::vector<std::ptrdiff_t>& outer, std::vector<std::ptrdiff_t>& inner) {
    for (py::ssize_t d = 0; d < x.ndim(); ++d) {
        (reduced[static_cast<std::size_t>(d)] ? inner : outer).push_back(x.strides(d));
    }
}

std::vector<std::ptrdiff_t> all_strides(const py::array& x) {
    std::vector<std::ptrdiff_t> strides;
    for (py::ssize_t d = 0; d < x.ndim(); ++d) strides.push_back(x.strides(d));
    return strides;
}

void logsumexp_binding(const py::array& a, const py::object& b_object, const std::vector<int>& axes,
                       py::array& result, const py::object& sign_object) {
    const core::DType dtype = simd_dtype(a, "logsumexp");
    const auto reduced = reduced_axes(axes, a.ndim());
    const Split split = split_shape(a, reduced);
    core::ReduceOperand a_operand;
    a_operand.data = static_cast<const char*>(a.data());
    split_strides(a, reduced, a_operand.outer, a_operand.inner);
    core::ReduceOperand b_operand;
    py::array b;
    if (!b_object.is_none()) {
        if (!py::isinstance<py::array>(b_object))
            throw py::type_error("logsumexp: b must be an array");
        b = py::reinterpret_borrow<py::array>(b_object);
        if (b.dtype().not_equal(a.dtype()) || b.ndim() != a.ndim()) {
            throw py::type_error("logsumexp: b must have a's dtype and number of dimensions");
        }
        for (py::ssize_t d = 0; d < a.ndim(); ++d) {
            if (b.shape(d) != a.shape(d)) throw py::value_error("logsumexp: b must have a's shape");
        }
        b_operand.data = static_cast<const char*>(b.data());
        split_strides(b, reduced, b_operand.outer, b_operand.inner);
    }
    check_output(result, "logsumexp", dtype, a, split.kept_shape);
    core::ReduceOutput result_operand;
    result_operand.data = static_cast<char*>(result.mutable_data());
    result_operand.outer = all_strides(result);
    core::ReduceOutput sign_operand;
    py::array sign;
    if (!sign_object.is_none()) {
        if (!py::isinstance<py::array>(sign_object))
            throw py::type_error("logsumexp: sign must be an array");
        sign = py::reinterpret_borrow<py::array>(sign_object);
        check_output(sign, "logsumexp (sign)", dtype, a, split.kept_shape);
        sign_operand.data = static_cast<char*>(sign.mutable_data());
        sign_operand.outer = all_strides(sign);
    }
    bool interrupted = false;
    {
        const InterruptibleCall interruptible(static_cast<std::size_t>(a.size()));
        py::gil_scoped_release release;
        const TsanComputeSection tsan_section;
        try {
            core::logsumexp(dtype, split.shape, a_operand, b_operand, result_operand, sign_operand);
        } catch (const interrupt::Interrupted&) {
            interrupted = true;
        }
    }
    if (interrupted) raise_interrupted();
}

// softmax / log_softmax of x over the dimensions marked in `reduced` into out
// (checked by the callers).
void run_softmax(const py::array& x, const std::vector<bool>& reduced, py::array& out, bool log,
                 core::DType dtype) {
    const Split split = split_shape(x, reduced);
    core::ReduceOperand x_operand;
    x_operand.data = static_cast<const char*>(x.data());
    split_strides(x, reduced, x_operand.outer, x_operand.inner);
    core::ReduceOutput out_operand;
    out_operand.data = static_cast<char*>(out.mutable_data());
    split_strides(out, reduced, out_operand.outer, out_operand.inner);
    const auto kind = log ? core::SoftmaxKind::log_softmax : core::SoftmaxKind::softmax;
    bool interrupted = false;
    try {
        const InterruptibleCall interruptible(static_cast<std::size_t>(x.size()));
        py::gil_scoped_release release;
        const TsanComputeSection tsan_section;
        try {
            core::softmax(kind, dtype, split.shape, x_operand, out_operand);
        } catch (const interrupt::Interrupted&) {
            interrupted = true;
        }
    } catch (const std::invalid_argument& error) {
        throw py::value_error(error.what());
    }
    if (interrupted) raise_interrupted();
}

void softmax_binding(const py::array& x, const std::vector<int>& axes, py::array& out, bool log) {
    const char* name = log ? "log_softmax" : "softmax";
    const core::DType dtype = simd_dtype(x, name);
    const auto reduced = reduced_axes(axes, x.ndim());
    std::vector<py::ssize_t> full_shape(x.shape(), x.shape() + x.ndim());
    check_output(out, name, dtype, x, full_shape);
    run_softmax(x, reduced, out, log, dtype);
}

// The common call, numfuse.softmax(x) / softmax(x, axis=k) with x an
// np.ndarray (not a subclass) of float32 / float64 with at least one dimension
// and one element, and axis None or an int in range: a new C-contiguous result,
// with none of the Python layer's argument handling (the per-call cost of the
// dedicated function is then below that of a compiled formula). Anything else
// returns None, and python/numfuse/_reduce.py handles it (and its errors).
py::object softmax_new(const py::handle& x_handle, const py::handle& axis, bool log) {
    const auto& api = py::detail::npy_api::get();
    if (Py_TYPE(x_handle.ptr()) != api.PyArray_Type_) return py::none();
    const auto x = py::reinterpret_borrow<py::array>(x_handle);
    const auto dtype_object = x.dtype();
    core::DType dtype;
    if (api.PyArray_EquivTypes_(dtype_object.ptr(), py::dtype::of<float>().ptr())) {
        dtype = core::DType::f32;
    } else if (api.PyArray_EquivTypes_(dtype_object.ptr(), py::dtype::of<double>().ptr())) {
        dtype = core::DType::f64;
    } else {
        return py::none();
    }
    const py::ssize_t ndim = x.ndim();
    if (ndim == 0 || x.size() == 0) return py::none();
    std::vector<bool> reduced(static_cast<std::size_t>(ndim), axis.is_none());
    if (!axis.is_none()) {
        if (!PyLong_CheckExact(axis.ptr())) return py::none();
        const long value = PyLong_AsLong(axis.ptr());
        if (value == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return py::none();
        }
        if (value < -ndim || value >= ndim) return py::none();
        reduced[static_cast<std::size_t>(value < 0 ? value + ndim : value)] = true;
    }
    py::array out(dtype_object, std::vector<py::ssize_t>(x.shape(), x.shape() + ndim));
    run_softmax(x, reduced, out, log, dtype);
    return out;  // moved: the implicit move applies to the converting constructor
}

}  // namespace

void register_reduce(py::module_& m) {
    m.def("_logsumexp", &logsumexp_binding, py::arg("a"), py::arg("b"), py::arg("axes"),
          py::arg("result"), py::arg("sign"),
          "logsumexp of a float32/float64 array over `axes` into preallocated outputs "
          "(see numfuse.logsumexp).");
    m.def("_softmax", &softmax_binding, py::arg("x"), py::arg("axes"), py::arg("out"),
          py::arg("log"),
          "softmax (log=False) or log_softmax (log=True) over `axes` into `out` "
          "(see numfuse.softmax).");
    m.def("_softmax_new", &softmax_new, py::arg("x"), py::arg("axis"), py::arg("log"),
          "softmax (log=False) or log_softmax (log=True) of a float32/float64 ndarray over "
          "axis (None or an int) into a new array, or None where the Python layer must "
          "handle the call (see numfuse.softmax).");
}

}  // namespace numfuse::python
