// The strided unary loop, instantiated once per instruction-set level.
//
// Included only by the per-level translation units in this folder, each
// compiled with its own -m flags. Everything here lives in a namespace named
// after the level (NUMFUSE_LEVEL_NAMESPACE) so no inline function compiled
// with wide instructions can be merged by the linker into code that runs at a
// lower level.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "arch/exp2_op.hpp"
#include "arch/expr_ops.hpp"
#include "arch/nan_fixup.hpp"
#include "arch/table_op.hpp"
#include "arch/unary_fast_ops.hpp"
#include "kernels/common.hpp"
#include "kernels/erf.hpp"
#include "kernels/exp.hpp"
#include "kernels/log.hpp"
#include "kernels/logpair.hpp"
#include "numfuse_core.hpp"
#include "streaming.hpp"

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#endif

#ifndef NUMFUSE_LEVEL_NAMESPACE
#error "define NUMFUSE_LEVEL_NAMESPACE before including unary_loop.hpp"
#endif

namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE {

// Lanes outside [lo, hi] in magnitude (NaN included): the usual may_raise.
template <class B>
NUMFUSE_ALWAYS_INLINE auto abs_outside(const B& x, typename B::value_type lo,
                                       typename B::value_type hi) noexcept {
    const B ax = xsimd::abs(x);
    return ~((ax >= B(lo)) & (ax <= B(hi)));
}

template <class T>
constexpr T tiny_of() noexcept {
    return std::numeric_limits<T>::min();
}
template <class T>
constexpr T huge_of() noexcept {
    return std::numeric_limits<T>::max();
}

// Subnormal inputs underflow, +-inf is invalid (sin, tan; cos too, in float32 only).
template <bool Float64Underflows>
struct TrigRule {
    static constexpr unsigned inf_flag = fp_none;
    template <class T>
    static constexpr bool subnormal_underflow() noexcept {
        return sizeof(T) == 4 || Float64Underflows;
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        using T = typename B::value_type;
        return abs_outside(x, tiny_of<T>(), huge_of<T>());
    }
};

// Odd functions that return about x near 0: subnormal inputs underflow, and inputs beyond
// `Limit` (1: arcsin, arctanh; max: arctan, arcsinh) may be invalid or infinite.
template <int Limit, unsigned InfFlag>
struct OddRule {
    static constexpr unsigned inf_flag = InfFlag;
    template <class T>
    static constexpr bool subnormal_underflow() noexcept {
        return true;
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        using T = typename B::value_type;
        // Limit 1: |x| >= 1 flagged (arctanh(+-1) divides by zero); 1 - eps/2 is below 1.
        const T below_one = T(1) - std::numeric_limits<T>::epsilon() / T(2);
        return abs_outside(x, tiny_of<T>(), Limit == 1 ? below_one : huge_of<T>());
    }
    // may_raise without the subnormal lanes, whose only condition is that underflow (for
    // the loops where NumPy reports none there: see may_raise_no_subnormal in the runner).
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise_no_subnormal(const B& x) noexcept {
        using T = typename B::value_type;
        const T below_one = T(1) - std::numeric_limits<T>::epsilon() / T(2);
        return ~(xsimd::abs(x) <= B(Limit == 1 ? below_one : huge_of<T>()));
    }
};

// Lanes that may overflow: |x| above `big` (sinh, cosh overflow from 89.4159851 / 710.47586
// on), with subnormal underflow for sinh.
template <bool Odd>
struct HyperbolicRule {
    static constexpr unsigned inf_flag = fp_overflow;
    template <class T>
    static constexpr bool subnormal_underflow() noexcept {
        return Odd;
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        using T = typename B::value_type;
        const T big = sizeof(T) == 4 ? T(89.41) : T(710.47);
        return abs_outside(x, Odd ? tiny_of<T>() : T(0), big);
    }
};

// No floating-point conditions at all (tanh; scipy.special's erfc and expit return
// subnormals quietly): never flagged.
struct QuietRule {
    static constexpr unsigned inf_flag = fp_none;
    template <class T>
    static constexpr bool subnormal_underflow() noexcept {
        return false;
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B&) noexcept {
        return typename B::batch_bool_type(false);
    }
};

// arccos: |x| > 1 is invalid; nothing underflows.
struct ArccosRule : QuietRule {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return ~(xsimd::abs(x) <= B(1));
    }
};

// arccosh: x < 1 is invalid; x = 1 (+0, raising nothing) is flagged too, for the AVX-512
// float32 kernel's deferred fixup (ArccoshOp).
struct ArccoshRule : QuietRule {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return ~(x > B(1));
    }
};

// log2, log10: x <= 0 gives -inf (divide by zero) or NaN (invalid).
struct LogRule : QuietRule {
    static constexpr unsigned inf_flag = fp_divide_by_zero;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return ~(x > B(0));
    }
};

// log1p: x <= -1 gives -inf or NaN; subnormal inputs underflow.
struct Log1pRule : LogRule {
    template <class T>
    static constexpr bool subnormal_underflow() noexcept {
        return true;
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        using T = typename B::value_type;
        return (~(x > B(T(-1)))) | (xsimd::abs(x) < B(tiny_of<T>()));
    }
};

