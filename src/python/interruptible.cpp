// SIGINT hook and poll for interruptible computations (design: interruptible.hpp).
#include "interruptible.hpp"

#include <pythread.h>
#include <signal.h>

#include <cerrno>

namespace py = pybind11;

namespace numfuse::python {
namespace {

// Python's main thread (signal handlers only run there).
unsigned long main_thread_ident = 0;

// The handler the hook displaced. Written only on the main thread with the
// GIL held, before the hook that reads it is installed.
struct sigaction displaced_handler{};

extern "C" void numfuse_sigint_hook(int signal_number, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    interrupt::signal_pending.store(true, std::memory_order_relaxed);
    if (displaced_handler.sa_flags & SA_SIGINFO) {
        if (displaced_handler.sa_sigaction != nullptr) {
            displaced_handler.sa_sigaction(signal_number, info, context);
        }
    } else if (displaced_handler.sa_handler != SIG_DFL && displaced_handler.sa_handler != SIG_IGN &&
               displaced_handler.sa_handler != nullptr) {
        displaced_handler.sa_handler(signal_number);
    }
    errno = saved_errno;
}

// True when the hook is (now) in front of a real SIGINT handler.
bool arm_sigint_hook() noexcept {
    struct sigaction current{};
    if (sigaction(SIGINT, nullptr, &current) != 0) return false;
    if (current.sa_flags & SA_SIGINFO) {
        if (current.sa_sigaction == &numfuse_sigint_hook) return true;
    } else if (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN) {
        return false;  // nobody turns SIGINT into an exception: nothing to do
    }
    displaced_handler = current;
    struct sigaction hook = current;
    hook.sa_flags = (current.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
    hook.sa_sigaction = &numfuse_sigint_hook;
    return sigaction(SIGINT, &hook, nullptr) == 0;
}

// The Scope's poll: run Python's signal handlers; stop if one raised (the
// exception stays set in this thread's state for raise_interrupted).
bool poll_python_signals(void*) {
    const PyGILState_STATE state = PyGILState_Ensure();
    const bool raised = PyErr_CheckSignals() != 0;
    PyGILState_Release(state);
    return raised;
}

}  // namespace

InterruptibleCall::InterruptibleCall(std::size_t elements) {
    if (elements < interruptible_min_elements) return;
    if (PyThread_get_thread_ident() != main_thread_ident) return;
    if (!arm_sigint_hook()) return;
    scope_.emplace(&poll_python_signals, nullptr);
}

void raise_interrupted() {
    if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
}

void register_interrupt(py::module_&) {
    main_thread_ident =
        py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

}  // namespace numfuse::python
