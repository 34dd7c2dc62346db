// numfuse's expression engine: the pure C++ API (no Python anywhere).
//
// text --lexer/parser--> AST --compiler--> Plan (stages of fused bytecode)
//      --VM--> blocks of at most a few thousand elements, OpenMP across blocks.
//
// A Plan is immutable once built and shared between threads (the LRU cache
// hands out shared_ptr<const Plan>); all mutable state of a run lives on the
// stack or in per-thread workspaces of the VM, so any number of threads may
// compile and execute at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "expr/opcodes.hpp"
#include "numfuse_core.hpp"

namespace numfuse::expr {

// Element types of the engine. Smaller integer types are widened by the
// caller (as numexpr does): int8/int16/uint8/uint16 -> int32, uint32 -> int64.
// s: byte strings (NumPy's S dtype) of any element size, carried next to the
// type (InputSpec::item, ArrayView::item, Register::item); they enter only the
// bytes comparisons and contains(), whose third operand is a constant of type
// w (BytesWidths, kernel_table.hpp: the two operands' element sizes).
enum class Type : std::uint8_t { b, i, l, f, d, c, z, s, w };
// The numeric types b..z (the ones NumPy arrays and results can have).
inline constexpr int type_count = 7;

// Bytes per element; 0 for s, whose size is the operand's own.
std::size_t type_size(Type t) noexcept;
char type_letter(Type t) noexcept;
// NumPy's name for the type ("float64", ...).
const char* type_name(Type t) noexcept;
bool is_integer(Type t) noexcept;  // i, l
bool is_float(Type t) noexcept;    // f, d
bool is_complex(Type t) noexcept;  // c, z

// Every error a user can cause. The bindings map `kind` to the Python
// exception numexpr/NumPy raise for the same mistake. `unsupported`: an operation the
// engine has no instruction for on these types (arithmetic on bytes, bytes compared with a
// number), where numexpr raises NotImplementedError for its missing opcode.
enum class ErrorKind { syntax, name, type, value, overflow, unsupported };

class ExprError : public std::runtime_error {
public:
    ExprError(ErrorKind kind, const std::string& message, int column = -1)
        : std::runtime_error(message), kind(kind), column(column) {}
    ErrorKind kind;
    int column;  // 0-based position in the expression text; -1 when none
};

enum class Opcode : std::uint16_t {
#define NUMFUSE_EXPR_ENUM(name, ...) name,
    NUMFUSE_EXPR_OPCODES(NUMFUSE_EXPR_ENUM)
#undef NUMFUSE_EXPR_ENUM
        count
};
inline constexpr int opcode_count = static_cast<int>(Opcode::count);

const char* opcode_name(Opcode op) noexcept;
// Opcode::count when no row has this name.
Opcode find_opcode(const std::string& name) noexcept;

// Enough bytes for one element of any Type, suitably aligned.
struct Scalar {
    alignas(16) unsigned char bytes[16] = {};
};

// A VM register holds one block of one type. Inputs point at (or are
// gathered from) the caller's arrays, constants are filled once per thread,
// temporaries live in the thread's workspace, in `slot`.
enum class RegisterKind : std::uint8_t { input, constant, temp };

struct Register {
    RegisterKind kind = RegisterKind::temp;
    Type type = Type::d;
    int input = -1;  // index into the stage's inputs
    int slot = -1;   // workspace slot of a temporary
    Scalar value;    // a constant's value
    std::size_t item = 0;  // element size of a bytes register (Type::s)
    std::string bytes;     // a bytes constant's value (`item` bytes, NUL-padded)
};

// Bytes per element of a register (its type's size, a bytes register's own).
inline std::size_t register_item(const Register& r) noexcept {
    return r.type == Type::s ? r.item : type_size(r.type);
}

struct Instruction {
    Opcode op;
    std::int16_t dst, a, b, c;  // register indices; -1 = unused
};

// One fused element-wise program. The result is always a temporary with a
// slot of its own (never reused), so the VM may point it straight at the
// output array without clobbering an input that aliases the output.
struct Program {
    std::vector<Register> registers;
    std::vector<Instruction> code;
    int result = -1;
    int slots = 0;
    std::size_t max_item = 8;  // largest element size of any register
};

enum class ReduceKind : std::uint8_t { none, sum, prod, min, max, mean, logsumexp };
const char* reduce_name(ReduceKind kind) noexcept;

struct StageInput {
    bool from_stage = false;  // an earlier stage's output, else a caller input
    int index = 0;
    // The result array itself, holding what Plan::reuse_stage stored there (only in
    // Plan::reuse_last; last, so that {from_stage, index} initialisers keep meaning that).
    bool from_output = false;
};

// A stage runs its program over the broadcast shape of its inputs and either
// stores the result (the last stage, reduce == none) or reduces it over `axes`.
struct Stage {
    Program program;
    std::vector<StageInput> inputs;
    ReduceKind reduce = ReduceKind::none;
    bool all_axes = true;    // axis=None
    std::vector<int> axes;   // as written (may be negative); resolved at run time
    // axis= was one integer, not a tuple: then, as in NumPy, a 0-d operand accepts
    // axis 0 and -1 (reducing its one element) for sum, prod, min and max (logsumexp
    // takes (0,) and (-1,) too, as numfuse.logsumexp; mean neither, as np.mean).
    bool axis_int = false;
    bool keepdims = false;
    Type out_type = Type::d;
};

struct Plan {
    std::string text;
    // The instruction-set level whose kernels folded the constants (compile_plan uses
    // the active one). execute() runs the active level's kernels, so a plan gives one
    // level's bits throughout only where this is the active level: cached_plan keys
    // on the level, and callers that hold a plan fetch it again after set_level.
    core::Level level = core::Level{};
    std::vector<std::string> input_names;
    std::vector<Type> input_types;
    std::vector<std::size_t> input_items;  // element size of bytes inputs, else 0
    std::vector<Stage> stages;  // in execution order; the last gives the result
    Type result_type = Type::d;
    // A bytes result (result_type s), numexpr's evaluate("s") and evaluate("copy(s)"): no
    // operation yields bytes, so the expression is a bytes input (bytes_input >= 0) or
    // literal (bytes_constant), perhaps through copy(). Such a plan has no stages:
    // result_shape() is the input's and execute() copies its elements.
    int bytes_input = -1;
    std::string bytes_constant;
    std::size_t result_item = 0;  // element size of a bytes result, else 0
    // Compiled for the values of its weak Python ints (InputSpec::int_value), folded as
    // constants, not only for their classes: the expression computes with them before
    // they meet an array (i32 + (k + 1)), so NumPy's range check needs the value. The
    // cache then keys on the values; callers that memoise plans compare them too.
    bool value_keyed = false;
    // A value computed once instead of twice: where what a reduction stage reduces is
    // also an operand of the final stage, has the result's type and costs more than a
    // pass over memory (softmax: exp(x - max(x)) under its sum and in exp(..) / sum(..)),
    // stage `reuse_stage` may write those values into the result array while it reduces
    // and `reuse_last` (the final stage reading them back, StageInput::from_output)
    // replace stages.back(). The VM does so where the result has the stage's
    // iteration shape, is contiguous in its order and overlaps no input; the values are
    // the same either way (the same instructions on the same elements). Other back
    // ends run `stages` as they are. -1: no such stage.
    int reuse_stage = -1;
    Stage reuse_last;
};

// Limits that keep hostile input from exhausting the stack or the memory.
inline constexpr std::size_t max_expression_length = 100000;
inline constexpr int max_nesting_depth = 400;

// The variable names the expression uses, in order of first appearance
// (function names and the keywords True/False are not included). Throws
// ExprError(syntax) with the column of the first error.
std::vector<std::string> expression_names(const std::string& text);

// The NumPy dtype of an integer array before the widening above (int8/int16/uint8/
// uint16 -> int32, uint32 -> int64). NumPy's rule for Python ints (NEP 50) checks them
// against the array's own dtype: uint8 + 300 is an OverflowError though the engine
// computes uint8 in int32. `none`: the engine type's own (int32, int64), or no integer.
enum class IntDtype : std::uint8_t { none, int8, uint8, int16, uint16, int32, uint32, int64 };
const char* int_dtype_name(IntDtype dtype) noexcept;

// Where a weak Python int lies (InputSpec::int_range).
enum class PyIntRange : std::uint8_t {
    unknown,        // not a Python int, or the caller does not say: no range checks
    int64,          // within int64 (type l): InputSpec::int_value holds it
    above_int64,    // beyond int64 (type d: the value rounded to float64)
    below_int64,    //
    above_float64,  // beyond float64 too (Python's float() raises; type d, holding +-inf)
    below_float64,  //
};

// How an input enters the type rules. Python scalars are "weak" (NumPy's
// NEP 50): they take the type of the arrays they meet. For a Python int, NumPy 2 checks
// that its value fits the dtype it meets (OverflowError otherwise; comparisons are exact
// instead): the compiler makes the same checks from int_range and int_value
// (docs/evaluate.md, Python integers).
struct InputSpec {
    std::string name;
    Type type = Type::d;
    bool weak = false;
    std::size_t item = 0;  // element size of a bytes input (Type::s, at least 1)
    IntDtype int_dtype = IntDtype::none;         // an integer array's own dtype
    PyIntRange int_range = PyIntRange::unknown;  // a weak Python int's range
    std::int64_t int_value = 0;                  // its value, when within int64
};

// The class of a weak Python int: ints of one class fit the same integer dtypes, and a
// plan depends only on the classes of its Python ints, unless Plan::value_keyed. -1 when
// `range` is unknown.
int python_int_class(PyIntRange range, std::int64_t value) noexcept;

// Compiles without the cache, folding constants with the kernels of the active
// instruction-set level (Plan::level). Names the expression uses but `inputs` lacks
// are an ExprError(name), except inf and nan, which are constants.
std::shared_ptr<const Plan> compile_plan(const std::string& text,
                                         const std::vector<InputSpec>& inputs);
// Same, through a process-wide LRU cache keyed by text, input specs and the active
// level (so a plan fetched after numfuse.set_level has that level's folded constants).
std::shared_ptr<const Plan> cached_plan(const std::string& text,
                                        const std::vector<InputSpec>& inputs);
void set_cache_capacity(std::size_t entries);
std::size_t cache_size();
void clear_cache();

// One line per instruction, numexpr's disassembly style.
struct DisassembledInstruction {
    int stage;
    std::string opcode;
    std::string dst, a, b, c;
};
std::vector<DisassembledInstruction> disassemble(const Plan& plan);

// A strided view of caller memory (strides in bytes, any sign).
struct ArrayView {
    char* data = nullptr;
    Type type = Type::d;
    std::vector<std::ptrdiff_t> shape;
    std::vector<std::ptrdiff_t> strides;
    std::size_t item = 0;  // element size of a bytes view (Type::s)
};

// Bytes per element of a view.
inline std::size_t view_item(const ArrayView& v) noexcept {
    return v.type == Type::s ? v.item : type_size(v.type);
}

// The shape of the result for these input shapes (throws ExprError(value) on
// shapes that do not broadcast or bad axes).
std::vector<std::ptrdiff_t> result_shape(const Plan& plan,
                                         const std::vector<std::vector<std::ptrdiff_t>>& shapes);

// Runs the plan; `out` has result_shape() and plan.result_type. Outputs may
// alias an input element for element (same data and strides); the caller
// copies inputs that overlap the output any other way. Thread-safe.
void execute(const Plan& plan, const std::vector<ArrayView>& inputs, const ArrayView& out);

// The fast path for compiled objects: how a plan runs over 1-d C-contiguous
// inputs that all have one length n >= 1, and scalars, without shapes,
// strides or owned arrays per call. `flat`: one element-wise stage over
// caller inputs (as `2*a + 3*b`). `line`: every stage but the last reduces
// everything to one value, which later stages read as a scalar (softmax
// `exp(x)/sum(exp(x))`, `log(sum(exp(x - max(x))))`). Plans over bytes are
// neither.
struct ContiguousForm {
    enum class Kind : std::uint8_t { none, flat, line };
    Kind kind = Kind::none;
    std::vector<char> scalar_input;  // per plan input: one element, else n
    std::vector<char> line_stage;    // per stage: iterates over the n elements, else over one
    std::vector<std::ptrdiff_t> result_shape;  // (), (1,) or (n,), with -1 standing for n
};
// `scalar_input`: which inputs are single values (the others are 1-d arrays);
// Kind::none when no input is an array.
ContiguousForm contiguous_form(const Plan& plan, const std::vector<char>& scalar_input);
// Runs the plan over n >= 1 elements (n = 0 is an ExprError: execute() has
// the empty-reduction rules): inputs[k] holds input k's n contiguous elements
// (its one element where form.scalar_input[k]) of plan.input_types[k]; `out`
// is fresh, contiguous, of form.result_shape and aliases no input. Same bits
// as execute(); throws ExprError as it does.
void execute_contiguous(const Plan& plan, const ContiguousForm& form, const char* const* inputs,
                        std::size_t n, char* out);

// Elements per VM block of element-wise stages (tests use it to exercise block edges).
std::size_t block_elements(const Program& program) noexcept;

}  // namespace numfuse::expr
