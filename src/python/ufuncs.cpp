// exp, log and erf as genuine numpy.ufunc objects (NumPy C API).
//
// NumPy's ufunc machinery does type resolution, casting, broadcasting, out=,
// where=, buffering and __array_ufunc__; the inner loops below hand each 1-d
// strided slice to the core unchanged (no copies) and translate the core's
// floating-point conditions into the calling thread's status flags, which
// NumPy turns into np.errstate warnings or errors exactly as for np.exp.
//
// The GIL: NumPy releases it around loops of non-object types, so the core
// computes without it; the loops below touch no Python object.
#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include <cfenv>

#include "bindings.hpp"
#include "nan_policy.hpp"
#include "numfuse_core.hpp"

namespace py = pybind11;

namespace numfuse::python {
namespace {

using core::DType;
using core::UnaryOp;

void raise_fp_flags(unsigned flags) noexcept {
    int excepts = 0;
    if (flags & core::fp_divide_by_zero) excepts |= FE_DIVBYZERO;
    if (flags & core::fp_overflow) excepts |= FE_OVERFLOW;
    if (flags & core::fp_underflow) excepts |= FE_UNDERFLOW;
    if (flags & core::fp_invalid) excepts |= FE_INVALID;
    if (excepts) std::feraiseexcept(excepts);
}

template <UnaryOp Op, DType Type>
void unary_ufunc_loop(char** args, const npy_intp* dimensions, const npy_intp* steps, void*) {
    const TsanComputeSection tsan_section;
    const unsigned flags = apply_unary_as_numpy(Op, Type, args[0], steps[0], args[1], steps[1],
                                                static_cast<std::size_t>(dimensions[0]));
    raise_fp_flags(flags);
}

// NumPy picks the first loop whose input type the argument casts to safely,
// so listing types in NumPy's own order (e, f, d, g, F, D, G) makes type
// resolution identical to np.exp: bool/int8 -> float16, int16 -> float32,
// int32/int64 -> float64.
struct UnaryUfuncSpec {
    PyUFuncGenericFunction loops[7];
    char types[14];
    void* data[7];
    int count;
};

template <UnaryOp Op>
UnaryUfuncSpec real_and_complex_loops() {
    return {{&unary_ufunc_loop<Op, DType::f16>, &unary_ufunc_loop<Op, DType::f32>,
             &unary_ufunc_loop<Op, DType::f64>, &unary_ufunc_loop<Op, DType::longdouble>,
             &unary_ufunc_loop<Op, DType::c64>, &unary_ufunc_loop<Op, DType::c128>,
             &unary_ufunc_loop<Op, DType::clongdouble>},
            {NPY_HALF, NPY_HALF, NPY_FLOAT, NPY_FLOAT, NPY_DOUBLE, NPY_DOUBLE, NPY_LONGDOUBLE,
             NPY_LONGDOUBLE, NPY_CFLOAT, NPY_CFLOAT, NPY_CDOUBLE, NPY_CDOUBLE, NPY_CLONGDOUBLE,
             NPY_CLONGDOUBLE},
            {},
            7};
}

// scipy.special.erf lists float64 before float32, so bool, integer and
// float16 inputs give float64 there (exact float32 matches stay float32);
// the same order here keeps numfuse.erf's result types identical to SciPy's.
// long double, which SciPy refuses, gets a scalar loop.
template <UnaryOp Op>
UnaryUfuncSpec scipy_ordered_real_loops() {
    return {{&unary_ufunc_loop<Op, DType::f64>, &unary_ufunc_loop<Op, DType::f32>,
             &unary_ufunc_loop<Op, DType::longdouble>},
            {NPY_DOUBLE, NPY_DOUBLE, NPY_FLOAT, NPY_FLOAT, NPY_LONGDOUBLE, NPY_LONGDOUBLE},
            {},
            3};
}

// Specs live for the life of the process: NumPy keeps pointers to them.
UnaryUfuncSpec exp_spec = real_and_complex_loops<UnaryOp::exp>();
UnaryUfuncSpec log_spec = real_and_complex_loops<UnaryOp::log>();
UnaryUfuncSpec erf_spec = scipy_ordered_real_loops<UnaryOp::erf>();

void add_ufunc(py::module_& m, UnaryUfuncSpec& spec, const char* name, const char* doc) {
    PyObject* ufunc = PyUFunc_FromFuncAndData(spec.loops, spec.data, spec.types, spec.count, 1, 1,
                                              PyUFunc_None, name, doc, 0);
    if (ufunc == nullptr) throw py::error_already_set();
    m.add_object(name, py::reinterpret_steal<py::object>(ufunc));
}

}  // namespace

void register_ufuncs(py::module_& m) {
    if (_import_array() < 0) throw py::error_already_set();
    if (_import_umath() < 0) throw py::error_already_set();
    // NumPy's NaN for invalid inputs, where it differs from the kernels' (nan_policy.hpp).
    probe_numpy_invalid_nan(UnaryOp::exp, "exp");
    probe_numpy_invalid_nan(UnaryOp::log, "log");
    add_ufunc(m, exp_spec, "exp",
              "Exponential, element-wise: a drop-in for numpy.exp.\n\n"
              "SIMD kernel (SSE2/AVX2/AVX-512 chosen at run time), threaded for large\n"
              "arrays, at most 1 ULP from the exact result for float32 and float64.\n"
              "float16 is computed through float32; complex and long double use the\n"
              "C++ library. Special values and floating-point warnings match numpy.exp.");
    add_ufunc(m, log_spec, "log",
              "Natural logarithm, element-wise: a drop-in for numpy.log.\n\n"
              "SIMD kernel (SSE2/AVX2/AVX-512 chosen at run time), threaded for large\n"
              "arrays, at most 1 ULP from the exact result for float32 and float64.\n"
              "log(0) = -inf (divide-by-zero warning), log(x < 0) = nan (invalid).");
    add_ufunc(m, erf_spec, "erf",
              "Error function, element-wise: a drop-in for scipy.special.erf.\n\n"
              "SIMD kernel (SSE2/AVX2/AVX-512 chosen at run time), threaded for large\n"
              "arrays, at most 1 ULP from the exact result for float32 and float64.\n"
              "Real inputs only: complex arrays raise TypeError.");
}

}  // namespace numfuse::python
