// The NaN an invalid operation returns, as NumPy returns it on this machine.
//
// IEEE 754 leaves the sign and payload of a NaN made by an invalid operation
// (log(-1), log(-inf)) open, and NumPy's answer depends on the loop it runs:
// its AVX-512 float64 log gives the x86 default NaN (sign set), while on CPUs
// without AVX-512F its float64 log comes from the C library and gives +NaN;
// aarch64's default NaN is positive. numfuse's kernels produce the x86 default
// NaN. So that `numfuse.log(x)` stays bit-identical to `numpy.log(x)` on every
// machine, the ufunc module asks NumPy once, at import, which NaN each of its
// ufuncs returns for invalid inputs, and where it differs from the kernels'
// sets it in the core (core::set_invalid_nan_bits), whose loops write it on
// their rare path. The core itself stays NumPy-free.
#pragma once

#include "numfuse_core.hpp"

namespace numfuse::python {

// For the ufunc `op` and dtypes float32/float64: when NumPy's ufunc of the same name
// returns one NaN for the two arguments outside its domain that the row's invalid column
// names (-1 and -inf for log, +-inf for sin, 2 and -inf for arcsin, ...: functions.hpp's
// invalid_probe), and it differs from the NaN numfuse's loop returns there, makes the loop
// return NumPy's; likewise for NaN inputs (NumPy returns them as they are for some
// functions, with the sign flipped or one NaN for others). Also whether NumPy reports
// underflow for a subnormal input (core::set_subnormal_underflow): its AVX-512 loops do not
// where the C library does. Call once per ufunc at module initialisation (with the GIL
// held); a name NumPy lacks (erf) does nothing.
void probe_numpy_conventions(core::UnaryOp op);

// The same for np.power (numfuse.power and float_power): whether NumPy's loops take the C
// library's choices where C99 leaves them open (core::PowConvention: the sign of NaN ** odd
// integer, divide-by-zero for 0 ** -inf, underflow for an exact subnormal result), per
// dtype. Call once at module initialisation (with the GIL held).
void probe_numpy_power_conventions();

}  // namespace numfuse::python
