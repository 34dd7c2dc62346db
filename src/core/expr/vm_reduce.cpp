// The VM's reduction stages (sum, prod, min, max, mean, logsumexp).
//
// Deterministic for any thread count: the iteration space is cut into work
// units whose boundaries depend only on the shape, each unit is reduced in a
// fixed order, and unit results are combined in unit order.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "expr/vm_internal.hpp"
#include "interrupt.hpp"
#include "parallel.hpp"
#include "reduce/stream.hpp"

namespace numfuse::expr::vm {

#if defined(__SSE2__)
// SSE2 registers of float64 or float32 lanes behind one interface, so that a lane loop is
// written once for both element types.
template <class T>
struct sse_lanes;
template <>
struct sse_lanes<double> {
    using reg = __m128d;
    static constexpr int width = 2;
    static reg set1(double a) { return _mm_set1_pd(a); }
    static reg zero() { return _mm_setzero_pd(); }
    static reg load(const double* p) { return _mm_loadu_pd(p); }
    static void store(double* p, reg a) { _mm_storeu_pd(p, a); }
    static reg max(reg a, reg b) { return _mm_max_pd(a, b); }
    static reg min(reg a, reg b) { return _mm_min_pd(a, b); }
    static reg add(reg a, reg b) { return _mm_add_pd(a, b); }
    static reg sub(reg a, reg b) { return _mm_sub_pd(a, b); }
};
template <>
struct sse_lanes<float> {
    using reg = __m128;
    static constexpr int width = 4;
    static reg set1(float a) { return _mm_set1_ps(a); }
    static reg zero() { return _mm_setzero_ps(); }
    static reg load(const float* p) { return _mm_loadu_ps(p); }
    static void store(float* p, reg a) { _mm_storeu_ps(p, a); }
    static reg max(reg a, reg b) { return _mm_max_ps(a, b); }
    static reg min(reg a, reg b) { return _mm_min_ps(a, b); }
    static reg add(reg a, reg b) { return _mm_add_ps(a, b); }
    static reg sub(reg a, reg b) { return _mm_sub_ps(a, b); }
};
#endif

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
    // Floats: lanes of plain compares (no branch on NaN; SSE2's max/min where there is
    // SSE2, whose x > lane ? x : lane is the compare below), and the ordered loop only
    // where lanes could give other bits than it. Without NaN the ordered result is the
    // extreme value, first of equals; equal floats other than +-0 have the same bits,
    // so the lanes' extreme is that result unless it is zero (whose sign the order
    // decides) or the run holds a NaN (the first one is the result) or an infinity
    // (caught by the same check: inf - inf is NaN; rare enough to take the ordered
    // loop). The check adds x - x, never multiplies: no subnormal product (the assist
    // of docs/architecture.md's trap).
    static void add_run(Acc& acc, const T* v, std::size_t n) {
        if constexpr (std::is_floating_point_v<T>) {
            if (n >= 16 && !std::isnan(acc)) {
                constexpr int lanes = 16 / sizeof(T) * 4;  // four SSE2 registers
                T lane[lanes], check[lanes];
                const std::size_t k = lanes_pass(v, n, acc, lane, check);
                for (std::size_t t = k; t < n; ++t) {
                    lane[0] = better(v[t], lane[0]) ? v[t] : lane[0];
                    check[0] += v[t] - v[t];
                }
                T extreme = lane[0];
                T checks = check[0];
                for (int j = 1; j < lanes; ++j) {
                    extreme = better(lane[j], extreme) ? lane[j] : extreme;
                    checks += check[j];
                }
                if (checks == T(0) && extreme != T(0)) {
                    acc = extreme;
                    return;
                }
            }
        }
        for (std::size_t k = 0; k < n; ++k) acc = pick(acc, v[k]);
    }
    static void add_columns(Acc* acc, const T* v, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) acc[k] = pick(acc[k], v[k]);
    }
    static void merge(Acc& acc, const Acc& other) { acc = pick(acc, other); }
    static T finish(const Acc& acc, std::size_t) { return acc; }

