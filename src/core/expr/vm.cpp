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
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "arch/level_tables.hpp"
#include "expr/array_views.hpp"
#include "expr/expr.hpp"
#include "expr/kernel_table.hpp"
#include "expr/vm_internal.hpp"
#include "levels.hpp"

namespace numfuse::expr {

using namespace vm;

const OpKernelTable& level_kernels(core::Level level) noexcept {
    static const core::PerLevelTables<OpKernelTable> tables(
        [](const core::LevelKernelFill& fill, OpKernelTable& table) { fill.expr(table); });
    return tables[level];
}

const OpKernelTable& active_kernels() noexcept { return level_kernels(core::active_level()); }

std::size_t block_elements(const Program& program) noexcept {
    return std::max<std::size_t>(1, block_bytes / (program.max_item ? program.max_item : 8));
}

namespace {

bool is_flat(const Plan& plan) noexcept {
    if (plan.stages.size() != 1) return false;
    const Stage& stage = plan.stages[0];
    if (stage.reduce != ReduceKind::none || stage.program.registers.size() > 64) return false;
    for (const auto& in : stage.inputs) {
        if (in.from_stage) return false;
    }
    return true;
}

// The line form's checks, on the geometry of arrays of length 2 (scalars:
// shape ()): every shape a line plan meets is (), (1,) or (n,), so n = 2
// stands for every n >= 1.
bool trace_line(const Plan& plan, ContiguousForm& form) {
    std::vector<Shape> shapes;
    for (const char scalar : form.scalar_input) shapes.push_back(scalar ? Shape{} : Shape{2});
    std::vector<StageGeometry> geometry;
    try {
        geometry = plan_geometry(plan, shapes);
    } catch (const ExprError&) {
        return false;  // bad axes: the general path raises the error
    }
    const std::size_t stages = plan.stages.size();
    form.line_stage.assign(stages, 0);
    for (std::size_t s = 0; s < stages; ++s) {
        const Stage& stage = plan.stages[s];
        const StageGeometry& g = geometry[s];
        // Only the last stage may be element-wise: an earlier one would hand
        // a whole array to the next.
        if (stage.reduce == ReduceKind::none && s + 1 != stages) return false;
        bool reads_array = false;
        for (const auto& in : stage.inputs) {
            reads_array |= !in.from_stage && !form.scalar_input[in.index];
        }
        if (g.iteration.size() > 1 || element_count(g.iteration) != (reads_array ? 2u : 1u)) {
            return false;
        }
        if (stage.reduce != ReduceKind::none && element_count(g.out_shape) != 1) return false;
        form.line_stage[s] = reads_array;
    }
    for (const auto d : geometry.back().out_shape) form.result_shape.push_back(d == 2 ? -1 : d);
    return true;
}

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool ranges_overlap(const char* a, std::size_t a_bytes, const char* b, std::size_t b_bytes) {
    const auto lo_a = reinterpret_cast<std::uintptr_t>(a);
    const auto lo_b = reinterpret_cast<std::uintptr_t>(b);
    return a_bytes && b_bytes && lo_a < lo_b + b_bytes && lo_b < lo_a + a_bytes;
}

// Plan::reuse is safe when the result shares no byte with an input (the stored values
// would overwrite elements a later stage reads).
bool overlaps_an_input(const std::vector<ArrayView>& inputs, const ArrayView& out) {
    const ByteRange o = byte_range(out, view_item(out));
    for (const ArrayView& in : inputs) {
        const ByteRange i = byte_range(in, view_item(in));
        if (ranges_overlap(i.low, static_cast<std::size_t>(i.high - i.low), o.low,
                           static_cast<std::size_t>(o.high - o.low))) {
            return true;
        }
    }
    return false;
}

// A line plan: each stage over a Space built here (one dim of n elements or
// of one), reductions into a Scalar that later stages read as a scalar.
void execute_line(const Plan& plan, const ContiguousForm& form, const char* const* inputs,
                  std::size_t n, char* out) {
    const OpKernelTable& kernels = active_kernels();
    const std::size_t stages = plan.stages.size();
    std::vector<Scalar> values(stages);  // each reduction stage's one value
    // Plan::reuse: the stage's values are n elements like the result's.
    const std::size_t out_item = type_size(plan.result_type);
    bool reuse =
        plan.reuse_stage >= 0 && form.line_stage[plan.reuse_stage] && form.line_stage.back();
    for (std::size_t k = 0; reuse && k < plan.input_types.size(); ++k) {
        const std::size_t bytes = form.scalar_input[k] ? type_size(plan.input_types[k])
                                                       : n * type_size(plan.input_types[k]);
        reuse = !ranges_overlap(inputs[k], bytes, out, n * out_item);
    }
    for (std::size_t s = 0; s < stages; ++s) {
        const bool last = s + 1 == stages;
        const Stage& stage = last && reuse ? plan.reuse_last : plan.stages[s];
        const std::size_t count = form.line_stage[s] ? n : 1;
        Space space;
        space.shape.assign(1, static_cast<std::ptrdiff_t>(count));
        space.operands.reserve(stage.inputs.size() + 1);
        for (const auto& in : stage.inputs) {
            Operand op;
            if (in.from_output) {
                op.base = out;
                op.item = out_item;
                op.strides.assign(1, static_cast<std::ptrdiff_t>(op.item));
                op.mode = Operand::contiguous;
            } else if (in.from_stage) {
                op.base = reinterpret_cast<const char*>(values[in.index].bytes);
                op.item = type_size(plan.stages[in.index].out_type);
                op.strides.assign(1, 0);
                op.mode = Operand::scalar;
            } else if (form.scalar_input[in.index]) {
                op.base = inputs[in.index];
                op.item = type_size(plan.input_types[in.index]);
                op.strides.assign(1, 0);
                op.mode = Operand::scalar;
            } else {
                op.base = inputs[in.index];
                op.item = type_size(plan.input_types[in.index]);
                op.strides.assign(1, static_cast<std::ptrdiff_t>(op.item));
                op.mode = Operand::contiguous;
            }
            space.operands.push_back(std::move(op));
        }
        char* const target = last ? out : reinterpret_cast<char*>(values[s].bytes);
        if (stage.reduce == ReduceKind::none) {
            Operand op;
            op.base = target;
            op.item = type_size(plan.result_type);
            op.strides.assign(1, static_cast<std::ptrdiff_t>(op.item));
            op.mode = Operand::contiguous;
            space.operands.push_back(std::move(op));
            run_elementwise_space(stage.program, space, kernels);
        } else {
            ReduceLayout layout;  // one output (m = 1), a run of `count`
            layout.l = count;
            const bool store = reuse && static_cast<int>(s) == plan.reuse_stage;
            run_reduction_space(stage, layout, space, target, kernels, store ? out : nullptr);
        }
    }
}

}  // namespace

ContiguousForm contiguous_form(const Plan& plan, const std::vector<char>& scalar_input) {
    ContiguousForm form;
    if (scalar_input.size() != plan.input_types.size()) return form;
    for (const Type t : plan.input_types) {
        if (t == Type::s) return form;  // the runners know only type sizes
    }
    if (std::find(scalar_input.begin(), scalar_input.end(), 0) == scalar_input.end()) return form;
    form.scalar_input = scalar_input;
    if (is_flat(plan)) {
        form.kind = ContiguousForm::Kind::flat;
        form.line_stage.assign(1, 1);
        form.result_shape.assign(1, -1);
    } else if (trace_line(plan, form)) {
        form.kind = ContiguousForm::Kind::line;
    } else {
        form = ContiguousForm();
    }
    return form;
}

void execute_contiguous(const Plan& plan, const ContiguousForm& form, const char* const* inputs,
                        std::size_t n, char* out) {
    if (n == 0) value_error("execute_contiguous: no elements (the general path handles n = 0)");
    switch (form.kind) {
        case ContiguousForm::Kind::flat: return execute_flat(plan, form, inputs, n, out);
        case ContiguousForm::Kind::line: return execute_line(plan, form, inputs, n, out);
        case ContiguousForm::Kind::none: break;
    }
    value_error("execute_contiguous: the plan has no contiguous form");
}

std::vector<std::ptrdiff_t> result_shape(const Plan& plan, const std::vector<Shape>& shapes) {
    if (plan.result_type == Type::s) {
        return plan.bytes_input >= 0 ? shapes[static_cast<std::size_t>(plan.bytes_input)] : Shape{};
    }
    return plan_geometry(plan, shapes).back().out_shape;
}

namespace {

// A bytes plan's run (Plan::bytes_input): the input's elements, or the literal in every
// element, copied into `out` (any strides) a block at a time.
void copy_bytes_result(const Plan& plan, const std::vector<ArrayView>& inputs,
                       const ArrayView& out) {
    const std::size_t item = plan.result_item;
    if (out.type != Type::s || out.item != item) {
        value_error("output array must hold bytes of " + std::to_string(item) + " per element");
    }
    const std::size_t n = element_count(out.shape);
    if (n == 0) return;
    Operand src;
    src.item = item;
    if (plan.bytes_input >= 0) {
        const ArrayView& in = inputs[static_cast<std::size_t>(plan.bytes_input)];
        src.base = in.data;
        src.strides = aligned_strides(in, out.shape.size());
    } else {
        src.base = plan.bytes_constant.data();
        src.strides.assign(out.shape.size(), 0);
    }
    Operand dst;
    dst.base = out.data;
    dst.item = item;
    dst.strides = aligned_strides(out, out.shape.size());
    std::vector<int> perm(out.shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    const Space space = make_space(out.shape, perm, {src, dst});
    const std::size_t block = std::max<std::size_t>(1, block_bytes / item);
    std::vector<char> buffer(block * item);
    for (std::size_t start = 0; start < n; start += block) {
        const std::size_t count = std::min(block, n - start);
        move_elements<true>(space.shape, space.operands[0], start, count, buffer.data());
        move_elements<false>(space.shape, space.operands[1], start, count, buffer.data());
    }
}

}  // namespace

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
    if (plan.result_type == Type::s) {
        if (out.shape != result_shape(plan, shapes)) {
            value_error("output array has shape " + shape_text(out.shape) + "; expected " +
                        shape_text(result_shape(plan, shapes)));
        }
        return copy_bytes_result(plan, inputs, out);
    }
    const std::vector<StageGeometry> geometry = plan_geometry(plan, shapes);
    if (out.shape != geometry.back().out_shape || out.type != plan.result_type) {
        value_error("output array has shape " + shape_text(out.shape) + " and type " +
                    type_name(out.type) + "; expected " + shape_text(geometry.back().out_shape) +
                    " and " + type_name(plan.result_type));
    }
    const OpKernelTable& kernels = active_kernels();
    // Plan::reuse where the stage's values have the result's shape and nothing they
    // would overwrite is read later; `stored` once the stage wrote them.
    const bool reuse =
        plan.reuse_stage >= 0 &&
        geometry[static_cast<std::size_t>(plan.reuse_stage)].iteration == out.shape &&
        !overlaps_an_input(inputs, out);
    bool stored = false;
    // Outputs of reduction stages: small owned arrays (the reduced shape).
    std::vector<std::unique_ptr<char[]>> storage(plan.stages.size());
    std::vector<ArrayView> stage_outputs(plan.stages.size());
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const bool last = s + 1 == plan.stages.size();
        const Stage& stage = last && stored ? plan.reuse_last : plan.stages[s];
        const StageGeometry& g = geometry[s];
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
        const bool store = reuse && static_cast<int>(s) == plan.reuse_stage;
        stored |= run_reduction(stage, g, inputs, stage_outputs, view.data, kernels,
                                store ? &out : nullptr);
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
