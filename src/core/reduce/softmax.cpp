// softmax / log_softmax: the level-independent driver (two passes per group,
// fixed chunks merged in chunk order, SciPy's special values). The per-level
// loops are in src/core/arch/softmax_loops.hpp; the shared machinery in
// reduce/plan.hpp (layout, work items, threads) and reduce/fold.hpp (logsumexp's
// online fold, merging).
//
// Compiled with the baseline flags: it only calls the level loops through
// the table of the active level, which levels.cpp checked the CPU can run.
#include "reduce/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "fp_status.hpp"
#include "interrupt.hpp"
#include "lse_accumulator.hpp"
#include "reduce/fold.hpp"
#include "reduce/plan.hpp"

namespace numfuse::core {
namespace {

using namespace reduce_detail;

// ------------------------------------------------------------ softmax
//
// Two passes per group (arch/softmax_loops.hpp): fold (the maximum, then
// exp(x - max) summed; softmax stores those numerators into out, so exp runs
// once per element) and write (softmax: scale; log_softmax: x - max - log sum).
// Each work item folds one chunk of its outputs with that chunk's own maximum;
// the chunks of a group are merged in chunk order (merge_compensated), so the
// results do not depend on the thread count. A group of one chunk is folded,
// finished and written by the same item, while it is still in cache.

// Strips of softmax hold at most this many bytes per chunk (512 KiB: for the
// (1000, 1000) float32 axis-0 case, 128 lanes, 512 contiguous bytes a row), so
// that the input read by the maximum pass is still in L2 for the sum pass, and
// the numerators it stores are for the scaling pass.
constexpr std::size_t softmax_strip_bytes = std::size_t{512} << 10;

// Does the group of output o hold a NaN? (log_softmax with +inf only.)
template <class T>
bool has_nan(const Plan& p, const char* x, std::size_t o) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const std::ptrdiff_t step = p.inner.stride[slot_a].back();
    bool found = false;
    for_each_run(
        p.inner, 0, p.reduced, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            for (std::size_t i = 0; i < count && !found; ++i) {
                T v;
                std::memcpy(
                    &v, x + base[slot_a] + offset[slot_a] + static_cast<std::ptrdiff_t>(i) * step,
                    sizeof v);
                found = std::isnan(v);
            }
        });
    return found;
}

// Per (chunk, output) fold results and per output write parameters, in one
// allocation. Rows of `stride` entries: the strip kernels index lanes from a
// strip's first output.
template <class T>
struct SoftmaxScratch {
    std::size_t stride;
    std::size_t chunks;
    std::vector<T> storage;
    T* m;       // [chunk * stride + o]: the chunk's maximum (lowest(): none above -inf)
    T* s;       // [chunk * stride + o]: sum of exp(x - m) over the chunk is s + c
    T* c;
    T* factor;  // [chunk * stride + o]: softmax: exp(m_chunk - m_group) / sum
    T* shift;   // [o]: log_softmax: m_group, or NaN / +inf (special values)
    T* param;   // [o]: log_softmax: log(sum)

    explicit SoftmaxScratch(const Plan& p)
        : stride(p.outputs + lane_padding),
          chunks(p.chunks),
          storage(stride * (4 * p.chunks + 2), T(0)) {
        m = storage.data();
        s = m + stride * chunks;
        c = s + stride * chunks;
        factor = c + stride * chunks;
        shift = factor + stride * chunks;
        param = shift + stride;
        std::fill(m, m + stride * chunks, std::numeric_limits<T>::lowest());
    }
    std::size_t at(std::size_t chunk, std::size_t o) const noexcept { return chunk * stride + o; }
};

// The outputs a work item covers: [first, first + count).
struct ItemOutputs {
    std::size_t first;
    std::size_t count;
};

ItemOutputs item_outputs(const Plan& p, std::size_t index) noexcept {
    if (p.lanes_across_outputs) {
        const StripItem item = strip_item(p, index);
        return {item.first_output, item.lanes};
    }
    return {index / p.chunks, 1};
}

