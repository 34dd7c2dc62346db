// Cooperative interruption of long computations (pure C++: no Python here).
//
// The core's block loops (expr/vm.cpp, reduce/reduce.cpp) call
// `interrupt::should_stop(scope)` between blocks. It costs two relaxed
// atomic loads while nothing happened. Two pieces make it do something:
//
// * `signal_pending`, a lock-free flag that a signal handler may set (the
//   Python binding chains a SIGINT hook in front of CPython's own handler,
//   see src/python/interruptible.cpp); the core never sets it.
// * a `Scope` on the calling thread, installed by whoever owns the call, with
//   a `poll` function. Only the thread that installed the scope (the caller,
//   which is thread 0 of every OpenMP team it starts) runs `poll`, and only
//   when `signal_pending` was set: the poll decides whether the computation
//   stops (for Python: run the signal handlers; stop if one raised). Once it
//   says stop, every thread of the team sees `stopped` at its next block and
//   leaves its loop; the entry point then throws `Interrupted`.
//
// A stopped computation leaves its output partially written.
#pragma once

#include <atomic>
#include <stdexcept>
#include <thread>

namespace numfuse::interrupt {

// Set from signal handlers: must be lock-free to be async-signal-safe.
inline std::atomic<bool> signal_pending{false};
static_assert(std::atomic<bool>::is_always_lock_free, "signal flag must be lock-free");

// Thrown by the core's entry points after a computation was stopped.
struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("numfuse: computation interrupted") {}
};

class Scope;
namespace detail {
inline thread_local Scope* current_scope = nullptr;
}

// One interruptible computation on the calling thread (RAII, nestable).
class Scope {
public:
    using Poll = bool (*)(void* context);  // true: stop the computation

    Scope(Poll poll, void* context) noexcept
        : poll_(poll),
          context_(context),
          owner_(std::this_thread::get_id()),
          previous_(detail::current_scope) {
        detail::current_scope = this;
    }
    ~Scope() { detail::current_scope = previous_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

    // Between blocks, from any thread of the computation.
    bool should_stop() noexcept {
        if (stopped_.load(std::memory_order_relaxed)) return true;
        if (!signal_pending.load(std::memory_order_relaxed)) return false;
        if (std::this_thread::get_id() != owner_) return false;
        signal_pending.store(false, std::memory_order_relaxed);
        if (poll_(context_)) {
            stopped_.store(true, std::memory_order_relaxed);
            return true;
        }
        return false;
    }
    bool stopped() const noexcept { return stopped_.load(std::memory_order_relaxed); }

private:
    Poll poll_;
    void* context_;
    std::thread::id owner_;
    Scope* previous_;
    std::atomic<bool> stopped_{false};
};

// The calling thread's scope (nullptr: not interruptible). Read it on the
// calling thread before starting a parallel region and share the pointer.
inline Scope* current() noexcept { return detail::current_scope; }

inline bool should_stop(Scope* scope) noexcept { return scope != nullptr && scope->should_stop(); }

// After the parallel region, on the calling thread.
inline void throw_if_stopped(const Scope* scope) {
    if (scope != nullptr && scope->stopped()) throw Interrupted();
}

}  // namespace numfuse::interrupt
