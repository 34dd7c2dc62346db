// The NaN an invalid operation returns, as NumPy returns it on this machine.
//
// IEEE 754 leaves the sign and payload of a NaN made by an invalid operation
// (log(-1), log(-inf)) open, and NumPy's answer depends on the loop it runs:
// its AVX-512 float64 log gives the x86 default NaN (sign set), while on CPUs
// without AVX-512F its float64 log comes from the C library and gives +NaN;
// aarch64's default NaN is positive. numfuse's kernels always produce the x86
// default NaN. So that `numfuse.log(x)` stays bit-identical to `numpy.log(x)`
// on every machine, the ufunc module asks NumPy once, at import, which NaN
// each of its ufuncs returns for invalid inputs, and the ufunc loops rewrite
// the NaNs of invalid lanes when the core reports an invalid operation (a rare
// path: no cost unless a lane was invalid). The core stays NumPy-free.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>

#include "numfuse_core.hpp"

namespace numfuse::python {

// Records, for each ufunc `op` and dtype f32/f64, the bits of NumPy's result
// for -1 and -inf when NumPy's ufunc `numpy_name` returns a NaN there.
// Call once per ufunc at module initialisation (with the GIL held).
void probe_numpy_invalid_nan(core::UnaryOp op, const char* numpy_name);

// core::apply_unary, then NumPy's NaN wherever out[i] is a NaN made from a
// non-NaN in[i] (only for ops and dtypes whose recorded NaN differs from the
// kernels'; in-place calls included). Returns core::apply_unary's flags.
unsigned apply_unary_as_numpy(core::UnaryOp op, core::DType dtype, const char* in,
                              std::ptrdiff_t in_stride, char* out, std::ptrdiff_t out_stride,
                              std::size_t n);

}  // namespace numfuse::python
