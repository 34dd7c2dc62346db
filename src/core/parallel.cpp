#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

namespace numfuse::parallel {
namespace {

// NUMFUSE_NUM_THREADS as an explicit count, else 0 (automatic).
int initial_setting() noexcept {
    if (const char* env = std::getenv("NUMFUSE_NUM_THREADS")) {
        char* end = nullptr;
        const long value = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && value >= 1 && value <= 4096) {
            return static_cast<int>(value);
        }
    }
    return 0;
}

std::atomic<int>& setting() noexcept {
    static std::atomic<int> value{initial_setting()};
    return value;
}

// omp_get_max_threads() as the process started (OMP_NUM_THREADS or the
// processor count): a smaller value in some thread means someone lowered it
// there (threadpoolctl, omp_set_num_threads) and numfuse follows.
int openmp_baseline() noexcept {
#ifdef _OPENMP
    static const int baseline = omp_get_max_threads();
    return baseline;
#else
    return 1;
#endif
}

// Who made the count explicit, and the OpenMP limit in that thread then: a
// limit lowered afterwards (threadpoolctl) caps the count, while one that was
// already in force (torch.set_num_threads on a shared libgomp) does not
// override the user's later, explicit choice. Other threads compare with the
// start-up value.
struct ExplicitOrigin {
    std::atomic<std::thread::id> thread{};
    std::atomic<int> openmp_limit{0};
};

ExplicitOrigin& explicit_origin() noexcept {
    static ExplicitOrigin origin;
    return origin;
}

// Set in a child made by fork(): the OpenMP limit there is 1 (module.cpp's
// atfork handler; libgomp's pool did not survive the fork), and an explicit
// count set before the fork (whatever the limit was then) must not ask for a
// team that would wait forever: in the child the limit always caps it.
std::atomic<bool> forked_child{false};

#if defined(__unix__) || defined(__APPLE__)
extern "C" void numfuse_parallel_note_fork_child() { forked_child.store(true); }
#endif

std::atomic<std::thread::id>& recorded_main() noexcept {
    static std::atomic<std::thread::id> id{};
    return id;
}

thread_local int peak_team = 1;

}  // namespace

void mark_main_thread() noexcept {
    recorded_main().store(std::this_thread::get_id(), std::memory_order_relaxed);
    (void)openmp_baseline();
#if defined(__unix__) || defined(__APPLE__)
    static const bool registered =
        pthread_atfork(nullptr, nullptr, &numfuse_parallel_note_fork_child) == 0;
    (void)registered;
#endif
}

bool on_main_thread() noexcept {
#if defined(__linux__)
    // One syscall per thread, then cached.
    thread_local const bool is_main = syscall(SYS_gettid) == getpid();
    return is_main;
#else
    return std::this_thread::get_id() == recorded_main().load(std::memory_order_relaxed);
#endif
}

int thread_count() noexcept {
    int n = setting().load(std::memory_order_relaxed);
#ifdef _OPENMP
    if (omp_in_parallel()) return 1;
    const int openmp_now = omp_get_max_threads();
    if (n == 0) {
        n = on_main_thread() ? openmp_now : 1;
    } else {
        const auto& origin = explicit_origin();
        const bool set_here =
            origin.thread.load(std::memory_order_relaxed) == std::this_thread::get_id();
        const int reference =
            set_here ? origin.openmp_limit.load(std::memory_order_relaxed) : openmp_baseline();
        if (openmp_now < reference || forked_child.load(std::memory_order_relaxed)) {
            n = std::min(n, openmp_now);
        }
    }
#else
    // Built without OpenMP: every call runs on the calling thread, whatever the
    // setting (set_num_threads still validates and records it).
    n = 1;
#endif
    return n < 1 ? 1 : n;
}

int set_thread_count(int n) noexcept {
    const int previous = thread_count();
    auto& origin = explicit_origin();
    origin.thread.store(std::this_thread::get_id(), std::memory_order_relaxed);
#ifdef _OPENMP
    origin.openmp_limit.store(omp_get_max_threads(), std::memory_order_relaxed);
#endif
    setting().store(n < 1 ? 1 : n, std::memory_order_relaxed);
    return previous;
}

int use_automatic_thread_count() noexcept {
    const int previous = thread_count();
    setting().store(0, std::memory_order_relaxed);
    return previous;
}

int explicit_thread_count() noexcept { return setting().load(std::memory_order_relaxed); }

int take_peak_team_size() noexcept {
    const int peak = peak_team;
    peak_team = 1;
    return peak;
}

void note_team_size(int team) noexcept {
    if (team > peak_team) peak_team = team;
}

int processor_count() noexcept {
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    return 1;
#endif
}

bool has_openmp() noexcept {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

}  // namespace numfuse::parallel
