// The VM's element-wise stages: blocks of the iteration space through the
// program, split over threads, with streaming stores for large results.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "expr/vm_internal.hpp"
#include "interrupt.hpp"
#include "parallel.hpp"
#include "streaming.hpp"

namespace numfuse::expr::vm {

void run_elementwise(const Stage& stage, const StageGeometry& g,
                     const std::vector<ArrayView>& inputs,
                     const std::vector<ArrayView>& stage_outputs, const ArrayView& out,
                     const OpKernelTable& kernels) {
    const std::size_t ndim = g.iteration.size();
    const std::size_t n = element_count(g.iteration);
    if (n == 0) return;
    std::vector<Operand> operands = stage_operands(stage, inputs, stage_outputs, ndim, &out);
    Operand out_op;
    out_op.base = out.data;
    out_op.item = type_size(out.type);
    out_op.strides = aligned_strides(out, ndim);
    operands.push_back(out_op);
    std::vector<int> perm(ndim);
    std::iota(perm.begin(), perm.end(), 0);
    run_elementwise_space(stage.program, make_space(g.iteration, perm, std::move(operands)),
                          kernels);
}

void run_elementwise_space(const Program& program, const Space& space,
                           const OpKernelTable& kernels) {
    const std::size_t n = element_count(space.shape);
    if (n == 0) return;
    const Operand& target = space.operands.back();
    const BlockRunner prototype(program, space, kernels);
    const std::size_t block = prototype.block();
    // Blocks start at multiples of block x item bytes (2 KiB) from the base, so
    // an aligned base makes every block's stores aligned.
    const bool streaming = target.mode == Operand::contiguous &&
                           n * target.item >= core::streaming_min_bytes &&
                           reinterpret_cast<std::uintptr_t>(target.base) % 16 == 0;
    // Interruptible between blocks (see interrupt.hpp).
    interrupt::Scope* const scope = interrupt::current();
    const unsigned flags = parallel::for_ranges_or(
        n, min_elements_per_thread, block, [&](std::size_t begin, std::size_t end) {
            BlockRunner runner = prototype;
            runner.attach();
            unsigned local = 0;
            if (streaming) {
                for (std::size_t start = begin; start < end; start += block) {
                    if (interrupt::should_stop(scope)) break;
                    const std::size_t count = std::min(block, end - start);
                    const char* result = runner.run(start, count, nullptr, local);
                    core::stream_copy(const_cast<char*>(target.base) + start * target.item, result,
                                      count * target.item);
                }
                core::stream_fence();
                return local;
            }
            for (std::size_t start = begin; start < end; start += block) {
                if (interrupt::should_stop(scope)) break;
                const std::size_t count = std::min(block, end - start);
                if (target.mode == Operand::contiguous) {
                    runner.run(start, count, const_cast<char*>(target.base) + start * target.item,
                               local);
                } else {
                    const char* result = runner.run(start, count, nullptr, local);
                    move_elements<false>(space.shape, target, start, count,
                                         const_cast<char*>(result));
                }
                if (target.mode == Operand::scalar) break;  // a 0-d result: one element
            }
            return local;
        });
    interrupt::throw_if_stopped(scope);
    raise_runtime_flags(flags);
}

// The flat form of execute_contiguous: no Space, no vectors; registers point
// straight into the input arrays and the output, scalar inputs are filled
// once per thread as constants are.
void execute_flat(const Plan& plan, const ContiguousForm& form, const char* const* inputs,
                  std::size_t n, char* out) {
    if (n == 0) return;
    const Stage& stage = plan.stages[0];
    const Program& program = stage.program;
    const OpKernelTable& kernels = active_kernels();
    const std::size_t block = block_elements(program);
    const std::size_t reg_bytes = block * program.max_item;
    const std::size_t out_item = type_size(plan.result_type);
    const auto filled = [&](const Register& r) {
        return r.kind == RegisterKind::constant ||
               (r.kind == RegisterKind::input && form.scalar_input[stage.inputs[r.input].index]);
    };
    std::size_t buffers = static_cast<std::size_t>(program.slots);
    for (const auto& r : program.registers) buffers += filled(r);
    const std::size_t fill_count = std::min(n, block);
    const bool streaming = n * out_item >= core::streaming_min_bytes &&
                           reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
    const std::size_t nreg = program.registers.size();
    const int result = program.result;
    interrupt::Scope* const scope = interrupt::current();
    const unsigned flags = parallel::for_ranges_or(
        n, min_elements_per_thread, block, [&](std::size_t begin, std::size_t end) {
            char* base = thread_workspace(buffers * reg_bytes);
            char* regs[64];
            const char* input_base[64];
            std::size_t input_item[64];
            std::size_t next = static_cast<std::size_t>(program.slots);
            for (std::size_t r = 0; r < nreg; ++r) {
                const Register& reg = program.registers[r];
                input_base[r] = nullptr;
                if (reg.kind == RegisterKind::temp) {
                    regs[r] = base + static_cast<std::size_t>(reg.slot) * reg_bytes;
                } else if (reg.kind == RegisterKind::constant) {
                    char* p = base + (next++) * reg_bytes;
                    fill_value(p, reg.value.bytes, type_size(reg.type), fill_count);
                    regs[r] = p;
                } else if (filled(reg)) {
                    const int index = stage.inputs[reg.input].index;
                    char* p = base + (next++) * reg_bytes;
                    fill_value(p, inputs[index], type_size(plan.input_types[index]), fill_count);
                    regs[r] = p;
                } else {
                    const int index = stage.inputs[reg.input].index;
                    input_base[r] = inputs[index];
                    input_item[r] = type_size(plan.input_types[index]);
                    regs[r] = nullptr;
                }
            }
            char* const result_register = regs[result];
            unsigned local = 0;
            for (std::size_t start = begin; start < end; start += block) {
                if (interrupt::should_stop(scope)) break;
                const std::size_t count = std::min(block, end - start);
                for (std::size_t r = 0; r < nreg; ++r) {
                    if (input_base[r])
                        regs[r] = const_cast<char*>(input_base[r]) + start * input_item[r];
                }
                regs[result] = streaming ? result_register : out + start * out_item;
                for (const Instruction& ins : program.code) {
                    local |= kernels[static_cast<int>(ins.op)](
                        regs[ins.dst], ins.a >= 0 ? regs[ins.a] : nullptr,
                        ins.b >= 0 ? regs[ins.b] : nullptr, ins.c >= 0 ? regs[ins.c] : nullptr,
                        count);
                }
                if (streaming)
                    core::stream_copy(out + start * out_item, result_register, count * out_item);
            }
            if (streaming) core::stream_fence();
            return local;
        });
    interrupt::throw_if_stopped(scope);
    raise_runtime_flags(flags);
}

}  // namespace numfuse::expr::vm
