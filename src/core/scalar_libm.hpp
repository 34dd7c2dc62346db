// The scalar form of every function of the table (functions.hpp): scalar_libm::<libm column>.
//
// Found through the two using-directives: the C++ library's functions, and the forms it
// lacks that a kernel header defines beside its kernel, in kernels::scalar_forms (NumPy's
// complex exp2 in kernels/exp2.hpp): a function whose complex form the C++ library lacks
// brings that form with its kernel, and nothing here changes. Declared here: the forms
// of scipy.special.expit, np.logaddexp's and np.logaddexp2's long double loops, and NumPy's
// complex log1p, expm1, log2 and log10 (the C++ library has only the real ones; NumPy's
// log10(z) is log(z) log10(e), which rounds unlike std::log10's log(z) / ln 10), each with
// a using-declaration of the C++ library's real form beside it (a name declared here is
// not looked up through the directives). One definition for every user: the ufuncs' long
// double and complex loops (scalar_loops.cpp) and the expression VM's complex and scalar
// paths (arch/expr_math.hpp), so a ufunc and evaluate give the same bits.
//
// Everything here is a template in an unnamed namespace, on purpose: the per-level units
// (arch/sse2.cpp, avx2_fma.cpp, avx512.cpp) include it compiled with their own instruction
// sets, and an inline or template definition with external linkage would be one symbol for
// the whole program, of which the linker may keep the AVX-512 copy for the baseline caller.
// Internal linkage gives each unit its own copy. (-ffp-contract=off makes the copies compute
// the same bits.)
#pragma once

#include <cmath>
#include <complex>
#include <type_traits>

// The kernel headers that hold forms of kernels::scalar_forms.
#include "kernels/exp2.hpp"

namespace numfuse::kernels::scalar_forms {}  // namespace numfuse::kernels::scalar_forms

namespace numfuse::core::scalar_libm {
namespace {
// Inside the unnamed namespace: qualified lookup of scalar_libm::log10 stops at the
// overloads below and never weighs std::log10(std::complex) against them.
using namespace std;
using namespace ::numfuse::kernels::scalar_forms;

// scipy.special.expit: 1 / (1 + e^-x), and e^x / (1 + e^x) below 0 (no overflow of e^-x).
template <class T>
T expit(const T& x) {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
}

using std::cbrt;
using std::expm1;
using std::log1p;
using std::log2;
template <class T>
std::complex<T> log1p(const std::complex<T>& z) {
    const T l = std::hypot(z.real() + T(1), z.imag());
    return {std::log(l), std::atan2(z.imag(), z.real() + T(1))};
}
template <class T>
std::complex<T> expm1(const std::complex<T>& z) {
    const T s = std::sin(z.imag() / T(2));
    return {std::expm1(z.real()) * std::cos(z.imag()) - T(2) * s * s,
            std::exp(z.real()) * std::sin(z.imag())};
}
template <class T>
std::complex<T> log2(const std::complex<T>& z) {
    return std::log(z) * T(1.442695040888963407359924681001892137L);
}
template <class T, class = std::enable_if_t<std::is_floating_point<T>::value>>
T log10(T x) {
    return std::log10(x);
}
template <class T>
std::complex<T> log10(const std::complex<T>& z) {
    return std::log(z) * T(0.434294481903251827651128918916605082L);
}

// np.logaddexp's long double loop (npy_logaddexpl).
template <class T>
T logaddexp(const T& a, const T& b) {
    if (a == b) return a + T(0.693147180559945309417232121458176568L);
    const T d = a - b;
    if (d > T(0)) return a + std::log1p(std::exp(-d));
    if (d <= T(0)) return b + std::log1p(std::exp(d));
    return d;  // NaN
}

// np.logaddexp2's long double loop (npy_logaddexp2l: log2_1p(y) = log2(e) log1p(y)).
template <class T>
T logaddexp2(const T& a, const T& b) {
    const T log2e = T(1.442695040888963407359924681001892137L);
    if (a == b) return a + T(1);
    const T d = a - b;
    if (d > T(0)) return a + log2e * std::log1p(std::exp2(-d));
    if (d <= T(0)) return b + log2e * std::log1p(std::exp2(d));
    return d;  // NaN
}

}  // namespace
}  // namespace numfuse::core::scalar_libm
