// Ctrl-C during long computations: the binding side of src/core/interrupt.hpp.
//
// How it works (the design, in one place):
//
// * CPython's own SIGINT handler only records the signal; Python raises
//   KeyboardInterrupt when the main thread next runs bytecode or calls
//   PyErr_CheckSignals(). A computation that released the GIL runs neither,
//   so before this file Ctrl-C waited for the whole call.
// * Each interruptible call on Python's main thread checks (one sigaction()
//   query) that a small C hook sits in front of the process's current SIGINT
//   handler, and installs it when Python's signal.signal() replaced it. The
//   hook sets numfuse::interrupt::signal_pending (a lock-free atomic: async-
//   signal-safe) and then calls the handler it displaced, so Python records
//   the signal exactly as before. Nothing is chained when SIGINT is ignored
//   or left at its default action.
// * The call installs an interrupt::Scope whose poll runs on the calling
//   thread only (thread 0 of every OpenMP team it starts): when the flag is
//   set it takes the GIL back (PyGILState_Ensure), runs PyErr_CheckSignals()
//   - the Python-level handler, which raises KeyboardInterrupt by default -
//   and stops the computation only if that raised. A handler that returns
//   normally lets the computation go on (its result is complete and correct).
// * Once stopped, all team threads leave their block loops at their next
//   block; the core throws interrupt::Interrupted and the binding re-raises
//   the pending Python exception. A stopped call leaves out= partly written.
//
// Other threads are never interrupted (Python only runs signal handlers on
// the main thread), and small calls skip all this (no syscall): they finish
// sooner than a person can press a key.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <optional>

#include "interrupt.hpp"

namespace numfuse::python {

// Calls with fewer elements are not made interruptible.
inline constexpr std::size_t interruptible_min_elements = std::size_t{1} << 18;

// Construct with the GIL held, before releasing it; keep alive for the call.
class InterruptibleCall {
public:
    explicit InterruptibleCall(std::size_t elements);
    InterruptibleCall(const InterruptibleCall&) = delete;
    InterruptibleCall& operator=(const InterruptibleCall&) = delete;

private:
    std::optional<interrupt::Scope> scope_;
};

// With the GIL held, after catching interrupt::Interrupted: raises the
// Python exception the signal handler set (KeyboardInterrupt by default).
[[noreturn]] void raise_interrupted();

// Module initialisation: records Python's main thread.
void register_interrupt(pybind11::module_& m);

}  // namespace numfuse::python
