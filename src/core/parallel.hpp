// Threads for numfuse's loops, and the one place in numfuse that speaks OpenMP.
//
// A job of n elements is cut into chunks whose boundaries are multiples of
// `alignment` elements (so no two threads write the same cache line of a
// contiguous output), a few per thread. The calling thread and the workers
// of its pool (parallel.cpp) claim chunks from one shared ticket until none
// is left (the caller from the front of the range, workers from the back),
// so a thread that the OS has descheduled (a busy machine: more runnable
// processes than cores) delays the call by at most the chunk it holds: the
// threads that run take the work of the one that does not, and the caller
// never waits for a worker that has not started. Idle workers spin briefly,
// then sleep, so they do not burn a core that another process needs. Small
// jobs never wake a worker: a range is only split when every thread gets at
// least `min_per_thread` elements, and a call that finds its workers asleep
// wakes them only when the job is worth it (wake_worth below); workers still
// spinning from the previous call join any job.
//
// OpenMP is used for what the rest of the ecosystem controls threads with:
// omp_get_max_threads() (OMP_NUM_THREADS, threadpoolctl) sets the automatic
// count below, and a call inside another library's OpenMP region runs alone.
#pragma once

#include <chrono>
#include <cstddef>
#include <type_traits>

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
//   module.cpp's atfork handler sets to 1: no thread of the parent's pools
//   survives fork; a child that raises the limit again gets a new pool).
// * 1 inside another library's active OpenMP parallel region, and inside a
//   chunk of numfuse's own (inside_job()).
// * Never more than max_thread_count().
//
// The count for the calling thread now (>= 1).
int thread_count() noexcept;
// The most threads a count may ask for: 64, or the processor count where
// that is larger (set_num_threads refuses more, NUMFUSE_NUM_THREADS ignores
// more, as numexpr refuses more than its MAX_THREADS).
int max_thread_count() noexcept;
// Makes the count explicit: n threads from every thread (n is clamped to
// [1, max_thread_count()]). Returns the calling thread's previous count.
int set_thread_count(int n) noexcept;
// Back to the automatic rule. Returns the calling thread's previous count.
int use_automatic_thread_count() noexcept;
// The explicit count, or 0 when the automatic rule is in force.
int explicit_thread_count() noexcept;
// The count the process starts with on its main thread: NUMFUSE_NUM_THREADS where it was
// taken, else omp_get_max_threads() at start-up (OMP_NUM_THREADS, else the processor
// count), at most max_thread_count(); what numexpr calls detect_number_of_threads().
int start_thread_count() noexcept;
// NUMFUSE_NUM_THREADS as found at start-up: nullptr when unset; else its
// text, and whether it was taken as the explicit count (an integer from 1 to
// max_thread_count(); anything else is ignored, and the Python layer warns).
const char* thread_count_environment(bool* accepted) noexcept;
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

// How many threads a job of n elements gets.
inline int threads_for(std::size_t n, std::size_t min_per_thread) noexcept {
    // The size test first: most calls are small, and thread_count() asks OpenMP.
    if (min_per_thread == 0 || n < 2 * min_per_thread) return 1;
    const int limit = thread_count();
    if (limit <= 1) return 1;
    const std::size_t fit = n / min_per_thread;
    return fit < static_cast<std::size_t>(limit) ? static_cast<int>(fit) : limit;
}

