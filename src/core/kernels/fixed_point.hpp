// Multi-limb fixed-point fractions: exact integer arithmetic with a known error per
// operation, for the rare paths that need more than the ~106 bits of a double-double pair
// (logaddexp's results next to zero, logpair.hpp) and, at compile time, for the constants
// and tables of that function's double-double path (ln2 split for Cody-Waite reduction,
// 2^(j/32) as pairs, inverse factorials), so that none of them is typed in by hand.
//
// Contract
//   Fraction<N> holds v = sum_i w[i] 2^(-64 (i + 1)), a value in [0, 1) on a grid of
//   2^(-64 N) ("one unit"). Every operation is constexpr and scalar. add, sub and the
//   shifts are exact within the grid; mul, mul_decomposed, div_small and shift_right truncate
//   (error below one unit, toward zero). The caller keeps every result below 1 (add and
//   shift_left drop what carries out of the top limb) and sub's result non-negative.
//   The functions are static (internal linkage): each instruction-set level's translation
//   unit keeps its own copy, compiled with its own flags, so the linker can never hand the
//   AVX-512 copy to the SSE2 path (the reason the kernels are templates on the
//   architecture and the loops live in per-level namespaces). Constants are plain data.
//   Needs unsigned __int128 (GCC, Clang: every compiler numfuse supports).
#pragma once

#include <cstddef>
#include <cstdint>

