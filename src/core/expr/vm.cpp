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
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "arch/level_tables.hpp"
#include "expr/expr.hpp"
#include "expr/kernel_table.hpp"
#include "interrupt.hpp"
#include "numfuse_core.hpp"
#include "parallel.hpp"
#include "reduce/reduce.hpp"
#include "streaming.hpp"

namespace numfuse::expr {

const OpKernelTable& active_kernels() noexcept {
    static const core::PerLevelTables<OpKernelTable> tables(
        [](const core::LevelKernelFill& fill, OpKernelTable& table) { fill.expr(table); });
    return tables[core::active_level()];
}

namespace {

using Shape = std::vector<std::ptrdiff_t>;

// Bytes per register (block of the widest type) of element-wise stages:
// 2 KiB, so even a program with a dozen registers stays in L1. Small blocks
// also switch between the input streams often, which keeps the hardware
// prefetchers of all of them busy: `2*a + 3*b` at 1e7 f64 (whose first two
// instructions each read one input) took 11.4 ms on one Zen 5 thread with
// 16 KiB blocks, 7.7 ms with 4 KiB and 6.9 ms with 2 KiB.
constexpr std::size_t block_bytes = 2048;
// Reductions keep 16 KiB blocks: they fold every block into their
// accumulators, which costs per block (and the block size fixes the order
// in which float sums are added).
constexpr std::size_t reduce_block_bytes = 16384;
// Below this many elements per thread, a fork/join costs more than it saves.
constexpr std::size_t min_elements_per_thread = 16384;
// Work unit of a reduction along a run: the fixed chunk of the reductions
// (a multiple of every block size).
constexpr std::size_t reduce_chunk = core::kReduceChunk;

[[noreturn]] void value_error(const std::string& message) {
    throw ExprError(ErrorKind::value, message);
}

std::string shape_text(const Shape& shape) {
    std::string s = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) {
        s += std::to_string(shape[k]);
        if (shape.size() == 1 || k + 1 < shape.size()) s += ",";
    }
    return s + ")";
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
    std::size_t ndim = 0;
    for (const auto& s : shapes) ndim = std::max(ndim, s.size());
    Shape out(ndim, 1);
    for (const auto& s : shapes) {
        const std::size_t offset = ndim - s.size();
        for (std::size_t k = 0; k < s.size(); ++k) {
            std::ptrdiff_t& o = out[offset + k];
            if (s[k] == o || s[k] == 1) continue;
            if (o == 1) {
                o = s[k];
                continue;
            }
            std::string all;
            for (const auto& t : shapes) all += shape_text(t) + " ";
            value_error("operands could not be broadcast together with shapes " + all);
        }
    }
    return out;
}

std::size_t element_count(const Shape& shape) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return n;
}

// Resolved geometry of one stage.
struct StageGeometry {
    Shape iteration;          // broadcast shape of the stage's inputs
    std::vector<char> reduced;  // per iteration dim: reduced?
    Shape out_shape;          // the stage's output shape
};

std::vector<StageGeometry> plan_geometry(const Plan& plan, const std::vector<Shape>& input_shapes) {
    std::vector<StageGeometry> geometry;
    geometry.reserve(plan.stages.size());
    for (const Stage& stage : plan.stages) {
        std::vector<Shape> shapes;
        for (const auto& in : stage.inputs) {
            shapes.push_back(in.from_stage ? geometry[in.index].out_shape : input_shapes[in.index]);
        }
        StageGeometry g;
        g.iteration = broadcast_shapes(shapes);
        const int ndim = static_cast<int>(g.iteration.size());
        g.reduced.assign(g.iteration.size(), 0);
        if (stage.reduce == ReduceKind::none) {
            g.out_shape = g.iteration;
        } else {
            if (stage.all_axes) {
                std::fill(g.reduced.begin(), g.reduced.end(), 1);
            } else {
                for (int axis : stage.axes) {
                    const int a = axis < 0 ? axis + ndim : axis;
                    if (a < 0 || a >= ndim) {
                        value_error("axis " + std::to_string(axis) +
                                    " is out of bounds for array of dimension " +
                                    std::to_string(ndim));
                    }
                    if (g.reduced[a]) value_error("duplicate value in 'axis'");
                    g.reduced[a] = 1;
                }
            }
            for (int k = 0; k < ndim; ++k) {
                if (!g.reduced[k]) {
                    g.out_shape.push_back(g.iteration[k]);
                } else if (stage.keepdims) {
                    g.out_shape.push_back(1);
                }
            }
        }
        geometry.push_back(std::move(g));
    }
    return geometry;
}

