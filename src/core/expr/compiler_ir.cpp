// The compiler's IR pass: hash-consed nodes (a common subexpression is one
// node), emission by opcode name and constant folding through the VM's kernels.
#include <cstdint>
#include <string>
#include <utility>

#include "expr/compiler_internal.hpp"

namespace numfuse::expr::detail {

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
        if (n.type == Type::s) key += n.bytes;
        else key.append(reinterpret_cast<const char*>(n.value.bytes), type_size(n.type));
    }
    if (n.kind == IrNode::reduce_node) {
        key.push_back('|');
        key += std::to_string(static_cast<int>(n.reduce_kind));
        key.push_back(n.all_axes ? 'A' : 'a');
        for (int a : n.axes) key += "," + std::to_string(a);
        key.push_back(n.axis_int ? 'I' : 'T');
        key.push_back(n.keepdims ? 'K' : 'k');
    }
    return key;
}

int Compiler::intern(IrNode node) {
    std::string key = node_key(node);
    const auto found = interned_.find(key);
    if (found != interned_.end()) return found->second;
    nodes_.push_back(std::move(node));
    const int id = static_cast<int>(nodes_.size() - 1);
    interned_.emplace(std::move(key), id);
    return id;
}

Value Compiler::constant(Type type, const Scalar& value, bool weak) {
    IrNode node;
    node.kind = IrNode::constant_node;
    node.type = type;
    node.value = value;
    return {intern(std::move(node)), type, weak};
}

// Emits family_<result><arg types>, folding it when every argument is a
// constant (through the same kernel the VM would run, so folding can
// never disagree with run-time evaluation).
Value Compiler::emit(const std::string& family, Type result, const std::vector<Value>& args,
                     int column, bool weak) {
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
            const IrNode& arg = nodes_[args[k].node];
            p[k] = arg.type == Type::s ? arg.bytes.data()
                                       : reinterpret_cast<const char*>(arg.value.bytes);
        }
        const unsigned flags =
            kernels_[static_cast<int>(op)](reinterpret_cast<char*>(out.bytes), p[0], p[1], p[2], 1);
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

Value Compiler::cast(const Value& v, Type to, int column) {
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

}  // namespace numfuse::expr::detail