namespace numfuse::kernels::fixed {

__extension__ typedef unsigned __int128 u128;

template <int N>
struct Fraction {
    std::uint64_t w[N] = {};  // most significant limb first
};

// 2^e as a double for e in [-1074, 1023], exact (square-and-multiply on powers of two).
static constexpr double pow2(int e) noexcept {
    double result = 1.0;
    double base = e < 0 ? 0.5 : 2.0;
    unsigned k = static_cast<unsigned>(e < 0 ? -e : e);
    // 2^-1074 = 2^-1024 2^-50: keep every partial product a representable power of two.
    while (k != 0) {
        if (k & 1u) result *= base;
        k >>= 1;
        if (k != 0) base *= base;
    }
    return result;
}

// d = mantissa 2^exponent with mantissa < 2^53 an integer and, for normal d, >= 2^52;
// d finite and > 0. (Binary search with exact power-of-two comparisons: constexpr without
// bit casts.)
struct Decomposed {
    std::uint64_t mantissa;
    int exponent;
};
static constexpr Decomposed decompose(double d) noexcept {
    int lo = -1074, hi = 1023;  // 2^lo <= d < 2^(hi + 1)
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (d >= pow2(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    const int exponent = (lo - 52 < -1074 ? -1074 : lo - 52);
    // d / 2^exponent is an integer below 2^53: exact in two steps when 2^-exponent overflows.
    const int half = -exponent / 2;
    const double scaled = (d * pow2(half)) * pow2(-exponent - half);
    return {static_cast<std::uint64_t>(scaled), exponent};
}

template <int N>
static constexpr bool is_zero(const Fraction<N>& a) noexcept {
    for (int i = 0; i < N; ++i) {
        if (a.w[i] != 0) return false;
    }
    return true;
}

// -1, 0, 1 as a < b, a == b, a > b.
template <int N>
static constexpr int compare(const Fraction<N>& a, const Fraction<N>& b) noexcept {
    for (int i = 0; i < N; ++i) {
        if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
    }
    return 0;
}

template <int N>
static constexpr Fraction<N> add(const Fraction<N>& a, const Fraction<N>& b) noexcept {
    Fraction<N> r;
    std::uint64_t carry = 0;
    for (int i = N - 1; i >= 0; --i) {
        const u128 s = u128(a.w[i]) + b.w[i] + carry;
        r.w[i] = static_cast<std::uint64_t>(s);
        carry = static_cast<std::uint64_t>(s >> 64);
    }
    return r;
}

template <int N>
static constexpr Fraction<N> sub(const Fraction<N>& a, const Fraction<N>& b) noexcept {
    Fraction<N> r;
    std::uint64_t borrow = 0;
    for (int i = N - 1; i >= 0; --i) {
        const u128 d = u128(a.w[i]) - b.w[i] - borrow;
        r.w[i] = static_cast<std::uint64_t>(d);
        borrow = static_cast<std::uint64_t>(d >> 64) != 0 ? 1 : 0;
    }
    return r;
}

// a 2^-bits, truncated.
template <int N>
static constexpr Fraction<N> shift_right(const Fraction<N>& a, unsigned bits) noexcept {
    Fraction<N> r;
    const unsigned limbs = bits / 64, rest = bits % 64;
    for (int i = N - 1; i >= 0; --i) {
        const int from = i - static_cast<int>(limbs);
        if (from < 0) continue;
        std::uint64_t v = a.w[from] >> rest;
        if (rest != 0 && from >= 1) v |= a.w[from - 1] << (64 - rest);
        r.w[i] = v;
    }
    return r;
}

// a 2^bits (the caller keeps it below 1).
template <int N>
static constexpr Fraction<N> shift_left(const Fraction<N>& a, unsigned bits) noexcept {
    Fraction<N> r;
    const unsigned limbs = bits / 64, rest = bits % 64;
    for (int i = 0; i < N; ++i) {
        const int from = i + static_cast<int>(limbs);
        if (from >= N) continue;
        std::uint64_t v = a.w[from] << rest;
        if (rest != 0 && from + 1 < N) v |= a.w[from + 1] >> (64 - rest);
        r.w[i] = v;
    }
    return r;
}

// a b, the top N limbs of the exact product (truncated: error below one unit).
template <int N>
static constexpr Fraction<N> mul(const Fraction<N>& a, const Fraction<N>& b) noexcept {
    std::uint64_t p[2 * N] = {};
    for (int i = N - 1; i >= 0; --i) {
        std::uint64_t carry = 0;
        for (int j = N - 1; j >= 0; --j) {
            const u128 t = u128(a.w[i]) * b.w[j] + p[i + j + 1] + carry;
            p[i + j + 1] = static_cast<std::uint64_t>(t);
            carry = static_cast<std::uint64_t>(t >> 64);
        }
        p[i] = carry;
    }
    Fraction<N> r;
    for (int i = 0; i < N; ++i) r.w[i] = p[i];
    return r;
}

// a k for a small integer k: the integer part goes to `whole`, the fraction is returned.
template <int N>
static constexpr Fraction<N> mul_small(const Fraction<N>& a, std::uint64_t k,
                                       std::uint64_t& whole) noexcept {
    Fraction<N> r;
    std::uint64_t carry = 0;
    for (int i = N - 1; i >= 0; --i) {
        const u128 t = u128(a.w[i]) * k + carry;
        r.w[i] = static_cast<std::uint64_t>(t);
        carry = static_cast<std::uint64_t>(t >> 64);
    }
    whole = carry;
    return r;
}

// (whole + a) / q for an integer q >= 1 with whole < q, truncated.
template <int N>
static constexpr Fraction<N> div_small(const Fraction<N>& a, std::uint64_t q,
                                       std::uint64_t whole = 0) noexcept {
    Fraction<N> r;
    std::uint64_t rem = whole;
    for (int i = 0; i < N; ++i) {
        const u128 t = (u128(rem) << 64) | a.w[i];
        r.w[i] = static_cast<std::uint64_t>(t / q);
        rem = static_cast<std::uint64_t>(t % q);
    }
    return r;
}

// d in [0, 1) as a fraction: exact when d's last bit lies on the grid, else truncated.
template <int N>
static constexpr Fraction<N> from_double(double d) noexcept {
    if (!(d > 0.0)) return Fraction<N>{};
    const Decomposed x = decompose(d);
    // mantissa 2^exponent = mantissa 2^shift units.
    const int shift = x.exponent + 64 * N;
    Fraction<N> m;
    m.w[N - 1] = x.mantissa;
    return shift >= 0 ? shift_left(m, static_cast<unsigned>(shift))
                      : shift_right(m, static_cast<unsigned>(-shift));
}

// a d for d = x.mantissa 2^x.exponent in [0, 1) (decompose), truncated: a times the
// mantissa (an integer part `whole` and a fraction), then a right shift by -exponent >= 53.
template <int N>
static constexpr Fraction<N> mul_decomposed(const Fraction<N>& a, const Decomposed& x) noexcept {
    if (x.mantissa == 0) return Fraction<N>{};
    std::uint64_t whole = 0;
    const Fraction<N> frac = mul_small(a, x.mantissa, whole);
    const unsigned bits = static_cast<unsigned>(-x.exponent);
    Fraction<N> high;  // whole 2^-64; whole < 2^53 <= 2^bits, so whole 2^-bits < 1
    high.w[0] = whole;
    high = bits >= 64 ? shift_right(high, bits - 64) : shift_left(high, 64 - bits);
    return add(shift_right(frac, bits), high);
}

// The value's top `bits` significant bits (1 <= bits <= 53) as a double, truncated, and the
// fraction they leave; 0 for 0. Exact: the result is v_top, with v = v_top + remainder.
template <int N>
struct SplitTop {
    double top;
    Fraction<N> remainder;
};
template <int N>
static constexpr SplitTop<N> split_top(const Fraction<N>& a, int bits) noexcept {
    int limb = 0;
    while (limb < N && a.w[limb] == 0) ++limb;
    if (limb == N) return {0.0, a};
    int lead = 63;  // the leading 1's position in its limb
    while (((a.w[limb] >> lead) & 1u) == 0) --lead;
    // The leading bit has weight 2^-(64 limb + 64 - lead); collect `bits` bits from there.
    const int first = 64 * limb + (63 - lead);  // bit index from the point, 0 = 2^-1
    std::uint64_t top = 0;
    Fraction<N> rest = a;
    for (int k = 0; k < bits; ++k) {
        const int index = first + k;
        if (index >= 64 * N) {
            top <<= 1;
            continue;
        }
        const int l = index / 64, b = 63 - index % 64;
        const std::uint64_t bit = (a.w[l] >> b) & 1u;
        top = (top << 1) | bit;
        rest.w[l] &= ~(std::uint64_t(1) << b);
    }
    // top's last bit has weight 2^-(first + bits).
    return {static_cast<double>(top) * pow2(-(first + bits)), rest};
}

// v = hi + lo + remainder with hi the top 53 significant bits, lo the next 53 (both
// truncated): |v - hi - lo| < 2^-105 v.
struct Pair {
    double hi, lo;
};
template <int N>
static constexpr Pair to_pair(const Fraction<N>& a) noexcept {
    const SplitTop<N> h = split_top(a, 53);
    const SplitTop<N> l = split_top(h.remainder, 53);
    return {h.top, l.top};
}

// ln 2 = sum_{k >= 1} 1 / (k 2^k), computed with a guard limb: error below one unit.
template <int N>
static constexpr Fraction<N> ln2() noexcept {
    constexpr int G = N + 1;
    Fraction<G> sum;
    for (int k = 1; k <= 64 * G; ++k) {
        Fraction<G> term;  // 2^-k
        term.w[(k - 1) / 64] = std::uint64_t(1) << (63 - (k - 1) % 64);
        sum = add(sum, div_small(term, static_cast<std::uint64_t>(k)));
    }
    Fraction<N> r;
    for (int i = 0; i < N; ++i) r.w[i] = sum.w[i];
    return r;
}

// 1/n! for n >= 2 (1/2 exactly, then divisions: error below n units of the guard limb).
template <int N>
static constexpr Fraction<N> inverse_factorial(int n) noexcept {
    Fraction<N + 1> f;
    f.w[0] = std::uint64_t(1) << 63;  // 1/2!
    for (int k = 3; k <= n; ++k) f = div_small(f, static_cast<std::uint64_t>(k));
    Fraction<N> r;
    for (int i = 0; i < N; ++i) r.w[i] = f.w[i];
    return r;
}

// e^x - 1 for x in [0, ln 2) by its Taylor series (compile-time use: no argument
// reduction; terms until they vanish, each truncated).
template <int N>
static constexpr Fraction<N> expm1_series(const Fraction<N>& x) noexcept {
    Fraction<N> sum = x, term = x;
    for (std::uint64_t k = 2; !is_zero(term); ++k) {
        term = div_small(mul(term, x), k);
        sum = add(sum, term);
    }
    return sum;
}

}  // namespace numfuse::kernels::fixed