// ------------------------------------------------------------------ operands
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

std::vector<std::ptrdiff_t> aligned_strides(const ArrayView& view, std::size_t ndim) {
    std::vector<std::ptrdiff_t> strides(ndim, 0);
    const std::size_t offset = ndim - view.shape.size();
    for (std::size_t k = 0; k < view.shape.size(); ++k) {
        strides[offset + k] = view.shape[k] == 1 ? 0 : view.strides[k];
    }
    return strides;
}

// `perm` orders the iteration dims (outermost first); operands carry strides
// for the unpermuted space.
Space make_space(const Shape& iteration, const std::vector<int>& perm,
                 std::vector<Operand> operands) {
    Space space;
    Shape shape;
    std::vector<std::vector<std::ptrdiff_t>> strides(operands.size());
    for (int d : perm) {
        if (iteration[d] == 1) continue;  // size-1 dims carry no iteration
        shape.push_back(iteration[d]);
        for (std::size_t o = 0; o < operands.size(); ++o)
            strides[o].push_back(operands[o].strides[d]);
    }
    // Merge dim k into k-1 when every operand steps through both as one.
    Shape merged;
    std::vector<std::vector<std::ptrdiff_t>> merged_strides(operands.size());
    for (std::size_t k = 0; k < shape.size(); ++k) {
        bool can_merge = !merged.empty();
        for (std::size_t o = 0; can_merge && o < operands.size(); ++o) {
            can_merge = merged_strides[o].back() == strides[o][k] * shape[k];
        }
        if (can_merge) {
            merged.back() *= shape[k];
            for (std::size_t o = 0; o < operands.size(); ++o)
                merged_strides[o].back() = strides[o][k];
        } else {
            merged.push_back(shape[k]);
            for (std::size_t o = 0; o < operands.size(); ++o)
                merged_strides[o].push_back(strides[o][k]);
        }
    }
    for (std::size_t o = 0; o < operands.size(); ++o) {
        Operand& op = operands[o];
        op.strides = std::move(merged_strides[o]);
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
    space.shape = std::move(merged);
    space.operands = std::move(operands);
    return space;
}

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
            default: copy_run(Bytes<16>{}); break;
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

// Writes `count` copies of the `item`-byte value at `value` to `dst`.
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

// Per-thread workspace, reused across calls (grows to the largest need).
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

// Runs a program over blocks of a Space, one thread's share at a time.
class BlockRunner {
public:
    BlockRunner(const Program& program, const Space& space, const OpKernelTable& kernels,
                std::size_t bytes = block_bytes)
        : program_(program), space_(space), kernels_(kernels) {
        block_ = bytes / (program.max_item ? program.max_item : 8);
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
    }

    std::size_t block() const noexcept { return block_; }

    // Sets up this thread's registers; returns false never (kept for clarity).
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
                fill(p, reg.value.bytes, type_size(reg.type));
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

private:
    void fill(char* dst, const void* value, std::size_t item) const {
        fill_value(dst, value, item, block_);
    }

    const Program& program_;
    const Space& space_;
    const OpKernelTable& kernels_;
    std::size_t block_ = 1024;
    std::size_t workspace_bytes_ = 0;
    std::vector<char*> registers_;
};

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
        op.item = type_size(view.type);
        op.strides = aligned_strides(view, ndim);
        operands.push_back(std::move(op));
    }
    return operands;
}

