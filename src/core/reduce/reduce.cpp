// The level-independent half of logsumexp / softmax / log_softmax: each function's
// passes over the plan (plan.hpp: layout, work items, threads; fold.hpp: fixed chunks
// folded and merged), its finishing and SciPy's special values.
// The per-level loops are in src/core/arch/reduce_loops.hpp.
//
// Compiled with the baseline flags: it only calls the level loops through
// the table of the active level, which levels.cpp checked the CPU can run.
#include "reduce/reduce.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "fp_status.hpp"
#include "interrupt.hpp"
#include "lse_accumulator.hpp"
#include "parallel.hpp"
#include "reduce/fold.hpp"
#include "reduce/plan.hpp"

namespace numfuse::core {

using namespace reduce_detail;

namespace {

// FpStatusGuard around the kernels: no condition is reported, since SciPy's
// own answers for these functions are computed under np.errstate(ignore)
// where they matter.

// ------------------------------------------------------------ logsumexp

// sum(b * exp(a)) in element order with the plain formula: only for outputs
// whose accurate value is not finite, where SciPy also falls back to it
// (its value decides between inf, -inf and NaN, e.g. 0 * inf = NaN for a
// masked infinite entry when nothing else is finite).
template <class T>
T plain_sum(const Plan& p, const char* a, const char* b, std::size_t o) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const std::ptrdiff_t a_step = p.inner.stride[slot_a].back();
    const std::ptrdiff_t b_step = p.inner.stride[slot_b].back();
    T sum = T(0);
    bool first = true;
    for_each_run(
        p.inner, 0, p.reduced, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            for (std::size_t i = 0; i < count; ++i) {
                const auto step = static_cast<std::ptrdiff_t>(i);
                T x;
                std::memcpy(&x, a + base[slot_a] + offset[slot_a] + step * a_step, sizeof x);
                T term = std::exp(x);
                if (b) {
                    T w;
                    std::memcpy(&w, b + base[slot_b] + offset[slot_b] + step * b_step, sizeof w);
                    term = w * term;
                }
                sum = first ? term : sum + term;
                first = false;
            }
        });
    return sum;
}

template <class T>
T sign_of(T x) noexcept {
    if (std::isnan(x)) return x;
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
}

template <class T>
void finish_logsumexp(const ReducePartial<T>& total, const Plan& p, const char* a, const char* b,
                      std::size_t o, const ReduceOutput& result,
                      const ReduceOutput& sign) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const bool with_sign = sign.data != nullptr;
    T value;
    T sgn;
    const Normalised sum = normalise(total);
    const double value_wide =
        static_cast<double>(total.m) + (std::log(std::fabs(sum.hi)) + sum.lo / sum.hi);
    value = static_cast<T>(value_wide);
    sgn = sign_of(static_cast<T>(sum.hi));
    if (!std::isfinite(value) || sum.hi == 0.0 || !std::isfinite(sum.hi)) {
        const T plain = plain_sum<T>(p, a, b, o);
        value = with_sign ? std::log(std::fabs(plain)) : std::log(plain);
        sgn = sign_of(plain);
    } else if (!with_sign && sgn < T(0)) {
        value = std::numeric_limits<T>::quiet_NaN();
    }
    std::memcpy(result.data + base[slot_out], &value, sizeof value);
    if (with_sign) std::memcpy(sign.data + base[slot_sign], &sgn, sizeof sgn);
}

template <class T>
void logsumexp_typed(const Plan& p, const char* a, const char* b, const ReduceOutput& result,
                     const ReduceOutput& sign) {
    const auto& kernels = active_kernels<T>();
    if (p.reduced == 0) {
        parallel_outputs(p.outputs, 1, [&](std::size_t o) {
            std::ptrdiff_t base[slot_count];
            offsets_of(p.outer, o, base);
            const T value = -std::numeric_limits<T>::infinity();
            const T sgn = T(-1);
            std::memcpy(result.data + base[slot_out], &value, sizeof value);
            if (sign.data) std::memcpy(sign.data + base[slot_sign], &sgn, sizeof sgn);
        });
        return;
    }
    const auto partials = fold_all(kernels, p, a, b);
    parallel_outputs(p.outputs, p.chunks * 8, [&](std::size_t o) {
        finish_logsumexp(merged(partials, p, o), p, a, b, o, result, sign);
    });
}

