// See scalar_loops.hpp for the contracts.
#include "scalar_loops.hpp"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "half.hpp"
#include "scalar_libm.hpp"

namespace numfuse::core {
namespace {

// float16 <-> float32: the compiler's _Float16 where it has one, else the bit
// conversions of half.hpp (the same results; see there).
#ifdef NUMFUSE_HAVE_FLOAT16
inline float load_half(const char* p) noexcept {
    _Float16 h;
    std::memcpy(&h, p, sizeof h);
    return static_cast<float>(h);
}
inline std::uint16_t to_half_bits(float value) noexcept {
    const auto h = static_cast<_Float16>(value);
    std::uint16_t bits;
    std::memcpy(&bits, &h, sizeof bits);
    return bits;
}
#else
inline float load_half(const char* p) noexcept {
    std::uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return half_to_float(bits);
}
inline std::uint16_t to_half_bits(float value) noexcept { return float_to_half(value); }
#endif

unsigned half_conversion_flags(float value, std::uint16_t rounded) noexcept {
    const float back = half_to_float(rounded);
    if (std::isfinite(value) && std::isinf(back)) return fp_overflow;
    if (value != 0.0f && std::fabs(back) < 0x1p-14f && back != value) return fp_underflow;
    return fp_none;
}

// The long double and complex loops: scalar_libm::<libm column> of each ufunc row;
// complex only where the type rule has complex opcodes (unary_supported keeps
// the others from being called).
template <class T, TypeRule Rule, class F>
T scalar_call(const T& x, F f) {
    if constexpr (std::is_floating_point<T>::value || has_complex(Rule)) {
        return f(x);
    } else {
        return x;
    }
}

template <class T>
T scalar_unary(UnaryOp op, const T& x) {
    switch (op) {
        // clang-format off
#define NUMFUSE_SCALAR_CASE(name, arity, types, Functor, libm, ufunc, gpu, summary)      \
        NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_1_##arity(case UnaryOp::name:    \
            return scalar_call<T, TypeRule::types>(x, [](const auto& v) { return scalar_libm::libm(v); });))
        NUMFUSE_FUNCTIONS(NUMFUSE_SCALAR_CASE)
#undef NUMFUSE_SCALAR_CASE
        // clang-format on
    }
    return x;
}

template <class T>
void apply_scalar(UnaryOp op, const char* in, std::ptrdiff_t in_stride, char* out,
                  std::ptrdiff_t out_stride, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        T x;
        std::memcpy(&x, in + static_cast<std::ptrdiff_t>(i) * in_stride, sizeof x);
        const T y = scalar_unary(op, x);
        std::memcpy(out + static_cast<std::ptrdiff_t>(i) * out_stride, &y, sizeof y);
    }
}

}  // namespace

unsigned apply_half(UnaryLoop loop_f32, const char* in, std::ptrdiff_t in_stride, char* out,
                    std::ptrdiff_t out_stride, std::size_t begin, std::size_t end) noexcept {
    alignas(64) float block[half_block];
    unsigned flags = fp_none;
    for (std::size_t start = begin; start < end; start += half_block) {
        const std::size_t count = end - start < half_block ? end - start : half_block;
        for (std::size_t k = 0; k < count; ++k) {
            block[k] = load_half(in + static_cast<std::ptrdiff_t>(start + k) * in_stride);
        }
        flags |= loop_f32(reinterpret_cast<const char*>(block), sizeof(float),
                          reinterpret_cast<char*>(block), sizeof(float), count);
        for (std::size_t k = 0; k < count; ++k) {
            const std::uint16_t h = to_half_bits(block[k]);
            flags |= half_conversion_flags(block[k], h);
            std::memcpy(out + static_cast<std::ptrdiff_t>(start + k) * out_stride, &h, sizeof h);
        }
    }
    return flags;
}

// Two-argument half precision: both operands widened into float32 blocks.
unsigned apply_half_binary(BinaryLoop loop_f32, const char* a, std::ptrdiff_t a_stride,
                           const char* b, std::ptrdiff_t b_stride, char* out,
                           std::ptrdiff_t out_stride, std::size_t begin, std::size_t end) noexcept {
    alignas(64) float block_a[half_block];
    alignas(64) float block_b[half_block];
    unsigned flags = fp_none;
    for (std::size_t start = begin; start < end; start += half_block) {
        const std::size_t count = end - start < half_block ? end - start : half_block;
        for (std::size_t k = 0; k < count; ++k) {
            const auto at = static_cast<std::ptrdiff_t>(start + k);
            block_a[k] = load_half(a + at * a_stride);
            block_b[k] = load_half(b + at * b_stride);
        }
        flags |= loop_f32(reinterpret_cast<const char*>(block_a), sizeof(float),
                          reinterpret_cast<const char*>(block_b), sizeof(float),
                          reinterpret_cast<char*>(block_a), sizeof(float), count);
        for (std::size_t k = 0; k < count; ++k) {
            const std::uint16_t h = to_half_bits(block_a[k]);
            flags |= half_conversion_flags(block_a[k], h);
            std::memcpy(out + static_cast<std::ptrdiff_t>(start + k) * out_stride, &h, sizeof h);
        }
    }
    return flags;
}

void apply_unary_scalar(UnaryOp op, DType dtype, const char* in, std::ptrdiff_t in_stride,
                        char* out, std::ptrdiff_t out_stride, std::size_t n) {
    switch (dtype) {
        case DType::longdouble:
            apply_scalar<long double>(op, in, in_stride, out, out_stride, n);
            return;
        case DType::c64:
            apply_scalar<std::complex<float>>(op, in, in_stride, out, out_stride, n);
            return;
        case DType::c128:
            apply_scalar<std::complex<double>>(op, in, in_stride, out, out_stride, n);
            return;
        case DType::clongdouble:
            apply_scalar<std::complex<long double>>(op, in, in_stride, out, out_stride, n);
            return;
        default: return;
    }
}

void apply_binary_longdouble(BinaryOp op, const char* a, std::ptrdiff_t a_stride, const char* b,
                             std::ptrdiff_t b_stride, char* out, std::ptrdiff_t out_stride,
                             std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        long double x, y;
        std::memcpy(&x, a + k * a_stride, sizeof x);
        std::memcpy(&y, b + k * b_stride, sizeof y);
        long double r = x;
        switch (op) {
            // clang-format off
#define NUMFUSE_BINARY_SCALAR_CASE(name, arity, types, Functor, libm, ufunc, gpu, summary) \
            NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_2_##arity(                  \
                case BinaryOp::name: r = scalar_libm::libm(x, y); break;))
            NUMFUSE_FUNCTIONS(NUMFUSE_BINARY_SCALAR_CASE)
#undef NUMFUSE_BINARY_SCALAR_CASE
            // clang-format on
        }
        std::memcpy(out + k * out_stride, &r, sizeof r);
    }
}

}  // namespace numfuse::core