// ------------------------------------------------------------------ element-wise
void run_elementwise(const Stage& stage, const StageGeometry& g,
                     const std::vector<ArrayView>& inputs,
                     const std::vector<ArrayView>& stage_outputs, const ArrayView& out,
                     const OpKernelTable& kernels) {
    const std::size_t ndim = g.iteration.size();
    const std::size_t n = element_count(g.iteration);
    if (n == 0) return;
    std::vector<Operand> operands = stage_operands(stage, inputs, stage_outputs, ndim);
    Operand out_op;
    out_op.base = out.data;
    out_op.item = type_size(out.type);
    out_op.strides = aligned_strides(out, ndim);
    operands.push_back(out_op);
    std::vector<int> perm(ndim);
    std::iota(perm.begin(), perm.end(), 0);
    const Space space = make_space(g.iteration, perm, std::move(operands));
    const Operand& target = space.operands.back();
    const BlockRunner prototype(stage.program, space, kernels);
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

// ------------------------------------------------------------------ reductions
// Accumulators: sums of float32 run in float64 (more accurate than NumPy's
// pairwise float32 sum, and deterministic), integers in int64.
template <class T>
struct SumAcc {
    using Acc = std::conditional_t<
        std::is_same_v<T, float>, double,
        std::conditional_t<std::is_same_v<T, std::complex<float>>, std::complex<double>, T>>;
};

template <ReduceKind K, class T>
struct Reducer;

// Sum and mean: eight partial sums in a fixed pattern (vectorisable without
// reassociation), folded in a fixed order.
template <class T, bool Mean>
struct SumLike {
    using Acc = typename SumAcc<T>::Acc;
    static Acc init() { return Acc(0); }
    static void add_run(Acc& acc, const T* v, std::size_t n) {
        Acc part[8] = {Acc(0), Acc(0), Acc(0), Acc(0), Acc(0), Acc(0), Acc(0), Acc(0)};
        std::size_t k = 0;
        for (; k + 8 <= n; k += 8) {
            for (int j = 0; j < 8; ++j) part[j] += static_cast<Acc>(v[k + j]);
        }
        for (; k < n; ++k) part[k % 8] += static_cast<Acc>(v[k]);
        acc += ((part[0] + part[4]) + (part[2] + part[6])) +
               ((part[1] + part[5]) + (part[3] + part[7]));
    }
    static void add_columns(Acc* acc, const T* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) acc[k] += static_cast<Acc>(v[k]);
    }
    static void merge(Acc& acc, const Acc& other) { acc += other; }
    static T finish(const Acc& acc, std::size_t count) {
        if constexpr (Mean) {
            if constexpr (std::is_integral_v<Acc>) return static_cast<T>(acc);
            else return static_cast<T>(acc / static_cast<typename SumAcc<double>::Acc>(count));
        } else {
            (void)count;
            return static_cast<T>(acc);
        }
    }
};

template <class T>
struct ProdLike {
    using Acc = typename SumAcc<T>::Acc;
    static Acc init() { return Acc(1); }
    static Acc mul(const Acc& a, const Acc& b) {
        if constexpr (std::is_integral_v<Acc>) {
            using U = std::make_unsigned_t<Acc>;
            return static_cast<Acc>(static_cast<U>(a) * static_cast<U>(b));
        } else {
            return a * b;
        }
    }
    static void add_run(Acc& acc, const T* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) acc = mul(acc, static_cast<Acc>(v[k]));
    }
    static void add_columns(Acc* acc, const T* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) acc[k] = mul(acc[k], static_cast<Acc>(v[k]));
    }
    static void merge(Acc& acc, const Acc& other) { acc = mul(acc, other); }
    static T finish(const Acc& acc, std::size_t) { return static_cast<T>(acc); }
};

// NaN-propagating extrema, as np.max / np.min.
template <class T, bool Max>
struct Extremum {
    using Acc = T;
    static Acc init() {
        if constexpr (std::is_same_v<T, bool>) return !Max;
        else if constexpr (std::is_floating_point_v<T>)
            return Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
        else return Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
    static T pick(T a, T b) {
        if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(a)) return a;
            if (std::isnan(b)) return b;
        }
        return Max ? (b > a ? b : a) : (b < a ? b : a);
    }
    static void add_run(Acc& acc, const T* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) acc = pick(acc, v[k]);
    }
    static void add_columns(Acc* acc, const T* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) acc[k] = pick(acc[k], v[k]);
    }
    static void merge(Acc& acc, const Acc& other) { acc = pick(acc, other); }
    static T finish(const Acc& acc, std::size_t) { return acc; }
};