// ------------------------------------------------------------ softmax

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

// The (m, param) pair run_write / strip_write use for one group; SciPy's
// special values fall out of the same formula with m = NaN (everything NaN)
// or m = +inf, param = 0 (log_softmax with +inf entries: NaN there, -inf
// elsewhere).
template <class T>
void softmax_parameters(SoftmaxKind kind, const ReducePartial<T>& total, const Plan& p,
                        const char* x, std::size_t o, T& m, T& param) noexcept {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const Normalised sum = normalise(total);
    if (std::isfinite(sum.hi) && sum.hi > 0.0) {
        m = total.m;
        param = kind == SoftmaxKind::softmax ? static_cast<T>(sum.hi)
                                             : static_cast<T>(std::log(sum.hi) + sum.lo / sum.hi);
        return;
    }
    // A NaN sum comes from NaN or +inf entries; a zero sum from all -inf.
    const bool plus_infinity = total.m == std::numeric_limits<T>::infinity();
    if (kind == SoftmaxKind::log_softmax && plus_infinity && !has_nan<T>(p, x, o)) {
        m = total.m;
        param = T(0);
    } else {
        m = nan;
        param = T(1);
    }
}

template <class T>
void write_run_output(const ReduceKernels<T>& kernels, SoftmaxKind kind, const Plan& p,
                      const char* x, const ReduceOutput& out, std::size_t o, std::size_t chunk, T m,
                      T param) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, o, base);
    const std::size_t lo = chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    for_each_run(p.inner, lo, hi,
                 [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
                     kernels.run_write(kind, x + base[slot_a] + offset[slot_a],
                                       p.inner.stride[slot_a].back(),
                                       out.data + base[slot_out] + offset[slot_out],
                                       p.inner.stride[slot_out].back(), count, m, param);
                 });
}

template <class T>
void write_strip_output(const ReduceKernels<T>& kernels, SoftmaxKind kind, const Plan& p,
                        const char* x, const ReduceOutput& out, const StripItem& item, const T* m,
                        const T* param) noexcept {
    std::ptrdiff_t base[slot_count];
    offsets_of(p.outer, item.first_output, base);
    const std::size_t lo = item.chunk * p.chunk;
    const std::size_t hi = std::min(p.reduced, lo + p.chunk);
    for_each_run(
        p.inner, lo, hi, [&](const std::ptrdiff_t (&offset)[slot_count], std::size_t count) {
            kernels.strip_write(kind, x + base[slot_a] + offset[slot_a],
                                p.outer.stride[slot_a].back(), p.inner.stride[slot_a].back(),
                                out.data + base[slot_out] + offset[slot_out],
                                p.outer.stride[slot_out].back(), p.inner.stride[slot_out].back(),
                                item.lanes, count, m, param);
        });
}

