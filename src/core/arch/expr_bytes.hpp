// The expression VM's byte-string operations (NumPy's S dtype): comparisons and
// contains(), and their loop over registers of fixed-width elements.
// Part of arch/expr_ops.hpp: included only by the per-level translation units.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "expr/kernel_table.hpp"

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including expr_bytes.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops {

// ------------------------------------------------------------------ byte strings
// NumPy's order of S elements: unsigned bytes, lexicographic, the shorter
// operand padded with NULs (so trailing NULs are padding: b"abc" equals
// b"abc\0"). Returns <0, 0 or >0.
inline int bytes_compare(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
    const std::size_t common = na < nb ? na : nb;
    const int r = std::memcmp(a, b, common);
    if (r != 0) return r;
    for (std::size_t k = common; k < na; ++k) {
        if (a[k] != 0) return 1;
    }
    for (std::size_t k = common; k < nb; ++k) {
        if (b[k] != 0) return -1;
    }
    return 0;
}

// Length without the trailing NULs (NumPy's value of an S element).
inline std::size_t bytes_length(const char* a, std::size_t n) noexcept {
    while (n > 0 && a[n - 1] == 0) --n;
    return n;
}

struct BytesLess {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) < 0;
    }
};
struct BytesLessEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) <= 0;
    }
};
struct BytesGreater {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) > 0;
    }
};
struct BytesGreaterEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) >= 0;
    }
};
struct BytesEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) == 0;
    }
};
struct BytesNotEqual {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        return bytes_compare(a, na, b, nb) != 0;
    }
};
// contains(haystack, needle): the needle's value occurs in the haystack's
// value (both without their trailing NULs; interior NULs are data, as in
// Python's `needle in haystack` and np.char.find). The empty needle occurs
// everywhere.
struct BytesContains {
    static bool apply(const char* a, std::size_t na, const char* b, std::size_t nb) noexcept {
        const std::string_view haystack(a, bytes_length(a, na));
        const std::string_view needle(b, bytes_length(b, nb));
        return haystack.find(needle) != std::string_view::npos;
    }
};

template <class F>
struct is_bytes_op : std::false_type {};
template <>
struct is_bytes_op<BytesLess> : std::true_type {};
template <>
struct is_bytes_op<BytesLessEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesGreater> : std::true_type {};
template <>
struct is_bytes_op<BytesGreaterEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesNotEqual> : std::true_type {};
template <>
struct is_bytes_op<BytesContains> : std::true_type {};

// out[k] = F(a element k, b element k): registers of n elements of
// widths.a / widths.b bytes, `widths` the instruction's w constant.
template <class F>
unsigned bytes_kernel(char* out_bytes, const char* a, const char* b, const char* widths,
                      std::size_t n) noexcept {
    expr::BytesWidths w;
    std::memcpy(&w, widths, sizeof w);
    bool* out = reinterpret_cast<bool*>(out_bytes);
    for (std::size_t k = 0; k < n; ++k) {
        out[k] = F::apply(a + k * w.a, w.a, b + k * w.b, w.b);
    }
    return expr::runtime_ok;
}
}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE::expr_ops
