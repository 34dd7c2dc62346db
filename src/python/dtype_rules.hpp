// NumPy dtypes -> the expression engine's types: the one rule, shared by evaluate and
// compiled expressions (expr_conversion.cpp, on PyArray_Descr) and by the plan stages of
// the Dask back end (plan_info.cpp, on pybind11 dtypes), so all of them compile the same
// plan for the same arrays. Pure C++ on a dtype's kind character and element size.
#pragma once

#include <cstdint>

#include "expr/expr.hpp"

namespace numfuse::python {

// The type the engine computes an array of this dtype in, with numexpr's widening
// (8/16-bit integers -> int32, uint32 -> int64, float16 -> float32); byte strings
// ('S', non-empty) stay byte strings. False for the dtypes the engine has no type for:
// uint64 (no engine type holds every value), long double and its complex, str, objects,
// empty byte strings, ...
inline bool engine_type_of(char kind, std::int64_t size, expr::Type* type) noexcept {
    if (kind == 'b') {
        *type = expr::Type::b;
    } else if ((kind == 'i' || kind == 'u') && size <= 8 && !(kind == 'u' && size == 8)) {
        *type = size <= 2 || (kind == 'i' && size == 4) ? expr::Type::i : expr::Type::l;
    } else if (kind == 'f' && size <= 8) {
        *type = size <= 4 ? expr::Type::f : expr::Type::d;
    } else if (kind == 'c' && (size == 8 || size == 16)) {
        *type = size == 8 ? expr::Type::c : expr::Type::z;
    } else if (kind == 'S' && size > 0) {
        *type = expr::Type::s;  // compared element by element, never converted
    } else {
        return false;
    }
    return true;
}

// The NumPy dtype of an integer array before the engine widens it (InputSpec::int_dtype):
// none for the engine's own int32 and int64, and for other kinds.
inline expr::IntDtype int_dtype_of(char kind, std::int64_t size) noexcept {
    if (kind == 'i' && size == 1) return expr::IntDtype::int8;
    if (kind == 'i' && size == 2) return expr::IntDtype::int16;
    if (kind == 'u' && size == 1) return expr::IntDtype::uint8;
    if (kind == 'u' && size == 2) return expr::IntDtype::uint16;
    if (kind == 'u' && size == 4) return expr::IntDtype::uint32;
    return expr::IntDtype::none;
}

}  // namespace numfuse::python
