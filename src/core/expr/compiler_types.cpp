// The compiler's types pass: the engine's element types, opcode names, and
// NumPy's promotion rules (see compiler_internal.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "expr/compiler_internal.hpp"

namespace numfuse::expr {

// ------------------------------------------------------------------ type info
std::size_t type_size(Type t) noexcept {
    static constexpr std::size_t sizes[] = {1, 4, 8, 4, 8, 8, 16, 0, sizeof(BytesWidths)};
    return sizes[static_cast<int>(t)];
}
char type_letter(Type t) noexcept { return "bilfdczsw"[static_cast<int>(t)]; }
const char* type_name(Type t) noexcept {
    static const char* const names[] = {"bool",       "int32",   "int64",
                                        "float32",    "float64", "complex64",
                                        "complex128", "bytes",   "bytes widths"};
    return names[static_cast<int>(t)];
}
bool is_integer(Type t) noexcept { return t == Type::i || t == Type::l; }
bool is_float(Type t) noexcept { return t == Type::f || t == Type::d; }
bool is_complex(Type t) noexcept { return t == Type::c || t == Type::z; }

const char* opcode_name(Opcode op) noexcept {
    static const char* const names[] = {
#define NUMFUSE_EXPR_NAME(name, ...) #name,
        NUMFUSE_EXPR_OPCODES(NUMFUSE_EXPR_NAME)
#undef NUMFUSE_EXPR_NAME
    };
    const int k = static_cast<int>(op);
    return k < opcode_count ? names[k] : "invalid";
}

Opcode find_opcode(const std::string& name) noexcept {
    static const std::unordered_map<std::string, Opcode> table = [] {
        std::unordered_map<std::string, Opcode> map;
        for (int k = 0; k < opcode_count; ++k) {
            map.emplace(opcode_name(static_cast<Opcode>(k)), static_cast<Opcode>(k));
        }
        return map;
    }();
    const auto found = table.find(name);
    return found == table.end() ? Opcode::count : found->second;
}

const char* int_dtype_name(IntDtype dtype) noexcept {
    switch (dtype) {
        case IntDtype::none: break;
        case IntDtype::int8: return "int8";
        case IntDtype::uint8: return "uint8";
        case IntDtype::int16: return "int16";
        case IntDtype::uint16: return "uint16";
        case IntDtype::int32: return "int32";
        case IntDtype::uint32: return "uint32";
        case IntDtype::int64: return "int64";
    }
    return "none";
}

int python_int_class(PyIntRange range, std::int64_t value) noexcept {
    if (range == PyIntRange::unknown) return -1;
    return static_cast<int>(detail::int_class_of(range, value));
}

const char* reduce_name(ReduceKind kind) noexcept {
    switch (kind) {
        case ReduceKind::none: return "none";
        case ReduceKind::sum: return "sum";
        case ReduceKind::prod: return "prod";
        case ReduceKind::min: return "min";
        case ReduceKind::max: return "max";
        case ReduceKind::mean: return "mean";
        case ReduceKind::logsumexp: return "logsumexp";
    }
    return "unknown";
}

namespace detail {

void type_error(const std::string& message, int column) {
    throw ExprError(ErrorKind::type, message, column);
}

void unsupported_error(const std::string& message, int column) {
    throw ExprError(ErrorKind::unsupported, message, column);
}

Kind kind_of(Type t) noexcept {
    if (t == Type::b) return Kind::boolean;
    if (is_integer(t)) return Kind::integer;
    if (is_float(t)) return Kind::real;
    return Kind::complex;
}

// NumPy's promotion table restricted to the engine's types.
Type promote_strong(Type a, Type b) noexcept {
    if (a == b) return a;
    if (a == Type::b) return b;
    if (b == Type::b) return a;
    const Kind ka = kind_of(a), kb = kind_of(b);
    if (ka == Kind::integer && kb == Kind::integer) return Type::l;
    if (ka == Kind::real && kb == Kind::real) return Type::d;
    if (ka == Kind::complex && kb == Kind::complex) return Type::z;
    // Mixed kinds: the wider kind, big enough for the other operand's precision.
    auto wide = [](Type t) { return t == Type::l || t == Type::i || t == Type::d || t == Type::z; };
    if (ka == Kind::complex || kb == Kind::complex) {
        const Type other = ka == Kind::complex ? b : a;
        const Type cplx = ka == Kind::complex ? a : b;
        return (cplx == Type::z || (other != Type::f && wide(other))) ? Type::z : Type::c;
    }
    // real with integer
    const Type real = ka == Kind::real ? a : b;
    (void)real;
    return Type::d;  // int32/int64 with float32 or float64 -> float64
}

// ------------------------------------------------------------------ Python ints
IntClass int_class_of(std::int64_t value) noexcept {
    // The first value of each class from from_int64_min on, in order.
    static constexpr std::int64_t starts[] = {INT64_MIN,
                                              -(std::int64_t{1} << 31),
                                              -(1 << 15),
                                              -(1 << 7),
                                              0,
                                              1 << 7,
                                              1 << 8,
                                              1 << 15,
                                              1 << 16,
                                              std::int64_t{1} << 31,
                                              std::int64_t{1} << 32};
    int k = 0;
    while (k + 1 < static_cast<int>(sizeof starts / sizeof *starts) && value >= starts[k + 1]) {
        ++k;
    }
    return static_cast<IntClass>(static_cast<int>(IntClass::from_int64_min) + k);
}

IntClass int_class_of(PyIntRange range, std::int64_t value) noexcept {
    switch (range) {
        case PyIntRange::unknown: return IntClass::none;
        case PyIntRange::int64: return int_class_of(value);
        case PyIntRange::above_int64: return IntClass::above_int64;
        case PyIntRange::below_int64: return IntClass::below_int64;
        case PyIntRange::above_float64: return IntClass::above_float64;
        case PyIntRange::below_float64: return IntClass::below_float64;
    }
    return IntClass::none;
}

IntClass big_int_class(double rounded) noexcept {
    if (std::isinf(rounded)) return rounded > 0 ? IntClass::above_float64 : IntClass::below_float64;
    return rounded > 0 ? IntClass::above_int64 : IntClass::below_int64;
}

bool is_big_int_class(IntClass c) noexcept {
    return c == IntClass::below_float64 || c == IntClass::below_int64 || c == IntClass::int64_end ||
           c == IntClass::above_int64 || c == IntClass::above_float64;
}

bool int_class_fits(IntClass c, IntDtype dtype) noexcept {
    IntClass first = IntClass::from_int64_min, last = IntClass::from_uint32_end;  // int64
    switch (dtype) {
        case IntDtype::int8: first = IntClass::from_int8_min, last = IntClass::from_zero; break;
        case IntDtype::uint8: first = IntClass::from_zero, last = IntClass::from_int8_end; break;
        case IntDtype::int16:
            first = IntClass::from_int16_min, last = IntClass::from_uint8_end;
            break;
        case IntDtype::uint16: first = IntClass::from_zero, last = IntClass::from_int16_end; break;
        case IntDtype::int32:
            first = IntClass::from_int32_min, last = IntClass::from_uint16_end;
            break;
        case IntDtype::uint32: first = IntClass::from_zero, last = IntClass::from_int32_end; break;
        case IntDtype::none:
        case IntDtype::int64: break;
    }
    return c >= first && c <= last;
}

bool int_class_fits_float64(IntClass c) noexcept {
    return c != IntClass::below_float64 && c != IntClass::above_float64;
}

IntDtype numpy_int_dtype(const Value& v) noexcept {
    if (v.type == Type::i) return v.int_dtype == IntDtype::none ? IntDtype::int32 : v.int_dtype;
    if (v.type == Type::l) return v.int_dtype == IntDtype::none ? IntDtype::int64 : v.int_dtype;
    return IntDtype::none;
}

namespace {

// NumPy's promotion of two integer dtypes (no uint64 among the engine's).
IntDtype promote_int_dtypes(IntDtype a, IntDtype b) noexcept {
    const auto is_unsigned = [](IntDtype d) {
        return d == IntDtype::uint8 || d == IntDtype::uint16 || d == IntDtype::uint32;
    };
    const auto bits = [](IntDtype d) {
        switch (d) {
            case IntDtype::int8:
            case IntDtype::uint8: return 8;
            case IntDtype::int16:
            case IntDtype::uint16: return 16;
            case IntDtype::int32:
            case IntDtype::uint32: return 32;
            default: return 64;
        }
    };
    const auto make = [](bool unsigned_, int width) {
        switch (width) {
            case 8: return unsigned_ ? IntDtype::uint8 : IntDtype::int8;
            case 16: return unsigned_ ? IntDtype::uint16 : IntDtype::int16;
            case 32: return unsigned_ ? IntDtype::uint32 : IntDtype::int32;
            default: return IntDtype::int64;
        }
    };
    if (is_unsigned(a) == is_unsigned(b)) return make(is_unsigned(a), std::max(bits(a), bits(b)));
    const IntDtype u = is_unsigned(a) ? a : b, i = is_unsigned(a) ? b : a;
    // Signed wide enough for both: the signed one when wider, else twice the unsigned.
    return bits(u) < bits(i) ? i : make(false, 2 * bits(u));
}

}  // namespace

IntDtype result_int_dtype(const Value& a, const Value& b, Type t) noexcept {
    if (!is_integer(t)) return IntDtype::none;
    const bool a_int = !a.weak && is_integer(a.type), b_int = !b.weak && is_integer(b.type);
    if (a_int && b_int) return promote_int_dtypes(numpy_int_dtype(a), numpy_int_dtype(b));
    if (a_int) return numpy_int_dtype(a);
    if (b_int) return numpy_int_dtype(b);
    // No integer array: bools computing in int32 are NumPy's int8 (bool // bool); with a
    // Python int, the default integer.
    return t == Type::i ? IntDtype::int8 : IntDtype::int64;
}

// A weak (Python) operand meeting a strong one.
Type promote_weak(Type weak, Type strong) noexcept {
    switch (kind_of(weak)) {
        case Kind::boolean: return strong;
        case Kind::integer: return strong == Type::b ? Type::l : strong;
        case Kind::real:
            if (strong == Type::b || is_integer(strong)) return Type::d;
            return strong;
        case Kind::complex:
            if (strong == Type::b || is_integer(strong) || strong == Type::d) return Type::z;
            if (strong == Type::f) return Type::c;
            return strong;
    }
    return strong;
}

Type promote(const Value& a, const Value& b) noexcept {
    // A Python int beyond int64 (type d) promotes as the int it is; cast() then
    // converts it to the result's type or reports that it does not fit.
    const Type ta = is_big_int_class(a.int_class) ? Type::l : a.type;
    const Type tb = is_big_int_class(b.int_class) ? Type::l : b.type;
    if (a.weak && !b.weak) return promote_weak(ta, tb);
    if (b.weak && !a.weak) return promote_weak(tb, ta);
    return promote_strong(ta, tb);
}

// The float type a math function computes in (NumPy's loop choice; bool and
// int8 would be float16 in NumPy, which the engine lacks: float32 instead).
Type float_type(Type t) noexcept {
    switch (t) {
        case Type::b: return Type::f;
        case Type::i:
        case Type::l: return Type::d;
        default: return t;
    }
}

}  // namespace detail
}  // namespace numfuse::expr