// log(sum(exp(x))) streamed as (max, sum of exp(x - max)), in double.
template <class T>
struct LogSumExp {
    struct Acc {
        double max = -std::numeric_limits<double>::infinity();
        double sum = 0.0;
    };
    static Acc init() { return Acc{}; }
    static void add_one(Acc& acc, double x) {
        if (std::isnan(x)) {
            acc.max = x;
            return;
        }
        if (x > acc.max) {
            if (std::isnan(acc.max)) return;
            acc.sum = (acc.max == -std::numeric_limits<double>::infinity()
                           ? 0.0
                           : acc.sum * std::exp(acc.max - x)) +
                      1.0;
            acc.max = x;
        } else if (x != -std::numeric_limits<double>::infinity()) {
            acc.sum += std::exp(x - acc.max);
        }
    }
    static void add_run(Acc& acc, const T* v, std::size_t n) {
        // Block maximum first, then one pass of exp(x - max): one rescale per run.
        double m = acc.max;
        bool nan = std::isnan(m);
        for (std::size_t k = 0; k < n && !nan; ++k) {
            const double x = static_cast<double>(v[k]);
            if (std::isnan(x)) nan = true;
            else if (x > m) m = x;
        }
        if (nan) {
            acc.max = std::numeric_limits<double>::quiet_NaN();
            return;
        }
        if (m == -std::numeric_limits<double>::infinity()) return;  // all -inf so far
        if (m == std::numeric_limits<double>::infinity()) {
            acc.max = m;
            acc.sum = 1.0;
            return;
        }
        double s = acc.max == -std::numeric_limits<double>::infinity()
                       ? 0.0
                       : acc.sum * std::exp(acc.max - m);
        for (std::size_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(v[k]) - m);
        acc.max = m;
        acc.sum = s;
    }
    static void add_columns(Acc* acc, const T* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) add_one(acc[k], static_cast<double>(v[k]));
    }
    static void merge(Acc& acc, const Acc& other) {
        if (std::isnan(acc.max) || std::isnan(other.max)) {
            acc.max = std::numeric_limits<double>::quiet_NaN();
            return;
        }
        if (other.max == -std::numeric_limits<double>::infinity()) return;
        if (acc.max == -std::numeric_limits<double>::infinity()) {
            acc = other;
            return;
        }
        if (other.max == std::numeric_limits<double>::infinity() ||
            acc.max == std::numeric_limits<double>::infinity()) {
            acc.max = std::numeric_limits<double>::infinity();
            acc.sum = 1.0;
            return;
        }
        if (other.max > acc.max) {
            acc.sum = acc.sum * std::exp(acc.max - other.max) + other.sum;
            acc.max = other.max;
        } else {
            acc.sum += other.sum * std::exp(other.max - acc.max);
        }
    }
    static T finish(const Acc& acc, std::size_t) {
        if (std::isnan(acc.max) || std::isinf(acc.max)) return static_cast<T>(acc.max);
        return static_cast<T>(acc.max + std::log(acc.sum));
    }
};

// Which iteration order a reduction uses.
struct ReduceLayout {
    bool columns = false;  // reduced dims outermost, accumulate rows of M outputs
    std::size_t m = 1;     // output elements
    std::size_t l = 1;     // elements reduced into each output
    std::vector<int> perm;
};

