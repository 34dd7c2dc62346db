// The expression VM's private interface, shared by its files:
//   vm_geometry.cpp     broadcast shapes and per-stage geometry
//   vm_operands.cpp     operands, iteration spaces, gather/scatter, workspaces
//   vm_elementwise.cpp  the element-wise runner (and the flat fast path)
//   vm_reduce.cpp       reduction stages
//   vm.cpp              the level's kernel table and the public API (expr.hpp)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "expr/expr.hpp"
#include "expr/kernel_table.hpp"
#include "reduce/reduce.hpp"

namespace numfuse::expr::vm {

using Shape = std::vector<std::ptrdiff_t>;

// Bytes per register (block of the widest type) of element-wise stages:
// 2 KiB, so even a program with a dozen registers stays in L1. Small blocks
// also switch between the input streams often, which keeps the hardware
// prefetchers of all of them busy.
inline constexpr std::size_t block_bytes = 2048;
// Reductions keep 16 KiB blocks: they fold every block into their
// accumulators, which costs per block (and the block size fixes the order
// in which float sums are added).
inline constexpr std::size_t reduce_block_bytes = 16384;
// Below this many elements per thread, a fork/join costs more than it saves.
inline constexpr std::size_t min_elements_per_thread = 16384;
// Work unit of a reduction along a run: the fixed chunk of the reductions
// (a multiple of every block size).
inline constexpr std::size_t reduce_chunk = core::kReduceChunk;

// ------------------------------------------------------------------ geometry (vm_geometry.cpp)
[[noreturn]] void value_error(const std::string& message);
std::string shape_text(const Shape& shape);
Shape broadcast_shapes(const std::vector<Shape>& shapes);
std::size_t element_count(const Shape& shape);
std::vector<std::ptrdiff_t> contiguous_strides(const Shape& shape, std::size_t item);

// Resolved geometry of one stage.
struct StageGeometry {
    Shape iteration;          // broadcast shape of the stage's inputs
    std::vector<char> reduced;  // per iteration dim: reduced?
    Shape out_shape;          // the stage's output shape
};

std::vector<StageGeometry> plan_geometry(const Plan& plan, const std::vector<Shape>& input_shapes);

// ------------------------------------------------------------------ operands (vm_operands.cpp)
// One array as the VM reads it: strides aligned to the iteration space.
struct Operand {
    const char* base = nullptr;
    std::size_t item = 8;
    std::vector<std::ptrdiff_t> strides;
    enum Mode : std::uint8_t { contiguous, scalar, strided } mode = strided;
};

// The iteration space after merging dimensions that every operand walks
// contiguously (so the common all-contiguous case becomes one flat run).
struct Space {
    Shape shape;
    std::vector<Operand> operands;  // stage inputs, then (optionally) the output
};

std::vector<std::ptrdiff_t> aligned_strides(const ArrayView& view, std::size_t ndim);

// `perm` orders the iteration dims (outermost first); operands carry strides
// for the unpermuted space. Dimensions are coalesced as in strided.hpp.
Space make_space(const Shape& iteration, const std::vector<int>& perm,
                 std::vector<Operand> operands);

// `output`: the result array, for Plan::reuse_last's StageInput::from_output.
std::vector<Operand> stage_operands(const Stage& stage, const std::vector<ArrayView>& inputs,
                                    const std::vector<ArrayView>& stage_outputs, std::size_t ndim,
                                    const ArrayView* output = nullptr);

// Writes `count` copies of the `item`-byte value at `value` to `dst`.
void fill_value(char* dst, const void* value, std::size_t item, std::size_t count) noexcept;

// Per-thread workspace, reused across calls (grows to the largest need);
// 64-byte aligned.
char* thread_workspace(std::size_t bytes);

// Throws for the RuntimeFlag bits a run reported.
void raise_runtime_flags(unsigned flags);

// Gather (Gather = true) or scatter: inline, since the runners call it per block.
template <std::size_t Size>
struct Bytes {
    unsigned char b[Size];
};

// Copies `count` elements starting at linear index `start` of the space.
template <bool Gather>
void move_elements(const Shape& shape, const Operand& op, std::size_t start, std::size_t count,
                   char* buffer) {
    const std::size_t ndim = shape.size();
    if (ndim == 0) {
        if (Gather) std::memcpy(buffer, op.base, op.item);
        else std::memcpy(const_cast<char*>(op.base), buffer, op.item);
        return;
    }
    std::ptrdiff_t index[32];
    std::ptrdiff_t offset = 0;
    std::size_t rest = start;
    for (std::size_t k = ndim; k-- > 0;) {
        index[k] = static_cast<std::ptrdiff_t>(rest % static_cast<std::size_t>(shape[k]));
        rest /= static_cast<std::size_t>(shape[k]);
        offset += index[k] * op.strides[k];
    }
    const std::size_t last = ndim - 1;
    const std::ptrdiff_t step = op.strides[last];
    char* data = const_cast<char*>(op.base);
    while (count) {
        const std::size_t run =
            std::min(count, static_cast<std::size_t>(shape[last] - index[last]));
        char* p = data + offset;
        auto copy_run = [&](auto tag) {
            using E = decltype(tag);
            E* b = reinterpret_cast<E*>(buffer);
            // The two common runs without the per-element loop: a broadcast value
            // (a (rows, 1) reduction result read along a row) and a contiguous run.
            if (Gather && step == 0) {
                E value;
                std::memcpy(&value, p, sizeof(E));
                std::fill(b, b + run, value);
                return;
            }
            if (step == static_cast<std::ptrdiff_t>(sizeof(E))) {
                if (Gather) std::memcpy(b, p, run * sizeof(E));
                else std::memcpy(p, b, run * sizeof(E));
                return;
            }
            for (std::size_t k = 0; k < run; ++k) {
                if (Gather)
                    std::memcpy(&b[k], p + static_cast<std::ptrdiff_t>(k) * step, sizeof(E));
                else std::memcpy(p + static_cast<std::ptrdiff_t>(k) * step, &b[k], sizeof(E));
            }
        };
        switch (op.item) {
            case 1: copy_run(Bytes<1>{}); break;
            case 4: copy_run(Bytes<4>{}); break;
            case 8: copy_run(Bytes<8>{}); break;
            case 16: copy_run(Bytes<16>{}); break;
            default:  // byte strings of any other element size
                for (std::size_t k = 0; k < run; ++k) {
                    char* element = p + static_cast<std::ptrdiff_t>(k) * step;
                    if (Gather) std::memcpy(buffer + k * op.item, element, op.item);
                    else std::memcpy(element, buffer + k * op.item, op.item);
                }
                break;
        }
        buffer += run * op.item;
        count -= run;
        offset += static_cast<std::ptrdiff_t>(run) * step;
        index[last] += static_cast<std::ptrdiff_t>(run);
        // Carry into the outer dims.
        for (std::size_t k = last; k > 0 && index[k] == shape[k]; --k) {
            offset -= index[k] * op.strides[k];
            index[k] = 0;
            ++index[k - 1];
            offset += op.strides[k - 1];
        }
    }
}

// Runs a program over blocks of a Space, one thread's share at a time.
class BlockRunner {
public:
    BlockRunner(const Program& program, const Space& space, const OpKernelTable& kernels,
                std::size_t bytes = block_bytes)
        : program_(program), space_(space), kernels_(kernels) {
        // At least one element: a bytes register's element may exceed `bytes`.
        block_ = std::max<std::size_t>(1, bytes / (program.max_item ? program.max_item : 8));
        const std::size_t reg_bytes = block_ * program.max_item;
        // Layout: slots, then one buffer per gathered/scalar input and constant.
        std::size_t buffers = static_cast<std::size_t>(program.slots);
        for (const auto& r : program.registers) {
            if (r.kind == RegisterKind::constant ||
                (r.kind == RegisterKind::input &&
                 space.operands[r.input].mode != Operand::contiguous)) {
                ++buffers;
            }
        }
        workspace_bytes_ = buffers * reg_bytes;
        // A program that only copies a contiguous input (max(x), sum(x)): a reduction
        // reads the array in place (read()).
        if (program.code.size() == 1 && program.code[0].a >= 0) {
            const Register& src = program.registers[program.code[0].a];
            if (is_copy(program.code[0].op) && src.kind == RegisterKind::input &&
                src.type == program.registers[program.result].type &&
                space.operands[src.input].mode == Operand::contiguous) {
                copied_input_ = src.input;
            }
        }
    }