template <class T>
void softmax_typed(SoftmaxKind kind, const Plan& p, const char* x, const ReduceOutput& out) {
    const auto& kernels = active_kernels<T>();
    if (p.chunks == 1) {
        // One chunk per group: fold, finish and write in the same work item
        // while the group is still in cache.
        if (p.lanes_across_outputs && p.inner.rank() == 1 && p.reduced <= short_group_max) {
            // Short groups (e.g. the last axis of (1000, 1000, 5)): whole
            // groups per lane, in registers.
            parallel_items(p, [&](std::size_t index) {
                const StripItem item = strip_item(p, index);
                std::ptrdiff_t base[slot_count];
                offsets_of(p.outer, item.first_output, base);
                kernels.short_softmax(kind, x + base[slot_a], p.outer.stride[slot_a].back(),
                                      p.inner.stride[slot_a].back(), out.data + base[slot_out],
                                      p.outer.stride[slot_out].back(),
                                      p.inner.stride[slot_out].back(), item.lanes, p.reduced);
            });
        } else if (p.lanes_across_outputs) {
            StripStates<T> state(p.outputs);
            std::vector<T> m(p.outputs + lane_padding, T(0));
            std::vector<T> param(p.outputs + lane_padding, T(1));
            parallel_items(p, [&](std::size_t index) {
                const StripItem item = strip_item(p, index);
                fold_strip_chunk<T>(kernels, p, x, nullptr, item, state);
                for (std::size_t j = item.first_output; j < item.first_output + item.lanes; ++j) {
                    softmax_parameters<T>(kind, {state.m[j], state.s[j], state.c[j]}, p, x, j, m[j],
                                          param[j]);
                }
                write_strip_output(kernels, kind, p, x, out, item, m.data() + item.first_output,
                                   param.data() + item.first_output);
            });
        } else {
            parallel_items(p, [&](std::size_t o) {
                const ReducePartial<T> total = fold_run_chunk<T>(kernels, p, x, nullptr, o, 0);
                T m, param;
                softmax_parameters<T>(kind, total, p, x, o, m, param);
                write_run_output(kernels, kind, p, x, out, o, 0, m, param);
            });
        }
        return;
    }
    // Long groups: fold every chunk, merge per group in chunk order, then
    // write every chunk.
    const auto partials = fold_all<T>(kernels, p, x, nullptr);
    std::vector<T> m(p.outputs + lane_padding, T(0));
    std::vector<T> param(p.outputs + lane_padding, T(1));
    parallel_outputs(p.outputs, p.chunks * 8, [&](std::size_t o) {
        softmax_parameters<T>(kind, merged(partials, p, o), p, x, o, m[o], param[o]);
    });
    if (p.lanes_across_outputs) {
        parallel_items(p, [&](std::size_t index) {
            const StripItem item = strip_item(p, index);
            write_strip_output(kernels, kind, p, x, out, item, m.data() + item.first_output,
                               param.data() + item.first_output);
        });
    } else {
        parallel_items(p, [&](std::size_t index) {
            const std::size_t o = index / p.chunks;
            write_run_output(kernels, kind, p, x, out, o, index % p.chunks, m[o], param[o]);
        });
    }
}

}  // namespace

void logsumexp(DType dtype, const ReduceShape& shape, const ReduceOperand& a,
               const ReduceOperand& b, const ReduceOutput& result, const ReduceOutput& sign) {
    const std::size_t elem = element_size(dtype);
    if (a.data == nullptr || result.data == nullptr) {
        throw std::invalid_argument("reduce: logsumexp needs a and result");
    }
    Dims outer, inner;
    const ReduceOperand* const inputs[2] = {&a, &b};
    const ReduceOutput* const outputs[2] = {&result, &sign};
    build_dims(shape, inputs, outputs, false, outer, inner);
    FpStatusGuard guard;
    if (dtype == DType::f32) {
        const Plan p = plan(outer, inner, elem, active_kernels<float>().batch_lanes);
        logsumexp_typed<float>(p, a.data, b.data, result, sign);
    } else {
        const Plan p = plan(outer, inner, elem, active_kernels<double>().batch_lanes);
        logsumexp_typed<double>(p, a.data, b.data, result, sign);
    }
    interrupt::throw_if_stopped(interrupt::current());
}

void softmax(SoftmaxKind kind, DType dtype, const ReduceShape& shape, const ReduceOperand& x,
             const ReduceOutput& out) {
    const std::size_t elem = element_size(dtype);
    if (x.data == nullptr || out.data == nullptr) {
        throw std::invalid_argument("reduce: softmax needs x and out");
    }
    Dims outer, inner;
    const ReduceOperand* const inputs[2] = {&x, nullptr};
    const ReduceOutput* const outputs[2] = {&out, nullptr};
    build_dims(shape, inputs, outputs, true, outer, inner);
    std::size_t reduced = 1;
    for (const auto e : shape.inner) reduced *= e;
    std::size_t outputs_count = 1;
    for (const auto e : shape.outer) outputs_count *= e;
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
