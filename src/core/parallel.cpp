#include "parallel.hpp"

#include <atomic>
#include <cstdlib>

namespace numfuse::parallel {
namespace {

int initial_thread_count() noexcept {
    if (const char* env = std::getenv("NUMFUSE_NUM_THREADS")) {
        char* end = nullptr;
        const long value = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && value >= 1 && value <= 4096) {
            return static_cast<int>(value);
        }
    }
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

std::atomic<int>& thread_setting() noexcept {
    static std::atomic<int> setting{initial_thread_count()};
    return setting;
}

}  // namespace

int thread_count() noexcept { return thread_setting().load(std::memory_order_relaxed); }

int set_thread_count(int n) noexcept {
    return thread_setting().exchange(n < 1 ? 1 : n, std::memory_order_relaxed);
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
