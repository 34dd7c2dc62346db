// numfuse core: the public C++ API of the Python-free core library.
//
// Everything here works on raw pointers, element counts and byte strides, so
// kernels can be driven from C++ tests and benchmarks as well as from the
// Python bindings. Nothing in src/core includes Python or NumPy headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "functions.hpp"
#include "levels.hpp"

namespace numfuse::core {

// The ufuncs (UnaryOp, unary_op_count, NUMFUSE_UNARY_OPS) are the function
// table's rows marked as ufuncs: see functions.hpp.

// Element types. f32 and f64 have SIMD loops per level (unary_loop); the
// others are served by apply_unary only: f16 through the f32 kernels, the
// extended and complex types by scalar loops on the C++ library.
enum class DType : int { f32, f64, f16, longdouble, c64, c128, clongdouble };
inline constexpr int simd_dtype_count = 2;

// Floating-point conditions a loop reports, with IEEE meaning. Loops compute
// these explicitly from inputs and outputs instead of relying on the hardware
// status word, so that (a) flags raised on OpenMP worker threads are not lost
// and (b) intermediate steps of a kernel never leak spurious flags.
enum FpFlag : unsigned {
    fp_none = 0u,
    fp_divide_by_zero = 1u,
    fp_overflow = 2u,
    fp_underflow = 4u,
    fp_invalid = 8u,
};

// A single-threaded strided loop: out[i*out_stride] = f(in[i*in_stride]) for
// i in [0, n). Strides are in bytes, of any sign; pointers need no alignment
// beyond a byte. Never reads or writes outside the n elements. Returns the
// FpFlag bits the operation raises for these elements.
using UnaryLoop = unsigned (*)(const char* in, std::ptrdiff_t in_stride, char* out,
                               std::ptrdiff_t out_stride, std::size_t n);

// The two-argument form: out[i*out_stride] = f(a[i*a_stride], b[i*b_stride]),
// strides of any sign (0 for a broadcast operand), the same contract otherwise.
using BinaryLoop = unsigned (*)(const char* a, std::ptrdiff_t a_stride, const char* b,
                                std::ptrdiff_t b_stride, char* out, std::ptrdiff_t out_stride,
                                std::size_t n);

const char* unary_op_name(UnaryOp op) noexcept;

// The SIMD loop compiled for one level (dtype f32 or f64); nullptr when that
// level is not compiled or the dtype has no SIMD loop.
UnaryLoop unary_loop(UnaryOp op, DType dtype, Level level) noexcept;

// True when apply_unary accepts this operation and type: complex types only where
// the function's type rule has complex opcodes (erf has no complex loop).
bool unary_supported(UnaryOp op, DType dtype) noexcept;

// The NaN the SIMD loops (unary_loop, apply_unary) write where a non-NaN input
// gives a NaN (an invalid operation such as log(-1)), as the bits of an f32 or
// f64: 0 (the default) keeps the kernels' own, the x86 default NaN (sign set).
// The Python bindings set the NaN NumPy returns where it differs
// (src/python/nan_policy.hpp). The expression VM does not read it.
void set_invalid_nan_bits(UnaryOp op, DType dtype, std::uint64_t bits) noexcept;
std::uint64_t invalid_nan_bits(UnaryOp op, DType dtype) noexcept;
// The same for NaN inputs: 0 keeps the kernels' result, nan_input_propagates returns the
// input NaN itself (quieted), any other value is the bits of the NaN to return. Applied on the rare
// path of the ops whose screen flags NaN lanes (the TableOp ufuncs, arch/unary_loop.hpp).
// nan_input_negated returns it quieted with its sign flipped (NumPy's AVX-512 float64
// arccos does that).
inline constexpr std::uint64_t nan_input_propagates = 1;
inline constexpr std::uint64_t nan_input_negated = 2;
void set_nan_input_bits(UnaryOp op, DType dtype, std::uint64_t bits) noexcept;
std::uint64_t nan_input_bits(UnaryOp op, DType dtype) noexcept;
// Whether the SIMD loops keep the underflow condition that their rule reports for a
// subnormal input (f(x) ~ x, as the C library raises it): false where NumPy's own loop on
// this machine does not report it (its AVX-512 loops for tan, arcsin, sinh, log1p, ...).
// Set by the Python bindings (src/python/nan_policy.hpp); default true.
void set_subnormal_underflow(UnaryOp op, DType dtype, bool raise) noexcept;
bool subnormal_underflow(UnaryOp op, DType dtype) noexcept;
// power's (and float_power's) choices where C99 leaves the result's NaN or a condition
// open and NumPy's loops differ by machine (SVML on AVX-512, the C library's pow
// elsewhere): bits of PowConvention for the SIMD loops and folds of the power ufuncs, 0 (the
// default) keeps the kernels' (C99 and SVML's). Set by the Python bindings from NumPy's
// answers (src/python/nan_policy.hpp); the expression VM does not read it.
enum PowConvention : unsigned {
    pow_nan_odd_unsigned = 1u,    // NaN ** odd integer is the NaN with its sign cleared
    pow_quiet_zero_neg_inf = 2u,  // 0 ** -inf raises no divide-by-zero
    pow_quiet_exact_tiny = 4u,    // an exact subnormal result raises no underflow
};
void set_power_convention(DType dtype, unsigned bits) noexcept;
unsigned power_convention(DType dtype) noexcept;

// Runs the active level's loop, split over threads when n is large enough to
// pay for them (see parallel.hpp). Returns the union of the FpFlag bits for
// the SIMD types; the caller's hardware status flags are left as they were.
// For the scalar-loop types (longdouble, complex) the C++ library raises the
// hardware flags itself and 0 is returned. Unsupported pairs return 0 and
// write nothing (check unary_supported first).
unsigned apply_unary(UnaryOp op, DType dtype, const char* in, std::ptrdiff_t in_stride, char* out,
                     std::ptrdiff_t out_stride, std::size_t n);

// apply_unary for the two-argument ufuncs (BinaryOp): f16, f32, f64 (SIMD loops,
// threaded; f16 through f32) and longdouble (the C++ library, which raises the hardware
// flags itself; 0 is returned). Other types return 0 and write nothing.
unsigned apply_binary(BinaryOp op, DType dtype, const char* a, std::ptrdiff_t a_stride,
                      const char* b, std::ptrdiff_t b_stride, char* out, std::ptrdiff_t out_stride,
                      std::size_t n);

}  // namespace numfuse::core
