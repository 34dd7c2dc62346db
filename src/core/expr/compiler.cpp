// The compiler: AST -> typed IR (hash-consed, so common subexpressions are
// shared) -> constant folding -> stages split at reductions -> bytecode with
// register reuse. Plus the LRU cache of compiled plans and the disassembler.
//
// Type rules are NumPy's (NEP 50): arrays and NumPy scalars are "strong";
// Python numbers (literals and Python-scalar inputs) are "weak" and take the
// kind-compatible type of whatever strong operand they meet; arithmetic
// between weak operands stays weak, as Python arithmetic would.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "expr/expr.hpp"
#include "expr/kernel_table.hpp"
#include "expr/parser.hpp"

namespace numfuse::expr {

// ------------------------------------------------------------------ type info
std::size_t type_size(Type t) noexcept {
    static constexpr std::size_t sizes[] = {1, 4, 8, 4, 8, 8, 16};
    return sizes[static_cast<int>(t)];
}
char type_letter(Type t) noexcept { return "bilfdcz"[static_cast<int>(t)]; }
const char* type_name(Type t) noexcept {
    static const char* const names[] = {"bool",    "int32",     "int64",     "float32",
                                        "float64", "complex64", "complex128"};
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

namespace {

using detail::AstNode;
using detail::NodeKind;

[[noreturn]] void type_error(const std::string& message, int column) {
    throw ExprError(ErrorKind::type, message, column);
}

// ------------------------------------------------------------------ promotion
enum class Kind { boolean, integer, real, complex };
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

struct Value {
    int node = -1;
    Type type = Type::d;
    bool weak = false;
};

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

// ------------------------------------------------------------------ IR
struct IrNode {
    enum Kind : std::uint8_t { input_node, constant_node, op_node, reduce_node } kind = op_node;
    Type type = Type::d;
    Opcode opcode = Opcode::count;
    int args[3] = {-1, -1, -1};
    int input = -1;
    Scalar value;
    ReduceKind reduce_kind = ReduceKind::none;
    bool all_axes = true;
    std::vector<int> axes;
    bool keepdims = false;
};

std::string node_key(const IrNode& n) {
    std::string key;
    key.reserve(64);
    key.push_back(static_cast<char>('0' + n.kind));
    key.push_back(type_letter(n.type));
    key += std::to_string(static_cast<int>(n.opcode));
    for (int a : n.args) {
        key.push_back(',');
        key += std::to_string(a);
    }
    key.push_back('|');
    key += std::to_string(n.input);
    if (n.kind == IrNode::constant_node) {
        key.push_back('|');
        key.append(reinterpret_cast<const char*>(n.value.bytes), type_size(n.type));
    }
    if (n.kind == IrNode::reduce_node) {
        key.push_back('|');
        key += std::to_string(static_cast<int>(n.reduce_kind));
        key.push_back(n.all_axes ? 'A' : 'a');
        for (int a : n.axes) key += "," + std::to_string(a);
        key.push_back(n.keepdims ? 'K' : 'k');
    }
    return key;
}

template <class T>
Scalar scalar_of(T v) {
    Scalar s;
    std::memcpy(s.bytes, &v, sizeof v);
    return s;
}

class Compiler {
public:
    Compiler(const std::string& text, const std::vector<InputSpec>& inputs)
        : text_(text), inputs_(inputs), kernels_(active_kernels()) {}

    std::shared_ptr<const Plan> compile() {
        const detail::Ast ast = detail::parse_expression(text_);
        ast_ = &ast;
        const Value root = compile_node(ast.root);
        auto plan = std::make_shared<Plan>();
        plan->text = text_;
        for (const auto& spec : inputs_) {
            plan->input_names.push_back(spec.name);
            plan->input_types.push_back(spec.type);
        }
        build_stages(root.node, *plan);
        plan->result_type = plan->stages.back().out_type;
        return plan;
    }

private:
    // ---------------------------------------------------------------- nodes
    int intern(IrNode node) {
        std::string key = node_key(node);
        const auto found = interned_.find(key);
        if (found != interned_.end()) return found->second;
        nodes_.push_back(std::move(node));
        const int id = static_cast<int>(nodes_.size() - 1);
        interned_.emplace(std::move(key), id);
        return id;
    }

    Value constant(Type type, const Scalar& value, bool weak) {
        IrNode node;
        node.kind = IrNode::constant_node;
        node.type = type;
        node.value = value;
        return {intern(std::move(node)), type, weak};
    }

    bool is_constant(const Value& v) const { return nodes_[v.node].kind == IrNode::constant_node; }

    // Emits family_<result><arg types>, folding it when every argument is a
    // constant (through the same kernel the VM would run, so folding can
    // never disagree with run-time evaluation).
    Value emit(const std::string& family, Type result, const std::vector<Value>& args, int column,
               bool weak = false) {
        std::string name = family + "_" + type_letter(result);
        for (const auto& a : args) name.push_back(type_letter(a.type));
        const Opcode op = find_opcode(name);
        if (op == Opcode::count) {
            std::string types;
            for (const auto& a : args) {
                if (!types.empty()) types += ", ";
                types += type_name(a.type);
            }
            type_error("'" + family + "' is not supported for " + types, column);
        }
        bool all_constant = true;
        for (const auto& a : args) all_constant = all_constant && is_constant(a);
        if (all_constant) {
            Scalar out;
            const char* p[3] = {nullptr, nullptr, nullptr};
            for (std::size_t k = 0; k < args.size(); ++k) {
                p[k] = reinterpret_cast<const char*>(nodes_[args[k].node].value.bytes);
            }
            const unsigned flags = kernels_[static_cast<int>(op)](
                reinterpret_cast<char*>(out.bytes), p[0], p[1], p[2], 1);
            if (flags & runtime_negative_int_power) {
                throw ExprError(ErrorKind::value,
                                "Integers to negative integer powers are not allowed.", column);
            }
            return constant(result, out, weak);
        }
        IrNode node;
        node.kind = IrNode::op_node;
        node.type = result;
        node.opcode = op;
        for (std::size_t k = 0; k < args.size(); ++k) node.args[k] = args[k].node;
        return {intern(std::move(node)), result, weak};
    }

    Value cast(const Value& v, Type to, int column) {
        if (v.type == to) return v;
        if (v.weak && is_constant(v) && v.type == Type::l && to == Type::i) {
            std::int64_t x;
            std::memcpy(&x, nodes_[v.node].value.bytes, sizeof x);
            if (x < INT32_MIN || x > INT32_MAX) {
                throw ExprError(ErrorKind::overflow,
                                "Python integer " + std::to_string(x) + " out of bounds for int32",
                                column);
            }
        }
        Value r = emit("cast", to, {v}, column, v.weak);
        return r;
    }

    // ---------------------------------------------------------------- AST walk
    Value compile_node(int index) {
        const AstNode& n = ast_->nodes[static_cast<std::size_t>(index)];
        switch (n.kind) {
            case NodeKind::number: return number(n);
            case NodeKind::name: return name(n);
            case NodeKind::unary: return unary(n);
            case NodeKind::binary: return binary(n);
            case NodeKind::compare: return compare(n);
            case NodeKind::attribute:
                return real_or_imag(n.text, compile_node(n.args[0]), n.column);
            case NodeKind::call: return call(n);
        }
        type_error("internal error: unknown node", n.column);
    }

    Value number(const AstNode& n) {
        switch (n.number_type) {
            case Type::b: return constant(Type::b, scalar_of<bool>(n.int_value != 0), true);
            case Type::l: return constant(Type::l, scalar_of<std::int64_t>(n.int_value), true);
            case Type::d: return constant(Type::d, scalar_of<double>(n.real_value), true);
            default:
                return constant(Type::z, scalar_of(std::complex<double>(0.0, n.imag_value)), true);
        }
    }

    Value name(const AstNode& n) {
        for (std::size_t k = 0; k < inputs_.size(); ++k) {
            if (inputs_[k].name == n.text) {
                IrNode node;
                node.kind = IrNode::input_node;
                node.type = inputs_[k].type;
                node.input = static_cast<int>(k);
                return {intern(std::move(node)), inputs_[k].type, inputs_[k].weak};
            }
        }
        if (n.text == "inf") {
            return constant(Type::d, scalar_of(std::numeric_limits<double>::infinity()), true);
        }
        if (n.text == "nan") {
            return constant(Type::d, scalar_of(std::numeric_limits<double>::quiet_NaN()), true);
        }
        throw ExprError(ErrorKind::name, n.text, n.column);
    }

    Value unary(const AstNode& n) {
        const Value v = compile_node(n.args[0]);
        if (n.text == "+") return v;
        if (n.text == "-") {
            if (v.type == Type::b) {
                type_error("the boolean negative, the '-' operator, is not supported; use '~'",
                           n.column);
            }
            return emit("neg", v.type, {v}, n.column, v.weak);
        }
        // '~'
        if (!(v.type == Type::b || is_integer(v.type))) {
            type_error(std::string("'~' is not supported for ") + type_name(v.type), n.column);
        }
        return emit("invert", v.type, {v}, n.column, v.weak);
    }

    Value binary(const AstNode& n) {
        Value a = compile_node(n.args[0]);
        Value b = compile_node(n.args[1]);
        return binary_op(n.text, a, b, n.column);
    }

    Value binary_op(const std::string& op, Value a, Value b, int column) {
        const bool weak = a.weak && b.weak;
        Type t = promote(a, b);
        auto both = [&](Type to) {
            a = cast(a, to, column);
            b = cast(b, to, column);
        };
        if (op == "+" || op == "*") {
            both(t);
            if (t == Type::b) return emit(op == "+" ? "or" : "and", t, {a, b}, column, weak);
            return emit(op == "+" ? "add" : "mul", t, {a, b}, column, weak);
        }
        if (op == "-") {
            if (t == Type::b) {
                type_error("the boolean subtract, the '-' operator, is not supported; use '^'",
                           column);
            }
            both(t);
            return emit("sub", t, {a, b}, column, weak);
        }
        if (op == "/") {
            if (t == Type::b || is_integer(t)) t = Type::d;
            both(t);
            return emit("div", t, {a, b}, column, weak);
        }
        if (op == "//" || op == "%") {
            if (t == Type::b) t = Type::i;
            if (is_complex(t)) {
                type_error(std::string("'") + op + "' is not supported for complex numbers",
                           column);
            }
            both(t);
            return emit(op == "//" ? "floordiv" : "mod", t, {a, b}, column, weak);
        }
        if (op == "**") return power(a, b, t, column, weak);
        if (op == "&" || op == "|" || op == "^") {
            if (!(t == Type::b || is_integer(t))) {
                type_error(std::string("'") + op + "' needs boolean or integer operands, got " +
                               type_name(a.type) + " and " + type_name(b.type),
                           column);
            }
            both(t);
            return emit(op == "&" ? "and" : (op == "|" ? "or" : "xor"), t, {a, b}, column, weak);
        }
        // << >>
        if (t == Type::b) t = Type::i;
        if (!is_integer(t)) {
            type_error(std::string("'") + op + "' needs integer operands, got " +
                           type_name(a.type) + " and " + type_name(b.type),
                       column);
        }
        both(t);
        return emit(op == "<<" ? "lshift" : "rshift", t, {a, b}, column, weak);
    }

    Value power(Value a, Value b, Type t, int column, bool weak) {
        if (t == Type::b) t = Type::i;
        // Python: int ** negative int is a float; NumPy refuses it for arrays.
        if (weak && is_integer(t) && is_constant(b)) {
            std::int64_t e;
            std::memcpy(&e, nodes_[b.node].value.bytes, sizeof e);
            if (b.type == Type::l && e < 0) t = Type::d;
        }
        a = cast(a, t, column);
        b = cast(b, t, column);
        if (is_constant(b) && !is_constant(a)) {
            // x**2 is x*x and x**0.5 is sqrt(x), exactly as NumPy's fast paths (and
            // numexpr's rewrites): sqrt keeps -0.0, gives NaN for -inf and is exact
            // where pow is not (complex -1 -> 1j); other exponents use pow.
            bool two = false, half = false;
            const auto& bytes = nodes_[b.node].value.bytes;
            switch (t) {
                case Type::i: {
                    std::int32_t e;
                    std::memcpy(&e, bytes, 4);
                    two = e == 2;
                    if (e < 0)
                        throw ExprError(ErrorKind::value,
                                        "Integers to negative integer powers are not allowed.",
                                        column);
                    break;
                }
                case Type::l: {
                    std::int64_t e;
                    std::memcpy(&e, bytes, 8);
                    two = e == 2;
                    if (e < 0)
                        throw ExprError(ErrorKind::value,
                                        "Integers to negative integer powers are not allowed.",
                                        column);
                    break;
                }
                case Type::f: {
                    float e;
                    std::memcpy(&e, bytes, 4);
                    two = e == 2.0f;
                    half = e == 0.5f;
                    break;
                }
                case Type::d: {
                    double e;
                    std::memcpy(&e, bytes, 8);
                    two = e == 2.0;
                    half = e == 0.5;
                    break;
                }
                case Type::c: {
                    float e[2];
                    std::memcpy(e, bytes, 8);
                    half = e[0] == 0.5f && e[1] == 0.0f;
                    break;
                }
                case Type::z: {
                    double e[2];
                    std::memcpy(e, bytes, 16);
                    half = e[0] == 0.5 && e[1] == 0.0;
                    break;
                }
                default: break;
            }
            if (two) return emit("mul", t, {a, a}, column, weak);
            if (half) return emit("sqrt", t, {a}, column, weak);
        }
        return emit("pow", t, {a, b}, column, weak);
    }

    Value compare(const AstNode& n) {
        Value a = compile_node(n.args[0]);
        Value b = compile_node(n.args[1]);
        const bool weak = a.weak && b.weak;
        const Type t = promote(a, b);
        a = cast(a, t, n.column);
        b = cast(b, t, n.column);
        static const std::pair<const char*, const char*> names[] = {
            {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}};
        const char* family = "eq";
        for (const auto& p : names) {
            if (n.text == p.first) family = p.second;
        }
        return emit(family, Type::b, {a, b}, n.column, weak);
    }

    Value zero_of(Type t) {
        Scalar zero;  // all-zero bytes are 0 in every type
        return constant(t, zero, false);
    }

    Value real_or_imag(const std::string& which, const Value& v, int column) {
        if (is_complex(v.type)) {
            return emit(which, v.type == Type::c ? Type::f : Type::d, {v}, column);
        }
        if (which == "real") return v;
        // imag of a real array: zeros shaped like it.
        const Value ones = emit("oneslike", v.type, {v}, column);
        return emit(v.type == Type::b ? "and" : "mul", v.type, {ones, zero_of(v.type)}, column);
    }

    Value to_bool(const Value& v, int column) {
        if (v.type == Type::b) return v;
        return emit("ne", Type::b, {v, zero_of(v.type)}, column);
    }

    void check_arity(const AstNode& n, std::size_t expected) {
        if (n.args.size() != expected) {
            type_error(n.text + "() takes " + std::to_string(expected) + " argument" +
                           (expected == 1 ? "" : "s") + " (" + std::to_string(n.args.size()) +
                           " given)",
                       n.column);
        }
    }

    Value call(const AstNode& n) {
        const std::string& f = n.text;
        if (detail::is_reduction_name(f)) return reduction(n);
        if (f == "where") {
            check_arity(n, 3);
            const Value c = to_bool(compile_node(n.args[0]), n.column);
            Value x = compile_node(n.args[1]);
            Value y = compile_node(n.args[2]);
            const Type t = promote(x, y);
            x = cast(x, t, n.column);
            y = cast(y, t, n.column);
            return emit("where", t, {c, x, y}, n.column);
        }
        static const char* const two_arg_float[] = {"arctan2", "hypot", "nextafter", "copysign",
                                                    "logaddexp"};
        for (const char* name : two_arg_float) {
            if (f == name) {
                check_arity(n, 2);
                Value a = compile_node(n.args[0]);
                Value b = compile_node(n.args[1]);
                const Type t = float_type(promote(a, b));
                return emit(f, t, {cast(a, t, n.column), cast(b, t, n.column)}, n.column);
            }
        }
        if (f == "fmod" || f == "maximum" || f == "minimum") {
            check_arity(n, 2);
            Value a = compile_node(n.args[0]);
            Value b = compile_node(n.args[1]);
            Type t = promote(a, b);
            if (f == "fmod" && t == Type::b) t = Type::i;
            return emit(f, t, {cast(a, t, n.column), cast(b, t, n.column)}, n.column);
        }
        if (f == "complex") {
            check_arity(n, 2);
            Value a = compile_node(n.args[0]);
            Value b = compile_node(n.args[1]);
            Type t = promote(a, b);
            if (is_complex(t)) type_error("complex() needs real arguments", n.column);
            if (t != Type::f) t = Type::d;
            return emit("complex", t == Type::f ? Type::c : Type::z,
                        {cast(a, t, n.column), cast(b, t, n.column)}, n.column);
        }
        check_arity(n, 1);
        const Value v = compile_node(n.args[0]);
        const Type t = v.type;
        if (f == "copy") return v;
        if (f == "ones_like") return emit("oneslike", t, {v}, n.column);
        if (f == "negative") {
            if (t == Type::b) type_error("the boolean negative is not supported", n.column);
            return emit("neg", t, {v}, n.column);
        }
        if (f == "real" || f == "imag") return real_or_imag(f, v, n.column);
        if (f == "conj") return is_complex(t) ? emit("conj", t, {v}, n.column) : v;
        if (f == "abs" || f == "absolute") {
            if (t == Type::b) return v;
            if (is_complex(t)) return emit("abs", t == Type::c ? Type::f : Type::d, {v}, n.column);
            return emit("abs", t, {v}, n.column);
        }
        if (f == "ceil" || f == "floor" || f == "trunc" || f == "round") {
            if (t == Type::b || is_integer(t)) return v;  // NumPy >= 2 keeps integers as they are
            return emit(f, t, {v}, n.column);
        }
        if (f == "sign") {
            if (t == Type::b) type_error("sign() is not supported for bool", n.column);
            return emit("sign", t, {v}, n.column);
        }
        if (f == "isnan" || f == "isinf" || f == "isfinite") {
            if (t == Type::b || is_integer(t)) {
                // Integers are never NaN or infinite: x != x is all False, x == x all True.
                return emit(f == "isfinite" ? "eq" : "ne", Type::b, {v, v}, n.column);
            }
            return emit(f, Type::b, {v}, n.column);
        }
        if (f == "signbit") {
            const Type ft = float_type(t);
            return emit("signbit", Type::b, {cast(v, ft, n.column)}, n.column);
        }
        // The remaining functions compute in floating point.
        const Type ft = float_type(t);
        return emit(f, ft, {cast(v, ft, n.column)}, n.column);
    }

    Value reduction(const AstNode& n) {
        check_arity(n, 1);
        Value v = compile_node(n.args[0]);
        ReduceKind kind = ReduceKind::sum;
        if (n.text == "prod") kind = ReduceKind::prod;
        if (n.text == "min") kind = ReduceKind::min;
        if (n.text == "max") kind = ReduceKind::max;
        if (n.text == "mean") kind = ReduceKind::mean;
        if (n.text == "logsumexp") kind = ReduceKind::logsumexp;
        // The element type the reduction consumes; its output type follows.
        Type in = v.type;
        switch (kind) {
            case ReduceKind::sum:
            case ReduceKind::prod:
                if (in == Type::b || in == Type::i) in = Type::l;
                break;
            case ReduceKind::mean:
            case ReduceKind::logsumexp:
                if (in == Type::b || is_integer(in)) in = Type::d;
                if (kind == ReduceKind::logsumexp && is_complex(in)) {
                    type_error("logsumexp() is not supported for complex numbers", n.column);
                }
                break;
            case ReduceKind::min:
            case ReduceKind::max:
                if (is_complex(in)) {
                    // numexpr refuses these too; np.max orders complex numbers
                    // lexicographically -- maximum()/minimum() do, element-wise.
                    type_error(n.text +
                                   "() is not supported for complex numbers (numexpr refuses "
                                   "it too; element-wise maximum()/minimum() order them "
                                   "lexicographically, as NumPy)",
                               n.column);
                }
                break;
            case ReduceKind::none: break;
        }
        v = cast(v, in, n.column);
        IrNode node;
        node.kind = IrNode::reduce_node;
        node.type = in;  // reductions of these kinds keep the consumed type
        node.args[0] = v.node;
        node.reduce_kind = kind;
        node.all_axes = !n.axis_given || n.axis_none;
        node.axes = n.axes;
        node.keepdims = n.keepdims;
        return {intern(std::move(node)), in, false};
    }

    // ---------------------------------------------------------------- stages
    void build_stages(int root, Plan& plan) {
        std::vector<int> stage_of(nodes_.size(), -1);
        // Reductions in dependency order (post-order), each its own stage.
        std::vector<int> reductions;
        std::vector<char> seen(nodes_.size(), 0);
        collect_reductions(root, seen, reductions);
        for (int r : reductions) {
            Stage stage;
            stage.reduce = nodes_[r].reduce_kind;
            stage.all_axes = nodes_[r].all_axes;
            stage.axes = nodes_[r].axes;
            stage.keepdims = nodes_[r].keepdims;
            stage.out_type = nodes_[r].type;
            stage.program = generate(nodes_[r].args[0], stage_of, stage.inputs);
            stage_of[r] = static_cast<int>(plan.stages.size());
            plan.stages.push_back(std::move(stage));
        }
        Stage last;
        last.out_type = nodes_[root].type;
        last.program = generate(root, stage_of, last.inputs);
        plan.stages.push_back(std::move(last));
    }

    void collect_reductions(int id, std::vector<char>& seen, std::vector<int>& out) {
        if (seen[id]) return;
        seen[id] = 1;
        const IrNode& n = nodes_[id];
        for (int a : n.args) {
            if (a >= 0) collect_reductions(a, seen, out);
        }
        if (n.kind == IrNode::reduce_node) out.push_back(id);
    }

    // Register allocation: temporaries share workspace slots; an instruction
    // writes over an argument that dies there when the element sizes match.
    Program generate(int root, const std::vector<int>& stage_of, std::vector<StageInput>& inputs) {
        Program program;
        std::unordered_map<int, int> reg_of;  // IR node -> register
        std::vector<int> order;  // op nodes in evaluation order
        std::vector<char> seen(nodes_.size(), 0);
        topo(root, seen, order, stage_of);

        auto leaf_register = [&](int id) {
            const auto found = reg_of.find(id);
            if (found != reg_of.end()) return found->second;
            const IrNode& n = nodes_[id];
            Register r;
            r.type = n.type;
            if (n.kind == IrNode::constant_node) {
                r.kind = RegisterKind::constant;
                r.value = n.value;
            } else {
                r.kind = RegisterKind::input;
                StageInput si;
                si.from_stage = n.kind == IrNode::reduce_node;
                si.index = si.from_stage ? stage_of[id] : n.input;
                r.input = static_cast<int>(inputs.size());
                inputs.push_back(si);
            }
            program.registers.push_back(r);
            const int index = static_cast<int>(program.registers.size() - 1);
            reg_of.emplace(id, index);
            return index;
        };

        // Last use of every op node, by position in `order`.
        std::unordered_map<int, std::size_t> last_use;
        for (std::size_t k = 0; k < order.size(); ++k) {
            for (int a : nodes_[order[k]].args) {
                if (a >= 0) last_use[a] = k;
            }
        }

        if (order.empty()) {
            // The result is an input or a constant: copy it into the result.
            const int src = leaf_register(root);
            Register result;
            result.type = nodes_[root].type;
            result.slot = 0;
            program.registers.push_back(result);
            program.result = static_cast<int>(program.registers.size() - 1);
            program.slots = 1;
            const Opcode op = find_opcode(std::string("copy_") + type_letter(result.type) +
                                          type_letter(result.type));
            program.code.push_back({op, static_cast<std::int16_t>(program.result),
                                    static_cast<std::int16_t>(src), -1, -1});
        } else {
            std::vector<int> free_slots;
            int slots = 0;
            std::vector<int> slot_of_register;
            for (std::size_t k = 0; k < order.size(); ++k) {
                const IrNode& n = nodes_[order[k]];
                Instruction ins{n.opcode, -1, -1, -1, -1};
                std::int16_t* operand[3] = {&ins.a, &ins.b, &ins.c};
                std::vector<int> dying;  // slots of temporaries whose last use is here
                int reuse_slot = -1;
                for (int j = 0; j < 3; ++j) {
                    if (n.args[j] < 0) continue;
                    const IrNode& arg = nodes_[n.args[j]];
                    const bool is_temp = arg.kind == IrNode::op_node;
                    const int reg = is_temp ? reg_of.at(n.args[j]) : leaf_register(n.args[j]);
                    *operand[j] = static_cast<std::int16_t>(reg);
                    if (is_temp && last_use[n.args[j]] == k) {
                        const int slot = program.registers[reg].slot;
                        if (std::find(dying.begin(), dying.end(), slot) != dying.end()) continue;
                        dying.push_back(slot);
                        // Writing over an argument is safe element for element
                        // only when both have the same element size.
                        if (reuse_slot < 0 && type_size(arg.type) == type_size(n.type) &&
                            order[k] != root) {
                            reuse_slot = slot;
                        }
                    }
                }
                Register r;
                r.type = n.type;
                if (order[k] == root) {
                    r.slot = -2;  // the result's own slot, assigned below
                } else if (reuse_slot >= 0) {
                    r.slot = reuse_slot;
                } else if (!free_slots.empty()) {
                    r.slot = free_slots.back();
                    free_slots.pop_back();
                } else {
                    r.slot = slots++;
                }
                // Only now: a dying argument of another element size must not
                // become this instruction's destination.
                for (int slot : dying) {
                    if (slot != reuse_slot) free_slots.push_back(slot);
                }
                program.registers.push_back(r);
                const int reg = static_cast<int>(program.registers.size() - 1);
                reg_of.emplace(order[k], reg);
                ins.dst = static_cast<std::int16_t>(reg);
                program.code.push_back(ins);
                if (program.registers.size() > 30000) {
                    throw ExprError(ErrorKind::value, "expression is too large to compile");
                }
            }
            const int result_slot = slots++;
            program.result = reg_of.at(root);
            program.registers[program.result].slot = result_slot;
            program.slots = slots;
        }
        program.max_item = 1;
        for (const auto& r : program.registers) {
            program.max_item = std::max(program.max_item, type_size(r.type));
        }
        return program;
    }

    void topo(int id, std::vector<char>& seen, std::vector<int>& order,
              const std::vector<int>& stage_of) {
        if (seen[id]) return;
        seen[id] = 1;
        const IrNode& n = nodes_[id];
        if (n.kind != IrNode::op_node) return;  // inputs, constants, earlier stages are leaves
        (void)stage_of;
        for (int a : n.args) {
            if (a >= 0) topo(a, seen, order, stage_of);
        }
        order.push_back(id);
    }

    const std::string& text_;
    const std::vector<InputSpec>& inputs_;
    const OpKernelTable& kernels_;
    const detail::Ast* ast_ = nullptr;
    std::vector<IrNode> nodes_;
    std::unordered_map<std::string, int> interned_;
};

// ------------------------------------------------------------------ cache
struct PlanCache {
    std::mutex mutex;
    std::size_t capacity = 256;
    std::list<std::pair<std::string, std::shared_ptr<const Plan>>> entries;  // most recent first
    std::unordered_map<std::string, decltype(entries)::iterator> index;
};

PlanCache& plan_cache() {
    static PlanCache cache;
    return cache;
}

std::string cache_key(const std::string& text, const std::vector<InputSpec>& inputs) {
    std::string key = text;
    key.push_back('\0');
    for (const auto& spec : inputs) {
        key += spec.name;
        key.push_back(':');
        key.push_back(type_letter(spec.type));
        key.push_back(spec.weak ? 'w' : 's');
        key.push_back(';');
    }
    return key;
}

}  // namespace

std::vector<std::string> expression_names(const std::string& text) {
    const detail::Ast ast = detail::parse_expression(text);
    std::vector<std::string> names;
    for (const auto& node : ast.nodes) {
        if (node.kind == NodeKind::name &&
            std::find(names.begin(), names.end(), node.text) == names.end()) {
            names.push_back(node.text);
        }
    }
    return names;
}

std::shared_ptr<const Plan> compile_plan(const std::string& text,
                                         const std::vector<InputSpec>& inputs) {
    Compiler compiler(text, inputs);
    return compiler.compile();
}

std::shared_ptr<const Plan> cached_plan(const std::string& text,
                                        const std::vector<InputSpec>& inputs) {
    PlanCache& cache = plan_cache();
    std::string key = cache_key(text, inputs);
    {
        std::lock_guard<std::mutex> lock(cache.mutex);
        const auto found = cache.index.find(key);
        if (found != cache.index.end()) {
            cache.entries.splice(cache.entries.begin(), cache.entries, found->second);
            return found->second->second;
        }
    }
    // Compile outside the lock: two threads may compile the same text once
    // each; the second insert simply finds the entry present.
    std::shared_ptr<const Plan> plan = compile_plan(text, inputs);
    std::lock_guard<std::mutex> lock(cache.mutex);
    const auto found = cache.index.find(key);
    if (found != cache.index.end()) return found->second->second;
    cache.entries.emplace_front(key, plan);
    cache.index.emplace(std::move(key), cache.entries.begin());
    while (cache.entries.size() > cache.capacity) {
        cache.index.erase(cache.entries.back().first);
        cache.entries.pop_back();
    }
    return plan;
}

void set_cache_capacity(std::size_t entries) {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.capacity = entries < 1 ? 1 : entries;
    while (cache.entries.size() > cache.capacity) {
        cache.index.erase(cache.entries.back().first);
        cache.entries.pop_back();
    }
}

std::size_t cache_size() {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    return cache.entries.size();
}

void clear_cache() {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.entries.clear();
    cache.index.clear();
}

std::vector<DisassembledInstruction> disassemble(const Plan& plan) {
    std::vector<DisassembledInstruction> lines;
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const Stage& stage = plan.stages[s];
        const Program& p = stage.program;
        auto reg_name = [&](int r) -> std::string {
            if (r < 0) return "";
            const Register& reg = p.registers[r];
            switch (reg.kind) {
                case RegisterKind::input: {
                    const StageInput& si = stage.inputs[reg.input];
                    if (si.from_stage) return "stage" + std::to_string(si.index);
                    return plan.input_names[si.index];
                }
                case RegisterKind::constant: return std::string("c") + std::to_string(r);
                case RegisterKind::temp:
                    return (r == p.result ? std::string("result") : "t" + std::to_string(reg.slot));
            }
            return "";
        };
        for (const auto& ins : p.code) {
            lines.push_back({static_cast<int>(s), opcode_name(ins.op), reg_name(ins.dst),
                             reg_name(ins.a), reg_name(ins.b), reg_name(ins.c)});
        }
        if (stage.reduce != ReduceKind::none) {
            std::string axes = "None";
            if (!stage.all_axes) {
                axes.clear();
                for (int a : stage.axes) axes += (axes.empty() ? "" : ",") + std::to_string(a);
            }
            lines.push_back({static_cast<int>(s),
                             std::string("reduce_") + reduce_name(stage.reduce) + "_" +
                                 type_letter(stage.out_type),
                             "stage" + std::to_string(s), "result", "axis=" + axes,
                             stage.keepdims ? "keepdims" : ""});
        }
    }
    return lines;
}

}  // namespace numfuse::expr
