// The compiler's internals, shared by its passes (one file each):
//   compiler_types.cpp    the engine's types and NumPy's promotion rules
//   compiler_ir.cpp       the hash-consed IR: common subexpressions, constant folding
//   compiler_lower.cpp    AST -> IR: the operators' and functions' type rules
//   compiler_codegen.cpp  IR -> stages of bytecode with register reuse; disassembly
//   plan_cache.cpp        the LRU cache of compiled plans and the public entry points
//   operation.cpp         ASTs built without the parser: one operation's node (operation.hpp)
//
// Type rules are NumPy's (NEP 50): arrays and NumPy scalars are "strong";
// Python numbers (literals and Python-scalar inputs) are "weak" and take the
// kind-compatible type of whatever strong operand they meet; arithmetic
// between weak operands stays weak, as Python arithmetic would. A Python int
// must fit the dtype it meets (NumPy 2's OverflowError), one checked in
// Compiler::cast for literals and names alike, except in comparisons, which are
// exact (Compiler::compare).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "expr/expr.hpp"
#include "expr/kernel_table.hpp"
#include "expr/parser.hpp"
#include "functions.hpp"

namespace numfuse::expr::detail {

[[noreturn]] void type_error(const std::string& message, int column);
// ErrorKind::unsupported: an operation the engine has no instruction for on these types.
[[noreturn]] void unsupported_error(const std::string& message, int column);
// What bytes operands may do (the messages of unsupported bytes operations).
inline constexpr const char* bytes_only_message =
    "bytes can only be compared (==, !=, <, <=, >, >=) with bytes or searched with "
    "contains(haystack, needle)";

// ------------------------------------------------------------------ promotion
enum class Kind { boolean, integer, real, complex };
Kind kind_of(Type t) noexcept;

// NumPy's promotion table restricted to the engine's types.
Type promote_strong(Type a, Type b) noexcept;

// ------------------------------------------------------------------ Python ints
// Where a Python int lies between the bounds of the integer dtypes (in order): two ints
// of one class fit the same dtypes, so NumPy's range check of a name needs only its
// class (the plan cache keys on it, InputSpec), and a literal's class is its value's.
enum class IntClass : std::uint8_t {
    none,  // not a Python int, or one whose range the caller did not give: unchecked
    below_float64,
    below_int64,
    from_int64_min,   // [-2^63, -2^31)
    from_int32_min,   // [-2^31, -2^15)
    from_int16_min,   // [-2^15, -2^7)
    from_int8_min,    // [-2^7, 0)
    from_zero,        // [0, 2^7)
    from_int8_end,    // [2^7, 2^8)
    from_uint8_end,   // [2^8, 2^15)
    from_int16_end,   // [2^15, 2^16)
    from_uint16_end,  // [2^16, 2^31)
    from_int32_end,   // [2^31, 2^32)
    from_uint32_end,  // [2^32, 2^63)
    int64_end,        // 2^63 exactly, as a literal or folded (its negative is int64's min)
    above_int64,
    above_float64,
};
IntClass int_class_of(std::int64_t value) noexcept;
IntClass int_class_of(PyIntRange range, std::int64_t value) noexcept;
// The class of a Python int beyond int64, from its value rounded to float64 (+-inf
// beyond float64's range).
IntClass big_int_class(double rounded) noexcept;
bool is_big_int_class(IntClass c) noexcept;  // beyond int64
// NumPy's range check: every int of class `c` fits `dtype` (an integer dtype).
bool int_class_fits(IntClass c, IntDtype dtype) noexcept;
bool int_class_fits_float64(IntClass c) noexcept;

struct Value {
    int node = -1;
    Type type = Type::d;
    bool weak = false;
    // A weak Python int: its class (an int beyond int64 has type d, its value rounded).
    IntClass int_class = IntClass::none;
    // A strong integer: the NumPy dtype it stands for (none: its type's own).
    IntDtype int_dtype = IntDtype::none;
};

// The NumPy dtype of an integer value: its own (a widened input's) or its type's.
IntDtype numpy_int_dtype(const Value& v) noexcept;
// The NumPy dtype of the integer type `t` two operands compute in (NumPy's promotion of
// their dtypes; none when `t` is not an integer type).
IntDtype result_int_dtype(const Value& a, const Value& b, Type t) noexcept;

// A weak (Python) operand meeting a strong one.
Type promote_weak(Type weak, Type strong) noexcept;

// NumPy's result type of two operands (a Python int beyond int64 counts as an int).
Type promote(const Value& a, const Value& b) noexcept;

// The float type a math function computes in (NumPy's loop choice; bool and
// int8 would be float16 in NumPy, which the engine lacks: float32 instead).
Type float_type(Type t) noexcept;

// ------------------------------------------------------------------ IR
struct IrNode {
    enum Kind : std::uint8_t { input_node, constant_node, op_node, reduce_node } kind = op_node;
    Type type = Type::d;
    Opcode opcode = Opcode::count;
    int args[3] = {-1, -1, -1};
    int input = -1;
    Scalar value;
    std::size_t item = 0;  // element size of a bytes node (Type::s)
    std::string bytes;     // a bytes constant's value, NUL-padded to `item`
    ReduceKind reduce_kind = ReduceKind::none;
    bool all_axes = true;
    std::vector<int> axes;
    bool axis_int = false;
    bool keepdims = false;
};

// Whether two nodes are one (hash-consing: a common subexpression is one node), and a hash
// of what that compares.
bool same_node(const IrNode& a, const IrNode& b);
std::uint64_t node_hash(const IrNode& n);

template <class T>
Scalar scalar_of(T v) {
    Scalar s;
    std::memcpy(s.bytes, &v, sizeof v);
    return s;
}

// One compilation: AST -> IR (lowering, with folding and CSE) -> Plan (codegen).
class Compiler {
public:
    // Folds constants with `level`'s kernels (Plan::level).
    Compiler(const std::string& text, const std::vector<InputSpec>& inputs, core::Level level)
        : text_(text), inputs_(inputs), level_(level), kernels_(level_kernels(level)) {}
    // Compiles `ast`, the caller's AST of `text` (compile_operation), instead of parsing it.
    Compiler(const std::string& text, const Ast& ast, const std::vector<InputSpec>& inputs,
             core::Level level)
        : text_(text),
          inputs_(inputs),
          level_(level),
          kernels_(level_kernels(level)),
          given_ast_(&ast) {}
    std::shared_ptr<const Plan> compile();

private:
    // ---------------------------------------------------------------- IR (compiler_ir.cpp)
    int intern(IrNode node);
    Value constant(Type type, const Scalar& value, bool weak);
    // A Python int constant: int64, or beyond int64 (type d, `rounded` its value).
    Value python_int(std::int64_t value);
    // `exact_int64_end`: the value is 2^63 exactly (IntClass::int64_end).
    Value big_python_int(double rounded, bool exact_int64_end = false);
    bool is_constant(const Value& v) const { return nodes_[v.node].kind == IrNode::constant_node; }
    // Emits family_<result><arg types>, folding it when every argument is a
    // constant (through the same kernel the VM would run, so folding can
    // never disagree with run-time evaluation).
    Value emit(const std::string& family, Type result, const std::vector<Value>& args, int column,
               bool weak = false);
    // `dtype`: the NumPy dtype an integer `to` stands for (none: its own). A Python int
    // converted to it must fit (NumPy 2's OverflowError; check_python_int).
    Value cast(const Value& v, Type to, int column, IntDtype dtype = IntDtype::none);
    void check_python_int(const Value& v, Type to, IntDtype dtype, int column);
    // How a Python int reads in messages ("1099511627776"; empty beyond int64).
    std::string describe_python_int(const Value& v) const;

