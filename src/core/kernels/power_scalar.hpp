// NumPy's integer and complex power, one element at a time: the VM's ** on integer and
// complex operands (arch/expr_arith.hpp, struct Pow) and the integer and complex loops of
// the numfuse.power / numfuse.float_power ufuncs (src/python/ufuncs.cpp) both call these,
// so that the two give the same bits. Level-independent (no xsimd): plain C++.
//
// Contract
//   integer_power(a, b), b >= 0 (callers refuse negative exponents first, as NumPy does:
//   "Integers to negative integer powers are not allowed."): a**b wrapping modulo 2^bits
//   as NumPy's integer loops (binary powering in unsigned arithmetic).
//   complex_power(a, b): NumPy's nc_pow: 1 for b == 0; for a == 0, 0 where b is real and
//   positive, else NaN + NaN j; exact repeated multiplication (the textbook product) for
//   real integral b with |b| < 100 (then a reciprocal by Smith's division for b < 0); the
//   C++ library's pow otherwise.
//   complex_multiply / complex_divide: the textbook product (std::complex's operator*
//   adds C99 Annex G inf/NaN recovery that NumPy does not do) and Smith's division, as
//   NumPy's complex loops compute them.
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

namespace numfuse::kernels {

template <class T>
T integer_power(T a, T b) noexcept {
    static_assert(std::is_integral_v<T>, "integer_power takes integers");
    // Unsigned arithmetic at least as wide as unsigned int: narrower types would promote
    // to (signed) int, whose overflow is undefined.
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    constexpr U mask = static_cast<U>(static_cast<std::make_unsigned_t<T>>(-1));
    U result = 1;
    U base = static_cast<U>(a) & mask;
    auto e = static_cast<U>(static_cast<std::make_unsigned_t<T>>(b));
    while (e) {
        if (e & 1u) result = (result * base) & mask;
        base = (base * base) & mask;
        e >>= 1;
    }
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(result));
}

template <class T>
std::complex<T> complex_multiply(std::complex<T> a, std::complex<T> b) noexcept {
    return std::complex<T>(a.real() * b.real() - a.imag() * b.imag(),
                           a.real() * b.imag() + a.imag() * b.real());
}

template <class T>
std::complex<T> complex_divide(std::complex<T> a, std::complex<T> b) noexcept {
    const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    const T abs_br = std::fabs(br), abs_bi = std::fabs(bi);
    if (abs_br >= abs_bi) {
        if (abs_br == 0 && abs_bi == 0) return {ar / abs_br, ai / abs_bi};
        const T rat = bi / br;
        const T scl = T(1) / (br + bi * rat);
        return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
    }
    const T rat = br / bi;
    const T scl = T(1) / (bi + br * rat);
    return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}

template <class T>
std::complex<T> complex_power(std::complex<T> a, std::complex<T> b) noexcept {
    using C = std::complex<T>;
    if (b.real() == 0 && b.imag() == 0) return C(1, 0);
    if (a.real() == 0 && a.imag() == 0) {
        if (b.real() > 0 && b.imag() == 0) return C(0, 0);
        const T nan = std::numeric_limits<T>::quiet_NaN();
        return C(nan, nan);
    }
    if (b.imag() == 0 && b.real() == std::trunc(b.real()) && std::fabs(b.real()) < 100) {
        long n = static_cast<long>(b.real());
        const bool negative = n < 0;
        if (negative) n = -n;
        C result(1, 0), base = a;
        while (n) {
            if (n & 1) result = complex_multiply(result, base);
            base = complex_multiply(base, base);
            n >>= 1;
        }
        return negative ? complex_divide(C(1, 0), result) : result;
    }
    return std::pow(a, b);
}

}  // namespace numfuse::kernels
