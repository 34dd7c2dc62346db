// The one place in numfuse that speaks OpenMP.
//
// Work is split into at most `thread_count()` contiguous ranges whose
// boundaries are multiples of `alignment` elements (so no two threads write
// the same cache line of a contiguous output). Small jobs never start
// threads: a range is only split when every thread gets at least
// `min_per_thread` elements.
#pragma once

#include <cstddef>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace numfuse::parallel {

// The thread count numfuse uses (>= 1). Initialised from NUMFUSE_NUM_THREADS,
// else OMP_NUM_THREADS / the number of processors as OpenMP reports it.
int thread_count() noexcept;
// Sets the count; values < 1 are clamped to 1. Returns the previous value.
int set_thread_count(int n) noexcept;
// Processors OpenMP sees (1 without OpenMP).
int processor_count() noexcept;
// True when the library was built with OpenMP.
bool has_openmp() noexcept;

// How many threads a job of n elements gets.
inline int threads_for(std::size_t n, std::size_t min_per_thread) noexcept {
    const int limit = thread_count();
    if (limit <= 1 || min_per_thread == 0 || n < 2 * min_per_thread) return 1;
    const std::size_t fit = n / min_per_thread;
    return fit < static_cast<std::size_t>(limit) ? static_cast<int>(fit) : limit;
}

// Calls body(begin, end) -> unsigned over a partition of [0, n) and returns
// the bitwise OR of the results. body must be safe to call concurrently on
// disjoint ranges and must not throw.
template <class Body>
unsigned for_ranges_or(std::size_t n, std::size_t min_per_thread, std::size_t alignment,
                       Body&& body) {
    const int threads = threads_for(n, min_per_thread);
    if (threads <= 1) return n ? body(std::size_t{0}, n) : 0u;
    unsigned result = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(| : result)
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        const auto team = static_cast<std::size_t>(omp_get_num_threads());
        // Equal shares rounded to the alignment; the last thread takes the rest.
        std::size_t share = (n + team - 1) / team;
        share = (share + alignment - 1) / alignment * alignment;
        const std::size_t begin = t * share < n ? t * share : n;
        const std::size_t end = (t + 1 == team) ? n : (begin + share < n ? begin + share : n);
        if (begin < end) result |= body(begin, end);
    }
#else
    result = body(std::size_t{0}, n);
#endif
    return result;
}

}  // namespace numfuse::parallel
