// The GPU logsumexp / softmax / log_softmax run on the CPU in exactly the GPU's
// order of operations (same chunking plan, same 256-lane strided accumulation, same
// shared-memory tree, same chunk order): the tests compare it with SciPy here and,
// on a GPU, with the device result bit for bit.
#include "reduce_host.hpp"

#include <vector>

#include "lse_core.hpp"

namespace numfuse::cuda {
namespace {

using lse::LseState;

template <class T>
std::vector<LseState> partials(const T* x, std::int64_t outer, std::int64_t n, std::int64_t inner,
                               const lse::Plan& plan) {
    const std::int64_t columns = outer * inner;
    std::vector<LseState> out(static_cast<std::size_t>(columns * plan.chunks));
    if (plan.rows) {
        LseState lanes[lse::block_threads];
        for (std::int64_t row = 0; row < outer; ++row) {
            const T* xr = x + row * n;
            for (std::int64_t c = 0; c < plan.chunks; ++c) {
                const std::int64_t begin = c * plan.chunk_len;
                const std::int64_t end = begin + plan.chunk_len < n ? begin + plan.chunk_len : n;
                for (int t = 0; t < lse::block_threads; ++t) {
                    LseState st = lse::lse_empty();
                    for (std::int64_t j = begin + t; j < end; j += lse::block_threads)
                        lse::lse_add(st, xr[j]);
                    lanes[t] = st;
                }
                for (int half = lse::block_threads / 2; half > 0; half /= 2) {
                    for (int t = 0; t < half; ++t)
                        lanes[t] = lse::lse_combine(lanes[t], lanes[t + half]);
                }
                out[static_cast<std::size_t>(row * plan.chunks + c)] = lanes[0];
            }
        }
    } else {
        for (std::int64_t col = 0; col < columns; ++col) {
            const std::int64_t o = col / inner, i = col % inner;
            const T* xc = x + o * n * inner + i;
            for (std::int64_t c = 0; c < plan.chunks; ++c) {
                const std::int64_t begin = c * plan.chunk_len;
                const std::int64_t end = begin + plan.chunk_len < n ? begin + plan.chunk_len : n;
                LseState st = lse::lse_empty();
                for (std::int64_t j = begin; j < end; ++j) lse::lse_add(st, xc[j * inner]);
                out[static_cast<std::size_t>(col * plan.chunks + c)] = st;
            }
        }
    }
    return out;
}

template <class T>
void run(Normalize norm, const T* x, T* out, std::int64_t outer, std::int64_t n,
         std::int64_t inner) {
    const std::int64_t columns = outer * inner;
    if (columns == 0) return;
    const lse::Plan plan = lse::plan_for(outer, n, inner);
    const std::vector<LseState> part = partials(x, outer, n, inner, plan);
    for (std::int64_t col = 0; col < columns; ++col) {
        LseState st = part[static_cast<std::size_t>(col * plan.chunks)];
        for (std::int64_t c = 1; c < plan.chunks; ++c) {
            st = lse::lse_combine(st, part[static_cast<std::size_t>(col * plan.chunks + c)]);
        }
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
