// The one place in numfuse that speaks OpenMP.
//
// Work is split into at most `thread_count()` contiguous ranges whose
// boundaries are multiples of `alignment` elements (so no two threads write
// the same cache line of a contiguous output). Small jobs never start
// threads: a range is only split when every thread gets at least
// `min_per_thread` elements.
#pragma once

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

#include <cstddef>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace numfuse::parallel {

// How many threads a call gets (the oversubscription rule):
//
// * Explicit count (set_thread_count(n) or NUMFUSE_NUM_THREADS=n): n threads,
//   from any calling thread.
// * Automatic (the default): the process's main thread gets
//   omp_get_max_threads() (OMP_NUM_THREADS, else the processor count); any
//   other thread (dask / concurrent.futures / threading workers) gets 1, so a
//   pool of k workers runs k threads, not k * processors.
// * Automatic: never more than omp_get_max_threads() of the calling thread,
//   so omp_set_num_threads / threadpoolctl's threadpool_limits(k,
//   user_api="openmp") in that thread limit numfuse.
// * Explicit: capped by omp_get_max_threads() of the calling thread when that
//   limit is lower than it was when the count was set (in the thread that set
//   it; for other threads and NUMFUSE_NUM_THREADS: lower than at start-up).
//   So a threadpoolctl limit applied later wins, while a limit already in
//   force (torch.set_num_threads on a libgomp torch shares) does not undo the
//   user's later explicit count.
// * In a child made by fork(): never more than omp_get_max_threads() (which
//   module.cpp's atfork handler sets to 1: libgomp's pool does not survive
//   fork, and asking for a team there hangs).
// * 1 inside another library's active OpenMP parallel region.
//
// The count for the calling thread now (>= 1).
int thread_count() noexcept;
// Makes the count explicit: n threads from every thread (n < 1 is clamped
// to 1). Returns the calling thread's previous count.
int set_thread_count(int n) noexcept;
// Back to the automatic rule. Returns the calling thread's previous count.
int use_automatic_thread_count() noexcept;
// The explicit count, or 0 when the automatic rule is in force.
int explicit_thread_count() noexcept;
// Records the calling thread as the main thread where the platform cannot
// tell (on Linux the main thread is the one whose tid equals the pid).
void mark_main_thread() noexcept;
// True on the process's main thread.
bool on_main_thread() noexcept;
// The largest team any for_ranges_or call made by this thread ran on since
// the previous take_peak_team_size() (1: all serial, or none), and resets it;
// what tests use to observe the rule above. note_team_size records a team.
int take_peak_team_size() noexcept;
void note_team_size(int team) noexcept;
// Processors OpenMP sees (1 without OpenMP).
int processor_count() noexcept;
// True when the library was built with OpenMP.
bool has_openmp() noexcept;

// ThreadSanitizer annotations (no-ops in other builds); see for_ranges_or.
inline char tsan_fork_token = 0, tsan_join_token = 0;
inline void tsan_acquire([[maybe_unused]] void* token) noexcept {
#if defined(__SANITIZE_THREAD__)
    __tsan_acquire(token);
#endif
}
inline void tsan_release([[maybe_unused]] void* token) noexcept {
#if defined(__SANITIZE_THREAD__)
    __tsan_release(token);
#endif
}

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
unsigned for_ranges_or(std::size_t n, std::size_t min_per_thread,
                       [[maybe_unused]] std::size_t alignment, Body&& body) {
    const int threads = threads_for(n, min_per_thread);
    if (threads <= 1) {
        note_team_size(1);
        return n ? body(std::size_t{0}, n) : 0u;
    }
    unsigned result = 0;
#ifdef _OPENMP
    // ThreadSanitizer builds: libgomp is not instrumented, so its fork and join
    // barriers are announced to TSan by hand (no-ops otherwise).
    tsan_release(&tsan_fork_token);
    // One result slot per thread, combined after the join (no OpenMP reduction, whose
    // combining step TSan could not order).
    std::vector<unsigned> partial(static_cast<std::size_t>(threads), 0u);
#pragma omp parallel num_threads(threads)
    {
        tsan_acquire(&tsan_fork_token);
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        const auto team = static_cast<std::size_t>(omp_get_num_threads());
        // Thread 0 is the caller: its thread_local records the real team.
        if (t == 0) note_team_size(static_cast<int>(team));
        // Equal shares rounded to the alignment; the last thread takes the rest.
        std::size_t share = (n + team - 1) / team;
        share = (share + alignment - 1) / alignment * alignment;
        const std::size_t begin = t * share < n ? t * share : n;
        const std::size_t end = (t + 1 == team) ? n : (begin + share < n ? begin + share : n);
        if (begin < end) partial[t] = body(begin, end);  // t < team <= threads
        tsan_release(&tsan_join_token);
    }
    tsan_acquire(&tsan_join_token);
    for (const unsigned r : partial) result |= r;
#else
    note_team_size(1);
    result = body(std::size_t{0}, n);
#endif
    return result;
}

}  // namespace numfuse::parallel