ReduceLayout reduce_layout(const StageGeometry& g) {
    ReduceLayout layout;
    const int ndim = static_cast<int>(g.iteration.size());
    std::vector<int> kept, reduced;
    for (int k = 0; k < ndim; ++k) {
        if (g.reduced[k]) {
            reduced.push_back(k);
            layout.l *= static_cast<std::size_t>(g.iteration[k]);
        } else {
            kept.push_back(k);
            layout.m *= static_cast<std::size_t>(g.iteration[k]);
        }
    }
    // Columns when the innermost non-trivial dim is kept and there are enough
    // outputs to fill vectors; otherwise rows (each output a run).
    int inner = ndim - 1;
    while (inner >= 0 && g.iteration[inner] == 1) --inner;
    layout.columns = inner >= 0 && !g.reduced[inner] && layout.m >= 64;
    if (layout.columns) {
        layout.perm = reduced;
        layout.perm.insert(layout.perm.end(), kept.begin(), kept.end());
    } else {
        layout.perm = kept;
        layout.perm.insert(layout.perm.end(), reduced.begin(), reduced.end());
    }
    return layout;
}

template <class R, class T, class Out>
void run_reduction_typed(const Stage& stage, const StageGeometry& g,
                         const std::vector<ArrayView>& inputs,
                         const std::vector<ArrayView>& stage_outputs, Out* result,
                         const OpKernelTable& kernels) {
    using Acc = typename R::Acc;
    const ReduceLayout layout = reduce_layout(g);
    const std::size_t m = layout.m, l = layout.l;
    // NumPy raises for min/max over an empty axis even when the result is empty too
    // (np.min(np.empty((0, 0)), axis=0)), so this comes before the m == 0 return.
    if (l == 0 && (stage.reduce == ReduceKind::min || stage.reduce == ReduceKind::max)) {
        value_error(std::string("zero-size array to reduction operation ") +
                    (stage.reduce == ReduceKind::min ? "minimum" : "maximum") +
                    " which has no identity");
    }
    if (m == 0) return;
    if (l == 0) {
        for (std::size_t k = 0; k < m; ++k) result[k] = R::finish(R::init(), 0);
        return;
    }
    const std::size_t ndim = g.iteration.size();
    const Space space =
        make_space(g.iteration, layout.perm, stage_operands(stage, inputs, stage_outputs, ndim));
    const BlockRunner prototype(stage.program, space, kernels, reduce_block_bytes);
    const std::size_t block = prototype.block();
    interrupt::Scope* const scope = interrupt::current();
    unsigned flags = 0;
    if (layout.columns) {
        // Each thread owns a range of outputs and walks all reduced rows for
        // it, so every output sees its inputs in the same order.
        // (not std::vector: vector<bool> has no data())
        std::unique_ptr<Acc[]> acc(new Acc[m]);
        for (std::size_t k = 0; k < m; ++k) acc[k] = R::init();
        flags = parallel::for_ranges_or(
            m, std::max<std::size_t>(64, min_elements_per_thread / std::max<std::size_t>(l, 1)), 64,
            [&](std::size_t begin, std::size_t end) {
                BlockRunner runner = prototype;
                runner.attach();
                unsigned local = 0;
                for (std::size_t row = 0; row < l; ++row) {
                    for (std::size_t col = begin; col < end; col += block) {
                        if (interrupt::should_stop(scope)) return local;
                        const std::size_t count = std::min(block, end - col);
                        const char* v = runner.run(row * m + col, count, nullptr, local);
                        R::add_columns(acc.get() + col, reinterpret_cast<const T*>(v), count);
                    }
                }
                return local;
            });
        for (std::size_t k = 0; k < m; ++k) result[k] = static_cast<Out>(R::finish(acc[k], l));
    } else if (l >= reduce_chunk) {
        // Long runs: units are (output, chunk of its run); partials combined
        // in chunk order.
        const std::size_t chunks = (l + reduce_chunk - 1) / reduce_chunk;
        std::unique_ptr<Acc[]> partial(new Acc[m * chunks]);
        for (std::size_t k = 0; k < m * chunks; ++k) partial[k] = R::init();
        flags = parallel::for_ranges_or(m * chunks, 1, 1, [&](std::size_t begin, std::size_t end) {
            BlockRunner runner = prototype;
            runner.attach();
            unsigned local = 0;
            for (std::size_t unit = begin; unit < end; ++unit) {
                const std::size_t row = unit / chunks, chunk = unit % chunks;
                const std::size_t first = chunk * reduce_chunk;
                const std::size_t last = std::min(l, first + reduce_chunk);
                for (std::size_t at = first; at < last; at += block) {
                    if (interrupt::should_stop(scope)) return local;
                    const std::size_t count = std::min(block, last - at);
                    const char* v = runner.run(row * l + at, count, nullptr, local);
                    R::add_run(partial[unit], reinterpret_cast<const T*>(v), count);
                }
            }
            return local;
        });
        for (std::size_t row = 0; row < m; ++row) {
            Acc acc = partial[row * chunks];
            for (std::size_t c = 1; c < chunks; ++c) R::merge(acc, partial[row * chunks + c]);
            result[row] = static_cast<Out>(R::finish(acc, l));
        }
    } else {
        // Short runs: units are groups of whole rows evaluated block by block.
        const std::size_t rows_per_unit = std::max<std::size_t>(1, reduce_chunk / l);
        const std::size_t units = (m + rows_per_unit - 1) / rows_per_unit;
        flags = parallel::for_ranges_or(
            units, std::max<std::size_t>(1, min_elements_per_thread / reduce_chunk), 1,
            [&](std::size_t begin, std::size_t end) {
                BlockRunner runner = prototype;
                runner.attach();
                unsigned local = 0;
                for (std::size_t unit = begin; unit < end; ++unit) {
                    const std::size_t row0 = unit * rows_per_unit;
                    const std::size_t row1 = std::min(m, row0 + rows_per_unit);
                    const std::size_t first = row0 * l, last = row1 * l;
                    std::size_t row = row0, in_row = 0;
                    Acc acc = R::init();
                    for (std::size_t at = first; at < last; at += block) {
                        if (interrupt::should_stop(scope)) return local;
                        const std::size_t count = std::min(block, last - at);
                        const T* v =
                            reinterpret_cast<const T*>(runner.run(at, count, nullptr, local));
                        std::size_t k = 0;
                        while (k < count) {
                            const std::size_t take = std::min(count - k, l - in_row);
                            R::add_run(acc, v + k, take);
                            k += take;
                            in_row += take;
                            if (in_row == l) {
                                result[row++] = static_cast<Out>(R::finish(acc, l));
                                acc = R::init();
                                in_row = 0;
                            }
                        }
                    }
                }
                return local;
            });
    }
    interrupt::throw_if_stopped(scope);
    raise_runtime_flags(flags);
}

