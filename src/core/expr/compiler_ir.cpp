// The compiler's IR pass: hash-consed nodes (a common subexpression is one
// node), emission by opcode name and constant folding through the VM's kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "expr/compiler_internal.hpp"

namespace numfuse::expr::detail {

// The fields that tell two nodes apart (no number formatting and no key object: every node
// the lowering emits is looked up): kind, type, opcode, arguments and input, then a
// constant's value (its type fixes its size; a bytes constant's value is its string) or a
// reduction's parameters.
bool same_node(const IrNode& a, const IrNode& b) {
    if (a.kind != b.kind || a.type != b.type || a.opcode != b.opcode || a.input != b.input ||
        std::memcmp(a.args, b.args, sizeof a.args) != 0) {
        return false;
    }
    if (a.kind == IrNode::constant_node) {
        if (a.type == Type::s) return a.bytes == b.bytes;
        return std::memcmp(a.value.bytes, b.value.bytes, type_size(a.type)) == 0;
    }
    if (a.kind == IrNode::reduce_node) {
        return a.reduce_kind == b.reduce_kind && a.all_axes == b.all_axes &&
               a.axis_int == b.axis_int && a.keepdims == b.keepdims && a.axes == b.axes;
    }
    return true;
}

namespace {

// FNV-1a over bytes, continuing from `h`.
std::uint64_t mix(std::uint64_t h, const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t k = 0; k < size; ++k) h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}

}  // namespace

// A hash of the fields same_node compares.
std::uint64_t node_hash(const IrNode& n) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    h = mix(h, &n.kind, sizeof n.kind);
    h = mix(h, &n.type, sizeof n.type);
    h = mix(h, &n.opcode, sizeof n.opcode);
    h = mix(h, n.args, sizeof n.args);
    h = mix(h, &n.input, sizeof n.input);
    if (n.kind == IrNode::constant_node) {
        h = n.type == Type::s ? mix(h, n.bytes.data(), n.bytes.size())
                              : mix(h, n.value.bytes, type_size(n.type));
    }
    if (n.kind == IrNode::reduce_node) {
        h = mix(h, &n.reduce_kind, sizeof n.reduce_kind);
        h = mix(h, n.axes.data(), n.axes.size() * sizeof(int));
    }
    return h;
}

// Open addressing over node ids (-1: empty), at most half full: a node's lookup hashes
// it and compares fields, with no allocation but the table's growth.
int Compiler::intern(IrNode node) {
    if (2 * (nodes_.size() + 1) > interned_.size()) {
        std::vector<int> larger(std::max<std::size_t>(16, 2 * interned_.size()), -1);
        const std::size_t mask = larger.size() - 1;
        for (std::size_t id = 0; id < nodes_.size(); ++id) {
            std::size_t k = static_cast<std::size_t>(node_hash(nodes_[id])) & mask;
            while (larger[k] >= 0) k = (k + 1) & mask;
            larger[k] = static_cast<int>(id);
        }
        interned_.swap(larger);
    }
    const std::size_t mask = interned_.size() - 1;
    std::size_t k = static_cast<std::size_t>(node_hash(node)) & mask;
    for (; interned_[k] >= 0; k = (k + 1) & mask) {
        if (same_node(nodes_[static_cast<std::size_t>(interned_[k])], node)) return interned_[k];
    }
    nodes_.push_back(std::move(node));
    const int id = static_cast<int>(nodes_.size() - 1);
    interned_[k] = id;
    return id;
}

Value Compiler::constant(Type type, const Scalar& value, bool weak) {
    IrNode node;
    node.kind = IrNode::constant_node;
    node.type = type;
    node.value = value;
    return {intern(std::move(node)), type, weak};
}

Value Compiler::python_int(std::int64_t value) {
    Value v = constant(Type::l, scalar_of(value), true);
    v.int_class = int_class_of(value);
    return v;
}

Value Compiler::big_python_int(double rounded, bool exact_int64_end) {
    Value v = constant(Type::d, scalar_of(rounded), true);
    v.int_class = exact_int64_end ? IntClass::int64_end : big_int_class(rounded);
    return v;
}

