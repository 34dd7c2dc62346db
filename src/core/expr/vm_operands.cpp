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
        } else if (op.strides.size() == 1 &&
                   op.strides[0] == static_cast<std::ptrdiff_t>(op.item)) {
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
                                    const std::vector<ArrayView>& stage_outputs, std::size_t ndim) {
    std::vector<Operand> operands;
    for (const auto& in : stage.inputs) {
        const ArrayView& view = in.from_stage ? stage_outputs[in.index] : inputs[in.index];
        Operand op;
        op.base = view.data;
        op.item = view_item(view);
        op.strides = aligned_strides(view, ndim);
        operands.push_back(std::move(op));
    }
    return operands;
}

}  // namespace numfuse::expr::vm