// Pass 1 of one work item: the maxima, then the sums of its chunk (softmax
// storing the numerators); log_softmax over strips or several chunks: the
// online fold.
template <class T>
void fold_softmax_item(const ReduceKernels<T>& kernels, SoftmaxKind kind, const Plan& p,
                       const char* x, const ReduceOutput& out, std::size_t index,
                       SoftmaxScratch<T>& sc) noexcept {
    const bool store = kind == SoftmaxKind::softmax;
    const std::ptrdiff_t x_step = p.inner.stride[slot_a].back();
    const std::ptrdiff_t out_step = p.inner.stride[slot_out].back();
    std::ptrdiff_t base[slot_count];
    const std::size_t chunk = index % p.chunks;
    const std::size_t lo = chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    if (!store && (p.lanes_across_outputs || p.chunks > 1)) {
        // log_softmax has no numerators to store. Over strips and groups longer
        // than a chunk, logsumexp's online fold (one read) measured faster than
        // a maximum pass first; over groups of one chunk along a run (rows in
        // L1 / L2) the maximum first is faster (no per-row lane state to merge).
        if (p.lanes_across_outputs) {
            const StripItem item = strip_item(p, index);
            const std::size_t at = sc.at(chunk, item.first_output);
            fold_strip_chunk<T>(kernels, p, x, nullptr, item, sc.m + at, sc.s + at, sc.c + at);
        } else {
            const std::size_t o = index / p.chunks;
            const ReducePartial<T> r = fold_run_chunk<T>(kernels, p, x, nullptr, o, chunk);
            const std::size_t at = sc.at(chunk, o);
            sc.m[at] = r.m;
            sc.s[at] = r.s;
            sc.c[at] = r.c;
        }
        return;
    }
    if (!p.lanes_across_outputs) {
        const std::size_t o = index / p.chunks;
        offsets_of(p.outer, o, base);
        T m = std::numeric_limits<T>::lowest();
        for_each_run(p.inner, lo, hi,
                     [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                         m = kernels.run_max(x + base[slot_a] + offset[slot_a], x_step, count, m);
                     });
        T s = T(0);
        T c = T(0);
        for_each_run(
            p.inner, lo, hi, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                kernels.run_exp_sum(x + base[slot_a] + offset[slot_a], x_step,
                                    store ? out.data + base[slot_out] + offset[slot_out] : nullptr,
                                    out_step, count, m, s, c);
            });
        const std::size_t at = sc.at(chunk, o);
        sc.m[at] = m;
        sc.s[at] = s;
        sc.c[at] = c;
        return;
    }
    const StripItem item = strip_item(p, index);
    offsets_of(p.outer, item.first_output, base);
    const std::ptrdiff_t x_lane = p.outer.stride[slot_a].back();
    const std::ptrdiff_t out_lane = p.outer.stride[slot_out].back();
    const std::size_t at = sc.at(chunk, item.first_output);
    for_each_run(p.inner, lo, hi,
                 [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                     kernels.strip_max(x + base[slot_a] + offset[slot_a], x_lane, x_step,
                                       item.lanes, count, sc.m + at);
                 });
    for_each_run(
        p.inner, lo, hi, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            kernels.strip_exp_sum(x + base[slot_a] + offset[slot_a], x_lane, x_step,
                                  store ? out.data + base[slot_out] + offset[slot_out] : nullptr,
                                  out_lane, out_step, item.lanes, count, sc.m + at, sc.s + at,
                                  sc.c + at);
        });
}

// The write parameters of a group from its merged triple. SciPy's special
// values: NaN or +inf entries make the sum NaN, all -inf makes it 0; the group
// is then NaN, except log_softmax with +inf and no NaN: shift = +inf,
// param = 0 (NaN at the +inf entries, -inf elsewhere). has_nan() scans the
// group (log_softmax only, where x is still intact).
template <class T>
struct GroupParameters {
    double scale;  // softmax: 1 / sum, NaN for a special group
    T shift;       // log_softmax: x - shift - param
    T param;
};

template <class T, class HasNan>
GroupParameters<T> group_parameters(SoftmaxKind kind, const ReducePartial<T>& total,
                                    HasNan&& has_nan) noexcept {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const Normalised sum = normalise(total);
    const bool normal = std::isfinite(sum.hi) && sum.hi > 0.0;
    if (kind == SoftmaxKind::softmax) {
        return {normal ? 1.0 / sum.hi : std::numeric_limits<double>::quiet_NaN(), nan, nan};
    }
    if (normal) return {0.0, total.m, static_cast<T>(std::log(sum.hi) + sum.lo / sum.hi)};
    if (total.m == std::numeric_limits<T>::infinity() && !has_nan()) return {0.0, total.m, T(0)};
    return {0.0, nan, nan};
}

