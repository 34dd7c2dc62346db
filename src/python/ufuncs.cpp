// The function table's ufuncs (functions.hpp: exp, log, erf, ...) as genuine
// numpy.ufunc objects (NumPy C API).
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
#include <complex>
#include <cstring>
#include <type_traits>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

#include "bindings.hpp"
#include "kernels/power_scalar.hpp"
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
    const unsigned flags = core::apply_unary(Op, Type, args[0], steps[0], args[1], steps[1],
                                             static_cast<std::size_t>(dimensions[0]));
    raise_fp_flags(flags);
}

template <core::BinaryOp Op, DType Type>
void binary_ufunc_loop(char** args, const npy_intp* dimensions, const npy_intp* steps, void*) {
    const TsanComputeSection tsan_section;
    const unsigned flags =
        core::apply_binary(Op, Type, args[0], steps[0], args[1], steps[1], args[2], steps[2],
                           static_cast<std::size_t>(dimensions[0]));
    raise_fp_flags(flags);
}

// power / float_power's integer and complex loops (NumPy's): element by element through
// kernels/power_scalar.hpp, the functions the VM's ** uses. Integers wrap as NumPy's; a
// negative exponent stops the loop with NumPy's ValueError (set with the GIL held: NumPy
// releases it around the loop and checks for an error after it).
template <class T>
void integer_power_loop(char** args, const npy_intp* dimensions, const npy_intp* steps, void*) {
    const char* a = args[0];
    const char* b = args[1];
    char* out = args[2];
    for (npy_intp i = 0; i < dimensions[0]; ++i, a += steps[0], b += steps[1], out += steps[2]) {
        T x, y;
        std::memcpy(&x, a, sizeof x);
        std::memcpy(&y, b, sizeof y);
        if constexpr (std::is_signed<T>::value) {
            if (y < 0) {
                const PyGILState_STATE gil = PyGILState_Ensure();
                PyErr_SetString(PyExc_ValueError,
                                "Integers to negative integer powers are not allowed.");
                PyGILState_Release(gil);
                return;
            }
        }
        const T r = kernels::integer_power(x, y);
        std::memcpy(out, &r, sizeof r);
    }
}

// Complex: the C library's flags stay in the thread's status word, as NumPy's own loop
// leaves them (NumPy reports them after the loop).
template <class T>
void complex_power_loop(char** args, const npy_intp* dimensions, const npy_intp* steps, void*) {
    const char* a = args[0];
    const char* b = args[1];
    char* out = args[2];
    for (npy_intp i = 0; i < dimensions[0]; ++i, a += steps[0], b += steps[1], out += steps[2]) {
        std::complex<T> x, y;
        std::memcpy(&x, a, sizeof x);
        std::memcpy(&y, b, sizeof y);
        const std::complex<T> r = kernels::complex_power(x, y);
        std::memcpy(out, &r, sizeof r);
    }
}

// One loop per NumPy type character of the function table's loop order
// (functions.hpp): NumPy picks the first loop whose input type the argument
// casts to safely, so NumPy's own order ("efdgFDG") makes type resolution
// identical to np.exp (bool/int8 -> float16, int16 -> float32, int32/int64 ->
// float64) and SciPy's ("dfg": float64 first) identical to scipy.special.erf
// (bool, integers and float16 -> float64; long double, which SciPy refuses,
// gets a scalar loop).
constexpr int max_loops = 17;  // np.power: 10 integer, 4 real, 3 complex

struct UnaryUfuncSpec {
    PyUFuncGenericFunction loops[max_loops] = {};
    char types[3 * max_loops] = {};
    void* data[max_loops] = {};
    int count = 0;
};

template <UnaryOp Op>
PyUFuncGenericFunction loop_for(char type) {
    switch (type) {
        case 'e': return &unary_ufunc_loop<Op, DType::f16>;
        case 'f': return &unary_ufunc_loop<Op, DType::f32>;
        case 'd': return &unary_ufunc_loop<Op, DType::f64>;
        case 'g': return &unary_ufunc_loop<Op, DType::longdouble>;
        case 'F': return &unary_ufunc_loop<Op, DType::c64>;
        case 'D': return &unary_ufunc_loop<Op, DType::c128>;
        case 'G': return &unary_ufunc_loop<Op, DType::clongdouble>;
        default: return nullptr;
    }
}

char npy_type_of(char type) {
    switch (type) {
        case 'e': return NPY_HALF;
        case 'f': return NPY_FLOAT;
        case 'd': return NPY_DOUBLE;
        case 'g': return NPY_LONGDOUBLE;
        case 'F': return NPY_CFLOAT;
        case 'D': return NPY_CDOUBLE;
        case 'b': return NPY_BYTE;
        case 'B': return NPY_UBYTE;
        case 'h': return NPY_SHORT;
        case 'H': return NPY_USHORT;
        case 'i': return NPY_INT;
        case 'I': return NPY_UINT;
        case 'l': return NPY_LONG;
        case 'L': return NPY_ULONG;
        case 'q': return NPY_LONGLONG;
        case 'Q': return NPY_ULONGLONG;
        default: return NPY_CLONGDOUBLE;
    }
}

