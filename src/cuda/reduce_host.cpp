// The GPU logsumexp / softmax / log_softmax run on the CPU in exactly the GPU's
// order of operations (same plan, same per-lane batches, same combine trees, same
// chunk order; lse_core.hpp): the tests compare it with SciPy here and, on a GPU,
// with the device result bit for bit.
#include "reduce_host.hpp"

#include <vector>

#include "lse_core.hpp"

namespace numfuse::cuda {
namespace {

using lse::LseState;

// The fixed combine tree of a group of `lanes` threads; the result is lanes[0].
template <class T>
LseState tree(std::vector<LseState>& lanes) {
    for (std::size_t half = lanes.size() / 2; half > 0; half /= 2) {
        for (std::size_t t = 0; t < half; ++t)
            lanes[t] = lse::combine<T>(lanes[t], lanes[t + half]);
    }
    return lanes[0];
}

// The state of chunk c of line `col` (the GPU's row / column kernels).
template <class T>
LseState chunk_state(const T* x, std::int64_t n, std::int64_t inner, const lse::Plan& plan,
                     std::int64_t col, std::int64_t c, std::vector<LseState>& lanes) {
    const std::int64_t begin = c * plan.chunk_len;
    const std::int64_t end = begin + plan.chunk_len < n ? begin + plan.chunk_len : n;
    const std::int64_t len = end > begin ? end - begin : 0;
    const std::int64_t o = col / inner, i = col % inner;
    const T* first = x + (o * n + begin) * inner + i;
    if (plan.layout == lse::Layout::columns) {
        LseState st = lse::lse_empty();
        lse::lse_fold(st, first, len, inner);
        return st;
    }
    lanes.assign(static_cast<std::size_t>(plan.lanes), lse::lse_empty());
    for (int t = 0; t < plan.lanes; ++t) {
        lse::lse_fold(lanes[static_cast<std::size_t>(t)], first + t,
                      lse::lane_count(len, t, plan.lanes), plan.lanes);
    }
    return tree<T>(lanes);
}

// A row held in registers (lse::rows_in_registers): the maximum, the lanes' sums of
// terms in order, the tree of sums; then the result or the scaled terms.
template <class T>
void row_in_registers(Normalize norm, const T* x, T* y, std::int64_t n, int lanes) {
    double m = lse::neg_inf();
    for (std::int64_t j = 0; j < n; ++j) {
        if (static_cast<double>(x[j]) > m) m = static_cast<double>(x[j]);
    }
    std::vector<LseState> sums(static_cast<std::size_t>(lanes), LseState{m, 0.0, 0.0});
    std::vector<double> terms(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) {  // lane j % lanes adds its elements in order
        terms[static_cast<std::size_t>(j)] = core::lse::lse_add_below<lse::TermExp<T>>(
            sums[static_cast<std::size_t>(j % lanes)], static_cast<double>(x[j]));
    }
    for (std::size_t half = sums.size() / 2; half > 0; half /= 2) {
        for (std::size_t t = 0; t < half; ++t) {
            sums[t].k = sums[t].k + sums[t + half].k;
            sums[t].s = sums[t].s + sums[t + half].s;
        }
    }
    if (norm == Normalize::none) {
        *y = lse::lse_result<T>(sums[0]);
        return;
    }
    const lse::NormState ns = lse::norm_state(sums[0]);
    for (std::int64_t j = 0; j < n; ++j) {
        if (norm == Normalize::log_softmax) {
            y[j] = lse::normalized<T, true>(x[j], ns);
        } else if (lse::finite_max(ns)) {
            y[j] = lse::softmax_of_term<T>(terms[static_cast<std::size_t>(j)], ns);
        } else {
            y[j] = lse::normalized<T, false>(x[j], ns);
        }
    }
}

template <class T>
void run(Normalize norm, const T* x, T* out, std::int64_t outer, std::int64_t n,
         std::int64_t inner) {
    const std::int64_t columns = outer * inner;
    if (columns == 0) return;
    const lse::Plan plan = lse::plan_for(outer, n, inner);
    if (lse::rows_in_registers(plan, n)) {
        for (std::int64_t row = 0; row < outer; ++row) {
            T* y = out + (norm == Normalize::none ? row : row * n);
            row_in_registers(norm, x + row * n, y, n, plan.lanes);
        }
        return;
    }
    std::vector<LseState> part(static_cast<std::size_t>(plan.chunks));
    std::vector<LseState> lanes;
    for (std::int64_t col = 0; col < columns; ++col) {
        for (std::int64_t c = 0; c < plan.chunks; ++c) {
            part[static_cast<std::size_t>(c)] = chunk_state(x, n, inner, plan, col, c, lanes);
        }
        // The finishing group: lane t combines chunks t, t + finish_lanes, ... in order.
        lanes.assign(static_cast<std::size_t>(plan.finish_lanes), lse::lse_empty());
        for (std::int64_t c = 0; c < plan.chunks; ++c) {
            LseState& lane = lanes[static_cast<std::size_t>(c % plan.finish_lanes)];
            lane = lse::combine<T>(lane, part[static_cast<std::size_t>(c)]);
        }
        const LseState st = tree<T>(lanes);
        if (norm == Normalize::none) {
            out[col] = lse::lse_result<T>(st);
            continue;
        }
        const lse::NormState ns = lse::norm_state(st);
        const std::int64_t o = col / inner, i = col % inner;
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t k = (o * n + j) * inner + i;
            out[k] = norm == Normalize::log_softmax ? lse::normalized<T, true>(x[k], ns)
                                                    : lse::normalized<T, false>(x[k], ns);
        }
    }
}

}  // namespace

void logsumexp_host(Normalize norm, Real dt, const void* x, void* out, std::int64_t outer,
                    std::int64_t n, std::int64_t inner) {
    if (dt == Real::f32) {
        run(norm, static_cast<const float*>(x), static_cast<float*>(out), outer, n, inner);
    } else {
        run(norm, static_cast<const double*>(x), static_cast<double*>(out), outer, n, inner);
    }
}

}  // namespace numfuse::cuda