template <ReduceKind K, class T>
void reduce_as(const Stage& stage, const StageGeometry& g, const std::vector<ArrayView>& inputs,
               const std::vector<ArrayView>& stage_outputs, char* result,
               const OpKernelTable& kernels) {
    if constexpr (K == ReduceKind::sum) {
        run_reduction_typed<SumLike<T, false>, T>(stage, g, inputs, stage_outputs,
                                                  reinterpret_cast<T*>(result), kernels);
    } else if constexpr (K == ReduceKind::mean) {
        run_reduction_typed<SumLike<T, true>, T>(stage, g, inputs, stage_outputs,
                                                 reinterpret_cast<T*>(result), kernels);
    } else if constexpr (K == ReduceKind::prod) {
        run_reduction_typed<ProdLike<T>, T>(stage, g, inputs, stage_outputs,
                                            reinterpret_cast<T*>(result), kernels);
    } else if constexpr (K == ReduceKind::min || K == ReduceKind::max) {
        run_reduction_typed<Extremum<T, K == ReduceKind::max>, T>(
            stage, g, inputs, stage_outputs, reinterpret_cast<T*>(result), kernels);
    } else {
        run_reduction_typed<LogSumExp<T>, T>(stage, g, inputs, stage_outputs,
                                             reinterpret_cast<T*>(result), kernels);
    }
}