namespace {

// Python's exact result of `family` on two Python ints where the int64 kernel can wrap
// (add, sub, mul, neg, abs, pow): false when it fits int64 (the kernel's result is
// exact), else true with *rounded its value rounded to float64 (+-inf beyond that) and
// *int64_end whether it is 2^63 exactly.
bool python_int_leaves_int64(const std::string& family, std::int64_t a, std::int64_t b,
                             double* rounded, bool* int64_end) {
    __extension__ typedef __int128 Wide;  // GCC and Clang: exact products of two int64
    Wide r = 0;
    if (family == "add") {
        r = Wide{a} + b;
    } else if (family == "sub") {
        r = Wide{a} - b;
    } else if (family == "mul") {
        r = Wide{a} * b;
    } else if (family == "neg") {
        r = -Wide{a};
    } else if (family == "abs") {
        r = a < 0 ? -Wide{a} : Wide{a};
    } else if (family == "pow") {
        // b >= 0 here (ints to negative int powers are refused before folding). Square
        // and multiply in 128 bits; past them, in long double, the one inexact case.
        Wide result = 1, base = a;
        bool overflow = false;
        for (std::int64_t e = b; e > 0 && !overflow; e >>= 1) {
            if (e & 1) overflow = __builtin_mul_overflow(result, base, &result);
            if (e > 1 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
        }
        if (overflow) {
            *rounded = static_cast<double>(
                std::pow(static_cast<long double>(a), static_cast<long double>(b)));
            *int64_end = false;
            return true;
        }
        r = result;
    } else {
        return false;
    }
    if (r >= INT64_MIN && r <= INT64_MAX) return false;
    *rounded = static_cast<double>(r);
    *int64_end = r == Wide{INT64_MAX} + 1;
    return true;
}

}  // namespace

// Emits family_<result><arg types>, folding it when every argument is a
// constant (through the same kernel the VM would run, so folding can
// never disagree with run-time evaluation; arithmetic between Python ints is
// Python's, exact: a result beyond int64 becomes a Python int beyond int64).
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
        unsupported_error("'" + family + "' is not supported for " + types, column);
    }
    bool all_constant = true;
    for (const auto& a : args) all_constant = all_constant && is_constant(a);
    // An operation between Python ints (k + 1) is a Python int whose class the checks
    // need: with a name among the operands, only the names' values tell it, so the plan
    // is compiled for them, the names folded as constants (Plan::value_keyed).
    const bool python_int_result = weak && is_integer(result) && family != "cast";
    if (python_int_result && !all_constant) {
        for (const auto& a : args) {
            if (a.int_class != IntClass::none && !is_constant(a)) throw NeedsValues{};
        }
    }
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
        if (python_int_result && result == Type::l) {
            std::int64_t x[2] = {0, 0};
            for (std::size_t k = 0; k < args.size() && k < 2; ++k) {
                std::memcpy(&x[k], p[k], sizeof x[k]);
            }
            double rounded = 0.0;
            bool int64_end = false;
            if (python_int_leaves_int64(family, x[0], x[1], &rounded, &int64_end)) {
                return big_python_int(rounded, int64_end);
            }
            std::int64_t value;
            std::memcpy(&value, out.bytes, sizeof value);
            return python_int(value);
        }
        Value folded = constant(result, out, weak);
        if (python_int_result && result == Type::i) {
            std::int32_t value;
            std::memcpy(&value, out.bytes, sizeof value);
            folded.int_class = int_class_of(value);
        }
        return folded;
    }
    IrNode node;
    node.kind = IrNode::op_node;
    node.type = result;
    node.opcode = op;
    for (std::size_t k = 0; k < args.size(); ++k) node.args[k] = args[k].node;
    return {intern(std::move(node)), result, weak};
}

std::string Compiler::describe_python_int(const Value& v) const {
    const IrNode& node = nodes_[v.node];
    if (v.type != Type::l) return {};
    if (node.kind == IrNode::constant_node) {
        std::int64_t x;
        std::memcpy(&x, node.value.bytes, sizeof x);
        return std::to_string(x);
    }
    if (node.kind == IrNode::input_node) {
        return std::to_string(inputs_[static_cast<std::size_t>(node.input)].int_value);
    }
    return {};
}

// NumPy 2's rule for a Python int (NEP 50): converted to the dtype of the operation, it
// must fit it, or the operation is an OverflowError (float64: Python's own float()).
void Compiler::check_python_int(const Value& v, Type to, IntDtype dtype, int column) {
    if (!v.weak || v.int_class == IntClass::none || to == Type::b) return;
    if (is_integer(to)) {
        const IntDtype d =
            dtype != IntDtype::none ? dtype : (to == Type::i ? IntDtype::int32 : IntDtype::int64);
        if (int_class_fits(v.int_class, d)) return;
        const std::string value = describe_python_int(v);
        throw ExprError(ErrorKind::overflow,
                        value.empty()
                            ? std::string("Python integer out of bounds for ") + int_dtype_name(d) +
                                  " (it lies beyond int64)"
                            : "Python integer " + value + " out of bounds for " + int_dtype_name(d),
                        column);
    }
    if (!int_class_fits_float64(v.int_class)) {
        throw ExprError(ErrorKind::overflow, "Python int too large to convert to float", column);
    }
}

Value Compiler::cast(const Value& v, Type to, int column, IntDtype dtype) {
    check_python_int(v, to, dtype, column);
    Value r = v.type == to ? v : emit("cast", to, {v}, column, v.weak);
    if (r.weak && v.int_class != IntClass::none && is_integer(to)) {
        r.int_class = v.int_class;  // the value, converted: it fits
    } else if (r.type != v.type) {
        r.int_class = IntClass::none;
    }
    if (!r.weak && is_integer(to) && dtype != IntDtype::none) r.int_dtype = dtype;
    return r;
}

}  // namespace numfuse::expr::detail