private:
    static bool better(T candidate, T current) {
        return Max ? candidate > current : candidate < current;
    }

    // The lanes over v[0, k) for the largest k that is a multiple of the lane count:
    // lane[j] the extreme of acc and every lanes-th element from j, check[j] the sum of
    // their x - x. Returns k.
    template <int Lanes>
    static std::size_t lanes_pass(const T* v, std::size_t n, T acc, T (&lane)[Lanes],
                                  T (&check)[Lanes]) {
        std::size_t k = 0;
#if defined(__SSE2__)
        if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
            // Four registers of S::width lanes: Lanes == 4 * S::width.
            using S = sse_lanes<T>;
            static_assert(Lanes == 4 * S::width, "lane count");
            typename S::reg l[4], c[4];
            for (int j = 0; j < 4; ++j) {
                l[j] = S::set1(acc);
                c[j] = S::zero();
            }
            for (; k + Lanes <= n; k += Lanes) {
                for (int j = 0; j < 4; ++j) {
                    const typename S::reg x = S::load(v + k + S::width * j);
                    l[j] = Max ? S::max(x, l[j]) : S::min(x, l[j]);
                    c[j] = S::add(c[j], S::sub(x, x));
                }
            }
            for (int j = 0; j < 4; ++j) {
                S::store(lane + S::width * j, l[j]);
                S::store(check + S::width * j, c[j]);
            }
            return k;
        }
#endif
        for (int j = 0; j < Lanes; ++j) {
            lane[j] = acc;
            check[j] = T(0);
        }
        for (; k + Lanes <= n; k += Lanes) {
            for (int j = 0; j < Lanes; ++j) {
                const T x = v[k + j];
                lane[j] = better(x, lane[j]) ? x : lane[j];
                check[j] += x - x;
            }
        }
        return k;
    }
};

// log(sum(exp(x))) with numfuse.logsumexp's kernels, compensation and merges
// (reduce/stream.hpp): runs and their pieces as LseStream pieces, columns in
// LseColumns' per-output arrays.
template <class T>
struct LogSumExp {
    using Acc = core::LseStream<T>;
    static Acc init() { return Acc(); }
    static void add_run(Acc& acc, const T* v, std::size_t n) { acc.add_run(v, n); }
    static void merge(Acc& acc, const Acc& other) { acc.add(other); }
    static T finish(const Acc& acc, std::size_t) { return acc.result(); }

    struct Columns : core::LseColumns<T> {
        explicit Columns(std::size_t m) : core::LseColumns<T>(m) {}
        T result(std::size_t k, std::size_t) const { return core::LseColumns<T>::result(k); }
    };
};

// The per-output states of a columns layout: one Acc per output folded by
// R::add_columns, unless R brings its own arrays (R::Columns).
template <class R, class T>
class AccColumns {
public:
    explicit AccColumns(std::size_t m) : acc_(new typename R::Acc[m]) {
        for (std::size_t k = 0; k < m; ++k) acc_[k] = R::init();
    }
    void add_row(std::size_t first, const T* row, std::size_t count) {
        R::add_columns(acc_.get() + first, row, count);
    }
    bool needs_scan(std::size_t) const { return false; }
    auto result(std::size_t k, std::size_t l) const { return R::finish(acc_[k], l); }

private:
    // (not std::vector: vector<bool> has no data())
    std::unique_ptr<typename R::Acc[]> acc_;
};