// expm1: overflow above log(max) (88.7228394 / 709.782713); subnormal inputs underflow.
struct Expm1Rule : QuietRule {
    static constexpr unsigned inf_flag = fp_overflow;
    template <class T>
    static constexpr bool subnormal_underflow() noexcept {
        return true;
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        using T = typename B::value_type;
        return (x > B(sizeof(T) == 4 ? T(88.72) : T(709.78))) | (xsimd::abs(x) < B(tiny_of<T>()));
    }
};

// TableOp with the conditions of a flagged batch from vector compares (what TableOp::flags
// says lane by lane, the runner's keep_subnormal_underflow rule included): sinh, cosh, expm1
// on inputs that reach the overflow threshold flag a third of their batches or more, and
// the per-lane loop cost ~2 ns an element there (float32 sinh 0.57x NumPy's speed).
template <class F, class Rule>
struct VectorFlagsOp : TableOp<F, Rule> {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static unsigned batch_flags_keep(const B& x, const B& y,
                                                           bool keep_subnormal_underflow) noexcept {
        using T = typename B::value_type;
        const B inf(std::numeric_limits<T>::infinity());
        const B ax = xsimd::abs(x);
        const auto x_finite = ax < inf;  // false for NaN
        const auto y_nan = xsimd::isnan(y);
        const auto y_inf = xsimd::abs(y) == inf;
        unsigned bits = fp_none;
        if (xsimd::any(y_nan & ~xsimd::isnan(x))) bits |= fp_invalid;
        if (xsimd::any(x_finite & y_inf)) bits |= Rule::inf_flag;
        if constexpr (Rule::template subnormal_underflow<T>()) {
            if (keep_subnormal_underflow &&
                xsimd::any((ax != B(T(0))) & (ax < B(tiny_of<T>())) & ~y_nan & ~y_inf)) {
                bits |= fp_underflow;
            }
        }
        return bits;
    }
};