// Merges the chunks of output o (in chunk order) and sets its write
// parameters: softmax's factor per chunk, exp(m_chunk - m) / sum, rounded
// once; log_softmax's shift and param.
template <class T>
void finish_softmax_output(SoftmaxKind kind, const Plan& p, const char* x, std::size_t o,
                           SoftmaxScratch<T>& sc) noexcept {
    ReducePartial<T> total = {sc.m[o], sc.s[o], sc.c[o]};
    for (std::size_t chunk = 1; chunk < p.chunks; ++chunk) {
        const std::size_t at = sc.at(chunk, o);
        total = merge(total, {sc.m[at], sc.s[at], sc.c[at]});
    }
    const GroupParameters<T> g = group_parameters(kind, total, [&] { return has_nan<T>(p, x, o); });
    if (kind == SoftmaxKind::softmax) {
        for (std::size_t chunk = 0; chunk < p.chunks; ++chunk) {
            const std::size_t at = sc.at(chunk, o);
            const double rescale = lse::exp_difference<lse::StdMath>(static_cast<double>(sc.m[at]),
                                                                     static_cast<double>(total.m));
            sc.factor[at] = static_cast<T>(rescale * g.scale);
        }
        return;
    }
    sc.shift[o] = g.shift;
    sc.param[o] = g.param;
}

// Pass 2 of one work item.
template <class T>
void write_softmax_item(const ReduceKernels<T>& kernels, SoftmaxKind kind, const Plan& p,
                        const char* x, const ReduceOutput& out, std::size_t index,
                        const SoftmaxScratch<T>& sc) noexcept {
    const std::ptrdiff_t x_step = p.inner.stride[slot_a].back();
    const std::ptrdiff_t out_step = p.inner.stride[slot_out].back();
    std::ptrdiff_t base[slot_count];
    const std::size_t chunk = index % p.chunks;
    const std::size_t lo = chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    if (!p.lanes_across_outputs) {
        const std::size_t o = index / p.chunks;
        offsets_of(p.outer, o, base);
        for_each_run(p.inner, lo, hi,
                     [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                         char* po = out.data + base[slot_out] + offset[slot_out];
                         if (kind == SoftmaxKind::softmax) {
                             kernels.run_scale(po, out_step, count, sc.factor[sc.at(chunk, o)]);
                         } else {
                             kernels.run_log_write(x + base[slot_a] + offset[slot_a], x_step, po,
                                                   out_step, count, sc.shift[o], sc.param[o]);
                         }
                     });
        return;
    }
    const StripItem item = strip_item(p, index);
    offsets_of(p.outer, item.first_output, base);
    const std::ptrdiff_t x_lane = p.outer.stride[slot_a].back();
    const std::ptrdiff_t out_lane = p.outer.stride[slot_out].back();
    for_each_run(
        p.inner, lo, hi, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            char* po = out.data + base[slot_out] + offset[slot_out];
            if (kind == SoftmaxKind::softmax) {
                kernels.strip_scale(po, out_lane, out_step, item.lanes, count,
                                    sc.factor + sc.at(chunk, item.first_output));
            } else {
                kernels.strip_log_write(x + base[slot_a] + offset[slot_a], x_lane, x_step, po,
                                        out_lane, out_step, item.lanes, count,
                                        sc.shift + item.first_output, sc.param + item.first_output);
            }
        });
}

// One group of at most one chunk along a single run (a 1-d array): the calls
// softmax_typed makes for it, in the same order (so the same bits), without the
// plan, the scratch arrays and the work items, which cost more than the
// arithmetic at a few thousand elements.
template <class T>
void softmax_single_run(SoftmaxKind kind, const char* x, std::ptrdiff_t x_step, char* out,
                        std::ptrdiff_t out_step, std::size_t n) {
    const auto& kernels = active_kernels<T>();
    const bool store = kind == SoftmaxKind::softmax;
    const T m = kernels.run_max(x, x_step, n, std::numeric_limits<T>::lowest());
    T s = T(0);
    T c = T(0);
    kernels.run_exp_sum(x, x_step, store ? out : nullptr, out_step, n, m, s, c);
    const GroupParameters<T> g = group_parameters(kind, ReducePartial<T>{m, s, c}, [&] {
        for (std::size_t i = 0; i < n; ++i) {
            T v;
            std::memcpy(&v, x + static_cast<std::ptrdiff_t>(i) * x_step, sizeof v);
            if (std::isnan(v)) return true;
        }
        return false;
    });
    if (store) {
        // exp_difference(m, m) = 1: the factor of the general path's only chunk.
        kernels.run_scale(out, out_step, n, static_cast<T>(1.0 * g.scale));
    } else {
        kernels.run_log_write(x, x_step, out, out_step, n, g.shift, g.param);
    }
}