template <core::BinaryOp Op>
PyUFuncGenericFunction binary_loop_for(char type) {
    switch (type) {
        case 'e': return &binary_ufunc_loop<Op, DType::f16>;
        case 'f': return &binary_ufunc_loop<Op, DType::f32>;
        case 'd': return &binary_ufunc_loop<Op, DType::f64>;
        case 'g': return &binary_ufunc_loop<Op, DType::longdouble>;
        // Only power's and float_power's loop orders have these (functions.hpp).
        case 'b': return &integer_power_loop<npy_byte>;
        case 'B': return &integer_power_loop<npy_ubyte>;
        case 'h': return &integer_power_loop<npy_short>;
        case 'H': return &integer_power_loop<npy_ushort>;
        case 'i': return &integer_power_loop<npy_int>;
        case 'I': return &integer_power_loop<npy_uint>;
        case 'l': return &integer_power_loop<npy_long>;
        case 'L': return &integer_power_loop<npy_ulong>;
        case 'q': return &integer_power_loop<npy_longlong>;
        case 'Q': return &integer_power_loop<npy_ulonglong>;
        case 'F': return &complex_power_loop<float>;
        case 'D': return &complex_power_loop<double>;
        case 'G': return &complex_power_loop<long double>;
        default: return nullptr;
    }
}

// The loop order of a row's ufunc: the table's, except that SciPy's convention follows the
// installed SciPy, which lists float32 first from 1.18 on (numfuse/_scipy_loops.py decides,
// once, without importing SciPy; float32 first too where SciPy is missing).
const char* ufunc_loops_of(const core::FunctionInfo& info) {
    static const bool float32_first = [] {
        return py::module_::import("numfuse._scipy_loops")
            .attr("scipy_float32_first")()
            .cast<bool>();
    }();
    const std::string_view loops = info.ufunc_loops;
    if (!float32_first || loops.substr(0, 2) != "df") return info.ufunc_loops;
    // Kept for the process's life: NumPy keeps pointers into the specs built from it.
    static std::unordered_map<std::string_view, std::string> reordered;
    std::string& order = reordered[loops];
    if (order.empty()) order = "fd" + std::string(loops.substr(2));
    return order.c_str();
}

// The loops of a row: every operand and the result of one loop have its type.
template <class LoopFor>
UnaryUfuncSpec spec_for(const core::FunctionInfo& info, LoopFor loop_for_type) {
    const int operands = info.arity + 1;
    UnaryUfuncSpec spec;
    for (const char* t = ufunc_loops_of(info); *t != '\0' && spec.count < max_loops; ++t) {
        spec.loops[spec.count] = loop_for_type(*t);
        for (int k = 0; k < operands; ++k) spec.types[operands * spec.count + k] = npy_type_of(*t);
        ++spec.count;
    }
    return spec;
}

// "<summary>, element-wise: a drop-in for numpy.exp." and what the loops do.
std::string docstring_of(const core::FunctionInfo& info) {
    const bool scipy = std::string_view(info.ufunc_loops).substr(0, 2) == "df";
    std::string doc = std::string(info.summary) + ", element-wise: a drop-in for " +
                      (scipy ? "scipy.special." : "numpy.") + info.name +
                      ".\n\n"
                      "SIMD kernel (SSE2/AVX2/AVX-512 chosen at run time), threaded for large\n"
                      "arrays, at most 1 ULP from the exact result for float32 and float64.\n";
    if (info.types == core::TypeRule::power || info.types == core::TypeRule::float_power) {
        doc += info.types == core::TypeRule::power
                   ? "Integers stay integers (wrapping as NumPy's; negative integer exponents\n"
                     "raise ValueError); "
                   : "Computes in float64 (long double and complex as given); ";
        doc +=
            "complex operands use NumPy's complex power, long double the C++\n"
            "library. ";
    } else if (info.arity == 2) {
        doc +=
            "Broadcasts its two arguments as any ufunc; float16 is computed through\n"
            "float32, long double uses the C++ library. ";
    } else if (core::has_complex(info.types)) {
        doc +=
            "float16 is computed through float32; complex and long double use the\n"
            "C++ library. ";
    } else {
        doc += "Real inputs only: complex arrays raise TypeError. ";
    }
    doc += std::string("Special values and floating-point warnings match ") +
           (scipy ? "scipy.special." : "numpy.") + info.name + ".";
    return doc;
}

