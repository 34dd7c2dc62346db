// The compiler's types pass: the engine's element types, opcode names, and
// NumPy's promotion rules (see compiler_internal.hpp).
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
    if (a.weak && !b.weak) return promote_weak(a.type, b.type);
    if (b.weak && !a.weak) return promote_weak(b.type, a.type);
    return promote_strong(a.type, b.type);
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