// Chunks of [0, n) for a team of `threads`: a whole number of chunks per
// thread, as many as n allows with every chunk at least min_chunk(min_per_thread)
// elements, at most chunks_per_thread; rounded up to the alignment. Chunks
// are a quarter of the threading threshold's share, not the whole of it: a
// claim (one compare-and-swap and one increment on lines that move between
// cores) costs a few hundred nanoseconds, a chunk of min_per_thread / 4
// elements a few microseconds, and a worker that the OS wakes or schedules
// late (a busy machine) then finds most of a modest job still unclaimed and
// takes only what is left, instead of one static half that the caller, done
// with its own, must wait for.
inline constexpr std::size_t chunks_per_thread = 8;
inline constexpr std::size_t min_chunk(std::size_t min_per_thread) noexcept {
    return min_per_thread / 4 > 0 ? min_per_thread / 4 : 1;
}
inline std::size_t chunk_size(std::size_t n, int threads, std::size_t min_per_thread,
                              std::size_t alignment) noexcept {
    const std::size_t team = static_cast<std::size_t>(threads);
    std::size_t per_thread =
        min_per_thread ? n / (team * min_chunk(min_per_thread)) : chunks_per_thread;
    if (per_thread < 1) per_thread = 1;
    if (per_thread > chunks_per_thread) per_thread = chunks_per_thread;
    const std::size_t chunks = team * per_thread;
    std::size_t chunk = (n + chunks - 1) / chunks;
    if (alignment == 0) alignment = 1;
    chunk = (chunk + alignment - 1) / alignment * alignment;
    return chunk == 0 ? 1 : chunk;
}

// The least one-thread work (what is left of a job after the caller's first
// chunk, at that chunk's pace) for which a call wakes workers that sleep.
// A wake costs the caller a futex syscall (in a virtual machine an
// inter-processor interrupt), and the woken worker starts late and cold, on
// a core that has been idle, while the arrays' lines move to it: for a job
// of a few tens of microseconds that costs more than a second thread saves,
// and a worker that joins that late still wins back its wake on a job of a
// few times that (the figures: docs/benchmarks.md, "Sleeping workers").
// Below this the caller runs the job alone and the sleepers sleep on. Calls
// back to back (a loop of calls: the pool's previous job ended a few
// microseconds ago) and coarse jobs (fewer than three chunks per thread)
// wake them at once (parallel.cpp).
inline constexpr std::chrono::microseconds wake_worth{60};

// The threshold the pool compares with (wake_worth unless a test set another:
// tests that must not depend on the machine's speed, e.g. under an emulator,
// where any job's first chunk is slow, set a large one).
std::chrono::nanoseconds wake_threshold() noexcept;
void set_wake_threshold(std::chrono::nanoseconds threshold) noexcept;

// One chunk of a job: body(begin, end) through a plain function pointer, so
// the pool (parallel.cpp) is not a template.
using ChunkFunction = unsigned (*)(void* body, std::size_t begin, std::size_t end);

// Runs fn(body, begin, end) over [0, n) in chunks of `chunk` elements on the
// calling thread and up to threads - 1 workers of the calling thread's pool;
// returns the bitwise OR of the results. Returns once every chunk is done.
unsigned run_chunks(std::size_t n, std::size_t chunk, int threads, ChunkFunction fn,
                    void* body) noexcept;

// True on a pool worker, and on a caller while it runs its own chunks: a
// loop started there runs serially (thread_count() is 1).
bool inside_job() noexcept;

// The calling thread's pool as tests observe it: its workers, how many of
// them sleep now, and how many times its calls have woken sleeping workers
// (all 0 before its first parallel call).
struct PoolCounts {
    int workers = 0;
    int sleeping = 0;
    unsigned long wakes = 0;
};
PoolCounts pool_counts() noexcept;

// Calls body(begin, end) -> unsigned over a partition of [0, n) and returns
// the bitwise OR of the results. body must be safe to call concurrently on
// disjoint ranges, must not throw, and its results must not depend on how
// [0, n) is cut (the cut depends on the team and on which thread runs when).
template <class Body>
unsigned for_ranges_or(std::size_t n, std::size_t min_per_thread, std::size_t alignment,
                       Body&& body) {
    const int threads = threads_for(n, min_per_thread);
    if (threads <= 1) return n ? body(std::size_t{0}, n) : 0u;  // a team of 1 is no peak
    note_team_size(threads);
    using B = std::remove_reference_t<Body>;
    const ChunkFunction call = [](void* b, std::size_t begin, std::size_t end) -> unsigned {
        return (*static_cast<B*>(b))(begin, end);
    };
    return run_chunks(n, chunk_size(n, threads, min_per_thread, alignment), threads, call,
                      const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace numfuse::parallel