template <class T>
void softmax_typed(SoftmaxKind kind, const Plan& p, const char* x, const ReduceOutput& out) {
    const auto& kernels = active_kernels<T>();
    if (p.chunks == 1 && p.lanes_across_outputs && p.inner.rank() == 1 &&
        p.reduced <= short_group_max) {
        // Short groups (e.g. the last axis of (1000, 1000, 5)): whole groups
        // per lane, in registers.
        parallel_items(p, [&](std::size_t index) {
            const StripItem item = strip_item(p, index);
            std::ptrdiff_t base[slot_count];
            offsets_of(p.outer, item.first_output, base);
            kernels.short_softmax(kind, x + base[slot_a], p.outer.stride[slot_a].back(),
                                  p.inner.stride[slot_a].back(), out.data + base[slot_out],
                                  p.outer.stride[slot_out].back(), p.inner.stride[slot_out].back(),
                                  item.lanes, p.reduced);
        });
        return;
    }
    SoftmaxScratch<T> scratch(p);
    if (p.chunks == 1) {
        parallel_items(p, [&](std::size_t index) {
            fold_softmax_item(kernels, kind, p, x, out, index, scratch);
            const ItemOutputs outputs = item_outputs(p, index);
            for (std::size_t o = outputs.first; o < outputs.first + outputs.count; ++o) {
                finish_softmax_output(kind, p, x, o, scratch);
            }
            write_softmax_item(kernels, kind, p, x, out, index, scratch);
        });
        return;
    }
    parallel_items(
        p, [&](std::size_t index) { fold_softmax_item(kernels, kind, p, x, out, index, scratch); });
    parallel_outputs(p.outputs, p.chunks * 8,
                     [&](std::size_t o) { finish_softmax_output(kind, p, x, o, scratch); });
    parallel_items(p, [&](std::size_t index) {
        write_softmax_item(kernels, kind, p, x, out, index, scratch);
    });
}

}  // namespace

void softmax(SoftmaxKind kind, DType dtype, const ReduceShape& shape, const ReduceOperand& x,
             const ReduceOutput& out) {
    const std::size_t elem = element_size(dtype);
    if (x.data == nullptr || out.data == nullptr) {
        throw std::invalid_argument("reduce: softmax needs x and out");
    }
    std::size_t reduced = 1;
    for (const auto e : shape.inner) reduced *= e;
    std::size_t outputs_count = 1;
    for (const auto e : shape.outer) outputs_count *= e;
    const bool single_run = outputs_count == 1 && reduced <= kReduceChunk &&
                            shape.inner.size() == 1 && x.inner.size() == 1 &&
                            out.inner.size() == 1 && x.outer.size() == shape.outer.size() &&
                            out.outer.size() == shape.outer.size();
    if (single_run && reduced > 0) {
        // Outer extents are all 1: offset 0 in every operand.
        FpStatusGuard guard;
        if (dtype == DType::f32) {
            softmax_single_run<float>(kind, x.data, x.inner[0], out.data, out.inner[0], reduced);
        } else {
            softmax_single_run<double>(kind, x.data, x.inner[0], out.data, out.inner[0], reduced);
        }
        return;
    }
    Dims outer, inner;
    const ReduceOperand* const inputs[2] = {&x, nullptr};
    const ReduceOutput* const outputs[2] = {&out, nullptr};
    build_dims(shape, inputs, outputs, true, outer, inner);
    if (outputs_count == 0) return;
    if (reduced == 0) {
        throw std::invalid_argument(
            "zero-size array to reduction operation maximum which has no identity");
    }
    FpStatusGuard guard;
    // log_softmax folds each strip once: logsumexp's widths.
    const std::size_t strip_bytes = kind == SoftmaxKind::softmax ? softmax_strip_bytes : 0;
    if (dtype == DType::f32) {
        const Plan p = plan(outer, inner, elem, active_kernels<float>().batch_lanes, strip_bytes);
        softmax_typed<float>(kind, p, x.data, out);
    } else {
        const Plan p = plan(outer, inner, elem, active_kernels<double>().batch_lanes, strip_bytes);
        softmax_typed<double>(kind, p, x.data, out);
    }
    interrupt::throw_if_stopped(interrupt::current());
}

}  // namespace numfuse::core