    // ---------------------------------------------------------------- lowering
    // (compiler_lower.cpp)
    std::shared_ptr<const Plan> compile_once();
    // The node's value, lowered once: a repeated group of the text is one node that
    // several parents share (parse_expression), and lowering depends on the node alone.
    Value compile_node(int index);
    Value lower_node(int index);
    // compile_node for an operand of anything but the bytes operations: a
    // bytes operand is a TypeError that says where bytes may appear.
    Value compile_numeric(int index);
    Value bytes_constant(const AstNode& n);
    // numexpr's letter for an operand's kind in its opcode names ('add_sss', 'ge_bsi').
    char numexpr_kind(const Value& v) const;
    // An unsupported-operation error when any of `args` is bytes: operator `op` ('+'),
    // named in numexpr's opcode terms by `numexpr_op` ("add"; empty: not named).
    void refuse_bytes_operands(const std::string& op, const std::string& numexpr_op,
                               const std::vector<Value>& args, int column) const;
    // A bytes comparison or contains(): both operands bytes, result bool.
    Value bytes_op(const std::string& family, const Value& a, const Value& b, int column);
    Value number(const AstNode& n);
    Value name(const AstNode& n);
    Value unary(const AstNode& n);
    Value binary(const AstNode& n);
    Value binary_op(const std::string& op, Value a, Value b, int column);
    Value power(Value a, Value b, Type t, int column, bool weak);
    Value compare(const AstNode& n);
    Value zero_of(Type t);
    Value real_or_imag(const std::string& which, const Value& v, int column);
    Value to_bool(const Value& v, int column);
    void check_arity(const AstNode& n, std::size_t expected);
    Value call(const AstNode& n);
    // A function of the function table (functions.hpp): its operands compute
    // in the float type of their promoted type; the type rule's opcode rows
    // decide which float and complex types exist (emit reports the others).
    Value table_function(const AstNode& n, const core::FunctionInfo& info);
    Value reduction(const AstNode& n);

    // ---------------------------------------------------------------- codegen
    // (compiler_codegen.cpp)
    void build_stages(int root, Plan& plan);
    void collect_reductions(int id, std::vector<char>& seen, std::vector<int>& out);
    // Register allocation: temporaries share workspace slots; an instruction
    // writes over an argument that dies there when the element sizes match.
    // `output_leaf`: a node read from the result array (Plan::reuse_last), not computed.
    Program generate(int root, const std::vector<int>& stage_of, std::vector<StageInput>& inputs,
                     int output_leaf = -1);
    void topo(int id, std::vector<char>& seen, std::vector<int>& order, int output_leaf = -1);
    // Plan::reuse_stage and reuse_last, when a reduction qualifies.
    void plan_reuse(int root, const std::vector<int>& reductions, const std::vector<int>& stage_of,
                    Plan& plan);

    // Thrown (and caught by compile()) when the plan needs the values of the weak
    // Python ints, not only their classes (Plan::value_keyed).
    struct NeedsValues {};

    const std::string& text_;
    const std::vector<InputSpec>& inputs_;
    // Python int names are constants of their values (Plan::value_keyed).
    bool values_known_ = false;
    const core::Level level_;
    const OpKernelTable& kernels_;
    const Ast* given_ast_ = nullptr;  // the caller's AST, else the parse of text_
    const detail::Ast* ast_ = nullptr;
    std::vector<Value> lowered_;  // compile_node's results by AST node (node -1: not yet)
    std::vector<IrNode> nodes_;
    std::vector<int> interned_;  // intern()'s table of node ids, -1 where empty
};

}  // namespace numfuse::expr::detail