template <class R, class T, class = void>
struct ColumnsOf {
    using type = AccColumns<R, T>;
};
template <class R, class T>
struct ColumnsOf<R, T, std::void_t<typename R::Columns>> {
    using type = typename R::Columns;
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

// logsumexp of a group whose result its terms' rounded arguments may reach
// (LseStream::needs_exact), summed again from its values [first, first + l) of the space,
// fetched block by block (reduce/stream.hpp: LseExact, x - m as a double word).
template <class T, class Fetch>
T exact_logsumexp(const Fetch& fetch, BlockRunner& runner, std::size_t first, std::size_t l,
                  std::size_t block, T m, unsigned& flags) {
    core::LseExact<T> exact(m);
    for (std::size_t at = 0; at < l; at += block) {
        const std::size_t count = std::min(block, l - at);
        exact.add_run(reinterpret_cast<const T*>(fetch(runner, first + at, count, flags)), count);
    }
    return exact.result();
}

template <class R, class T, class Out>
void run_reduction_typed(const Stage& stage, const ReduceLayout& layout, const Space& space,
                         Out* result, const OpKernelTable& kernels, char* store) {
    using Acc = typename R::Acc;
    // The values of the elements [at, at + count) of the space: computed into
    // `store` (the caller's contiguous output, see run_reduction_space) or read.
    const std::size_t store_item = type_size(stage.program.registers[stage.program.result].type);
    const auto fetch = [store, store_item](BlockRunner& runner, std::size_t at, std::size_t count,
                                           unsigned& flags) {
        return store ? runner.run(at, count, store + at * store_item, flags)
                     : runner.read(at, count, flags);
    };
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
    const BlockRunner prototype(stage.program, space, kernels, reduce_block_bytes);
    const std::size_t block = prototype.block();
    interrupt::Scope* const scope = interrupt::current();
    unsigned flags = 0;
    if (layout.columns) {
        // Each thread owns a range of outputs and walks all reduced rows for
        // it, so every output sees its inputs in the same order.
        typename ColumnsOf<R, T>::type columns(m);
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
                        const char* v = fetch(runner, row * m + col, count, local);
                        columns.add_row(col, reinterpret_cast<const T*>(v), count);
                    }
                }
                return local;
            });
        interrupt::throw_if_stopped(scope);
        for (std::size_t k = 0; k < m; ++k) {
            if (columns.needs_scan(k)) {
                // Rare (an output with +inf): its elements again, one by one.
                if constexpr (std::is_same_v<R, LogSumExp<T>>) {
                    BlockRunner runner = prototype;
                    runner.attach();
                    core::LseStream<T> scan;
                    for (std::size_t row = 0; row < l; ++row) {
                        const char* v = fetch(runner, row * m + k, 1, flags);
                        scan.note_specials(reinterpret_cast<const T*>(v), 1, 1);
                    }
                    result[k] = static_cast<Out>(scan.result());
                    continue;
                }
            }
            if constexpr (std::is_same_v<R, LogSumExp<T>>) {
                T top;
                if (columns.needs_exact(k, l, top)) {
                    // Rare: its elements again, one by one (see exact_logsumexp).
                    BlockRunner runner = prototype;
                    runner.attach();
                    std::vector<T> values(l);
                    for (std::size_t row = 0; row < l; ++row) {
                        const char* v = fetch(runner, row * m + k, 1, flags);
                        values[row] = *reinterpret_cast<const T*>(v);
                    }
                    core::LseExact<T> exact(top);
                    exact.add_run(values.data(), l);
                    result[k] = static_cast<Out>(exact.result());
                    continue;
                }
            }
            result[k] = static_cast<Out>(columns.result(k, l));
        }
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
                    const char* v = fetch(runner, row * l + at, count, local);
                    R::add_run(partial[unit], reinterpret_cast<const T*>(v), count);
                }
            }
            return local;
        });
        for (std::size_t row = 0; row < m; ++row) {
            Acc acc = partial[row * chunks];
            for (std::size_t c = 1; c < chunks; ++c) R::merge(acc, partial[row * chunks + c]);
            if constexpr (std::is_same_v<R, LogSumExp<T>>) {
                T top;
                if (acc.needs_exact(l, top)) {
                    BlockRunner runner = prototype;
                    runner.attach();
                    result[row] = static_cast<Out>(
                        exact_logsumexp<T>(fetch, runner, row * l, l, block, top, flags));
                    continue;
                }
            }
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
                    // logsumexp: rows to sum again once the unit's blocks are done (the
                    // runner's buffer then holds nothing in use; see exact_logsumexp).
                    std::vector<std::pair<std::size_t, T>> again;
                    for (std::size_t at = first; at < last; at += block) {
                        if (interrupt::should_stop(scope)) return local;
                        const std::size_t count = std::min(block, last - at);
                        const T* v = reinterpret_cast<const T*>(fetch(runner, at, count, local));
                        std::size_t k = 0;
                        while (k < count) {
                            const std::size_t take = std::min(count - k, l - in_row);
                            R::add_run(acc, v + k, take);
                            k += take;
                            in_row += take;
                            if (in_row == l) {
                                if constexpr (std::is_same_v<R, LogSumExp<T>>) {
                                    T top;
                                    if (acc.needs_exact(l, top)) again.emplace_back(row, top);
                                }
                                result[row++] = static_cast<Out>(R::finish(acc, l));
                                acc = R::init();
                                in_row = 0;
                            }
                        }
                    }
                    if constexpr (std::is_same_v<R, LogSumExp<T>>) {
                        for (const auto& [r, top] : again) {
                            result[r] = static_cast<Out>(
                                exact_logsumexp<T>(fetch, runner, r * l, l, block, top, local));
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
void reduce_as(const Stage& stage, const ReduceLayout& layout, const Space& space, char* result,
               const OpKernelTable& kernels, char* store) {
    if constexpr (K == ReduceKind::sum) {
        run_reduction_typed<SumLike<T, false>, T>(stage, layout, space,
                                                  reinterpret_cast<T*>(result), kernels, store);
    } else if constexpr (K == ReduceKind::mean) {
        run_reduction_typed<SumLike<T, true>, T>(stage, layout, space, reinterpret_cast<T*>(result),
                                                 kernels, store);
    } else if constexpr (K == ReduceKind::prod) {
        run_reduction_typed<ProdLike<T>, T>(stage, layout, space, reinterpret_cast<T*>(result),
                                            kernels, store);
    } else if constexpr (K == ReduceKind::min || K == ReduceKind::max) {
        run_reduction_typed<Extremum<T, K == ReduceKind::max>, T>(
            stage, layout, space, reinterpret_cast<T*>(result), kernels, store);
    } else {
        run_reduction_typed<LogSumExp<T>, T>(stage, layout, space, reinterpret_cast<T*>(result),
                                             kernels, store);
    }
}

template <ReduceKind K>
void reduce_kind(Type t, const Stage& stage, const ReduceLayout& layout, const Space& space,
                 char* result, const OpKernelTable& kernels, char* store) {
    constexpr bool extremum = K == ReduceKind::min || K == ReduceKind::max;
    switch (t) {
        case Type::b:
            if constexpr (extremum)
                return reduce_as<K, bool>(stage, layout, space, result, kernels, store);
            break;
        case Type::i:
            if constexpr (extremum)
                return reduce_as<K, std::int32_t>(stage, layout, space, result, kernels, store);
            break;
        case Type::l:
            if constexpr (K != ReduceKind::mean && K != ReduceKind::logsumexp)
                return reduce_as<K, std::int64_t>(stage, layout, space, result, kernels, store);
            break;
        case Type::f: return reduce_as<K, float>(stage, layout, space, result, kernels, store);
        case Type::d: return reduce_as<K, double>(stage, layout, space, result, kernels, store);
        case Type::c:
            if constexpr (!extremum && K != ReduceKind::logsumexp)
                return reduce_as<K, std::complex<float>>(stage, layout, space, result, kernels,
                                                         store);
            break;
        case Type::z:
            if constexpr (!extremum && K != ReduceKind::logsumexp)
                return reduce_as<K, std::complex<double>>(stage, layout, space, result, kernels,
                                                          store);
            break;
        case Type::s:
        case Type::w: break;  // the compiler never reduces bytes
    }
    throw ExprError(ErrorKind::type, std::string("reduction ") + reduce_name(K) +
                                         " is not supported for " + type_name(t));
}

bool run_reduction(const Stage& stage, const StageGeometry& g, const std::vector<ArrayView>& inputs,
                   const std::vector<ArrayView>& stage_outputs, char* result,
                   const OpKernelTable& kernels, const ArrayView* store) {
    const ReduceLayout layout = reduce_layout(g);
    std::vector<Operand> operands =
        stage_operands(stage, inputs, stage_outputs, g.iteration.size());
    if (store) {
        // The output as one more operand of the space (the program never reads it):
        // it can take the values only where it is contiguous in the layout's order.
        Operand out;
        out.base = store->data;
        out.item = view_item(*store);
        out.strides = aligned_strides(*store, g.iteration.size());
        std::vector<Operand> with_out = operands;
        with_out.push_back(std::move(out));
        const Space space = make_space(g.iteration, layout.perm, std::move(with_out));
        if (space.operands.back().mode == Operand::contiguous) {
            run_reduction_space(stage, layout, space, result, kernels, store->data);
            return true;
        }
    }
    const Space space = make_space(g.iteration, layout.perm, std::move(operands));
    run_reduction_space(stage, layout, space, result, kernels);
    return false;
}

void run_reduction_space(const Stage& stage, const ReduceLayout& layout, const Space& space,
                         char* result, const OpKernelTable& kernels, char* store) {
    const auto run = [&](auto kind) {
        reduce_kind<decltype(kind)::value>(stage.out_type, stage, layout, space, result, kernels,
                                           store);
    };
    using K = ReduceKind;
    switch (stage.reduce) {
        case K::sum: return run(std::integral_constant<K, K::sum>{});
        case K::prod: return run(std::integral_constant<K, K::prod>{});
        case K::min: return run(std::integral_constant<K, K::min>{});
        case K::max: return run(std::integral_constant<K, K::max>{});
        case K::mean: return run(std::integral_constant<K, K::mean>{});
        case K::logsumexp: return run(std::integral_constant<K, K::logsumexp>{});
        case K::none: break;
    }
}

}  // namespace numfuse::expr::vm
