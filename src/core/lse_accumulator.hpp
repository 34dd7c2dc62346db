// The online logsumexp accumulator: a running maximum m and a sum of
// exp(x - m) that is rescaled whenever m grows. The scalar add / merge /
// finish rules live here once and are included by the CPU reductions
// (reduce/), whose kernels the VM's logsumexp stages also use (reduce/stream.hpp),
// and the CUDA kernels (src/cuda/lse_core.hpp): every function is NUMFUSE_HD
// (__host__ __device__ under nvcc). SIMD loops keep their batch form
// (arch/reduce_loops.hpp) and hand their lanes to these
// rules.
//
// `Math` supplies exp and log: StdMath (<cmath>) on the CPU, the device_math
// kernels on the GPU, so each side keeps its own, bit-reproducible results.
#pragma once

#include "device_math/common.hpp"

#if !defined(__CUDACC__)
#include <cmath>
#include <cstddef>
#include <limits>
#endif

namespace numfuse::core::lse {

// ------------------------------------------------------ (m, s, c) in T
// The compensated per-lane state of the CPU reductions (ReducePartial in
// reduce/kernel_table.hpp, whose comment states the conventions): the sum is
// (s + c) * exp(m), c holding the rounding errors of the additions.

// sum + error == a + b exactly (Knuth's TwoSum).
template <class T>
NUMFUSE_HD inline void two_sum(T a, T b, T& sum, T& error) noexcept {
    sum = a + b;
    const T b_part = sum - a;
    error = (a - (sum - b_part)) + (b - b_part);
}

// The rounding error of h = RN(x - m): x - m = h + lo exactly (TwoSum, six
// operations; finite where x, m and h are). V is T or a SIMD batch of T: the one
// double word of every shifted exp (exp_difference here and in
// arch/reduce_loops.hpp, the softmax kernels' in arch/softmax_exp.hpp).
template <class V>
NUMFUSE_HD inline V difference_error(const V& x, const V& m, const V& h) noexcept {
    const V x_part = h - x;
    return (x - (h - x_part)) + (-m - x_part);
}

// exp(x - m) with x - m carried as a double word hi + lo (the batch form is
// exp_difference in arch/reduce_loops.hpp); exp(-inf) = 0 and NaN pass
// through.
template <class Math, class T>
NUMFUSE_HD inline T exp_difference(T x, T m) noexcept {
    const T hi = x - m;
    if (!(hi - hi == T(0))) return Math::exp(hi);  // hi is not finite
    const T lo = difference_error(x, m, hi);
    const T e = Math::exp(hi);
    return e + e * lo;
}

#if !defined(__CUDACC__)
// exp / log of the C++ library (host code).
struct StdMath {
    template <class T>
    static T exp(T x) noexcept {
        return std::exp(x);
    }
    template <class T>
    static T log(T x) noexcept {
        return std::log(x);
    }
    // exp(x - m) for x < m, x - m a double word (the (m, k, s) rules' terms).
    template <class T>
    static T shifted(T x, T m) noexcept {
        return exp_difference<StdMath>(x, m);
    }
};
#endif

// The state for the union of two disjoint element sets; q is merged after
// p (order matters only for the rounding, and is always the chunk order).
// P is a struct of T members m, s, c.
template <class Math, class P>
NUMFUSE_HD inline P merge_compensated(const P& p, const P& q) noexcept {
    using T = decltype(p.m);
    const T m = q.m > p.m ? q.m : p.m;
    const T scale_p = exp_difference<Math>(p.m, m);
    const T scale_q = exp_difference<Math>(q.m, m);
    T sum, error;
    two_sum(p.s * scale_p, q.s * scale_q, sum, error);
    return {m, sum, error + p.c * scale_p + q.c * scale_q};
}

// ------------------------------------------------------ (m, k, s) in double
// The state of the CUDA kernels, in double for both input types (float32 runs of 1e8
// elements would lose digits in float): k counts the elements equal to the maximum m
// (their terms exp(0) = 1, exactly) and s sums the other terms exp(x - m) < 1, so the
// sum k + s keeps the other terms' total t to its own relative precision: where the
// result is small because one maximum dominates (log_softmax at that maximum is
// -log1p(t), logsumexp with m = 0 log1p(t)), one plain sum would lose all of t below
// 2^-53 (t ~ 1e-14 came out ~1 % off). Math::shifted(x, m) gives exp(x - m) for x < m
// to about 1 ULP (for float64 inputs x - m carried as a double word: a rounded x - m
// costs |x - m|/2 eps of the term). m = -inf is the empty state (k counts -inf
// elements, which add nothing). A NaN input makes s NaN (the result is NaN); +inf
// inputs make m = +inf (the result is +inf unless a NaN is present). (The CPU
// reductions' TwoSum-compensated (m, s, c) above costs the GPU's float64 pipes too much:
// 2.3x the time of float32 rows on an H200; here only t's own additions round, a few
// eps of t.)
struct LseState {
    double m;
    double k;
    double s;
};

NUMFUSE_HD inline double pos_inf() { return device_math::double_from_bits(0x7ff0000000000000ull); }
NUMFUSE_HD inline double neg_inf() { return device_math::double_from_bits(0xfff0000000000000ull); }
NUMFUSE_HD inline LseState lse_empty() { return {neg_inf(), 0.0, 0.0}; }

// Adds an element x <= st.m (one more at the maximum, or its term) and returns its
// term exp(x - m) (1 at the maximum).
template <class Math>
NUMFUSE_HD inline double lse_add_below(LseState& st, double x) {
    if (x == st.m) {
        st.k += 1.0;
        return 1.0;
    }
    const double term = Math::shifted(x, st.m);
    st.s += term;
    return term;
}

// Rescales the state to the larger maximum m > st.m: the old maximum's elements join
// the other terms.
template <class Math>
NUMFUSE_HD inline void lse_raise(LseState& st, double m) {
    st.s = (st.s + st.k) * Math::shifted(st.m, m);  // 0 while st.m = -inf
    st.k = 0.0;
    st.m = m;
}

// Folds one element (already widened to double) into the state.
template <class Math>
NUMFUSE_HD inline void lse_add(LseState& st, double x) {
    if (x > st.m) lse_raise<Math>(st, x);
    lse_add_below<Math>(st, x);
}

// The state of the union of two disjoint element sets (b's terms added after a's).
template <class Math>
NUMFUSE_HD inline LseState lse_combine(LseState a, LseState b) {
    if (b.m > a.m) {
        const LseState t = a;
        a = b;
        b = t;
    }
    // a.m >= b.m, or a NaN-free pair of -inf.
    if (b.m == a.m) return {a.m, a.k + b.k, a.s + b.s};
    return {a.m, a.k, a.s + (b.s + b.k) * Math::shifted(b.m, a.m)};
}

// log(k + s) for a finite positive sum: log(hi) + lo / hi for hi + lo = k + s exactly
// (TwoSum; the first-order term's relative error is below 2^-104).
template <class Math>
NUMFUSE_HD inline double lse_log_sum(const LseState& st) {
    double hi, lo;
    two_sum(st.k, st.s, hi, lo);
    return Math::log(hi) + lo / hi;
}

// m + log(k + s), rounded once to T: m = -inf (empty or all -inf) gives -inf,
// m = +inf gives +inf, a NaN s gives NaN.
template <class T, class Math>
NUMFUSE_HD inline T lse_result(LseState st) {
    if (st.m == neg_inf() || st.m == pos_inf()) {
        return static_cast<T>(st.s != st.s ? st.s : st.m);
    }
    return static_cast<T>(st.m + lse_log_sum<Math>(st));
}

#if !defined(__CUDACC__)
// ------------------------------------------------------ softmax's write parameters
// What softmax / log_softmax write for one group, from its merged (m, s, c) (the
// maximum, lowest() for a group of -inf only, and the compensated sum of
// exp(x - m)): softmax writes exp(x - m) * scale, log_softmax (x - shift) - param.
// The sum s + c is normalised in double (f32 parameters are then rounded once).
// SciPy's special values: NaN or +inf elements make the sum NaN, all -inf makes it
// 0; such a group is NaN, except log_softmax with +inf and no NaN: shift = +inf,
// param = 0 (NaN at the +inf elements, -inf elsewhere). has_nan() scans the group
// (log_softmax only, where x is still intact). The driver (reduce/softmax.cpp) and
// the row kernel (arch/softmax_loops.hpp) both take their parameters from here.
template <class T>
struct SoftmaxParameters {
    double scale;  // softmax: 1 / sum, NaN for a special group
    T shift;       // log_softmax: the maximum
    T param;       // log_softmax: log(sum)
};

template <class T, class HasNan>
SoftmaxParameters<T> softmax_parameters(bool log_softmax, T m, T s, T c,
                                        HasNan&& has_nan) noexcept {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    double hi, lo;
    two_sum(static_cast<double>(s), static_cast<double>(c), hi, lo);
    const bool normal = std::isfinite(hi) && hi > 0.0;
    if (!log_softmax) {
        return {normal ? 1.0 / hi : std::numeric_limits<double>::quiet_NaN(), nan, nan};
    }
    if (normal) return {0.0, m, static_cast<T>(std::log(hi) + lo / hi)};
    if (m == std::numeric_limits<T>::infinity() && !has_nan()) return {0.0, m, T(0)};
    return {0.0, nan, nan};
}
#endif

#if !defined(__CUDACC__)
// ------------------------------------------------------ the terms' argument rounding
// logsumexp's kernels (arch/reduce_loops.hpp: lse_term_exp, exp_kernel) take each term
// exp(x - m) from h = RN(x - m) = (x - m) - e, |e| <= u |x - m| (u = 2^-53; float32 lanes
// 2^-24): the term is off by the factor exp(-e), a relative error of about |e|, far from
// the maximum more than the kernel's own (|x - m| = 700: 350 eps). The sum S of the n
// terms t = exp(x - m) in (0, 1] then takes an absolute error of at most u sum t |ln t|
// (a term taken against a chunk's or lane's smaller maximum m' has |x - m'| <= |x - m|,
// and the rescales by exp(m' - m) carry m' - m as a double word), and f(t) = -t ln t is
// concave, so by Jensen sum f(t) <= n f(S / n) = S ln(n / S): log S is off by at most
// u ln(n / S) to first order, within u of the result m + log S where
// ln(n / S) <= |m + log S| -- most data (m >= 0 and n <= S^2; m >= 44). Where a maximum
// near 0 dominates, the result is small (e.g. [0, -30.123]: log1p(e^-30.123), 16 eps off
// before) and this returns true: the caller sums the group again by run_exp_sum
// (reduce/kernel_table.hpp), whose terms take x - m as a double word (within the exp
// kernel's own bound of exp(x - m)). softmax and log_softmax always sum that way:
// log_softmax at the maximum is -log S, for which this test fails on half the rows of
// 1000 normal(0, 3) values. sum is the group's s + c with m its maximum; false for a sum
// below 1 or not finite (special values, weights, empty groups).
inline bool argument_rounding_matters(double m, double sum, std::size_t n) noexcept {
    if (!(sum >= 1.0) || !(sum < pos_inf())) return false;
    const double count = static_cast<double>(n);
    if (m >= 0.0 && count <= sum * sum) return false;  // ln(n / S) <= ln S <= m + ln S
    return std::log(count / sum) > std::fabs(m + std::log(sum));
}
#endif

#if !defined(__CUDACC__)
// ------------------------------------------------------ a running value
// logaddexp's reduce and accumulate (arch/binary_loop.hpp): log(sum of exp) of the
// elements so far, one element at a time, the (m, s, c) state above in double (s + c:
// the sum of exp(x - m), c the TwoSum errors). After each element the value is within a
// few eps of the exact log-sum-exp of all elements so far, however many there are (a fold
// of logaddexp would add a rounding per element). m is NaN once a NaN was added.
struct RunningLse {
    double m;
    double s;
    double c;
};

inline RunningLse running_lse_start(double first) noexcept {
    if (first == neg_inf()) return {first, 0.0, 0.0};
    return {first, 1.0, 0.0};
}

inline void running_lse_add(RunningLse& st, double x) noexcept {
    if (x != x || st.m != st.m) {
        st.m = x + st.m;  // NaN from now on
        return;
    }
    if (x > st.m) {
        if (st.m == neg_inf() || x == pos_inf()) {
            st = {x, 1.0, 0.0};
            return;
        }
        const double scale = exp_difference<StdMath>(st.m, x);
        st.s *= scale;
        st.c *= scale;
        st.m = x;
        x = st.m;  // adds exp(0) = 1 below
    }
    if (x == neg_inf()) return;
    const double y = x == st.m ? 1.0 : exp_difference<StdMath>(x, st.m);
    double sum, error;
    two_sum(st.s, y, sum, error);
    st.s = sum;
    st.c += error;
}

inline double running_lse_value(const RunningLse& st) noexcept {
    if (st.m != st.m || st.m == neg_inf() || st.m == pos_inf()) return st.m;
    double hi, lo;
    two_sum(st.s, st.c, hi, lo);
    return st.m + (std::log(hi) + lo / hi);
}
#endif

}  // namespace numfuse::core::lse
