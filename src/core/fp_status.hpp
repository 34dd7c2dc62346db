// Keeps the calling thread's floating-point status flags as they were.
//
// The SIMD kernels may raise spurious flags in intermediate steps (on lanes
// that are later replaced, exp(inf - inf) in discarded lanes); numfuse
// reports the real conditions explicitly (FpFlag), so the ufunc and reduction
// entry points hold one of these (NumPy raises warnings from the flags it finds
// after those calls). evaluate does not hold one: flags its kernels raise stay
// in the caller's status word (NumPy clears it before each of its own loops). On x86 the whole
// MXCSR (flags and modes) is saved and restored; elsewhere the portable <cfenv> exception flags
// (aarch64: the cumulative flags of FPSR; the kernels never change the modes in FPCR).
#pragma once

#if defined(__SSE__) || defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define NUMFUSE_FP_STATUS_MXCSR 1
#else
#include <cfenv>
#endif

namespace numfuse::core {

class FpStatusGuard {
public:
#ifdef NUMFUSE_FP_STATUS_MXCSR
    FpStatusGuard() noexcept : saved_(_mm_getcsr()) {}
    ~FpStatusGuard() { _mm_setcsr(saved_); }
#else
    FpStatusGuard() noexcept { std::fegetexceptflag(&saved_, FE_ALL_EXCEPT); }
    ~FpStatusGuard() { std::fesetexceptflag(&saved_, FE_ALL_EXCEPT); }
#endif
    FpStatusGuard(const FpStatusGuard&) = delete;
    FpStatusGuard& operator=(const FpStatusGuard&) = delete;

private:
#ifdef NUMFUSE_FP_STATUS_MXCSR
    unsigned saved_;
#else
    std::fexcept_t saved_;
#endif
};

}  // namespace numfuse::core
