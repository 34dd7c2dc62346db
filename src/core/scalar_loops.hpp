// The ufuncs' loops that are not a level's SIMD loop (dispatch.cpp calls them): float16
// through the float32 loops, a block at a time, and long double and complex through
// scalar_libm::<libm column> of each row (scalar_libm.hpp, the VM's scalar forms too).
#pragma once

#include <cstddef>

#include "numfuse_core.hpp"

namespace numfuse::core {

// Elements per float16 block: widened to float32 on the stack, run, narrowed.
inline constexpr std::size_t half_block = 512;

// out[i] = loop_f32(in[i]) for i in [begin, end), float16 operands: the float32 loop on
// blocks of widened values, each result rounded once to float16; returns the loop's flags
// and those of the narrowing (overflow to inf, underflow to a subnormal).
unsigned apply_half(UnaryLoop loop_f32, const char* in, std::ptrdiff_t in_stride, char* out,
                    std::ptrdiff_t out_stride, std::size_t begin, std::size_t end) noexcept;
// The two-argument form: both operands widened.
unsigned apply_half_binary(BinaryLoop loop_f32, const char* a, std::ptrdiff_t a_stride,
                           const char* b, std::ptrdiff_t b_stride, char* out,
                           std::ptrdiff_t out_stride, std::size_t begin, std::size_t end) noexcept;

// dtype longdouble, c64, c128 or clongdouble (complex only where unary_supported): element
// by element in order, so right for any overlap; the C++ library raises the flags itself.
void apply_unary_scalar(UnaryOp op, DType dtype, const char* in, std::ptrdiff_t in_stride,
                        char* out, std::ptrdiff_t out_stride, std::size_t n);
// The long double loop of a two-argument ufunc: scalar_libm::<libm>(a, b), in order.
void apply_binary_longdouble(BinaryOp op, const char* a, std::ptrdiff_t a_stride, const char* b,
                             std::ptrdiff_t b_stride, char* out, std::ptrdiff_t out_stride,
                             std::size_t n);

}  // namespace numfuse::core
