// The VM: runs a Plan's stages over blocks of the broadcast iteration space.
//
// Memory: each thread owns a workspace of (slots + gathered inputs +
// constants) x block elements, so a run needs O(threads x block x registers)
// bytes beyond its result and the (small) outputs of reduction stages, never
// an O(n) temporary.
//
// Reductions are deterministic for any thread count: the iteration space is
// cut into work units whose boundaries depend only on the shape, each unit is
// reduced in a fixed order, and unit results are combined in unit order.
#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "arch/level_tables.hpp"
#include "expr/expr.hpp"
#include "expr/kernel_table.hpp"
#include "expr/vm_internal.hpp"
#include "numfuse_core.hpp"

namespace numfuse::expr {

using namespace vm;

const OpKernelTable& active_kernels() noexcept {
    static const core::PerLevelTables<OpKernelTable> tables(
        [](const core::LevelKernelFill& fill, OpKernelTable& table) { fill.expr(table); });
    return tables[core::active_level()];
}

std::size_t block_elements(const Program& program) noexcept {
    return std::max<std::size_t>(1, block_bytes / (program.max_item ? program.max_item : 8));
}

bool is_flat(const Plan& plan) noexcept {
    if (plan.stages.size() != 1) return false;
    const Stage& stage = plan.stages[0];
    if (stage.reduce != ReduceKind::none || stage.program.registers.size() > 64) return false;
    for (const auto& in : stage.inputs) {
        if (in.from_stage) return false;
    }
    for (const Type t : plan.input_types) {
        if (t == Type::s) return false;  // execute_contiguous knows only type sizes
    }
    return true;
}

std::vector<std::ptrdiff_t> result_shape(const Plan& plan, const std::vector<Shape>& shapes) {
    return plan_geometry(plan, shapes).back().out_shape;
}

void execute(const Plan& plan, const std::vector<ArrayView>& inputs, const ArrayView& out) {
    if (inputs.size() != plan.input_types.size()) {
        value_error("expected " + std::to_string(plan.input_types.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
    }
    std::vector<Shape> shapes;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].type != plan.input_types[k]) {
            throw ExprError(ErrorKind::type, "input '" + plan.input_names[k] + "' has type " +
                                                 type_name(inputs[k].type) + ", the plan expects " +
                                                 type_name(plan.input_types[k]));
        }
        // The plan's bytes instructions read elements of the compiled size.
        if (inputs[k].type == Type::s && inputs[k].item != plan.input_items[k]) {
            throw ExprError(ErrorKind::type,
                            "input '" + plan.input_names[k] + "' has elements of " +
                                std::to_string(inputs[k].item) + " bytes, the plan expects " +
                                std::to_string(plan.input_items[k]));
        }
        shapes.push_back(inputs[k].shape);
    }
    const std::vector<StageGeometry> geometry = plan_geometry(plan, shapes);
    if (out.shape != geometry.back().out_shape || out.type != plan.result_type) {
        value_error("output array has shape " + shape_text(out.shape) + " and type " +
                    type_name(out.type) + "; expected " + shape_text(geometry.back().out_shape) +
                    " and " + type_name(plan.result_type));
    }
    const OpKernelTable& kernels = active_kernels();
    // Outputs of reduction stages: small owned arrays (the reduced shape).
    std::vector<std::unique_ptr<char[]>> storage(plan.stages.size());
    std::vector<ArrayView> stage_outputs(plan.stages.size());
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const Stage& stage = plan.stages[s];
        const StageGeometry& g = geometry[s];
        const bool last = s + 1 == plan.stages.size();
        if (stage.reduce == ReduceKind::none) {
            run_elementwise(stage, g, inputs, stage_outputs, out, kernels);
            continue;
        }
        const std::size_t item = type_size(stage.out_type);
        const std::size_t count = element_count(g.out_shape);
        storage[s].reset(new char[count * item + 16]);
        ArrayView view;
        view.data = storage[s].get();
        view.type = stage.out_type;
        view.shape = g.out_shape;
        view.strides = contiguous_strides(g.out_shape, item);
        run_reduction(stage, g, inputs, stage_outputs, view.data, kernels);
        stage_outputs[s] = view;
        if (last && count) {
            // Copy into the caller's output (any strides).
            Operand src;
            src.base = view.data;
            src.item = item;
            src.strides = view.strides;
            Operand dst;
            dst.base = out.data;
            dst.item = item;
            dst.strides = out.strides;
            std::vector<int> perm(g.out_shape.size());
            std::iota(perm.begin(), perm.end(), 0);
            Space space = make_space(g.out_shape, perm, {src, dst});
            move_elements<false>(space.shape, space.operands[1], 0, count,
                                 const_cast<char*>(view.data));
        }
    }
}

}  // namespace numfuse::expr
