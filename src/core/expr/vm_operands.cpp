// The VM's operands: arrays aligned to a stage's iteration space, the
// coalesced space itself, and the per-thread workspace the runners use.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "expr/vm_internal.hpp"
#include "strided.hpp"

namespace numfuse::expr::vm {

std::vector<std::ptrdiff_t> aligned_strides(const ArrayView& view, std::size_t ndim) {
    std::vector<std::ptrdiff_t> strides(ndim, 0);
    const std::size_t offset = ndim - view.shape.size();
    for (std::size_t k = 0; k < view.shape.size(); ++k) {
        strides[offset + k] = view.shape[k] == 1 ? 0 : view.strides[k];
    }
    return strides;
}

namespace {

// Whether an operand's element at linear index i of the (coalesced) space is at
// base + i * item: its strides are the C-contiguous strides of the space's extents.
// One dimension after coalescing is the common case; a space that stays 2-d
// because another operand broadcasts (x[r, c] against m[r, 0]) leaves the C-ordered
// arrays contiguous too, so they are read in place instead of gathered.
bool walks_linearly(const std::vector<std::ptrdiff_t>& strides,
                    const std::vector<std::size_t>& extent, std::size_t item) {
    auto expected = static_cast<std::ptrdiff_t>(item);
    for (std::size_t k = strides.size(); k-- > 0;) {
        if (strides[k] != expected) return false;
        expected *= static_cast<std::ptrdiff_t>(extent[k]);
    }
    return !strides.empty();
}

}  // namespace

Space make_space(const Shape& iteration, const std::vector<int>& perm,
                 std::vector<Operand> operands) {
    core::StridedDims<std::vector<std::vector<std::ptrdiff_t>>> dims;
    dims.extent.assign(iteration.begin(), iteration.end());
    dims.stride.resize(operands.size());
    for (std::size_t o = 0; o < operands.size(); ++o) dims.stride[o] = operands[o].strides;
    const std::vector<std::size_t> order(perm.begin(), perm.end());
    auto merged = core::coalesce_dims(dims, order);
    for (std::size_t o = 0; o < operands.size(); ++o) {
        Operand& op = operands[o];
        op.strides = std::move(merged.stride[o]);
        const bool all_zero = std::all_of(op.strides.begin(), op.strides.end(),
                                          [](std::ptrdiff_t s) { return s == 0; });
        if (all_zero) {
            op.mode = Operand::scalar;
        } else if (walks_linearly(op.strides, merged.extent, op.item)) {
            op.mode = Operand::contiguous;
        } else {
            op.mode = Operand::strided;
        }
    }
    Space space;
    space.shape.assign(merged.extent.begin(), merged.extent.end());
    space.operands = std::move(operands);
    return space;
}

void fill_value(char* dst, const void* value, std::size_t item, std::size_t count) noexcept {
    auto fill_typed = [&](auto tag) {
        using E = decltype(tag);
        E v;
        std::memcpy(&v, value, sizeof(E));
        E* d = reinterpret_cast<E*>(dst);
        for (std::size_t k = 0; k < count; ++k) d[k] = v;
    };
    switch (item) {
        case 1: fill_typed(std::uint8_t{}); break;
        case 4: fill_typed(std::uint32_t{}); break;
        case 8: fill_typed(std::uint64_t{}); break;
        default:
            for (std::size_t k = 0; k < count; ++k) std::memcpy(dst + k * item, value, item);
    }
}

char* thread_workspace(std::size_t bytes) {
    thread_local std::unique_ptr<char[]> storage;
    thread_local std::size_t capacity = 0;
    if (capacity < bytes + 64) {
        storage.reset(new char[bytes + 64]);
        capacity = bytes + 64;
    }
    auto address = reinterpret_cast<std::uintptr_t>(storage.get());
    return storage.get() + ((64 - address % 64) % 64);
}

void raise_runtime_flags(unsigned flags) {
    if (flags & runtime_negative_int_power) {
        value_error("Integers to negative integer powers are not allowed.");
    }
}

std::vector<Operand> stage_operands(const Stage& stage, const std::vector<ArrayView>& inputs,
                                    const std::vector<ArrayView>& stage_outputs, std::size_t ndim,
                                    const ArrayView* output) {
    std::vector<Operand> operands;
    for (const auto& in : stage.inputs) {
        if (in.from_output && !output) value_error("stage_operands: the stage reads the result");
        const ArrayView& view = in.from_output  ? *output
                                : in.from_stage ? stage_outputs[in.index]
                                                : inputs[in.index];
        Operand op;
        op.base = view.data;
        op.item = view_item(view);
        op.strides = aligned_strides(view, ndim);
        operands.push_back(std::move(op));
    }
    return operands;
}

}  // namespace numfuse::expr::vm