template <ReduceKind K>
void reduce_kind(Type t, const Stage& stage, const StageGeometry& g,
                 const std::vector<ArrayView>& inputs, const std::vector<ArrayView>& stage_outputs,
                 char* result, const OpKernelTable& kernels) {
    constexpr bool extremum = K == ReduceKind::min || K == ReduceKind::max;
    switch (t) {
        case Type::b:
            if constexpr (extremum)
                return reduce_as<K, bool>(stage, g, inputs, stage_outputs, result, kernels);
            break;
        case Type::i:
            if constexpr (extremum)
                return reduce_as<K, std::int32_t>(stage, g, inputs, stage_outputs, result, kernels);
            break;
        case Type::l:
            if constexpr (K != ReduceKind::mean && K != ReduceKind::logsumexp)
                return reduce_as<K, std::int64_t>(stage, g, inputs, stage_outputs, result, kernels);
            break;
        case Type::f: return reduce_as<K, float>(stage, g, inputs, stage_outputs, result, kernels);
        case Type::d: return reduce_as<K, double>(stage, g, inputs, stage_outputs, result, kernels);
        case Type::c:
            if constexpr (!extremum && K != ReduceKind::logsumexp)
                return reduce_as<K, std::complex<float>>(stage, g, inputs, stage_outputs, result,
                                                         kernels);
            break;
        case Type::z:
            if constexpr (!extremum && K != ReduceKind::logsumexp)
                return reduce_as<K, std::complex<double>>(stage, g, inputs, stage_outputs, result,
                                                          kernels);
            break;
    }
    throw ExprError(ErrorKind::type, std::string("reduction ") + reduce_name(K) +
                                         " is not supported for " + type_name(t));
}

void run_reduction(const Stage& stage, const StageGeometry& g, const std::vector<ArrayView>& inputs,
                   const std::vector<ArrayView>& stage_outputs, char* result,
                   const OpKernelTable& kernels) {
    const Type t = stage.out_type;
    switch (stage.reduce) {
        case ReduceKind::sum:
            return reduce_kind<ReduceKind::sum>(t, stage, g, inputs, stage_outputs, result,
                                                kernels);
        case ReduceKind::prod:
            return reduce_kind<ReduceKind::prod>(t, stage, g, inputs, stage_outputs, result,
                                                 kernels);
        case ReduceKind::min:
            return reduce_kind<ReduceKind::min>(t, stage, g, inputs, stage_outputs, result,
                                                kernels);
        case ReduceKind::max:
            return reduce_kind<ReduceKind::max>(t, stage, g, inputs, stage_outputs, result,
                                                kernels);
        case ReduceKind::mean:
            return reduce_kind<ReduceKind::mean>(t, stage, g, inputs, stage_outputs, result,
                                                 kernels);
        case ReduceKind::logsumexp:
            return reduce_kind<ReduceKind::logsumexp>(t, stage, g, inputs, stage_outputs, result,
                                                      kernels);
        case ReduceKind::none: break;
    }
}

std::vector<std::ptrdiff_t> contiguous_strides(const Shape& shape, std::size_t item) {
    std::vector<std::ptrdiff_t> strides(shape.size());
    auto step = static_cast<std::ptrdiff_t>(item);
    for (std::size_t k = shape.size(); k-- > 0;) {
        strides[k] = step;
        step *= shape[k];
    }
    return strides;
}

}  // namespace

std::size_t block_elements(const Program& program) noexcept {
    return block_bytes / (program.max_item ? program.max_item : 8);
}

bool is_flat(const Plan& plan) noexcept {
    if (plan.stages.size() != 1) return false;
    const Stage& stage = plan.stages[0];
    if (stage.reduce != ReduceKind::none || stage.program.registers.size() > 64) return false;
    for (const auto& in : stage.inputs) {
        if (in.from_stage) return false;
    }
    return true;
}

void execute_contiguous(const Plan& plan, const char* const* inputs, std::size_t n, char* out) {
    if (n == 0) return;
    const Stage& stage = plan.stages[0];
    const Program& program = stage.program;
    const OpKernelTable& kernels = active_kernels();
    const std::size_t block = block_elements(program);
    const std::size_t reg_bytes = block * program.max_item;
    const std::size_t out_item = type_size(plan.result_type);
    std::size_t buffers = static_cast<std::size_t>(program.slots);
    for (const auto& r : program.registers) buffers += r.kind == RegisterKind::constant;
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
