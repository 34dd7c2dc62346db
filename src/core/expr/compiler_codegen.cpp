// The compiler's codegen pass: IR -> stages (split at reductions) of bytecode
// with register reuse; and the disassembler.
#include <algorithm>
#include <string>
#include <vector>

#include "expr/compiler_internal.hpp"

namespace numfuse::expr {
namespace detail {

void Compiler::build_stages(int root, Plan& plan) {
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
        stage.axis_int = nodes_[r].axis_int;
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
    plan_reuse(root, reductions, stage_of, plan);
}

namespace {

// Element-wise operations that cost about as little as reading their operands:
// storing their result to read it back later saves nothing. Everything else
// (division, powers, the function table's functions) is worth storing.
bool is_cheap(Opcode op) {
    static const char* const cheap[] = {
        "add",     "sub",  "mul",  "neg",    "abs",     "sign",    "copy",    "cast",    "eq",
        "ne",      "lt",   "le",   "gt",     "ge",      "where",   "maximum", "minimum", "oneslike",
        "and",     "or",   "xor",  "invert", "lshift",  "rshift",  "isnan",   "isinf",   "isfinite",
        "signbit", "real", "imag", "conj",   "complex", "contains"};
    const std::string name = opcode_name(op);
    const std::string family = name.substr(0, name.rfind('_'));
    for (const char* c : cheap) {
        if (family == c) return true;
    }
    return false;
}

}  // namespace

void Compiler::plan_reuse(int root, const std::vector<int>& reductions,
                          const std::vector<int>& stage_of, Plan& plan) {
    if (reductions.empty()) return;  // one element-wise stage: nothing to reuse
    std::vector<int> final_order;
    std::vector<char> seen(nodes_.size(), 0);
    topo(root, seen, final_order, -1);
    // The latest qualifying reduction (its values are the most recently computed).
    for (auto r = reductions.rbegin(); r != reductions.rend(); ++r) {
        const int reduced = nodes_[*r].args[0];
        const IrNode& value = nodes_[reduced];
        if (reduced == root || value.kind != IrNode::op_node || value.type != nodes_[root].type ||
            value.type == Type::s) {
            continue;
        }
        if (std::find(final_order.begin(), final_order.end(), reduced) == final_order.end()) {
            continue;
        }
        const Stage& stage = plan.stages[static_cast<std::size_t>(stage_of[*r])];
        const bool costly = std::any_of(stage.program.code.begin(), stage.program.code.end(),
                                        [](const Instruction& ins) { return !is_cheap(ins.op); });
        if (!costly) continue;
        plan.reuse_stage = stage_of[*r];
        plan.reuse_last.out_type = nodes_[root].type;
        plan.reuse_last.program = generate(root, stage_of, plan.reuse_last.inputs, reduced);
        return;
    }
}

void Compiler::collect_reductions(int id, std::vector<char>& seen, std::vector<int>& out) {
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
Program Compiler::generate(int root, const std::vector<int>& stage_of,
                           std::vector<StageInput>& inputs, int output_leaf) {
    Program program;
    // IR node -> register (-1: none yet), and an op node's last use by position in
    // `order`: indexed by node, as `seen` is (no hashing: a first call compiles one plan
    // per new operation type for numfuse.jit's verdicts, docs/jit.md).
    std::vector<int> reg_of(nodes_.size(), -1);
    std::vector<std::size_t> last_use(nodes_.size(), 0);
    std::vector<int> order;  // op nodes in evaluation order
    std::vector<char> seen(nodes_.size(), 0);
    topo(root, seen, order, output_leaf);
    program.registers.reserve(order.size() * 2 + 1);  // each op, its leaves, the result
    program.code.reserve(order.size() + 1);

    auto leaf_register = [&](int id) {
        if (reg_of[id] >= 0) return reg_of[id];
        const IrNode& n = nodes_[id];
        Register r;
        r.type = n.type;
        r.item = n.item;
        if (n.kind == IrNode::constant_node) {
            r.kind = RegisterKind::constant;
            r.value = n.value;
            r.bytes = n.bytes;
        } else {
            r.kind = RegisterKind::input;
            StageInput si;
            si.from_output = id == output_leaf;
            si.from_stage = !si.from_output && n.kind == IrNode::reduce_node;
            si.index = si.from_output ? 0 : si.from_stage ? stage_of[id] : n.input;
            r.input = static_cast<int>(inputs.size());
            inputs.push_back(si);
        }
        program.registers.push_back(r);
        const int index = static_cast<int>(program.registers.size() - 1);
        reg_of[id] = index;
        return index;
    };

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
        const Opcode op =
            find_opcode(std::string("copy_") + type_letter(result.type) + type_letter(result.type));
        program.code.push_back({op, static_cast<std::int16_t>(program.result),
                                static_cast<std::int16_t>(src), -1, -1});
    } else {
        std::vector<int> free_slots;
        int slots = 0;
        for (std::size_t k = 0; k < order.size(); ++k) {
            const IrNode& n = nodes_[order[k]];
            Instruction ins{n.opcode, -1, -1, -1, -1};
            std::int16_t* operand[3] = {&ins.a, &ins.b, &ins.c};
            // slots of temporaries whose last use is here (at most one per argument)
            int dying_slots[3];
            int* const dying_begin = dying_slots;
            int* dying_end = dying_slots;
            int reuse_slot = -1;
            for (int j = 0; j < 3; ++j) {
                if (n.args[j] < 0) continue;
                const IrNode& arg = nodes_[n.args[j]];
                const bool is_temp = arg.kind == IrNode::op_node && n.args[j] != output_leaf;
                const int reg = is_temp ? reg_of[n.args[j]] : leaf_register(n.args[j]);
                *operand[j] = static_cast<std::int16_t>(reg);
                if (is_temp && last_use[n.args[j]] == k) {
                    const int slot = program.registers[reg].slot;
                    if (std::find(dying_begin, dying_end, slot) != dying_end) continue;
                    *dying_end++ = slot;
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
            for (const int* slot = dying_begin; slot != dying_end; ++slot) {
                if (*slot != reuse_slot) free_slots.push_back(*slot);
            }
            program.registers.push_back(r);
            const int reg = static_cast<int>(program.registers.size() - 1);
            reg_of[order[k]] = reg;
            ins.dst = static_cast<std::int16_t>(reg);
            program.code.push_back(ins);
            if (program.registers.size() > 30000) {
                throw ExprError(ErrorKind::value, "expression is too large to compile");
            }
        }
        const int result_slot = slots++;
        program.result = reg_of[root];
        program.registers[program.result].slot = result_slot;
        program.slots = slots;
    }
    program.max_item = 1;
    for (const auto& r : program.registers) {
        program.max_item = std::max(program.max_item, register_item(r));
    }
    return program;
}

void Compiler::topo(int id, std::vector<char>& seen, std::vector<int>& order, int output_leaf) {
    if (seen[id]) return;
    seen[id] = 1;
    const IrNode& n = nodes_[id];
    // Inputs, constants, earlier stages and the value read from the result are leaves.
    if (n.kind != IrNode::op_node || id == output_leaf) return;
    for (int a : n.args) {
        if (a >= 0) topo(a, seen, order, output_leaf);
    }
    order.push_back(id);
}

}  // namespace detail

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