// sin, cos, tan: inputs spanning many magnitudes hold subnormal lanes (underflow) in a
// quarter of their float32 batches, where the per-lane conditions cost more than the kernel.
//
// A kernel's common path split off (CommonPathOp, where Path::applies<B>): every batch of
// the deferred loop through Path::kernel (the whole kernel's bits on the lanes Path::lanes
// accepts, garbage on others), the test of those lanes deferred over the loop (Path::screen_*),
// the flagged batches recomputed whole after the loop, and an in-place call's flagged pair by
// the whole kernel alone (final_for). One range test does the work of may_raise's and the
// kernel's; the per-pair test, the kernel's own range test and its out-of-line rare call each
// batch made the compiler rebroadcast the constants and spill x every iteration. Elsewhere
// Base's per-pair runner.
template <class Base, class Path>
struct CommonPathOp : Base {
    template <class B>
    static constexpr bool split = Path::template applies<B>;
    static constexpr bool deferrable = true;
    template <class B>
    static constexpr bool deferrable_for = split<B>;
    template <class B>
    static constexpr bool final_for = split<B>;  // finish(x, y) is compute(x)
    static constexpr unsigned possible_flags = Path::possible_flags;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        if constexpr (split<B>) return Path::kernel(x);
        else return Base::compute_fast(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        if constexpr (split<B>) return (void)y, Base::compute(x);
        else return Base::finish(x, y);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        if constexpr (split<B>) return ~Path::lanes(x);
        else return Base::may_raise(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto screen_init() noexcept {
        return Path::template screen_init<typename B::arch_type>();
    }
    template <class B, class M>
    NUMFUSE_ALWAYS_INLINE static M screen(const M& acc, const B& x) noexcept {
        return Path::screen_add(acc, x);
    }
    template <class M>
    NUMFUSE_ALWAYS_INLINE static bool screened_may_raise(const M& acc) noexcept {
        return Path::screen_outside(acc);
    }
};

// sin (Fn 0) and cos (Fn 1), float32 on FMA levels: the common path 2^-12 <= |x| < 2^17
// (kernels::sincos_f32_*; the screen is the least and greatest |x| of the loop). float64
// and sse2: VectorFlagsOp's per-pair runner.
template <int Fn>
struct SinCosF32Path {
    template <class B>
    static constexpr bool applies = std::is_same<typename B::value_type, float>::value &&
                                    kernels::detail::has_fma<typename B::arch_type>;
    static constexpr unsigned possible_flags = fp_invalid | fp_underflow;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B kernel(const B& x) noexcept {
        return kernels::sincos_f32_kernel_common<Fn>(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto lanes(const B& x) noexcept {
        return kernels::sincos_f32_common_lanes(x);
    }
    template <class A>
    NUMFUSE_ALWAYS_INLINE static auto screen_init() noexcept {
        return kernels::sincos_f32_screen_init<A>();
    }
    template <class M, class B>
    NUMFUSE_ALWAYS_INLINE static M screen_add(const M& acc, const B& x) noexcept {
        return kernels::sincos_f32_screen_add(acc, x);
    }
    template <class M>
    NUMFUSE_ALWAYS_INLINE static bool screen_outside(const M& acc) noexcept {
        return kernels::sincos_f32_screen_outside(acc);
    }
};
struct SinOp : CommonPathOp<VectorFlagsOp<expr_ops::Sin, TrigRule<true>>, SinCosF32Path<0>> {};
struct CosOp : CommonPathOp<VectorFlagsOp<expr_ops::Cos, TrigRule<false>>, SinCosF32Path<1>> {};

// tan, float32 at AVX-512: the common path FLT_MIN <= |x| < 2^17 (kernels::tan_f32_*: its
// screen vrangeps + vfpclassps), each batch's halves converted from memory where the loop has
// the source, the contiguous pairs in the kernel's software-pipelined loop
// (tan_f32_common_run). float64 and other levels: VectorFlagsOp's per-pair runner (float64
// deferred was 5% faster on ordinary inputs, 35% slower on inputs spanning many magnitudes,
// where nearly every batch is flagged and paid the common path on top of the whole kernel).
struct TanF32Path {
#if defined(__AVX512F__)
    template <class B>
    static constexpr bool applies = std::is_same<typename B::value_type, float>::value &&
                                    kernels::detail::is_avx512<typename B::arch_type>;
    static constexpr unsigned possible_flags = fp_invalid | fp_underflow;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B kernel(const B& x) noexcept {
        return kernels::tan_f32_kernel_common(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto lanes(const B& x) noexcept {
        return kernels::tan_f32_common_lanes(x);
    }
    template <class A>
    NUMFUSE_ALWAYS_INLINE static auto screen_init() noexcept {
        return kernels::tan_f32_screen_init<A>();
    }
    template <class M, class B>
    NUMFUSE_ALWAYS_INLINE static M screen_add(const M& acc, const B& x) noexcept {
        return kernels::tan_f32_screen_add(acc, x);
    }
    template <class M>
    NUMFUSE_ALWAYS_INLINE static bool screen_outside(const M& acc) noexcept {
        return kernels::tan_f32_screen_outside(acc);
    }
#else
    template <class B>
    static constexpr bool applies = false;  // the common path's kernels are AVX-512 code
    static constexpr unsigned possible_flags = fp_invalid | fp_underflow;
#endif
};
struct TanOp : CommonPathOp<VectorFlagsOp<expr_ops::Tan, TrigRule<true>>, TanF32Path> {
    template <class B, class T>
    NUMFUSE_ALWAYS_INLINE static B compute_fast_at(const B& x, const T* src) noexcept {
#if defined(__AVX512F__)
        if constexpr (split<B>) {
            return kernels::tan_f32_kernel_common_at(x, src);
        } else
#endif
            return (void)src, compute_fast(x);
    }
#if defined(__AVX512F__)
    template <class B>
    static constexpr bool runs_fast = split<B>;
    template <class M, class T>
    NUMFUSE_ALWAYS_INLINE static M fast_run(const M& acc, const T* src, T* dst,
                                            std::size_t m) noexcept {
        return kernels::tan_f32_common_run(acc, src, dst, m);
    }
#endif
};
// float32 on FMA levels: a kernel split in two (Split::nofix(x), which may leave garbage in
// the lanes the batch screen flags, and Split::fix(x, y), which repairs them: together the
// kernel, bit for bit, so evaluate's kernel gives the same bits), the repair only on the
// flagged batches; other levels and float64 take the table's kernel whole.
template <class F, class Split>
struct F32SplitOp {
    template <class B>
    static constexpr bool split = std::is_same<typename B::value_type, float>::value &&
                                  kernels::detail::has_fma<typename B::arch_type>;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        if constexpr (split<B>) {
            return Split::nofix(x);
        } else {
            return table_compute<F>(x);
        }
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        if constexpr (split<B>) {
            return Split::fix(x, y);
        } else {
            (void)x;
            return y;
        }
    }
};
struct AcosF32Split {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B nofix(const B& x) noexcept {
        return kernels::acos_f32_nofix(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B fix(const B& x, const B& y) noexcept {
        return kernels::acos_f32_fix(x, y);
    }
};
struct AsinF32Split {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B nofix(const B& x) noexcept {
        return kernels::asin_f32_nofix(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B fix(const B& x, const B& y) noexcept {
        return kernels::asin_f32_fix(x, y);
    }
};

// arccos: float32 with the repair of |x| > 1 and NaN lanes on the flagged batches only.
struct ArccosOp : TableOp<expr_ops::Arccos, ArccosRule>,
                  F32SplitOp<expr_ops::Arccos, AcosF32Split> {
    using F32SplitOp<expr_ops::Arccos, AcosF32Split>::compute_fast;
    using F32SplitOp<expr_ops::Arccos, AcosF32Split>::finish;
    // ArccosRule's ~(|x| <= 1) is true for NaN lanes already (TableOp's isnan is a second
    // compare for nothing).
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return ArccosRule::may_raise(x);
    }
};
struct SinhOp : VectorFlagsOp<expr_ops::Sinh, HyperbolicRule<true>> {};
struct CoshOp : VectorFlagsOp<expr_ops::Cosh, HyperbolicRule<false>> {};
struct TanhOp : TableOp<expr_ops::Tanh, QuietRule> {};
// arcsin, arctan, arcsinh, arctanh: a subnormal x returns x on the fast path and raises only
// underflow, which NumPy's AVX-512 loops do not report: where this call keeps no such underflow,
// the runner screens with may_raise_no_subnormal (a log-uniform input with ~5% subnormal lanes
// otherwise sends most batches through the per-lane rare path: 3x the time).
template <class F, class Rule>
struct QuietSubnormalOp : TableOp<F, Rule> {
    static constexpr bool subnormal_only_underflows = true;
    // OddRule's form, ~(|x| <= limit), is true for NaN lanes already (no second compare).
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise_no_subnormal(const B& x) noexcept {
        return Rule::may_raise_no_subnormal(x);
    }
};
// arcsin: float32 with the NaN of |x| > 1 set on the flagged batches only (the screens,
// may_raise and may_raise_no_subnormal, flag |x| >= 1 - eps/2 and NaN in either form).
struct ArcsinOp : QuietSubnormalOp<expr_ops::Arcsin, OddRule<1, fp_none>>,
                  F32SplitOp<expr_ops::Arcsin, AsinF32Split> {
    using F32SplitOp<expr_ops::Arcsin, AsinF32Split>::compute_fast;
    using F32SplitOp<expr_ops::Arcsin, AsinF32Split>::finish;
};
struct ArctanOp : QuietSubnormalOp<expr_ops::Arctan, OddRule<0, fp_none>> {};
struct ArcsinhOp : QuietSubnormalOp<expr_ops::Arcsinh, OddRule<0, fp_none>> {};
// arccosh, arctanh: values, flags and NaNs as TableOp's; on AVX-512 the kernels' special-value
// fixup (vfixupimm) runs only on the flagged batches (kernels::acosh_nofix / acosh_fix,
// atanh_nofix / atanh_fix: the same bits as evaluate's kernels): arccosh flags x <= 1 and NaN
// (x = +inf is the fast path's +inf), arctanh |x| >= 1 and NaN.
struct ArccoshOp : TableOp<expr_ops::Arccosh, ArccoshRule> {
    static constexpr double padding = 2.0;  // 1 is flagged
    // NaN lanes included (TableOp's form adds a NaN test that the rule already covers).
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return ArccoshRule::may_raise(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return kernels::acosh_nofix(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        return kernels::acosh_fix(x, y);
    }
};
struct ArctanhOp : QuietSubnormalOp<expr_ops::Arctanh, OddRule<1, fp_divide_by_zero>> {
    static constexpr double padding = 0.5;  // arctanh(1) divides by zero
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return kernels::atanh_nofix(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        return kernels::atanh_fix(x, y);
    }
};
// log1p, expm1: a subnormal x returns x on the fast path and raises only underflow, which
// NumPy's AVX-512 loops do not report (as for QuietSubnormalOp's functions): where this call
// keeps no such underflow, the screen is x <= -1 or NaN (log1p), x above the overflow
// threshold or NaN (expm1) alone.
struct Log1pOp : TableOp<expr_ops::Log1p, Log1pRule> {
    static constexpr bool subnormal_only_underflows = true;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise_no_subnormal(const B& x) noexcept {
        using T = typename B::value_type;
        return ~(x > B(T(-1)));
    }
};
// log2, log10: values, flags and NaNs as TableOp's, with log's deferred test so that the
// repair of special lanes runs only on the batches holding one (kernels::log_base_nofix /
// log_scaled_fix, the same bits as evaluate's kernel): on AVX-512 the fixup of x <= 0, +inf
// and NaN; on AVX2+FMA and neon64 (float32 there) the compute half skips the kernel's own
// test (float64 also the subnormal scaling, and it reads its table rows from the input's
// memory, as LogOp), and batches holding x <= 0, +inf, NaN (float64: subnormal x too) take the
// kernel's repair (float64: the whole kernel); the other levels' kernels handle those lanes
// themselves and finish keeps their values.
template <class F, int Base>
struct LogScaledOp : TableOp<F, LogRule> {
    static constexpr bool deferrable = true;
    // One batch per iteration where log's loop takes one (kernels::log_loop_single: AVX2+FMA
    // float64, the same kernel plus the scaling).
    template <class B>
    static constexpr bool single_for =
        kernels::log_loop_single<typename B::value_type, typename B::arch_type>;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return kernels::log_base_nofix<Base>(x);
    }
    // compute_fast(x) for x loaded from src (contiguous loops): the same bits.
    template <class B, class T>
    NUMFUSE_ALWAYS_INLINE static B compute_fast_at(const B& x, const T* src) noexcept {
        return kernels::log_base_nofix_at<Base>(x, src);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B& y) noexcept {
        return kernels::log_scaled_fix<Base>(x, y);
    }
    // The lanes compute_fast may leave wrong and those that raise (kernels::log_base_special:
    // AVX-512 and AVX2+FMA x <= 0, +inf, NaN, AVX2+FMA float64 also subnormal x; elsewhere
    // LogRule's x <= 0 or NaN).
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return kernels::log_base_special(x);
    }
    // The deferred loop's test over many batches (kernels::log_base_screen: on AVX2+FMA an
    // unsigned minimum and maximum of x's words instead of the or of may_raise).
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto screen_init() noexcept {
        return kernels::log_base_screen_init<typename B::value_type, typename B::arch_type>();
    }
    template <class B, class M>
    NUMFUSE_ALWAYS_INLINE static M screen(const M& acc, const B& x) noexcept {
        return kernels::log_base_screen(acc, x);
    }
    template <class M>
    NUMFUSE_ALWAYS_INLINE static bool screened_may_raise(const M& acc) noexcept {
        return kernels::log_base_screened(acc);
    }
};
struct Log10Op : LogScaledOp<expr_ops::Log10, 10> {};
struct Log2Op : LogScaledOp<expr_ops::Log2, 2> {};
struct Expm1Op : VectorFlagsOp<expr_ops::Expm1, Expm1Rule> {
    static constexpr bool subnormal_only_underflows = true;
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise_no_subnormal(const B& x) noexcept {
        using T = typename B::value_type;
        return ~(x <= B(sizeof(T) == 4 ? T(88.72) : T(709.78)));
    }
};
struct ErfcOp : TableOp<expr_ops::Erfc, QuietRule> {};
struct CbrtOp : TableOp<expr_ops::Cbrt, QuietRule> {};  // cbrt raises nothing
// sqrt: x < 0 is invalid; nothing else raises (sqrt(+-0) = +-0, sqrt(inf) = inf).
struct SqrtRule : QuietRule {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return x < B(0);
    }
};
// The loop is bound by the square-root unit (one vsqrtpd zmm per 8 lanes): the test for
// floating-point conditions is one compare per batch, and-ed over the loop and checked once
// (the deferred loop), not TableOp's two compares, mask moves and a branch per pair, whose
// mask moves share port 0 with the square root on x86 (measured 8% slower than NumPy's
// plain loop at 1 thread before).
struct SqrtOp : TableOp<expr_ops::Sqrt, SqrtRule> {
    static constexpr bool deferrable = true;
    // x < 0 and NaN (the rare path gives NumPy's invalid flag and NaNs); -0 is not flagged.
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return ~(x >= B(0));
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto screen_init() noexcept {
        return typename B::batch_bool_type(true);
    }
    template <class B, class M>
    NUMFUSE_ALWAYS_INLINE static M screen(const M& all_ordinary, const B& x) noexcept {
        return all_ordinary & (x >= B(0));
    }
    template <class M>
    NUMFUSE_ALWAYS_INLINE static bool screened_may_raise(const M& all_ordinary) noexcept {
        return !xsimd::all(all_ordinary);
    }
};
// expit: batches whose every |x| is within the cores' range (104 float32, 700 float64) run
// the core alone (no clamp, no NaN select); the others, NaN included, are recomputed by the
// full kernel, which equals the core bit for bit within that range.
struct ExpitRule : QuietRule {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        using T = typename B::value_type;
        return ~(xsimd::abs(x) <= B(sizeof(T) == 4 ? T(104) : T(700)));  // true for NaN
    }
};
struct ExpitCore {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B batch(const B& a) noexcept {
        return kernels::expit_core(a);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B batch_for_f32(const B& a) noexcept {
        return kernels::expit_f32_core(a);
    }
};
struct ExpitOp : TableOp<expr_ops::Expit, ExpitRule> {
    template <class B>
    NUMFUSE_ALWAYS_INLINE static auto may_raise(const B& x) noexcept {
        return ExpitRule::may_raise(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B compute_fast(const B& x) noexcept {
        return table_compute<ExpitCore>(x);
    }
    template <class B>
    NUMFUSE_ALWAYS_INLINE static B finish(const B& x, const B&) noexcept {
        return table_compute<expr_ops::Expit>(x);
    }
};

// Op::single (optional): the deferred loop takes one batch per iteration instead of two;
// Op::single_for<B> (optional) says the same per batch type.
template <class Op, class B, class = void, class = void>
struct op_single : std::false_type {};
template <class Op, class B, class V>
struct op_single<Op, B, std::void_t<decltype(Op::single)>, V>
    : std::integral_constant<bool, Op::single> {};
template <class Op, class B>
struct op_single<Op, B, void, std::void_t<decltype(Op::template single_for<B>)>>
    : std::integral_constant<bool, Op::template single_for<B>> {};

// Op::deferrable_for<B> (optional): Op::deferrable per batch type (Op::deferrable's value
// where it is absent); the contiguous loop takes the deferred test where it is true.
template <class Op, class B, class = void>
struct op_deferred : std::integral_constant<bool, Op::deferrable> {};
template <class Op, class B>
struct op_deferred<Op, B, std::void_t<decltype(Op::template deferrable_for<B>)>>
    : std::integral_constant<bool, Op::deferrable && Op::template deferrable_for<B>> {};

// Op::batch_flags(x, y) (optional): the conditions of a flagged batch from vector compares,
// instead of Op::flags lane by lane (the op then owns keep_subnormal_underflow's rule too).
template <class Op, class B, class = void>
struct op_batch_flags : std::false_type {};
template <class Op, class B>
struct op_batch_flags<Op, B,
                      std::void_t<decltype(Op::batch_flags(std::declval<B>(), std::declval<B>()))>>
    : std::true_type {};

// Op::batch_flags_keep(x, y, keep_subnormal_underflow) (optional): the same from vector
// compares, the runner's rule for subnormal inputs passed in (VectorFlagsOp).
template <class Op, class B, class = void>
struct op_batch_flags_keep : std::false_type {};
template <class Op, class B>
struct op_batch_flags_keep<
    Op, B, std::void_t<decltype(Op::batch_flags_keep(std::declval<B>(), std::declval<B>(), true))>>
    : std::true_type {};

// Op::runs_fast<B> (optional): the deferred loop's pairs are one call of Op::fast_run(acc,
// src, dst, m) over m elements (a multiple of two batches): compute_fast_at's bits stored at
// dst and every batch added to the screen acc, in the kernel's own loop (tan float32 on
// AVX-512: software pipelined, kernels::tan_f32_common_run); not for streaming stores.
template <class Op, class B, class = void>
struct op_runs_fast : std::false_type {};
template <class Op, class B>
struct op_runs_fast<Op, B, std::void_t<decltype(Op::template runs_fast<B>)>>
    : std::integral_constant<bool, Op::template runs_fast<B>> {};

// Op::padding (optional): the value of unused lanes, one that raises nothing (default 1).
template <class Op, class = void>
struct op_padding {
    static constexpr double value = 1.0;
};
template <class Op>
struct op_padding<Op, std::void_t<decltype(Op::padding)>> {
    static constexpr double value = Op::padding;
};

// Op::subnormal_only_underflows (optional): a subnormal input raises nothing but underflow
// and needs no repair, and Op::may_raise_no_subnormal is may_raise without such lanes.
template <class Op, class = void>
struct op_subnormal_only_underflows : std::false_type {};
template <class Op>
struct op_subnormal_only_underflows<Op, std::void_t<decltype(Op::subnormal_only_underflows)>>
    : std::integral_constant<bool, Op::subnormal_only_underflows> {};

// Op::final_for<B> (optional, with Op::possible_flags): Op::finish(x, y) is Op::compute(x),
// whatever y. The pair runner then computes a flagged pair by Op::compute alone (not
// compute_fast first), and stops collecting conditions once they hold Op::possible_flags.
template <class Op, class B, class = void>
struct op_final : std::false_type {};
template <class Op, class B>
struct op_final<Op, B, std::void_t<decltype(Op::template final_for<B>)>>
    : std::integral_constant<bool, Op::template final_for<B>> {};

template <class Arch, class Op, class T>
struct UnaryBatchRunner {
    using B = xsimd::batch<T, Arch>;
    static constexpr std::size_t width = B::size;

    unsigned flags = fp_none;
    // NumPy's NaNs of this loop's op and type (nan_fixup.hpp), read once per call.
    NanPolicy<T> nan_policy;
    // core::subnormal_underflow() of this loop's op and type.
    bool keep_subnormal_underflow = true;

    // Op::finish, then NumPy's NaNs (rare path only).
    NUMFUSE_ALWAYS_INLINE B finish(const B& x, const B& y) const noexcept {
        return nan_policy.apply(x, Op::finish(x, y));
    }

    // Op::may_raise, without the subnormal lanes where they raise nothing this call reports
    // (op_subnormal_only_underflows, and NumPy reports no underflow for them here or the
    // call's flags hold underflow already: a subnormal lane needs no repair, so after the
    // first one only the other conditions send a batch to the rare path; where NumPy's
    // loops report underflow, as its AVX2 and scalar loops do, inputs with a few percent
    // subnormal lanes otherwise took it for most batches, 3x the time of float32 log1p).
    NUMFUSE_ALWAYS_INLINE auto may_raise(const B& x) const noexcept {
        if constexpr (op_subnormal_only_underflows<Op>::value) {
            if (!keep_subnormal_underflow || (flags & fp_underflow) != 0) {
                return Op::may_raise_no_subnormal(x);
            }
        }
        return Op::may_raise(x);
    }

    // Both forced inline: in the big per-level translation unit GCC otherwise keeps the
    // erf pair out of line (a call per 16 elements that reloads erf's 28 table registers).
    NUMFUSE_ALWAYS_INLINE B operator()(const B& x) noexcept {
        B y = Op::compute_fast(x);
        if (xsimd::any(may_raise(x))) {
            y = finish(x, y);
            flags |= lane_flags(x, y);
        }
        return y;
    }

    // Two batches with one test for floating-point conditions: the test is a
    // compare and a branch per batch, worth sharing in the unrolled loop.
    NUMFUSE_ALWAYS_INLINE void pair(const B& x0, const B& x1, B& y0, B& y1) noexcept {
        if constexpr (op_final<Op, B>::value) {
            if (xsimd::any(may_raise(x0) | may_raise(x1))) {
                y0 = nan_policy.apply(x0, Op::compute(x0));
                y1 = nan_policy.apply(x1, Op::compute(x1));
                if (flags != Op::possible_flags) flags |= lane_flags(x0, y0) | lane_flags(x1, y1);
            } else {
                y0 = Op::compute_fast(x0);
                y1 = Op::compute_fast(x1);
            }
            return;
        }
        y0 = Op::compute_fast(x0);
        y1 = Op::compute_fast(x1);
        if (xsimd::any(may_raise(x0) | may_raise(x1))) {
            y0 = finish(x0, y0);
            y1 = finish(x1, y1);
            flags |= lane_flags(x0, y0) | lane_flags(x1, y1);
        }
    }

    unsigned lane_flags(const B& x, const B& y) const noexcept {
        if constexpr (op_batch_flags<Op, B>::value) return Op::batch_flags(x, y);
        if constexpr (op_batch_flags_keep<Op, B>::value) {
            return Op::batch_flags_keep(x, y, keep_subnormal_underflow);
        }
        alignas(64) T xs[width];
        alignas(64) T ys[width];
        x.store_aligned(xs);
        y.store_aligned(ys);
        unsigned bits = fp_none;
        for (std::size_t k = 0; k < width; ++k) {
            unsigned lane = Op::template flags<T>(xs[k], ys[k]);
            if (!keep_subnormal_underflow && xs[k] != T(0) && xs[k] - xs[k] == T(0) &&
                (xs[k] < T(0) ? -xs[k] : xs[k]) < std::numeric_limits<T>::min()) {
                lane &= ~static_cast<unsigned>(fp_underflow);
            }
            bits |= lane;
        }
        return bits;
    }

    // Up to `count` (< width, or == width) elements through a stack buffer:
    // never touches memory outside the elements themselves. Unused lanes hold
    // op_padding (1, or 1/2 for arctanh), which raises nothing in the operation.
    void buffered(const char* in, std::ptrdiff_t in_stride, char* out, std::ptrdiff_t out_stride,
                  std::size_t count) noexcept {
        alignas(64) T buffer[width];
        for (std::size_t k = 0; k < width; ++k) buffer[k] = T(op_padding<Op>::value);
        for (std::size_t k = 0; k < count; ++k) {
            std::memcpy(&buffer[k], in + static_cast<std::ptrdiff_t>(k) * in_stride, sizeof(T));
        }
        const B y = (*this)(B::load_aligned(buffer));
        y.store_aligned(buffer);
        for (std::size_t k = 0; k < count; ++k) {
            std::memcpy(out + static_cast<std::ptrdiff_t>(k) * out_stride, &buffer[k], sizeof(T));
        }
    }
};

// out[i] = Op(in[i]) for n elements; see UnaryLoop in numfuse_core.hpp.
// Streaming selects non-temporal stores for outputs far larger than the caches.
template <class Arch, class Op, class T, bool Streaming, UnaryOp Id>
unsigned unary_loop(const char* in, std::ptrdiff_t in_stride, char* out, std::ptrdiff_t out_stride,
                    std::size_t n) noexcept {
    using Runner = UnaryBatchRunner<Arch, Op, T>;
    using B = typename Runner::B;
    constexpr std::size_t width = Runner::width;
    constexpr auto elem = static_cast<std::ptrdiff_t>(sizeof(T));
    Runner run;
    run.nan_policy = NanPolicy<T>::of(Id);
    run.keep_subnormal_underflow =
        subnormal_underflow(Id, sizeof(T) == 4 ? DType::f32 : DType::f64);
    std::size_t i = 0;
    if (in_stride == elem && out_stride == elem) {
        // Peel a head so that the stores are aligned to the vector width.
        const auto out_address = reinterpret_cast<std::uintptr_t>(out);
        if (out_address % sizeof(T) == 0) {
            const std::size_t misalign = out_address % (width * sizeof(T));
            std::size_t head = misalign ? (width * sizeof(T) - misalign) / sizeof(T) : 0;
            if (head > n) head = n;
            if (head) run.buffered(in, elem, out, elem, head);
            i = head;
            const T* src = reinterpret_cast<const T*>(in);
            T* dst = reinterpret_cast<T*>(out);
            const auto store2 = [&](const B& y0, const B& y1) {
                if constexpr (Streaming) {
                    store_streaming<Arch, T>(y0, dst + i);
                    store_streaming<Arch, T>(y1, dst + i + width);
                } else {
                    y0.store_aligned(dst + i);
                    y1.store_aligned(dst + i + width);
                }
            };
            // Deferrable operations (log, erf; float64 exp below AVX-512) or their per-batch
            // test over the loop and check it once at the end instead of
            // compare-and-branch per pair; only if it is set, the batches are rescanned
            // (results repaired with finish, flags collected). The first block of batches
            // (loops of two batches an iteration) goes alone and is checked at once: if it
            // holds rare lanes, it is repaired while still in the first-level cache and the
            // rest of the call takes the per-pair test, so that inputs with rare lanes
            // everywhere (spanning magnitudes) pay the fast path once, not on top of the rare
            // one. Needs the input intact afterwards: not for overlapping (in-place) calls,
            // which keep the per-pair test.
            const auto in_begin = reinterpret_cast<std::uintptr_t>(src);
            const auto out_begin = reinterpret_cast<std::uintptr_t>(dst);
            const std::uintptr_t bytes = n * sizeof(T);
            const bool disjoint = in_begin + bytes <= out_begin || out_begin + bytes <= in_begin;
            if constexpr (op_deferred<Op, B>::value) {
                // [i, stop) through the fast path; whether a batch there may raise
                const auto deferred = [&](std::size_t stop) NUMFUSE_ALWAYS_INLINE_LAMBDA {
                    const std::size_t start = i;
                    auto acc = Op::template screen_init<B>();
                    if constexpr (op_single<Op, B>::value) {
                        for (; i + width <= stop; i += width) {
                            const B x0 = B::load_unaligned(src + i);
                            acc = Op::screen(acc, x0);
                            const B y0 = compute_fast_at<Op>(x0, src + i);
                            if constexpr (Streaming) {
                                store_streaming<Arch, T>(y0, dst + i);
                            } else {
                                y0.store_aligned(dst + i);
                            }
                        }
                    }
                    if constexpr (op_runs_fast<Op, B>::value && !Streaming) {
                        const std::size_t m = (stop - i) / (2 * width) * (2 * width);
                        if (m) acc = Op::fast_run(acc, src + i, dst + i, m);
                        i += m;
                    }
                    for (; i + 2 * width <= stop; i += 2 * width) {
                        const B x0 = B::load_unaligned(src + i),
                                x1 = B::load_unaligned(src + i + width);
                        acc = Op::screen(Op::screen(acc, x0), x1);
                        store2(compute_fast_at<Op>(x0, src + i),
                               compute_fast_at<Op>(x1, src + i + width));
                    }
                    if (!Op::screened_may_raise(acc)) return false;
                    if constexpr (Streaming) stream_fence();  // before rewriting those lines
                    for (std::size_t k = start; k < i; k += width) {
                        const B x = B::load_unaligned(src + k);
                        if (xsimd::any(Op::may_raise(x))) {
                            const B y = run.finish(x, Op::compute_fast(x));
                            y.store_aligned(dst + k);
                            run.flags |= run.lane_flags(x, y);
                        }
                    }
                    return true;
                };
                constexpr std::size_t block = 512 * width;  // 16 KiB (AVX2) or 32 KiB (AVX-512)
                if (disjoint) {
                    // One batch an iteration (log's float64 loop at AVX2+FMA) without the probe:
                    // its loop inlined twice measured 20% slower on every input.
                    if constexpr (op_single<Op, B>::value) {
                        deferred(n);
                    } else if (!deferred(n - i > block ? i + block : n)) {
                        deferred(n);
                    }
                }
            }
            for (; i + 2 * width <= n; i += 2 * width) {
                B y0, y1;
                run.pair(B::load_unaligned(src + i), B::load_unaligned(src + i + width), y0, y1);
                store2(y0, y1);
            }
            if constexpr (Streaming) stream_fence();
        }
        for (; i + width <= n; i += width) {
            const T* src = reinterpret_cast<const T*>(in + static_cast<std::ptrdiff_t>(i) * elem);
            T* dst = reinterpret_cast<T*>(out + static_cast<std::ptrdiff_t>(i) * elem);
            run(B::load_unaligned(src)).store_unaligned(dst);
        }
    } else {
        for (; i + width <= n; i += width) {
            run.buffered(in + static_cast<std::ptrdiff_t>(i) * in_stride, in_stride,
                         out + static_cast<std::ptrdiff_t>(i) * out_stride, out_stride, width);
        }
    }
    if (i < n) {
        run.buffered(in + static_cast<std::ptrdiff_t>(i) * in_stride, in_stride,
                     out + static_cast<std::ptrdiff_t>(i) * out_stride, out_stride, n - i);
    }
    return run.flags;
}

template <class Op, UnaryOp Id>
inline void fill_unary_row(UnaryLoop (&row)[simd_dtype_count][2]) noexcept {
    row[0][0] = &unary_loop<NUMFUSE_LEVEL_ARCH, Op, float, false, Id>;
    row[1][0] = &unary_loop<NUMFUSE_LEVEL_ARCH, Op, double, false, Id>;
    row[0][1] = &unary_loop<NUMFUSE_LEVEL_ARCH, Op, float, true, Id>;
    row[1][1] = &unary_loop<NUMFUSE_LEVEL_ARCH, Op, double, true, Id>;
}

// One level's table: [op][dtype][streaming], a row per ufunc of the function
// table (functions.hpp), whose loop operation is <Functor>Op: above, or generated from
// the row in table_op.hpp.
inline void fill_unary_table(UnaryLoop (&table)[unary_op_count][simd_dtype_count][2]) noexcept {
#define NUMFUSE_FILL(name, arity, types, Functor, libm, ufunc, gpu, summary) \
    NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_1_##arity(               \
        fill_unary_row<Functor##Op, UnaryOp::name>(table[static_cast<int>(UnaryOp::name)]);))
    NUMFUSE_FUNCTIONS(NUMFUSE_FILL)
#undef NUMFUSE_FILL
}

}  // namespace numfuse::core::NUMFUSE_LEVEL_NAMESPACE
