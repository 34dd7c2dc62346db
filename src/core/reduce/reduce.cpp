// logsumexp: its passes over the plan (plan.hpp: layout, work items, threads;
// fold.hpp: fixed chunks folded with the online max-and-rescale fold and merged in
// chunk order), its finishing and SciPy's special values. softmax / log_softmax are
// in softmax.cpp; the per-level loops in src/core/arch/reduce_loops.hpp.
//
// Compiled with the baseline flags: it only calls the level loops through
// the table of the active level, which levels.cpp checked the CPU can run.
#include "reduce/reduce.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fp_status.hpp"
#include "interrupt.hpp"
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
    value = static_cast<T>(lse_log_value(total.m, sum));
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
        const ReducePartial<T> total = merged(partials, p, o);
        finish_logsumexp(b ? total : certified(kernels, p, a, o, total), p, a, b, o, result, sign);
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