    std::size_t block() const noexcept { return block_; }

    // Sets up this thread's registers (each thread works on its own copy).
    void attach() {
        const std::size_t reg_bytes = block_ * program_.max_item;
        char* base = thread_workspace(workspace_bytes_);
        registers_.assign(program_.registers.size(), nullptr);
        std::size_t next = static_cast<std::size_t>(program_.slots);
        for (std::size_t r = 0; r < program_.registers.size(); ++r) {
            const Register& reg = program_.registers[r];
            if (reg.kind == RegisterKind::temp) {
                registers_[r] = base + static_cast<std::size_t>(reg.slot) * reg_bytes;
            } else if (reg.kind == RegisterKind::constant) {
                char* p = base + (next++) * reg_bytes;
                fill(p,
                     reg.type == Type::s ? static_cast<const void*>(reg.bytes.data())
                                         : static_cast<const void*>(reg.value.bytes),
                     register_item(reg));
                registers_[r] = p;
            } else {
                const Operand& op = space_.operands[reg.input];
                if (op.mode == Operand::contiguous) continue;  // points into the array per block
                char* p = base + (next++) * reg_bytes;
                if (op.mode == Operand::scalar) fill(p, op.base, op.item);
                registers_[r] = p;
            }
        }
    }

    // Evaluates elements [start, start+count) (count <= block). When
    // `destination` is given the result is written there directly.
    // Returns the result pointer and ORs runtime flags into `flags`.
    const char* run(std::size_t start, std::size_t count, char* destination, unsigned& flags) {
        for (std::size_t r = 0; r < program_.registers.size(); ++r) {
            const Register& reg = program_.registers[r];
            if (reg.kind != RegisterKind::input) continue;
            const Operand& op = space_.operands[reg.input];
            if (op.mode == Operand::contiguous) {
                registers_[r] = const_cast<char*>(op.base) + start * op.item;
            } else if (op.mode == Operand::strided) {
                move_elements<true>(space_.shape, op, start, count, registers_[r]);
            }
        }
        char* saved_result = registers_[program_.result];
        if (destination) registers_[program_.result] = destination;
        for (const Instruction& ins : program_.code) {
            flags |= kernels_[static_cast<int>(ins.op)](
                registers_[ins.dst], ins.a >= 0 ? registers_[ins.a] : nullptr,
                ins.b >= 0 ? registers_[ins.b] : nullptr, ins.c >= 0 ? registers_[ins.c] : nullptr,
                count);
        }
        const char* result = registers_[program_.result];
        registers_[program_.result] = saved_result;
        return result;
    }

