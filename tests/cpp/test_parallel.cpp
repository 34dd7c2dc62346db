// The pool (parallel.hpp / parallel.cpp): how a job is cut, that every
// element is run exactly once for any team, and what happens when a worker
// that holds a chunk stops running (a busy machine's descheduled thread,
// played here by a chunk that sleeps): the caller takes every other chunk,
// and while it waits for the held one it sleeps instead of spinning, so its
// core is free for the worker the OS put aside.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "parallel.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <time.h>
#endif

namespace {

using numfuse::parallel::chunk_size;
using numfuse::parallel::chunks_per_thread;
using numfuse::parallel::for_ranges_or;
using numfuse::parallel::min_chunk;

class ThreadGuard {
public:
    explicit ThreadGuard(int n) : previous_(numfuse::parallel::set_thread_count(n)) {}
    ~ThreadGuard() { numfuse::parallel::set_thread_count(previous_); }
    ThreadGuard(const ThreadGuard&) = delete;
    ThreadGuard& operator=(const ThreadGuard&) = delete;

private:
    int previous_;
};

std::size_t chunk_count(std::size_t n, std::size_t chunk) { return (n + chunk - 1) / chunk; }

// A modest job (a team just above the threading threshold) is cut into
// several chunks per thread, so a late or descheduled worker holds little;
// chunks never go below min_chunk, never above chunks_per_thread per thread,
// and keep the alignment.
TEST(Parallel, ChunksPerThreadAtModestSizes) {
    for (const std::size_t min_per_thread : {std::size_t{8192}, std::size_t{32768}}) {
        for (const int threads : {2, 3, 7}) {
            const auto team = static_cast<std::size_t>(threads);
            for (const std::size_t n : {team * min_per_thread, 3 * team * min_per_thread + 5,
                                        std::size_t{100000}, std::size_t{1000000}}) {
                if (n < team * min_per_thread) continue;
                const std::size_t chunk = chunk_size(n, threads, min_per_thread, 8);
                const std::size_t chunks = chunk_count(n, chunk);
                EXPECT_EQ(chunk % 8, 0u) << n;
                EXPECT_GE(chunk, min_chunk(min_per_thread)) << n;
                EXPECT_GE(chunks, 3 * team) << "n=" << n << " threads=" << threads;
                EXPECT_LE(chunks, chunks_per_thread * team) << n;
            }
        }
    }
    // One item per chunk when the items are coarse (logsumexp's reduction items).
    EXPECT_EQ(chunk_size(2, 2, 1, 1), 1u);
}

// Every element exactly once, for teams larger and smaller than the machine.
TEST(Parallel, EveryElementOnceForAnyTeam) {
    for (const int threads : {1, 2, 3, 7}) {
        ThreadGuard guard(threads);
        for (const std::size_t n :
             {std::size_t{1000}, std::size_t{65536}, std::size_t{100003}, std::size_t{1000000}}) {
            std::unique_ptr<std::atomic<unsigned char>[]> seen(new std::atomic<unsigned char>[n]);
            for (std::size_t i = 0; i < n; ++i) seen[i].store(0);
            const unsigned flags =
                for_ranges_or(n, 8192, 8, [&](std::size_t begin, std::size_t end) {
                    for (std::size_t i = begin; i < end; ++i) seen[i].fetch_add(1);
                    return begin == 0 ? 1u : 2u;
                });
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < n; ++i) wrong += seen[i].load() != 1;
            EXPECT_EQ(wrong, 0u) << "n=" << n << " threads=" << threads;
            EXPECT_EQ(flags & 1u, 1u);
        }
    }
}

#if defined(__linux__)
double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Times the calling thread gave up its core to wait (a sleep), not counting
// preemptions and yields.
long voluntary_switches() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return usage.ru_nvcsw;
}

// A worker claims a chunk and then does not run for a long while. The caller
// must run every other chunk itself and, waiting for the held one, sleep: it
// gives up its core voluntarily, and its CPU time stays far below the
// worker's absence (a caller that spun or yielded in a loop would burn it
// all on a quiet machine, and keep a preempted worker queued behind another
// process instead of letting it onto the caller's core).
TEST(Parallel, CallerRunsTheRestAndSleepsWhileAWorkerHoldsAChunk) {
    if (!numfuse::parallel::has_openmp()) GTEST_SKIP() << "built without OpenMP: no pool";
    ThreadGuard guard(2);
    constexpr std::size_t min_per_thread = 8192;
    constexpr std::size_t n = 16 * min_per_thread;
    ASSERT_EQ(numfuse::parallel::threads_for(n, min_per_thread), 2);
    const std::size_t chunks = chunk_count(n, chunk_size(n, 2, min_per_thread, 8));
    ASSERT_GE(chunks, 4u);
    constexpr auto absence = std::chrono::milliseconds(100);

    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> worker_chunks{0}, caller_chunks{0};
    std::atomic<bool> worker_started{false};
    std::vector<unsigned char> seen(n, 0);
    double cpu_after_start = 0;
    long switches_after_start = 0;
    for_ranges_or(n, min_per_thread, 8, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) ++seen[i];
        if (std::this_thread::get_id() != caller) {
            if (worker_chunks.fetch_add(1) == 0) {
                worker_started.store(true);
                std::this_thread::sleep_for(absence);  // the OS put the holder aside
            }
        } else if (caller_chunks.fetch_add(1) == 0) {
            // Hold the caller's first chunk until the worker has claimed one
            // (yielding, not sleeping, so that the only voluntary switches are
            // the pool's; bounded: a worker that never comes fails the counts).
            const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (!worker_started.load() && std::chrono::steady_clock::now() < limit) {
                std::this_thread::yield();
            }
            cpu_after_start = thread_cpu_seconds();
            switches_after_start = voluntary_switches();
        }
        return 0u;
    });
    // From the worker's claim to the end of the call: the worker's absence.
    const double cpu = thread_cpu_seconds() - cpu_after_start;
    const long switches = voluntary_switches() - switches_after_start;

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += seen[i] != 1;
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(worker_chunks.load(), 1) << "the sleeping worker claims no second chunk";
    EXPECT_EQ(caller_chunks.load(), static_cast<int>(chunks) - 1)
        << "the caller runs every chunk that the worker does not hold";
    // The caller's own chunks take microseconds and its spin a bounded few
    // hundred; the rest of the absence it sleeps.
    EXPECT_GE(switches, 1) << "the caller never slept while the worker held its chunk";
    EXPECT_LT(cpu, 0.25 * std::chrono::duration<double>(absence).count())
        << "the caller spun while the worker held its chunk";
}
#endif

}  // namespace