// Specs and docstrings live for the life of the process: NumPy keeps pointers to them.
UnaryUfuncSpec ufunc_specs[core::unary_op_count + core::binary_op_count];
std::string ufunc_docs[core::unary_op_count + core::binary_op_count];

// The ufunc of a row, with the row's identity as NumPy's generate_umath.py registers it:
// PyUFunc_None (no identity, not reorderable), PyUFunc_IdentityValue with the value or
// PyUFunc_Zero (reorderable: reduce of an empty array and over several axes at once).
void add_ufunc(py::module_& m, UnaryUfuncSpec& spec, int nin, const core::FunctionInfo& info,
               const char* doc) {
    py::object identity_value;
    int identity = PyUFunc_None;
    switch (info.identity) {
        case core::UfuncIdentity::none: break;
        case core::UfuncIdentity::minus_inf:
            identity = PyUFunc_IdentityValue;
            identity_value = py::float_(-std::numeric_limits<double>::infinity());
            break;
        case core::UfuncIdentity::zero: identity = PyUFunc_Zero; break;
    }
    // NumPy keeps its own reference to identity_value.
    PyObject* ufunc = PyUFunc_FromFuncAndDataAndSignatureAndIdentity(
        spec.loops, spec.data, spec.types, spec.count, nin, 1, identity, info.name, doc, 0, nullptr,
        identity_value ? identity_value.ptr() : nullptr);
    if (ufunc == nullptr) throw py::error_already_set();
    m.add_object(info.name, py::reinterpret_steal<py::object>(ufunc));
}

}  // namespace

void register_ufuncs(py::module_& m) {
    if (_import_array() < 0) throw py::error_already_set();
    if (_import_umath() < 0) throw py::error_already_set();
    // Each ufunc also asks NumPy which NaNs and conditions it gives (nan_policy.hpp).
#define NUMFUSE_ADD_UFUNC(op)                                            \
    {                                                                    \
        constexpr int k = static_cast<int>(UnaryOp::op);                 \
        const core::FunctionInfo& info = *core::ufunc_info(UnaryOp::op); \
        ufunc_specs[k] = spec_for(info, &loop_for<UnaryOp::op>);         \
        ufunc_docs[k] = docstring_of(info);                              \
        add_ufunc(m, ufunc_specs[k], 1, info, ufunc_docs[k].c_str());    \
        probe_numpy_conventions(UnaryOp::op);                            \
    }
    NUMFUSE_UNARY_OPS(NUMFUSE_ADD_UFUNC)
#undef NUMFUSE_ADD_UFUNC
    // The two-argument ufuncs (logaddexp: no input gives a NaN but a NaN, no NaN policy;
    // power's conventions are probed below).
#define NUMFUSE_ADD_BINARY_UFUNC(op)                                                   \
    {                                                                                  \
        constexpr int k = core::unary_op_count + static_cast<int>(core::BinaryOp::op); \
        const core::FunctionInfo& info = *core::ufunc_info(core::BinaryOp::op);        \
        ufunc_specs[k] = spec_for(info, &binary_loop_for<core::BinaryOp::op>);         \
        ufunc_docs[k] = docstring_of(info);                                            \
        add_ufunc(m, ufunc_specs[k], 2, info, ufunc_docs[k].c_str());                  \
    }
    NUMFUSE_BINARY_OPS(NUMFUSE_ADD_BINARY_UFUNC)
#undef NUMFUSE_ADD_BINARY_UFUNC
    // power's NaN and condition conventions, as NumPy's on this machine (nan_policy.hpp).
    probe_numpy_power_conventions();

    m.def(
        "_function_table",
        [] {
            py::list rows;
            for (const core::FunctionInfo& info : core::function_table) {
                static const char* const gpu_names[] = {"none", "device_math", "libdevice"};
                const core::InvalidProbe invalid = core::invalid_probe(info.invalid);
                py::tuple invalid_args;
                if (info.invalid != core::InvalidArgs::none) {
                    invalid_args = py::make_tuple(invalid.finite, invalid.infinite);
                }
                rows.append(py::make_tuple(info.name, info.arity, core::type_rule_name(info.types),
                                           info.ufunc_loops[0] != '\0', info.ufunc_loops,
                                           gpu_names[static_cast<int>(info.gpu)], info.summary,
                                           info.libm, info.min_elements_per_thread, invalid_args,
                                           py::make_tuple(info.lo, info.hi)));
            }
            return rows;
        },
        "The function table (src/core/functions.hpp), a tuple per function: (name, arity, "
        "type rule, is_ufunc, ufunc loop order, gpu form, summary, libm, threads, invalid "
        "arguments (finite, infinite) or (), benchmark domain (lo, hi)).");
}

}  // namespace numfuse::python