    // run() for a reader that only reads the values (reductions): the block of the
    // array itself where the program would only copy it there.
    const char* read(std::size_t start, std::size_t count, unsigned& flags) {
        if (copied_input_ >= 0) {
            const Operand& op = space_.operands[static_cast<std::size_t>(copied_input_)];
            return op.base + start * op.item;
        }
        return run(start, count, nullptr, flags);
    }

private:
    static bool is_copy(Opcode op) noexcept {
        return op == Opcode::copy_bb || op == Opcode::copy_ii || op == Opcode::copy_ll ||
               op == Opcode::copy_ff || op == Opcode::copy_dd || op == Opcode::copy_cc ||
               op == Opcode::copy_zz;
    }

    void fill(char* dst, const void* value, std::size_t item) const {
        fill_value(dst, value, item, block_);
    }

    const Program& program_;
    const Space& space_;
    const OpKernelTable& kernels_;
    std::size_t block_ = 1024;
    std::size_t workspace_bytes_ = 0;
    std::vector<char*> registers_;
    int copied_input_ = -1;  // the operand read() returns in place, or -1
};

// ------------------------------------------------------------------ stages
// An element-wise stage into `out` (vm_elementwise.cpp).
void run_elementwise(const Stage& stage, const StageGeometry& g,
                     const std::vector<ArrayView>& inputs,
                     const std::vector<ArrayView>& stage_outputs, const ArrayView& out,
                     const OpKernelTable& kernels);

// The same over a Space built by the caller, whose operands are the stage's
// inputs and whose last one is the output (execute_contiguous's line plans).
void run_elementwise_space(const Program& program, const Space& space,
                           const OpKernelTable& kernels);

// execute_contiguous for ContiguousForm::Kind::flat plans.
void execute_flat(const Plan& plan, const ContiguousForm& form, const char* const* inputs,
                  std::size_t n, char* out);

// Which iteration order a reduction uses.
struct ReduceLayout {
    bool columns = false;  // reduced dims outermost, accumulate rows of M outputs
    std::size_t m = 1;     // output elements
    std::size_t l = 1;     // elements reduced into each output
    std::vector<int> perm;
};

// A reduction stage into the contiguous `result` (vm_reduce.cpp). With `store`
// (Plan::reuse: an array of the stage's iteration shape and its program's result
// type), the program's values are also written there, element for element, where
// `store` is contiguous in the order the reduction walks; returns whether they were.
bool run_reduction(const Stage& stage, const StageGeometry& g, const std::vector<ArrayView>& inputs,
                   const std::vector<ArrayView>& stage_outputs, char* result,
                   const OpKernelTable& kernels, const ArrayView* store = nullptr);
// The same over a Space of the stage's inputs built by the caller, already in
// `layout`'s order: the work units, block edges and hence the result's bits
// depend only on layout.m and layout.l. `store`: the base of an array contiguous in
// the space's order that takes the program's values (nullptr: none).
void run_reduction_space(const Stage& stage, const ReduceLayout& layout, const Space& space,
                         char* result, const OpKernelTable& kernels, char* store = nullptr);

}  // namespace numfuse::expr::vm
