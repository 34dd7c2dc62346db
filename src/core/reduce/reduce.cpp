// logsumexp: the online max-and-rescale fold over every chunk, merged in
// chunk order, and SciPy's special values. The per-level loops are in
// src/core/arch/reduce_loops.hpp; the shared machinery (planning, threads,
// merging) in reduce/driver.hpp. softmax / log_softmax are in softmax.cpp.
#include "reduce/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "fp_status.hpp"
#include "reduce/driver.hpp"

namespace numfuse::core {
namespace {

using namespace reduce_driver;

// ------------------------------------------------------------ folding

// Lane states of every output for one chunk, as the strip kernels want
// them (structure of arrays, padded to whole batches).
template <class T>
struct StripStates {
    std::vector<T> m, s, c;
    explicit StripStates(std::size_t outputs)
        : m(outputs + lane_padding, std::numeric_limits<T>::lowest()),
          s(outputs + lane_padding, T(0)),
          c(outputs + lane_padding, T(0)) {}
};

// partials[o * chunks + chunk] for every output and chunk (phase 1).
template <class T>
std::vector<ReducePartial<T>> fold_all(const ReduceKernels<T>& kernels, const Plan& p,
                                       const char* a, const char* b) {
    std::vector<ReducePartial<T>> partials(p.outputs * p.chunks);
    if (p.lanes_across_outputs) {
        std::vector<StripStates<T>> states;
        states.reserve(p.chunks);
        for (std::size_t chunk = 0; chunk < p.chunks; ++chunk) states.emplace_back(p.outputs);
        parallel_items(p, [&](std::size_t index) {
            const StripItem item = strip_item(p, index);
            fold_strip_chunk(kernels, p, a, b, item,
                             states[item.chunk].m.data() + item.first_output,
                             states[item.chunk].s.data() + item.first_output,
                             states[item.chunk].c.data() + item.first_output);
        });
        for (std::size_t chunk = 0; chunk < p.chunks; ++chunk) {
            const auto& st = states[chunk];
            for (std::size_t o = 0; o < p.outputs; ++o) {
                partials[o * p.chunks + chunk] = {st.m[o], st.s[o], st.c[o]};
            }
        }
    } else {
        parallel_items(p, [&](std::size_t index) {
            const std::size_t o = index / p.chunks;
            const std::size_t chunk = index % p.chunks;
            partials[index] = fold_run_chunk(kernels, p, a, b, o, chunk);
        });
    }
    return partials;
}

template <class T>
ReducePartial<T> merged(const std::vector<ReducePartial<T>>& partials, const Plan& p,
                        std::size_t o) noexcept {
    ReducePartial<T> total = partials[o * p.chunks];
    for (std::size_t chunk = 1; chunk < p.chunks; ++chunk) {
        total = merge(total, partials[o * p.chunks + chunk]);
    }
    return total;
}

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

}  // namespace numfuse::core
