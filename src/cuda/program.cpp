// Translation of a compiled expression (numfuse::expr::Plan, the CPU engine's
// bytecode) into the device interpreter's program (launch.hpp, vm::Program).
// Host code only; the same parser, type rules and common-subexpression
// elimination as numfuse.evaluate, so the GPU computes the same program.
#include "program.hpp"

#include "vm_exec.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

namespace numfuse::cuda::vm {
namespace {

using expr::Opcode;
using expr::RegisterKind;

bool is_real_letter(char t) { return t == 'b' || t == 'i' || t == 'l' || t == 'f' || t == 'd'; }

Type type_of_letter(char t) {
    switch (t) {
        case 'b': return Type::b;
        case 'i': return Type::i;
        case 'l': return Type::l;
        case 'f': return Type::f;
        default: return Type::d;
    }
}

Type type_of(expr::Type t) { return type_of_letter(expr::type_letter(t)); }

// What each family accepts as its operand type.
enum class Accepts { any, numeric, floating, integral };

struct FamilyInfo {
    Family family;
    Accepts accepts;
};

const std::unordered_map<std::string, FamilyInfo>& family_table() {
    static const std::unordered_map<std::string, FamilyInfo> table = {
        {"add", {Family::Add, Accepts::numeric}},
        {"sub", {Family::Sub, Accepts::numeric}},
        {"mul", {Family::Mul, Accepts::numeric}},
        {"div", {Family::Div, Accepts::floating}},
        {"neg", {Family::Neg, Accepts::numeric}},
        {"abs", {Family::Abs, Accepts::numeric}},
        {"copy", {Family::Copy, Accepts::any}},
        {"oneslike", {Family::OnesLike, Accepts::any}},
        {"maximum", {Family::Maximum, Accepts::any}},
        {"minimum", {Family::Minimum, Accepts::any}},
        {"where", {Family::Where, Accepts::any}},
        {"cast", {Family::Cast, Accepts::any}},
        {"lt", {Family::Less, Accepts::any}},
        {"le", {Family::LessEqual, Accepts::any}},
        {"gt", {Family::Greater, Accepts::any}},
        {"ge", {Family::GreaterEqual, Accepts::any}},
        {"eq", {Family::Equal, Accepts::any}},
        {"ne", {Family::NotEqual, Accepts::any}},
        {"and", {Family::BitAnd, Accepts::integral}},
        {"or", {Family::BitOr, Accepts::integral}},
        {"xor", {Family::BitXor, Accepts::integral}},
        {"invert", {Family::Invert, Accepts::integral}},
        {"pow", {Family::Pow, Accepts::floating}},
        {"isnan", {Family::Isnan, Accepts::floating}},
        {"isinf", {Family::Isinf, Accepts::floating}},
        {"isfinite", {Family::Isfinite, Accepts::floating}},
        {"signbit", {Family::Signbit, Accepts::floating}},
        {"floordiv", {Family::FloorDiv, Accepts::numeric}},
        {"mod", {Family::Mod, Accepts::numeric}},
        {"fmod", {Family::Fmod, Accepts::numeric}},
    // The function table's rows the GPU runs (functions.hpp): float operands.
#define NUMFUSE_CUDA_FAMILY_ROW(name, arity, types, Functor, libm, ufunc, gpu, summary) \
    NUMFUSE_CUDA_VM_IF_GPU_##gpu({#name, {Family::Functor, Accepts::floating}}, )
        NUMFUSE_FUNCTIONS(NUMFUSE_CUDA_FAMILY_ROW)
#undef NUMFUSE_CUDA_FAMILY_ROW
    };
    return table;
}

bool accepts(Accepts a, char t) {
    switch (a) {
        case Accepts::any: return true;
        case Accepts::numeric: return t != 'b';
        case Accepts::floating: return t == 'f' || t == 'd';
        case Accepts::integral: return t == 'b' || t == 'i' || t == 'l';
    }
    return false;
}

Instr translate(const expr::Instruction& ins) {
    const std::string name = expr::opcode_name(ins.op);
    const auto cut = name.rfind('_');
    const std::string fam = name.substr(0, cut);
    const std::string letters = name.substr(cut + 1);  // result, then the operands
    for (char t : letters) {
        if (t == 's' || t == 'w') {
            throw Unsupported("byte strings ('" + name + "') are not supported on the GPU");
        }
        if (t != 'n' && !is_real_letter(t)) {
            throw Unsupported("complex numbers ('" + name + "') are not supported on the GPU");
        }
    }
    const auto& table = family_table();
    const auto it = table.find(fam);
    // Where's operand type is its second operand's (the first is the bool condition).
    const char operand = fam == "where" ? letters.at(2) : letters.at(1);
    if (it == table.end() || !accepts(it->second.accepts, operand)) {
        throw Unsupported("operation '" + name + "' is not implemented in the GPU interpreter");
    }
    Instr out{};
    out.family = static_cast<std::uint8_t>(it->second.family);
    out.type = static_cast<std::uint8_t>(type_of_letter(operand));
    out.rtype = static_cast<std::uint8_t>(type_of_letter(letters.at(0)));
    out.dst = static_cast<std::int8_t>(ins.dst);
    out.a = static_cast<std::int8_t>(ins.a);
    out.b = static_cast<std::int8_t>(ins.b);
    out.c = static_cast<std::int8_t>(ins.c);
    return out;
}

}  // namespace

void check_plan(const expr::Plan& plan) {
    if (plan.stages.size() != 1 || plan.stages[0].reduce != expr::ReduceKind::none) {
        throw Unsupported(
            "reductions inside evaluate (sum, prod, min, max, mean, logsumexp) are not implemented "
            "on the GPU; use numfuse.cuda.logsumexp or the array library's reductions");
    }
    const expr::Program& prog = plan.stages[0].program;
    if (prog.code.size() > static_cast<std::size_t>(max_code) ||
        prog.registers.size() > static_cast<std::size_t>(max_registers)) {
        throw Unsupported("expression too large for the GPU interpreter (" +
                          std::to_string(prog.code.size()) + " instructions, " +
                          std::to_string(prog.registers.size()) + " registers; at most " +
                          std::to_string(max_code) + " and " + std::to_string(max_registers) + ")");
    }
    if (plan.input_names.size() > static_cast<std::size_t>(max_inputs)) {
        throw Unsupported("at most " + std::to_string(max_inputs) + " inputs on the GPU");
    }
    for (const auto& ins : prog.code) translate(ins);  // throws for unsupported operations
    if (!is_real_letter(expr::type_letter(plan.result_type))) {
        throw Unsupported("complex results are not supported on the GPU");
    }
}

Program build_program(const expr::Plan& plan, const std::vector<std::uintptr_t>& arrays,
                      const std::vector<std::uint64_t>& scalar_bits) {
    check_plan(plan);
    const expr::Stage& stage = plan.stages[0];
    const expr::Program& prog = stage.program;
    Program p{};
    p.ncode = static_cast<std::int16_t>(prog.code.size());
    p.nregs = static_cast<std::int16_t>(prog.registers.size());
    p.result = static_cast<std::int16_t>(prog.result);
    p.result_type = static_cast<std::uint8_t>(type_of(plan.result_type));
    for (std::size_t k = 0; k < prog.code.size(); ++k) p.code[k] = translate(prog.code[k]);
    for (std::size_t r = 0; r < prog.registers.size(); ++r) {
        const expr::Register& reg = prog.registers[r];
        p.reg_type[r] = static_cast<std::uint8_t>(type_of(reg.type));
        p.reg_input[r] = -1;
        p.const_bits[r] = 0;
        if (reg.kind == RegisterKind::constant) {
            std::memcpy(&p.const_bits[r], reg.value.bytes, sizeof(std::uint64_t));
        } else if (reg.kind == RegisterKind::input) {
            const int k =
                stage.inputs.at(static_cast<std::size_t>(reg.input)).index;  // the caller's input
            if (arrays.at(static_cast<std::size_t>(k)) == 0) {
                p.const_bits[r] = scalar_bits.at(static_cast<std::size_t>(k));  // a Python scalar
            } else {
                p.reg_input[r] = static_cast<std::int8_t>(k);
            }
        }
    }
    for (std::size_t k = 0; k < arrays.size() && k < static_cast<std::size_t>(max_inputs); ++k) {
        p.inputs[k] = reinterpret_cast<const void*>(arrays[k]);
    }
    return p;
}

void run_program_host(const Program& program, void* out, std::int64_t n) {
    Reg registers[max_registers];
    for (std::int64_t i = 0; i < n; ++i) run_element(program, registers, out, i);
}

}  // namespace numfuse::cuda::vm
