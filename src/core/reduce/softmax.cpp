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
// the chunks of a group are merged in chunk order (ChunkMerge, fold.hpp), so the
// results do not depend on the thread count. A group of one chunk is folded,
// finished and written by the same item, while it is still in cache.

// Strips of softmax are as wide as logsumexp's (plan(): one per thread's share of the
// lanes), though their three passes then reread x and the numerators from L3, not L2.
// Strips narrow enough to stay in L2 read only a few cache lines of each step before
// moving to the next (a new page every step), which the prefetchers follow worse than
// they save (measured on a Zen 3 with 512 KiB of L2 a core: whole-share strips beat
// strips of L2's size and smaller ones; figures in docs/benchmarks.md).

// softmax_columns takes groups of at most this many steps (its strips of 512 KiB
// are then at least one batch of lanes wide) and this many lanes per call.
constexpr std::size_t column_steps_max = 4096;
constexpr std::size_t column_span = 2048;

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
    T* s;       // [chunk * stride + o]: sum of exp(x - m) over the chunk is s + c + d
    T* c;
    T* d;       // (strip_exp_sum's third word; 0 elsewhere)
    T* factor;  // [chunk * stride + o]: softmax: exp(m_chunk - m_group) / sum
    T* shift;   // [o]: log_softmax: m_group, or NaN / +inf (special values)
    T* param;   // [o]: log_softmax: log(sum)

    explicit SoftmaxScratch(const Plan& p)
        : stride(p.outputs + lane_padding),
          chunks(p.chunks),
          storage(stride * (5 * p.chunks + 2), T(0)) {
        m = storage.data();
        s = m + stride * chunks;
        c = s + stride * chunks;
        d = c + stride * chunks;
        factor = d + stride * chunks;
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
// storing the numerators; terms from x - m as a double word, kernel_table.hpp:
// run_exp_sum). log_softmax over several chunks too: logsumexp's online fold (one read)
// takes x - m rounded, which reaches -log(sum) at a dominant maximum (5258 eps at sse2
// for a maximum and 69535 equal terms in a column's lane), and summing such a group
// again (fold.hpp: certified) took 5x the time on normal(0, 3) logits of 1e6 elements,
// which need it.
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
                                  sc.c + at, sc.d + at);
        });
}

// Merges the chunks of output o (in chunk order) and sets its write
// parameters: softmax's factor per chunk, exp(m_chunk - m) / sum, rounded
// once; log_softmax's shift and param.
template <class T>
void finish_softmax_output(SoftmaxKind kind, const Plan& p, const char* x, std::size_t o,
                           SoftmaxScratch<T>& sc) noexcept {
    // c + d rounded once (u of c: the lane's terms below half an ulp of s are in c).
    ChunkMerge<T> merging({sc.m[o], sc.s[o], sc.c[o] + sc.d[o]});
    for (std::size_t chunk = 1; chunk < p.chunks; ++chunk) {
        const std::size_t at = sc.at(chunk, o);
        merging.add({sc.m[at], sc.s[at], sc.c[at] + sc.d[at]});
    }
    const ReducePartial<T> total = merging.total();
    const lse::SoftmaxParameters<T> g =
        lse::softmax_parameters<T>(kind == SoftmaxKind::log_softmax, total.m, total.s, total.c,
                                   [&] { return has_nan<T>(p, x, o); });
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

// One group of at most one chunk along a single run (a 1-d array), without the
// plan, the scratch arrays and the work items, which cost more than the
// arithmetic at a few thousand elements: a contiguous run is one row of
// softmax_rows (as softmax_typed's rows, the same bits), a strided one takes the
// calls softmax_typed makes for it, in the same order.
template <class T>
void softmax_single_run(SoftmaxKind kind, const char* x, std::ptrdiff_t x_step, char* out,
                        std::ptrdiff_t out_step, std::size_t n) {
    const auto& kernels = active_kernels<T>();
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    if (x_step == elem && out_step == elem) {
        kernels.softmax_rows(kind, x, 0, out, 0, 1, n);
        return;
    }
    const bool store = kind == SoftmaxKind::softmax;
    const T m = kernels.run_max(x, x_step, n, std::numeric_limits<T>::lowest());
    T s = T(0);
    T c = T(0);
    kernels.run_exp_sum(x, x_step, store ? out : nullptr, out_step, n, m, s, c);
    const lse::SoftmaxParameters<T> g = lse::softmax_parameters<T>(!store, m, s, c, [&] {
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
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    if (p.chunks == 1 && !p.lanes_across_outputs && p.inner.rank() == 1 &&
        p.inner.stride[slot_a][0] == elem && p.inner.stride[slot_out][0] == elem) {
        // Contiguous groups of at most one chunk (rows): each folded, finished and
        // written by one kernel call while in cache, runs of rows along the innermost
        // outer dimension per call (the kernel prefetches the next row).
        const std::size_t min_rows = std::max<std::size_t>(min_elements_per_thread / p.reduced, 1);
        interrupt::Scope* const scope = interrupt::current();
        parallel::for_ranges_or(p.outputs, min_rows, 1, [&](std::size_t begin, std::size_t end) {
            if (interrupt::should_stop(scope)) return 0u;
            for_each_run(p.outer, begin, end,
                         [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                             kernels.softmax_rows(
                                 kind, x + offset[slot_a], p.outer.stride[slot_a].back(),
                                 out.data + offset[slot_out], p.outer.stride[slot_out].back(),
                                 count, p.reduced);
                         });
            return 0u;
        });
        return;
    }
    if (kernels.softmax_columns != nullptr && p.chunks == 1 && p.lanes_across_outputs &&
        p.outer.rank() == 1 && p.inner.rank() == 1 && p.outer.stride[slot_a][0] == elem &&
        p.outer.stride[slot_out][0] == elem && p.reduced <= column_steps_max) {
        // Groups across contiguous lanes (axis 0 of a C array): one contiguous block of
        // lanes per thread (the kernel prefetches its next strip), in spans between
        // which a Ctrl-C is seen. Each group is folded in step order whatever the cut.
        const auto threads = static_cast<std::size_t>(parallel::thread_count());
        const std::size_t min_lanes = std::max<std::size_t>(
            {p.outputs / threads, min_elements_per_thread / p.reduced, std::size_t{1}});
        const std::ptrdiff_t x_step = p.inner.stride[slot_a][0];
        const std::ptrdiff_t out_step = p.inner.stride[slot_out][0];
        interrupt::Scope* const scope = interrupt::current();
        parallel::for_ranges_or(
            p.outputs, min_lanes, lane_padding, [&](std::size_t begin, std::size_t end) {
                for (std::size_t j = begin; j < end; j += column_span) {
                    if (interrupt::should_stop(scope)) break;
                    const auto at = static_cast<std::ptrdiff_t>(j) * elem;
                    kernels.softmax_columns(kind, x + at, x_step, out.data + at, out_step,
                                            std::min(column_span, end - j), p.reduced);
                }
                return 0u;
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
    if (dtype == DType::f32) {
        const Plan p = plan(outer, inner, elem, active_kernels<float>().batch_lanes);
        softmax_typed<float>(kind, p, x.data, out);
    } else {
        const Plan p = plan(outer, inner, elem, active_kernels<double>().batch_lanes);
        softmax_typed<double>(kind, p, x.data, out);
    }
    interrupt::throw_if_stopped(interrupt::current());
}

}  // namespace numfuse::core
