// The compiler's lowering pass: AST -> IR with the type rules of every
// operator and function (the math functions' from the function table,
// functions.hpp).
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "expr/suggest.hpp"
#include "expr/compiler_internal.hpp"

namespace numfuse::expr::detail {

std::shared_ptr<const Plan> Compiler::compile() {
    try {
        return compile_once();
    } catch (const NeedsValues&) {
        // Arithmetic between Python ints, a name among them: again, with the values.
    }
    values_known_ = true;
    nodes_.clear();
    interned_.assign(interned_.size(), -1);  // empty, its size kept
    try {
        return compile_once();
    } catch (const NeedsValues&) {
        // Cannot happen: the names within int64 are constants now, and arithmetic
        // between a Python int beyond int64 and another int is refused before emit.
        throw ExprError(ErrorKind::value, "internal error: a Python int without its value");
    }
}

std::shared_ptr<const Plan> Compiler::compile_once() {
    std::shared_ptr<const detail::Ast> parsed;
    if (given_ast_ == nullptr) parsed = detail::parse_cached(text_);
    const detail::Ast& ast = given_ast_ != nullptr ? *given_ast_ : *parsed;
    ast_ = &ast;
    lowered_.assign(ast.nodes.size(), Value{});
    // Most AST nodes lower to one IR node, a few to two (a cast and its operation): room
    // for them up front instead of regrowing a vector of IR nodes (strings and vectors).
    nodes_.reserve(2 * ast.nodes.size() + 2);
    // and intern()'s table at most half full for as many, so that it rarely regrows
    std::size_t table = 16;
    while (table < 4 * ast.nodes.size() + 4) table *= 2;
    if (interned_.size() < table) interned_.assign(table, -1);
    Value root = compile_node(ast.root);
    // A Python int as the result is NumPy's default integer, int64: it must fit.
    if (root.weak && root.int_class != IntClass::none && root.type == Type::d) {
        root = cast(root, Type::l, ast.nodes[static_cast<std::size_t>(ast.root)].column);
    }
    auto plan = std::make_shared<Plan>();
    plan->text = text_;
    plan->level = level_;
    plan->value_keyed = values_known_;
    plan->input_names.reserve(inputs_.size());
    plan->input_types.reserve(inputs_.size());
    plan->input_items.reserve(inputs_.size());
    for (const auto& spec : inputs_) {
        plan->input_names.push_back(spec.name);
        plan->input_types.push_back(spec.type);
        plan->input_items.push_back(spec.type == Type::s ? spec.item : 0);
    }
    if (root.type == Type::s) {
        // Only inputs and literals are bytes (every bytes operation yields bool): the
        // result is a copy of one (Plan::bytes_input).
        const IrNode& node = nodes_[root.node];
        plan->result_type = Type::s;
        plan->result_item = node.item;
        if (node.kind == IrNode::input_node) {
            plan->bytes_input = node.input;
        } else {
            plan->bytes_constant = node.bytes;
        }
        return plan;
    }
    build_stages(root.node, *plan);
    plan->result_type = plan->stages.back().out_type;
    return plan;
}

Value Compiler::compile_node(int index) {
    const auto k = static_cast<std::size_t>(index);
    if (lowered_[k].node < 0) lowered_[k] = lower_node(index);
    return lowered_[k];
}

Value Compiler::lower_node(int index) {
    const AstNode& n = ast_->nodes[static_cast<std::size_t>(index)];
    switch (n.kind) {
        case NodeKind::number: return number(n);
        case NodeKind::name: return name(n);
        case NodeKind::unary: return unary(n);
        case NodeKind::binary: return binary(n);
        case NodeKind::compare: return compare(n);
        case NodeKind::attribute: return real_or_imag(n.text, compile_numeric(n.args[0]), n.column);
        case NodeKind::call: return call(n);
        case NodeKind::bytes: return bytes_constant(n);
    }
    type_error("internal error: unknown node", n.column);
}

Value Compiler::compile_numeric(int index) {
    const Value v = compile_node(index);
    if (v.type == Type::s) {
        unsupported_error(bytes_only_message, ast_->nodes[static_cast<std::size_t>(index)].column);
    }
    return v;
}

char Compiler::numexpr_kind(const Value& v) const {
    switch (v.type) {
        case Type::l:  // numexpr reads a Python int that fits int32 as int32
            return v.weak && int_class_fits(v.int_class, IntDtype::int32) ? 'i' : 'l';
        case Type::c:
        case Type::z: return 'c';  // numexpr's one complex type
        default: return type_letter(v.type);
    }
}

void Compiler::refuse_bytes_operands(const std::string& op, const std::string& numexpr_op,
                                     const std::vector<Value>& args, int column) const {
    std::size_t bytes = 0;
    for (const Value& v : args) bytes += v.type == Type::s;
    if (bytes == 0) return;
    std::string message = "'" + op + "' is not supported for bytes (" + bytes_only_message + ")";
    // numexpr lacks the opcode too when every operand is bytes (a mix is its TypeError).
    if (bytes == args.size() && !numexpr_op.empty()) {
        message += "; numexpr has no opcode '" + numexpr_op + "_" +
                   std::string(args.size() + 1, 's') + "' either";
    }
    unsupported_error(message, column);
}

// A bytes literal: NumPy's S scalar of its length (an empty literal is one
// NUL, as np.array(b'') is S1; trailing NULs are padding either way).
Value Compiler::bytes_constant(const AstNode& n) {
    IrNode node;
    node.kind = IrNode::constant_node;
    node.type = Type::s;
    node.bytes = n.text.empty() ? std::string(1, '\0') : n.text;
    node.item = node.bytes.size();
    return {intern(std::move(node)), Type::s, false};
}

Value Compiler::bytes_op(const std::string& family, const Value& a, const Value& b, int column) {
    if (a.type != Type::s || b.type != Type::s) {
        const bool contains = family == "contains";
        const std::string what = contains ? "contains(haystack, needle) takes bytes operands"
                                          : "bytes can only be compared with bytes";
        // numexpr's name for the missing opcode: `a < b` is its gt(b, a), `a <= b` ge(b, a).
        const bool swapped = family == "lt" || family == "le";
        const std::string op = swapped ? (family == "lt" ? "gt" : "ge") : family;
        const Value& first = swapped ? b : a;
        const Value& second = swapped ? a : b;
        unsupported_error(what + ", got " + type_name(a.type) + " and " + type_name(b.type) +
                              " (numexpr has no opcode '" + op + "_b" + numexpr_kind(first) +
                              numexpr_kind(second) + "' either)",
                          column);
    }
    const BytesWidths widths{nodes_[a.node].item, nodes_[b.node].item};
    const Value w = constant(Type::w, scalar_of(widths), false);
    return emit(family, Type::b, {a, b, w}, column);
}

Value Compiler::number(const AstNode& n) {
    switch (n.number_type) {
        case Type::b: return constant(Type::b, scalar_of<bool>(n.int_value != 0), true);
        case Type::l: return python_int(n.int_value);
        case Type::d:
            if (n.big_int)
                return big_python_int(n.real_value, n.real_value == 0x1p63 && n.int_value == 1);
            return constant(Type::d, scalar_of<double>(n.real_value), true);
        default: return constant(Type::z, scalar_of(std::complex<double>(0.0, n.imag_value)), true);
    }
}

Value Compiler::name(const AstNode& n) {
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
        const InputSpec& spec = inputs_[k];
        if (spec.name == n.text) {
            if (spec.type == Type::s && spec.item == 0) {
                type_error("bytes input '" + n.text + "' has no element size", n.column);
            }
            const bool is_python_int = spec.weak && spec.int_range != PyIntRange::unknown;
            if (is_python_int && values_known_ && spec.int_range == PyIntRange::int64) {
                return python_int(spec.int_value);
            }
            IrNode node;
            node.kind = IrNode::input_node;
            node.type = spec.type;
            node.input = static_cast<int>(k);
            node.item = spec.type == Type::s ? spec.item : 0;
            Value v{intern(std::move(node)), spec.type, spec.weak};
            if (is_python_int) v.int_class = int_class_of(spec.int_range, spec.int_value);
            if (!spec.weak && is_integer(spec.type)) v.int_dtype = spec.int_dtype;
            return v;
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

Value Compiler::unary(const AstNode& n) {
    const Value v = compile_node(n.args[0]);
    refuse_bytes_operands(n.text, n.text == "-" ? "neg" : (n.text == "~" ? "invert" : ""), {v},
                          n.column);
    if (n.text == "+") return v;
    if (n.text == "-") {
        if (v.type == Type::b) {
            unsupported_error("the boolean negative, the '-' operator, is not supported; use '~'",
                              n.column);
        }
        // -(2^63) of a literal or folded constant is int64's min, a Python int in int64.
        if (v.int_class == IntClass::int64_end && is_constant(v)) return python_int(INT64_MIN);
        Value r = emit("neg", v.type, {v}, n.column, v.weak);
        r.int_dtype = v.int_dtype;
        if (is_big_int_class(v.int_class)) {  // -(a Python int beyond int64), rounded
            r.int_class = static_cast<IntClass>(static_cast<int>(IntClass::above_float64) -
                                                static_cast<int>(v.int_class) +
                                                static_cast<int>(IntClass::below_float64));
        }
        return r;
    }
    // '~'
    if (is_big_int_class(v.int_class)) {
        throw ExprError(ErrorKind::overflow,
                        "Python integer out of bounds for int64 (it lies beyond int64)", n.column);
    }
    if (!(v.type == Type::b || is_integer(v.type))) {
        unsupported_error(std::string("'~' is not supported for ") + type_name(v.type), n.column);
    }
    Value r = emit("invert", v.type, {v}, n.column, v.weak);
    r.int_dtype = v.int_dtype;
    return r;
}

Value Compiler::binary(const AstNode& n) {
    Value a = compile_node(n.args[0]);
    Value b = compile_node(n.args[1]);
    static const std::pair<const char*, const char*> numexpr_names[] = {
        {"+", "add"},       {"-", "sub"}, {"*", "mul"},     {"/", "div"},
        {"//", "floordiv"}, {"%", "mod"}, {"**", "pow"},    {"&", "and"},
        {"|", "or"},        {"^", "xor"}, {"<<", "lshift"}, {">>", "rshift"}};
    std::string numexpr_op;
    for (const auto& p : numexpr_names) {
        if (n.text == p.first) numexpr_op = p.second;
    }
    refuse_bytes_operands(n.text, numexpr_op, {a, b}, n.column);
    return binary_op(n.text, a, b, n.column);
}

Value Compiler::binary_op(const std::string& op, Value a, Value b, int column) {
    const bool weak = a.weak && b.weak;
    Type t = promote(a, b);
    // Both operands converted to `to`, the NumPy dtype of an integer result noted.
    IntDtype dtype = IntDtype::none;
    auto both = [&](Type to) {
        dtype = result_int_dtype(a, b, to);
        a = cast(a, to, column, dtype);
        b = cast(b, to, column, dtype);
    };
    auto result = [&](const std::string& family, Type to) {
        Value r = emit(family, to, {a, b}, column, weak);
        if (!r.weak) r.int_dtype = dtype;
        return r;
    };
    if (op == "+" || op == "*") {
        both(t);
        if (t == Type::b) return result(op == "+" ? "or" : "and", t);
        return result(op == "+" ? "add" : "mul", t);
    }
    if (op == "-") {
        if (t == Type::b) {
            unsupported_error("the boolean subtract, the '-' operator, is not supported; use '^'",
                              column);
        }
        both(t);
        return result("sub", t);
    }
    if (op == "/") {
        if (t == Type::b || is_integer(t)) t = Type::d;
        both(t);
        return result("div", t);
    }
    if (op == "//" || op == "%") {
        if (t == Type::b) t = Type::i;
        if (is_complex(t)) {
            unsupported_error(std::string("'") + op + "' is not supported for complex numbers",
                              column);
        }
        both(t);
        return result(op == "//" ? "floordiv" : "mod", t);
    }
    if (op == "**") return power(a, b, t, column, weak);
    if (op == "&" || op == "|" || op == "^") {
        if (!(t == Type::b || is_integer(t))) {
            unsupported_error(std::string("'") + op + "' needs boolean or integer operands, got " +
                                  type_name(a.type) + " and " + type_name(b.type),
                              column);
        }
        both(t);
        return result(op == "&" ? "and" : (op == "|" ? "or" : "xor"), t);
    }
    // << >>
    if (t == Type::b) t = Type::i;
    if (!is_integer(t)) {
        unsupported_error(std::string("'") + op + "' needs integer operands, got " +
                              type_name(a.type) + " and " + type_name(b.type),
                          column);
    }
    both(t);
    return result(op == "<<" ? "lshift" : "rshift", t);
}

Value Compiler::power(Value a, Value b, Type t, int column, bool weak) {
    if (t == Type::b) t = Type::i;
    // Python: int ** negative int is a float; NumPy refuses it for arrays.
    if (weak && is_integer(t) && is_constant(b)) {
        std::int64_t e;
        std::memcpy(&e, nodes_[b.node].value.bytes, sizeof e);
        if (b.type == Type::l && e < 0) t = Type::d;
    }
    const IntDtype dtype = result_int_dtype(a, b, t);
    a = cast(a, t, column, dtype);
    b = cast(b, t, column, dtype);
    const auto with_dtype = [&](Value r) {
        if (!r.weak) r.int_dtype = dtype;
        return r;
    };
    if (is_constant(b) && !is_constant(a)) {
        // x**2 is x*x and x**0.5 is sqrt(x), exactly as NumPy's fast paths (and
        // numexpr's rewrites): sqrt keeps -0.0, gives NaN for -inf and is exact
        // where pow is not (complex -1 -> 1j); real x**-1 is 1 / x (np.reciprocal, NumPy's
        // fast path: correctly rounded, and for float32 in float32 lanes: the bits of the
        // float64 quotient rounded once, since 1/x is never within 2^-53 of a float32
        // midpoint unless exact); other exponents use pow.
        bool two = false, half = false, reciprocal = false;
        const auto& bytes = nodes_[b.node].value.bytes;
        switch (t) {
            case Type::i: {
                std::int32_t e;
                std::memcpy(&e, bytes, 4);
                two = e == 2;
                if (e < 0)
                    throw ExprError(ErrorKind::value,
                                    "Integers to negative integer powers are not allowed.", column);
                break;
            }
            case Type::l: {
                std::int64_t e;
                std::memcpy(&e, bytes, 8);
                two = e == 2;
                if (e < 0)
                    throw ExprError(ErrorKind::value,
                                    "Integers to negative integer powers are not allowed.", column);
                break;
            }
            case Type::f: {
                float e;
                std::memcpy(&e, bytes, 4);
                two = e == 2.0f;
                half = e == 0.5f;
                reciprocal = e == -1.0f;
                break;
            }
            case Type::d: {
                double e;
                std::memcpy(&e, bytes, 8);
                two = e == 2.0;
                half = e == 0.5;
                reciprocal = e == -1.0;
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
        if (two) return with_dtype(emit("mul", t, {a, a}, column, weak));
        if (half) return with_dtype(emit("sqrt", t, {a}, column, weak));
        if (reciprocal) {
            Scalar one;
            if (t == Type::f) {
                const float v = 1.0f;
                std::memcpy(one.bytes, &v, sizeof v);
            } else {
                const double v = 1.0;
                std::memcpy(one.bytes, &v, sizeof v);
            }
            return with_dtype(emit("div", t, {constant(t, one, false), a}, column, weak));
        }
    }
    return with_dtype(emit("pow", t, {a, b}, column, weak));
}

Value Compiler::compare(const AstNode& n) {
    Value a = compile_node(n.args[0]);
    Value b = compile_node(n.args[1]);
    static const std::pair<const char*, const char*> names[] = {
        {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}};
    const char* family = "eq";
    for (const auto& p : names) {
        if (n.text == p.first) family = p.second;
    }
    if (a.type == Type::s || b.type == Type::s) return bytes_op(family, a, b, n.column);
    // NumPy 2 compares a Python int with an integer array exactly, whatever the int's
    // magnitude: one beyond the array's type is above (or below) every element, so the
    // answer is the same for all of them (one that fits is compared in the array's type
    // below, as any other operands).
    const bool a_array = !a.weak && is_integer(a.type), b_array = !b.weak && is_integer(b.type);
    if ((a_array && b.weak && b.int_class != IntClass::none) ||
        (b_array && a.weak && a.int_class != IntClass::none)) {
        const Value& array = a_array ? a : b;
        const Value& number = a_array ? b : a;
        const IntDtype own = array.type == Type::i ? IntDtype::int32 : IntDtype::int64;
        if (!int_class_fits(number.int_class, own)) {
            const bool above = number.int_class > IntClass::from_zero;
            // array OP number, the operands swapped back if the number came first.
            std::string op = family;
            if (!a_array) {
                if (op[0] == 'l') op[0] = 'g';
                else if (op[0] == 'g') op[0] = 'l';
            }
            const bool holds = op == "ne" || (op[0] == 'l' && above) || (op[0] == 'g' && !above);
            return emit(holds ? "eq" : "ne", Type::b, {array, array}, n.column);
        }
    }
    const bool weak = a.weak && b.weak;
    const Type t = promote(a, b);
    a = cast(a, t, n.column);
    b = cast(b, t, n.column);
    return emit(family, Type::b, {a, b}, n.column, weak);
}

Value Compiler::zero_of(Type t) {
    Scalar zero;  // all-zero bytes are 0 in every type
    return constant(t, zero, false);
}

Value Compiler::real_or_imag(const std::string& which, const Value& v, int column) {
    if (is_complex(v.type)) {
        return emit(which, v.type == Type::c ? Type::f : Type::d, {v}, column);
    }
    if (which == "real") return v;
    // imag of a real array: zeros shaped like it.
    const Value ones = emit("oneslike", v.type, {v}, column);
    return emit(v.type == Type::b ? "and" : "mul", v.type, {ones, zero_of(v.type)}, column);
}

Value Compiler::to_bool(const Value& v, int column) {
    if (v.type == Type::b) return v;
    return emit("ne", Type::b, {v, zero_of(v.type)}, column);
}

void Compiler::check_arity(const AstNode& n, std::size_t expected) {
    if (n.args.size() != expected) {
        type_error(n.text + "() takes " + std::to_string(expected) + " argument" +
                       (expected == 1 ? "" : "s") + " (" + std::to_string(n.args.size()) +
                       " given)" + arity_hint(n.text, n.args.size()),
                   n.column);
    }
}

Value Compiler::call(const AstNode& n) {
    const std::string& f = n.text;
    if (detail::is_reduction_name(f)) return reduction(n);
    if (f == "contains") {
        check_arity(n, 2);
        return bytes_op(f, compile_node(n.args[0]), compile_node(n.args[1]), n.column);
    }
    if (f == "copy") {  // the value itself, numbers or bytes (numexpr's copy of a bytes array)
        check_arity(n, 1);
        return compile_node(n.args[0]);
    }
    if (f == "where") {
        check_arity(n, 3);
        const Value c = to_bool(compile_numeric(n.args[0]), n.column);
        Value x = compile_numeric(n.args[1]);
        Value y = compile_numeric(n.args[2]);
        const Type t = promote(x, y);
        const IntDtype dtype = result_int_dtype(x, y, t);
        x = cast(x, t, n.column, dtype);
        y = cast(y, t, n.column, dtype);
        Value r = emit("where", t, {c, x, y}, n.column);
        r.int_dtype = dtype;
        return r;
    }
    if (f == "pow" || f == "power" || f == "float_power") {
        // NumPy's power is the ** operator (integers stay integers); float_power computes
        // in float64, or complex128 for complex operands.
        check_arity(n, 2);
        Value a = compile_numeric(n.args[0]);
        Value b = compile_numeric(n.args[1]);
        if (f == "float_power") {
            const Type t = is_complex(promote(a, b)) ? Type::z : Type::d;
            a = cast(a, t, n.column);
            b = cast(b, t, n.column);
        }
        return binary_op("**", a, b, n.column);
    }
    if (const core::FunctionInfo* info = core::find_function(f.c_str())) {
        return table_function(n, *info);
    }
    if (f == "fmod" || f == "maximum" || f == "minimum") {
        check_arity(n, 2);
        Value a = compile_numeric(n.args[0]);
        Value b = compile_numeric(n.args[1]);
        Type t = promote(a, b);
        if (f == "fmod" && t == Type::b) t = Type::i;
        const IntDtype dtype = result_int_dtype(a, b, t);
        Value r = emit(f, t, {cast(a, t, n.column, dtype), cast(b, t, n.column, dtype)}, n.column);
        r.int_dtype = dtype;
        return r;
    }
    if (f == "complex") {
        check_arity(n, 2);
        Value a = compile_numeric(n.args[0]);
        Value b = compile_numeric(n.args[1]);
        Type t = promote(a, b);
        if (is_complex(t)) unsupported_error("complex() needs real arguments", n.column);
        if (t != Type::f) t = Type::d;
        return emit("complex", t == Type::f ? Type::c : Type::z,
                    {cast(a, t, n.column), cast(b, t, n.column)}, n.column);
    }
    check_arity(n, 1);
    const Value v = compile_numeric(n.args[0]);
    const Type t = v.type;
    // An integer result of an integer operand keeps its NumPy dtype.
    const auto same_dtype = [&](Value r) {
        if (r.type == v.type) r.int_dtype = v.int_dtype;
        return r;
    };
    if (f == "ones_like") return same_dtype(emit("oneslike", t, {v}, n.column));
    if (f == "negative") {
        if (t == Type::b) unsupported_error("the boolean negative is not supported", n.column);
        return same_dtype(emit("neg", t, {v}, n.column));
    }
    if (f == "real" || f == "imag") return real_or_imag(f, v, n.column);
    if (f == "conj") return is_complex(t) ? emit("conj", t, {v}, n.column) : v;
    if (f == "abs" || f == "absolute") {
        if (t == Type::b) return v;
        if (is_complex(t)) return emit("abs", t == Type::c ? Type::f : Type::d, {v}, n.column);
        return same_dtype(emit("abs", t, {v}, n.column));
    }
    if (f == "sign") {
        if (t == Type::b) unsupported_error("sign() is not supported for bool", n.column);
        return same_dtype(emit("sign", t, {v}, n.column));
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
    type_error("internal error: unknown function '" + f + "'", n.column);
}

// A function of the function table (functions.hpp): its operands compute
// in the float type of their promoted type; the type rule's opcode rows
// decide which float and complex types exist (emit reports the others).
Value Compiler::table_function(const AstNode& n, const core::FunctionInfo& info) {
    const std::string& f = n.text;
    check_arity(n, static_cast<std::size_t>(info.arity));
    if (info.arity == 2) {
        Value a = compile_numeric(n.args[0]);
        Value b = compile_numeric(n.args[1]);
        const Type t = float_type(promote(a, b));
        return emit(f, t, {cast(a, t, n.column), cast(b, t, n.column)}, n.column);
    }
    const Value v = compile_numeric(n.args[0]);
    const Type t = v.type;
    if (info.types == core::TypeRule::rounding || info.types == core::TypeRule::rounding_complex) {
        if (t == Type::b || is_integer(t)) return v;  // NumPy >= 2 keeps integers as they are
        return emit(f, t, {v}, n.column);
    }
    const Type ft = float_type(t);
    return emit(f, ft, {cast(v, ft, n.column)}, n.column);
}

Value Compiler::reduction(const AstNode& n) {
    check_arity(n, 1);
    Value v = compile_numeric(n.args[0]);
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
                unsupported_error("logsumexp() is not supported for complex numbers", n.column);
            }
            break;
        case ReduceKind::min:
        case ReduceKind::max:
            if (is_complex(in)) {
                // numexpr refuses these too; np.max orders complex numbers
                // lexicographically -- maximum()/minimum() do, element-wise.
                unsupported_error(n.text +
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
    node.axis_int = n.axis_int;
    node.keepdims = n.keepdims;
    Value r{intern(std::move(node)), in, false};
    if (kind == ReduceKind::min || kind == ReduceKind::max) r.int_dtype = v.int_dtype;
    return r;
}

}  // namespace numfuse::expr::detail
